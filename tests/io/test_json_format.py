"""The JSON encoding of a model file (io/json_format.py): the .npz format's content laid out
for people, validated by the published schema (boosters/io/model.schema.json), decoded to
the very arrays the .npz holds and checked by the same validation.

Round trips are exact: the same arrays (dtype and bits) as the .npz, and predictions equal
to the original model's bit for bit (the same trees, summed in the same order). Bad or
hostile documents raise ValueError("not a valid boosters model: ...") naming the field.
The fuzz tests reuse tests/support/model_files.py's models, reference checker and strategies;
`BOOSTERS_FUZZ_EXAMPLES=N` runs N cases per fuzz test.
"""

import dataclasses
import functools
import json
import time
from importlib import resources
from pathlib import Path

import jsonschema
import lightgbm
import numpy as np
import xgboost
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import boosters as bst
from boosters.io import json_format, npz_format
from support.model_files import (N_FEATURES, TREE_ARRAYS, assert_predicts_like_reference, decode, fuzz_settings,
                              json_values, model_bytes, query_rows, reference_is_valid, values)

SCHEMA = json.loads(resources.files("boosters.io").joinpath("model.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


# ----------------------------------------------------------------------------------
# Models of every kind the format can hold
# ----------------------------------------------------------------------------------

def _rows(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 6, n)
    X[rng.random(n) < 0.1, 1] = np.nan
    return X, rng


def _train(y, X=None, categorical=None, names=None, group=None, **config):
    if X is None:
        X, _ = _rows()
    data = bst.Dataset(X, y, feature_names=names, categorical_features=categorical, group=group)
    # small categorical groups and leaves, so that 160 rows make categorical splits and full trees
    config = dict(n_estimators=3, max_depth=3, min_data_per_group=5, cat_smooth=1.0, min_samples_leaf=1, **config)
    return bst.GBDTModel.train(data, bst.GBDTConfig(**config), n_threads=1)


def _without_config(model):
    return bst.GBDTModel(dataclasses.replace(model.ensemble, config=None))


def _custom_squared(margins, dataset):
    return margins - dataset.y, np.ones_like(margins)


def _models():
    X, rng = _rows()
    f = X[:, 0] + np.where(X[:, 3] % 2 == 0, 0.7, -0.7) + np.nan_to_num(X[:, 1])
    label = (f > 0).astype(float)
    counts = rng.poisson(np.exp(0.3 * np.tanh(f))).astype(float)
    yield "squared", _train(f)
    yield "squared_names_categorical", _train(f, categorical=[3], names=["a", "b", "c", "d"])
    yield "pandas_categories", _train_on_frame(X, f)
    yield "logistic", _train(label, objective=bst.Objective.logistic())
    yield "hinge", _train(label, objective=bst.Objective.hinge())
    yield "softmax", _train(np.digitize(f, [-0.5, 0.5]).astype(float), objective=bst.Objective.softmax(3),
                            categorical=[3])
    yield "one_vs_rest", _train(np.digitize(f, [-0.5, 0.5]).astype(float), objective=bst.Objective.one_vs_rest(3))
    yield "poisson", _train(counts, objective=bst.Objective.poisson())
    yield "gamma", _train(counts + 1, objective=bst.Objective.gamma())
    yield "tweedie", _train(counts, objective=bst.Objective.tweedie(1.3))
    yield "absolute", _train(f, objective=bst.Objective.absolute())
    yield "huber_two_targets", _train(np.stack([f, -f], axis=1), objective=bst.Objective.huber(0.5))
    yield "pinball_levels", _train(f, objective=bst.Objective.pinball([0.2, 0.8]))
    yield "lambdarank", _train(np.minimum(counts, 3), group=[40] * 4, objective=bst.Objective.lambdarank(5))
    yield "pairwise", _train(np.minimum(counts, 3), group=[40] * 4, objective=bst.Objective.pairwise())
    yield "custom", _train(f, objective=bst.Objective.custom(_custom_squared, base_score=0.5))
    yield "linear_leaves", _train(f, X=X[:, :3], linear_leaves=True, linear_l2=0.1)
    yield "linear_categorical", _train(f, categorical=[3], linear_leaves=True)
    yield "dart", _train(counts, objective=bst.Objective.poisson(), booster="dart", drop_rate=0.5)
    yield "leafwise_constraints", _train(f, growth_strategy="leafwise", n_leaves=5, monotone_constraints={"a": 1},
                                         interaction_constraints=[["a", "b"], ["c", "d"]], names=list("abcd"))
    validation = bst.Dataset(X[:40], f[:40])
    yield "early_stopping", bst.GBDTModel.train(bst.Dataset(X[40:], f[40:]), bst.GBDTConfig(
        n_estimators=6, max_depth=2, early_stopping_rounds=2, metric=[bst.Metric.rmse(), bst.Metric.mae()]),
        val_set=validation, n_threads=1)
    yield "no_config", _without_config(_train(f, categorical=[3]))
    yield "ordered_ctr", _train(f, categorical=[3], cat_encoding="ordered_ctr")
    yield "ordered_ctr_frame", bst.GBDTModel.train(bst.Dataset(_colours(X), label), bst.GBDTConfig(
        n_estimators=3, max_depth=3, objective=bst.Objective.logistic(), cat_encoding="ordered_ctr",
        ctr_prior_weight=2.0, max_onehot_cats=0), n_threads=1)


def _colours(X):
    import pandas as pd
    return pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1],
                         "colour": pd.Categorical(np.array(["red", "green", "blue"])[X[:, 3].astype(int) % 3])})


