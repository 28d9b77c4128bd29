"""The JSON model format: the .npz format's header and arrays (io/npz_format.py), laid out
for people to read: the header's fields, `base_scores`, and one object per tree with its
output group, its node arrays, and (when the model has them) its categorical sets' words
and its linear leaves. The published JSON Schema is model.schema.json beside this file.

Decoding rebuilds the .npz format's parts (header, arrays by member name) and hands them
to `io.validation.ensemble_from_parts`, so one validation serves both encodings; this file
only checks what the .npz layout cannot get wrong: JSON types, integer ranges, and that
the arrays of one tree have that tree's length (concatenated, a misaligned tree would shift
its neighbours' values silently).
"""

from __future__ import annotations

import codecs
import json
import math

import numpy as np

from boosters.io.npz_format import to_parts
from boosters.io.validation import ensemble_from_parts
from boosters.model.ensemble import Ensemble
from boosters.model.validation import LINEAR_ARRAY_DTYPES, TREE_ARRAY_DTYPES

SCHEMA_FILE = "model.schema.json"
# the document's fields in the order people read them (what the model is, then how it came to be)
FIELD_ORDER = ("format_version", "objective", "n_groups", "n_features", "feature_names", "categorical_features",
               "categories", "base_scores", "best_iteration", "best_score", "eval_history", "config", "trees")
# a tree's "nodes": every node array but category_set, which only categorical models write
NODE_FIELDS = tuple(name for name in TREE_ARRAY_DTYPES if name != "category_set")
# a tree's "linear" object: short names of the .npz members
LINEAR_FIELDS = {"const": "linear_const", "n_terms": "linear_n_terms", "features": "linear_features",
                 "coefs": "linear_coefs"}
# JSON has no inf or NaN: a threshold may be +-inf, an evaluation score anything
INFINITIES = {"inf": math.inf, "-inf": -math.inf}
SCORES = {**INFINITIES, "nan": math.nan}
# longest number tokens read: int64's 20 characters (uint32 words, categories), and far
# more than repr(float) writes; longer ones are refused before Python converts them
MAX_INT_CHARS = 20
MAX_FLOAT_CHARS = 64


# -- writing ---------------------------------------------------------------------------

def to_document(ensemble: Ensemble) -> dict:
    """The JSON document as plain Python data (dicts, lists, str, int, float, bool, None;
    no NaN or infinity): what `to_json_bytes` writes and `GBDTModel.dump_model` returns."""
    header, arrays = to_parts(ensemble)
    doc = dict(header)
    doc["best_score"] = _score_to_json(header["best_score"])
    doc["eval_history"] = [_score_to_json(s) for s in header["eval_history"]]
    doc["base_scores"] = arrays["base_scores"].tolist()
    doc["trees"] = _trees_to_json(arrays)
    return {**{name: doc[name] for name in FIELD_ORDER if name in doc}, **doc}  # (any other field last)


def to_json_bytes(ensemble: Ensemble) -> bytes:
    return (_dump(to_document(ensemble), 0) + "\n").encode()


def _score_to_json(score):
    if score is None or math.isfinite(score):
        return score
    return "nan" if math.isnan(score) else "inf" if score > 0 else "-inf"


def _trees_to_json(arrays: dict) -> list:
    offsets = np.concatenate([[0], np.cumsum(arrays["tree_sizes"])])
    categorical, linear = "cat_bitsets" in arrays, "linear_const" in arrays
    node_fields = NODE_FIELDS + (("category_set",) if categorical else ())
    if categorical:
        first_set = np.concatenate([[0], np.cumsum(arrays["tree_cat_sets"])])
        boundaries, words = arrays["cat_boundaries"], arrays["cat_bitsets"]
    if linear:
        first_term = np.concatenate([[0], np.cumsum(arrays["linear_n_terms"], dtype=np.int64)])
    trees = []
    for t, group in enumerate(arrays["tree_group"].tolist()):
        lo, hi = offsets[t], offsets[t + 1]
        nodes = {name: arrays[name][lo:hi].tolist() for name in node_fields}
        nodes["threshold"] = [x if math.isfinite(x) else "inf" if x > 0 else "-inf" for x in nodes["threshold"]]
        tree = {"group": group, "nodes": nodes}
        if categorical:
            tree["category_sets"] = [words[boundaries[s]:boundaries[s + 1]].tolist()
                                     for s in range(first_set[t], first_set[t + 1])]
        if linear:
            terms = slice(first_term[lo], first_term[hi])
            tree["linear"] = {short: arrays[name][terms if short in ("features", "coefs") else slice(lo, hi)].tolist()
                              for short, name in LINEAR_FIELDS.items()}
        trees.append(tree)
    return trees


def _dump(value, depth: int) -> str:
    """Indented JSON with every list of numbers (a node array, a set's words) on one line."""
    pad = "  " * (depth + 1)
    if isinstance(value, dict) and value:
        items = (f"{pad}{json.dumps(k)}: {_dump(v, depth + 1)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(pad + _dump(v, depth + 1) for v in value) + "\n" + "  " * depth + "]"
    return json.dumps(value, allow_nan=False, separators=(", ", ": "))


