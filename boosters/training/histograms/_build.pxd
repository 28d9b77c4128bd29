from libc.stdint cimport uint8_t, int16_t, int32_t, int64_t, uint64_t

from boosters.training.histograms._columnwise cimport ColumnsView
from boosters.training.histograms._rowwise cimport RowMatrix
from boosters.training.histograms._sparse cimport SparseRows
from boosters.training.partition._partition cimport RowPartitioner


cdef class HistogramBuilder:
    cdef ColumnsView view
    cdef Py_ssize_t n_slots
    cdef const int32_t[::1] columns      # built column-wise
    cdef readonly bint rowwise
    cdef const uint8_t[:, ::1] row_matrix
    cdef const int32_t[::1] row_columns  # the row-wise columns
    cdef const int64_t[::1] row_offsets  # histogram offset of each row-wise column
    cdef const int64_t[::1] row_bins
    cdef RowMatrix rows_view             # the row-wise columns for the kernel
    cdef bint exact_sums                 # sums exact in any order (integers): row blocks by thread count
    cdef bint root_columnwise            # the in-order root's row-wise columns are built column-wise
    cdef public int n_threads
    cdef public Py_ssize_t prefetch_distance
    cdef const float* gh                 # the tree's (grad, hess) by row, (n_rows, 2); NULL: none yet
    cdef object gh_owner                 # keeps set_gradients' array alive
    cdef bint sparse                     # the matrix has sparse columns (one CSR kernel builds them all)
    cdef SparseRows sparse_rows
    cdef object sparse_owner             # keeps the CSR alive

    cdef void use_gradients(self, const float* gh) noexcept nogil
    cdef bint ready(self)
    cdef void start_tree(self, RowPartitioner part, uint64_t tree_index) noexcept nogil
    cdef void build(self, RowPartitioner part, const int64_t* slot_v, const int64_t* node_v,
                    Py_ssize_t n) noexcept nogil
    cdef void subtract(self, const int64_t* parents, const int64_t* children, const int64_t* outs,
                       Py_ssize_t n) noexcept nogil
    cdef void _start_node(self, Py_ssize_t slot, Py_ssize_t n_rows) noexcept nogil
    cdef void _gather(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot) noexcept nogil
    cdef void _build_column(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                            Py_ssize_t column) noexcept nogil
    cdef void _build_rows(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                          int n_threads) noexcept nogil
    cdef int _blocks(self, RowPartitioner part, Py_ssize_t node) noexcept nogil
    cdef void _build_sparse_nodes(self, RowPartitioner part, const int64_t* slot_v, const int64_t* node_v,
                                  Py_ssize_t n) noexcept nogil
    cdef void _build_sparse(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                            int n_threads) noexcept nogil


cdef class FloatHistogramBuilder(HistogramBuilder):
    cdef double[:, :, ::1] pool          # (slots, bins, 2) float64
    cdef float[:, ::1] ordered           # gathered (grad, hess), at each node's partition positions
    cdef double[::1] scratch             # row-wise private histograms
    cdef double[::1] sparse_scratch      # the sparse kernel's private histograms


cdef class QuantizedHistogramBuilder(HistogramBuilder):
    cdef int64_t[:, ::1] pool            # (slots, bins) packed words of up to 64 bits
    cdef const int32_t[::1] q32          # the tree's packed pairs by row: int32 ("i16")
    cdef const int16_t[::1] q16          # or int16 ("i8")
    cdef const void* packed              # whichever is set
    cdef int packed_bits                 # 16 (int32 words) or 8 (int16 words); 0 = none yet
    cdef int64_t levels                  # the largest |grad| or hess of a packed pair
    cdef bint machines_sums              # the slots hold sums over other machines' rows: always 32 bits
    cdef bint quantizes                  # start_tree quantizes gh into the packed pairs (set_quantizer)
    cdef int quantize_levels
    cdef uint64_t seed
    cdef readonly object scales          # (scale_g, scale_h) of the packed pairs, float64
    cdef double[::1] scales_v            # the same array
    cdef readonly object sum_bits        # bits per sum of each slot's words (32, 16, 8)
    cdef uint8_t[::1] slot_bits          # the same array
    cdef int64_t[::1] slot_rows          # rows of the node each slot holds
    cdef int64_t[::1] ordered            # gathered words, 8 bytes per partition position
    cdef int64_t[::1] scratch            # row-wise private histograms
    cdef int64_t[::1] sparse_scratch     # the sparse kernel's private histograms

    cdef int bits_for(self, Py_ssize_t n_rows) noexcept nogil
    cdef char* slot_words(self, Py_ssize_t slot) noexcept nogil
    cdef char* ordered_words(self, Py_ssize_t begin) noexcept nogil