def _train_on_frame(X, f):
    frame = _colours(X)
    y = f + np.where(frame["colour"] == "green", 2.0, 0.0)
    return bst.GBDTModel.train(bst.Dataset(frame, y), bst.GBDTConfig(n_estimators=3, max_depth=3, min_data_per_group=5),
                               n_threads=1)


MODELS = dict(_models())


def _query(model):
    X, _ = _rows(50, seed=1)
    X[0, :3] = [np.inf, -np.inf, np.nan]
    if model.categories and model.categories[min(model.categories)] is not None:  # the pandas model
        return _colours(X)
    return X[:, :model.n_features]


def test_every_kind_of_content_is_covered():
    kinds = [m.ensemble for m in MODELS.values()]
    assert {e.objective.name for e in kinds} >= {"squared", "logistic", "softmax", "one_vs_rest", "poisson", "gamma",
                                                 "tweedie", "absolute", "huber", "pinball", "lambdarank", "pairwise",
                                                 "hinge", "custom"}
    assert any(e.forest.flat().categories is not None for e in kinds)
    assert any(e.forest.flat().linear is not None for e in kinds)
    assert any(e.config is None for e in kinds) and any(e.feature_names for e in kinds)
    assert any(e.eval_history for e in kinds) and any(e.config and e.config.booster == "dart" for e in kinds)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_json_of_every_model_validates_against_the_schema(name):
    VALIDATOR.validate(json.loads(MODELS[name].to_json_bytes()))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_json_decodes_to_the_arrays_of_the_npz(name):
    """One content, two encodings: the JSON's parts are the .npz's, dtype and bits."""
    header, arrays = npz_format.to_parts(MODELS[name].ensemble)
    doc = json.loads(MODELS[name].to_json_bytes())
    json_header, json_arrays = json_format.document_to_parts(doc)
    assert json.dumps(json_header, sort_keys=True) == json.dumps(header, sort_keys=True)
    assert sorted(json_arrays) == sorted(arrays)
    for key, arr in arrays.items():
        assert json_arrays[key].dtype == arr.dtype, key
        np.testing.assert_array_equal(json_arrays[key].view(np.uint8), np.ascontiguousarray(arr).view(np.uint8))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_json_round_trip_predicts_bit_identically(name):
    model = MODELS[name]
    data = model.to_json_bytes()
    from_json = bst.GBDTModel.from_json_bytes(data)
    from_npz = bst.GBDTModel.from_bytes(model.to_bytes())
    X = _query(model)
    for method in ("predict_raw", "predict", "predict_leaf"):
        expected = getattr(model, method)(X, n_threads=1)
        np.testing.assert_array_equal(getattr(from_json, method)(X, n_threads=2), expected)  # exact: same trees
        np.testing.assert_array_equal(getattr(from_npz, method)(X, n_threads=1), expected)
    assert from_json.to_json_bytes() == data  # and the document is stable
    assert from_json.to_bytes() == model.to_bytes()
    # a custom objective's function is not in a file: the .npz loads the same objective
    assert from_json.objective == from_npz.objective and from_json.config == from_npz.config
    assert from_json.feature_names == model.feature_names and from_json.eval_history == model.eval_history


