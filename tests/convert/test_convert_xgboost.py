"""boosters.convert: XGBoost models in (from_xgboost) and out (to_xgboost_json).

Two checks per converted model, on held-out rows (float32, with NaNs):
- routing, exactly: XGBoost's own leaf indices (pred_leaf) give the float32 leaf values
  each row reaches; their sum in float64, in tree order, from our base margin, must equal
  our margin to 1e-12 relative (the same additions in the same order: any row sent the
  wrong way at any split is off by a whole leaf value);
- against XGBoost's predictions: XGBoost adds in float32, so each of its n_trees + 1
  additions may round by half a float32 ulp of the running sum: |ours - theirs| <=
  (n_trees + 1) * 2**-24 * (|base| + sum of |leaf values| of the row), on the margins.
"""

import codecs
import json
import os

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from hypothesis import HealthCheck, given, settings, strategies as st

import boosters as bst
from boosters.convert import from_xgboost, to_xgboost_json
from boosters.convert import ubjson
from boosters.convert.xgboost import xgboost_threshold_to_ours
from boosters.convert.xgboost_export import xgboost_threshold_from_ours

N_TRAIN, N_TEST = 600, 300
EFFECT = np.array([3.0, -1.0, 2.0, 0.0, 5.0, -2.0, 1.0, 1.0, -3.0, 4.0, 0.0, 2.0])


def make_data(seed=0, n=N_TRAIN + N_TEST):
    """Two numeric features with NaNs, a categorical one (codes 0..11, NaNs), a noise one."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    c = rng.integers(0, 12, size=n).astype(float)
    X = np.column_stack([a, c, rng.normal(size=n), rng.normal(size=n)]).astype(np.float32)
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.1, 1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.where(np.isnan(X[:, 1]), 1.5, EFFECT[np.nan_to_num(X[:, 1]).astype(int)])
         + 0.5 * X[:, 2] + 0.1 * rng.normal(size=n))
    return X, y


X, Y = make_data()
X_TRAIN, X_TEST = X[:N_TRAIN], X[N_TRAIN:]
FEATURE_TYPES = ["q", "c", "q", "q"]


def dmatrix(X, y=None, categorical=True):
    return xgb.DMatrix(X, y, feature_types=FEATURE_TYPES if categorical else None, enable_categorical=categorical)


def train_xgb(params, y=Y, rounds=10, categorical=True, group=None):
    d = dmatrix(X_TRAIN, y[:N_TRAIN], categorical)
    if group is not None:
        d.set_group(group)
    return xgb.train({"max_depth": 4, "max_cat_to_onehot": 1, "nthread": 1, **params}, d, rounds)


def xgb_leaf_values(booster, X, categorical=True):
    """(n_rows, n_trees) float32 leaf values each row reaches, by XGBoost's own routing."""
    gradient_booster = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]
    weights = gradient_booster.get("weight_drop")  # DART
    model_json = (gradient_booster["gbtree"] if "gbtree" in gradient_booster else gradient_booster)["model"]
    trees, tree_info = model_json["trees"], np.array(model_json["tree_info"])
    leaves = booster.predict(dmatrix(X, categorical=categorical), pred_leaf=True).reshape(len(X), len(trees)).astype(int)
    values = np.column_stack([np.float32(t["split_conditions"])[leaves[:, i]] for i, t in enumerate(trees)])
    if weights is not None:
        values = values.astype(np.float64) * np.float32(weights)
    return values.astype(np.float64), tree_info


def check_against_xgboost(model, booster, X, categorical=True):
    values, tree_info = xgb_leaf_values(booster, X, categorical)
    n_groups = model.forest.n_groups
    ours = model.predict_raw(X).reshape(len(X), n_groups)
    exact = np.tile(model.forest.base_scores, (len(X), 1))
    for t, g in enumerate(tree_info):  # the same additions in the same order as our kernel
        exact[:, g] += values[:, t]
    np.testing.assert_allclose(ours, exact, rtol=1e-12, atol=1e-12)
    theirs = booster.predict(dmatrix(X, categorical=categorical), output_margin=True).reshape(len(X), n_groups)
    scale = np.abs(model.forest.base_scores) + np.column_stack(
        [np.abs(values[:, tree_info == g]).sum(axis=1) for g in range(n_groups)])
    bound = (len(tree_info) + 1) * 2.0**-24 * scale
    assert np.all(np.abs(ours - theirs) <= bound)


# -- reading: every source kind, both growth policies, NaNs, categorical splits -----------

@pytest.mark.parametrize("policy", [{"grow_policy": "depthwise"},
                                    {"grow_policy": "lossguide", "max_leaves": 12, "max_depth": 0}])
