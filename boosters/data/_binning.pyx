"""Value -> bin mapping kernel (RFC-0003 binning, used by BinMapper.transform).

Bin layout of a feature with `n_value_bins` value bins:
    bin 0                  missing value (NaN)
    bin k, 1 <= k <= n     values x with upper_edges[k-2] < x <= upper_edges[k-1]
The last upper edge is +inf, so every non-NaN value (+-inf included) lands in a value bin.
"""

from cython.parallel cimport prange
from libc.stdint cimport uint8_t, uint16_t, int8_t, int32_t, int64_t

from boosters._lib.types cimport value_t

# Rows handled together for row-major input, so that one block of X stays in cache
# while each feature's bins are written.
cdef enum:
    ROW_BLOCK = 1024


cdef inline Py_ssize_t bin_of(double x, const double* edges, Py_ssize_t n_edges) noexcept nogil:  # edges: IN
    """Bin of x: 0 for NaN, else 1 + index of the first upper edge >= x (branchless search)."""
    cdef Py_ssize_t base = 0, half, n = n_edges
    if x != x:
        return 0
    while n > 1:
        half = n >> 1
        if edges[base + half - 1] < x:
            base = base + half
        n -= half
    return 1 + base + (edges[base] < x)


cdef inline void bin_feature_rows(
    const value_t[:, :] X,        # IN
    Py_ssize_t feature,
    Py_ssize_t row_start,
    Py_ssize_t row_end,
    const double* edges,          # IN: this feature's upper edges
    Py_ssize_t n_edges,
    uint8_t* out_u8,              # OUT: this feature's uint8 column, or NULL
    uint16_t* out_u16,            # OUT: this feature's uint16 column, or NULL
) noexcept nogil:
    cdef Py_ssize_t r
    if out_u8 != NULL:
        for r in range(row_start, row_end):
            out_u8[r] = <uint8_t> bin_of(<double> X[r, feature], edges, n_edges)
    else:
        for r in range(row_start, row_end):
            out_u16[r] = <uint16_t> bin_of(<double> X[r, feature], edges, n_edges)


def map_to_bins(
    const value_t[:, :] X,                # IN: (n_rows, n_features), any memory order
    const double[::1] edges,              # IN: all features' upper edges, concatenated
    const int64_t[::1] edge_offsets,      # IN: feature f owns edges[edge_offsets[f]:edge_offsets[f+1]]
    const int8_t[::1] feature_kind,       # IN: 0 -> uint8 storage, 1 -> uint16 storage
    const int32_t[::1] feature_column,    # IN: row of out_u8 / out_u16 holding feature f
    uint8_t[:, ::1] out_u8,               # OUT: (n_u8_features, n_rows) feature-major
    uint16_t[:, ::1] out_u16,             # OUT: (n_u16_features, n_rows) feature-major
    int n_threads,
):
    """Write the bin of every value of X into the feature-major bin matrices.

    Column-major X is processed in parallel over features (each feature's values are
    contiguous); any other layout in parallel over blocks of rows, so X is read from
    memory once instead of once per feature. Both write disjoint output regions.
    """
    cdef Py_ssize_t n_rows = X.shape[0], n_features = X.shape[1]
    cdef Py_ssize_t f, block, n_blocks, r0, r1
    cdef uint8_t* col8
    cdef uint16_t* col16
    if edge_offsets.shape[0] != n_features + 1 or feature_kind.shape[0] != n_features:
        raise ValueError("bin layout does not match the number of features of X")
    if n_rows == 0 or n_features == 0:
        return
    cdef bint column_major = X.strides[0] == sizeof(value_t)
    with nogil:
        if column_major:
            for f in prange(n_features, schedule="static", num_threads=n_threads):
                col8 = &out_u8[feature_column[f], 0] if feature_kind[f] == 0 else NULL
                col16 = &out_u16[feature_column[f], 0] if feature_kind[f] == 1 else NULL
                bin_feature_rows(X, f, 0, n_rows, &edges[edge_offsets[f]],
                                 edge_offsets[f + 1] - edge_offsets[f], col8, col16)
        else:
            n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
            for block in prange(n_blocks, schedule="static", num_threads=n_threads):
                r0 = block * ROW_BLOCK
                r1 = min(r0 + ROW_BLOCK, n_rows)
                for f in range(n_features):
                    col8 = &out_u8[feature_column[f], 0] if feature_kind[f] == 0 else NULL
                    col16 = &out_u16[feature_column[f], 0] if feature_kind[f] == 1 else NULL
                    bin_feature_rows(X, f, r0, r1, &edges[edge_offsets[f]],
                                     edge_offsets[f + 1] - edge_offsets[f], col8, col16)


def gather_columns(const value_t[:, :] X,          # IN
                   const int64_t[::1] rows,         # IN: sampled rows
                   Py_ssize_t first,
                   double[:, ::1] out):             # OUT: (n_columns, len(rows))
    """out[j, i] = X[rows[i], first + j]: a block of sampled columns as float64, reading
    each sampled row's few adjacent values together (NumPy's X[rows, a:b] costs tens of
    nanoseconds per value)."""
    cdef Py_ssize_t i, j, r, n_cols = out.shape[0]
    if out.shape[1] != rows.shape[0] or first < 0 or first + n_cols > X.shape[1]:
        raise ValueError("out must be (n_columns, len(rows)) and the columns inside X")
    for i in range(rows.shape[0]):
        if not 0 <= rows[i] < X.shape[0]:
            raise ValueError(f"row {rows[i]} outside X")
    with nogil:
        for i in range(rows.shape[0]):
            r = rows[i]
            for j in range(n_cols):
                out[j, i] = <double> X[r, first + j]
