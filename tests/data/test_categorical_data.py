"""Categorical features, data side: which features are categorical (indices, names,
"auto"), raw values (pandas category, strings, integers, Arrow dictionary, polars
Categorical/Enum) -> codes, integer-code checks, the mapping kept in the model (and its
file) and applied by value at prediction. Codes are compared exactly: they are small
integers held as floats."""

import io
import json
import pickle
import zipfile

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import boosters as bst
from boosters.data.categories import MAX_CATEGORIES, frame_codes
from boosters.data.frames import as_frame

NAN = np.nan


def codes_of(ds, f):
    return ds.X[:, f]


def frame_matrix_for(model_or_categories, X, names=None):
    """X coded with a stored mapping (feature -> categories), the way prediction codes it."""
    categories = model_or_categories
    return frame_codes(as_frame(X), None, categories, names)


# -- which features are categorical -------------------------------------------------------

def test_auto_is_the_default_for_frames_and_none_for_arrays():
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "c": pd.Categorical(["a", "b", "a"]), "s": ["p", "q", "p"]})
    ds = bst.Dataset(df[["x", "c"]], [0, 1, 2])
    assert ds.categorical_features == [1]
    assert ds.categories[1].tolist() == ["a", "b"]
    # a string column is not picked up by "auto": it must be declared
    with pytest.raises(ValueError, match="'s'.*categorical_features"):
        bst.Dataset(df, [0, 1, 2])
    arr = bst.Dataset(np.array([[0.0, 1.0], [1.0, 2.0]]), [0, 1])
    assert arr.categorical_features == [] and arr.categories == {}
    assert bst.Dataset(np.array([[0.0, 1.0]]), [0], categorical_features="auto").categorical_features == []
    # [] for a frame: nothing is categorical, so the category column is an error
    with pytest.raises(ValueError, match="'c'"):
        bst.Dataset(df[["x", "c"]], [0, 1, 2], categorical_features=[])


def test_names_and_indices_name_the_same_features():
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "s": ["p", "q", "p"], "t": ["u", "u", "v"]})
    by_name = bst.Dataset(df, [0, 1, 2], categorical_features=["t", "s"])
    by_index = bst.Dataset(df, [0, 1, 2], categorical_features=[2, np.int64(1)])
    assert by_name.categorical_features == by_index.categorical_features == [1, 2]
    np.testing.assert_array_equal(by_name.X, by_index.X)
    X = np.array([[0.0, 1.0], [2.0, 3.0]])
    assert bst.Dataset(X, [0, 1], feature_names=["a", "b"], categorical_features=["b"]).categorical_features == [1]


@pytest.mark.parametrize("spec, error, match", [
    ([5], ValueError, r"categorical_features: index 5 is outside \[0, 3\)"),
    ([-1], ValueError, r"categorical_features: index -1"),
    (["nope"], ValueError, r"categorical_features: 'nope' is not a feature name"),
    ([1.0], ValueError, r"categorical_features: each item"),
    ([True], ValueError, r"categorical_features: each item"),
    ([0, "x"], ValueError, r"categorical_features names a feature twice"),
    ("all", ValueError, r"categorical_features must be 'auto'"),
    (3, TypeError, r"categorical_features must be 'auto'"),
])
def test_bad_categorical_features_are_named(spec, error, match):
    df = pd.DataFrame({"x": [0, 1, 2], "y": [1, 0, 1], "z": [0.5, 1.5, 2.5]})
    with pytest.raises(error, match=match):
        bst.Dataset(df, [0, 1, 2], categorical_features=spec)


def test_names_need_feature_names():
    with pytest.raises(ValueError, match="categorical_features: 'a' is a name but X has no feature names"):
        bst.Dataset(np.zeros((2, 2)), [0, 1], categorical_features=["a"])


# -- raw values -> codes ------------------------------------------------------------------

def test_pandas_category_keeps_its_order_and_unused_levels():
    c = pd.Categorical(["x", "z", None, "x"], categories=["z", "y", "x"])
    ds = bst.Dataset(pd.DataFrame({"c": c}), [0, 1, 2, 3])
    np.testing.assert_array_equal(codes_of(ds, 0), [2, 0, NAN, 2])
    assert ds.categories[0].tolist() == ["z", "y", "x"]


