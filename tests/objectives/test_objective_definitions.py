"""Every objective's and metric's public facts, pinned as literals taken from the code
before the definitions moved into boosters/objectives/ (one definition per objective and
per metric): reprs, outputs, model-file JSON and default metric of each objective; label,
repr and direction of each metric; which metric scores which objective; the output
transform of each; the error messages of malformed objectives, metrics and labels; and
pickles of these values written by that code (tests/models/values.pkl)."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import boosters as bst
from boosters.io.validation import objective_from_json, objective_to_json
from boosters.objectives import objective as objective_module
from boosters.objectives import objective_fn, registry
from boosters.objectives.registry import names as objective_names
from models.make_models import values

O, M = bst.Objective, bst.Metric
MODELS = Path(__file__).parent.parent / "models"  # tests/models


def f(margins, dataset):
    """A custom objective's function (never called here)."""
    return margins, np.ones_like(margins)


# expression -> (repr, n_outputs, needs_groups, model-file JSON, default metric)
OBJECTIVES = {'O.squared()': ('Objective.squared()', 1, False, {'name': 'squared', 'n_classes': None}, 'Metric.rmse()'),
 'O.squared(n_targets=2)': ('Objective.squared(n_targets=2)',
                            2,
                            False,
                            {'name': 'squared', 'n_classes': None, 'n_targets': 2},
                            'Metric.rmse()'),
 "O('squared', n_targets=1)": ('Objective.squared()',
                               1,
                               False,
                               {'name': 'squared', 'n_classes': None},
                               'Metric.rmse()'),
 'O.absolute()': ('Objective.absolute()', 1, False, {'name': 'absolute', 'n_classes': None}, 'Metric.mae()'),
 "O('absolute', n_targets=3)": ('Objective.absolute(n_targets=3)',
                                3,
                                False,
                                {'name': 'absolute', 'n_classes': None, 'n_targets': 3},
                                'Metric.mae()'),
 'O.huber()': ('Objective.huber(1.0)',
               1,
               False,
               {'name': 'huber', 'n_classes': None, 'delta': 1.0},
               'Metric.huber(1.0)'),
 'O.huber(2.5)': ('Objective.huber(2.5)',
                  1,
                  False,
                  {'name': 'huber', 'n_classes': None, 'delta': 2.5},
                  'Metric.huber(2.5)'),
 "O('huber', delta=0.5, n_targets=2)": ('Objective.huber(0.5, n_targets=2)',
                                        2,
                                        False,
                                        {'name': 'huber', 'n_classes': None, 'n_targets': 2, 'delta': 0.5},
                                        'Metric.huber(0.5)'),
 'O.pinball()': ('Objective.pinball(0.5)',
                 1,
                 False,
                 {'name': 'pinball', 'n_classes': None, 'alpha': 0.5},
                 'Metric.pinball(0.5)'),
 'O.pinball(0.9)': ('Objective.pinball(0.9)',
                    1,
                    False,
                    {'name': 'pinball', 'n_classes': None, 'alpha': 0.9},
                    'Metric.pinball(0.9)'),
 'O.pinball([0.1, 0.5, 0.9])': ('Objective.pinball([0.1, 0.5, 0.9])',
                                3,
                                False,
                                {'name': 'pinball', 'n_classes': None, 'alpha': [0.1, 0.5, 0.9]},
                                'Metric.pinball([0.1, 0.5, 0.9])'),
 'O.pinball([0.3])': ('Objective.pinball(0.3)',
                      1,
                      False,
                      {'name': 'pinball', 'n_classes': None, 'alpha': 0.3},
                      'Metric.pinball(0.3)'),
 'O.poisson()': ('Objective.poisson()', 1, False, {'name': 'poisson', 'n_classes': None}, 'Metric.poisson_deviance()'),
 'O.gamma()': ('Objective.gamma()', 1, False, {'name': 'gamma', 'n_classes': None}, 'Metric.gamma_deviance()'),
 'O.tweedie()': ('Objective.tweedie(1.5)',
                 1,
                 False,
                 {'name': 'tweedie', 'n_classes': None, 'variance_power': 1.5},
                 'Metric.tweedie_deviance(1.5)'),
 'O.tweedie(1.2)': ('Objective.tweedie(1.2)',
                    1,
                    False,
                    {'name': 'tweedie', 'n_classes': None, 'variance_power': 1.2},
                    'Metric.tweedie_deviance(1.2)'),
 'O.logistic()': ('Objective.logistic()', 1, False, {'name': 'logistic', 'n_classes': None}, 'Metric.logloss()'),
 'O.softmax(3)': ('Objective.softmax(3)', 3, False, {'name': 'softmax', 'n_classes': 3}, 'Metric.multiclass_logloss()'),
 'O.softmax(2)': ('Objective.softmax(2)', 2, False, {'name': 'softmax', 'n_classes': 2}, 'Metric.multiclass_logloss()'),
 'O.one_vs_rest(4)': ('Objective.one_vs_rest(4)',
                      4,
                      False,
                      {'name': 'one_vs_rest', 'n_classes': 4},
                      'Metric.one_vs_rest_logloss()'),
 'O.hinge()': ('Objective.hinge()', 1, False, {'name': 'hinge', 'n_classes': None}, 'Metric.accuracy()'),
 'O.lambdarank()': ('Objective.lambdarank(ndcg_at=10)',
                    1,
                    True,
                    {'name': 'lambdarank', 'n_classes': None, 'ndcg_at': 10},
                    'Metric.ndcg(10)'),
 'O.lambdarank(5)': ('Objective.lambdarank(ndcg_at=5)',
                     1,
                     True,
                     {'name': 'lambdarank', 'n_classes': None, 'ndcg_at': 5},
                     'Metric.ndcg(5)'),
 'O.pairwise()': ('Objective.pairwise()', 1, True, {'name': 'pairwise', 'n_classes': None}, 'Metric.ndcg(10)'),
 'O.custom(f)': ('Objective.custom(f, n_outputs=1, base_score=(0.0,))',
                 1,
                 False,
                 {'name': 'custom', 'n_classes': None, 'n_outputs': 1},
                 'ValueError: a custom objective has no default metric: pass GBDTConfig(metric=...)'),
 'O.custom(f, n_outputs=3, base_score=[1.0, 2.0, 3.0])': ('Objective.custom(f, n_outputs=3, base_score=(1.0, 2.0, '
                                                          '3.0))',
                                                          3,
                                                          False,
                                                          {'name': 'custom', 'n_classes': None, 'n_outputs': 3},
                                                          'ValueError: a custom objective has no default metric: pass '
                                                          'GBDTConfig(metric=...)')}

