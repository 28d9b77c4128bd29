from libc.stdint cimport uint8_t, uint16_t, int8_t, int32_t, int64_t

from boosters._lib.columns cimport BinColumns
from boosters._lib.types cimport hist_t, row_t

cdef enum:
    MIN_COLUMNS_PARALLEL = 4      # fewer columns: stay serial (RFC-0007)
    MIN_WORK_PER_THREAD = 4096    # rows x columns per thread below which threads cost more than they save
    GATHER_ROWS_PER_THREAD = 16384
    PREFETCH_DISTANCE = 64        # rows ahead in gathered kernels (the default; 0 turns prefetch off)


cdef class ColumnsView:
    cdef const uint8_t[:, ::1] u8
    cdef const uint16_t[:, ::1] u16
    cdef const int8_t[::1] kind
    cdef const int32_t[::1] index
    cdef const int64_t[::1] offsets
    cdef const int32_t[::1] n_bins
    cdef BinColumns cols
    cdef Py_ssize_t n_rows, n_columns, total_bins


cdef int threads_for_build(int n_threads, Py_ssize_t n_columns, Py_ssize_t n_rows) noexcept nogil

cdef void build_column(const BinColumns* cols, Py_ssize_t column, const row_t* rows, Py_ssize_t start,
                       Py_ssize_t n, const void* values, hist_t* hist, Py_ssize_t n_bins,
                       Py_ssize_t prefetch_distance) noexcept nogil

cdef void build_column_words(const BinColumns* cols, Py_ssize_t column, const row_t* rows, Py_ssize_t start,
                             Py_ssize_t n, const void* words, void* hist, int sum_bits, Py_ssize_t n_bins,
                             Py_ssize_t prefetch_distance) noexcept nogil

cdef void gather_pairs(const float* gh, const row_t* rows, Py_ssize_t n, float* ordered,
                       int n_threads) noexcept nogil

cdef void gather_words(const void* packed, int packed_bits, const row_t* rows, Py_ssize_t n, void* out,
                       int sum_bits, int n_threads) noexcept nogil

cdef void subtract_bins(const hist_t* parent, const hist_t* child, hist_t* out, Py_ssize_t n_bins) noexcept nogil

cdef void subtract_words(const void* parent, int parent_bits, const void* child, int child_bits,
                         void* out, int out_bits, Py_ssize_t n_bins) noexcept nogil
