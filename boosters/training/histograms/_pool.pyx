"""Histogram pool (RFC-0007): fixed slots allocated once, LRU eviction, pinning.

Slots are rows of one (cache_size, total_bins, 2) float64 array (quantized training:
(cache_size, total_bins) packed int64). Training nodes map to slots; when every slot is
taken, the least recently used unpinned slot is evicted (timestamp scan,
O(cache_size)). The grower pins a parent's slot while it moves the parent's mapping to
its larger child and builds the smaller child, so the parent histogram cannot be
evicted mid-subtraction.

Identity mode (cache_size >= nodes in a tree): slot == node id, no mapping and no
eviction; a per-tree epoch marks which slots were built for the current tree.

The grower calls the C-level methods (slot_of, take, move, drop, set_pinned) once per
node, without the GIL; boosters._testing.kernels has them with argument checks, for
tests.
"""

import numpy as np


cdef class HistogramPool:
    def __init__(self, Py_ssize_t cache_size, Py_ssize_t total_bins, Py_ssize_t max_nodes, bint quantized=False):
        if cache_size < 2:
            raise ValueError(f"cache_size must be >= 2 (a parent and its child), got {cache_size}")
        if max_nodes < 1:
            raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
        self.identity = cache_size >= max_nodes
        self.n_slots = max_nodes if self.identity else cache_size
        self.max_nodes = max_nodes
        # full precision: (sum_grad, sum_hess) float64 per bin; quantized: one packed int64
        if quantized:
            self.data = np.zeros((self.n_slots, total_bins), dtype=np.int64)
        else:
            self.data = np.zeros((self.n_slots, total_bins, 2), dtype=np.float64)
        self.slot_epoch = np.zeros(self.n_slots, dtype=np.int64)
        self.epoch = 1
        self.slot_node = np.empty(self.n_slots, dtype=np.int64)
        self.node_slot_ = np.empty(max_nodes, dtype=np.int64)
        self.last_used = np.zeros(self.n_slots, dtype=np.int64)
        self.pinned = np.zeros(self.n_slots, dtype=np.uint8)
        self.free_slots = np.empty(self.n_slots, dtype=np.int64)
        self.clock = 0
        self.n_evictions = 0
        self._forget()

    cdef void _forget(self) noexcept nogil:
        cdef Py_ssize_t s
        for s in range(self.max_nodes):
            self.node_slot_[s] = -1
        for s in range(self.n_slots):
            self.slot_node[s] = -1
            self.pinned[s] = 0
            self.free_slots[s] = self.n_slots - 1 - s
        self.n_free = self.n_slots

    def reset(self):
        """Forget every mapping: a new tree starts."""
        self.start_tree()

    cdef void start_tree(self) noexcept nogil:
        """reset(), for the growth loop."""
        if self.identity:
            self.epoch += 1
        else:
            self._forget()

    cdef Py_ssize_t slot_of(self, Py_ssize_t node) noexcept nogil:
        """Slot holding `node`'s histogram (marked used), or -1 if it was never built or
        was evicted."""
        cdef Py_ssize_t slot
        if self.identity:
            return node if self.slot_epoch[node] == self.epoch else -1
        slot = self.node_slot_[node]
        if slot >= 0:
            self.clock += 1
            self.last_used[slot] = self.clock
        return slot

    cdef Py_ssize_t take(self, Py_ssize_t node, bint* hit) noexcept nogil:  # hit: OUT
        """The slot for `node`; hit[0] tells whether it already holds the histogram, else
        the caller must (re)build it there. Evicts the least recently used unpinned slot
        when none is free; -1 when every slot is pinned."""
        cdef Py_ssize_t slot, old
        if self.identity:
            hit[0] = self.slot_epoch[node] == self.epoch
            self.slot_epoch[node] = self.epoch
            return node
        slot = self.slot_of(node)
        hit[0] = slot >= 0
        if slot >= 0:
            return slot
        slot = self._free_or_victim()
        if slot < 0:
            return -1
        old = self.slot_node[slot]
        if old >= 0:
            self.node_slot_[old] = -1
            self.n_evictions += 1
        self.slot_node[slot] = node
        self.node_slot_[node] = slot
        self.clock += 1
        self.last_used[slot] = self.clock
        return slot

    cdef Py_ssize_t _free_or_victim(self) noexcept nogil:
        cdef Py_ssize_t slot, best = -1
        if self.n_free > 0:
            self.n_free -= 1
            return self.free_slots[self.n_free]
        for slot in range(self.n_slots):
            if not self.pinned[slot] and (best < 0 or self.last_used[slot] < self.last_used[best]):
                best = slot
        return best  # -1: every slot is pinned

    cdef Py_ssize_t move(self, Py_ssize_t from_node, Py_ssize_t to_node) noexcept nogil:
        """Hand `from_node`'s slot (it must hold one) to `to_node`: the larger child takes
        over its parent's histogram, subtracted in place. Identity mode: slots cannot
        move, `to_node` gets its own slot and the caller writes the difference there."""
        cdef Py_ssize_t slot, stale
        if self.identity:
            self.slot_epoch[to_node] = self.epoch
            return to_node
        slot = self.node_slot_[from_node]
        self.node_slot_[from_node] = -1
        stale = self.node_slot_[to_node]
        if stale >= 0:
            self.slot_node[stale] = -1
            self.free_slots[self.n_free] = stale
            self.n_free += 1
        self.slot_node[slot] = to_node
        self.node_slot_[to_node] = slot
        self.clock += 1
        self.last_used[slot] = self.clock
        return slot

    cdef void drop(self, Py_ssize_t node) noexcept nogil:
        """Free `node`'s slot: the node will never be split, its histogram is dead."""
        cdef Py_ssize_t slot
        if self.identity:
            return
        slot = self.node_slot_[node]
        if slot >= 0:
            self.node_slot_[node] = -1
            self.slot_node[slot] = -1
            self.pinned[slot] = 0
            self.free_slots[self.n_free] = slot
            self.n_free += 1

    cdef void set_pinned(self, Py_ssize_t slot, bint pinned) noexcept nogil:
        if not self.identity:
            self.pinned[slot] = pinned
