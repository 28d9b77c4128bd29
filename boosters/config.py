"""Public configuration: GBDTConfig and GrowthStrategy; Objective, CustomObjective and Metric
(boosters.objectives' values) are re-exported here, where earlier versions defined them.

Every value is checked when the config is made; a bad one raises ValueError (or
TypeError for a wrong type) naming the parameter and what was expected.
"""

from __future__ import annotations

import enum
import functools
import inspect
import numbers
import warnings
from collections.abc import Sequence
from typing import Any, Callable, TypeVar

from boosters._lib import parameter_names
from boosters._lib.checks import require_float, require_int
from boosters.data.binning import MAX_BINS_LIMIT
from boosters.objectives.metric import Metric
from boosters.objectives.objective import CustomObjective, Objective
from boosters.objectives.registry import metric_named, objective_fn, objective_named


class GrowthStrategy(enum.Enum):
    """How a tree grows: level by level (XGBoost), best leaf first (LightGBM) or
    one split per level (CatBoost).

    ``Depthwise`` splits every leaf of a level before the next level, up to
    ``max_depth`` (XGBoost's ``grow_policy="depthwise"``). ``Leafwise`` always splits the
    leaf of largest gain, up to ``n_leaves`` leaves (LightGBM; XGBoost's
    ``"lossguide"``). ``Oblivious`` grows symmetric trees, CatBoost's default
    (``grow_policy="SymmetricTree"``): every node of a level splits on the same feature,
    threshold and missing-value side, the one that maximises the gain summed over the
    level's nodes, up to ``max_depth`` (see :doc:`/guide/oblivious_trees`). `GBDTConfig`
    also takes the names ``"depthwise"``, ``"leafwise"`` and ``"oblivious"``.

    Examples
    --------
    >>> bst.GrowthStrategy("leafwise")
    <GrowthStrategy.Leafwise: 'leafwise'>
    >>> bst.GBDTConfig(growth_strategy="leafwise").max_depth is None  # no depth limit
    True
    """

    Depthwise = "depthwise"
    Leafwise = "leafwise"
    Oblivious = "oblivious"


HISTOGRAM_MODES = ("auto", "f64", "i16", "i8")
DEFAULT_DEPTHWISE_MAX_DEPTH = 6
HISTOGRAM_LAYOUTS = ("auto", "column", "row")


def _is_feature_key(key):
    """A feature index (int, not bool) or name (str)."""
    return isinstance(key, str) or (isinstance(key, numbers.Integral) and not isinstance(key, bool))


def _feature_key(name, key):
    if not _is_feature_key(key):
        raise TypeError(f"{name}: a feature is an index (int) or a name (str), got {type(key).__name__} {key!r}")
    if not isinstance(key, str) and key < 0:
        raise ValueError(f"{name}: feature indices must be >= 0, got {key}")
    return key if isinstance(key, str) else int(key)


def _direction(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value not in (-1, 0, 1):
        raise ValueError(f"{name}: a direction is -1, 0 or 1, got {value!r}")
    return int(value)


def _monotone_constraints(value):
    """None, a sequence of -1/0/1 (one per feature), or a dict {feature index or name: -1/0/1};
    features are matched to the data at training."""
    name = "monotone_constraints"
    if value is None:
        return None
    if isinstance(value, dict):
        out = {}
        for key, direction in value.items():
            out[_feature_key(name, key)] = _direction(name, direction)
        return out
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be None, a sequence of -1/0/1 per feature or a dict "
                        f"{{feature: -1/0/1}}, got {type(value).__name__}")
    return tuple(_direction(name, direction) for direction in value)


def _interaction_constraints(value):
    """None, or a sequence of groups, each a sequence of feature indices or names."""
    name = "interaction_constraints"
    if value is None:
        return None
    groups = []
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be None or a list of lists of features, got {type(value).__name__}")
    for group in value:
        if isinstance(group, (str, bytes, dict)) or not hasattr(group, "__iter__"):
            raise TypeError(f"{name}: each group must be a list of features, got {type(group).__name__} {group!r}")
        group = tuple(_feature_key(name, key) for key in group)
        if not group:
            raise ValueError(f"{name}: a group must not be empty")
        groups.append(group)
    return tuple(groups)


def _require_fraction(name, value, allow_none=False):
    """A number in (0, 1]."""
    if value is None and allow_none:
        return None
    value = require_float(name, value, 0.0, strictly_above=True)
    if value > 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value}")
    return value


BOOSTERS = ("gbdt", "dart")


def _require_probability(name: str, value) -> float:
    """A float in [0, 1]."""
    value = require_float(name, value, 0.0)
    if value > 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value
def _checked_metrics(metric, objective: Objective):
    """`metric` as GBDTConfig keeps it: None, one Metric or callable, or a tuple of them
    (a list or tuple given: several metrics, the first one driving early stopping)."""
    several = isinstance(metric, (list, tuple))
    items = tuple(metric) if several else (() if metric is None else (metric,))
    if several and not items:
        raise ValueError("metric: give at least one metric in the list, or None for the objective's default")
    for item in items:
        if isinstance(item, Metric):
            if not item.supports(objective):
                raise ValueError(f"metric {item!r} cannot score objective {objective!r}")
        elif not callable(item):
            raise TypeError(f"metric must be a Metric (e.g. Metric.rmse()), a callable (margins, dataset) -> "
                            f"(name, value, higher_is_better), a list of them or None, got {item!r}")
    built_in = [item for item in items if isinstance(item, Metric)]
    if len(set(built_in)) != len(built_in):
        raise ValueError(f"metric: a metric is given twice in {list(items)!r}")
    return items if several else metric


