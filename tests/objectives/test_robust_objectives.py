"""The robust regressions: Objective.absolute(), .huber(delta), .pinball(alpha) (one or several
quantile levels), the leaf renewal of absolute and pinball, and the MAPE, pinball and Huber
metrics.

Gradients against the losses written out in NumPy (and their finite differences), the
weighted quantile against NumPy, renewed leaves against a naive quantile of each leaf's
residuals, models against LightGBM's ``l1`` / ``huber`` / ``quantile`` and XGBoost's
``reg:absoluteerror`` / ``reg:quantileerror`` with matched settings, save/load, quantized
histograms, both growth strategies, sampling, categorical features, early stopping.
"""

import pickle

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb
from sklearn.metrics import mean_absolute_error, mean_pinball_loss

import boosters as bst
from boosters._testing.kernels import sample_rows
from boosters.io.validation import objective_from_json, objective_to_json
from boosters.objectives import _gradients, _quantile
from boosters.objectives import evaluate
from boosters.objectives.registry import make_objective
from boosters.training.sampling import make_row_sampler
from support.tree_compare import assert_same_tree_list, assert_same_trees

KINDS = ["absolute", "huber", "pinball"]
DELTA = 1.0
ALPHA = 0.8
LIGHTGBM = {"absolute": dict(objective="l1"), "huber": dict(objective="huber", alpha=DELTA),
            "pinball": dict(objective="quantile", alpha=ALPHA)}


def objective_of(kind):
    return {"absolute": bst.Objective.absolute(), "huber": bst.Objective.huber(DELTA),
            "pinball": bst.Objective.pinball(ALPHA)}[kind]


def loss(kind, f, y, parameter):
    """The per-row loss the objective minimises; parameter: huber's delta, pinball's level."""
    r = f - y
    if kind == "absolute":
        return np.abs(r)
    if kind == "huber":
        return np.where(np.abs(r) <= parameter, 0.5 * r * r, parameter * (np.abs(r) - 0.5 * parameter))
    return np.where(r <= 0, -parameter * r, (1 - parameter) * r)


def naive_gradients(kind, f, y, parameter):
    """(grad, hess) as LightGBM writes them: sign, clipped residual, 1 - a / -a; hessian 1."""
    r = f - y
    if kind == "absolute":
        g = np.sign(r)
    elif kind == "huber":
        g = np.clip(r, -parameter, parameter)
    else:
        g = np.where(r >= 0, 1 - parameter, -parameter)
    return g, np.ones_like(f)


def synthetic(n, seed, integer_features=False):
    """4 features, the target a function of the first two plus heavy-tailed noise (Student t
    with 2 degrees of freedom: infinite variance). Integer features bin identically in
    boosters and LightGBM."""
    rng = np.random.default_rng(seed)
    if integer_features:
        X = rng.integers(0, 20, size=(n, 4)).astype(float)
        signal = X[:, 0] / 5 + np.sin(X[:, 1])
    else:
        X = rng.normal(size=(n, 4))
        signal = 2 * X[:, 0] + np.sin(2 * X[:, 1])
    return X, signal + rng.standard_t(2, size=n)


def train(dataset, config, val_set=None, n_threads=1):
    """One thread unless asked: the tests share a busy machine, where OpenMP teams wait."""
    return bst.GBDTModel.train(dataset, config, val_set=val_set, n_threads=n_threads)


def gradients(kind, f, y, parameter, w=None):
    """The kernel's (grad, hess) for margins f (n_outputs, n_rows), one parameter per output."""
    out = np.empty((*f.shape, 2), dtype=np.float32)
    _gradients.GradientKernel(kind, np.ascontiguousarray(f), y, np.empty(0) if w is None else w, out, 1,
                               parameters=parameter).run()
    return out[..., 0].astype(np.float64), out[..., 1].astype(np.float64)


def weighted_quantile(values, weights, alpha):
    """The documented definition, in NumPy: sorted values (ties by weight), row i at
    E_i + (w_i - w_first) / 2, interpolated at alpha (W - (w_first + w_last) / 2); weight-0
    rows dropped."""
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    order = np.lexsort((weights, values))
    v, w = values[order], weights[order]
    positions = np.cumsum(w) - w + 0.5 * (w - w[0])  # E_i + (w_i - w_first) / 2
    return float(np.interp(alpha * (w.sum() - 0.5 * (w[0] + w[-1])), positions, v))


