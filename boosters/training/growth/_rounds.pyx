"""Boosting rounds without the GIL (RFC-0008): per round, the gradients of the margins,
then per output its tree (growth loop), the tree's leaf values and value thresholds, and
the update of the output's training margins.

Every re-take of the GIL waits for another busy Python thread (a Jupyter kernel's, a web
server's, a Dask worker's) to be interrupted: up to a switch interval, 5 ms. Kernels
called one by one from Python re-took it several times per tree and slowed a training
down 2x and more beside such a thread. Here several rounds grow in one nogil block, as
many as the caller allows (one when it needs each round's trees at once: a validation
set) and as fit in `max_seconds` (so that Ctrl-C, handled between blocks, stays prompt).
The trees are left in this object's (max_rounds * n_outputs, max_nodes) arrays, round by
round, for the grower to copy into `Tree`s.
"""

import numpy as np

from libc.math cimport NAN, isnan
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

from boosters.objectives._gradients cimport GradientKernel
from boosters.training._sampling cimport RowSampler
from boosters.training.growth._grow cimport GROWN, GrowthLoop, now
from boosters.training.growth._leaf_renewal cimport LeafRenewal
from boosters.training.partition._partition cimport RowPartitioner
from boosters.training.split._gain cimport leaf_weight
from boosters.training.split._noise cimport score_noise_sd


