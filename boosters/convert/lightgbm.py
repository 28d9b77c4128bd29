"""LightGBM models as boosters models: `from_lightgbm`.

LightGBM's text model (its own format, `lightgbm_text.py` splits it) is read without
LightGBM and turned into the arrays of a boosters model file, which `io.validation`
checks as it checks any file. The split rules map one to one, except LightGBM's
zero-as-missing splits, which a boosters node can hold only in some cases:

- numeric split: x <= threshold goes left, in double, as here. Missing type None
  (LightGBM turns NaN into 0.0 before comparing): NaN goes where 0.0 goes. Missing type
  NaN: NaN goes to the default side. Missing type Zero: |x| <= 1e-35 (LightGBM's
  kZeroThreshold, as float32) and NaN go to the default side, which one node holds
  when the rest is still "x <= t" for some t; otherwise ValueError;
- categorical split: the code's bit in the node's set goes left; NaN, negative codes and
  codes past the set go right (the default side here);
- trees are stored as LightGBM stores them, internal nodes then leaves (leaf j is node
  num_leaves - 1 + j), which keeps children after parents: LightGBM numbers a node
  after its parent.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from boosters.config import CustomObjective, Objective
from boosters.convert.lightgbm_text import ModelText, parse_floats, parse_int, parse_ints, parse_model_text
from boosters.explain.shap import leaf_roundoff_as_zero
from boosters.gbdt_model import GBDTModel
from boosters.io.atomic import read_regular_file
from boosters.io.json_format import is_json_document
from boosters.io.validation import (FORMAT_VERSION, MAX_OUTPUTS, check_outputs, ensemble_from_parts,
                                   objective_to_json)
from boosters.model.validation import LINEAR_ARRAY_DTYPES, MAX_SET_WORDS, TREE_ARRAY_DTYPES

__all__ = ["from_lightgbm"]

ZERO_THRESHOLD = float(np.float32(1e-35))  # LightGBM's kZeroThreshold: |x| <= it is "zero"
CATEGORICAL_BIT, DEFAULT_LEFT_BIT = 1, 2   # decision_type bits; bits 2-3: the missing type
MISSING_NONE, MISSING_ZERO, MISSING_NAN = 0, 1, 2
VERSIONS = ("v2", "v3", "v4")
# LightGBM objectives without a boosters equivalent: why each is refused
REFUSED_OBJECTIVES = {
    "fair": "boosters has no Fair loss",
    "mape": "boosters has no MAPE objective",
    "cross_entropy_lambda": "its output transform log(1 + exp(x)) is not one of boosters'",
    "rank_xendcg": "boosters has no XE-NDCG ranking objective",
}


def from_lightgbm(booster_or_path) -> GBDTModel:
    """A LightGBM model as a boosters model, predicting what LightGBM predicts.

    The text model is read by boosters itself (a file or its text needs no LightGBM)
    and checked completely before a model exists. Numeric and categorical splits,
    missing values, linear trees, DART, and every objective boosters has are converted;
    the predictions equal LightGBM's up to floating-point rounding (the trees are summed
    in LightGBM's order; in practice they are bit-identical).

    Parameters
    ----------
    booster_or_path : lightgbm.Booster, lightgbm.LGBMModel, str, os.PathLike or bytes
        A Booster (its `model_to_string()`: with early stopping, the trees up to the best
        iteration, which becomes ``best_iteration``), a fitted scikit-learn estimator
        (its ``booster_``), the path of a model file (`save_model`), or the model's
        text (a str of several lines, or its UTF-8 bytes). Not LightGBM's JSON dump
        (``dump_model``): ValueError.

    Returns
    -------
    GBDTModel
        The trees as LightGBM stores them (internal nodes, then leaf j at node
        ``num_leaves - 1 + j``), base score 0 (LightGBM's starting score is in its first
        trees), the objective's output transform, feature names (None for LightGBM's
        ``Column_i`` names) and, for a model trained on a pandas frame, the categories of
        its categorical columns (frames are coded by value, as LightGBM does).

    Raises
    ------
    ValueError
        "LightGBM model: ..." naming what is wrong or what boosters cannot represent:
        a damaged or hostile file; a random forest (``boosting="rf"`` averages its
        trees); objectives boosters lacks (fair, mape, cross_entropy_lambda,
        rank_xendcg), ``sigmoid`` other than 1, ``reg_sqrt``; a zero-as-missing split
        no single node can hold; ``pandas_categorical`` lists that cannot be matched to
        the categorical features.
    TypeError
        For an argument of another type.

    Notes
    -----
    Differences on inputs LightGBM does not train on: in a linear leaf, +-inf takes the leaf's constant value as NaN does (LightGBM multiplies
    it). `predict_leaf` gives node indices: LightGBM's leaf j is node ``num_leaves - 1 +
    j`` of its tree.

    Examples
    --------
    >>> import lightgbm as lgb
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3))
    >>> X[::10, 0] = np.nan
    >>> y = np.nan_to_num(X[:, 0]) + X[:, 1] ** 2
    >>> booster = lgb.train({"num_leaves": 8, "verbose": -1}, lgb.Dataset(X, y), num_boost_round=20)
    >>> from boosters.convert import from_lightgbm
    >>> model = from_lightgbm(booster)
    >>> model.n_trees, model.objective
    (20, Objective.squared())
    >>> np.array_equal(model.predict(X), booster.predict(X))
    True

    A saved model, read without LightGBM:

    >>> text = booster.model_to_string()
    >>> np.array_equal(from_lightgbm(text).predict(X), model.predict(X))
    True
    """
    text, best_iteration = _model_text(booster_or_path)
    try:
        header, members = model_parts(parse_model_text(text), best_iteration)
        ensemble = ensemble_from_parts(header, members)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"LightGBM model: {exc}") from exc
    return GBDTModel(ensemble)


def _model_text(source) -> tuple[str, int | None]:
    """The model's text, and the best iteration (0-based) a Booster knows of."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _text(bytes(source)), None
    # a path has no line break, nor is it a JSON document (dump_model's: refused by _text)
    if isinstance(source, str) and ("\n" in source or not source or is_json_document(source)):
        return _text(source), None
    if isinstance(source, (str, os.PathLike)):
        return _text(read_regular_file(source)), None
    booster = getattr(source, "booster_", source)  # a scikit-learn estimator: its Booster
    if not callable(getattr(booster, "model_to_string", None)):
        raise TypeError(f"booster_or_path must be a lightgbm Booster or LGBMModel, a path, or a model's text "
                        f"(str or bytes), got {type(source).__name__}")
    best = getattr(booster, "best_iteration", 0)  # 1-based, 0: none; model_to_string stops there
    return booster.model_to_string(), (best - 1 if isinstance(best, int) and best > 0 else None)


