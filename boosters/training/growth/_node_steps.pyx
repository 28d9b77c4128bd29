"""Checked Python-level steps of the growth loop on a machine's rows.

GrowthLoop (_grow.pyx) calls the row partitioner and the histogram builder at C level,
without checks, inside one nogil block. boosters.dask's partitions make the same calls
from Python at each step the driver's loop exchanges (split the step's nodes, build the
histograms asked for, sum the leaves' gradients) through the functions here, which check
every index before a kernel sees it. (boosters._testing.kernels re-exports them, with
the checked steps only tests need.)
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint32_t

from boosters._lib.types cimport row_t
from boosters.training.histograms._build cimport HistogramBuilder
from boosters.training.partition._partition cimport RowPartitioner, SPLIT


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


def unpack(packed):
    """(grad, hess) int64 arrays of packed words: int16/int32 per row, or int16/int32/int64
    sums (8, 16 or 32 bits per value)."""
    packed = np.asarray(packed)
    shift = {np.dtype(np.int16): 8, np.dtype(np.int32): 16, np.dtype(np.int64): 32}[packed.dtype]
    v = packed.astype(np.int64)
    hess = v & ((1 << shift) - 1)
    return (v - hess) >> shift, hess
