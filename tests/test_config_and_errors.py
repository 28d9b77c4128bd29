"""Configuration validation and input errors: clear ValueError/TypeError naming the
argument, never a crash or a silent fix; the user's arrays are never modified."""

import re

import numpy as np
import pytest

import boosters as bst
from support.child_python import python_run


def small_data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    return X, y


def fit(X, y, weights=None, val=None, n_threads=1, **params):
    return bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), config=bst.GBDTConfig(**params),
                               val_set=val, n_threads=n_threads)


# ----------------------------------------------------------------------------------
# GBDTConfig parameters
# ----------------------------------------------------------------------------------

def unknown_objective():
    return bst.Objective("cox")


def unknown_metric():
    return bst.Metric("r2")


# right type, outside the allowed values (a function builds the value inside the check)
BAD_VALUES = [
    ("n_estimators", 0, ValueError), ("n_estimators", -5, ValueError),
    ("learning_rate", 0.0, ValueError), ("learning_rate", -0.1, ValueError), ("learning_rate", float("nan"), ValueError),
    ("learning_rate", float("inf"), ValueError),
    ("objective", unknown_objective, ValueError),
    ("metric", unknown_metric, ValueError), ("metric", bst.Metric.auc(), ValueError),  # not for squared
    ("growth_strategy", "breadthfirst", ValueError),
    ("max_depth", 0, ValueError), ("max_depth", -2, ValueError),
    ("n_leaves", 1, ValueError), ("n_leaves", 0, ValueError),
    ("l1", -1.0, ValueError), ("l1", float("nan"), ValueError),
    ("l2", -0.5, ValueError), ("l2", float("inf"), ValueError),
    ("min_gain_to_split", -1e-3, ValueError), ("min_gain_to_split", float("nan"), ValueError),
    ("min_child_weight", -1.0, ValueError), ("min_child_weight", float("inf"), ValueError),
    ("min_samples_leaf", 0, ValueError), ("min_samples_leaf", -1, ValueError),
    ("max_bins", 1, ValueError), ("max_bins", 65536, ValueError),
    ("cache_size", 1, ValueError), ("cache_size", 0, ValueError),
    ("early_stopping_rounds", 0, ValueError), ("early_stopping_rounds", -3, ValueError),
    ("seed", -1, ValueError),
    ("histogram_mode", "f32", ValueError), ("histogram_mode", "I16", ValueError),
    ("quantization_levels", 0, ValueError), ("quantization_levels", 32768, ValueError),
    ("histogram_layout", "columns", ValueError), ("histogram_layout", "Row", ValueError),
    # verbosity=-1 is LightGBM's silent: accepted as 0 (tests/test_parameter_names.py)
    ("colsample_bytree", 0.0, ValueError), ("colsample_bytree", 1.5, ValueError),
    ("colsample_bytree", float("nan"), ValueError), ("colsample_bylevel", -0.5, ValueError),
    ("colsample_bylevel", 1.0001, ValueError), ("colsample_bynode", 0.0, ValueError),
    ("colsample_bynode", 2, ValueError),
    ("monotone_constraints", (1, 2, 0), ValueError), ("monotone_constraints", {0: -2}, ValueError),
    ("monotone_constraints", {-1: 1}, ValueError), ("monotone_constraints", (0.5,), ValueError),
    ("monotone_constraints", (True, 0), ValueError),
    ("interaction_constraints", [[0, 1], []], ValueError), ("interaction_constraints", [[0, -1]], ValueError),
    ("subsample", 0.0, ValueError), ("subsample", 1.5, ValueError), ("subsample", float("nan"), ValueError),
    ("goss_top_rate", 0.0, ValueError), ("goss_top_rate", 1.01, ValueError),
    ("goss_top_rate", 0.2, ValueError),  # without goss_other_rate
    ("goss_other_rate", -0.1, ValueError), ("goss_other_rate", float("inf"), ValueError),
    ("goss_other_rate", 0.1, ValueError),  # without goss_top_rate
    ("max_onehot_cats", -1, ValueError),
    ("cat_smooth", -1.0, ValueError), ("cat_smooth", float("nan"), ValueError),
    ("cat_l2", -0.1, ValueError), ("cat_l2", float("inf"), ValueError),
    ("max_cat_threshold", 0, ValueError), ("min_data_per_group", 0, ValueError),
    ("cat_encoding", "ordered", ValueError), ("ctr_prior_weight", 0.0, ValueError),
    ("ctr_prior_weight", float("inf"), ValueError),
    ("booster", "goss", ValueError), ("drop_rate", 1.5, ValueError), ("drop_rate", -0.1, ValueError),
    ("skip_drop", 1.01, ValueError), ("skip_drop", float("nan"), ValueError), ("max_drop", 0, ValueError),
    ("linear_l1", -1.0, ValueError), ("linear_l1", float("nan"), ValueError), ("linear_l2", -0.1, ValueError),
    ("linear_l2", float("inf"), ValueError),
    ("random_strength", -1.0, ValueError), ("random_strength", float("nan"), ValueError),
    ("bagging_temperature", -0.5, ValueError), ("bagging_temperature", float("inf"), ValueError),
]
# a wrong type (string choices reject any other type with ValueError)
BAD_TYPES = [
    ("n_estimators", 10.0, TypeError), ("n_estimators", "10", TypeError), ("n_estimators", True, TypeError),
    ("n_estimators", None, TypeError),
    ("learning_rate", "0.1", TypeError), ("learning_rate", None, TypeError),
    # a name ("squared", "rmse") is Objective(name) / Metric(name): tests/test_parameter_names.py
    ("objective", 3.5, TypeError), ("objective", bst.Metric.rmse(), TypeError),
    ("metric", 3.5, TypeError), ("metric", bst.Objective.squared(), TypeError),
    ("growth_strategy", 3, TypeError),
    ("max_depth", 2.5, TypeError), ("max_depth", "6", TypeError),
    ("n_leaves", 31.0, TypeError),
    ("l1", "0", TypeError),
    ("l2", None, TypeError),
    ("min_gain_to_split", "0", TypeError), ("min_gain_to_split", None, TypeError),
    ("min_child_weight", [1.0], TypeError), ("min_child_weight", True, TypeError),
    ("min_samples_leaf", 2.0, TypeError),
    ("max_bins", 256.0, TypeError),
    ("cache_size", 8.5, TypeError),
    ("early_stopping_rounds", 5.0, TypeError),
    ("seed", 1.5, TypeError), ("seed", "42", TypeError),
    ("histogram_mode", None, ValueError), ("histogram_mode", 16, ValueError),
    ("prefetch", 1, TypeError), ("prefetch", "yes", TypeError), ("prefetch", None, TypeError),
    ("enable_bundling", 1, TypeError), ("enable_bundling", "no", TypeError), ("enable_bundling", None, TypeError),
    ("renew_leaves", 0, TypeError), ("renew_leaves", "yes", TypeError), ("renew_leaves", None, TypeError),
    ("quantization_levels", 8.0, TypeError), ("quantization_levels", "8", TypeError),
    ("quantization_levels", True, TypeError),
    ("histogram_layout", None, ValueError), ("histogram_layout", 1, ValueError),
    ("verbosity", 1.0, TypeError), ("verbosity", None, TypeError),
    ("colsample_bytree", "0.5", TypeError), ("colsample_bytree", None, TypeError),
    ("colsample_bylevel", True, TypeError), ("colsample_bynode", [0.5], TypeError),
    ("monotone_constraints", "+1", TypeError), ("monotone_constraints", 1, TypeError),
    ("monotone_constraints", {1.5: 1}, TypeError), ("monotone_constraints", {(0,): 1}, TypeError),
    ("interaction_constraints", "ab", TypeError), ("interaction_constraints", 3, TypeError),
    ("interaction_constraints", [0, 1], TypeError), ("interaction_constraints", [[0.0, 1]], TypeError),
    ("interaction_constraints", {"a": [0]}, TypeError),
    ("subsample", "0.5", TypeError), ("subsample", None, TypeError), ("subsample", True, TypeError),
    ("goss_top_rate", "0.2", TypeError), ("goss_other_rate", [0.1], TypeError),
    ("max_onehot_cats", 4.0, TypeError), ("max_onehot_cats", None, TypeError),
    ("cat_smooth", "10", TypeError), ("cat_smooth", None, TypeError),
    ("cat_l2", "1", TypeError), ("cat_l2", True, TypeError),
    ("max_cat_threshold", 32.0, TypeError), ("min_data_per_group", "100", TypeError),
    ("cat_encoding", None, ValueError), ("ctr_prior_weight", "1", TypeError),
    ("booster", 1, ValueError), ("booster", None, ValueError), ("drop_rate", "0.1", TypeError),
    ("skip_drop", None, TypeError), ("max_drop", 2.0, TypeError), ("xgboost_dart_mode", 1, TypeError),
    ("xgboost_dart_mode", None, TypeError),
    ("linear_leaves", 1, TypeError), ("linear_leaves", None, TypeError), ("linear_l1", "0", TypeError),
    ("linear_l2", None, TypeError),
    ("random_strength", None, TypeError), ("random_strength", "1", TypeError), ("bagging_temperature", "1", TypeError),
]
BAD_PARAMS = BAD_VALUES + BAD_TYPES
BOOL_FIELDS = {"prefetch", "enable_bundling", "renew_leaves", "xgboost_dart_mode"}  # every value of the right type is valid
BOOL_FIELDS |= {"linear_leaves"}