DEFAULT_N_LEAVES = 15
# the default share of rows per round, unless GOSS or the Bayesian bootstrap samples them
DEFAULT_SUBSAMPLE = parameter_names.DEFAULT_SUBSAMPLE


def objective_from_name(name: str, keywords: dict) -> Objective:
    """`Objective(name)` (a boosters, LightGBM or XGBoost name) with the objective's parameters
    given beside it in a params dict (`keywords`, by LightGBM's, XGBoost's or boosters' names:
    ``num_class``, ``quantile_alpha``; LightGBM's ``alpha`` is the level of "quantile" and the
    delta of "huber"); ValueError / TypeError naming the objective."""
    found = objective_named(name)
    arguments: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, value in keywords.items():
        argument = parameter_names.OBJECTIVE_KEYWORDS.get(key, key)
        if argument == "alpha" and found is not None and found[0].name == "huber":
            argument = "delta"
        if argument in arguments and arguments[argument] != value:
            raise ValueError(f"{sources[argument]}={arguments[argument]!r} and {key}={value!r} are the same "
                             f"objective parameter ({argument}) with different values: give one")
        arguments[argument], sources[argument] = value, key
    if found is not None and found[0].takes("n_classes") and arguments.get("n_classes") is None:
        raise ValueError(f"objective {name!r} needs the number of classes: give num_class=k (k >= 2)")
    try:
        return Objective(name, **arguments)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"objective {name!r}: {exc}") from None


def _metric_from_name(name: str, objective: Objective) -> Metric:
    """`Metric(name)`; a metric of the objective's own parameter (LightGBM's "quantile" and
    "huber" metrics read the objective's alpha) takes the objective's value."""
    found = None if "@" in name else metric_named(name)
    for key in ("alpha", "delta"):
        if found is not None and found[0].takes(key) and getattr(objective, key, None) is not None:
            return Metric(name, **{key: getattr(objective, key)})
    return Metric(name)


def _metrics_from_names(metric, objective: Objective):
    """Metric names (LightGBM's, XGBoost's or boosters') in `metric` made Metrics."""
    if isinstance(metric, str):
        return _metric_from_name(metric, objective)
    if isinstance(metric, (list, tuple)):
        return type(metric)(_metric_from_name(m, objective) if isinstance(m, str) else m for m in metric)
    return metric


def resolve_parameter_names(params: dict, fields: tuple[str, ...]) -> dict:
    """A params dict with LightGBM's, XGBoost's and scikit-learn's names as `GBDTConfig` takes
    it: every alias under its canonical name (`boosters._lib.parameter_names`), an objective
    and metrics given by name made `Objective` / `Metric`, with the objective's parameters
    given beside it (``num_class``, ``alpha``...). ValueError for a thread count (not a
    config parameter), a refused name, two names of one parameter with different values."""
    threads = [name for name in parameter_names.THREAD_NAMES if name in params]
    if threads:
        raise ValueError(f"{threads[0]} is not a GBDTConfig parameter: give the thread count to "
                         "GBDTModel.train(..., n_threads=) and predict (a params dict: "
                         "boosters._lib.parameter_names.split_thread_params(params) splits it off)")
    xgboost = parameter_names.library_of(params) == "xgboost"
    params = parameter_names.canonical_params(params, fields)
    objective = params.get("objective")
    keywords = {name: params.pop(name) for name in list(params) if name in parameter_names.OBJECTIVE_KEYWORDS}
    if "alpha" in params:
        if xgboost or (objective is None and not keywords):
            # XGBoost's alpha is its L1 penalty (reg_alpha); LightGBM's default objective reads no alpha
            if not xgboost:
                raise ValueError("alpha without an objective is ambiguous: XGBoost's alpha is the L1 penalty "
                                 "(give l1= or reg_alpha=), LightGBM's the level of objective='quantile' or the "
                                 "delta of objective='huber'")
            alpha = params.pop("alpha")
            if "l1" in params and params["l1"] != alpha:
                raise ValueError(f"alpha={alpha!r} (XGBoost's L1 penalty) and l1={params['l1']!r} differ: give one")
            params["l1"] = alpha
        else:
            keywords["alpha"] = params.pop("alpha")
    if keywords:
        if not isinstance(objective, str):
            names = ", ".join(sorted(keywords))
            raise ValueError(f"objective parameter(s) {names} given beside objective={objective!r}: name the "
                             "objective (objective='multiclass', num_class=3) or give them to the Objective "
                             "(Objective.softmax(3))")
        params["objective"] = objective_from_name(objective, keywords)
    elif isinstance(objective, str):
        params["objective"] = objective_from_name(objective, {})
    if "metric" in params:
        resolved = params["objective"] if isinstance(params.get("objective"), Objective) else Objective.squared()
        params["metric"] = _metrics_from_names(params["metric"], resolved)
    return params


_Init = TypeVar("_Init", bound=Callable[..., None])


