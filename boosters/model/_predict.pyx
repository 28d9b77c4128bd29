"""Forest traversal on raw feature values (thresholds are values, so no binning).

A row goes left when x <= threshold, right when x > threshold, and follows the
split's default direction when x is NaN. A categorical split (category_set >= 0) sends
x left when x is a code in its set (a bitset over codes); NaN, negative, non-integer
codes and codes past the set's words follow the default direction. Rows are processed
in blocks, every tree over the whole block, so a tree's nodes stay in cache; each
row's sum is taken in tree order, so results do not depend on the thread count.

Two traversals share that rule and their output step (`record`: add the leaf's value to
the row's margin, or store the leaf's index):

- `PackedForest` (numeric splits, dense rows; the common case): each node packed in one
  16-byte struct, leaves turned into nodes that lead to themselves, so a tree is walked
  a fixed number of steps (its depth) without a branch, LANES rows at a time: their
  walks are independent, so the CPU overlaps their loads. float32 rows compare with
  float32 thresholds (exact, see `float32_thresholds`).
- the general walk over the forest's own arrays (categorical splits, CSR rows).
"""

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

import numpy as np

from boosters._lib.search cimport lower_bound
from boosters._lib.types cimport value_t
from boosters.model._decision cimport ForestArrays, TreeArrays, goes_left, goes_left_numeric, tree_of

cdef enum:
    ROW_BLOCK = 64   # rows walked through every tree before the next rows
    LANES = 8        # rows walked through one tree side by side

# What a traversal writes per (row, tree): the leaf's value added to the row's output
# column (margins, float64) or the leaf's node index within its tree (int32).
ctypedef fused out_t:
    double
    int32_t


cdef inline void record(out_t* out_row, const double* value, int32_t group, Py_ssize_t t, Py_ssize_t base,
                        Py_ssize_t leaf) noexcept nogil:  # out_row: IN and OUT; value: IN
    if out_t is double:
        out_row[group] += value[base + leaf]
    else:
        out_row[t] = <int32_t> leaf


# -- the packed forest ---------------------------------------------------------------------------

cdef struct PackedNode:
    int32_t feature   # the split's feature; 0 at a leaf (read, never decisive)
    int32_t left      # x <= threshold: node index within the tree; a leaf: itself
    int32_t right     # x > threshold; a leaf: itself
    int32_t missing   # NaN: left or right (the default direction); a leaf: itself


cdef struct Packed:
    const PackedNode* nodes      # every tree's nodes, concatenated (tree t from tree_offsets[t])
    const float* threshold32     # per node: the largest float32 <= its threshold
    const double* threshold64    # per node: its threshold
    const double* value          # per node: its value (a leaf's output)
    const int64_t* tree_offsets
    const int32_t* tree_group
    const int32_t* tree_depth    # steps from the root to the tree's deepest leaf


def float32_thresholds(const double[::1] threshold):
    """Per threshold t, the largest float32 <= t: for every float32 x, x <= t exactly when
    x <= that float32 (no float32 lies between them), so float32 rows compare in float32."""
    t32 = np.asarray(threshold).astype(np.float32)  # nearest; +-inf past the float32 range
    above = t32.astype(np.float64) > np.asarray(threshold)
    t32[above] = np.nextafter(t32[above], np.float32(-np.inf))
    return t32


