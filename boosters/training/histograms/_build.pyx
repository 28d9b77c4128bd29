"""The grower's histogram builder: node rows from the partitioner, histograms in the
slots of the histogram pool, column-wise or row-wise kernels."""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport uint8_t, int16_t, int32_t, int64_t

from boosters._lib.arrays import unique
from boosters._lib.sequences cimport fill
from boosters._lib.types cimport row_t
from boosters.training._partition cimport RowPartitioner, IN_ORDER, SPLIT
from boosters.training.histograms._columnwise cimport (
    ColumnsView, MIN_COLUMNS_PARALLEL, build_one_column, build_one_column_packed, gather_packed,
    gather_pairs, subtract_packed_words, subtract_values, threads_for_build,
)
from boosters.training.histograms._columnwise import DEFAULT_PREFETCH_DISTANCE, column_list
from boosters.training.histograms._quantize import unpack
from boosters.training.histograms._rowwise cimport (MAX_ROW_BLOCKS, ROW_PREFETCH, build_rowwise,
                                                    build_rowwise_packed, row_blocks)


def _row_major(bins_u8, columns, Py_ssize_t chunk=65536):
    """(n_rows, len(columns)) row-major copy of some rows of a column-major matrix,
    transposed a chunk of rows at a time (one copy, no full-size temporary)."""
    n_rows = bins_u8.shape[1]
    out = np.empty((n_rows, len(columns)), dtype=np.uint8)
    for start in range(0, n_rows, chunk):
        out[start:start + chunk] = bins_u8[columns, start:start + chunk].T
    return out



