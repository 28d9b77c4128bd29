"""Quantized gradient accumulation (histogram_mode "i16" / "i8")."""

import lightgbm as lgb
import numpy as np
import pytest

import boosters as bst
from boosters.bench.datasets import make_covertype, make_friedman, train_test_split
from boosters._testing.kernels import (build_histogram_packed, column_totals, find_best_splits, quantize_gradients,
                                       subtract_packed, unpack)
from boosters.training.histograms._quantize import max_levels
from boosters.training.split._split import QuantizedSplitFinder
from boosters.training.backend import resolve_histogram_mode

from support.naive import binned_from_dense, naive_best_split, naive_packed_histogram, random_binned, random_gradients
from support.tree_compare import assert_same_trees

MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(x):
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def naive_quantize(gh, levels, seed, tree_index, bits):
    """The documented quantizer in NumPy: scales L / max|.|, floor(x * scale + u) with u
    from splitmix64(key + row), taken as trunc(x * scale + u + L + 1) - (L + 1) in float64,
    clamped, packed as grad * 2**bits + hess (bits: 16 for int32 words, 8 for int16)."""
    g, h = gh[:, 0].astype(np.float64), gh[:, 1].astype(np.float64)
    mg, mh = np.abs(g).max(), np.abs(h).max()
    sg = levels / mg if mg > 0 else 0.0
    sh = levels / mh if mh > 0 else 0.0
    with np.errstate(over="ignore"):
        key = _splitmix64(np.uint64(seed) ^ _splitmix64(np.uint64(tree_index) + np.uint64(0x632BE59BD9B4E019)))
        r = _splitmix64(key + np.arange(len(g), dtype=np.uint64))
    u1 = (r >> np.uint64(40)).astype(np.float64) * 2.0 ** -24
    u2 = ((r >> np.uint64(16)) & np.uint64(0xFFFFFF)).astype(np.float64) * 2.0 ** -24
    offset = levels + 1.0
    qg = np.clip(np.trunc(g * sg + u1 + offset).astype(np.int64) - int(offset), -levels, levels)
    qh = np.clip(np.trunc(h * sh + u2 + offset).astype(np.int64) - int(offset), 0, levels)
    packed = qg * (1 << bits) + qh
    return packed.astype(np.int32 if bits == 16 else np.int16), sg, sh


@pytest.mark.parametrize("bits, dtype", [(16, np.int32), (8, np.int16)])
def test_quantizer_matches_naive_reference_exactly(bits, dtype):
    rng = np.random.default_rng(0)
    gh = random_gradients(rng, 50_000)
    gh[::97, 0] *= 40.0  # a few large gradients set the scale
    levels = max_levels(len(gh), bits)
    out = np.empty(len(gh), dtype=dtype)
    sg, sh = quantize_gradients(gh, out, levels, 7, 3, 1)
    want, wsg, wsh = naive_quantize(gh, levels, 7, 3, bits)
    assert (sg, sh) == (wsg, wsh)
    np.testing.assert_array_equal(out, want)
    q_g, q_h = unpack(out)
    assert q_g.min() >= -levels and q_g.max() <= levels and q_h.min() >= 0 and q_h.max() <= levels


def test_quantizer_is_thread_independent_and_seeded():
    rng = np.random.default_rng(1)
    gh = random_gradients(rng, 200_000)
    levels = max_levels(len(gh), 16)
    runs = {}
    for threads in (1, 2, 4):
        out = np.empty(len(gh), dtype=np.int32)
        quantize_gradients(gh, out, levels, 11, 5, threads)
        runs[threads] = out
    np.testing.assert_array_equal(runs[1], runs[2])
    np.testing.assert_array_equal(runs[1], runs[4])
    other = np.empty(len(gh), dtype=np.int32)
    quantize_gradients(gh, other, levels, 11, 6, 1)  # another tree rounds differently
    assert np.mean(other != runs[1]) > 0.3


