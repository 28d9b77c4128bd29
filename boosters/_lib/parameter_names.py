"""LightGBM's, XGBoost's and scikit-learn's parameter names, as boosters reads them: the one
table of aliases of a `GBDTConfig` parameter (``num_leaves`` is ``n_leaves``), of the
thread count, and of an objective's parameter given beside it in a params dict
(``num_class``, ``alpha``), and the names boosters refuses with what to use instead.
`GBDTConfig`, the scikit-learn and Dask estimators and the functional API read them here.

An alias maps to its canonical name only where the meaning is the same; a few carry a
conversion (XGBoost's ``gamma`` compares the gain without boosters' factor 1/2:
``min_gain_to_split = gamma / 2``), and a name the two libraries read differently
(``max_bin``, ``alpha``) is read as the library whose names the params use
(`library_of`). docs/parameters.md lists them all.
"""

from __future__ import annotations

import difflib
import numbers
from typing import Any

# alias -> (canonical GBDTConfig name, the value boosters reads from the alias's value)
_SAME = None


def _halved(value):
    """LightGBM's min_split_gain / XGBoost's gamma compare the gain without its factor 1/2,
    boosters' min_gain_to_split with it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"gamma / min_split_gain must be a number, got {type(value).__name__} {value!r}")
    return float(value) / 2.0


def _silent_below_zero(value):
    """LightGBM's verbosity -1 (fatal errors only) and XGBoost's 0 are boosters' 0 (silent)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value < 0:
        return 0
    return value