cdef class HistogramBuilder:
    """Builds node histograms into the slots of a histogram pool.

    A node's gradients are gathered to the node's own positions of one scratch buffer
    (partition ranges are disjoint), so a whole batch of nodes is gathered first and
    then built in one parallel loop over (node, column) pairs. The root's rows are in
    storage order and need no gather.

    Full precision: float64 pool (slots, bins, 2), float32 gradient pairs. Quantized:
    int64 pool (slots, bins) of packed sums, int32/int16 packed pairs per row. A slot's
    bins are words of 32, 16 or 8 bits per sum (int64, int32 or int16; `sum_bits[slot]`),
    the narrowest that the node's rows cannot overflow: with values of at most `levels`
    in magnitude, n rows sum to at most n * levels. The gather widens each row's pair to
    that word (the root: in row order); narrower words halve the memory the build, the
    subtraction and the split scan go through.

    layout "row": the uint8 columns are also stored row-major and built by the row-wise
    kernel (see _rowwise.pyx); other columns stay column-wise.
    """
    def __init__(self, binned, pool_data, columns, int n_threads=1, bint prefetch=True,
                 Py_ssize_t prefetch_distance=DEFAULT_PREFETCH_DISTANCE, str layout="column"):
        self.view = ColumnsView(binned)
        self.quantized = pool_data.dtype == np.int64
        if self.quantized:
            self.pool_packed = pool_data
            ok = pool_data.ndim == 2 and pool_data.shape[1] == self.view.total_bins
        else:
            self.pool = pool_data
            ok = pool_data.ndim == 3 and pool_data.shape[1] == self.view.total_bins and pool_data.shape[2] == 2
        if not ok:
            raise ValueError("pool slots do not match the histogram layout")
        self.n_slots = pool_data.shape[0]
        self.sum_bits = np.full(self.n_slots, 32, dtype=np.uint8)
        self.slot_bits = self.sum_bits
        self.slot_rows = np.zeros(self.n_slots, dtype=np.int64)
        self.batch = np.zeros((3, 2 * self.n_slots + 2), dtype=np.int64)
        columns = column_list(columns, self.view.n_columns)
        if layout not in ("column", "row"):
            raise ValueError(f"layout must be 'column' or 'row', got {layout!r}")
        is_row = binned.column_kind[columns] == 0 if layout == "row" else np.zeros(len(columns), dtype=bool)
        row_cols = columns[is_row]
        self.rowwise = len(row_cols) > 0
        self.columns = np.ascontiguousarray(unique(columns[~is_row]), dtype=np.int32)
        if self.rowwise:
            self.row_matrix = _row_major(binned.bins_u8, binned.column_index[row_cols])
            self.row_columns = np.ascontiguousarray(row_cols, dtype=np.int32)
            self.row_offsets = np.ascontiguousarray(binned.column_offsets[row_cols], dtype=np.int64)
            self.row_bins = np.ascontiguousarray(binned.column_n_bins[row_cols], dtype=np.int64)
            scratch_size = (MAX_ROW_BLOCKS - 1) * self.view.total_bins
            if self.quantized:
                self.scratch_packed = np.empty(scratch_size, dtype=np.int64)
            else:
                self.scratch = np.empty(2 * scratch_size, dtype=np.float64)
        if self.columns.shape[0] > 0:  # the row-wise kernels read gradients by row: no copy
            self.ordered = np.empty((self.view.n_rows, 2), dtype=np.float32)
            self.ordered_packed = np.asarray(self.ordered).view(np.int64).reshape(self.view.n_rows)
        self.n_threads = n_threads
        self.prefetch_distance = prefetch_distance if prefetch else 0

    def set_gradients(self, const float[:, ::1] gh):
        """Full precision: the (n_rows, 2) float32 gradients of the tree being grown."""
        if self.quantized:
            raise RuntimeError("a quantized builder takes set_quantized()")
        if gh.shape[0] != self.view.n_rows or gh.shape[1] != 2:
            raise ValueError(f"gradients must have shape ({self.view.n_rows}, 2)")
        self.gh = gh

    def set_quantized(self, packed, levels=None):
        """Quantized: the packed int32 (i16) or int16 (i8) pairs of the tree being grown,
        whose grad and hess are at most `levels` in magnitude (None: the word's limit,
        32767 or 127); the bins' width of each node follows from it."""
        if not self.quantized:
            raise RuntimeError("a full-precision builder takes set_gradients()")
        if packed.shape != (self.view.n_rows,):
            raise ValueError(f"packed gradients must have {self.view.n_rows} entries")
        if packed.dtype not in (np.int32, np.int16):
            raise ValueError("packed gradients must be int32 or int16")
        cap = 32767 if packed.dtype == np.int32 else 127
        if levels is None:
            levels = cap
        if not 1 <= levels <= cap:
            raise ValueError(f"levels must be in [1, {cap}] for {packed.dtype} pairs, got {levels}")
        if packed.dtype == np.int32:
            self.q32, self.packed_bits = packed, 16
        else:
            self.q16, self.packed_bits = packed, 8
        self.levels = levels

    cdef int bits_for(self, Py_ssize_t n_rows) noexcept nogil:
        """Bits per sum of a histogram of n_rows rows: |grad sum| and hess sum are at most
        n_rows * levels, and a word of b bits per sum holds grad in b signed bits (hess in
        the low b bits; it is >= 0). Never narrower than the values themselves."""
        cdef int64_t bound = <int64_t> n_rows * self.levels
        if self.packed_bits == 8 and bound < 128:
            return 8
        if bound < 32768:
            return 16
        return 32

    cdef char* slot_words(self, Py_ssize_t slot) noexcept nogil:
        return <char*> &self.pool_packed[slot, 0]

    def slot_sums(self, Py_ssize_t slot):
        """Quantized: (grad, hess) int64 sums per bin of a slot, whatever its width."""
        if not self.quantized:
            raise RuntimeError("slot_sums reads a quantized builder's slots")
        if not 0 <= slot < self.n_slots:
            raise ValueError(f"slot must be in [0, {self.n_slots}), got {slot}")
        words = np.asarray(self.pool_packed[slot]).view({32: np.int64, 16: np.int32, 8: np.int16}[self.slot_bits[slot]])
        return unpack(words[:self.view.total_bins])

    def build_nodes(self, slots, RowPartitioner part, nodes):
        """Build the histogram of nodes[i] into pool slot slots[i], for every i. The nodes'
        row ranges must be disjoint (a tree level's nodes are): each node's gradients are
        gathered at its own positions of one buffer."""
        cdef Py_ssize_t n = fill(nodes, self.batch[1], "nodes")
        cdef const int64_t[::1] slot_v = self.batch[0]
        cdef const int64_t[::1] node_v = self.batch[1]
        cdef Py_ssize_t i, k
        if not self.ready():
            raise RuntimeError("gradients must be set first")
        if fill(slots, self.batch[0], "slots") != n:
            raise ValueError("one slot per node")
        for i in range(n):
            if not 0 <= slot_v[i] < self.n_slots or not 0 <= node_v[i] < part.max_nodes:
                raise ValueError("slot or node out of range")
            if part.which[node_v[i]] == SPLIT:
                raise ValueError(f"node {node_v[i]} was split: its rows belong to its children")
        if n > 1:
            ranges = sorted((part.begin[node_v[i]], part.end[node_v[i]]) for i in range(n)
                            if part.end[node_v[i]] > part.begin[node_v[i]])
            if any(ranges[k][1] > ranges[k + 1][0] for k in range(len(ranges) - 1)):
                raise ValueError("nodes built together must have disjoint row ranges")
        if n > 0:
            with nogil:
                self.build(part, &slot_v[0], &node_v[0], n)

    cdef bint ready(self):
        """The gradients of the tree being grown are set."""
        return self.packed_bits != 0 if self.quantized else self.gh is not None

    cdef void build(self, RowPartitioner part, const int64_t* slot_v, const int64_t* node_v,
                    Py_ssize_t n) noexcept nogil:
        """build_nodes without its checks: slots, nodes and disjoint ranges are the caller's."""
        cdef Py_ssize_t i, k, n_col = self.columns.shape[0]
        cdef Py_ssize_t total_rows = 0, node_rows
        if n == 0 or (n_col == 0 and not self.rowwise):
            return
        for i in range(n):
            node_rows = part.end[node_v[i]] - part.begin[node_v[i]]
            total_rows += node_rows
            if self.quantized:
                self.slot_rows[slot_v[i]] = node_rows
                self.slot_bits[slot_v[i]] = self.bits_for(node_rows)
        cdef int t = threads_for_build(self.n_threads, n * n_col, total_rows // n)
        cdef int t_rows = threads_for_build(self.n_threads, n * MIN_COLUMNS_PARALLEL, total_rows // n)
        cdef int t_root
        if n_col > 0:  # gathered gradients are for the column-wise kernels
            for i in range(n):
                self._gather(part, node_v[i], slot_v[i])
        if self.rowwise and n == 1 and part.which[node_v[0]] == IN_ORDER and not self.quantized:
            # the root: its rows are in order, each column a forward scan of its bins and
            # of the gradients; column-wise is 20-35% faster here than row-wise (which
            # pays off for gathered rows). Sums in row order: thread-count independent.
            t_root = threads_for_build(self.n_threads, self.row_columns.shape[0], total_rows)
            for k in prange(self.row_columns.shape[0], schedule="static", num_threads=t_root):
                self._build_pair(part, node_v[0], slot_v[0], self.row_columns[k])
        elif self.rowwise and n == 1:  # one node: its row blocks (or columns) in parallel
            self._build_rows(part, node_v[0], slot_v[0], self.n_threads)
        elif self.rowwise:
            for i in range(n):  # big nodes: their row blocks in parallel
                if self._blocks(part, node_v[i]) > 1:
                    self._build_rows(part, node_v[i], slot_v[i], self.n_threads)
            if t_rows > 1:      # small nodes: in parallel over nodes
                for i in prange(n, schedule="static", num_threads=t_rows):
                    if self._blocks(part, node_v[i]) == 1:
                        self._build_rows(part, node_v[i], slot_v[i], 1)
            else:
                for i in range(n):
                    if self._blocks(part, node_v[i]) == 1:
                        self._build_rows(part, node_v[i], slot_v[i], 1)
        if n_col == 0:
            pass
        elif t > 1:
            for k in prange(n * n_col, schedule="static", num_threads=t):
                self._build_pair(part, node_v[k // n_col], slot_v[k // n_col], self.columns[k % n_col])
        else:
            for k in range(n * n_col):
                self._build_pair(part, node_v[k // n_col], slot_v[k // n_col], self.columns[k % n_col])

    cdef int _blocks(self, RowPartitioner part, Py_ssize_t node) noexcept nogil:
        return row_blocks(part.end[node] - part.begin[node], self.quantized, self.n_threads)

    cdef void _build_rows(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot, int n_threads) noexcept nogil:
        cdef Py_ssize_t begin = part.begin[node], n = part.end[node] - begin
        cdef bint in_order = part.which[node] == IN_ORDER
        cdef const row_t* rows = NULL if in_order else &part.buffers[part.which[node], 0] + begin
        cdef int blocks = self._blocks(part, node)  # float64: by node size only, never by threads
        if self.quantized:
            build_rowwise_packed(&self.row_matrix[0, 0], self.row_matrix.shape[1], &self.row_offsets[0],
                                 &self.row_bins[0], self.row_offsets.shape[0], rows, begin if in_order else 0, n,
                                 self.packed_values(), self.packed_bits, self.slot_words(slot),
                                 &self.scratch_packed[0], self.slot_bits[slot], self.view.total_bins, blocks,
                                 n_threads, ROW_PREFETCH if self.prefetch_distance > 0 else 0)
        else:
            build_rowwise(&self.row_matrix[0, 0], self.row_matrix.shape[1], &self.row_offsets[0],
                          &self.row_bins[0], self.row_offsets.shape[0], rows, begin if in_order else 0, n,
                          &self.gh[0, 0], &self.pool[slot, 0, 0], &self.scratch[0], self.view.total_bins,
                          blocks, n_threads, ROW_PREFETCH if self.prefetch_distance > 0 else 0)

    cdef const void* packed_values(self) noexcept nogil:
        return <const void*> &self.q32[0] if self.packed_bits == 16 else <const void*> &self.q16[0]

    cdef void _gather(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot) noexcept nogil:
        """The node's gradients at its own positions begin..end of the ordered buffer
        (quantized: as words of its slot's width; rows in order too, widened)."""
        cdef Py_ssize_t begin = part.begin[node], n = part.end[node] - begin
        cdef const row_t* rows = NULL
        cdef int bits
        if n == 0:
            return
        if part.which[node] != IN_ORDER:
            rows = &part.buffers[part.which[node], 0] + begin
        if not self.quantized:
            if rows != NULL:
                gather_pairs(&self.gh[0, 0], rows, n, &self.ordered[0, 0] + 2 * begin, self.n_threads)
            return
        bits = self.slot_bits[slot]
        gather_packed(<const char*> self.packed_values() + (begin * (self.packed_bits // 4) if rows == NULL else 0),
                      self.packed_bits, rows, n, self.ordered_words(begin), bits, self.n_threads)

    cdef char* ordered_words(self, Py_ssize_t begin) noexcept nogil:
        """Where the words of a node starting at partition position `begin` go: 8 bytes
        per position, so nodes of any widths gathered together never overlap."""
        return <char*> &self.ordered_packed[0] + 8 * begin

    cdef void _build_pair(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                          Py_ssize_t column) noexcept nogil:
        cdef Py_ssize_t begin = part.begin[node], n = part.end[node] - begin
        cdef bint in_order = part.which[node] == IN_ORDER
        cdef const row_t* rows = NULL if in_order else &part.buffers[part.which[node], 0] + begin
        cdef int bits = self.slot_bits[slot]
        if self.quantized:
            # in order: the values of rows begin.. were widened in place as gathered ones are
            build_one_column_packed(&self.view.cols, column, rows, begin if in_order else 0, n,
                                    self.ordered_words(begin), self.slot_words(slot) + self.view.offsets[column] * (bits // 4),
                                    self.view.n_bins[column], 0 if in_order else self.prefetch_distance, bits)
        elif in_order:
            build_one_column(&self.view.cols, column, NULL, begin, n, &self.gh[0, 0],
                             &self.pool[slot, 0, 0] + 2 * self.view.offsets[column],
                             self.view.n_bins[column], 0)
        else:
            build_one_column(&self.view.cols, column, rows, 0, n, &self.ordered[0, 0] + 2 * begin,
                             &self.pool[slot, 0, 0] + 2 * self.view.offsets[column],
                             self.view.n_bins[column], self.prefetch_distance)

    def subtract_many(self, parents, children, outs):
        """pool[outs[i]] = pool[parents[i]] - pool[children[i]] (outs[i] may be parents[i])."""
        cdef Py_ssize_t n = fill(parents, self.batch[0], "parents")
        if fill(children, self.batch[1], "children") != n or fill(outs, self.batch[2], "outs") != n:
            raise ValueError("parents, children and outs must have the same length")
        cdef const int64_t[::1] p = self.batch[0, :n]
        cdef const int64_t[::1] c = self.batch[1, :n]
        cdef const int64_t[::1] o = self.batch[2, :n]
        cdef Py_ssize_t i
        for i in range(n):
            if not (0 <= p[i] < self.n_slots and 0 <= c[i] < self.n_slots and 0 <= o[i] < self.n_slots):
                raise ValueError("slot out of range")
            if self.quantized and self.slot_rows[c[i]] > self.slot_rows[p[i]]:
                raise ValueError(f"slot {c[i]} holds more rows than its parent slot {p[i]}")
        if n > 0:
            with nogil:
                self.subtract(&p[0], &c[0], &o[0], n)

    cdef void subtract(self, const int64_t* p, const int64_t* c, const int64_t* o, Py_ssize_t n) noexcept nogil:
        """Quantized: the sibling gets the width of its own row count (parent's minus the
        child's); a child narrower than its parent is widened word by word."""
        cdef Py_ssize_t i, j, n_bins = self.view.total_bins
        cdef int bp, bc, bo
        cdef int64_t rows_out
        if n_bins == 0:
            return
        for i in range(n):
            if not self.quantized:
                subtract_values(&self.pool[p[i], 0, 0], &self.pool[c[i], 0, 0], &self.pool[o[i], 0, 0], 2 * n_bins)
                continue
            bp, bc = self.slot_bits[p[i]], self.slot_bits[c[i]]
            rows_out = self.slot_rows[p[i]] - self.slot_rows[c[i]]
            bo = self.bits_for(rows_out)
            subtract_packed_words(self.slot_words(p[i]), bp, self.slot_words(c[i]), bc, self.slot_words(o[i]), bo,
                                  n_bins)
            self.slot_bits[o[i]] = bo
            self.slot_rows[o[i]] = rows_out