def test_pandas_category_of_integers():
    c = pd.Categorical([10, 3, None, 10], categories=[10, 3, 7])
    ds = bst.Dataset(pd.DataFrame({"c": c}), [0, 1, 2, 3])
    np.testing.assert_array_equal(codes_of(ds, 0), [0, 1, NAN, 0])
    assert ds.categories[0].dtype == np.int64 and ds.categories[0].tolist() == [10, 3, 7]


@pytest.mark.parametrize("dtype", [object, "str"])
def test_string_columns_get_sorted_codes(dtype):
    s = pd.Series(["pear", "apple", None, "fig", "apple", np.nan], dtype=dtype)
    ds = bst.Dataset(pd.DataFrame({"s": s, "x": np.arange(6.0)}), np.zeros(6), categorical_features=["s"])
    assert ds.categories[0].tolist() == ["apple", "fig", "pear"]
    np.testing.assert_array_equal(codes_of(ds, 0), [2, 0, NAN, 1, 0, NAN])
    np.testing.assert_array_equal(ds.X[:, 1], np.arange(6.0))


def test_object_column_of_integers_and_pd_na():
    s = pd.Series([30, 5, pd.NA, 5, 1000], dtype=object)
    ds = bst.Dataset(pd.DataFrame({"s": s}), np.zeros(5), categorical_features=[0])
    assert ds.categories[0].tolist() == [5, 30, 1000]
    np.testing.assert_array_equal(codes_of(ds, 0), [1, 0, NAN, 0, 2])


def test_mixed_strings_and_numbers_are_rejected():
    s = pd.Series(["a", 1, "b"], dtype=object)
    with pytest.raises(TypeError, match="categorical feature 's'.*all strings or all integers"):
        bst.Dataset(pd.DataFrame({"s": s}), np.zeros(3), categorical_features=["s"])
    floats = pd.Categorical([1.5, 2.5, 1.5])
    with pytest.raises(TypeError, match="categorical feature 'f'.*float"):
        bst.Dataset(pd.DataFrame({"f": floats}), np.zeros(3))


def test_integer_codes_are_the_codes():
    X = np.array([[0, 1.5], [3, 2.5], [65533, NAN]])
    ds = bst.Dataset(X, np.zeros(3), categorical_features=[0])
    assert ds.categories == {0: None}
    assert ds.X is X  # checked, not copied
    frame = bst.Dataset(pd.DataFrame({"code": pd.array([2, None, 0], dtype="Int64")}), np.zeros(3),
                        categorical_features=["code"])
    assert frame.categories == {0: None}
    np.testing.assert_array_equal(codes_of(frame, 0), [2, NAN, 0])


@pytest.mark.parametrize("bad", [-1, 0.5, np.inf, -np.inf, MAX_CATEGORIES, 2**40])
def test_bad_integer_codes_are_named(bad):
    X = np.array([[0.0, 0.0], [1.0, bad]])
    with pytest.raises(ValueError, match=r"categorical feature 'b' \(index 1\): code .* at row 1 is not an integer "
                                         r"in \[0, 65534\)"):
        bst.Dataset(X, np.zeros(2), feature_names=["a", "b"], categorical_features=[1])
    with pytest.raises(ValueError, match="categorical feature 'b'"):
        bst.Dataset(pd.DataFrame({"a": [0, 1], "b": [0, bad]}), np.zeros(2), categorical_features=["b"])


def test_int64_codes_do_not_wrap_around():
    """2**32 + 1 would be 1 modulo 2**32 in a narrower integer type: it is rejected."""
    X = np.array([[1], [2**32 + 1]], dtype=np.int64)
    with pytest.raises(ValueError, match="code 4294967297.0 at row 1"):
        bst.Dataset(X, np.zeros(2), categorical_features=[0])


def test_too_many_categories():
    values = np.array([f"v{i}" for i in range(MAX_CATEGORIES + 1)], dtype=object)
    with pytest.raises(ValueError, match=r"feature 's' \(index 0\) has 65535 categories; at most 65534"):
        bst.Dataset(pd.DataFrame({"s": values}), np.zeros(len(values)), categorical_features=["s"])
    ok = bst.Dataset(pd.DataFrame({"s": values[:MAX_CATEGORIES]}), np.zeros(MAX_CATEGORIES),
                     categorical_features=[0])
    assert np.nanmax(ok.X) == MAX_CATEGORIES - 1


