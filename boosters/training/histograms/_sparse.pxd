from libc.stdint cimport uint32_t, int32_t, int64_t

from boosters._lib.types cimport grad_t, hist_t, row_t


# The sparse columns (data/sparse_binning.py): every row's entries away from their
# features' default bins, as histogram indices, and where those columns sit.
cdef struct SparseRows:
    const int64_t* indptr       # (n_rows + 1) row starts in entries
    const uint32_t* entries     # histogram indices, in feature order within a row
    Py_ssize_t lo               # the sparse columns' bins: [lo, hi) of a histogram
    Py_ssize_t hi
    Py_ssize_t totals_bin       # every row is added here: the node's totals (the totals column)
    const int64_t* col_offsets  # every column's first histogram bin (n_columns + 1)
    const int32_t* col_default  # per column: a sparse column's default bin (-1: the totals column)
    Py_ssize_t first_col        # the sparse columns: first_col..last_col - 1
    Py_ssize_t last_col


cdef void build_sparse(const SparseRows* m, const row_t* rows, Py_ssize_t start, Py_ssize_t n,
                       const grad_t* values, hist_t* hist, hist_t* scratch, int n_blocks,
                       int n_threads) noexcept nogil

cdef void build_sparse_words(const SparseRows* m, const row_t* rows, Py_ssize_t start, Py_ssize_t n,
                             const void* packed, int packed_bits, void* hist, void* scratch, int sum_bits,
                             int n_blocks, int n_threads) noexcept nogil