cdef class PackedForest:
    """A forest without categorical splits, packed for `predict`: built once from checked
    flat arrays (`model/tree.py` keeps it with them) and read-only after, so any number of
    threads may predict with it at once."""

    cdef Packed c
    cdef readonly Py_ssize_t n_trees
    cdef readonly object arrays   # the packed arrays (the kernel's pointers point into them)

    def __init__(self, const int32_t[::1] split_feature, const double[::1] threshold,
                 const uint8_t[::1] default_left, const int32_t[::1] left_child,
                 const int32_t[::1] right_child, const double[::1] value, const int64_t[::1] tree_offsets,
                 const int32_t[::1] tree_group):
        cdef Py_ssize_t n_nodes = split_feature.shape[0], n_trees = tree_group.shape[0]
        cdef Py_ssize_t t, i, base
        if n_nodes == 0 or tree_offsets.shape[0] != n_trees + 1 or tree_offsets[n_trees] != n_nodes:
            raise ValueError("a PackedForest needs nodes and n_trees + 1 tree offsets ending at the node count")
        if (threshold.shape[0] != n_nodes or default_left.shape[0] != n_nodes or left_child.shape[0] != n_nodes
                or right_child.shape[0] != n_nodes or value.shape[0] != n_nodes):
            raise ValueError("the node arrays must have the same length")
        nodes = np.empty((n_nodes, 4), dtype=np.int32)
        depth = np.zeros(n_nodes, dtype=np.int32)
        tree_depth = np.zeros(max(n_trees, 1), dtype=np.int32)
        cdef int32_t[:, ::1] packed = nodes
        cdef int32_t[::1] node_depth = depth, deepest = tree_depth
        for t in range(n_trees):
            base = tree_offsets[t]
            for i in range(tree_offsets[t + 1] - base):  # children come after their parent
                if split_feature[base + i] < 0:
                    packed[base + i, 0] = 0
                    packed[base + i, 1] = packed[base + i, 2] = packed[base + i, 3] = <int32_t> i
                    continue
                packed[base + i, 0] = split_feature[base + i]
                packed[base + i, 1] = left_child[base + i]
                packed[base + i, 2] = right_child[base + i]
                packed[base + i, 3] = left_child[base + i] if default_left[base + i] else right_child[base + i]
                node_depth[base + left_child[base + i]] = node_depth[base + right_child[base + i]] = node_depth[base + i] + 1
                deepest[t] = max(deepest[t], node_depth[base + i] + 1)
        threshold32 = float32_thresholds(threshold)
        cdef const float[::1] thr32 = threshold32
        self.arrays = (nodes, threshold32, np.asarray(threshold), np.asarray(value), np.asarray(tree_offsets),
                       np.asarray(tree_group), tree_depth)
        self.n_trees = n_trees
        self.c.nodes = <const PackedNode*> &packed[0, 0]
        self.c.threshold32 = &thr32[0]
        self.c.threshold64 = &threshold[0]
        self.c.value = &value[0]
        self.c.tree_offsets = &tree_offsets[0]
        self.c.tree_group = &tree_group[0] if n_trees else NULL
        self.c.tree_depth = &deepest[0]

    def predict(self, const value_t[:, ::1] X, out_t[:, ::1] out, Py_ssize_t n_trees, int n_threads):
        """Walk the rows of X (IN: C-contiguous, at least as many columns as the trees read)
        through the first `n_trees` trees into `out` (IN and OUT): float64 (n_rows,
        n_groups) margins, each tree's leaf value added to its group's column; or int32
        (n_rows, n_trees) leaves, each row's leaf (node index within the tree) per tree."""
        cdef Py_ssize_t n_rows = X.shape[0], n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK, block
        if out.shape[0] != n_rows:
            raise ValueError("out must have one row per row of X")
        if not 0 <= n_trees <= self.n_trees:
            raise ValueError(f"n_trees must be in [0, {self.n_trees}], got {n_trees}")
        if out_t is int32_t and out.shape[1] != n_trees:
            raise ValueError("out must have one column per tree")
        if n_rows == 0 or n_trees == 0:
            return
        cdef const value_t* rows = &X[0, 0]
        cdef out_t* out_rows = &out[0, 0]
        cdef Py_ssize_t row_stride = X.shape[1], out_stride = out.shape[1]
        with nogil:
            if n_threads <= 1 or n_blocks == 1:  # no thread team for one thread or one block
                for block in range(n_blocks):
                    packed_block(&self.c, rows, row_stride, block, n_rows, n_trees, out_rows, out_stride)
            else:
                for block in prange(n_blocks, schedule="static", num_threads=n_threads):
                    packed_block(&self.c, rows, row_stride, block, n_rows, n_trees, out_rows, out_stride)


cdef inline void walk_lanes(const PackedNode* nodes, const value_t* threshold, int32_t depth,
                            const value_t* rows, Py_ssize_t row_stride, int n_lanes,
                            int32_t* leaf) noexcept nogil:  # rows: IN; leaf: OUT
    """The leaves `n_lanes` consecutive rows reach in one tree: `depth` steps each, side by
    side (a row already at its leaf stays there)."""
    cdef int32_t step, i
    cdef int k
    cdef value_t x
    for k in range(n_lanes):
        leaf[k] = 0
    for step in range(depth):
        for k in range(n_lanes):
            i = leaf[k]
            x = rows[k * row_stride + nodes[i].feature]
            leaf[k] = nodes[i].left if x <= threshold[i] else nodes[i].right
            if x != x:
                leaf[k] = nodes[i].missing


