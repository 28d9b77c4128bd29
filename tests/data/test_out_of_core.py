"""Out-of-core Datasets (Dataset.from_batches / from_npy / from_parquet): the bins and the
model equal those of the in-memory Dataset on the same rows, exactly (same edges from the
same sampled rows, same bundles, same bins: nothing is approximated, so no tolerance); the
raw matrix is never held; bad input is refused naming the argument."""

import errno
import gc
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import boosters as bst
from boosters.data.bundling import find_bundles
from boosters.data.out_of_core import OutOfCoreDataset
from support.child_python import python_popen, python_run
from support.tree_compare import assert_same_model


def small_data(n_rows=3000, seed=0):
    """Numeric columns with NaNs, an integer column, a categorical code column and two
    mutually exclusive sparse columns (bundled), labels and weights."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 7))
    X[rng.random(n_rows) < 0.1, 1] = np.nan
    X[:, 2] = rng.integers(0, 5, n_rows)
    X[:, 3] = rng.integers(0, 6, n_rows)                      # categorical codes
    X[rng.random(n_rows) < 0.05, 3] = np.nan
    hot = rng.integers(0, 10, n_rows)
    X[:, 5] = np.where(hot == 0, rng.integers(1, 9, n_rows), 0.0)  # exclusive sparse pair
    X[:, 6] = np.where(hot == 1, rng.integers(1, 9, n_rows), 0.0)
    y = X[:, 0] - np.nan_to_num(X[:, 1]) + (X[:, 3] == 2) + X[:, 5] + rng.normal(scale=0.3, size=n_rows)
    w = rng.uniform(0.5, 2.0, n_rows)
    return X, y, w


CONFIG = bst.GBDTConfig(n_estimators=6, max_depth=4, learning_rate=0.3)


def assert_same_bins(a, b):
    """Two (mapper, binned) pairs are identical: edges, layout and every bin."""
    (ma, ba), (mb, bb) = a, b
    assert len(ma.upper_edges) == len(mb.upper_edges)
    for ea, eb in zip(ma.upper_edges, mb.upper_edges):
        np.testing.assert_array_equal(ea, eb)
    np.testing.assert_array_equal(ma.n_bins, mb.n_bins)
    np.testing.assert_array_equal(ma.is_usable, mb.is_usable)
    for name in ("column_kind", "column_index", "column_n_bins", "feature_column", "feature_offset",
                 "feature_default_bin", "bins_u8", "bins_u16"):
        np.testing.assert_array_equal(np.asarray(getattr(ba, name)), np.asarray(getattr(bb, name)), err_msg=name)


def tuple_batches(X, y, w, size):
    return [(X[i:i + size], y[i:i + size], w[i:i + size]) for i in range(0, len(X), size)]


def test_batches_train_the_in_memory_model():
    X, y, w = small_data()
    memory = bst.Dataset(X, y, weights=w, categorical_features=[3])
    expected = bst.GBDTModel.train(memory, CONFIG)
    with bst.Dataset.from_batches(tuple_batches(X, y, w, 700), categorical_features=[3]) as data:
        assert isinstance(data, OutOfCoreDataset) and isinstance(data, bst.Dataset) and data.shape == X.shape
        assert_same_bins(data.binned(), memory.binned())
        assert data.binned()[1].n_columns == X.shape[1] - 1   # the sparse pair is one bundle
        model = bst.GBDTModel.train(data, CONFIG)
    assert_same_model(model, expected, X)


@pytest.mark.parametrize("config", [
    bst.GBDTConfig(n_estimators=4, growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=12, histogram_mode="i16"),
    bst.GBDTConfig(n_estimators=4, objective=bst.Objective.logistic(), subsample=0.7, colsample_bytree=0.8,
                   max_bins=32, seed=7),
])
def test_other_settings_train_the_in_memory_model(config):
    """Leaf-wise, quantized, sampling, another seed and max_bins, a classifier: whatever the
    trainer does with the bins, out-of-core bins give the same model."""
    X, y, w = small_data(seed=1)
    if config.objective == bst.Objective.logistic():
        y = (y > 0).astype(float)
    expected = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), config)
    with bst.Dataset.from_batches(lambda: iter(tuple_batches(X, y, w, 1000))) as data:
        assert_same_model(bst.GBDTModel.train(data, config), expected, X)


def test_query_groups_and_init_score_train_the_in_memory_model(tmp_path):
    """Ranking by query groups (lambdarank), and boosting from an init_score: the per-row
    and per-query arrays are given whole, as to Dataset."""
    X, y, _ = small_data(n_rows=2000, seed=2)
    relevance = np.clip(np.round(y - y.min()), 0, 4)
    group = [100] * 20
    rank = bst.GBDTConfig(n_estimators=4, max_depth=3, objective=bst.Objective.lambdarank())
    expected = bst.GBDTModel.train(bst.Dataset(X, relevance, group=group), rank)
    with bst.Dataset.from_batches(lambda: ((X[i:i + 300], relevance[i:i + 300]) for i in range(0, 2000, 300)),
                                  group=group) as data:
        assert data.n_groups == 20
        assert_same_model(bst.GBDTModel.train(data, rank), expected, X)
    init_score = np.sin(X[:, 0])
    np.save(tmp_path / "X.npy", X)
    expected = bst.GBDTModel.train(bst.Dataset(X, y, init_score=init_score), CONFIG)
    with bst.Dataset.from_npy(tmp_path / "X.npy", y=y, init_score=init_score) as data:
        assert_same_model(bst.GBDTModel.train(data, CONFIG), expected, X)
    with pytest.raises(ValueError, match="init_score"):
        bst.Dataset.from_npy(tmp_path / "X.npy", y=y, init_score=init_score[:10])


def test_frame_batches_with_label_and_weight_columns():
    X, y, w = small_data()
    names = [f"f{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names).assign(target=y, w=w)
    expected = bst.GBDTModel.train(bst.Dataset(X, y, weights=w, feature_names=names), CONFIG)
    pandas_batches = [df.iloc[i:i + 1000] for i in range(0, len(df), 1000)]
    arrow_batches = pa.Table.from_pandas(df, preserve_index=False).to_batches(max_chunksize=800)
    assert len(arrow_batches) == 4
    for batches in (pandas_batches, arrow_batches):
        with bst.Dataset.from_batches(batches, label="target", weight="w") as data:
            assert data.feature_names == names
            assert_same_model(bst.GBDTModel.train(data, CONFIG), expected, X)


def categorical_frame(n_rows=3000, seed=3):
    """A frame with a declared pandas category column, a string column and an integer-code
    column; the last batch brings a city and a colour that no earlier rows have."""
    rng = np.random.default_rng(seed)
    cities = np.array(["Rome", "Oslo", "Lima", "Pune", "Kyiv"])
    colours = np.array(["red", "green", "blue"])
    df = pd.DataFrame({
        "x": rng.normal(size=n_rows),
        "city": pd.Categorical(cities[rng.integers(0, 4, n_rows)], categories=list(cities)),
        "colour": colours[rng.integers(0, 2, n_rows)].astype(object),
        "code": rng.integers(0, 4, n_rows).astype(float),
    })
    df.loc[n_rows - 5:, "city"] = "Kyiv"
    df.loc[n_rows - 5:, "colour"] = "blue"
    df.loc[rng.random(n_rows) < 0.05, "city"] = None
    df.loc[rng.random(n_rows) < 0.05, "colour"] = None
    y = df["x"] + (df["city"] == "Oslo") - 2 * (df["colour"] == "blue") + (df["code"] == 1) \
        + rng.normal(scale=0.3, size=n_rows)
    return df, y.to_numpy()


def test_categorical_frame_columns_train_the_in_memory_model():
    """Category columns are coded by the categories of all rows, as in memory: a declared
    pandas category by its declared order, strings and Arrow dictionaries (a dictionary per
    batch) by their sorted distinct values; integer codes as they are."""
    df, y = categorical_frame()
    categorical = ["city", "colour", "code"]
    pandas_batches = [(df.iloc[i:i + 1000], y[i:i + 1000]) for i in range(0, len(df), 1000)]
    arrow_batches = [pa.Table.from_pandas(df.iloc[i:i + 1000].assign(y=y[i:i + 1000]), preserve_index=False)
                     .to_batches()[0] for i in range(0, len(df), 1000)]
    arrow_batches = [b.set_column(2, "colour", b.column(2).dictionary_encode()) for b in arrow_batches]
    assert arrow_batches[0].column(2).dictionary.to_pylist() != arrow_batches[-1].column(2).dictionary.to_pylist()
    arrow_table = pa.Table.from_batches(arrow_batches).drop_columns(["y"])
    for batches, label, whole, city_order in (
            (pandas_batches, None, df, ["Rome", "Oslo", "Lima", "Pune", "Kyiv"]),   # declared
            (arrow_batches, "y", arrow_table, ["Kyiv", "Lima", "Oslo", "Pune", "Rome"])):  # sorted
        memory = bst.Dataset(whole, y, categorical_features=categorical)
        assert list(memory.categories[1]) == city_order and list(memory.categories[2]) == ["blue", "green", "red"]
        expected = bst.GBDTModel.train(memory, CONFIG)
        with bst.Dataset.from_batches(batches, label=label, categorical_features=categorical) as data:
            assert data.categorical_features == [1, 2, 3]
            for f in (1, 2):
                np.testing.assert_array_equal(data.categories[f], memory.categories[f])
            assert data.categories[3] is None
            assert_same_bins(data.binned(), memory.binned())
            assert_same_model(bst.GBDTModel.train(data, CONFIG), expected, df)


def test_npy_file_trains_the_in_memory_model(tmp_path):
    X, y, w = small_data()
    X32 = X.astype(np.float32)
    np.save(tmp_path / "X.npy", X32)
    expected = bst.GBDTModel.train(bst.Dataset(X32, y, weights=w, categorical_features=[3]), CONFIG)
    with bst.Dataset.from_npy(tmp_path / "X.npy", y=y, weights=w, categorical_features=[3], block_rows=512,
                              directory=tmp_path) as data:
        assert data.directory.startswith(str(tmp_path))
        model = bst.GBDTModel.train(data, CONFIG)
        assert len(os.listdir(data.directory)) == 1   # the u8 bins (no u16 columns), the sample removed
    assert not os.path.exists(data.directory)
    assert_same_model(model, expected, X32)


def test_parquet_file_trains_the_in_memory_model(tmp_path):
    X, y, w = small_data()
    names = [f"f{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names).assign(y=y)
    df.to_parquet(tmp_path / "d.parquet", row_group_size=900)
    expected = bst.GBDTModel.train(bst.Dataset(X, y, feature_names=names, categorical_features=["f3"]), CONFIG)
    with bst.Dataset.from_parquet(tmp_path / "d.parquet", label="y", categorical_features=["f3"],
                                  block_rows=700) as data:
        assert_same_model(bst.GBDTModel.train(data, CONFIG), expected, X)


def test_a_category_absent_from_the_sample_still_has_its_bin():
    """Categorical bins come from every row (as in memory), not from the sampled ones: a
    code in the last batch only widens the feature's bins."""
    X, y, _ = small_data(n_rows=400)
    X[-1, 3] = 9
    with bst.Dataset.from_batches([(X[:200], y[:200]), (X[200:], y[200:])], categorical_features=[3]) as data:
        mapper, _ = data.binned()
        assert mapper.n_bins[3] == 11   # codes 0..9 and the missing bin
        assert_same_bins((mapper, data.binned()[1]), bst.Dataset(X, y, categorical_features=[3]).binned())