# objective -> its parameters (as Objective's attributes) with their defaults, in the order of its repr
# (None: n_classes is required, n_targets optional); no objective has aliases yet
PARAMETERS = {"squared": [("n_targets", None)], "absolute": [("n_targets", None)],
              "huber": [("delta", 1.0), ("n_targets", None)], "pinball": [("alpha", 0.5)], "poisson": [], "gamma": [],
              "tweedie": [("variance_power", 1.5)], "logistic": [], "softmax": [("n_classes", None)],
              "one_vs_rest": [("n_classes", None)], "hinge": [], "lambdarank": [("ndcg_at", 10)], "pairwise": [],
              "custom": []}


# LightGBM's and XGBoost's names of each objective (tests/test_parameter_names.py checks their meaning)
OBJECTIVE_ALIASES = {
    'squared': ['l2', 'l2_root', 'mean_squared_error', 'mse', 'reg:linear', 'reg:squarederror', 'regression',
                'regression_l2', 'rmse', 'root_mean_squared_error'],
    'absolute': ['l1', 'mae', 'mean_absolute_error', 'reg:absoluteerror', 'regression_l1'], 'huber': [],
    'pinball': ['quantile', 'reg:quantileerror'], 'poisson': ['count:poisson'], 'gamma': ['reg:gamma'],
    'tweedie': ['reg:tweedie'],
    'logistic': ['binary', 'binary:logistic', 'binary:logitraw', 'cross_entropy', 'reg:logistic', 'xentropy'],
    'softmax': ['multi:softmax', 'multi:softprob', 'multiclass'],
    'one_vs_rest': ['multiclass_ova', 'multiclassova', 'ova', 'ovr'], 'hinge': ['binary:hinge'],
    'lambdarank': ['rank:ndcg'], 'pairwise': ['rank:pairwise'], 'custom': []}


def test_each_objective_takes_its_parameters_with_their_defaults_and_its_aliases():
    assert {fn.name: [(p.name, p.default) for p in fn.parameters] for fn in registry.OBJECTIVES} == PARAMETERS
    # an alias implies no parameter default: each is the objective with its own defaults
    assert {fn.name: sorted(fn.aliases) for fn in registry.OBJECTIVES} == OBJECTIVE_ALIASES
    assert all(defaults == {} for fn in registry.OBJECTIVES for defaults in fn.aliases.values())
    assert [fn.name for fn in registry.OBJECTIVES if fn.takes_function] == ["custom"]


@pytest.mark.parametrize("expression", OBJECTIVES)
def test_linear_leaves_are_refused_only_where_leaves_are_renewed_to_quantiles(expression):
    objective = eval(expression)
    allowed = objective.name not in ("absolute", "pinball")
    assert objective_fn(objective).allows_linear_leaves(objective) is allowed
    if not allowed:
        with pytest.raises(ValueError, match="its leaves are renewed to residual quantiles"):
            bst.GBDTConfig(objective=objective, linear_leaves=True)


