"""SplitFinder against a brute-force enumeration of every candidate split."""

import math

import numpy as np
import pytest

from boosters._testing.kernels import find_best_splits, leaf_weight
from boosters.training.split._split import FloatSplitFinder

from support.naive import binned_from_dense, dense_bins, naive_best_split, naive_histogram, random_gradients

# f0: 2 bins (one value bin), f2: no missing values, f6: only missing values
N_BINS = [2, 3, 17, 256, 300, 1000, 9, 64]
MISSING = [0.3, 0.1, 0.0, 0.05, 0.2, 0.02, 1.0, 0.0]

PARAMS = {
    "plain": dict(l1=0.0, l2=0.0, min_child_weight=0.0, min_gain_to_split=0.0, min_samples_leaf=0),
    "l2": dict(l1=0.0, l2=1.0, min_child_weight=1e-3, min_gain_to_split=0.0, min_samples_leaf=1),
    "all": dict(l1=0.5, l2=2.0, min_child_weight=2.0, min_gain_to_split=0.05, min_samples_leaf=10),
    "strict": dict(l1=3.0, l2=0.1, min_child_weight=20.0, min_gain_to_split=1.0, min_samples_leaf=60),
}


@pytest.fixture(scope="module")
def dataset():
    rng = np.random.default_rng(20)
    n = 20_000
    dense = dense_bins(rng, n, N_BINS, MISSING)
    binned = binned_from_dense(dense, N_BINS)
    gh = random_gradients(rng, n)
    gh[:, 0] += np.where(dense[:, 3] > 128, 0.7, -0.4)  # some signal: real gains
    gh[:, 0] += np.where(dense[:, 4] == 0, 1.0, 0.0)    # missing values that matter
    return binned, gh


def make_nodes(rng, binned, gh, n_nodes, sizes=(2, 5000)):
    """Random row subsets: their histograms stacked as pool slots, and (G, H, count)."""
    pool = np.zeros((n_nodes, binned.total_bins, 2))
    G, H, C = [], [], []
    for i in range(n_nodes):
        size = int(np.exp(rng.uniform(np.log(sizes[0]), np.log(sizes[1]))))
        rows = np.sort(rng.choice(binned.n_rows, size, replace=False))
        pool[i] = naive_histogram(binned, gh, rows)
        sums = gh[rows].astype(np.float64).sum(axis=0)
        G.append(float(sums[0]))
        H.append(float(sums[1]))
        C.append(size)
    return pool, G, H, C


@pytest.fixture(scope="module")
def nodes(dataset):
    binned, gh = dataset
    return make_nodes(np.random.default_rng(21), binned, gh, 60)


def finder_for(binned, pool, features=None, n_threads=1, **params):
    features = np.arange(binned.n_features) if features is None else features
    return FloatSplitFinder(pool, binned.hist_offsets, binned.n_bins, features, n_threads=n_threads, **params)


def assert_same_split(got, want, context=""):
    if want is None:
        assert got is None, f"{context}: expected no split, got {got}"
        return
    assert got is not None, f"{context}: expected {want}, got None"
    gain, feature, bin_, default_left, has_missing, left_g, left_h = got
    assert (feature, bin_, default_left) == want[1:4], f"{context}: got {got}, want {want}"
    assert has_missing == want[4], context
    assert gain == pytest.approx(want[0], rel=1e-9, abs=0.0), context
    assert left_g == pytest.approx(want[5], rel=1e-12, abs=1e-12), context
    assert left_h == pytest.approx(want[6], rel=1e-12, abs=1e-12), context


def check_against_naive(binned, pool, G, H, C, features, params, n_threads=1):
    finder = finder_for(binned, pool, features, n_threads=n_threads, **params)
    got = find_best_splits(finder, list(range(len(G))), G, H, C)
    assert len(got) == len(G)
    n_found = 0
    for i in range(len(G)):
        want = naive_best_split(pool[i], binned.hist_offsets, binned.n_bins, features, G[i], H[i], C[i], **params)
        assert_same_split(got[i], want, f"node {i}")
        n_found += want is not None
    return n_found


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_all_features_match_brute_force(dataset, nodes, name):
    binned, _ = dataset
    pool, G, H, C = nodes
    n_found = check_against_naive(binned, pool, G, H, C, np.arange(binned.n_features), PARAMS[name])
    assert n_found > 0  # the test compares real splits, not just Nones