def _ids(rows):
    return [f"{n}={v.__name__}()" if callable(v) else f"{n}={v!r}" for n, v, _ in rows]


def test_every_field_has_rejection_tests():
    """A new GBDTConfig field fails here until it has bad-type and bad-value cases."""
    fields = set(bst.GBDTConfig().to_dict())
    assert {name for name, _, _ in BAD_TYPES} == fields
    # every int is a verbosity: below 0 is silent (LightGBM's verbosity=-1), as 0
    assert {name for name, _, _ in BAD_VALUES} == fields - BOOL_FIELDS - {"verbosity"}


@pytest.mark.parametrize("name, value, exc", BAD_PARAMS, ids=_ids(BAD_PARAMS))
def test_bad_parameter_raises_naming_it(name, value, exc):
    with pytest.raises(exc, match=re.escape(name)):
        bst.GBDTConfig(**{name: value() if callable(value) else value})


@pytest.mark.parametrize("name, value, exc", BAD_PARAMS, ids=_ids(BAD_PARAMS))
def test_replace_validates_again(name, value, exc):
    cfg = bst.GBDTConfig(n_estimators=5)
    with pytest.raises(exc, match=re.escape(name)):
        cfg.replace(**{name: value() if callable(value) else value})


@pytest.mark.parametrize("name, value, exc", BAD_PARAMS, ids=_ids(BAD_PARAMS))
def test_assignment_is_checked_as_the_constructor_checks(name, value, exc):
    """config.name = value after construction is refused as GBDTConfig(name=value) is, and the
    config keeps its values (an unchecked n_estimators=-1 trained a model of no trees)."""
    cfg = bst.GBDTConfig(n_estimators=5)
    before = cfg.to_dict()
    with pytest.raises(exc, match=re.escape(name)):
        setattr(cfg, name, value() if callable(value) else value)
    assert cfg.to_dict() == before