# expression -> (label, repr, higher_is_better, needs_groups)
METRICS = {'M.rmse()': ('rmse', 'Metric.rmse()', False, False),
 'M.mae()': ('mae', 'Metric.mae()', False, False),
 'M.mape()': ('mape', 'Metric.mape()', False, False),
 'M.huber()': ('huber@1.0', 'Metric.huber(1.0)', False, False),
 'M.huber(0.5)': ('huber@0.5', 'Metric.huber(0.5)', False, False),
 'M.pinball()': ('pinball@0.5', 'Metric.pinball(0.5)', False, False),
 'M.pinball(0.9)': ('pinball@0.9', 'Metric.pinball(0.9)', False, False),
 'M.pinball([0.1, 0.5, 0.9])': ('pinball@0.1,0.5,0.9', 'Metric.pinball([0.1, 0.5, 0.9])', False, False),
 'M.poisson_deviance()': ('poisson_deviance', 'Metric.poisson_deviance()', False, False),
 'M.gamma_deviance()': ('gamma_deviance', 'Metric.gamma_deviance()', False, False),
 'M.tweedie_deviance()': ('tweedie_deviance@1.5', 'Metric.tweedie_deviance(1.5)', False, False),
 'M.tweedie_deviance(1.2)': ('tweedie_deviance@1.2', 'Metric.tweedie_deviance(1.2)', False, False),
 'M.logloss()': ('logloss', 'Metric.logloss()', False, False),
 'M.multiclass_logloss()': ('multiclass_logloss', 'Metric.multiclass_logloss()', False, False),
 'M.one_vs_rest_logloss()': ('one_vs_rest_logloss', 'Metric.one_vs_rest_logloss()', False, False),
 'M.auc()': ('auc', 'Metric.auc()', True, False),
 'M.accuracy()': ('accuracy', 'Metric.accuracy()', True, False),
 'M.multiclass_accuracy()': ('multiclass_accuracy', 'Metric.multiclass_accuracy()', True, False),
 'M.margin_accuracy()': ('margin_accuracy@0.0', 'Metric.margin_accuracy(0.0)', True, False),
 'M.margin_accuracy(-1.0)': ('margin_accuracy@-1.0', 'Metric.margin_accuracy(-1.0)', True, False),
 'M.ndcg()': ('ndcg@10', 'Metric.ndcg(10)', True, True),
 'M.ndcg(5)': ('ndcg@5', 'Metric.ndcg(5)', True, True),
 'M.map()': ('map@10', 'Metric.map(10)', True, True),
 'M.map(3)': ('map@3', 'Metric.map(3)', True, True)}

# metric -> its parameter (as Metric's attribute) with its default, whether the value of a label ("huber@2.0")
# wins over the keyword given; no metric has aliases yet
METRIC_PARAMETERS = {"rmse": [], "mse": [], "mae": [], "mape": [], "huber": [("delta", 1.0, True)],
                     "pinball": [("alpha", 0.5, True)], "poisson_deviance": [], "gamma_deviance": [],
                     "tweedie_deviance": [("variance_power", 1.5, False)], "logloss": [], "multiclass_logloss": [],
                     "one_vs_rest_logloss": [], "auc": [], "accuracy": [], "multiclass_accuracy": [],
                     "error": [], "multiclass_error": [],
                     "margin_accuracy": [("threshold", 0.0, False)], "ndcg": [("k", 10, False)],
                     "map": [("k", 10, False)]}


METRIC_ALIASES = {
    'rmse': ['l2_root', 'root_mean_squared_error'],
    'mse': ['l2', 'mean_squared_error', 'regression', 'regression_l2'], 'mae': ['l1', 'mean_absolute_error', 'regression_l1'],
    'mape': ['mean_absolute_percentage_error'], 'huber': [], 'pinball': ['quantile'], 'poisson_deviance': [],
    'gamma_deviance': [], 'tweedie_deviance': [], 'logloss': ['binary', 'binary_logloss', 'cross_entropy', 'xentropy'],
    'multiclass_logloss': ['mlogloss', 'multi_logloss', 'multiclass', 'softmax'], 'one_vs_rest_logloss': [],
    'auc': [], 'accuracy': [], 'multiclass_accuracy': [], 'error': ['binary_error'],
    'multiclass_error': ['merror', 'multi_error'], 'margin_accuracy': [], 'ndcg': [],
    'map': ['mean_average_precision']}


def test_each_metric_takes_its_parameter_with_its_default_and_its_aliases():
    assert {fn.name: [(p.name, p.default, p.label_wins) for p in fn.parameters] for fn in registry.METRICS} == \
        METRIC_PARAMETERS
    assert {fn.name: sorted(fn.aliases) for fn in registry.METRICS} == METRIC_ALIASES
    assert all(defaults == {} for fn in registry.METRICS for defaults in fn.aliases.values())
    assert [fn.name for fn in registry.OBJECTIVES if fn.any_metric] == ["custom"]