def test_regression_from_every_source(policy, tmp_path):
    booster = train_xgb(policy)
    booster.save_model(tmp_path / "m.json")
    booster.save_model(tmp_path / "m.ubj")
    sources = [booster, booster.save_raw("json"), bytes(booster.save_raw("ubj")), tmp_path / "m.json",
               str(tmp_path / "m.ubj"), bytearray(booster.save_raw("json"))]
    reference = None
    for source in sources:
        model = from_xgboost(source)
        assert model.n_trees == 10 and model.objective == bst.Objective.squared()
        assert model.categorical_features == [1]
        check_against_xgboost(model, booster, X_TEST)
        if reference is None:
            reference = model.predict_raw(X_TEST)
        np.testing.assert_array_equal(model.predict_raw(X_TEST), reference)  # every source, the same model
    assert sum(t.category_set.max() >= 0 for t in model.trees) > 0  # partition splits were converted
    assert any(np.any(t.default_left[t.split_feature >= 0] == 0) for t in model.trees)
    assert any(np.any(t.default_left[t.split_feature >= 0] == 1) for t in model.trees)


def test_numeric_only_model_and_estimator():
    reg = xgb.XGBRegressor(n_estimators=8, max_depth=3, tree_method="hist", n_jobs=1)
    reg.fit(np.nan_to_num(X_TRAIN), Y[:N_TRAIN])
    model = from_xgboost(reg)
    assert model.categorical_features == [] and model.feature_names is None
    np.testing.assert_allclose(model.predict(np.nan_to_num(X_TEST)), reg.predict(np.nan_to_num(X_TEST)),
                               rtol=1e-5, atol=1e-5)  # float32 sums of 8 trees of values < 10
    check_against_xgboost(model, reg.get_booster(), np.nan_to_num(X_TEST), categorical=False)


CLASSES = np.digitize(Y, [0.0, 2.0])
POSITIVE = np.exp(Y / 3)
OBJECTIVES = [
    ({"objective": "binary:logistic"}, Y > 1, bst.Objective.logistic()),
    ({"objective": "multi:softprob", "num_class": 3}, CLASSES, bst.Objective.softmax(3)),
    ({"objective": "multi:softmax", "num_class": 3}, CLASSES, bst.Objective.softmax(3)),
    ({"objective": "count:poisson"}, POSITIVE, bst.Objective.poisson()),
    ({"objective": "reg:gamma"}, POSITIVE, bst.Objective.gamma()),
    ({"objective": "reg:tweedie", "tweedie_variance_power": 1.3}, POSITIVE, bst.Objective.tweedie(1.3)),
    ({"objective": "reg:absoluteerror"}, Y, bst.Objective.absolute()),
    ({"objective": "reg:quantileerror", "quantile_alpha": 0.25}, Y, bst.Objective.pinball(0.25)),
    ({"objective": "binary:hinge"}, Y > 1, bst.Objective.hinge()),
    ({"objective": "reg:squarederror"}, np.column_stack([Y, Y**2]), bst.Objective.squared(n_targets=2)),
    ({"objective": "binary:logistic"}, np.column_stack([Y > 0, Y > 2]), bst.Objective.one_vs_rest(2)),
    ({"objective": "reg:squarederror", "booster": "dart", "rate_drop": 0.5}, Y, bst.Objective.squared()),
    ({"objective": "reg:squarederror", "num_parallel_tree": 2, "subsample": 0.7}, Y, bst.Objective.squared()),
]


@pytest.mark.filterwarnings("ignore::UserWarning")  # XGBoost: dart is deprecated
@pytest.mark.parametrize("params, y, objective", OBJECTIVES, ids=[f"{p['objective']}-{i}" for i, (p, _, _)
                                                                  in enumerate(OBJECTIVES)])
def test_objectives(params, y, objective):
    booster = train_xgb(params, y=np.asarray(y, dtype=float))
    model = from_xgboost(booster.save_raw("ubj"))
    assert model.objective == objective
    check_against_xgboost(model, booster, X_TEST)
    theirs = booster.predict(dmatrix(X_TEST))
    ours = model.predict(X_TEST)
    if params["objective"] == "multi:softmax":  # XGBoost predicts the class, we the probabilities
        np.testing.assert_array_equal(ours.argmax(axis=1), theirs)
    else:  # the transforms (sigmoid, exp, softmax) keep float32-level relative differences
        np.testing.assert_allclose(ours, theirs.reshape(ours.shape), rtol=1e-5, atol=1e-6)


def test_ranking_objectives():
    for name, objective in (("rank:ndcg", bst.Objective.lambdarank()), ("rank:pairwise", bst.Objective.pairwise())):
        booster = train_xgb({"objective": name}, y=(Y > 1).astype(float), group=[100] * 6)
        model = from_xgboost(booster)
        assert model.objective == objective
        check_against_xgboost(model, booster, X_TEST)