def test_bins_are_memory_mapped_files_removed_on_close():
    X, y, _ = small_data(n_rows=500)
    data = bst.Dataset.from_batches([(X, y)])
    _, binned = data.binned()
    assert isinstance(binned.bins_u8, np.memmap)
    directory = data.directory
    assert os.listdir(directory)
    data.close()
    assert not os.path.exists(directory)
    with pytest.raises(ValueError, match="closed"):
        data.binned()
    data = bst.Dataset.from_batches([(X, y)])   # garbage collected: removed too
    directory = data.directory
    data.binned()
    del data
    gc.collect()
    assert not os.path.exists(directory)


def test_what_needs_the_raw_features_is_refused():
    X, y, _ = small_data(n_rows=500)
    with bst.Dataset.from_batches([(X, y)]) as data:
        with pytest.raises(ValueError, match="out of core"):
            data.X
        with pytest.raises(ValueError, match="out of core"):
            bst.GBDTModel.train(bst.Dataset(X, y), CONFIG, val_set=data)
        with pytest.raises(ValueError, match="out of core"):
            bst.GBDTModel.train(data, CONFIG.replace(linear_leaves=True))
        with pytest.raises(ValueError, match="out of core"):
            bst.GBDTModel.train(data, CONFIG.replace(booster="dart"))