def test_converted_models_round_trip():
    """Models converted from LightGBM and XGBoost (no config; thresholds as they gave them,
    categorical sets and NaN directions included) are JSON models like any other."""
    X, rng = _rows(300)
    y = X[:, 0] + np.where(X[:, 3] == 2, 3.0, 0.0) + np.nan_to_num(X[:, 1])
    lgb = lightgbm.train({"objective": "regression", "num_leaves": 7, "verbose": -1, "num_threads": 1,
                          "max_cat_to_onehot": 8, "min_data_in_leaf": 5},
                         lightgbm.Dataset(X, y, categorical_feature=[3]), num_boost_round=4)
    xgb = xgboost.train({"max_depth": 3, "nthread": 1}, xgboost.DMatrix(X, y), num_boost_round=4)
    converted = bst.convert.from_lightgbm(lgb), bst.convert.from_xgboost(xgb)
    assert converted[0].forest.flat().categories is not None  # LightGBM split on a category
    for source in converted:
        assert source.config is None
        data = source.to_json_bytes()
        VALIDATOR.validate(json.loads(data))
        loaded = bst.GBDTModel.from_json_bytes(data)
        np.testing.assert_array_equal(loaded.predict_raw(X, n_threads=1), source.predict_raw(X, n_threads=1))
        assert loaded.to_bytes() == source.to_bytes()


def test_floats_round_trip_exactly():
    """Every float64 reads back with the same bits, the infinities of thresholds too."""
    doc = json.loads(MODELS["squared"].to_json_bytes())
    nodes = doc["trees"][0]["nodes"]
    tricky = [5e-324, -0.0, 1 / 3, 2.0 ** 1023 * 1.9999999999999998, -1e-310, 0.1 + 0.2]
    internal = [i for i, f in enumerate(nodes["split_feature"]) if f >= 0]
    leaves = [i for i, f in enumerate(nodes["split_feature"]) if f < 0]
    nodes["threshold"][internal[0]], nodes["threshold"][internal[1]] = "inf", "-inf"
    for i, x in zip(leaves, tricky):
        nodes["value"][i] = x
        nodes["gain"][i] = x
    doc["base_scores"] = [-0.0]
    data = json.dumps(doc).encode()
    model = bst.GBDTModel.from_json_bytes(data)
    tree = model.trees[0]
    assert tree.threshold[internal[0]] == np.inf and tree.threshold[internal[1]] == -np.inf
    np.testing.assert_array_equal(tree.value[leaves[:len(tricky)]].view(np.int64), np.array(tricky).view(np.int64))
    assert np.signbit(model.forest.base_scores[0])
    assert json.loads(model.to_json_bytes()) == doc
    assert bst.GBDTModel.from_bytes(model.to_bytes()).to_json_bytes() == model.to_json_bytes()


def test_non_finite_scores_are_written_as_strings():
    model = _without_config(MODELS["squared"])
    model.ensemble.eval_history = [1.5, float("inf"), float("nan")]
    model.ensemble.best_score = float("-inf")
    doc = json.loads(model.to_json_bytes())
    assert doc["eval_history"] == [1.5, "inf", "nan"] and doc["best_score"] == "-inf"
    VALIDATOR.validate(doc)
    loaded = bst.GBDTModel.from_json_bytes(model.to_json_bytes())
    assert loaded.eval_history[:2] == [1.5, float("inf")] and np.isnan(loaded.eval_history[2])
    assert loaded.best_score == float("-inf")


def test_the_document_is_laid_out_for_people():
    text = MODELS["squared_names_categorical"].to_json_bytes().decode()
    assert text.startswith('{\n  "format_version": 1,\n')
    assert '\n        "split_feature": [' in text  # one line per node array
    doc = json.loads(text)
    assert list(doc) == ["format_version", "objective", "n_groups", "n_features", "feature_names",
                         "categorical_features", "categories", "base_scores", "best_iteration", "best_score",
                         "eval_history", "config", "trees"]
    assert set(doc["trees"][0]) == {"group", "nodes", "category_sets"}


