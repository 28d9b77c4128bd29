"""Several named validation sets (GBDTModel.train's `val_set` as a dict or (name,
Dataset) pairs, as LightGBM's valid_sets/valid_names and XGBoost's evals): each set is
scored under its name with the scores it gets as the only validation set; the training
Dataset itself among them gets the training rows' scores; early stopping and
eval_history follow the last set that is not the training set."""

import numpy as np
import pytest
from sklearn.metrics import mean_squared_error

import boosters as bst
from boosters.callbacks import record_evaluation
from support.tree_compare import assert_same_trees


def make_sets(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(900, 4))
    y = X[:, 0] - X[:, 1] ** 2 + 0.5 * rng.normal(size=900)
    return (bst.Dataset(X[:500], y[:500]), bst.Dataset(X[500:700], y[500:700]), bst.Dataset(X[700:], y[700:]),
            X, y)


def scored(train, config, val_set):
    scores = {}
    model = bst.GBDTModel.train(train, config, val_set=val_set, callbacks=[record_evaluation(scores)])
    return model, scores


def test_each_named_set_gets_the_scores_it_gets_alone():
    train, first, second, _, _ = make_sets()
    config = bst.GBDTConfig(n_estimators=8, max_depth=3, metric=[bst.Metric.rmse(), bst.Metric.mae()])
    model, scores = scored(train, config, {"first": first, "second": second})
    assert list(scores) == ["first", "second"] and list(scores["first"]) == ["rmse", "mae"]
    for name, dataset in (("first", first), ("second", second)):
        alone_model, alone = scored(train, config, dataset)
        assert_same_trees(alone_model, model)  # the sets do not change the training (the model's
        # eval_history does: it is the monitored set's)
        assert scores[name] == alone["valid"]  # the same floats, round by round
    assert list(model.eval_history) == scores["second"]["rmse"]  # the last set's first metric


def test_the_training_set_among_them_gets_the_training_scores():
    train, first, _, X, y = make_sets(1)
    config = bst.GBDTConfig(n_estimators=6, max_depth=3)
    model, scores = scored(train, config, [("train", train), ("valid", first)])
    _, train_only = scored(train, config, None)  # no validation set: the training rows scored
    assert scores["train"] == train_only["train"]
    # the last round's training score is the RMSE of the model's predictions (float64 rounding)
    assert scores["train"]["rmse"][-1] == pytest.approx(mean_squared_error(y[:500], model.predict(X[:500])) ** 0.5,
                                                        rel=1e-12)
    assert list(model.eval_history) == scores["valid"]["rmse"]  # not the training set's


@pytest.mark.parametrize("order", ["train first", "train last"])
def test_early_stopping_follows_the_last_held_out_set(order):
    train, first, second, _, _ = make_sets(2)
    config = bst.GBDTConfig(n_estimators=200, max_depth=4, learning_rate=0.5, early_stopping_rounds=3)
    sets = [("first", first), ("second", second)]
    sets = [("train", train)] + sets if order == "train first" else sets + [("train", train)]
    model, scores = scored(train, config, sets)
    alone, _ = scored(train, config, second)
    assert model.n_trees < 200
    assert model.to_bytes() == alone.to_bytes() and model.best_iteration == alone.best_iteration
    assert len(scores["first"]["rmse"]) == len(scores["second"]["rmse"]) == model.best_iteration + 4


def test_bad_sets_are_named():
    train, first, second, _, _ = make_sets()
    config = bst.GBDTConfig(n_estimators=2)
    with pytest.raises(ValueError, match="its own name"):
        bst.GBDTModel.train(train, config, val_set=[("a", first), ("a", second)])
    with pytest.raises(TypeError, match="val_set must be"):
        bst.GBDTModel.train(train, config, val_set=[first, second])
    with pytest.raises(TypeError, match="val_set 'b' must be a boosters.Dataset"):
        bst.GBDTModel.train(train, config, val_set={"a": first, "b": np.zeros((3, 4))})
    with pytest.raises(ValueError, match="val_set 'b' has no labels"):
        bst.GBDTModel.train(train, config, val_set={"a": first, "b": bst.Dataset(np.zeros((3, 4)))})