def test_assignment_of_a_good_value_takes_effect_with_its_consequences():
    cfg = bst.GBDTConfig(n_estimators=5)
    cfg.n_estimators = 7
    cfg.growth_strategy = "leafwise"  # max_depth "auto" follows it: no depth limit leaf-wise
    assert (cfg.n_estimators, cfg.growth_strategy, cfg.max_depth) == (7, bst.GrowthStrategy.Leafwise, None)
    assert cfg == bst.GBDTConfig(n_estimators=7, growth_strategy="leafwise")
    X, y = small_data()
    assert bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, n_threads=1).n_trees == 7


def test_assignment_of_an_unknown_name_is_refused_with_a_hint():
    cfg = bst.GBDTConfig()
    with pytest.raises(AttributeError, match="n_estimators"):
        cfg.n_estimator = 10
    with pytest.raises(AttributeError):
        del cfg.n_estimators
    assert not hasattr(cfg, "n_estimator") and cfg.n_estimators == 100


@pytest.mark.parametrize("value, attribute", [
    (bst.Objective.huber(2.0), "delta"), (bst.Objective.softmax(3), "n_classes"),
    (bst.Objective.squared(), "name"), (bst.Metric.ndcg(5), "k"), (bst.Metric.rmse(), "name"),
])
def test_objectives_and_metrics_are_immutable(value, attribute):
    """They are hashed, compared and saved with a model: a changed one is a new, checked one."""
    before = repr(value), hash(value)
    with pytest.raises(AttributeError, match="immutable"):
        setattr(value, attribute, -1)
    assert (repr(value), hash(value)) == before


GOOD_PARAMS = [
    ("n_estimators", 1), ("n_estimators", np.int64(7)), ("learning_rate", 1e-6), ("learning_rate", 5.0),
    ("learning_rate", np.float32(0.25)), ("learning_rate", 1), ("max_depth", 1), ("n_leaves", 2), ("l1", 0.0),
    ("l2", 0.0), ("l2", 3), ("min_gain_to_split", 0.0), ("min_child_weight", 0.0), ("min_samples_leaf", 1),
    ("max_bins", 2), ("max_bins", 65535), ("cache_size", 2), ("early_stopping_rounds", None),
    ("early_stopping_rounds", 1), ("seed", 0), ("histogram_mode", "f64"), ("histogram_mode", "i16"),
    ("histogram_mode", "i8"), ("prefetch", False), ("verbosity", 0), ("growth_strategy", "leafwise"),
    ("enable_bundling", False), ("renew_leaves", False), ("quantization_levels", 1),
    ("quantization_levels", 32767), ("quantization_levels", None), ("histogram_layout", "row"),
    ("histogram_layout", "column"), ("verbosity", 2),
    ("colsample_bytree", 1.0), ("colsample_bytree", 1e-9), ("colsample_bylevel", 0.5), ("colsample_bynode", 1),
    ("monotone_constraints", None), ("monotone_constraints", (1, 0, -1)), ("monotone_constraints", {0: 1, "age": -1}),
    ("monotone_constraints", {}), ("interaction_constraints", None), ("interaction_constraints", ((0, 1), ("a",))),
    ("interaction_constraints", ()),
    ("subsample", 1.0), ("subsample", 1e-9), ("subsample", 1), ("subsample", np.float32(0.5)),
    ("max_onehot_cats", 0), ("max_onehot_cats", 65534), ("cat_smooth", 0.0), ("cat_l2", 0.0),
    ("max_cat_threshold", 1), ("min_data_per_group", 1),
    ("cat_encoding", "ordered_ctr"), ("cat_encoding", "splits"), ("ctr_prior_weight", 0.5),
    ("linear_leaves", True), ("linear_l1", 0.0), ("linear_l1", 2.5), ("linear_l2", 0.0), ("linear_l2", 1e3),
    ("random_strength", 0.0), ("random_strength", 2.5), ("bagging_temperature", None), ("bagging_temperature", 0.0),
    ("bagging_temperature", 3.0),
]