# -- gradients ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_gradients_match_the_naive_formula(kind, weighted):
    """float32 outputs of float64 formulas: within 1e-6 relative. Margins include exact
    ties with the labels (absolute's gradient 0 there, pinball's 1 - a, as LightGBM's)."""
    rng = np.random.default_rng(0)
    y = rng.normal(0, 3, size=1001)
    f = y + rng.normal(0, 2, size=1001)
    f[::7] = y[::7]  # ties
    w = rng.uniform(0, 3, size=1001) if weighted else None
    parameter = {"absolute": 0.0, "huber": 1.5, "pinball": 0.3}[kind]
    g, h = gradients(kind, f[None], y, parameter, w)
    ng, nh = naive_gradients(kind, f, y, parameter)
    scale = 1.0 if w is None else w
    np.testing.assert_allclose(g[0], ng * scale, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h[0], nh * scale, rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_are_derivatives_of_the_loss(kind):
    """Central differences (step 1e-4) away from the kinks (|f - y| and |f - y| - delta
    beyond 1e-3): within 1e-5 (float32 gradients). The hessian is 1 by convention (the
    losses are piecewise linear; huber's is exact inside delta)."""
    rng = np.random.default_rng(1)
    y = rng.normal(size=4000)
    f = y + rng.normal(0, 2, size=4000)
    parameter = {"absolute": 0.0, "huber": 1.0, "pinball": 0.25}[kind]
    r = np.abs(f - y)
    keep = (r > 1e-3) & (np.abs(r - parameter) > 1e-3)
    f, y = f[keep], y[keep]
    step = 1e-4
    numeric = (loss(kind, f + step, y, parameter) - loss(kind, f - step, y, parameter)) / (2 * step)
    g, h = gradients(kind, f[None], y, parameter)
    np.testing.assert_allclose(g[0], numeric, rtol=1e-5, atol=1e-6)
    assert np.all(h == 1.0)


def test_pinball_levels_reach_their_outputs():
    """Each output of a multi-quantile kernel uses its own level, on the one label row."""
    rng = np.random.default_rng(2)
    y = rng.normal(size=500)
    f = rng.normal(size=(3, 500))
    levels = np.array([0.1, 0.5, 0.9])
    g, _ = gradients("pinball", f, y, levels)
    for k, a in enumerate(levels):
        np.testing.assert_allclose(g[k], naive_gradients("pinball", f[k], y, a)[0], rtol=1e-6)


# -- the weighted quantile and the start --------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 10, 257])
@pytest.mark.parametrize("alpha", [0.01, 0.1, 0.5, 0.77, 0.99])
def test_quantile_is_numpy_linear_without_weights_and_with_equal_weights(n, alpha):
    """Unweighted (and equal weights) the quantile is np.quantile's linear interpolation,
    as LightGBM's PercentileFun: within 1e-12 (rounding of the interpolation)."""
    values = np.random.default_rng(n).normal(size=n)
    assert _quantile.quantile(values, None, alpha) == pytest.approx(np.quantile(values, alpha), abs=1e-12)
    assert _quantile.quantile(values, np.full(n, 2.5), alpha) == pytest.approx(np.quantile(values, alpha),
                                                                                   abs=1e-12)


@pytest.mark.parametrize("order", ["random", "sorted", "reversed"])
def test_equal_weight_selection_with_ties_and_ordered_input(order):
    """Equal weights take the order statistics by quickselect: runs of equal values and
    sorted input (the partition's rows can come in order) give np.quantile exactly."""
    rng = np.random.default_rng(21)
    values = np.concatenate([rng.integers(0, 5, size=3000).astype(float), rng.normal(size=2001)])
    values = {"random": values, "sorted": np.sort(values), "reversed": np.sort(values)[::-1].copy()}[order]
    for alpha in (0.0, 0.001, 0.25, 0.5, 0.6, 0.999, 1.0):
        assert _quantile.quantile(values, None, alpha) == pytest.approx(np.quantile(values, alpha), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_weighted_quantile_matches_the_documented_definition(seed):
    """Random weights (some 0, some ties in value): the C helper equals the NumPy version of
    the definition within 1e-12."""
    rng = np.random.default_rng(seed)
    n = 50
    values = np.round(rng.normal(size=n), 1)  # ties
    weights = rng.uniform(0, 3, size=n) * (rng.random(n) < 0.8)
    for alpha in (0.05, 0.3, 0.5, 0.9):
        assert _quantile.quantile(values, weights, alpha) == pytest.approx(
            weighted_quantile(values, weights, alpha), abs=1e-12)


def test_weighted_quantile_edge_cases():
    """Weight-0 rows do not count; no row of weight > 0: NaN; a heavy row pulls the quantile."""
    assert _quantile.quantile(np.array([1.0, 2.0, 100.0]), np.array([1.0, 1.0, 0.0]), 0.5) == 1.5
    assert np.isnan(_quantile.quantile(np.array([1.0, 2.0]), np.zeros(2), 0.5))
    # positions 0 and 1 + (9 - 1) / 2 = 5; the median at 0.5 (10 - (1 + 9) / 2) = 2.5, half way
    assert _quantile.quantile(np.array([0.0, 10.0]), np.array([1.0, 9.0]), 0.5) == 5.0
    # positions 0, 50.5, 101; level 0.4 at 0.4 (102 - 1) = 40.4: 40.4 / 50.5 of the way from 0 to 10
    assert _quantile.quantile(np.array([0.0, 10.0, 20.0]), np.array([1.0, 100.0, 1.0]), 0.4) == pytest.approx(8.0)
    with pytest.raises(ValueError, match="weights must have one value per value"):
        _quantile.quantile(np.zeros(3), np.ones(2), 0.5)


@pytest.mark.parametrize("weighted", [False, True])
def test_start_values(weighted):
    """absolute: the weighted median; pinball: each level's weighted quantile; huber: the
    weighted mean (LightGBM's BoostFromScore for each)."""
    rng = np.random.default_rng(3)
    y = rng.standard_t(2, size=301)
    w = rng.uniform(0.5, 2, size=301) if weighted else None
    ww = np.ones_like(y) if w is None else w
    assert make_objective(bst.Objective.absolute()).init_scores(y, w)[0] == pytest.approx(
        weighted_quantile(y, ww, 0.5), abs=1e-12)
    levels = [0.1, 0.5, 0.95]
    np.testing.assert_allclose(make_objective(bst.Objective.pinball(levels)).init_scores(y, w),
                               [weighted_quantile(y, ww, a) for a in levels], atol=1e-12)
    assert make_objective(bst.Objective.huber()).init_scores(y, w)[0] == pytest.approx(np.average(y, weights=w))


# -- leaf renewal -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["absolute", "pinball"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("growth", ["depthwise", "leafwise"])
def test_renewed_leaves_are_the_residual_quantiles_of_their_rows(kind, weighted, growth):
    """Over 3 rounds, every leaf of every tree is learning_rate times the weighted quantile
    of y - margin over the rows it holds (margins before the tree): within 1e-9."""
    X, y = synthetic(600, seed=4)
    w = np.random.default_rng(5).uniform(0.2, 3.0, size=len(y)) if weighted else None
    config = bst.GBDTConfig(objective=objective_of(kind), n_estimators=3, learning_rate=0.3, max_depth=3,
                            growth_strategy=growth, n_leaves=6, histogram_mode="f64", subsample=1.0)
    model = train(bst.Dataset(X, y, weights=w), config)
    alpha = 0.5 if kind == "absolute" else ALPHA
    ww = np.ones_like(y) if w is None else w
    leaves = model.predict_leaf(X)
    margin = np.full(len(y), model.forest.base_scores[0])
    for t, tree in enumerate(model.trees):
        for leaf in np.unique(leaves[:, t]):
            rows = leaves[:, t] == leaf
            expected = 0.3 * weighted_quantile(y[rows] - margin[rows], ww[rows], alpha)
            assert tree.value[leaf] == pytest.approx(expected, abs=1e-9)
        margin += tree.value[leaves[:, t]]
    np.testing.assert_allclose(model.predict_raw(X).ravel(), margin, atol=1e-9)


@pytest.mark.parametrize("weighted", [False, True])
def test_renewal_with_row_sampling_uses_the_sampled_rows(weighted):
    """subsample=0.5: the first tree's leaves are the residual quantiles over the round's
    sampled rows (the sampler's draw, replayed), as LightGBM's bagging: within 1e-9; over
    all the leaf's rows they would differ."""
    X, y = synthetic(800, seed=19)
    w = np.random.default_rng(20).uniform(0.2, 3.0, size=len(y)) if weighted else None
    config = bst.GBDTConfig(objective=bst.Objective.pinball(0.3), n_estimators=1, learning_rate=0.5, max_depth=3,
                            subsample=0.5, seed=3, histogram_mode="f64")
    model = train(bst.Dataset(X, y, weights=w), config)
    sampled = np.zeros(len(y), dtype=bool)
    sampler = make_row_sampler(config, len(y), 1, 1)
    sampled[sample_rows(sampler, 0, np.zeros((1, len(y), 2), dtype=np.float32))[0]] = True
    ww = np.ones_like(y) if w is None else w
    residual = y - model.forest.base_scores[0]
    leaves = model.predict_leaf(X)[:, 0]
    differs = False
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        value = model.trees[0].value[leaf]
        assert value == pytest.approx(0.5 * weighted_quantile(residual[rows & sampled], ww[rows & sampled], 0.3),
                                      abs=1e-9)
        differs |= abs(value - 0.5 * weighted_quantile(residual[rows], ww[rows], 0.3)) > 1e-6
    assert differs


def test_huber_leaves_are_newton_steps():
    """Huber is not renewed: a leaf is -learning_rate * sum of clipped residuals / (rows + l2)."""
    X, y = synthetic(400, seed=6)
    config = bst.GBDTConfig(objective=bst.Objective.huber(0.5), n_estimators=1, learning_rate=0.5, max_depth=2,
                            l2=1.0, histogram_mode="f64", subsample=1.0)
    model = train(bst.Dataset(X, y), config)
    leaves = model.predict_leaf(X)[:, 0]
    residual = np.clip(model.forest.base_scores[0] - y, -0.5, 0.5)
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        assert model.trees[0].value[leaf] == pytest.approx(-0.5 * residual[rows].sum() / (rows.sum() + 1.0),
                                                           rel=1e-5)


# -- against LightGBM and XGBoost ---------------------------------------------------------------

def matched_configs(kind, n_rounds, min_child_weight=5.0):
    """The same leaf-wise setting in boosters and LightGBM (see tests/support/matched_params.py);
    leaves limited by the exact hessian sum (min_child_weight), as test_count_objectives."""
    ours = bst.GBDTConfig(objective=objective_of(kind), n_estimators=n_rounds, learning_rate=0.1,
                          growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=15, max_depth=None,
                          min_child_weight=min_child_weight, min_samples_leaf=1, l2=0.0, histogram_mode="f64",
                          max_bins=256, subsample=1.0)
    theirs = dict(num_leaves=15, learning_rate=0.1, min_sum_hessian_in_leaf=min_child_weight, min_data_in_leaf=1,
                  lambda_l2=0.0,
                  max_bin=255, min_data_in_bin=1, feature_pre_filter=False, deterministic=True, force_col_wise=True,
                  num_threads=1, verbose=-1, **LIGHTGBM[kind])
    return ours, theirs


@pytest.mark.parametrize("kind", KINDS)
def test_trees_equal_lightgbm(kind):
    """Integer features bin the same in both libraries, and the renewed leaf is the same
    (linear-interpolation) quantile: margins within 1e-6 after 20 rounds (measured: at most
    2.4e-7; float32 residuals in LightGBM)."""
    X, y = synthetic(3000, seed=0, integer_features=True)
    ours, theirs = matched_configs(kind, 20)
    model = train(bst.Dataset(X, y), ours)
    booster = lgb.train(theirs, lgb.Dataset(X, y), 20)
    expected = booster.predict(X, raw_score=True)
    assert np.ptp(expected) > 1.0  # the trees have learnt something
    np.testing.assert_allclose(model.predict_raw(X).ravel(), expected, atol=1e-6)


def test_weighted_huber_trees_equal_lightgbm():
    """Huber's leaves are Newton steps, weighted the same way: margins within 1e-6."""
    X, y = synthetic(3000, seed=0, integer_features=True)
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=len(y))
    ours, theirs = matched_configs("huber", 20)
    model = train(bst.Dataset(X, y, weights=w), ours)
    booster = lgb.train(theirs, lgb.Dataset(X, y, weight=w), 20)
    np.testing.assert_allclose(model.predict_raw(X).ravel(), booster.predict(X, raw_score=True), atol=1e-6)


def held_out_loss(kind, y, prediction, w=None):
    if kind == "pinball":
        return mean_pinball_loss(y, prediction, alpha=ALPHA, sample_weight=w)
    if kind == "huber":
        return evaluate(bst.Metric.huber(DELTA), y, prediction[:, None], w)
    return mean_absolute_error(y, prediction, sample_weight=w)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_validation_loss_close_to_lightgbm(kind, weighted):
    """Continuous features bin slightly differently (and weighted quantiles are defined
    differently: LightGBM's WeightedPercentileFun is its own), so the trees drift apart:
    the held-out loss after 50 rounds within 2% of LightGBM's (measured: 0.990 to 1.003
    times it) and well below the constant model's (measured: 0.57 to 0.67 times it)."""
    X, y = synthetic(2000, seed=0)
    Xv, yv = synthetic(1000, seed=1)
    rng = np.random.default_rng(7)
    w, wv = (rng.uniform(0.5, 2.0, size=2000), rng.uniform(0.5, 2.0, size=1000)) if weighted else (None, None)
    ours, theirs = matched_configs(kind, 50, min_child_weight=20.0)
    model = train(bst.Dataset(X, y, weights=w), ours, val_set=bst.Dataset(Xv, yv, weights=wv))
    booster = lgb.train(theirs, lgb.Dataset(X, y, weight=w), 50)
    mine, lightgbm = held_out_loss(kind, yv, model.predict(Xv), wv), held_out_loss(kind, yv, booster.predict(Xv), wv)
    assert model.eval_history[-1] == pytest.approx(mine, rel=1e-12)  # the default metric is the loss
    constant = held_out_loss(kind, yv, np.full(len(yv), model.forest.base_scores[0]), wv)
    assert abs(mine - lightgbm) < 0.02 * lightgbm
    assert mine < 0.8 * constant


def xgboost_quantiles(X, y, Xv, levels, n_rounds, w=None):
    params = dict(objective="reg:quantileerror", quantile_alpha=np.array(levels), tree_method="hist",
                  max_bin=256, max_depth=4, eta=0.1, reg_lambda=0.0, min_child_weight=1e-3, nthread=1)
    booster = xgb.train(params, xgb.DMatrix(X, y, weight=w), n_rounds)
    return booster.predict(xgb.DMatrix(Xv)).reshape(len(Xv), -1)


def test_multi_quantile_close_to_xgboost_and_lightgbm():
    """Levels 0.1, 0.5, 0.9 in one model: the held-out mean pinball loss over the levels
    after 50 rounds within 2% of XGBoost's reg:quantileerror with the same quantile_alpha
    list and of three LightGBM quantile models (measured: 0.998 and 1.0002 times theirs)."""
    levels = [0.1, 0.5, 0.9]
    X, y = synthetic(2000, seed=0)
    Xv, yv = synthetic(1000, seed=1)
    config = bst.GBDTConfig(objective=bst.Objective.pinball(levels), n_estimators=50, learning_rate=0.1,
                            max_depth=4, l2=0.0, min_child_weight=1e-3, histogram_mode="f64")
    model = train(bst.Dataset(X, y), config, val_set=bst.Dataset(Xv, yv))
    ours = model.predict(Xv)
    assert ours.shape == (1000, 3)

    def mean_loss(predictions):
        return np.mean([mean_pinball_loss(yv, predictions[:, k], alpha=a) for k, a in enumerate(levels)])

    theirs_xgb = xgboost_quantiles(X, y, Xv, levels, 50)
    theirs_lgb = np.column_stack([
        lgb.train(dict(objective="quantile", alpha=a, max_depth=4, num_leaves=16, learning_rate=0.1, lambda_l2=0.0,
                       min_sum_hessian_in_leaf=1e-3, min_data_in_leaf=1, verbose=-1, num_threads=1),
                  lgb.Dataset(X, y), 50).predict(Xv) for a in levels])
    assert model.eval_history[-1] == pytest.approx(mean_loss(ours), rel=1e-12)
    assert mean_loss(ours) < 1.02 * mean_loss(theirs_xgb)
    assert mean_loss(ours) < 1.02 * mean_loss(theirs_lgb)


def test_absolute_close_to_xgboost():
    """reg:absoluteerror (its leaves renewed to the median too): held-out MAE after 50
    rounds within 2% (measured: 1.006 times XGBoost's)."""
    X, y = synthetic(2000, seed=0)
    Xv, yv = synthetic(1000, seed=1)
    config = bst.GBDTConfig(objective=bst.Objective.absolute(), n_estimators=50, learning_rate=0.1, max_depth=4,
                            l2=0.0, min_child_weight=1e-3, histogram_mode="f64")
    ours = train(bst.Dataset(X, y), config).predict(Xv)
    params = dict(objective="reg:absoluteerror", tree_method="hist", max_bin=256, max_depth=4, eta=0.1, reg_lambda=0.0,
                  min_child_weight=1e-3, nthread=1)
    theirs = xgb.train(params, xgb.DMatrix(X, y), 50).predict(xgb.DMatrix(Xv))
    assert mean_absolute_error(yv, ours) < 1.02 * mean_absolute_error(yv, theirs)


# -- multi-quantile models ----------------------------------------------------------------------

def test_each_quantile_output_is_the_single_level_model():
    """Output k's gradients and renewal read only its own margins: a multi-quantile model's
    trees are exactly those of the single-level models (bit for bit)."""
    X, y = synthetic(800, seed=8)
    levels = [0.2, 0.5, 0.7]
    config = bst.GBDTConfig(objective=bst.Objective.pinball(levels), n_estimators=5, max_depth=3)
    model = train(bst.Dataset(X, y), config)
    assert model.n_trees == 15
    raw = model.predict_raw(X)
    for k, a in enumerate(levels):
        single = train(bst.Dataset(X, y), config.replace(objective=bst.Objective.pinball(a)))
        assert_same_tree_list(model.trees[k::3], single.trees)
        np.testing.assert_array_equal(raw[:, k], single.predict_raw(X).ravel())


def test_multi_quantile_predictions_do_not_cross():
    """Few rows per leaf make the fitted quantiles cross on some rows; predict sorts each
    row (the margins as fitted stay in predict_raw)."""
    X, y = synthetic(300, seed=9)
    config = bst.GBDTConfig(objective=bst.Objective.pinball([0.4, 0.45, 0.5, 0.55]), n_estimators=10, max_depth=6,
                            learning_rate=0.5, min_samples_leaf=1)
    model = train(bst.Dataset(X, y), config)
    raw, predictions = model.predict_raw(X), model.predict(X)
    assert np.any(np.diff(raw, axis=1) < 0)  # they did cross
    assert np.all(np.diff(predictions, axis=1) >= 0)
    np.testing.assert_array_equal(predictions, np.sort(raw, axis=1))


# -- metrics --------------------------------------------------------------------------------

@pytest.mark.parametrize("weighted", [False, True])
def test_metrics_match_references(weighted):
    """MAPE as LightGBM's (|y - f| / max(1, |y|)), pinball as scikit-learn's
    mean_pinball_loss, Huber written out: within 1e-12 relative."""
    rng = np.random.default_rng(10)
    y = rng.normal(0, 3, size=500)
    f = y + rng.standard_t(2, size=500)
    w = rng.uniform(0, 2, size=500) if weighted else None
    m = f[:, None]
    assert evaluate(bst.Metric.mape(), y, m, w) == pytest.approx(
        np.average(np.abs(y - f) / np.maximum(1, np.abs(y)), weights=w), rel=1e-12)
    assert evaluate(bst.Metric.pinball(0.3), y, m, w) == pytest.approx(
        mean_pinball_loss(y, f, alpha=0.3, sample_weight=w), rel=1e-12)
    assert evaluate(bst.Metric.huber(0.7), y, m, w) == pytest.approx(
        np.average(loss("huber", f, y, 0.7), weights=w), rel=1e-12)
    levels = [0.1, 0.5, 0.9]
    three = np.column_stack([f + 1, f - 1, f])  # crossing: the metric scores them sorted, as predicted
    expected = np.mean([mean_pinball_loss(y, np.sort(three, axis=1)[:, k], alpha=a, sample_weight=w)
                        for k, a in enumerate(levels)])
    assert evaluate(bst.Metric.pinball(levels), y, three, w) == pytest.approx(expected, rel=1e-12)


def test_mape_and_metrics_match_lightgbm_metrics():
    """LightGBM's own mape, quantile and huber metrics on its model's predictions: within
    1e-6 relative (it accumulates in float32 labels)."""
    X, y = synthetic(1000, seed=11)
    _, theirs = matched_configs("pinball", 10)
    theirs["metric"] = ["mape", "quantile", "huber"]
    evals = {}
    data = lgb.Dataset(X, y)
    booster = lgb.train(theirs, data, 10, valid_sets=[data], valid_names=["train"],
                        callbacks=[lgb.record_evaluation(evals)])
    f = booster.predict(X)[:, None]
    y32 = y.astype(np.float32).astype(np.float64)
    assert evaluate(bst.Metric.mape(), y32, f) == pytest.approx(evals["train"]["mape"][-1], rel=1e-6)
    assert evaluate(bst.Metric.pinball(ALPHA), y32, f) == pytest.approx(evals["train"]["quantile"][-1], rel=1e-6)
    assert evaluate(bst.Metric.huber(ALPHA), y32, f) == pytest.approx(evals["train"]["huber"][-1], rel=1e-6)


def test_default_metrics_and_support():
    assert bst.Metric.default_for(bst.Objective.absolute()) == bst.Metric.mae()
    assert bst.Metric.default_for(bst.Objective.huber(2.0)) == bst.Metric.huber(2.0)
    assert bst.Metric.default_for(bst.Objective.pinball(0.3)) == bst.Metric.pinball(0.3)
    assert bst.Metric.default_for(bst.Objective.pinball([0.1, 0.9])) == bst.Metric.pinball([0.1, 0.9])
    for metric in (bst.Metric.rmse(), bst.Metric.mae(), bst.Metric.mape(), bst.Metric.huber(), bst.Metric.pinball()):
        assert all(metric.supports(objective_of(kind)) for kind in KINDS)
        assert metric.supports(bst.Objective.squared())
        assert not metric.supports(bst.Objective.pinball([0.1, 0.9]))  # one output only
    assert not bst.Metric.pinball([0.1, 0.9]).supports(bst.Objective.pinball([0.1, 0.5]))
    assert not bst.Metric.pinball([0.1, 0.9]).supports(bst.Objective.squared())
    assert not bst.Metric.mape().supports(bst.Objective.poisson())
    with pytest.raises(ValueError, match="cannot score objective"):
        bst.GBDTConfig(objective=bst.Objective.pinball([0.1, 0.9]), metric=bst.Metric.mae())


def test_metric_labels_round_trip():
    for metric in (bst.Metric.pinball(0.25), bst.Metric.pinball([0.1, 0.5, 0.9]), bst.Metric.huber(0.3),
                   bst.Metric.mape()):
        assert bst.Metric(metric.label) == metric
    assert bst.Metric.pinball([0.1, 0.9]).label == "pinball@0.1,0.9"
    assert repr(bst.Metric.pinball([0.1, 0.9])) == "Metric.pinball([0.1, 0.9])"
    with pytest.raises(ValueError, match="needs numbers after the @"):
        bst.Metric("pinball@x")
    with pytest.raises(ValueError, match="huber@delta needs one number"):
        bst.Metric("huber@1,2")


# -- configuration errors -------------------------------------------------------------------------

@pytest.mark.parametrize("alpha, error, message", [
    (0.0, ValueError, "alpha must be finite and > 0.0"),
    (1.0, ValueError, "alpha must be < 1"),
    (float("nan"), ValueError, "alpha must be finite"),
    ("0.5", TypeError, "alpha must be a number"),
    ([], ValueError, "must not be empty"),
    ([0.5, 0.1], ValueError, "strictly increasing"),
    ([0.1, 0.1], ValueError, "strictly increasing"),
    ([0.1, 1.5], ValueError, "alpha must be < 1"),
    ([[0.1, 0.2]], TypeError, "alpha must be a number"),  # levels, not lists of them (once taken flat)
    ([[0.1, 0.2], 0.3], TypeError, "alpha must be a number"),  # (once a raw TypeError comparing a list)
])
def test_alpha_errors(alpha, error, message):
    with pytest.raises(error, match=message):
        bst.Objective.pinball(alpha)
    with pytest.raises(error, match=message):
        bst.Metric.pinball(alpha)


def test_parameter_errors():
    with pytest.raises(ValueError, match="delta must be finite and > 0.0"):
        bst.Objective.huber(0.0)
    with pytest.raises(ValueError, match="delta must be finite and > 0.0"):
        bst.Metric.huber(-1.0)
    with pytest.raises(ValueError, match="alpha only applies to pinball, not absolute"):
        bst.Objective("absolute", alpha=0.5)
    with pytest.raises(ValueError, match="delta only applies to huber, not pinball"):
        bst.Objective("pinball", delta=0.5)
    with pytest.raises(ValueError, match="alpha only applies to pinball, not mae"):
        bst.Metric("mae", alpha=0.5)


def test_objective_values():
    assert bst.Objective.pinball([0.5]) == bst.Objective.pinball(0.5)  # one level: the float
    assert bst.Objective.pinball(np.array([0.1, 0.9])).alpha == (0.1, 0.9)
    assert bst.Objective.pinball([0.1, 0.9]).n_outputs == 2
    assert bst.Objective.pinball(0.3) != bst.Objective.pinball(0.4)
    assert repr(bst.Objective.pinball([0.1, 0.9])) == "Objective.pinball([0.1, 0.9])"
    assert repr(bst.Objective.huber(2)) == "Objective.huber(2.0)"
    assert bst.Objective.huber() == bst.Objective("huber", delta=1.0)


# -- model files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("objective", [bst.Objective.absolute(), bst.Objective.huber(0.7), bst.Objective.pinball(0.3),
                                       bst.Objective.pinball([0.1, 0.5, 0.9])], ids=repr)
