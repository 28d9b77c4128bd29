"""scipy.sparse input: recognised by duck typing, checked once, never densified.

As in LightGBM, a stored or implicit zero is the value 0 and NaN is missing. CSR and CSC
matrices (scipy's sparse arrays and matrices alike) are referenced, not copied, when they
are already canonical (sorted indices, no duplicates) with float32/float64 values; other
sparse formats (COO, LIL, DOK, BSR, DIA) are converted to CSR once, and integer or bool
values to float64. pandas frames with sparse columns become a CSC matrix, column by column.
scipy is an optional dependency (`pip install boosters[sparse]`), imported only here, lazily.
"""

from __future__ import annotations

import numpy as np

_SPARSE_FORMATS = ("csr", "csc")
_CONVERTED_FORMATS = ("coo", "lil", "dok", "bsr", "dia")


def is_sparse(X) -> bool:
    """A scipy.sparse array or matrix (duck typing: scipy is never imported for dense input)."""
    return hasattr(X, "format") and hasattr(X, "nnz") and hasattr(X, "tocsr")


def has_sparse_columns(X) -> bool:
    """A pandas frame with at least one sparse column (pd.SparseDtype: a fill value and a subtype)."""
    dtypes = getattr(X, "dtypes", None) if hasattr(X, "iloc") else None
    return dtypes is not None and any(hasattr(d, "fill_value") and hasattr(d, "subtype") for d in dtypes)


def _scipy_sparse():
    try:
        import scipy.sparse
    except ImportError:  # pragma: no cover - scipy is installed with the test extra
        raise ImportError("sparse input needs scipy: pip install 'boosters[sparse]'") from None
    return scipy.sparse


def as_sparse_matrix(X, name: str = "X"):
    """X as a canonical CSR or CSC matrix with float32/float64 values and one index dtype
    (no copy when it already is one). ValueError naming `name` for empty, non-numeric or
    malformed input. The caller's matrix is never modified, and scipy's format flags
    (``has_canonical_format``, which a user may set) are not trusted: the kernels index
    through indptr and indices unchecked, so their arrays are checked here, once."""
    if len(X.shape) != 2:
        raise ValueError(f"{name} must be 2-D (n_rows, n_features); got shape {X.shape}")
    if X.format not in _SPARSE_FORMATS:
        if X.format not in _CONVERTED_FORMATS:
            raise ValueError(f"{name}: unsupported sparse format {X.format!r}")
        if X.format == "coo":  # scipy's conversion writes through the coordinates unchecked
            _check_coordinates(X, name)
        X = X.tocsr()
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}; need at least one row and one feature")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric (bool, int or float); got dtype {X.dtype}")
    problem = _compressed_problem(X)
    if problem:
        raise ValueError(f"{name}: not a valid {X.format.upper()} matrix: {problem}")
    nnz = int(X.indptr[-1])
    canonical = _is_canonical(X.indices[:nnz], X.indptr)
    same_index_dtype = X.indices.dtype == X.indptr.dtype and X.indptr.dtype.type in (np.int32, np.int64)
    if (X.dtype.type not in (np.float32, np.float64) or not same_index_dtype  # the kernels read both with
            or len(X.indices) != nnz or not canonical):                       # one index type: new arrays
        index_dtype = X.indptr.dtype if same_index_dtype else np.int64
        value_dtype = X.dtype if X.dtype.type in (np.float32, np.float64) else np.float64
        X = type(X)((X.data[:nnz].astype(value_dtype), X.indices[:nnz].astype(index_dtype),
                     X.indptr.astype(index_dtype)), shape=X.shape)
        if not canonical:  # sorted indices, no duplicates (which scipy sums)
            X.has_sorted_indices = X.has_canonical_format = False
            X.sum_duplicates()
    return X


