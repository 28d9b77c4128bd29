"""Exact path-dependent TreeSHAP (Lundberg, Erion & Lee 2018, "Consistent individualized
feature attribution for tree ensembles", Algorithm 2) and SHAP interaction values.

A row walks each tree once, keeping the "path" of distinct features split on so far.
For each, the path holds the share of the node cover the path keeps when the feature
is unknown (`zero_fraction`: cover-weighted, as the tree saw its training rows) and
whether the row itself follows the path (`one_fraction`: 1 or 0), plus the weights of
all subset sizes (`weight`, what EXTEND and UNWIND maintain). At a leaf, the sum of a
feature's unwound weights times (one - zero) times the leaf value is its contribution.

The row's child at a split (the "hot" one) is decided exactly as by prediction
(`boosters.model._decision`): numeric x <= threshold left, categorical codes by their
set, missing values by the default direction.

Interaction values (Lundberg et al. 2020, as XGBoost's pred_interactions): feature i's
interaction with j is half the difference of j's SHAP value with i known ("on": only the
row's branch at i's splits) and i unknown ("off": both branches, cover-weighted), i
itself taking no part in the game; the diagonal keeps the rest of i's SHAP value.

Rows are independent: one thread computes a whole row, trees in order, so results do
not depend on the thread count. The kernels add to their output and take their work
buffers from the caller (one slice per thread), so nothing is allocated inside.
"""

from cython.parallel cimport prange, threadid
from libc.string cimport memcpy
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

import numpy as np

from boosters._lib.types cimport value_t
from boosters.model._decision cimport ForestArrays, TreeArrays, goes_left, tree_of


cdef struct PathElement:
    int32_t feature       # -1: the root's placeholder
    double zero_fraction  # share of the cover kept along the path when the feature is unknown
    double one_fraction   # 1 when the row follows the path at the feature's splits, else 0
    double weight         # permutation weight of the subsets of this element's size


cdef struct Walk:
    # what stays fixed while one row walks one tree
    TreeArrays tree
    const double* x            # the row
    double* phi                # OUT: contributions added, indexed by feature
    int32_t condition_feature  # interactions: the feature held known or unknown
    int condition              # 0: none; 1: condition_feature known ("on"); -1: unknown ("off")


cdef class ShapForest:
    """A forest's flat arrays as the kernels read them (it keeps them alive). The arrays
    must be checked already (`Forest.flat()`) and covers of split nodes be > 0.
    `categories`: None, or (category_set, tree_sets, cat_boundaries, cat_bitsets) as
    `predict_forest` takes them."""

    cdef ForestArrays c
    cdef object _arrays
    cdef readonly int max_depth

    def __init__(self, const int32_t[::1] split_feature, const double[::1] threshold,
                 const uint8_t[::1] default_left, const int32_t[::1] left_child,
                 const int32_t[::1] right_child, const double[::1] value, const double[::1] cover,
                 const int64_t[::1] tree_offsets, const int32_t[::1] tree_group, categories=None):
        cdef const int32_t[::1] category_set
        cdef const int64_t[::1] tree_sets, cat_boundaries
        cdef const uint32_t[::1] cat_bitsets
        cdef Py_ssize_t n_trees = tree_group.shape[0]
        if n_trees == 0 or tree_offsets.shape[0] != n_trees + 1:
            raise ValueError("a ShapForest needs at least one tree and n_trees + 1 offsets")
        self._arrays = (split_feature, threshold, default_left, left_child, right_child, value, cover,
                        tree_offsets, tree_group, categories)
        self.c.n_trees = n_trees
        self.c.nodes.split_feature, self.c.nodes.threshold = &split_feature[0], &threshold[0]
        self.c.nodes.default_left, self.c.nodes.left_child = &default_left[0], &left_child[0]
        self.c.nodes.right_child, self.c.nodes.value, self.c.nodes.cover = &right_child[0], &value[0], &cover[0]
        self.c.tree_offsets, self.c.tree_group = &tree_offsets[0], &tree_group[0]
        self.c.nodes.category_set = NULL
        if categories is not None:
            category_set, tree_sets, cat_boundaries, cat_bitsets = categories
            self.c.nodes.category_set, self.c.tree_sets = &category_set[0], &tree_sets[0]
            self.c.nodes.set_boundaries = &cat_boundaries[0]
            self.c.nodes.cat_bitsets = &cat_bitsets[0] if cat_bitsets.shape[0] else NULL
        self.max_depth = forest_max_depth(&self.c)

    @property
    def n_trees(self) -> int:
        return self.c.n_trees

    def path_bytes(self) -> int:
        """Bytes of path one walk needs: at most depth + 1 elements per level of recursion."""
        return (self.max_depth + 2) * (self.max_depth + 3) // 2 * sizeof(PathElement)

    def expected_values(self):
        """Per tree: the mean of its leaves weighted by cover, computed with the walk's
        fractions (so a row's contributions sum to exactly f(x) minus this)."""
        out = np.empty(self.c.n_trees, dtype=np.float64)
        cdef double[::1] means = out
        cdef Py_ssize_t t
        cdef TreeArrays tree
        for t in range(self.c.n_trees):
            tree = tree_of(&self.c, t)
            means[t] = node_mean(&tree, 0)
        return out