@pytest.mark.parametrize("name, value", GOOD_PARAMS, ids=[f"{n}={v!r}" for n, v in GOOD_PARAMS])
def test_valid_boundary_values_are_accepted(name, value):
    leafwise = {"growth_strategy": "leafwise"} if name == "n_leaves" else {}  # depth-wise trees refuse n_leaves
    cfg = bst.GBDTConfig(**{name: value}, **leafwise)
    stored = getattr(cfg, name)
    if name == "growth_strategy":
        assert stored is bst.GrowthStrategy.Leafwise
    else:
        assert stored == value


@pytest.mark.parametrize("top, other", [(0.2, 0.1), (0.5, 0.5), (1e-6, 1.0 - 1e-6), (0.9, 0.1)])
def test_goss_rates_accepted_together(top, other):
    cfg = bst.GBDTConfig(goss_top_rate=top, goss_other_rate=other)
    assert (cfg.goss_top_rate, cfg.goss_other_rate) == (top, other)
    assert bst.GBDTConfig(**cfg.to_dict()) == cfg


@pytest.mark.parametrize("params, names", [
    (dict(goss_top_rate=0.6, goss_other_rate=0.5), ("goss_top_rate", "goss_other_rate")),  # a + b > 1
    (dict(goss_top_rate=1.0, goss_other_rate=0.0001), ("goss_top_rate",)),                 # a = 1: nothing to draw
    (dict(goss_top_rate=0.2, goss_other_rate=0.1, subsample=0.5), ("subsample", "GOSS")),  # two samplings
])
def test_bad_goss_combinations(params, names):
    with pytest.raises(ValueError) as info:
        bst.GBDTConfig(**params)
    assert all(name in str(info.value) for name in names)


def test_defaults():
    cfg = bst.GBDTConfig()
    assert cfg.n_estimators == 100 and cfg.learning_rate == 0.05
    assert cfg.objective == bst.Objective.squared() and cfg.metric is None
    assert cfg.growth_strategy is bst.GrowthStrategy.Leafwise
    assert (cfg.max_depth, cfg.n_leaves, cfg.l1, cfg.l2) == (None, 15, 0.0, 1.0)
    assert (cfg.min_gain_to_split, cfg.min_child_weight, cfg.min_samples_leaf) == (0.0, 0.001, 20)
    assert (cfg.max_bins, cfg.cache_size, cfg.early_stopping_rounds, cfg.seed) == (256, 8, None, 42)
    assert (cfg.histogram_mode, cfg.prefetch) == ("auto", True)
    assert (cfg.enable_bundling, cfg.renew_leaves, cfg.quantization_levels) == (True, True, None)
    assert (cfg.histogram_layout, cfg.verbosity) == ("auto", 0)
    assert (cfg.colsample_bytree, cfg.colsample_bylevel, cfg.colsample_bynode) == (1.0, 1.0, 1.0)
    assert (cfg.monotone_constraints, cfg.interaction_constraints) == (None, None)
    assert (cfg.subsample, cfg.goss_top_rate, cfg.goss_other_rate) == (0.8, None, None)
    assert cfg.to_dict()["max_depth"] == "auto"
    # LightGBM's max_cat_to_onehot, cat_smooth, cat_l2, max_cat_threshold, min_data_per_group
    assert (cfg.max_onehot_cats, cfg.cat_smooth, cfg.cat_l2, cfg.max_cat_threshold, cfg.min_data_per_group) == \
        (4, 10.0, 10.0, 32, 100)


@pytest.mark.parametrize("typo, suggestion", [("n_estimator", "n_estimators"), ("learning_rat", "learning_rate"),
                                              ("max_leaves_", None), ("lambda_l2_", "lambda_l2"), ("min_child_weigth",
                                                                                            "min_child_weight")])
def test_unknown_parameter(typo, suggestion):
    with pytest.raises(ValueError, match=re.escape(typo)) as info:
        bst.GBDTConfig(**{typo: 3})
    if suggestion is not None:
        assert suggestion in str(info.value)


def test_unknown_parameter_is_reported_even_with_valid_ones():
    with pytest.raises(ValueError, match="reg_lamda"):  # reg_lambda is XGBoost's name of l2
        bst.GBDTConfig(n_estimators=10, reg_lamda=1.0)


@pytest.mark.parametrize("objective, metric", [
    (bst.Objective.logistic(), bst.Metric.rmse()), (bst.Objective.logistic(), bst.Metric.mae()),
    (bst.Objective.squared(), bst.Metric.logloss()), (bst.Objective.squared(), bst.Metric.auc()),
    (bst.Objective.squared(), bst.Metric.accuracy()), (bst.Objective.softmax(3), bst.Metric.auc()),
    (bst.Objective.softmax(3), bst.Metric.rmse()), (bst.Objective.logistic(), bst.Metric.multiclass_logloss()),
    (bst.Objective.pinball([0.1, 0.9]), bst.Metric.mae()), (bst.Objective.absolute(), bst.Metric.logloss()),
    (bst.Objective.logistic(), bst.Metric.mape()), (bst.Objective.pinball([0.1, 0.9]), bst.Metric.pinball(0.1)),
    (bst.Objective.hinge(), bst.Metric.logloss()), (bst.Objective.one_vs_rest(3), bst.Metric.auc()),
    (bst.Objective.squared(), bst.Metric.margin_accuracy()),
])
def test_metric_incompatible_with_objective(objective, metric):
    with pytest.raises(ValueError, match="metric"):
        bst.GBDTConfig(objective=objective, metric=metric)


