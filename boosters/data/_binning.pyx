"""Value -> bin mapping kernel (RFC-0003 binning, used by BinMapper.transform).

Bin layout of a feature with `n_value_bins` value bins:
    bin 0                  missing value (NaN)
    bin k, 1 <= k <= n     values x with upper_edges[k-2] < x <= upper_edges[k-1]
The last upper edge is +inf, so every non-NaN value (+-inf included) lands in a value bin.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int8_t, int32_t, int64_t

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


# ----------------------------------------------------------------------------------
# Sparse input (data/sparse_binning.py): a CSR or CSC matrix binned into a CSR of bins
# ----------------------------------------------------------------------------------

ctypedef fused index_t:
    int32_t
    int64_t


cdef inline int64_t sparse_entry(double x, const double* edges, Py_ssize_t n_edges, int32_t default_bin,
                                 int64_t base) noexcept nogil:
    """The histogram index of a stored value x of a feature stored sparse (`base`: where its
    column starts), -1 when x falls in the feature's default bin (the bin of 0: not stored)."""
    cdef Py_ssize_t b = bin_of(x, edges, n_edges)
    if b == default_bin:
        return -1
    return base + b


def bin_csr(
    const value_t[::1] data,              # IN: the CSR's values (canonical: sorted indices, no duplicates)
    const index_t[::1] indices,           # IN: their features
    const index_t[::1] indptr,            # IN: (n_rows + 1) row starts
    const double[::1] edges,              # IN: all features' upper edges, concatenated
    const int64_t[::1] edge_offsets,      # IN: feature f owns edges[edge_offsets[f]:edge_offsets[f+1]]
    const int32_t[::1] default_bin,       # IN: per feature, the bin of 0
    const int64_t[::1] base,              # IN: per feature, the histogram index of its bin 0
    int64_t[::1] out_indptr,              # OUT: (n_rows + 1) row starts of the bins; out_indptr[0] is given
    uint32_t[::1] out_bins,               # OUT: the rows' non-default entries (None: count only)
    int n_threads,
):
    """Rows of a CSR matrix as their non-default histogram entries, in feature order.
    Called twice: without out_bins, out_indptr[r + 1] receives row r's entry count (the
    caller takes the cumulative sum); then with out_bins, the entries. Parallel over rows."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, r, k, f
    cdef int64_t e, pos
    cdef bint count_only = out_bins is None
    cdef uint32_t* bins_out = NULL if count_only or out_bins.shape[0] == 0 else &out_bins[0]
    if out_indptr.shape[0] != n_rows + 1 or edge_offsets.shape[0] != default_bin.shape[0] + 1 \
            or base.shape[0] != default_bin.shape[0]:
        raise ValueError("bin_csr: inconsistent array sizes")
    with nogil:
        for r in prange(n_rows, schedule="static", num_threads=n_threads):
            pos = bin_csr_row(data, indices, indptr[r], indptr[r + 1], &edges[0], &edge_offsets[0], &default_bin[0],
                              &base[0], NULL if count_only else bins_out + out_indptr[r])
            if count_only:
                out_indptr[r + 1] = pos


cdef inline int64_t bin_csr_row(
    const value_t[::1] data,        # IN: as bin_csr
    const index_t[::1] indices,     # IN
    Py_ssize_t first,               # the row's values first..stop-1
    Py_ssize_t stop,
    const double* edges,            # IN
    const int64_t* edge_offsets,    # IN
    const int32_t* default_bin,     # IN
    const int64_t* base,            # IN
    uint32_t* out,                  # OUT: the row's entries; NULL: count only
) noexcept nogil:
    """One row of bin_csr: its number of non-default entries, written to out unless NULL."""
    cdef Py_ssize_t k, f
    cdef int64_t e, pos = 0
    for k in range(first, stop):
        f = indices[k]
        e = sparse_entry(<double> data[k], edges + edge_offsets[f], edge_offsets[f + 1] - edge_offsets[f],
                         default_bin[f], base[f])
        if e >= 0:
            if out != NULL:
                out[pos] = <uint32_t> e
            pos += 1
    return pos


def bin_csc(
    const value_t[::1] data,              # IN: the CSC's values (canonical)
    const index_t[::1] indices,           # IN: their rows
    const index_t[::1] indptr,            # IN: (n_features + 1) column starts
    const double[::1] edges,              # IN: as bin_csr
    const int64_t[::1] edge_offsets,      # IN
    const int32_t[::1] default_bin,       # IN
    const int64_t[::1] base,              # IN
    int64_t[::1] out_indptr,              # IN and OUT: as bin_csr
    uint32_t[::1] out_bins,               # OUT: as bin_csr (None: count only)
):
    """bin_csr for a CSC matrix: column by column, so each row's entries come in feature
    order. The fill pass moves a cursor per row (out_indptr's row starts, restored after)."""
    cdef Py_ssize_t n_features = indptr.shape[0] - 1, n_rows = out_indptr.shape[0] - 1, r, k, f
    cdef int64_t e
    cdef bint count_only = out_bins is None
    cdef uint32_t* bins_out = NULL if count_only or out_bins.shape[0] == 0 else &out_bins[0]
    if edge_offsets.shape[0] != n_features + 1 or default_bin.shape[0] != n_features \
            or base.shape[0] != n_features:
        raise ValueError("bin_csc: inconsistent array sizes")
    with nogil:
        if count_only:
            for r in range(n_rows):
                out_indptr[r + 1] = 0
        for f in range(n_features):
            for k in range(indptr[f], indptr[f + 1]):
                e = sparse_entry(<double> data[k], &edges[edge_offsets[f]], edge_offsets[f + 1] - edge_offsets[f],
                                 default_bin[f], base[f])
                if e >= 0:
                    r = indices[k]
                    if count_only:
                        out_indptr[r + 1] += 1
                    else:  # out_indptr[r] is row r's cursor during the pass
                        bins_out[out_indptr[r]] = <uint32_t> e
                        out_indptr[r] += 1
        if not count_only:  # the cursors ended at the next row's start: shift them back
            for r in range(n_rows, 0, -1):
                out_indptr[r] = out_indptr[r - 1]
            out_indptr[0] = 0


def sparse_column_rows(
    const int64_t[::1] indptr,            # IN: (n_rows + 1) the bins' CSR row starts
    const uint32_t[::1] entries,          # IN: histogram indices
    const int32_t[::1] bin_column,        # IN: the column of every histogram index
    int64_t[::1] col_indptr,              # OUT: (n_columns + 1) column starts in col_rows
    uint32_t[::1] col_rows,               # OUT: (len(entries)) each column's rows with an entry, in order
):
    """The transpose of the bins' CSR, rows only: which rows have an entry in each column
    (the partitioner walks a split column's rows beside the node's, both sorted)."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, n_cols = col_indptr.shape[0] - 1, r, k, c
    if col_rows.shape[0] != entries.shape[0] or indptr[n_rows] != entries.shape[0]:
        raise ValueError("sparse_column_rows: inconsistent array sizes")
    cursor = np.zeros(n_cols + 1, dtype=np.int64)
    cdef int64_t[::1] cur = cursor
    with nogil:
        for c in range(n_cols + 1):
            col_indptr[c] = 0
        for k in range(entries.shape[0]):
            col_indptr[bin_column[entries[k]] + 1] += 1
        for c in range(n_cols):
            col_indptr[c + 1] += col_indptr[c]
            cur[c] = col_indptr[c]
        for r in range(n_rows):
            for k in range(indptr[r], indptr[r + 1]):
                c = bin_column[entries[k]]
                col_rows[cur[c]] = <uint32_t> r
                cur[c] += 1
