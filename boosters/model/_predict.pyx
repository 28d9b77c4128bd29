"""Forest traversal on raw feature values (thresholds are values, so no binning).

A row goes left when x <= threshold, right when x > threshold, and follows the
split's default direction when x is NaN. A categorical split (category_set >= 0) sends
x left when x is a code in its set (a bitset over codes); NaN, negative, non-integer
codes and codes past the set's words follow the default direction. Rows are processed
in blocks, every tree over the whole block, so a tree's nodes stay in cache; each
row's sum is taken in tree order, so results do not depend on the thread count.
"""

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

from boosters._lib.search cimport lower_bound
from boosters._lib.types cimport value_t
from boosters.model._decision cimport goes_left_categorical, goes_left_numeric

cdef enum:
    ROW_BLOCK = 64


cdef struct TreeArrays:
    # the forest's node arrays (all trees concatenated), as the def functions receive them
    const int32_t* split_feature   # per node, -1 at leaves
    const double* threshold
    const uint8_t* default_left
    const int32_t* left_child      # node index within its tree
    const int32_t* right_child
    const int32_t* category_set    # per node its tree's set index or -1; NULL: no categorical split
    const int64_t* tree_sets       # tree t's sets are tree_sets[t] + s in cat_boundaries
    const int64_t* cat_boundaries  # set k's words are cat_bitsets[cat_boundaries[k]:cat_boundaries[k + 1]]
    const uint32_t* cat_bitsets


cdef TreeArrays tree_arrays(
    const int32_t[::1] split_feature, const double[::1] threshold, const uint8_t[::1] default_left,
    const int32_t[::1] left_child, const int32_t[::1] right_child, const int64_t[::1] tree_offsets,
    Py_ssize_t n_trees, const int32_t[::1] category_set, const int64_t[::1] tree_sets,
    const int64_t[::1] cat_boundaries, const uint32_t[::1] cat_bitsets,
) except *:
    """The arrays' pointers, after the size checks the kernels rely on (the values were
    checked by model/validation.py)."""
    cdef TreeArrays a
    cdef Py_ssize_t n_nodes = split_feature.shape[0]
    if tree_offsets.shape[0] != n_trees + 1:
        raise ValueError("tree_offsets must have n_trees + 1 entries")
    if (threshold.shape[0] != n_nodes or default_left.shape[0] != n_nodes or left_child.shape[0] != n_nodes
            or right_child.shape[0] != n_nodes):
        raise ValueError("the node arrays must have the same length")
    a.split_feature = &split_feature[0] if n_nodes else NULL
    a.threshold = &threshold[0] if n_nodes else NULL
    a.default_left = &default_left[0] if n_nodes else NULL
    a.left_child = &left_child[0] if n_nodes else NULL
    a.right_child = &right_child[0] if n_nodes else NULL
    a.category_set = a.tree_sets = a.cat_boundaries = NULL
    a.cat_bitsets = NULL
    if category_set is not None:
        if category_set.shape[0] != n_nodes or tree_sets.shape[0] < n_trees or cat_boundaries.shape[0] < 1:
            raise ValueError("category arrays do not match the forest")
        a.category_set = &category_set[0] if n_nodes else NULL
        a.tree_sets = &tree_sets[0] if tree_sets.shape[0] else NULL
        a.cat_boundaries = &cat_boundaries[0]
        a.cat_bitsets = &cat_bitsets[0] if cat_bitsets.shape[0] else NULL
    return a


cdef inline Py_ssize_t child(const TreeArrays* a, Py_ssize_t t, Py_ssize_t i, double x,
                             bint categorical) noexcept nogil:
    """The child (index within tree t) that value x goes to from node i (index into the
    concatenated arrays), by the split rule of model/_decision.pxd. `categorical`: the
    forest has category sets (callers pass a constant, so the numeric forests' walk has
    no category test)."""
    cdef int64_t k
    cdef bint left
    if categorical and a.category_set[i] >= 0:
        k = a.tree_sets[t] + a.category_set[i]
        left = goes_left_categorical(x, a.cat_bitsets + a.cat_boundaries[k],
                                     a.cat_boundaries[k + 1] - a.cat_boundaries[k], a.default_left[i])
    else:
        left = goes_left_numeric(x, a.threshold[i], a.default_left[i])
    return a.left_child[i] if left else a.right_child[i]


cdef inline Py_ssize_t dense_walk(const TreeArrays* a, Py_ssize_t t, Py_ssize_t base, const value_t[:, :] X,
                                  Py_ssize_t r, bint categorical) noexcept nogil:  # X: IN
    cdef Py_ssize_t node = 0
    cdef int32_t f = a.split_feature[base]
    while f >= 0:
        node = child(a, t, base + node, <double> X[r, f], categorical)
        f = a.split_feature[base + node]
    return node


