"""Categorical features: which features are categorical, raw category values -> integer
codes, and the mapping a model keeps to code new data by value.

A categorical feature reaches the kernels as float codes 0, 1, ..., k-1 (NaN = missing).
Its mapping, `categories[f]`, holds the raw values in code order (code c is
`categories[f][c]`): the frame's own category order for a pandas `category` column or a
polars `Enum`, the sorted distinct values present otherwise (strings by code point,
integers by value). A column given as numbers (a NumPy array, a numeric frame column) is
taken as the codes themselves: `categories[f]` is None, and the codes are checked to be
integers in [0, MAX_CATEGORIES).

At prediction a column is coded by value with the model's mapping; a value the model
has not seen and a missing value become NaN (the split's missing side). A model of
ordered target statistics tells them apart (`unseen`: see data/target_statistics.py).
"""

from __future__ import annotations

import numbers

import numpy as np

from boosters.data.frames import Frame, frame_matrix

MAX_CATEGORIES = 65534  # codes fit uint16 bins with one bin left for missing


def categorical_indices(spec, n_features: int, feature_names: list[str] | None,
                        auto: list[int]) -> list[int]:
    """The sorted indices that `categorical_features` names: None -> none, "auto" ->
    `auto` (the frame's categorical dtype columns), or a list of indices or names."""
    if spec is None:
        return []
    if isinstance(spec, str):
        if spec != "auto":
            raise ValueError(f"categorical_features must be 'auto', None or a list of feature indices or "
                             f"names, got {spec!r}")
        return sorted(auto)
    try:
        items = list(spec)
    except TypeError:
        raise TypeError(f"categorical_features must be 'auto', None or a list of feature indices or names, "
                        f"got {type(spec).__name__}") from None
    out = []
    for item in items:
        if isinstance(item, str):
            if feature_names is None:
                raise ValueError(f"categorical_features: {item!r} is a name but X has no feature names "
                                 f"(pass feature_names or a frame, or use indices)")
            if item not in feature_names:
                raise ValueError(f"categorical_features: {item!r} is not a feature name")
            out.append(feature_names.index(item))
        elif isinstance(item, numbers.Integral) and not isinstance(item, (bool, np.bool_)):
            if not 0 <= int(item) < n_features:
                raise ValueError(f"categorical_features: index {item} is outside [0, {n_features})")
            out.append(int(item))
        else:
            raise ValueError(f"categorical_features: each item must be a feature index (int) or name (str), "
                             f"got {item!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"categorical_features names a feature twice: {items!r}")
    return sorted(out)


def check_codes(codes: np.ndarray, feature: str) -> None:
    """Integer codes given as numbers: each non-missing one must be an integer in
    [0, MAX_CATEGORIES); ValueError naming the feature, the row and the value otherwise."""
    valid = np.isnan(codes) | ((codes >= 0) & (codes < MAX_CATEGORIES) & (codes == np.floor(codes)))
    if not valid.all():
        row = int(np.flatnonzero(~valid)[0])
        raise ValueError(f"categorical feature {feature}: code {float(codes[row])!r} at row {row} is not an "
                         f"integer in [0, {MAX_CATEGORIES}) (MAX_CATEGORIES); give the raw values (strings, "
                         f"or a pandas category column) to have them mapped to codes")


def category_values(values, feature: str) -> np.ndarray:
    """`values` as category values: an object array of str, or an int64 array;
    TypeError for anything else (floats, bools, a mix of strings and integers)."""
    arr = np.asarray(values)
    if arr.size == 0:  # no values: their dtype says nothing (pandas makes an empty category float64)
        return np.empty(0, dtype=object)
    if arr.dtype.kind in "iu":
        if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
            raise ValueError(f"categorical feature {feature}: category values beyond int64")
        return arr.astype(np.int64)
    items = arr.tolist()
    if arr.dtype.kind in "OUT" and all(isinstance(v, str) for v in items):
        return np.array(items, dtype=object).reshape(-1)
    if arr.dtype.kind == "O" and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in items):
        return np.array(items, dtype=np.int64).reshape(-1)
    kinds = sorted({type(v).__name__ for v in items}) or [str(arr.dtype)]
    raise TypeError(f"categorical feature {feature}: category values must be all strings or all integers, "
                    f"got {', '.join(kinds)}")


def learn_codes(indices: np.ndarray, values, ordered: bool, feature: str) -> tuple[np.ndarray, np.ndarray]:
    """A dictionary-encoded column (per row an index into `values`, -1 = missing) as float
    codes and the categories in code order: `values` as they are when `ordered` (a declared
    order), else the distinct values present, sorted."""
    values = np.asarray(values)
    if ordered:
        categories = category_values(values, feature)
        if len(np.unique(categories)) != len(categories):
            raise ValueError(f"categorical feature {feature}: repeated category values")
        code_of_value = np.arange(len(categories))
    else:  # a dictionary may hold unused or repeated values: keep the distinct ones present
        present = np.unique(indices[indices >= 0])
        categories, inverse = np.unique(category_values(values[present], feature), return_inverse=True)
        code_of_value = np.full(len(values), -1, dtype=np.int64)
        code_of_value[present] = inverse
    if len(categories) > MAX_CATEGORIES:
        raise ValueError(f"categorical feature {feature} has {len(categories)} categories; at most "
                         f"{MAX_CATEGORIES} (MAX_CATEGORIES) are supported")
    return _take(code_of_value.astype(np.float64), indices), categories