def test_pandas_categories_feature_names_and_best_iteration():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"size": X[:, 0], "color": pd.Categorical(rng.choice(["red", "green", "blue", "grey"], len(X))),
                          "n": X[:, 2]})
    y = frame["size"].fillna(0) + frame["color"].cat.codes * 0.7 + rng.normal(scale=0.1, size=len(X))
    reg = xgb.XGBRegressor(n_estimators=40, max_depth=3, enable_categorical=True, max_cat_to_onehot=1,
                           early_stopping_rounds=3, learning_rate=0.5, n_jobs=1)
    reg.fit(frame[:400], y[:400], eval_set=[(frame[400:600], y[400:600])], verbose=False)
    assert reg.best_iteration < 39  # stopped early: the cut below matters
    test = frame[600:]
    best = from_xgboost(reg, use_best_iteration=True)
    assert best.feature_names == ["size", "color", "n"] and best.categorical_features == [1]
    assert best.categories[1].tolist() == ["blue", "green", "grey", "red"]  # pandas' codes order
    assert best.best_iteration == reg.best_iteration and best.n_trees == reg.best_iteration + 1
    np.testing.assert_allclose(best.predict(test), reg.predict(test), rtol=1e-5, atol=1e-5)
    every = from_xgboost(reg.get_booster())
    assert every.n_trees == reg.get_booster().num_boosted_rounds()
    np.testing.assert_allclose(every.predict(test), reg.get_booster().predict(xgb.DMatrix(test, enable_categorical=True)),
                               rtol=1e-5, atol=1e-5)
    shuffled = test.assign(color=test["color"].cat.reorder_categories(["red", "grey", "blue", "green"]))
    np.testing.assert_array_equal(best.predict(shuffled), best.predict(test))  # coded by value


# -- the split rules ------------------------------------------------------------------------

def float32_neighbours(t: np.ndarray) -> np.ndarray:
    out = [t]
    for direction in (np.inf, -np.inf):
        x = t
        for _ in range(3):
            with np.errstate(over="ignore"):  # past +-FLT_MAX: +-inf, a neighbour too
                x = np.nextafter(x, np.float32(direction))
            out.append(x)
    return np.concatenate(out)


SPECIAL = np.array([0.0, -0.0, 1e-45, -1e-45, 1.0, -1.0, 3.4028235e38, -3.4028235e38, np.inf, 1e-38, 0.1],
                   dtype=np.float32)


def test_threshold_in_is_exact_for_float32_and_double_inputs():
    rng = np.random.default_rng(0)
    thresholds = np.concatenate([SPECIAL, rng.normal(size=200).astype(np.float32),
                                 (rng.normal(size=50) * 1e30).astype(np.float32)])
    ours = xgboost_threshold_to_ours(thresholds)
    for t, T in zip(thresholds, ours):
        xs32 = float32_neighbours(np.array([t], dtype=np.float32))
        xs32 = xs32[np.isfinite(xs32) | (xs32 > 0)]
        assert np.array_equal(xs32.astype(np.float64) <= T, xs32 < t), t
        # doubles around the rounding boundary: XGBoost rounds them to float32 first
        near = np.array([T, np.nextafter(T, np.inf), np.nextafter(T, -np.inf), float(t)])
        with np.errstate(over="ignore"):
            assert np.array_equal(near <= T, near.astype(np.float32) < t), t


def test_threshold_out_is_exact_for_float32_inputs():
    rng = np.random.default_rng(1)
    thresholds = np.concatenate([rng.normal(size=300), SPECIAL[np.isfinite(SPECIAL)].astype(np.float64) * (1 + 1e-12),
                                 [-np.inf, 0.0, 1.0, 0.1]])
    for T in thresholds:
        t = np.float32(xgboost_threshold_from_ours(T))
        xs = float32_neighbours(np.array([np.float32(T)]))
        assert np.array_equal(xs.astype(np.float64) <= T, xs < t), T
        back = xgboost_threshold_to_ours(np.array([t]))[0]  # and back: the same float32 split
        assert np.array_equal(xs.astype(np.float64) <= back, xs.astype(np.float64) <= T), T


# -- export ------------------------------------------------------------------------------

def boosters_model(objective, y, n_rows=N_TRAIN, **config):
    dataset = bst.Dataset(X_TRAIN[:n_rows], np.asarray(y)[:n_rows], categorical_features=[1])
    config = {"n_estimators": 8, "max_onehot_cats": 1, **config}
    return bst.GBDTModel.train(dataset, bst.GBDTConfig(objective=objective, **config))


EXPORTS = [(bst.Objective.squared(), Y), (bst.Objective.logistic(), Y > 1), (bst.Objective.softmax(3), CLASSES),
           (bst.Objective.poisson(), POSITIVE), (bst.Objective.tweedie(1.4), POSITIVE),
           (bst.Objective.one_vs_rest(3), CLASSES), (bst.Objective.squared(), np.column_stack([Y, -Y])),
           (bst.Objective.pinball(0.3), Y), (bst.Objective.hinge(), Y > 1)]


