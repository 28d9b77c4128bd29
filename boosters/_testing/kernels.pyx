"""Checked Python entry points to the training kernels, for tests and benchmarks only.

The grower calls the kernels and the C-level methods of its components (histogram
builder, split finder, row partitioner, histogram pool) from Cython without checks; the
functions here make the same calls on caller-provided arrays, after checking them, so
that tests can compare each kernel with its naive twin and benchmarks can time it alone.
The growth loop's checked steps that boosters.dask's partitions use live in
boosters.training.growth._node_steps; they are re-exported here.
The gain formulas of _gain.pxd are here too (vectorised over arrays), for the tests'
naive references.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

from boosters._lib.columns cimport BinColumns
from boosters._lib.types cimport row_t
from boosters.training._sampling cimport RowSampler
from boosters.training.histograms._columnwise cimport (
    ColumnsView, PREFETCH_DISTANCE, build_column, build_column_words, gather_pairs, gather_words, subtract_bins,
    subtract_words, threads_for_build,
)
from boosters.training.histograms._build cimport HistogramBuilder, QuantizedHistogramBuilder
from boosters.training.histograms._pool cimport HistogramPool
from boosters.training.partition._partition cimport RowPartitioner
from boosters.training.histograms._quantize cimport quantize_rows
from boosters.training.split._gain cimport children_score, leaf_score, split_gain
from boosters.training.split._gain cimport leaf_weight as gain_leaf_weight
from boosters.training.split._split cimport Candidate, SplitFinder
from boosters.training.split._noise cimport noise_node_key, noise_tree_key, score_noise, score_noise_sd

from boosters.training.histograms._build import column_list
# the growth loop's checked steps that boosters.dask uses live in the training layer;
# re-exported here with the other entry points
from boosters.training.growth._node_steps import (  # noqa: F401
    _check_split, build_nodes, int64s, node_count, node_rows, node_sums, split_many, unpack,
)

_SUM_BITS = {np.dtype(np.int64): 32, np.dtype(np.int32): 16, np.dtype(np.int16): 8}
_WORDS = {32: np.int64, 16: np.int32, 8: np.int16}  # bits per sum -> packed word


# -- histogram kernels --------------------------------------------------------------------

def check_rows(const row_t[::1] rows, Py_ssize_t n_rows):
    cdef Py_ssize_t i
    cdef row_t worst = 0
    for i in range(rows.shape[0]):
        if rows[i] > worst:
            worst = rows[i]
    if rows.shape[0] and worst >= n_rows:
        raise ValueError(f"rows contains index {worst} but there are only {n_rows} rows")


def _check_hist(hist, Py_ssize_t total_bins, name="hist"):
    if hist.shape[0] != total_bins or hist.shape[1] != 2:
        raise ValueError(f"{name} must have shape ({total_bins}, 2), got {tuple(hist.shape)}")


cdef inline void build_one(
    const BinColumns* cols,
    Py_ssize_t column,
    const row_t* rows,      # IN: as build_column
    Py_ssize_t start,
    Py_ssize_t n,
    const void* values,     # IN: as build_column
    char* hist,             # OUT: the whole histogram; column `column` written
    int sum_bits,           # 64: float64 (grad, hess) pairs; else packed words of that many bits per sum
    Py_ssize_t offset,      # the column's first bin
    Py_ssize_t n_bins,
    Py_ssize_t prefetch_distance,
) noexcept nogil:
    if sum_bits == 64:
        build_column(cols, column, rows, start, n, values, <double*> hist + 2 * offset, n_bins, prefetch_distance)
    else:
        build_column_words(cols, column, rows, start, n, values, hist + offset * (sum_bits // 4), sum_bits, n_bins,
                           prefetch_distance)


cdef void build_columns(
    ColumnsView view,
    const int32_t[::1] columns,     # IN: columns to build
    const row_t* rows,              # IN: as build_column
    Py_ssize_t start,
    Py_ssize_t n,
    const void* values,             # IN: as build_column
    char* hist,                     # OUT: the node's histogram (only `columns` written)
    int sum_bits,                   # as build_one
    Py_ssize_t prefetch_distance,
    int n_threads,
) noexcept nogil:
    """All given columns of a node, column-parallel."""
    cdef Py_ssize_t j, c
    cdef int t = threads_for_build(n_threads, columns.shape[0], n)
    if t > 1:
        for j in prange(columns.shape[0], schedule="static", num_threads=t):
            c = columns[j]
            build_one(&view.cols, c, rows, start, n, values, hist, sum_bits, view.offsets[c], view.n_bins[c],
                      prefetch_distance)
    else:
        for j in range(columns.shape[0]):
            c = columns[j]
            build_one(&view.cols, c, rows, start, n, values, hist, sum_bits, view.offsets[c], view.n_bins[c],
                      prefetch_distance)


def build_histogram_contiguous(binned, const float[:, ::1] gh, double[:, ::1] hist,
                               Py_ssize_t start=0, stop=None, columns=None, int n_threads=1):
    """Histogram of rows start..stop in storage order (the root). gh: (n_rows, 2) float32."""
    cdef ColumnsView view = ColumnsView(binned)
    cdef Py_ssize_t end = view.n_rows if stop is None else stop
    if gh.shape[0] != view.n_rows or gh.shape[1] != 2:
        raise ValueError(f"gh must have shape ({view.n_rows}, 2), got {tuple(gh.shape)}")
    _check_hist(hist, view.total_bins)
    if not 0 <= start <= end <= view.n_rows:
        raise ValueError(f"row range [{start}, {end}) is outside [0, {view.n_rows})")
    cdef const int32_t[::1] cols = column_list(columns, view.n_columns)
    if cols.shape[0] == 0:
        return
    with nogil:
        build_columns(view, cols, NULL, start, end - start, &gh[0, 0] + 2 * start, <char*> &hist[0, 0], 64, 0,
                      n_threads)


def build_histogram_gathered(binned, const row_t[::1] rows, const float[:, ::1] ordered_gh,
                             double[:, ::1] hist, columns=None, int n_threads=1,
                             bint prefetch=True, Py_ssize_t prefetch_distance=PREFETCH_DISTANCE):
    """Histogram of the given rows; ordered_gh[i] holds the gradients of rows[i]."""
    cdef ColumnsView view = ColumnsView(binned)
    if ordered_gh.shape[0] < rows.shape[0] or ordered_gh.shape[1] != 2:
        raise ValueError(f"ordered_gh must have shape (>= {rows.shape[0]}, 2), got {tuple(ordered_gh.shape)}")
    _check_hist(hist, view.total_bins)
    check_rows(rows, view.n_rows)
    if prefetch_distance < 0:
        raise ValueError(f"prefetch_distance must be >= 0, got {prefetch_distance}")
    cdef const int32_t[::1] cols = column_list(columns, view.n_columns)
    cdef row_t no_rows = 0
    cdef const row_t* rows_ptr = &rows[0] if rows.shape[0] else &no_rows  # empty: NULL would mean "in order"
    cdef const float* gh_ptr = &ordered_gh[0, 0] if ordered_gh.shape[0] else NULL
    if cols.shape[0] == 0:
        return
    with nogil:
        build_columns(view, cols, rows_ptr, 0, rows.shape[0], gh_ptr, <char*> &hist[0, 0], 64,
                      prefetch_distance if prefetch else 0, n_threads)


def gather_gradients(const float[:, ::1] gh, const row_t[::1] rows, float[:, ::1] out, int n_threads=1):
    """out[i] = gh[rows[i]] for every i: the ordered gradients of a node."""
    if gh.shape[1] != 2 or out.shape[1] != 2 or out.shape[0] < rows.shape[0]:
        raise ValueError("gh must be (n_rows, 2) and out (>= len(rows), 2) float32")
    check_rows(rows, gh.shape[0])
    if rows.shape[0] == 0:
        return
    with nogil:
        gather_pairs(&gh[0, 0], &rows[0], rows.shape[0], &out[0, 0], n_threads)


def subtract_histograms(const double[:, ::1] parent, const double[:, ::1] child, double[:, ::1] out):
    """out = parent - child (the sibling's histogram); out may be parent itself."""
    if parent.shape[0] != child.shape[0] or parent.shape[0] != out.shape[0] or \
            parent.shape[1] != 2 or child.shape[1] != 2 or out.shape[1] != 2:
        raise ValueError("parent, child and out must all have the same shape (total_bins, 2)")
    if parent.shape[0] == 0:
        return
    with nogil:
        subtract_bins(&parent[0, 0], &child[0, 0], &out[0, 0], parent.shape[0])


cdef char* word_bytes(words, name) except NULL:
    """The first byte of a contiguous array of packed words (kept alive by the caller)."""
    cdef const int8_t[::1] view = np.asarray(words).view(np.int8)
    if view.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    return <char*> &view[0]


def build_histogram_packed(binned, packed, hist, rows=None, columns=None, int n_threads=1,
                           bint prefetch=True, Py_ssize_t prefetch_distance=PREFETCH_DISTANCE):
    """Quantized histogram: hist[bin] = packed sum of packed[row] over `rows` (all rows
    if None). packed: int32 (i16 mode) or int16 (i8 mode) words, one per row. hist:
    int64, int32 or int16 words (32, 16 or 8 bits per sum, at least the values' bits);
    the caller makes sure the sums fit."""
    cdef ColumnsView view = ColumnsView(binned)
    cdef const int32_t[::1] cols = column_list(columns, view.n_columns)
    cdef const row_t[::1] row_v
    cdef const row_t* rows_ptr = NULL
    cdef row_t no_rows = 0
    cdef Py_ssize_t n = view.n_rows, distance = prefetch_distance if prefetch else 0
    packed = np.asarray(packed)
    hist = np.asarray(hist)
    if packed.dtype not in (np.int16, np.int32) or packed.shape != (view.n_rows,):
        raise ValueError(f"packed must be int16 or int32 with one entry per row ({view.n_rows})")
    if hist.dtype not in _SUM_BITS or hist.shape != (view.total_bins,) or not hist.flags.c_contiguous:
        raise ValueError(f"hist must be a contiguous int64, int32 or int16 array of {view.total_bins} entries")
    cdef int packed_bits = 16 if packed.dtype == np.int32 else 8
    cdef int sum_bits = _SUM_BITS[hist.dtype]
    if sum_bits < packed_bits:
        raise ValueError("hist words must have at least as many bits per sum as the packed values")
    if rows is not None:
        row_v = np.ascontiguousarray(rows, dtype=np.uint32)
        check_rows(row_v, view.n_rows)
        n = row_v.shape[0]
        rows_ptr = &row_v[0] if n else &no_rows  # empty: NULL would mean "in order"
    if view.total_bins == 0 or cols.shape[0] == 0:
        return
    values = np.empty(max(n, 1), dtype=hist.dtype)  # the rows' pairs in order, as hist words
    cdef char* values_ptr = word_bytes(values, "values")
    cdef char* hist_ptr = word_bytes(hist, "hist")
    cdef const char* packed_ptr = word_bytes(packed, "packed") if view.n_rows else NULL
    with nogil:
        if n:
            gather_words(packed_ptr, packed_bits, rows_ptr, n, values_ptr, sum_bits, n_threads)
        build_columns(view, cols, rows_ptr, 0, n, values_ptr, hist_ptr, sum_bits, distance, n_threads)


def subtract_packed(parent, child, out):
    """out = parent - child for quantized histograms (exact), each of int64, int32 or int16
    words; child and out no wider than parent; out may be parent."""
    parent, child, out = (np.asarray(a) for a in (parent, child, out))
    if not parent.shape == child.shape == out.shape or parent.ndim != 1:
        raise ValueError("parent, child and out must have the same length")
    if any(a.dtype not in _SUM_BITS or not a.flags.c_contiguous for a in (parent, child, out)):
        raise ValueError("parent, child and out must be contiguous int64, int32 or int16 arrays")
    cdef int parent_bits = _SUM_BITS[parent.dtype], child_bits = _SUM_BITS[child.dtype], out_bits = _SUM_BITS[out.dtype]
    if child_bits > parent_bits or out_bits > parent_bits:
        raise ValueError("child and out words must be no wider than the parent's")
    if parent.shape[0] == 0:
        return
    cdef char* parent_ptr = word_bytes(parent, "parent")
    cdef char* child_ptr = word_bytes(child, "child")
    cdef char* out_ptr = word_bytes(out, "out")
    cdef Py_ssize_t n = parent.shape[0]
    with nogil:
        subtract_words(parent_ptr, parent_bits, child_ptr, child_bits, out_ptr, out_bits, n)


def quantize_gradients(const float[:, ::1] gh, out, int levels, uint64_t seed, uint64_t tree_index,
                       int n_threads=1):
    """Quantize (n_rows, 2) float32 gradients into packed words, out: int32 ("i16") or
    int16 ("i8"), one per row; returns (scale_g, scale_h): a quantized value q stands
    for q / scale."""
    cdef int32_t[::1] out32
    cdef int16_t[::1] out16
    cdef double scales[2]
    out = np.asarray(out)
    cdef int cap = {np.dtype(np.int32): 32767, np.dtype(np.int16): 127}.get(out.dtype, 0)
    if gh.shape[1] != 2 or out.shape != (gh.shape[0],) or cap == 0:
        raise ValueError("gh must be (n_rows, 2) and out an int32 or int16 array of n_rows entries")
    if not 1 <= levels <= cap:
        raise ValueError(f"levels must be in [1, {cap}] for this packing, got {levels}")
    if gh.shape[0] == 0:
        return 0.0, 0.0
    if cap == 32767:
        out32 = out
        with nogil:
            quantize_rows(&gh[0, 0], NULL, gh.shape[0], &out32[0], levels, seed, tree_index, n_threads, scales)
    else:
        out16 = out
        with nogil:
            quantize_rows(&gh[0, 0], NULL, gh.shape[0], &out16[0], levels, seed, tree_index, n_threads, scales)
    return scales[0], scales[1]


# -- the gain formulas (_gain.pxd), element by element over arrays --------------------------

def _float64s(*arrays):
    """Broadcast float64 copies, flattened, and the common shape."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays))
    return [np.ascontiguousarray(a).ravel() for a in arrays], arrays[0].shape


ctypedef double (*leaf_formula)(double g, double h, double l1, double l2) noexcept nogil


cdef object _per_leaf(leaf_formula formula, g, h, double l1, double l2):
    """formula(g, h) element by element, in the broadcast shape of g and h."""
    (g_f, h_f), shape = _float64s(g, h)
    out = np.empty(g_f.shape[0])
    cdef const double[::1] g_v = g_f, h_v = h_f
    cdef double[::1] o = out
    cdef Py_ssize_t i
    for i in range(o.shape[0]):
        o[i] = formula(g_v[i], h_v[i], l1, l2)
    return out.reshape(shape)


def leaf_scores(g, h, double l1, double l2):
    """T(G)^2 / (H + l2) per element; 0 where H + l2 <= 0."""
    return _per_leaf(leaf_score, g, h, l1, l2)


def split_gains(gl, hl, gr, hr, parent_score, double l1, double l2, double min_gain_to_split):
    """1/2 [score(left) + score(right) - parent_score] - min_gain_to_split per element."""
    (gl_f, hl_f, gr_f, hr_f, p_f), shape = _float64s(gl, hl, gr, hr, parent_score)
    out = np.empty(gl_f.shape[0])
    cdef const double[::1] a = gl_f, b = hl_f, c = gr_f, d = hr_f, p = p_f
    cdef double[::1] o = out
    cdef Py_ssize_t i
    for i in range(o.shape[0]):
        o[i] = split_gain(children_score(a[i], b[i], c[i], d[i], l1, l2), p[i], min_gain_to_split)
    return out.reshape(shape)


# -- the histogram pool -------------------------------------------------------------------

def _pool_node(HistogramPool pool, Py_ssize_t node):
    if not 0 <= node < pool.max_nodes:
        raise ValueError(f"node {node} out of range [0, {pool.max_nodes})")


def _pool_slot(HistogramPool pool, Py_ssize_t slot):
    if not 0 <= slot < pool.n_slots:
        raise ValueError(f"slot {slot} out of range [0, {pool.n_slots})")


def pool_get(HistogramPool pool, Py_ssize_t node):
    """Slot holding `node`'s histogram, or None if it was never built or was evicted."""
    _pool_node(pool, node)
    slot = pool.slot_of(node)
    return None if slot < 0 else slot


def pool_acquire(HistogramPool pool, Py_ssize_t node):
    """(slot, hit): hit means the slot already holds `node`'s histogram; on a miss the
    caller must (re)build it into the returned slot."""
    cdef bint hit
    _pool_node(pool, node)
    slot = pool.take(node, &hit)
    if slot < 0:
        raise RuntimeError("histogram pool: every slot is pinned")
    return slot, bool(hit)


def pool_move(HistogramPool pool, Py_ssize_t from_node, Py_ssize_t to_node):
    """Hand `from_node`'s slot to `to_node`; returns the slot now owned by `to_node`."""
    _pool_node(pool, from_node)
    _pool_node(pool, to_node)
    if not pool.identity and pool.node_slot_[from_node] < 0:
        raise KeyError(from_node)
    return pool.move(from_node, to_node)


def pool_release(HistogramPool pool, Py_ssize_t node):
    _pool_node(pool, node)
    pool.drop(node)


def pool_pin(HistogramPool pool, Py_ssize_t slot, bint pinned=True):
    _pool_slot(pool, slot)
    pool.set_pinned(slot, pinned)


def pool_mapping(HistogramPool pool) -> dict:
    """{node: slot} of the mapped nodes (LRU mode)."""
    return {int(n): int(s) for n, s in enumerate(pool.node_slot_) if s >= 0}


def pool_histogram(HistogramPool pool, Py_ssize_t slot):
    """The view of one slot: (total_bins, 2) float64, or (total_bins,) packed int64."""
    _pool_slot(pool, slot)
    return pool.data[slot]


# -- row sampling ----------------------------------------------------------------------------

def sample_rows(RowSampler sampler, uint64_t round_, float[:, :, ::1] gh):  # gh: IN and OUT (GOSS re-weights it)
    """(sampled rows, other rows) of round `round_` for the (n_outputs, n_rows, 2)
    gradients gh, None in a warm-up round: what training draws."""
    if gh.shape[0] != sampler.n_outputs or gh.shape[1] != sampler.n_rows or gh.shape[2] != 2:
        raise ValueError(f"gh must have shape ({sampler.n_outputs}, {sampler.n_rows}, 2)")
    out = np.empty(sampler.n_rows + 1, dtype=np.uint32)
    cdef row_t[::1] out_v = out
    cdef Py_ssize_t m
    with nogil:
        m = sampler.sample(round_, &gh[0, 0, 0] if sampler.n_rows else NULL, &out_v[0])
    return None if m < 0 else (out[:m].astype(np.int64), out[m:sampler.n_rows].astype(np.int64))


# -- the growth loop's checked steps that only tests take one by one --------------------------

def split(RowPartitioner part, Py_ssize_t node, Py_ssize_t feature, Py_ssize_t threshold_bin, bint default_left,
          Py_ssize_t left, Py_ssize_t right):
    """Split one node: rows whose bin is in 1..threshold_bin (or missing, when
    default_left) go to `left`. Returns the number of rows sent left."""
    _check_split(part, node, left, right, feature)
    with nogil:
        part.split_node(node, feature, threshold_bin, default_left, left, right, NULL)
    return part.node_count(left)


def subtract_slots(HistogramBuilder builder, parents, children, outs):
    """pool[outs[i]] = pool[parents[i]] - pool[children[i]] (outs[i] may be parents[i])."""
    cdef const int64_t[::1] p = int64s(parents, "parents")
    cdef const int64_t[::1] c = int64s(children, "children")
    cdef const int64_t[::1] o = int64s(outs, "outs")
    cdef Py_ssize_t i, n = p.shape[0]
    if c.shape[0] != n or o.shape[0] != n:
        raise ValueError("parents, children and outs must have the same length")
    for i in range(n):
        if not (0 <= p[i] < builder.n_slots and 0 <= c[i] < builder.n_slots and 0 <= o[i] < builder.n_slots):
            raise ValueError("slot out of range")
        if isinstance(builder, QuantizedHistogramBuilder) and \
                (<QuantizedHistogramBuilder> builder).slot_rows[c[i]] > (<QuantizedHistogramBuilder> builder).slot_rows[p[i]]:
            raise ValueError(f"slot {c[i]} holds more rows than its parent slot {p[i]}")
    if n > 0:
        with nogil:
            builder.subtract(&p[0], &c[0], &o[0], n)


def slot_sums(QuantizedHistogramBuilder builder, Py_ssize_t slot):
    """(grad, hess) int64 sums per bin of a quantized builder's slot, whatever its width."""
    if not 0 <= slot < builder.n_slots:
        raise ValueError(f"slot must be in [0, {builder.n_slots}), got {slot}")
    words = np.asarray(builder.pool[slot]).view(_WORDS[builder.slot_bits[slot]])
    return unpack(words[:builder.view.total_bins])


# -- the split finder ---------------------------------------------------------------------

def find_best_splits(SplitFinder finder, slots, sum_grads, sum_hess, counts, bint category_bins=False):
    """Best split of each node (slot, G, H, rows) of a batch, or None where no split is
    valid: a list of (gain, feature, bin, default_left, has_missing, left_g, left_h), and
    with `category_bins` an eighth entry: a categorical split's bins going left (a copy of
    its uint32 bitset, bit b: bin b; its bin is then the count of categories going left),
    None for a numeric split."""
    cdef const int64_t[::1] slot_v = int64s(slots, "slots", finder.max_batch)
    cdef Py_ssize_t i, n_nodes = slot_v.shape[0]
    columns = [np.asarray(values, dtype=np.float64).ravel() for values in (sum_grads, sum_hess, counts)]
    if any(c.shape[0] != n_nodes for c in columns):
        raise ValueError("one sum_grad, sum_hess and count per slot")
    sums = np.ascontiguousarray(np.stack(columns)) if n_nodes else np.zeros((3, 1))
    cdef const double[:, ::1] sums_v = sums
    for i in range(n_nodes):
        if not 0 <= slot_v[i] < finder.n_slots:
            raise ValueError(f"slot {slot_v[i]} out of range")
    if n_nodes == 0:
        return []
    cdef Candidate* out = <Candidate*> malloc(n_nodes * sizeof(Candidate))
    if out == NULL:
        raise MemoryError()
    try:
        with nogil:
            finder.find_best(&slot_v[0], &sums_v[0, 0], &sums_v[1, 0], &sums_v[2, 0], n_nodes, out, NULL)
        found = [None if out[i].feature < 0 else
                 (out[i].gain, out[i].feature, out[i].bin, bool(out[i].default_left),
                  bool(out[i].has_missing), out[i].left_g, out[i].left_h) for i in range(n_nodes)]
        if category_bins:  # the bitsets live in the finder's scratch until its next search: copied
            found = [None if best is None else best + (_bitset_copy(out[i].cat_bits,
                                                                    (finder.n_bins[out[i].feature] + 31) // 32),)
                     for i, best in enumerate(found)]
        return found
    finally:
        free(out)


def noise_sd(double random_strength, gh, uint64_t round_, double learning_rate):
    """score_noise_sd (_noise.pxd) of (n_rows, 2) float32 gradients."""
    cdef const float[:, ::1] g = np.ascontiguousarray(gh, dtype=np.float32)
    if g.shape[1] != 2:
        raise ValueError("gh must be (n_rows, 2)")
    return score_noise_sd(random_strength, &g[0, 0] if g.shape[0] else NULL, g.shape[0], round_, learning_rate)


def split_noise(uint64_t seed, uint64_t tree_index, int64_t node, int32_t feature, counters):
    """random_strength's standard normal draws of one (tree, node, feature) at the given
    candidate counters (2 * bin + default_left for a numeric split; see _noise.pxd)."""
    cdef const uint64_t[::1] c = np.ascontiguousarray(counters, dtype=np.uint64)
    out = np.empty(c.shape[0])
    cdef double[::1] o = out
    cdef uint64_t key = noise_node_key(noise_tree_key(seed, tree_index), node)
    cdef Py_ssize_t i
    for i in range(c.shape[0]):
        o[i] = score_noise(key, feature, c[i])
    return out


cdef object _bitset_copy(const uint32_t* bits, Py_ssize_t words):
    """The `words` words at bits as a uint32 array, None for NULL (a numeric split)."""
    if bits == NULL:
        return None
    return np.asarray(<uint32_t[:words]> <uint32_t*> bits).copy()


def column_totals(SplitFinder finder, Py_ssize_t slot, Py_ssize_t start, Py_ssize_t stop):
    """(G, H) summed over bins [start, stop) of a slot: a node's totals, from any one of
    its columns."""
    if not (0 <= slot < finder.n_slots and 0 <= start <= stop <= finder.total_bins):
        raise ValueError("slot or bin range out of range")
    cdef double g, h
    finder.totals(slot, start, stop, &g, &h)
    return g, h


# -- the leaf values --------------------------------------------------------------------------

def leaf_weight(g, h, double l1, double l2):
    """Newton step with L1 soft-thresholding, -T(G) / (H + l2), element by element in the
    broadcast shape of g and h (a float for scalars); 0 where H + l2 <= 0."""
    g_b, h_b = np.broadcast_arrays(np.asarray(g, dtype=np.float64), np.asarray(h, dtype=np.float64))
    cdef const double[::1] g_v = np.ascontiguousarray(g_b).ravel()
    cdef const double[::1] h_v = np.ascontiguousarray(h_b).ravel()
    out = np.empty(g_v.shape[0])
    cdef double[::1] o = out
    cdef Py_ssize_t i
    for i in range(o.shape[0]):
        o[i] = gain_leaf_weight(g_v[i], h_v[i], l1, l2)
    return out.reshape(g_b.shape) if g_b.shape else float(out[0])