def _text(data: bytes | str) -> str:
    """The model's text (UTF-8); ValueError for LightGBM's JSON dump, which is not it."""
    try:
        text = data if isinstance(data, str) else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"LightGBM model: the text is not UTF-8 ({exc})") from None
    if is_json_document(text):  # a text model starts with the line "tree"
        raise ValueError("LightGBM model: this is JSON (Booster.dump_model); from_lightgbm reads LightGBM's text "
                         "model format, as Booster.model_to_string() returns and Booster.save_model() writes")
    return text


def model_parts(model: ModelText, best_iteration: int | None = None) -> tuple[dict, dict]:
    """The (header, arrays) of a boosters model file (`io.validation.ensemble_from_parts`
    checks them) for a parsed LightGBM text model; ValueError for what cannot be held."""
    h = model.header
    missing = [key for key in ("version", "num_class", "max_feature_idx", "feature_names", "feature_infos")
               if key not in h]
    if missing:
        raise ValueError(f"the header lacks {', '.join(missing)}")
    if h["version"] not in VERSIONS:
        raise ValueError(f"version {h['version']!r} is not one this reader knows ({', '.join(VERSIONS)})")
    if "average_output" in h:
        raise ValueError("a random forest (boosting='rf') averages its trees' outputs; a boosters model sums them")
    n_features = parse_int(h["max_feature_idx"], "max_feature_idx", 0, 2**31 - 2) + 1
    names = h["feature_names"].split(" ")
    infos = h["feature_infos"].split(" ")
    for key, items in (("feature_names", names), ("feature_infos", infos)):
        if len(items) != n_features:
            raise ValueError(f"{key} has {len(items)} entries, max_feature_idx says {n_features}")
    num_class = parse_int(h["num_class"], "num_class", 1, MAX_OUTPUTS)
    per_iteration = parse_int(h.get("num_tree_per_iteration", h["num_class"]), "num_tree_per_iteration", 1,
                              MAX_OUTPUTS)
    objective = lightgbm_objective(h.get("objective"), num_class, per_iteration, model.parameters)
    if objective.n_outputs != per_iteration:
        raise ValueError(f"{objective!r} has {objective.n_outputs} outputs but num_tree_per_iteration is "
                         f"{per_iteration}")
    trees = [convert_tree(fields, t, n_features) for t, fields in enumerate(model.trees)]
    check_outputs(per_iteration, len(trees))
    if len(trees) % per_iteration:
        raise ValueError(f"{len(trees)} trees are not whole iterations of {per_iteration}")
    if "tree_sizes" in h:
        parse_ints(h["tree_sizes"], "tree_sizes", len(trees))
    if best_iteration is not None and best_iteration >= len(trees) // per_iteration:
        best_iteration = None
    categories = feature_categories(trees, infos, names, model.parameters, model.pandas_categorical)
    header = {"format_version": FORMAT_VERSION, "objective": objective_to_json(objective),
              "n_features": n_features, "feature_names": _feature_names(names),
              "best_iteration": best_iteration, "best_score": None, "eval_history": [],
              "n_groups": per_iteration, "config": None}
    if categories:
        header.update(categorical_features=sorted(categories), categories=[categories[f] for f in sorted(categories)])
    return header, _members(trees, per_iteration)