cdef void packed_block(const Packed* f, const value_t* rows, Py_ssize_t row_stride, Py_ssize_t block,
                       Py_ssize_t n_rows, Py_ssize_t n_trees, out_t* out,
                       Py_ssize_t out_stride) noexcept nogil:  # rows: IN; out: IN and OUT
    """Row block `block` (ROW_BLOCK rows from block * ROW_BLOCK) through the first n_trees
    trees, LANES rows at a time, then the rest of the block's rows together."""
    cdef Py_ssize_t r0 = block * ROW_BLOCK, r1 = min(r0 + ROW_BLOCK, n_rows), r, t, base
    cdef const value_t* threshold
    cdef int32_t leaf[LANES]
    cdef int k, n
    for t in range(n_trees):
        base = f.tree_offsets[t]
        if value_t is float:
            threshold = f.threshold32 + base
        else:
            threshold = f.threshold64 + base
        r = r0
        while r < r1:
            if r + LANES <= r1:  # a constant lane count: the compiler unrolls the lanes
                n = LANES
                walk_lanes(f.nodes + base, threshold, f.tree_depth[t], rows + r * row_stride, row_stride, LANES, leaf)
            else:
                n = <int> (r1 - r)
                walk_lanes(f.nodes + base, threshold, f.tree_depth[t], rows + r * row_stride, row_stride, n, leaf)
            for k in range(n):
                record(out + (r + k) * out_stride, f.value, f.tree_group[t], t, base, leaf[k])
            r += n


# -- the general walk: categorical splits, CSR rows ----------------------------------------------

cdef ForestArrays forest_arrays(
    const int32_t[::1] split_feature, const double[::1] threshold, const uint8_t[::1] default_left,
    const int32_t[::1] left_child, const int32_t[::1] right_child, const int64_t[::1] tree_offsets,
    Py_ssize_t n_trees, const int32_t[::1] category_set, const int64_t[::1] tree_sets,
    const int64_t[::1] cat_boundaries, const uint32_t[::1] cat_bitsets,
) except *:
    """The arrays' pointers, after the size checks the kernels rely on (the values were
    checked by model/validation.py). No value, cover or tree_group: the callers pass those."""
    cdef ForestArrays a
    cdef Py_ssize_t n_nodes = split_feature.shape[0]
    if tree_offsets.shape[0] != n_trees + 1:
        raise ValueError("tree_offsets must have n_trees + 1 entries")
    if (threshold.shape[0] != n_nodes or default_left.shape[0] != n_nodes or left_child.shape[0] != n_nodes
            or right_child.shape[0] != n_nodes):
        raise ValueError("the node arrays must have the same length")
    a.n_trees = n_trees
    a.tree_offsets = &tree_offsets[0]
    a.tree_group = a.tree_sets = NULL
    a.nodes.split_feature = &split_feature[0] if n_nodes else NULL
    a.nodes.threshold = &threshold[0] if n_nodes else NULL
    a.nodes.default_left = &default_left[0] if n_nodes else NULL
    a.nodes.left_child = &left_child[0] if n_nodes else NULL
    a.nodes.right_child = &right_child[0] if n_nodes else NULL
    a.nodes.value = a.nodes.cover = NULL
    a.nodes.category_set = a.nodes.set_boundaries = NULL
    a.nodes.cat_bitsets = NULL
    if category_set is not None:
        if category_set.shape[0] != n_nodes or tree_sets.shape[0] < n_trees or cat_boundaries.shape[0] < 1:
            raise ValueError("category arrays do not match the forest")
        a.nodes.category_set = &category_set[0] if n_nodes else NULL
        a.tree_sets = &tree_sets[0] if tree_sets.shape[0] else NULL
        a.nodes.set_boundaries = &cat_boundaries[0]
        a.nodes.cat_bitsets = &cat_bitsets[0] if cat_bitsets.shape[0] else NULL
    return a


cdef inline Py_ssize_t dense_leaf(const TreeArrays* tree, const value_t[:, :] X, Py_ssize_t r) noexcept nogil:  # X: IN
    """The leaf (node index within the tree) that row r of X reaches."""
    cdef Py_ssize_t node = 0
    cdef int32_t f = tree.split_feature[0]
    while f >= 0:
        node = tree.left_child[node] if goes_left(tree, node, <double> X[r, f]) else tree.right_child[node]
        f = tree.split_feature[node]
    return node