@pytest.mark.parametrize("name", sorted(PARAMS))
@pytest.mark.parametrize("features", [[1, 3, 5], [2, 7], [6], [0, 4]])
def test_feature_subset_matches_brute_force(dataset, nodes, name, features):
    binned, _ = dataset
    pool, G, H, C = nodes
    check_against_naive(binned, pool, G, H, C, np.array(features, dtype=np.int32), PARAMS[name])


def test_best_splits_cover_missing_directions_and_features(dataset, nodes):
    """The random nodes exercise both directions and several features, so the
    comparisons above are not all about one kind of split."""
    binned, _ = dataset
    pool, G, H, C = nodes
    got = find_best_splits(finder_for(binned, pool, **PARAMS["plain"]), range(len(G)), G, H, C)
    got = [s for s in got if s is not None]
    assert {s[3] for s in got} == {False, True}
    assert len({s[1] for s in got}) >= 3
    assert any(s[4] for s in got) and any(not s[4] for s in got)


@pytest.mark.parametrize("seed", range(3))
def test_synthetic_histograms_match_brute_force(seed):
    """Histograms drawn directly: empty bins, zero gradients, large and tiny hessians."""
    rng = np.random.default_rng(100 + seed)
    n_bins = np.array([4, 2, 30, 257, 5], dtype=np.int32)
    offsets = np.r_[0, np.cumsum(n_bins)]
    n_nodes = 40
    pool = np.zeros((n_nodes, offsets[-1], 2))
    G, H, C = [], [], []
    for i in range(n_nodes):
        # one underlying set of per-row (g, h) spread over each feature's bins
        n = int(rng.integers(1, 400))
        g = rng.normal(size=n) * 10 ** rng.uniform(-3, 3)
        h = rng.uniform(0.0, 2.0, size=n) * 10 ** rng.uniform(-3, 3)
        for f in range(len(n_bins)):
            p_missing = rng.choice([0.0, 0.0, 0.2, 1.0])
            bins = rng.integers(1, n_bins[f], size=n)
            bins[rng.random(n) < p_missing] = 0
            np.add.at(pool[i, offsets[f]:offsets[f + 1], 0], bins, g)
            np.add.at(pool[i, offsets[f]:offsets[f + 1], 1], bins, h)
        G.append(float(g.sum()))
        H.append(float(h.sum()))
        C.append(n)
    for params in PARAMS.values():
        finder = FloatSplitFinder(pool, offsets, n_bins, np.arange(len(n_bins)), **params)
        got = find_best_splits(finder, np.arange(n_nodes), G, H, C)
        for i in range(n_nodes):
            want = naive_best_split(pool[i], offsets, n_bins, np.arange(len(n_bins)), G[i], H[i], C[i], **params)
            assert_same_split(got[i], want, f"node {i} {params}")


