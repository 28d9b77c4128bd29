"""Growing one tree (RFC-0008): leaf-wise (best gain first) or depth-wise expansion.

The loop runs here, calling the kernels' C entry points, so a split costs no Python
(it used to cost ~12 us of interpreter time per split, a tenth of a small training),
and never needs the GIL: `grow_tree` is called by the boosting rounds (_rounds.pyx)
inside their `nogil` block.
One expansion step, for a batch of parents (one parent leaf-wise, a level depth-wise):

  1. partition each parent's rows by its best split; record the split;
  2. per parent: build the smaller child's histogram, derive the larger child's as
     parent - smaller (the parent's slot is handed to the larger child); a child that
     cannot be split needs no histogram;
  3. find the children's best splits.

Histograms live in pool slots (see histograms/_pool.pyx); a parent whose histogram was
evicted gets both children built directly. The nodes' sums, counts, best splits and
the tree's arrays are arrays of this object, valid until the next tree. The loop speaks
bins only: a split is (feature, threshold bin); the rounds map bins to value thresholds.

Distributed training (boosters.dask) runs this loop too, on a machine without rows: an
`exchange` partitions the rows of the other machines and brings the histograms and
counts summed over them, at the one point where the step differs (_expand_exchanged).
"""

import numpy as np

from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from boosters.training.histograms._build cimport HistogramBuilder
from boosters.training.histograms._pool cimport HistogramPool
from boosters.training.partition._partition cimport RowPartitioner
from boosters.training.split._constraints cimport NodeConstraints
from boosters.training.split._split cimport Candidate, SplitFinder


PHASE_NAMES = ("partition", "histogram build", "histogram subtraction", "split search")