# objective -> the metrics of METRICS that can score it (Metric.supports)
SUPPORTS = {'O.squared()': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)',
                 'M.ndcg()', 'M.ndcg(5)', 'M.map()', 'M.map(3)'],
 'O.squared(n_targets=2)': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)'],
 "O('squared', n_targets=1)": ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()',
                               'M.pinball(0.9)', 'M.ndcg()', 'M.ndcg(5)', 'M.map()', 'M.map(3)'],
 'O.absolute()': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)'],
 "O('absolute', n_targets=3)": ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)'],
 'O.huber()': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)'],
 'O.huber(2.5)': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)'],
 "O('huber', delta=0.5, n_targets=2)": ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)'],
 'O.pinball()': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)'],
 'O.pinball(0.9)': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)'],
 'O.pinball([0.1, 0.5, 0.9])': ['M.pinball([0.1, 0.5, 0.9])'],
 'O.pinball([0.3])': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)'],
 'O.poisson()': ['M.poisson_deviance()', 'M.gamma_deviance()', 'M.tweedie_deviance()', 'M.tweedie_deviance(1.2)'],
 'O.gamma()': ['M.poisson_deviance()', 'M.gamma_deviance()', 'M.tweedie_deviance()', 'M.tweedie_deviance(1.2)'],
 'O.tweedie()': ['M.poisson_deviance()', 'M.gamma_deviance()', 'M.tweedie_deviance()', 'M.tweedie_deviance(1.2)'],
 'O.tweedie(1.2)': ['M.poisson_deviance()', 'M.gamma_deviance()', 'M.tweedie_deviance()', 'M.tweedie_deviance(1.2)'],
 'O.logistic()': ['M.logloss()', 'M.auc()', 'M.accuracy()', 'M.margin_accuracy()', 'M.margin_accuracy(-1.0)',
                  'M.ndcg()', 'M.ndcg(5)', 'M.map()', 'M.map(3)'],
 'O.softmax(3)': ['M.logloss()', 'M.multiclass_logloss()', 'M.accuracy()', 'M.multiclass_accuracy()'],
 'O.softmax(2)': ['M.logloss()', 'M.multiclass_logloss()', 'M.accuracy()', 'M.multiclass_accuracy()'],
 'O.one_vs_rest(4)': ['M.one_vs_rest_logloss()', 'M.accuracy()', 'M.multiclass_accuracy()'],
 'O.hinge()': ['M.auc()', 'M.accuracy()', 'M.margin_accuracy()', 'M.margin_accuracy(-1.0)'],
 'O.lambdarank()': ['M.ndcg()', 'M.ndcg(5)', 'M.map()', 'M.map(3)'],
 'O.lambdarank(5)': ['M.ndcg()', 'M.ndcg(5)', 'M.map()', 'M.map(3)'],
 'O.pairwise()': ['M.ndcg()', 'M.ndcg(5)', 'M.map()', 'M.map(3)'],
 'O.custom(f)': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()', 'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)',
                 'M.pinball([0.1, 0.5, 0.9])', 'M.poisson_deviance()', 'M.gamma_deviance()', 'M.tweedie_deviance()',
                 'M.tweedie_deviance(1.2)', 'M.logloss()', 'M.multiclass_logloss()', 'M.one_vs_rest_logloss()',
                 'M.auc()', 'M.accuracy()', 'M.multiclass_accuracy()', 'M.margin_accuracy()', 'M.margin_accuracy(-1.0)',
                 'M.ndcg()', 'M.ndcg(5)', 'M.map()', 'M.map(3)'],
 'O.custom(f, n_outputs=3, base_score=[1.0, 2.0, 3.0])': ['M.rmse()', 'M.mae()', 'M.mape()', 'M.huber()',
                                                          'M.huber(0.5)', 'M.pinball()', 'M.pinball(0.9)',
                                                          'M.pinball([0.1, 0.5, 0.9])', 'M.poisson_deviance()',
                                                          'M.gamma_deviance()', 'M.tweedie_deviance()',
                                                          'M.tweedie_deviance(1.2)', 'M.logloss()',
                                                          'M.multiclass_logloss()', 'M.one_vs_rest_logloss()',
                                                          'M.auc()', 'M.accuracy()', 'M.multiclass_accuracy()',
                                                          'M.margin_accuracy()', 'M.margin_accuracy(-1.0)', 'M.ndcg()',
                                                          'M.ndcg(5)', 'M.map()', 'M.map(3)']}