def _rounds_or_none(value):
    """LightGBM's early_stopping_round <= 0 is no early stopping."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value <= 0:
        return None
    return value


GROWTH_NAMES = {"lossguide": "leafwise", "symmetrictree": "oblivious"}


def _growth_name(value):
    """XGBoost's grow_policy: "lossguide" is leaf-wise growth; CatBoost's grow_policy
    "SymmetricTree", "Depthwise", "Lossguide": oblivious, depth-wise, leaf-wise."""
    return GROWTH_NAMES.get(value.lower(), value) if isinstance(value, str) else value


def _booster_name(value):
    """LightGBM's boosting "gbdt"/"dart", XGBoost's booster "gbtree"/"dart"."""
    if value in ("gbtree", "gbdt", "dart"):
        return "gbdt" if value == "gbtree" else value
    raise ValueError(f"boosting / booster {value!r} is not supported: boosters has 'gbdt' (XGBoost's 'gbtree') and "
                     "'dart'; for GOSS set goss_top_rate and goss_other_rate (LightGBM's top_rate, other_rate)")


def _layout(name):
    """LightGBM's force_col_wise / force_row_wise=True: boosters' histogram_layout (the same
    trees either way); False: not set."""
    def convert(value):
        if value is True:
            return name
        if value is False:
            return DROP
        raise TypeError(f"force_{'col' if name == 'column' else 'row'}_wise must be True or False, got {value!r}")
    return convert


DROP = object()  # a converted value meaning "not set": the name is dropped

ALIASES = {
    "num_iterations": ("n_estimators", _SAME), "num_iteration": ("n_estimators", _SAME),
    "n_iter": ("n_estimators", _SAME), "num_tree": ("n_estimators", _SAME), "num_trees": ("n_estimators", _SAME),
    "num_round": ("n_estimators", _SAME), "num_rounds": ("n_estimators", _SAME),
    "num_boost_round": ("n_estimators", _SAME), "nrounds": ("n_estimators", _SAME),
    "eta": ("learning_rate", _SAME), "shrinkage_rate": ("learning_rate", _SAME),
    "num_leaves": ("n_leaves", _SAME), "num_leaf": ("n_leaves", _SAME), "max_leaves": ("n_leaves", _SAME),
    "max_leaf": ("n_leaves", _SAME), "max_leaf_nodes": ("n_leaves", _SAME),
    "grow_policy": ("growth_strategy", _growth_name),
    "lambda_l1": ("l1", _SAME), "reg_alpha": ("l1", _SAME), "l1_regularization": ("l1", _SAME),
    "lambda_l2": ("l2", _SAME), "reg_lambda": ("l2", _SAME), "lambda": ("l2", _SAME),
    "l2_regularization": ("l2", _SAME),
    "min_split_gain": ("min_gain_to_split", _halved), "gamma": ("min_gain_to_split", _halved),
    "min_split_loss": ("min_gain_to_split", _halved),
    "min_sum_hessian_in_leaf": ("min_child_weight", _SAME), "min_sum_hessian_per_leaf": ("min_child_weight", _SAME),
    "min_sum_hessian": ("min_child_weight", _SAME), "min_hessian": ("min_child_weight", _SAME),
    "min_child_samples": ("min_samples_leaf", _SAME), "min_data_in_leaf": ("min_samples_leaf", _SAME),
    "min_data_per_leaf": ("min_samples_leaf", _SAME), "min_data": ("min_samples_leaf", _SAME),
    "max_bin": ("max_bins", "max_bin"),  # by the params' library: see _max_bins
    "force_col_wise": ("histogram_layout", _layout("column")), "force_row_wise": ("histogram_layout", _layout("row")),
    "early_stopping_round": ("early_stopping_rounds", _rounds_or_none),
    "early_stopping": ("early_stopping_rounds", _rounds_or_none),
    "n_iter_no_change": ("early_stopping_rounds", _rounds_or_none),
    "random_seed": ("seed", _SAME), "random_state": ("seed", _SAME),
    "verbose": ("verbosity", _silent_below_zero),
    "feature_fraction": ("colsample_bytree", _SAME), "sub_feature": ("colsample_bytree", _SAME),
    "feature_fraction_bynode": ("colsample_bynode", _SAME), "sub_feature_bynode": ("colsample_bynode", _SAME),
    "bagging_fraction": ("subsample", _SAME), "sub_row": ("subsample", _SAME), "bagging": ("subsample", _SAME),
    "top_rate": ("goss_top_rate", _SAME), "other_rate": ("goss_other_rate", _SAME),
    "monotone_constraint": ("monotone_constraints", _SAME), "mc": ("monotone_constraints", _SAME),
    "max_cat_to_onehot": ("max_onehot_cats", _SAME),
    "boosting": ("booster", _booster_name), "boosting_type": ("booster", _booster_name),
    "boost": ("booster", _booster_name),
    "rate_drop": ("drop_rate", _SAME),
    "linear_tree": ("linear_leaves", _SAME), "linear_lambda": ("linear_l2", _SAME),
    "objective_type": ("objective", _SAME), "application": ("objective", _SAME), "app": ("objective", _SAME),
    "loss": ("objective", _SAME),
    "metrics": ("metric", _SAME), "metric_types": ("metric", _SAME), "eval_metric": ("metric", _SAME),
}

# the canonical names whose own value is converted too (verbosity: LightGBM's -1)
_CANONICAL_CONVERSIONS = {"verbosity": _silent_below_zero, "growth_strategy": _growth_name}

# names read together with others before the aliases (catboost_bootstrap)
COMBINED_NAMES = ("bootstrap_type",)

# thread counts: not a GBDTConfig parameter (GBDTModel.train / predict and the estimators take n_threads)
THREAD_NAMES = ("n_threads", "num_threads", "num_thread", "nthread", "nthreads", "n_jobs")

# an objective's parameter beside it in a params dict -> the Objective keyword
OBJECTIVE_KEYWORDS = {
    "num_class": "n_classes", "num_classes": "n_classes", "n_classes": "n_classes",
    "quantile_alpha": "alpha",  # XGBoost's reg:quantileerror level
    "huber_delta": "delta", "delta": "delta",
    "tweedie_variance_power": "variance_power", "variance_power": "variance_power",
    "lambdarank_truncation_level": "ndcg_at", "ndcg_at": "ndcg_at",
    # "alpha" is LightGBM's quantile level or Huber delta, XGBoost's L1: config.py decides by the objective
}

# names that mean "do nothing unusual" at these values: accepted and dropped; any other value is refused
NO_OP_VALUES = {
    "bagging_freq": (0, 1), "subsample_freq": (0, 1),  # handled before: see bagging_with_frequency
    "boost_from_average": (True,), "scale_pos_weight": (1, 1.0), "is_unbalance": (False,),
    "tree_method": ("hist", "auto"), "device": ("cpu",), "device_type": ("cpu",),
    "first_metric_only": (True,), "use_missing": (True,), "zero_as_missing": (False,),
    "num_parallel_tree": (1,), "max_delta_step": (0, 0.0), "deterministic": (True, False),
    "feature_pre_filter": (True, False), "min_data_in_bin": (1,),
    "silent": (True, False), "validate_parameters": (True, False), "missing": (None, float("nan")),
    "enable_categorical": (True,),  # a frame's category columns are categorical features by default
}

# names boosters has no equivalent of (at other values than NO_OP_VALUES): what to use instead
REFUSED = {
    "bagging_freq": "boosters draws a new row sample every round (bagging_freq=1); bagging_freq=0 is no bagging",
    "subsample_freq": "boosters draws a new row sample every round (subsample_freq=1); 0 is no bagging",
    "boost_from_average": "boosters always starts from the objective's best constant; to start elsewhere give "
                          "Dataset(init_score=...) (zeros: LightGBM's boost_from_average=False)",
    "base_score": "boosters starts from the objective's best constant; give the starting margins as "
                  "Dataset(init_score=...) or the estimators' fit(init_score=...)",
    "scale_pos_weight": "give row weights instead: GBDTClassifier(class_weight={1: w}) or Dataset(weights=...)",
    "is_unbalance": "give row weights instead: GBDTClassifier(class_weight='balanced') or Dataset(weights=...)",
    "tree_method": "boosters always grows from histograms (XGBoost's tree_method='hist')",
    "device": "boosters trains on the CPU", "device_type": "boosters trains on the CPU",
    "first_metric_only": "early stopping follows the first metric (LightGBM's first_metric_only=True)",
    "use_missing": "NaN is always a missing value", "zero_as_missing": "zero is a value; give NaN for missing",
    "num_parallel_tree": "boosters grows one tree per output per round (no random forests)",
    "max_delta_step": "boosters has no cap on a leaf's step",
    "deterministic": "boosters' training is deterministic for a seed and thread count",
    "feature_pre_filter": "boosters does not pre-filter features",
    "silent": "use verbosity=0", "validate_parameters": "boosters always checks every parameter",
    "missing": "NaN is the missing value",
    "sampling_method": "use subsample (uniform) or goss_top_rate / goss_other_rate (GOSS)",
    "bin_construct_sample_cnt": "boosters bins from its own fixed sample", "subsample_for_bin": "boosters bins from "
                                "its own fixed sample",
    "min_data_in_bin": "boosters has no minimum of rows per bin (min_data_in_bin=1)",
    "extra_trees": "boosters has no extra trees",
    "path_smooth": "boosters has no path smoothing", "max_bin_by_feature": "use max_bins (one count for all)",
    "categorical_feature": "give categorical_features to Dataset (or the estimators' fit)",
    "categorical_column": "give categorical_features to Dataset (or the estimators' fit)",
    "enable_categorical": "a frame's category columns are categorical features; give categorical_features to "
                          "Dataset to choose others",
    "huber_slope": "XGBoost's reg:pseudohubererror is not supported; Objective.huber(delta) is LightGBM's huber",
    "multi_strategy": "boosters grows one tree per output (XGBoost's 'one_output_per_tree')",
    "interaction_constraint": "use interaction_constraints",
    "normalize_type": "use xgboost_dart_mode=True for XGBoost's 'tree' normalization ('forest' is not supported)",
    "sample_type": "boosters' DART drops rounds uniformly (XGBoost's sample_type='uniform')",
    "uniform_drop": "boosters' DART drops rounds uniformly", "drop_seed": "DART draws from seed",
    "bagging_seed": "all randomness comes from seed", "feature_fraction_seed": "all randomness comes from seed",
    "data_random_seed": "all randomness comes from seed",
    "eval_at": "give the metric with its cut-off: metric='ndcg@10' or ['ndcg@1', 'ndcg@5']",
    "ndcg_eval_at": "give the metric with its cut-off: metric='ndcg@10'",
    "num_grad_quant_bins": "use quantization_levels", "use_quantized_grad": "use histogram_mode='i16' or 'i8'",
    "colsample_bylevel_seed": "all randomness comes from seed",
    "max_cat_to_onehot_strict": "use max_onehot_cats",
}


# names only XGBoost's params use (its objective names have a colon), and only LightGBM's: they tell
# which library's meaning a name shared by both (max_bin, alpha, max_depth=0) has
XGBOOST_ONLY = ("tree_method", "grow_policy", "gamma", "min_split_loss", "base_score", "num_parallel_tree",
                "quantile_alpha", "max_leaves", "nthread", "rate_drop", "normalize_type")
LIGHTGBM_ONLY = ("num_leaves", "lambda_l1", "lambda_l2", "min_data_in_leaf", "min_sum_hessian_in_leaf",
                 "feature_fraction", "bagging_fraction", "bagging_freq", "num_iterations", "boosting",
                 "boosting_type", "min_split_gain", "min_child_samples", "subsample_freq", "num_threads",
                 "force_col_wise", "force_row_wise", "min_data_in_bin", "feature_pre_filter", "linear_tree")


# boosters' default share of rows per round (GBDTConfig.subsample); CatBoost's
# bootstrap_type="No" and LightGBM's bagging_freq=0 ask for every row instead
DEFAULT_SUBSAMPLE = 0.8

# LightGBM's names of the leaf limit: given without a growth strategy, they ask for LightGBM's
# leaf-wise trees (XGBoost's max_leaves and boosters' n_leaves do not: XGBoost grows depth-wise)
LEAFWISE_NAMES = ("num_leaves", "num_leaf")


def library_of(params: dict) -> str | None:
    """"xgboost" or "lightgbm": whose names `params` uses, read from the objective's name
    (XGBoost's have a colon, LightGBM's not) and names only one library has; None when
    nothing tells (boosters' own names only)."""
    objective = params.get("objective")
    if (isinstance(objective, str) and ":" in objective) or any(name in params for name in XGBOOST_ONLY):
        return "xgboost"
    if any(name in params for name in LIGHTGBM_ONLY) or isinstance(objective, str):
        return "lightgbm"
    return None


def _max_bins(value, library: str | None) -> int:
    """boosters' max_bins (the missing-value bin counted) from max_bin: LightGBM's max_bin
    counts the value bins (max_bin=255 is max_bins=256), XGBoost's matches boosters'
    (max_bin=256 is max_bins=256)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"max_bin must be an int, got {type(value).__name__} {value!r}")
    if library is None:
        raise ValueError("max_bin counts bins differently in LightGBM (max_bin=255 is boosters' max_bins=256) and "
                         "XGBoost (max_bin=256 is max_bins=256): give max_bins, or the objective by LightGBM's or "
                         "XGBoost's name")
    return int(value) + 1 if library == "lightgbm" else int(value)


def refusal(name: str) -> str:
    """The message refusing the parameter `name` (a key of REFUSED)."""
    return f"parameter {name!r} has no boosters equivalent: {REFUSED[name]}"


def known_names(canonical: tuple[str, ...]) -> tuple[str, ...]:
    """Every name a hint may suggest: the canonical ones, the aliases, thread, objective and refused names."""
    return (*canonical, *ALIASES, *THREAD_NAMES, *OBJECTIVE_KEYWORDS, *REFUSED, *COMBINED_NAMES)


def hint(name: str, canonical: tuple[str, ...]) -> str:
    """`name` quoted, with " (did you mean 'x'?)" for the closest known name (a boosters
    parameter, or an alias with the parameter it stands for)."""
    close = difflib.get_close_matches(name, known_names(canonical), n=1)
    if not close:
        return repr(name)
    target = ALIASES.get(close[0], (None,))[0]
    suggestion = f"{close[0]!r}" + (f" (an alias of {target!r})" if target and target != close[0] else "")
    return f"{name!r} (did you mean {suggestion}?)"


def canonical_params(params: dict, canonical: tuple[str, ...], growth_known: bool = False) -> dict:
    """`params` with every alias replaced by its canonical name (and value converted):
    ValueError when an alias and its canonical name, or two aliases of one name, are given
    with different values, and naming a refused parameter (other than its no-op values) with
    what to use instead. Names neither canonical nor known stay (the caller refuses them
    with `hint`); thread names and objective keywords stay too. XGBoost's names without a
    growth strategy ask for XGBoost's depth-wise trees, unless `growth_known` (the caller
    has one: a config's `replace`, the estimators' own parameter).

    Parameters
    ----------
    params : dict
        Parameter name -> value, as given.
    canonical : tuple of str
        The caller's own parameter names (GBDTConfig's fields).

    Returns
    -------
    dict
        The canonical names -> their values; LightGBM's ``bagging_freq`` / ``subsample_freq``
        and the no-op names are consumed.

    Examples
    --------
    >>> from boosters._lib.parameter_names import canonical_params
    >>> canonical_params({"eta": 0.1, "num_leaves": 15, "max_bin": 255}, ("learning_rate", "n_leaves", "max_bins"))
    {'learning_rate': 0.1, 'n_leaves': 15, 'max_bins': 256}
    """
    library = library_of(params)
    params = catboost_bootstrap(bagging_with_frequency(params))
    out: dict[str, Any] = {}
    source: dict[str, str] = {}
    for name, value in params.items():
        if name in NO_OP_VALUES and name not in canonical:
            if _is_one_of(value, NO_OP_VALUES[name]):
                continue
            raise ValueError(f"{refusal(name)} (got {name}={value!r})")
        if name in REFUSED and name not in canonical:
            raise ValueError(refusal(name))
        if name in ALIASES and name not in canonical:
            target, convert = ALIASES[name]
            if target == "n_leaves" and name == "max_leaves" and value == 0:  # XGBoost: 0 is no limit
                continue
            value = _max_bins(value, library) if convert == "max_bin" else value if convert is None else convert(value)
            if value is DROP:
                continue
        else:
            target = name
            convert = _CANONICAL_CONVERSIONS.get(name)
            value = value if convert is None else convert(value)
            if name == "max_depth" and library == "xgboost" and _is_one_of(value, (0,)):  # XGBoost: no limit
                value = None
        if target in out and not _same(out[target], value):
            raise ValueError(f"{source[target]}={params[source[target]]!r} and {name}={params[name]!r} are the "
                             f"same parameter ({target}) with different values: give one")
        out[target], source[target] = value, source.get(target, name)
    if any(name in params for name in LEAFWISE_NAMES) and "growth_strategy" not in out:
        out["growth_strategy"] = "leafwise"  # LightGBM's num_leaves: its trees grow leaf-wise
    elif library == "xgboost" and "growth_strategy" not in out and not growth_known:  # XGBoost's trees: depth-wise
        if "n_leaves" in out:
            raise ValueError(f"n_leaves={out['n_leaves']} (XGBoost's max_leaves) without grow_policy: XGBoost's trees "
                             "grow depth-wise, and boosters cannot cap depth-wise trees' leaves: give "
                             "grow_policy='lossguide' (leaf-wise trees), or limit the depth with max_depth")
        out["growth_strategy"] = "depthwise"
    return out


def bagging_with_frequency(params: dict) -> dict:
    """LightGBM's bagging: ``bagging_fraction`` (or ``subsample``) acts only with
    ``bagging_freq`` (``subsample_freq``) > 0. boosters resamples every round, so 1 maps
    exactly, 0 is no bagging (the fraction is dropped), other values are refused; LightGBM's
    ``bagging_fraction`` without a frequency (which LightGBM would not apply) is refused
    rather than applied silently."""
    frequency_names = [name for name in ("bagging_freq", "subsample_freq") if name in params]
    if not frequency_names:
        if "bagging_fraction" in params and params["bagging_fraction"] != 1:
            raise ValueError("bagging_fraction acts in LightGBM only with bagging_freq > 0: give bagging_freq=1 "
                             "(boosters draws a new sample every round), or use subsample")
        return params
    frequencies = {params[name] for name in frequency_names}
    if len(frequencies) > 1:
        raise ValueError(f"bagging_freq and subsample_freq are one parameter given different values: {params}")
    frequency = frequencies.pop()
    if not _is_one_of(frequency, (0, 1)):
        raise ValueError(f"{frequency_names[0]}={frequency!r}: boosters draws a new row sample every round; give "
                         f"{frequency_names[0]}=1 (every round) or 0 (no bagging)")
    rest = {name: value for name, value in params.items() if name not in frequency_names}
    if frequency == 0:  # LightGBM: no bagging, whatever the fraction (so not boosters' default share either)
        for name in ("bagging_fraction", "subsample", "sub_row", "bagging"):
            rest.pop(name, None)
        rest["subsample"] = 1.0
    return rest


def split_thread_params(params: dict) -> tuple[int, dict]:
    """The thread count of a params dict and the other parameters, for
    ``GBDTConfig(**rest)`` and ``GBDTModel.train(..., n_threads=n_threads)``.

    Threads are not a `GBDTConfig` parameter (the same model trains on any number of
    them). The names are boosters' ``n_threads``, LightGBM's ``num_threads`` /
    ``num_thread`` / ``nthread``, XGBoost's ``nthread`` and scikit-learn's ``n_jobs``;
    the value is read as `threads_from_n_jobs` reads it (None, 0 and -1: every core).

    Parameters
    ----------
    params : dict
        A params dict, as LightGBM's and XGBoost's ``train`` take it.

    Returns
    -------
    n_threads : int
        0 (every core) when no thread name is given.
    rest : dict
        The other parameters.

    Examples
    --------
    >>> from boosters._lib.parameter_names import split_thread_params
    >>> split_thread_params({"objective": "binary", "num_threads": 4})
    (4, {'objective': 'binary'})
    """
    given = {name: params[name] for name in THREAD_NAMES if name in params}
    counts = {name: threads_from_n_jobs(value, name) for name, value in given.items()}
    if len(set(counts.values())) > 1:
        raise ValueError(f"thread counts given twice with different values: {given}")
    rest = {name: value for name, value in params.items() if name not in THREAD_NAMES}
    return (next(iter(counts.values())) if counts else 0), rest


def threads_from_n_jobs(value, name: str = "n_jobs") -> int:
    """boosters' n_threads (0: every core) from scikit-learn's / joblib's n_jobs: None, 0
    and -1 are every core, -k (k >= 2) every core but k - 1 (at least one), as joblib;
    a positive count stays. The kernels resolve 0 and negatives (`effective_n_threads`),
    so this only checks the type and keeps None as 0."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int or None (all cores), got {type(value).__name__} {value!r}")
    return int(value)