@pytest.mark.parametrize("objective, y", EXPORTS, ids=[repr(o) for o, _ in EXPORTS])
def test_export_predicts_as_xgboost_and_back(objective, y):
    model = boosters_model(objective, y, growth_strategy="leafwise", n_leaves=12)
    data = to_xgboost_json(model)
    booster = xgb.Booster(model_file=bytearray(data))
    rng = np.random.default_rng(2)
    rows = X_TEST.copy()
    rows[:20, 1] = rng.integers(12, 40, size=20)  # codes the model never saw, and negative ones:
    rows[20:30, 1] = -1                          # integer codes go the same way everywhere
    ours = model.predict_raw(rows).reshape(len(rows), -1)
    theirs = booster.predict(xgb.DMatrix(rows), output_margin=True).reshape(ours.shape)
    leaves = booster.predict(xgb.DMatrix(rows), pred_leaf=True).reshape(len(rows), model.n_trees).astype(int)
    trees = json.loads(data)["learner"]["gradient_booster"]["model"]["trees"]
    values = np.column_stack([np.float32(t["split_conditions"])[leaves[:, i]] for i, t in enumerate(trees)])
    back = from_xgboost(data)
    written = back.forest.base_scores  # the margins of the float32 base_score XGBoost reads
    # base_score is a float32 before XGBoost's link: its margin is the nearest one to ours
    # that a float32 gives (a few 1e-7 relative for logit); XGBoost's logf may differ from
    # NumPy's float32 log by an ulp
    base_error = np.abs(written - model.forest.base_scores) + 2.0**-22 * np.abs(written)
    exact = np.tile(written, (len(rows), 1))
    for t, g in enumerate(model.forest.tree_group):
        exact[:, g] += values[:, t]
    leaf_sum = np.column_stack([np.abs(values[:, np.asarray(model.forest.tree_group) == g]).sum(axis=1)
                                for g in range(model.forest.n_groups)])
    # routing, by XGBoost's own leaf indices: our float64 leaves differ from the float32
    # ones XGBoost holds by half an ulp each (a row sent the wrong way: a whole leaf value)
    assert np.all(np.abs(ours - exact) <= 2.0**-24 * leaf_sum + base_error + 1e-12)
    # XGBoost's float32 sum: half an ulp of the running sum per addition, on top
    float32_sum = (model.n_trees + 1) * 2.0**-24 * (leaf_sum + np.abs(written))
    assert np.all(np.abs(ours - theirs) <= 2.0**-24 * leaf_sum + base_error + float32_sum)
    assert back.objective == model.objective and back.n_trees == model.n_trees
    # and back: the same float32 leaves and thresholds, summed in float64
    np.testing.assert_allclose(back.predict_raw(rows).reshape(ours.shape), exact, rtol=1e-12, atol=1e-12)


def test_export_keeps_names_and_categorical_features():
    model = bst.GBDTModel.train(bst.Dataset(X_TRAIN, Y[:N_TRAIN], feature_names=["a", "c", "b", "d"],
                                            categorical_features=[1]), bst.GBDTConfig(n_estimators=3))
    learner = json.loads(to_xgboost_json(model))["learner"]
    assert learner["feature_names"] == ["a", "c", "b", "d"]
    assert learner["feature_types"] == ["float", "c", "float", "float"]
    back = from_xgboost(to_xgboost_json(model))
    assert back.feature_names == model.feature_names and back.categorical_features == [1]


def test_export_writes_categories_xgboost_recodes_frames_with():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": X[:, 0], "city": pd.Categorical(rng.choice(["Lyon", "Oslo", "Pune", "Riga"], len(X))),
                          "k": pd.Categorical(rng.choice([30, 7, 11], len(X)))})
    y = frame["a"].fillna(0) + frame["city"].cat.codes + frame["k"].astype(int) / 10
    model = bst.GBDTModel.train(bst.Dataset(frame[:N_TRAIN], y[:N_TRAIN]),
                                bst.GBDTConfig(n_estimators=8, max_onehot_cats=1))
    booster = xgb.Booster(model_file=bytearray(to_xgboost_json(model)))
    test = frame[N_TRAIN:]
    test = test.assign(city=test["city"].cat.reorder_categories(["Riga", "Pune", "Oslo", "Lyon"]),
                       k=test["k"].cat.reorder_categories([11, 30, 7]))  # coded by value, not by position
    ours = model.predict(test)
    # float32 leaves and sum of 8 trees of values below 10: well within 1e-5
    np.testing.assert_allclose(booster.inplace_predict(test), ours, rtol=1e-5, atol=1e-5)
    back = from_xgboost(to_xgboost_json(model))
    assert back.categories[1].tolist() == ["Lyon", "Oslo", "Pune", "Riga"] and back.categories[2].tolist() == [7, 11, 30]
    np.testing.assert_allclose(back.predict(test), ours, rtol=1e-6, atol=1e-6)


def test_export_refuses_what_xgboost_lacks():
    small = dict(n_rows=200, n_estimators=2)
    with pytest.raises(ValueError, match="linear leaves"):
        to_xgboost_json(boosters_model(bst.Objective.squared(), Y, linear_leaves=True, **small))
    with pytest.raises(ValueError, match="huber"):
        to_xgboost_json(boosters_model(bst.Objective.huber(1.0), Y, **small))
    with pytest.raises(ValueError, match="several alpha"):
        to_xgboost_json(boosters_model(bst.Objective.pinball([0.2, 0.8]), Y, **small))
    with pytest.raises(TypeError, match="GBDTModel"):
        to_xgboost_json(b"not a model")


