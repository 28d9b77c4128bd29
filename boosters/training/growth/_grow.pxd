from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from boosters.training.histograms._build cimport HistogramBuilder
from boosters.training.histograms._pool cimport HistogramPool
from boosters.training.partition._partition cimport RowPartitioner
from boosters.training.split._constraints cimport NodeConstraints
from boosters.training.split._split cimport Candidate, SplitFinder


cdef inline double now() noexcept nogil:
    """Seconds on the monotonic clock (~20 ns a read)."""
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return t.tv_sec + 1e-9 * t.tv_nsec


cdef enum Phase:
    PARTITION, BUILD, SUBTRACT, SPLIT_SEARCH, N_PHASES

# The rows of GrowthLoop.work, one node list each (max_nodes + 2 entries): one expansion
# step's lists, allocated once per training (a step allocates nothing).
cdef enum:
    LEFTS, RIGHTS                        # _expand: the parents' children
    BUILD_SLOTS, BUILD_NODES             # _children_histograms: histograms to build,
    SUB_PARENTS, SUB_SMALLS, SUB_OUTS    # to derive as parent - smaller child,
    PINNED                               # the pool slots pinned for the step,
    EVAL_NODES, EVAL_SLOTS               # the nodes whose best split to find
    LEVEL, LEVEL_PARENTS                 # _expand_level_by_level: a level, its nodes with a split
    N_WORK_ROWS

cdef enum Status:
    GROWN = 0
    POOL_EXHAUSTED = 1  # every pool slot pinned: impossible by construction (see _children_histograms)
    ABORTED = 2         # the exchange raised (GrowthLoop.error)

# Columns of GrowthLoop.step_splits: a distributed step's splits, as the exchange sends them
cdef enum:
    SPLIT_PARENT, SPLIT_FEATURE, SPLIT_BIN, SPLIT_DEFAULT_LEFT, SPLIT_LEFT, SPLIT_RIGHT, SPLIT_CATEGORICAL
    N_SPLIT_COLUMNS


cdef class GrowthLoop:
    cdef HistogramBuilder builder
    cdef SplitFinder finder
    cdef RowPartitioner partitioner
    cdef HistogramPool pool
    cdef bint leafwise
    cdef bint oblivious                        # a level's nodes share one split (find_level_best)
    cdef Py_ssize_t max_leaves, max_depth      # max_depth < 0: unlimited
    cdef Py_ssize_t min_rows_to_split
    cdef bint has_features
    cdef Py_ssize_t totals_start, totals_stop  # bins of one column: a node's totals
    cdef bint renew_leaf_sums                  # leaves' sums from the float gradients (quantized)
    cdef const float* gh                       # the tree's gradients, (n_rows, 2)
    cdef readonly Py_ssize_t max_nodes, n_nodes
    # per node
    cdef readonly int32_t[::1] depth
    cdef readonly double[::1] sum_g, sum_h
    cdef readonly int64_t[::1] count
    cdef readonly int32_t[::1] feature, threshold_bin, left, right
    cdef readonly double[::1] gain
    cdef readonly uint8_t[::1] default_left
    cdef Candidate* best                       # best split of a node; feature -1: none
    cdef Candidate* found                      # find_best's results for one step
    cdef readonly uint8_t[::1] categorical     # per node: its split is categorical
    cdef readonly uint32_t[:, ::1] category_bins  # per node: the bins its (best) categorical split sends left
    # scratch for one expansion step (rows: LEFTS ... LEVEL_PARENTS), the leaf-wise heap, the leaves' renewed sums
    cdef int64_t[:, ::1] work
    cdef int64_t[::1] heap
    cdef double[:, ::1] sums
    cdef readonly double[:, ::1] leaf_sums
    cdef double seconds[<int> N_PHASES]       # kernel time per phase since the last reset
    cdef int64_t calls[<int> N_PHASES]
    cdef readonly NodeConstraints constraints  # column sampling, interaction and monotone constraints
    cdef bint constrained                      # constraints is not None
    # distributed training (boosters.dask): the rows live on other machines; `exchange`
    # splits them and brings what the machines summed (see _expand_exchanged)
    cdef readonly bint distributed
    cdef object exchange
    cdef readonly object error                 # what the exchange raised (grow_exchanged's caller re-raises it)
    cdef readonly int64_t[:, ::1] step_splits  # a step's splits (N_SPLIT_COLUMNS columns) for the exchange
    cdef readonly int64_t[::1] step_nodes      # the nodes of the step's histograms, or of the leaves' sums
    cdef readonly int64_t[::1] step_counts     # from the exchange: each split's left child's rows
    cdef bint leaves_renewed                   # the tree's last step brought the leaves' sums

    cdef int grow_tree(self, const float* gh, uint64_t tree_index) noexcept nogil
    cdef int grow_exchanged(self, int64_t root_count, uint64_t tree_index) noexcept nogil
    cdef int _exchange_step(self, Py_ssize_t n_splits, Py_ssize_t n_built, Py_ssize_t n_leaves) noexcept nogil
    cdef int _exchange_leaf_sums(self, Py_ssize_t n_leaves) noexcept nogil
    cdef void _renew_leaf_sums(self) noexcept nogil
    cdef inline void _timed(self, Phase phase, double start) noexcept nogil
    cdef int _split_from_root(self) noexcept nogil
    cdef int _expand_level_by_level(self) noexcept nogil
    cdef int _expand_best_first(self) noexcept nogil
    cdef inline bint _before(self, int64_t a, int64_t b) noexcept nogil
    cdef Py_ssize_t _push(self, Py_ssize_t n, int64_t node) noexcept nogil
    cdef Py_ssize_t _pop(self, Py_ssize_t n) noexcept nogil
    cdef Py_ssize_t _add(self, int32_t depth, int64_t count) noexcept nogil
    cdef inline void _add_children(self, const int64_t* parents, Py_ssize_t n, int64_t* lefts,
                                   int64_t* rights) noexcept nogil
    cdef inline bint _splittable(self, Py_ssize_t node) noexcept nogil
    cdef Py_ssize_t _expand(self, const int64_t* parents, Py_ssize_t n, bint children_final,
                            int64_t* children) noexcept nogil
    cdef Py_ssize_t _expand_exchanged(self, const int64_t* parents, Py_ssize_t n, bint children_final,
                                      int64_t* children) noexcept nogil
    cdef void _level_default_left(self, const int64_t* parents, Py_ssize_t n) noexcept nogil
    cdef void _record_split(self, Py_ssize_t parent, Py_ssize_t left, Py_ssize_t right,
                            const Candidate* split, int64_t n_left) noexcept nogil
    cdef int _children_histograms(self, const int64_t* parents, const int64_t* lefts, const int64_t* rights,
                                  Py_ssize_t n) noexcept nogil
    cdef inline void _pin(self, int64_t slot, int64_t* pinned, Py_ssize_t* n_pinned) noexcept nogil
    cdef int64_t _take_pinned(self, int64_t node, int64_t* pinned, Py_ssize_t* n_pinned) noexcept nogil
    cdef void _find_splits(self, const int64_t* nodes, const int64_t* slots, Py_ssize_t n) noexcept nogil