def _feature_names(names: list) -> list | None:
    """None for the names LightGBM makes up when it has none (Column_0, Column_1, ...)."""
    return None if names == [f"Column_{i}" for i in range(len(names))] else names


def lightgbm_objective(spec: str | None, num_class: int, per_iteration: int, parameters: dict) -> Objective:
    """The boosters objective of LightGBM's `objective=` line (None: a custom objective,
    whose raw scores LightGBM predicts); the training parameters give alpha and the like."""
    if spec is None:
        return CustomObjective(None, per_iteration)
    name, *tokens = spec.split(" ")
    options = dict(token.partition(":")[::2] for token in tokens if ":" in token)
    flags = [token for token in tokens if ":" not in token]
    if name in REFUSED_OBJECTIVES:
        raise ValueError(f"objective {name!r} cannot be converted: {REFUSED_OBJECTIVES[name]}")
    if name == "regression" and flags == ["sqrt"]:
        raise ValueError("objective 'regression' with reg_sqrt (predictions squared) cannot be converted: "
                         "boosters has no such output transform")
    allowed = {"binary": {"sigmoid"}, "multiclass": {"num_class"}, "multiclassova": {"num_class", "sigmoid"}}
    unknown = flags + sorted(set(options) - allowed.get(name, set()))
    if unknown or len(options) != len(tokens) - len(flags):
        raise ValueError(f"objective {spec!r}: unknown options {unknown}")
    if "sigmoid" in options and parse_floats(options["sigmoid"], "objective sigmoid", 1)[0] != 1.0:
        raise ValueError(f"objective {name!r} with sigmoid:{options['sigmoid']} cannot be converted: boosters' "
                         f"sigmoid is 1 / (1 + exp(-x)) (sigmoid 1)")
    if "num_class" in options and parse_int(options["num_class"], "objective num_class", 1, MAX_OUTPUTS) != num_class:
        raise ValueError(f"objective {spec!r} disagrees with num_class={num_class}")

    def parameter(key: str, default: float) -> float:
        return parse_floats(parameters[key], key, 1)[0] if key in parameters else default

    simple = {"regression": Objective.squared, "regression_l1": Objective.absolute, "binary": Objective.logistic,
              "cross_entropy": Objective.logistic, "poisson": Objective.poisson, "gamma": Objective.gamma}
    if name in simple:
        return simple[name]()
    if name in ("multiclass", "multiclassova"):
        return Objective.softmax(num_class) if name == "multiclass" else Objective.one_vs_rest(num_class)
    if name == "huber":  # LightGBM's alpha is Huber's delta
        return Objective.huber(float(parameter("alpha", 0.9)))
    if name == "quantile":
        return Objective.pinball(float(parameter("alpha", 0.9)))
    if name == "tweedie":
        return Objective.tweedie(float(parameter("tweedie_variance_power", 1.5)))
    if name == "lambdarank":
        level = parameters.get("lambdarank_truncation_level", "30")
        return Objective.lambdarank(parse_int(level, "lambdarank_truncation_level", 1, 2**31 - 1))
    raise ValueError(f"unknown objective {name!r}")