def test_save_load_and_pickle_predict_identically(objective, tmp_path):
    X, y = synthetic(500, seed=12)
    model = train(bst.Dataset(X[:400], y[:400]), bst.GBDTConfig(objective=objective, n_estimators=5),
                                val_set=bst.Dataset(X[400:], y[400:]))
    path = tmp_path / "model.bst"
    model.save(path)
    for loaded in (bst.GBDTModel.load(path), pickle.loads(pickle.dumps(model)),
                   bst.GBDTModel.from_bytes(model.to_bytes())):
        assert loaded.objective == objective
        assert loaded.config.resolved_metric == model.config.resolved_metric
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_objective_json():
    assert objective_to_json(bst.Objective.pinball([0.1, 0.9])) == {"name": "pinball", "n_classes": None,
                                                                    "alpha": [0.1, 0.9]}
    assert objective_to_json(bst.Objective.huber(2.0)) == {"name": "huber", "n_classes": None, "delta": 2.0}
    assert objective_to_json(bst.Objective.absolute()) == {"name": "absolute", "n_classes": None}
    for objective in (bst.Objective.pinball([0.1, 0.9]), bst.Objective.pinball(0.2), bst.Objective.huber(3.0)):
        assert objective_from_json(objective_to_json(objective)) == objective


@pytest.mark.parametrize("data, error, message", [
    ({"name": "pinball", "n_classes": None, "alpha": "0.5"}, ValueError, "alpha must be a number or a list"),
    ({"name": "pinball", "n_classes": None, "alpha": [0.9, 0.1]}, ValueError, "strictly increasing"),
    ({"name": "pinball", "n_classes": None, "alpha": 1.5}, ValueError, "alpha must be < 1"),
    ({"name": "huber", "n_classes": None, "delta": -1.0}, ValueError, "delta must be finite and > 0"),
    ({"name": "huber", "n_classes": None, "delta": 1.0, "alpha": 0.5}, ValueError, "objective must be"),
    ({"name": "absolute", "n_classes": None, "alpha": 0.5}, ValueError, "alpha only applies to pinball"),
])
def test_bad_objective_in_a_file(data, error, message):
    with pytest.raises(error, match=message):
        objective_from_json(data)


