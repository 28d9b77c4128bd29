"""GBDTModel.dump_model(): the model as plain Python data (the JSON document of
to_json_bytes, parsed), JSON-serializable and complete enough to predict: a walker over it
written from docs/format.md's rules gives predict_raw exactly, bit for bit in float64."""

import json
import math

import numpy as np
import pytest

import boosters as bst

PLAIN_TYPES = (dict, list, str, int, float, bool, type(None))


def train(X, y, categorical=(), **config):
    data = bst.Dataset(X, y, categorical_features=list(categorical))
    config = {"n_estimators": 12, "learning_rate": 0.3, "subsample": 1.0, **config}  # a root holds every row
    return bst.GBDTModel.train(data, bst.GBDTConfig(**config), n_threads=1)


def numeric_with_missing(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] + np.sin(3 * X[:, 1]) + 0.5 * X[:, 2] * X[:, 3]
    X[rng.random(X.shape) < 0.15] = np.nan  # missing values in training and prediction
    return X, y


def with_categories(n=500, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 1] = rng.integers(0, 40, n)  # 40 codes: sets of two words
    y = X[:, 0] + np.where(np.isin(X[:, 1], [1, 5, 33, 34, 39]), 2.0, -1.0) + 0.1 * rng.normal(size=n)
    X[rng.random(n) < 0.1, 1] = np.nan
    return X, y


def query_rows(X, seed=2):
    """X's rows, plus rows with missing values everywhere, unseen, negative and fractional
    codes, and infinities: every branch of the walker."""
    rng = np.random.default_rng(seed)
    extra = rng.normal(size=(40, X.shape[1]))
    extra[::3] = np.nan
    extra[1::5] = np.resize([np.inf, -np.inf, 1e300, -0.5, 45.7, -3.0], X.shape[1])
    return np.vstack([X, extra])


def walk(dump: dict, X: np.ndarray) -> np.ndarray:
    """Every row's margins from the dump alone, following docs/format.md: base scores, then
    each tree's leaf value added to its group's column, in tree order."""
    margins = np.tile(np.array(dump["base_scores"], dtype=np.float64), (len(X), 1))
    for tree in dump["trees"]:
        nodes, linear = tree["nodes"], tree.get("linear")
        first_term = np.concatenate([[0], np.cumsum(linear["n_terms"])]) if linear else None
        for r, x in enumerate(X):
            node = 0
            while (feature := nodes["split_feature"][node]) >= 0:
                node = nodes["left_child" if goes_left(tree, node, x[feature]) else "right_child"][node]
            margins[r, tree["group"]] += leaf_output(nodes, linear, first_term, node, x)
    return margins


