"""Linear leaves at prediction (see linear.py): the outputs of the leaves the rows reached,
each its intercept plus its terms' coefficient times the row's feature value, or its
constant value when one of those values is not finite. Rows are split among threads;
each row's sum is taken in tree order, so results do not depend on the thread count."""

from cython.parallel cimport prange
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t

from boosters._lib.types cimport value_t


cdef inline double leaf_output(const value_t[:, :] X, Py_ssize_t r, Py_ssize_t node, const double* value,
                               const double* intercept, const int64_t* term_offsets, const int32_t* features,
                               const double* coefs) noexcept nogil:
    cdef double out = intercept[node], x
    cdef int64_t j
    for j in range(term_offsets[node], term_offsets[node + 1]):
        x = X[r, features[j]]
        if not isfinite(x):
            return value[node]
        out += coefs[j] * x
    return out


def add_linear_outputs(
    const value_t[:, :] X,             # IN: (n_rows, >= the features the terms read)
    const int32_t[:, ::1] leaves,      # IN: (n_rows, n_trees) each row's leaf in each tree (node within it)
    const int64_t[::1] tree_offsets,   # IN: n_trees + 1: tree t's nodes start at tree_offsets[t]
    const int32_t[::1] tree_group,     # IN: n_trees: the output column of each tree
    const double[::1] value,           # IN: per node: its constant value
    const double[::1] intercept,       # IN: per node: its linear model's intercept
    const int64_t[::1] term_offsets,   # IN: n_nodes + 1: node i's terms
    const int32_t[::1] features,       # IN: per term
    const double[::1] coefs,           # IN: per term
    double[:, ::1] out,                # IN and OUT: (n_rows, n_groups), the outputs added
    int n_threads,
):
    """out[r, tree_group[t]] += the output of tree t's leaf leaves[r, t] for row r of X.
    The arrays were checked (model/validation.py): leaves are leaves of their trees and the
    terms' features are columns of X."""
    cdef Py_ssize_t n_rows = X.shape[0], n_trees = tree_group.shape[0], r, t
    cdef int64_t n_nodes = value.shape[0]
    if (leaves.shape[0] != n_rows or leaves.shape[1] != n_trees or tree_offsets.shape[0] != n_trees + 1
            or out.shape[0] != n_rows or intercept.shape[0] != n_nodes or term_offsets.shape[0] != n_nodes + 1
            or features.shape[0] != coefs.shape[0] or term_offsets[n_nodes] != features.shape[0]):
        raise ValueError("linear leaf arrays do not match")
    if n_rows == 0 or n_trees == 0 or n_nodes == 0:
        return
    cdef const int32_t* f = &features[0] if features.shape[0] else NULL
    cdef const double* c = &coefs[0] if coefs.shape[0] else NULL
    for r in prange(n_rows, nogil=True, schedule="static", num_threads=n_threads):
        for t in range(n_trees):
            out[r, tree_group[t]] += leaf_output(X, r, tree_offsets[t] + leaves[r, t], &value[0], &intercept[0],
                                                 &term_offsets[0], f, c)