# -- training paths ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("histogram_mode, growth", [("i16", "depthwise"), ("i8", "leafwise")])
def test_quantized_histograms_and_growth_strategies(kind, histogram_mode, growth):
    """Quantized gradients find (almost) the same structures and the renewal does not
    depend on them: validation loss after 20 rounds within 2% of the f64 model's
    (measured: within 0.6%)."""
    X, y = synthetic(1000, seed=13)
    Xv, yv = synthetic(1000, seed=14)
    config = bst.GBDTConfig(objective=objective_of(kind), n_estimators=20, learning_rate=0.1, min_samples_leaf=20,
                            growth_strategy=growth)
    losses = [train(bst.Dataset(X, y), config.replace(histogram_mode=mode),
                                  val_set=bst.Dataset(Xv, yv)).eval_history[-1] for mode in ("f64", histogram_mode)]
    assert np.all(np.isfinite(losses))
    assert abs(losses[1] - losses[0]) < 0.02 * losses[0]


@pytest.mark.parametrize("objective", [bst.Objective.absolute(), bst.Objective.huber(1.0),
                                       bst.Objective.pinball([0.25, 0.75])], ids=repr)
@pytest.mark.parametrize("sampling", [dict(subsample=0.7, colsample_bytree=0.8),
                                      dict(goss_top_rate=0.2, goss_other_rate=0.1)], ids=["subsample", "goss"])