cdef int forest_max_depth(const ForestArrays* forest):
    """The largest leaf depth of the forest (0 for stumps); children come after parents."""
    depth_array = np.zeros(forest.tree_offsets[forest.n_trees], dtype=np.int32)
    cdef int32_t[::1] depth = depth_array
    cdef Py_ssize_t t, node, base
    cdef int deepest = 0
    for t in range(forest.n_trees):
        base = forest.tree_offsets[t]
        for node in range(forest.tree_offsets[t + 1] - base):
            deepest = max(deepest, depth[base + node])
            if forest.nodes.split_feature[base + node] >= 0:
                depth[base + forest.nodes.left_child[base + node]] = depth[base + node] + 1
                depth[base + forest.nodes.right_child[base + node]] = depth[base + node] + 1
    return deepest


cdef double node_mean(const TreeArrays* tree, int32_t node) noexcept nogil:
    cdef int32_t left = tree.left_child[node], right = tree.right_child[node]
    if tree.split_feature[node] < 0:
        return tree.value[node]
    return (tree.cover[left] * node_mean(tree, left) + tree.cover[right] * node_mean(tree, right)) \
        / tree.cover[node]


cdef inline void extend_path(PathElement* path, int n, double zero_fraction, double one_fraction,
                             int32_t feature) noexcept nogil:  # path: IN and OUT, n elements -> n + 1
    """EXTEND: add a feature to the path; every subset size's weight splits between the
    subsets without it (times zero_fraction) and with it (times one_fraction)."""
    cdef double scale = 1.0 / (n + 1)
    cdef int i
    path[n].feature = feature
    path[n].zero_fraction = zero_fraction
    path[n].one_fraction = one_fraction
    path[n].weight = 1.0 if n == 0 else 0.0
    for i in range(n - 1, -1, -1):
        path[i + 1].weight += path[i].weight * (one_fraction * (i + 1) * scale)
        path[i].weight = path[i].weight * (zero_fraction * (n - i) * scale)


# UNWIND and its weight sum run at every leaf for every path element: the factors that do
# not depend on the running `carry` are computed apart from it, so that the loop-carried
# chain is a multiply and a subtract, not a division.

cdef inline void unwind_path(PathElement* path, int last, int k) noexcept nogil:
    """UNWIND: remove element k (the inverse of its EXTEND); path: IN and OUT, elements
    0..last -> 0..last - 1. The weights stay in place, the features shift down."""
    cdef double one = path[k].one_fraction, zero = path[k].zero_fraction
    cdef double carry = path[last].weight, previous
    cdef double up = (last + 1) / one if one != 0.0 else 0.0, down = zero / (last + 1)
    cdef int j
    for j in range(last - 1, -1, -1):
        if one != 0.0:
            previous = path[j].weight
            path[j].weight = carry * (up / (j + 1))
            carry = previous - path[j].weight * (down * (last - j))
        else:
            path[j].weight = path[j].weight * ((last + 1) / (zero * (last - j)))
    for j in range(k, last):
        path[j].feature = path[j + 1].feature
        path[j].zero_fraction = path[j + 1].zero_fraction
        path[j].one_fraction = path[j + 1].one_fraction


cdef inline double unwound_weight_sum(const PathElement* path, int last, int k) noexcept nogil:
    """The sum of the weights UNWIND(path, last, k) would leave, without changing the path."""
    cdef double one = path[k].one_fraction, zero = path[k].zero_fraction
    cdef double carry = path[last].weight, weight, total = 0.0
    cdef double up, down
    cdef int j
    if one != 0.0:
        up, down = (last + 1) / one, zero / (last + 1)
        for j in range(last - 1, -1, -1):
            weight = carry * (up / (j + 1))
            total += weight
            carry = path[j].weight - weight * (down * (last - j))
    else:
        up = (last + 1) / zero
        for j in range(last - 1, -1, -1):
            total += path[j].weight * (up / (last - j))
    return total