@pytest.mark.parametrize("seed", range(4))
def test_export_writes_missing_or_present_splits(seed):
    """With informative missing values, boosters grows "missing vs present" splits
    (threshold +inf: every present value left, NaN by default_left), which the exporter
    refused as "beyond float32". XGBoost's x < -inf with the children swapped holds them:
    its predictions equal ours for rows with NaN, +-inf and float32's extremes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(600, 4)).astype(np.float32)
    missing = rng.random(X.shape) < 0.1
    y = X[:, 0] + np.where(missing[:, 1], 2.0, 0.0) - np.where(missing[:, 2], 1.0, 0.0) + 0.1 * rng.normal(size=600)
    X[missing] = np.nan
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=20, max_depth=4))
    assert any(np.any(t.threshold[t.split_feature >= 0] == np.inf) for t in model.trees)  # the splits are there
    data = to_xgboost_json(model)
    booster = xgb.Booster(model_file=bytearray(data))
    rows = X[:200].copy()
    extremes = np.float32([np.inf, -np.inf, np.finfo(np.float32).max, -np.finfo(np.float32).max, np.nan, 0.0])
    rows[:120] = extremes[rng.integers(0, len(extremes), size=(120, 4))]  # every column, every kind
    ours = model.predict(rows)
    # XGBoost's margin is a float32 sum of float32 leaves: 20 trees of values below 10 (and
    # the base score), well within 1e-5; a row sent the wrong way is off by a leaf (> 1e-3)
    np.testing.assert_allclose(booster.inplace_predict(rows), ours, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(from_xgboost(data).predict(rows), ours, rtol=1e-5, atol=1e-5)  # and back


# -- refused and invalid sources ------------------------------------------------------------

def model_document(rounds=3, categorical=False):
    return json.loads(train_xgb({"max_depth": 2}, rounds=rounds, categorical=categorical).save_raw("json"))


def tree0(doc):
    return doc["learner"]["gradient_booster"]["model"]["trees"][0]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("params, match", [
    ({"booster": "gblinear"}, "booster 'gblinear'"),
    ({"objective": "reg:pseudohubererror"}, "reg:pseudohubererror"),
    ({"objective": "reg:squaredlogerror"}, "reg:squaredlogerror"),
    ({"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.8]}, "reg:quantileerror"),
    ({"multi_strategy": "multi_output_tree", "tree_method": "hist"}, "multi-output tree"),
])
def test_unsupported_models_are_refused(params, match):
    y = np.column_stack([Y, Y]) if "multi_strategy" in params else np.abs(Y)
    booster = train_xgb(params, y=y, rounds=2, categorical=False)
    with pytest.raises(ValueError, match=match):
        from_xgboost(booster)


def mutated(edit):
    doc = model_document()
    edit(doc)
    return json.dumps(doc).encode()


@pytest.mark.parametrize("edit, match", [
    (lambda d: tree0(d).update(left_children=[1, 0, -1], right_children=[2, 1, -1]), "children"),
    (lambda d: tree0(d)["right_children"].__setitem__(0, tree0(d)["left_children"][0] + 2), "children"),
    (lambda d: tree0(d)["split_indices"].__setitem__(0, 99), "num_feature"),
    (lambda d: tree0(d)["split_conditions"].__setitem__(0, float("nan")), "split condition"),
    (lambda d: tree0(d)["split_conditions"].__setitem__(-1, float("inf")), "not finite"),
    (lambda d: tree0(d)["left_children"].append(-1), "entries"),
    (lambda d: tree0(d).update(left_children="1,2"), "left_children must be a list"),
    (lambda d: tree0(d)["left_children"].__setitem__(0, 1.0), "list of integers"),
    (lambda d: tree0(d)["left_children"].__setitem__(0, True), "list of integers"),
    (lambda d: tree0(d)["default_left"].__setitem__(0, 2), "default_left"),
    (lambda d: d["learner"]["gradient_booster"]["model"]["tree_info"].__setitem__(0, 5), "tree_info"),
    (lambda d: d["learner"]["gradient_booster"]["model"]["tree_info"].pop(), "tree_info"),
    (lambda d: d["learner"]["learner_model_param"].update(base_score="[zero]"), "base_score"),
    (lambda d: d["learner"]["learner_model_param"].update(num_feature="-3"), "num_feature"),
    (lambda d: d["learner"]["learner_model_param"].update(num_feature="9" * 40), "num_feature"),
    (lambda d: d["learner"].update(feature_names=["a", "a", "b", "c"]), "repeats"),
    (lambda d: d["learner"]["objective"].update(name="survival:cox"), "survival:cox"),
    (lambda d: d["learner"].pop("gradient_booster"), "gradient_booster"),
    (lambda d: d["learner"]["gradient_booster"]["model"]["trees"].__setitem__(0, []), "must be an object"),
    (lambda d: tree0(d)["tree_param"].update(num_nodes="0"), "num_nodes"),
])
def test_invalid_documents_are_value_errors(edit, match):
    with pytest.raises(ValueError, match=match):
        from_xgboost(mutated(edit))


def categorical_document():
    doc = model_document(rounds=5, categorical=True)
    trees = doc["learner"]["gradient_booster"]["model"]["trees"]
    t = next(t for t in trees if t["categories_nodes"])
    return doc, t


def test_invalid_category_splits_are_value_errors():
    for edit, match in [(lambda t: t["categories_segments"].__setitem__(0, 10**6), "past the"),
                        (lambda t: t["categories_nodes"].__setitem__(0, t["categories_nodes"][0] + 1), "categories_nodes"),
                        (lambda t: t["categories"].__setitem__(0, -4), "categories"),
                        (lambda t: t["categories"].__setitem__(0, 10**7), "category code"),
                        (lambda t: t["categories_sizes"].__setitem__(0, 0), "categories_sizes")]:
        doc, t = categorical_document()
        edit(t)
        with pytest.raises(ValueError, match=match):
            from_xgboost(json.dumps(doc).encode())


def test_the_number_of_outputs_is_bounded():
    """A 19 KB file claiming a million targets converted (and predicting 1,000 rows asked
    for 7.45 GiB), 2**31 - 1 asked for 16 GiB at conversion. The bound is LightGBM's: at
    most 2**20 outputs, and a tree per output at least."""
    booster = train_xgb({"objective": "binary:logistic"}, y=(Y > 1).astype(float), rounds=2, categorical=False)
    doc = json.loads(booster.save_raw("json"))
    model = from_xgboost(json.dumps(doc))
    np.testing.assert_allclose(model.predict(X_TEST), booster.predict(dmatrix(X_TEST, categorical=False)),
                               rtol=1e-5, atol=1e-6)  # float32 sigmoid of float32 sums
    for key, value, match in [("num_target", "1000000", "1000000 outputs .* but only 2 trees"),
                              ("num_target", str(2**31 - 1), r"num_target must be an integer in \[1, 1048576\]"),
                              ("num_class", str(2**31 - 1), r"num_class must be an integer in \[0, 1048576\]")]:
        edited = json.loads(json.dumps(doc))
        edited["learner"]["learner_model_param"][key] = value
        with pytest.raises(ValueError, match=match):
            from_xgboost(json.dumps(edited))


def reordered(doc: dict, order) -> dict:
    doc = json.loads(json.dumps(doc))
    model_json = doc["learner"]["gradient_booster"]["model"]
    model_json["trees"] = [model_json["trees"][i] for i in order]
    return doc


def test_trees_are_placed_by_their_id():
    """XGBoost places each tree at its "id", whatever the list's order (tree_info follows
    the ids): a reordered softprob model mixed the classes (0.86 off in probability)."""
    booster = train_xgb({"objective": "multi:softprob", "num_class": 3}, y=CLASSES.astype(float), rounds=5)
    doc = json.loads(booster.save_raw("json"))
    order = np.random.default_rng(0).permutation(15)
    text = json.dumps(reordered(doc, order))
    theirs = xgb.Booster(model_file=bytearray(text.encode()))
    np.testing.assert_array_equal(theirs.predict(dmatrix(X_TEST)), booster.predict(dmatrix(X_TEST)))
    model = from_xgboost(text)
    check_against_xgboost(model, theirs, X_TEST)  # routing exact, margins within float32 sums
    np.testing.assert_allclose(model.predict(X_TEST), theirs.predict(dmatrix(X_TEST)), rtol=1e-5, atol=1e-6)
    for edit, match in [(lambda t: t.__setitem__("id", 0), r"ids must be 0 to 14, each once"),
                        (lambda t: t.__setitem__("id", 15), r"ids must be 0 to 14, each once"),
                        (lambda t: t.__setitem__("id", "3"), r"id must be int"),
                        (lambda t: t.pop("id"), "has no 'id'")]:
        bad = reordered(doc, range(15))
        edit(bad["learner"]["gradient_booster"]["model"]["trees"][3])
        with pytest.raises(ValueError, match=match):
            from_xgboost(json.dumps(bad))


@pytest.mark.parametrize("targets", [1, 2])
def test_a_logistic_base_score_xgboost_refuses_is_refused(targets):
    """XGBoost refuses a binary:logistic base_score outside [0, 1] (0 and 1 it clamps to
    1e-6 from them); it used to be clamped here."""
    y = np.column_stack([Y > 0, Y > 2][:targets]).astype(float).squeeze()
    booster = train_xgb({"objective": "binary:logistic"}, y=y, rounds=2, categorical=False)
    doc = json.loads(booster.save_raw("json"))
    rows = np.nan_to_num(X_TEST)
    for base_score, accepted in [("1.5", False), ("-0.2", False), ("[1.0000001]", False), ("NaN", False),
                                 ("0.3", True), ("0", True), ("1", True)]:
        doc["learner"]["learner_model_param"]["base_score"] = base_score
        text = json.dumps(doc)
        if accepted:
            theirs = xgb.Booster(model_file=bytearray(text.encode())).predict(xgb.DMatrix(rows), output_margin=True)
            # margins: float32 sums of the base margin and 2 float32 leaves, below 20
            np.testing.assert_allclose(from_xgboost(text).predict_raw(rows), theirs.reshape(len(rows), -1).squeeze(),
                                       rtol=1e-5, atol=1e-5)
            continue
        with pytest.raises(xgb.core.XGBoostError, match="base_score must be in"):
            xgb.Booster(model_file=bytearray(text.encode())).predict(xgb.DMatrix(rows))
        with pytest.raises(ValueError, match=r"base_score must be in \[0, 1\] for binary:logistic"):
            from_xgboost(text)


def test_hostile_bytes_are_value_errors():
    ubj = bytes(train_xgb({"max_depth": 2}, rounds=2).save_raw("ubj"))
    for data in [b"", b"{", b"[1, 2]", b'{"learner": 5}', b"{" * 100_000, b"[" * 100_000, b"\xff\xfe",
                 b'{"a": ' + b"9" * 10_000 + b"}", b"{L\x7f\xff\xff\xff\xff\xff\xff\xff", ubj + b"Z",
                 b"[$d#L\x7f\xff\xff\xff\xff\xff\xff\xff"]:
        with pytest.raises(ValueError):
            from_xgboost(data)
    rng = np.random.default_rng(0)
    for cut in rng.integers(1, len(ubj), size=40):  # truncated anywhere
        with pytest.raises(ValueError):
            from_xgboost(ubj[:cut])
    for _ in range(200):  # flipped bytes: rejected, or a model that predicts finite numbers
        flipped = bytearray(ubj)
        flipped[rng.integers(len(ubj))] ^= 1 << int(rng.integers(8))
        try:
            model = from_xgboost(bytes(flipped))
        except ValueError:
            continue
        assert np.all(np.isfinite(model.predict_raw(np.nan_to_num(X_TEST[:20]))))
    with pytest.raises(TypeError, match="source"):
        from_xgboost(12)
    with pytest.raises(TypeError, match="use_best_iteration"):
        from_xgboost(ubj, use_best_iteration=1)


# -- the UBJSON reader ------------------------------------------------------------------

def test_ubjson_reader():
    assert ubjson.loads(b"{L\x00\x00\x00\x00\x00\x00\x00\x01aU\x05}") == {"a": 5}
    assert ubjson.loads(b"[i\xffNSU\x02hiZTF]") == [-1, "hi", None, True, False]  # N: no-op
    assert ubjson.loads(b"[#U\x02D?\xf0\x00\x00\x00\x00\x00\x00d?\x80\x00\x00") == [1.0, 1.0]
    typed = ubjson.loads(b"[$l#U\x02\x00\x00\x00\x01\xff\xff\xff\xff")
    assert typed.dtype == np.int32 and typed.tolist() == [1, -1]
    assert ubjson.loads(b"{#U\x01U\x01kC!") == {"k": "!"}
    for bad, match in [(b"[$l#U\x05\x00", "past the end"), (b"SU\x05ab", "past the end"), (b"[" * 200, "deeper"),
                       (b"H", "marker"), (b"U\x01U\x02", "after the value"), (b"SU\x02\xff\xfe", "UTF-8"),
                       (b"[#i\xff", "negative"), (b"{$U#U\x01\x05", "typed objects"), (b"[$S#U\x01", "typed containers")]:
        with pytest.raises(ValueError, match=match):
            ubjson.loads(bad)


def test_older_formats_and_json_text():
    """XGBoost 1.x wrote default_left as booleans, a scalar base_score, no split_type,
    categories, iteration_indptr or num_target; the JSON text itself is a source too."""
    booster = train_xgb({"max_depth": 3}, categorical=False)
    new = json.loads(booster.save_raw("json"))
    old = json.loads(booster.save_raw("json"))
    learner = old["learner"]
    learner["learner_model_param"].pop("num_target")
    learner["learner_model_param"]["base_score"] = learner["learner_model_param"]["base_score"].strip("[]")
    model_json = learner["gradient_booster"]["model"]
    model_json.pop("iteration_indptr")
    model_json.pop("cats")
    for tree in model_json["trees"]:
        tree["default_left"] = [bool(v) for v in tree["default_left"]]
        tree["tree_param"]["size_leaf_vector"] = "0"
        for key in ("split_type", "categories", "categories_nodes", "categories_segments", "categories_sizes"):
            tree.pop(key)
    old["version"] = [1, 5, 0]
    rows = np.nan_to_num(X_TEST)
    reference = from_xgboost(booster).predict_raw(rows)
    for source in (json.dumps(old), json.dumps(new)):
        model = from_xgboost(source)
        np.testing.assert_array_equal(model.predict_raw(rows), reference)
        assert model.best_iteration == 9


def test_json_text_paths_and_byte_order_marks_are_told_apart_as_load_does(tmp_path):
    """A str is JSON text when it is in braces (after a byte-order mark and whitespace), a
    path otherwise: a path opening with "{" was read as JSON text, and JSON text or a file
    after a UTF-8 byte-order mark (as editors on Windows write) as a path or as UBJSON."""
    booster = train_xgb({"max_depth": 3}, categorical=False)
    text = booster.save_raw("json").decode()
    (tmp_path / "{run}").mkdir()
    braced, marked = tmp_path / "{run}" / "model.json", tmp_path / "marked.json"
    braced.write_text(text)
    marked.write_bytes(codecs.BOM_UTF8 + text.encode())
    rows = np.nan_to_num(X_TEST)
    reference = from_xgboost(booster).predict_raw(rows)
    for source in (str(braced), "\ufeff" + text, " \n" + text + "\n", codecs.BOM_UTF8 + text.encode(), marked,
                   str(marked)):
        np.testing.assert_array_equal(from_xgboost(source).predict_raw(rows), reference)


# -- fuzzing: a mutated document is refused, or predicts as XGBoost's rules say ------------

FUZZ_ROWS = X_TEST[:40]


def paths_of(value, path=()):
    """Every path (keys and indices) into the document, containers and leaves."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_of(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:8]):  # a few entries of each list
            yield from paths_of(item, (*path, i))


