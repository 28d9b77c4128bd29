"""Histogram kernels against the naive NumPy reference, plus RFC-0007's test matrix."""

import numpy as np
import pytest

from boosters._testing.kernels import (
    build_histogram_contiguous,
    build_histogram_gathered,
    gather_gradients,
    subtract_histograms,
)

from support.naive import binned_from_dense, naive_histogram, random_binned, random_gradients

N_BINS = [256, 3, 17, 300, 2, 64, 256, 1000]  # uint8 and uint16 features mixed


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    binned = random_binned(rng, 20_000, N_BINS)
    gh = random_gradients(rng, 20_000)
    rows = np.sort(rng.choice(20_000, 7_000, replace=False)).astype(np.uint32)
    return binned, gh, rows


def build_gathered(binned, gh, rows, **kwargs):
    ordered = np.empty((len(rows), 2), dtype=np.float32)
    gather_gradients(gh, rows, ordered)
    hist = np.full((binned.total_bins, 2), np.nan)  # the kernel must overwrite every bin
    build_histogram_gathered(binned, rows, ordered, hist, **kwargs)
    return hist


def build_root(binned, gh, **kwargs):
    hist = np.full((binned.total_bins, 2), np.nan)
    build_histogram_contiguous(binned, gh, hist, **kwargs)
    return hist


def test_gather_matches_fancy_indexing(data):
    _, gh, rows = data
    out = np.empty((len(rows), 2), dtype=np.float32)
    gather_gradients(gh, rows, out, n_threads=2)
    np.testing.assert_array_equal(out, gh[rows])


def test_root_build_equals_naive(data):
    binned, gh, _ = data
    np.testing.assert_array_equal(build_root(binned, gh), naive_histogram(binned, gh))


def test_gathered_build_equals_naive(data):
    binned, gh, rows = data
    np.testing.assert_array_equal(build_gathered(binned, gh, rows), naive_histogram(binned, gh, rows))


def test_contiguous_sub_range(data):
    binned, gh, _ = data
    hist = np.zeros((binned.total_bins, 2))
    build_histogram_contiguous(binned, gh, hist, start=1000, stop=4000)
    np.testing.assert_array_equal(hist, naive_histogram(binned, gh, np.arange(1000, 4000)))


def test_histogram_sum_equals_node_gradient_sum(data):
    binned, gh, rows = data
    hist = build_gathered(binned, gh, rows)
    node_sum = gh[rows].astype(np.float64).sum(axis=0)
    for f in range(binned.n_features):
        lo, hi = binned.hist_offsets[f], binned.hist_offsets[f + 1]
        np.testing.assert_allclose(hist[lo:hi].sum(axis=0), node_sum, rtol=1e-10, atol=1e-9)


def test_parent_minus_child_equals_sibling_built_directly(data):
    binned, gh, rows = data
    rng = np.random.default_rng(1)
    left_mask = rng.random(len(rows)) < 0.3
    parent = build_gathered(binned, gh, rows)
    left = build_gathered(binned, gh, rows[left_mask])
    right_direct = build_gathered(binned, gh, rows[~left_mask])
    right = np.empty_like(parent)
    subtract_histograms(parent, left, right)
    np.testing.assert_allclose(right, right_direct, rtol=1e-9, atol=1e-9)
    in_place = parent.copy()
    subtract_histograms(in_place, left, in_place)  # the pool subtracts into the parent's slot
    np.testing.assert_array_equal(in_place, right)


@pytest.mark.parametrize("n_threads", [2, 4, 8])
def test_thread_counts_give_bit_identical_histograms(data, n_threads):
    binned, gh, rows = data
    np.testing.assert_array_equal(build_gathered(binned, gh, rows, n_threads=n_threads),
                                  build_gathered(binned, gh, rows, n_threads=1))
    np.testing.assert_array_equal(build_root(binned, gh, n_threads=n_threads),
                                  build_root(binned, gh, n_threads=1))


def test_prefetch_on_and_off_identical(data):
    binned, gh, rows = data
    off = build_gathered(binned, gh, rows, prefetch=False)
    for distance in (1, 8, 64, 10_000):
        np.testing.assert_array_equal(build_gathered(binned, gh, rows, prefetch_distance=distance), off)


def test_column_subset_only_writes_those_columns(data):
    binned, gh, rows = data
    ordered = gh[rows]
    hist = np.full((binned.total_bins, 2), -7.0)
    build_histogram_gathered(binned, rows, ordered, hist, columns=[1, 5])
    ref = naive_histogram(binned, gh, rows)
    for f in range(binned.n_features):
        lo, hi = binned.hist_offsets[f], binned.hist_offsets[f + 1]
        if f in (1, 5):
            np.testing.assert_array_equal(hist[lo:hi], ref[lo:hi])
        else:
            assert np.all(hist[lo:hi] == -7.0)