def test_bad_input_is_refused_naming_the_argument(tmp_path):
    X, y, _ = small_data(n_rows=100)
    with pytest.raises(ValueError, match="batches is an iterator"):
        bst.Dataset.from_batches(iter([X]))
    with pytest.raises(TypeError, match="batches must be"):
        bst.Dataset.from_batches(3)
    with pytest.raises(ValueError, match="holds no rows"):
        bst.Dataset.from_batches([])
    with pytest.raises(ValueError, match=r"batches\[1\] must be 2-D"):
        bst.Dataset.from_batches([X, X[0]])
    with pytest.raises(ValueError, match=r"batches\[1\]: 3 features, the first block had 7"):
        bst.Dataset.from_batches([X, X[:, :3]])
    with pytest.raises(ValueError, match=r"batches\[1\] lacks y"):
        bst.Dataset.from_batches([(X, y), (X,)])
    with pytest.raises(ValueError, match=r"batches\[0\]: y has 99 values for 100 rows"):
        bst.Dataset.from_batches([(X, y[:99])])
    with pytest.raises(ValueError, match="y contains NaN"):
        bst.Dataset.from_batches([(X, np.full(100, np.nan))])
    with pytest.raises(ValueError, match="label / weight name columns"):
        bst.Dataset.from_batches([X], label="y")
    with pytest.raises(ValueError, match="no column 'target'"):
        bst.Dataset.from_batches([pd.DataFrame(X)], label="target")
    with pytest.raises(TypeError, match="label must be a column name"):
        bst.Dataset.from_batches([pd.DataFrame(X)], label=3)
    with pytest.raises(ValueError, match="categorical feature 3"):
        bst.Dataset.from_batches([X, X + 0.5], categorical_features=[3])
    a = pd.DataFrame({"c": pd.Categorical(["x", "y"], categories=["x", "y"])})
    b = pd.DataFrame({"c": pd.Categorical(["x", "y"], categories=["y", "x"])})
    with pytest.raises(ValueError, match="categorical feature 'c' .*declare different categories"):
        bst.Dataset.from_batches([a, b])
    with pytest.raises(ValueError, match="categorical feature 'c' .*blocks differ"):
        bst.Dataset.from_batches([a, pd.DataFrame({"c": [0.0, 1.0]})], categorical_features=["c"])
    with pytest.raises(ValueError, match="directory"):
        bst.Dataset.from_batches([X], directory=tmp_path / "missing")
    with pytest.raises(ValueError, match="block_rows"):
        bst.Dataset.from_npy(tmp_path / "absent.npy", block_rows=0)
    with pytest.raises(ValueError, match="path: cannot read"):
        bst.Dataset.from_npy(tmp_path / "absent.npy")
    np.save(tmp_path / "v.npy", y)
    with pytest.raises(ValueError, match="need 2-D"):
        bst.Dataset.from_npy(tmp_path / "v.npy")
    with pytest.raises(ValueError, match="y has 99 values"):
        bst.Dataset.from_npy(_save(tmp_path, X), y=y[:99])
    with pytest.raises(ValueError, match="path: cannot read"):
        bst.Dataset.from_parquet(tmp_path / "v.npy", label="y")

    calls = []

    def shrinking():  # gives fewer rows on its second pass
        calls.append(1)
        return iter([X] if len(calls) == 1 else [X[:50]])
    with bst.Dataset.from_batches(shrinking) as data:
        with pytest.raises(ValueError, match="same rows on every pass"):
            data.binned()


