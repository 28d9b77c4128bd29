"""LightGBM's, XGBoost's and scikit-learn's names (boosters/_lib/parameter_names.py, the
objectives' and metrics' aliases): a params dict written for LightGBM or XGBoost gives the
model written with boosters' own names (byte for byte), two names of one parameter with
different values are refused, an unknown or unsupported name says what to use instead,
and the estimators take random_state, n_jobs, verbose, eval_metric and the aliases."""

import warnings

import lightgbm as lgb
import numpy as np
import pytest
import sklearn.metrics
import xgboost as xgb
from sklearn.base import clone

import boosters as bst
from boosters._lib.parameter_names import REFUSED, canonical_params, split_thread_params
from boosters._lib.threads import effective_n_threads
from boosters.objectives.registry import evaluate
from boosters.sklearn import GBDTClassifier, GBDTRanker, GBDTRegressor
from support import naive_grower as naive
from support.matched_params import boosters_config, lightgbm_params, xgboost_params


def data(n=400, seed=0, task="binary"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)
    y = {"binary": (score > 0).astype(float), "regression": score,
         "multiclass": np.digitize(score, [-0.5, 0.5]).astype(float)}[task]
    return X, y


def trained(config, task="binary", n_threads=1):
    X, y = data(task=task)
    return bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=n_threads)


# -- a params dict in LightGBM's / XGBoost's names: the same model ----------------------------

def test_lightgbm_params_give_the_model_of_boosters_names():
    lightgbm_style = {"objective": "binary", "num_leaves": 15, "growth_strategy": "leafwise", "eta": 0.1,
                      "num_iterations": 12, "lambda_l1": 0.5, "lambda_l2": 2.0, "min_data_in_leaf": 5,
                      "min_sum_hessian_in_leaf": 0.01, "min_split_gain": 0.2, "max_bin": 63, "feature_fraction": 0.8,
                      "bagging_fraction": 0.7, "bagging_freq": 1, "seed": 3, "verbose": -1, "metric": "binary_logloss"}
    own = bst.GBDTConfig(objective=bst.Objective.logistic(), n_leaves=15, growth_strategy="leafwise",
                         learning_rate=0.1, n_estimators=12, l1=0.5, l2=2.0, min_samples_leaf=5,
                         min_child_weight=0.01, min_gain_to_split=0.1, max_bins=64, colsample_bytree=0.8,
                         subsample=0.7, seed=3, verbosity=0, metric=bst.Metric.logloss())
    config = bst.GBDTConfig(**lightgbm_style)
    assert config == own
    assert trained(config).to_bytes() == trained(own).to_bytes()


def test_xgboost_params_give_the_model_of_boosters_names():
    n_threads, xgboost_style = split_thread_params(
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 4, "eta": 0.2, "num_boost_round": 8,
         "reg_lambda": 2.0, "reg_alpha": 0.1, "gamma": 0.4, "min_child_weight": 2.0, "subsample": 0.8,
         "colsample_bytree": 0.9, "max_bin": 128, "tree_method": "hist", "random_state": 7, "nthread": 1,
         "eval_metric": "mlogloss"})
    # XGBoost's names without grow_policy: XGBoost's depth-wise trees
    own = bst.GBDTConfig(objective=bst.Objective.softmax(3), growth_strategy="depthwise", max_depth=4,
                         learning_rate=0.2, n_estimators=8, l2=2.0, l1=0.1, min_gain_to_split=0.2,
                         min_child_weight=2.0, subsample=0.8, colsample_bytree=0.9, max_bins=128, seed=7,
                         metric=bst.Metric.multiclass_logloss())
    config = bst.GBDTConfig(**xgboost_style)
    assert n_threads == 1 and config == own
    assert trained(config, "multiclass").to_bytes() == trained(own, "multiclass").to_bytes()