@pytest.mark.parametrize("objective, metric", [
    (bst.Objective.squared(), bst.Metric.rmse()), (bst.Objective.squared(), bst.Metric.mae()),
    (bst.Objective.logistic(), bst.Metric.auc()), (bst.Objective.logistic(), bst.Metric.logloss()),
    (bst.Objective.logistic(), bst.Metric.accuracy()), (bst.Objective.softmax(3), bst.Metric.logloss()),
    (bst.Objective.softmax(3), bst.Metric.multiclass_accuracy()),
    (bst.Objective.absolute(), bst.Metric.rmse()), (bst.Objective.huber(), bst.Metric.mape()),
    (bst.Objective.squared(), bst.Metric.pinball(0.9)),
    (bst.Objective.pinball([0.1, 0.9]), bst.Metric.pinball([0.1, 0.9])),
    (bst.Objective.hinge(), bst.Metric.auc()), (bst.Objective.hinge(), bst.Metric.margin_accuracy(0.5)),
    (bst.Objective.logistic(), bst.Metric.margin_accuracy()), (bst.Objective.one_vs_rest(3), bst.Metric.accuracy()),
    (bst.Objective.one_vs_rest(3), bst.Metric.one_vs_rest_logloss()),
])
def test_metric_compatible_with_objective(objective, metric):
    assert bst.GBDTConfig(objective=objective, metric=metric).metric == metric


@pytest.mark.parametrize("max_depth", [None, -1])
def test_depthwise_needs_a_depth(max_depth):
    with pytest.raises(ValueError, match="max_depth"):
        bst.GBDTConfig(growth_strategy=bst.GrowthStrategy.Depthwise, max_depth=max_depth)
    cfg = bst.GBDTConfig(growth_strategy=bst.GrowthStrategy.Leafwise, max_depth=max_depth)
    assert cfg.max_depth is None


@pytest.mark.parametrize("bad", [1, 0, -2, 2.5, "3", None, True])
def test_softmax_needs_at_least_two_classes(bad):
    with pytest.raises((ValueError, TypeError), match="n_classes"):
        bst.Objective.softmax(bad)


def test_unknown_objective_and_metric_names():
    with pytest.raises(ValueError, match="objective"):
        bst.Objective("cox")
    with pytest.raises(ValueError, match="metric"):
        bst.Metric("r2")


def test_config_must_be_a_gbdtconfig():
    X, y = small_data()
    with pytest.raises(TypeError, match="config"):
        bst.GBDTModel.train(bst.Dataset(X, y), config={"n_estimators": 3})


@pytest.mark.parametrize("n_threads, exc", [(10**6, ValueError), (1.5, TypeError), ("2", TypeError), (True, TypeError)])
def test_bad_n_threads(n_threads, exc):
    X, y = small_data()
    with pytest.raises(exc, match="n_threads"):
        fit(X, y, n_estimators=2, n_threads=n_threads)
    model = fit(X, y, n_estimators=2)
    with pytest.raises(exc, match="n_threads"):
        model.predict(X, n_threads=n_threads)


# ----------------------------------------------------------------------------------
# Labels
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("objective", ["squared", "logistic"])
def test_non_finite_labels(bad, objective):
    X, y = small_data()
    y = (y > 0).astype(np.float64)
    y[17] = bad
    obj = bst.Objective.squared() if objective == "squared" else bst.Objective.logistic()
    with pytest.raises(ValueError, match=r"\by\b"):
        fit(X, y, objective=obj, n_estimators=2)


def test_non_finite_labels_in_val_set():
    X, y = small_data()
    yv = y.copy()
    yv[0] = np.nan
    with pytest.raises(ValueError, match=r"\by\b"):
        fit(X, y, val=bst.Dataset(X, yv), n_estimators=2)


@pytest.mark.parametrize("bad", [2.0, -1.0, 1.5])  # probabilities in [0, 1] are labels
def test_logistic_labels_outside_zero_one(bad):
    X, y = small_data()
    y = (y > 0).astype(np.float64)
    y[5] = bad
    with pytest.raises(ValueError, match=r"\by\b"):
        fit(X, y, objective=bst.Objective.logistic(), n_estimators=2)
    # in the validation set too
    y_ok = (small_data()[1] > 0).astype(np.float64)
    with pytest.raises(ValueError, match=r"\by\b"):
        fit(X, y_ok, objective=bst.Objective.logistic(), n_estimators=2, val=bst.Dataset(X, y))


@pytest.mark.parametrize("bad", [3.0, -1.0, 1.5, 100.0])
def test_softmax_labels_outside_classes(bad):
    X, y = small_data()
    y = np.digitize(y, [-0.5, 0.5]).astype(np.float64)
    y[3] = bad
    with pytest.raises(ValueError, match=r"\by\b"):
        fit(X, y, objective=bst.Objective.softmax(3), n_estimators=2)