def test_pyarrow_table():
    d1 = pa.array(["b", "a", None]).dictionary_encode()
    d2 = pa.array(["c", "a"]).dictionary_encode()  # another dictionary in another chunk
    table = pa.table({
        "d": pa.chunked_array([d1, d2]),
        "s": pa.chunked_array([pa.array(["y", None]), pa.array(["x", "y", "x"])]),
        "i": pa.array([1, None, 3, 4, 5]),
        "b": pa.array([True, None, False, True, True]),
    })
    ds = bst.Dataset(table, np.zeros(5), categorical_features=["d", "s"])
    assert ds.feature_names == ["d", "s", "i", "b"]
    assert ds.categories[0].tolist() == ["a", "b", "c"] and ds.categories[1].tolist() == ["x", "y"]
    np.testing.assert_array_equal(ds.X, [[1, 1, 1, 1], [0, NAN, NAN, NAN], [NAN, 0, 3, 0], [2, 1, 4, 1],
                                         [0, 0, 5, 1]])
    auto = bst.Dataset(table.select(["i", "d"]), np.zeros(5))
    assert auto.categorical_features == [1]
    numeric = pa.table({"f": pa.array([1.5, None], type=pa.float32()),
                        "g": pa.array([2.5, 3.0], type=pa.float32())})
    m = bst.Dataset(numeric, np.zeros(2)).X
    assert m.dtype == np.float32
    np.testing.assert_array_equal(m, [[1.5, 2.5], [NAN, 3.0]])


def test_polars_categorical_and_enum():
    df = pl.DataFrame({
        "c": pl.Series(["b", "a", None, "c", "a"], dtype=pl.Categorical),
        "e": pl.Series(["x", "y", None, "x", "y"], dtype=pl.Enum(["y", "x", "unused"])),
        "s": ["q", "r", None, "q", "q"],
        "i": [1, None, 3, 4, 5],
    })
    ds = bst.Dataset(df.select(["c", "e", "i"]), np.zeros(5))
    assert ds.categorical_features == [0, 1]
    assert ds.categories[0].tolist() == ["a", "b", "c"]       # sorted values present
    assert ds.categories[1].tolist() == ["y", "x", "unused"]  # the Enum's declared order
    np.testing.assert_array_equal(ds.X[:, :2], [[1, 1], [0, 0], [NAN, NAN], [2, 1], [0, 0]])
    np.testing.assert_array_equal(ds.X[:, 2], [1, NAN, 3, 4, 5])
    with pytest.raises(ValueError, match="'s' has dtype String.*declare it in categorical_features"):
        bst.Dataset(df, np.zeros(5))
    declared = bst.Dataset(df, np.zeros(5), categorical_features=["c", "e", "s", "i"])
    assert declared.categories[3] is None  # numbers are the codes
    np.testing.assert_array_equal(declared.X[:, 2], [0, 1, NAN, 0, 0])  # 's': sorted q, r


def test_all_missing_columns():
    for X in (pd.DataFrame({"c": pd.Categorical([None, None]), "s": pd.Series([None, None], dtype=object)}),
              pa.table({"c": pa.array([None, None], pa.string()).dictionary_encode(),
                        "s": pa.array([None, None], pa.string())}),
              pl.DataFrame({"c": pl.Series([None, None], dtype=pl.Categorical),
                            "s": pl.Series([None, None], dtype=pl.String)})):
        ds = bst.Dataset(X, [0, 1], categorical_features=["c", "s"])
        assert np.isnan(ds.X).all() and [len(v) for v in ds.categories.values()] == [0, 0]


def test_same_data_same_codes_in_every_library():
    values = ["m", "k", None, "z", "k", "m"]
    x = [0.5, 1.5, 2.5, NAN, 4.5, 5.5]
    pdf = pd.DataFrame({"x": x, "c": pd.Series(values, dtype=object)})
    expected = bst.Dataset(pdf, np.zeros(6), categorical_features=["c"])
    for X in (pa.table({"x": x, "c": values}), pl.DataFrame({"x": x, "c": values}, strict=False),
              pdf.astype({"c": "category"})):
        ds = bst.Dataset(X, np.zeros(6), categorical_features=["c"])
        np.testing.assert_array_equal(ds.X, expected.X)
        assert ds.categories[1].tolist() == ["k", "m", "z"]