def _is_one_of(value, allowed: tuple) -> bool:
    """`value` is one of `allowed`: True is not 1, NaN is NaN."""
    def same(a):
        if isinstance(value, float) and isinstance(a, float) and value != value:
            return a != a
        return value is a or (type(value) is not bool and type(a) is not bool and value == a)
    return any(same(a) for a in allowed)


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays
        return a is b


def catboost_bootstrap(params: dict) -> dict:
    """CatBoost's ``bootstrap_type``: "Bayesian" is ``bagging_temperature`` (CatBoost's
    default 1 when not given), "Bernoulli" is ``subsample`` (which must be given: CatBoost's
    default depends on the data), "No" is neither (``subsample=1`` unless given); "MVS" and "Poisson" are refused.
    ``bagging_temperature`` with another bootstrap_type is refused, as CatBoost does."""
    if "bootstrap_type" not in params:
        return params
    params = dict(params)
    kind = params.pop("bootstrap_type")
    name = kind.lower() if isinstance(kind, str) else kind
    if name not in ("bayesian", "bernoulli", "no"):
        raise ValueError(f"bootstrap_type={kind!r} is not supported: boosters has 'Bayesian' (bagging_temperature), "
                         "'Bernoulli' (subsample) and 'No'; for MVS-like sampling see goss_top_rate / goss_other_rate")
    if name == "bayesian":  # None would switch the bootstrap off: CatBoost's default temperature instead
        if params.get("bagging_temperature") is None:
            params["bagging_temperature"] = 1.0
    elif params.get("bagging_temperature") is not None:
        raise ValueError(f"bagging_temperature acts only with bootstrap_type='Bayesian', got bootstrap_type={kind!r}")
    if name == "bernoulli" and not any(n in params for n in ("subsample", "bagging_fraction", "sub_row", "bagging")):
        raise ValueError("bootstrap_type='Bernoulli' is boosters' subsample: give subsample (CatBoost's default "
                         "depends on the data)")
    shares = [params[n] for n in ("subsample", "bagging_fraction", "sub_row", "bagging") if n in params]
    if name == "no" and all(share == DEFAULT_SUBSAMPLE for share in shares):  # none given (the estimators pass it)
        for share_name in ("subsample", "bagging_fraction", "sub_row", "bagging"):
            params.pop(share_name, None)
        params["subsample"] = 1.0  # every row, whatever boosters' default share
    return params