def test_gain_formula_on_a_hand_made_histogram():
    """One feature, 3 value bins, no missing: gains worked out by hand."""
    # bins: missing, (g, h) = (-4, 2), (1, 1), (6, 3)
    hist = np.array([[0, 0], [-4, 2], [1, 1], [6, 3]], dtype=np.float64)
    pool = hist[None].copy()
    G, H = 3.0, 6.0
    l2 = 1.0
    finder = FloatSplitFinder(pool, [0, 4], [4], [0], l1=0.0, l2=l2, min_child_weight=0.0,
                         min_gain_to_split=0.0, min_samples_leaf=0)
    (best,) = find_best_splits(finder, [0], [G], [H], [6])
    parent = G * G / (H + l2)
    gain_b1 = 0.5 * (16 / 3 + 49 / 5 - parent)   # left (-4, 2), right (7, 4)
    gain_b2 = 0.5 * (9 / 4 + 36 / 4 - parent)    # left (-3, 3), right (6, 3)
    assert gain_b1 > gain_b2 > 0
    assert best[1:5] == (0, 1, False, False)
    assert best[0] == pytest.approx(gain_b1, rel=1e-12)
    assert best[5:] == (-4.0, 2.0)
    # l1 soft-thresholding and min_gain_to_split
    finder = FloatSplitFinder(pool, [0, 4], [4], [0], l1=1.5, l2=l2, min_child_weight=0.0,
                         min_gain_to_split=0.25, min_samples_leaf=0)
    (best,) = find_best_splits(finder, [0], [G], [H], [6])
    parent = 1.5 ** 2 / 7
    gain_b1 = 0.5 * (2.5 ** 2 / 3 + 5.5 ** 2 / 5 - parent) - 0.25
    gain_b2 = 0.5 * (1.5 ** 2 / 4 + 4.5 ** 2 / 4 - parent) - 0.25
    assert gain_b1 > gain_b2
    assert best[0] == pytest.approx(gain_b1, rel=1e-12)


def test_missing_values_learn_their_direction():
    """Missing rows look like bin 3: the best split puts them with bin 3."""
    hist = np.array([[5, 1], [-3, 1], [-3, 1], [5, 1]], dtype=np.float64)  # bin 0: missing
    pool = hist[None].copy()
    finder = FloatSplitFinder(pool, [0, 4], [4], [0], l1=0.0, l2=0.0, min_child_weight=0.0,
                         min_gain_to_split=0.0, min_samples_leaf=0)
    (best,) = find_best_splits(finder, [0], [4.0], [4.0], [4])
    assert best[1:5] == (0, 2, False, True)  # values 1..2 left, missing right with bin 3
    assert best[5:] == (-6.0, 2.0)
    hist = np.array([[-3, 1], [-3, 1], [5, 1], [5, 1]], dtype=np.float64)  # missing like bin 1
    (best,) = find_best_splits(FloatSplitFinder(hist[None].copy(), [0, 4], [4], [0], l1=0.0, l2=0.0, min_child_weight=0.0,
                                                min_gain_to_split=0.0, min_samples_leaf=0), [0], [4.0], [4.0], [4])
    assert best[1:5] == (0, 1, True, True)
    assert best[5:] == (-6.0, 2.0)
    # missing alone against every value: threshold = last value bin, missing right
    hist = np.array([[9, 1], [-3, 1], [-3, 1], [-3, 1]], dtype=np.float64)
    (best,) = find_best_splits(FloatSplitFinder(hist[None].copy(), [0, 4], [4], [0], l1=0.0, l2=0.0, min_child_weight=0.0,
                                                min_gain_to_split=0.0, min_samples_leaf=0), [0], [0.0], [4.0], [4])
    assert best[1:5] == (0, 3, False, True)
    assert best[0] == pytest.approx(0.5 * (9 ** 2 / 3 + 9 ** 2 / 1), rel=1e-12)