def _compressed_problem(X) -> str | None:
    """What makes X's three arrays an invalid CSR/CSC matrix (scipy's constructor checks
    only the ends of indptr), or None. Reads them only (scipy's check_format may cast and
    trim them in place)."""
    n_major, n_minor = X.shape if X.format == "csr" else X.shape[::-1]
    data, indices, indptr = X.data, X.indices, X.indptr
    if data.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1:
        return "data, indices and indptr must be 1-D"
    if indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        return f"indices and indptr must be integers, got {indices.dtype} and {indptr.dtype}"
    if len(indptr) != n_major + 1:
        return f"indptr has {len(indptr)} entries; shape {X.shape} needs {n_major + 1}"
    if indptr[0] != 0:
        return f"indptr must start at 0, got {indptr[0]}"
    if len(indices) != len(data) or indptr[-1] > len(indices):
        return (f"indices ({len(indices)}) and data ({len(data)}) must have the same length, at least "
                f"indptr[-1] ({indptr[-1]})")
    decreasing = np.flatnonzero(indptr[1:] < indptr[:-1])
    if len(decreasing):
        i = int(decreasing[0])
        return f"indptr must not decrease: indptr[{i}] = {indptr[i]} > indptr[{i + 1}] = {indptr[i + 1]}"
    stored = indices[:int(indptr[-1])]
    if len(stored) and (stored.min() < 0 or stored.max() >= n_minor):
        bad = stored[(stored < 0) | (stored >= n_minor)][0]
        return f"index {bad} is outside 0..{n_minor - 1}"
    return None


def _is_canonical(indices: np.ndarray, indptr: np.ndarray) -> bool:
    """Each row's (column's) indices strictly increase: sorted, no duplicates. O(nnz)."""
    if len(indices) < 2:
        return True
    # neighbours compared, not np.diff: no int64 copy, and no wrap-around for unsigned indices
    steps = indices[1:] > indices[:-1]
    starts = indptr[1:-1]
    steps[starts[(starts > 0) & (starts < len(indices))] - 1] = True  # a new row may start anywhere
    return bool(steps.all())


def _check_coordinates(X, name: str) -> None:
    """ValueError naming `name` unless a COO matrix's coordinates lie inside its shape."""
    for axis, coords in enumerate((X.row, X.col)):
        if len(coords) != len(X.data) or len(coords) and (coords.min() < 0 or coords.max() >= X.shape[axis]):
            raise ValueError(f"{name}: not a valid COO matrix: its {('row', 'col')[axis]} coordinates must be "
                             f"{len(X.data)} values in 0..{X.shape[axis] - 1}")


def frame_to_sparse(df, name: str = "X"):
    """A pandas frame with sparse columns as a CSC matrix (float64), column by column: a
    sparse column's stored values (and its fill value where it is not 0), a dense
    column's non-zeros. Numeric columns only, as for dense frames."""
    sp = _scipy_sparse()
    n_rows, n_cols = df.shape
    if n_rows == 0 or n_cols == 0:
        raise ValueError(f"{name} is empty: shape {df.shape}; need at least one row and one feature")
    indices, values, indptr = [], [], [0]
    for j, (label, dtype) in enumerate(zip(df.columns, df.dtypes)):
        sparse_dtype = hasattr(dtype, "fill_value") and hasattr(dtype, "subtype")
        kind = getattr(dtype.subtype if sparse_dtype else dtype, "kind", "O")
        if kind not in "biuf":
            raise ValueError(f"{name}: column {label!r} has dtype {dtype}; features must be numeric")
        column = df.iloc[:, j]
        fill = float(dtype.fill_value) if sparse_dtype else np.nan
        if sparse_dtype and fill == 0.0:  # the stored values; the rest are zeros
            rows = np.asarray(column.array.sp_index.indices, dtype=np.int64)
            vals = np.asarray(column.array.sp_values, dtype=np.float64)
        else:  # a dense column, or a fill value that is not zero: every non-zero row
            full = column.to_numpy(dtype=np.float64, na_value=np.nan)
            rows = np.flatnonzero(full != 0.0)  # NaN != 0: stored (missing)
            vals = full[rows]
        indices.append(rows)
        values.append(vals)
        indptr.append(indptr[-1] + len(rows))
    index_dtype = np.int64 if indptr[-1] >= 2**31 else np.int32
    X = sp.csc_matrix((np.concatenate(values), np.concatenate(indices).astype(index_dtype),
                       np.asarray(indptr, dtype=index_dtype)), shape=(n_rows, n_cols))
    return as_sparse_matrix(X, name)


def sparse_fingerprint(X, fingerprint, n_threads: int) -> tuple:
    """The content fingerprint of a sparse matrix: its format, shape and its three arrays'."""
    return (X.format, X.shape, fingerprint(X.data, n_threads), fingerprint(X.indices, n_threads),
            fingerprint(X.indptr, n_threads))