# -- the mapping at prediction ---------------------------------------------------------------

CATS = {0: np.array(["b", "a", "c"], dtype=object), 2: None, 3: np.array([7, 9], dtype=np.int64)}


def test_frame_is_coded_by_value():
    df = pd.DataFrame({
        "c": pd.Categorical(["a", "new", None, "c", "b"], categories=["new", "c", "a", "b", "extra"]),
        "x": [0.1, 0.2, 0.3, 0.4, 0.5],
        "code": [4, 0, None, 2, 1],
        "i": [9, 7, 8, None, 9],
    })
    got = frame_matrix_for(CATS, df)
    np.testing.assert_array_equal(got, [[1, 0.1, 4, 1], [NAN, 0.2, 0, 0], [NAN, 0.3, NAN, NAN],
                                        [2, 0.4, 2, NAN], [0, 0.5, 1, 1]])
    # the same values as strings, as an Arrow dictionary, as a polars Categorical and Enum
    strings = df.astype({"c": object})
    for X in (strings, pa.Table.from_pandas(df, preserve_index=False), pl.from_pandas(strings),
              pl.from_pandas(strings).with_columns(pl.col("c").cast(pl.Categorical)),
              pl.from_pandas(strings).with_columns(pl.col("c").cast(pl.Enum(["new", "c", "b", "a"])))):
        np.testing.assert_array_equal(frame_matrix_for(CATS, X), got)


def test_numbers_for_string_categories_are_an_error():
    df = pd.DataFrame({"c": [0, 1], "x": [0.0, 0.0], "code": [0, 1], "i": [7, 9]})
    with pytest.raises(ValueError, match="feature 'c' .* was trained on string categories; got numbers"):
        frame_matrix_for(CATS, df, ["c", "x", "code", "i"])
    df = pd.DataFrame({"c": ["a", "b"], "x": [0.0, 0.0], "code": ["a", "b"], "i": [7, 9]})
    with pytest.raises(ValueError, match="categorical feature 2 was trained on integer codes; got strings"):
        frame_matrix_for(CATS, df)
    df = pd.DataFrame({"c": ["a", "b"], "x": [0.0, 0.0], "code": [1, 2], "i": ["7", "9"]})
    with pytest.raises(ValueError, match="categorical feature 3 was trained on integer categories; got string values"):
        frame_matrix_for(CATS, df)


# -- the mapping in the model and its file ---------------------------------------------------

def category_data(n=3000, seed=0):
    """y depends on a 7-level string column (with missing values) and a numeric column."""
    rng = np.random.default_rng(seed)
    levels = ["red", "green", "blue", "cyan", "mauve", "ochre", "teal"]
    effect = dict(zip(levels, [2.0, -1.0, 0.5, 3.0, -2.5, 1.0, 0.0]))
    c = rng.choice(levels, n).astype(object)
    c[rng.random(n) < 0.05] = None
    x = rng.normal(size=n)
    y = np.array([effect.get(v, -4.0) for v in c]) + x + 0.1 * rng.normal(size=n)
    df = pd.DataFrame({"x": x, "color": pd.Categorical(c, categories=levels)})
    return df, y


@pytest.fixture(scope="module")
def category_model():
    df, y = category_data()
    model = bst.GBDTModel.train(bst.Dataset(df, y), bst.GBDTConfig(n_estimators=20, max_depth=4))
    return df, y, model


def test_model_keeps_the_mapping(category_model):
    df, _, model = category_model
    assert model.categorical_features == [1]
    assert model.categories[1].tolist() == list(df["color"].cat.categories)
    loaded = bst.GBDTModel.from_bytes(model.to_bytes())
    assert loaded.categorical_features == [1]
    assert loaded.categories[1].tolist() == model.categories[1].tolist()
    np.testing.assert_array_equal(loaded.predict(df), model.predict(df))
    reordered = df.assign(color=df["color"].cat.reorder_categories(list(reversed(df["color"].cat.categories))))
    np.testing.assert_array_equal(loaded.predict(reordered), model.predict(df))
    unpickled = pickle.loads(pickle.dumps(model))
    assert unpickled.categories[1].tolist() == model.categories[1].tolist()
    np.testing.assert_array_equal(unpickled.predict(reordered), model.predict(df))