@pytest.mark.parametrize("objective", ["squared", "logistic", "softmax"])
def test_the_reference_tests_lightgbm_and_xgboost_params_are_their_boosters_config(objective):
    """The params the reference tests give LightGBM and XGBoost to grow boosters' trees
    (tests/support/matched_params.py) read as that boosters config, with LightGBM's
    min_gain_to_split under its alias min_split_gain (boosters' own min_gain_to_split halves
    LightGBM's: see docs/migration.md) and XGBoost's base_score left out (boosters starts
    from the objective's best constant, which base_score was set to). LightGBM grows
    leaf-wise without being asked; boosters is told (growth_strategy="leafwise")."""
    p = naive.Params(objective=objective, n_classes=3, leafwise=True, n_leaves=12, max_depth=None, l1=0.5, l2=1.5,
                     min_gain_to_split=0.25, min_child_weight=0.5, min_samples_leaf=1, learning_rate=0.3)
    ours = boosters_config(p, 5)
    extra = dict(n_estimators=5, histogram_mode="f64", cache_size=64, subsample=1.0)  # theirs: every row
    lightgbm_style = lightgbm_params(p)
    lightgbm_style["min_split_gain"] = lightgbm_style.pop("min_gain_to_split")
    n_threads, rest = split_thread_params(lightgbm_style)
    assert n_threads == 1
    # boosters' default is depth-wise; force_col_wise is boosters' histogram_layout="column" (the same trees)
    assert bst.GBDTConfig(**rest, **extra, growth_strategy="leafwise") == ours.replace(histogram_layout="column")
    xgboost_style = xgboost_params(p, base_score=0.5)
    xgboost_style.pop("base_score", None)  # softmax: none
    n_threads, rest = split_thread_params(xgboost_style)
    assert bst.GBDTConfig(**rest, **extra, min_samples_leaf=1) == ours


@pytest.mark.parametrize("name, value, canonical, expected", [
    ("num_leaves", 15, "n_leaves", 15), ("max_leaves", 15, "n_leaves", 15), ("eta", 0.05, "learning_rate", 0.05),
    ("num_iterations", 7, "n_estimators", 7), ("num_boost_round", 7, "n_estimators", 7),
    ("feature_fraction", 0.5, "colsample_bytree", 0.5), ("bagging_fraction", 0.5, "subsample", 0.5),
    ("lambda_l1", 1.5, "l1", 1.5), ("reg_alpha", 1.5, "l1", 1.5), ("lambda_l2", 3.0, "l2", 3.0),
    ("reg_lambda", 3.0, "l2", 3.0), ("min_child_samples", 9, "min_samples_leaf", 9),
    ("min_data_in_leaf", 9, "min_samples_leaf", 9), ("min_sum_hessian_in_leaf", 0.1, "min_child_weight", 0.1),
    ("min_split_gain", 3.0, "min_gain_to_split", 1.5), ("gamma", 3.0, "min_gain_to_split", 1.5),
    ("seed", 11, "seed", 11), ("random_state", 11, "seed", 11), ("verbose", -1, "verbosity", 0),
    ("grow_policy", "lossguide", "growth_strategy", bst.GrowthStrategy.Leafwise),
    ("boosting", "dart", "booster", "dart"), ("booster", "gbtree", "booster", "gbdt"),
    ("early_stopping_round", 0, "early_stopping_rounds", None), ("linear_tree", True, "linear_leaves", True),
    ("force_row_wise", True, "histogram_layout", "row"), ("max_cat_to_onehot", 8, "max_onehot_cats", 8),
])
def test_each_alias_sets_its_parameter(name, value, canonical, expected):
    params = {name: value, "growth_strategy": "leafwise"} if canonical == "n_leaves" else {name: value}
    if name == "bagging_fraction":
        params["bagging_freq"] = 1
    if name == "booster":  # boosters' own name, with XGBoost's value
        params = {"booster": "gbtree"}
        assert bst.GBDTConfig(boosting_type="gbtree").booster == "gbdt"
        return
    assert getattr(bst.GBDTConfig(**params), canonical) == expected


def test_max_bin_is_read_as_the_library_of_the_params():
    assert bst.GBDTConfig(objective="binary", max_bin=255).max_bins == 256  # LightGBM: value bins
    assert bst.GBDTConfig(objective="binary:logistic", max_bin=256).max_bins == 256  # XGBoost: boosters' count
    assert bst.GBDTConfig(num_leaves=31, max_bin=63).max_bins == 64
    with pytest.raises(ValueError, match="max_bin counts bins differently.*give max_bins"):
        bst.GBDTConfig(max_bin=255)


