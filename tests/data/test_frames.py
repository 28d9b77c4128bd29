"""Frames (pandas, polars, pyarrow, Arrow C streams) are read column by column (numeric,
bool, nullable dtypes), and at prediction a frame's (or a named Dataset's) columns are
matched to the model's features by name, a categorical column's dtype drift being an
error; arrays stay positional."""

import sys

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import boosters as bst
from boosters.data.validation import as_feature_matrix, match_columns


@pytest.fixture(scope="module")
def frame_model():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=800), "b": rng.normal(size=800), "c": rng.normal(size=800)})
    y = df["a"] - 2 * df["b"] * (df["c"] > 0) + 0.1 * rng.normal(size=800)
    model = bst.GBDTModel.train(bst.Dataset(df, y), config=bst.GBDTConfig(n_estimators=10, max_depth=4))
    return df, model


def test_reordered_frame_predicts_like_the_original(frame_model):
    df, model = frame_model
    expected = model.predict(df)
    assert np.array_equal(model.predict(df[["c", "b", "a"]]), expected)
    assert np.array_equal(model.predict(df[["b", "a", "c"]]), expected)
    assert np.array_equal(model.predict_raw(df[["c", "a", "b"]]), model.predict_raw(df))
    # the reordered frame really is different positionally
    assert not np.array_equal(model.predict(df[["c", "b", "a"]].to_numpy()), expected)


def test_numpy_input_stays_positional(frame_model):
    df, model = frame_model
    assert np.array_equal(model.predict(df.to_numpy()), model.predict(df))


def test_missing_and_unexpected_columns_are_named(frame_model):
    df, model = frame_model
    with pytest.raises(ValueError, match=r"missing \['b'\], unexpected \[\]"):
        model.predict(df[["a", "c"]])
    with pytest.raises(ValueError, match=r"missing \[\], unexpected \['extra'\]"):
        model.predict(df.assign(extra=1.0))
    with pytest.raises(ValueError, match=r"missing \['c'\], unexpected \['z'\]"):
        model.predict(df.rename(columns={"c": "z"}))
    with pytest.raises(ValueError, match=r"duplicated \['a'\]"):
        model.predict(pd.concat([df, df[["a"]]], axis=1))


class HashCountingName(str):
    """A column name that counts how often it is hashed (set and dict look-ups)."""
    hashes = 0

    def __hash__(self):
        HashCountingName.hashes += 1
        return super().__hash__()


def test_matching_reordered_columns_hashes_each_name_a_few_times_not_once_per_column():
    """10,000 reordered columns took 10 s when the set of expected names was rebuilt for
    every given column (n² hashes); a handful of hashes per name is linear."""
    n = 1000
    expected = [HashCountingName(f"f{i}") for i in range(n)]
    HashCountingName.hashes = 0
    order = match_columns(expected[::-1], expected, "X")
    np.testing.assert_array_equal(order, np.arange(n)[::-1])
    assert HashCountingName.hashes <= 10 * n  # 5n now (a few passes); over n² = 1,000,000 before


def test_dataset_passed_to_predict_is_matched_by_name(frame_model):
    df, model = frame_model
    expected = model.predict(df)
    assert np.array_equal(model.predict(bst.Dataset(df[["c", "a", "b"]])), expected)
    named = bst.Dataset(df[["b", "c", "a"]].to_numpy(), feature_names=["b", "c", "a"])
    assert np.array_equal(model.predict(named), expected)
    assert np.array_equal(model.predict(bst.Dataset(df.to_numpy())), expected)  # no names: positional
    with pytest.raises(ValueError, match=r"missing \['a'\], unexpected \['q'\]"):
        model.predict(bst.Dataset(df.to_numpy(), feature_names=["q", "b", "c"]))


def test_model_without_names_takes_frames_positionally():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), config=bst.GBDTConfig(n_estimators=3))
    assert model.feature_names is None
    frame = pd.DataFrame(X, columns=["y", "x"])
    assert np.array_equal(model.predict(frame), model.predict(X))


def test_mixed_float_and_bool_columns_are_ordinary_data():
    rng = np.random.default_rng(2)
    n = 600
    flag = rng.random(n) < 0.5
    df = pd.DataFrame({"x": rng.normal(size=n), "flag": flag, "k": rng.integers(0, 5, n)})
    numeric = np.column_stack([df["x"], flag.astype(float), df["k"].astype(float)])
    np.testing.assert_array_equal(as_feature_matrix(df), numeric)
    y = df["x"] + 3 * flag
    cfg = bst.GBDTConfig(n_estimators=5, max_depth=3)
    from_frame = bst.GBDTModel.train(bst.Dataset(df, y), config=cfg)
    from_array = bst.GBDTModel.train(bst.Dataset(numeric, y), config=cfg)
    assert np.array_equal(from_frame.predict(df), from_array.predict(numeric))
    assert from_frame.feature_importance()[1] > 0  # the bool column is used