class ConvertedTree(NamedTuple):
    """A LightGBM tree as boosters arrays, and which features it splits on how."""

    nodes: dict               # TREE_ARRAY_NAMES -> per node (internal nodes, then leaves)
    boundaries: np.ndarray    # its category sets' word boundaries (from 0)
    words: np.ndarray         # uint32: the sets' words
    linear: dict | None       # LINEAR_ARRAY_DTYPES names -> arrays, for a linear tree
    numeric_features: set
    categorical_features: set


class TreeFields:
    """A tree's `key=value` fields, read as numbers and checked; errors name the tree."""

    def __init__(self, fields: dict, t: int):
        self.fields, self.where = fields, f"tree {t}"

    def floats(self, key: str, n: int | None, required: bool = False) -> np.ndarray:
        """`n` numbers (zeros when absent and not required)."""
        if key not in self.fields:
            return self._absent(key, n, required, np.float64)
        return parse_floats(self.fields[key], f"{self.where}: {key}", n)

    def ints(self, key: str, n: int | None, low: int, high: int, required: bool = False) -> np.ndarray:
        """`n` integers in [low, high] (zeros when absent and not required)."""
        if key not in self.fields:
            return self._absent(key, n, required, np.int64)
        values = parse_ints(self.fields[key], f"{self.where}: {key}", n)
        outside = (values < low) | (values > high)
        if np.any(outside):
            raise ValueError(f"{self.where}: {key} must be in [{low}, {high}], got {values[outside][0]}")
        return values

    def _absent(self, key: str, n: int | None, required: bool, dtype) -> np.ndarray:
        if required or n is None:
            raise ValueError(f"{self.where} lacks {key}")
        return np.zeros(n, dtype=dtype)