def test_objective_parameters_beside_the_objective():
    assert bst.GBDTConfig(objective="multiclass", num_class=4).objective == bst.Objective.softmax(4)
    assert bst.GBDTConfig(objective="quantile", alpha=0.9).objective == bst.Objective.pinball(0.9)
    assert bst.GBDTConfig(objective="huber", alpha=2.0).objective == bst.Objective.huber(2.0)  # LightGBM: delta
    assert bst.GBDTConfig(objective="reg:quantileerror", quantile_alpha=0.2).objective == bst.Objective.pinball(0.2)
    xgb_alpha = bst.GBDTConfig(objective="reg:squarederror", alpha=0.5)  # XGBoost: the L1 penalty
    assert xgb_alpha.l1 == 0.5 and xgb_alpha.objective == bst.Objective.squared()
    assert bst.GBDTConfig(objective="tweedie", tweedie_variance_power=1.2).objective == bst.Objective.tweedie(1.2)
    assert bst.GBDTConfig(objective="lambdarank", lambdarank_truncation_level=5).objective == \
        bst.Objective.lambdarank(5)
    # the metric of the objective's own parameter takes the objective's value, as LightGBM's
    assert bst.GBDTConfig(objective="quantile", alpha=0.9, metric="quantile").metric == bst.Metric.pinball(0.9)
    with pytest.raises(ValueError, match="needs the number of classes: give num_class"):
        bst.GBDTConfig(objective="multiclass")
    with pytest.raises(ValueError, match="alpha without an objective is ambiguous"):
        bst.GBDTConfig(alpha=0.5)
    with pytest.raises(ValueError, match="num_class=3 and num_classes=4"):
        bst.GBDTConfig(objective="multiclass", num_class=3, num_classes=4)
    with pytest.raises(ValueError, match="num_class given beside objective"):
        bst.GBDTConfig(objective=bst.Objective.softmax(3), num_class=3)


# -- two names of one parameter; unknown and unsupported names ----------------------------------

@pytest.mark.parametrize("params, named", [
    ({"eta": 0.1, "learning_rate": 0.2}, "eta=0.1 and learning_rate=0.2"),
    ({"num_leaves": 15, "max_leaves": 20, "growth_strategy": "leafwise"}, "num_leaves=15 and max_leaves=20"),
    ({"reg_lambda": 1.0, "lambda_l2": 2.0}, "reg_lambda=1.0 and lambda_l2=2.0"),
    ({"seed": 1, "random_state": 2}, "seed=1 and random_state=2"),
    ({"gamma": 1.0, "min_gain_to_split": 0.1}, "gamma=1.0 and min_gain_to_split=0.1"),
    ({"num_iterations": 5, "n_estimators": 6}, "num_iterations=5 and n_estimators=6"),
])
def test_two_names_of_one_parameter_with_different_values_are_refused(params, named):
    with pytest.raises(ValueError, match=named):
        bst.GBDTConfig(**params)
    same = {name: (0.5 if name in ("gamma",) else value) for name, value in params.items()}
    if "gamma" not in params:  # the same value under both names is accepted
        first = next(iter(params))
        same = {name: params[first] if name != "growth_strategy" else value for name, value in params.items()}
        assert bst.GBDTConfig(**same)


# common LightGBM / XGBoost names a user types (some misspelled): each is read, or refused with a hint
COMMON_NAMES = ["max_leaves", "num_leavs", "colsample_bytre", "subsample_freq", "min_child_sample", "reg_lamda",
                "learning_rat", "n_estimator", "max_depht", "scale_pos_weight", "is_unbalance", "base_score",
                "max_delta_step", "tree_method", "device", "sampling_method", "extra_trees", "path_smooth",
                "categorical_feature", "bin_construct_sample_cnt", "min_data_in_bin", "eval_at", "huber_slope",
                "num_parallel_tree", "interaction_constraint", "boost_from_average"]


@pytest.mark.parametrize("name", COMMON_NAMES)
def test_common_names_get_a_hint_or_what_to_use(name):
    value = {"tree_method": "exact", "device": "cuda", "boost_from_average": False, "is_unbalance": True,
             "subsample_freq": 5, "min_data_in_bin": 5}.get(name, 3)
    with pytest.raises(ValueError) as caught:
        bst.GBDTConfig(**{name: value})
    message = str(caught.value)
    assert any(says in message for says in ("did you mean", "no boosters equivalent", "every round",
                                            "grow_policy='lossguide'")), message


def test_unknown_names_suggest_the_alias_and_its_parameter():
    with pytest.raises(ValueError, match=r"'num_leavs' \(did you mean 'num_leaves' \(an alias of 'n_leaves'\)"):
        bst.GBDTConfig(num_leavs=15)
    with pytest.raises(ValueError, match="did you mean 'n_estimators'"):
        bst.GBDTConfig(n_estimator=5)