# expression -> (exception type, message)
ERRORS = {"O('bogus')": ('ValueError',
                "objective must be one of 'squared', 'logistic', 'softmax', 'lambdarank', 'pairwise', 'poisson', "
                "'gamma', 'tweedie', 'custom', 'absolute', 'huber', 'pinball', 'hinge', 'one_vs_rest', got 'bogus'"),
 "O('custom')": ('ValueError', "objective 'custom' needs its function: use Objective.custom(function)"),
 'O(None)': ('ValueError',
             "objective must be one of 'squared', 'logistic', 'softmax', 'lambdarank', 'pairwise', 'poisson', 'gamma', "
             "'tweedie', 'custom', 'absolute', 'huber', 'pinball', 'hinge', 'one_vs_rest', got None"),
 "O(['squared'])": ('ValueError',
                    "objective must be one of 'squared', 'logistic', 'softmax', 'lambdarank', 'pairwise', 'poisson', "
                    "'gamma', 'tweedie', 'custom', 'absolute', 'huber', 'pinball', 'hinge', 'one_vs_rest', got "
                    "['squared']"),
 "O('squared', n_targets=0)": ('ValueError', 'n_targets must be >= 1, got 0'),
 "O('squared', n_targets=2.5)": ('TypeError', 'n_targets must be an int, got float 2.5'),
 "O('logistic', n_targets=2)": ('ValueError', 'n_targets only applies to squared, absolute, huber, not logistic'),
 "O('pinball', n_targets=2)": ('ValueError', 'n_targets only applies to squared, absolute, huber, not pinball'),
 "O('tweedie', variance_power=2.0)": ('ValueError',
                                      'variance_power must be < 2 (use Objective.gamma() for 2), got 2.0'),
 "O('tweedie', variance_power=1.0)": ('ValueError', 'variance_power must be finite and > 1.0, got 1.0'),
 "O('tweedie', variance_power='x')": ('TypeError', "variance_power must be a number, got str 'x'"),
 "O('poisson', variance_power=1.5)": ('ValueError', 'variance_power only applies to tweedie, not poisson'),
 "O('lambdarank', ndcg_at=0)": ('ValueError', 'ndcg_at must be >= 1, got 0'),
 "O('pairwise', ndcg_at=5)": ('ValueError', 'ndcg_at only applies to lambdarank, not pairwise'),
 "O('softmax')": ('TypeError', 'n_classes must be an int >= 2, got NoneType None'),
 "O('softmax', 1)": ('ValueError', 'n_classes must be >= 2 for softmax, got 1'),
 "O('softmax', 2.0)": ('TypeError', 'n_classes must be an int >= 2, got float 2.0'),
 "O('softmax', True)": ('TypeError', 'n_classes must be an int >= 2, got bool True'),
 "O('logistic', 3)": ('ValueError', 'n_classes only applies to softmax and one_vs_rest, not logistic'),
 "O('squared', n_classes=3)": ('ValueError', 'n_classes only applies to softmax and one_vs_rest, not squared'),
 "O('pinball', alpha=1.0)": ('ValueError', 'alpha must be < 1 (a quantile level in (0, 1)), got 1.0'),
 "O('pinball', alpha=[])": ('ValueError', 'alpha: a list of quantile levels must not be empty'),
 "O('pinball', alpha=[0.5, 0.5])": ('ValueError',
                                    'alpha: a list of quantile levels must be strictly increasing, got [0.5, 0.5]'),
 "O('pinball', alpha=[0.2, 0.1])": ('ValueError',
                                    'alpha: a list of quantile levels must be strictly increasing, got [0.2, 0.1]'),
 "O('pinball', alpha=[0.2, 1.5])": ('ValueError', 'alpha must be < 1 (a quantile level in (0, 1)), got 1.5'),
 "O('absolute', alpha=0.5)": ('ValueError', 'alpha only applies to pinball, not absolute'),
 "O('huber', delta=0.0)": ('ValueError', 'delta must be finite and > 0.0, got 0.0'),
 "O('huber', delta=-1)": ('ValueError', 'delta must be finite and > 0.0, got -1.0'),
 "O('squared', delta=1.0)": ('ValueError', 'delta only applies to huber, not squared'),
 "O('huber', alpha=0.5)": ('ValueError', 'alpha only applies to pinball, not huber'),
 "O('pinball', delta=1.0)": ('ValueError', 'delta only applies to huber, not pinball'),
 "O('softmax', 3, ndcg_at=5)": ('ValueError', 'ndcg_at only applies to lambdarank, not softmax'),
 "O('tweedie', 3, variance_power=3.0)": ('ValueError',
                                         'variance_power must be < 2 (use Objective.gamma() for 2), got 3.0'),
 "O('lambdarank', n_targets=2, ndcg_at=0)": ('ValueError',
                                             'n_targets only applies to squared, absolute, huber, not lambdarank'),
 "O('logistic', n_classes=2, alpha=0.5, delta=1.0)": ('ValueError',
                                                      'n_classes only applies to softmax and one_vs_rest, not '
                                                      'logistic'),
 "O('huber', delta=0.0, n_targets=0)": ('ValueError', 'n_targets must be >= 1, got 0'),
 'O.custom(3)': ('TypeError',
                 'objective: a custom objective is a callable (margins, dataset) -> (grad, hess), got int 3'),
 'O.custom(f, n_outputs=0)': ('ValueError', 'n_outputs must be >= 1, got 0'),
 'O.custom(f, n_outputs=2, base_score=[1.0])': ('ValueError',
                                                'base_score must be a number or 2 numbers (one per output), got [1.0]'),
 "O.custom(f, base_score='x')": ('ValueError', "base_score must be a number or 1 numbers (one per output), got 'x'"),
 "O.custom(f, base_score=float('nan'))": ('ValueError', 'base_score must be finite and >= -inf, got nan'),
 'O.squared()._with_targets(0)': ('ValueError', 'n_targets must be >= 1, got 0'),
 'O.logistic()._with_targets(2)': ('ValueError', 'n_targets only applies to squared, absolute, huber, not logistic'),
 "M('bogus')": ('ValueError',
                "metric must be one of ['accuracy', 'auc', 'error', 'gamma_deviance', 'huber', 'logloss', 'mae', 'map', 'mape', "
                "'margin_accuracy', 'mse', 'multiclass_accuracy', 'multiclass_error', 'multiclass_logloss', 'ndcg', 'one_vs_rest_logloss', "
                "'pinball', 'poisson_deviance', 'rmse', 'tweedie_deviance'], got 'bogus'"),
 'M(None)': ('ValueError',
             "metric must be one of ['accuracy', 'auc', 'error', 'gamma_deviance', 'huber', 'logloss', 'mae', 'map', 'mape', "
             "'margin_accuracy', 'mse', 'multiclass_accuracy', 'multiclass_error', 'multiclass_logloss', 'ndcg', 'one_vs_rest_logloss', "
             "'pinball', 'poisson_deviance', 'rmse', 'tweedie_deviance'], got None"),
 "M('rmse@3')": ('ValueError', "k only applies to the ranking metrics ('ndcg', 'map'), not rmse"),
 "M('ndcg@x')": ('ValueError', "metric ndcg@k needs an integer k, got 'x'"),
 "M('ndcg@-1')": ('ValueError', "metric ndcg@k needs an integer k, got '-1'"),
 "M('foo@3')": ('ValueError',
                "metric must be one of ['accuracy', 'auc', 'error', 'gamma_deviance', 'huber', 'logloss', 'mae', 'map', 'mape', "
                "'margin_accuracy', 'mse', 'multiclass_accuracy', 'multiclass_error', 'multiclass_logloss', 'ndcg', 'one_vs_rest_logloss', "
                "'pinball', 'poisson_deviance', 'rmse', 'tweedie_deviance'], got 'foo'"),
 "M('ndcg@5', k=3)": ('ValueError',
                      "metric must be one of ['accuracy', 'auc', 'error', 'gamma_deviance', 'huber', 'logloss', 'mae', 'map', "
                      "'mape', 'margin_accuracy', 'mse', 'multiclass_accuracy', 'multiclass_error', 'multiclass_logloss', 'ndcg', "
                      "'one_vs_rest_logloss', 'pinball', 'poisson_deviance', 'rmse', 'tweedie_deviance'], got "
                      "'ndcg@5' (did you mean 'ndcg'?)"),
 "M('huber@1,2')": ('ValueError', "metric huber@delta needs one number, got '1,2'"),
 "M('huber@x')": ('ValueError', "metric huber@... needs numbers after the @, got 'x'"),
 "M('pinball@x')": ('ValueError', "metric pinball@... needs numbers after the @, got 'x'"),
 "M('pinball@0.1,x')": ('ValueError', "metric pinball@... needs numbers after the @, got '0.1,x'"),
 "M('pinball@0.5,0.1')": ('ValueError', 'alpha: a list of quantile levels must be strictly increasing, got [0.5, 0.1]'),
 "M('pinball@1.5')": ('ValueError', 'alpha must be < 1 (a quantile level in (0, 1)), got 1.5'),
 "M('margin_accuracy@x')": ('ValueError', "metric margin_accuracy@t needs a number t, got 'x'"),
 "M('margin_accuracy@0.5', threshold=1.0)": ('ValueError', "metric margin_accuracy@k needs an integer k, got '0.5'"),
 "M('tweedie_deviance@x')": ('ValueError', "metric tweedie_deviance@p needs a number p, got 'x'"),
 "M('tweedie_deviance@1.5', variance_power=1.2)": ('ValueError',
                                                   "metric tweedie_deviance@k needs an integer k, got '1.5'"),
 "M('tweedie_deviance@2.5')": ('ValueError', 'variance_power must be < 2 (use Objective.gamma() for 2), got 2.5'),
 "M('ndcg', k=0)": ('ValueError', 'k must be >= 1, got 0'),
 "M('rmse', k=3)": ('ValueError', "k only applies to the ranking metrics ('ndcg', 'map'), not rmse"),
 "M('rmse', variance_power=1.5)": ('ValueError', 'variance_power only applies to tweedie_deviance, not rmse'),
 "M('rmse', threshold=0.5)": ('ValueError', 'threshold only applies to margin_accuracy, not rmse'),
 "M('rmse', alpha=0.5)": ('ValueError', 'alpha only applies to pinball, not rmse'),
 "M('rmse', delta=1.0)": ('ValueError', 'delta only applies to huber, not rmse'),
 "M('huber', delta=0)": ('ValueError', 'delta must be finite and > 0.0, got 0.0'),
 "M('pinball', alpha=0)": ('ValueError', 'alpha must be finite and > 0.0, got 0.0'),
 "M('margin_accuracy', threshold=float('inf'))": ('ValueError', 'threshold must be finite and >= -inf, got inf'),
 "M('margin_accuracy', threshold='x')": ('TypeError', "threshold must be a number, got str 'x'"),
 "M('ndcg', k=2, variance_power=1.5)": ('ValueError', 'variance_power only applies to tweedie_deviance, not ndcg'),
 "M('map', k=0, delta=1.0)": ('ValueError', 'k must be >= 1, got 0'),
 "M('rmse', k=0, alpha=2.0)": ('ValueError', "k only applies to the ranking metrics ('ndcg', 'map'), not rmse")}