cdef void dense_walk(const value_t[:, :] X, const ForestArrays* a, const double* value, out_t[:, ::1] out,
                     int n_threads) noexcept nogil:  # X: IN; out: IN and OUT
    """Every row of X through every tree, a block of rows at a time, into `out` (`record`;
    `value` and a.tree_group: NULL for leaves)."""
    cdef Py_ssize_t n_rows = X.shape[0], n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t block, r, t
    cdef TreeArrays tree
    for block in prange(n_blocks, schedule="static", num_threads=n_threads):
        for t in range(a.n_trees):
            tree = tree_of(a, t)
            for r in range(block * ROW_BLOCK, min(block * ROW_BLOCK + ROW_BLOCK, n_rows)):
                record(&out[r, 0], value, a.tree_group[t] if a.tree_group != NULL else 0, t, a.tree_offsets[t],
                       dense_leaf(&tree, X, r))


def predict_forest(
    const value_t[:, :] X,              # IN: (n_rows, n_features), any memory order
    const int32_t[::1] split_feature,   # IN: per node, -1 at leaves (all trees concatenated)
    const double[::1] threshold,        # IN
    const uint8_t[::1] default_left,    # IN
    const int32_t[::1] left_child,      # IN: node index within its tree
    const int32_t[::1] right_child,     # IN
    const double[::1] value,            # IN: leaf values
    const int64_t[::1] tree_offsets,    # IN: tree t owns nodes tree_offsets[t]:tree_offsets[t+1]
    const int32_t[::1] tree_group,      # IN: output column of each tree
    double[:, ::1] out,                 # IN and OUT: (n_rows, n_groups), margins added to it
    int n_threads,
    const int32_t[::1] category_set=None,   # IN: per node, its tree's set index or -1 (None: no categorical split)
    const int64_t[::1] tree_sets=None,      # IN: tree t's sets are tree_sets[t] + s in cat_boundaries
    const int64_t[::1] cat_boundaries=None, # IN: set k's words are cat_bitsets[cat_boundaries[k]:cat_boundaries[k+1]]
    const uint32_t[::1] cat_bitsets=None,   # IN
):
    """Each row's margins: every tree's leaf value added to out[row, its group]."""
    cdef Py_ssize_t n_trees = tree_group.shape[0]
    if out.shape[0] != X.shape[0]:
        raise ValueError("out must have one row per row of X")
    if value.shape[0] != split_feature.shape[0]:
        raise ValueError("value must have one entry per node")
    cdef ForestArrays a = forest_arrays(split_feature, threshold, default_left, left_child, right_child,
                                        tree_offsets, n_trees, category_set, tree_sets, cat_boundaries, cat_bitsets)
    if X.shape[0] == 0 or n_trees == 0:
        return
    a.tree_group = &tree_group[0]
    with nogil:
        dense_walk(X, &a, &value[0], out, n_threads)


def predict_leaves(
    const value_t[:, :] X,              # IN: (n_rows, n_features), any memory order
    const int32_t[::1] split_feature,   # IN: as predict_forest
    const double[::1] threshold,        # IN
    const uint8_t[::1] default_left,    # IN
    const int32_t[::1] left_child,      # IN
    const int32_t[::1] right_child,     # IN
    const int64_t[::1] tree_offsets,    # IN
    int32_t[:, ::1] out,                # OUT: (n_rows, n_trees), each row's leaf (node index within the tree)
    int n_threads,
    const int32_t[::1] category_set=None,   # IN: as predict_forest
    const int64_t[::1] tree_sets=None,      # IN
    const int64_t[::1] cat_boundaries=None, # IN
    const uint32_t[::1] cat_bitsets=None,   # IN
):
    """predict_forest's traversal, recording the leaf each row reaches in every tree."""
    cdef Py_ssize_t n_trees = out.shape[1]
    if out.shape[0] != X.shape[0]:
        raise ValueError("out must have one row per row of X")
    cdef ForestArrays a = forest_arrays(split_feature, threshold, default_left, left_child, right_child,
                                        tree_offsets, n_trees, category_set, tree_sets, cat_boundaries, cat_bitsets)
    if X.shape[0] == 0 or n_trees == 0:
        return
    with nogil:
        dense_walk(X, &a, NULL, out, n_threads)


ctypedef fused index_t:
    int32_t
    int64_t


cdef inline double csr_value(const value_t* data, const index_t* indices, index_t first, index_t stop,
                             index_t feature) noexcept nogil:  # data, indices: IN
    """A CSR row's value of `feature` (its indices first..stop-1 sorted): binary search, 0.0
    when the row stores none (an implicit zero)."""
    first = <index_t> lower_bound(indices, first, stop, feature)
    if first < stop and indices[first] == feature:
        return <double> data[first]
    return 0.0