def test_softmax_integer_labels_of_any_dtype_accepted():
    X, y = small_data()
    y = np.digitize(y, [-0.5, 0.5])
    for labels in (y, y.astype(np.int32), y.astype(np.float32), y.astype(np.uint8)):
        model = fit(X, labels, objective=bst.Objective.softmax(3), n_estimators=2)
        assert model.predict(X).shape == (len(y), 3)


# (300, 2) is two targets per row (multi-target regression: tests/training/test_multi_target.py)
@pytest.mark.parametrize("y_shape", [(299,), (301,), (299, 2), (300, 2, 1), (1, 300)])
def test_labels_of_the_wrong_shape(y_shape):
    X, _ = small_data()
    with pytest.raises(ValueError, match=r"\by\b"):
        bst.Dataset(X, np.zeros(y_shape))


def test_non_numeric_labels():
    X, _ = small_data()
    with pytest.raises(ValueError, match=r"\by\b"):
        bst.Dataset(X, np.array(["a"] * 300))


# ----------------------------------------------------------------------------------
# Features
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("X", [
    np.zeros(10), np.zeros((4, 3, 2)), np.zeros((0, 3)), np.zeros((5, 0)), np.array([["a", "b"], ["c", "d"]]),
    np.array([[1.0, None], [2.0, 3.0]], dtype=object), np.zeros((3, 2), dtype=np.complex128), 5.0,
], ids=["1d", "3d", "no-rows", "no-features", "strings", "object", "complex", "scalar"])
def test_bad_feature_matrix(X):
    with pytest.raises(ValueError, match=r"\bX\b"):
        bst.Dataset(X, None)
    model = fit(*small_data(d=2), n_estimators=2)
    with pytest.raises(ValueError, match=r"\bX\b"):
        model.predict(X)
    with pytest.raises(ValueError, match=r"\bX\b"):
        model.predict_raw(X)


def test_ragged_feature_matrix():
    with pytest.raises(ValueError, match=r"\bX\b"):
        bst.Dataset([[1.0, 2.0], [3.0]], [0.0, 1.0])


@pytest.mark.parametrize("d_predict", [3, 5, 1])
def test_predict_with_other_number_of_features(d_predict):
    X, y = small_data(d=4)
    model = fit(X, y, n_estimators=2)
    X2 = np.zeros((10, d_predict))
    with pytest.raises(ValueError, match="features"):
        model.predict(X2)
    with pytest.raises(ValueError, match="features"):
        model.predict_raw(X2)
    with pytest.raises(ValueError, match="features"):
        model.predict(bst.Dataset(X2))


def test_val_set_with_other_number_of_features():
    X, y = small_data(d=4)
    with pytest.raises(ValueError, match="features"):
        fit(X, y, n_estimators=2, val=bst.Dataset(X[:, :3], y))


def test_val_set_columns_are_matched_by_name_before_the_binning(monkeypatch):
    """A val_set frame is read as predict reads a frame (its columns by name, any order;
    the same message for a column the model does not have), and checked before the
    training set is binned (for an out-of-core set, passes over its source)."""
    import pandas as pd

    X, y = small_data(d=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    config = bst.GBDTConfig(n_estimators=3)
    in_order = bst.GBDTModel.train(bst.Dataset(frame, y), config, val_set=bst.Dataset(frame, y))
    reordered = bst.GBDTModel.train(bst.Dataset(frame, y), config, val_set=bst.Dataset(frame[["c", "a", "b"]], y))
    assert reordered.eval_history == in_order.eval_history
    with pytest.raises(ValueError, match=r"X: .*unexpected \['z'\]"):
        in_order.predict(frame.assign(z=1.0))
    monkeypatch.setattr(bst.Dataset, "binned", lambda *args: pytest.fail("binned before the val_set was checked"))
    with pytest.raises(ValueError, match=r"val_set: .*unexpected \['z'\]"):
        bst.GBDTModel.train(bst.Dataset(frame, y), config, val_set=bst.Dataset(frame.assign(z=1.0), y))


def test_infinite_feature_values_are_values_not_errors():
    X, y = small_data(d=3)
    X[:5, 0] = np.inf
    X[5:10, 0] = -np.inf
    y[:5] = 10.0
    y[5:10] = -10.0
    model = fit(X, y, n_estimators=10, learning_rate=0.5)
    lo, hi = X[10:, 0].min(), X[10:, 0].max()
    p = model.predict(np.array([[np.inf, 0, 0], [-np.inf, 0, 0], [1e300, 0, 0], [-1e300, 0, 0],
                                [hi, 0, 0], [lo, 0, 0]]))
    assert np.all(np.isfinite(p))
    assert p[0] > 3 and p[1] < -3  # the infinite rows were learned as their own groups
    assert p[2] == p[0]  # huge unseen values go with the largest seen ones
    assert p[3] == p[5]  # -1e300 > -inf: it goes with the smallest finite values


def test_feature_names_checked():
    X, y = small_data(d=3)
    with pytest.raises(ValueError, match="feature_names"):
        bst.Dataset(X, y, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="feature_names"):
        bst.Dataset(X, y, feature_names=["a", "b", "a"])


@pytest.mark.parametrize("features", [[3], [-1], [0.5], ["a"], [True]])
def test_categorical_features_must_be_indices(features):
    X, y = small_data(d=3)
    with pytest.raises(ValueError, match="categorical_features"):
        bst.Dataset(X, y, categorical_features=features)


@pytest.mark.parametrize("bad", [-1.0, 0.5, 65534.0, np.inf])
def test_bad_categorical_codes_raise_at_training(bad):
    """Codes must be integers in [0, MAX_CATEGORIES): never a silent wrap-around."""
    X, y = small_data(d=3)
    X[:, 0] = np.arange(len(X)) % 5
    X[7, 0] = bad
    with pytest.raises(ValueError, match="categorical feature 0"):
        bst.GBDTModel.train(
            bst.Dataset(X, y, categorical_features=[0]), config=bst.GBDTConfig(n_estimators=1))


# ----------------------------------------------------------------------------------
# Weights
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["negative", "nan", "inf", "short", "long", "all-zero", "2d", "strings"])
def test_bad_weights(case):
    X, y = small_data()
    w = np.ones(len(y))
    if case == "negative":
        w[4] = -0.1
    elif case == "nan":
        w[4] = np.nan
    elif case == "inf":
        w[4] = np.inf
    elif case == "short":
        w = w[:-1]
    elif case == "long":
        w = np.ones(len(y) + 1)
    elif case == "all-zero":
        w = np.zeros(len(y))
    elif case == "2d":
        w = np.ones((len(y), 2))
    else:
        w = np.array(["1"] * len(y))
    with pytest.raises(ValueError, match="weights"):
        fit(X, y, weights=w, n_estimators=2)


