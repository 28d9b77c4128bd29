from libc.stdint cimport int64_t, uint8_t


cdef class HistogramPool:
    cdef readonly object data
    cdef readonly bint identity
    cdef readonly Py_ssize_t n_slots
    cdef readonly Py_ssize_t max_nodes
    cdef readonly Py_ssize_t n_evictions
    cdef int64_t[::1] slot_epoch    # identity mode: the epoch a node's slot was built in
    cdef int64_t epoch
    cdef int64_t[::1] slot_node     # LRU mode: node held by each slot, -1 if none
    cdef int64_t[::1] node_slot_    # LRU mode: slot of each node, -1 if none
    cdef int64_t[::1] last_used
    cdef uint8_t[::1] pinned
    cdef int64_t[::1] free_slots    # unmapped slots, a stack: lowest on top after reset
    cdef Py_ssize_t n_free
    cdef int64_t clock

    cdef void _forget(self) noexcept nogil
    cdef void start_tree(self) noexcept nogil
    cdef Py_ssize_t _free_or_victim(self) noexcept nogil
    cdef Py_ssize_t slot_of(self, Py_ssize_t node) noexcept nogil
    cdef Py_ssize_t take(self, Py_ssize_t node, bint* hit) noexcept nogil
    cdef Py_ssize_t move(self, Py_ssize_t from_node, Py_ssize_t to_node) noexcept nogil
    cdef void drop(self, Py_ssize_t node) noexcept nogil
    cdef void set_pinned(self, Py_ssize_t slot, bint pinned) noexcept nogil
