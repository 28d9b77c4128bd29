"""Checks of a decoded model file: the JSON header's schema and the arrays, before any of
it reaches a kernel. Every problem raises ValueError (or TypeError) naming the field."""

from __future__ import annotations

import itertools
import warnings
import numbers
from typing import Any, TypeGuard

import numpy as np

from boosters.config import CustomObjective, GBDTConfig, Metric, Objective
from boosters.objectives.registry import OBJECTIVES
from boosters.data.categories import MAX_CATEGORIES
from boosters.model.ensemble import Ensemble
from boosters.model.forest import Forest
from boosters.model.validation import LINEAR_ARRAY_DTYPES, TREE_ARRAY_NAMES

FORMAT_VERSION = 1
# output groups of a model converted from another library: a prediction holds one value per
# row and output, so a few bytes of header must not ask for millions of them (check_outputs)
MAX_OUTPUTS = 1 << 20
HEADER_FIELDS = ("format_version", "objective", "n_features", "feature_names", "best_iteration",
                 "best_score", "eval_history", "n_groups", "config")
# categorical splits: written only by models that have some (older files have none)
CATEGORY_MEMBERS = ("category_set", "tree_cat_sets", "cat_boundaries", "cat_bitsets")
# linear leaves: written only by models that have them
LINEAR_MEMBERS = tuple(LINEAR_ARRAY_DTYPES)
ARRAY_NAMES = ("header", "base_scores", "tree_group", "tree_sizes", *TREE_ARRAY_NAMES,
               *CATEGORY_MEMBERS[1:], *LINEAR_MEMBERS)
# config fields written only when linear_leaves is on (older files stay as they were)
LINEAR_CONFIG_FIELDS = ("linear_leaves", "linear_l1", "linear_l2")
# the categorical mapping: written (both) only by models with categorical features, so a
# model without them is the file older versions write
CATEGORY_FIELDS = ("categorical_features", "categories")


# DART's parameters: written only when away from their defaults, so older files stay as they were
DART_FIELDS = ("booster", "drop_rate", "skip_drop", "max_drop", "xgboost_dart_mode")
# ordered target statistics: the config fields, written only with cat_encoding="ordered_ctr",
# and the header field of the tables (only in such models; older files have neither)
CTR_CONFIG_FIELDS = ("cat_encoding", "ctr_prior_weight")
CTR_FIELD = "target_statistics"
# random_strength and the Bayesian bootstrap: written only when on, as DART's
RANDOMNESS_FIELDS = ("random_strength", "bagging_temperature")


def config_to_json(config: GBDTConfig) -> dict:
    out = config.to_dict()
    defaults = GBDTConfig().to_dict()
    for name in (*DART_FIELDS, *RANDOMNESS_FIELDS):
        if out[name] == defaults[name]:
            del out[name]
    out["objective"] = objective_to_json(config.objective)
    out["metric"] = metrics_to_json(config.metric)
    out["growth_strategy"] = config.growth_strategy.value
    if isinstance(config.monotone_constraints, dict):  # JSON keys are strings: keep indices apart from names
        out["monotone_constraints"] = {"by_feature": [[key, d] for key, d in config.monotone_constraints.items()]}
    if not config.linear_leaves:
        for name in LINEAR_CONFIG_FIELDS:
            del out[name]
    if config.cat_encoding == "splits":
        for name in CTR_CONFIG_FIELDS:
            del out[name]
    return out


def config_from_json(data) -> GBDTConfig:
    if not isinstance(data, dict):
        raise ValueError(f"config must be an object, got {type(data).__name__}")
    data = dict(data)
    data["objective"] = objective_from_json(data.get("objective"))
    data["metric"] = metrics_from_json(data.get("metric"))
    monotone = data.get("monotone_constraints")
    if isinstance(monotone, dict):
        pairs = monotone.get("by_feature")
        if set(monotone) != {"by_feature"} or not isinstance(pairs, list) or \
                not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise ValueError("config.monotone_constraints must be a list or {'by_feature': [[feature, direction], ...]}")
        data["monotone_constraints"] = dict((key, d) for key, d in pairs)
    with warnings.catch_warnings():  # the file's settings as trained: a leaf-limit warning is not the reader's
        warnings.filterwarnings("ignore", message="n_leaves=", category=UserWarning)
        return GBDTConfig(**data)


