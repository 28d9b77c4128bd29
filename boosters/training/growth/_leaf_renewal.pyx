"""Leaf renewal of the absolute and pinball objectives (LightGBM's RenewTreeOutput, XGBoost's
UpdateTreeLeaf): once a tree's structure is found, each leaf's value becomes the weighted
alpha-quantile of its rows' residuals y - margin (objectives/_quantile: the quantile the
objectives start from too). The gradients' Newton step (sum of signs over the leaf's size)
only says in which direction the quantile lies; the renewed value is the step that
minimises the leaf's loss.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int64_t

from boosters._lib.types cimport row_t
from boosters.objectives._quantile cimport WeightedValue, weighted_quantile


cdef class LeafRenewal:
    """The residual quantiles of a tree's leaves, over the rows the partitioner gave them
    (with row sampling: the sampled rows, as LightGBM)."""

    def __init__(self, y, w, alphas, Py_ssize_t n_rows, Py_ssize_t n_outputs, int n_threads=1):
        self.y = np.ascontiguousarray(np.atleast_2d(y), dtype=np.float64)
        self.w = np.ascontiguousarray(w, dtype=np.float64)
        self.alphas = np.ascontiguousarray(alphas, dtype=np.float64)
        if self.y.shape[1] != n_rows or self.w.shape[0] not in (0, n_rows):
            raise ValueError(f"labels and weights must have {n_rows} rows")
        if self.alphas.shape[0] != n_outputs:
            raise ValueError(f"leaf quantiles: one level per output ({n_outputs}), got {self.alphas.shape[0]}")
        if self.y.shape[0] not in (1, n_outputs):
            raise ValueError(f"labels must have 1 or {n_outputs} rows (one per output)")
        if any(not 0.0 < a < 1.0 for a in self.alphas):
            raise ValueError("every quantile level must be in (0, 1)")
        self.scratch = np.empty(max(n_rows, 1), dtype=[("value", np.float64), ("weight", np.float64)])
        self.n_threads = n_threads

    cdef void renew(
        self,
        RowPartitioner partitioner,   # IN: the tree's leaves hold their (sampled) rows
        const double* margins,        # IN: output k's margins before this tree, n_rows
        Py_ssize_t k,                 # the output
        const int64_t* leaves,      # IN: n_leaves nodes, none of them split
        Py_ssize_t n_leaves,
        double* quantiles,            # OUT: per leaf its residual quantile; left as is for a leaf of weight 0
    ) noexcept nogil:
        """Parallel over leaves: their rows are disjoint ranges of positions, and so of scratch."""
        cdef Py_ssize_t j, i, m, begin, n, row
        cdef const row_t* rows
        cdef int64_t node
        cdef const double* labels = &self.y[k if self.y.shape[0] > 1 else 0, 0]
        cdef const double* w = &self.w[0] if self.w.shape[0] > 0 else NULL
        cdef double alpha = self.alphas[k], weight
        cdef WeightedValue* items
        for j in prange(n_leaves, schedule="dynamic", num_threads=self.n_threads):
            node = leaves[j]
            begin = partitioner.node_begin(node)
            n = partitioner.node_count(node)
            rows = partitioner.node_rows(node)
            items = &self.scratch[begin] if n > 0 else NULL
            m = 0
            for i in range(n):
                row = begin + i if rows == NULL else rows[i]
                weight = w[row] if w != NULL else 1.0
                if weight > 0:
                    items[m].value = labels[row] - margins[row]
                    items[m].weight = weight
                    m = m + 1
            if m > 0:
                quantiles[j] = weighted_quantile(items, m, alpha)