def convert_tree(fields: dict, t: int, n_features: int) -> ConvertedTree:
    """One LightGBM tree as boosters node arrays (internal nodes, then leaves), with its
    category sets and linear leaves; ValueError naming the tree and field."""
    read = TreeFields(fields, t)
    for key in ("num_leaves", "num_cat", "leaf_value"):
        if key not in fields:
            raise ValueError(f"{read.where} lacks {key}")
    n_leaves = parse_int(fields["num_leaves"], f"{read.where}: num_leaves", 1, 2**31 - 1)
    n_internal = n_leaves - 1
    n_cat = parse_int(fields["num_cat"], f"{read.where}: num_cat", 0, n_internal)
    leaf_value = read.floats("leaf_value", n_leaves, required=True)
    split = n_internal > 0  # a one-leaf tree needs no split arrays (LightGBM does not read them)
    feature = read.ints("split_feature", n_internal, 0, n_features - 1, required=split)
    threshold = read.floats("threshold", n_internal, required=split)
    decision = read.ints("decision_type", n_internal, 0, 15)
    left, right = (_node_index(read.ints(key, n_internal, -n_leaves, n_internal - 1, required=split), n_internal)
                   for key in ("left_child", "right_child"))
    if np.any(np.isnan(threshold)):
        raise ValueError(f"{read.where}: a threshold is NaN")
    categorical = (decision & CATEGORICAL_BIT) > 0
    missing_type = (decision >> 2) & 3
    if np.any(missing_type[~categorical] == 3):
        raise ValueError(f"{read.where}: decision_type has missing type 3 (known: 0 none, 1 zero, 2 NaN)")
    threshold, default_left = _numeric_splits(threshold, (decision & DEFAULT_LEFT_BIT) > 0, missing_type,
                                              categorical, read.where)
    category_set = np.full(n_leaves + n_internal, -1, dtype=np.int32)
    category_set[:n_internal][categorical] = _set_indices(threshold[categorical], n_cat, read.where)
    threshold[categorical], default_left[categorical] = 0.0, False  # NaN, negative, unseen codes: right
    boundaries, words = _category_sets(read, n_cat)

    def per_node(internal, leaves, dtype):
        return np.concatenate([internal, leaves]).astype(dtype)

    leaves_none = np.full(n_leaves, -1)
    nodes = {
        "split_feature": per_node(feature, leaves_none, np.int32),
        "threshold": per_node(threshold, np.zeros(n_leaves), np.float64),
        "threshold_bin": np.zeros(n_internal + n_leaves, dtype=np.int32),
        "default_left": per_node(default_left, np.zeros(n_leaves), np.uint8),
        "left_child": per_node(left, leaves_none, np.int32),
        "right_child": per_node(right, leaves_none, np.int32),
        "value": per_node(read.floats("internal_value", n_internal), leaf_value, np.float64),
        "gain": per_node(read.floats("split_gain", n_internal), np.zeros(n_leaves), np.float64),
        "cover": per_node(read.floats("internal_weight", n_internal),  # a one-leaf tree writes no leaf_weight
                          read.floats("leaf_weight", n_leaves) if split else np.zeros(1), np.float64),
        "n_samples": per_node(read.ints("internal_count", n_internal, 0, 2**62),
                              read.ints("leaf_count", n_leaves, 0, 2**62), np.int64),
        "category_set": category_set,
    }
    # LightGBM writes a leaf's hessian sum of rows whose hessians are 0 as -1.1e-16: cover 0
    nodes["cover"] = leaf_roundoff_as_zero(nodes["cover"], nodes["split_feature"] >= 0,
                                           np.array([0, len(nodes["cover"])]))
    linear = _linear_leaves(read, n_internal, n_leaves, n_features) if read.ints("is_linear", 1, 0, 1)[0] else None
    return ConvertedTree(nodes, boundaries, words, linear, set(feature[~categorical].tolist()),
                         set(feature[categorical].tolist()))


def _numeric_splits(threshold, default_left, missing_type, categorical, where: str):
    """(threshold, default_left) of the numeric splits as boosters nodes: NaN to the
    default side, x <= threshold left."""
    threshold, default_left = threshold.copy(), default_left.copy()
    none = ~categorical & (missing_type == MISSING_NONE)
    default_left[none] = threshold[none] >= 0.0  # NaN is compared as 0.0
    for node in np.flatnonzero(~categorical & (missing_type == MISSING_ZERO)):
        split = zero_as_missing_split(float(threshold[node]), bool(default_left[node]))
        if split is None:
            raise ValueError(
                f"{where}, node {node}: a zero-as-missing split (x <= {float(threshold[node])!r}, |x| <= 1e-35 and NaN "
                f"to the {'left' if default_left[node] else 'right'}) is not one boosters node: "
                f"retrain with zero_as_missing=False")
        threshold[node], default_left[node] = split
    return threshold, default_left


