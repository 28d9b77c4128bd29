"""Per-node constraints of the growth loop (_grow.pyx): which features a node may split
on, and the bounds monotone constraints put on its weight. The loop calls `start_tree`,
`split` for every split and `prepare` before each split search; the split finder reads
the batch's `allowed` and `bounds` rows (SplitFinder.constrain).

Column sampling composes as XGBoost's ColumnSampler: the tree draws
max(1, floor(colsample_bytree * n)) of the n usable features, each level (node depth,
for leaf-wise growth too) max(1, floor(colsample_bylevel * n_tree)) of the tree's, each
node max(1, floor(colsample_bynode * n_level)) of its level's. Draws are partial
Fisher-Yates shuffles on counter-based streams of (seed, tree, depth or node id), so
they depend on nothing else (not the thread count, not the order nodes are visited).

Interaction constraints (XGBoost's rule, tree/constraints.cc): the root may split on
any feature; a node whose path used the features P may split on P and on every feature
of the groups that contain all of P. A feature in no group thus only interacts with
itself (LightGBM instead never uses a feature that is in no group).

Monotone constraints, the "basic" method of XGBoost and LightGBM: a node's weight lies
in [lower, upper] (the root's is unbounded); its children inherit the bounds, and a
split on a constrained feature cuts them at the midpoint of the children's (clamped)
weights, so every leaf left of it is at most every leaf right of it (increasing).
"""

import numpy as np

from libc.math cimport INFINITY, floor
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memset

from boosters._lib.random cimport Stream, below, stream
from boosters.training.split._gain cimport clamp, leaf_weight

cdef enum:  # stream domains: what a draw is for
    BY_TREE = 0x7472
    BY_LEVEL = 0x6C76
    BY_NODE = 0x6E64


def sample_size(double fraction, Py_ssize_t n):
    """Features drawn from n at `fraction`: max(1, floor(fraction * n)), the product in
    float32 as XGBoost's ColumnSampler computes it (0.29 of 100 is 29, not 28)."""
    return _sample_size(fraction, n)