def _takes_other_names(init: _Init) -> _Init:
    """`GBDTConfig.__init__` taking LightGBM's, XGBoost's and scikit-learn's names too
    (`resolve_parameter_names`); the signature stays boosters' own, for readers and for
    type checkers (typed as returning `init` itself)."""
    signature = inspect.signature(init)
    positional = [name for name in signature.parameters if name not in ("self", "unknown")]

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if len(args) > len(positional):
            raise TypeError(f"GBDTConfig takes at most {len(positional)} positional arguments, got {len(args)}")
        for name, value in zip(positional, args):
            if name in kwargs:
                raise TypeError(f"GBDTConfig got multiple values for argument {name!r}")
            kwargs[name] = value
        given = _row_sampling_default(resolve_parameter_names(kwargs, type(self)._FIELDS))
        init(self, **given)
        _check_leaf_limit(self, given)

    return __init__  # type: ignore[return-value]  # the same call signature, checked by init


def _row_sampling_default(given: dict) -> dict:
    """`given` with subsample 1 where it was left at its default and GOSS or the Bayesian
    bootstrap samples the rows instead (each refuses a subsample < 1)."""
    other = given.get("goss_top_rate") is not None or given.get("bagging_temperature") is not None
    if other and given.get("subsample", DEFAULT_SUBSAMPLE) == DEFAULT_SUBSAMPLE:
        return {**given, "subsample": 1.0}
    return given


def _check_leaf_limit(config, given: dict):
    """Depth-wise trees read max_depth, never n_leaves: a leaf limit given with XGBoost's
    names and no growth strategy (XGBoost's max_leaves: its trees grow depth-wise) is
    refused; given with an explicit depth-wise growth (one setting for both strategies),
    it warns that it is not read."""
    if (config.growth_strategy is not GrowthStrategy.Depthwise or "n_leaves" not in given
            or config.n_leaves == DEFAULT_N_LEAVES):
        return
    message = (f"n_leaves={config.n_leaves} (LightGBM's num_leaves, XGBoost's max_leaves) only applies to leaf-wise "
               "growth: give growth_strategy='leafwise' (LightGBM's trees), or limit depth-wise trees with max_depth")
    if "growth_strategy" not in given:
        raise ValueError(message)
    warnings.warn(message + "; depth-wise trees do not read it", UserWarning, stacklevel=3)