cdef void recurse(const Walk* walk, int32_t node, PathElement* parent_path, int parent_length,
                  double zero_fraction, double one_fraction, int32_t feature,
                  double condition_fraction) noexcept nogil:
    """Walk the subtree of `node`, reached through a split on `feature` with these
    fractions; its path is written after the parent's (parent_path[:parent_length])."""
    cdef const TreeArrays* tree = &walk.tree
    cdef PathElement* path = parent_path + parent_length
    cdef int n = parent_length, k, i
    cdef int32_t split, hot, cold
    cdef double hot_zero, cold_zero, incoming_zero = 1.0, incoming_one = 1.0
    cdef double hot_condition, cold_condition, scale
    memcpy(path, parent_path, parent_length * sizeof(PathElement))
    if walk.condition == 0 or feature != walk.condition_feature:  # the held feature plays no part
        extend_path(path, n, zero_fraction, one_fraction, feature)
        n += 1
    split = tree.split_feature[node]
    if split < 0:
        scale = tree.value[node] * condition_fraction
        for i in range(1, n):  # element 0 is the root's placeholder
            walk.phi[path[i].feature] += (unwound_weight_sum(path, n - 1, i)
                                          * (path[i].one_fraction - path[i].zero_fraction) * scale)
        return
    if goes_left(tree, node, walk.x[tree.split_feature[node]]):
        hot, cold = tree.left_child[node], tree.right_child[node]
    else:
        hot, cold = tree.right_child[node], tree.left_child[node]
    hot_zero = tree.cover[hot] / tree.cover[node]
    cold_zero = tree.cover[cold] / tree.cover[node]
    # a feature split on again counts once: its earlier element leaves the path and its
    # fractions carry into this split's
    k = 1
    while k < n and path[k].feature != split:
        k += 1
    if k < n:
        incoming_zero, incoming_one = path[k].zero_fraction, path[k].one_fraction
        unwind_path(path, n - 1, k)
        n -= 1
    hot_condition = cold_condition = condition_fraction
    if walk.condition > 0 and split == walk.condition_feature:
        cold_condition = 0.0
    elif walk.condition < 0 and split == walk.condition_feature:
        hot_condition *= hot_zero
        cold_condition *= cold_zero
    # a branch the path keeps none of (both fractions 0) adds nothing (and UNWIND would
    # divide by its zero fraction)
    if hot_condition != 0.0 and (hot_zero * incoming_zero != 0.0 or incoming_one != 0.0):
        recurse(walk, hot, path, n, hot_zero * incoming_zero, incoming_one, split, hot_condition)
    if cold_condition != 0.0 and cold_zero * incoming_zero != 0.0:
        recurse(walk, cold, path, n, cold_zero * incoming_zero, 0.0, split, cold_condition)


cdef inline void walk_tree(Walk* walk, PathElement* path, double* phi, int32_t condition_feature,
                           int condition) noexcept nogil:
    walk.phi = phi
    walk.condition_feature = condition_feature
    walk.condition = condition
    recurse(walk, 0, path, 0, 1.0, 1.0, -1, 1.0)


cdef void row_shap(const ForestArrays* forest, const double* x, PathElement* path, double* out,
                   Py_ssize_t width) noexcept nogil:
    """One row's contributions of every tree added to out (n_groups, width): IN and OUT."""
    cdef Walk walk
    cdef Py_ssize_t t
    walk.x = x
    for t in range(forest.n_trees):
        walk.tree = tree_of(forest, t)
        walk_tree(&walk, path, out + forest.tree_group[t] * width, -1, 0)