def test_empty_node_gives_zero_histogram(data):
    binned, gh, _ = data
    hist = build_gathered(binned, gh, np.array([], dtype=np.uint32))
    assert np.all(hist == 0.0)
    hist = np.full((binned.total_bins, 2), np.nan)
    build_histogram_contiguous(binned, gh, hist, start=5, stop=5)
    assert np.all(hist == 0.0)


def test_single_sample_histogram_is_that_gradient(data):
    binned, gh, _ = data
    hist = build_gathered(binned, gh, np.array([123], dtype=np.uint32))
    dense = binned.to_dense()
    for f in range(binned.n_features):
        b = binned.hist_offsets[f] + dense[123, f]
        np.testing.assert_array_equal(hist[b], gh[123].astype(np.float64))
        assert np.count_nonzero(hist[binned.hist_offsets[f]:binned.hist_offsets[f + 1]]) == 2


def test_all_rows_in_one_bin():
    rng = np.random.default_rng(2)
    binned = binned_from_dense(np.full((5000, 4), 3), [8, 8, 8, 8])
    gh = random_gradients(rng, 5000)
    hist = build_root(binned, gh)
    total = gh.astype(np.float64).sum(axis=0)
    for f in range(4):
        np.testing.assert_allclose(hist[8 * f + 3], total, rtol=1e-12)
        assert np.count_nonzero(hist[8 * f:8 * f + 8]) == 2


@pytest.mark.parametrize("n_bins", [256, 65536])
def test_boundary_bins_accumulate(n_bins):
    """The last bin of a uint8 (256) and of a uint16 (65536) feature."""
    rng = np.random.default_rng(3)
    n = 4000
    dense = rng.integers(0, n_bins, size=(n, 4))
    dense[::3] = n_bins - 1
    dense[1::3] = 0
    binned = binned_from_dense(dense, [n_bins] * 4)
    assert binned.feature_kind[0] == (0 if n_bins == 256 else 1)
    gh = random_gradients(rng, n)
    rows = np.arange(n, dtype=np.uint32)
    np.testing.assert_array_equal(build_gathered(binned, gh, rows), naive_histogram(binned, gh))
    hist = build_root(binned, gh)
    np.testing.assert_allclose(hist[n_bins - 1], gh[dense[:, 0] == n_bins - 1].astype(np.float64).sum(axis=0))


def test_large_gradients_over_many_rows_do_not_overflow():
    n = 1_000_000
    binned = binned_from_dense(np.zeros((n, 1), dtype=np.uint8), [2])
    gh = np.full((n, 2), 3.0e38, dtype=np.float32)  # near float32 max; the sum is far above it
    hist = build_root(binned, gh)
    np.testing.assert_allclose(hist[0], [3.0e38 * n, 3.0e38 * n], rtol=1e-6)
    assert np.all(np.isfinite(hist))


def test_subnormal_hessians_do_not_collapse_to_zero():
    n = 1_000_000
    binned = binned_from_dense(np.zeros((n, 1), dtype=np.uint8), [2])
    gh = np.zeros((n, 2), dtype=np.float32)
    gh[:, 1] = np.float32(1e-38)  # float32 subnormal
    assert gh[0, 1] < np.finfo(np.float32).tiny
    hist = build_root(binned, gh)
    expected = float(gh[0, 1]) * n
    assert hist[0, 1] > 0
    np.testing.assert_allclose(hist[0, 1], expected, rtol=1e-9)
    hist = build_gathered(binned, gh, np.arange(n, dtype=np.uint32), n_threads=2)
    np.testing.assert_allclose(hist[0, 1], expected, rtol=1e-9)


def test_bad_shapes_are_rejected(data):
    binned, gh, rows = data
    with pytest.raises(ValueError, match="hist"):
        build_histogram_contiguous(binned, gh, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="gh"):
        build_histogram_contiguous(binned, gh[:10], np.zeros((binned.total_bins, 2)))
    with pytest.raises(ValueError, match="rows"):
        build_histogram_gathered(binned, np.array([10**6], dtype=np.uint32), gh, np.zeros((binned.total_bins, 2)))
    with pytest.raises(ValueError, match="ordered_gh"):
        build_histogram_gathered(binned, rows, gh[:5], np.zeros((binned.total_bins, 2)))
    with pytest.raises(ValueError, match="shape"):
        subtract_histograms(np.zeros((4, 2)), np.zeros((5, 2)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="columns"):
        build_histogram_contiguous(binned, gh, np.zeros((binned.total_bins, 2)), columns=[99])