def test_bad_weights_in_val_set():
    X, y = small_data()
    with pytest.raises(ValueError, match="weights"):
        fit(X, y, n_estimators=2, val=bst.Dataset(X, y, weights=-np.ones(len(y))))


# ----------------------------------------------------------------------------------
# Training setup
# ----------------------------------------------------------------------------------

def test_train_without_labels():
    X, _ = small_data()
    with pytest.raises(ValueError, match="label"):
        bst.GBDTModel.train(bst.Dataset(X), config=bst.GBDTConfig(n_estimators=2))


def test_val_set_without_labels():
    X, y = small_data()
    with pytest.raises(ValueError, match="label"):
        fit(X, y, n_estimators=2, val=bst.Dataset(X))


def test_train_needs_a_dataset():
    X, y = small_data()
    with pytest.raises(TypeError, match="Dataset"):
        bst.GBDTModel.train(X, config=bst.GBDTConfig(n_estimators=2))
    with pytest.raises(TypeError, match="val_set"):
        bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=2), val_set=(X, y))


def test_early_stopping_needs_a_val_set():
    X, y = small_data()
    with pytest.raises(ValueError, match="val_set"):
        fit(X, y, n_estimators=5, early_stopping_rounds=2)


# ----------------------------------------------------------------------------------
# Degenerate but valid inputs train (no crash, no silent nonsense)
# ----------------------------------------------------------------------------------

def test_single_row():
    model = fit(np.array([[1.0, 2.0]]), np.array([3.5]), n_estimators=3)
    assert model.n_trees == 3
    assert all(t.n_leaves == 1 for t in model.trees)
    np.testing.assert_allclose(model.predict(np.array([[0.0, 0.0], [5.0, 5.0]])), 3.5)


def test_constant_labels():
    X, _ = small_data()
    model = fit(X, np.full(len(X), 2.25), n_estimators=3)
    np.testing.assert_allclose(model.predict(X), 2.25, rtol=1e-12)
    assert all(np.all(t.value[t.split_feature < 0] == 0.0) for t in model.trees)


def test_constant_and_all_missing_features_are_never_split():
    rng = np.random.default_rng(1)
    n = 500
    X = np.column_stack([np.full(n, 3.0), np.full(n, np.nan), rng.normal(size=n)])
    y = X[:, 2] + 0.1 * rng.normal(size=n)
    model = fit(X, y, n_estimators=3, max_depth=3)
    for tree in model.trees:
        used = set(tree.split_feature[tree.split_feature >= 0].tolist())
        assert used == {2}


def test_only_unusable_features():
    X = np.column_stack([np.full(50, 1.0), np.full(50, np.nan)])
    y = np.arange(50, dtype=np.float64)
    model = fit(X, y, n_estimators=2, subsample=1.0)  # every row: each root leaf is 0
    assert all(t.n_leaves == 1 for t in model.trees)
    np.testing.assert_allclose(model.predict(X), y.mean())


@pytest.mark.parametrize("label", [0.0, 1.0])
def test_logistic_with_one_class_only(label):
    X, _ = small_data()
    model = fit(X, np.full(len(X), label), objective=bst.Objective.logistic(), n_estimators=3)
    p = model.predict(X)
    assert np.all(np.isfinite(p))
    assert np.all(np.abs(p - label) < 1e-6)