def test_nullable_dtypes_with_and_without_na():
    ints = pd.array([1, 2, None, 4, 5, 6], dtype="Int64")
    floats = pd.array([0.5, None, 1.5, 2.5, 3.5, 4.5], dtype="Float64")
    flags = pd.array([True, False, None, True, False, True], dtype="boolean")
    df = pd.DataFrame({"i": ints, "f": floats, "b": flags})
    want = np.array([[1, 0.5, 1], [2, np.nan, 0], [np.nan, 1.5, np.nan], [4, 2.5, 1], [5, 3.5, 0],
                     [6, 4.5, 1]], dtype=np.float64)
    got = as_feature_matrix(df)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, want)  # NaN == NaN for assert_array_equal
    no_na = df.iloc[[0, 3, 4, 5]]  # nullable dtypes without any NA
    np.testing.assert_array_equal(as_feature_matrix(no_na), want[[0, 3, 4, 5]])
    y = np.arange(6.0)
    model = bst.GBDTModel.train(bst.Dataset(df, y), config=bst.GBDTConfig(n_estimators=2, min_child_weight=0.0))
    assert np.array_equal(model.predict(df), model.predict(want))


def test_float32_frames_stay_float32():
    df = pd.DataFrame({"a": np.arange(5, dtype=np.float32), "b": pd.array([1, 2, 3, None, 5], dtype="Float32")})
    got = as_feature_matrix(df)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [[0, 1], [1, 2], [2, 3], [3, np.nan], [4, 5]])
    single_block = pd.DataFrame(np.ones((4, 3), dtype=np.float64))
    assert as_feature_matrix(single_block).dtype == np.float64


@pytest.mark.parametrize("column", [
    pd.Series(["x", "y", "z"]),
    pd.Series(["x", "y", "x"], dtype="category"),
    pd.Series(pd.to_datetime(["2020-01-01", "2021-01-01", "2022-01-01"])),
    pd.Series([1.0, "a", 2.0], dtype=object),
])
def test_non_numeric_column_is_named(column):
    """Not declared categorical (a category column is by default: categorical_features="auto")."""
    df = pd.DataFrame({"ok": [1.0, 2.0, 3.0], "bad col": column})
    with pytest.raises(ValueError, match=r"\bX\b.*'bad col'"):
        bst.Dataset(df, [0.0, 1.0, 2.0], categorical_features=[])


def test_empty_frame_is_rejected():
    with pytest.raises(ValueError, match="empty"):
        bst.Dataset(pd.DataFrame({"a": np.zeros(0)}), np.zeros(0))


# -- a categorical column's dtype drift is an error ---------------------------------------------

@pytest.fixture(scope="module")
def colour_model():
    rng = np.random.default_rng(4)
    n = 600
    colour = rng.choice(["red", "green", "blue"], size=n)
    df = pd.DataFrame({"x": rng.normal(size=n), "colour": pd.Categorical(colour)})
    y = df["x"].to_numpy() + np.where(colour == "red", 2.0, 0.0)
    return df, bst.GBDTModel.train(bst.Dataset(df, y), bst.GBDTConfig(n_estimators=5, max_depth=3))


@pytest.mark.parametrize("to_frame", [lambda df: df, pl.from_pandas,
                                      lambda df: pa.Table.from_pandas(df, preserve_index=False)])
def test_category_at_fit_numbers_at_predict_is_an_error(colour_model, to_frame):
    df, model = colour_model
    codes = df.assign(colour=df["colour"].cat.codes)  # what a careless export gives
    with pytest.raises(ValueError, match="feature 'colour' .* trained on string categories; got numbers"):
        model.predict(to_frame(codes))


@pytest.mark.parametrize("to_frame", [lambda df: df, pl.from_pandas,
                                      lambda df: pa.Table.from_pandas(df, preserve_index=False)])
