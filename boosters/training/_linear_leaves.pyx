"""The normal equations of every linear leaf of a tree, in one pass over its rows (see
linear_leaves.py): per leaf, A = sum of h z z' and b = sum of g z over its rows whose leaf
features are all finite, z = (the row's values of the leaf's features, 1). Serial, rows in
order: the sums do not depend on the thread count."""

from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t

from boosters._lib.types cimport value_t


def normal_equations(
    const value_t[:, :] X,                # IN: the training matrix
    const int64_t[::1] rows,              # IN: the rows to sum (the round's sample, or every row)
    const int32_t[::1] leaf_of_row,       # IN: per row of X: its leaf (node index)
    const int64_t[::1] slot_of_node,      # IN: per node: its leaf's slot, -1 for no fit
    const int32_t[:, ::1] slot_features,  # IN: (n_slots, m): slot s's features, slot_n_features[s] of them
    const int32_t[::1] slot_n_features,   # IN: per slot
    const float[:, ::1] gh,               # IN: (n_rows, 2): (grad, hess) per row
    double[:, :, ::1] A,                  # OUT: (n_slots, m + 1, m + 1), zeroed by the caller
    double[:, ::1] b,                     # OUT: (n_slots, m + 1), zeroed by the caller
    int64_t[::1] n_fit,                   # OUT: (n_slots,): rows summed per slot, zeroed by the caller
):
    """Sum the rows' terms into their leaf's slot; a leaf's intercept is its last used
    entry (index slot_n_features[s]). Indices are the caller's (checked here)."""
    cdef Py_ssize_t n_slots = slot_n_features.shape[0], m = slot_features.shape[1]
    cdef Py_ssize_t i, j, k, s, n_feat, row, n_rows = X.shape[0], n_nodes = slot_of_node.shape[0]
    cdef double z[64]
    cdef double g, h
    cdef bint finite
    if (leaf_of_row.shape[0] != n_rows or gh.shape[0] != n_rows or slot_features.shape[0] != n_slots
            or A.shape[0] != n_slots or A.shape[1] != m + 1 or A.shape[2] != m + 1 or b.shape[0] != n_slots
            or b.shape[1] != m + 1 or n_fit.shape[0] != n_slots or m >= 64):
        raise ValueError("normal_equations: the arrays' shapes do not match")
    for i in range(rows.shape[0]):
        if not 0 <= rows[i] < n_rows or not 0 <= leaf_of_row[rows[i]] < n_nodes:
            raise ValueError("normal_equations: a row or leaf is out of range")
    for s in range(n_slots):
        if not 0 <= slot_n_features[s] <= m:
            raise ValueError("normal_equations: a slot's feature count is out of range")
        for j in range(slot_n_features[s]):
            if not 0 <= slot_features[s, j] < X.shape[1]:
                raise ValueError("normal_equations: a feature is out of range")
    for i in range(n_nodes):
        if not -1 <= slot_of_node[i] < n_slots:
            raise ValueError("normal_equations: a slot is out of range")
    with nogil:
        for i in range(rows.shape[0]):
            row = rows[i]
            s = slot_of_node[leaf_of_row[row]]
            if s < 0:
                continue
            n_feat = slot_n_features[s]
            finite = True
            for j in range(n_feat):
                z[j] = X[row, slot_features[s, j]]
                if not isfinite(z[j]):
                    finite = False
                    break
            if not finite:
                continue
            z[n_feat] = 1.0
            g, h = gh[row, 0], gh[row, 1]
            for j in range(n_feat + 1):
                b[s, j] += g * z[j]
                for k in range(j + 1):
                    A[s, j, k] += h * z[j] * z[k]
            n_fit[s] += 1