# a label (as model files write them) or an expression -> the Metric it makes
LABELS = {'pinball@0.1,0.9': 'Metric.pinball([0.1, 0.9])',
 'pinball@0.3': 'Metric.pinball(0.3)',
 'huber@2.0': 'Metric.huber(2.0)',
 'ndcg@7': 'Metric.ndcg(7)',
 'map@2': 'Metric.map(2)',
 'tweedie_deviance@1.3': 'Metric.tweedie_deviance(1.3)',
 'margin_accuracy@0.25': 'Metric.margin_accuracy(0.25)',
 'margin_accuracy@-1': 'Metric.margin_accuracy(-1.0)',
 'rmse': 'Metric.rmse()',
 "M('pinball@0.1', alpha=0.9)": 'Metric.pinball(0.1)',
 "M('huber@2.0', delta=3.0)": 'Metric.huber(2.0)'}


def default_metric(objective) -> str:
    try:
        return repr(M.default_for(objective))
    except ValueError as error:
        return f"ValueError: {error}"


@pytest.mark.parametrize("expression", OBJECTIVES)
def test_an_objective_keeps_its_repr_outputs_file_form_and_default_metric(expression):
    objective = eval(expression)
    assert (repr(objective), objective.n_outputs, objective.needs_groups, objective_to_json(objective),
            default_metric(objective)) == OBJECTIVES[expression]
    assert objective == eval(expression) and hash(objective) == hash(eval(expression))
    if objective.name != "custom" and (objective.n_targets is None or objective.name == "squared"):
        assert eval(repr(objective), {"Objective": O}) == objective  # (absolute() and huber() take no n_targets)
        assert objective_from_json(json.loads(json.dumps(objective_to_json(objective)))) == objective