def test_categorical_column_for_a_numeric_feature_is_an_error(colour_model, to_frame):
    df, model = colour_model
    drifted = df.assign(x=pd.Categorical(np.round(df["x"]).astype(int).astype(str)))  # polars: strings only
    with pytest.raises(ValueError, match="column 'x' has dtype .* but the model's feature 'x' .* is numeric"):
        model.predict(to_frame(drifted))
    with pytest.raises(ValueError, match="column 'x' has dtype .* but the model's feature 'x' .* is numeric"):
        model.predict(to_frame(df.assign(x=df["x"].astype(str))))


@pytest.mark.parametrize("to_frame", [lambda df: df, lambda df: pa.Table.from_pandas(df, preserve_index=False)])
def test_codes_at_fit_categorical_column_at_predict_is_an_error(to_frame):
    """Trained on integer codes 0..k-1; a category column of integers at prediction holds
    values, not those codes: coding them as codes would silently mix up the categories."""
    rng = np.random.default_rng(5)
    values = np.array([10, 3, 7])
    codes = rng.integers(0, 3, size=300)
    df = pd.DataFrame({"x": rng.normal(size=300), "zone": codes})
    model = bst.GBDTModel.train(bst.Dataset(df, codes * 1.0, categorical_features=["zone"]),
                                bst.GBDTConfig(n_estimators=3))
    assert model.categories[1] is None  # learnt from codes
    as_category = df.assign(zone=pd.Categorical(values[codes]))
    as_strings = df.assign(zone=pd.Categorical(values[codes].astype(str)))  # polars categories are strings
    for drifted in (as_category, as_strings):
        with pytest.raises(ValueError, match="feature 'zone' .* trained on integer codes .* got a categorical"):
            model.predict(to_frame(drifted))
    with pytest.raises(ValueError, match="feature 'zone' .* trained on integer codes .* got a categorical"):
        model.predict(pl.from_pandas(as_strings))  # a polars Categorical (of strings only)
    np.testing.assert_array_equal(model.predict(to_frame(df)), model.predict(df.to_numpy(dtype=float)))


# -- reading: dtypes, polars, Arrow, the Arrow C stream interface --------------------------------

