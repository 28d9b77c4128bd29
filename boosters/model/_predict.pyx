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

cdef enum:
    ROW_BLOCK = 64


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
    cdef Py_ssize_t r, r0, r1, t, base, node
    cdef int32_t f
    cdef double x
    if out.shape[0] != n_rows:
        raise ValueError("out must have one row per row of X")
    if tree_offsets.shape[0] != n_trees + 1:
        raise ValueError("tree_offsets must have n_trees + 1 entries")
    if n_rows == 0 or n_trees == 0:
        return
    if category_set is not None:
        if category_set.shape[0] != split_feature.shape[0] or tree_sets.shape[0] < n_trees \
                or cat_boundaries.shape[0] < 1:
            raise ValueError("category arrays do not match the forest")
        with nogil:
            predict_categorical(X, split_feature, threshold, default_left, left_child, right_child, value,
                                tree_offsets, tree_group, out, n_threads, category_set, tree_sets,
                                cat_boundaries, &cat_bitsets[0] if cat_bitsets.shape[0] else NULL)
        return
    with nogil:
        for block in prange(n_blocks, schedule="static", num_threads=n_threads):
            r0 = block * ROW_BLOCK
            r1 = min(r0 + ROW_BLOCK, n_rows)
            for t in range(n_trees):
                base = tree_offsets[t]
                for r in range(r0, r1):
                    node = 0
                    f = split_feature[base]
                    while f >= 0:
                        x = <double> X[r, f]
                        if x != x:
                            node = left_child[base + node] if default_left[base + node] else right_child[base + node]
                        elif x <= threshold[base + node]:
                            node = left_child[base + node]
                        else:
                            node = right_child[base + node]
                        f = split_feature[base + node]
                    out[r, tree_group[t]] += value[base + node]


cdef inline bint goes_left_categorical(double x, const uint32_t* words, int64_t n_words,
                                       bint default_left) noexcept nogil:  # words: IN
    """x as a category code: in the set (bit x of the words) goes left; NaN, negative,
    non-integer or past the words: the default direction."""
    cdef int64_t code
    if not (x >= 0.0 and x < 32.0 * n_words):  # NaN fails both
        return default_left
    code = <int64_t> x
    if code != x:
        return default_left
    return (words[code >> 5] >> (code & 31)) & 1


cdef void predict_categorical(
    const value_t[:, :] X, const int32_t[::1] split_feature, const double[::1] threshold,
    const uint8_t[::1] default_left, const int32_t[::1] left_child, const int32_t[::1] right_child,
    const double[::1] value, const int64_t[::1] tree_offsets, const int32_t[::1] tree_group,
    double[:, ::1] out, int n_threads, const int32_t[::1] category_set, const int64_t[::1] tree_sets,
    const int64_t[::1] cat_boundaries, const uint32_t* cat_bitsets,
) noexcept nogil:
    """predict_forest's loop for forests with categorical splits (all arrays IN but out,
    IN and OUT): the numeric forests' loop stays without the per-node category test."""
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_group.shape[0]
    cdef Py_ssize_t block, n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t r, r0, r1, t, base, node
    cdef int64_t k
    cdef int32_t f
    cdef double x
    cdef bint left
    for block in prange(n_blocks, schedule="static", num_threads=n_threads):
        r0 = block * ROW_BLOCK
        r1 = min(r0 + ROW_BLOCK, n_rows)
        for t in range(n_trees):
            base = tree_offsets[t]
            for r in range(r0, r1):
                node = 0
                f = split_feature[base]
                while f >= 0:
                    x = <double> X[r, f]
                    if category_set[base + node] >= 0:
                        k = tree_sets[t] + category_set[base + node]
                        left = goes_left_categorical(x, cat_bitsets + cat_boundaries[k],
                                                     cat_boundaries[k + 1] - cat_boundaries[k],
                                                     default_left[base + node])
                    elif x != x:
                        left = default_left[base + node]
                    else:
                        left = x <= threshold[base + node]
                    node = left_child[base + node] if left else right_child[base + node]
                    f = split_feature[base + node]
                out[r, tree_group[t]] += value[base + node]
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
    cdef Py_ssize_t r, r0, r1, t, base, node
    cdef int32_t f
    cdef double x
    if out.shape[0] != n_rows:
        raise ValueError("out must have one row per row of X")
    if tree_offsets.shape[0] != n_trees + 1:
        raise ValueError("tree_offsets must have n_trees + 1 entries")
    if indices.shape[0] == 0 or data.shape[0] != indices.shape[0]:
        raise ValueError("data and indices must have the same length, at least 1 (pad an empty matrix)")
    if n_rows <= 0 or n_trees == 0:
        return
    with nogil:
        for block in prange(n_blocks, schedule="static", num_threads=n_threads):
            r0 = block * ROW_BLOCK
            r1 = min(r0 + ROW_BLOCK, n_rows)
            for t in range(n_trees):
                base = tree_offsets[t]
                for r in range(r0, r1):
                    node = 0
                    f = split_feature[base]
                    while f >= 0:
                        x = csr_value(&data[0], &indices[0], indptr[r], indptr[r + 1], <index_t> f)
                        if x != x:
                            node = left_child[base + node] if default_left[base + node] else right_child[base + node]
                        elif x <= threshold[base + node]:
                            node = left_child[base + node]
                        else:
                            node = right_child[base + node]
                        f = split_feature[base + node]
                    out[r, tree_group[t]] += value[base + node]

