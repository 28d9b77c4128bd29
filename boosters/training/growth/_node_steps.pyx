"""Checked Python-level steps of the growth loop, for drivers that run it outside Cython.

GrowthLoop (_grow.pyx) calls the row partitioner, the histogram builder and the split
finder at C level, without checks, inside one nogil block. A driver that runs the loop
step by step from Python (boosters.dask: each worker splits its partition's rows and
builds its histograms, the driver finds the splits) makes the same calls through the
functions here, which check every index before a kernel sees it.
(boosters._testing.kernels re-exports them, for the tests and benchmarks.)
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

from boosters._lib.types cimport row_t
from boosters.training.histograms._build cimport HistogramBuilder, QuantizedHistogramBuilder
from boosters.training.partition._partition cimport RowPartitioner, SPLIT
from boosters.training.split._constraints cimport NodeConstraints
from boosters.training.split._gain cimport leaf_weight as gain_leaf_weight
from boosters.training.split._split cimport Candidate, SplitFinder

_WORDS = {32: np.int64, 16: np.int32, 8: np.int16}  # bits per sum -> packed word


def int64s(values, name, Py_ssize_t at_most=-1):
    """`values` as a contiguous 1-D int64 array (of at most `at_most` entries)."""
    array = np.ascontiguousarray(values, dtype=np.int64)
    if array.ndim != 1 or (at_most >= 0 and array.shape[0] > at_most):
        raise ValueError(f"{name} must be a 1-D list of at most {at_most} integers")
    return array


# -- the row partitioner ------------------------------------------------------------------

def _check_node(RowPartitioner part, Py_ssize_t node):
    if not 0 <= node < part.max_nodes:
        raise ValueError(f"node {node} out of range [0, {part.max_nodes})")


def _check_split(RowPartitioner part, Py_ssize_t node, Py_ssize_t left, Py_ssize_t right, Py_ssize_t feature):
    if not (0 <= node < part.max_nodes and 0 <= left < part.max_nodes and 0 <= right < part.max_nodes):
        raise ValueError(f"node ids must be in [0, {part.max_nodes})")
    part._check_not_split(node)
    if left == right or left == node or right == node:
        raise ValueError("parent, left and right must be three different nodes")
    if not 0 <= feature < part._feature_column.shape[0]:
        raise ValueError(f"feature {feature} out of range")


def node_count(RowPartitioner part, Py_ssize_t node):
    _check_node(part, node)
    return part.node_count(node)


def node_rows(RowPartitioner part, Py_ssize_t node):
    """A copy of the node's row indices, in order."""
    cdef Py_ssize_t i
    _check_node(part, node)
    part._check_not_split(node)
    cdef Py_ssize_t begin = part.node_begin(node), n = part.node_count(node)
    cdef const row_t* rows = part.node_rows(node)
    out = np.empty(n, dtype=np.uint32)
    cdef uint32_t[::1] out_v = out
    for i in range(n):
        out_v[i] = begin + i if rows == NULL else rows[i]
    return out


def split(RowPartitioner part, Py_ssize_t node, Py_ssize_t feature, Py_ssize_t threshold_bin, bint default_left,
          Py_ssize_t left, Py_ssize_t right):
    """Split one node: rows whose bin is in 1..threshold_bin (or missing, when
    default_left) go to `left`. Returns the number of rows sent left."""
    _check_split(part, node, left, right, feature)
    with nogil:
        part.split_node(node, feature, threshold_bin, default_left, left, right, NULL)
    return part.node_count(left)


def split_many(RowPartitioner part, nodes, features, threshold_bins, default_lefts, lefts, rights,
               categorical=None, category_bins=None):
    """Split a whole level, node by node; returns the left counts (int64 array).
    Categorical splits: `categorical` (one flag per node) marks them and row i of
    `category_bins` (n_nodes, words) is node i's bitset of the bins going left (bit b:
    bin b, missing bin 0 included; the finder's cat_bits), read instead of its threshold."""
    cdef const int64_t[:, ::1] b
    cdef const uint8_t[::1] is_cat
    cdef const uint32_t[:, ::1] cat_bins
    columns = [int64s(values, "split arguments") for values in
               (nodes, features, threshold_bins, default_lefts, lefts, rights)]
    cdef Py_ssize_t i, n = columns[0].shape[0]
    if any(c.shape[0] != n for c in columns):
        raise ValueError("one feature, threshold, default direction, left and right per node")
    b = np.stack(columns) if n else np.zeros((6, 0), dtype=np.int64)
    for i in range(n):
        _check_split(part, b[0, i], b[4, i], b[5, i], b[1, i])
    if len(set(columns[0].tolist())) != n:
        raise ValueError("each node can be split once")
    if (categorical is None) != (category_bins is None):
        raise ValueError("categorical and category_bins go together")
    flags = np.zeros(n, dtype=np.uint8) if categorical is None else np.ascontiguousarray(categorical, dtype=np.uint8)
    words = np.zeros((n, 1), dtype=np.uint32) if category_bins is None else np.ascontiguousarray(category_bins,
                                                                                                dtype=np.uint32)
    if flags.shape != (n,) or words.ndim != 2 or words.shape[0] != n:
        raise ValueError("one categorical flag and one row of category_bins per node")
    for i in range(n):
        if flags[i] and (part._decode_start[b[1, i]] >= 0 or 32 * words.shape[1] < part._n_bins[b[1, i]]):
            raise ValueError(f"categorical split of feature {b[1, i]}: the feature must not be bundled and its "
                             f"bitset must cover its {part._n_bins[b[1, i]]} bins")
    is_cat, cat_bins = flags, words
    with nogil:
        for i in range(n):
            part.split_node(b[0, i], b[1, i], b[2, i], b[3, i] != 0, b[4, i], b[5, i],
                            &cat_bins[i, 0] if is_cat[i] else NULL)
    counts = np.empty(n, dtype=np.int64)
    for i in range(n):
        counts[i] = part.node_count(b[4, i])
    return counts