def metrics_to_json(metric):
    """The config's metric: null, a label, or a list of labels (several metrics). A custom
    metric (a callable) is not written: a model file holds no code (a single one: null)."""
    if isinstance(metric, tuple):
        labels = [m.label for m in metric if isinstance(m, Metric)]
        return labels or None
    return metric.label if isinstance(metric, Metric) else None


def metrics_from_json(data):
    """The inverse of `metrics_to_json`, checked."""
    if data is None:
        return None
    if isinstance(data, str):
        return Metric(data)
    if not isinstance(data, list) or not data or not all(isinstance(m, str) for m in data):
        raise ValueError(f"config.metric must be a name, a non-empty list of names or null, got {data!r}")
    return tuple(Metric(m) for m in data)


# an objective's parameters in the order files write them, after its name and n_classes (always
# written): each only when set, so that the files of objectives without it stay as they were
PARAMETER_KEYS: tuple[str, ...] = Objective.__slots__[2:]  # ndcg_at, variance_power, n_targets, alpha, delta


def _parameter_key_sets() -> list[frozenset]:
    """The sets of PARAMETER_KEYS a file's objective may have: each definition's parameters
    with a default (always set) plus any of those without (n_targets). Not matched to the
    name: a name with another's key reaches Objective's message ("alpha only applies to
    pinball, not absolute")."""
    out = []
    for fn in OBJECTIVES:
        always = {p.name for p in fn.parameters if p.default is not None}
        optional = [p.name for p in fn.parameters if p.default is None and p.name in PARAMETER_KEYS]
        for n in range(len(optional) + 1):
            out += [frozenset(always.union(extra)) for extra in itertools.combinations(optional, n)]
    return out


OBJECTIVE_KEY_SETS = {frozenset({"name", "n_classes", *keys}) for keys in _parameter_key_sets()}


def objective_to_json(objective: Objective) -> dict:
    out: dict[str, Any] = {"name": objective.name, "n_classes": objective.n_classes}
    if isinstance(objective, CustomObjective):  # its outputs; the function is not written
        out["n_outputs"] = objective.n_outputs
    for key in PARAMETER_KEYS:
        value = getattr(objective, key)
        if value is not None:
            out[key] = list(value) if isinstance(value, tuple) else value  # pinball's levels
    return out


def objective_from_json(data) -> Objective:
    if isinstance(data, dict) and data.get("name") == "custom":
        if set(data) != {"name", "n_classes", "n_outputs"} or data["n_classes"] is not None \
                or not _is_int(data["n_outputs"]):
            raise ValueError(f"a custom objective must be {{'name': 'custom', 'n_classes': null, 'n_outputs': "
                             f"int}}, got {data!r}")
        return CustomObjective(None, data["n_outputs"])
    if not isinstance(data, dict) or frozenset(data) not in OBJECTIVE_KEY_SETS:
        raise ValueError(f"objective must be {{'name': ..., 'n_classes': ...}}, got {data!r}")
    n_targets = data.get("n_targets")
    if "n_targets" in data and (not _is_int(n_targets) or n_targets < 2):
        raise ValueError(f"objective.n_targets must be an int >= 2 when present, got {n_targets!r}")
    alpha = data.get("alpha")
    if alpha is not None and not (_is_number(alpha) or (isinstance(alpha, list) and all(map(_is_number, alpha)))):
        raise ValueError(f"objective alpha must be a number or a list of numbers, got {alpha!r}")
    return Objective(data["name"], data["n_classes"], **{key: data.get(key) for key in PARAMETER_KEYS})


def categories_to_json(categories: dict) -> dict:
    """The categorical features (sorted indices) and, aligned with them, each one's
    categories in code order (a list of strings or of integers) or null (integer codes);
    nothing without categorical features."""
    if not categories:
        return {}
    features = sorted(categories)
    return {"categorical_features": features,
            "categories": [None if categories[f] is None else categories[f].tolist() for f in features]}