def _save(tmp_path, X):
    path = tmp_path / "X.npy"
    np.save(path, X)
    return path


def traced_peak_of_binning(batches) -> int:
    """The peak of traced (numpy and Python) memory while an out-of-core Dataset is made
    and binned; the Dataset is returned open for further checks."""
    tracemalloc.start()
    try:
        data = bst.Dataset.from_batches(batches)
        data.binned()
        return tracemalloc.get_traced_memory()[1], data
    finally:
        tracemalloc.stop()


def test_the_raw_matrix_is_never_held():
    """40k x 128 float32 (20 MB raw) made a 5k-row batch at a time: binning it allocates
    under half the raw size (the bin sample, here every row, is a mapped file; a copy of
    the raw matrix would exceed the bound), and no batch outlives its pass."""
    alive = []

    def batches():
        for i in range(8):
            X = np.random.default_rng(i).standard_normal((5000, 128), dtype=np.float32)
            alive.append(weakref.ref(X))
            yield X, X[:, 0]
    peak, data = traced_peak_of_binning(batches)
    with data:
        raw = 40_000 * 128 * 4
        assert peak < raw / 2, f"peak {peak / 2**20:.1f} MiB of {raw / 2**20:.1f} MiB raw"
        gc.collect()
        assert len(alive) == 3 * 8 and all(ref() is None for ref in alive)   # three passes, nothing kept