def test_refused_names_say_what_to_use():
    with pytest.raises(ValueError, match="class_weight"):
        bst.GBDTConfig(scale_pos_weight=3.0)
    assert bst.GBDTConfig(scale_pos_weight=1, is_unbalance=False, boost_from_average=True) == \
        bst.GBDTConfig()  # their neutral values change nothing
    # nor does XGBoost's tree_method="hist", but XGBoost's names grow XGBoost's depth-wise trees
    assert bst.GBDTConfig(scale_pos_weight=1, tree_method="hist") == bst.GBDTConfig(growth_strategy="depthwise")
    with pytest.raises(ValueError, match="bagging_freq=1"):
        bst.GBDTConfig(bagging_fraction=0.5)  # LightGBM would not bag without bagging_freq
    with pytest.raises(ValueError, match="every round"):
        bst.GBDTConfig(bagging_fraction=0.5, bagging_freq=5)
    assert bst.GBDTConfig(bagging_fraction=0.5, bagging_freq=0).subsample == 1.0  # LightGBM: no bagging
    with pytest.raises(ValueError, match="goss_top_rate"):
        bst.GBDTConfig(boosting="goss")
    assert all(isinstance(why, str) and why for why in REFUSED.values())


def test_thread_names_are_not_config_parameters():
    with pytest.raises(ValueError, match="num_threads is not a GBDTConfig parameter.*split_thread_params"):
        bst.GBDTConfig(num_threads=2)
    assert split_thread_params({"num_threads": 3, "eta": 0.1}) == (3, {"eta": 0.1})
    assert split_thread_params({"n_jobs": None}) == (0, {})
    with pytest.raises(ValueError, match="thread counts given twice"):
        split_thread_params({"nthread": 2, "n_jobs": 4})


def test_n_leaves_without_leafwise_growth():
    # LightGBM's num_leaves asks for LightGBM's leaf-wise trees, as boosters' n_leaves does
    # (boosters grows leaf-wise by default); XGBoost's max_leaves (XGBoost grows depth-wise)
    # without a growth strategy is refused
    leafwise = bst.GBDTConfig(growth_strategy="leafwise", n_leaves=12)
    assert bst.GBDTConfig(num_leaves=12) == leafwise and bst.GBDTConfig(num_leaf=12) == leafwise
    assert bst.GBDTConfig(num_leaves=12, growth_strategy="leafwise") == leafwise
    assert bst.GBDTConfig(n_leaves=12) == leafwise
    with pytest.raises(ValueError, match="grow_policy='lossguide'"):
        bst.GBDTConfig(max_leaves=12)
    with pytest.warns(UserWarning, match="depth-wise trees do not read it"):
        bst.GBDTConfig(n_leaves=12, growth_strategy="depthwise")
    # XGBoost's 0: no limit (and XGBoost's depth-wise trees)
    assert bst.GBDTConfig(max_leaves=0) == bst.GBDTConfig(growth_strategy="depthwise")
    assert bst.GBDTConfig(num_leaves=31) == bst.GBDTConfig(growth_strategy="leafwise", n_leaves=31)  # LightGBM's
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # boosters' default: nothing ignored
        assert bst.GBDTConfig(n_leaves=15, growth_strategy="depthwise") == bst.GBDTConfig(growth_strategy="depthwise")


def test_aliases_in_replace_and_assignment():
    config = bst.GBDTConfig(objective="binary")
    assert config.replace(eta=0.5).learning_rate == 0.5
    config.eta = 0.05
    assert config.learning_rate == 0.05


# -- objectives and metrics by name ------------------------------------------------------------