def zero_as_missing_split(threshold: float, default_left: bool) -> tuple[float, bool] | None:
    """One node (x <= t' left, NaN to the default side) that sends every x where LightGBM's
    zero-as-missing split does: x in [-z, z] (z = ZERO_THRESHOLD) and NaN to the default
    side, other x by x <= threshold. None when the left side is not of the form x <= t'."""
    z = ZERO_THRESHOLD
    below_zero = float(np.nextafter(-z, -np.inf))  # the largest double < -z
    if default_left:
        if threshold >= z:                    # left: x <= threshold, zeros included
            return threshold, True
        if threshold >= below_zero:           # left: x < -z and the zeros, i.e. x <= z
            return z, True
        return None                           # left: x <= threshold and the zeros: two pieces
    if threshold < -z:                        # right: x > threshold, zeros included
        return threshold, False
    if threshold <= z:                        # left: x < -z only
        return below_zero, False
    return None                               # left: x < -z and z < x <= threshold: two pieces


def _set_indices(thresholds: np.ndarray, n_cat: int, where: str) -> np.ndarray:
    """A categorical split's threshold is the index of its set."""
    if np.any((thresholds != np.floor(thresholds)) | (thresholds < 0) | (thresholds >= n_cat)):
        raise ValueError(f"{where}: a categorical split's threshold must be the index of one of its {n_cat} "
                         f"category sets")
    return thresholds.astype(np.int32)


def _category_sets(read: TreeFields, n_cat: int) -> tuple[np.ndarray, np.ndarray]:
    """The tree's category sets: word boundaries (n_cat + 1, from 0) and the uint32 words."""
    if n_cat == 0:
        for key in ("cat_boundaries", "cat_threshold"):
            if read.fields.get(key, "").strip():
                raise ValueError(f"{read.where}: {key} is given but num_cat is 0")
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint32)
    words = read.ints("cat_threshold", None, 0, 2**32 - 1, required=True)
    boundaries = read.ints("cat_boundaries", n_cat + 1, 0, len(words), required=True)
    sizes = np.diff(boundaries)
    if boundaries[0] != 0 or boundaries[-1] != len(words) or np.any(sizes < 1):
        raise ValueError(f"{read.where}: cat_boundaries must run from 0 to the {len(words)} words of "
                         f"cat_threshold, at least one word a set")
    if np.any(sizes > MAX_SET_WORDS):
        raise ValueError(f"{read.where}: a category set reaches code {32 * int(sizes.max()) - 1}; boosters' "
                         f"sets hold codes below {32 * MAX_SET_WORDS}")
    return boundaries, words.astype(np.uint32)


def _node_index(child: np.ndarray, n_internal: int) -> np.ndarray:
    """LightGBM's child references (internal node i >= 0, leaf j as ~j) as node indices."""
    return np.where(child >= 0, child, n_internal + ~child)


def _linear_leaves(read: TreeFields, n_internal: int, n_leaves: int, n_features: int) -> dict:
    """A linear tree's leaves as boosters' linear arrays (per node: intercept and number
    of terms, internal nodes 0; then every leaf's terms in leaf order)."""
    const = read.floats("leaf_const", n_leaves, required=True)
    n_terms = read.ints("num_features", n_leaves, 0, n_features, required=True)
    total = int(n_terms.sum())
    return {"linear_const": np.concatenate([np.zeros(n_internal), const]),
            "linear_n_terms": np.concatenate([np.zeros(n_internal, np.int64), n_terms]).astype(np.int32),
            "linear_features": read.ints("leaf_features", total, 0, n_features - 1, required=total > 0
                                         ).astype(np.int32),
            "linear_coefs": read.floats("leaf_coeff", total, required=total > 0)}


