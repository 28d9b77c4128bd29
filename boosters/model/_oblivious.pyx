"""Prediction of oblivious (symmetric) forests: every split node of a tree's level holds
the same numeric split, so a row's leaf is a table index of one comparison per level
(bit k: the row went right at level k), with no node to load between comparisons.

The decisions are _decision.pxd's (x <= threshold goes left, NaN the default way), each
row's margin adds the trees' values in tree order from its starting value, so the
margins are those of the general walk, bit for bit. model/oblivious.py makes the
tables from a forest's checked flat arrays.
"""

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t

from boosters._lib.types cimport value_t

cdef enum:
    ROW_BLOCK = 64   # rows through every tree before the next rows


cdef class ObliviousForest:
    cdef readonly Py_ssize_t n_trees
    cdef const int32_t[::1] feature       # per level of every tree (trees one after another)
    cdef const double[::1] threshold
    cdef const uint8_t[::1] default_left
    cdef const int64_t[::1] level_start   # tree t's levels: level_start[t]:level_start[t + 1]
    cdef const double[::1] table          # tree t's 2**depth leaf values from table_start[t]
    cdef const int64_t[::1] table_start
    cdef const int32_t[::1] group

    def __init__(self, feature, threshold, default_left, level_start, table, table_start, group):
        self.feature, self.threshold, self.default_left = feature, threshold, default_left
        self.level_start, self.table, self.table_start, self.group = level_start, table, table_start, group
        self.n_trees = group.shape[0]

    def predict(self, const value_t[:, ::1] X, double[:, ::1] out, Py_ssize_t n_trees, int n_threads):
        """Add the first `n_trees` trees' values to `out` (IN and OUT: (n_rows, n_groups)
        margins) for the rows of X (IN: C-contiguous, as many columns as the trees read)."""
        cdef Py_ssize_t n_rows = X.shape[0], n_blocks = (n_rows + ROW_BLOCK - 1) // ROW_BLOCK, block
        if out.shape[0] != n_rows:
            raise ValueError("out must have one row per row of X")
        if not 0 <= n_trees <= self.n_trees:
            raise ValueError(f"n_trees must be in [0, {self.n_trees}], got {n_trees}")
        if n_rows == 0 or n_trees == 0:
            return
        with nogil:
            if n_threads <= 1 or n_blocks == 1:
                for block in range(n_blocks):
                    self._block(X, out, block, n_trees)
            else:
                for block in prange(n_blocks, schedule="static", num_threads=n_threads):
                    self._block(X, out, block, n_trees)

    cdef void _block(self, const value_t[:, ::1] X, double[:, ::1] out, Py_ssize_t block,
                     Py_ssize_t n_trees) noexcept nogil:  # X: IN; out: IN and OUT
        """A block of rows through the first n_trees trees: per tree, level by level over
        the block's rows (the rows' indexes side by side: no dependent loads)."""
        cdef Py_ssize_t t, r, k, first = block * ROW_BLOCK
        cdef Py_ssize_t n = min(first + ROW_BLOCK, X.shape[0]) - first
        cdef int64_t index[ROW_BLOCK]
        cdef int32_t f
        cdef double x, threshold
        cdef bint missing_right
        for t in range(n_trees):
            for r in range(n):
                index[r] = 0
            for k in range(self.level_start[t], self.level_start[t + 1]):
                f, threshold, missing_right = self.feature[k], self.threshold[k], not self.default_left[k]
                for r in range(n):
                    x = <double> X[first + r, f]
                    # left: x <= threshold, or NaN with default_left (_decision.pxd's rule)
                    index[r] = 2 * index[r] + (missing_right if x != x else x > threshold)
            for r in range(n):
                out[first + r, self.group[t]] += self.table[self.table_start[t] + index[r]]