N_WIDE, F_WIDE = 250_000, 64   # more rows than the bin sample (200k): sampled edges, bundles from the sample


def wide_batch(i, size=25_000):
    """Batch i of the wide data, made on demand (the test never holds them all)."""
    rng = np.random.default_rng(i)
    X = rng.normal(size=(size, F_WIDE)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 3)
    hot = rng.integers(0, 20, size)
    X[:, -2] = np.where(hot == 0, 1.0, 0.0)   # exclusive with the next column in every row...
    X[:, -1] = np.where(hot == 1, 1.0, 0.0)
    if i == 3:
        X[8, -2:] = 1.0   # ...but one: row 75_008 (not a sampled row), so the bundle is split again
    y = X[:, 0] + X[:, 1] * X[:, 2] + X[:, -2] + rng.normal(scale=0.5, size=size)
    return X, y


@pytest.mark.slow
def test_more_rows_than_the_bin_sample_without_holding_them():
    """250k x 64 float32 (64 MB raw): the traced peak of building the out-of-core bins
    stays under half the raw size (a copy of the raw matrix, or a float64 sample of it,
    would not), the sampled edges and the bundle split by an unsampled conflicting row
    match the in-memory binning, and so does the model."""
    def batches():
        return (wide_batch(i) for i in range(N_WIDE // 25_000))
    peak, data = traced_peak_of_binning(batches)
    raw = N_WIDE * F_WIDE * 4
    print(f"traced peak {peak / 2**20:.1f} MiB, raw {raw / 2**20:.1f} MiB")
    assert peak < raw / 2, f"peak {peak / 2**20:.1f} MiB of {raw / 2**20:.1f} MiB raw"
    X = np.concatenate([wide_batch(i)[0] for i in range(N_WIDE // 25_000)])
    y = np.concatenate([wide_batch(i)[1] for i in range(N_WIDE // 25_000)])
    memory = bst.Dataset(X, y)
    mapper, binned = memory.binned()
    assert 75_008 not in mapper.sample_rows
    sample_bundles, _ = find_bundles(mapper.transform(X[mapper.sample_rows]), mapper.is_usable)
    assert sample_bundles == [[F_WIDE - 2, F_WIDE - 1]]   # bundled on the sample...
    assert binned.n_columns == F_WIDE                       # ...then split by the unsampled row
    assert_same_bins(data.binned(), (mapper, binned))
    config = bst.GBDTConfig(n_estimators=3, max_depth=4)
    with data:
        assert_same_model(bst.GBDTModel.train(data, config), bst.GBDTModel.train(memory, config), X[:5000])


# -- hostile sources and file systems ------------------------------------------------------

def run_python(code: str, *args, env=None, timeout=120) -> subprocess.CompletedProcess:
    """`code` run by a fresh interpreter (a SIGBUS or SIGKILL there fails the test instead of
    killing pytest); its output, with the build messages of the editable install."""
    return python_run("-c", textwrap.dedent(code), *map(str, args), capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_a_source_that_changes_between_passes_is_refused():
    """Same row count, same values, another order on the sample pass (2) or only on the
    binning pass (3): the labels of the first pass would train against the features of other
    rows. A frame whose string category column alone is reordered is caught too."""
    X, y, _ = small_data(n_rows=400)
    order = np.random.default_rng(1).permutation(400)
    for changed_pass in (2, 3):
        calls = []

        def batches():
            calls.append(1)
            rows = order if len(calls) == changed_pass else np.arange(400)
            return iter([(X[rows[:200]], y[rows[:200]]), (X[rows[200:]], y[rows[200:]])])
        with bst.Dataset.from_batches(batches) as data:
            with pytest.raises(ValueError, match=r"batches\[0\] \(block 0\) differs from the first pass over "
                                                 r"batches: its features and labels changed \(other values, or the "
                                                 r"rows in another order\); out-of-core training reads the source "
                                                 r"three times or more and must get the same rows on every pass, in "
                                                 r"the same order"):
                data.binned()
    df = pd.DataFrame({"x": np.arange(6.0), "c": ["a", "b", "c", "a", "b", "c"]})
    shuffled = df.assign(c=["c", "b", "a", "a", "b", "c"])
    calls = []

    def frames():
        calls.append(1)
        return iter([(df if len(calls) == 1 else shuffled, np.arange(6.0))])
    with bst.Dataset.from_batches(frames, categorical_features=["c"]) as data:
        with pytest.raises(ValueError, match="differs from the first pass.*category column 'c' \\(index 1\\) changed"):
            data.binned()


def test_an_npy_file_changed_after_the_dataset_is_made_is_refused(tmp_path):
    """Rewritten with the same values: trains (the same bins as in memory). With its rows in
    another order (same size): refused on the next pass. Another size: refused before reading."""
    X, y, _ = small_data(n_rows=400)
    path = _save(tmp_path, X)
    with bst.Dataset.from_npy(path, y=y, block_rows=128) as data:
        np.save(path, X)
        assert_same_bins(data.binned(), bst.Dataset(X, y).binned())
    with bst.Dataset.from_npy(path, y=y, block_rows=128) as data:
        np.save(path, X[::-1])
        with pytest.raises(ValueError, match=r"path \(block 0\) differs from the first pass over X.npy"):
            data.binned()
    with bst.Dataset.from_npy(path, y=y, block_rows=128) as data:
        np.save(path, X[:300])
        with pytest.raises(ValueError, match=r"path: '.*X.npy' changed since the Dataset was made"):
            data.binned()


def test_damaged_npy_files_and_archives_are_refused_naming_the_path(tmp_path):
    X, y, _ = small_data(n_rows=100)
    raw = _save(tmp_path, X).read_bytes()
    cases = {
        "garbled.npy": (raw[:12] + b"garbage(" + raw[20:], r"path: '.*garbled.npy' is not a .npy file or its header "
                                                           r"is damaged"),
        "header_cut.npy": (raw[:40], r"path: '.*header_cut.npy' is not a .npy file or its header is damaged"),
        "short.npy": (raw[:-8], r"path: '.*short.npy' has \d+ bytes, its header gives an array of \d+: "
                                r"the file is truncated"),
        "text.npy": (b"a,b\n1,2\n", r"path: '.*text.npy' is not a .npy file"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=message):
            bst.Dataset.from_npy(tmp_path / name, y=y)
    np.savez(tmp_path / "X.npz", X=X)
    with pytest.raises(ValueError, match=r"path: '.*X.npz' is a .npz archive, which is not supported: pass a .npy"):
        bst.Dataset.from_npy(tmp_path / "X.npz", y=y)
    np.save(tmp_path / "objects.npy", X.astype(object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"path: '.*objects.npy' holds dtype object; need a numeric array"):
        bst.Dataset.from_npy(tmp_path / "objects.npy", y=y)


def test_an_npy_file_truncated_before_or_while_a_pass_reads_it_raises(tmp_path):
    """Truncated before the pass: refused before anything is read. Truncated between two
    blocks of a pass (a mapped file would kill the process with SIGBUS there; run in a
    subprocess so that it fails the test): a ValueError naming the file."""
    X, y, _ = small_data(n_rows=400)
    path = _save(tmp_path, X)
    with bst.Dataset.from_npy(path, y=y, block_rows=100) as data:
        os.truncate(path, 1000)
        with pytest.raises(ValueError, match=r"path: '.*X.npy' changed since the Dataset was made \(\d+ bytes then, "
                                             r"1000 now\)"):
            data.binned()
    path = _save(tmp_path, X)
    result = run_python("""
        import os, sys
        import numpy as np
        import boosters as bst
        path = sys.argv[1]
        data = bst.Dataset.from_npy(path, y=np.zeros(400), block_rows=100)
        blocks = data._blocks(1)   # a pass, block by block
        next(blocks)
        os.truncate(path, 1000)
        try:
            for start, X in blocks:
                X.sum()   # read it
        except ValueError as exc:
            print("ValueError:", exc)
        """, path)
    assert result.returncode == 0, f"exit status {result.returncode}: {result.stderr[-2000:]}"
    assert re.search(r"ValueError: path: '.*X.npy' ends at byte \d+, before the \d+ bytes its header gives: it was "
                     r"truncated while being read", result.stdout), result.stdout[-2000:]


def test_the_same_column_as_label_and_weight_is_refused(tmp_path):
    X, y, _ = small_data(n_rows=100)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(7)]).assign(t=np.abs(y))
    df.to_parquet(tmp_path / "d.parquet")
    message = "label and weight are the same column 't'; give the weights in another column"
    with pytest.raises(ValueError, match=message):
        bst.Dataset.from_parquet(tmp_path / "d.parquet", label="t", weight="t")
    with pytest.raises(ValueError, match=message):
        bst.Dataset.from_batches([df], label="t", weight="t")


def test_a_full_bin_directory_raises_oserror_and_leaves_no_bin_files(tmp_path, monkeypatch):
    """Reserving a bin file's blocks fails with ENOSPC (simulated here; a real small file
    system in the next test), for the sample file (the first) or the bins (the third): an
    OSError naming the directory and the bytes needed, the files of the attempt removed, and
    the Dataset usable again once there is room."""
    X, y, _ = small_data(n_rows=600)
    real = os.posix_fallocate
    for failing_call in (1, 3):
        calls = []

        def fallocate(fd, offset, length):
            calls.append(length)
            if len(calls) >= failing_call:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(fd, offset, length)
        monkeypatch.setattr(os, "posix_fallocate", fallocate)
        with bst.Dataset.from_batches([(X, y)], directory=tmp_path) as data:
            with pytest.raises(OSError, match=rf"no room for the out-of-core bin files in '{re.escape(data.directory)}'"
                                              rf": (sample|bins0_u8)\.npy needs \d+ bytes, \d+ are free") as info:
                data.binned()
            assert info.value.errno == errno.ENOSPC and len(calls) == failing_call
            assert f"needs {calls[-1]} bytes" in str(info.value)   # the whole file, header included
            assert os.listdir(data.directory) == []
            monkeypatch.setattr(os, "posix_fallocate", real)
            assert_same_bins(data.binned(), bst.Dataset(X, y).binned())
        assert os.listdir(tmp_path) == []


def test_a_small_file_system_filled_by_the_bins_raises_oserror(tmp_path):
    """A real 1 MiB tmpfs, as `directory` and as $TMPDIR, too small for the bin files (the
    6 MB sample file first), in a private mount namespace of a subprocess (a SIGBUS there
    fails the test): an OSError naming the folder and the bytes, and the tmpfs left empty.
    Skipped only where mounting is not permitted (not root, no unshare)."""
    mount = tmp_path / "small"
    mount.mkdir()
    probe = subprocess.run(["unshare", "--mount", "--", "mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                           capture_output=True, text=True) if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {probe.stderr.strip() if probe else 'no unshare'}")
    code = f"""
        import os
        import tempfile
        import numpy as np
        import boosters as bst
        os.environ["TMPDIR"], tempfile.tempdir = {str(mount)!r}, None   # after the import (a rebuild needs room)
        assert os.statvfs({str(mount)!r}).f_blocks * os.statvfs({str(mount)!r}).f_frsize <= 2**20
        X = np.random.default_rng(0).normal(size=(20_000, 40))
        for how in ("directory", "TMPDIR"):
            data = bst.Dataset.from_batches([(X, X[:, 0])], directory={str(mount)!r} if how == "directory" else None)
            try:
                data.binned()
                print(how, "no error")
            except OSError as exc:
                print(how, "OSError:", exc)
            data.close()
            print(how, "left:", os.listdir({str(mount)!r}))
        """
    result = subprocess.run(["unshare", "--mount", "--", "sh", "-c",
                             f'mount -t tmpfs -o size=1m tmpfs "$0" && exec "$1" -c "$2"', str(mount),
                             sys.executable, textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)  # see child_python
    assert result.returncode == 0, f"exit status {result.returncode}: {result.stderr[-2000:]}"
    for how in ("directory", "TMPDIR"):
        assert re.search(rf"{how} OSError: \[Errno 28\] no room for the out-of-core bin files in "
                         rf"'{re.escape(str(mount))}/boosters-bins-\d+-\w+': sample.npy needs \d+ bytes, \d+ are free",
                         result.stdout), result.stdout[-2000:]
        assert f"{how} left: []" in result.stdout, result.stdout[-2000:]


SLOW_BINNING = """
    import sys, time
    import numpy as np
    import boosters as bst
    passes = []
    def batches():   # slow after the first pass: a kill lands while the bins are being made
        passes.append(1)
        for i in range(1000):
            time.sleep(0.05 if len(passes) > 1 else 0)
            yield np.random.default_rng(i).normal(size=(100, 3)), np.zeros(100)
    data = bst.Dataset.from_batches(batches, directory=sys.argv[1])
    print("FOLDER", data.directory, flush=True)
    if sys.argv[2] == "bin":
        data.binned()
    else:
        sys.stdin.read()   # open until told
    """


def _started(tmp_path, mode):
    """A subprocess making an out-of-core Dataset in tmp_path (binning it, or holding it
    open); returns it and its bin folder once the folder exists."""
    proc = python_popen("-c", textwrap.dedent(SLOW_BINNING), str(tmp_path), mode,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if line.startswith("FOLDER "):
            return proc, line.split(maxsplit=1)[1].strip()
    raise AssertionError(f"the subprocess ended without making its folder (exit status {proc.wait()})")


def test_the_bin_folder_of_a_killed_process_is_removed_by_the_next_dataset(tmp_path):
    """A process killed (SIGKILL) while binning leaves its folder; the next Dataset made in
    the same directory removes it, but neither the folder of a live process nor its own."""
    live, alive = _started(tmp_path, "hold")
    killed, leftover = _started(tmp_path, "bin")
    try:
        while not os.listdir(leftover):  # binning has begun (its sample file is there)
            assert killed.poll() is None, "the binning process ended before it was killed"
            time.sleep(0.05)
        killed.send_signal(signal.SIGKILL)
        assert killed.wait() == -signal.SIGKILL
        assert os.listdir(leftover)
        with bst.Dataset.from_batches([np.ones((10, 2))], directory=tmp_path) as first:
            assert not os.path.exists(leftover)
            assert os.path.isdir(alive) and os.path.isdir(first.directory)
            with bst.Dataset.from_batches([np.ones((10, 2))], directory=tmp_path) as second:
                assert os.path.isdir(alive) and os.path.isdir(first.directory) and os.path.isdir(second.directory)
    finally:
        live.communicate("")
        killed.kill()
        killed.wait()
    assert live.returncode == 0
    assert os.listdir(tmp_path) == []