def test_stochastic_rounding_is_unbiased():
    rng = np.random.default_rng(2)
    n = 400_000
    gh = np.column_stack([np.full(n, 0.3), rng.uniform(0.1, 1.0, n)]).astype(np.float32)
    gh[0, 0] = 1.0  # scale: 8 levels per unit -> 0.3 is 2.4 levels, rounded to 2 or 3
    out = np.empty(n, dtype=np.int16)
    sg, _ = quantize_gradients(gh, out, 8, 0, 0, 2)
    q_g, _ = unpack(out)
    assert set(np.unique(q_g[1:])) == {2, 3}
    assert abs(q_g[1:].mean() / sg - 0.3) < 2e-3  # E[q] = x exactly, up to sampling noise


def test_all_zero_gradients_quantize_to_zero():
    gh = np.zeros((1000, 2), dtype=np.float32)
    out = np.empty(1000, dtype=np.int32)
    assert quantize_gradients(gh, out, 100, 0, 0, 1) == (0.0, 0.0)
    assert not out.any()


@pytest.mark.parametrize("bits, dtype", [(16, np.int32), (8, np.int16)])
@pytest.mark.parametrize("threads", [1, 2])
def test_packed_histogram_equals_naive_integer_reference(bits, dtype, threads):
    rng = np.random.default_rng(3)
    binned = random_binned(rng, 30_000, [256, 3, 17, 300, 2, 1000])
    gh = random_gradients(rng, 30_000)
    packed = np.empty(30_000, dtype=dtype)
    quantize_gradients(gh, packed, max_levels(30_000, bits), 0, 0, 1)
    rows = np.sort(rng.choice(30_000, 9_000, replace=False)).astype(np.uint32)
    for subset in (None, rows):
        hist = np.full(binned.total_bins, -1, dtype=np.int64)
        build_histogram_packed(binned, packed, hist, rows=subset, n_threads=threads)
        g, h = unpack(hist)
        want_g, want_h = naive_packed_histogram(binned, packed, subset)
        np.testing.assert_array_equal(g, want_g)
        np.testing.assert_array_equal(h, want_h)


def test_packed_subtraction_is_exact():
    rng = np.random.default_rng(4)
    binned = random_binned(rng, 20_000, [64, 256, 5])
    packed = np.empty(20_000, dtype=np.int32)
    quantize_gradients(random_gradients(rng, 20_000), packed, max_levels(20_000, 16), 0, 0, 1)
    left_mask = rng.random(20_000) < 0.35
    rows_all = np.arange(20_000, dtype=np.uint32)
    parent, left, right = (np.empty(binned.total_bins, np.int64) for _ in range(3))
    build_histogram_packed(binned, packed, parent, rows=rows_all)
    build_histogram_packed(binned, packed, left, rows=rows_all[left_mask])
    build_histogram_packed(binned, packed, right, rows=rows_all[~left_mask])
    derived = np.empty_like(parent)
    subtract_packed(parent, left, derived)
    np.testing.assert_array_equal(derived, right)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_no_overflow_at_65536_rows_in_one_bin(sign):
    n = 65_536
    levels = max_levels(n, 16)
    assert levels == 32767  # the largest 16-bit value still fits 65536 rows
    binned = binned_from_dense(np.ones((n, 1), dtype=np.int64), [3])
    gh = np.column_stack([np.full(n, sign * 2.5), np.full(n, 0.75)]).astype(np.float32)
    packed = np.empty(n, dtype=np.int32)
    quantize_gradients(gh, packed, levels, 0, 0, 1)  # every row at the extreme value
    hist = np.empty(binned.total_bins, dtype=np.int64)
    build_histogram_packed(binned, packed, hist)
    g, h = unpack(hist)
    assert g[1] == sign * n * levels and h[1] == n * levels
    assert g[0] == g[2] == h[0] == h[2] == 0


