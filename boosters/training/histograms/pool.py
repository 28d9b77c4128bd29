"""Histogram pool (RFC-0007): fixed slots allocated once, LRU eviction, pinning.

Slots are rows of one (cache_size, total_bins, 2) float64 array (quantized training:
(cache_size, total_bins) packed int64). Training nodes map
to slots; when every slot is taken, the least recently used unpinned slot is evicted
(timestamp scan, O(cache_size)). The grower pins a parent's slot while it moves the
parent's mapping to its larger child and builds the smaller child, so the parent
histogram cannot be evicted mid-subtraction.

Identity mode (cache_size >= nodes in a tree): slot == node id, no mapping and no
eviction; a per-tree epoch marks which slots were built for the current tree.
"""

from __future__ import annotations

import numpy as np


class HistogramPool:
    def __init__(self, cache_size: int, total_bins: int, max_nodes: int, quantized: bool = False):
        if cache_size < 2:
            raise ValueError(f"cache_size must be >= 2 (a parent and its child), got {cache_size}")
        self.identity = cache_size >= max_nodes
        self.n_slots = max_nodes if self.identity else cache_size
        # full precision: (sum_grad, sum_hess) float64 per bin; quantized: one packed int64
        shape = (self.n_slots, total_bins) if quantized else (self.n_slots, total_bins, 2)
        self.data = np.zeros(shape, dtype=np.int64 if quantized else np.float64)
        self.slot_epoch = np.zeros(self.n_slots, dtype=np.int64)  # identity mode
        self.epoch = 1
        # LRU mode bookkeeping (plain lists: a handful of Python ops per node)
        self.slot_node = [-1] * self.n_slots
        self.node_slot: dict[int, int] = {}
        self.last_used = [0] * self.n_slots
        self.pinned = [False] * self.n_slots
        self.free = list(range(self.n_slots - 1, -1, -1))  # unmapped slots, lowest on top
        self.clock = 0
        self.n_evictions = 0

    def reset(self) -> None:
        """Forget every mapping: a new tree starts."""
        if self.identity:
            self.epoch += 1
            return
        self.slot_node = [-1] * self.n_slots
        self.node_slot.clear()
        self.pinned = [False] * self.n_slots
        self.free = list(range(self.n_slots - 1, -1, -1))

    def _touch(self, slot: int) -> None:
        self.clock += 1
        self.last_used[slot] = self.clock

    def get(self, node: int) -> int | None:
        """Slot holding `node`'s histogram, or None if it was never built or was evicted."""
        if self.identity:
            return node if self.slot_epoch[node] == self.epoch else None
        slot = self.node_slot.get(node)
        if slot is not None:
            self._touch(slot)
        return slot

    def acquire(self, node: int) -> tuple[int, bool]:
        """(slot, hit): hit means the slot already holds `node`'s histogram; on a miss the
        caller must (re)build it into the returned slot."""
        if self.identity:
            hit = self.slot_epoch[node] == self.epoch
            self.slot_epoch[node] = self.epoch
            return node, bool(hit)
        slot = self.node_slot.get(node)
        if slot is not None:
            self._touch(slot)
            return slot, True
        slot = self._free_or_victim()
        old = self.slot_node[slot]
        if old >= 0:
            del self.node_slot[old]
            self.n_evictions += 1
        self.slot_node[slot] = node
        self.node_slot[node] = slot
        self._touch(slot)
        return slot, False

    def _free_or_victim(self) -> int:
        if self.free:
            return self.free.pop()
        best, best_time = -1, None
        for slot in range(self.n_slots):
            if not self.pinned[slot] and (best_time is None or self.last_used[slot] < best_time):
                best, best_time = slot, self.last_used[slot]
        if best < 0:
            raise RuntimeError("histogram pool: every slot is pinned")
        return best

    def move_mapping(self, from_node: int, to_node: int) -> int:
        """Hand `from_node`'s slot to `to_node` (the larger child takes over its parent's
        histogram, subtracted in place). Returns the slot now owned by `to_node`.

        In identity mode slots cannot move: `to_node` gets its own slot and the caller
        writes the difference there.
        """
        if self.identity:
            self.slot_epoch[to_node] = self.epoch
            return to_node
        slot = self.node_slot.pop(from_node)
        stale = self.node_slot.pop(to_node, None)
        if stale is not None:
            self.slot_node[stale] = -1
            self.free.append(stale)
        self.slot_node[slot] = to_node
        self.node_slot[to_node] = slot
        self._touch(slot)
        return slot

    def release(self, node: int) -> None:
        """Free `node`'s slot: the node will never be split, its histogram is dead."""
        if self.identity:
            return
        slot = self.node_slot.pop(node, None)
        if slot is not None:
            self.slot_node[slot] = -1
            self.pinned[slot] = False
            self.free.append(slot)

    def pin(self, slot: int) -> None:
        if not self.identity:
            self.pinned[slot] = True

    def unpin(self, slot: int) -> None:
        if not self.identity:
            self.pinned[slot] = False

    def histogram(self, slot: int) -> np.ndarray:
        """The view of one slot: (total_bins, 2) float64, or (total_bins,) packed int64."""
        return self.data[slot]
