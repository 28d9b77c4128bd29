from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t


cdef class NodeConstraints:
    cdef Py_ssize_t n_feat                     # features the split finder scans (positions j)
    cdef const int32_t[::1] features           # position -> feature id
    cdef int32_t[::1] position                 # feature id -> position (-1: not scanned)
    cdef uint64_t seed, tree
    cdef double l1, l2
    # column sampling
    cdef double bytree, bylevel, bynode
    cdef bint sampling                         # some fraction below 1
    cdef int32_t[::1] tree_set                 # positions; the tree's are the first n_tree
    cdef Py_ssize_t n_tree
    cdef int32_t[::1] drawn                    # scratch: one node's level / node sample
    # interaction constraints
    cdef bint interactions
    cdef const uint8_t[:, ::1] member          # (groups, feature ids): the groups
    cdef const int32_t[::1] group_start        # group k's features: group_features[start[k]:start[k + 1]]
    cdef const int32_t[::1] group_features
    cdef int32_t[::1] path                     # scratch: a node's path features
    # monotone constraints
    cdef readonly bint monotone
    cdef readonly object direction             # int8 per feature id
    cdef const int8_t[::1] direction_v
    # per node (the growth loop's node ids)
    cdef int32_t[::1] parent, split_feature
    cdef readonly double[::1] lower, upper     # weight bounds
    # per find_best batch: what the split finder reads
    cdef readonly object allowed               # (max_batch, n_feat) uint8
    cdef readonly object bounds                # (max_batch, 2) float64
    cdef uint8_t[:, ::1] allowed_v
    cdef double[:, ::1] bounds_v
    cdef uint8_t[::1] inter                    # scratch: features a node's interactions allow

    cdef void start_tree(self, uint64_t tree_index) noexcept nogil
    cdef void split(self, Py_ssize_t node, Py_ssize_t left, Py_ssize_t right, int32_t feature,
                    double left_g, double left_h, double right_g, double right_h) noexcept nogil
    cdef void prepare(self, const int64_t* nodes, Py_ssize_t n, const int32_t* depth) noexcept nogil
    cdef double clamp_weight(self, Py_ssize_t node, double w) noexcept nogil
    cdef Py_ssize_t _sample(self, uint64_t domain, uint64_t index, Py_ssize_t n, double fraction) noexcept nogil
    cdef void _allow_interactions(self, Py_ssize_t node, uint8_t* row) noexcept nogil