cdef class BoostingRounds:
    cdef GrowthLoop loop
    cdef RowPartitioner partitioner
    cdef GradientKernel gradients
    cdef double[:, ::1] margins                # (n_outputs, n_rows), what the gradients read
    cdef const double[::1] edges               # every feature's upper bin edges, concatenated
    cdef const int64_t[::1] edge_offsets       # feature f's edges start at edge_offsets[f]
    cdef double l1, l2
    cdef public double learning_rate           # of the rounds grown next (a schedule changes it between rounds)
    cdef readonly Py_ssize_t n_outputs, max_rounds
    cdef readonly int max_threads              # the kernels' thread count when made: their buffers' size
    cdef readonly object trees                 # {Tree array name: (max_rounds * n_outputs, max_nodes) array}
    cdef readonly object n_nodes               # (max_rounds * n_outputs,) int64: each tree's size
    cdef int64_t[::1] n_nodes_v
    cdef int32_t[:, ::1] split_feature, threshold_bin, left_child, right_child
    cdef uint8_t[:, ::1] default_left
    cdef double[:, ::1] threshold, value, gain, cover
    cdef int64_t[:, ::1] n_samples
    cdef int64_t[::1] leaves                   # scratch: one tree's leaves and their values
    cdef double[::1] leaf_values
    cdef LeafRenewal renewal                   # absolute, pinball: leaves renewed to residual quantiles; else None
    cdef double[::1] quantiles                 # scratch: one tree's leaves' residual quantiles
    cdef RowSampler sampler                    # None: every round's trees see every row
    cdef readonly double random_strength       # CatBoost's: noise on the split search's scores (0: none)
    cdef uint64_t seed                         # of the noise
    cdef double[::1] noise_sd                  # per output: the round's noise scale (score_noise_sd)
    # categorical splits: node i's category set category_set[tree, i] (-1: none) has words
    # cat_bitsets[tree, cat_boundaries[tree, s]:cat_boundaries[tree, s + 1]] (bit c: code c)
    cdef int32_t[:, ::1] category_set
    cdef int64_t[:, ::1] cat_boundaries_v
    cdef uint32_t[:, ::1] cat_bitsets_v
    cdef readonly object cat_boundaries, cat_bitsets, n_cat_sets
    cdef int64_t[::1] n_cat_sets_v

    def __init__(self, GrowthLoop loop, GradientKernel gradients,
                 double[:, ::1] margins,       # IN and OUT: the margins `gradients` reads
                 edges, edge_offsets, double l1, double l2, double learning_rate, Py_ssize_t max_rounds,
                 RowSampler sampler=None, double random_strength=0.0, uint64_t seed=0):
        self.loop, self.partitioner, self.gradients = loop, loop.partitioner, gradients
        self.n_outputs = gradients.out.shape[0]
        if margins.shape[0] != self.n_outputs or margins.shape[1] != self.partitioner.n_rows \
                or gradients.out.shape[1] != self.partitioner.n_rows:
            raise ValueError(f"margins and gradients must have {self.n_outputs} outputs of "
                             f"{self.partitioner.n_rows} rows")
        if margins.shape[1] > 0 and <const double*> &margins[0, 0] != &gradients.margins[0, 0]:
            raise ValueError("margins must be the array the gradient kernel reads")
        if max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
        self.margins = margins
        self.edges = np.ascontiguousarray(edges, dtype=np.float64)
        self.edge_offsets = np.ascontiguousarray(edge_offsets, dtype=np.int64)
        self.l1, self.l2, self.learning_rate = l1, l2, learning_rate
        self.max_rounds = max_rounds
        shape = (max_rounds * self.n_outputs, loop.max_nodes)
        self.trees = dict(split_feature=np.empty(shape, np.int32), threshold=np.empty(shape),
                          threshold_bin=np.empty(shape, np.int32), default_left=np.empty(shape, np.uint8),
                          left_child=np.empty(shape, np.int32), right_child=np.empty(shape, np.int32),
                          value=np.empty(shape), gain=np.empty(shape), cover=np.empty(shape),
                          n_samples=np.empty(shape, np.int64), category_set=np.empty(shape, np.int32))
        t = self.trees
        self.split_feature, self.threshold, self.threshold_bin = t["split_feature"], t["threshold"], t["threshold_bin"]
        self.default_left, self.left_child, self.right_child = t["default_left"], t["left_child"], t["right_child"]
        self.value, self.gain, self.cover, self.n_samples = t["value"], t["gain"], t["cover"], t["n_samples"]
        self.category_set = t["category_set"]
        max_sets = loop.max_nodes // 2 if loop.category_bins.shape[0] else 0
        code_words = loop.category_bins.shape[1]  # a set over codes needs no more words than one over bins
        self.cat_boundaries = np.zeros((shape[0], max_sets + 1), dtype=np.int64)
        self.cat_bitsets = np.empty((shape[0], max(1, max_sets * code_words)), dtype=np.uint32)
        self.n_cat_sets = np.zeros(shape[0], dtype=np.int64)
        self.cat_boundaries_v, self.cat_bitsets_v, self.n_cat_sets_v = \
            self.cat_boundaries, self.cat_bitsets, self.n_cat_sets
        self.n_nodes = np.empty(shape[0], dtype=np.int64)
        self.n_nodes_v = self.n_nodes
        self.leaves = np.empty(loop.max_nodes, dtype=np.int64)
        self.leaf_values = np.empty(loop.max_nodes)
        self.quantiles = np.empty(loop.max_nodes)
        if gradients.leaf_quantiles is not None:
            self.renewal = LeafRenewal(gradients.labels, gradients.w, gradients.leaf_quantiles, self.partitioner.n_rows,
                                       self.n_outputs, self.partitioner.n_threads)
        if sampler is not None and (sampler.n_rows != self.partitioner.n_rows or sampler.n_outputs != self.n_outputs
                                    or self.partitioner.sample.shape[0] == 0
                                    or gradients.out.strides[0] != 8 * self.partitioner.n_rows):
            raise ValueError("the sampler must match the rows and outputs, the partitioner be made with "
                             "sampling=True and the gradients be one C-contiguous (n_outputs, n_rows, 2) array")
        self.sampler = sampler
        if not 0.0 <= random_strength < float("inf"):
            raise ValueError(f"random_strength must be finite and >= 0, got {random_strength}")
        self.random_strength, self.seed = random_strength, seed
        self.noise_sd = np.zeros(self.n_outputs)
        self.max_threads = self.partitioner.n_threads

    def use_threads(self, int n_threads):
        """The thread count of the rounds grown next, 1..max_threads (the kernels' buffers
        are sized for that many). The trees do not depend on it (every kernel's sums are
        thread-count independent): the trainer follows the cores' load with it
        (boosters/_lib/load.py), a model never changes."""
        if not 1 <= n_threads <= self.max_threads:
            raise ValueError(f"n_threads must be in [1, {self.max_threads}], got {n_threads}")
        self.partitioner.n_threads = n_threads
        self.loop.builder.n_threads = n_threads
        self.loop.finder.n_threads = n_threads
        self.gradients.n_threads = n_threads
        if self.sampler is not None:
            self.sampler.n_threads = n_threads
        if self.renewal is not None:
            self.renewal.n_threads = n_threads

    def grow_block(self, uint64_t first_round, Py_ssize_t n_rounds, double max_seconds=0.0):
        """Grow rounds first_round, first_round + 1, ... in one nogil block: n_rounds of them
        (at most max_rounds), fewer if max_seconds have passed after a round (at least one);
        returns how many. Round first_round + r's tree for output k is row r * n_outputs + k
        of `trees` and `n_nodes`; the trees are numbered round * n_outputs + k in the
        training (that seeds the quantizer)."""
        cdef int status
        cdef Py_ssize_t grown = 0
        if not 1 <= n_rounds <= self.max_rounds:
            raise ValueError(f"n_rounds must be in [1, {self.max_rounds}], got {n_rounds}")
        if self.loop.distributed:
            raise ValueError("a distributed loop's rows live elsewhere: grow its trees with grow_exchanged")
        with nogil:
            status = self._grow_rounds_nogil(first_round, n_rounds, max_seconds, &grown)
        if status != GROWN:
            raise RuntimeError("histogram pool: every slot is pinned")
        return grown

    def grow_exchanged(self, Py_ssize_t k, uint64_t tree_index, int64_t root_count):
        """Output k's tree, tree `tree_index` of a training whose rows live elsewhere
        (a distributed loop, no rows here: boosters.dask starts the tree on the machines
        and puts the root's histogram in its slot first), into row 0 of `trees`; the
        machines add its leaves to their margins. Raises what the loop's exchange raised."""
        cdef int status
        if not self.loop.distributed or self.margins.shape[1] != 0:
            raise ValueError("grow_exchanged needs a distributed loop and no rows")
        if not 0 <= k < self.n_outputs:
            raise ValueError(f"k must be in [0, {self.n_outputs}), got {k}")
        with nogil:
            status = self.loop.grow_exchanged(root_count, tree_index)
        if self.loop.error is not None:
            error, self.loop.error = self.loop.error, None
            raise error
        if status != GROWN:
            raise RuntimeError("histogram pool: every slot is pinned")
        self._finish_tree(k, 0)

    def renew_exchanged(self, const double[::1] quantiles):
        """The leaves of the tree grow_exchanged just grew (row 0), in node order, renewed
        to `quantiles` (absolute, pinball: their residuals' quantiles, selected over the
        machines; NaN: a leaf without rows keeps its Newton value), as _renew_leaves
        renews one machine's."""
        cdef Py_ssize_t j, n_leaves = 0
        for j in range(self.loop.n_nodes):
            if self.loop.left[j] < 0:
                n_leaves += 1
        if not self.loop.distributed:
            raise ValueError("renew_exchanged needs a distributed loop")
        if quantiles.shape[0] != n_leaves:
            raise ValueError(f"quantiles: one per leaf of the exchanged tree ({n_leaves}), got {quantiles.shape[0]}")
        for j in range(n_leaves):
            self.quantiles[j] = quantiles[j]
        self._set_leaf_quantiles(0, n_leaves)

    cdef int _grow_rounds_nogil(self, uint64_t first_round, Py_ssize_t n_rounds, double max_seconds,
                                Py_ssize_t* grown) noexcept nogil:  # grown: OUT
        cdef Py_ssize_t r, k, tree
        cdef int status
        cdef double start = now()
        for r in range(n_rounds):
            self.gradients.compute()  # every output's, from the margins before this round
            if self.random_strength > 0.0:  # from the gradients before any sampling re-weights them
                for k in range(self.n_outputs):
                    self.noise_sd[k] = score_noise_sd(self.random_strength, &self.gradients.out[k, 0, 0],
                                                      self.partitioner.n_rows, first_round + r, self.learning_rate)
            if self.sampler is not None and self.partitioner.n_rows > 0:  # the round's rows (GOSS re-weights gradients)
                self.partitioner.n_sampled = self.sampler.sample(first_round + r, &self.gradients.out[0, 0, 0],
                                                                 &self.partitioner.sample[0])
            for k in range(self.n_outputs):
                tree = r * self.n_outputs + k
                self.loop.finder.set_noise(self.seed, (first_round + r) * self.n_outputs + k, self.noise_sd[k])
                status = self.loop.grow_tree(&self.gradients.out[k, 0, 0], (first_round + r) * self.n_outputs + k)
                if status != GROWN:
                    return status
                self._finish_tree(k, tree)
            grown[0] = r + 1
            if now() - start >= max_seconds:
                break
        return GROWN

    cdef void _finish_tree(self, Py_ssize_t k, Py_ssize_t tree) noexcept nogil:
        """Output k's tree, row `tree` of the arrays, from the loop's nodes: value thresholds
        (bin b's upper edge: value bins 1..b go left) or category sets (_category_set),
        every node's value (learning_rate * leaf weight); then the leaves' values are
        added to the margins of their rows (rows outside a row sample: by replaying the
        tree's splits on them). Absolute and pinball renew the leaves' values first
        (_renew_leaves)."""
        cdef Py_ssize_t i, n_leaves = 0, n = self.loop.n_nodes
        cdef int32_t feature
        cdef double weight
        cdef Py_ssize_t n_sets = 0
        for i in range(n):
            feature = self.loop.feature[i]
            self.split_feature[tree, i] = feature
            self.category_set[tree, i] = -1
            if feature >= 0 and self.loop.categorical[i]:
                self.threshold_bin[tree, i] = 0
                self.threshold[tree, i] = 0.0
                self._category_set(tree, i, n_sets)
                self.category_set[tree, i] = n_sets
                n_sets += 1
            else:
                self.threshold_bin[tree, i] = self.loop.threshold_bin[i]
                self.threshold[tree, i] = (self.edges[self.edge_offsets[feature] + self.loop.threshold_bin[i] - 1]
                                           if feature >= 0 else 0.0)
            self.default_left[tree, i] = self.loop.default_left[i]
            self.left_child[tree, i] = self.loop.left[i]
            self.right_child[tree, i] = self.loop.right[i]
            weight = leaf_weight(self.loop.sum_g[i], self.loop.sum_h[i], self.l1, self.l2)
            if self.loop.constrained:  # within its monotone bounds (renewed leaf sums too)
                weight = self.loop.constraints.clamp_weight(i, weight)
            self.value[tree, i] = self.learning_rate * weight
            self.gain[tree, i] = self.loop.gain[i]
            self.cover[tree, i] = self.loop.sum_h[i]
            self.n_samples[tree, i] = self.loop.count[i]
            if self.loop.left[i] < 0:
                self.leaves[n_leaves] = i
                self.leaf_values[n_leaves] = self.value[tree, i]
                n_leaves += 1
        self.n_nodes_v[tree] = n
        self.n_cat_sets_v[tree] = n_sets
        if self.renewal is not None and self.margins.shape[1] > 0:
            self._renew_leaves(k, tree, n_leaves)
        if self.margins.shape[1] > 0:
            self.partitioner.add_values(&self.leaves[0], &self.leaf_values[0], n_leaves, &self.margins[k, 0])
            if self.partitioner.n_sampled >= 0:
                self.partitioner.add_tree_outside_sample(&self.loop.feature[0], &self.loop.threshold_bin[0],
                                                         &self.loop.default_left[0], &self.loop.left[0],
                                                         &self.loop.right[0], n, &self.loop.categorical[0],
                                                         self._category_bins(), self.loop.category_bins.shape[1],
                                                         &self.value[tree, 0],
                                                         &self.leaves[0], &self.leaf_values[0], &self.margins[k, 0])

    cdef void _renew_leaves(self, Py_ssize_t k, Py_ssize_t tree, Py_ssize_t n_leaves) noexcept nogil:
        """Each leaf's value becomes learning_rate * the quantile of its rows' residuals
        y - margin (within its monotone bounds); a leaf whose rows all weigh 0 keeps its
        Newton value. Internal nodes keep theirs (as LightGBM)."""
        cdef Py_ssize_t j
        for j in range(n_leaves):
            self.quantiles[j] = NAN
        self.renewal.renew(self.partitioner, &self.margins[k, 0], k, &self.leaves[0], n_leaves, &self.quantiles[0])
        self._set_leaf_quantiles(tree, n_leaves)

    cdef void _set_leaf_quantiles(self, Py_ssize_t tree, Py_ssize_t n_leaves) noexcept nogil:
        """The leaves' values from their quantiles (`quantiles`, NaN: none)."""
        cdef Py_ssize_t j
        cdef double weight
        for j in range(n_leaves):
            weight = self.quantiles[j]
            if isnan(weight):
                continue
            if self.loop.constrained:
                weight = self.loop.constraints.clamp_weight(self.leaves[j], weight)
            self.leaf_values[j] = self.learning_rate * weight
            self.value[tree, self.leaves[j]] = self.leaf_values[j]

    cdef const uint32_t* _category_bins(self) noexcept nogil:
        """The loop's per-node category bitsets (NULL when the training has no categorical feature)."""
        return &self.loop.category_bins[0, 0] if self.loop.category_bins.shape[0] > 0 else NULL

    cdef void _category_set(self, Py_ssize_t tree, Py_ssize_t node, Py_ssize_t s) noexcept nogil:
        """Node's categorical split as set s of the tree: bit c of its words is code c
        (bin c + 1) going left. Codes past the feature's largest training code follow
        the default direction: their bits are set when it is left, and the words stop at
        the last code going left when it is right (codes beyond the words go the default
        way at prediction)."""
        cdef const uint32_t* bins = &self.loop.category_bins[node, 0]
        cdef Py_ssize_t n_codes = self.loop.finder.n_bins[self.loop.feature[node]] - 1
        cdef bint default_left = self.loop.default_left[node]
        cdef Py_ssize_t c, end = n_codes, n_words
        cdef int64_t start = self.cat_boundaries_v[tree, s]
        cdef uint32_t bit
        if not default_left:
            end = 0
            for c in range(n_codes):
                if (bins[(c + 1) >> 5] >> ((c + 1) & 31)) & 1:
                    end = c + 1
        n_words = max(1, (end + 31) // 32)
        for c in range(n_words):
            self.cat_bitsets_v[tree, start + c] = 0
        for c in range(32 * n_words):
            bit = (bins[(c + 1) >> 5] >> ((c + 1) & 31)) & 1 if c < n_codes else default_left
            self.cat_bitsets_v[tree, start + (c >> 5)] |= bit << (c & 31)
        self.cat_boundaries_v[tree, s + 1] = start + n_words
