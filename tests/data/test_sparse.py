"""scipy.sparse input (CSR/CSC, arrays and matrices, pandas sparse columns): trained and
predicted without densifying, with the model of the densified data.

Identity: with quantized (i16) histograms every sum is an exact integer, so the model
trained on the sparse matrix is the dense one byte for byte (`to_bytes`). With float64
histograms a sparse feature's default bin is the node total minus its other bins, not a
direct sum, so its float64 sums may differ in the last bits: the tree structure must be
identical and the leaf values equal to 1e-12 relative (a few roundings of ~1e-16).
"""

import tracemalloc

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import boosters as bst
from boosters.data import dataset as dataset_module
from boosters.data.binning import BinMapper
from boosters.data.sparse import as_sparse_matrix
from boosters.data.sparse_binning import fit_sparse
from support.child_python import python_run

FORMATS = {
    "csr_array": sp.csr_array, "csr_matrix": sp.csr_matrix,
    "csc_array": sp.csc_array, "csc_matrix": sp.csc_matrix,
}
STRUCTURE = ("split_feature", "threshold", "default_left", "left_child", "right_child")


def bag_of_words(n_rows, n_features, density, seed=0, nan_fraction=0.0):
    """Counts 1..5 at random positions (a bag of words), labels from a sparse linear model."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.integers(1, 6, k).astype(np.float64))
    if nan_fraction:
        X.data[rng.random(X.nnz) < nan_fraction] = np.nan
    coef = np.where(rng.random(n_features) < 0.3, rng.normal(size=n_features), 0.0)
    clean = X.copy()
    clean.data = np.nan_to_num(clean.data)
    y = clean @ coef + 0.1 * rng.normal(size=n_rows)  # never densified: the memory test uses it
    return sp.csr_matrix(X), y


def assert_same_model(sparse_model, dense_model, mode):
    if mode == "i16":
        assert sparse_model.to_bytes() == dense_model.to_bytes()
        return
    assert sparse_model.n_trees == dense_model.n_trees
    for a, b in zip(sparse_model.trees, dense_model.trees):
        for name in STRUCTURE:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-12, atol=1e-15)


def train(X, y, mode="i16", growth=bst.GrowthStrategy.Depthwise, val=None, n_threads=1, **params):
    cfg = bst.GBDTConfig(**{**dict(n_estimators=8, histogram_mode=mode, growth_strategy=growth, max_depth=4,
                                   n_leaves=12, learning_rate=0.3), **params})
    val_set = None if val is None else bst.Dataset(*val)
    return bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, val_set=val_set, n_threads=n_threads)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", ["f64", "i16"])
@pytest.mark.parametrize("growth", [bst.GrowthStrategy.Depthwise, bst.GrowthStrategy.Leafwise])
@pytest.mark.parametrize("with_val", [False, True])
def test_sparse_model_is_the_dense_model(fmt, mode, growth, with_val):
    X, y = bag_of_words(3000, 40, 0.08, seed=1, nan_fraction=0.05)
    Xv, yv = bag_of_words(500, 40, 0.08, seed=2)
    Xs = FORMATS[fmt](X)
    val_sparse = (FORMATS[fmt](Xv), yv) if with_val else None
    val_dense = (Xv.toarray(), yv) if with_val else None
    sparse_model = train(Xs, y, mode, growth, val_sparse, early_stopping_rounds=3 if with_val else None)
    dense_model = train(X.toarray(), y, mode, growth, val_dense, early_stopping_rounds=3 if with_val else None)
    assert_same_model(sparse_model, dense_model, mode)
    if with_val:
        assert sparse_model.eval_history == pytest.approx(dense_model.eval_history, rel=1e-12)
    # predictions on sparse input are those on the dense input, exactly (same model)
    np.testing.assert_array_equal(sparse_model.predict(Xs), sparse_model.predict(X.toarray()))
    np.testing.assert_array_equal(sparse_model.predict(FORMATS[fmt](Xv)), sparse_model.predict(Xv.toarray()))


def test_explicit_zeros_are_zeros():
    X, y = bag_of_words(2000, 20, 0.1, seed=3)
    with_zeros = X.copy()
    rng = np.random.default_rng(0)
    with_zeros.data[rng.random(X.nnz) < 0.3] = 0.0  # stored zeros, still stored
    assert with_zeros.nnz == X.nnz and (with_zeros.data == 0).sum() > 0
    model = train(with_zeros, y)
    assert model.to_bytes() == train(with_zeros.toarray(), y).to_bytes()
    np.testing.assert_array_equal(model.predict(with_zeros), model.predict(with_zeros.toarray()))
    with_zeros.eliminate_zeros()  # the same values without the stored zeros: the same model
    assert model.to_bytes() == train(with_zeros, y).to_bytes()


def test_nan_is_missing_and_learns_its_direction():
    rng = np.random.default_rng(4)
    n = 2000
    dense = np.zeros((n, 3))
    dense[:, 0] = rng.integers(0, 4, n)
    dense[rng.random(n) < 0.2, 0] = np.nan
    y = np.where(np.isnan(dense[:, 0]), 5.0, dense[:, 0])  # missing rows are the high ones
    model = train(sp.csr_matrix(dense), y, n_estimators=1, learning_rate=1.0)
    assert model.to_bytes() == train(dense, y, n_estimators=1, learning_rate=1.0).to_bytes()
    root = model.trees[0]
    assert root.split_feature[0] == 0 and not root.default_left[0]  # NaN goes with the larger values
    probe = sp.csr_matrix(np.array([[np.nan, 0, 0], [0, 0, 0], [3, 0, 0]]))
    np.testing.assert_array_equal(model.predict(probe), model.predict(probe.toarray()))
    assert model.predict(probe)[0] > model.predict(probe)[2]


def test_weights_and_many_bins():
    rng = np.random.default_rng(5)
    X = sp.random(3000, 15, density=0.2, format="csr", random_state=5)  # continuous values: many bins
    X.data -= 0.5  # negative and positive values around the zeros
    y = np.asarray(X.sum(axis=1)).ravel() + 0.1 * rng.normal(size=3000)
    w = rng.integers(1, 4, 3000).astype(np.float64)
    for max_bins in (64, 1024):  # 1024: uint16 bins
        cfg = bst.GBDTConfig(n_estimators=5, histogram_mode="i16", max_bins=max_bins, max_depth=4)
        a = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), cfg, n_threads=1)
        b = bst.GBDTModel.train(bst.Dataset(X.toarray(), y, weights=w), cfg, n_threads=1)
        assert a.to_bytes() == b.to_bytes()


def test_bins_are_the_dense_bins():
    X, _ = bag_of_words(1500, 25, 0.1, seed=6, nan_fraction=0.1)
    X.data[::7] *= -1.5
    mapper_s, binned_s = bst.Dataset(X).binned(bundling=False)
    mapper_d, binned_d = bst.Dataset(X.toarray()).binned(bundling=False)
    for e_s, e_d in zip(mapper_s.upper_edges, mapper_d.upper_edges):
        np.testing.assert_array_equal(e_s, e_d)
    np.testing.assert_array_equal(mapper_s.is_usable, mapper_d.is_usable)
    np.testing.assert_array_equal(binned_s.to_dense(), binned_d.to_dense())
    assert binned_s.has_sparse and not binned_d.has_sparse


def test_sampled_edges_are_the_dense_sampled_edges():
    """Above sample_size rows the edges come from the same stratified sample of rows."""
    X, _ = bag_of_words(5000, 12, 0.2, seed=7)
    X.data += np.random.default_rng(0).random(X.nnz)  # many distinct values: equal-weight cuts
    sparse_mapper = BinMapper(32, sample_size=700, seed=3)
    fit_sparse(sparse_mapper, X, None)
    dense_mapper = BinMapper(32, sample_size=700, seed=3).fit(X.toarray())
    for e_s, e_d in zip(sparse_mapper.upper_edges, dense_mapper.upper_edges):
        np.testing.assert_array_equal(e_s, e_d)


def test_thread_count_does_not_change_the_model():
    X, y = bag_of_words(20000, 30, 0.05, seed=8)  # 20000 rows: several row blocks in the sparse kernel
    for mode in ("f64", "i16"):
        one = train(X, y, mode, n_threads=1)
        two = train(X, y, mode, n_threads=2)
        assert one.to_bytes() == two.to_bytes()


def test_pandas_sparse_columns():
    X, y = bag_of_words(1500, 6, 0.15, seed=9)
    dense = X.toarray()
    dense[::11, 5] = np.nan
    df = pd.DataFrame({f"w{j}": pd.arrays.SparseArray(dense[:, j], fill_value=0.0) for j in range(4)})
    df["dense"] = dense[:, 4]                                                  # a dense column among them
    df["nan_fill"] = pd.arrays.SparseArray(dense[:, 5], fill_value=np.nan)   # NaN as the fill value
    model = train(df, y)
    assert model.feature_names == list(df.columns)
    dense_df = pd.DataFrame(dense, columns=df.columns)
    assert model.to_bytes() == train(dense_df, y).to_bytes()
    np.testing.assert_array_equal(model.predict(df), model.predict(dense_df))
    # columns matched by name, whatever their order
    np.testing.assert_array_equal(model.predict(df[df.columns[::-1]]), model.predict(dense_df))


def test_other_sparse_formats_are_converted():
    X, y = bag_of_words(1000, 10, 0.1, seed=10)
    model = train(X, y)
    for other in (sp.coo_matrix(X), sp.coo_array(X), sp.lil_matrix(X), sp.dok_matrix(X)):
        assert train(other, y).to_bytes() == model.to_bytes()
        np.testing.assert_array_equal(model.predict(other), model.predict(X))


def test_unsorted_and_duplicate_indices():
    """Non-canonical CSR: duplicates are summed (as scipy does); the caller's matrix is left as it is."""
    rng = np.random.default_rng(13)
    # rows alternate columns [2, 0, 2] (column 2 twice, unsorted) and [1, 0] (unsorted)
    indices = np.tile([2, 0, 2, 1, 0], 200)
    indptr = np.concatenate([[0], np.cumsum(np.tile([3, 2], 200))])
    rows = sp.csr_matrix((rng.integers(1, 5, 1000).astype(np.float64), indices, indptr), shape=(400, 3))
    assert not rows.has_canonical_format
    before = rows.indices.copy()
    y = rows.toarray() @ np.array([1.0, -2.0, 0.5])
    model = train(rows, y)
    np.testing.assert_array_equal(rows.indices, before)
    # columns 1 and 2 are exclusive (never both non-zero), so dense training would bundle
    # them (EFB derives their default bins in float64: last-bit differences that flip the
    # exact gain ties between them here); sparse columns are never bundled
    dense_model = train(rows.toarray(), y, enable_bundling=False)
    for a, b in zip(model.trees, dense_model.trees):
        for name in STRUCTURE + ("value", "gain", "cover"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(model.predict(rows), model.predict(rows.toarray()))


def test_bad_sparse_input():
    X, y = bag_of_words(300, 8, 0.2, seed=11)
    model = train(X, y)
    with pytest.raises(ValueError, match="8 features but the model was trained on|X has 5 features"):
        model.predict(sp.csr_matrix(X[:, :5]))
    with pytest.raises(ValueError, match="empty"):
        bst.Dataset(sp.csr_matrix((0, 8)), np.zeros(0))
    with pytest.raises(ValueError, match="y has 299 values"):
        bst.Dataset(X, y[:-1])
    broken = sp.csr_matrix(X)
    broken.indices = broken.indices.copy()
    broken.indices[0] = 99  # a column outside the matrix
    with pytest.raises(ValueError, match="not a valid CSR matrix"):
        bst.Dataset(broken, y)
    with pytest.raises(ValueError, match="not a valid CSR matrix"):
        model.predict(broken)
    with pytest.raises(ValueError, match="must be numeric"):
        bst.Dataset(sp.csr_matrix(np.array([[1 + 2j, 0]])), np.zeros(1))


def test_all_zero_rows_and_matrix():
    X = sp.csr_matrix((50, 4))  # nothing stored: every value is 0
    y = np.arange(50, dtype=np.float64)
    model = train(X, y)
    assert model.to_bytes() == train(X.toarray(), y).to_bytes()
    np.testing.assert_array_equal(model.predict(X), model.predict(X.toarray()))


def test_training_never_allocates_the_dense_matrix():
    """tracemalloc sees NumPy's allocations. 60000 x 1000 at 0.2% density: the dense float64
    matrix would be 480 MB and even one byte per value (dense uint8 bins) 60 MB; the bound,
    15 MB, is a quarter of the latter, and well above what training and prediction need
    (the bins' CSR, the CSC copy of the binning sample, histograms, per-row buffers of
    ~50 bytes a row: ~6 MB)."""
    X, y = bag_of_words(60000, 1000, 0.002, seed=12)
    dense_bytes = X.shape[0] * X.shape[1]  # one byte per value
    bound = dense_bytes // 4  # 15 MB
    tracemalloc.start()
    try:
        model = train(X, y, n_estimators=5)
        model.predict(X)
        model.predict(sp.csc_matrix(X))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < bound, f"peak {peak / 2**20:.1f} MB"


@pytest.mark.parametrize("n_threads", [1, 2])
def test_sparse_kernels_match_numpy(n_threads):
    """The partition of a sparse feature and the sparse histograms (their default bins
    filled in) against NumPy on the decoded bins: rows exactly; quantized sums exactly,
    float64 to 1e-12 relative (the filled bins are a difference of sums)."""
    from boosters._testing.kernels import build_nodes, node_rows, slot_sums, split
    from boosters.training.partition._partition import RowPartitioner
    from boosters.training.histograms._build import FloatHistogramBuilder, QuantizedHistogramBuilder

    X, _ = bag_of_words(20000, 12, 0.2, seed=14, nan_fraction=0.1)
    _, binned = bst.Dataset(X).binned()
    bins = binned.to_dense()
    rng = np.random.default_rng(0)
    gh = np.ascontiguousarray(np.c_[rng.normal(size=20000), rng.random(20000) + 0.5], dtype=np.float32)
    packed = ((rng.integers(-100, 101, 20000) << 16) + rng.integers(0, 101, 20000)).astype(np.int32)
    part = RowPartitioner(binned, 7, n_threads)
    f, threshold = 3, 2
    n_left = split(part, 0, f, threshold, True, 1, 2)  # bins 0 (missing) .. 2 go left
    goes_left = bins[:, f] <= threshold
    np.testing.assert_array_equal(node_rows(part, 1), np.flatnonzero(goes_left))
    np.testing.assert_array_equal(node_rows(part, 2), np.flatnonzero(~goes_left))
    assert n_left == goes_left.sum()
    split(part, 2, 7, 1, False, 3, 4)  # a second level, from gathered rows
    np.testing.assert_array_equal(node_rows(part, 3), np.flatnonzero(~goes_left & (bins[:, 7] == 1)))
    offsets = binned.column_offsets
    pool_f = np.zeros((5, binned.total_bins, 2))
    builder_f = FloatHistogramBuilder(binned, pool_f, None, n_threads)
    builder_f.set_gradients(gh)
    pool_q = np.zeros((5, binned.total_bins), np.int64)
    builder_q = QuantizedHistogramBuilder(binned, pool_q, None, n_threads)
    builder_q.set_quantized(packed, 100)
    for nodes in ([0], [1, 3, 4]):
        build_nodes(builder_f, nodes, part, nodes)
        build_nodes(builder_q, nodes, part, nodes)
    for node in (0, 1, 3, 4):
        rows = node_rows(part, node)
        g_q, h_q = slot_sums(builder_q, node)
        for feature in range(binned.n_features):
            lo, hi = offsets[feature], offsets[feature + 1]
            b = bins[rows, feature]
            want_g = np.bincount(b, weights=gh[rows, 0].astype(np.float64), minlength=hi - lo)
            want_h = np.bincount(b, weights=gh[rows, 1].astype(np.float64), minlength=hi - lo)
            np.testing.assert_allclose(pool_f[node, lo:hi, 0], want_g, rtol=1e-12, atol=1e-9)
            np.testing.assert_allclose(pool_f[node, lo:hi, 1], want_h, rtol=1e-12, atol=1e-9)
            np.testing.assert_array_equal(g_q[lo:hi], np.bincount(b, weights=packed[rows] >> 16, minlength=hi - lo))
            np.testing.assert_array_equal(h_q[lo:hi], np.bincount(b, weights=packed[rows] & 0xFFFF,
                                                                  minlength=hi - lo))


def test_multiclass_and_saved_model_on_sparse_input():
    X, y = bag_of_words(2000, 20, 0.15, seed=15)
    labels = np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(np.float64)
    cfg = bst.GBDTConfig(n_estimators=5, objective=bst.Objective.softmax(3), histogram_mode="i16", max_depth=3)
    model = bst.GBDTModel.train(bst.Dataset(sp.csc_array(X), labels), cfg, n_threads=1)
    dense = bst.GBDTModel.train(bst.Dataset(X.toarray(), labels), cfg, n_threads=1)
    assert model.to_bytes() == dense.to_bytes()
    loaded = bst.GBDTModel.from_bytes(model.to_bytes())
    np.testing.assert_array_equal(loaded.predict(X), dense.predict(X.toarray()))
    assert loaded.predict(X).shape == (2000, 3)


def test_value_and_index_dtypes():
    """float32 values, int64 indices, and indices and indptr of different dtypes (read as
    int64): the same model and predictions as float64 / int32."""
    X, y = bag_of_words(1500, 15, 0.1, seed=16)
    model = train(X.astype(np.float32), y)
    assert model.to_bytes() == train(X.toarray().astype(np.float32), y).to_bytes()
    wide, mixed = X.copy(), X.copy()
    wide.indices, wide.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    mixed.indptr = X.indptr.astype(np.int64)
    reference = train(X, y)
    for other in (wide, mixed, sp.csc_matrix(wide)):
        assert train(other, y).to_bytes() == reference.to_bytes()
        np.testing.assert_array_equal(reference.predict(other), reference.predict(X))
    ints = sp.csr_matrix((X.data.astype(np.int64), X.indices, X.indptr), shape=X.shape)
    assert train(ints, y).to_bytes() == reference.to_bytes()


_BROKEN_INDPTR_SCRIPT = """
import sys
import numpy as np, scipy.sparse as sp
import boosters as bst
from boosters.sklearn import GBDTRegressor
fmt, where = sys.argv[1], int(sys.argv[2])
X = sp.random(200, 5, density=0.5, format=fmt, random_state=0)
y = np.arange(200.0)
model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=3, max_depth=3))
est = GBDTRegressor(n_estimators=3).fit(X, y)
indptr = X.indptr.copy()
indptr[len(indptr) // 2] = indptr[-1] + where  # decreases after it; scipy checks only the ends
bad = type(X)((X.data, X.indices, indptr), shape=X.shape)
before = [a.copy() for a in (bad.data, bad.indices, bad.indptr)]
calls = {"Dataset": lambda: bst.Dataset(bad, y), "predict": lambda: model.predict(bad),
         "predict_raw": lambda: model.predict_raw(bad), "predict_leaf": lambda: model.predict_leaf(bad),
         "shap_values": lambda: model.shap_values(bad), "fit": lambda: GBDTRegressor(n_estimators=2).fit(bad, y),
         "eval_set": lambda: GBDTRegressor(n_estimators=2).fit(X, y, eval_set=(bad, y)),
         "est.predict": lambda: est.predict(bad)}
for name, call in calls.items():
    try:
        call()
        print("RESULT", name, "no error")
    except ValueError as exc:
        print("RESULT", name, "ValueError", "indptr must not decrease" in str(exc), str(exc).split(":")[0])
print("RESULT unchanged", all(np.array_equal(a, b) for a, b in zip(before, (bad.data, bad.indices, bad.indptr))))
"""


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("where", [0, 10, 100_000])
def test_decreasing_indptr_is_a_value_error_not_a_crash(fmt, where):
    """An indptr that decreases inside (scipy's constructor checks only its ends) crashed
    the process (heap corruption, SIGSEGV) in scipy's sort before the format check; every
    path that takes sparse input now refuses it first, naming X, and leaves it as it is."""
    out = python_run("-c", _BROKEN_INDPTR_SCRIPT, fmt, str(where), capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line.split(maxsplit=1)[1] for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    expected = ["Dataset", "predict", "predict_raw", "predict_leaf", "shap_values", "fit", "eval_set", "est.predict"]
    assert [line.split()[0] for line in lines[:-1]] == expected
    for line in lines[:-1]:
        name, *result = line.split()
        assert result == ["ValueError", "True", "eval_set" if name == "eval_set" else "X"], line
    assert lines[-1] == "unchanged True"


def _scrambled(M):
    """M (canonical CSR/CSC) with each slice's entries reversed and each stored twice as
    halves (exact): the same matrix, unsorted and with duplicates."""
    indices, data, indptr = [], [], [0]
    for i in range(len(M.indptr) - 1):
        slice_ = slice(M.indptr[i], M.indptr[i + 1])
        indices += [M.indices[slice_][::-1]] * 2
        data += [M.data[slice_][::-1] / 2] * 2
        indptr.append(indptr[-1] + 2 * (slice_.stop - slice_.start))
    return type(M)((np.concatenate(data), np.concatenate(indices), np.array(indptr)), shape=M.shape)


@pytest.mark.parametrize("fmt", ["csr_matrix", "csc_array"])
def test_stale_canonical_flag_is_not_trusted(fmt):
    """A matrix with unsorted and duplicate indices whose has_canonical_format and
    has_sorted_indices a user set to True: the flags were trusted, so the duplicates
    reached the kernels; now it gives the model and predictions of the canonical matrix,
    and is left as it is."""
    X, y = bag_of_words(600, 6, 0.3, seed=22)
    canonical = FORMATS[fmt](X)
    stale = _scrambled(canonical)
    stale.has_sorted_indices = stale.has_canonical_format = True
    before = stale.indices.copy()
    reference = train(canonical, y)
    assert train(stale, y).to_bytes() == reference.to_bytes()
    np.testing.assert_array_equal(reference.predict(stale), reference.predict(canonical))
    np.testing.assert_array_equal(stale.indices, before)
    assert stale.has_canonical_format


def test_the_canonical_check_copies_no_indices():
    """Whether each row's indices strictly increase is read by comparing neighbours (one
    bool per stored value); copying the indices to int64 and np.diff-ing them took 16 bytes
    per stored value (36-40 ms of a 45 ms check on 4M values, at every predict). Bound:
    2 bytes per stored value."""
    X = bag_of_words(20000, 200, 0.05, seed=24)[0]
    assert X.indices.dtype == np.int32 and X.has_canonical_format
    tracemalloc.start()
    try:
        checked = as_sparse_matrix(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert checked is X
    assert peak < 2 * X.nnz, (peak, X.nnz)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsorted_or_repeated_indices_of_any_integer_dtype_are_made_canonical(dtype):
    """Rows [2, 0] (unsorted), [1, 1] (repeated), [0, 2] (canonical), [] and [1]: a
    comparison of neighbours cannot wrap around as an unsigned difference would."""
    rows = sp.csr_matrix((np.arange(1.0, 8.0), np.array([2, 0, 1, 1, 0, 2, 1]), np.array([0, 2, 4, 6, 6, 7])),
                         shape=(5, 3))
    expected = rows.toarray()
    rows.indices = rows.indices.astype(dtype)
    checked = as_sparse_matrix(rows)
    np.testing.assert_array_equal(checked.indices, [0, 2, 1, 0, 2, 1])
    np.testing.assert_array_equal(checked.toarray(), expected)


def test_a_sparse_dataset_is_checked_once_not_at_every_predict(monkeypatch):
    """Its matrix was checked when the Dataset was made: predicting it does not check it
    again, unless its columns are reordered by name (a column selection may leave a row's
    indices unsorted)."""
    X, y = bag_of_words(300, 4, 0.3, seed=25)
    names = ["a", "b", "c", "d"]
    model = bst.GBDTModel.train(bst.Dataset(X, y, feature_names=names), config=bst.GBDTConfig(n_estimators=5))
    data, reordered = bst.Dataset(X, feature_names=names), bst.Dataset(X[:, [3, 1, 0, 2]], feature_names=list("dbac"))
    expected = model.predict(X)
    calls = []
    checked = dataset_module.as_sparse_matrix
    monkeypatch.setattr(dataset_module, "as_sparse_matrix", lambda *args: calls.append(args) or checked(*args))
    np.testing.assert_array_equal(model.predict(data), expected)
    assert calls == []
    np.testing.assert_array_equal(model.predict(reordered), expected)
    assert len(calls) == 1


def test_coo_coordinates_outside_the_shape_are_a_value_error():
    """A COO matrix whose coordinates were changed to lie outside its shape crashed the
    process in scipy's conversion to CSR; now a ValueError naming X."""
    script = """
import numpy as np, scipy.sparse as sp, boosters as bst
X = sp.random(200, 5, density=0.5, format="coo", random_state=0)
X.row[3] = 10**6
try:
    bst.Dataset(X, np.zeros(200))
except ValueError as exc:
    print("RESULT", exc)
"""
    out = python_run("-c", script, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "RESULT X: not a valid COO matrix: its row coordinates must be 500 values in 0..199" in out.stdout
