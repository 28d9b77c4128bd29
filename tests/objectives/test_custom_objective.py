"""Custom objectives (`Objective.custom`, a callable `objective=`) and custom metrics (a
callable `metric=`): the same model as the built-in objective when the callable computes
its gradients, early stopping on a custom metric, the model file, clear errors."""

import lightgbm as lgb
import numpy as np
import pytest

import boosters as bst
from support.tree_compare import assert_same_trees

STRUCTURE = ("split_feature", "threshold", "default_left", "left_child", "right_child")


def data(n=600, seed=0, kind="regression"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    signal = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * X[:, 2] * X[:, 3]
    if kind == "regression":
        return X, signal + 0.3 * rng.normal(size=n)
    if kind == "binary":
        return X, (signal + rng.logistic(size=n) > 0).astype(float)
    return X, np.digitize(signal + 0.5 * rng.normal(size=n), [-0.7, 0.7]).astype(float)  # 3 classes


def squared_error(margins, dataset):
    w = 1.0 if dataset.weights is None else dataset.weights
    return (margins - dataset.y) * w, np.ones_like(margins) * w


def logistic(margins, dataset):
    p = 1.0 / (1.0 + np.exp(-margins))
    return p - dataset.y, np.maximum(p * (1.0 - p), 1e-16)


def softmax(margins, dataset):
    """The built-in's: diagonal hessian K/(K-1) p (1 - p), as LightGBM."""
    k = margins.shape[1]
    e = np.exp(margins - margins.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    onehot = np.eye(k)[dataset.y.astype(int)]
    return p - onehot, np.maximum(k / (k - 1.0) * p * (1.0 - p), 1e-16)


@pytest.mark.parametrize("growth", ["depthwise", "leafwise"])
@pytest.mark.parametrize("histogram_mode", ["f64", "i16"])
@pytest.mark.parametrize("weighted", [False, True])
def test_custom_squared_error_reproduces_the_built_in_model_exactly(growth, histogram_mode, weighted):
    """The callable's float64 gradients become the same float32 pairs as the kernel's,
    so every tree is bit for bit the built-in objective's (no tolerance), with weights
    (multiplied in by the callable, as the docs say) and quantized histograms too."""
    X, y = data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y)) if weighted else None
    config = bst.GBDTConfig(n_estimators=15, learning_rate=0.2, growth_strategy=growth, histogram_mode=histogram_mode,
                            subsample=0.8)
    built_in = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), config)
    base = built_in.forest.base_scores[0]
    mine = bst.GBDTModel.train(bst.Dataset(X, y, weights=w),
                               config.replace(objective=bst.Objective.custom(squared_error, base_score=base)))
    assert_same_trees(mine, built_in)
    np.testing.assert_array_equal(mine.predict(X), built_in.predict(X))