# -- reading ---------------------------------------------------------------------------

def is_json_document(data: bytes | str) -> bool:
    """Whether a model file's bytes are a JSON document (rather than the .npz format's zip
    file), or a str is a JSON document's text (rather than a path; the converters take
    both): it opens with "{", after a UTF-8 byte-order mark and whitespace, and a str also
    ends with "}" (a path such as "{run}/model.json" does not)."""
    if isinstance(data, str):
        text = data.removeprefix("\ufeff").strip(" \t\r\n")
        return text[:1] == "{" and text[-1:] == "}"
    return data.removeprefix(codecs.BOM_UTF8).lstrip(b" \t\r\n")[:1] == b"{"


def from_json_bytes(data) -> Ensemble:
    """The ensemble in the JSON document `data` (bytes or str; a leading UTF-8 byte-order
    mark is skipped, as editors on Windows write one); ValueError("not a valid boosters
    model: ...") for anything else."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not a valid boosters model: not UTF-8 text: {exc}") from exc
    if not isinstance(data, str):
        raise TypeError(f"data must be bytes or str, got {type(data).__name__}")
    data = data.removeprefix("\ufeff")
    try:
        doc = json.loads(data, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant,
                         object_pairs_hook=_unique_keys)
    except RecursionError:  # the scanner's own depth guard: far deeper than any model nests
        raise ValueError("not a valid boosters model: the JSON nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, or one of the hooks below
        raise ValueError(f"not a valid boosters model: {exc}") from exc
    try:
        return ensemble_from_parts(*document_to_parts(doc))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a valid boosters model: {exc}") from exc


def _bounded_int(token: str) -> int:
    if len(token) > MAX_INT_CHARS:
        raise ValueError(f"integer {token[:24]}... has more than {MAX_INT_CHARS} characters")
    return int(token)


def _finite_float(token: str) -> float:
    value = float(token) if len(token) <= MAX_FLOAT_CHARS else math.nan  # a longer one is refused unread
    if not math.isfinite(value):
        raise ValueError(f"number {token[:24]!r} is not a finite float of at most {MAX_FLOAT_CHARS} characters "
                         f"(write infinite thresholds as \"inf\" / \"-inf\")")
    return value


def _no_constant(token: str):
    raise ValueError(f"{token} is not JSON (write infinite thresholds as \"inf\" / \"-inf\")")


def _unique_keys(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key[:40]!r} appears twice in an object")
            seen.add(key)
    return out


def document_to_parts(doc) -> tuple[dict, dict]:
    """The .npz format's (header, arrays by member name) of a parsed JSON document, with
    the JSON-level checks; `ensemble_from_parts` checks the rest."""
    if not isinstance(doc, dict):
        raise ValueError(f"the document must be a JSON object, got {type(doc).__name__}")
    header = dict(doc)
    for name in ("base_scores", "trees"):
        if name not in header:
            raise ValueError(f"missing field {name!r}")
    arrays = {"base_scores": _floats(header.pop("base_scores"), "base_scores")}
    trees = header.pop("trees")
    if not isinstance(trees, list):
        raise ValueError(f"trees must be a list, got {type(trees).__name__}")
    if "best_score" in header:
        header["best_score"] = _score(header["best_score"], "best_score")
    if isinstance(header.get("eval_history"), list):
        header["eval_history"] = [_score(s, f"eval_history[{i}]") for i, s in enumerate(header["eval_history"])]
    arrays.update(_trees_to_arrays(trees))
    return header, arrays


def _score(value, where: str):
    if isinstance(value, str):
        if value not in SCORES:
            raise ValueError(f"{where} must be a number, null, or one of {sorted(SCORES)}, got {value[:40]!r}")
        return SCORES[value]
    return value  # the header's check takes it from here


def _trees_to_arrays(trees: list) -> dict:
    """Every tree's arrays concatenated into the .npz members: the tree's keys must be the
    same in every tree (categorical sets and linear leaves are the whole model's)."""
    categorical = bool(trees) and isinstance(trees[0], dict) and "category_sets" in trees[0]
    linear = bool(trees) and isinstance(trees[0], dict) and "linear" in trees[0]
    tree_keys = {"group", "nodes"} | ({"category_sets"} if categorical else set()) | ({"linear"} if linear else set())
    node_fields = NODE_FIELDS + (("category_set",) if categorical else ())
    parts: dict[str, list] = {name: [] for name in (*node_fields, "tree_group", "tree_sizes")}
    if categorical:
        parts.update(tree_cat_sets=[], set_sizes=[], cat_bitsets=[])
    if linear:
        parts.update({name: [] for name in LINEAR_FIELDS.values()})
    for t, tree in enumerate(trees):
        where = f"trees[{t}]"
        _require_keys(tree, tree_keys, where)
        if type(tree["group"]) is not int or not 0 <= tree["group"] < 2**31:
            raise ValueError(f"{where}.group must be an integer in [0, 2**31), got {_show(tree['group'])}")
        parts["tree_group"].append(np.array([tree["group"]], dtype=np.int32))
        nodes = tree["nodes"]
        _require_keys(nodes, set(node_fields), f"{where}.nodes")
        n_nodes = _length(nodes["split_feature"], f"{where}.nodes.split_feature")
        for name in node_fields:
            parts[name].append(_node_array(nodes[name], name, n_nodes, f"{where}.nodes.{name}"))
        parts["tree_sizes"].append(np.array([n_nodes], dtype=np.int64))
        if categorical:
            sets = tree["category_sets"]
            _length(sets, f"{where}.category_sets")
            words = [_ints(s, np.uint32, f"{where}.category_sets[{i}]") for i, s in enumerate(sets)]
            parts["tree_cat_sets"].append(np.array([len(words)], dtype=np.int64))
            parts["set_sizes"].append(np.array([len(w) for w in words], dtype=np.int64))
            parts["cat_bitsets"].extend(words)
        if linear:
            _append_linear(parts, tree["linear"], n_nodes, f"{where}.linear")
    arrays = {name: _concatenate(chunks, name) for name, chunks in parts.items() if name != "set_sizes"}
    if categorical:  # every set's first word, then the end (the sets' sizes are checked later)
        sizes = _concatenate(parts["set_sizes"], "set_sizes")
        arrays["cat_boundaries"] = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return arrays


def _append_linear(parts: dict, linear, n_nodes: int, where: str) -> None:
    _require_keys(linear, set(LINEAR_FIELDS), where)
    const = _floats(linear["const"], f"{where}.const")
    n_terms = _ints(linear["n_terms"], np.int32, f"{where}.n_terms")
    features = _ints(linear["features"], np.int32, f"{where}.features")
    coefs = _floats(linear["coefs"], f"{where}.coefs")
    if len(const) != n_nodes or len(n_terms) != n_nodes:
        raise ValueError(f"{where}: const and n_terms must have {n_nodes} entries, one per node of the tree")
    n = int(n_terms.sum(dtype=np.int64))
    if len(features) != n or len(coefs) != n:
        raise ValueError(f"{where}: features and coefs must have {n} entries, the sum of n_terms")
    for short, value in (("const", const), ("n_terms", n_terms), ("features", features), ("coefs", coefs)):
        parts[LINEAR_FIELDS[short]].append(value)


def _concatenate(chunks: list, name: str) -> np.ndarray:
    dtype = {**TREE_ARRAY_DTYPES, **LINEAR_ARRAY_DTYPES, "tree_group": np.int32, "cat_bitsets": np.uint32}.get(
        name, np.int64)
    return np.concatenate(chunks).astype(dtype, copy=False) if chunks else np.zeros(0, dtype)


def _require_keys(obj, keys: set, where: str) -> None:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be an object, got {type(obj).__name__}")
    if set(obj) != keys:
        raise ValueError(f"{where}: fields: missing {sorted(keys - set(obj))}, unexpected "
                         f"{sorted(k[:40] for k in set(obj) - keys)}")


def _length(values, where: str) -> int:
    if not isinstance(values, list):
        raise ValueError(f"{where} must be a list, got {type(values).__name__}")
    return len(values)


def _node_array(values, name: str, n_nodes: int, where: str) -> np.ndarray:
    if _length(values, where) != n_nodes:
        raise ValueError(f"{where} has {len(values)} entries, split_feature {n_nodes}")
    dtype = TREE_ARRAY_DTYPES[name]
    if name == "threshold":
        values = [INFINITIES.get(v, v) if isinstance(v, str) else v for v in values]
    return _floats(values, where) if dtype == np.float64 else _ints(values, dtype, where)


def _ints(values, dtype, where: str) -> np.ndarray:
    """A list of JSON integers in `dtype`'s range, as that dtype."""
    _length(values, where)
    info = np.iinfo(dtype)
    if not all(type(v) is int for v in values) or (values and not info.min <= min(values) <= max(values) <= info.max):
        i, v = next((i, v) for i, v in enumerate(values) if type(v) is not int or not info.min <= v <= info.max)
        raise ValueError(f"{where}[{i}] must be an integer in [{info.min}, {info.max}] ({np.dtype(dtype)}), "
                         f"got {_show(v)}")
    return np.array(values, dtype=dtype)


def _floats(values, where: str) -> np.ndarray:
    """A list of JSON numbers (thresholds' "inf" / "-inf" already replaced), as float64."""
    _length(values, where)
    if not all(map(_held_exactly, values)):
        i, v = next((i, v) for i, v in enumerate(values) if not _held_exactly(v))
        raise ValueError(f"{where}[{i}] must be a number that float64 holds exactly, got {_show(v)}")
    return np.array(values, dtype=np.float64)


def _held_exactly(value) -> bool:
    """A JSON number the model holds as written: a float, or an integer float64 holds
    exactly (not one beyond 2**53 that it would round: the model would hold another number)."""
    return type(value) is float or (type(value) is int and float(value) == value)


def _show(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"