def categories_from_json(features, values, n_features: int) -> dict:
    """The inverse of `categories_to_json`, checked: distinct sorted feature indices
    below n_features, and per feature null or a list of at most MAX_CATEGORIES distinct
    strings or distinct integers."""
    if (not isinstance(features, list) or not all(_is_int(f) and 0 <= f < n_features for f in features)
            or features != sorted(set(features))):
        raise ValueError(f"categorical_features must be a sorted list of distinct feature indices below "
                         f"{n_features}")
    if not isinstance(values, list) or len(values) != len(features):
        raise ValueError(f"categories must be a list of {len(features)} entries, one per categorical feature")
    out: dict[int, np.ndarray | None] = {}
    for f, items in zip(features, values):
        if items is None:
            out[f] = None
            continue
        if (not isinstance(items, list) or len(items) > MAX_CATEGORIES
                or not (all(isinstance(v, str) for v in items)
                        or all(_is_int(v) and -2**63 <= v < 2**63 for v in items))):
            raise ValueError(f"categories of feature {f} must be null or a list of at most {MAX_CATEGORIES} "
                             f"strings or of int64 integers")
        if len(set(items)) != len(items):
            raise ValueError(f"categories of feature {f} repeat a value")
        out[f] = (np.array(items, dtype=object).reshape(-1) if not items or isinstance(items[0], str)
                  else np.array(items, dtype=np.int64))
    return out


def statistics_to_json(tables: dict) -> dict:
    """A model's target statistics (feature -> its table: a statistic per code, then the
    prior) as the header field: {"features": sorted indices, "tables": lists of numbers};
    nothing without them."""
    if not tables:
        return {}
    features = sorted(tables)
    return {CTR_FIELD: {"features": features, "tables": [tables[f].tolist() for f in features]}}


def statistics_from_json(data, categories: dict) -> dict:
    """The inverse of `statistics_to_json`, checked: each feature categorical, its table
    finite numbers, one per category (the feature's categories, when it has them) and
    the prior."""
    if data is None:
        return {}
    if not isinstance(data, dict) or set(data) != {"features", "tables"}:
        raise ValueError(f"{CTR_FIELD} must be an object of 'features' and 'tables'")
    features, tables = data["features"], data["tables"]
    if (not isinstance(features, list) or not all(_is_int(f) and f in categories for f in features)
            or features != sorted(set(features))):
        raise ValueError(f"{CTR_FIELD}.features must be sorted distinct categorical features")
    if not isinstance(tables, list) or len(tables) != len(features):
        raise ValueError(f"{CTR_FIELD}.tables must hold one table per feature")
    out = {}
    for f, table in zip(features, tables):
        if not isinstance(table, list) or not 1 <= len(table) <= MAX_CATEGORIES + 1 \
                or not all(_is_number(v) for v in table):
            raise ValueError(f"{CTR_FIELD}: the table of feature {f} must be 1 to {MAX_CATEGORIES + 1} numbers")
        values = np.array(table, dtype=np.float64)
        if not np.isfinite(values).all():
            raise ValueError(f"{CTR_FIELD}: the table of feature {f} must be finite")
        if categories[f] is not None and len(values) != len(categories[f]) + 1:
            raise ValueError(f"{CTR_FIELD}: the table of feature {f} must hold {len(categories[f]) + 1} numbers "
                             f"(one per category, then the prior)")
        out[f] = values
    return out


def _is_int(value) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_header(header) -> None:
    if not isinstance(header, dict):
        raise ValueError(f"the header must be a JSON object, got {type(header).__name__}")
    if header.get("format_version") != FORMAT_VERSION or not _is_int(header["format_version"]):
        raise ValueError(f"unsupported format_version {header.get('format_version')!r} "
                         f"(this version reads {FORMAT_VERSION})")
    fields = set(header) - set(CATEGORY_FIELDS) - {CTR_FIELD}
    if fields != set(HEADER_FIELDS):
        raise ValueError(f"header fields: missing {sorted(set(HEADER_FIELDS) - fields)}, "
                         f"unexpected {sorted(fields - set(HEADER_FIELDS))}")
    if len(set(header) & set(CATEGORY_FIELDS)) == 1:
        raise ValueError(f"header fields {list(CATEGORY_FIELDS)} come together")
    n_features = header["n_features"]
    if not _is_int(n_features) or not 1 <= n_features < 2**31:
        raise ValueError(f"n_features must be an int in [1, 2**31), got {n_features!r}")
    names = header["feature_names"]
    if names is not None and (not isinstance(names, list) or len(names) != n_features
                              or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names)):
        raise ValueError(f"feature_names must be null or {n_features} distinct strings")
    best = header["best_iteration"]
    if best is not None and (not _is_int(best) or best < 0):
        raise ValueError(f"best_iteration must be null or an int >= 0, got {best!r}")
    if header["best_score"] is not None and not _is_number(header["best_score"]):
        raise ValueError(f"best_score must be null or a number, got {header['best_score']!r}")
    history = header["eval_history"]
    if not isinstance(history, list) or not all(_is_number(s) for s in history):
        raise ValueError("eval_history must be a list of numbers")
    if not _is_int(header["n_groups"]):
        raise ValueError(f"n_groups must be an int, got {header['n_groups']!r}")