def test_ties_keep_lowest_feature_then_bin_then_missing_right():
    # f0 and f1 identical -> f0. Inside: bins 1 and 2 give the same partition (bin 2 is
    # empty) -> bin 1. With missing (0, 1): bin 1 missing right and missing left tie.
    f = np.array([[0, 1], [1, 1], [0, 0], [-1, 1]], dtype=np.float64)
    pool = np.concatenate([f, f])[None].copy()
    finder = FloatSplitFinder(pool, [0, 4, 8], [4, 4], [0, 1], l1=0.0, l2=0.0, min_child_weight=0.0,
                         min_gain_to_split=0.0, min_samples_leaf=0)
    (best,) = find_best_splits(finder, [0], [0.0], [3.0], [3])
    # bin 1 right: (1,1) | (-1,2) -> 1 + 1/2; bin 1 left: (1,2) | (-1,1) -> 1/2 + 1
    assert best[1:5] == (0, 1, False, True)
    assert best[0] == 0.75
    # only f1: the same choice there
    finder = FloatSplitFinder(pool, [0, 4, 8], [4, 4], [1], l1=0.0, l2=0.0, min_child_weight=0.0,
                         min_gain_to_split=0.0, min_samples_leaf=0)
    (best,) = find_best_splits(finder, [0], [0.0], [3.0], [3])
    assert best[1:5] == (1, 1, False, True)
    # no missing rows: bins 1 and 2 tie -> bin 1
    f = np.array([[0, 0], [1, 1], [0, 0], [-1, 1]], dtype=np.float64)
    pool = np.concatenate([f, f])[None].copy()
    finder = FloatSplitFinder(pool, [0, 4, 8], [4, 4], [0, 1], l1=0.0, l2=0.0, min_child_weight=0.0,
                         min_gain_to_split=0.0, min_samples_leaf=0)
    (best,) = find_best_splits(finder, [0], [0.0], [2.0], [2])
    assert best[1:5] == (0, 1, False, False)
    assert best[0] == 1.0


def test_ties_between_features_of_a_random_node(dataset, nodes):
    """A feature duplicated later in the histogram never wins over the original."""
    binned, _ = dataset
    pool, G, H, C = nodes
    n_bins = np.r_[binned.n_bins, binned.n_bins[4]]
    offsets = np.r_[binned.hist_offsets, binned.hist_offsets[-1] + n_bins[-1]]
    f4 = pool[:, binned.hist_offsets[4]:binned.hist_offsets[5]]
    pool2 = np.ascontiguousarray(np.concatenate([pool, f4], axis=1))
    for features in ([4, 8], [1, 4, 8]):
        finder = FloatSplitFinder(pool2, offsets, n_bins, features, **PARAMS["plain"])
        ref = FloatSplitFinder(pool2, offsets, n_bins, [f for f in features if f != 8], **PARAMS["plain"])
        got_all, want_all = (find_best_splits(f, range(len(G)), G, H, C) for f in (finder, ref))
        assert len(got_all) == len(want_all) == len(G)
        for got, want in zip(got_all, want_all):
            assert got == want
            if got is not None:
                assert got[1] != 8


def test_no_valid_split_returns_none():
    pool = np.zeros((4, 8, 2))
    pool[0, :4] = [[0, 0], [2, 1], [0, 0], [0, 0]]  # all rows in one value bin
    pool[0, 4:] = [[2, 1], [0, 0], [0, 0], [0, 0]]  # all rows missing
    pool[1, :4] = [[0, 0], [1, 1], [-1, 1], [0, 0]]  # valid only while min_child_weight <= 1
    pool[1, 4:] = [[1, 1], [-1, 1], [0, 0], [0, 0]]
    pool[2, :4] = [[0, 0], [1, 1], [1, 1], [1, 1]]  # constant gradient/hessian ratio: gain 0
    pool[2, 4:] = [[0, 0], [1, 1], [2, 2], [0, 0]]
    sums = dict(slots=[0, 1, 2], sum_grads=[2.0, 0.0, 3.0], sum_hess=[1.0, 2.0, 3.0], counts=[1, 2, 3])

    def finder(features=(0, 1), **kw):
        params = dict(l1=0.0, l2=0.0, min_child_weight=0.0, min_gain_to_split=0.0, min_samples_leaf=0)
        params.update(kw)
        return FloatSplitFinder(pool, [0, 4, 8], [4, 4], np.asarray(features, dtype=np.int32), **params)

    got = find_best_splits(finder(), *sums.values())
    assert got[0] is None and got[2] is None
    assert got[1] is not None and got[1][0] == pytest.approx(1.0)
    assert find_best_splits(finder(min_child_weight=1.5), *sums.values()) == [None, None, None]
    assert find_best_splits(finder(min_samples_leaf=2), *sums.values()) == [None, None, None]
    assert find_best_splits(finder(min_gain_to_split=1.0), *sums.values()) == [None, None, None]  # gain == 0 is not > 0
    assert find_best_splits(finder(min_gain_to_split=0.999), *sums.values())[1] is not None
    assert find_best_splits(finder(l1=1.0), *sums.values())[1] is None  # every |G| thresholded to 0
    # zero or negative parent hessian
    pool[3, :4] = [[0, 0], [1, 0], [-1, 0], [0, 0]]
    assert find_best_splits(finder(l2=1.0), [3, 3], [0.0, 0.0], [0.0, -1.0], [2, 2]) == [None, None]
    # no features at all
    empty = finder(features=[])
    assert find_best_splits(empty, [1], [0.0], [2.0], [2]) == [None]
    assert find_best_splits(empty, [], [], [], []) == []


