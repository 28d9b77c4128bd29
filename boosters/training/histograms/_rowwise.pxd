from libc.stdint cimport uint8_t, int64_t

from boosters._lib.types cimport row_t

cdef enum:
    MAX_ROW_BLOCKS = 16
    ROW_PREFETCH = 16  # rows ahead: a gathered node's rows are scattered cache lines


cdef int row_blocks(Py_ssize_t n_rows, bint exact, int n_threads) noexcept nogil

cdef void build_rowwise(
    const uint8_t* matrix, Py_ssize_t stride, const int64_t* col_offsets, const int64_t* col_bins,
    Py_ssize_t n_cols, const row_t* rows, Py_ssize_t start, Py_ssize_t n, const float* gh, double* hist,
    double* scratch, Py_ssize_t total_bins, int n_blocks, int n_threads, Py_ssize_t prefetch,
) noexcept nogil

cdef void build_rowwise_packed(
    const uint8_t* matrix, Py_ssize_t stride, const int64_t* col_offsets, const int64_t* col_bins,
    Py_ssize_t n_cols, const row_t* rows, Py_ssize_t start, Py_ssize_t n, const void* packed, int packed_bits,
    void* hist, void* scratch, int sum_bits, Py_ssize_t total_bins, int n_blocks, int n_threads,
    Py_ssize_t prefetch,
) noexcept nogil