def check_outputs(n_outputs: int, n_trees: int) -> None:
    """ValueError unless a converted model's number of outputs (classes, targets) is at
    most MAX_OUTPUTS and, with several, it has at least as many trees (a tree per output
    and round): its file then grows with the outputs it asks for."""
    if n_outputs > MAX_OUTPUTS:
        raise ValueError(f"{n_outputs} outputs (classes or targets) is more than the {MAX_OUTPUTS} boosters converts")
    if n_outputs > 1 and n_trees < n_outputs:
        raise ValueError(f"{n_outputs} outputs (classes or targets) but only {n_trees} trees: at least one round of "
                         f"a tree per output is needed")


def _array(members: dict, name: str, dtype) -> np.ndarray:
    arr = members[name]
    if arr.dtype != dtype:
        raise ValueError(f"{name} must be {np.dtype(dtype)}, got {arr.dtype}")
    return arr


def ensemble_from_parts(header, members: dict) -> Ensemble:
    """The Ensemble of a decoded file: header (parsed JSON) and arrays by member name."""
    _check_header(header)
    objective = objective_from_json(header["objective"])
    if header["n_groups"] != objective.n_outputs:
        raise ValueError(f"n_groups is {header['n_groups']} but {objective!r} has {objective.n_outputs} outputs")
    config = None if header["config"] is None else config_from_json(header["config"])
    if config is not None and config.objective != objective:
        raise ValueError(f"config.objective {config.objective!r} is not the model's {objective!r}")

    present = [name in members for name in CATEGORY_MEMBERS]
    if any(present) and not all(present):
        raise ValueError(f"the category arrays {list(CATEGORY_MEMBERS)} come together")
    categories = None
    if all(present):
        categories = (_array(members, "tree_cat_sets", np.int64), _array(members, "cat_boundaries", np.int64),
                      _array(members, "cat_bitsets", np.uint32))
    else:
        members = {**members, "category_set": np.full(len(members.get("split_feature", ())), -1, np.int32)}
    linear_present = [name in members for name in LINEAR_MEMBERS]
    if any(linear_present) and not all(linear_present):
        raise ValueError(f"the linear leaf arrays {list(LINEAR_MEMBERS)} come together")
    linear = {name: members[name] for name in LINEAR_MEMBERS} if all(linear_present) else None
    if config is not None and config.linear_leaves != (linear is not None):
        raise ValueError(f"config.linear_leaves is {config.linear_leaves} but the file "
                         f"{'has' if linear is not None else 'has no'} linear leaf arrays")
    missing = sorted(set(ARRAY_NAMES) - set(CATEGORY_MEMBERS) - set(LINEAR_MEMBERS) - {"header"} - set(members))
    if missing:
        raise ValueError(f"missing arrays {missing}")
    sizes = _array(members, "tree_sizes", np.int64)
    n_nodes = len(members["split_feature"])
    if np.any((sizes < 1) | (sizes > n_nodes)):  # bounded before the sum, which cannot overflow then
        raise ValueError(f"tree_sizes must be in [1, {n_nodes}]")
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    forest = Forest.from_flat(header["n_groups"], _array(members, "base_scores", np.float64),
                              {name: members[name] for name in TREE_ARRAY_NAMES}, offsets,
                              _array(members, "tree_group", np.int32), categories, linear)
    used = forest.flat().n_features
    if used > header["n_features"]:
        raise ValueError(f"a tree splits on feature {used - 1} but the model has {header['n_features']} features")
    n_rounds = forest.n_trees // max(1, header["n_groups"])
    if header["best_iteration"] is not None and header["best_iteration"] >= n_rounds:
        raise ValueError(f"best_iteration {header['best_iteration']} is not a round of the model's {n_rounds}")
    feature_categories = categories_from_json(header.get("categorical_features", []), header.get("categories", []),
                                              header["n_features"])
    return Ensemble(forest, objective, header["n_features"], header["feature_names"], config,
                    header["best_iteration"], header["best_score"], header["eval_history"], feature_categories,
                    statistics_from_json(header.get(CTR_FIELD), feature_categories))
