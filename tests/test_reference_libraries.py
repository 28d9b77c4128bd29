"""boosters against LightGBM and XGBoost where they define the expected behaviour.

One tree on pre-binned data (integer features with fewer distinct values than bins, so
every library bins them identically): leaf-wise must reproduce LightGBM, depth-wise
XGBoost `hist`, margin for margin. The labels here are float64 values and both libraries
keep labels (XGBoost also leaf values) in float32, so margins agree to 1e-6 absolute,
not to float64 rounding (test_vs_lightgbm.py / test_vs_xgboost.py compare whole models
on float32 labels, node by node). With quantized (i16) histograms a near-tie split may
go the other way: 99% of the rows must then agree to the same tolerance. Then 100-round
models must score no worse than LightGBM with matched settings, minus a small stated
tolerance.
"""

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

import boosters as bst
from boosters.bench.datasets import make_covertype, make_friedman, train_test_split



@pytest.fixture(scope="module")
def prebinned():
    rng = np.random.default_rng(0)
    n, n_features = 20_000, 8
    X = rng.integers(0, 60, size=(n, n_features)).astype(np.float64)
    signal = np.sin(X[:, 0] / 6) + X[:, 1] / 25 + (X[:, 2] > 30) - 0.5 * (X[:, 3] < 10) * (X[:, 4] > 40)
    y_reg = signal + rng.normal(size=n) * 0.3
    y_bin = (signal + rng.normal(size=n) * 0.6 > np.median(signal)).astype(np.float64)
    y_multi = np.digitize(signal + rng.normal(size=n) * 0.3, np.quantile(signal, [0.25, 0.5, 0.75])).astype(np.float64)
    return X, {"regression": y_reg, "binary": y_bin, "multiclass": y_multi}


OBJECTIVES = {
    "regression": (bst.Objective.squared(), {"objective": "regression"}, "reg:squarederror"),
    "binary": (bst.Objective.logistic(), {"objective": "binary"}, "binary:logistic"),
    "multiclass": (bst.Objective.softmax(4), {"objective": "multiclass", "num_class": 4}, "multi:softprob"),
}


MARGIN_ATOL = 1e-6  # float32 labels (and XGBoost's float32 leaves) in the other library


def assert_margins_agree(ours, theirs, mode):
    """Every row (f64) or 99% of the rows (quantized) within MARGIN_ATOL, every output."""
    close = np.isclose(ours, theirs, rtol=0, atol=MARGIN_ATOL)
    close = close.all(axis=1) if close.ndim == 2 else close
    required = 1.0 if mode == "f64" else 0.99
    assert close.mean() >= required, (f"{close.mean():.4f} of the rows agree, max difference "
                                      f"{np.abs(ours - theirs).max():.3g}")


def log_priors(y, k):
    return np.log(np.bincount(y.astype(np.int64), minlength=k) / len(y))


@pytest.mark.parametrize("mode", ["f64", "i16"])
@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("n_leaves, min_samples_leaf, l2", [(31, 20, 1.0), (63, 5, 0.0), (15, 100, 10.0)])
def test_one_leafwise_tree_matches_lightgbm(prebinned, task, n_leaves, min_samples_leaf, l2, mode):
    X, labels = prebinned
    y = labels[task]
    objective, lgb_params, _ = OBJECTIVES[task]
    config = bst.GBDTConfig(
        n_estimators=1, learning_rate=1.0, objective=objective, growth_strategy=bst.GrowthStrategy.Leafwise,
        max_depth=None, n_leaves=n_leaves, min_samples_leaf=min_samples_leaf, l2=l2, min_child_weight=1e-3,
        subsample=1.0, cache_size=n_leaves, histogram_mode=mode)  # LightGBM without bagging: every row
    model = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2)
    params = dict(lgb_params, num_leaves=n_leaves, min_data_in_leaf=min_samples_leaf, lambda_l2=l2,
                  learning_rate=1.0, max_bin=255, min_sum_hessian_in_leaf=1e-3, verbose=-1, num_threads=2)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=1)
    assert model.n_trees == booster.num_trees()
    assert_margins_agree(model.predict_raw(X), booster.predict(X, raw_score=True), mode)
    assert_margins_agree(model.predict(X), booster.predict(X), mode)  # probabilities too
    assert model.trees[0].n_leaves == n_leaves


