"""Ordered target statistics (boosters/data/target_statistics.py) against a naive per-row
loop: each training row's statistic reads only the rows before it in the permutation."""

import numpy as np
import pytest

from boosters.data.target_statistics import UNSEEN_CODE, encode, fit_statistics, full_table, ordered_statistics


def naive_ordered(codes, y, prior, weight, permutation):
    """Row by row in permutation order, with running sums and counts per category."""
    sums, counts = {}, {}
    out = np.full(len(codes), np.nan)
    for row in permutation:
        c = codes[row]
        if np.isnan(c):
            continue
        out[row] = (sums.get(c, 0.0) + weight * prior) / (counts.get(c, 0) + weight)
        sums[c] = sums.get(c, 0.0) + y[row]
        counts[c] = counts.get(c, 0) + 1
    return out


def _codes(rng, n, k, missing=0.1):
    codes = rng.integers(0, k, n).astype(float)
    codes[rng.random(n) < missing] = np.nan
    return codes


@pytest.mark.parametrize("weight", [1.0, 0.5, 3.0])
def test_binary_statistics_equal_the_naive_loop_exactly(weight):
    rng = np.random.default_rng(0)
    codes, y = _codes(rng, 3000, 40), (rng.random(3000) < 0.3).astype(float)
    permutation = rng.permutation(3000)
    got = ordered_statistics(codes, y, y.mean(), weight, permutation)
    np.testing.assert_array_equal(got, naive_ordered(codes, y, y.mean(), weight, permutation))


def test_regression_statistics_equal_the_naive_loop():
    """Real-valued sums: cumulative sums less the sum before the category, against a
    running sum per category; equal to 1e-12 relative (rounding order differs)."""
    rng = np.random.default_rng(1)
    codes, y = _codes(rng, 5000, 300), rng.normal(3.0, 2.0, 5000)
    permutation = rng.permutation(5000)
    got = ordered_statistics(codes, y, y.mean(), 1.0, permutation)
    want = naive_ordered(codes, y, y.mean(), 1.0, permutation)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_rows_own_target_never_enters_its_statistic():
    """Changing one row's label changes only the statistics of its category's later rows."""
    rng = np.random.default_rng(2)
    codes, y = _codes(rng, 500, 10, 0.0), (rng.random(500) < 0.5).astype(float)
    permutation = rng.permutation(500)
    before = ordered_statistics(codes, y, 0.5, 1.0, permutation)
    row = permutation[250]
    flipped = y.copy()
    flipped[row] = 1 - flipped[row]
    after = ordered_statistics(codes, flipped, 0.5, 1.0, permutation)
    changed = np.flatnonzero(before != after)
    position = np.argsort(permutation)
    assert row not in changed
    assert len(changed) > 0 and np.all(codes[changed] == codes[row]) and np.all(position[changed] > 250)


def test_the_full_table_and_encode_for_seen_unseen_and_missing_codes():
    rng = np.random.default_rng(3)
    codes, y = _codes(rng, 1000, 8), rng.normal(size=1000)
    table = full_table(codes, y, 10, 0.25, 2.0)  # codes 8, 9 never seen: the prior
    for c in range(10):
        rows = codes == c
        assert table[c] == pytest.approx((y[rows].sum() + 2.0 * 0.25) / (rows.sum() + 2.0), rel=1e-12)
    assert table[8] == table[9] == table[10] == 0.25
    X = np.array([[0.0, 1.5], [np.nan, 2.0], [UNSEEN_CODE, 0.0], [-1.0, 0.0], [2.5, 0.0], [10.0, 0.0]],
                 dtype=np.float32)
    out = encode(X, {0: table})
    assert out.dtype == np.float64 and X[0, 0] == 0.0  # a new array
    np.testing.assert_array_equal(out[:, 1], X[:, 1])
    assert out[0, 0] == table[0] and np.isnan(out[1, 0])
    assert np.all(out[2:, 0] == 0.25)  # unseen, negative, non-integer, past the table: the prior


def test_fit_statistics_leaves_X_alone_and_uses_the_seeded_permutation():
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=400), _codes(rng, 400, 5)])
    y = (rng.random(400) < 0.4).astype(float)
    copy = X.copy()
    out, tables = fit_statistics(X, y, [1], {1: None}, 1.0, seed=7)
    np.testing.assert_array_equal(X, copy)
    np.testing.assert_array_equal(out[:, 0], X[:, 0])
    permutation = np.random.default_rng(7).permutation(400)
    np.testing.assert_array_equal(out[:, 1], naive_ordered(X[:, 1], y, y.mean(), 1.0, permutation))
    assert len(tables[1]) == 5 + 1 and tables[1][-1] == y.mean()
    again, _ = fit_statistics(X, y, [1], {1: None}, 1.0, seed=7)
    np.testing.assert_array_equal(again, out)
    other, _ = fit_statistics(X, y, [1], {1: None}, 1.0, seed=8)
    assert not np.array_equal(np.nan_to_num(other), np.nan_to_num(out))
