"""Quantized histograms in 16-, 32- or 64-bit bins, chosen per node by its row count.

A node of n rows with values of at most L in magnitude has sums of at most n * L: its
bins hold 8 bits per sum (int16 words) when n * L < 2**7 (i8 values only), 16 bits
(int32) when n * L < 2**15, else 32 bits (int64). Every width must give the exact
integer sums of the naive reference, and training must grow the same trees whatever
the widths.
"""

import numpy as np
import pytest

import boosters as bst
from boosters._testing.kernels import (build_histogram_packed, build_nodes, column_totals, find_best_splits, node_rows,
                                       quantize_gradients, slot_sums, split, subtract_slots, unpack)
from boosters.training.growth import grower as grower_module
from boosters.training.histograms._build import QuantizedHistogramBuilder
from boosters.training.histograms._quantize import max_levels
from boosters.training.partition._partition import RowPartitioner
from boosters.training.split._split import QuantizedSplitFinder

from support.naive import binned_from_dense, naive_packed_histogram, random_gradients

N_BINS = [256, 3, 17, 300, 2]  # uint8 and uint16 columns: row-wise and column-wise kernels


def expected_bits(n_rows, levels, value_bits):
    bound = n_rows * levels
    if value_bits == 8 and bound < 2**7:
        return 8
    return 16 if bound < 2**15 else 32


def tree_of_sizes(rng, sizes, value_bits, levels, split=True):
    """A binned matrix whose first column sends exactly sizes[k] rows to bin k + 1 (rows
    shuffled), quantized gradients with at most `levels` per value, and a partition
    where node 2k + 1 holds bin k + 1's rows (see split_off)."""
    n = sum(sizes)
    selector = rng.permutation(np.repeat(np.arange(1, len(sizes) + 1), sizes))
    others = [rng.integers(0, b, size=n) for b in N_BINS]
    binned = binned_from_dense(np.column_stack([selector] + others), [len(sizes) + 1] + N_BINS)
    packed = np.empty(n, dtype=np.int32 if value_bits == 16 else np.int16)
    quantize_gradients(random_gradients(rng, n), packed, levels, 0, 0, 1)
    part = RowPartitioner(binned, 2 * len(sizes) + 1, 1)
    if split:
        for k in range(len(sizes) - 1):
            split_off(part, k)
    return binned, packed, part


def split_off(part, k):
    """Step k: node 2k (the root, then the previous right child) splits at bin k + 1:
    node 2k + 1 gets bin k + 1's rows, node 2k + 2 the rest."""
    split(part, 2 * k, 0, k + 1, False, 2 * k + 1, 2 * k + 2)


