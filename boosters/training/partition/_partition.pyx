"""Row partitioner (RFC-0008 DD-3): each node's rows are one contiguous range of an
index buffer; splitting a node is a stable partition into the other buffer.

Stable means both children keep their rows in increasing order, so the gathered
histogram kernels read the bin columns front to back, and the result never depends
on the thread count. No allocation per split: two buffers of n_rows indices are
allocated once per training.

A node split in parallel (a big node) is partitioned chunk by chunk, each chunk with
the serial one-pass kernel into the other buffer, then every chunk's lefts and rights
are copied to their final positions back in the node's own buffer (its parent's rows
there are no longer needed): one pass over the bins plus two memcpy per chunk.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int32_t, int64_t
from libc.string cimport memcpy

from boosters._lib.search cimport lower_bound
from boosters._lib.stable_split cimport reverse_second_part, store_both_ends
from boosters._lib.types cimport bin_t, row_t
from boosters._lib.columns cimport make_bin_columns, make_feature_map, column_u8, column_u16

cdef enum:
    ROWS_PER_THREAD = 8192  # below this a split stays serial


cdef inline size_t lowest_left_bin(bint default_left) noexcept nogil:
    """The rows going left have bins lowest..threshold_bin: value bins 1..threshold_bin,
    with the missing bin 0 too when missing values go left."""
    return 0 if default_left else 1


cdef inline size_t go_left(size_t bin, size_t lowest, size_t span) noexcept nogil:
    """1 if lowest <= bin < lowest + span: one unsigned compare (bin - lowest wraps
    around below lowest), no branch (the split is data dependent, branches mispredict)."""
    return bin - lowest < span


cdef Py_ssize_t partition_serial(
    const bin_t* column,        # IN: the split feature's stored column (whole)
    const uint16_t* decode,     # IN: bundle value -> feature bin, NULL if the feature is stored alone
    const row_t* src,           # IN: the node's rows, NULL for rows begin..begin+n in order
    Py_ssize_t begin,
    Py_ssize_t n,
    row_t* dst,                 # OUT: n rows, the lefts then the rights, each in order
    size_t lowest,              # bins lowest..lowest+span-1 go left
    size_t span,
) noexcept nogil:
    """The lefts, then the rights, each in order: one branch-free stable split
    (_lib/stable_split.pxd). The loops are spelled out per row source and decoding so
    that none of them tests either per row."""
    cdef Py_ssize_t i, n_left = 0, n_right = 0
    cdef size_t left
    cdef row_t row
    if decode == NULL and src != NULL:
        for i in range(n):
            row = src[i]
            left = go_left(column[row], lowest, span)
            store_both_ends(dst, n, row, left, &n_left, &n_right)
    elif decode == NULL:
        for i in range(n):
            row = <row_t> (begin + i)
            left = go_left(column[row], lowest, span)
            store_both_ends(dst, n, row, left, &n_left, &n_right)
    else:
        for i in range(n):
            row = src[i] if src != NULL else <row_t> (begin + i)
            left = go_left(decode[column[row]], lowest, span)
            store_both_ends(dst, n, row, left, &n_left, &n_right)
    reverse_second_part(dst, n_left, n)
    return n_left


cdef inline Py_ssize_t sparse_bin(
    const int64_t* indptr,      # IN: the CSR of bins (row starts)
    const uint32_t* entries,    # IN: histogram indices, in feature order within a row
    Py_ssize_t row,
    uint32_t lo,                # the feature's column: histogram indices [lo, hi)
    uint32_t hi,
    Py_ssize_t default_bin,
) noexcept nogil:
    """A sparse feature's bin in one row: its entry's offset from lo (binary search among
    the row's sorted entries), the default bin when the row has none."""
    cdef Py_ssize_t first = lower_bound(entries, indptr[row], indptr[row + 1], lo)  # the first entry >= lo
    if first < indptr[row + 1] and entries[first] < hi:
        return entries[first] - lo
    return default_bin


cdef Py_ssize_t partition_sparse(
    const int64_t* indptr,      # IN: the CSR of bins
    const uint32_t* entries,    # IN
    uint32_t lo,                # the split feature's column: histogram indices [lo, hi)
    uint32_t hi,
    Py_ssize_t default_bin,
    const uint32_t* col_rows,   # IN: the rows with an entry in the column, in order
    Py_ssize_t n_col_rows,
    const row_t* src,           # IN: the node's rows (in order), NULL for rows begin..begin+n
    Py_ssize_t begin,
    Py_ssize_t n,
    row_t* dst,                 # OUT: as partition_serial
    size_t lowest,
    size_t span,
) noexcept nogil:
    """partition_serial for a feature stored sparse. The node's rows and the column's rows
    are both in order: one walk beside the other finds the node's rows with an entry (their
    bin: a search among the row's entries); every other row is at the default bin."""
    cdef Py_ssize_t i, n_left = 0, n_right = 0, p = 0
    cdef size_t left, default_left = go_left(default_bin, lowest, span)
    cdef row_t row
    if n == 0:
        return 0
    row = src[0] if src != NULL else <row_t> begin
    p = lower_bound(col_rows, 0, n_col_rows, row)  # the column's first row >= the node's first
    for i in range(n):
        row = src[i] if src != NULL else <row_t> (begin + i)
        while p < n_col_rows and col_rows[p] < row:
            p += 1
        if p < n_col_rows and col_rows[p] == row:
            left = go_left(sparse_bin(indptr, entries, row, lo, hi, default_bin), lowest, span)
        else:
            left = default_left
        store_both_ends(dst, n, row, left, &n_left, &n_right)
    reverse_second_part(dst, n_left, n)
    return n_left


cdef class RowPartitioner:
    def __init__(self, binned, Py_ssize_t max_nodes, int n_threads=1, bint sampling=False):
        if binned.n_rows >= 2**32:
            raise ValueError("at most 2**32 - 1 rows are supported")
        self.binned = binned
        self._u8 = binned.bins_u8
        self._u16 = binned.bins_u16
        self._kind = binned.column_kind
        self._index = binned.column_index
        self._feature_column = binned.feature_column
        self._decode_start = binned.decode_start
        self._decode = binned.decode_tables
        self.cols = make_bin_columns(self._u8, self._u16, self._kind, self._index, binned.n_rows)
        self.features = make_feature_map(self._feature_column, self._decode_start, self._decode)
        self._column_offsets = binned.column_offsets
        self._sparse_default = binned.sparse_default if binned.has_sparse else np.zeros(1, dtype=np.int32)
        self._sparse_col_indptr = binned.sparse_col_indptr if binned.has_sparse else np.zeros(1, dtype=np.int64)
        self._sparse_col_rows = (binned.sparse_col_rows if binned.has_sparse and len(binned.sparse_col_rows)
                                 else np.zeros(1, dtype=np.uint32))
        self._sparse_indptr = binned.sparse_indptr if binned.has_sparse else np.zeros(1, dtype=np.int64)
        self._sparse_entries = (binned.sparse_bins if binned.has_sparse and len(binned.sparse_bins)
                                else np.zeros(1, dtype=np.uint32))
        self.n_rows = binned.n_rows
        self.max_nodes = max_nodes
        self.n_threads = n_threads
        self.buffers = np.empty((2, self.n_rows), dtype=np.uint32)
        self.begin = np.zeros(max_nodes, dtype=np.int64)
        self.end = np.zeros(max_nodes, dtype=np.int64)
        self.which = np.zeros(max_nodes, dtype=np.uint8)
        # (one spare entry: never empty when sampling, even without rows)
        self.sample = np.empty(self.n_rows + 1 if sampling else 0, dtype=np.uint32)
        self.n_sampled = -1
        self._n_bins = binned.n_bins
        self.category_table = np.zeros(max(1, int(np.max(binned.n_bins, initial=0))), dtype=np.uint16)
        self.reset()

    def reset(self):
        """Node 0 (the root) holds every row, in order: a new tree starts."""
        self.start_tree()

    cdef void start_tree(self) noexcept nogil:
        """reset(), for the growth loop. With a row sample the root holds the sampled rows,
        copied into buffer 0 (splits overwrite it; each tree of a round starts afresh)."""
        self.begin[0] = 0
        if self.n_sampled < 0:
            self.end[0] = self.n_rows
            self.which[0] = IN_ORDER
            return
        if self.n_sampled > 0:
            memcpy(&self.buffers[0, 0], &self.sample[0], self.n_sampled * sizeof(row_t))
        self.end[0] = self.n_sampled
        self.which[0] = 0

    def _check_not_split(self, Py_ssize_t node):
        if self.which[node] == SPLIT:
            raise ValueError(f"node {node} was split: its rows belong to its children")

    cdef void split_node(self, Py_ssize_t node, Py_ssize_t feature, Py_ssize_t threshold_bin,
                         bint default_left, Py_ssize_t left, Py_ssize_t right,
                         const uint32_t* category_bins) noexcept nogil:
        """Value bins 1..threshold_bin go left, bin 0 (missing) too when default_left; for a
        categorical split (category_bins not NULL: a bitset over the feature's bins, bin
        0 included) the bins in the set. A categorical feature is never bundled, so its
        set becomes the node's decode table (bin -> 1 left, 0 right) and the same kernel
        runs with "1 goes left"."""
        cdef Py_ssize_t begin = self.begin[node], end = self.end[node], n = end - begin
        cdef uint8_t src_buf = self.which[node]
        cdef uint8_t other_buf = 1 if src_buf == 0 else 0
        cdef uint8_t out_buf = other_buf
        cdef const row_t* src = NULL
        cdef Py_ssize_t n_left
        if src_buf != IN_ORDER and n > 0:
            src = &self.buffers[src_buf, 0] + begin
        cdef int t = <int> min(<Py_ssize_t> self.n_threads, n // ROWS_PER_THREAD)
        cdef Py_ssize_t column = self.features.column[feature]
        cdef const uint16_t* decode = NULL
        if self.features.decode_start[feature] >= 0:
            decode = self.features.decode + self.features.decode_start[feature]
        cdef size_t lowest = lowest_left_bin(default_left)
        cdef size_t span = <size_t> threshold_bin + 1 - lowest
        cdef Py_ssize_t b
        if category_bins != NULL:
            for b in range(self._n_bins[feature]):
                self.category_table[b] = (category_bins[b >> 5] >> (b & 31)) & 1
            decode, lowest, span = &self.category_table[0], 1, 1
        if n == 0:
            n_left = 0
        elif t > 1:
            # chunks staged in the other buffer, then copied to the node's own buffer
            # (the root, in order, has none: staged in 0, copied to 1)
            out_buf = 1 if src_buf == IN_ORDER else src_buf
            n_left = self._partition_parallel(src, begin, n, &self.buffers[other_buf, 0] + begin,
                                              &self.buffers[out_buf, 0] + begin, column, decode, lowest, span, t)
        else:
            n_left = self._partition_chunk(src, begin, n, &self.buffers[out_buf, 0] + begin, column, decode,
                                           lowest, span)
        self.begin[left] = begin
        self.end[left] = begin + n_left
        self.begin[right] = begin + n_left
        self.end[right] = end
        self.which[left] = out_buf
        self.which[right] = out_buf
        if src_buf != IN_ORDER:  # the root's rows stay implicit (in order), never overwritten
            self.which[node] = SPLIT

    cdef Py_ssize_t _partition_parallel(
        self,
        const row_t* src,           # IN: as partition_serial
        Py_ssize_t begin,
        Py_ssize_t n,
        row_t* stage,               # OUT: scratch, n rows (chunk by chunk partitioned)
        row_t* out,                 # OUT: n rows, the lefts then the rights, each in order
        Py_ssize_t column,
        const uint16_t* decode,     # IN: as partition_serial
        size_t lowest,
        size_t span,
        int n_chunks,
    ) noexcept nogil:
        # Chunk c is partitioned serially into stage[chunk]: its lefts, then its rights,
        # in order. A prefix sum over the chunks' left counts gives where each part goes
        # in out: the output is the serial one (a stable partition is unique).
        cdef Py_ssize_t c, lo, hi, n_left = 0, chunk
        cdef int64_t[64] left_counts
        cdef int64_t[64] left_starts
        cdef int64_t[64] right_starts
        if n_chunks > 64:
            n_chunks = 64
        chunk = (n + n_chunks - 1) // n_chunks
        for c in prange(n_chunks, schedule="static", num_threads=n_chunks):
            lo = c * chunk
            hi = min(lo + chunk, n)
            left_counts[c] = 0
            if lo < hi:
                left_counts[c] = self._partition_chunk(src + lo if src != NULL else NULL, begin + lo, hi - lo,
                                                       stage + lo, column, decode, lowest, span)
        for c in range(n_chunks):
            left_starts[c] = n_left
            n_left += left_counts[c]
        for c in range(n_chunks):
            right_starts[c] = n_left + c * chunk - left_starts[c]
        for c in prange(n_chunks, schedule="static", num_threads=n_chunks):
            lo = c * chunk
            hi = min(lo + chunk, n)
            if lo < hi:
                memcpy(out + left_starts[c], stage + lo, left_counts[c] * sizeof(row_t))
                memcpy(out + right_starts[c], stage + lo + left_counts[c], (hi - lo - left_counts[c]) * sizeof(row_t))
        return n_left

    cdef Py_ssize_t _partition_chunk(
        self,
        const row_t* src,           # IN: as partition_serial
        Py_ssize_t begin,
        Py_ssize_t n,
        row_t* dst,                 # OUT: as partition_serial
        Py_ssize_t column,
        const uint16_t* decode,     # IN: as partition_serial
        size_t lowest,
        size_t span,
    ) noexcept nogil:
        """partition_serial on the column's storage: uint8, uint16 or the CSR of bins."""
        if self.cols.kind[column] == 0:
            return partition_serial(column_u8(&self.cols, column), decode, src, begin, n, dst, lowest, span)
        if self.cols.kind[column] == 1:
            return partition_serial(column_u16(&self.cols, column), decode, src, begin, n, dst, lowest, span)
        return partition_sparse(&self._sparse_indptr[0], &self._sparse_entries[0],
                                <uint32_t> self._column_offsets[column], <uint32_t> self._column_offsets[column + 1],
                                self._sparse_default[column], &self._sparse_col_rows[0] + self._sparse_col_indptr[column],
                                self._sparse_col_indptr[column + 1] - self._sparse_col_indptr[column],
                                src, begin, n, dst, lowest, span)

    def add_leaf_values(self, leaf_nodes, values, double[::1] predictions):  # predictions: IN and OUT
        """predictions[row] += values[k] for every row of leaf_nodes[k]: the training
        predictions follow the partition, no tree traversal."""
        cdef const int64_t[::1] leaves = np.ascontiguousarray(leaf_nodes, dtype=np.int64)
        cdef const double[::1] vals = np.ascontiguousarray(values, dtype=np.float64)
        cdef Py_ssize_t k
        if predictions.shape[0] != self.n_rows or vals.shape[0] != leaves.shape[0]:
            raise ValueError("predictions must have one value per row and values one per leaf")
        for k in range(leaves.shape[0]):
            if not 0 <= leaves[k] < self.max_nodes:
                raise ValueError(f"leaf node {leaves[k]} out of range")
            self._check_not_split(leaves[k])
        if leaves.shape[0] > 0:
            with nogil:
                self.add_values(&leaves[0], &vals[0], leaves.shape[0], &predictions[0])

    cdef void add_values(
        self,
        const int64_t* leaves,      # IN: n nodes, none of them split
        const double* values,       # IN: n values
        Py_ssize_t n,
        double* predictions,        # IN and OUT: n_rows
    ) noexcept nogil:
        """add_leaf_values without checks, for the boosting round; parallel over leaves."""
        cdef Py_ssize_t k, i, node
        cdef double v
        cdef const row_t* rows
        for k in prange(n, schedule="static", num_threads=self.n_threads):
            node = leaves[k]
            v = values[k]
            if self.which[node] == IN_ORDER:
                for i in range(self.begin[node], self.end[node]):
                    predictions[i] += v
            else:
                rows = &self.buffers[self.which[node], 0]
                for i in range(self.begin[node], self.end[node]):
                    predictions[rows[i]] += v

    cdef void sum_gradients(
        self,
        const int64_t* nodes,       # IN: n nodes, none of them split
        Py_ssize_t n,
        const float* gh,            # IN: (n_rows, 2) (grad, hess) by row
        double* sums,               # OUT: (n, 2) float64 (G, H) of each node's rows
    ) noexcept nogil:
        """Sums added in row order (quantized training renews leaf values from these
        full-precision sums); parallel over nodes."""
        cdef Py_ssize_t k, i, node
        cdef const row_t* rows
        cdef double g, h
        for k in prange(n, schedule="static", num_threads=self.n_threads):
            node = nodes[k]
            g = 0.0  # thread-local running sums: neighbouring nodes share a cache line of sums
            h = 0.0
            if self.which[node] == IN_ORDER:
                for i in range(self.begin[node], self.end[node]):
                    g = g + gh[2 * i]
                    h = h + gh[2 * i + 1]
            else:
                rows = &self.buffers[self.which[node], 0]
                for i in range(self.begin[node], self.end[node]):
                    g = g + gh[2 * <Py_ssize_t> rows[i]]
                    h = h + gh[2 * <Py_ssize_t> rows[i] + 1]
            sums[2 * k] = g
            sums[2 * k + 1] = h

    cdef void add_tree_outside_sample(
        self,
        const int32_t* feature,         # IN: a grown tree's n_nodes nodes (children after their parent): split feature
        const int32_t* threshold_bin,   # IN: value bins 1..threshold_bin go left
        const uint8_t* default_left,    # IN: where missing values go (the tree's rule, as at prediction)
        const int32_t* left,            # IN: children (-1: a leaf)
        const int32_t* right,           # IN
        Py_ssize_t n_nodes,
        const uint8_t* categorical,     # IN: per node, its split is categorical
        const uint32_t* category_bins,  # IN: (n_nodes, category_words) bins going left of categorical splits
        Py_ssize_t category_words,
        const double* value,            # IN: every node's value
        int64_t* leaves,                # OUT: scratch, n_nodes entries
        double* leaf_values,            # OUT: scratch, n_nodes entries
        double* predictions,            # IN and OUT: n_rows
    ) noexcept nogil:
        """predictions[row] += the value of the tree's leaf of row, for the rows outside the
        sample (sample[n_sampled:]): the tree's splits are replayed on them, node by node
        with split_node (stable, branch-free, parallel for big nodes; bundled features
        decoded), then add_values. Call it once the tree is finished (its sampled rows'
        values added): it reuses the partition's buffers and node ranges."""
        cdef Py_ssize_t node, n_leaves = 0, n_other = self.n_rows - self.n_sampled
        if self.n_sampled < 0 or n_other == 0:
            return
        memcpy(&self.buffers[0, 0], &self.sample[0] + self.n_sampled, n_other * sizeof(row_t))
        self.begin[0] = 0
        self.end[0] = n_other
        self.which[0] = 0
        for node in range(n_nodes):
            if left[node] >= 0:
                self.split_node(node, feature[node], threshold_bin[node], default_left[node], left[node], right[node],
                                category_bins + node * category_words if categorical[node] else NULL)
            else:
                leaves[n_leaves] = node
                leaf_values[n_leaves] = value[node]
                n_leaves += 1
        self.add_values(leaves, leaf_values, n_leaves, predictions)
