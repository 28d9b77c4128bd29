"""The grower's histogram builders: node rows from the partitioner, histograms in the
slots of the histogram pool, column-wise or row-wise kernels.

Float64 or quantized accumulation is chosen once, when the grower is set up, by the
builder's class: FloatHistogramBuilder or QuantizedHistogramBuilder. Both share
HistogramBuilder's scheduling (which kernel builds which node and column, in parallel
over what) and fill in its per-node steps (gather, one column, the row-wise columns,
subtraction); the growth loop calls them through the base class.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t

from boosters._lib.arrays import unique
from boosters._lib.types cimport row_t
from boosters.training.histograms._quantize cimport quantize_rows
from boosters.training.histograms._columnwise cimport (
    ColumnsView, MIN_COLUMNS_PARALLEL, PREFETCH_DISTANCE, build_column, build_column_words, gather_pairs,
    gather_words, subtract_bins, subtract_words, threads_for_build,
)
from boosters.training.histograms._rowwise cimport (MAX_ROW_BLOCKS, ROW_PREFETCH, build_rows, build_rows_words,
                                                    row_blocks)
from boosters.training.histograms._sparse cimport build_sparse, build_sparse_words
from boosters.training.partition._partition cimport RowPartitioner

SPARSE_KIND = 2  # binned.SPARSE: a column stored in the matrix's CSR of bins


cdef enum:
    TRANSPOSE_ROWS = 4096  # rows per block of the row-major copy: its columns' bins stay in cache


def column_list(columns, Py_ssize_t n_columns):
    """The columns to build as int32 (None: all), checked."""
    if columns is None:
        return np.arange(n_columns, dtype=np.int32)
    columns = np.ascontiguousarray(columns, dtype=np.int32)
    if columns.ndim != 1 or (columns.size and (columns.min() < 0 or columns.max() >= n_columns)):
        raise ValueError(f"columns must be a 1-D list of column indices in [0, {n_columns})")
    return columns


cdef void transpose_rows(
    const uint8_t* bins,        # IN: column-major bins, each column n_rows long
    const int64_t* starts,      # IN: n_cols column starts in bins
    Py_ssize_t n_cols,
    Py_ssize_t lo,
    Py_ssize_t hi,
    uint8_t* out,               # OUT: (n_rows, n_cols) row-major; rows lo..hi-1 written
) noexcept nogil:
    cdef Py_ssize_t j, r
    cdef const uint8_t* column
    for j in range(n_cols):  # column by column: reads stream, the block's output stays in cache
        column = bins + starts[j]
        for r in range(lo, hi):
            out[r * n_cols + j] = column[r]


def _row_major(const uint8_t[:, ::1] bins_u8,     # IN: (u8 columns, n_rows) column-major bins
               columns,                            # which of them, in order
               int n_threads=1):
    """(n_rows, len(columns)) row-major copy of some columns of a column-major matrix, a
    block of rows at a time, in one nogil block (the GIL is re-taken once: a busy Python
    thread beside the training delays each re-take by up to a switch interval)."""
    cdef Py_ssize_t n_rows = bins_u8.shape[1], block
    cdef const int64_t[::1] starts = np.asarray(columns, dtype=np.int64) * n_rows
    out = np.empty((n_rows, starts.shape[0]), dtype=np.uint8)
    cdef uint8_t[:, ::1] dst = out
    if n_rows == 0 or starts.shape[0] == 0:
        return out
    with nogil:
        for block in prange((n_rows + TRANSPOSE_ROWS - 1) // TRANSPOSE_ROWS, schedule="static",
                            num_threads=n_threads):
            transpose_rows(&bins_u8[0, 0], &starts[0], starts.shape[0], block * TRANSPOSE_ROWS,
                           min((block + 1) * TRANSPOSE_ROWS, n_rows), &dst[0, 0])
    return out


cdef class HistogramBuilder:
    """Builds node histograms into the slots of a histogram pool (the shared part of the
    float64 and quantized builders).

    A node's gradients are gathered to the node's own positions of one scratch buffer
    (partition ranges are disjoint), so a whole batch of nodes is gathered first and
    then built in one parallel loop over (node, column) pairs. The root's rows are in
    storage order and need no gather.

    layout "row": the uint8 columns are also stored row-major and built by the row-wise
    kernel (see _rowwise.pyx); other columns stay column-wise.

    Sparse columns (sparse input) are built by their own row-wise kernel over the
    matrix's CSR of bins (_sparse.pyx), whatever the layout, which applies to the dense
    columns only.
    """
    def __init__(self, binned, Py_ssize_t n_slots, columns, int n_threads, bint prefetch,
                 Py_ssize_t prefetch_distance, str layout):
        self.view = ColumnsView(binned)
        self.n_slots = n_slots
        columns = column_list(columns, self.view.n_columns)
        if layout not in ("column", "row"):
            raise ValueError(f"layout must be 'column' or 'row', got {layout!r}")
        self._set_sparse(binned)
        columns = columns[binned.column_kind[columns] != SPARSE_KIND]
        is_row = binned.column_kind[columns] == 0 if layout == "row" else np.zeros(len(columns), dtype=bool)
        row_cols = columns[is_row]
        self.rowwise = len(row_cols) > 0
        self.columns = np.ascontiguousarray(unique(columns[~is_row]), dtype=np.int32)
        if self.rowwise:
            self.row_matrix = _row_major(binned.bins_u8, binned.column_index[row_cols], n_threads)
            self.row_columns = np.ascontiguousarray(row_cols, dtype=np.int32)
            self.row_offsets = np.ascontiguousarray(binned.column_offsets[row_cols], dtype=np.int64)
            self.row_bins = np.ascontiguousarray(binned.column_n_bins[row_cols], dtype=np.int64)
            self.rows_view.bins = &self.row_matrix[0, 0]
            self.rows_view.stride = self.row_matrix.shape[1]
            self.rows_view.n_cols = self.row_offsets.shape[0]
            self.rows_view.offsets = &self.row_offsets[0]
            self.rows_view.n_bins = &self.row_bins[0]
            self.rows_view.total_bins = self.view.total_bins
        self.n_threads = n_threads
        self.prefetch_distance = prefetch_distance if prefetch else 0

    def _set_sparse(self, binned):
        """The CSR of the sparse columns, which must be contiguous in the histogram."""
        self.sparse = binned.has_sparse
        if not self.sparse:
            return
        sparse_cols = np.flatnonzero(binned.column_kind == SPARSE_KIND)
        if not np.array_equal(sparse_cols, np.arange(sparse_cols[0], sparse_cols[len(sparse_cols) - 1] + 1)):
            raise ValueError("the sparse columns must be contiguous")
        cdef const int64_t[::1] indptr = binned.sparse_indptr
        cdef const uint32_t[::1] entries = binned.sparse_bins
        if indptr.shape[0] != self.view.n_rows + 1:
            raise ValueError("the sparse rows do not match the matrix")
        cdef const int64_t[::1] col_offsets = binned.column_offsets
        cdef const int32_t[::1] col_default = binned.sparse_default
        self.sparse_owner = (binned.sparse_indptr, binned.sparse_bins, binned.column_offsets, binned.sparse_default)
        self.sparse_rows.indptr = &indptr[0]
        self.sparse_rows.entries = &entries[0] if entries.shape[0] > 0 else NULL
        self.sparse_rows.lo = binned.column_offsets[sparse_cols[0]]
        self.sparse_rows.hi = binned.column_offsets[sparse_cols[len(sparse_cols) - 1] + 1]
        self.sparse_rows.totals_bin = binned.sparse_totals_bin
        self.sparse_rows.col_offsets = &col_offsets[0]
        self.sparse_rows.col_default = &col_default[0]
        self.sparse_rows.first_col = sparse_cols[0]
        self.sparse_rows.last_col = sparse_cols[len(sparse_cols) - 1] + 1

    def set_gradients(self, const float[:, ::1] gh):
        """The (n_rows, 2) float32 gradients of the tree being grown."""
        if gh.shape[0] != self.view.n_rows or gh.shape[1] != 2:
            raise ValueError(f"gradients must have shape ({self.view.n_rows}, 2)")
        self.gh_owner = gh
        self.use_gradients(&gh[0, 0] if gh.shape[0] > 0 else NULL)

    cdef void use_gradients(self, const float* gh) noexcept nogil:  # gh: IN
        """The tree's gradients, (n_rows, 2) (grad, hess) by row, kept alive by the caller
        while the tree grows: the boosting round points the builder at each output's."""
        self.gh = gh

    cdef bint ready(self):
        """Set up to build trees (each tree's gradients come with it: use_gradients)."""
        return True

    cdef void start_tree(self, RowPartitioner part, uint64_t tree_index) noexcept nogil:
        """A tree starts (its gradients are set, `part` holds its root): the builder's
        preparations."""
        pass

    cdef void build(
        self,
        RowPartitioner part,
        const int64_t* slot_v,      # IN: n pool slots
        const int64_t* node_v,      # IN: n nodes
        Py_ssize_t n,
    ) noexcept nogil:
        """Build the histogram of node_v[i] into pool slot slot_v[i], for every i. Slots and
        nodes must be valid and the nodes' row ranges disjoint (a tree level's nodes are):
        each node's gradients are gathered at its own positions of one buffer."""
        cdef Py_ssize_t i, k, n_col = self.columns.shape[0]
        cdef Py_ssize_t total_rows = 0, n_rows
        if n == 0 or (n_col == 0 and not self.rowwise and not self.sparse):
            return
        for i in range(n):
            n_rows = part.node_count(node_v[i])
            total_rows += n_rows
            self._start_node(slot_v[i], n_rows)
        cdef int t = threads_for_build(self.n_threads, n * n_col, total_rows // n)
        cdef int t_rows = threads_for_build(self.n_threads, n * MIN_COLUMNS_PARALLEL, total_rows // n)
        cdef int t_root
        if n_col > 0:  # gathered gradients are for the column-wise kernels
            for i in range(n):
                self._gather(part, node_v[i], slot_v[i])
        if self.rowwise and n == 1 and part.node_rows(node_v[0]) == NULL and self.root_columnwise:
            # the float64 root: its rows are in order, each column a forward scan of its bins
            # and of the gradients; column-wise is 20-35% faster here than row-wise (which
            # pays off for gathered rows). Sums in row order: thread-count independent.
            t_root = threads_for_build(self.n_threads, self.row_columns.shape[0], total_rows)
            for k in prange(self.row_columns.shape[0], schedule="static", num_threads=t_root):
                self._build_column(part, node_v[0], slot_v[0], self.row_columns[k])
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
        if self.sparse:
            self._build_sparse_nodes(part, slot_v, node_v, n)
        if n_col == 0:
            pass
        elif t > 1:  # column by column, each column's nodes in turn: a column is read once per
            # batch of nodes (memory-mapped bins larger than the page cache: once per level)
            for k in prange(n * n_col, schedule="static", num_threads=t):
                self._build_column(part, node_v[k % n], slot_v[k % n], self.columns[k // n])
        else:
            for k in range(n * n_col):
                self._build_column(part, node_v[k % n], slot_v[k % n], self.columns[k // n])

    cdef void subtract(
        self,
        const int64_t* parents,     # IN: n pool slots
        const int64_t* children,    # IN: n pool slots
        const int64_t* outs,        # IN: n pool slots (written: the pool's)
        Py_ssize_t n,
    ) noexcept nogil:
        """pool[outs[i]] = pool[parents[i]] - pool[children[i]] (outs[i] may be parents[i]);
        children hold no more rows than their parents."""
        pass

    cdef int _blocks(self, RowPartitioner part, Py_ssize_t node) noexcept nogil:
        return row_blocks(part.node_count(node), self.exact_sums, self.n_threads)

    cdef void _build_sparse_nodes(self, RowPartitioner part, const int64_t* slot_v, const int64_t* node_v,
                                  Py_ssize_t n) noexcept nogil:
        """The sparse columns of n nodes: big nodes by row blocks in parallel, the others in
        parallel over nodes (scheduled as the row-wise kernel's)."""
        cdef Py_ssize_t i
        cdef Py_ssize_t total_rows = 0
        for i in range(n):
            total_rows += part.node_count(node_v[i])
        cdef int t_nodes = threads_for_build(self.n_threads, n * MIN_COLUMNS_PARALLEL, total_rows // n)
        for i in range(n):
            if self._blocks(part, node_v[i]) > 1:
                self._build_sparse(part, node_v[i], slot_v[i], self.n_threads)
        if t_nodes > 1:
            for i in prange(n, schedule="static", num_threads=t_nodes):
                if self._blocks(part, node_v[i]) == 1:
                    self._build_sparse(part, node_v[i], slot_v[i], 1)
        else:
            for i in range(n):
                if self._blocks(part, node_v[i]) == 1:
                    self._build_sparse(part, node_v[i], slot_v[i], 1)

    cdef void _build_sparse(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                            int n_threads) noexcept nogil:
        pass

    cdef void _start_node(self, Py_ssize_t slot, Py_ssize_t n_rows) noexcept nogil:
        """A node of n_rows rows is about to be built into `slot`."""
        pass

    cdef void _gather(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot) noexcept nogil:
        """The node's values for the column-wise kernels, at its own positions begin..end of
        the gathered buffer."""
        pass

    cdef void _build_column(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                            Py_ssize_t column) noexcept nogil:
        pass

    cdef void _build_rows(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                          int n_threads) noexcept nogil:
        pass


cdef class FloatHistogramBuilder(HistogramBuilder):
    """Float64 histograms: pool (slots, bins, 2), float32 (grad, hess) pairs per row."""

    def __init__(self, binned, pool_data, columns, int n_threads=1, bint prefetch=True,
                 Py_ssize_t prefetch_distance=PREFETCH_DISTANCE, str layout="column"):
        if pool_data.dtype != np.float64 or pool_data.ndim != 3 or pool_data.shape[1] != binned.total_bins \
                or pool_data.shape[2] != 2:
            raise ValueError("pool slots do not match the histogram layout: (slots, total_bins, 2) float64")
        super().__init__(binned, pool_data.shape[0], columns, n_threads, prefetch, prefetch_distance, layout)
        self.pool = pool_data
        self.exact_sums = False
        self.root_columnwise = True
        if self.rowwise:
            self.scratch = np.empty(2 * (MAX_ROW_BLOCKS - 1) * self.view.total_bins, dtype=np.float64)
        if self.columns.shape[0] > 0:  # the row-wise kernel reads gradients by row: no copy
            self.ordered = np.empty((self.view.n_rows, 2), dtype=np.float32)
        if self.sparse:
            # float64 row blocks depend on the node size only: the root's are the most
            blocks = row_blocks(self.view.n_rows, False, 1)
            self.sparse_scratch = np.empty(max(1, 2 * (blocks - 1) * (self.sparse_rows.hi - self.sparse_rows.lo)),
                                           dtype=np.float64)

    cdef void _gather(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot) noexcept nogil:
        cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
        cdef const row_t* rows = part.node_rows(node)
        if n > 0 and rows != NULL:  # rows in order are read in place
            gather_pairs(self.gh, rows, n, &self.ordered[0, 0] + 2 * begin, self.n_threads)

    cdef void _build_column(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                            Py_ssize_t column) noexcept nogil:
        cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
        cdef const row_t* rows = part.node_rows(node)
        cdef double* hist = &self.pool[slot, 0, 0] + 2 * self.view.offsets[column]
        if rows == NULL:
            build_column(&self.view.cols, column, NULL, begin, n, self.gh + 2 * begin, hist,
                         self.view.n_bins[column], 0)
        else:
            build_column(&self.view.cols, column, rows, 0, n, &self.ordered[0, 0] + 2 * begin, hist,
                         self.view.n_bins[column], self.prefetch_distance)

    cdef void _build_rows(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                          int n_threads) noexcept nogil:
        cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
        cdef const row_t* rows = part.node_rows(node)
        build_rows(&self.rows_view, rows, begin if rows == NULL else 0, n, self.gh, &self.pool[slot, 0, 0],
                   &self.scratch[0], self._blocks(part, node), n_threads,
                   ROW_PREFETCH if self.prefetch_distance > 0 else 0)

    cdef void _build_sparse(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                            int n_threads) noexcept nogil:
        cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
        cdef const row_t* rows = part.node_rows(node)
        build_sparse(&self.sparse_rows, rows, begin if rows == NULL else 0, n, self.gh, &self.pool[slot, 0, 0],
                     &self.sparse_scratch[0], self._blocks(part, node), n_threads)

    cdef void subtract(
        self,
        const int64_t* parents,     # IN: n pool slots
        const int64_t* children,    # IN: n pool slots
        const int64_t* outs,        # IN: n pool slots (written: the pool's)
        Py_ssize_t n,
    ) noexcept nogil:
        cdef Py_ssize_t i
        if self.view.total_bins == 0:
            return
        for i in range(n):
            subtract_bins(&self.pool[parents[i], 0, 0], &self.pool[children[i], 0, 0], &self.pool[outs[i], 0, 0],
                          self.view.total_bins)


cdef class QuantizedHistogramBuilder(HistogramBuilder):
    """Quantized histograms: int64 pool (slots, bins) of packed sums, int32/int16 packed
    pairs per row.

    A slot's bins are words of 32, 16 or 8 bits per sum (int64, int32 or int16;
    `sum_bits[slot]`), the narrowest that the node's rows cannot overflow: with values of
    at most `levels` in magnitude, n rows sum to at most n * levels. The gather widens
    each row's pair to that word (the root: in row order); narrower words halve the
    memory the build, the subtraction and the split scan go through. Integer sums are
    exact in any order, so row-wise nodes take one row block per thread and the root is
    built row-wise too (reading the packed pairs in place, no widened copy).
    """

    def __init__(self, binned, pool_data, columns, int n_threads=1, bint prefetch=True,
                 Py_ssize_t prefetch_distance=PREFETCH_DISTANCE, str layout="column"):
        if pool_data.dtype != np.int64 or pool_data.ndim != 2 or pool_data.shape[1] != binned.total_bins:
            raise ValueError("pool slots do not match the histogram layout: (slots, total_bins) int64")
        super().__init__(binned, pool_data.shape[0], columns, n_threads, prefetch, prefetch_distance, layout)
        self.pool = pool_data
        self.exact_sums = True
        self.root_columnwise = False
        self.sum_bits = np.full(self.n_slots, 32, dtype=np.uint8)
        self.slot_bits = self.sum_bits
        self.scales = np.ones(2)
        self.scales_v = self.scales
        self.slot_rows = np.zeros(self.n_slots, dtype=np.int64)
        if self.rowwise:
            self.scratch = np.empty((MAX_ROW_BLOCKS - 1) * self.view.total_bins, dtype=np.int64)
        if self.columns.shape[0] > 0:
            self.ordered = np.empty(self.view.n_rows, dtype=np.int64)
        if self.sparse:
            self.sparse_scratch = np.empty(max(1, (MAX_ROW_BLOCKS - 1) * (self.sparse_rows.hi - self.sparse_rows.lo)),
                                           dtype=np.int64)

    def set_quantized(self, packed, levels=None):
        """The packed int32 (i16) or int16 (i8) pairs of the tree being grown, whose grad
        and hess are at most `levels` in magnitude (None: the word's limit, 32767 or 127);
        the bins' width of each node follows from it."""
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
            self.packed = &self.q32[0] if self.view.n_rows else NULL
        else:
            self.q16, self.packed_bits = packed, 8
            self.packed = &self.q16[0] if self.view.n_rows else NULL
        self.levels = levels

    def set_quantizer(self, packed, int levels, uint64_t seed):
        """Quantize each tree's gradients (set_gradients) into `packed` (int32 for "i16",
        int16 for "i8"; writable) when the tree starts, with `levels` and `seed` (see
        _quantize.pyx), the scales into `scales`; the bins are sized for `levels` (as
        set_quantized(packed, levels), which may override the widths' levels later)."""
        if not packed.flags.writeable:
            raise ValueError("packed must be writable")
        self.set_quantized(packed, levels)
        self.quantize_levels = levels
        self.seed = seed
        self.quantizes = True

    cdef bint ready(self):
        return self.packed_bits != 0

    cdef void start_tree(self, RowPartitioner part, uint64_t tree_index) noexcept nogil:
        """Quantize the gradients of the tree's rows (the root's: every row, or a row
        sample), when set_quantizer asked for it."""
        if not self.quantizes:
            return
        cdef const row_t* rows = part.node_rows(0)
        cdef Py_ssize_t n = part.node_count(0)
        if self.packed_bits == 16:
            quantize_rows(self.gh, rows, n, <int32_t*> self.packed, self.quantize_levels, self.seed,
                          tree_index, self.n_threads, &self.scales_v[0])
        else:
            quantize_rows(self.gh, rows, n, <int16_t*> self.packed, self.quantize_levels, self.seed,
                          tree_index, self.n_threads, &self.scales_v[0])

    def sum_over_machines(self):
        """The slots will hold sums over other machines' rows (boosters.dask: 32-bit sums
        in every word, whatever a node's rows), written there, not built; this builder
        only subtracts them."""
        self.machines_sums = True
        self.sum_bits[:] = 32

    cdef int bits_for(self, Py_ssize_t n_rows) noexcept nogil:
        """Bits per sum of a histogram of n_rows rows: |grad sum| and hess sum are at most
        n_rows * levels, and a word of b bits per sum holds grad in b signed bits (hess in
        the low b bits; it is >= 0). Never narrower than the values themselves."""
        cdef int64_t bound = <int64_t> n_rows * self.levels
        if self.machines_sums:
            return 32
        if self.packed_bits == 8 and bound < 128:
            return 8
        if bound < 32768:
            return 16
        return 32

    cdef char* slot_words(self, Py_ssize_t slot) noexcept nogil:
        return <char*> &self.pool[slot, 0]

    cdef char* ordered_words(self, Py_ssize_t begin) noexcept nogil:
        """Where the words of a node starting at partition position `begin` go: 8 bytes
        per position, so nodes of any widths gathered together never overlap."""
        return <char*> &self.ordered[0] + 8 * begin

    cdef void _start_node(self, Py_ssize_t slot, Py_ssize_t n_rows) noexcept nogil:
        self.slot_rows[slot] = n_rows
        self.slot_bits[slot] = self.bits_for(n_rows)

    cdef void _gather(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot) noexcept nogil:
        """As words of the slot's width; rows in order too (widened)."""
        cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
        cdef const row_t* rows = part.node_rows(node)
        if n == 0:
            return
        gather_words(<const char*> self.packed + (begin * (self.packed_bits // 4) if rows == NULL else 0),
                     self.packed_bits, rows, n, self.ordered_words(begin), self.slot_bits[slot], self.n_threads)

    cdef void _build_column(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                            Py_ssize_t column) noexcept nogil:
        cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
        cdef const row_t* rows = part.node_rows(node)
        cdef int bits = self.slot_bits[slot]
        # in order: the values of rows begin.. were widened in place as gathered ones are
        build_column_words(&self.view.cols, column, rows, begin if rows == NULL else 0, n, self.ordered_words(begin),
                           self.slot_words(slot) + self.view.offsets[column] * (bits // 4), bits,
                           self.view.n_bins[column], 0 if rows == NULL else self.prefetch_distance)

    cdef void _build_rows(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                          int n_threads) noexcept nogil:
        cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
        cdef const row_t* rows = part.node_rows(node)
        build_rows_words(&self.rows_view, rows, begin if rows == NULL else 0, n, self.packed, self.packed_bits,
                         self.slot_words(slot), &self.scratch[0], self.slot_bits[slot], self._blocks(part, node),
                         n_threads, ROW_PREFETCH if self.prefetch_distance > 0 else 0)

    cdef void _build_sparse(self, RowPartitioner part, Py_ssize_t node, Py_ssize_t slot,
                            int n_threads) noexcept nogil:
        cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
        cdef const row_t* rows = part.node_rows(node)
        build_sparse_words(&self.sparse_rows, rows, begin if rows == NULL else 0, n, self.packed, self.packed_bits,
                           self.slot_words(slot), &self.sparse_scratch[0], self.slot_bits[slot],
                           self._blocks(part, node), n_threads)

    cdef void subtract(
        self,
        const int64_t* parents,     # IN: n pool slots
        const int64_t* children,    # IN: n pool slots
        const int64_t* outs,        # IN: n pool slots (written: the pool's)
        Py_ssize_t n,
    ) noexcept nogil:
        """The sibling gets the width of its own row count (parent's minus the child's); a
        child narrower than its parent is widened word by word."""
        cdef Py_ssize_t i
        cdef int out_bits
        cdef int64_t rows_out
        if self.view.total_bins == 0:
            return
        for i in range(n):
            rows_out = self.slot_rows[parents[i]] - self.slot_rows[children[i]]
            out_bits = self.bits_for(rows_out)
            subtract_words(self.slot_words(parents[i]), self.slot_bits[parents[i]], self.slot_words(children[i]),
                           self.slot_bits[children[i]], self.slot_words(outs[i]), out_bits, self.view.total_bins)
            self.slot_bits[outs[i]] = out_bits
            self.slot_rows[outs[i]] = rows_out