def test_custom_logistic_reproduces_the_built_in_model():
    """NumPy's exp may differ from libm's in the last bit of a float64, which the cast to
    float32 hides nearly always: the tree structure is the same and the leaf values agree
    to float32 precision (rtol 1e-6); predictions are the raw margins (the custom
    objective has no link), the built-in's log-odds."""
    X, y = data(kind="binary")
    config = bst.GBDTConfig(n_estimators=15, learning_rate=0.3, objective=bst.Objective.logistic())
    built_in = bst.GBDTModel.train(bst.Dataset(X, y), config)
    base = built_in.forest.base_scores[0]
    mine = bst.GBDTModel.train(bst.Dataset(X, y),
                               config.replace(objective=bst.Objective.custom(logistic, base_score=base)))
    for ta, tb in zip(mine.trees, built_in.trees):
        for field in STRUCTURE:
            np.testing.assert_array_equal(getattr(ta, field), getattr(tb, field))
        np.testing.assert_allclose(ta.value, tb.value, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(mine.predict(X), built_in.predict_raw(X), rtol=1e-6, atol=1e-9)


def test_custom_multi_output_softmax_reproduces_the_built_in_model():
    """n_outputs=3: margins come as (n_rows, 3), gradients go back the same shape, one
    tree per output per round, as the built-in softmax; predictions are the (n_rows, 3)
    margins (tolerance as for logistic)."""
    X, y = data(kind="multiclass")
    config = bst.GBDTConfig(n_estimators=8, objective=bst.Objective.softmax(3))
    built_in = bst.GBDTModel.train(bst.Dataset(X, y), config)
    mine = bst.GBDTModel.train(bst.Dataset(X, y), config.replace(
        objective=bst.Objective.custom(softmax, n_outputs=3, base_score=built_in.forest.base_scores)))
    assert mine.n_trees == built_in.n_trees == 24
    for ta, tb in zip(mine.trees, built_in.trees):
        np.testing.assert_array_equal(ta.split_feature, tb.split_feature)
    assert mine.predict(X).shape == (len(y), 3)
    np.testing.assert_allclose(mine.predict(X), built_in.predict_raw(X), rtol=1e-6, atol=1e-9)


def test_a_plain_callable_objective_is_a_custom_objective_from_zero():
    """GBDTConfig(objective=f) is Objective.custom(f): one output, start 0 (as LightGBM's
    custom objectives), so the first tree fits the gradients at margin 0."""
    X, y = data()
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=20, learning_rate=0.3,
                                                                  objective=squared_error))
    assert model.objective == bst.Objective.custom(squared_error)
    assert model.forest.base_scores.tolist() == [0.0]
    assert np.sqrt(np.mean((model.predict(X) - y) ** 2)) < 0.5 * np.std(y)  # it learnt