cdef class GrowthLoop:
    def __init__(self, HistogramBuilder builder, SplitFinder finder, RowPartitioner partitioner,
                 HistogramPool pool, *, bint leafwise, Py_ssize_t max_leaves, max_depth,
                 Py_ssize_t min_samples_leaf, totals_bins, bint renew_leaf_sums=False,
                 NodeConstraints constraints=None, exchange=None, bint oblivious=False):
        """`constraints`: the training's column sampling and interaction / monotone
        constraints (None: none); its split finder must be constrained by it. `exchange`:
        the rows live elsewhere (see _expand_exchanged); it has `step(loop, n_splits,
        n_built, n_leaves)` and `leaf_sums(loop, n_leaves)`, and the pool must be an
        identity pool (the exchange writes node i's histogram into slot i). `oblivious`:
        depth-wise growth whose levels share one split; the pool must hold a level's
        histograms (n_slots >= 2 ** (max_depth - 1)), the split is found over them all."""
        self.builder, self.finder, self.partitioner, self.pool = builder, finder, partitioner, pool
        self.leafwise = leafwise
        self.oblivious = oblivious
        if oblivious and (leafwise or max_depth is None):
            raise ValueError("oblivious growth is depth-wise, with a max_depth")
        self.max_leaves = max_leaves
        self.max_depth = -1 if max_depth is None else max_depth
        self.min_rows_to_split = max(2, 2 * min_samples_leaf)
        self.has_features = finder.features.shape[0] > 0
        self.totals_start, self.totals_stop = totals_bins
        self.renew_leaf_sums = renew_leaf_sums
        self.constraints = constraints
        self.constrained = constraints is not None
        self.max_nodes = partitioner.max_nodes
        if pool.max_nodes < self.max_nodes or finder.max_batch < pool.n_slots:
            raise ValueError("the pool and the split finder must hold every node of a step")
        self.exchange = exchange
        self.distributed = exchange is not None
        if self.distributed and not pool.identity:
            raise ValueError("a distributed loop needs an identity pool (a slot per node)")
        if not self.distributed and not builder.ready():
            raise ValueError("the builder's packed gradient pairs must be set first (set_quantizer)")
        n = self.max_nodes
        # every node's entries are written when the node is added (np.zeros of 1 KiB and more
        # releases the GIL: a busy Python thread would delay the training each time)
        self.depth = np.empty(n, dtype=np.int32)
        self.sum_g = np.empty(n)
        self.sum_h = np.empty(n)
        self.count = np.empty(n, dtype=np.int64)
        self.feature = np.empty(n, dtype=np.int32)
        self.threshold_bin = np.empty(n, dtype=np.int32)
        self.left = np.empty(n, dtype=np.int32)
        self.right = np.empty(n, dtype=np.int32)
        self.gain = np.empty(n)
        self.default_left = np.empty(n, dtype=np.uint8)
        self.categorical = np.empty(n, dtype=np.uint8)
        self.category_bins = np.empty((n if finder.max_cat_bins else 0, (finder.max_cat_bins + 31) // 32),
                                      dtype=np.uint32)
        self.best = <Candidate*> malloc(n * sizeof(Candidate))
        self.found = <Candidate*> malloc((n + 2) * sizeof(Candidate))
        if self.best == NULL or self.found == NULL:
            raise MemoryError()
        self.work = np.empty((N_WORK_ROWS, n + 2), dtype=np.int64)
        self.heap = np.empty(n + 1, dtype=np.int64)
        self.sums = np.empty((3, n + 2))
        self.leaf_sums = np.empty((n, 2))
        self.step_splits = np.empty((n if self.distributed else 0, N_SPLIT_COLUMNS), dtype=np.int64)
        self.step_nodes = np.empty(n if self.distributed else 0, dtype=np.int64)
        self.step_counts = np.empty(n if self.distributed else 0, dtype=np.int64)
        self.reset_timings()

    def __dealloc__(self):
        free(self.best)
        free(self.found)

    def reset_timings(self):
        cdef int i
        for i in range(N_PHASES):
            self.seconds[i] = 0.0
            self.calls[i] = 0

    @property
    def timings(self):
        """{phase: (seconds, kernel calls)} since construction or reset_timings(): where
        the growth time goes (each kernel call is timed; a clock read costs ~20 ns)."""
        return {name: (self.seconds[i], self.calls[i]) for i, name in enumerate(PHASE_NAMES)}

    cdef inline void _timed(self, Phase phase, double start) noexcept nogil:
        self.seconds[<int> phase] += now() - start
        self.calls[<int> phase] += 1

    cdef int grow_tree(self, const float* gh, uint64_t tree_index) noexcept nogil:  # gh: IN
        """Grow a tree from the (n_rows, 2) float32 gradients `gh` (kept alive by the caller;
        tree `tree_index` of the training: it seeds the quantizer); a Status. The nodes are
        this object's arrays (n_nodes of them) until the next tree. The builder's start of
        the tree (quantization), the tree's steps and the leaves' renewed sums run here."""
        cdef int status = GROWN
        self.gh = gh
        self.builder.use_gradients(gh)
        self.partitioner.start_tree()
        self.pool.start_tree()
        self.n_nodes = 0
        # the root holds every row, or the round's row sample
        cdef int64_t root = self._add(0, self.partitioner.node_count(0))
        if self.constrained:
            self.constraints.start_tree(tree_index)
        if not self._splittable(root):  # a single leaf: its sums in row order
            self.partitioner.sum_gradients(&root, 1, gh, &self.leaf_sums[0, 0])
            self.sum_g[root], self.sum_h[root] = self.leaf_sums[0, 0], self.leaf_sums[0, 1]
            return GROWN
        self.builder.start_tree(self.partitioner, tree_index)
        status = self._split_from_root()
        if status == GROWN and self.renew_leaf_sums:
            self._renew_leaf_sums()
        return status

    cdef void _renew_leaf_sums(self) noexcept nogil:
        """The structure came from quantized histograms; the leaves' sums (and so their
        values) come from the full-precision gradients of their rows."""
        cdef int64_t* leaves = &self.work[LEFTS, 0]  # the tree's steps are over: their rows are free
        cdef Py_ssize_t i, n_leaves = 0
        for i in range(self.n_nodes):
            if self.left[i] < 0:
                leaves[n_leaves] = i
                n_leaves += 1
        if n_leaves < 2:
            return
        self.partitioner.sum_gradients(leaves, n_leaves, self.gh, &self.leaf_sums[0, 0])
        for i in range(n_leaves):
            self.sum_g[leaves[i]] = self.leaf_sums[i, 0]
            self.sum_h[leaves[i]] = self.leaf_sums[i, 1]

    cdef int grow_exchanged(self, int64_t root_count, uint64_t tree_index) noexcept nogil:
        """grow_tree for a distributed loop: the root holds `root_count` rows (over every
        machine) and its histogram is in its slot already (the machines started the tree
        and summed it); the leaves' sums come through the exchange. A Status (ABORTED:
        the exchange raised, see `error`)."""
        cdef int status
        cdef int64_t root
        self.pool.start_tree()
        self.n_nodes = 0
        self.leaves_renewed = False
        root = self._add(0, root_count)
        if self.constrained:
            self.constraints.start_tree(tree_index)
        if not self._splittable(root):  # a single leaf: its sums from the float gradients
            self.step_nodes[0] = root
            return self._exchange_leaf_sums(1)
        status = self._split_from_root()
        if status == GROWN and self.renew_leaf_sums and not self.leaves_renewed:
            status = self._exchange_leaf_sums(-1)
        return status

    cdef int _exchange_step(self, Py_ssize_t n_splits, Py_ssize_t n_built, Py_ssize_t n_leaves) noexcept nogil:
        """The exchange's step: the machines split their rows by step_splits[:n_splits],
        sum the histograms of step_nodes[:n_built] into their pool slots and the left
        children's rows into step_counts; on the tree's last step (n_built 0) the leaves'
        float sums (of step_nodes[:n_leaves]) into leaf_sums. A Status."""
        with gil:
            try:
                self.exchange.step(self, n_splits, n_built, n_leaves)
            except BaseException as error:  # re-raised by the caller, with the GIL
                self.error = error
                return ABORTED
        return GROWN

    cdef int _exchange_leaf_sums(self, Py_ssize_t n_leaves) noexcept nogil:
        """The leaves' float gradient sums over every machine: step_nodes[:n_leaves] (-1:
        every leaf of the tree, when there are two or more); a Status."""
        cdef Py_ssize_t i
        if n_leaves < 0:
            n_leaves = 0
            for i in range(self.n_nodes):
                if self.left[i] < 0:
                    self.step_nodes[n_leaves] = i
                    n_leaves += 1
            if n_leaves < 2:
                return GROWN
        with gil:
            try:
                self.exchange.leaf_sums(self, n_leaves)
            except BaseException as error:
                self.error = error
                return ABORTED
        for i in range(n_leaves):
            self.sum_g[self.step_nodes[i]] = self.leaf_sums[i, 0]
            self.sum_h[self.step_nodes[i]] = self.leaf_sums[i, 1]
        return GROWN

    # -- growth strategies ------------------------------------------------------------

    cdef int _split_from_root(self) noexcept nogil:
        """The root's histogram and best split, then the growth strategy; a Status."""
        cdef int64_t root = 0
        cdef bint hit
        cdef int64_t slot = self.pool.take(root, &hit)
        cdef double start = now()
        if slot < 0:
            return POOL_EXHAUSTED
        if not self.distributed:  # distributed: the exchange summed it there already
            self.builder.build(self.partitioner, &slot, &root, 1)
            self._timed(BUILD, start)
        # the root's sums are those of any column of its histogram: consistent with every
        # histogram sum that follows
        self.finder.totals(slot, self.totals_start, self.totals_stop, &self.sum_g[root], &self.sum_h[root])
        if not self.distributed:  # boosters.dask keeps its models as they were: no missing-value tolerance yet
            self.finder.begin_tree(self.sum_h[root])
        self._find_splits(&root, &slot, 1)
        return self._expand_best_first() if self.leafwise else self._expand_level_by_level()

    cdef int _expand_level_by_level(self) noexcept nogil:
        """Depth-wise growth: each step splits every node of a level that has a split;
        their children are the next level. A Status."""
        cdef int64_t* level = &self.work[LEVEL, 0]
        cdef int64_t* parents = &self.work[LEVEL_PARENTS, 0]
        cdef Py_ssize_t i, n_level = 1, n_parents
        level[0] = 0
        while n_level > 0:
            n_parents = 0
            for i in range(n_level):
                if self.best[level[i]].feature >= 0:
                    parents[n_parents] = level[i]
                    n_parents += 1
            n_level = self._expand(parents, n_parents, False, level) if n_parents > 0 else 0
        return GROWN if n_level == 0 else POOL_EXHAUSTED

    cdef int _expand_best_first(self) noexcept nogil:
        """Leaf-wise growth: each step splits the leaf of the best gain (a heap), until
        max_leaves leaves. A Status."""
        cdef Py_ssize_t n_heap = 0, n_leaves = 1, n_children, i
        cdef int64_t node
        cdef int64_t children[2]
        if self.best[0].feature >= 0:
            n_heap = self._push(n_heap, 0)
        while n_heap > 0 and n_leaves < self.max_leaves:
            node = self.heap[0]  # best gain first; ties: lowest node id
            n_heap = self._pop(n_heap)
            n_leaves += 1
            n_children = self._expand(&node, 1, n_leaves == self.max_leaves, children)
            if n_children < 0:
                return POOL_EXHAUSTED
            for i in range(n_children):
                if self.best[children[i]].feature >= 0:
                    n_heap = self._push(n_heap, children[i])
        return GROWN

    cdef inline bint _before(self, int64_t a, int64_t b) noexcept nogil:
        return self.best[a].gain > self.best[b].gain or (self.best[a].gain == self.best[b].gain and a < b)

    cdef Py_ssize_t _push(self, Py_ssize_t n, int64_t node) noexcept nogil:
        cdef Py_ssize_t i = n, parent
        while i > 0:
            parent = (i - 1) // 2
            if not self._before(node, self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = node
        return n + 1

    cdef Py_ssize_t _pop(self, Py_ssize_t n) noexcept nogil:
        cdef int64_t last = self.heap[n - 1]
        cdef Py_ssize_t i = 0, child
        n -= 1
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and self._before(self.heap[child + 1], self.heap[child]):
                child += 1
            if not self._before(self.heap[child], last):
                break
            self.heap[i] = self.heap[child]
            i = child
        if n > 0:
            self.heap[i] = last
        return n

    # -- one expansion step -------------------------------------------------------------

    cdef Py_ssize_t _add(self, int32_t depth, int64_t count) noexcept nogil:
        cdef Py_ssize_t node = self.n_nodes
        self.n_nodes += 1
        self.depth[node] = depth
        self.sum_g[node] = 0.0
        self.sum_h[node] = 0.0
        self.count[node] = count
        self.best[node].feature = -1
        self.feature[node] = -1
        self.threshold_bin[node] = 0
        self.default_left[node] = 0
        self.categorical[node] = 0
        self.left[node] = -1
        self.right[node] = -1
        self.gain[node] = 0.0
        return node

    cdef inline void _add_children(self, const int64_t* parents, Py_ssize_t n, int64_t* lefts,
                                   int64_t* rights) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(n):
            lefts[i] = self._add(self.depth[parents[i]] + 1, 0)
            rights[i] = self._add(self.depth[parents[i]] + 1, 0)

    cdef inline bint _splittable(self, Py_ssize_t node) noexcept nogil:
        return (self.has_features and (self.max_depth < 0 or self.depth[node] < self.max_depth)
                and self.count[node] >= self.min_rows_to_split)

    cdef Py_ssize_t _expand(
        self,
        const int64_t* parents,     # IN: n nodes with a best split
        Py_ssize_t n,
        bint children_final,
        int64_t* children,          # OUT: 2n nodes, left and right per parent
    ) noexcept nogil:
        """Split `parents` by their best splits; returns the number of children (-1: the
        pool ran out of slots). Their best splits are found unless `children_final` (they
        will stay leaves)."""
        cdef int64_t* lefts = &self.work[LEFTS, 0]
        cdef int64_t* rights = &self.work[RIGHTS, 0]
        cdef Py_ssize_t i, p, group, first
        cdef Candidate* split
        cdef double start
        if self.distributed:
            return self._expand_exchanged(parents, n, children_final, children)
        self._add_children(parents, n, lefts, rights)
        for i in range(n):
            p = parents[i]
            split = &self.best[p]
            start = now()
            self.partitioner.split_node(p, split.feature, split.bin, split.default_left, lefts[i], rights[i],
                                        split.cat_bits)
            self._timed(PARTITION, start)
            self._record_split(p, lefts[i], rights[i], split, self.partitioner.node_count(lefts[i]))
            children[2 * i] = lefts[i]
            children[2 * i + 1] = rights[i]
        self._level_default_left(parents, n)
        if children_final:
            for i in range(n):
                self.pool.drop(parents[i])
            return 2 * n
        # oblivious: the level's split is found over all its nodes at once (the pool holds them)
        group = n if self.pool.identity or self.oblivious else max(1, self.pool.n_slots // 2)
        first = 0
        while first < n:
            if self._children_histograms(parents + first, lefts + first, rights + first,
                                         min(group, n - first)) != GROWN:
                return -1
            first += group
        return 2 * n

    cdef Py_ssize_t _expand_exchanged(
        self,
        const int64_t* parents,     # IN: n nodes with a best split
        Py_ssize_t n,
        bint children_final,
        int64_t* children,          # OUT: 2n nodes, left and right per parent
    ) noexcept nogil:
        """_expand when the rows live elsewhere. The counts arrive with the histograms, so
        the step differs from one machine's in three places: the child built is the
        smaller by the split's hessian (known before the split: the machines split and
        build in one exchange), it is built whenever the children are not final, and the
        splits are recorded after the exchange. The tree's last step brings the leaves'
        float sums (quantized training). Then as one machine: the larger child is parent -
        smaller, the children's best splits found. Returns the number of children (-1:
        the exchange raised)."""
        cdef int64_t* lefts = &self.work[LEFTS, 0]
        cdef int64_t* rights = &self.work[RIGHTS, 0]
        cdef int64_t* built = &self.work[BUILD_NODES, 0]
        cdef int64_t* sub_parent = &self.work[SUB_PARENTS, 0]
        cdef int64_t* sub_small = &self.work[SUB_SMALLS, 0]
        cdef int64_t* sub_out = &self.work[SUB_OUTS, 0]
        cdef int64_t* eval_nodes = &self.work[EVAL_NODES, 0]
        cdef Py_ssize_t i, j, p, small, large, n_sub = 0, n_eval = 0, n_leaves = 0
        cdef Candidate* split
        cdef bint hit, final, need_small, need_large
        self._add_children(parents, n, lefts, rights)
        # children at the depth limit are leaves: no histograms (the split still moves their rows)
        final = children_final or (self.max_depth >= 0 and self.depth[lefts[0]] >= self.max_depth)
        for i in range(n):
            p = parents[i]
            split = &self.best[p]
            self.step_splits[i, SPLIT_PARENT] = p
            self.step_splits[i, SPLIT_FEATURE] = split.feature
            self.step_splits[i, SPLIT_BIN] = split.bin
            self.step_splits[i, SPLIT_DEFAULT_LEFT] = split.default_left
            self.step_splits[i, SPLIT_LEFT] = lefts[i]
            self.step_splits[i, SPLIT_RIGHT] = rights[i]
            self.step_splits[i, SPLIT_CATEGORICAL] = split.cat_bits != NULL  # its bins: category_bins[p]
            self.left[p] = -2  # split, not yet recorded: not a leaf
            children[2 * i] = lefts[i]
            children[2 * i + 1] = rights[i]
            if not final:
                built[i] = lefts[i] if split.left_h <= self.sum_h[p] - split.left_h else rights[i]
                self.step_nodes[i] = self.pool.take(built[i], &hit)  # identity: the node's slot
        if self.renew_leaf_sums and (children_final or (final and not self.leafwise)):  # the tree's last step
            for j in range(self.n_nodes):  # its leaves (a final step builds no histogram)
                if self.left[j] == -1:
                    self.step_nodes[n_leaves] = j
                    n_leaves += 1
        if self._exchange_step(n, 0 if final else n, n_leaves) != GROWN:
            return -1
        for i in range(n):
            self._record_split(parents[i], lefts[i], rights[i], &self.best[parents[i]], self.step_counts[i])
        self._level_default_left(parents, n)
        for j in range(n_leaves):
            p = self.step_nodes[j]
            self.sum_g[p], self.sum_h[p] = self.leaf_sums[j, 0], self.leaf_sums[j, 1]
        self.leaves_renewed = n_leaves > 0
        if final:
            return 2 * n
        for i in range(n):
            p, small = parents[i], built[i]
            large = rights[i] if small == lefts[i] else lefts[i]
            need_small, need_large = self._splittable(small), self._splittable(large)
            if need_small:
                eval_nodes[n_eval] = small
                n_eval += 1
            if need_large:
                sub_parent[n_sub], sub_small[n_sub], sub_out[n_sub] = p, small, self.pool.move(p, large)
                n_sub += 1
                eval_nodes[n_eval] = large
                n_eval += 1
        if n_sub > 0:
            self.builder.subtract(sub_parent, sub_small, sub_out, n_sub)
        self._find_splits(eval_nodes, eval_nodes, n_eval)  # identity pool: a node's slot is its id
        return 2 * n

    cdef void _level_default_left(self, const int64_t* parents, Py_ssize_t n) noexcept nogil:  # parents: IN
        """Oblivious growth: where no node of the level had missing values of the split's
        feature, missing values go (at prediction) to the side holding more of the level's
        rows, the same side at every node (_record_split decides per node otherwise)."""
        cdef Py_ssize_t i
        cdef int64_t n_left = 0, n_right = 0
        if not self.oblivious or n == 0 or self.best[parents[0]].has_missing:
            return
        for i in range(n):
            n_left += self.count[self.left[parents[i]]]
            n_right += self.count[self.right[parents[i]]]
        for i in range(n):
            self.default_left[parents[i]] = n_left >= n_right

    cdef void _record_split(self, Py_ssize_t parent, Py_ssize_t left, Py_ssize_t right,
                            const Candidate* split, int64_t n_left) noexcept nogil:  # split: IN
        cdef int64_t n_right = self.count[parent] - n_left
        self.feature[parent] = split.feature
        self.threshold_bin[parent] = split.bin
        # a feature with no missing values here sends them (at prediction) to the larger child
        self.default_left[parent] = split.default_left if split.has_missing else n_left >= n_right
        self.categorical[parent] = split.cat_bits != NULL
        self.left[parent] = left
        self.right[parent] = right
        self.gain[parent] = split.gain
        self.sum_g[left] = split.left_g
        self.sum_h[left] = split.left_h
        self.count[left] = n_left
        self.sum_g[right] = self.sum_g[parent] - split.left_g
        self.sum_h[right] = self.sum_h[parent] - split.left_h
        self.count[right] = n_right
        if self.constrained:
            self.constraints.split(parent, left, right, split.feature, self.sum_g[left], self.sum_h[left],
                                   self.sum_g[right], self.sum_h[right])

    cdef int _children_histograms(
        self,
        const int64_t* parents,     # IN: n split nodes
        const int64_t* lefts,       # IN: their children
        const int64_t* rights,      # IN
        Py_ssize_t n,
    ) noexcept nogil:
        """Histograms and best splits of the children of a group of parents that fits
        the pool: at most two pinned slots per parent, so with at most n_slots // 2
        parents a slot to take is always there; a Status."""
        cdef int64_t* build_slots = &self.work[BUILD_SLOTS, 0]
        cdef int64_t* build_nodes = &self.work[BUILD_NODES, 0]
        cdef int64_t* sub_parent = &self.work[SUB_PARENTS, 0]
        cdef int64_t* sub_small = &self.work[SUB_SMALLS, 0]
        cdef int64_t* sub_out = &self.work[SUB_OUTS, 0]
        cdef int64_t* pinned = &self.work[PINNED, 0]
        cdef int64_t* eval_nodes = &self.work[EVAL_NODES, 0]
        cdef int64_t* eval_slots = &self.work[EVAL_SLOTS, 0]
        cdef Py_ssize_t n_build = 0, n_sub = 0, n_pinned = 0, n_eval = 0
        cdef Py_ssize_t i, k, parent, small, large, child, parent_slot, slot
        cdef bint need_small, need_large, needed
        cdef double start
        cdef int status = GROWN
        for i in range(n):
            parent = parents[i]
            small, large = lefts[i], rights[i]
            if self.count[small] > self.count[large]:
                small, large = large, small
            need_small, need_large = self._splittable(small), self._splittable(large)
            parent_slot = self.pool.slot_of(parent)
            if not (need_small or need_large):
                self.pool.drop(parent)
                continue
            if parent_slot < 0:  # evicted: build what is needed directly
                for k in range(2):
                    child = small if k == 0 else large
                    needed = need_small if k == 0 else need_large
                    if needed:
                        slot = self._take_pinned(child, pinned, &n_pinned)
                        if slot < 0:
                            status = POOL_EXHAUSTED
                            break
                        build_slots[n_build], build_nodes[n_build] = slot, child
                        n_build += 1
                        eval_nodes[n_eval], eval_slots[n_eval] = child, slot
                        n_eval += 1
                if status != GROWN:
                    break
                continue
            self._pin(parent_slot, pinned, &n_pinned)
            slot = self._take_pinned(small, pinned, &n_pinned)
            if slot < 0:
                status = POOL_EXHAUSTED
                break
            build_slots[n_build], build_nodes[n_build] = slot, small
            n_build += 1
            if need_small:
                eval_nodes[n_eval], eval_slots[n_eval] = small, slot
                n_eval += 1
            if need_large:
                sub_parent[n_sub], sub_small[n_sub] = parent_slot, slot
                sub_out[n_sub] = self.pool.move(parent, large)
                n_sub += 1
                eval_nodes[n_eval], eval_slots[n_eval] = large, sub_out[n_sub - 1]
                n_eval += 1
            else:
                self.pool.drop(parent)
        if status == GROWN:
            if n_build > 0:
                start = now()
                self.builder.build(self.partitioner, build_slots, build_nodes, n_build)
                self._timed(BUILD, start)
            if n_sub > 0:
                start = now()
                self.builder.subtract(sub_parent, sub_small, sub_out, n_sub)
                self._timed(SUBTRACT, start)
            self._find_splits(eval_nodes, eval_slots, n_eval)
        for i in range(n_pinned):
            self.pool.set_pinned(pinned[i], False)
        if status == GROWN:
            for i in range(n_build):  # small children that will never be split
                if not self._splittable(build_nodes[i]):
                    self.pool.drop(build_nodes[i])
        return status

    cdef inline void _pin(self, int64_t slot, int64_t* pinned, Py_ssize_t* n_pinned) noexcept nogil:
        """Pin a slot for this step and remember it (pinned, n_pinned: IN and OUT), to unpin
        after the split search."""
        self.pool.set_pinned(slot, True)
        pinned[n_pinned[0]] = slot
        n_pinned[0] += 1

    cdef int64_t _take_pinned(self, int64_t node, int64_t* pinned, Py_ssize_t* n_pinned) noexcept nogil:
        """A pool slot for `node`'s histogram, pinned for this step (pinned, n_pinned: IN
        and OUT); -1 if every slot is pinned."""
        cdef bint hit
        cdef int64_t slot = self.pool.take(node, &hit)
        if slot >= 0:
            self._pin(slot, pinned, n_pinned)
        return slot

    cdef void _find_splits(
        self,
        const int64_t* nodes,       # IN: n nodes
        const int64_t* slots,       # IN: their histograms' slots
        Py_ssize_t n,
    ) noexcept nogil:
        cdef Py_ssize_t i
        cdef double start
        if n == 0:
            return
        for i in range(n):
            self.sums[0, i] = self.sum_g[nodes[i]]
            self.sums[1, i] = self.sum_h[nodes[i]]
            self.sums[2, i] = <double> self.count[nodes[i]]
        if self.constrained:
            self.constraints.prepare(nodes, n, &self.depth[0])
        start = now()
        if self.oblivious:  # one split for the level (every node of a level is evaluated in one call)
            self.finder.find_level_best(slots, &self.sums[0, 0], &self.sums[1, 0], &self.sums[2, 0], n, self.found,
                                        nodes)
        else:
            self.finder.find_best(slots, &self.sums[0, 0], &self.sums[1, 0], &self.sums[2, 0], n, self.found, nodes)
        self._timed(SPLIT_SEARCH, start)
        for i in range(n):
            self.best[nodes[i]] = self.found[i]
            if self.found[i].feature < 0:
                self.pool.drop(nodes[i])
            elif self.found[i].cat_bits != NULL:  # the finder's scratch: the node keeps its own copy
                memcpy(&self.category_bins[nodes[i], 0], self.found[i].cat_bits,
                       ((self.finder.n_bins[self.found[i].feature] + 31) // 32) * sizeof(uint32_t))
                self.best[nodes[i]].cat_bits = &self.category_bins[nodes[i], 0]