cdef inline Py_ssize_t csr_leaf(const TreeArrays* tree, const value_t* data, const index_t* indices, index_t first,
                                index_t stop) noexcept nogil:  # data, indices: IN
    """dense_leaf for the CSR row whose entries are first..stop-1 (sparse input has no
    categorical splits: tree.py refuses it)."""
    cdef Py_ssize_t node = 0
    cdef int32_t f = tree.split_feature[0]
    while f >= 0:
        if goes_left_numeric(csr_value(data, indices, first, stop, <index_t> f), tree.threshold[node],
                             tree.default_left[node]):
            node = tree.left_child[node]
        else:
            node = tree.right_child[node]
        f = tree.split_feature[node]
    return node


cdef void csr_walk(const value_t[::1] data, const index_t[::1] indices, const index_t[::1] indptr,
                   const ForestArrays* a, const double* value, out_t[:, ::1] out,
                   int n_threads) noexcept nogil:  # data..indptr: IN; out: IN and OUT
    """dense_walk for the rows of a CSR matrix."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t block, r, t
    cdef TreeArrays tree
    for block in prange(n_blocks, schedule="static", num_threads=n_threads):
        for t in range(a.n_trees):
            tree = tree_of(a, t)
            for r in range(block * ROW_BLOCK, min(block * ROW_BLOCK + ROW_BLOCK, n_rows)):
                record(&out[r, 0], value, a.tree_group[t] if a.tree_group != NULL else 0, t, a.tree_offsets[t],
                       csr_leaf(&tree, &data[0], &indices[0], indptr[r], indptr[r + 1]))


cdef int check_csr(const value_t[::1] data, const index_t[::1] indices, Py_ssize_t n_rows,
                   Py_ssize_t out_rows) except -1:
    if out_rows != n_rows:
        raise ValueError("out must have one row per row of X")
    if indices.shape[0] == 0 or data.shape[0] != indices.shape[0]:
        raise ValueError("data and indices must have the same length, at least 1 (pad an empty matrix)")
    return 0


def predict_forest_csr(
    const value_t[::1] data,            # IN: CSR values (canonical: sorted indices, no duplicates)
    const index_t[::1] indices,         # IN: their features
    const index_t[::1] indptr,          # IN: (n_rows + 1) row starts into data / indices
    const int32_t[::1] split_feature,   # IN: as predict_forest
    const double[::1] threshold,        # IN
    const uint8_t[::1] default_left,    # IN
    const int32_t[::1] left_child,      # IN
    const int32_t[::1] right_child,     # IN
    const double[::1] value,            # IN
    const int64_t[::1] tree_offsets,    # IN
    const int32_t[::1] tree_group,      # IN
    double[:, ::1] out,                 # IN and OUT: (n_rows, n_groups), margins added to it
    int n_threads,
):
    """predict_forest on the rows of a CSR matrix, never densified: a split reads its
    feature's value by binary search in the row's entries (0.0 when absent)."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, n_trees = tree_group.shape[0]
    check_csr(data, indices, n_rows, out.shape[0])
    if value.shape[0] != split_feature.shape[0]:
        raise ValueError("value must have one entry per node")
    cdef ForestArrays a = forest_arrays(split_feature, threshold, default_left, left_child, right_child,
                                        tree_offsets, n_trees, None, None, None, None)
    if n_rows <= 0 or n_trees == 0:
        return
    a.tree_group = &tree_group[0]
    with nogil:
        csr_walk(data, indices, indptr, &a, &value[0], out, n_threads)


def predict_leaves_csr(
    const value_t[::1] data,            # IN: as predict_forest_csr
    const index_t[::1] indices,         # IN
    const index_t[::1] indptr,          # IN
    const int32_t[::1] split_feature,   # IN: as predict_forest
    const double[::1] threshold,        # IN
    const uint8_t[::1] default_left,    # IN
    const int32_t[::1] left_child,      # IN
    const int32_t[::1] right_child,     # IN
    const int64_t[::1] tree_offsets,    # IN
    int32_t[:, ::1] out,                # OUT: (n_rows, n_trees), as predict_leaves
    int n_threads,
):
    """predict_leaves on the rows of a CSR matrix (as predict_forest_csr reads them)."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, n_trees = out.shape[1]
    check_csr(data, indices, n_rows, out.shape[0])
    cdef ForestArrays a = forest_arrays(split_feature, threshold, default_left, left_child, right_child,
                                        tree_offsets, n_trees, None, None, None, None)
    if n_rows <= 0 or n_trees == 0:
        return
    with nogil:
        csr_walk(data, indices, indptr, &a, NULL, out, n_threads)
