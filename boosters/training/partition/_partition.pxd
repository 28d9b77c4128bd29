from libc.stdint cimport uint8_t, uint16_t, uint32_t, int8_t, int32_t, int64_t

from boosters._lib.types cimport row_t
from boosters._lib.columns cimport BinColumns, FeatureMap

# which[node] == IN_ORDER: the node holds rows begin..end-1 themselves (the root), no
# index buffer needed; SPLIT: a node other than the root was split, its rows now belong
# to its children (a parallel split reuses its range of the buffer); otherwise the node's rows are
# buffers[which[node], begin:end].
cdef enum:
    IN_ORDER = 2
    SPLIT = 3


cdef class RowPartitioner:
    cdef row_t[:, ::1] buffers          # (2, n_rows): the double buffer
    cdef int64_t[::1] begin             # per node: first position of its range
    cdef int64_t[::1] end               # per node: one past the last position
    cdef uint8_t[::1] which             # per node: 0 / 1 buffer, IN_ORDER or SPLIT
    cdef BinColumns cols
    cdef FeatureMap features
    cdef object binned                  # keeps the bin storage alive
    cdef const uint8_t[:, ::1] _u8
    cdef const uint16_t[:, ::1] _u16
    cdef const int8_t[::1] _kind
    cdef const int32_t[::1] _index
    cdef const int32_t[::1] _feature_column
    cdef const int64_t[::1] _decode_start
    cdef const uint16_t[::1] _decode
    cdef const int64_t[::1] _sparse_indptr     # the matrix's CSR of bins (sparse input), else empty
    cdef const uint32_t[::1] _sparse_entries
    cdef const int64_t[::1] _column_offsets
    cdef const int32_t[::1] _sparse_default    # per column: a sparse column's default bin
    cdef const int64_t[::1] _sparse_col_indptr # per column: start of its rows in _sparse_col_rows
    cdef const uint32_t[::1] _sparse_col_rows  # each column's rows with an entry, in order
    cdef readonly Py_ssize_t n_rows
    cdef readonly Py_ssize_t max_nodes
    cdef public int n_threads
    # row sampling: `sample` holds the round's sampled rows (n_sampled of them), then the
    # other rows, each part in increasing order; n_sampled < 0: no sample, the root holds
    # every row in order. Empty when the training samples no rows.
    cdef readonly row_t[::1] sample
    cdef public Py_ssize_t n_sampled
    cdef const int32_t[::1] _n_bins     # per feature
    cdef uint16_t[::1] category_table   # a categorical split's bin -> 1 (left) or 0, n_bins entries

    # A node's rows, for the kernels that read them (histograms, leaf renewal, the growth
    # loop): inline, no call and no dispatch, and plain return values, so that a prange
    # body that assigns them keeps them private to its thread.
    cdef inline Py_ssize_t node_begin(self, Py_ssize_t node) noexcept nogil:
        """The node's first position in the partition: its rows are at positions
        node_begin .. node_begin + node_count - 1, which no other node of its level shares."""
        return self.begin[node]

    cdef inline Py_ssize_t node_count(self, Py_ssize_t node) noexcept nogil:
        """How many rows the node holds."""
        return self.end[node] - self.begin[node]

    cdef inline const row_t* node_rows(self, Py_ssize_t node) noexcept nogil:
        """The row indices at the node's positions, or NULL when its rows are those
        positions themselves, in order (the root without a row sample)."""
        if self.which[node] == IN_ORDER:
            return NULL
        return &self.buffers[self.which[node], 0] + self.begin[node]

    cdef void start_tree(self) noexcept nogil
    cdef void add_values(self, const int64_t* leaves, const double* values, Py_ssize_t n,
                         double* predictions) noexcept nogil
    cdef void sum_gradients(self, const int64_t* nodes, Py_ssize_t n, const float* gh, double* sums) noexcept nogil
    cdef void split_node(self, Py_ssize_t node, Py_ssize_t feature, Py_ssize_t threshold_bin,
                         bint default_left, Py_ssize_t left, Py_ssize_t right,
                         const uint32_t* category_bins) noexcept nogil
    cdef Py_ssize_t _partition_parallel(self, const row_t* src, Py_ssize_t begin, Py_ssize_t n, row_t* stage,
                                        row_t* out, Py_ssize_t column, const uint16_t* decode, size_t lowest,
                                        size_t span, int n_chunks) noexcept nogil
    cdef void add_tree_outside_sample(self, const int32_t* feature, const int32_t* threshold_bin,
                                      const uint8_t* default_left, const int32_t* left, const int32_t* right,
                                      Py_ssize_t n_nodes, const uint8_t* categorical, const uint32_t* category_bins,
                                      Py_ssize_t category_words, const double* value, int64_t* leaves,
                                      double* leaf_values, double* predictions) noexcept nogil
    cdef Py_ssize_t _partition_chunk(self, const row_t* src, Py_ssize_t begin, Py_ssize_t n, row_t* dst,
                                     Py_ssize_t column, const uint16_t* decode, size_t lowest,
                                     size_t span) noexcept nogil
