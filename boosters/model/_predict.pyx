"""Forest traversal on raw feature values (thresholds are values, so no binning).

A row goes left when x <= threshold, right when x > threshold, and follows the
split's default direction when x is NaN. Rows are processed in blocks, every tree
over the whole block, so a tree's nodes stay in cache; each row's sum is taken in
tree order, so results do not depend on the thread count.
"""

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t

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


ctypedef fused index_t:
    int32_t
    int64_t


cdef inline double csr_value(const value_t* data, const index_t* indices, index_t first, index_t stop,
                             index_t feature) noexcept nogil:  # data, indices: IN
    """A CSR row's value of `feature` (its indices first..stop-1 sorted): binary search, 0.0
    when the row stores none (an implicit zero)."""
    cdef index_t half, n = stop - first
    while n > 0:
        half = n >> 1
        if indices[first + half] < feature:
            first += half + 1
            n -= half + 1
        else:
            n = half
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