cdef inline Py_ssize_t dense_leaf(const TreeArrays* a, Py_ssize_t t, Py_ssize_t base,
                                  const value_t[:, :] X, Py_ssize_t r) noexcept nogil:  # X: IN
    """The leaf (node index within tree t, whose nodes start at base) that row r of X reaches."""
    if a.category_set == NULL:
        return dense_walk(a, t, base, X, r, False)
    return dense_walk(a, t, base, X, r, True)


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
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_group.shape[0]
    cdef Py_ssize_t block, n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t r, r0, r1, t, base
    if out.shape[0] != n_rows:
        raise ValueError("out must have one row per row of X")
    if value.shape[0] != split_feature.shape[0]:
        raise ValueError("value must have one entry per node")
    cdef TreeArrays a = tree_arrays(split_feature, threshold, default_left, left_child, right_child, tree_offsets,
                                    n_trees, category_set, tree_sets, cat_boundaries, cat_bitsets)
    if n_rows == 0 or n_trees == 0:
        return
    with nogil:
        for block in prange(n_blocks, schedule="static", num_threads=n_threads):
            r0 = block * ROW_BLOCK
            r1 = min(r0 + ROW_BLOCK, n_rows)
            for t in range(n_trees):
                base = tree_offsets[t]
                for r in range(r0, r1):
                    out[r, tree_group[t]] += value[base + dense_leaf(&a, t, base, X, r)]


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
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = out.shape[1]
    cdef Py_ssize_t block, n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t r, r0, r1, t, base
    if out.shape[0] != n_rows:
        raise ValueError("out must have one row per row of X")
    cdef TreeArrays a = tree_arrays(split_feature, threshold, default_left, left_child, right_child, tree_offsets,
                                    n_trees, category_set, tree_sets, cat_boundaries, cat_bitsets)
    if n_rows == 0 or n_trees == 0:
        return
    with nogil:
        for block in prange(n_blocks, schedule="static", num_threads=n_threads):
            r0 = block * ROW_BLOCK
            r1 = min(r0 + ROW_BLOCK, n_rows)
            for t in range(n_trees):
                base = tree_offsets[t]
                for r in range(r0, r1):
                    out[r, t] = <int32_t> dense_leaf(&a, t, base, X, r)


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


cdef inline Py_ssize_t csr_leaf(const TreeArrays* a, Py_ssize_t t, Py_ssize_t base, const value_t* data,
                                const index_t* indices, index_t first, index_t stop) noexcept nogil:  # data, indices: IN
    """dense_leaf for the CSR row whose entries are first..stop-1 (sparse input has no
    categorical splits: tree.py refuses it)."""
    cdef Py_ssize_t node = 0
    cdef int32_t f = a.split_feature[base]
    while f >= 0:
        node = child(a, t, base + node, csr_value(data, indices, first, stop, <index_t> f), False)
        f = a.split_feature[base + node]
    return node


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
    cdef Py_ssize_t block, n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t r, r0, r1, t, base
    check_csr(data, indices, n_rows, out.shape[0])
    if value.shape[0] != split_feature.shape[0]:
        raise ValueError("value must have one entry per node")
    cdef TreeArrays a = tree_arrays(split_feature, threshold, default_left, left_child, right_child, tree_offsets,
                                    n_trees, None, None, None, None)
    if n_rows <= 0 or n_trees == 0:
        return
    with nogil:
        for block in prange(n_blocks, schedule="static", num_threads=n_threads):
            r0 = block * ROW_BLOCK
            r1 = min(r0 + ROW_BLOCK, n_rows)
            for t in range(n_trees):
                base = tree_offsets[t]
                for r in range(r0, r1):
                    out[r, tree_group[t]] += value[base + csr_leaf(&a, t, base, &data[0], &indices[0],
                                                                   indptr[r], indptr[r + 1])]


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
    cdef Py_ssize_t block, n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t r, r0, r1, t, base
    check_csr(data, indices, n_rows, out.shape[0])
    cdef TreeArrays a = tree_arrays(split_feature, threshold, default_left, left_child, right_child, tree_offsets,
                                    n_trees, None, None, None, None)
    if n_rows <= 0 or n_trees == 0:
        return
    with nogil:
        for block in prange(n_blocks, schedule="static", num_threads=n_threads):
            r0 = block * ROW_BLOCK
            r1 = min(r0 + ROW_BLOCK, n_rows)
            for t in range(n_trees):
                base = tree_offsets[t]
                for r in range(r0, r1):
                    out[r, t] = <int32_t> csr_leaf(&a, t, base, &data[0], &indices[0], indptr[r], indptr[r + 1])