def goes_left(tree: dict, node: int, value: float) -> bool:
    nodes = tree["nodes"]
    default_left = bool(nodes["default_left"][node])
    category_set = nodes["category_set"][node] if "category_set" in nodes else -1
    if math.isnan(value):
        return default_left
    if category_set < 0:
        return value <= float(nodes["threshold"][node])  # "inf" / "-inf" are strings
    if value <= -1:  # a negative code
        return default_left
    code, words = int(value), tree["category_sets"][category_set]  # int() truncates toward zero
    if code // 32 >= len(words):
        return default_left
    return bool(words[code // 32] >> (code % 32) & 1)


def leaf_output(nodes: dict, linear, first_term, leaf: int, x: np.ndarray) -> float:
    if linear is None:
        return nodes["value"][leaf]
    terms = range(first_term[leaf], first_term[leaf + 1])
    if not all(math.isfinite(x[linear["features"][k]]) for k in terms):
        return nodes["value"][leaf]
    out = linear["const"][leaf]
    for k in terms:
        out += linear["coefs"][k] * x[linear["features"][k]]
    return out


def check_plain(value, where="dump"):
    assert type(value) in PLAIN_TYPES, f"{where}: {type(value).__name__}"
    if isinstance(value, float):
        assert math.isfinite(value), where
    if isinstance(value, dict):
        for key, item in value.items():
            assert type(key) is str, f"{where}: key {key!r}"
            check_plain(item, f"{where}.{key}")
    if isinstance(value, list):
        for i, item in enumerate(value):
            check_plain(item, f"{where}[{i}]")


def check_dump(model: bst.GBDTModel, X: np.ndarray) -> dict:
    dump = model.dump_model()
    check_plain(dump)
    assert json.loads(json.dumps(dump, allow_nan=False)) == dump  # strict JSON, and nothing lost on the way
    assert dump == json.loads(model.to_json_bytes())  # one serializer: the saved document
    expected = model.predict_raw(X, n_threads=1)
    np.testing.assert_array_equal(walk(dump, X), expected.reshape(len(X), -1))  # exactly
    copy = bst.GBDTModel.from_json_bytes(json.dumps(dump))
    np.testing.assert_array_equal(copy.predict_raw(X, n_threads=1), expected)
    return dump


@pytest.mark.parametrize("growth", [{"growth_strategy": "depthwise", "max_depth": 4},
                                    {"growth_strategy": "leafwise", "n_leaves": 12}])
def test_numeric_with_missing_values(growth):
    X, y = numeric_with_missing()
    model = train(X, y, **growth)
    dump = check_dump(model, query_rows(X))
    assert dump["objective"] == {"name": "squared", "n_classes": None}
    assert dump["n_groups"] == 1 and dump["n_features"] == 4 and len(dump["base_scores"]) == 1
    tree = dump["trees"][0]["nodes"]
    assert set(tree) >= {"split_feature", "threshold", "default_left", "left_child", "right_child", "value",
                         "cover", "n_samples"}
    assert tree["n_samples"][0] == len(X) and tree["cover"][0] == pytest.approx(len(X))  # squared: hessian 1
    assert {bool(d) for t in dump["trees"] for d in t["nodes"]["default_left"]} == {False, True}


@pytest.mark.parametrize("growth", [{"growth_strategy": "depthwise", "max_depth": 4},
                                    {"growth_strategy": "leafwise", "n_leaves": 10}])
def test_categorical_splits(growth):
    X, y = with_categories()
    model = train(X, y, categorical=[1], min_data_per_group=10, **growth)
    dump = check_dump(model, query_rows(X))
    assert any(s >= 0 for t in dump["trees"] for s in t["nodes"]["category_set"])
    assert dump["categorical_features"] == [1]


def test_multiclass_with_categories_and_feature_names():
    X, y = with_categories(seed=3)
    labels = np.digitize(y, [-0.5, 1.0])  # three classes
    data = bst.Dataset(X, labels, feature_names=["a", "kind", "c"], categorical_features=[1])
    model = bst.GBDTModel.train(data, bst.GBDTConfig(n_estimators=6, objective=bst.Objective.softmax(3),
                                                     min_data_per_group=10, growth_strategy="leafwise",
                                                     n_leaves=8), n_threads=1)
    dump = check_dump(model, query_rows(X))
    assert dump["objective"] == {"name": "softmax", "n_classes": 3}
    assert dump["n_groups"] == 3 and len(dump["base_scores"]) == 3
    assert dump["feature_names"] == ["a", "kind", "c"]
    assert [t["group"] for t in dump["trees"]] == [0, 1, 2] * 6


def test_objective_parameters_are_in_the_dump():
    X, y = numeric_with_missing(seed=4)
    model = train(X, y, objective=bst.Objective.pinball([0.1, 0.9]), max_depth=3)
    dump = check_dump(model, query_rows(X))
    assert dump["objective"]["name"] == "pinball" and dump["objective"]["alpha"] == [0.1, 0.9]
    assert dump["n_groups"] == 2


def test_linear_leaves():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] > 0, 2 * X[:, 1], -X[:, 2]) + 0.05 * rng.normal(size=400)
    X[rng.random(X.shape) < 0.05] = np.nan
    model = train(X, y, linear_leaves=True, max_depth=2)
    dump = check_dump(model, query_rows(X))
    assert set(dump["trees"][0]["linear"]) == {"const", "n_terms", "features", "coefs"}
    assert sum(n for tree in dump["trees"] for n in tree["linear"]["n_terms"]) > 0


def test_infinite_thresholds_are_strings_that_float_reads():
    X = np.array([[0.0], [1.0], [np.nan], [np.nan]] * 50)
    y = np.array([0.0, 0.0, 5.0, 5.0] * 50)
    model = train(X, y, max_depth=2, n_estimators=2)
    dump = check_dump(model, query_rows(X))
    thresholds = [t for tree in dump["trees"] for t in tree["nodes"]["threshold"]]
    assert "inf" in thresholds  # the split of missing values from every other value
    assert all(isinstance(t, (float, int)) or t in ("inf", "-inf") for t in thresholds)


def test_each_call_returns_a_new_object():
    X, y = numeric_with_missing(seed=6)
    model = train(X, y, max_depth=2, n_estimators=2)
    dump = model.dump_model()
    dump["trees"][0]["nodes"]["value"][1] = 1e9
    assert model.dump_model()["trees"][0]["nodes"]["value"][1] != 1e9


def test_the_estimators_dump_through_booster_as_lightgbm():
    """LightGBM's estimators have no dump_model: ``est.booster_.dump_model()``; so here."""
    from boosters.sklearn import GBDTClassifier

    X, y = numeric_with_missing(seed=7)
    clf = GBDTClassifier(n_estimators=4, max_depth=2).fit(X, y > 0)
    dump = check_dump(clf.booster_, query_rows(X))
    assert dump["objective"]["name"] == "logistic"