def test_custom_objective_matches_lightgbm_custom_objective():
    """LightGBM with the same callable (its fobj convention: (preds, dataset) -> grad,
    hess, start 0) on integer features, which both bin the same: margins within 1e-6
    after 20 rounds (the same trees; float32 vs float64 leaf sums differ far below)."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 20, size=(2000, 4)).astype(float)
    y = X[:, 0] / 5 + np.sin(X[:, 1]) + 0.2 * rng.normal(size=2000)
    ours = bst.GBDTConfig(objective=squared_error, n_estimators=20, learning_rate=0.1, growth_strategy="leafwise",
                          n_leaves=15, max_depth=None, min_child_weight=5.0, min_samples_leaf=1, l2=0.0,
                          histogram_mode="f64", subsample=1.0)
    theirs = dict(objective=lambda preds, ds: (preds - ds.get_label(), np.ones_like(preds)), num_leaves=15,
                  learning_rate=0.1, min_sum_hessian_in_leaf=5.0, min_data_in_leaf=1, lambda_l2=0.0, max_bin=255,
                  min_data_in_bin=1, feature_pre_filter=False, deterministic=True, force_col_wise=True,
                  num_threads=1, verbose=-1)
    model = bst.GBDTModel.train(bst.Dataset(X, y), ours)
    booster = lgb.train(theirs, lgb.Dataset(X, y), 20)
    np.testing.assert_allclose(model.predict(X), booster.predict(X), atol=1e-6)


# -- custom metrics -------------------------------------------------------------------------

def my_rmse(margins, dataset):
    return "my_rmse", float(np.sqrt(np.mean((margins - dataset.y) ** 2))), False


def test_custom_metric_equals_the_built_in_and_drives_early_stopping():
    """A callable RMSE scores every round exactly as Metric.rmse() (same formula on the
    same margins: equal to 1e-12), so early stopping on it picks the same round."""
    X, y = data(800)
    train, val = bst.Dataset(X[:500], y[:500]), bst.Dataset(X[500:], y[500:])
    config = bst.GBDTConfig(n_estimators=300, learning_rate=0.5, early_stopping_rounds=5)
    built_in = bst.GBDTModel.train(train, config, val_set=val)
    mine = bst.GBDTModel.train(train, config.replace(metric=my_rmse), val_set=val)
    assert built_in.n_trees < 300  # it stopped early
    np.testing.assert_allclose(mine.eval_history, built_in.eval_history, rtol=1e-12)
    assert mine.best_iteration == built_in.best_iteration and mine.n_trees == built_in.n_trees


def test_custom_metric_higher_is_better_is_maximised():
    """A metric returning higher_is_better=True: early stopping keeps its highest round."""
    X, y = data(800, kind="binary")
    train, val = bst.Dataset(X[:500], y[:500]), bst.Dataset(X[500:], y[500:])

    def hits(margins, dataset):
        return "hits", float(np.mean((margins > 0) == (dataset.y == 1))), True

    model = bst.GBDTModel.train(train, bst.GBDTConfig(n_estimators=200, objective=bst.Objective.logistic(),
                                                      metric=hits, early_stopping_rounds=10), val_set=val)
    assert model.best_score == max(model.eval_history)
    assert model.best_iteration == int(np.argmax(model.eval_history))
    assert model.n_trees == model.best_iteration + 1 < 200


def test_custom_metric_sees_the_raw_margins_and_the_dataset():
    """The callable gets read-only float64 margins ((n_rows,) here) and the Dataset
    scored (its labels and weights)."""
    X, y = data(300)
    seen = []

    def spy(margins, dataset):
        seen.append((margins.shape, margins.dtype, margins.flags.writeable, dataset.weights is not None))
        return "spy", 0.0, False

    val = bst.Dataset(X[200:], y[200:], weights=np.ones(100))
    bst.GBDTModel.train(bst.Dataset(X[:200], y[:200]), bst.GBDTConfig(n_estimators=3, metric=spy), val_set=val)
    assert seen == [((100,), np.float64, False, True)] * 3


def test_custom_objective_with_a_custom_metric_and_early_stopping():
    """Both callables together: the custom objective has no default metric, the custom
    one is scored on the raw margins."""
    X, y = data(800)
    config = bst.GBDTConfig(n_estimators=300, objective=squared_error, metric=my_rmse, early_stopping_rounds=5)
    model = bst.GBDTModel.train(bst.Dataset(X[:500], y[:500]), config, val_set=bst.Dataset(X[500:], y[500:]))
    assert model.n_trees == model.best_iteration + 1 < 300
    assert model.best_score == pytest.approx(my_rmse(model.predict(X[500:]), bst.Dataset(X[500:], y[500:]))[1],
                                             rel=1e-9)


def test_built_in_metrics_score_a_custom_objective_on_its_margins():
    """Any built-in metric may score a custom objective: logloss reads its margins as
    log-odds, so a custom logistic model's validation log loss is the built-in's (rtol
    1e-6: the same leaves to float32 precision)."""
    X, y = data(800, kind="binary")
    train, val = bst.Dataset(X[:500], y[:500]), bst.Dataset(X[500:], y[500:])
    built_in = bst.GBDTModel.train(train, bst.GBDTConfig(n_estimators=10, objective=bst.Objective.logistic()),
                                   val_set=val)
    mine = bst.GBDTModel.train(train, bst.GBDTConfig(
        n_estimators=10, metric=bst.Metric.logloss(),
        objective=bst.Objective.custom(logistic, base_score=built_in.forest.base_scores[0])), val_set=val)
    np.testing.assert_allclose(mine.eval_history, built_in.eval_history, rtol=1e-6)


# -- the model file ---------------------------------------------------------------------------

def test_custom_model_round_trips_through_the_file(tmp_path):
    """The file records "custom" and the outputs, not the function: the loaded model
    predicts the same raw margins; training with its objective is refused clearly."""
    X, y = data(kind="multiclass")
    objective = bst.Objective.custom(softmax, n_outputs=3)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=4, objective=objective,
                                                                  metric=[bst.Metric.multiclass_logloss(), my_rmse]))
    model.save(tmp_path / "m.bst")
    loaded = bst.GBDTModel.load(tmp_path / "m.bst")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.objective.name == "custom" and loaded.objective.n_outputs == 3
    assert loaded.objective.function is None
    assert loaded.config.metric == (bst.Metric.multiclass_logloss(),)  # the callable is not written
    np.testing.assert_array_equal(bst.GBDTModel.from_bytes(model.to_bytes()).predict(X), model.predict(X))
    with pytest.raises(ValueError, match="loaded from a file and has no function"):
        bst.GBDTModel.train(bst.Dataset(X, y), loaded.config)


# -- errors -----------------------------------------------------------------------------------

def train_with(objective, n_rows=100, **config):
    X, y = data(n_rows)
    return bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=2, objective=objective, **config))


@pytest.mark.parametrize("returns, error, message", [
    (lambda m, d: m - d.y, TypeError, "must return a \\(grad, hess\\) pair"),
    (lambda m, d: (m - d.y, np.ones(3)), ValueError, "hess must be a float32 or float64 array of the margins' shape"),
    (lambda m, d: ((m - d.y).astype(int), np.ones_like(m)), ValueError, "grad must be a float32 or float64"),
    (lambda m, d: (np.full_like(m, np.nan), np.ones_like(m)), ValueError, "grad has NaN or inf"),
    (lambda m, d: (m - d.y, np.full_like(m, 1e300)), ValueError, "hess has NaN or inf"),
])
def test_bad_custom_gradients_are_clear_errors(returns, error, message):
    with pytest.raises(error, match=message):
        train_with(returns)


def test_custom_objective_may_not_write_the_margins():
    def writes(margins, dataset):
        margins[:] = 0.0
        return margins - dataset.y, np.ones_like(margins)

    with pytest.raises(ValueError, match="read-only"):
        train_with(writes)


@pytest.mark.parametrize("make, error, message", [
    (lambda: bst.Objective("custom"), ValueError, "use Objective.custom\\(function\\)"),
    (lambda: bst.Objective.custom(3), TypeError, "a custom objective is a callable"),
    (lambda: bst.Objective.custom(squared_error, n_outputs=0), ValueError, "n_outputs"),
    (lambda: bst.Objective.custom(squared_error, n_outputs=2, base_score=[0.0]), ValueError, "base_score"),
    (lambda: bst.Objective.custom(squared_error, base_score=float("nan")), ValueError, "base_score"),
    (lambda: bst.GBDTConfig(objective=3), TypeError, "objective must be an Objective"),  # a name is Objective(name)
    (lambda: bst.Metric.default_for(bst.Objective.custom(squared_error)), ValueError, "no default metric"),
])
def test_bad_custom_objective_specs(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_custom_objective_without_metric_scores_nothing_and_cannot_stop_early():
    X, y = data(300)
    train, val = bst.Dataset(X[:200], y[:200]), bst.Dataset(X[200:], y[200:])
    model = bst.GBDTModel.train(train, bst.GBDTConfig(n_estimators=3, objective=squared_error), val_set=val)
    assert model.eval_history == [] and model.n_trees == 3
    with pytest.raises(ValueError, match="early stopping needs a metric"):
        bst.GBDTModel.train(train, bst.GBDTConfig(n_estimators=3, objective=squared_error, early_stopping_rounds=2),
                            val_set=val)


@pytest.mark.parametrize("metric, message", [
    (lambda m, d: 0.5, "must return \\(name: str, value: float, higher_is_better: bool\\)"),
    (lambda m, d: ("x", "0.5", False), "must return"),
    (lambda m, d: ("x", 0.5, "no"), "must return"),
])
def test_bad_custom_metric_returns_are_clear_errors(metric, message):
    X, y = data(200)
    with pytest.raises(TypeError, match=message):
        bst.GBDTModel.train(bst.Dataset(X[:100], y[:100]), bst.GBDTConfig(n_estimators=2, metric=metric),
                            val_set=bst.Dataset(X[100:], y[100:]))


def test_plot_metric_of_a_model_with_a_custom_metric():
    """The model keeps the first metric's history; a callable is named only by its calls,
    so the plot calls it "metric"."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from boosters.plotting import plot_metric

    X, y = data(300)
    model = bst.GBDTModel.train(bst.Dataset(X[:200], y[:200]), bst.GBDTConfig(n_estimators=4, metric=my_rmse),
                                val_set=bst.Dataset(X[200:], y[200:]))
    ax = plot_metric(model)
    line = ax.get_lines()[0]  # the scores (a marker of the best round follows)
    np.testing.assert_array_equal(line.get_ydata(), model.eval_history)
    assert ax.get_ylabel() == "metric"
    plt.close("all")