# ----------------------------------------------------------------------------------
# save / load
# ----------------------------------------------------------------------------------

def test_save_picks_the_encoding_by_suffix_and_load_by_content(tmp_path):
    model = MODELS["softmax"]
    X = _query(model)
    model.save(tmp_path / "m.bstr.json")
    model.save(str(tmp_path / "m.bst"))
    assert (tmp_path / "m.bstr.json").read_bytes() == model.to_json_bytes()
    assert (tmp_path / "m.bst").read_bytes() == model.to_bytes()
    # the content decides, not the name
    (tmp_path / "json_named.bst").write_bytes(b"\n " + model.to_json_bytes())
    (tmp_path / "npz_named.json").write_bytes(model.to_bytes())
    for name in ("m.bstr.json", "m.bst", "json_named.bst", "npz_named.json"):
        loaded = bst.GBDTModel.load(tmp_path / name)
        np.testing.assert_array_equal(loaded.predict_raw(X), model.predict_raw(X))
    (tmp_path / "bad.json").write_bytes(b'{"format_version": 1')
    with pytest.raises(ValueError, match="^not a valid boosters model: "):
        bst.GBDTModel.load(tmp_path / "bad.json")


def test_a_byte_order_mark_is_skipped(tmp_path):
    """Editors on Windows start a UTF-8 file with a byte-order mark: load and
    from_json_bytes read past it (load took such a file for a zip: "not a zip file")."""
    model = MODELS["softmax"]
    X = _query(model)
    text = model.to_json_bytes()
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + text)
    (tmp_path / "bom_and_space.bst").write_bytes(b"\xef\xbb\xbf\r\n " + text)
    for loaded in (bst.GBDTModel.load(tmp_path / "bom.json"), bst.GBDTModel.load(tmp_path / "bom_and_space.bst"),
                   bst.GBDTModel.from_json_bytes(b"\xef\xbb\xbf" + text),
                   bst.GBDTModel.from_json_bytes("\ufeff" + text.decode())):
        np.testing.assert_array_equal(loaded.predict_raw(X), model.predict_raw(X))  # exactly
    with pytest.raises(ValueError, match="^not a valid boosters model: "):  # one mark, not two
        bst.GBDTModel.from_json_bytes(b"\xef\xbb\xbf" * 2 + text)


def test_type_errors():
    with pytest.raises(TypeError, match="data must be bytes or str"):
        bst.GBDTModel.from_json_bytes({"format_version": 1})
    text = MODELS["squared"].to_json_bytes().decode()
    assert bst.GBDTModel.from_json_bytes(text).n_trees == MODELS["squared"].n_trees  # str is fine


# ----------------------------------------------------------------------------------
# Documents that are wrong: ValueError naming the field
# ----------------------------------------------------------------------------------

def _doc(name="squared"):
    return json.loads(MODELS[name].to_json_bytes())


def _load(doc_or_bytes):
    data = doc_or_bytes if isinstance(doc_or_bytes, (bytes, str)) else json.dumps(doc_or_bytes)
    return bst.GBDTModel.from_json_bytes(data)


def _edit(name, change):
    doc = _doc(name)
    change(doc)
    return doc


