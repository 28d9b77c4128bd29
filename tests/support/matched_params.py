"""One training setting (naive_grower.Params) in each library's own terms.

boosters' gain carries RFC-0008's factor 1/2: its min_gain_to_split g is LightGBM's
min_gain_to_split 2g and XGBoost's gamma 2g. max_bins=256 (the missing bin counted) is
LightGBM's max_bin=255 and XGBoost's max_bin=256. Everything that would make LightGBM
bin differently (merging rare values, dropping features) is switched off.
"""

import boosters as bst
from . import naive_grower as naive

LIGHTGBM_OBJECTIVES = {"squared": "regression", "logistic": "binary", "softmax": "multiclass"}
XGBOOST_OBJECTIVES = {"squared": "reg:squarederror", "logistic": "binary:logistic", "softmax": "multi:softprob"}


def boosters_config(p: naive.Params, n_rounds: int, **extra) -> bst.GBDTConfig:
    objective = bst.Objective.softmax(p.n_classes) if p.objective == "softmax" else bst.Objective(p.objective)
    return bst.GBDTConfig(
        n_estimators=n_rounds, objective=objective, learning_rate=p.learning_rate,
        growth_strategy=bst.GrowthStrategy.Leafwise if p.leafwise else bst.GrowthStrategy.Depthwise,
        max_depth=p.max_depth, n_leaves=p.n_leaves, l1=p.l1, l2=p.l2, min_gain_to_split=p.min_gain_to_split,
        min_child_weight=p.min_child_weight, min_samples_leaf=p.min_samples_leaf, max_bins=256,
        histogram_mode="f64", cache_size=64, **{"subsample": 1.0, **extra})  # the references see every row


def lightgbm_params(p: naive.Params) -> dict:
    assert p.leafwise, "LightGBM grows leaf-wise"
    params = dict(
        objective=LIGHTGBM_OBJECTIVES[p.objective], num_leaves=p.n_leaves,
        max_depth=-1 if p.max_depth is None else p.max_depth, learning_rate=p.learning_rate,
        lambda_l1=p.l1, lambda_l2=p.l2, min_gain_to_split=2 * p.min_gain_to_split,
        min_sum_hessian_in_leaf=p.min_child_weight, min_data_in_leaf=p.min_samples_leaf,
        max_bin=255, min_data_in_bin=1, feature_pre_filter=False, boost_from_average=True,
        use_missing=True, zero_as_missing=False, force_col_wise=True, deterministic=True,
        num_threads=1, verbose=-1)
    if p.objective == "softmax":
        params["num_class"] = p.n_classes
    return params


def xgboost_params(p: naive.Params, base_score: float | None) -> dict:
    """base_score: the starting prediction (a probability for logistic); None for softmax
    (pass the base margins with the DMatrix)."""
    assert p.min_samples_leaf == 1, "XGBoost has no minimum row count"
    params = dict(
        objective=XGBOOST_OBJECTIVES[p.objective], tree_method="hist", max_bin=256,
        grow_policy="lossguide" if p.leafwise else "depthwise",
        max_depth=0 if p.max_depth is None else p.max_depth, max_leaves=p.n_leaves if p.leafwise else 0,
        eta=p.learning_rate, reg_alpha=p.l1, reg_lambda=p.l2, gamma=2 * p.min_gain_to_split,
        min_child_weight=p.min_child_weight, nthread=1)
    if p.objective == "softmax":
        params["num_class"] = p.n_classes
    else:
        params["base_score"] = base_score
    return params