@pytest.mark.parametrize("name, parameters, factory", [
    ("squared", {}, O.squared()), ("squared", {"n_targets": 2}, O.squared(2)), ("absolute", {}, O.absolute()),
    ("huber", {"delta": 2.0}, O.huber(2.0)), ("huber", {}, O.huber()), ("pinball", {"alpha": [0.2, 0.4]},
    O.pinball((0.2, 0.4))), ("pinball", {"alpha": np.array([0.3])}, O.pinball(0.3)), ("poisson", {}, O.poisson()),
    ("gamma", {}, O.gamma()), ("tweedie", {}, O.tweedie(1.5)), ("tweedie", {"variance_power": 1.1}, O.tweedie(1.1)),
    ("logistic", {}, O.logistic()), ("softmax", {"n_classes": np.int64(3)}, O.softmax(3)),
    ("one_vs_rest", {"n_classes": 2}, O.one_vs_rest(2)), ("hinge", {}, O.hinge()),
    ("lambdarank", {}, O.lambdarank(10)), ("lambdarank", {"ndcg_at": 3}, O.lambdarank(ndcg_at=3)),
    ("pairwise", {}, O.pairwise()),
])
def test_the_constructor_and_the_factories_make_equal_objectives(name, parameters, factory):
    objective = O(name, **parameters)
    assert objective == factory and hash(objective) == hash(factory) and repr(objective) == repr(factory)
    assert type(objective.n_classes) in (int, type(None))


@pytest.mark.parametrize("expression", METRICS)
def test_a_metric_keeps_its_label_repr_and_direction(expression):
    metric = eval(expression)
    assert (metric.label, repr(metric), metric.higher_is_better, metric.needs_groups) == METRICS[expression]
    assert M(metric.label) == metric and eval(repr(metric), {"Metric": M}) == metric and hash(M(metric.label)) == hash(metric)


def test_which_metric_scores_which_objective():
    assert {o: [m for m in METRICS if eval(m).supports(eval(o))] for o in OBJECTIVES} == SUPPORTS


@pytest.mark.parametrize("expression", ERRORS)
def test_malformed_objectives_and_metrics_are_refused_with_the_same_message(expression):
    kind, message = ERRORS[expression]
    with pytest.raises(Exception) as error:
        eval(expression)
    assert (type(error.value).__name__, str(error.value)) == (kind, message)


@pytest.mark.parametrize("text", LABELS)
def test_labels_make_their_metrics(text):
    assert repr(M(text) if "(" not in text else eval(text)) == LABELS[text]


def sigmoid(m):
    return 1.0 / (1.0 + np.exp(-m))


