"""The mergeable weighted quantile sketch (boosters/data/quantile_sketch.py) against
brute-force weighted ranks, and its bin edges in boosters.dask.train (bin_edges="sketch").

Every summary is checked as the module docstring states it: its rank bounds contain the
true ranks, each queried value's true rank interval lies within max_error() of the asked
rank, exact summaries have error 0, a merge's error is at most the sum of its inputs',
a prune adds at most total / (2 (size - 1)). Ranks are float64 sums of the weights: the
comparisons allow TOL = 1e-9 of the total weight for their rounding (orders of magnitude
above it, far below any error the sketch makes: a pruned summary's bound is >= 1e-3).
"""

import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import boosters as bst
from boosters.dask._sketch_edges import SIZE_PER_BIN, merge_sketches, sketch_bin_mapper, sketch_partition
from boosters.data.binning import BinMapper
from boosters.data.quantile_sketch import QuantileSketch, WeightedQuantileSummary as Summary
from support.dask_clusters import clients, dask_train  # noqa: F401 (clients: the fixture)
from support.tree_compare import assert_same_trees

TOL = 1e-9


class Truth:
    """Brute-force weighted ranks of a feature's values (NaN and zero weights dropped)."""

    def __init__(self, values, weights=None):
        values = np.asarray(values, dtype=np.float64)
        weights = np.ones_like(values) if weights is None else np.asarray(weights, dtype=np.float64)
        keep = ~np.isnan(values) & (weights > 0)
        order = np.argsort(values[keep], kind="stable")
        self.sorted = values[keep][order]
        self.cumulative = np.concatenate([[0.0], np.cumsum(weights[keep][order])])
        self.total = self.cumulative[-1]

    def below(self, v):
        return self.cumulative[np.searchsorted(self.sorted, v, side="left")]

    def up_to(self, v):
        return self.cumulative[np.searchsorted(self.sorted, v, side="right")]


def assert_sound(summary: Summary, truth: Truth) -> float:
    """The summary's bounds hold and its queries are within max_error (returned)."""
    tol = TOL * max(truth.total, 1.0)
    assert summary.total == pytest.approx(truth.total, rel=1e-12, abs=1e-12)
    if truth.total == 0:
        assert len(summary) == 0 and summary.max_error() == 0
        return 0.0
    v = summary.values
    assert np.all(np.diff(v) > 0) and v[0] == truth.sorted[0] and v[-1] == truth.sorted[-1]
    assert np.all(summary.rmin <= truth.below(v) + tol)
    assert np.all(summary.rmax >= truth.up_to(v) - tol)
    assert np.all(summary.wmin <= truth.up_to(v) - truth.below(v) + tol)
    error = summary.max_error()
    ranks = np.concatenate([np.linspace(0, truth.total, 1001),
                            np.random.default_rng(0).uniform(0, truth.total, 1000)])
    answers = summary.query(ranks)
    distance = np.maximum.reduce([truth.below(answers) - ranks, ranks - truth.up_to(answers), np.zeros_like(ranks)])
    assert np.all(distance <= error + tol), (distance.max(), error)
    return error