def test_quantized_split_finder_equals_float_finder_on_dequantized_histogram():
    rng = np.random.default_rng(5)
    n_bins = [256, 3, 40, 300]
    binned = random_binned(rng, 20_000, n_bins)
    packed = np.empty(20_000, dtype=np.int32)
    sg, sh = quantize_gradients(random_gradients(rng, 20_000), packed, max_levels(20_000, 16), 0, 0, 1)
    hist = np.empty((1, binned.total_bins), dtype=np.int64)
    build_histogram_packed(binned, packed, hist[0])
    g, h = unpack(hist[0])
    float_hist = np.stack([g / sg, h / sh], axis=1)
    G, H = float_hist[: n_bins[0]].sum(axis=0)
    params = dict(l1=0.1, l2=1.0, min_child_weight=1.0, min_gain_to_split=0.0, min_samples_leaf=10)
    finder = QuantizedSplitFinder(hist, binned.hist_offsets, binned.n_bins, np.arange(4), **params)
    finder.set_scales(sg, sh)
    (got,) = find_best_splits(finder, [0], [G], [H], [20_000])
    want = naive_best_split(float_hist, binned.hist_offsets, binned.n_bins, np.arange(4), G, H, 20_000, **params)
    assert got[1:4] == want[1:4]
    assert got[0] == pytest.approx(want[0], rel=1e-9)
    assert column_totals(finder, 0, 0, n_bins[0]) == pytest.approx((G, H), rel=1e-12)


def test_auto_mode_resolution():
    config = bst.GBDTConfig()
    assert resolve_histogram_mode(config, 99_999) == "f64"
    assert resolve_histogram_mode(config, 100_000) == "i16"
    assert resolve_histogram_mode(config.replace(histogram_mode="i8"), 100) == "i8"
    assert resolve_histogram_mode(config.replace(histogram_mode="f64"), 10**6) == "f64"


# -- models -------------------------------------------------------------------------------

def _leafwise(mode, objective=bst.Objective.squared(), **changes):
    params = dict(n_estimators=100, learning_rate=0.1, objective=objective, growth_strategy="leafwise",
                  max_depth=None, n_leaves=31, min_samples_leaf=20, l2=0.0, min_child_weight=1e-3,
                  subsample=1.0, cache_size=31, histogram_mode=mode)
    return bst.GBDTConfig(**{**params, **changes})


@pytest.mark.parametrize("mode", ["i16", "i8"])
def test_quantized_regression_within_half_a_percent_rmse_of_lightgbm(mode):
    X, y = make_friedman(30_000, 10, seed=6)
    X_train, X_test, y_train, y_test = train_test_split(X, y, 0.25, seed=6)
    ours = bst.GBDTModel.train(bst.Dataset(X_train, y_train), _leafwise(mode), n_threads=2)
    theirs = lgb.train(dict(objective="regression", num_leaves=31, learning_rate=0.1, min_data_in_leaf=20,
                            lambda_l2=0.0, max_bin=255, verbose=-1, num_threads=2),
                       lgb.Dataset(X_train, y_train), 100)
    rmse = lambda p: np.sqrt(np.mean((p - y_test) ** 2))  # noqa: E731
    assert rmse(ours.predict(X_test)) <= 1.005 * rmse(theirs.predict(X_test))


@pytest.mark.parametrize("mode", ["i16", "i8"])
def test_quantized_binary_within_0_001_auc_of_lightgbm(mode):
    from sklearn.metrics import roc_auc_score

    X, y = make_covertype(40_000, binary=True, seed=7)
    X_train, X_test, y_train, y_test = train_test_split(X, y, 0.25, seed=7)
    ours = bst.GBDTModel.train(bst.Dataset(X_train, y_train), _leafwise(mode, bst.Objective.logistic()), n_threads=2)
    theirs = lgb.train(dict(objective="binary", num_leaves=31, learning_rate=0.1, min_data_in_leaf=20,
                            lambda_l2=0.0, max_bin=255, verbose=-1, num_threads=2),
                       lgb.Dataset(X_train, y_train), 100)
    assert roc_auc_score(y_test, ours.predict(X_test)) >= roc_auc_score(y_test, theirs.predict(X_test)) - 0.001


@pytest.mark.parametrize("mode", ["i16", "i8"])
def test_quantized_models_are_thread_and_run_independent(mode):
    X, y = make_covertype(30_000, seed=8)
    config = bst.GBDTConfig(n_estimators=8, objective=bst.Objective.softmax(7), histogram_mode=mode, cache_size=64)
    models = [bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=t) for t in (1, 2, 2)]
    for other in models[1:]:
        assert len(models[0].trees) == 8 * 7
        assert_same_trees(other, models[0])


