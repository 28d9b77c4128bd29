"""Row-wise multi-column histogram kernels and the layout choice."""

import numpy as np
import pytest

import boosters as bst
from boosters.bench.datasets import make_friedman
from boosters._testing.kernels import build_nodes, node_rows, quantize_gradients, split, unpack
from boosters.training.partition._partition import RowPartitioner
from boosters.training.histograms._build import FloatHistogramBuilder, QuantizedHistogramBuilder
from boosters.training.histograms._quantize import max_levels
from boosters.training.histograms.layout import MAX_ROWWISE_COLUMNS, choose_layout

from support.naive import naive_histogram, random_binned, random_gradients
from support.tree_compare import assert_same_trees

N_BINS = [256, 3, 17, 300, 2, 64, 1000, 40]  # uint8 columns row-wise, uint16 ones column-wise


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    n = 70_000  # > 2 x 16384 rows: several row blocks
    binned = random_binned(rng, n, N_BINS)
    gh = random_gradients(rng, n)
    packed = np.empty(n, dtype=np.int32)
    quantize_gradients(gh, packed, max_levels(n, 16), 0, 0, 1)
    part = RowPartitioner(binned, 8, 1)
    split(part, 0, 0, 100, False, 1, 2)   # two big gathered nodes
    split(part, 2, 5, 20, True, 3, 4)     # and two smaller ones
    return binned, gh, packed, part


def build(binned, part, nodes, gh=None, packed=None, layout="row", threads=1, one_batch=False, prefetch=True):
    """Pool with nodes[i]'s histogram in slot nodes[i]: one build call per node, or all
    in one call (then the nodes must have disjoint row ranges, as a tree level does)."""
    batches = [nodes] if one_batch else [[n] for n in nodes]
    quantized = packed is not None
    n_slots = max(nodes) + 1  # slot = node id
    pool = (np.full((n_slots, binned.total_bins), -1, np.int64) if quantized
            else np.full((n_slots, binned.total_bins, 2), np.nan))
    if quantized:
        builder = QuantizedHistogramBuilder(binned, pool, None, threads, prefetch, 64, layout)
        builder.set_quantized(packed)
    else:
        builder = FloatHistogramBuilder(binned, pool, None, threads, prefetch, 64, layout)
        builder.set_gradients(gh)
    assert builder.rowwise == (layout == "row")
    part.n_threads = threads
    for batch in batches:
        build_nodes(builder, batch, part, batch)
    return pool


def test_overlapping_nodes_in_one_batch_are_rejected(setup):
    binned, gh, _, part = setup
    builder = FloatHistogramBuilder(binned, np.zeros((8, binned.total_bins, 2)), None, 1, True, 64, "column")
    builder.set_gradients(gh)
    with pytest.raises(ValueError, match="disjoint"):
        build_nodes(builder, [0, 1], part, [0, 1])  # the root and its child
    build_nodes(builder, [3, 4, 1], part, [3, 4, 1])  # disjoint: fine


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_rowwise_float_histograms_match_naive(setup, threads):
    binned, gh, _, part = setup
    pool = build(binned, part, [0, 1, 3, 4], gh=gh, threads=threads)
    for node in (0, 1, 3, 4):
        np.testing.assert_allclose(pool[node], naive_histogram(binned, gh, node_rows(part, node)), rtol=1e-12, atol=1e-9)


def test_rowwise_float_histograms_do_not_depend_on_threads(setup):
    binned, gh, _, part = setup
    one = build(binned, part, [0, 1, 3, 4], gh=gh, threads=1)
    for threads in (2, 3, 4):
        np.testing.assert_array_equal(build(binned, part, [0, 1, 3, 4], gh=gh, threads=threads), one)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_rowwise_packed_histograms_equal_column_wise_exactly(setup, threads):
    binned, _, packed, part = setup
    nodes = [0, 1, 3, 4]  # node 2 was split: its rows are 3's and 4's
    rows = build(binned, part, nodes, packed=packed, threads=threads)
    cols = build(binned, part, nodes, packed=packed, layout="column", threads=1)
    np.testing.assert_array_equal(rows[nodes], cols[nodes])
    g, h = unpack(rows[1])
    q_g, q_h = unpack(packed)
    for f in range(binned.n_features):  # every column sums to the node's quantized total
        lo, hi = binned.hist_offsets[f], binned.hist_offsets[f + 1]
        assert g[lo:hi].sum() == q_g[node_rows(part, 1)].sum() and h[lo:hi].sum() == q_h[node_rows(part, 1)].sum()


def test_batch_of_many_small_nodes_builds_like_one_at_a_time():
    rng = np.random.default_rng(1)
    binned = random_binned(rng, 5000, [256, 7, 30])
    gh = random_gradients(rng, 5000)
    part = RowPartitioner(binned, 64, 2)
    level, next_id = [0], 1
    for depth in range(4):  # a full depth-4 level of small nodes
        new = []
        for node in level:
            split(part, node, depth % 3, 3 + depth, depth % 2 == 0, next_id, next_id + 1)
            new += [next_id, next_id + 1]
            next_id += 2
        level = new
    together = build(binned, part, level, gh=gh, threads=2, one_batch=True)
    for node in level:
        alone = build(binned, part, [node], gh=gh, threads=1)
        np.testing.assert_array_equal(together[node], alone[node])


def test_layout_choice():
    rng = np.random.default_rng(2)
    narrow = random_binned(rng, 100, [256] * 10 + [1000])
    wide = random_binned(rng, 100, [16] * (MAX_ROWWISE_COLUMNS + 1))
    all_u16 = random_binned(rng, 100, [1000, 2000])
    assert choose_layout(narrow, np.arange(11), "auto") == "row"
    assert choose_layout(wide, np.arange(wide.n_columns), "auto") == "column"
    assert choose_layout(all_u16, np.arange(2), "auto") == "column"
    assert choose_layout(wide, np.arange(wide.n_columns), "row") == "row"
    assert choose_layout(narrow, np.arange(11), "column") == "column"


def test_quantized_models_are_identical_in_both_layouts():
    X, y = make_friedman(40_000, 10, seed=3)
    models = [bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(
        n_estimators=10, histogram_mode="i16", histogram_layout=layout, growth_strategy="leafwise",
        max_depth=None, cache_size=31), n_threads=2) for layout in ("row", "column")]
    assert len(models[0].trees) == 10
    assert_same_trees(models[0], models[1])


def test_float_models_agree_across_layouts():
    X, y = make_friedman(40_000, 10, seed=4)
    models = [bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(
        n_estimators=10, histogram_mode="f64", histogram_layout=layout), n_threads=2) for layout in ("row", "column")]
    assert len(models[0].trees) == len(models[1].trees) == 10
    for a, b in zip(models[0].trees, models[1].trees):
        np.testing.assert_array_equal(a.split_feature, b.split_feature)
        np.testing.assert_array_equal(a.threshold_bin, b.threshold_bin)
    np.testing.assert_allclose(models[0].predict(X), models[1].predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("quantized", [False, True])
def test_rowwise_prefetch_on_and_off_identical(setup, quantized):
    binned, gh, packed, part = setup
    kwargs = {"packed": packed} if quantized else {"gh": gh}
    on = build(binned, part, [0, 1, 3, 4], prefetch=True, threads=2, **kwargs)
    off = build(binned, part, [0, 1, 3, 4], prefetch=False, threads=2, **kwargs)
    np.testing.assert_array_equal(on, off)
