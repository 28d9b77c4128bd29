"""Query groups of a ranking dataset: group sizes or per-row query ids -> row boundaries."""

from __future__ import annotations

import numpy as np


def query_boundaries(group, qid, n_rows: int) -> np.ndarray | None:
    """The row boundaries of the query groups given by `group` (sizes) or `qid` (ids).

    Parameters
    ----------
    group : array-like of int or None
        Sizes of consecutive query groups: positive integers summing to `n_rows`.
    qid : array-like or None
        One query id per row; the rows of a query must be contiguous.
    n_rows : int
        The number of rows of the dataset.

    Returns
    -------
    numpy.ndarray or None
        int64 boundaries, n_groups + 1 of them from 0 to `n_rows` (group q is rows
        ``boundaries[q]:boundaries[q + 1]``); None when neither is given.

    Examples
    --------
    >>> query_boundaries([2, 3], None, 5)
    array([0, 2, 5])
    >>> query_boundaries(None, [7, 7, 1, 1, 1], 5)
    array([0, 2, 5])
    """
    if group is not None and qid is not None:
        raise ValueError("group and qid: give one of them (group sizes or per-row query ids), not both")
    if group is not None:
        return _from_sizes(group, n_rows)
    if qid is not None:
        return _from_ids(qid, n_rows)
    return None


def _from_sizes(group, n_rows: int) -> np.ndarray:
    sizes = np.asarray(group)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"group must be a non-empty 1-D sequence of group sizes, got shape {sizes.shape}")
    if sizes.dtype.kind not in "iuf" or sizes.dtype.kind == "f" and not np.all(sizes == np.floor(sizes)):
        raise TypeError(f"group must hold integer group sizes, got dtype {sizes.dtype}")
    if np.any(sizes <= 0):
        raise ValueError(f"group sizes must be positive, found {sizes[np.argmax(sizes <= 0)]}")
    if np.any(sizes > n_rows):  # sizes and their number bounded, so that their sums cannot wrap around
        raise ValueError(f"group: a group of size {sizes[np.argmax(sizes > n_rows)]} but X has {n_rows} rows")
    if len(sizes) > n_rows:
        raise ValueError(f"group: {len(sizes)} groups but X has {n_rows} rows")
    ends = np.cumsum(sizes.astype(np.uint64))  # at most n_rows ** 2 < 2 ** 64: exact
    if int(ends[-1]) != n_rows:
        raise ValueError(f"group sizes sum to {int(ends[-1])} but X has {n_rows} rows")
    return np.concatenate([[0], ends.astype(np.int64)])


def _from_ids(qid, n_rows: int) -> np.ndarray:
    ids = np.asarray(qid)
    if ids.ndim != 1 or len(ids) != n_rows:
        raise ValueError(f"qid must have one query id per row ({n_rows}), got shape {ids.shape}")
    if ids.dtype.kind == "f" and np.any(np.isnan(ids)):
        raise ValueError("qid must not contain NaN")
    if ids.dtype.kind == "O":  # None, NaN, pd.NA: a missing query id
        missing = next((i for i, value in enumerate(ids.tolist()) if _is_missing(value)), None)
        if missing is not None:
            raise ValueError(f"qid must not contain missing values: row {missing} holds {ids[missing]!r}")
    starts = np.flatnonzero(ids[1:] != ids[:-1]) + 1  # where a new run of equal ids begins
    repeated = _first_repeated(ids[np.concatenate([[0], starts])])
    if repeated is not None:
        raise ValueError(f"qid: the rows of query {repeated!r} are not contiguous; sort the rows by query id "
                         f"(keeping each query's rows together)")
    return np.concatenate([[0], starts, [n_rows]]).astype(np.int64)


def _is_missing(value) -> bool:
    """None, or a value not equal to itself (NaN), or one that cannot say (pd.NA)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return True


def _first_repeated(values: np.ndarray):
    seen = set()
    for value in values.tolist():
        if value in seen:
            return value
        seen.add(value)
    return None


def kernel_boundaries(groups, n_rows: int, user: str) -> np.ndarray:
    """`groups` as contiguous int64 query boundaries for a kernel, after the O(1) checks that
    keep its indices in 0..n_rows (1-D, from 0 to `n_rows`). That they increase is not
    checked again: `query_boundaries` made them, and a Dataset's are never changed.

    Examples
    --------
    >>> kernel_boundaries([0, 2, 5], 5, "lambdarank")
    array([0, 2, 5])
    >>> kernel_boundaries([0, 2], 5, "lambdarank")
    Traceback (most recent call last):
      ...
    ValueError: lambdarank: groups must be 1-D query boundaries from 0 to 5 (Dataset.group_boundaries)
    """
    if groups is None:
        raise ValueError(f"{user} needs query groups: Dataset(..., group=sizes) or qid=ids")
    bounds = np.ascontiguousarray(groups, dtype=np.int64)
    if bounds.ndim != 1 or len(bounds) < 2 or bounds[0] != 0 or bounds[-1] != n_rows:
        raise ValueError(f"{user}: groups must be 1-D query boundaries from 0 to {n_rows} (Dataset.group_boundaries)")
    return bounds
