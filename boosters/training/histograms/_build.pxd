from libc.stdint cimport uint8_t, int16_t, int32_t, int64_t

from boosters.training._partition cimport RowPartitioner
from boosters.training.histograms._columnwise cimport ColumnsView


cdef class HistogramBuilder:
    cdef ColumnsView view
    cdef readonly bint quantized
    cdef double[:, :, ::1] pool
    cdef int64_t[:, ::1] pool_packed
    cdef float[:, ::1] ordered           # full precision: gathered (grad, hess)
    cdef int64_t[::1] ordered_packed     # quantized: the same memory, expanded pairs
    cdef const float[:, ::1] gh
    cdef const int32_t[::1] q32
    cdef const int16_t[::1] q16
    cdef int packed_bits                 # 16 (int32 words) or 8 (int16 words); 0 = none yet
    cdef int64_t levels                  # the largest |grad| or hess of a packed pair
    cdef readonly object sum_bits        # quantized: bits per sum of each slot's words (32, 16, 8)
    cdef uint8_t[::1] slot_bits          # the same array
    cdef int64_t[::1] slot_rows          # quantized: rows of the node each slot holds
    cdef const int32_t[::1] columns      # built column-wise
    cdef readonly bint rowwise
    cdef const uint8_t[:, ::1] row_matrix
    cdef const int32_t[::1] row_columns  # the row-wise columns (the root builds them column-wise)
    cdef const int64_t[::1] row_offsets   # histogram offset of each row-wise column
    cdef const int64_t[::1] row_bins
    cdef double[::1] scratch
    cdef int64_t[::1] scratch_packed
    cdef int64_t[:, ::1] batch           # (3, n): batch arguments as C arrays
    cdef public int n_threads
    cdef public Py_ssize_t prefetch_distance
    cdef Py_ssize_t n_slots

    cdef bint ready(self)
    cdef int bits_for(self, Py_ssize_t n_rows) noexcept nogil
    cdef char* slot_words(self, Py_ssize_t slot) noexcept nogil
    cdef const void* packed_values(self) noexcept nogil
    cdef char* ordered_words(self, Py_ssize_t begin) noexcept nogil
    cdef void build(self, RowPartitioner part, const int64_t* slot_v, const int64_t* node_v,
                    Py_ssize_t n) noexcept nogil
    cdef void subtract(self, const int64_t* p, const int64_t* c, const int64_t* o, Py_ssize_t n) noexcept nogil
    cdef int _blocks(self, RowPartitioner part, Py_ssize_t node) noexcept nogil
    cdef void _build_rows(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot, int n_threads) noexcept nogil
    cdef void _gather(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot) noexcept nogil
    cdef void _build_pair(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                          Py_ssize_t column) noexcept nogil