def node_sums(RowPartitioner part, nodes, const float[:, ::1] gh):
    """(len(nodes), 2) float64: the (grad, hess) sums of each node's rows, added in row
    order as GrowthLoop's renewed leaves (gh: (n_rows, 2) float32, by row)."""
    cdef const int64_t[::1] node_v = int64s(nodes, "nodes")
    cdef Py_ssize_t i, n = node_v.shape[0]
    if gh.shape[0] != part.n_rows or gh.shape[1] != 2:
        raise ValueError(f"gh must have shape ({part.n_rows}, 2), got {tuple(gh.shape)}")
    for i in range(n):
        _check_node(part, node_v[i])
        part._check_not_split(node_v[i])
    sums = np.zeros((n, 2))
    cdef double[:, ::1] sums_v = sums
    if n > 0 and part.n_rows > 0:
        with nogil:
            part.sum_gradients(&node_v[0], n, &gh[0, 0], &sums_v[0, 0])
    return sums


# -- the histogram builder ----------------------------------------------------------------

def build_nodes(HistogramBuilder builder, slots, RowPartitioner part, nodes):
    """Build the histogram of nodes[i] into pool slot slots[i], for every i. The nodes'
    row ranges must be disjoint (a tree level's nodes are)."""
    cdef const int64_t[::1] node_v = int64s(nodes, "nodes")
    cdef const int64_t[::1] slot_v = int64s(slots, "slots")
    cdef Py_ssize_t i, k, n = node_v.shape[0]
    if not builder.ready():
        raise RuntimeError("gradients must be set first")
    if slot_v.shape[0] != n:
        raise ValueError("one slot per node")
    for i in range(n):
        if not 0 <= slot_v[i] < builder.n_slots or not 0 <= node_v[i] < part.max_nodes:
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
            builder.build(part, &slot_v[0], &node_v[0], n)


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


def unpack(packed):
    """(grad, hess) int64 arrays of packed words: int16/int32 per row, or int16/int32/int64
    sums (8, 16 or 32 bits per value)."""
    packed = np.asarray(packed)
    shift = {np.dtype(np.int16): 8, np.dtype(np.int32): 16, np.dtype(np.int64): 32}[packed.dtype]
    v = packed.astype(np.int64)
    hess = v & ((1 << shift) - 1)
    return (v - hess) >> shift, hess


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
            finder.find_best(&slot_v[0], &sums_v[0, 0], &sums_v[1, 0], &sums_v[2, 0], n_nodes, out)
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


# -- the node constraints (column sampling) -----------------------------------------------------

def constraints_start_tree(NodeConstraints constraints, uint64_t tree_index):
    """A new tree (`tree_index` of the training: it seeds the column draws), as
    GrowthLoop.grow_tree starts one."""
    constraints.start_tree(tree_index)


def constraints_split(NodeConstraints constraints, Py_ssize_t node, Py_ssize_t left, Py_ssize_t right,
                      int32_t feature, double left_g, double left_h, double right_g, double right_h):
    """`node` was split on `feature` into `left` and `right` with these sums (as
    GrowthLoop records a split)."""
    cdef Py_ssize_t n_nodes = constraints.parent.shape[0]
    if not (0 <= node < n_nodes and 0 <= left < n_nodes and 0 <= right < n_nodes):
        raise ValueError(f"node ids must be in [0, {n_nodes})")
    if not 0 <= feature < constraints.position.shape[0]:
        raise ValueError(f"feature {feature} out of range")
    constraints.split(node, left, right, feature, left_g, left_h, right_g, right_h)


def constraints_clamp(NodeConstraints constraints, nodes, weights):
    """The `weights` of `nodes` (float64 copies) within their monotone bounds, as
    BoostingRounds clamps a finished tree's node weights."""
    cdef const int64_t[::1] node_v = int64s(nodes, "nodes", constraints.parent.shape[0])
    out = np.array(weights, dtype=np.float64)
    if out.ndim != 1 or out.shape[0] != node_v.shape[0]:
        raise ValueError("weights must be a 1-D array with one weight per node")
    cdef double[::1] out_v = out
    cdef Py_ssize_t i
    for i in range(node_v.shape[0]):
        if not 0 <= node_v[i] < constraints.parent.shape[0]:
            raise ValueError(f"node {node_v[i]} out of range")
        out_v[i] = constraints.clamp_weight(node_v[i], out_v[i])
    return out


def constraints_prepare(NodeConstraints constraints, nodes, depth):
    """Row i of the constraints' `allowed` and `bounds` (what the split finder reads)
    for nodes[i], as GrowthLoop prepares a split search; `depth`: int32 per node id."""
    cdef const int64_t[::1] node_v = int64s(nodes, "nodes", constraints.parent.shape[0])
    cdef const int32_t[::1] depth_v = np.ascontiguousarray(depth, dtype=np.int32)
    cdef Py_ssize_t i
    batch = constraints.allowed if constraints.allowed is not None else constraints.bounds
    if batch is not None and node_v.shape[0] > batch.shape[0]:
        raise ValueError(f"at most {batch.shape[0]} nodes per split search")
    for i in range(node_v.shape[0]):
        if not 0 <= node_v[i] < min(depth_v.shape[0], constraints.parent.shape[0]):
            raise ValueError(f"node {node_v[i]} out of range (or without a depth)")
    if node_v.shape[0] > 0:
        constraints.prepare(&node_v[0], node_v.shape[0], &depth_v[0])


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