def test_sampling_categorical_features_and_early_stopping(objective, sampling):
    """A categorical feature carrying each category's median, sampled rows and columns,
    early stopping on the default metric: the model closes at least 80% of the gap in
    validation loss between the constant model and the true conditional quantiles
    (measured: 0.90 to 0.97)."""
    rng = np.random.default_rng(15)
    n = 3000
    category = rng.integers(0, 6, size=n)
    X = np.column_stack([category.astype(float), rng.normal(size=(n, 2))])
    center = np.array([-3.0, 0.0, 3.0, -1.5, 1.5, 4.5])[category]
    noise = rng.standard_t(3, size=n)
    y = center + noise
    fit, val = slice(0, 2000), slice(2000, None)
    config = bst.GBDTConfig(objective=objective, n_estimators=150, learning_rate=0.2, seed=1,
                            early_stopping_rounds=10, **sampling)
    model = train(bst.Dataset(X[fit], y[fit], categorical_features=[0]), config,
                                val_set=bst.Dataset(X[val], y[val], categorical_features=[0]))
    metric = config.resolved_metric
    k = objective.n_outputs
    levels = np.atleast_1d(objective.alpha if objective.name == "pinball" else 0.5)
    noise_quantiles = np.quantile(noise, levels)
    constant = evaluate(metric, y[val], np.tile(model.forest.base_scores, (n - 2000, 1)))
    truth = evaluate(metric, y[val], center[val, None] + (noise_quantiles if objective.name != "huber" else 0.0))
    best = model.eval_history[model.best_iteration]
    assert model.n_trees == (model.best_iteration + 1) * k
    assert model.best_iteration < 149  # stopped early
    assert best == min(model.eval_history)
    assert constant - best > 0.8 * (constant - truth)


def test_monotone_constraints_hold_after_renewal():
    """Renewed leaves stay within their monotone bounds: predictions never decrease along
    a constrained feature."""
    X, y = synthetic(1000, seed=16)
    config = bst.GBDTConfig(objective=bst.Objective.pinball(0.7), n_estimators=20, max_depth=4,
                            monotone_constraints=[1, 0, 0, 0])
    model = train(bst.Dataset(X, y), config)
    grid = np.tile(np.median(X, axis=0), (200, 1))
    for row in X[:20]:
        grid[:] = row
        grid[:, 0] = np.linspace(-3, 3, 200)
        assert np.all(np.diff(model.predict(grid)) >= -1e-12)


def test_threads_give_identical_models():
    """Renewal is parallel over leaves, each leaf alone: 1 and 2 threads, the same trees."""
    X, y = synthetic(2000, seed=17)
    w = np.random.default_rng(18).uniform(0.5, 2, size=2000)
    config = bst.GBDTConfig(objective=bst.Objective.pinball([0.2, 0.8]), n_estimators=5, subsample=0.8)
    one, two = (train(bst.Dataset(X, y, weights=w), config, n_threads=t) for t in (1, 2))
    assert_same_trees(two, one)