class ArrowStream:
    """A table of some other library that exports only the Arrow C stream interface."""

    def __init__(self, table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


def mixed_frame(n=400, seed=6):
    """Numeric, nullable, bool and categorical columns with missing values."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    k = pd.array(rng.integers(0, 5, n), dtype="Int64")
    k[rng.random(n) < 0.1] = pd.NA
    flag = pd.array(rng.random(n) < 0.5, dtype="boolean")
    flag[rng.random(n) < 0.1] = pd.NA
    f32 = rng.normal(size=n).astype(np.float32)
    colour = pd.Categorical(rng.choice(["red", "green", "blue", None], size=n))
    df = pd.DataFrame({"x": x, "k": k, "flag": flag, "f32": f32, "colour": colour})
    y = x + np.nan_to_num(k.to_numpy(dtype=float, na_value=np.nan)) + 2.0 * (colour == "red")
    return df, y


def test_every_library_gives_the_same_dataset_and_model():
    """pandas with nullable (and pyarrow-backed) dtypes, polars, a pyarrow Table and an
    Arrow C stream hold the same values: the same float matrix (missing = NaN), codes, and so the same model."""
    df, y = mixed_frame()
    table = pa.Table.from_pandas(df, preserve_index=False)
    cfg = bst.GBDTConfig(n_estimators=5, max_depth=3)
    expected = bst.Dataset(df, y)
    model = bst.GBDTModel.train(expected, cfg)
    assert expected.categorical_features == [4] and expected.X.dtype == np.float64
    assert np.isnan(expected.X[:, 1]).sum() == (df["k"].isna()).sum() > 0  # pd.NA -> NaN
    for X in (pl.from_pandas(df), table, ArrowStream(table), df.convert_dtypes(dtype_backend="pyarrow")):
        ds = bst.Dataset(X, y)
        np.testing.assert_array_equal(ds.X, expected.X)
        assert ds.feature_names == ["x", "k", "flag", "f32", "colour"]
        np.testing.assert_array_equal(bst.GBDTModel.train(ds, cfg).predict(X), model.predict(df))
        np.testing.assert_array_equal(model.predict(X), model.predict(df))


def test_arrow_stream_columns_are_matched_by_name():
    df, y = mixed_frame()
    model = bst.GBDTModel.train(bst.Dataset(df, y), bst.GBDTConfig(n_estimators=5, max_depth=3))
    reordered = pa.Table.from_pandas(df[["colour", "f32", "x", "flag", "k"]], preserve_index=False)
    np.testing.assert_array_equal(model.predict(ArrowStream(reordered)), model.predict(df))
    with pytest.raises(ValueError, match=r"missing \['k'\]"):
        model.predict(ArrowStream(reordered.drop_columns(["k"])))


@pytest.mark.parametrize("to_frame", [pl.from_pandas, lambda df: pa.Table.from_pandas(df, preserve_index=False)])
def test_float32_columns_are_read_as_float32(to_frame):
    df = pd.DataFrame({"a": np.arange(4, dtype=np.float32), "b": pd.array([1, None, 3, 4], dtype="Float32")})
    got = as_feature_matrix(to_frame(df))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [[0, 1], [1, np.nan], [2, 3], [3, 4]])


def test_arrow_stream_without_pyarrow_names_the_extra(monkeypatch):
    stream = ArrowStream(pa.table({"a": [1.0, 2.0]}))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` now raises ImportError
    with pytest.raises(ImportError, match=r"ArrowStream .* needs pyarrow: pip install 'boosters\[arrow\]'"):
        as_feature_matrix(stream)


_FRAME_LIBRARIES = {"pandas": lambda df: df, "polars": pl.from_pandas,
                    "arrow": lambda df: pa.Table.from_pandas(df, preserve_index=False)}


@pytest.mark.parametrize("library", _FRAME_LIBRARIES)
def test_val_set_columns_are_matched_by_name(library):
    """A val_set frame with the training columns in another order was read by position
    (validation RMSE 1.4 instead of 0.05, and early stopping followed it); renamed columns
    were accepted; a categorical column put elsewhere was an error naming another feature.
    Now it is matched by name, as predict does: the model, scores and early stopping of
    the val_set in training order."""
    df, y = mixed_frame(1000, seed=8)
    to_frame = _FRAME_LIBRARIES[library]
    cfg = bst.GBDTConfig(n_estimators=40, max_depth=3, early_stopping_rounds=5)
    for columns in (["f32", "x", "flag", "k"], ["colour", "f32", "x", "flag", "k"]):  # numeric only, then all
        val_in_order = df[700:].drop(columns=[c for c in df.columns if c not in columns])
        train = bst.Dataset(to_frame(df[:700][list(val_in_order.columns)]), y[:700])
        expected = bst.GBDTModel.train(train, cfg, val_set=bst.Dataset(to_frame(val_in_order), y[700:]))
        model = bst.GBDTModel.train(train, cfg, val_set=bst.Dataset(to_frame(df[700:][columns]), y[700:]))
        assert model.eval_history == expected.eval_history
        assert (model.best_iteration, model.best_score) == (expected.best_iteration, expected.best_score)
        assert model.to_bytes() == expected.to_bytes()
        renamed = val_in_order.rename(columns={"x": "z"})
        with pytest.raises(ValueError, match=r"val_set: .*missing \['x'\], unexpected \['z'\]"):
            bst.GBDTModel.train(train, cfg, val_set=bst.Dataset(to_frame(renamed), y[700:]))
    assert model.best_score < 0.6 and model.n_trees > 20


def test_eval_set_columns_are_matched_by_name():
    """The scikit-learn estimators' eval_set frames: reordered columns are read by name (they
    were read by position), renamed ones are a ValueError naming eval_set and the columns."""
    from boosters.sklearn import GBDTRegressor

    df, y = mixed_frame(1000, seed=9)
    params = dict(n_estimators=60, max_depth=3, early_stopping_rounds=5)
    expected = GBDTRegressor(**params).fit(df[:700], y[:700], eval_set=(df[700:], y[700:]))
    est = GBDTRegressor(**params).fit(df[:700], y[:700], eval_set=(df[700:][["k", "colour", "x", "f32", "flag"]],
                                                                   y[700:]))
    assert est.evals_result_ == expected.evals_result_
    assert est.best_iteration_ == expected.best_iteration_ > 20
    np.testing.assert_array_equal(est.predict(df), expected.predict(df))
    with pytest.raises(ValueError, match=r"(?s)eval_set: .*\bz\b.*\bx\b"):
        GBDTRegressor(**params).fit(df[:700], y[:700], eval_set=(df[700:].rename(columns={"x": "z"}), y[700:]))


def test_record_batch_is_read_as_a_table():
    """A pyarrow RecordBatch (a table of one batch) with a dictionary column was an
    AttributeError (its columns are Arrays, not chunked); it is read as a Table."""
    from boosters.sklearn import GBDTRegressor

    df, y = mixed_frame()
    batch = pa.RecordBatch.from_pandas(df, preserve_index=False)
    cfg = bst.GBDTConfig(n_estimators=5, max_depth=3)
    model = bst.GBDTModel.train(bst.Dataset(df, y), cfg)
    np.testing.assert_array_equal(model.predict(batch), model.predict(df))
    np.testing.assert_array_equal(model.shap_values(batch), model.shap_values(df))
    data = bst.Dataset(batch, y)
    np.testing.assert_array_equal(data.X, bst.Dataset(df, y).X)
    assert bst.GBDTModel.train(data, cfg).to_bytes() == model.to_bytes()
    est = GBDTRegressor(n_estimators=5, max_depth=3).fit(df, y)
    np.testing.assert_array_equal(GBDTRegressor(n_estimators=5, max_depth=3).fit(batch, y).predict(df),
                                  est.predict(df))
    np.testing.assert_array_equal(est.predict(batch), est.predict(df))


@pytest.mark.parametrize("arrow_type", [pa.uint64(), pa.int64()])
def test_arrow_integers_beyond_2_53_name_the_column(arrow_type):
    """float64 holds integers exactly up to 2**53: beyond, an Arrow column was pyarrow's
    ArrowInvalid naming no column; now a ValueError naming X and the column. Up to 2**53
    the values are read exactly."""
    table = pa.table({"a": np.arange(10.0), "big": pa.array([2**53 + 1] + [5] * 9, type=arrow_type)})
    with pytest.raises(ValueError, match=rf"X: column 'big' \({arrow_type}\) holds integers beyond 2\*\*53"):
        bst.Dataset(table, np.zeros(10))
    model = bst.GBDTModel.train(bst.Dataset(table.set_column(1, "big", pa.array([5] * 10, type=arrow_type)),
                                            np.arange(10.0)), bst.GBDTConfig(n_estimators=2))
    with pytest.raises(ValueError, match=r"X: column 'big'"):
        model.predict(table)
    exact = pa.table({"big": pa.array([2**53, 3], type=arrow_type)})
    np.testing.assert_array_equal(bst.Dataset(exact).X[:, 0], [2.0**53, 3.0])


def test_null_in_an_arrow_dictionary_is_missing():
    """A null among an Arrow dictionary column's values was an error (category values of
    mixed types: NoneType, str); rows pointing at it are missing, as a null index is."""
    indices = pa.array([0, 1, 2, 0, 1, 2, 2, 0] * 25, type=pa.int32())
    with_null_value = pa.DictionaryArray.from_arrays(indices, pa.array(["x", None, "z"]))
    null_index = pa.DictionaryArray.from_arrays(pa.array(np.where(indices.to_numpy() == 1, None, indices.to_numpy()),
                                                         type=pa.int32()), pa.array(["x", "y", "z"]))
    a = np.arange(200.0)
    y = a % 3 + 5 * (indices.to_numpy() == 2)
    expected = bst.Dataset(pa.table({"a": a, "c": null_index}), y)
    data = bst.Dataset(pa.table({"a": a, "c": with_null_value}), y)
    np.testing.assert_array_equal(data.X, expected.X)
    np.testing.assert_array_equal(np.isnan(data.X[:, 1]), indices.to_numpy() == 1)
    assert list(data.categories[1]) == ["x", "z"]
    model = bst.GBDTModel.train(data, bst.GBDTConfig(n_estimators=3))
    np.testing.assert_array_equal(model.predict(pa.table({"a": a, "c": with_null_value})),
                                  model.predict(pa.table({"a": a, "c": null_index})))


def test_polars_lazy_frame_is_a_type_error():
    """A polars LazyFrame was read by NumPy as an object scalar ('X must be numeric ...
    got dtype object'); it is a TypeError saying to collect it first."""
    from boosters.sklearn import GBDTRegressor

    df = pl.DataFrame({"a": np.arange(50.0), "b": np.ones(50)})
    model = bst.GBDTModel.train(bst.Dataset(df, np.arange(50.0)), bst.GBDTConfig(n_estimators=2))
    message = r"X is a polars LazyFrame, a query not yet run: collect it first \(X.collect\(\)\)"
    for call in (lambda: bst.Dataset(df.lazy(), np.arange(50.0)), lambda: model.predict(df.lazy()),
                 lambda: GBDTRegressor(n_estimators=2).fit(df.lazy(), np.arange(50.0))):
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(TypeError, match="eval_set: " + message):
        GBDTRegressor(n_estimators=2).fit(df, np.arange(50.0), eval_set=(df.lazy(), np.arange(50.0)))
    np.testing.assert_array_equal(model.predict(df.lazy().collect()), model.predict(df))