def test_min_gain_to_split_shifts_every_gain(dataset, nodes):
    binned, _ = dataset
    pool, G, H, C = nodes
    base = find_best_splits(finder_for(binned, pool, **PARAMS["plain"]), range(len(G)), G, H, C)
    shifted = find_best_splits(finder_for(binned, pool, **{**PARAMS["plain"], "min_gain_to_split": 0.5}), 
        range(len(G)), G, H, C)
    for a, b in zip(base, shifted):
        if a is not None and a[0] > 0.5 + 1e-9:
            assert b is not None and b[1:] == a[1:]
            assert b[0] == pytest.approx(a[0] - 0.5, rel=1e-12, abs=1e-12)
        elif a is None or a[0] < 0.5 - 1e-9:
            assert b is None


def test_min_samples_leaf_with_unit_hessians_counts_rows_exactly():
    """With every hessian 1 the estimated child counts are the true ones."""
    rng = np.random.default_rng(22)
    n_bins = [40, 300]
    dense = dense_bins(rng, 3000, n_bins, [0.15, 0.05])
    binned = binned_from_dense(dense, n_bins)
    gh = np.ones((3000, 2), dtype=np.float32)
    gh[:, 0] = rng.normal(size=3000)
    gh[:, 0] += np.where(dense[:, 0] < 5, 3.0, 0.0)  # the best split is very unbalanced
    rows = np.arange(3000)
    pool = naive_histogram(binned, gh)[None].copy()
    G, H = float(gh[:, 0].astype(np.float64).sum()), 3000.0
    for msl in (0, 1, 50, 200, 500, 1400, 1501):
        params = dict(l1=0.0, l2=0.0, min_child_weight=0.0, min_gain_to_split=0.0, min_samples_leaf=msl)
        (best,) = find_best_splits(finder_for(binned, pool, **params), [0], [G], [H], [3000])
        want = naive_best_split(pool[0], binned.hist_offsets, binned.n_bins, [0, 1], G, H, 3000, **params)
        assert_same_split(best, want, f"min_samples_leaf={msl}")
        if best is None:
            assert msl == 1501
            continue
        f, b, dl = best[1:4]
        col = dense[rows, f]
        n_left = int(np.sum(((col >= 1) & (col <= b)) | ((col == 0) & dl)))
        assert n_left == best[6]  # unit hessians: left hessian == left rows
        assert min(n_left, 3000 - n_left) >= msl


def test_hessian_estimated_counts_for_min_samples_leaf():
    """Counts are round(H_left * count / H): a child with few rows but most of the
    hessian counts as big."""
    hist = np.array([[0, 0], [-5, 9.0], [5, 1.0]], dtype=np.float64)  # 2 value bins
    pool = hist[None].copy()
    for msl, expect_split in ((11, True), (12, False)):
        # count 110: left is estimated round(9 / 10 * 110) = 99 rows, right 11
        finder = FloatSplitFinder(pool, [0, 3], [3], [0], l1=0.0, l2=0.0, min_child_weight=0.0,
                             min_gain_to_split=0.0, min_samples_leaf=msl)
        (best,) = find_best_splits(finder, [0], [0.0], [10.0], [110])
        assert (best is not None) == expect_split
    finder = FloatSplitFinder(pool, [0, 3], [3], [0], l1=0.0, l2=0.0, min_child_weight=0.0,
                         min_gain_to_split=0.0, min_samples_leaf=3)
    assert find_best_splits(finder, [0], [0.0], [10.0], [20]) == [None]  # left 18, right 20 - 18 = 2 rows
    assert find_best_splits(finder, [0], [0.0], [10.0], [30])[0] is not None  # right: 3 rows