def test_reordered_and_extra_categories_predict_like_the_codes(category_model):
    df, _, model = category_model
    codes = bst.Dataset(df, np.zeros(len(df))).X  # the training codes
    expected = model.predict(codes)
    other = df.copy()
    other["color"] = (other["color"].cat.reorder_categories(list(reversed(df["color"].cat.categories)))
                      .cat.add_categories(["gold"]))
    np.testing.assert_array_equal(model.predict(other), expected)
    np.testing.assert_array_equal(model.predict(other[["color", "x"]]), expected)  # columns by name
    np.testing.assert_array_equal(model.predict(other.astype({"color": object})), expected)
    np.testing.assert_array_equal(model.predict(pa.Table.from_pandas(other, preserve_index=False)), expected)
    np.testing.assert_array_equal(model.predict(pl.from_pandas(other.astype({"color": object}))), expected)
    np.testing.assert_array_equal(model.predict(bst.Dataset(other)), expected)  # a Dataset's own mapping
    np.testing.assert_array_equal(model.predict(bst.Dataset(other[["color", "x"]])), expected)
    # the categories' order really differs: the other frame's own codes predict differently
    assert not np.array_equal(model.predict(bst.Dataset(other).X), expected)


def test_unseen_and_missing_values_predict_as_missing(category_model):
    df, _, model = category_model
    rows = pd.DataFrame({"x": [0.3, 0.3, 0.3], "color": ["never seen", None, "teal"]})
    p = model.predict(rows)
    assert p[0] == p[1] == model.predict(np.array([[0.3, NAN]]))[0]
    assert p[2] == model.predict(np.array([[0.3, 6.0]]))[0]  # teal is code 6


def test_val_set_is_recoded_to_the_training_mapping(category_model):
    df, y, _ = category_model
    cfg = bst.GBDTConfig(n_estimators=15, max_depth=4)
    reordered = df.copy()
    reordered["color"] = reordered["color"].cat.reorder_categories(["teal", "ochre", "mauve", "cyan", "blue",
                                                                    "green", "red"])
    a = bst.GBDTModel.train(bst.Dataset(df, y), cfg, val_set=bst.Dataset(reordered, y))
    b = bst.GBDTModel.train(bst.Dataset(df, y), cfg, val_set=bst.Dataset(df, y))
    np.testing.assert_array_equal(a.eval_history, b.eval_history)
    with pytest.raises(ValueError, match="val_set: feature 'x'.*categorical here but the model's is numeric"):
        bst.GBDTModel.train(bst.Dataset(df, y), cfg,
                            val_set=bst.Dataset(df.astype({"x": str}), y, categorical_features=["x", "color"]))


def test_the_same_data_from_each_library_trains_the_same_model(category_model):
    """Arrow dictionaries and polars Categoricals get sorted codes: the same model as a
    pandas category column whose categories are sorted (and a polars Enum declared so)."""
    df, y, _ = category_model
    levels = sorted(df["color"].cat.categories)
    sorted_df = df.assign(color=df["color"].cat.reorder_categories(levels))
    cfg = bst.GBDTConfig(n_estimators=20, max_depth=4)
    expected = bst.GBDTModel.train(bst.Dataset(sorted_df, y), cfg).predict(df)
    strings = pl.from_pandas(df.astype({"color": object}))
    for X in (pa.Table.from_pandas(df, preserve_index=False),
              strings.with_columns(pl.col("color").cast(pl.Categorical)),
              strings.with_columns(pl.col("color").cast(pl.Enum(levels)))):
        model = bst.GBDTModel.train(bst.Dataset(X, y), cfg)
        assert model.categories[1].tolist() == levels
        np.testing.assert_array_equal(model.predict(df), expected)