class GBDTConfig:
    """Everything that defines a GBDT training run.

    Every value is checked here: a bad one raises ValueError (TypeError for a wrong type)
    naming the parameter; an unknown name suggests the closest one. The attributes hold
    the values in effect. :doc:`/parameters` lists each parameter's LightGBM and XGBoost
    equivalent.

    Split gain (RFC-0008): ``1/2 [T(G_L)^2/(H_L+l2) + T(G_R)^2/(H_R+l2) - T(G)^2/(H+l2)]
    - min_gain_to_split``, with ``T`` the soft threshold by ``l1``; a leaf's value is
    ``-T(G)/(H+l2) * learning_rate``.

    Parameters
    ----------
    n_estimators : int, default 100
        Boosting rounds (softmax: one tree per class per round).
    learning_rate : float, default 0.05
        Shrinkage of every leaf value, > 0. The defaults of this and of `growth_strategy`,
        `n_leaves`, `min_samples_leaf`, `min_child_weight` and `subsample` were chosen on
        19 real datasets (:doc:`/benchmarks/defaults`); before version 0.2 they were
        XGBoost's (0.3, depth-wise depth 6, 1 row, 1, 1.0).
    objective : Objective or callable, optional
        The loss; None is `Objective.squared()`. A callable ``(margins, dataset) ->
        (grad, hess)`` is ``Objective.custom(callable)`` (one output; see there).
    metric : Metric, callable or list of them, optional
        The validation metric; None is the objective's default (`Metric.default_for`).
        A callable ``(margins, dataset) -> (name, value, higher_is_better)`` scores the
        raw margins (``(n_rows,)`` or ``(n_rows, n_outputs)``, float64) of a `Dataset`,
        as LightGBM's ``feval``. A list or tuple: every one is scored each round
        (``evals_result`` has them all, `GBDTModel.eval_history` the first), and early
        stopping follows the first, as LightGBM's ``first_metric_only=True``.
    growth_strategy : GrowthStrategy or {"depthwise", "leafwise", "oblivious"}, default Leafwise
        Level by level (XGBoost), best leaf first (LightGBM) or one split shared by each
        level (CatBoost's symmetric trees; a categorical feature's level split sends one
        category left; not with ``colsample_bynode``). Parameters named as XGBoost names
        them (``max_leaves``, ``grow_policy``, ``gamma``, an objective such as
        ``"binary:logistic"``...) without a growth strategy grow XGBoost's depth-wise trees.
    max_depth : int, None or "auto", default "auto"
        Depth limit. "auto" is 6 depth-wise and oblivious, no limit leaf-wise (LightGBM's default);
        None or -1 is no limit (leaf-wise only). The attribute holds the limit in
        effect; `to_dict` keeps what was asked, so `replace` resolves "auto" again.
    n_leaves : int, default 15
        Leaf limit of leaf-wise trees (LightGBM's default is 31). Depth-wise trees do not
        read it: another value warns with an explicit depth-wise ``growth_strategy``, and
        XGBoost's ``max_leaves`` without ``grow_policy="lossguide"`` is refused (XGBoost
        grows depth-wise, and boosters cannot cap depth-wise trees' leaves).
    l1 : float, default 0
        L1 regularization of leaf values and gains.
    l2 : float, default 1
        L2 regularization of leaf values and gains.
    min_gain_to_split : float, default 0
        A split must gain more than this. The gain carries the factor 1/2, so ``g`` is
        LightGBM's ``min_gain_to_split=2g`` and XGBoost's ``gamma=2g``.
    min_child_weight : float, default 0.001
        Minimum hessian sum of a child (LightGBM's default; XGBoost's is 1).
    min_samples_leaf : int, default 20
        Minimum rows of a child, estimated from hessians during the search (exact for
        squared error).
    max_bins : int, default 256
        Bins per feature, the missing-value bin included (2..65535): 256 is LightGBM's
        ``max_bin=255``; 256 keeps bins in one byte.
    cache_size : int, default 8
        Histogram slots. A tree needs at most ``n_leaves`` (leaf-wise) or ``2**max_depth``
        (depth-wise) to never rebuild an evicted parent; fewer is slower, same model.
    early_stopping_rounds : int, optional
        Stop when the validation metric has not improved for this many rounds and keep the
        trees up to the best round; needs a ``val_set``.
    seed : int, default 42
        Fixes all randomness: the binning sample, quantized rounding, row and column samples.
    histogram_mode : {"auto", "f64", "i16", "i8"}, default "auto"
        "f64": float64 histograms; "i16" / "i8": gradients quantized to 16 / 8-bit integers
        (stochastic rounding, seeded) summed in exact integer histograms; "auto": "f64"
        below 100k rows, "i16" above.
    prefetch : bool, default True
        Software prefetch in the gathered histogram kernels.
    enable_bundling : bool, default True
        Store mutually exclusive sparse features (one-hot groups) in shared columns (EFB);
        the same trees, grown faster.
    renew_leaves : bool, default True
        Quantized modes: leaf values from the full-precision gradients.
    quantization_levels : int, optional
        Quantized modes: gradients become integers in [-levels, levels] (LightGBM's
        ``num_grad_quant_bins``); None is as many as the mode allows. Fewer levels let more
        nodes use narrow histogram bins (faster), with coarser gradients.
    histogram_layout : {"auto", "column", "row"}, default "auto"
        Histograms built column by column, row by row over a row-major copy of the uint8
        columns, or chosen by a measured cost model.
    verbosity : int, default 0
        1: one log line per round.
    colsample_bytree : float, default 1.0
        Share in (0, 1] of the usable features each tree may split on:
        ``max(1, floor(share * n))``, as XGBoost.
    colsample_bylevel : float, default 1.0
        Share of the tree's features each level (node depth, leaf-wise too) may split on.
    colsample_bynode : float, default 1.0
        Share of the level's features each node may split on.
    monotone_constraints : sequence or dict, optional
        -1 / 0 / +1 per feature (decreasing, none, increasing): one per feature, or
        ``{feature index or name: direction}``. Names are matched to the training data.
    interaction_constraints : list of lists, optional
        Groups of features (indices or names) that may appear together on a root-to-leaf
        path; a feature in no group only appears on paths of its own (XGBoost's rule).
    subsample : float, default 0.8
        Share in (0, 1] of the rows each round's trees see: ``round(subsample * n_rows)``
        drawn without replacement per round (LightGBM's bagging with ``bagging_freq=1``),
        seeded by `seed`. Left at its default with GOSS or the Bayesian bootstrap
        (`bagging_temperature`), which sample rows their own way, it is 1 (an explicit
        0.8 counts as the default: the estimators pass every parameter).
    goss_top_rate : float, optional
        GOSS (set with `goss_other_rate`, not with `subsample`): the share ``a`` of rows
        kept each round for their largest ``|gradient * hessian|``.
    goss_other_rate : float, optional
        GOSS: the share ``b`` of rows drawn from the rest, their gradients and hessians
        multiplied by ``(1 - a) / b``; ``a + b <= 1``. The first ``int(1 / learning_rate)``
        rounds use every row, as in LightGBM.
    max_onehot_cats : int, default 4
        Categorical features with at most this many categories try each category alone
        against the rest (LightGBM's ``max_cat_to_onehot``).
    cat_smooth : float, default 10
        Sorted categorical partition: categories with at least this many rows take part,
        ordered by ``G / (H + cat_smooth)``.
    cat_l2 : float, default 10
        Sorted categorical partition: added to `l2` in the children's gain.
    max_cat_threshold : int, default 32
        Sorted categorical partition: at most this many categories on the left side.
    min_data_per_group : int, default 100
        Sorted categorical partition: rows at least on the right side and in each group of
        categories between two tried splits.
    cat_encoding : {"splits", "ordered_ctr"}, default "splits"
        How categorical features are split. "splits": on their categories (one-hot or
        sorted partitions, above). "ordered_ctr": each becomes a numeric feature, its
        category's mean target smoothed towards the mean of all targets, which CatBoost
        calls a CTR (its ``simple_ctr``, ordered target statistics): on the training
        rows, computed over the rows before each row in a random permutation (drawn
        from `seed`), so a row's own label never enters its feature; on other data,
        over all training rows, an unseen category taking the prior. Binary and
        regression objectives (the target's mean, where CatBoost binarizes a regression
        target at its median); the weights are not used, a missing category stays
        missing. A feature of at most `max_onehot_cats` categories keeps its category
        splits (CatBoost's ``one_hot_max_size``). One permutation (CatBoost uses several).
    ctr_prior_weight : float, default 1
        ``cat_encoding="ordered_ctr"``: the prior's weight in rows,
        ``(sum + w * prior) / (count + w)`` (CatBoost's denominator adds 1).
    booster : {"gbdt", "dart"}, default "gbdt"
        "dart": DART (Rashmi & Gilad-Bachrach 2015), dropout of whole earlier rounds; see
        :doc:`/guide/dart`. The four parameters below are read only with "dart".
    drop_rate : float, default 0.1
        DART: the probability in [0, 1] that each earlier round is dropped, when the round
        does not skip dropout.
    skip_drop : float, default 0.5
        DART: the probability in [0, 1] that a round drops nothing (plain boosting).
    max_drop : int or None, default 50
        DART: at most this many rounds are dropped (the drop rate is capped at
        ``max_drop / rounds so far``, as LightGBM); None is no limit.
    xgboost_dart_mode : bool, default False
        DART normalisation with k dropped rounds: False scales the new trees by
        ``learning_rate / (k + 1)`` and the dropped ones by ``k / (k + 1)`` (the paper's,
        LightGBM's default); True by ``learning_rate / (k + learning_rate)`` and
        ``k / (k + learning_rate)`` (XGBoost's ``normalize_type="tree"``).
    linear_leaves : bool, default False
        Each leaf of a tree holds a linear model of the numeric features split on along its
        path (LightGBM's ``linear_tree``; :doc:`/guide/linear_leaves`), fitted by a Newton
        step on the leaf's rows; rows with NaN (or +-inf) in those features, there and at
        prediction, use the leaf's constant value. Dense training data only; not with
        `monotone_constraints`.
    linear_l1 : float, default 0
        L1 penalty on the linear leaves' coefficients (not their intercepts).
    linear_l2 : float, default 0
        L2 penalty on the linear leaves' coefficients (LightGBM's ``linear_lambda``).
    random_strength : float, default 0
        CatBoost's score noise (:doc:`/guide/randomness`): while a node's split is chosen,
        each valid candidate competes by ``gain + N(0, sd^2)``, ``sd = random_strength *
        sqrt(mean g^2) * L / (1 + L) / 2`` with ``L = n_rows * exp(-round *
        learning_rate)``: the gradients' spread, fading as the model grows, on CatBoost's
        score scale (twice the gain). The split keeps its true gain (importance, leaf-wise
        order). 0 is off; CatBoost's default is 1.
    bagging_temperature : float, optional
        CatBoost's Bayesian bootstrap (``bootstrap_type="Bayesian"``): each round every
        row's gradient and hessian are multiplied by ``(-log U)^T``, ``U`` uniform per
        (round, row); ``T = 1`` gives exponential weights (mean 1, variance 1), 0 all
        ones. None is off (CatBoost's default is 1 when Bayesian). Not with `subsample`
        < 1 or GOSS.
    **unknown
        LightGBM's and XGBoost's names of these parameters (``num_leaves``, ``eta``,
        ``reg_lambda``, ``min_data_in_leaf``...; :doc:`/parameters` lists them, with the
        few whose value is converted, such as ``gamma``), an objective by LightGBM's or
        XGBoost's name (``objective="binary"``, ``"multi:softprob"``) with its parameters
        beside it (``num_class``, ``alpha``, ``quantile_alpha``...), and metric names
        (``metric="binary_logloss"``, ``["auc", "ndcg@10"]``). Two names of one parameter
        with different values are a ValueError naming both; a name boosters has no
        equivalent of is a ValueError saying what to use; any other keyword is a
        ValueError naming it and the closest known name. Thread counts (``num_threads``,
        ``nthread``, ``n_jobs``) are not config parameters: see
        `boosters._lib.parameter_names.split_thread_params`.

    See Also
    --------
    GBDTModel.train : trains with a config.

    Examples
    --------
    >>> config = bst.GBDTConfig(n_estimators=200, learning_rate=0.05,
    ...                         growth_strategy="leafwise", n_leaves=63)
    >>> config.max_depth is None, config.growth_strategy
    (True, <GrowthStrategy.Leafwise: 'leafwise'>)
    >>> bst.GBDTConfig(n_estimator=10)
    Traceback (most recent call last):
    ...
    ValueError: unknown GBDTConfig parameter(s): 'n_estimator' (did you mean 'n_estimators'?)

    A LightGBM params dict (the thread count goes to training):

    >>> config = bst.GBDTConfig(objective="binary", num_leaves=15, eta=0.1, lambda_l2=2.0,
    ...                         growth_strategy="leafwise")
    >>> config.objective, config.n_leaves, config.learning_rate, config.l2
    (Objective.logistic(), 15, 0.1, 2.0)
    """

    _FIELDS = (
        "n_estimators", "learning_rate", "objective", "metric", "growth_strategy", "max_depth",
        "n_leaves", "l1", "l2", "min_gain_to_split", "min_child_weight", "min_samples_leaf",
        "max_bins", "cache_size", "early_stopping_rounds", "seed", "histogram_mode", "prefetch",
        "enable_bundling", "renew_leaves", "quantization_levels", "histogram_layout", "verbosity",
        "colsample_bytree", "colsample_bylevel", "colsample_bynode", "monotone_constraints",
        "interaction_constraints",
        "subsample", "goss_top_rate", "goss_other_rate",
        "max_onehot_cats", "cat_smooth", "cat_l2", "max_cat_threshold", "min_data_per_group",
        "cat_encoding", "ctr_prior_weight",
        "booster", "drop_rate", "skip_drop", "max_drop", "xgboost_dart_mode",
        "linear_leaves", "linear_l1", "linear_l2",
        "random_strength", "bagging_temperature",
    )

    @_takes_other_names
    def __init__(
        self,
        n_estimators: int = 100,
        learning_rate: float = 0.05,
        objective: Objective | Callable[..., Any] | None = None,
        metric: Metric | Callable[..., Any] | Sequence[Metric | Callable[..., Any]] | None = None,
        growth_strategy: GrowthStrategy | str = GrowthStrategy.Leafwise,
        max_depth: int | str | None = "auto",
        n_leaves: int = DEFAULT_N_LEAVES,
        l1: float = 0.0,
        l2: float = 1.0,
        min_gain_to_split: float = 0.0,
        min_child_weight: float = 1e-3,
        min_samples_leaf: int = 20,
        max_bins: int = 256,
        cache_size: int = 8,
        early_stopping_rounds: int | None = None,
        seed: int = 42,
        histogram_mode: str = "auto",
        prefetch: bool = True,
        enable_bundling: bool = True,
        renew_leaves: bool = True,
        quantization_levels: int | None = None,
        histogram_layout: str = "auto",
        verbosity: int = 0,
        colsample_bytree: float = 1.0,
        colsample_bylevel: float = 1.0,
        colsample_bynode: float = 1.0,
        monotone_constraints=None,
        interaction_constraints=None,
        subsample: float = DEFAULT_SUBSAMPLE,
        goss_top_rate: float | None = None,
        goss_other_rate: float | None = None,
        max_onehot_cats: int = 4,
        cat_smooth: float = 10.0,
        cat_l2: float = 10.0,
        max_cat_threshold: int = 32,
        min_data_per_group: int = 100,
        cat_encoding: str = "splits",
        ctr_prior_weight: float = 1.0,
        booster: str = "gbdt",
        drop_rate: float = 0.1,
        skip_drop: float = 0.5,
        max_drop: int | None = 50,
        xgboost_dart_mode: bool = False,
        linear_leaves: bool = False,
        linear_l1: float = 0.0,
        linear_l2: float = 0.0,
        random_strength: float = 0.0,
        bagging_temperature: float | None = None,
        **unknown,
    ):
        if unknown:
            raise ValueError(f"unknown GBDTConfig parameter(s): {self._with_hints(unknown)}")
        self.n_estimators = require_int("n_estimators", n_estimators, 1)
        self.learning_rate = require_float("learning_rate", learning_rate, 0.0, strictly_above=True)
        objective = Objective.squared() if objective is None else objective
        if callable(objective) and not isinstance(objective, Objective):
            objective = Objective.custom(objective)
        if not isinstance(objective, Objective):
            raise TypeError(f"objective must be an Objective (e.g. Objective.squared()) or a callable "
                            f"(margins, dataset) -> (grad, hess), got {objective!r}")
        self.objective = objective
        self.metric = _checked_metrics(metric, objective)
        if isinstance(growth_strategy, str):
            try:
                growth_strategy = GrowthStrategy(growth_strategy.lower())
            except ValueError:
                raise ValueError(f"growth_strategy must be 'depthwise', 'leafwise' or 'oblivious', "
                                 f"got {growth_strategy!r}") from None
        if not isinstance(growth_strategy, GrowthStrategy):
            raise TypeError(f"growth_strategy must be a GrowthStrategy, got {growth_strategy!r}")
        self.growth_strategy = growth_strategy
        self._max_depth_asked = max_depth
        if isinstance(max_depth, str) and max_depth == "auto":
            max_depth = None if growth_strategy is GrowthStrategy.Leafwise else DEFAULT_DEPTHWISE_MAX_DEPTH
        elif isinstance(max_depth, numbers.Integral) and max_depth == -1:
            max_depth = None
        if isinstance(max_depth, str):
            raise TypeError(f"max_depth must be an int, None or 'auto', got {max_depth!r}")
        self.max_depth = require_int("max_depth", max_depth, 1, allow_none=True)
        if self.max_depth is None and growth_strategy is not GrowthStrategy.Leafwise:
            raise ValueError(f"max_depth must be set (>= 1) for GrowthStrategy.{growth_strategy.name}")
        self.n_leaves = require_int("n_leaves", n_leaves, 2)
        self.l1 = require_float("l1", l1, 0.0)
        self.l2 = require_float("l2", l2, 0.0)
        self.min_gain_to_split = require_float("min_gain_to_split", min_gain_to_split, 0.0)
        self.min_child_weight = require_float("min_child_weight", min_child_weight, 0.0)
        self.min_samples_leaf = require_int("min_samples_leaf", min_samples_leaf, 1)
        self.max_bins = require_int("max_bins", max_bins, 2, MAX_BINS_LIMIT)
        self.cache_size = require_int("cache_size", cache_size, 2)
        self.early_stopping_rounds = require_int("early_stopping_rounds", early_stopping_rounds, 1, allow_none=True)
        self.seed = require_int("seed", seed, 0, 2**64 - 1)  # a uint64 in the kernels
        if histogram_mode not in HISTOGRAM_MODES:
            raise ValueError(f"histogram_mode must be one of {HISTOGRAM_MODES}, got {histogram_mode!r}")
        self.histogram_mode = histogram_mode
        if not isinstance(prefetch, bool):
            raise TypeError(f"prefetch must be True or False, got {prefetch!r}")
        self.prefetch = prefetch
        if not isinstance(enable_bundling, bool):
            raise TypeError(f"enable_bundling must be True or False, got {enable_bundling!r}")
        self.enable_bundling = enable_bundling
        if not isinstance(renew_leaves, bool):
            raise TypeError(f"renew_leaves must be True or False, got {renew_leaves!r}")
        self.renew_leaves = renew_leaves
        self.quantization_levels = require_int("quantization_levels", quantization_levels, 1, 32767, allow_none=True)
        if histogram_layout not in HISTOGRAM_LAYOUTS:
            raise ValueError(f"histogram_layout must be one of {HISTOGRAM_LAYOUTS}, got {histogram_layout!r}")
        self.histogram_layout = histogram_layout
        self.verbosity = require_int("verbosity", verbosity, 0)
        self.colsample_bytree = _require_fraction("colsample_bytree", colsample_bytree)
        self.colsample_bylevel = _require_fraction("colsample_bylevel", colsample_bylevel)
        self.colsample_bynode = _require_fraction("colsample_bynode", colsample_bynode)
        if self.colsample_bynode < 1.0 and growth_strategy is GrowthStrategy.Oblivious:
            raise ValueError("colsample_bynode cannot be combined with growth_strategy='oblivious': a level's nodes "
                             "share one split; sample the features of each level with colsample_bylevel")
        self.monotone_constraints = _monotone_constraints(monotone_constraints)
        self.interaction_constraints = _interaction_constraints(interaction_constraints)
        self.max_onehot_cats = require_int("max_onehot_cats", max_onehot_cats, 0)
        self.cat_smooth = require_float("cat_smooth", cat_smooth, 0.0)
        self.cat_l2 = require_float("cat_l2", cat_l2, 0.0)
        self.max_cat_threshold = require_int("max_cat_threshold", max_cat_threshold, 1)
        self.min_data_per_group = require_int("min_data_per_group", min_data_per_group, 1)
        if cat_encoding not in ("splits", "ordered_ctr"):
            raise ValueError(f"cat_encoding must be 'splits' or 'ordered_ctr', got {cat_encoding!r}")
        self.cat_encoding = cat_encoding
        self.ctr_prior_weight = require_float("ctr_prior_weight", ctr_prior_weight, 0.0, strictly_above=True)
        self._set_row_sampling(subsample, goss_top_rate, goss_other_rate)
        self._set_dart(booster, drop_rate, skip_drop, max_drop, xgboost_dart_mode)
        self._set_linear_leaves(linear_leaves, linear_l1, linear_l2)
        self._set_catboost_randomness(random_strength, bagging_temperature)
        object.__setattr__(self, "_checked", True)  # from here on, an assignment is checked (__setattr__)

    @classmethod
    def _with_hints(cls, names) -> str:
        """Unknown parameter names, each with the closest known name (a parameter, or a
        LightGBM / XGBoost alias of one) where one is close."""
        return ", ".join(parameter_names.hint(name, cls._FIELDS) for name in names)

    def __setattr__(self, name, value):
        """``config.name = value`` is checked as the constructor checks it (with every other
        parameter: ``config.replace(name=value)``), so a config never holds a value it would
        refuse; a name that is not a parameter is an AttributeError."""
        if "_checked" not in self.__dict__:  # being made: __init__ checks each value
            object.__setattr__(self, name, value)
            return
        if name in parameter_names.ALIASES and name not in self._FIELDS:  # config.eta = 0.1
            name, value = next(iter(parameter_names.canonical_params({name: value}, self._FIELDS).items()))
        if name not in self._FIELDS:
            raise AttributeError(f"GBDTConfig has no parameter {self._with_hints([name])}")
        self.__dict__.update(self.replace(**{name: value}).__dict__)

    def __delattr__(self, name):
        raise AttributeError(f"GBDTConfig parameters cannot be deleted ({name!r}); set them or use replace()")

    def _set_dart(self, booster, drop_rate, skip_drop, max_drop, xgboost_dart_mode):
        if booster not in BOOSTERS:
            raise ValueError(f"booster must be one of {BOOSTERS}, got {booster!r}")
        self.booster = booster
        self.drop_rate = _require_probability("drop_rate", drop_rate)
        self.skip_drop = _require_probability("skip_drop", skip_drop)
        self.max_drop = require_int("max_drop", max_drop, 1, allow_none=True)
        if not isinstance(xgboost_dart_mode, bool):
            raise TypeError(f"xgboost_dart_mode must be True or False, got {xgboost_dart_mode!r}")
        self.xgboost_dart_mode = xgboost_dart_mode

    def _set_row_sampling(self, subsample, goss_top_rate, goss_other_rate):
        self.subsample = _require_fraction("subsample", subsample)
        self.goss_top_rate = _require_fraction("goss_top_rate", goss_top_rate, allow_none=True)
        self.goss_other_rate = _require_fraction("goss_other_rate", goss_other_rate, allow_none=True)
        if (goss_top_rate is None) != (goss_other_rate is None):
            raise ValueError("goss_top_rate and goss_other_rate are set together (GOSS needs both), got "
                             f"goss_top_rate={goss_top_rate!r}, goss_other_rate={goss_other_rate!r}")
        if goss_top_rate is None:
            return
        if self.goss_top_rate == 1.0 or self.goss_top_rate + self.goss_other_rate > 1.0:
            raise ValueError("goss_top_rate + goss_other_rate must be at most 1 with goss_top_rate < 1, got "
                             f"goss_top_rate={self.goss_top_rate}, goss_other_rate={self.goss_other_rate}")
        if self.subsample != 1.0:
            raise ValueError(f"subsample={self.subsample} cannot be combined with GOSS (goss_top_rate, "
                             "goss_other_rate): choose one row sampling")

    def _set_catboost_randomness(self, random_strength, bagging_temperature):
        self.random_strength = require_float("random_strength", random_strength, 0.0)
        self.bagging_temperature = (None if bagging_temperature is None
                                    else require_float("bagging_temperature", bagging_temperature, 0.0))
        if self.bagging_temperature is None:
            return
        # the Bayesian bootstrap weighs every row: another row sampling on top would be a second bootstrap
        if self.subsample != 1.0:
            raise ValueError(f"bagging_temperature (the Bayesian bootstrap) cannot be combined with "
                             f"subsample={self.subsample}: choose one row sampling")
        if self.goss_top_rate is not None:
            raise ValueError("bagging_temperature (the Bayesian bootstrap) cannot be combined with GOSS "
                             "(goss_top_rate, goss_other_rate): choose one row sampling")

    def _set_linear_leaves(self, linear_leaves, linear_l1, linear_l2):
        if not isinstance(linear_leaves, bool):
            raise TypeError(f"linear_leaves must be True or False, got {linear_leaves!r}")
        self.linear_leaves = linear_leaves
        self.linear_l1 = require_float("linear_l1", linear_l1, 0.0)
        self.linear_l2 = require_float("linear_l2", linear_l2, 0.0)
        # a leaf's slope can go against a monotone constraint that only its constant obeys
        monotone = self.monotone_constraints
        directions = monotone.values() if isinstance(monotone, dict) else monotone or ()
        if linear_leaves and any(d != 0 for d in directions):
            raise ValueError("linear_leaves cannot be combined with monotone_constraints: a leaf's linear "
                             "model may go against the constraint")
        # DART rescales the trees' constant values; a linear leaf's coefficients would keep their scale
        if linear_leaves and self.booster == "dart":
            raise ValueError("linear_leaves cannot be combined with booster='dart' (DART rescales leaf constants, "
                             "not linear models)")
        # the definition says: leaf renewal would set a leaf's constant to a residual quantile after
        # the fit (absolute and pinball; LightGBM refuses l1 too)
        if linear_leaves and not objective_fn(self.objective).allows_linear_leaves(self.objective):
            raise ValueError(f"linear_leaves cannot be combined with {self.objective!r}: its leaves are renewed "
                             f"to residual quantiles, which a linear model does not have")

    @property
    def resolved_metric(self):
        """The metric used for evaluation: the given one (the first of several), or the
        objective's default; None for a custom objective without a metric.

        Examples
        --------
        >>> bst.GBDTConfig(objective=bst.Objective.logistic()).resolved_metric
        Metric.logloss()
        """
        metrics = self.resolved_metrics
        return metrics[0] if metrics else None

    @property
    def resolved_metrics(self) -> tuple:
        """Every metric scored each round, in order (Metric objects and callables): the
        given ones, or the objective's default; none for a custom objective without a
        metric. Early stopping follows the first (as LightGBM's ``first_metric_only``).

        Examples
        --------
        >>> bst.GBDTConfig(objective=bst.Objective.logistic(),
        ...                metric=[bst.Metric.auc(), bst.Metric.logloss()]).resolved_metrics
        (Metric.auc(), Metric.logloss())
        """
        if isinstance(self.metric, tuple):
            return self.metric
        if self.metric is not None:
            return (self.metric,)
        if objective_fn(self.objective).default_metric(self.objective) is None:  # custom
            return ()
        return (Metric.default_for(self.objective),)

    def to_dict(self) -> dict:
        """The parameters as given (max_depth "auto" stays "auto").

        Returns
        -------
        dict
            Parameter name -> value; ``GBDTConfig(**config.to_dict()) == config``.

        Examples
        --------
        >>> d = bst.GBDTConfig(learning_rate=0.1).to_dict()
        >>> d["learning_rate"], d["max_depth"]
        (0.1, 'auto')
        """
        out = {name: getattr(self, name) for name in self._FIELDS}
        if isinstance(self._max_depth_asked, str):
            out["max_depth"] = self._max_depth_asked
        return out

    def replace(self, **changes) -> "GBDTConfig":
        """A copy with some parameters changed (validated again).

        Parameters
        ----------
        **changes
            Parameters to change, by name.

        Returns
        -------
        GBDTConfig

        Examples
        --------
        >>> config = bst.GBDTConfig(max_depth="auto")
        >>> config.max_depth, config.replace(growth_strategy="depthwise").max_depth
        (None, 6)
        """
        # an alias replaces its parameter; the config keeps its growth strategy unless changed
        changes = parameter_names.canonical_params(changes, self._FIELDS, growth_known=True)
        with warnings.catch_warnings():
            if "n_leaves" not in changes:  # the leaf-limit warning is about what this call gives
                warnings.filterwarnings("ignore", message="n_leaves=", category=UserWarning)
            return GBDTConfig(**{**self.to_dict(), **changes})

    def __setstate__(self, state):
        # a config pickled before a parameter existed: that parameter at its default
        # (the behaviour of the version that pickled it)
        self.__dict__.update({name: value for name, value in vars(GBDTConfig()).items() if name not in state})
        self.__dict__.update(state)

    def __eq__(self, other):
        return isinstance(other, GBDTConfig) and self.to_dict() == other.to_dict()

    def __repr__(self):
        return "GBDTConfig(" + ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items()) + ")"
