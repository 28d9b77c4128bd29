"""Several metrics monitored at once: GBDTConfig(metric=[...]) scores every one each round
(evals_result), eval_history is the first's, early stopping follows the first (as
LightGBM's first_metric_only), and the list survives the model file."""

import numpy as np
import pytest
from sklearn.metrics import log_loss, roc_auc_score

import boosters as bst
from boosters.callbacks import early_stopping, record_evaluation
from boosters.sklearn import GBDTClassifier


def binary(n=900, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.logistic(size=n) > 0.5).astype(float)
    return bst.Dataset(X[:600], y[:600]), bst.Dataset(X[600:], y[600:]), X[600:], y[600:]


def hits(margins, dataset):
    return "hits", float(np.mean((margins > 0) == (dataset.y == 1))), True


def test_every_metric_is_scored_each_round_and_equals_a_single_metric_run():
    """Each history is, value for value (to 1e-12), what a run with that metric alone
    records; the last values are sklearn's AUC and log loss of the model's predictions
    (1e-9); eval_history and best_score are the first metric's."""
    train, val, X_val, y_val = binary()
    metrics = [bst.Metric.auc(), bst.Metric.logloss(), hits]
    config = bst.GBDTConfig(n_estimators=12, learning_rate=0.2, objective=bst.Objective.logistic(), metric=metrics)
    scores = {}
    model = bst.GBDTModel.train(train, config, val_set=val, callbacks=[record_evaluation(scores)])
    assert list(scores["valid"]) == ["auc", "logloss", "hits"]
    assert all(len(s) == 12 for s in scores["valid"].values())
    for metric in metrics:
        alone = bst.GBDTModel.train(train, config.replace(metric=metric), val_set=val)
        label = metric.label if isinstance(metric, bst.Metric) else "hits"
        np.testing.assert_allclose(scores["valid"][label], alone.eval_history, rtol=1e-12)
    assert model.eval_history == scores["valid"]["auc"] and model.best_score == scores["valid"]["auc"][-1]
    p = model.predict(X_val)
    assert scores["valid"]["auc"][-1] == pytest.approx(roc_auc_score(y_val, p), rel=1e-9)
    assert scores["valid"]["logloss"][-1] == pytest.approx(log_loss(y_val, p), rel=1e-9)


@pytest.mark.parametrize("first", ["auc", "logloss"])
def test_early_stopping_follows_the_first_metric(first):
    """The stop and the best round are those of a run monitoring the first metric alone
    (as LightGBM's first_metric_only=True); on this data the two metrics alone stop at
    different rounds, so following the other one would fail."""
    train, val, _, _ = binary(seed=2)
    order = [bst.Metric.auc(), bst.Metric.logloss()]
    if first == "logloss":
        order.reverse()
    config = bst.GBDTConfig(n_estimators=300, learning_rate=0.5, objective=bst.Objective.logistic(),
                            metric=order, early_stopping_rounds=5)
    both = bst.GBDTModel.train(train, config, val_set=val)
    alone = bst.GBDTModel.train(train, config.replace(metric=order[0]), val_set=val)
    other = bst.GBDTModel.train(train, config.replace(metric=order[1]), val_set=val)
    assert other.best_iteration != alone.best_iteration
    assert (both.best_iteration, both.n_trees, both.eval_history) == \
        (alone.best_iteration, alone.n_trees, alone.eval_history)


def test_early_stopping_callback_with_min_delta_follows_the_first_metric():
    train, val, _, _ = binary(seed=3)
    config = bst.GBDTConfig(n_estimators=300, learning_rate=0.5, objective=bst.Objective.logistic(),
                            metric=[bst.Metric.logloss(), bst.Metric.auc()])
    model = bst.GBDTModel.train(train, config, val_set=val, callbacks=[early_stopping(3, min_delta=1e-3)])
    alone = bst.GBDTModel.train(train, config.replace(metric=bst.Metric.logloss()), val_set=val,
                                callbacks=[early_stopping(3, min_delta=1e-3)])
    assert model.n_trees == alone.n_trees < 300


def test_training_rows_are_scored_with_every_metric_without_a_val_set():
    train, _, _, _ = binary()
    scores = {}
    bst.GBDTModel.train(train, bst.GBDTConfig(n_estimators=3, objective=bst.Objective.logistic(),
                                              metric=(bst.Metric.logloss(), bst.Metric.accuracy())),
                        callbacks=[record_evaluation(scores)])
    assert list(scores) == ["train"] and list(scores["train"]) == ["logloss", "accuracy"]
    assert all(len(s) == 3 for s in scores["train"].values())


def test_metric_list_round_trips_through_the_model_file():
    train, val, X_val, _ = binary()
    config = bst.GBDTConfig(n_estimators=3, objective=bst.Objective.logistic(),
                            metric=[bst.Metric.auc(), hits, bst.Metric.logloss()])
    model = bst.GBDTModel.train(train, config, val_set=val)
    loaded = bst.GBDTModel.from_bytes(model.to_bytes())
    assert loaded.config.metric == (bst.Metric.auc(), bst.Metric.logloss())  # callables are not written
    assert loaded.eval_history == model.eval_history
    np.testing.assert_array_equal(loaded.predict(X_val), model.predict(X_val))
    assert bst.GBDTConfig(**config.to_dict()) == config


@pytest.mark.parametrize("metric, error, message", [
    ([], ValueError, "give at least one metric"),
    ([bst.Metric.auc(), bst.Metric.auc()], ValueError, "given twice"),
    ([bst.Metric.auc(), 3], TypeError, "metric must be a Metric"),  # a name ("rmse") is a Metric's name
    ([bst.Metric.rmse()], ValueError, "cannot score objective"),
])
def test_bad_metric_lists(metric, error, message):
    with pytest.raises(error, match=message):
        bst.GBDTConfig(objective=bst.Objective.logistic(), metric=metric)


def test_two_metrics_of_the_same_name_are_refused():
    train, val, _, _ = binary()

    def fake_auc(margins, dataset):
        return "auc", 0.5, True

    with pytest.raises(ValueError, match="two metrics have the same name"):
        bst.GBDTModel.train(train, bst.GBDTConfig(n_estimators=2, objective=bst.Objective.logistic(),
                                                  metric=[bst.Metric.auc(), fake_auc]), val_set=val)


def test_nan_in_a_later_metric_warns_and_does_not_stop():
    """Early stopping reads only the first metric: a NaN AUC second (one class in the
    validation labels) warns, and training goes on."""
    train, _, X_val, _ = binary()
    val = bst.Dataset(X_val, np.ones(len(X_val)))
    config = bst.GBDTConfig(n_estimators=4, objective=bst.Objective.logistic(),
                            metric=[bst.Metric.logloss(), bst.Metric.auc()], early_stopping_rounds=2)
    with pytest.warns(RuntimeWarning, match="validation auc is NaN"):
        model = bst.GBDTModel.train(train, config, val_set=val)
    assert len(model.eval_history) >= 1


def test_sklearn_evals_result_has_every_metric():
    train, val, X_val, y_val = binary()
    clf = GBDTClassifier(n_estimators=5, metric=[bst.Metric.logloss(), bst.Metric.auc()])
    clf.fit(train.X, train.y, eval_set=(X_val, y_val))
    assert list(clf.evals_result_["valid"]) == ["logloss", "auc"]
    assert clf.evals_result_["valid"]["logloss"] == clf.booster_.eval_history
    assert len(clf.evals_result_["valid"]["auc"]) == 5
