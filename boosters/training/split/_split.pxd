from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t


cdef struct SplitParams:
    double l1
    double l2
    double min_child_weight
    double min_gain
    double min_samples_leaf
    double missing_hess_tol   # a missing bin's hessian at most this holds no rows (float64 residue)
    # categorical splits (see scan_categorical)
    int max_onehot_cats
    double cat_smooth
    double cat_l2
    int max_cat_threshold
    double min_data_per_group
    # random_strength: the search's noise (see _noise.pxd); noise_sd 0 is none
    double noise_sd             # the tree's noise scale, on the gain's scale
    uint64_t noise_key          # the node's key (noise_node_key), set per (node, feature) scan


# The best split of one feature, or of a node (feature -1: no valid split).
cdef struct Candidate:
    double gain
    double score            # the key the search maximises: the gain, plus noise under random_strength
    int32_t feature
    int32_t bin             # last value bin going left
    uint8_t default_left
    uint8_t has_missing     # the node had rows with a missing value of this feature
    double left_g
    double left_h
    uint32_t* cat_bits      # categorical split: the bins going left, a bitset (NULL: numeric split)


# An oblivious level's scan of one (node, feature) (SplitFinder.find_level_best): add the
# node's gain of every candidate to `gains`, or (gains NULL) report its split at (bin,
# default_left); for a categorical feature, bin is the category going left alone.
cdef struct LevelScan:
    double* gains
    int32_t bin
    uint8_t default_left


# Monotone constraints on one (node, feature) scan: children's weights are clamped to
# the node's bounds, and on a constrained feature must not break its direction.
cdef struct NodeBounds:
    double lower
    double upper
    int direction           # +1: left child <= right child, -1: >=, 0: no order


# One category of a node in the categorical scan.
cdef struct CategoryBin:
    double key          # the sort key, G / (H + cat_smooth)
    double g
    double h
    double rows         # estimated from the hessian, as LightGBM's cnt
    int32_t bin


cdef class SplitFinder:
    cdef const int64_t[::1] offsets       # per feature: start of its column's histogram
    cdef const int32_t[::1] n_bins        # per feature
    cdef const int32_t[::1] default_bin   # per feature: -1 if stored alone
    cdef const int32_t[::1] value_offset  # per feature: first bundle value of its bins
    cdef readonly Py_ssize_t n_slots, total_bins
    cdef const int32_t[::1] features
    cdef SplitParams params
    cdef public int n_threads
    cdef Py_ssize_t scan_bins             # bins scanned per node (the features' bins summed)
    cdef readonly Py_ssize_t max_batch    # nodes per call at most
    cdef Candidate* per_feature           # (max_batch, features) scan results
    cdef double* parent_scores            # (max_batch,)
    cdef const uint8_t[::1] categorical   # per feature: 1 if categorical
    cdef const int64_t[::1] cat_offset    # per listed feature: its bitset's words in a node's scratch, -1 numeric
    cdef uint32_t[::1] cat_scratch        # (max_batch, cat_node_words): the scans' category bitsets
    cdef readonly Py_ssize_t cat_node_words, max_cat_bins
    cdef CategoryBin* cat_sort            # (cat_threads, max_cat_bins): each thread's categories
    cdef int cat_threads

    cdef uint64_t noise_tree                # random_strength: the tree's key (noise_tree_key)
    cdef void find_best(self, const int64_t* slots, const double* sum_g, const double* sum_h,
                        const double* counts, Py_ssize_t n_nodes, Candidate* out,
                        const int64_t* nodes) noexcept nogil
    cdef void find_level_best(self, const int64_t* slots, const double* sum_g, const double* sum_h,
                              const double* counts, Py_ssize_t n_nodes, Candidate* out,
                              const int64_t* nodes) noexcept nogil
    cdef void set_noise(self, uint64_t seed, uint64_t tree_index, double sd) noexcept nogil
    cdef void _level_sums(self, Py_ssize_t j, const int64_t* slots, const double* sum_g, const double* sum_h,
                          const double* counts, Py_ssize_t n_nodes) noexcept nogil
    cdef void _scan_node(self, Py_ssize_t i, Py_ssize_t j, const int64_t* slots, const double* sum_g,
                         const double* sum_h, const double* counts, Candidate* out,
                         const LevelScan* level) noexcept nogil
    cdef double _level_key(self, double total, uint64_t level_key, Py_ssize_t j, uint64_t counter) noexcept nogil
    cdef double* level_gains              # an oblivious level's gain sums per candidate
    cdef const int64_t[::1] level_offset  # per listed feature: its candidates' start in level_gains
    cdef void begin_tree(self, double root_hess) noexcept nogil
    cdef void totals(self, Py_ssize_t slot, Py_ssize_t start, Py_ssize_t stop, double* g, double* h) noexcept nogil
    cdef void _scan_pair(self, Py_ssize_t k, Py_ssize_t n_feat, const int64_t* slots, const double* sum_g,
                         const double* sum_h, const double* counts, const int64_t* nodes,
                         Candidate* out) noexcept nogil
    cdef void _scan(self, Py_ssize_t slot, int32_t feature, double g, double h, double count, double parent_score,
                    const NodeBounds* bounds, const SplitParams* p, Candidate* out,
                    const LevelScan* level) noexcept nogil
    # per-node constraints of a find_best batch (training/_constraints.pyx fills them)
    cdef bint use_allowed                 # else every feature is allowed
    cdef bint use_bounds                  # else no monotone constraint
    cdef const uint8_t[:, ::1] allowed    # (max_batch, features): node i may split on features[j]
    cdef const double[:, ::1] bounds      # (max_batch, 2): node i's weight bounds
    cdef const int8_t[::1] direction      # per feature id: monotone direction
    cdef bint _bounded(self, Py_ssize_t i, int32_t feature, NodeBounds* out) noexcept nogil
    cdef double _parent_score(self, Py_ssize_t i, double g, double h) noexcept nogil


cdef class FloatSplitFinder(SplitFinder):
    cdef double[:, :, ::1] pool           # (slots, bins, 2) float64


cdef class QuantizedSplitFinder(SplitFinder):
    cdef int64_t[:, ::1] pool             # (slots, bins) packed sums
    cdef const uint8_t[::1] slot_bits     # bits per sum of each slot's words
    cdef double[::1] scales               # (scale_g, scale_h): a unit of grad is worth 1 / scale_g