@pytest.mark.parametrize("name, objective", [
    ("regression", bst.Objective.squared()), ("regression_l2", bst.Objective.squared()),
    ("l2", bst.Objective.squared()), ("reg:squarederror", bst.Objective.squared()),
    ("l1", bst.Objective.absolute()), ("regression_l1", bst.Objective.absolute()),
    ("reg:absoluteerror", bst.Objective.absolute()), ("huber", bst.Objective.huber()),
    ("quantile", bst.Objective.pinball()), ("reg:quantileerror", bst.Objective.pinball()),
    ("poisson", bst.Objective.poisson()), ("count:poisson", bst.Objective.poisson()),
    ("gamma", bst.Objective.gamma()), ("reg:gamma", bst.Objective.gamma()), ("tweedie", bst.Objective.tweedie()),
    ("reg:tweedie", bst.Objective.tweedie()), ("binary", bst.Objective.logistic()),
    ("binary:logistic", bst.Objective.logistic()), ("binary:logitraw", bst.Objective.logistic()),
    ("cross_entropy", bst.Objective.logistic()), ("xentropy", bst.Objective.logistic()),
    ("binary:hinge", bst.Objective.hinge()), ("lambdarank", bst.Objective.lambdarank()),
    ("rank:ndcg", bst.Objective.lambdarank()), ("rank:pairwise", bst.Objective.pairwise()),
])
def test_objective_names(name, objective):
    assert bst.Objective(name) == objective
    assert bst.GBDTConfig(objective=name).objective == objective


@pytest.mark.parametrize("name", ["multiclass", "softmax", "multi:softprob", "multi:softmax"])
def test_multiclass_names(name):
    assert bst.GBDTConfig(objective=name, num_class=3).objective == bst.Objective.softmax(3)
    assert bst.Objective(name, n_classes=3) == bst.Objective.softmax(3)


@pytest.mark.parametrize("name", ["multiclassova", "ova", "ovr"])
def test_one_vs_rest_names(name):
    assert bst.GBDTConfig(objective=name, num_class=3).objective == bst.Objective.one_vs_rest(3)


@pytest.mark.parametrize("name, says", [("rank_xendcg", "lambdarank"), ("reg:pseudohubererror", "huber"),
                                        ("survival:cox", "survival"), ("binar", "did you mean 'binary'")])
def test_unsupported_objective_names_say_what_to_use(name, says):
    with pytest.raises(ValueError, match=says):
        bst.GBDTConfig(objective=name)