@pytest.mark.parametrize("value_bits, sum_bits", [(16, 16), (16, 32), (8, 8), (8, 16), (8, 32)])
@pytest.mark.parametrize("threads", [1, 2])
def test_kernels_in_every_width_equal_the_naive_packed_histogram(value_bits, sum_bits, threads):
    rng = np.random.default_rng(0)
    levels = 3
    n = 30 if sum_bits == 8 else 9000  # 30 * 3 < 2**7; 9000 * 3 < 2**15
    binned, packed, _ = tree_of_sizes(rng, [n // 2, n - n // 2], value_bits, levels)
    rows = np.sort(rng.choice(n, n // 3, replace=False)).astype(np.uint32)
    dtype = {8: np.int16, 16: np.int32, 32: np.int64}[sum_bits]
    for subset in (None, rows):
        hist = np.full(binned.total_bins, -1, dtype=dtype)
        build_histogram_packed(binned, packed, hist, rows=subset, n_threads=threads)
        g, h = unpack(hist)
        want_g, want_h = naive_packed_histogram(binned, packed, subset)
        np.testing.assert_array_equal(g, want_g)
        np.testing.assert_array_equal(h, want_h)


def test_kernel_rejects_bins_narrower_than_the_values():
    rng = np.random.default_rng(0)
    binned, packed, _ = tree_of_sizes(rng, [10, 10], 16, 3)
    with pytest.raises(ValueError, match="at least as many bits"):
        build_histogram_packed(binned, packed, np.zeros(binned.total_bins, np.int16))
    with pytest.raises(ValueError, match="int64, int32 or int16"):
        build_histogram_packed(binned, packed, np.zeros(binned.total_bins, np.uint32))


# i16 values with L = 100: 16-bit sums up to 327 rows. i8 with L = 10: 8-bit sums up to
# 12 rows, 16-bit up to 3276. Each list has a node at each width's limit and one past it.
CASES = [(16, 100, [327, 328, 5, 4000]), (8, 10, [12, 13, 3276, 3277, 1, 500])]


@pytest.mark.parametrize("value_bits, levels, sizes", CASES)
@pytest.mark.parametrize("layout", ["row", "column"])
@pytest.mark.parametrize("threads", [1, 2])
def test_builder_picks_each_nodes_width_and_sums_exactly(value_bits, levels, sizes, layout, threads):
    rng = np.random.default_rng(1)
    binned, packed, part = tree_of_sizes(rng, sizes, value_bits, levels)
    part.n_threads = threads
    nodes = [2 * k + 1 for k in range(len(sizes))][:-1] + [2 * len(sizes) - 2]
    pool = np.zeros((max(nodes) + 1, binned.total_bins), np.int64)
    builder = QuantizedHistogramBuilder(binned, pool, None, threads, True, 64, layout)
    builder.set_quantized(packed, levels)
    for batch in ([nodes[0]], nodes[1:]):  # one node alone, then a batch (disjoint rows)
        build_nodes(builder, batch, part, batch)
    for node, size in zip(nodes, sizes):
        rows = node_rows(part, node)
        assert len(rows) == size
        assert builder.sum_bits[node] == expected_bits(size, levels, value_bits)
        want_g, want_h = naive_packed_histogram(binned, packed, rows)
        g, h = slot_sums(builder, node)
        np.testing.assert_array_equal(g, want_g)
        np.testing.assert_array_equal(h, want_h)
    assert set(builder.sum_bits[nodes]) == ({16, 32} if value_bits == 16 else {8, 16, 32})


@pytest.mark.parametrize("value_bits, levels, sizes", CASES)
@pytest.mark.parametrize("in_place", [True, False])
def test_subtraction_across_widths_is_exact(value_bits, levels, sizes, in_place):
    """parent - child = sibling, for every (parent, child, sibling) width combination the
    partition offers: the sibling takes its own width."""
    rng = np.random.default_rng(2)
    binned, packed, part = tree_of_sizes(rng, sizes, value_bits, levels, split=False)
    n_nodes = 2 * len(sizes) - 1
    pool = np.zeros((n_nodes + 1, binned.total_bins), np.int64)
    scratch = n_nodes  # a free slot
    builder = QuantizedHistogramBuilder(binned, pool, None, 1, True, 64, "row")
    builder.set_quantized(packed, levels)
    build_nodes(builder, [0], part, [0])
    parent_slot = 0
    for k in range(len(sizes) - 1):
        split_off(part, k)
        small, large = 2 * k + 1, 2 * k + 2
        build_nodes(builder, [small], part, [small])
        out = parent_slot if in_place else scratch
        subtract_slots(builder, [parent_slot], [small], [out])
        n_large = len(node_rows(part, large))
        assert builder.sum_bits[out] == expected_bits(n_large, levels, value_bits)
        want_g, want_h = naive_packed_histogram(binned, packed, node_rows(part, large))
        g, h = slot_sums(builder, out)
        np.testing.assert_array_equal(g, want_g)
        np.testing.assert_array_equal(h, want_h)
        if not in_place:  # walk on from a histogram derived into the child's own slot
            subtract_slots(builder, [parent_slot], [small], [large])
            parent_slot = large


def test_subtraction_rejects_a_child_with_more_rows_than_its_parent():
    rng = np.random.default_rng(3)
    binned, packed, part = tree_of_sizes(rng, [100, 200], 16, 3)
    builder = QuantizedHistogramBuilder(binned, np.zeros((3, binned.total_bins), np.int64), None, 1, True, 64, "row")
    builder.set_quantized(packed, 3)
    build_nodes(builder, [1, 2], part, [1, 2])
    with pytest.raises(ValueError, match="more rows"):
        subtract_slots(builder, [1], [2], [0])


@pytest.mark.parametrize("value_bits", [16, 8])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_no_overflow_at_each_widths_row_limit(value_bits, sign):
    """Every row at the extreme value, all in one bin: a node at the row limit of a
    width fills that width exactly; one row more moves it to the next width."""
    levels = 7 if value_bits == 8 else 1000
    limits = ([(2**7 - 1) // levels] if value_bits == 8 else []) + [(2**15 - 1) // levels]
    for limit in limits:
        for n in (limit, limit + 1):
            binned = binned_from_dense(np.ones((n, 1), np.int64), [3])
            gh = np.column_stack([np.full(n, sign * 2.5), np.full(n, 0.75)]).astype(np.float32)
            packed = np.empty(n, dtype=np.int32 if value_bits == 16 else np.int16)
            quantize_gradients(gh, packed, levels, 0, 0, 1)
            builder = QuantizedHistogramBuilder(binned, np.zeros((1, 3), np.int64), None, 1, True, 64, "column")
            builder.set_quantized(packed, levels)
            build_nodes(builder, [0], RowPartitioner(binned, 1, 1), [0])
            assert builder.sum_bits[0] == expected_bits(n, levels, value_bits)
            g, h = slot_sums(builder, 0)
            assert g[1] == sign * n * levels and h[1] == n * levels
            assert g[0] == g[2] == h[0] == h[2] == 0


def test_set_quantized_checks_levels():
    rng = np.random.default_rng(4)
    binned, packed, _ = tree_of_sizes(rng, [10, 10], 8, 3)
    builder = QuantizedHistogramBuilder(binned, np.zeros((1, binned.total_bins), np.int64), None, 1, True, 64, "row")
    with pytest.raises(ValueError, match="levels"):
        builder.set_quantized(packed, 128)  # int16 pairs hold at most 127
    with pytest.raises(ValueError, match="levels"):
        builder.set_quantized(packed, 0)


def test_split_finder_reads_every_width_the_same():
    """The same node histogram in 64-bit words and in its narrow width: equal best splits
    and node totals."""
    rng = np.random.default_rng(5)
    binned, packed, part = tree_of_sizes(rng, [300, 700], 16, 100)
    node = 1  # 300 rows x 100 < 2**15: 16-bit sums
    wide, narrow = (np.zeros((2, binned.total_bins), np.int64) for _ in range(2))
    for pool, levels in ((wide, None), (narrow, 100)):
        builder = QuantizedHistogramBuilder(binned, pool, None, 1, True, 64, "row")
        builder.set_quantized(packed, levels)
        build_nodes(builder, [1], part, [node])
        if levels is None:
            wide_bits = builder.sum_bits.copy()
        else:
            narrow_bits = builder.sum_bits.copy()
    assert wide_bits[1] == 32 and narrow_bits[1] == 16
    params = dict(l1=0.0, l2=1.0, min_child_weight=1e-3, min_gain_to_split=0.0, min_samples_leaf=5)
    features = np.arange(binned.n_features)
    results = []
    for pool, bits in ((wide, wide_bits), (narrow, narrow_bits)):
        finder = QuantizedSplitFinder(pool, binned.hist_offsets, binned.n_bins, features, sum_bits=bits, **params)
        finder.set_scales(100.0, 100.0)
        G, H = column_totals(finder, 1, 0, int(binned.n_bins[0]))
        results.append(((G, H), find_best_splits(finder, [1], [G], [H], [300])))
    assert results[0] == results[1]
    assert results[0][1][0] is not None


def test_split_finder_checks_sum_bits():
    pool = np.zeros((2, 4), np.int64)
    with pytest.raises(ValueError, match="sum_bits"):
        QuantizedSplitFinder(pool, [0], [4], [0], l1=0, l2=1, min_child_weight=0, min_gain_to_split=0,
                    min_samples_leaf=1, sum_bits=np.array([32, 12], np.uint8))


_grow = grower_module.TreeGrower.grow_rounds


def _grow_with_64_bit_bins(self, first_round, n_rounds):
    """TreeGrower.grow_rounds with the builder's bins sized for the word limit, not the
    levels: every node's bins are 64-bit (the quantizer keeps its levels)."""
    self.builder.set_quantized(self.packed, None)
    return _grow(self, first_round, n_rounds)


@pytest.mark.parametrize("mode, levels", [("i16", 4), ("i8", 2)])
@pytest.mark.parametrize("layout", ["row", "column"])
def test_training_grows_the_same_trees_in_narrow_bins(monkeypatch, mode, levels, layout):
    """Integer sums are exact in any width: narrow bins change the speed, never a tree."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(20_000, 8))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) - 2 * np.nan_to_num(X[:, 1]) ** 2 + rng.normal(size=len(X))
    config = bst.GBDTConfig(n_estimators=15, growth_strategy="leafwise", max_depth=None, n_leaves=31,
                            min_samples_leaf=5, histogram_mode=mode, quantization_levels=levels,
                            histogram_layout=layout, cache_size=8)
    grow, widths = grower_module.TreeGrower.grow_rounds, set()

    def grow_and_record_widths(self, first_round, n_rounds):
        rounds = grow(self, first_round, 1)  # one tree at a time: the widths of each
        assert self.levels == levels
        widths.update(self.builder.sum_bits.tolist())
        return rounds

    monkeypatch.setattr(grower_module.TreeGrower, "grow_rounds", grow_and_record_widths)
    narrow = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2)
    assert min(widths) == (16 if mode == "i16" else 8)  # narrow bins were used
    monkeypatch.setattr(grower_module.TreeGrower, "grow_rounds", _grow_with_64_bit_bins)
    wide = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2)
    assert len(narrow.trees) == len(wide.trees) == 15
    for a, b in zip(narrow.trees, wide.trees):
        for name in ("split_feature", "threshold_bin", "default_left", "value", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert len(narrow.trees[0].value) > 40  # real trees, not stumps


def test_quantization_levels_config():
    assert bst.GBDTConfig().quantization_levels is None
    assert bst.GBDTConfig(quantization_levels=4).quantization_levels == 4
    with pytest.raises(ValueError, match="quantization_levels"):
        bst.GBDTConfig(quantization_levels=0)
    with pytest.raises(ValueError, match="quantization_levels"):
        bst.GBDTConfig(quantization_levels=40_000)
    with pytest.raises(TypeError, match="quantization_levels"):
        bst.GBDTConfig(quantization_levels=2.5)
    # the levels used: the request, within what the values and the row count allow
    assert max_levels(1000, 16, 4) == 4
    assert max_levels(1000, 8, 1000) == 127
    assert max_levels(10**6, 16, 30_000) == 2147
    assert max_levels(10**6, 16) == 2147
