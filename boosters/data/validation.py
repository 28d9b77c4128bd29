"""Input checks shared by Dataset, binning and prediction: clear errors, no silent fixes."""

from __future__ import annotations

from collections import Counter

import numpy as np

from boosters.data.frames import as_frame, frame_library, frame_matrix

_FLOAT_KINDS = (np.float32, np.float64)


def is_frame(X) -> bool:
    """A pandas or polars DataFrame or a pyarrow Table, recognised by its type's module
    (those libraries are optional, never imported here)."""
    return frame_library(X) is not None


def column_names(X) -> list[str] | None:
    """A frame's column labels as strings (the feature names it carries); None otherwise."""
    frame = as_frame(X)
    return None if frame is None else frame.names


def as_feature_matrix(X, name: str = "X") -> np.ndarray:
    """X as a 2-D float32/float64 array: no copy for float input, one copy otherwise.

    Accepts anything NumPy can turn into a numeric 2-D array (lists, arrays), pandas and
    polars DataFrames and pyarrow Tables (read column by column: numeric, bool and
    nullable columns, null / pd.NA as NaN). Raises ValueError for non-numeric (naming the
    column), non-2-D or empty input.
    """
    frame = as_frame(X)
    if frame is not None:
        return frame_matrix(frame, name)
    try:
        arr = np.asarray(X)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} could not be read as a 2-D numeric array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric (bool, int or float); got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_rows, n_features); got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {arr.shape}; need at least one row and one feature")
    if arr.dtype.type in _FLOAT_KINDS:
        return arr
    if arr.dtype == np.float16:
        return arr.astype(np.float32)
    return arr.astype(np.float64)


def match_columns(given: list[str], expected: list[str], name: str) -> np.ndarray | None:
    """Where each expected feature is among the `given` column names (None when they are
    already in order): features are matched by name. ValueError naming the missing and
    unexpected columns when the names differ."""
    if given == expected:
        return None
    position = {column: i for i, column in enumerate(given)}
    missing = [f for f in expected if f not in position]
    expected_set = set(expected)  # once: rebuilt per column, 10,000 columns took 10 s
    unexpected = [c for c in given if c not in expected_set]
    if missing or unexpected or len(position) != len(given):
        duplicated = sorted(c for c, count in Counter(given).items() if count > 1)
        raise ValueError(f"{name}: its columns do not match the model's features: missing {missing}, "
                         f"unexpected {unexpected}" + (f", duplicated {duplicated}" if duplicated else ""))
    return np.array([position[f] for f in expected], dtype=np.intp)


def as_vector(v, n_rows: int, name: str, *, finite: bool = True) -> np.ndarray:
    """`v` as a read-only 1-D float64 array of length n_rows (no copy when it already is
    contiguous float64); ValueError naming `name` otherwise."""
    try:
        arr = np.asarray(v)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} could not be read as a 1-D numeric array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D with one value per row; got shape {arr.shape}")
    if arr.shape[0] != n_rows:
        raise ValueError(f"{name} has {arr.shape[0]} values but X has {n_rows} rows")
    # the caller's memory when possible (a label vector is as big as a feature column),
    # behind a read-only view: boosters never writes to it
    out = np.ascontiguousarray(arr, dtype=np.float64).view()
    out.flags.writeable = False
    if finite and not np.all(np.isfinite(out)):
        bad = int(np.flatnonzero(~np.isfinite(out))[0])
        raise ValueError(f"{name} contains NaN or inf (first at index {bad}: {out[bad]})")
    return out


def as_labels(y, n_rows: int, name: str = "y") -> np.ndarray:
    """Labels as a read-only float64 array: one finite label per row, 1-D (a single column
    is taken as one), or 2-D (n_rows, k >= 2), C-contiguous, for multi-target regression
    (k labels per row). No copy when already so; ValueError naming `name` otherwise."""
    try:
        arr = np.asarray(y)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} could not be read as a numeric array: {exc}") from None
    if arr.ndim > 2:
        raise ValueError(f"{name} must be 1-D (one label per row) or 2-D (n_rows, n_targets); got shape {arr.shape}")
    if arr.ndim < 2 or arr.shape[1] == 1:
        return as_vector(arr, n_rows, name)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}")
    if arr.shape[0] != n_rows:
        raise ValueError(f"{name} has {arr.shape[0]} rows but X has {n_rows} rows")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no columns: shape {arr.shape}; give one label per row, or k >= 2 per row")
    out = np.ascontiguousarray(arr, dtype=np.float64).view()
    out.flags.writeable = False
    if not np.all(np.isfinite(out)):
        row, column = (int(i) for i in np.argwhere(~np.isfinite(out))[0])
        raise ValueError(f"{name} contains NaN or inf (first at row {row}, column {column}: {out[row, column]})")
    return out
def as_init_score(v, n_rows: int, name: str = "init_score") -> np.ndarray:
    """Starting margins: a read-only float64 array of shape (n_rows,) or (n_rows, k),
    finite; a (n_rows, 1) column becomes (n_rows,). ValueError naming `name` otherwise."""
    arr = np.asarray(v)
    if arr.ndim == 2 and arr.shape[1] == 1 or arr.ndim == 1:
        return as_vector(arr, n_rows, name)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] != n_rows:
        raise ValueError(f"{name} must have shape ({n_rows},) or ({n_rows}, n_outputs); got shape {arr.shape}")
    out = np.ascontiguousarray(arr, dtype=np.float64).view()
    out.flags.writeable = False
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} contains NaN or inf")
    return out


def init_score_columns(init_score: np.ndarray, n_outputs: int, name: str = "init_score") -> np.ndarray:
    """Checked starting margins (`as_init_score`) as (n_rows, n_outputs), for a model of
    `n_outputs` margins per row; ValueError naming `name` when the widths differ."""
    columns = init_score[:, None] if init_score.ndim == 1 else init_score
    if columns.shape[1] != n_outputs:
        raise ValueError(f"{name} has {columns.shape[1]} value(s) per row but the model has {n_outputs} "
                         f"output(s): give shape (n_rows,{'' if n_outputs == 1 else f' {n_outputs}'})")
    return columns