def test_leaf_renewal_uses_full_precision_gradients():
    """With renewal, every leaf value is the exact Newton step of its rows; without,
    it comes from the dequantized sums and differs slightly."""
    X, y = make_friedman(20_000, 10, seed=9)
    base = y.mean()
    renewed = bst.GBDTModel.train(bst.Dataset(X, y), _leafwise("i8", n_estimators=1, learning_rate=1.0))
    raw = bst.GBDTModel.train(bst.Dataset(X, y), _leafwise("i8", n_estimators=1, learning_rate=1.0, renew_leaves=False))
    tree = renewed.trees[0]
    leaf_of_row = _leaf_index(tree, X)
    for leaf in np.flatnonzero(tree.is_leaf):
        rows = leaf_of_row == leaf
        exact = -np.sum((base - y[rows]).astype(np.float32).astype(np.float64)) / rows.sum()
        assert tree.value[leaf] == pytest.approx(exact, rel=1e-9, abs=1e-12)
    assert not np.allclose(raw.trees[0].value[tree.is_leaf], tree.value[tree.is_leaf], rtol=1e-9)
    np.testing.assert_allclose(raw.trees[0].value[tree.is_leaf], tree.value[tree.is_leaf], rtol=0.05, atol=0.02)


def _leaf_index(tree, X):
    out = np.empty(len(X), dtype=np.int64)
    for i, x in enumerate(X):
        node = 0
        while tree.split_feature[node] >= 0:
            node = tree.left_child[node] if x[tree.split_feature[node]] <= tree.threshold[node] else tree.right_child[node]
        out[i] = node
    return out


# -- past 65,536 rows: reduced levels, 32-bit sums near their limit --------------------------

BIG_ROWS = 140_000  # > 2**17: the quantizer's maxima in two chunks on 2 threads; i16 levels 15339


def _sign_objective(margins, dataset):
    """|margin - y| with the hessian 1: every gradient is -1, 0 or +1, which quantize to
    exactly -L, 0, L (q = floor(g L + u), u in [0, 1)), so integer histograms are L times
    the float64 ones and the quantized trees must be the float64 trees."""
    return np.sign(margins - dataset.y), np.ones_like(margins)