@pytest.mark.parametrize("mode", ["f64", "i16"])
@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("max_depth, l2, min_child_weight", [(6, 1.0, 1.0), (3, 0.0, 5.0), (8, 5.0, 0.5)])
def test_one_depthwise_tree_matches_xgboost_hist(prebinned, task, max_depth, l2, min_child_weight, mode):
    X, labels = prebinned
    y = labels[task]
    objective, _, xgb_objective = OBJECTIVES[task]
    # XGBoost's softmax hessian is 2 p (1 - p); ours is LightGBM's K/(K-1) p (1 - p). With
    # r = 2 (K-1) / K, scaling lambda and min_child_weight by 1/r gives the same tree,
    # with every leaf value r times XGBoost's.
    r = 2 * (4 - 1) / 4 if task == "multiclass" else 1.0
    # XGBoost's trees: depth-wise, every row, no row count limit
    config = bst.GBDTConfig(n_estimators=1, learning_rate=1.0, objective=objective, max_depth=max_depth,
                            growth_strategy=bst.GrowthStrategy.Depthwise, subsample=1.0, min_samples_leaf=1,
                            l2=l2 / r, min_child_weight=min_child_weight / r, cache_size=2 ** max_depth,
                            histogram_mode=mode)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2)
    params = {"objective": xgb_objective, "tree_method": "hist", "max_depth": max_depth, "reg_lambda": l2,
              "min_child_weight": min_child_weight, "eta": 1.0, "max_bin": 256, "nthread": 2}
    dtrain = xgb.DMatrix(X, y)
    base = 0.0
    if task == "multiclass":  # start from the same class log-priors
        params["num_class"] = 4
        base = log_priors(y, 4)
        dtrain.set_base_margin(np.tile(base, (len(y), 1)))
    else:
        params["base_score"] = float(y.mean())
    booster = xgb.train(params, dtrain, num_boost_round=1)
    assert model.n_trees == len(booster.get_dump())
    theirs = booster.predict(dtrain, output_margin=True)
    ours = model.predict_raw(X)
    if task == "multiclass":
        theirs, ours = theirs - base, (ours - base) / r
    assert_margins_agree(ours, theirs, mode)
    assert max(t.depth() for t in model.trees) == max_depth


# -- 100 rounds, matched settings -------------------------------------------------------

MATCHED = dict(n_leaves=31, learning_rate=0.1, min_samples_leaf=20, l2=0.0)


def _train_both(objective, lgb_objective, X_train, y_train, extra_lgb=None):
    config = bst.GBDTConfig(
        n_estimators=100, learning_rate=MATCHED["learning_rate"], objective=objective,
        growth_strategy=bst.GrowthStrategy.Leafwise, max_depth=None, n_leaves=MATCHED["n_leaves"],
        min_samples_leaf=MATCHED["min_samples_leaf"], l2=MATCHED["l2"], min_child_weight=1e-3,
        subsample=1.0, max_bins=256, cache_size=31)  # LightGBM without bagging: every row
    ours = bst.GBDTModel.train(bst.Dataset(X_train, y_train), config, n_threads=2)
    params = dict(objective=lgb_objective, num_leaves=MATCHED["n_leaves"], learning_rate=MATCHED["learning_rate"],
                  min_data_in_leaf=MATCHED["min_samples_leaf"], lambda_l2=MATCHED["l2"], max_bin=255,
                  min_sum_hessian_in_leaf=1e-3, verbose=-1, num_threads=2, **(extra_lgb or {}))
    theirs = lgb.train(params, lgb.Dataset(X_train, y_train), num_boost_round=100)
    return ours, theirs


def test_regression_100_rounds_no_worse_than_lightgbm():
    X, y = make_friedman(25_000, 10, seed=1)
    X_train, X_test, y_train, y_test = train_test_split(X, y, 0.2, seed=1)
    ours, theirs = _train_both(bst.Objective.squared(), "regression", X_train, y_train)
    rmse_ours = np.sqrt(np.mean((ours.predict(X_test) - y_test) ** 2))
    rmse_theirs = np.sqrt(np.mean((theirs.predict(X_test) - y_test) ** 2))
    assert rmse_ours <= rmse_theirs * 1.01  # tolerance: 1% RMSE


def test_binary_100_rounds_no_worse_than_lightgbm():
    from sklearn.metrics import log_loss, roc_auc_score

    X, y = make_covertype(30_000, binary=True, seed=2)
    X_train, X_test, y_train, y_test = train_test_split(X, y, 0.2, seed=2)
    ours, theirs = _train_both(bst.Objective.logistic(), "binary", X_train, y_train)
    p_ours, p_theirs = ours.predict(X_test), theirs.predict(X_test)
    assert roc_auc_score(y_test, p_ours) >= roc_auc_score(y_test, p_theirs) - 0.002  # tolerance: 0.002 AUC
    assert log_loss(y_test, p_ours) <= log_loss(y_test, p_theirs) + 0.005


def test_multiclass_100_rounds_no_worse_than_lightgbm():
    from sklearn.metrics import log_loss

    X, y = make_covertype(30_000, seed=3)
    X_train, X_test, y_train, y_test = train_test_split(X, y, 0.2, seed=3)
    ours, theirs = _train_both(bst.Objective.softmax(7), "multiclass", X_train, y_train, {"num_class": 7})
    p_ours, p_theirs = ours.predict(X_test), theirs.predict(X_test)
    acc_ours = np.mean(p_ours.argmax(axis=1) == y_test)
    acc_theirs = np.mean(p_theirs.argmax(axis=1) == y_test)
    assert acc_ours >= acc_theirs - 0.005  # tolerance: half a point of accuracy
    labels = np.arange(7)
    assert log_loss(y_test, p_ours, labels=labels) <= log_loss(y_test, p_theirs, labels=labels) + 0.01