def decode(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        arrays = {name.removesuffix(".npy"): np.lib.format.read_array(zf.open(name)) for name in zf.namelist()}
    return json.loads(arrays.pop("header").tobytes()), arrays


def encode(header, arrays):
    buf = io.BytesIO()
    np.savez_compressed(buf, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    return buf.getvalue()


@pytest.mark.parametrize("features, categories, match", [
    ([2], [["a"]], "categorical_features must be a sorted list"),
    ([1, 1], [None, None], "categorical_features must be a sorted list"),
    ("1", [None], "categorical_features must be a sorted list"),
    ([1], [], "categories must be a list of 1 entries"),
    ([1], [["a", "a"]], "categories of feature 1 repeat a value"),
    ([1], [["a", 2]], "categories of feature 1 must be null or a list"),
    ([1], [[1.5]], "categories of feature 1 must be null or a list"),
    ([1], [[True]], "categories of feature 1 must be null or a list"),
    ([1], [[2**63]], "categories of feature 1 must be null or a list"),
    ([1], [["v"] * (MAX_CATEGORIES + 1)], "categories of feature 1 must be null or a list of at most 65534"),
    ([1], ["abc"], "categories of feature 1 must be null or a list"),
])
def test_bad_mapping_in_a_file_is_rejected(category_model, features, categories, match):
    _, _, model = category_model
    header, arrays = decode(model.to_bytes())
    assert header["categorical_features"] == [1]
    header["categorical_features"], header["categories"] = features, categories
    with pytest.raises(ValueError, match="not a valid boosters model: " + match):
        bst.GBDTModel.from_bytes(encode(header, arrays))


def test_the_mapping_fields_come_together(category_model):
    """Written only with categorical features (a numeric model's file is as before); one
    without the other is rejected."""
    _, _, model = category_model
    header, arrays = decode(model.to_bytes())
    del header["categories"]
    with pytest.raises(ValueError, match=r"not a valid boosters model: header fields \['categorical_features', "
                                         r"'categories'\] come together"):
        bst.GBDTModel.from_bytes(encode(header, arrays))
    del header["categorical_features"]
    assert bst.GBDTModel.from_bytes(encode(header, arrays)).categories == {}
    numeric = bst.GBDTModel.train(bst.Dataset(np.arange(20.0)[:, None], np.arange(20.0)),
                                  bst.GBDTConfig(n_estimators=2))
    assert "categories" not in decode(numeric.to_bytes())[0]


def test_integer_mappings_round_trip():
    X = np.array([[0.0, 1.0], [2.0, 0.0], [1.0, NAN], [0.0, 1.0]] * 10)
    y = X[:, 0] + np.nan_to_num(X[:, 1])
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[0]), bst.GBDTConfig(n_estimators=3))
    assert model.categories == {0: None}
    loaded = bst.GBDTModel.from_bytes(model.to_bytes())
    assert loaded.categories == {0: None}
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    ints = pd.DataFrame({"c": pd.Categorical([10, 30, 20, 10] * 10), "x": np.arange(40.0)})
    model = bst.GBDTModel.train(bst.Dataset(ints, np.arange(40.0)), bst.GBDTConfig(n_estimators=3))
    loaded = bst.GBDTModel.from_bytes(model.to_bytes())
    assert loaded.categories[0].dtype == np.int64 and loaded.categories[0].tolist() == [10, 20, 30]
    # a plain integer column is coded by value with the integer categories
    plain = ints.astype({"c": np.int64})
    np.testing.assert_array_equal(loaded.predict(plain), model.predict(ints))


def test_numeric_arrow_and_polars_frames_train_and_predict_like_pandas():
    rng = np.random.default_rng(3)
    pdf = pd.DataFrame({"a": rng.normal(size=500), "b": rng.integers(0, 5, 500), "c": rng.normal(size=500)})
    pdf.loc[::7, "a"] = NAN
    y = pdf["a"].fillna(0) + pdf["b"] - pdf["c"]
    cfg = bst.GBDTConfig(n_estimators=5, max_depth=3)
    expected = bst.GBDTModel.train(bst.Dataset(pdf, y), cfg)
    for X in (pa.Table.from_pandas(pdf, preserve_index=False), pl.from_pandas(pdf, nan_to_null=True)):
        model = bst.GBDTModel.train(bst.Dataset(X, y), cfg)
        assert model.feature_names == ["a", "b", "c"]
        np.testing.assert_array_equal(model.predict(X), expected.predict(pdf))
        reordered = X.select(["c", "a", "b"])  # matched by name
        np.testing.assert_array_equal(expected.predict(reordered), expected.predict(pdf))