def feature_categories(trees: list, infos: list, names: list, parameters: dict, pandas_categorical) -> dict:
    """The categorical features -> their category values in code order (a pandas frame's
    categories) or None (integer codes). A feature is categorical when a tree splits on
    it by category, its feature_infos lists categories, or the parameters name it."""
    numeric = set().union(*(t.numeric_features for t in trees))
    categorical = set().union(*(t.categorical_features for t in trees))
    for f, info in enumerate(infos):
        if info.startswith("["):  # a numeric feature's range
            if not info.endswith("]") or info.count(":") != 1:
                raise ValueError(f"feature_infos of feature {f} must be 'none', '[min:max]' or category values "
                                 f"a:b:c, got {info[:40]!r}")
            numeric.add(f)
        elif info != "none":
            parse_ints(info.replace(":", " "), f"feature_infos of feature {f}")  # category values
            categorical.add(f)
    categorical |= _parameter_features(parameters.get("categorical_feature", ""), names)
    both = sorted(numeric & categorical)
    if both:
        raise ValueError(f"feature {both[0]} is both numeric and categorical (its splits, feature_infos and the "
                         f"categorical_feature parameter disagree)")
    if not pandas_categorical:
        return {f: None for f in categorical}
    if len(pandas_categorical) != len(categorical):
        raise ValueError(f"pandas_categorical has {len(pandas_categorical)} category lists for the frame's category "
                         f"columns but the model has {len(categorical)} categorical features "
                         f"{sorted(categorical)}: which list belongs to which feature is not in the file "
                         f"(ordered categories, or numeric columns declared categorical, do this)")
    out = {}
    for f, values in zip(sorted(categorical), pandas_categorical):
        if not (all(isinstance(v, str) for v in values)
                or all(isinstance(v, int) and not isinstance(v, bool) for v in values)):
            raise ValueError(f"the pandas categories of feature {f} must be all strings or all integers "
                             f"(boosters' category values)")
        out[f] = values
    return out


def _parameter_features(value: str, names: list) -> set:
    """The features of the categorical_feature parameter: indices, or names after 'name:'."""
    if not value:
        return set()
    items = value[len("name:"):].split(",") if value.startswith("name:") else None
    if items is not None:
        unknown = [item for item in items if item not in names]
        if unknown:
            raise ValueError(f"categorical_feature names {unknown[0]!r}, not a feature")
        return {names.index(item) for item in items}
    indices = parse_ints(value.replace(",", " "), "categorical_feature")
    if np.any((indices < 0) | (indices >= len(names))):
        raise ValueError(f"categorical_feature must hold feature indices below {len(names)}")
    return set(indices.tolist())


def _members(trees: list, per_iteration: int) -> dict:
    """The arrays of a boosters model file: every tree's nodes concatenated, groups, sizes,
    category sets and linear leaves when some tree has them."""
    members = {name: np.concatenate([t.nodes[name] for t in trees]) if trees else np.zeros(0, dtype)
               for name, dtype in TREE_ARRAY_DTYPES.items()}
    members.update(base_scores=np.zeros(per_iteration),
                   tree_group=(np.arange(len(trees)) % per_iteration).astype(np.int32),
                   tree_sizes=np.array([len(t.nodes["value"]) for t in trees], dtype=np.int64))
    n_sets = np.array([len(t.boundaries) - 1 for t in trees], dtype=np.int64)
    if n_sets.any():
        offsets = np.cumsum([0] + [len(t.words) for t in trees])
        members.update(tree_cat_sets=n_sets,
                       cat_boundaries=np.concatenate([t.boundaries[:-1] + off for t, off in zip(trees, offsets)]
                                                     + [offsets[-1:]]).astype(np.int64),
                       cat_bitsets=np.concatenate([t.words for t in trees]).astype(np.uint32))
    else:
        del members["category_set"]
    if any(t.linear is not None for t in trees):
        parts = [_constant_leaves(t.nodes) if t.linear is None else t.linear for t in trees]
        members.update({name: np.concatenate([p[name] for p in parts]) for name in LINEAR_ARRAY_DTYPES})
    return members


def _constant_leaves(nodes: dict) -> dict:
    """A tree of constant leaves in linear form (intercept = value at leaves, no terms)."""
    leaf = nodes["split_feature"] < 0
    return {"linear_const": np.where(leaf, nodes["value"], 0.0), "linear_n_terms": np.zeros(len(leaf), np.int32),
            "linear_features": np.zeros(0, np.int32), "linear_coefs": np.zeros(0)}
