"""The syntax of LightGBM's text model format (what `Booster.model_to_string` and
`save_model` write): the lines and sections, each value still a string. What the values
mean is `lightgbm.py`'s concern.

A model is ``tree``, a header of ``key=value`` lines, ``Tree=i`` blocks of ``key=value``
lines (blank line after each), ``end of trees``, then optional sections:
``feature_importances:`` (``name=count`` lines), ``parameters:`` ... ``end of
parameters`` (``[key: value]`` lines), ``parser:`` ... ``end of parser``, and the
Python package's ``pandas_categorical:<JSON>`` line. Anything else is a ValueError: a key
this reader does not know might change what the model predicts.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

import numpy as np

HEADER_KEYS = ("version", "num_class", "num_tree_per_iteration", "label_index", "max_feature_idx", "objective",
               "average_output", "feature_names", "monotone_constraints", "feature_infos", "tree_sizes")
TREE_KEYS = ("num_leaves", "num_cat", "split_feature", "split_gain", "threshold", "decision_type", "left_child",
             "right_child", "leaf_value", "leaf_weight", "leaf_count", "internal_value", "internal_weight",
             "internal_count", "cat_boundaries", "cat_threshold", "is_linear", "leaf_const", "num_features",
             "leaf_features", "leaf_coeff", "shrinkage")
_INT = r"-?[0-9]{1,19}"
_FLOAT = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?inf|[-+]?nan"
_INTS = re.compile(rf"(?:{_INT})(?: (?:{_INT}))*")  # numbers separated by one space
_FLOATS = re.compile(rf"(?:{_FLOAT})(?: (?:{_FLOAT}))*")
_PARAMETER = re.compile(r"\[([A-Za-z0-9_]+): (.*)\]")


class ModelText(NamedTuple):
    """A LightGBM text model split into its parts (values are the file's strings)."""

    header: dict            # HEADER_KEYS -> value ("" for the flag average_output)
    trees: list             # per tree: TREE_KEYS -> value
    parameters: dict        # the training parameters, name -> value (empty when the section is absent)
    pandas_categorical: list | None  # the category values of the pandas columns, or None


def parse_model_text(text: str) -> ModelText:
    """Split `text` into its parts; ValueError naming the line for anything unexpected."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if not lines or lines[0] != "tree":
        raise ValueError("a LightGBM text model starts with the line 'tree'")
    at = 1
    header, at = _key_values(lines, at, HEADER_KEYS, "the header", stop=("Tree=", "end of trees"))
    trees: list[dict] = []
    while at < len(lines) and lines[at].startswith("Tree="):
        if lines[at] != f"Tree={len(trees)}":
            raise ValueError(f"line {at + 1}: expected 'Tree={len(trees)}', got {_show(lines[at])}")
        tree, at = _key_values(lines, at + 1, TREE_KEYS, f"tree {len(trees)}", stop=("",))
        trees.append(tree)
        at = _skip_blank(lines, at)
    if at >= len(lines) or lines[at] != "end of trees":
        raise ValueError(f"line {at + 1}: expected 'Tree={len(trees)}' or 'end of trees'"
                         + (f", got {_show(lines[at])}" if at < len(lines) else ", the text ends"))
    parameters, pandas_categorical = _trailer(lines, at + 1)
    return ModelText(header, trees, parameters, pandas_categorical)


def _key_values(lines: list, at: int, keys: tuple, where: str, stop: tuple) -> tuple[dict, int]:
    """The `key=value` lines from `at` up to a line starting with one of `stop` (or the end);
    blank lines are skipped in the header, end a tree."""
    out = {}
    while at < len(lines) and not any(lines[at].startswith(s) if s else lines[at] == s for s in stop):
        line = lines[at]
        if line:
            key, sep, value = line.partition("=")
            if not sep and key != "average_output":
                raise ValueError(f"{where}, line {at + 1}: expected key=value, got {_show(line)}")
            if key not in keys:
                raise ValueError(f"{where}, line {at + 1}: unknown key {_show(key)} (known: {', '.join(keys)})")
            if key in out:
                raise ValueError(f"{where}, line {at + 1}: {key} is given twice")
            out[key] = value
        at += 1
    return out, at


def _skip_blank(lines: list, at: int) -> int:
    while at < len(lines) and not lines[at]:
        at += 1
    return at


def _trailer(lines: list, at: int) -> tuple[dict, list | None]:
    """The sections after 'end of trees': the parameters and pandas_categorical."""
    parameters: dict[str, str] = {}
    pandas_categorical, seen = None, set()
    while at < len(lines):
        line = lines[at]
        at += 1
        if not line:
            continue
        name = "pandas_categorical" if line.startswith("pandas_categorical:") else line
        if name in seen:
            raise ValueError(f"line {at}: a second {_show(name)} section")
        seen.add(name)
        if line == "feature_importances:":  # name=count lines, up to a blank line: information only
            while at < len(lines) and lines[at]:
                at += 1
        elif line == "parameters:":
            at = _section(lines, at, "end of parameters", parameters)
        elif line == "parser:":  # a custom parser's configuration: no meaning for prediction
            at = _section(lines, at, "end of parser", None)
        elif name == "pandas_categorical":
            pandas_categorical = parse_pandas_categorical(line[len("pandas_categorical:"):])
        else:
            raise ValueError(f"line {at}: unexpected {_show(line)} after the trees")
    return parameters, pandas_categorical


def _section(lines: list, at: int, end: str, into: dict | None) -> int:
    """Lines up to `end` (`into`: their [key: value] pairs); the index after `end`."""
    while at < len(lines) and lines[at] != end:
        match = _PARAMETER.fullmatch(lines[at])
        if into is not None and lines[at]:
            if match is None:
                raise ValueError(f"line {at + 1}: expected a parameter '[name: value]', got {_show(lines[at])}")
            into[match[1]] = match[2]
        at += 1
    if at == len(lines):
        raise ValueError(f"the text ends before {end!r}")
    return at + 1


def parse_pandas_categorical(text: str) -> list | None:
    """The JSON after 'pandas_categorical:': null, or a list of lists of category values
    (strings or numbers; checked by the caller). Deep nesting is a RecursionError in the
    json module, caught like any other error."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"pandas_categorical is not valid JSON: {exc}") from None
    if value is not None and not (isinstance(value, list) and all(isinstance(v, list) for v in value)):
        raise ValueError("pandas_categorical must be null or a list of lists of category values")
    return value


def parse_ints(value: str, what: str, count: int | None = None) -> np.ndarray:
    """Space-separated integers as int64; ValueError naming `what` unless there are
    `count` of them (when given), each an integer of at most 19 digits."""
    tokens = _tokens(value, what, count, _INTS, "an integer")
    try:
        return np.array(tokens, dtype=np.int64)
    except OverflowError:
        raise ValueError(f"{what}: an entry is outside the int64 range") from None


def parse_floats(value: str, what: str, count: int | None = None) -> np.ndarray:
    """Space-separated decimal numbers as float64 (inf and nan allowed here: the caller
    says where they are not)."""
    return np.array(_tokens(value, what, count, _FLOATS, "a number"), dtype=np.float64)


def _tokens(value: str, what: str, count: int | None, pattern: re.Pattern, kind: str) -> list[str]:
    """The space-separated tokens of `value`, each one of `pattern`'s (checked in one
    regular-expression pass; the first bad one is named)."""
    tokens = value.split()
    if count is not None and len(tokens) != count:
        raise ValueError(f"{what} has {len(tokens)} entries, expected {count}")
    if tokens and not pattern.fullmatch(" ".join(tokens)):
        bad = next(t for t in tokens if not pattern.fullmatch(t))
        raise ValueError(f"{what}: {_show(bad)} is not {kind}")
    return tokens


def parse_int(value: str, what: str, low: int, high: int) -> int:
    """One integer in [low, high]."""
    number = parse_ints(value, what, 1)[0]
    if not low <= number <= high:
        raise ValueError(f"{what} must be in [{low}, {high}], got {number}")
    return int(number)


def _show(text: str, limit: int = 60) -> str:
    """A piece of the file for an error message: quoted, and cut when long."""
    return repr(text if len(text) <= limit else text[:limit] + "...")