def _take(table: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """table[indices] as float64, NaN where an index is -1 (missing) or the table says -1."""
    table = np.append(table, np.nan)  # index -1 reads the NaN
    table[table < 0] = np.nan
    return table[indices]


def _kind(categories: np.ndarray) -> str:
    return "string" if categories.dtype == object else "integer"


def map_codes(indices: np.ndarray, values, categories: np.ndarray | None, feature: str,
              unseen: float = np.nan) -> np.ndarray:
    """A dictionary-encoded column coded with a model's mapping, by value: a missing value
    becomes NaN, one not in `categories` `unseen` (NaN by default; a model of target
    statistics tells it apart). With `categories` None (the model was trained on integer
    codes) the values must be integers and are the codes."""
    values = category_values(values, feature)
    if categories is None:
        if values.dtype == object:
            raise ValueError(f"categorical feature {feature} was trained on integer codes; got strings")
        return _take(values.astype(np.float64), indices)
    if len(values) and len(categories) and _kind(values) != _kind(categories):
        raise ValueError(f"categorical feature {feature} was trained on {_kind(categories)} categories; "
                         f"got {_kind(values)} values")
    code = {value: c for c, value in enumerate(categories.tolist())}
    table = np.array([code.get(value, unseen) for value in values.tolist()], dtype=np.float64)
    return _take(table, indices)


def map_numbers(column: np.ndarray, categories: np.ndarray | None, feature: str, dtype,
                unseen: float = np.nan) -> np.ndarray:
    """A numeric column for a categorical feature: the codes themselves when the model was
    trained on codes (`categories` None), else coded by value with its integer categories
    (a non-integer or unseen number -> `unseen`); ValueError when its categories are strings."""
    if categories is None:
        return column
    if len(categories) and _kind(categories) == "string":
        raise ValueError(f"categorical feature {feature} was trained on string categories; got numbers "
                         f"(dtype {dtype})")
    known = ~np.isnan(column)
    distinct, inverse = np.unique(column[known], return_inverse=True)
    code = {value: c for c, value in enumerate(categories.tolist())}
    table = np.array([code.get(int(v), unseen) if float(v).is_integer() else unseen for v in distinct.tolist()],
                     dtype=np.float64)
    indices = np.full(len(column), -1, dtype=np.int64)
    indices[known] = inverse
    return _take(table, indices)


def recode(X: np.ndarray, given: dict, wanted: dict, names: list[str] | None, name: str,
           unseen: float = np.nan) -> np.ndarray:
    """X's codes (mapped with `given`, feature -> categories) recoded to `wanted`'s mapping
    by value; a copy when a column changes. A feature without a mapping in `given` is
    taken as codes (as a NumPy array's at prediction); a feature categorical in `given`
    but not in `wanted` is a ValueError naming `name`; a value `wanted` lacks is coded
    `unseen`."""
    numeric = sorted(set(given) - set(wanted))
    if numeric:
        raise ValueError(f"{name}: feature {feature_label(numeric[0], names)} is categorical here but the "
                         f"model's is numeric")
    out = X
    for f, categories in wanted.items():
        if given.get(f) is None:
            continue
        codes = X[:, f]
        indices = np.where(np.isnan(codes), -1, codes).astype(np.int64)
        if out is X:
            out = X.copy()
        out[:, f] = map_codes(indices, given[f], categories, feature_label(f, names), unseen)
    return out


def feature_label(f: int, names: list[str] | None) -> str:
    """How messages name feature f: its name and index when it has a name."""
    return f"{f}" if names is None else f"{names[f]!r} (index {f})"


def learn_frame(frame: Frame, categorical: list[int], names: list[str]) -> tuple[np.ndarray, dict]:
    """A frame as the float matrix a Dataset holds, its categorical features as codes, and
    their categories (feature -> values in code order, None for a numeric column: codes)."""
    categories = {}

    def encoder(f):
        def encode(column):
            label = feature_label(f, names)
            if column.numeric:
                codes = column.floats(np.float64)
                check_codes(codes, label)
                categories[f] = None
                return codes
            codes, categories[f] = learn_codes(*column.encoded(), label)
            return codes
        return encode

    X = frame_matrix(frame, "X", {f: encoder(f) for f in categorical})
    return X, {f: categories[f] for f in categorical}


def frame_codes(frame: Frame, order, categories: dict, names: list[str] | None,
                unseen: float = np.nan) -> np.ndarray:
    """A frame at prediction: feature j is column `order[j]` (column j without `order`);
    a categorical feature is coded by value with the model's `categories` (see
    `map_codes`, `map_numbers`; an unseen value -> `unseen`). A column whose dtype drifted is a ValueError: a
    categorical dtype (pandas `category`, Arrow dictionary, polars `Categorical`/`Enum`)
    or strings for a numeric feature, or a categorical dtype for a feature the model
    learnt from integer codes (its values are not those codes)."""
    sources = range(frame.shape[1]) if order is None else [int(c) for c in order]
    for f, c in enumerate(sources):
        if f not in categories:
            column = frame.column(c)
            if not column.numeric:
                raise ValueError(f"X: column {column.name!r} has dtype {column.dtype} but the model's feature "
                                 f"{feature_label(f, names)} is numeric; give it as numbers, as in training")

    def encoder(f):
        def encode(column):
            label = feature_label(f, names)
            if categories[f] is None and column.categorical:
                raise ValueError(f"categorical feature {label} was trained on integer codes (a numeric column); "
                                 f"got a categorical column (dtype {column.dtype}) whose values are not those "
                                 f"codes: give the codes as numbers, or train on the categorical column")
            if column.numeric:
                return map_numbers(column.floats(np.float64), categories[f], label, column.dtype, unseen)
            return map_codes(*column.encoded()[:2], categories[f], label, unseen)
        return encode

    return frame_matrix(frame, "X", {f: encoder(f) for f in categories}, order)
