"""Binning: edges, the missing bin, constant/all-NaN columns, input types and orders."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from boosters.data.binned import U8, U16
from boosters.data.binning import BinMapper, feature_upper_edges

from support.naive import naive_bins


def fit_transform(X, **kwargs):
    mapper = BinMapper(**kwargs).fit(X)
    return mapper, mapper.transform(X)


def test_few_distinct_values_get_one_bin_each_cut_at_midpoints():
    X = np.array([[1.0], [3.0], [3.0], [7.0], [10.0]])
    mapper, binned = fit_transform(X)
    np.testing.assert_array_equal(mapper.upper_edges[0], [2.0, 5.0, 8.5, np.inf])
    np.testing.assert_array_equal(binned.feature_bins(0), [1, 2, 2, 3, 4])
    assert mapper.n_bins[0] == 5  # missing bin + 4 value bins


def test_many_distinct_values_get_equal_count_quantile_bins():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100_000, 1))
    mapper, binned = fit_transform(X, max_bins=65)
    counts = np.bincount(binned.feature_bins(0), minlength=65)
    assert counts[0] == 0  # no missing values
    assert mapper.n_bins[0] == 65
    expected = len(X) / 64
    assert counts[1:].min() > 0.9 * expected and counts[1:].max() < 1.1 * expected


def test_heavy_value_gets_its_own_bin_without_starving_the_others():
    rng = np.random.default_rng(1)
    col = np.where(rng.random(50_000) < 0.6, 0.0, rng.normal(size=50_000))
    mapper, binned = fit_transform(col[:, None], max_bins=32)
    bins = binned.feature_bins(0)
    zero_bin = bins[col == 0.0][0]
    assert np.all(bins[col == 0.0] == zero_bin)
    assert np.sum(bins == zero_bin) == np.sum(col == 0.0)  # nothing else shares it
    assert mapper.n_bins[0] == 32  # the budget is still used


def test_nan_goes_to_missing_bin_zero():
    X = np.array([[np.nan], [1.0], [2.0], [np.nan]])
    mapper, binned = fit_transform(X)
    np.testing.assert_array_equal(binned.feature_bins(0), [0, 1, 2, 0])
    assert mapper.is_usable[0]


def test_infinities_land_in_the_extreme_value_bins():
    X = np.array([[-np.inf], [0.0], [1.0], [2.0], [np.inf]])
    mapper, binned = fit_transform(X)
    bins = binned.feature_bins(0)
    assert bins[0] == 1 and bins[-1] == mapper.n_bins[0] - 1
    assert np.all(np.diff(bins.astype(int)) >= 0)


def test_constant_and_all_nan_columns_are_unusable():
    X = np.column_stack([np.full(100, 4.2), np.full(100, np.nan), np.arange(100.0)])
    mapper, binned = fit_transform(X)
    np.testing.assert_array_equal(mapper.is_usable, [False, False, True])
    assert np.all(binned.feature_bins(0) == 1)
    assert np.all(binned.feature_bins(1) == 0)


def test_constant_with_missing_values_is_still_splittable():
    X = np.array([[1.0], [np.nan], [1.0], [np.nan]])
    mapper, _ = fit_transform(X)
    assert mapper.is_usable[0]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.float32, np.float64, bool])
def test_integer_float_and_bool_input_bin_like_float64(dtype):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2 if dtype is bool else 100, size=(1000, 3)).astype(dtype)
    _, ref = fit_transform(X.astype(np.float64))
    _, got = fit_transform(X)
    np.testing.assert_array_equal(got.to_dense(), ref.to_dense())


@pytest.mark.parametrize("n_threads", [1, 2])
def test_c_and_fortran_order_and_strided_views_give_identical_bins(n_threads):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 7))
    X[rng.random(X.shape) < 0.05] = np.nan
    mapper = BinMapper().fit(X)
    c = mapper.transform(np.ascontiguousarray(X), n_threads=n_threads).to_dense()
    f = mapper.transform(np.asfortranarray(X), n_threads=n_threads).to_dense()
    wide = np.zeros((5000, 14))
    wide[:, ::2] = X
    s = mapper.transform(wide[:, ::2], n_threads=n_threads).to_dense()
    np.testing.assert_array_equal(c, f)
    np.testing.assert_array_equal(c, s)
    np.testing.assert_array_equal(c, naive_bins(X, mapper.upper_edges))


def test_float32_values_bin_consistently_with_their_edges():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 4)).astype(np.float32)
    mapper, binned = fit_transform(X)
    np.testing.assert_array_equal(binned.to_dense(), naive_bins(X, mapper.upper_edges))


def test_storage_dtype_follows_bin_count():
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.normal(size=20_000), rng.integers(0, 5, 20_000)])
    mapper, binned = fit_transform(X, max_bins=1000)
    assert mapper.n_bins[0] == 1000 and binned.feature_kind[0] == U16
    assert mapper.n_bins[1] == 6 and binned.feature_kind[1] == U8
    assert binned.bins_u16.dtype == np.uint16 and binned.bins_u8.dtype == np.uint8
    mapper, binned = fit_transform(X, max_bins=256)
    assert mapper.n_bins[0] == 256 and binned.feature_kind[0] == U8


def test_varying_bin_counts_and_histogram_offsets():
    X = np.column_stack([np.arange(10.0) % 2, np.arange(10.0), np.full(10, 1.0)])
    mapper, binned = fit_transform(X)
    np.testing.assert_array_equal(binned.n_bins, [3, 11, 2])
    np.testing.assert_array_equal(binned.hist_offsets, [0, 3, 14, 16])
    assert binned.total_bins == 16


def test_sample_weights_move_the_quantile_edges():
    x = np.arange(1000.0)
    w = np.where(x < 500, 9.0, 1.0)  # 90% of the weight below 500
    mapper = BinMapper(max_bins=11).fit(x[:, None], sample_weight=w)
    edges = mapper.upper_edges[0]
    assert np.sum(edges < 500) >= 8  # most bins where the weight is
    unweighted = BinMapper(max_bins=11).fit(x[:, None]).upper_edges[0]
    assert np.sum(unweighted < 500) == 5


def test_sampling_is_seeded_and_deterministic():
    rng = np.random.default_rng(6)
    X = rng.exponential(size=(30_000, 2))
    a = BinMapper(max_bins=64, sample_size=5000, seed=1).fit(X)
    b = BinMapper(max_bins=64, sample_size=5000, seed=1).fit(X)
    c = BinMapper(max_bins=64, sample_size=5000, seed=2).fit(X)
    for f in range(2):
        np.testing.assert_array_equal(a.upper_edges[f], b.upper_edges[f])
    assert any(not np.array_equal(a.upper_edges[f], c.upper_edges[f]) for f in range(2))


def test_input_is_not_modified():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 3))
    X[::5, 1] = np.nan
    before = X.copy()
    fit_transform(X)
    np.testing.assert_array_equal(X, before)


def test_adjacent_floats_are_separated():
    a = 1.0
    b = np.nextafter(a, 2.0)
    mapper, binned = fit_transform(np.array([[a], [b], [a]]))
    np.testing.assert_array_equal(binned.feature_bins(0), [1, 2, 1])


def test_huge_values_do_not_overflow_midpoints():
    X = np.array([[-1.7e308], [1.7e308]])
    mapper, binned = fit_transform(X)
    assert np.all(np.isfinite(mapper.upper_edges[0][:-1]))
    np.testing.assert_array_equal(binned.feature_bins(0), [1, 2])


@pytest.mark.parametrize("max_bins", [1, 0, -3, 65536, 100_000])
def test_max_bins_out_of_range(max_bins):
    with pytest.raises(ValueError, match="max_bins"):
        BinMapper(max_bins=max_bins)


def test_max_bins_upper_limit_is_accepted():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(70_000, 1))
    mapper, binned = fit_transform(X, max_bins=65535)
    assert mapper.n_bins[0] == 65535
    assert binned.feature_bins(0).max() == 65534


@pytest.mark.parametrize(
    "X, match",
    [
        (np.zeros(10), "2-D"),
        (np.zeros((2, 3, 4)), "2-D"),
        (np.zeros((0, 3)), "empty"),
        (np.zeros((5, 0)), "empty"),
        (np.array([["a", "b"], ["c", "d"]]), "numeric"),
        (np.array([[1 + 2j]]), "numeric"),
        ([[1, 2], [3]], "2-D numeric|2-D"),
    ],
)
def test_bad_input_raises_value_error(X, match):
    with pytest.raises(ValueError, match=match):
        BinMapper().fit(X)


def test_transform_with_wrong_feature_count():
    mapper = BinMapper().fit(np.zeros((10, 3)))
    with pytest.raises(ValueError, match="features"):
        mapper.transform(np.zeros((10, 4)))


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=40),
        elements=st.floats(allow_nan=True, allow_infinity=True, width=64),
    ),
    st.integers(2, 12),
)
def test_kernel_matches_naive_searchsorted(X, max_bins):
    mapper = BinMapper(max_bins=max_bins).fit(X)
    binned = mapper.transform(X)
    np.testing.assert_array_equal(binned.to_dense(), naive_bins(X, mapper.upper_edges))
    assert np.all(binned.to_dense() < mapper.n_bins)


def test_upper_edges_of_empty_feature():
    np.testing.assert_array_equal(feature_upper_edges(np.array([]), None, 10), [np.inf])


def _columns_with_edge_cases(rng, n):
    cols = [
        rng.standard_normal(n),                                  # both signs, every exponent
        rng.integers(-5, 100, n).astype(float),                 # small integer range: counted
        rng.integers(0, 1 << 20, n).astype(float),              # integers too wide to count: sorted
        np.round(rng.standard_normal(n), 2),                    # many repeats
        np.full(n, 3.5),                                        # constant
        np.full(n, np.nan),                                     # all missing
        rng.choice([-np.inf, np.inf, -0.0, 0.0, 1e-300, -1e-300, 7.0], n),
        rng.uniform(1.0, 1.0 + 1e-12, n),                       # only the low bits differ
    ]
    X = np.array(cols)
    X[0, ::7] = np.nan
    return X


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_distinct_values_match_numpy_unique(n_threads):
    from boosters.data._distinct import distinct_values

    rng = np.random.default_rng(5)
    X = _columns_with_edge_cases(rng, 5_000)
    block, counts = X.copy(), np.empty(X.shape, dtype=np.uint32)
    n_distinct, n_present = np.empty(len(X), dtype=np.int64), np.empty(len(X), dtype=np.int64)
    distinct_values(block, counts, n_distinct, n_present, n_threads)
    for j, column in enumerate(X):
        present = column[~np.isnan(column)]
        expected, expected_counts = np.unique(present, return_counts=True)  # -0.0 == 0.0: one value
        k = n_distinct[j]
        assert n_present[j] == len(present)
        np.testing.assert_array_equal(block[j, :k], expected)
        np.testing.assert_array_equal(counts[j, :k], expected_counts)


def test_distinct_values_checks_shapes_and_accepts_empty_columns():
    from boosters.data._distinct import distinct_values

    empty = np.empty((3, 0))
    n_distinct, n_present = np.ones(3, dtype=np.int64), np.ones(3, dtype=np.int64)
    distinct_values(empty, np.empty((3, 0), dtype=np.uint32), n_distinct, n_present, 2)
    assert n_distinct.tolist() == [0, 0, 0] and n_present.tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="counts must match"):
        distinct_values(np.zeros((2, 5)), np.zeros((2, 4), dtype=np.uint32), n_distinct[:2], n_present[:2], 1)