def test_threads_give_identical_results(dataset):
    binned, gh = dataset
    pool, G, H, C = make_nodes(np.random.default_rng(23), binned, gh, 40, sizes=(50, 3000))
    slots = np.random.default_rng(24).permutation(np.repeat(np.arange(40), 2))  # slots out of order, repeated
    g, h, c = [G[s] for s in slots], [H[s] for s in slots], [C[s] for s in slots]
    for name in ("plain", "all"):
        serial = find_best_splits(finder_for(binned, pool, n_threads=1, **PARAMS[name]), slots, g, h, c)
        for t in (2, 3):
            assert find_best_splits(finder_for(binned, pool, n_threads=t, **PARAMS[name]), slots, g, h, c) == serial
        for i, s in enumerate(slots):
            want = naive_best_split(pool[s], binned.hist_offsets, binned.n_bins, range(binned.n_features),
                                    G[s], H[s], C[s], **PARAMS[name])
            assert_same_split(serial[i], want, f"slot {s}")


def test_bad_slot_raises(dataset, nodes):
    binned, _ = dataset
    pool, G, H, C = nodes
    finder = finder_for(binned, pool, **PARAMS["plain"])
    with pytest.raises(ValueError):
        find_best_splits(finder, [len(G)], [1.0], [1.0], [2])
    with pytest.raises(ValueError):
        find_best_splits(finder, [-1], [1.0], [1.0], [2])


@pytest.mark.parametrize("g, h, l1, l2, expected", [
    (4.0, 2.0, 0.0, 0.0, -2.0),
    (-4.0, 2.0, 0.0, 0.0, 2.0),
    (4.0, 2.0, 0.0, 2.0, -1.0),
    (5.0, 2.0, 1.0, 0.0, -2.0),       # T(5) = 4
    (-5.0, 2.0, 1.0, 1.0, 4.0 / 3.0),  # T(-5) = -4
    (0.5, 2.0, 1.0, 0.0, 0.0),        # |G| <= l1: zeroed
    (-1.0, 2.0, 1.0, 0.0, 0.0),
    (1.0, 2.0, 1.0, 0.0, 0.0),
    (3.0, 0.0, 0.0, 0.0, 0.0),        # empty hessian
    (3.0, 0.0, 0.0, 1.5, -2.0),
    (3.0, -1.0, 0.0, 0.5, 0.0),       # H + l2 <= 0
])
def test_leaf_weight(g, h, l1, l2, expected):
    got = leaf_weight(g, h, l1, l2)
    assert got == pytest.approx(expected, rel=1e-15, abs=0.0)
    assert not math.isnan(got)


def test_find_best_splits_accepts_strided_arrays(dataset, nodes):
    """slots / sums / counts are array-likes (lists work): strided int64 / float64 views
    of arrays must give the same result as their copies."""
    binned, _ = dataset
    pool, G, H, C = nodes
    finder = finder_for(binned, pool, **PARAMS["plain"])
    slots = np.repeat(np.arange(10, dtype=np.int64), 2)
    g, h = np.repeat(np.array(G[:10]), 2), np.repeat(np.array(H[:10]), 2)
    c = np.repeat(np.array(C[:10], dtype=np.float64), 2)
    want = find_best_splits(finder, slots[::2].copy(), g[::2].copy(), h[::2].copy(), c[::2].copy())
    assert want == find_best_splits(finder, list(range(10)), G[:10], H[:10], C[:10])
    assert find_best_splits(finder, slots[::2], g[::2], h[::2], c[::2]) == want