def xgboost_rule_margins(doc, base_scores, rows):
    """Margins by XGBoost's rules, walked in Python over the (mutated) numeric document:
    float32(x) < float32(t) goes left, NaN by default_left, the right child is left + 1,
    tree i the one whose id is i."""
    model_json = doc["learner"]["gradient_booster"]["model"]
    out = np.tile(np.asarray(base_scores, dtype=np.float64), (len(rows), 1))
    for tree, group in zip(sorted(model_json["trees"], key=lambda t: t["id"]), model_json["tree_info"]):
        for r, row in enumerate(rows.astype(np.float32)):
            node = 0
            while tree["left_children"][node] != -1:
                x = row[tree["split_indices"][node]]
                go_left = bool(tree["default_left"][node]) if np.isnan(x) else x < np.float32(
                    tree["split_conditions"][node])
                node = tree["left_children"][node] + (0 if go_left else 1)
            out[r, group] += float(np.float32(tree["split_conditions"][node]))
    return out


FUZZ_DOCS = {}


def fuzz_document(categorical: bool) -> dict:
    if categorical not in FUZZ_DOCS:
        FUZZ_DOCS[categorical] = model_document(rounds=2, categorical=categorical)
    return json.loads(json.dumps(FUZZ_DOCS[categorical]))


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.integers(-3, 16),
                 st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4),
                 st.lists(st.integers(-2, 8), max_size=4), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))