def _big_signed_data(n, seed):
    """Integer features (few distinct values: no binning differences), y from them; the
    model starts at y's 15% quantile, so most first gradients are -1, and feature 0 has
    one value in 90% of the rows: that bin's grad sum is about -0.6 n L, near -2**31
    (the 32-bit sums' limit) at n L < 2**31."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, k, size=n) for k in (2, 7, 20, 60, 250)]).astype(np.float64)
    X[:, 0] = rng.random(n) < 0.9
    X[rng.random(n) < 0.05, 2] = np.nan
    y = (X[:, 0] + np.sin(X[:, 3] / 5) + (X[:, 4] > 100) * np.nan_to_num(X[:, 2], nan=3.0) / 4
         + 0.3 * rng.normal(size=n))
    return X, y


@pytest.mark.parametrize("mode", ["i16", "i8"])
@pytest.mark.parametrize("growth", ["depthwise", "leafwise"])
def test_quantized_trees_past_65536_rows_equal_the_float_trees(mode, growth):
    """140,000 rows, 2 threads, histogram subtraction (depth-wise: every level's larger
    child; leaf-wise: the larger sibling). i16: levels 15339, a root bin's 32-bit grad
    sum ~ -0.6 n L ~ -1.3e9 (levels of 32767, or of 2**32 / n, would overflow it); i8:
    nodes under 259 rows narrow to 16-bit sums, their siblings widen back. With gradients
    in {-1, 0, 1} the integer sums are exact multiples of the float ones, so every split
    (feature, bin, missing direction, row counts) is the float64 model's, and the leaf
    values (renewed from full-precision gradients: integer sums in float64) equal them
    exactly. min_samples_leaf=200 keeps nodes away from a few rows, where two features
    often give exactly equal gains (integer sums) that rounding of the dequantized sums
    breaks either way."""
    X, y = _big_signed_data(BIG_ROWS, seed=21)
    objective = bst.Objective.custom(_sign_objective, base_score=float(np.quantile(y, 0.15)))
    params = dict(n_estimators=4, learning_rate=0.5, objective=objective, l2=1.0, min_child_weight=0.5,
                  min_samples_leaf=200, growth_strategy=growth, max_depth=7 if growth == "depthwise" else None,
                  n_leaves=64, cache_size=128, max_bins=256)
    models = {m: bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(histogram_mode=m, **params), n_threads=2)
              for m in ("f64", mode)}
    exact, quantized = models["f64"], models[mode]
    assert quantized.n_trees == exact.n_trees == 4
    # the case: a root bin's grad sum near the 32-bit limit (i16; i8's L = 127 is far below it)
    heavy = X[:, 0] == 1
    assert abs(np.sign(np.quantile(y, 0.15) - y[heavy]).sum()) > 0.55 * BIG_ROWS
    for t, (a, b) in enumerate(zip(quantized.trees, exact.trees)):
        assert a.n_nodes == b.n_nodes >= 31, f"tree {t}"
        for name in ("split_feature", "threshold_bin", "default_left", "left_child", "right_child", "n_samples"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=f"tree {t}: {name}")
        leaf = b.split_feature < 0
        np.testing.assert_array_equal(a.value[leaf], b.value[leaf], err_msg=f"tree {t}: leaf values")
        # inner nodes' values come from the dequantized sums (q / scale, rounded; a sum of 0 may
        # come out as ~1e-17)
        np.testing.assert_allclose(a.value[~leaf], b.value[~leaf], rtol=1e-12, atol=1e-12,
                                   err_msg=f"tree {t}: inner values")
    np.testing.assert_array_equal(quantized.predict_raw(X), exact.predict_raw(X))


def test_quantizer_and_histograms_past_131072_rows_on_two_threads():
    """140,000 rows: levels 15339 (n L < 2**31); on 2 threads the quantizer takes its
    maxima over two chunks of rows (the largest |grad| and hess are in the second); one
    bin holds 90% of the rows, gradients near the maximum and mostly of one sign, so its
    32-bit grad sum is ~0.7 * 2**31. The packed pairs, the bins and a sibling's bins
    from the subtraction equal NumPy's int64 sums of the documented quantizer's values
    exactly (integers: no tolerance)."""
    n = BIG_ROWS
    rng = np.random.default_rng(22)
    levels = max_levels(n, 16)
    gh = np.column_stack([rng.uniform(0.9, 1.0, n), rng.uniform(0.5, 1.0, n)]).astype(np.float32)
    gh[rng.random(n) < 0.05, 0] *= -1.0
    gh[n - 5] = (1.0, 1.0)  # the maxima, in the second chunk of rows
    packed = np.empty(n, dtype=np.int32)
    scales = quantize_gradients(gh, packed, levels, 3, 1, 2)
    want, sg, sh = naive_quantize(gh, levels, 3, 1, 16)
    assert scales == (sg, sh) == (levels, levels)
    np.testing.assert_array_equal(packed, want)
    dense = np.column_stack([np.where(rng.random(n) < 0.9, 1, 2), rng.integers(0, 50, n)])
    binned = binned_from_dense(dense, [3, 50])
    parent = np.empty(binned.total_bins, dtype=np.int64)
    build_histogram_packed(binned, packed, parent, n_threads=2)
    want_g, want_h = naive_packed_histogram(binned, packed)
    np.testing.assert_array_equal(np.stack(unpack(parent)), np.stack([want_g, want_h]))
    assert want_g[1] > 0.7 * 2**31 and want_h[1] > 0.5 * 2**31  # the case: near the 32-bit sums' limit
    rows = np.flatnonzero(rng.random(n) < 0.45).astype(np.uint32)
    child, sibling = np.empty_like(parent), np.empty_like(parent)
    build_histogram_packed(binned, packed, child, rows=rows, n_threads=2)
    subtract_packed(parent, child, sibling)
    others = np.setdiff1d(np.arange(n), rows)
    np.testing.assert_array_equal(np.stack(unpack(sibling)), np.stack(naive_packed_histogram(binned, packed, others)))