def test_softmax_with_an_unseen_class():
    X, y = small_data()
    y = (y > 0).astype(np.float64)  # classes 0 and 1 of 3
    model = fit(X, y, objective=bst.Objective.softmax(3), n_estimators=3)
    proba = model.predict(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all(proba[:, 2] < 1e-6)


# ----------------------------------------------------------------------------------
# The user's arrays are never modified
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, order", [(np.float64, "C"), (np.float32, "F"), (np.int64, "C")])
@pytest.mark.parametrize("objective", ["squared", "logistic", "softmax"])
def test_user_arrays_are_not_modified(dtype, order, objective):
    rng = np.random.default_rng(2)
    n = 2000
    X = np.asarray(rng.normal(size=(n, 5)) * 10, dtype=dtype, order=order)
    if dtype != np.int64:
        X[rng.uniform(size=X.shape) < 0.1] = np.nan
    score = np.nan_to_num(X[:, 0].astype(np.float64))
    if objective == "squared":
        y, obj = score + rng.normal(size=n), bst.Objective.squared()
    elif objective == "logistic":
        y, obj = (score > 0).astype(np.float64), bst.Objective.logistic()
    else:
        y, obj = np.digitize(score, [-5, 5]).astype(np.float64), bst.Objective.softmax(3)
    w = rng.uniform(0.5, 2.0, size=n)
    Xv, yv = X[:500].copy(order="K"), y[:500].copy()
    copies = [a.copy(order="K") for a in (X, y, w, Xv, yv)]
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), config=bst.GBDTConfig(
        n_estimators=4, objective=obj, early_stopping_rounds=2), val_set=bst.Dataset(Xv, yv), n_threads=2)
    model.predict(X)
    model.predict_raw(X)
    model.predict(bst.Dataset(Xv))
    for original, copy in zip((X, y, w, Xv, yv), copies):
        assert original.dtype == copy.dtype
        assert original.flags.f_contiguous == copy.flags.f_contiguous
        assert np.array_equal(original, copy, equal_nan=True)


def test_dataset_reused_across_trainings_gives_the_same_model():
    X, y = small_data(n=1000)
    ds = bst.Dataset(X, y)
    cfg = bst.GBDTConfig(n_estimators=4, max_bins=32)
    a = bst.GBDTModel.train(ds, config=cfg)
    b = bst.GBDTModel.train(ds, config=cfg.replace(max_bins=256))
    c = bst.GBDTModel.train(ds, config=cfg)
    fresh = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg.replace(max_bins=256))
    assert np.array_equal(a.predict(X), c.predict(X))
    assert np.array_equal(b.predict(X), fresh.predict(X))
    assert not np.array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("max_depth", [2**27 + 1, 2**62, 2**63 - 1, 2**80])
def test_a_huge_max_depth_trains_at_once(max_depth):
    """The grower bounds a tree by 2 * n_rows - 1 nodes before raising 2 to the depth: 2**62
    used to compute 2**(2**62 + 1) forever. In a subprocess with a timeout (60 s: the fit
    itself takes well under a second), so the old hang fails the test instead of pytest."""
    code = f"""
import numpy as np, boosters as bst
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3)); y = X[:, 0] + 0.1 * rng.normal(size=300)
deep = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=3, max_depth={max_depth}), n_threads=1)
unlimited = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=3, growth_strategy="leafwise",
                                n_leaves=10**6, max_depth=None), n_threads=1)
# a depth beyond any tree of 300 rows grows the same trees as no limit at all, best gain first or level
# by level: both split every leaf that can split
assert np.array_equal(deep.predict(X), unlimited.predict(X)), "trees differ"
print("ok")
"""
    result = python_run("-c", code, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")


def test_max_depth_default_depends_on_the_growth_strategy():
    assert bst.GBDTConfig().max_depth is None  # leaf-wise by default
    assert bst.GBDTConfig(growth_strategy="depthwise").max_depth == 6
    assert bst.GBDTConfig(growth_strategy="oblivious").max_depth == 6
    assert bst.GBDTConfig(growth_strategy="leafwise").max_depth is None
    assert bst.GBDTConfig(growth_strategy="leafwise", max_depth=4).max_depth == 4
    # "auto" is kept as asked: switching the strategy resolves it again
    depthwise = bst.GBDTConfig().replace(growth_strategy="depthwise")
    assert depthwise.max_depth == 6 and depthwise.to_dict()["max_depth"] == "auto"
    leafwise = bst.GBDTConfig(growth_strategy="depthwise").replace(growth_strategy="leafwise")
    assert leafwise.max_depth is None and leafwise.to_dict()["max_depth"] == "auto"
    assert bst.GBDTConfig(growth_strategy="depthwise", max_depth=6).replace(growth_strategy="leafwise").max_depth == 6
    with pytest.raises(TypeError, match="max_depth"):
        bst.GBDTConfig(max_depth="deep")


def test_leafwise_trees_grow_deeper_than_six_by_default():
    # a chain: each split peels a few rows off one end of x0, so 31 leaves need depth > 6
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(4000, 1))
    y = np.exp(8 * X[:, 0])
    cfg = bst.GBDTConfig(n_estimators=1, growth_strategy="leafwise", n_leaves=31, learning_rate=1.0,
                         min_samples_leaf=5)
    tree = bst.GBDTModel.train(bst.Dataset(X, y), cfg).trees[0]
    assert tree.depth() > 6
    capped = bst.GBDTModel.train(bst.Dataset(X, y), cfg.replace(max_depth=6)).trees[0]
    assert capped.depth() <= 6
