"""GBDTModel.save / load and the file's name: ".npz" the binary encoding, ".json" the JSON
one (".bst" too, the binary encoding's name in older docs); any other suffix refused with a
ValueError naming it and those that work, never written in some encoding silently. Another
library's model, named as its library names it or renamed to ours, is refused naming the
converter that reads it."""

import os
import re

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

import boosters as bst

WORKING = "'.npz' (the binary encoding; '.bst' too) or '.json' (the JSON encoding)"


@pytest.fixture(scope="module")
def model():
    X = np.random.default_rng(0).normal(size=(200, 3))
    return bst.GBDTModel.train(bst.Dataset(X, X[:, 0] - X[:, 1]), bst.GBDTConfig(n_estimators=5), n_threads=1)


def rows():
    return np.random.default_rng(1).normal(size=(50, 3))


@pytest.mark.parametrize("name, first_bytes", [("model.npz", b"PK"), ("model.bst", b"PK"), ("model.json", b"{"),
                                               ("model.bstr.json", b"{"), ("MODEL.NPZ", b"PK"),
                                               ("Model.Json", b"{")])
def test_the_suffix_picks_the_encoding(tmp_path, model, name, first_bytes):
    path = tmp_path / name
    model.save(path)
    assert path.read_bytes().startswith(first_bytes)
    np.testing.assert_array_equal(bst.GBDTModel.load(path).predict_raw(rows()), model.predict_raw(rows()))


@pytest.mark.parametrize("name", ["model.txt", "model.ubj", "model.model", "model.bin", "model", "model.npz.tmp",
                                  "model.jsonl", "model.pkl"])
def test_save_refuses_other_suffixes_and_writes_nothing(tmp_path, model, name):
    suffix = os.path.splitext(name)[1]
    said = f"its suffix is '{suffix}'" if suffix else "it has no suffix"
    with pytest.raises(ValueError, match=re.escape(f"cannot save a model as {str(tmp_path / name)!r}: {said}; a model "
                                                   f"file's name ends in {WORKING}")):
        model.save(tmp_path / name)
    assert os.listdir(tmp_path) == []


def test_save_says_what_to_do_for_lightgbm_and_xgboost_names(tmp_path, model):
    with pytest.raises(ValueError, match="does not write LightGBM's text model format"):
        model.save(tmp_path / "model.txt")
    with pytest.raises(ValueError, match=re.escape("bst.convert.to_xgboost_json(model)")):
        model.save(str(tmp_path / "model.ubj"))
    with pytest.raises(ValueError, match=re.escape(f"ends in {WORKING}")):
        model.save(os.fsencode(tmp_path / "model.model"))  # a bytes path too


def test_save_refuses_a_directory_before_its_name(tmp_path, model):
    """A path that is not a regular file is an OSError whatever its name, as before."""
    (tmp_path / "folder").mkdir()
    with pytest.raises(OSError, match="is a directory: a model file must be a regular file"):
        model.save(tmp_path / "folder")


@pytest.mark.parametrize("name, reader", [("model.txt", "bst.convert.from_lightgbm(path)"),
                                          ("model.ubj", "bst.convert.from_xgboost(path)"),
                                          ("model.model", "bst.convert.from_xgboost(path) or "
                                                          "bst.convert.from_lightgbm(path)"),
                                          ("model", "bst.convert.from_xgboost(path)")])
def test_load_refuses_other_suffixes_naming_the_reader(tmp_path, model, name, reader):
    path = tmp_path / name
    path.write_bytes(model.to_bytes())  # even a valid model: the name says it is some other file
    with pytest.raises(ValueError, match=re.escape(f"cannot load {str(path)!r} as a boosters model: ") + ".*"
                       + re.escape(f"ends in {WORKING}; ") + ".*" + re.escape(reader)):
        bst.GBDTModel.load(path)


def test_load_reads_the_encoding_from_the_content(tmp_path, model):
    """Either encoding under either working suffix (a checkpoint's file is binary whatever
    its name)."""
    (tmp_path / "binary.json").write_bytes(model.to_bytes())
    (tmp_path / "document.npz").write_bytes(model.to_json_bytes())
    for name in ("binary.json", "document.npz"):
        np.testing.assert_array_equal(bst.GBDTModel.load(tmp_path / name).predict_raw(rows()),
                                      model.predict_raw(rows()))


def test_a_file_that_is_no_model_is_refused_without_a_converter_hint(tmp_path):
    for name, data in (("junk.npz", b"junk"), ("junk.json", b'{"a": 1}'), ("empty.npz", b"")):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match="^not a valid boosters model: ") as error:
            bst.GBDTModel.load(tmp_path / name)
        assert "bst.convert" not in str(error.value)


def xgboost_booster():
    X = rows().astype(np.float32)
    return xgb.train({"max_depth": 2}, xgb.DMatrix(X, X[:, 0]), 3)


@pytest.mark.parametrize("raw_format, renamed", [("json", "model.json"), ("json", "model.npz"),
                                                 ("ubj", "model.npz"), ("ubj", "model.json")])
def test_an_xgboost_model_renamed_is_refused_naming_from_xgboost(tmp_path, raw_format, renamed):
    path = tmp_path / renamed
    path.write_bytes(bytes(xgboost_booster().save_raw(raw_format)))
    with pytest.raises(ValueError, match=re.escape(f"not a valid boosters model: {str(path)!r}: it is an XGBoost "
                                                   f"model: read it with bst.convert.from_xgboost(path)")):
        bst.GBDTModel.load(path)


@pytest.mark.parametrize("renamed", ["model.json", "model.npz"])
def test_a_lightgbm_model_renamed_is_refused_naming_from_lightgbm(tmp_path, renamed):
    X = rows()
    booster = lgb.train({"num_leaves": 4, "verbose": -1, "min_data_in_leaf": 5}, lgb.Dataset(X, X[:, 0]), 3)
    path = tmp_path / renamed
    path.write_text(booster.model_to_string())
    with pytest.raises(ValueError, match=re.escape(f"not a valid boosters model: {str(path)!r}: it is a LightGBM "
                                                   f"text model: read it with bst.convert.from_lightgbm(path)")):
        bst.GBDTModel.load(path)


def test_the_converters_still_read_the_names_load_refuses(tmp_path):
    """What the error says works: XGBoost's .ubj through from_xgboost."""
    booster = xgboost_booster()
    path = tmp_path / "model.ubj"
    booster.save_model(path)
    X = rows().astype(np.float32)
    np.testing.assert_allclose(bst.convert.from_xgboost(str(path)).predict(X), booster.predict(xgb.DMatrix(X)),
                               rtol=1e-5, atol=1e-6)