def softmax(m):
    e = np.exp(m - m.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# objective -> (label kind, its predictions from its (n_rows, n_outputs) margins)
TRANSFORMS = {
    "O.squared()": ("value", lambda m: m[:, 0]),
    "O.squared(2)": ("values", lambda m: m),
    "O.absolute()": ("value", lambda m: m[:, 0]),
    "O.absolute()@2": ("values", lambda m: m),  # several targets: not sorted, they are not quantiles
    "O.huber()": ("value", lambda m: m[:, 0]),
    "O.pinball(0.3)": ("value", lambda m: m[:, 0]),
    "O.pinball([0.2, 0.5, 0.8])": ("value", lambda m: np.sort(m, axis=1)),
    "O.poisson()": ("count", lambda m: np.exp(m[:, 0])),
    "O.gamma()": ("positive", lambda m: np.exp(m[:, 0])),
    "O.tweedie()": ("count", lambda m: np.exp(m[:, 0])),
    "O.logistic()": ("binary", lambda m: sigmoid(m[:, 0])),
    "O.hinge()": ("binary", lambda m: (m[:, 0] > 0).astype(float)),
    "O.softmax(3)": ("class", softmax),
    "O.one_vs_rest(3)": ("class", sigmoid),
    "O.lambdarank()": ("relevance", lambda m: m[:, 0]),
    "O.pairwise()": ("relevance", lambda m: m[:, 0]),
    "O.custom(lambda m, d: (m - d.y, np.ones_like(m)))": ("value", lambda m: m[:, 0]),
}


@pytest.mark.parametrize("expression", TRANSFORMS)
def test_each_objective_predicts_through_its_output_transform(expression):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    kind, transform = TRANSFORMS[expression]
    y = {"value": X[:, 0] + rng.normal(size=200), "values": np.column_stack([X[:, 0], -X[:, 0]]),
         "count": rng.poisson(np.exp(X[:, 0])).astype(float), "positive": np.exp(X[:, 0]),
         "binary": (X[:, 0] > 0).astype(float), "class": np.digitize(X[:, 0], [-0.5, 0.5]).astype(float),
         "relevance": np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)}[kind]
    data = bst.Dataset(X, y, group=[20] * 10 if kind == "relevance" else None)
    model = bst.GBDTModel.train(data, bst.GBDTConfig(objective=eval(expression.split("@")[0]), n_estimators=3,
                                                     learning_rate=0.5), n_threads=1)
    raw = model.predict_raw(X, n_threads=1)
    np.testing.assert_allclose(model.predict(X, n_threads=1), transform(raw if raw.ndim == 2 else raw[:, None]),
                               rtol=1e-13, atol=0)


# boosters.dask's facts before they came from the definitions: it trained every objective
# (its SUPPORTED_OBJECTIVES), and absolute and pinball (its QUANTILE_OBJECTIVES) started from
# and renewed their leaves to quantiles of these levels, one per output
QUANTILE_LEVELS = {"O.absolute()": [0.5], "O('absolute', n_targets=3)": [0.5, 0.5, 0.5], "O.pinball()": [0.5],
                   "O.pinball(0.9)": [0.9], "O.pinball([0.1, 0.5, 0.9])": [0.1, 0.5, 0.9], "O.pinball([0.3])": [0.3]}


@pytest.mark.parametrize("expression", OBJECTIVES)
def test_boosters_dask_trains_every_objective_with_its_quantile_levels(expression):
    objective = eval(expression)
    fn = objective_fn(objective)
    assert fn.distributed
    levels = fn.quantile_levels(objective)
    assert (None if levels is None else levels.tolist()) == QUANTILE_LEVELS.get(expression)


def test_the_estimators_take_the_objectives_of_their_task_by_name():
    """The sklearn and Dask estimators' names, as their own lists had them."""
    assert objective_names("regression") == ("squared", "absolute", "huber", "pinball", "poisson", "gamma", "tweedie")
    assert objective_names("classification") == ("logistic", "softmax", "one_vs_rest", "hinge")
    assert objective_names("ranking") == ("lambdarank", "pairwise")
    assert objective_fn("custom").task is None


def test_the_class_probabilities_of_a_classifier_model():
    p = np.array([[0.2, 0.6], [0.5, 0.5]])
    np.testing.assert_array_equal(objective_fn("one_vs_rest").class_probabilities(p), p / p.sum(axis=1, keepdims=True))
    for name in ("softmax", "custom"):
        assert objective_fn(name).class_probabilities(p) is p
    for name in ("logistic", "hinge", "custom"):
        np.testing.assert_array_equal(objective_fn(name).class_probabilities(np.array([0.25, 1.0])),
                                      [[0.75, 0.25], [0.0, 1.0]])


def test_the_schema_names_every_objective():
    schema = json.loads((Path(bst.__file__).parent / "io" / "model.schema.json").read_text())
    objective = schema["$defs"]["objective"]
    assert objective["properties"]["name"]["enum"] == [
        "squared", "logistic", "softmax", "lambdarank", "pairwise", "poisson", "gamma", "tweedie", "custom",
        "absolute", "huber", "pinball", "hinge", "one_vs_rest"]
    assert set(objective["properties"]) == {"name", "n_classes", "n_outputs", "ndcg_at", "variance_power",
                                             "n_targets", "alpha", "delta"}
    # and so every definition and parameter (a new one needs its entry in the schema); Objective's refusal of
    # an unknown name lists them in the same order
    assert objective["properties"]["name"]["enum"] == list(objective_module._LISTED)
    assert set(objective["properties"]["name"]["enum"]) == {fn.name for fn in registry.OBJECTIVES}
    assert {p.name for fn in registry.OBJECTIVES for p in fn.parameters} <= set(objective["properties"])


def test_values_pickled_by_earlier_versions_load_equal():
    """Objectives, metrics and configs pickled before the definitions moved (their classes
    were then boosters.config's) load as the same values."""
    with open(MODELS / "values.pkl", "rb") as file:
        loaded = pickle.load(file)
    assert loaded == values() and [repr(v) for v in loaded] == [repr(v) for v in values()]