def test_multi_softprob_probabilities_match_xgboost():
    """XGBoost's multi:softprob and boosters' softmax from the alias: one depth-wise tree
    per class grows the same splits; the probabilities agree within 1e-5 after scaling
    the hessian as tests/test_reference_libraries.py does (boosters' softmax hessian is
    LightGBM's K/(K-1) p(1-p), XGBoost's 2 p(1-p): l2 and min_child_weight divided by
    r = 2 (K-1) / K give the same trees with leaf values r times XGBoost's, so one round at
    learning rate 1 / r gives XGBoost's margins). Features of few distinct values: the
    same bins in both libraries."""
    X, y = data(task="multiclass")
    X = np.round(X * 2)
    k, r = 3, 2 * (3 - 1) / 3
    priors = np.log(np.bincount(y.astype(int), minlength=k) / len(y))
    config = bst.GBDTConfig(objective="multi:softprob", num_class=k, max_depth=3, eta=1.0 / r, num_boost_round=1,
                            reg_lambda=1.0 / r, min_child_weight=1.0 / r, max_bin=256, tree_method="hist",
                            histogram_mode="f64", subsample=1.0, min_samples_leaf=1)  # XGBoost's: every row
    model = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=1)
    params = {"objective": "multi:softprob", "num_class": k, "tree_method": "hist", "max_depth": 3, "eta": 1.0,
              "reg_lambda": 1.0, "min_child_weight": 1.0, "max_bin": 256, "nthread": 1}
    dtrain = xgb.DMatrix(X, y, base_margin=np.tile(priors, (len(y), 1)))
    booster = xgb.train(params, dtrain, num_boost_round=1)
    theirs = booster.predict(xgb.DMatrix(X, base_margin=np.tile(priors, (len(y), 1))))
    ours = model.predict(X)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_lightgbm_quantile_name_and_alpha_match_lightgbm():
    """objective="quantile", alpha=0.8 in both libraries, one leaf-wise round on data of
    few distinct values (the same bins): the same predictions within 1e-6."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 8, size=(500, 3)).astype(float)
    y = X[:, 0] + rng.normal(size=500)
    params = {"objective": "quantile", "alpha": 0.8, "num_leaves": 6, "learning_rate": 1.0, "lambda_l2": 0.0,
              "min_data_in_leaf": 20, "min_sum_hessian_in_leaf": 1e-3, "max_bin": 255, "min_data_in_bin": 1,
              "feature_pre_filter": False, "deterministic": True, "force_col_wise": True, "verbose": -1,
              "num_threads": 1}
    n_threads, rest = split_thread_params(params)
    config = bst.GBDTConfig(**rest, growth_strategy="leafwise", n_estimators=1, histogram_mode="f64",
                            subsample=1.0)  # LightGBM without bagging: every row
    ours = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=n_threads).predict(X)
    theirs = lgb.train(params, lgb.Dataset(X, y), num_boost_round=1).predict(X)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


@pytest.mark.parametrize("name, reference", [
    ("binary_logloss", lambda y, p: sklearn.metrics.log_loss(y, p)), ("logloss", sklearn.metrics.log_loss),
    ("xentropy", sklearn.metrics.log_loss), ("auc", sklearn.metrics.roc_auc_score)])
def test_binary_metric_names_score_as_their_definition(name, reference):
    X, y = data()
    model = trained(bst.GBDTConfig(objective="binary", n_estimators=5))
    margins = model.predict_raw(X).reshape(-1, 1)
    value = evaluate(bst.Metric(name), y, margins)
    assert value == pytest.approx(reference(y, model.predict(X)), rel=1e-9)


@pytest.mark.parametrize("name, reference", [
    ("rmse", lambda y, p: np.sqrt(sklearn.metrics.mean_squared_error(y, p))),
    ("l2_root", lambda y, p: np.sqrt(sklearn.metrics.mean_squared_error(y, p))),
    ("mae", sklearn.metrics.mean_absolute_error), ("l1", sklearn.metrics.mean_absolute_error),
    ("mean_absolute_error", sklearn.metrics.mean_absolute_error)])
def test_regression_metric_names_score_as_their_definition(name, reference):
    X, y = data(task="regression")
    model = trained(bst.GBDTConfig(n_estimators=5), "regression")
    value = evaluate(bst.Metric(name), y, model.predict_raw(X).reshape(-1, 1))
    assert value == pytest.approx(reference(y, model.predict(X)), rel=1e-9)


def test_multiclass_metric_names():
    for name in ("multi_logloss", "mlogloss", "multiclass"):
        assert bst.Metric(name) == bst.Metric.multiclass_logloss()
    assert bst.Metric("ndcg@10") == bst.Metric.ndcg(10) and bst.Metric("map@5") == bst.Metric.map(5)


@pytest.mark.parametrize("name, says", [("poisson", "poisson_deviance"), ("gamma", "gamma_deviance"),
                                        ("errror", "did you mean 'error'"), ("aucc", "did you mean 'auc'")])
def test_unsupported_metric_names_say_what_to_use(name, says):
    with pytest.raises(ValueError, match=says):
        bst.GBDTConfig(objective="binary", metric=name)


def test_lightgbm_and_xgboost_error_and_l2_metrics():
    # LightGBM's l2 is the mean squared error, XGBoost's error / merror 1 - accuracy: scored
    # as scikit-learn scores them (float64 means: 1e-12 relative)
    X, y = data(task="regression")
    model = bst.GBDTModel.train(bst.Dataset(X[:300], y[:300]), bst.GBDTConfig(n_estimators=5, metric="l2"),
                                val_set=bst.Dataset(X[300:], y[300:]))
    assert model.eval_history[-1] == pytest.approx(
        sklearn.metrics.mean_squared_error(y[300:], model.predict(X[300:])), rel=1e-12)
    for task, name in (("binary", "error"), ("binary", "binary_error"), ("multiclass", "merror"),
                       ("multiclass", "multi_error")):
        X, y = data(task=task)
        objective = "binary" if task == "binary" else "multi:softprob"
        config = bst.GBDTConfig(n_estimators=5, objective=objective, num_class=3 if task == "multiclass" else None,
                                metric=name) if task == "multiclass" else \
            bst.GBDTConfig(n_estimators=5, objective=objective, metric=name)
        model = bst.GBDTModel.train(bst.Dataset(X[:300], y[:300]), config, val_set=bst.Dataset(X[300:], y[300:]))
        p = model.predict(X[300:])
        labels = (p > 0.5).astype(float) if p.ndim == 1 else np.argmax(p, axis=1)
        assert model.eval_history[-1] == pytest.approx(1 - sklearn.metrics.accuracy_score(y[300:], labels),
                                                       rel=1e-12, abs=1e-15)


# -- n_threads=-1 and joblib's negatives ---------------------------------------------------------

def test_n_threads_minus_one_is_every_core():
    assert effective_n_threads(-1) == effective_n_threads(0)
    assert effective_n_threads(-2) == max(1, effective_n_threads(0) - 1)
    assert effective_n_threads(-10**4) == 1
    X, y = data()
    config = bst.GBDTConfig(objective="binary", n_estimators=5)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=-1)
    assert model.to_bytes() == bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=1).to_bytes()
    np.testing.assert_array_equal(model.predict(X, n_threads=-1), model.predict(X, n_threads=1))


# -- the estimators -----------------------------------------------------------------------------

def test_random_state_is_the_seed():
    X, y = data(task="regression")
    common = dict(n_estimators=5, subsample=0.5, colsample_bytree=0.5)
    by_seed = GBDTRegressor(seed=9, **common).fit(X, y).booster_.to_bytes()
    assert GBDTRegressor(random_state=9, **common).fit(X, y).booster_.to_bytes() == by_seed
    assert GBDTRegressor(random_state=np.int64(9), **common).fit(X, y).booster_.to_bytes() == by_seed
    # None: not given, boosters' seed (42 by default), as LightGBM's and XGBoost's estimators
    assert GBDTRegressor(random_state=None, **common).fit(X, y).booster_.to_bytes() == \
        GBDTRegressor(**common).fit(X, y).booster_.to_bytes()
    # a RandomState draws the seed: the same state gives the same model, fits go on drawing
    est = GBDTRegressor(random_state=np.random.RandomState(0), **common)
    first = est.fit(X, y).booster_.to_bytes()
    assert GBDTRegressor(random_state=np.random.RandomState(0), **common).fit(X, y).booster_.to_bytes() == first
    assert est.fit(X, y).booster_.to_bytes() != first
    with pytest.raises(ValueError, match="seed=9 and random_state=3"):
        GBDTRegressor(seed=9, random_state=3, n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="random_state must be"):
        GBDTRegressor(random_state="x", n_estimators=2).fit(X, y)


def test_n_jobs_and_verbose():
    X, y = data()
    reference = GBDTClassifier(n_estimators=5, n_threads=1).fit(X, y)
    for n_jobs in (None, -1, -2, 1, 2):
        est = GBDTClassifier(n_estimators=5, n_jobs=n_jobs, verbose=-1).fit(X, y)
        assert est.booster_.to_bytes() == reference.booster_.to_bytes()
        np.testing.assert_array_equal(est.predict_proba(X), reference.predict_proba(X))
    assert GBDTClassifier(n_jobs=3)._n_threads() == 3 and GBDTClassifier(n_jobs=None)._n_threads() == 0
    with pytest.raises(ValueError, match="thread count given twice"):
        GBDTClassifier(n_estimators=2, n_threads=2, n_jobs=4).fit(X, y)
    assert GBDTClassifier(verbose=-1).config(bst.Objective.logistic()).verbosity == 0
    assert GBDTClassifier(verbose=1).config(bst.Objective.logistic()).verbosity == 1


def test_estimators_take_lightgbm_and_xgboost_names_and_clone_them():
    X, y = data()
    est = GBDTClassifier(n_estimators=6, growth_strategy="leafwise", num_leaves=7, reg_lambda=3.0, colsample_bytree=0.8,
                         min_child_samples=4, random_state=5, n_jobs=1, verbose=0)
    params = est.get_params()
    assert params["num_leaves"] == 7 and params["reg_lambda"] == 3.0 and params["random_state"] == 5
    copy = clone(est)
    assert copy.get_params() == params
    assert "num_leaves=7" in repr(est)
    own = GBDTClassifier(n_estimators=6, growth_strategy="leafwise", n_leaves=7, l2=3.0, colsample_bytree=0.8,
                         min_samples_leaf=4, seed=5, n_threads=1)
    assert copy.fit(X, y).booster_.to_bytes() == own.fit(X, y).booster_.to_bytes()
    copy.set_params(num_leaves=9, eta=0.2)
    assert copy.get_params()["num_leaves"] == 9 and copy.get_params()["eta"] == 0.2
    assert clone(copy).get_params() == copy.get_params()
    assert copy.config(bst.Objective.logistic()).n_leaves == 9
    with pytest.raises(ValueError, match="n_leaves=8 and num_leaves=7"):
        GBDTClassifier(growth_strategy="leafwise", n_leaves=8, num_leaves=7).config(bst.Objective.logistic())
    with pytest.raises(TypeError, match="did you mean 'num_leaves'"):
        GBDTClassifier(num_leavs=7)
    # LightGBM's habit, num_leaves alone: LightGBM's leaf-wise trees
    lightgbm_habit = GBDTRegressor(num_leaves=15, n_estimators=2, n_threads=1).fit(X, y).booster_
    own = GBDTRegressor(growth_strategy="leafwise", n_leaves=15, n_estimators=2, n_threads=1).fit(X, y).booster_
    assert lightgbm_habit.to_bytes() == own.to_bytes()
    # the estimators' trees are leaf-wise whatever the names (a params dict in XGBoost's names is depth-wise)
    config = GBDTRegressor(max_leaves=8, n_estimators=2).fit(X, y).booster_.config
    assert (config.growth_strategy, config.n_leaves) == (bst.GrowthStrategy.Leafwise, 8)


def test_estimator_objective_names_and_eval_metric():
    X, y = data(task="multiclass")
    clf = GBDTClassifier(objective="multi:softprob", n_estimators=4).fit(X, y)
    own = GBDTClassifier(objective="softmax", n_estimators=4).fit(X, y)
    assert clf.booster_.to_bytes() == own.booster_.to_bytes()
    # XGBoost's multi:softmax: the classifier's predict gives labels either way, the booster probabilities
    softmax = GBDTClassifier(objective="multi:softmax", n_estimators=4).fit(X, y)
    np.testing.assert_array_equal(softmax.predict(X), own.predict(X))
    Xr, yr = data(task="regression")
    quantile = GBDTRegressor(objective="quantile", alpha=0.9, n_estimators=3).fit(Xr, yr)
    assert quantile.booster_.objective == bst.Objective.pinball(0.9)
    assert GBDTRegressor(objective="reg:quantileerror", quantile_alpha=0.1, n_estimators=2).fit(Xr, yr) \
        .booster_.objective == bst.Objective.pinball(0.1)
    with pytest.raises(ValueError, match="did you mean 'regression'"):
        GBDTRegressor(objective="regresion").fit(Xr, yr)
    # eval_metric, as XGBoost's: a name or a list; early stopping follows the first
    Xb, yb = data(task="binary")
    est = GBDTClassifier(n_estimators=30, eval_metric=["auc", "binary_logloss"], early_stopping_rounds=3)
    est.fit(Xb[:300], yb[:300], eval_set=(Xb[300:], yb[300:]))
    assert set(est.evals_result_["valid"]) == {"auc", "logloss"}
    with_metric = GBDTClassifier(n_estimators=30, metric=[bst.Metric.auc(), bst.Metric.logloss()],
                                 early_stopping_rounds=3).fit(Xb[:300], yb[:300], eval_set=(Xb[300:], yb[300:]))
    assert est.booster_.to_bytes() == with_metric.booster_.to_bytes()
    with pytest.raises(ValueError, match="metric=Metric.logloss.. and eval_metric='auc'"):
        GBDTClassifier(eval_metric="auc", metric=bst.Metric.logloss()).config(bst.Objective.logistic())


def test_ranker_takes_rank_names():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.clip(np.round(X[:, 0] + 1), 0, 3)
    ours = GBDTRanker(objective="rank:pairwise", n_estimators=3).fit(X, y, group=[20] * 10)
    own = GBDTRanker(objective="pairwise", n_estimators=3).fit(X, y, group=[20] * 10)
    assert ours.booster_.to_bytes() == own.booster_.to_bytes()


def test_canonical_params_doc_example():
    assert canonical_params({"eta": 0.1}, ("learning_rate",)) == {"learning_rate": 0.1}


def test_estimator_objective_by_lightgbm_alias_and_random_state_drawn_once_per_fit():
    Xr, yr = data(task="regression")
    est = GBDTRegressor(objective_type="quantile", alpha=0.7, n_estimators=2).fit(Xr, yr)
    assert est.booster_.objective == bst.Objective.pinball(0.7)
    state = np.random.RandomState(5)
    GBDTRegressor(random_state=state, n_estimators=2, subsample=0.5).fit(Xr, yr)
    expected = np.random.RandomState(5)
    expected.randint(np.iinfo(np.uint32).max, dtype=np.uint64)  # one draw for the one fit
    assert state.randint(1000) == expected.randint(1000)