@pytest.mark.parametrize("categorical", [False, True])
@settings(max_examples=int(os.environ.get("FUZZ", 150)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_documents_are_refused_or_follow_xgboosts_rules(categorical, data):
    """Values replaced by junk or keys removed at random paths (1 to 3 per document):
    ValueError, or a model whose margins are those XGBoost's rules give (walked in Python
    for numeric splits; a model with categorical splits must predict finite margins)."""
    doc = fuzz_document(categorical)
    all_paths = list(paths_of(doc))[1:]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(all_paths))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = data.draw(JUNK)
        except (KeyError, IndexError, TypeError):  # an earlier mutation removed the path
            continue
    text = json.dumps(doc)
    try:
        model = from_xgboost(text)
    except ValueError:
        return
    if model.n_features > 64:
        return  # a mutated num_feature too wide to predict with
    rows = np.pad(FUZZ_ROWS, ((0, 0), (0, max(model.n_features - 4, 0))), constant_values=0.25)[:, :model.n_features]
    ours = model.predict_raw(rows).reshape(len(rows), -1)
    assert np.all(np.isfinite(ours))
    if not any(t.category_set.max() >= 0 for t in model.trees):
        np.testing.assert_allclose(ours, xgboost_rule_margins(json.loads(text), model.forest.base_scores, rows),
                                   rtol=1e-12, atol=1e-12)


@settings(max_examples=int(os.environ.get("FUZZ", 300)), deadline=None)
@given(data=st.one_of(st.binary(max_size=64), st.lists(st.sampled_from(list(b"[]{}#$iUIlLdDSCZTFNH\x00\x01\x02\x7f\xff")),
                                                      max_size=40).map(bytes)))
def test_ubjson_reader_on_random_bytes(data):
    """Random bytes, and random sequences of UBJSON markers and small lengths: a value
    or ValueError, nothing else."""
    try:
        ubjson.loads(data)
    except ValueError:
        pass