cdef void row_interactions(const ForestArrays* forest, const double* x, PathElement* path,
                           double* phis, double* out, Py_ssize_t n_features, int n_groups,
                           const int64_t* feature_offsets, const int32_t* tree_features) noexcept nogil:
    """One row's interaction values added to out (n_groups, width, width), width =
    n_features + 1: IN and OUT. phis: (n_groups + 2, width) scratch."""
    cdef Py_ssize_t width = n_features + 1, t, a, b
    cdef double* on = phis + n_groups * width
    cdef double* off = on + width
    cdef double* phi
    cdef double* block
    cdef double other
    cdef int32_t i, j
    cdef int g
    cdef Walk walk
    walk.x = x
    for a in range(n_groups * width):
        phis[a] = 0.0
    for t in range(forest.n_trees):
        walk.tree = tree_of(forest, t)
        g = forest.tree_group[t]
        block = out + g * width * width
        walk_tree(&walk, path, phis + g * width, -1, 0)
        for a in range(feature_offsets[t], feature_offsets[t + 1]):
            i = tree_features[a]
            for b in range(feature_offsets[t], feature_offsets[t + 1]):
                on[tree_features[b]] = 0.0
                off[tree_features[b]] = 0.0
            walk_tree(&walk, path, on, i, 1)
            walk_tree(&walk, path, off, i, -1)
            for b in range(feature_offsets[t], feature_offsets[t + 1]):
                j = tree_features[b]
                if j != i:
                    block[i * width + j] += (on[j] - off[j]) / 2.0
    # the diagonal: what of i's SHAP value its interactions leave
    for g in range(n_groups):
        phi = phis + g * width
        block = out + g * width * width
        for i in range(n_features):
            other = 0.0
            for j in range(n_features):
                if j != i:
                    other += block[i * width + j]
            block[i * width + i] += phi[i] - other


cdef inline void load_row(const value_t[:, :] X, Py_ssize_t r, double* x) noexcept nogil:
    cdef Py_ssize_t f
    for f in range(X.shape[1]):
        x[f] = <double> X[r, f]


def shap_values(ShapForest forest, const value_t[:, :] X, double[:, :, ::1] out,
                uint8_t[:, ::1] paths, double[:, ::1] rows, int n_threads):
    """Add every tree's contributions of each row to out (n_rows, n_groups, n_features + 1;
    IN and OUT; the bias column is the caller's). Work buffers, one row per thread:
    paths (n_threads, forest.path_bytes()), rows (n_threads, n_features)."""
    cdef Py_ssize_t n_rows = X.shape[0], r
    cdef int thread
    if out.shape[0] != n_rows or out.shape[2] != X.shape[1] + 1:
        raise ValueError("out must be (n_rows, n_groups, n_features + 1)")
    if paths.shape[0] < n_threads or paths.shape[1] < forest.path_bytes() \
            or rows.shape[0] < n_threads or rows.shape[1] < X.shape[1]:
        raise ValueError("too few work buffers for the threads, the forest's depth or the features")
    if n_rows == 0:
        return
    with nogil:
        for r in prange(n_rows, schedule="static", num_threads=n_threads):
            thread = threadid()
            load_row(X, r, &rows[thread, 0])
            row_shap(&forest.c, &rows[thread, 0], <PathElement*> &paths[thread, 0], &out[r, 0, 0],
                     out.shape[2])


def shap_interaction_values(ShapForest forest, const value_t[:, :] X, double[:, :, :, ::1] out,
                            const int64_t[::1] feature_offsets, const int32_t[::1] tree_features,
                            uint8_t[:, ::1] paths, double[:, ::1] rows, double[:, :, ::1] phis,
                            int n_threads):
    """Add each row's interaction values to out (n_rows, n_groups, n_features + 1,
    n_features + 1; IN and OUT; the bias entry is the caller's). Tree t splits on the
    distinct features tree_features[feature_offsets[t]:feature_offsets[t + 1]]: only
    those interact in it. Work buffers, one per thread: paths and rows as shap_values,
    phis (n_threads, n_groups + 2, n_features + 1)."""
    cdef Py_ssize_t n_rows = X.shape[0], n_features = X.shape[1], r
    cdef int thread, n_groups = out.shape[1]
    if out.shape[0] != n_rows or out.shape[2] != n_features + 1 or out.shape[3] != n_features + 1:
        raise ValueError("out must be (n_rows, n_groups, n_features + 1, n_features + 1)")
    if paths.shape[0] < n_threads or paths.shape[1] < forest.path_bytes() \
            or rows.shape[0] < n_threads or rows.shape[1] < n_features \
            or phis.shape[0] < n_threads or phis.shape[1] < n_groups + 2 or phis.shape[2] != n_features + 1:
        raise ValueError("too few work buffers for the threads, the forest's depth or the features")
    if feature_offsets.shape[0] != forest.c.n_trees + 1 or tree_features.shape[0] < 1:
        raise ValueError("feature_offsets must have n_trees + 1 entries, tree_features at least 1")
    if n_rows == 0:
        return
    with nogil:
        for r in prange(n_rows, schedule="static", num_threads=n_threads):
            thread = threadid()
            load_row(X, r, &rows[thread, 0])
            row_interactions(&forest.c, &rows[thread, 0], <PathElement*> &paths[thread, 0],
                             &phis[thread, 0, 0], &out[r, 0, 0, 0], n_features, n_groups,
                             &feature_offsets[0], &tree_features[0])