def _set(path, value):
    """A change setting doc[path...] (keys and indices) to value."""
    def change(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _pop(path):
    def change(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


NODES = ("trees", 0, "nodes")
# schema-valid documents that are still not models: the loader's checks catch them
SEMANTIC_CASES = {
    "cycle (left child is the root)": ("squared", _set(NODES + ("left_child", 0), 0), "left child must come after"),
    "feature >= n_features": ("squared", _set(NODES + ("split_feature", 0), N_FEATURES), "splits on feature 4"),
    "category set past the tree's sets": ("squared_names_categorical", _set(NODES + ("category_set", 0), 7),
                                          "past the tree's"),
    "tree group >= n_groups": ("softmax", _set(("trees", 0, "group"), 3), "group is outside 0..2"),
    "a node array one short": ("squared", lambda d: d["trees"][0]["nodes"]["value"].pop(), "value has"),
    "base scores one short": ("softmax", lambda d: d["base_scores"].pop(), "base_scores"),
    "feature names one short": ("squared_names_categorical", lambda d: d["feature_names"].pop(), "feature_names"),
    "linear terms do not add up": ("linear_leaves", lambda d: d["trees"][1]["linear"]["coefs"].append(1.0),
                                   "features and coefs must have"),
    "leaf with children": ("squared", _set(NODES + ("split_feature", 0), -1), "a leaf"),
    "n_groups is not the objective's": ("squared", _set(("n_groups",), 2), "n_groups is 2"),
    # JSON Schema's data model has no 1.0 != 1; the loader reads integers without a fraction
    "an integer written 3.0": ("squared", _set(NODES + ("n_samples", 2), 3.0), r"n_samples\[2\] must be an integer"),
    # a float field's integer that float64 would round (a fuzzed document cut "7.55...e0" to 755...)
    "a float's integer past 2**53": ("squared", _set(NODES + ("cover", 0), 2**53 + 1),
                                     r"cover\[0\] must be a number that float64 holds exactly"),
    "categorical sets only in some trees": ("squared_names_categorical", _pop(("trees", 1, "category_sets")),
                                            r"trees\[1\]: fields: missing \['category_sets'\]"),
}


@pytest.mark.parametrize("case", sorted(SEMANTIC_CASES))
def test_schema_valid_but_wrong_documents_are_rejected(case):
    name, change, message = SEMANTIC_CASES[case]
    doc = _edit(name, change)
    if case != "categorical sets only in some trees":  # (the schema cannot tie trees together)
        VALIDATOR.validate(doc)
    with pytest.raises(ValueError, match=f"^not a valid boosters model: .*{message}"):
        _load(doc)


# documents the schema refuses: the loader names the field
INVALID_CASES = {
    "an int32 past its range": (_set(NODES + ("left_child", 0), 2**31), r"left_child\[0\] must be an integer"),
    "a bool for an int": (_set(NODES + ("default_left", 1), True), r"default_left\[1\] must be an integer"),
    "a float for an int": (_set(NODES + ("n_samples", 2), 2.5), r"n_samples\[2\] must be an integer"),
    "a string for a float": (_set(NODES + ("value", 0), "1.5"), r"value\[0\] must be a number"),
    "inf outside thresholds": (_set(NODES + ("value", 0), "inf"), r"value\[0\] must be a number"),
    "an unknown threshold string": (_set(NODES + ("threshold", 0), "Infinity"), r"threshold\[0\] must be a number"),
    "a missing node array": (_pop(NODES + ("gain",)), r"trees\[0\].nodes: fields: missing \['gain'\]"),
    "an extra node array": (_set(NODES + ("weight",), []), r"unexpected \['weight'\]"),
    "an extra tree field": (_set(("trees", 0, "note"), "x"), r"trees\[0\]: fields: .*unexpected \['note'\]"),
    "trees missing": (_pop(("trees",)), "missing field 'trees'"),
    "base_scores missing": (_pop(("base_scores",)), "missing field 'base_scores'"),
    "an extra header field": (_set(("comment",), "hi"), r"unexpected \['comment'\]"),
    "n_features missing": (_pop(("n_features",)), r"missing \['n_features'\]"),
    "nodes not an object": (_set(NODES, []), r"trees\[0\].nodes must be an object"),
    "trees not a list": (_set(("trees",), {}), "trees must be a list"),
    "a group past int32": (_set(("trees", 0, "group"), 2**31), r"trees\[0\].group must be an integer"),
    "format version 2": (_set(("format_version",), 2), "unsupported format_version 2"),
    "unknown objective": (_set(("objective", "name"), "cox"), "objective must be one of"),
    "best score a word": (_set(("best_score",), "great"), "best_score must be a number"),
}


@pytest.mark.parametrize("case", sorted(INVALID_CASES))
def test_invalid_documents_name_the_field(case):
    change, message = INVALID_CASES[case]
    doc = _edit("squared", change)
    assert not VALIDATOR.is_valid(doc)
    with pytest.raises(ValueError, match=f"^not a valid boosters model: .*{message}"):
        _load(doc)


def _good_text():
    return MODELS["squared"].to_json_bytes().decode()


@pytest.mark.parametrize("text, message", [
    ("", "Expecting value"),
    ("[]", "must be a JSON object"),
    ("null", "must be a JSON object"),
    ('{"a": NaN}', "NaN is not JSON"),
    ('{"a": Infinity}', "Infinity is not JSON"),
    ('{"a": -Infinity}', "-Infinity is not JSON"),
    ('{"a": 1e400}', "not a finite float"),
    ('{"a": 1' + "0" * 30 + "}", "more than 20 characters"),
    ('{"a": 1.' + "0" * 100 + "}", "not a finite float of at most 64 characters"),
    ('{"a": 1, "a": 2}', "key 'a' appears twice"),
    ("{" + '"a": 1,' * 1_000_000 + '"b": 2}', "key 'a' appears twice"),
    ("[" * 100_000 + "]" * 100_000, "nests too deeply"),
    ('{"a": [' + "[" * 5000 + "]" * 5000 + "]}", "nests too deeply"),
])
def test_hostile_json_is_a_value_error(text, message):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"^not a valid boosters model: .*{message}"):
        _load(text)
    assert time.perf_counter() - start < 30  # not a timing test: only a guard against a hang


def test_bytes_that_are_not_utf8_or_have_trailing_garbage():
    with pytest.raises(ValueError, match="not UTF-8"):
        _load(b'{"a": "\xff"}')
    with pytest.raises(ValueError, match="Extra data"):
        _load(_good_text() + "{}")
    with pytest.raises(ValueError, match="^not a valid boosters model: "):
        _load(_good_text()[:-10])


# ----------------------------------------------------------------------------------
# Fuzz: values at random paths, removed and added keys, bytes
# ----------------------------------------------------------------------------------

FUZZ_KINDS = ["squared", "softmax"]  # test_model_files' models: its reference walker knows them


@functools.lru_cache(maxsize=None)
def _json_bytes_of(kind: str) -> bytes:
    return bst.GBDTModel.from_bytes(model_bytes(kind)).to_json_bytes()


def _json_of(kind: str) -> dict:
    return json.loads(_json_bytes_of(kind))


def _random_path(data, doc) -> list:
    """A path (keys and indices) to a value or container of `doc`, walked down from the
    top (or, half the time, from the trees: where most of a document is)."""
    from_trees = data.draw(st.booleans()) and isinstance(doc.get("trees"), list)
    path, target = (["trees"], doc["trees"]) if from_trees else ([], doc)
    while isinstance(target, (dict, list)) and target:
        key = data.draw(st.sampled_from(list(target) if isinstance(target, dict) else range(len(target))))
        path.append(key)
        target = target[key]
        if data.draw(st.integers(0, 3)) == 0:  # stop at a container now and then
            break
    return path


def _without_config_field(doc):
    return {k: v for k, v in doc.items() if k != "config"} if isinstance(doc, dict) else doc


def check_loaded_or_rejected(data, doc=None):
    """The document loads as exactly what it says (its re-encoding equals it, config
    aside: that is GBDTConfig's business) into a model the reference walker agrees with,
    or is rejected with the format's ValueError. Anything else fails."""
    try:
        model = bst.GBDTModel.from_json_bytes(data)
    except ValueError as exc:
        assert str(exc).startswith("not a valid boosters model: "), exc
        event("rejected")
        return None
    event("loaded")
    if doc is None:
        doc = json.loads(data)
    assert _without_config_field(json.loads(model.to_json_bytes())) == _without_config_field(doc)
    header, arrays = npz_format.to_parts(model.ensemble)  # what its .npz would hold
    assert reference_is_valid(header, arrays)
    assert_predicts_like_reference(model, header, arrays)
    return model


json_mutation_values = st.one_of(values, json_values, st.sampled_from(["inf", "-inf", "nan", "Infinity", "1"]))


@pytest.mark.parametrize("kind", FUZZ_KINDS)
@fuzz_settings(ci_examples=300)
@given(data=st.data())
def test_fuzz_json_values_and_keys(kind, data):
    """One to three changes at random paths (set a value, remove a key or an element,
    add a key): the document is rejected, or loads as exactly what it says."""
    doc = _json_of(kind)
    for _ in range(data.draw(st.integers(1, 3))):
        path = _random_path(data, doc)
        if not path:  # the trees were emptied
            continue
        target = doc
        for key in path[:-1]:
            target = target[key]
        action = data.draw(st.sampled_from(["set", "set", "remove", "add"]))
        if action == "set":
            target[path[-1]] = data.draw(json_mutation_values)
        elif action == "remove":
            del target[path[-1]]
        elif isinstance(target, dict):
            target[data.draw(st.sampled_from(["extra", "group", "nodes", "trees", "base_scores"]))] = \
                data.draw(json_values)
        else:
            target.insert(path[-1], data.draw(json_mutation_values))
    check_loaded_or_rejected(json.dumps(doc, allow_nan=True).encode(), doc)


def _arrays_of(doc: dict) -> dict:
    """The .npz arrays of a document of FUZZ_KINDS, built by the test: only for documents
    whose node values all have their array's type (as test_fuzz_json_node_values makes them)."""
    trees = doc["trees"]
    arrays = {name: np.array([v for t in trees for v in t["nodes"][name]], dtype=dtype)
              for name, dtype in TREE_ARRAYS.items()}
    arrays["threshold"] = np.array([{"inf": np.inf, "-inf": -np.inf}.get(v, v) for t in trees
                                    for v in t["nodes"]["threshold"]], dtype=np.float64)
    arrays["base_scores"] = np.array(doc["base_scores"], dtype=np.float64)
    arrays["tree_group"] = np.array([t["group"] for t in trees], dtype=np.int32)
    arrays["tree_sizes"] = np.array([len(t["nodes"]["split_feature"]) for t in trees], dtype=np.int64)
    return arrays


@pytest.mark.parametrize("kind", FUZZ_KINDS)
@fuzz_settings(ci_examples=200)
@given(data=st.data())
def test_fuzz_json_node_values(kind, data):
    """Node values changed to others of their array's type and range: the document
    loads exactly when the reference checker calls its forest valid."""
    doc = _json_of(kind)
    for _ in range(data.draw(st.integers(1, 3))):
        tree = doc["trees"][data.draw(st.integers(0, len(doc["trees"]) - 1))]
        name = data.draw(st.sampled_from(sorted(TREE_ARRAYS)))
        column = tree["nodes"][name]
        i = data.draw(st.integers(0, len(column) - 1))
        dtype = TREE_ARRAYS[name]
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            column[i] = data.draw(st.one_of(st.integers(info.min, info.max), st.integers(max(info.min, -2), 8)))
        elif name == "threshold":
            column[i] = data.draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                                            st.sampled_from(["inf", "-inf"])))
        else:
            column[i] = data.draw(st.floats(allow_nan=False, allow_infinity=False))
    model = check_loaded_or_rejected(json.dumps(doc).encode(), doc)
    assert (model is not None) == reference_is_valid(doc, _arrays_of(doc))  # (n_features, n_groups unchanged)


