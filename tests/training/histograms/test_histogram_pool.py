"""Histogram pool: LRU eviction order, pinning, reuse, move_mapping, identity mode."""

import numpy as np
import pytest

from boosters._testing.kernels import (pool_acquire, pool_get, pool_histogram, pool_mapping, pool_move, pool_pin,
                                       pool_release)
from boosters.training.histograms._pool import HistogramPool


def test_miss_then_hit_reuses_the_slot():
    pool = HistogramPool(cache_size=3, total_bins=4, max_nodes=100)
    slot, hit = pool_acquire(pool, 7)
    assert not hit
    pool_histogram(pool, slot)[:] = 1.5
    again, hit = pool_acquire(pool, 7)
    assert hit and again == slot
    assert np.all(pool_histogram(pool, again) == 1.5)


def test_least_recently_used_slot_is_evicted_first():
    pool = HistogramPool(cache_size=3, total_bins=2, max_nodes=100)
    slots = {n: pool_acquire(pool, n)[0] for n in (0, 1, 2)}
    pool_get(pool, 0)  # use order now: 1, 2, 0
    slot, hit = pool_acquire(pool, 3)
    assert not hit and slot == slots[1]  # 1 was the least recently used
    slot, _ = pool_acquire(pool, 4)  # use order: 2, 0, 3
    assert slot == slots[2]
    assert set(pool_mapping(pool)) == {0, 3, 4}
    assert pool_get(pool, 1) is None and pool_get(pool, 2) is None
    assert pool.n_evictions == 2


def test_pinned_slot_is_never_evicted():
    pool = HistogramPool(cache_size=2, total_bins=2, max_nodes=100)
    s0, _ = pool_acquire(pool, 0)
    pool_acquire(pool, 1)
    pool_pin(pool, s0)
    for node in (2, 3, 4):
        slot, _ = pool_acquire(pool, node)
        assert slot != s0
    assert pool_get(pool, 0) == s0
    pool_pin(pool, s0, False)
    pool_acquire(pool, 5)
    pool_acquire(pool, 6)
    assert pool_get(pool, 0) is None


def test_all_pinned_raises():
    pool = HistogramPool(cache_size=2, total_bins=2, max_nodes=100)
    for node in (0, 1):
        pool_pin(pool, pool_acquire(pool, node)[0])
    with pytest.raises(RuntimeError, match="pinned"):
        pool_acquire(pool, 2)


def test_move_mapping_hands_the_parent_slot_to_the_child():
    pool = HistogramPool(cache_size=4, total_bins=2, max_nodes=100)
    parent, _ = pool_acquire(pool, 0)
    moved = pool_move(pool, 0, 2)
    assert moved == parent
    assert pool_get(pool, 0) is None and pool_get(pool, 2) == parent
    slot, hit = pool_acquire(pool, 2)
    assert hit and slot == parent


def test_release_frees_a_slot_without_counting_an_eviction():
    pool = HistogramPool(cache_size=2, total_bins=2, max_nodes=100)
    s0, _ = pool_acquire(pool, 0)
    pool_acquire(pool, 1)
    pool_release(pool, 0)
    slot, hit = pool_acquire(pool, 2)
    assert slot == s0 and not hit and pool.n_evictions == 0


def test_reset_forgets_every_node():
    pool = HistogramPool(cache_size=3, total_bins=2, max_nodes=100)
    pool_acquire(pool, 0)
    pool.reset()
    assert pool_get(pool, 0) is None


def test_identity_mode_when_cache_holds_every_node():
    pool = HistogramPool(cache_size=64, total_bins=3, max_nodes=31)
    assert pool.identity and pool.data.shape == (31, 3, 2)
    slot, hit = pool_acquire(pool, 5)
    assert slot == 5 and not hit
    assert pool_acquire(pool, 5) == (5, True)
    assert pool_get(pool, 6) is None
    assert pool_move(pool, 5, 9) == 9 and pool_get(pool, 9) == 9
    pool.reset()  # new tree: epoch bump, no array reset
    assert pool_get(pool, 5) is None and pool_acquire(pool, 5) == (5, False)


def test_lru_mode_when_cache_is_smaller_than_the_tree():
    pool = HistogramPool(cache_size=8, total_bins=3, max_nodes=61)
    assert not pool.identity and pool.data.shape == (8, 3, 2)


def test_cache_size_below_two_is_rejected():
    with pytest.raises(ValueError, match="cache_size"):
        HistogramPool(cache_size=1, total_bins=2, max_nodes=10)
