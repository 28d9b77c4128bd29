from libc.stdint cimport uint8_t, int64_t

from boosters._lib.types cimport grad_t, hist_t, row_t

cdef enum:
    MAX_ROW_BLOCKS = 16
    ROW_PREFETCH = 16  # rows ahead: a gathered node's rows are scattered cache lines


# The row-wise columns: their bins stored row-major, and where they sit in a histogram.
cdef struct RowMatrix:
    const uint8_t* bins         # (n_rows, stride) row-major bins of the row-wise columns
    Py_ssize_t stride
    Py_ssize_t n_cols
    const int64_t* offsets      # histogram offset of each row-wise column
    const int64_t* n_bins       # bin count of each row-wise column
    Py_ssize_t total_bins       # bins of a whole histogram (the scratch histograms' stride)


cdef int row_blocks(Py_ssize_t n_rows, bint exact, int n_threads) noexcept nogil

cdef void build_rows(const RowMatrix* m, const row_t* rows, Py_ssize_t start, Py_ssize_t n,
                     const grad_t* values, hist_t* hist, hist_t* scratch, int n_blocks, int n_threads,
                     Py_ssize_t prefetch) noexcept nogil

cdef void build_rows_words(const RowMatrix* m, const row_t* rows, Py_ssize_t start, Py_ssize_t n,
                           const void* packed, int packed_bits, void* hist, void* scratch, int sum_bits,
                           int n_blocks, int n_threads, Py_ssize_t prefetch) noexcept nogil
