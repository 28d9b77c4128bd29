"""XGBoost models in: an `xgboost.Booster` (or estimator), a .json / .ubj model file, or
its bytes -> GBDTModel whose predictions equal XGBoost's within float32 rounding.

The document is read with `json` or our bounded UBJSON reader (`convert/ubjson.py`), so a
file needs no XGBoost installed, and checked field by field before anything is built: a
hostile file is a ValueError naming the field. The trees are taken in the order of their
ids, as XGBoost places them (not the list's). Each tree is renumbered breadth-first
(root first, children after parents, as our forest requires); nodes the root does not
reach (XGBoost's deleted nodes) are dropped.

XGBoost's rules, as its predictor applies them (src/predictor/predict_fn.h,
src/common/categorical.h), and how our nodes reproduce them:

- Numeric split: ``float32(x) < t`` goes left, t a float32. Ours is ``x <= T`` in double;
  T = the largest double that rounds to a float32 below t (`xgboost_threshold_to_ours`),
  so every double x and every float32 x goes the same way. t = -inf sends every present
  value right: ours is T = +inf (every present value left) with the children swapped and
  the default side flipped.
- Categorical split: the listed categories go right, every other code left (negative and
  past the listed ones included); NaN follows default_left. Ours sends a set left and
  codes past its words the default way; so our set is the complement of XGBoost's over
  the codes the model knows (the feature's categories, or the largest code any split on
  the feature lists). Codes the model has never seen (and negative ones) differ only when
  missing values go right; non-integer codes are truncated as XGBoost truncates them,
  except that one in (-1, 0) is code 0 here and negative in XGBoost.
- The right child is always left + 1 in XGBoost's predictor: a file where it is not is
  refused.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from typing import NoReturn

import numpy as np

from boosters.config import Objective
from boosters.convert import ubjson
from boosters.data.categories import MAX_CATEGORIES
from boosters.gbdt_model import GBDTModel
from boosters.io.atomic import read_regular_file
from boosters.io.json_format import is_json_document
from boosters.io.validation import MAX_OUTPUTS, check_outputs
from boosters.model.ensemble import Ensemble
from boosters.model.forest import Forest
from boosters.model.tree import Tree
from boosters.model.validation import MAX_SET_WORDS, TREE_ARRAY_DTYPES

__all__ = ["from_xgboost"]

MAX_CODE = 32 * MAX_SET_WORDS  # our category sets hold codes below this
FLOAT32_MAX = float(np.finfo(np.float32).max)
_INT_TEXT = re.compile(r"-?\d{1,12}")
_FLOAT_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d{1,4})?|[-+]?(inf|nan)", re.IGNORECASE)


def _fail(what: str) -> NoReturn:
    raise ValueError(f"not a valid XGBoost model: {what}")


def _refuse(what: str) -> NoReturn:
    raise ValueError(f"cannot convert this XGBoost model: {what}")


def from_xgboost(source, *, use_best_iteration: bool = False) -> GBDTModel:
    """A boosters model from an XGBoost one.

    Reads XGBoost's JSON and UBJSON model formats (1.x to 3.x; no XGBoost needed for a
    file or its bytes). Predictions equal XGBoost's within float32 rounding (XGBoost
    sums the trees in float32, boosters in float64). Numeric and categorical splits,
    missing-value directions, DART tree weights, several trees per round, and the
    objectives both libraries have are converted (see :doc:`/guide/converting_xgboost`);
    anything else raises ValueError naming it.

    Parameters
    ----------
    source : xgboost.Booster, xgboost.XGBModel, str, os.PathLike or bytes
        A booster or scikit-learn estimator (its ``save_raw``), the path of a ``.json``
        or ``.ubj`` model file, or the bytes of one (the format is read from the
        content), or JSON text (a str in braces ``{...}``).
    use_best_iteration : bool, default False
        Keep only the rounds up to the saved ``best_iteration`` (what XGBoost's
        estimators predict with after early stopping); False keeps every tree (what
        ``Booster.predict`` uses).

    Returns
    -------
    GBDTModel
        Its ``feature_names`` and categorical features are XGBoost's; ``config`` is None.

    Examples
    --------
    >>> import xgboost as xgb
    >>> from boosters.convert import from_xgboost
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)).astype(np.float32)
    >>> booster = xgb.train({"max_depth": 3}, xgb.DMatrix(X, X[:, 0] - X[:, 1]), 10)
    >>> model = from_xgboost(booster)
    >>> model.n_trees, model.objective
    (10, Objective.squared())
    >>> bool(np.allclose(model.predict(X), booster.predict(xgb.DMatrix(X)), rtol=1e-5, atol=1e-6))
    True
    """
    if not isinstance(use_best_iteration, bool):
        raise TypeError(f"use_best_iteration must be a bool, got {type(use_best_iteration).__name__}")
    return GBDTModel(ensemble_from_document(read_document(source), use_best_iteration))


# -- reading ------------------------------------------------------------------------------

def read_document(source) -> dict:
    """The model document of a booster, estimator, path or bytes (JSON or UBJSON)."""
    if hasattr(source, "get_booster"):  # an XGBoost estimator (duck-typed: xgboost is not imported)
        source = source.get_booster()
    if hasattr(source, "save_raw"):
        data = bytes(source.save_raw(raw_format="ubj"))
    elif isinstance(source, str) and is_json_document(source):  # JSON text, not a path
        data = source.encode("utf-8")
    elif isinstance(source, (str, os.PathLike)):
        data = read_regular_file(source)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    else:
        raise TypeError(f"source must be an xgboost Booster or estimator, a path or bytes, "
                        f"got {type(source).__name__}")
    stripped = data.removeprefix(codecs.BOM_UTF8).lstrip()  # a BOM, as editors on Windows write: never UBJSON's
    # UBJSON and JSON objects both open with "{"; JSON's next byte is a quote, space or "}"
    is_json = stripped[:1] == b"{" and stripped[1:2] in (b'"', b"}", b" ", b"\n", b"\r", b"\t")
    try:
        document = json.loads(stripped.decode("utf-8")) if is_json else ubjson.loads(data)
    except (ValueError, RecursionError, UnicodeDecodeError) as error:
        _fail(f"cannot parse it as JSON or UBJSON ({error})")
    if not isinstance(document, dict):
        _fail("the document must be an object")
    return document


def _get(obj: dict, key: str, kind, where: str, default=...):
    if key not in obj:
        if default is not ...:
            return default
        _fail(f"{where} has no {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        expected = "a list" if isinstance(kind, tuple) else kind.__name__
        _fail(f"{where}.{key} must be {expected}, got {type(value).__name__}")
    return value


def _int_text(obj: dict, key: str, where: str, low: int, high: int, default=...) -> int:
    """XGBoost writes parameters as strings: "3"."""
    text = _get(obj, key, str, where, default)
    if isinstance(text, int):  # the default
        return text
    if not _INT_TEXT.fullmatch(text) or not low <= int(text) <= high:
        _fail(f"{where}.{key} must be an integer in [{low}, {high}], got {text[:40]!r}")
    return int(text)


def _float_texts(text: str, where: str, dtype=np.float32) -> np.ndarray:
    """A float or a bracketed list of them, as XGBoost writes base_score ("5E-1", "[5E-1,2E-1]")."""
    if not isinstance(text, str) or len(text) > 100_000:
        _fail(f"{where} must be a string of numbers")
    items = text.strip().removeprefix("[").removesuffix("]").split(",")
    if not all(_FLOAT_TEXT.fullmatch(item.strip()) for item in items):
        _fail(f"{where} must be a number or a list of numbers, got {text[:40]!r}")
    return np.array([float(item) for item in items], dtype=dtype)


def _int_array(obj: dict, key: str, where: str, low: int, high: int) -> np.ndarray:
    value = _get(obj, key, (list, np.ndarray), where)
    if key == "default_left" and isinstance(value, list) and all(type(v) is bool for v in value):
        value = [int(v) for v in value]  # XGBoost before 1.6 wrote booleans
    if isinstance(value, np.ndarray):
        ok = value.dtype.kind in "iu"
    else:
        ok = all(type(v) is int for v in value)
    if not ok:
        _fail(f"{where}.{key} must be a list of integers")
    arr = np.array(value, dtype=object if not isinstance(value, np.ndarray) else value.dtype)
    if arr.size and (arr.min() < low or arr.max() > high):
        _fail(f"{where}.{key} has an entry outside [{low}, {high}]")
    return arr.astype(np.int64).reshape(-1)


def _float_array(obj: dict, key: str, where: str) -> np.ndarray:
    """float32, as XGBoost holds them (JSON writes each float32's shortest decimal)."""
    value = _get(obj, key, (list, np.ndarray), where)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf":
            _fail(f"{where}.{key} must be a list of numbers")
        return value.astype(np.float32).reshape(-1)
    if not all(type(v) in (int, float) for v in value):
        _fail(f"{where}.{key} must be a list of numbers")
    with np.errstate(over="ignore"):  # beyond float32: inf, refused where it matters
        return np.array(value, dtype=np.float64).astype(np.float32)


# -- the objective ------------------------------------------------------------------------

def _logit32(p: np.ndarray) -> np.ndarray:
    """XGBoost's LogisticProbToMargin in float32 (clamped to [1e-6, 1 - 1e-6])."""
    eps = np.float32(1e-6)
    p = np.clip(p, eps, np.float32(1) - eps)
    return -np.log(np.float32(1) / p - np.float32(1))


def _logit_of_base_score(p: np.ndarray) -> np.ndarray:
    """The margin of binary:logistic's base_score: XGBoost refuses one outside [0, 1] (and
    NaN; its CheckIntercept) and clamps the rest into [1e-6, 1 - 1e-6], as _logit32 does."""
    outside = ~((p >= 0) & (p <= 1))
    if np.any(outside):
        _fail(f"base_score must be in [0, 1] for binary:logistic (XGBoost refuses it too), "
              f"got {float(p[outside][0])!r}")
    return _logit32(p)


def _log32(p: np.ndarray) -> np.ndarray:
    if np.any(~(p > 0)):
        _fail("base_score must be > 0 for a log-link objective")
    return np.log(p)


def _objective(learner: dict, n_classes: int, n_targets: int):
    """(our Objective, XGBoost's base_score -> margin) of the learner's objective."""
    spec = _get(learner, "objective", dict, "learner")
    name = _get(spec, "name", str, "learner.objective")
    identity = lambda p: p  # noqa: E731
    if n_classes > 1 and name not in ("multi:softprob", "multi:softmax"):
        _fail(f"num_class is {n_classes} but the objective is {name!r}")
    several = n_targets if n_targets > 1 else None
    if several and name not in ("reg:squarederror", "reg:linear", "reg:absoluteerror", "binary:logistic"):
        _refuse(f"objective {name!r} with {n_targets} targets has no boosters equivalent")
    if name in ("reg:squarederror", "reg:linear"):
        return Objective.squared(n_targets=several), identity
    if name == "reg:absoluteerror":
        return Objective("absolute", n_targets=several), identity
    if name == "reg:quantileerror":
        alpha = _float_texts(_get(_get(spec, "quantile_loss_param", dict, "learner.objective"), "quantile_alpha",
                                  str, "learner.objective.quantile_loss_param"), "quantile_alpha", np.float64)
        if len(alpha) != 1:  # ours sorts the levels' predictions per row; XGBoost's do not
            _refuse("reg:quantileerror with several quantile_alpha levels (boosters sorts their predictions)")
        return _make(lambda: Objective.pinball(_float32_text(alpha[0])), name), identity
    if name == "binary:logistic":  # several targets: one sigmoid each, our one-vs-rest
        return (Objective.one_vs_rest(n_targets) if several else Objective.logistic()), _logit_of_base_score
    if name == "binary:hinge":
        return Objective.hinge(), identity
    if name in ("multi:softprob", "multi:softmax"):
        if n_classes < 2:
            _fail(f"{name} needs num_class >= 2, got {n_classes}")
        return Objective.softmax(n_classes), identity
    if name == "count:poisson":
        return Objective.poisson(), _log32
    if name == "reg:gamma":
        return Objective.gamma(), _log32
    if name == "reg:tweedie":
        param = _get(spec, "tweedie_regression_param", dict, "learner.objective")
        power = _float_texts(_get(param, "tweedie_variance_power", str, "tweedie_regression_param"),
                             "tweedie_variance_power", np.float64)
        if len(power) != 1:
            _fail("tweedie_variance_power must be one number")
        return _make(lambda: Objective.tweedie(_float32_text(power[0])), name), _log32
    if name == "rank:ndcg":
        return Objective.lambdarank(), identity
    if name == "rank:pairwise":
        return Objective.pairwise(), identity
    _refuse(f"objective {name!r} has no boosters equivalent")


def _float32_text(value: float) -> float:
    """XGBoost keeps its parameters in float32 and writes 1.3 as "1.29999995": the
    shortest decimal of that float32 (1.3) is what the user set."""
    return float(str(np.float32(value)))


def _make(factory, name: str) -> Objective:
    try:
        return factory()
    except (ValueError, TypeError) as error:
        _refuse(f"objective {name!r}: {error}")


# -- trees ----------------------------------------------------------------------------------

def xgboost_threshold_to_ours(t: np.ndarray) -> np.ndarray:
    """Per float32 threshold t, the largest double T with float32(T) < t, so that
    ``x <= T`` (ours) is ``float32(x) < t`` (XGBoost's) for every double and float32 x.

    Between t's float32 predecessor p and t, a double rounds to p up to the midpoint m
    (exact in double); m itself rounds to the one of p, t with an even last bit.
    """
    t = np.asarray(t, dtype=np.float32)
    with np.errstate(over="ignore"):  # below -FLT_MAX: -inf
        below = np.nextafter(t, np.float32(-np.inf))
    # +-inf as the float32 step past +-FLT_MAX (what rounding to float32 does there)
    upper, lower = t.astype(np.float64), below.astype(np.float64)
    upper = np.where(np.isinf(upper), np.sign(upper) * 2.0**128, upper)
    lower = np.where(np.isinf(lower), np.sign(lower) * 2.0**128, lower)
    mid = (lower + upper) / 2
    below_even = (below.view(np.uint32) & 1) == 0
    return np.where(below_even, mid, np.nextafter(mid, -np.inf))


def _tree_arrays(tree: dict, where: str, n_features: int) -> dict:
    param = _get(tree, "tree_param", dict, where)
    n = _int_text(param, "num_nodes", f"{where}.tree_param", 1, 2**31 - 1)
    if _int_text(param, "size_leaf_vector", f"{where}.tree_param", 0, 2**31 - 1, default=1) > 1:
        _refuse(f"{where} is a multi-output tree (multi_strategy='multi_output_tree')")
    arrays = {key: _int_array(tree, key, where, -1, 2**31 - 1) for key in ("left_children", "right_children")}
    arrays["split_indices"] = _int_array(tree, "split_indices", where, 0, 2**32 - 1)  # deleted nodes: 2**32 - 1
    arrays["default_left"] = _int_array(tree, "default_left", where, 0, 1)
    for key in ("split_conditions", "base_weights", "loss_changes", "sum_hessian"):
        arrays[key] = _float_array(tree, key, where)
    arrays["split_type"] = (_int_array(tree, "split_type", where, 0, 1) if "split_type" in tree
                            else np.zeros(n, np.int64))
    for key, arr in arrays.items():
        if len(arr) != n:
            _fail(f"{where}.{key} has {len(arr)} entries, num_nodes is {n}")
    return arrays


def _node_categories(tree: dict, split_type: np.ndarray, where: str) -> dict:
    """Node -> the sorted category codes XGBoost's split at it sends right."""
    cat_nodes = np.flatnonzero(split_type == 1)
    if not len(cat_nodes) and "categories_nodes" not in tree:  # before XGBoost 1.3: no categories
        return {}
    nodes = _int_array(tree, "categories_nodes", where, 0, len(split_type) - 1)
    starts = _int_array(tree, "categories_segments", where, 0, 2**62)
    sizes = _int_array(tree, "categories_sizes", where, 1, 2**62)
    codes = _int_array(tree, "categories", where, 0, 2**31 - 1)
    if not (len(nodes) == len(starts) == len(sizes)) or not np.array_equal(nodes, cat_nodes):
        _fail(f"{where}: categories_nodes must list the categorical splits (split_type 1) in order, "
              f"with one segment and size each")
    if np.any(starts + sizes > len(codes)):
        _fail(f"{where}: a categories segment runs past the {len(codes)} categories")
    return {int(node): np.unique(codes[s:s + k]) for node, s, k in zip(nodes, starts, sizes)}


def _breadth_first(left: np.ndarray, right: np.ndarray, where: str) -> np.ndarray:
    """The nodes the root reaches, breadth-first (children right after each other);
    ValueError if a node is reached twice or a right child is not left + 1."""
    n = len(left)
    seen = np.zeros(n, dtype=bool)
    order, head = [0], 0
    seen[0] = True
    while head < len(order):
        node = order[head]
        head += 1
        lo, hi = int(left[node]), int(right[node])
        if lo == -1:
            continue
        if hi != lo + 1 or not 0 < lo < n - 1:
            _fail(f"{where}, node {node}: children must be two nodes k, k + 1 inside the tree, got {lo}, {hi}")
        if seen[lo] or seen[hi]:
            _fail(f"{where}, node {node}: a child is reached twice (a cycle or a shared node)")
        seen[lo] = seen[hi] = True
        order += [lo, hi]
    return np.array(order, dtype=np.int64)


def _category_words(right_codes: np.ndarray, n_codes: int, where: str) -> np.ndarray:
    """Our set (bit c: code c goes left) for an XGBoost split sending `right_codes` right:
    every other code below n_codes (rounded up to whole words)."""
    if right_codes[-1] >= MAX_CODE or n_codes > MAX_CODE:
        _refuse(f"{where}: category code {max(right_codes[-1], n_codes - 1)} (boosters' sets hold codes "
                f"below {MAX_CODE})")
    n_words = max(-(-n_codes // 32), 1)
    bits = np.ones(32 * n_words, dtype=np.uint8)
    bits[right_codes] = 0
    return np.packbits(bits, bitorder="little").view(np.uint32)


def _convert_tree(raw: dict, where: str, n_features: int, weight: float):
    """Our Tree arrays (TREE_ARRAY_DTYPES names, category_set still -1) of one XGBoost
    tree, and its categorical splits as (our node, feature, codes XGBoost sends right)."""
    a = _tree_arrays(raw, where, n_features)
    categories = _node_categories(raw, a["split_type"], where)
    order = _breadth_first(a["left_children"], a["right_children"], where)
    new_id = np.full(len(a["left_children"]), -1, dtype=np.int64)
    new_id[order] = np.arange(len(order))
    internal = a["left_children"][order] != -1
    feature = a["split_indices"][order]
    if np.any(internal & (feature >= n_features)):
        node = int(order[np.flatnonzero(internal & (feature >= n_features))[0]])
        _fail(f"{where}, node {node}: split feature {int(a['split_indices'][node])} >= num_feature {n_features}")
    condition = a["split_conditions"][order]
    numeric = internal & (a["split_type"][order] == 0)
    if np.any(numeric & np.isnan(condition)):
        node = int(order[np.flatnonzero(numeric & np.isnan(condition))[0]])
        _fail(f"{where}, node {node}: a split condition is NaN")
    # x < -inf sends every present value right (to_xgboost_json writes our "missing or present"
    # splits so): ours is x <= +inf with the children swapped and the default side flipped
    swapped = numeric & (condition == -np.inf)
    threshold = np.where(numeric, xgboost_threshold_to_ours(np.where(numeric & ~swapped, condition, 0)), 0.0)
    threshold[swapped] = np.inf
    leaf_value = condition.astype(np.float64) * weight
    value = np.where(internal, a["base_weights"][order].astype(np.float64) * weight, leaf_value)
    # a leaf is left == -1 (XGBoost ignores its right entry); children were checked by _breadth_first
    left = np.where(internal, new_id[np.where(internal, a["left_children"][order], 0)], -1)
    right = np.where(internal, new_id[np.where(internal, a["right_children"][order], 0)], -1)
    left, right = np.where(swapped, right, left), np.where(swapped, left, right)
    default_left = np.where(internal, a["default_left"][order] ^ swapped, 0)
    arrays = dict(split_feature=np.where(internal, feature, -1), threshold=threshold,
                  threshold_bin=np.zeros(len(order)), default_left=default_left,
                  left_child=left, right_child=right, value=value, gain=a["loss_changes"][order],
                  cover=a["sum_hessian"][order], n_samples=np.zeros(len(order)),
                  category_set=np.full(len(order), -1))
    for name, arr in arrays.items():
        if name in ("value", "gain", "cover") and not np.all(np.isfinite(arr)):
            _fail(f"{where}: {name} (from {'split_conditions / base_weights' if name == 'value' else name}) "
                  f"is not finite")
        arrays[name] = np.asarray(arr).astype(TREE_ARRAY_DTYPES[name])
    splits = [(int(new_id[node]), int(a["split_indices"][node]), codes) for node, codes in categories.items()
              if new_id[node] >= 0 and a["left_children"][node] != -1]
    return arrays, splits


def _category_sets(arrays: dict, splits: list, n_codes: dict, where: str) -> tuple:
    """Set the tree's category_set and return its (set boundaries, words)."""
    boundaries = [0]
    words: list[np.ndarray] = []
    for node, feature, codes in splits:
        set_words = _category_words(codes, n_codes[feature], f"{where}, node {node}")
        arrays["category_set"][node] = len(words)
        words.append(set_words)
        boundaries.append(boundaries[-1] + len(set_words))
    return np.array(boundaries, np.int64), np.concatenate(words) if words else np.zeros(0, np.uint32)


def _codes_per_feature(splits: list, cats, n_features: int, where: str) -> dict:
    """Categorical feature -> how many codes the model knows: its categories when the
    model stores them ("cats", 3.1+), at least the largest code a split lists + 1."""
    known: dict[int, int] = {}
    for feature, codes in ((f, c) for tree_splits in splits for _, f, c in tree_splits):
        known[feature] = max(known.get(feature, 0), int(codes[-1]) + 1)
    if cats is not None:
        segments = _int_array(cats, "feature_segments", f"{where}.cats", 0, 2**31 - 1)
        if len(segments) and (len(segments) != n_features + 1 or segments[0] != 0 or np.any(np.diff(segments) < 0)):
            _fail(f"{where}.cats.feature_segments must rise from 0 in {n_features + 1} entries")
        for f, size in enumerate(np.diff(segments)):
            if size:
                known[f] = max(known.get(f, 0), int(size))
    return known


# -- categories' values (3.1+: the training frame's categories, for recoding) --------------

def _category_values(cats, n_features: int, where: str) -> dict:
    """Feature -> its categories in code order (strings or int64), for features that have some."""
    if cats is None:
        return {}
    encodings = _get(cats, "enc", list, f"{where}.cats")
    if len(encodings) not in (0, n_features):
        _fail(f"{where}.cats.enc must have one entry per feature")
    out: dict[int, np.ndarray | None] = {}
    for f, enc in enumerate(encodings):
        at = f"{where}.cats.enc[{f}]"
        if not isinstance(enc, dict):
            _fail(f"{at} must be an object")
        if "offsets" in enc:  # strings: UTF-8 bytes, cut by offsets
            offsets = _int_array(enc, "offsets", at, 0, 2**31 - 1)
            raw = _int_array(enc, "values", at, -128, 255).astype(np.uint8).tobytes()
            if not len(offsets):
                continue
            if offsets[0] != 0 or offsets[-1] != len(raw) or np.any(np.diff(offsets) < 0):
                _fail(f"{at}.offsets must rise from 0 to the {len(raw)} bytes of values")
            try:
                out[f] = np.array([raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])], dtype=object)
            except UnicodeDecodeError:
                _fail(f"{at}: a category name is not UTF-8")
        else:
            values = _get(enc, "values", (list, np.ndarray), at)
            numbers = _float_array(enc, "values", at).astype(np.float64) if len(values) else np.zeros(0)
            if len(values) and isinstance(values, list) and all(type(v) is int for v in values):
                out[f] = _int_array(enc, "values", at, -2**63, 2**63 - 1)
            elif len(values) and np.all(numbers == np.round(numbers)):
                out[f] = numbers.astype(np.int64)
            elif len(values):
                out[f] = None  # float categories: the model reads codes
    for f, values in out.items():
        if values is not None and len(set(values.tolist())) != len(values):
            _fail(f"{where}.cats.enc[{f}] repeats a category")
        if values is not None and len(values) > MAX_CATEGORIES:
            _refuse(f"feature {f} has {len(values)} categories (boosters holds at most {MAX_CATEGORIES})")
    return out


# -- the model ----------------------------------------------------------------------------

def _trees_by_id(trees: list) -> list:
    """The trees in XGBoost's order: tree i is the one whose "id" is i, wherever the list
    has it (XGBoost places each tree by its id; tree_info and weight_drop follow that
    order). The ids must be 0 .. n_trees - 1, each once."""
    placed = [None] * len(trees)
    for t, raw in enumerate(trees):
        if not isinstance(raw, dict):
            _fail(f"gbtree.model.trees[{t}] must be an object")
        tree_id = _get(raw, "id", int, f"gbtree.model.trees[{t}]")
        if not 0 <= tree_id < len(trees) or placed[tree_id] is not None:
            _fail(f"gbtree.model.trees[{t}].id is {tree_id}: the trees' ids must be 0 to {len(trees) - 1}, each once")
        placed[tree_id] = raw
    return placed


def ensemble_from_document(document: dict, use_best_iteration: bool = False) -> Ensemble:
    """Our Ensemble of a parsed XGBoost model document."""
    learner = _get(document, "learner", dict, "the document")
    params = _get(learner, "learner_model_param", dict, "learner")
    n_features = _int_text(params, "num_feature", "learner_model_param", 1, 2**31 - 1)
    n_classes = _int_text(params, "num_class", "learner_model_param", 0, MAX_OUTPUTS, default=0)
    n_targets = _int_text(params, "num_target", "learner_model_param", 1, MAX_OUTPUTS, default=1)
    objective, link = _objective(learner, n_classes, n_targets)
    n_groups = objective.n_outputs
    base = _float_texts(_get(params, "base_score", str, "learner_model_param"), "learner_model_param.base_score")
    if len(base) not in (1, n_groups):
        _fail(f"base_score has {len(base)} values for {n_groups} outputs")
    with np.errstate(all="ignore"):
        base_scores = np.broadcast_to(link(base), (n_groups,)).astype(np.float64)
    if not np.all(np.isfinite(base_scores)):
        _fail("base_score gives a margin that is not finite")

    booster = _get(learner, "gradient_booster", dict, "learner")
    kind = _get(booster, "name", str, "gradient_booster")
    weights = None
    if kind == "dart":
        weights = _float_array(booster, "weight_drop", "gradient_booster")
        booster = _get(booster, "gbtree", dict, "gradient_booster")
    elif kind != "gbtree":
        _refuse(f"booster {kind!r} (only tree boosters convert)")
    model = _get(booster, "model", dict, "gradient_booster")
    trees = _trees_by_id(_get(model, "trees", list, "gbtree.model"))
    n_trees = len(trees)
    try:
        check_outputs(n_groups, n_trees)
    except ValueError as error:
        _fail(str(error))
    tree_info = _int_array(model, "tree_info", "gbtree.model", 0, n_groups - 1)
    if len(tree_info) != n_trees:
        _fail(f"tree_info has {len(tree_info)} entries for {n_trees} trees")
    if weights is not None and len(weights) != n_trees:
        _fail(f"weight_drop has {len(weights)} entries for {n_trees} trees")
    cats = _get(model, "cats", dict, "gbtree.model", default=None)

    names = _get(learner, "feature_names", list, "learner", default=[])
    types = _get(learner, "feature_types", list, "learner", default=[])
    for key, values in (("feature_names", names), ("feature_types", types)):
        if values and (len(values) != n_features or not all(isinstance(v, str) for v in values)):
            _fail(f"learner.{key} must be {n_features} strings")
    if names and len(set(names)) != len(names):
        _fail("learner.feature_names repeats a name")

    indptr = (_int_array(model, "iteration_indptr", "gbtree.model", 0, n_trees) if "iteration_indptr" in model
              else None)
    per_round = n_groups * _int_text(_get(model, "gbtree_model_param", dict, "gbtree.model", default={}),
                                     "num_parallel_tree", "gbtree_model_param", 1, 2**31 - 1, default=1)
    attributes = _get(learner, "attributes", dict, "learner", default={})
    best_iteration, best_score = None, None
    if use_best_iteration and "best_iteration" in attributes:
        best_iteration = _int_text(attributes, "best_iteration", "learner.attributes", 0, 2**31 - 1)
        kept = (int(indptr[best_iteration + 1]) if indptr is not None and best_iteration + 1 < len(indptr)
                else (best_iteration + 1) * per_round)
        if kept > n_trees:
            _fail(f"best_iteration {best_iteration} is past the {n_trees} trees")
        trees, tree_info = trees[:kept], tree_info[:kept]
        if "best_score" in attributes:
            best_score = float(_float_texts(attributes["best_score"], "learner.attributes.best_score")[0])

    converted = []
    for t, raw in enumerate(trees):
        converted.append(_convert_tree(raw, f"tree {t}", n_features, 1.0 if weights is None else float(weights[t])))
    n_codes = _codes_per_feature([splits for _, splits in converted], cats, n_features, "gbtree.model")
    forest = Forest(n_groups, base_scores)
    for t, (arrays, splits) in enumerate(converted):
        boundaries, words = _category_sets(arrays, splits, n_codes, f"tree {t}")
        forest.add(Tree(**{name: arrays[name] for name in TREE_ARRAY_DTYPES if name != "category_set"},
                        category_set=arrays["category_set"], cat_boundaries=boundaries, cat_bitsets=words),
                   int(tree_info[t]))
    categorical = {f for f, kind_ in enumerate(types) if kind_ == "c"} | set(n_codes)
    values = _category_values(cats, n_features, "gbtree.model")
    categories = {f: values.get(f) for f in sorted(categorical)}
    try:
        forest.flat()  # every check of a loaded model
        ensemble = Ensemble(forest, objective, n_features, list(names) or None, None, best_iteration,
                            best_score, [], categories)
    except ValueError as error:
        _fail(str(error))
    if best_iteration is None:  # the last round, as a model trained without early stopping
        rounds = len(indptr) - 1 if indptr is not None else -(-n_trees // per_round)
        ensemble.best_iteration = rounds - 1 if rounds > 0 else None
    return ensemble