cdef inline Py_ssize_t _sample_size(double fraction, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k = <Py_ssize_t> floor(<float> fraction * <float> n)
    return min(n, max(1, k))


cdef inline void shuffle_prefix(int32_t* items, Py_ssize_t n, Py_ssize_t k, Stream* s) noexcept nogil:
    """A uniform draw of k of the n items into items[:k] (partial Fisher-Yates); items: IN and OUT."""
    cdef Py_ssize_t i, j
    cdef int32_t t
    for i in range(k):
        j = i + <Py_ssize_t> below(s, n - i)
        t = items[i]
        items[i] = items[j]
        items[j] = t


cdef class NodeConstraints:
    """The constraints of one training: `features` are the split finder's (feature ids
    by position), nodes are the growth loop's ids (< max_nodes), a find_best batch holds
    at most max_batch nodes. `interaction_groups`: arrays of feature ids (None: no
    interaction constraints); `monotone`: int8 direction per feature id (None: none)."""

    def __init__(self, features, Py_ssize_t n_features, Py_ssize_t max_nodes, Py_ssize_t max_batch, *,
                 uint64_t seed, double l1, double l2, double colsample_bytree=1.0, double colsample_bylevel=1.0,
                 double colsample_bynode=1.0, interaction_groups=None, monotone=None):
        for name, value in (("colsample_bytree", colsample_bytree), ("colsample_bylevel", colsample_bylevel),
                            ("colsample_bynode", colsample_bynode)):
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {value}")
        self.features = np.ascontiguousarray(features, dtype=np.int32)
        self.n_feat = self.features.shape[0]
        position = np.full(n_features, -1, dtype=np.int32)
        position[np.asarray(self.features)] = np.arange(self.n_feat, dtype=np.int32)
        self.position = position
        self.seed, self.l1, self.l2 = seed, l1, l2
        self.bytree, self.bylevel, self.bynode = colsample_bytree, colsample_bylevel, colsample_bynode
        self.sampling = min(colsample_bytree, colsample_bylevel, colsample_bynode) < 1.0
        self.tree_set = np.arange(self.n_feat, dtype=np.int32)
        self.n_tree = self.n_feat
        self.drawn = np.empty(max(self.n_feat, 1), dtype=np.int32)
        self.interactions = interaction_groups is not None
        groups = [] if interaction_groups is None else [np.asarray(g, dtype=np.int32) for g in interaction_groups]
        member = np.zeros((max(len(groups), 1), max(n_features, 1)), dtype=np.uint8)
        for k, g in enumerate(groups):
            if g.size and (g.min() < 0 or g.max() >= n_features):
                raise ValueError(f"interaction_groups: feature ids must be in [0, {n_features})")
            member[k, g] = 1
        self.member = member
        self.group_start = np.cumsum([0] + [len(g) for g in groups]).astype(np.int32)
        self.group_features = np.concatenate(groups + [np.zeros(1, dtype=np.int32)]).astype(np.int32)
        self.path = np.empty(max_nodes + 1, dtype=np.int32)
        self.inter = np.empty(max(self.n_feat, 1), dtype=np.uint8)
        self.monotone = monotone is not None and bool(np.any(np.asarray(monotone) != 0))
        direction = np.zeros(n_features, dtype=np.int8)
        if monotone is not None:
            monotone = np.asarray(monotone)
            if monotone.shape != (n_features,) or not np.isin(monotone, (-1, 0, 1)).all():
                raise ValueError(f"monotone must hold -1, 0 or 1 for each of the {n_features} features")
            direction[:] = monotone
        self.direction = direction
        self.direction_v = direction
        self.parent = np.empty(max_nodes, dtype=np.int32)
        self.split_feature = np.empty(max_nodes, dtype=np.int32)
        self.lower = np.empty(max_nodes)
        self.upper = np.empty(max_nodes)
        self.allowed = (np.ones((max_batch, self.n_feat), dtype=np.uint8)
                        if self.sampling or self.interactions else None)
        if self.allowed is not None:
            self.allowed_v = self.allowed
        self.bounds = np.empty((max_batch, 2)) if self.monotone else None
        if self.bounds is not None:
            self.bounds_v = self.bounds

    @property
    def restricts_features(self) -> bool:
        return self.allowed is not None

    @property
    def tree_features(self):
        """The feature ids the current tree may use (column sampling by tree), sorted."""
        return np.sort(np.asarray(self.features)[np.asarray(self.tree_set)[:self.n_tree]])

    cdef void start_tree(self, uint64_t tree_index) noexcept nogil:
        """A new tree (its index in the training seeds its draws) whose root is node 0."""
        cdef Py_ssize_t j
        cdef Stream s
        self.tree = tree_index
        self.parent[0] = -1
        self.split_feature[0] = -1
        self.lower[0] = -INFINITY
        self.upper[0] = INFINITY
        if self.bytree < 1.0:
            for j in range(self.n_feat):
                self.tree_set[j] = <int32_t> j
            s = stream(self.seed, BY_TREE, tree_index, 0)
            self.n_tree = _sample_size(self.bytree, self.n_feat)
            shuffle_prefix(&self.tree_set[0], self.n_feat, self.n_tree, &s)

    cdef void split(self, Py_ssize_t node, Py_ssize_t left, Py_ssize_t right, int32_t feature,
                    double left_g, double left_h, double right_g, double right_h) noexcept nogil:
        """`node` was split on `feature` into `left` and `right` with these sums."""
        cdef double lo = self.lower[node], hi = self.upper[node], wl, wr, mid
        cdef int direction = self.direction_v[feature]
        self.split_feature[node] = feature
        self.parent[left] = self.parent[right] = <int32_t> node
        self.split_feature[left] = self.split_feature[right] = -1
        self.lower[left] = self.lower[right] = lo
        self.upper[left] = self.upper[right] = hi
        if direction != 0:  # the children's weights as the split search clamped them
            wl = clamp(leaf_weight(left_g, left_h, self.l1, self.l2), lo, hi)
            wr = clamp(leaf_weight(right_g, right_h, self.l1, self.l2), lo, hi)
            mid = 0.5 * (wl + wr)
            if direction > 0:
                self.upper[left] = mid
                self.lower[right] = mid
            else:
                self.lower[left] = mid
                self.upper[right] = mid

    cdef double clamp_weight(self, Py_ssize_t node, double w) noexcept nogil:
        """A node's weight within its bounds."""
        return clamp(w, self.lower[node], self.upper[node])

    cdef void prepare(self, const int64_t* nodes, Py_ssize_t n, const int32_t* depth) noexcept nogil:
        """Row i of `allowed` and `bounds` for nodes[i] (depth: per node id)."""
        cdef Py_ssize_t i, t, k
        cdef int64_t node
        cdef uint8_t* row
        for i in range(n):
            node = nodes[i]
            if self.monotone:
                self.bounds_v[i, 0] = self.lower[node]
                self.bounds_v[i, 1] = self.upper[node]
            if not (self.sampling or self.interactions) or self.n_feat == 0:
                continue
            row = &self.allowed_v[i, 0]
            if self.sampling:
                memset(row, 0, self.n_feat)
                for t in range(self.n_tree):
                    self.drawn[t] = self.tree_set[t]
                k = self._sample(BY_LEVEL, <uint64_t> depth[node], self.n_tree, self.bylevel)
                k = self._sample(BY_NODE, <uint64_t> node, k, self.bynode)
                for t in range(k):
                    row[self.drawn[t]] = 1
            else:
                memset(row, 1, self.n_feat)
            if self.interactions:
                self._allow_interactions(node, row)

    cdef Py_ssize_t _sample(self, uint64_t domain, uint64_t index, Py_ssize_t n, double fraction) noexcept nogil:
        """Draw drawn[:k] of drawn[:n] at `fraction` with the stream (seed, domain, tree,
        index); returns k (n when fraction is 1)."""
        cdef Stream s
        cdef Py_ssize_t k
        if fraction >= 1.0:
            return n
        s = stream(self.seed, domain, self.tree, index)
        k = _sample_size(fraction, n)
        shuffle_prefix(&self.drawn[0], n, k, &s)
        return k

    cdef void _allow_interactions(self, Py_ssize_t node, uint8_t* row) noexcept nogil:  # row: IN and OUT
        """Clear the features of `row` that node's path does not allow: those outside its
        path's features P and outside every group containing all of P."""
        cdef Py_ssize_t n_path = 0, k, t, a = self.parent[node]
        cdef int32_t pos
        cdef bint contains
        while a >= 0:
            self.path[n_path] = self.split_feature[a]
            n_path += 1
            a = self.parent[a]
        if n_path == 0:
            return
        memset(&self.inter[0], 0, self.n_feat)
        for t in range(n_path):
            self.inter[self.position[self.path[t]]] = 1
        for k in range(self.group_start.shape[0] - 1):
            contains = True
            for t in range(n_path):
                if not self.member[k, self.path[t]]:
                    contains = False
                    break
            if contains:
                for t in range(self.group_start[k], self.group_start[k + 1]):
                    pos = self.position[self.group_features[t]]
                    if pos >= 0:
                        self.inter[pos] = 1
        for t in range(self.n_feat):
            row[t] = row[t] & self.inter[t]