def column(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        return rng.normal(size=n)
    if kind == "ties":
        return rng.integers(0, 30, size=n).astype(np.float64)
    if kind == "heavy":  # one value with 60% of the rows among continuous ones
        return np.where(rng.random(n) < 0.6, 1.5, rng.normal(size=n))
    if kind == "nan_inf":
        values = rng.exponential(size=n)
        values[rng.random(n) < 0.3] = np.nan
        values[rng.random(n) < 0.05] = np.inf
        values[rng.random(n) < 0.05] = -np.inf
        return values
    if kind == "constant":
        return np.full(n, -2.0)
    raise ValueError(kind)


def row_weights(kind: str | None, n: int, seed: int):
    rng = np.random.default_rng(seed + 100)
    if kind is None:
        return None
    if kind == "integers":  # zeros included: those rows are not summarised at all
        return rng.integers(0, 4, size=n).astype(np.float64)
    return rng.exponential(size=n) * np.exp2(rng.integers(-10, 10, size=n))  # "spread"


def tree_merged(summaries: list, size: int) -> Summary:
    """Neighbours merged pairwise level by level (boosters.dask's fixed tree), pruned."""
    while len(summaries) > 1:
        pairs = [summaries[i].merge(summaries[i + 1]).prune(size) for i in range(0, len(summaries) - 1, 2)]
        summaries = pairs + summaries[len(summaries) - len(summaries) % 2:]
    return summaries[0]


KINDS = ["continuous", "ties", "heavy", "nan_inf", "constant"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weights", [None, "integers", "spread"])
def test_exact_summary(kind, weights):
    values, w = column(kind, 500, 1), row_weights(weights, 500, 1)
    summary = Summary.from_values(values, w)
    truth = Truth(values, w)
    # error 0 but for the rounding of the weights' running sums (exactly 0 for integer weights)
    error = assert_sound(summary, truth)
    assert error == 0 if weights != "spread" else error <= TOL * truth.total
    # every distinct value kept, with its exact ranks
    assert np.array_equal(summary.values, np.unique(truth.sorted))
    np.testing.assert_allclose(summary.rmax, truth.up_to(summary.values), rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weights", [None, "integers", "spread"])
@pytest.mark.parametrize("n_blocks", [1, 3, 8])
def test_merge_tree_of_pruned_blocks_is_within_the_bound(kind, weights, n_blocks):
    n, size = 6000, 64
    values, w = column(kind, n, 2), row_weights(weights, n, 2)
    bounds = np.linspace(0, n, n_blocks + 1).astype(int)
    blocks = [Summary.from_values(values[a:b], None if w is None else w[a:b]).prune(size)
              for a, b in zip(bounds[:-1], bounds[1:])]
    for (a, b), block in zip(zip(bounds[:-1], bounds[1:]), blocks):
        block_truth = Truth(values[a:b], None if w is None else w[a:b])
        assert len(block) <= size
        assert assert_sound(block, block_truth) <= block_truth.total / (2 * (size - 1)) * (1 + TOL)
    merged = tree_merged(blocks, size)
    truth = Truth(values, w)
    error = assert_sound(merged, truth)
    depth = int(np.ceil(np.log2(n_blocks)))
    assert error <= (depth + 1) * truth.total / (2 * (size - 1)) * (1 + TOL)
    # the fixed tree is deterministic: the same summary to the bit
    again = tree_merged([Summary.from_values(values[a:b], None if w is None else w[a:b]).prune(size)
                         for a, b in zip(bounds[:-1], bounds[1:])], size)
    for field in ("values", "rmin", "rmax", "wmin"):
        assert np.array_equal(getattr(again, field), getattr(merged, field))


def test_each_step_keeps_its_own_bound():
    # merge: error <= the sum of the inputs' errors; prune: adds <= total / (2 (size - 1))
    rng = np.random.default_rng(3)
    for trial in range(30):
        values = rng.normal(size=3000).round(int(rng.integers(0, 4)))  # more or fewer ties
        w = rng.exponential(size=3000) if trial % 2 else None
        cut = int(rng.integers(1, 2999))
        size_a, size_b, size = (int(s) for s in rng.integers(2, 80, size=3))
        a = Summary.from_values(values[:cut], None if w is None else w[:cut]).prune(size_a)
        b = Summary.from_values(values[cut:], None if w is None else w[cut:]).prune(size_b)
        merged = a.merge(b)
        truth = Truth(values, w)
        assert assert_sound(merged, truth) <= (a.max_error() + b.max_error()) * (1 + TOL) + TOL
        pruned = merged.prune(size)
        assert len(pruned) <= size
        assert assert_sound(pruned, truth) <= merged.max_error() + truth.total / (2 * (size - 1)) * (1 + TOL)


def test_merge_is_symmetric_to_the_bit_and_associative_within_the_bound():
    rng = np.random.default_rng(4)
    parts = [rng.normal(size=2000) * (k + 1) for k in range(3)]
    weights = [rng.exponential(size=2000) for _ in range(3)]
    a, b, c = (Summary.from_values(p, w).prune(50) for p, w in zip(parts, weights))
    ab, ba = a.merge(b), b.merge(a)
    for field in ("values", "rmin", "rmax", "wmin"):
        assert np.array_equal(getattr(ab, field), getattr(ba, field))
    truth = Truth(np.concatenate(parts), np.concatenate(weights))
    bound = a.max_error() + b.max_error() + c.max_error()
    left, right = ab.merge(c), a.merge(b.merge(c))
    assert assert_sound(left, truth) <= bound * (1 + TOL)
    assert assert_sound(right, truth) <= bound * (1 + TOL)
    # the same kept values either way; their bounds agree to float64 rounding
    assert np.array_equal(left.values, right.values)
    np.testing.assert_allclose(left.rmax, right.rmax, rtol=1e-12)
    # exact summaries of integer weights merge exactly: associative to the bit
    e = [Summary.from_values(np.round(p), np.round(3 * w)) for p, w in zip(parts, weights)]
    assert np.array_equal(e[0].merge(e[1]).merge(e[2]).rmin, e[0].merge(e[1].merge(e[2])).rmin)
    assert e[0].merge(e[1]).merge(e[2]).max_error() == 0


@pytest.mark.parametrize("n", [0, 1, 2, 3, 200_000])
def test_tiny_and_large_blocks(n):
    values = np.random.default_rng(5).standard_cauchy(size=n)  # heavy tails: far-apart values
    truth = Truth(values)
    summary = Summary.from_values(values).prune(100)
    error = assert_sound(summary, truth)
    assert error <= truth.total / (2 * 99) * (1 + TOL)
    assert len(summary) == min(n, 100)


def test_nan_and_zero_weights_are_skipped():
    summary = Summary.from_values([np.nan, 2.0, 1.0, np.nan, 3.0], [5.0, 1.0, 0.0, 1.0, 2.0])
    assert summary.values.tolist() == [2.0, 3.0] and summary.total == 3.0
    assert Summary.from_values([np.nan, np.nan]).total == 0 and len(Summary.from_values([])) == 0
    assert np.signbit(Summary.from_values([-0.0, 1.0]).values).tolist() == [False, False]  # one zero


@settings(max_examples=60, deadline=None)
@given(values=hnp.arrays(np.float64, st.integers(0, 300),
                         elements=st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                            st.sampled_from([0.0, 1.0, -1.0]))),
       weighted=st.booleans(), size=st.integers(2, 20), n_blocks=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_hypothesis_bound(values, weighted, size, n_blocks, seed):
    w = np.random.default_rng(seed).integers(0, 5, size=len(values)).astype(np.float64) if weighted else None
    cuts = np.sort(np.random.default_rng(seed).integers(0, len(values) + 1, size=n_blocks - 1))
    edges = np.concatenate([[0], cuts, [len(values)]])
    blocks = [Summary.from_values(values[a:b], None if w is None else w[a:b]).prune(size)
              for a, b in zip(edges[:-1], edges[1:])]
    truth = Truth(values, w)
    with np.errstate(invalid="ignore"):  # inf - inf in a rank of an infinite value: never, but be sure
        error = assert_sound(tree_merged(blocks, size), truth)
    depth = int(np.ceil(np.log2(n_blocks)))
    assert error <= (depth + 1) * truth.total / (2 * (size - 1)) * (1 + TOL) + TOL


def test_blocks_of_any_numeric_dtype_and_empty_blocks():
    # integers and bools are read as float64, float32 as it is; an empty block adds nothing
    rng = np.random.default_rng(9)
    ints = rng.integers(-50, 50, size=(400, 2))
    reference = QuantileSketch(2, 16).add(ints.astype(np.float64))
    for X in (ints, ints.astype(np.int8), ints.astype(np.float32)):
        sketch = QuantileSketch(2, 16).add(X).add(np.zeros((0, 2)))
        for a, b in zip(sketch.summaries, reference.summaries):
            assert np.array_equal(a.values, b.values) and np.array_equal(a.rmax, b.rmax)
    flags = QuantileSketch(1, 16).add(rng.random((100, 1)) < 0.3)
    assert flags.summaries[0].values.tolist() == [0.0, 1.0] and flags.summaries[0].total == 100


def test_bad_arguments():
    summary = Summary.from_values([1.0, 2.0])
    with pytest.raises(ValueError, match="size must be an int >= 2"):
        summary.prune(1)
    with pytest.raises(TypeError, match="other must be a WeightedQuantileSummary"):
        summary.merge([1.0])
    with pytest.raises(ValueError, match="query: the summary is empty"):
        Summary.empty().query([0.0])
    sketch = QuantileSketch(2, 8)
    with pytest.raises(ValueError, match=r"X must have shape \(n_rows, 2\)"):
        sketch.add(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="weights must be finite and >= 0"):
        sketch.add(np.zeros((3, 2)), np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match=r"weights must have shape \(3,\)"):
        sketch.add(np.zeros((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match="other sketches 2 features to size 16"):
        QuantileSketch(2, 8).merge(QuantileSketch(2, 16))
    with pytest.raises(ValueError, match="X must be numeric"):
        sketch.add(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="n_features must be a positive int"):
        QuantileSketch(0, 8)


# ---- bin edges --------------------------------------------------------------------


def matrix(n: int, seed: int) -> np.ndarray:
    """Features of every kind above, side by side (one all-NaN column too)."""
    X = np.column_stack([column(kind, n, seed + j) for j, kind in enumerate(KINDS)] + [np.full(n, np.nan)])
    return X.astype(np.float32) if seed % 2 else X


def assert_same_mapper(a: BinMapper, b: BinMapper):
    assert len(a.upper_edges) == len(b.upper_edges)
    for f, (ea, eb) in enumerate(zip(a.upper_edges, b.upper_edges)):
        assert np.array_equal(ea, eb), f"feature {f}"
    for field in ("n_bins", "is_usable", "is_categorical"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


@pytest.mark.parametrize("weights", [None, "integers"])
def test_an_exact_sketch_gives_the_edges_of_fit_on_every_row(weights):
    # while no summary is pruned (at most `size` distinct values), the sketch's entries are
    # the rows' distinct values with their weights: BinMapper.fit's edges, to the bit
    X = matrix(3000, 6)
    w = row_weights(weights, 3000, 6)
    sketch = QuantileSketch(X.shape[1], 4096)
    for start in range(0, 3000, 700):
        sketch.add(X[start:start + 700], None if w is None else w[start:start + 700])
    assert np.all(sketch.max_error() == 0)
    for max_bins in (256, 16):
        assert_same_mapper(sketch.bin_mapper(max_bins), BinMapper(max_bins).fit(X, w))


def rank_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest distance from a rank in one set to the nearest in the other."""
    gaps = np.abs(a[:, None] - b[None, :])
    return max(gaps.min(axis=1).max(), gaps.min(axis=0).max())


@pytest.mark.parametrize("weights", [None, "spread"])
def test_pruned_sketch_edges_are_close_to_the_exact_quantiles(weights):
    # 100k rows in 8 blocks, summaries of the size boosters.dask uses for 256 bins: the
    # edges' true ranks against those of fit's edges on every row. A cut is placed by a
    # running weight that is off by at most ~1.5 E + w / 2 (E: the merged summary's bound),
    # between two kept values up to 2 E apart, and fit's cut overshoots its target by up to
    # one value's weight: within 6 E + 2 w_max. With a heavy value both may drop one cut
    # where it falls next to the value's own bin: the counts differ by at most one.
    n = 100_000
    rng = np.random.default_rng(7)
    X = np.column_stack([rng.normal(size=n), rng.exponential(size=n) ** 3, column("heavy", n, 7)])
    w = row_weights(weights, n, 7)
    sketch = QuantileSketch(3, SIZE_PER_BIN * 256)
    for start in range(0, n, n // 8):
        sketch.add(X[start:start + n // 8], None if w is None else w[start:start + n // 8])
    mapper, exact = sketch.bin_mapper(256), BinMapper(256, sample_size=n).fit(X, w)
    errors = sketch.max_error()
    assert np.all(errors > 0)  # pruned
    w_max = 1.0 if w is None else w.max()
    for f in range(3):
        truth = Truth(X[:, f], w)
        ranks, exact_ranks = truth.up_to(mapper.upper_edges[f][:-1]), truth.up_to(exact.upper_edges[f][:-1])
        assert abs(len(ranks) - len(exact_ranks)) <= 1
        distance = rank_distance(ranks, exact_ranks)
        assert distance <= 6 * errors[f] + 2 * w_max, f
        # what this size achieves here (0.17 to 0.19 of a bin's share of the weight; the
        # bound above allows 0.6): a guard against a sketch that gets worse
        assert distance <= 0.25 * truth.total / 255, f


def test_sketch_merge_needs_the_same_partitioning_only():
    # the merged sketch depends on the blocks and the tree, nothing else: built twice the
    # same, its mapper is the same to the bit
    X = matrix(4000, 8)
    blocks = [sketch_partition(X[a:a + 900], None, 256) for a in range(0, 4000, 900)]
    again = [sketch_partition(X[a:a + 900], None, 256) for a in range(0, 4000, 900)]
    merged = merge_sketches(merge_sketches(blocks[0], blocks[1]), merge_sketches(blocks[2], blocks[3]))
    merged = merge_sketches(merged, blocks[4])
    other = merge_sketches(merge_sketches(again[0], again[1]), merge_sketches(again[2], again[3]))
    assert_same_mapper(merge_sketches(other, again[4]).bin_mapper(16), merged.bin_mapper(16))


# ---- boosters.dask.train(bin_edges="sketch") ---------------------------------------

def training_data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 3] = np.round(X[:, 3] * 2)  # a few distinct values (NaN kept)
    signal = np.nan_to_num(X[:, 0]) - 2 * np.nan_to_num(X[:, 1]) + 0.5 * np.nan_to_num(X[:, 3])
    return X, np.round(8 * (signal + 0.3 * rng.normal(size=n))) / 8


def dask_sketch_mapper(client, X, w, max_bins, chunks=350):
    x_blocks = client.compute(list(da.from_array(X, chunks=(chunks, -1)).to_delayed().ravel()))
    w_blocks = client.compute(list(da.from_array(w, chunks=chunks).to_delayed()))
    return sketch_bin_mapper(client, x_blocks, w_blocks, bst.GBDTConfig(max_bins=max_bins))


@pytest.mark.parametrize("mode", ["i16", pytest.param("f64", marks=pytest.mark.slow)])
def test_sketch_edges_give_the_same_model_on_1_2_4_workers(clients, mode):
    # 16 bins: summaries of 256 values, fewer than a partition's 350 rows, so the
    # partitions' summaries are pruned and merged with error; the merge tree is fixed by
    # the 4 partitions, so every worker count gets the same edges and the same trees
    X, y = training_data()
    w = np.random.default_rng(1).exponential(size=len(y))
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, max_bins=16, histogram_mode=mode)
    models = [dask_train(clients[n], X, y, config, weights=w, bin_edges="sketch") for n in (1, 2, 4)]
    for other in models[1:]:
        assert_same_trees(other, models[0])
        assert np.array_equal(other.predict(X), models[0].predict(X))
    assert models[0].forest.trees[0].split_feature[0] >= 0
    # the edges are the local sketch's, merged in the same tree, and not the sample's
    blocks = [sketch_partition(X[a:a + 350], w[a:a + 350], SIZE_PER_BIN * 16) for a in range(0, 1200, 350)]
    local = merge_sketches(merge_sketches(blocks[0], blocks[1]), merge_sketches(blocks[2], blocks[3]))
    assert np.all(local.max_error()[:3] > 0)
    mapper = dask_sketch_mapper(clients[4], X, w, 16)
    assert_same_mapper(mapper, local.bin_mapper(16))
    assert not np.array_equal(mapper.upper_edges[0], BinMapper(16).fit(X, w).upper_edges[0])
    thresholds = models[0].forest.trees[0].threshold
    used = models[0].forest.trees[0].split_feature
    for f, t in zip(used, thresholds):
        if f >= 0:
            assert t in mapper.upper_edges[f]


def test_an_exact_sketch_trains_the_single_machine_model(clients):
    # 1200 rows, 256 bins: summaries of 4096 values are never pruned, the edges are those
    # of the single-machine training on every row (its sample is every row here)
    X, y = training_data(seed=2)
    w = np.random.default_rng(3).integers(0, 4, size=len(y)).astype(np.float64)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16")
    model = dask_train(clients[2], X, y, config, weights=w, bin_edges="sketch")
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, y, weights=w), config))


def test_bad_bin_edges(clients):
    X, y = training_data(n=100)
    with pytest.raises(ValueError, match="bin_edges must be one of 'sample', 'sketch', got 'exact'"):
        dask_train(clients[1], X, y, bst.GBDTConfig(n_estimators=1), chunks=50, bin_edges="exact")
