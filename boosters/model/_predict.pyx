"""Forest traversal on raw feature values (thresholds are values, so no binning).

A row goes left when x <= threshold, right when x > threshold, and follows the
split's default direction when x is NaN. A categorical split (category_set >= 0) sends
x left when x, truncated toward zero (as LightGBM and XGBoost), is a code in its set
(a bitset over codes); NaN, negative codes (x <= -1) and codes past the set's words
follow the default direction. Rows are processed
in blocks, every tree over the whole block, so a tree's nodes stay in cache; each
row's sum is taken in tree order, so results do not depend on the thread count.

Two traversals share that rule and their output step (`record`: add the leaf's value to
the row's margin, or store the leaf's index):

- `PackedForest` (numeric splits, dense rows; the common case): each node packed in one
  16-byte struct (24 for float64 rows), a step computed without a branch, LANES rows
  walked through a tree side by side: their walks are independent, so the CPU overlaps
  their loads. float32 rows compare with float32 thresholds (exact, see
  `float32_thresholds`); NaN handling only where a block of rows holds a NaN.
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


cdef inline void record(out_t* out_row, int32_t group, Py_ssize_t t, const double* value, Py_ssize_t value_index,
                        Py_ssize_t leaf) noexcept nogil:  # out_row: IN and OUT; value: IN
    """Row's output for tree t (output group `group`) reaching `leaf` (node index within
    the tree), whose value is value[value_index]."""
    if out_t is double:
        out_row[group] += value[value_index]
    else:
        out_row[t] = <int32_t> leaf


# -- the packed forest ---------------------------------------------------------------------------
# A node is one small struct whose fields hold byte offsets, so a step is a handful of
# instructions: load the feature's offset, the row's value there, compare with the
# threshold, load the child's offset. A tree's splits sit at offsets >= 0 from its root
# (the root at 0) and its leaves before the root, at negative offsets: a walk is at a
# leaf when its offset is negative, and LANES walks are all at leaves when the AND of
# their offsets is. A leaf leads to itself, so a lane at its leaf stays there while the
# others go on.

cdef struct Node32:    # for float32 rows
    float threshold    # the largest float32 <= the split's threshold (exact, see float32_thresholds)
    int32_t feature    # byte offset of the split's feature in a row; 0 at a leaf (read, never decisive)
    int32_t child[2]   # x <= threshold: child[0], else child[1]: byte offsets from the tree's root;
                       # a leaf's are its own


cdef struct Node64:    # for float64 rows: the same, with the threshold itself
    double threshold
    int32_t feature
    int32_t child[2]


cdef struct Packed:
    const char* nodes32            # slots: every tree's leaves, then its splits (Node32)
    const char* nodes64            # the same slots as Node64
    const uint8_t* missing_right   # per slot: NaN goes to child[1] (1) or child[0] (0)
    const int64_t* tree_root       # per tree: the slot of its root (its first split; after its leaves)
    const int64_t* tree_first_leaf # per tree: its first leaf's entry in leaf_node
    const int32_t* leaf_node       # per leaf (j-th leaf of a tree: at offset -(j + 1) nodes), its node index
    const double* leaf_value       # ... and its value
    const int32_t* tree_group
    const int32_t* tree_depth      # steps from the root to the tree's deepest leaf (0: the root is a leaf)
    const int32_t* tree_min_depth  # ... and to its shallowest leaf


MAX_PACKED_FEATURES = 2 ** 28  # a feature's byte offset in a float64 row fits an int32


def float32_thresholds(const double[::1] threshold):
    """Per threshold t, the largest float32 <= t: for every float32 x, x <= t exactly when
    x <= that float32 (no float32 lies between them), so float32 rows compare in float32."""
    with np.errstate(over="ignore"):
        t32 = np.asarray(threshold).astype(np.float32)  # nearest; +-inf past the float32 range
    above = t32.astype(np.float64) > np.asarray(threshold)
    t32[above] = np.nextafter(t32[above], np.float32(-np.inf))
    return t32


cdef class PackedForest:
    """A forest without categorical splits, packed for `predict`: built once from checked
    flat arrays (`model/forest.py` keeps it with them) and read-only after, so any number of
    threads may predict with it at once."""

    cdef Packed c
    cdef readonly Py_ssize_t n_trees
    cdef readonly object arrays   # what the kernel's pointers point into

    def __init__(self, const int32_t[::1] split_feature, const double[::1] threshold,
                 const uint8_t[::1] default_left, const int32_t[::1] left_child,
                 const int32_t[::1] right_child, const double[::1] value, const int64_t[::1] tree_offsets,
                 const int32_t[::1] tree_group):
        cdef Py_ssize_t n_nodes = split_feature.shape[0], n_trees = tree_group.shape[0]
        cdef Py_ssize_t t, i, node, base, n_leaves, n_splits
        cdef int32_t d
        if n_nodes == 0 or n_trees == 0 or tree_offsets.shape[0] != n_trees + 1 or tree_offsets[n_trees] != n_nodes:
            raise ValueError("a PackedForest needs trees and n_trees + 1 tree offsets ending at the node count")
        if (threshold.shape[0] != n_nodes or default_left.shape[0] != n_nodes or left_child.shape[0] != n_nodes
                or right_child.shape[0] != n_nodes or value.shape[0] != n_nodes):
            raise ValueError("the node arrays must have the same length")
        if n_nodes * sizeof(Node64) >= 2 ** 31:
            raise ValueError("the forest is too large to pack (2 GB of nodes)")
        if np.max(split_feature) >= MAX_PACKED_FEATURES:
            raise ValueError(f"a PackedForest reads features below {MAX_PACKED_FEATURES} (int32 byte offsets)")
        thresholds32 = float32_thresholds(threshold)
        cdef const float[::1] t32 = thresholds32
        bytes32 = np.zeros(n_nodes * sizeof(Node32), dtype=np.uint8)
        bytes64 = np.zeros(n_nodes * sizeof(Node64), dtype=np.uint8)
        missing = np.zeros(n_nodes, dtype=np.uint8)
        slots = np.zeros(n_nodes, dtype=np.int64)          # per node: its offset from its root, in nodes
        depths = np.zeros(n_nodes, dtype=np.int32)
        leaves = np.zeros(n_nodes, dtype=np.int32)
        leaf_values = np.zeros(n_nodes, dtype=np.float64)
        roots = np.zeros(n_trees, dtype=np.int64)
        first_leaves = np.zeros(n_trees, dtype=np.int64)
        tree_depth = np.zeros(n_trees, dtype=np.int32)
        tree_min_depth = np.full(n_trees, 2 ** 31 - 1, dtype=np.int32)
        cdef uint8_t[::1] b32 = bytes32, b64 = bytes64, missing_right = missing
        cdef int64_t[::1] slot = slots, root = roots, first_leaf = first_leaves
        cdef int32_t[::1] depth = depths, leaf_node = leaves, deepest = tree_depth, shallowest = tree_min_depth
        cdef double[::1] leaf_value = leaf_values
        cdef Node32* n32
        cdef Node64* n64
        n_leaves = 0
        for t in range(n_trees):
            base = tree_offsets[t]
            first_leaf[t] = n_leaves
            n_splits = 0
            for i in range(tree_offsets[t + 1] - base):  # offsets: splits from 0 up, leaves from -1 down
                if split_feature[base + i] >= 0:
                    slot[base + i] = n_splits
                    n_splits += 1
                else:
                    leaf_node[n_leaves] = <int32_t> i
                    leaf_value[n_leaves] = value[base + i]
                    n_leaves += 1
                    slot[base + i] = first_leaf[t] - n_leaves
            root[t] = base + (n_leaves - first_leaf[t])
            for i in range(tree_offsets[t + 1] - base):  # children come after their parent
                node = base + i
                n32 = <Node32*> &b32[(root[t] + slot[node]) * sizeof(Node32)]
                n64 = <Node64*> &b64[(root[t] + slot[node]) * sizeof(Node64)]
                if split_feature[node] < 0:
                    shallowest[t] = min(shallowest[t], depth[node])
                    n32.child[0] = n32.child[1] = <int32_t> (slot[node] * sizeof(Node32))
                    n64.child[0] = n64.child[1] = <int32_t> (slot[node] * sizeof(Node64))
                    continue
                n32.threshold, n64.threshold = t32[node], threshold[node]
                n32.feature = <int32_t> (split_feature[node] * sizeof(float))
                n64.feature = <int32_t> (split_feature[node] * sizeof(double))
                n32.child[0] = <int32_t> (slot[base + left_child[node]] * sizeof(Node32))
                n32.child[1] = <int32_t> (slot[base + right_child[node]] * sizeof(Node32))
                n64.child[0] = <int32_t> (slot[base + left_child[node]] * sizeof(Node64))
                n64.child[1] = <int32_t> (slot[base + right_child[node]] * sizeof(Node64))
                missing_right[root[t] + slot[node]] = 0 if default_left[node] else 1
                d = depth[node] + 1
                depth[base + left_child[node]] = depth[base + right_child[node]] = d
                deepest[t] = max(deepest[t], d)
        self.arrays = (bytes32, bytes64, missing, roots, first_leaves, leaves, leaf_values,
                       np.asarray(tree_group), tree_depth, tree_min_depth)
        self.n_trees = n_trees
        self.c.nodes32 = <const char*> &b32[0]
        self.c.nodes64 = <const char*> &b64[0]
        self.c.missing_right = &missing_right[0]
        self.c.tree_root = &root[0]
        self.c.tree_first_leaf = &first_leaf[0]
        self.c.leaf_node = &leaf_node[0]
        self.c.leaf_value = &leaf_value[0]
        self.c.tree_group = &tree_group[0]
        self.c.tree_depth = &deepest[0]
        self.c.tree_min_depth = &shallowest[0]

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
        cdef Py_ssize_t n_columns = X.shape[1], out_stride = out.shape[1]
        with nogil:
            if n_threads <= 1 or n_blocks == 1:  # no thread team for one thread or one block
                for block in range(n_blocks):
                    packed_block(&self.c, rows, n_columns, block, n_rows, n_trees, out_rows, out_stride)
            else:
                for block in prange(n_blocks, schedule="static", num_threads=n_threads):
                    packed_block(&self.c, rows, n_columns, block, n_rows, n_trees, out_rows, out_stride)


cdef inline int32_t step(const char* root, const uint8_t* missing_right, const value_t* row, int32_t at,
                         bint has_nan) noexcept nogil:  # row: IN
    """The node (byte offset from the root) after the node at `at` for this row: arithmetic,
    no branch. x > t is false for NaN, so without NaN in the rows the default direction is
    never read (`has_nan`: a constant of the caller). missing_right: the root's entry."""
    cdef const Node32* n32
    cdef const Node64* n64
    cdef value_t x
    if value_t is float:
        n32 = <const Node32*> (root + at)
        x = (<const float*> ((<const char*> row) + n32.feature))[0]
        if has_nan:
            return n32.child[(x > n32.threshold) | ((x != x) & missing_right[at // <int32_t> sizeof(Node32)])]
        return n32.child[x > n32.threshold]
    else:
        n64 = <const Node64*> (root + at)
        x = (<const double*> ((<const char*> row) + n64.feature))[0]
        if has_nan:
            return n64.child[(x > n64.threshold) | ((x != x) & missing_right[at // <int32_t> sizeof(Node64)])]
        return n64.child[x > n64.threshold]


cdef inline void walk(const char** roots, const uint8_t** missing, const value_t** rows, int32_t* leaf,
                      int32_t min_depth, bint has_nan) noexcept nogil:  # leaf: IN and OUT
    """LANES walks side by side, walk k through the tree at roots[k] (its missing-right
    flags at missing[k]) for the row at rows[k], from leaf[k] (its start) to the leaf it
    reaches (a byte offset < 0): `min_depth` steps, then steps until every walk is at a
    leaf (an unbalanced tree's rows mostly stop far above its deepest leaf). The walks are
    independent, so the CPU overlaps their loads. Two uses: LANES rows through one tree (the
    arrays hold one root, inlined away), one row through LANES trees (a block's last rows)."""
    cdef int32_t s, all_leaves
    cdef int k
    for s in range(min_depth):
        for k in range(LANES):
            leaf[k] = step(roots[k], missing[k], rows[k], leaf[k], has_nan)
    while True:
        all_leaves = -1
        for k in range(LANES):
            all_leaves &= leaf[k]
        if all_leaves < 0:
            return
        for k in range(LANES):
            leaf[k] = step(roots[k], missing[k], rows[k], leaf[k], has_nan)


cdef inline void walk_lanes(const char* root, const uint8_t* missing_right, int32_t start, int32_t min_depth,
                            const value_t* rows, Py_ssize_t n_columns, int32_t* leaf,
                            bint has_nan) noexcept nogil:  # rows: IN; leaf: OUT
    """The leaves LANES consecutive rows reach in one tree (`walk`)."""
    cdef const char* roots[LANES]
    cdef const uint8_t* missing[LANES]
    cdef const value_t* lane_rows[LANES]
    cdef int k
    for k in range(LANES):
        roots[k], missing[k], lane_rows[k], leaf[k] = root, missing_right, rows + k * n_columns, start
    walk(roots, missing, lane_rows, leaf, min_depth, has_nan)


cdef inline int32_t tree_start(const Packed* f, Py_ssize_t t, int32_t node_size) noexcept nogil:
    """Where a walk of tree t starts: its root, or for a tree of one leaf that leaf (offset -node_size)."""
    return 0 if f.tree_depth[t] else -node_size


cdef inline void walk_trees(const Packed* f, const char* nodes, int32_t node_size, Py_ssize_t first_tree,
                            const value_t* row, int32_t* leaf, bint has_nan) noexcept nogil:  # row: IN; leaf: OUT
    """The leaves one row reaches in LANES consecutive trees from `first_tree` (`walk`)."""
    cdef const char* roots[LANES]
    cdef const uint8_t* missing[LANES]
    cdef const value_t* lane_rows[LANES]
    cdef int32_t min_depth = f.tree_min_depth[first_tree]
    cdef int k
    for k in range(LANES):
        roots[k] = nodes + f.tree_root[first_tree + k] * node_size
        missing[k] = f.missing_right + f.tree_root[first_tree + k]
        lane_rows[k] = row
        min_depth = min(min_depth, f.tree_min_depth[first_tree + k])
        leaf[k] = tree_start(f, first_tree + k, node_size)
    walk(roots, missing, lane_rows, leaf, min_depth, has_nan)


cdef inline int32_t walk_row(const char* root, const uint8_t* missing_right, int32_t start,
                             const value_t* row) noexcept nogil:  # row: IN
    """walk_lanes for a single row in a single tree."""
    cdef int32_t at = start
    while at >= 0:
        at = step(root, missing_right, row, at, True)
    return at


cdef inline bint any_nan(const value_t* values, Py_ssize_t n) noexcept nogil:  # values: IN
    cdef Py_ssize_t i
    cdef bint found = False
    for i in range(n):
        found |= values[i] != values[i]
    return found


cdef inline void record_leaf(const Packed* f, out_t* out_row, Py_ssize_t t, int32_t at,
                             int32_t node_size) noexcept nogil:  # out_row: IN and OUT
    """`record` the leaf at offset `at` (< 0) of tree t: the -at/node_size-th leaf."""
    cdef int64_t leaf = f.tree_first_leaf[t] + <uint32_t> (-at) // <uint32_t> node_size - 1  # unsigned: a shift
    record(out_row, f.tree_group[t], t, f.leaf_value, leaf, f.leaf_node[leaf])


cdef void packed_block(const Packed* f, const value_t* rows, Py_ssize_t n_columns, Py_ssize_t block,
                       Py_ssize_t n_rows, Py_ssize_t n_trees, out_t* out,
                       Py_ssize_t out_stride) noexcept nogil:  # rows: IN; out: IN and OUT
    """Row block `block` (ROW_BLOCK rows from block * ROW_BLOCK) through the first n_trees
    trees: tree by tree, LANES rows at a time; then the block's last rows (fewer than
    LANES) one by one, LANES trees at a time. Each row's outputs are recorded in tree order."""
    cdef Py_ssize_t r0 = block * ROW_BLOCK, r1 = min(r0 + ROW_BLOCK, n_rows), r, t
    cdef Py_ssize_t lanes_end = r0 + (r1 - r0) // LANES * LANES
    cdef const char* nodes
    cdef const char* root
    cdef const uint8_t* missing
    cdef int32_t leaf[LANES]
    cdef int32_t node_size, start
    cdef int k
    cdef bint has_nan = any_nan(rows + r0 * n_columns, (r1 - r0) * n_columns)
    if value_t is float:
        nodes, node_size = f.nodes32, sizeof(Node32)
    else:
        nodes, node_size = f.nodes64, sizeof(Node64)
    for t in range(n_trees):
        root = nodes + f.tree_root[t] * node_size
        missing = f.missing_right + f.tree_root[t]
        start = tree_start(f, t, node_size)
        r = r0
        while r < lanes_end:
            if has_nan:
                walk_lanes(root, missing, start, f.tree_min_depth[t], rows + r * n_columns, n_columns, leaf, True)
            else:
                walk_lanes(root, missing, start, f.tree_min_depth[t], rows + r * n_columns, n_columns, leaf, False)
            for k in range(LANES):
                record_leaf(f, out + (r + k) * out_stride, t, leaf[k], node_size)
            r += LANES
    for r in range(lanes_end, r1):
        t = 0
        while t + LANES <= n_trees:
            if has_nan:
                walk_trees(f, nodes, node_size, t, rows + r * n_columns, leaf, True)
            else:
                walk_trees(f, nodes, node_size, t, rows + r * n_columns, leaf, False)
            for k in range(LANES):
                record_leaf(f, out + r * out_stride, t + k, leaf[k], node_size)
            t += LANES
        while t < n_trees:
            start = tree_start(f, t, node_size)
            record_leaf(f, out + r * out_stride, t,
                        walk_row(nodes + f.tree_root[t] * node_size, f.missing_right + f.tree_root[t], start,
                                 rows + r * n_columns), node_size)
            t += 1


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
    cdef Py_ssize_t block, r, t, leaf
    cdef TreeArrays tree
    for block in prange(n_blocks, schedule="static", num_threads=n_threads):
        for t in range(a.n_trees):
            tree = tree_of(a, t)
            for r in range(block * ROW_BLOCK, min(block * ROW_BLOCK + ROW_BLOCK, n_rows)):
                leaf = dense_leaf(&tree, X, r)
                record(&out[r, 0], a.tree_group[t] if a.tree_group != NULL else 0, t, value, a.tree_offsets[t] + leaf,
                       leaf)


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
    categorical splits: model/prediction.py refuses it)."""
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
    cdef Py_ssize_t block, r, t, leaf
    cdef TreeArrays tree
    for block in prange(n_blocks, schedule="static", num_threads=n_threads):
        for t in range(a.n_trees):
            tree = tree_of(a, t)
            for r in range(block * ROW_BLOCK, min(block * ROW_BLOCK + ROW_BLOCK, n_rows)):
                leaf = csr_leaf(&tree, &data[0], &indices[0], indptr[r], indptr[r + 1])
                record(&out[r, 0], a.tree_group[t] if a.tree_group != NULL else 0, t, value, a.tree_offsets[t] + leaf,
                       leaf)


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