@pytest.mark.parametrize("kind", FUZZ_KINDS)
@fuzz_settings(ci_examples=300)
@given(data=st.data())
def test_fuzz_json_bytes(kind, data):
    """Flipped, cut or inserted bytes anywhere in the document: rejected, or loaded as
    exactly what the (damaged) text says."""
    raw = bytearray(_json_bytes_of(kind))
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(raw) - 1))
        action = data.draw(st.sampled_from(["flip", "flip", "cut", "insert", "truncate"]))
        if action == "flip":
            raw[where] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del raw[where:where + data.draw(st.integers(1, 64))]
        elif action == "truncate":
            del raw[where:]
        else:
            raw[where:where] = data.draw(st.sampled_from([b"0", b"-", b".5", b"e9", b",", b"[", b"]", b"{", b"}",
                                                          b'"', b"1", b"null", b"true"]))
        if not raw:
            break
    try:
        doc = json.loads(bytes(raw))  # what a standard reader sees, when it reads it at all
    except (ValueError, RecursionError):
        doc = None
    model = check_loaded_or_rejected(bytes(raw), doc if doc is not None else {})
    if doc is None:
        assert model is None


# ----------------------------------------------------------------------------------
# The committed files of every format version
# ----------------------------------------------------------------------------------

COMMITTED = sorted((Path(__file__).parent.parent / "models").glob("v*/*.bstr.json"))


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_json_files_validate_and_hold_their_npz_twins_model(path):
    """(test_model_compatibility.py checks their predictions.)"""
    VALIDATOR.validate(json.loads(path.read_bytes()))
    twin = path.with_name(path.name.split(".")[0] + ".bst")
    assert bst.GBDTModel.load(path).to_bytes() == bst.GBDTModel.load(twin).to_bytes()
