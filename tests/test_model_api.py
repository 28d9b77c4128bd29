"""The public GBDTModel API: prediction shapes and transforms, input adaptation,
feature importance, persistence round trips, threads, verbosity, pandas."""

import logging
import pickle
import re

import numpy as np
import pandas as pd
import pytest

import boosters as bst
from support.tree_compare import assert_same_trees

TREE_ARRAYS = ("split_feature", "threshold", "threshold_bin", "default_left", "left_child",
               "right_child", "value", "gain", "cover", "n_samples")
K = 3


def make_data(objective, n=2000, d=5, seed=0, nan_share=0.05):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] - 0.7 * X[:, 1] * X[:, 2] + np.sin(2 * X[:, 3])
    if objective == "squared":
        y = score + 0.2 * rng.normal(size=n)
    elif objective == "logistic":
        y = (score + 0.5 * rng.normal(size=n) > 0).astype(np.float64)
    else:
        y = np.digitize(score + 0.3 * rng.normal(size=n), [-0.7, 0.7]).astype(np.float64)
    X[rng.uniform(size=X.shape) < nan_share] = np.nan
    return X, y


OBJECTIVES = {"squared": bst.Objective.squared(), "logistic": bst.Objective.logistic(),
              "softmax": bst.Objective.softmax(K)}


@pytest.fixture(scope="module", params=["squared", "logistic", "softmax"])
def trained(request):
    objective = request.param
    X, y = make_data(objective)
    Xv, yv = make_data(objective, n=600, seed=1)
    cfg = bst.GBDTConfig(n_estimators=40, objective=OBJECTIVES[objective], learning_rate=0.5, max_depth=5,
                         early_stopping_rounds=3, subsample=1.0)  # a tree's root holds every row
    model = bst.GBDTModel.train(bst.Dataset(X, y, feature_names=[f"f{i}" for i in range(X.shape[1])]),
                                config=cfg, val_set=bst.Dataset(Xv, yv), n_threads=2)
    return objective, model, X, y


# ----------------------------------------------------------------------------------
# Prediction
# ----------------------------------------------------------------------------------

def test_predict_shapes(trained):
    objective, model, X, _ = trained
    expected = (len(X), K) if objective == "softmax" else (len(X),)
    assert model.predict(X).shape == expected
    assert model.predict_raw(X).shape == expected
    assert model.predict(X).dtype == np.float64
    one = X[:1]
    assert model.predict(one).shape == ((1, K) if objective == "softmax" else (1,))


def test_predict_is_the_transformed_margin(trained):
    objective, model, X, _ = trained
    raw, pred = model.predict_raw(X), model.predict(X)
    if objective == "squared":
        expected = raw
    elif objective == "logistic":
        expected = 1.0 / (1.0 + np.exp(-raw))
        assert np.all((pred > 0) & (pred < 1))
    else:
        e = np.exp(raw - raw.max(axis=1, keepdims=True))
        expected = e / e.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(pred.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(pred, expected, rtol=1e-12, atol=1e-15)


def test_predictions_are_useful(trained):
    objective, model, X, y = trained
    pred = model.predict(X)
    if objective == "squared":
        assert np.mean((pred - y) ** 2) < 0.5 * np.var(y)
    elif objective == "logistic":
        assert np.mean((pred > 0.5) == y) > 0.8
    else:
        assert np.mean(np.argmax(pred, axis=1) == y) > 0.7


def test_predict_on_dataset_equals_array(trained):
    _, model, X, y = trained
    assert np.array_equal(model.predict(bst.Dataset(X)), model.predict(X))
    assert np.array_equal(model.predict(bst.Dataset(X, y)), model.predict(X))
    assert np.array_equal(model.predict_raw(bst.Dataset(X)), model.predict_raw(X))


def test_memory_order_and_views(trained):
    _, model, X, _ = trained
    expected = model.predict(X)
    assert np.array_equal(model.predict(np.asfortranarray(X)), expected)
    # a strided view (every other column of a wider array)
    wide = np.empty((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    assert np.array_equal(model.predict(wide[:, ::2]), expected)
    # a row slice with a negative stride
    assert np.array_equal(model.predict(X[::-1]), expected[::-1])
    # nested lists
    assert np.array_equal(model.predict(X[:20].tolist()), expected[:20])


def test_predict_n_threads(trained, openmp):
    _, model, X, _ = trained
    big = np.tile(X, (5, 1))
    a = model.predict(big, n_threads=1)
    assert np.array_equal(a, model.predict(big, n_threads=2))
    assert np.array_equal(a, model.predict(big, n_threads=0))
    assert np.array_equal(model.predict_raw(big, n_threads=1), model.predict_raw(big, n_threads=2))


def test_rows_are_predicted_independently(trained):
    _, model, X, _ = trained
    full = model.predict(X)
    for i in (0, 7, len(X) - 1):
        assert np.array_equal(model.predict(X[i:i + 1])[0], full[i])


def test_integer_and_float_inputs():
    rng = np.random.default_rng(3)
    n = 2000
    X_int = rng.integers(-20, 20, size=(n, 4))
    y = X_int[:, 0] * 0.5 + (X_int[:, 1] > 3) + rng.normal(size=n)
    cfg = bst.GBDTConfig(n_estimators=10, max_depth=4)
    models = {dt: bst.GBDTModel.train(bst.Dataset(X_int.astype(dt), y), config=cfg)
              for dt in (np.int64, np.int32, np.float32, np.float64, np.int8)}
    ref = models[np.float64]
    for dt, model in models.items():
        assert model.n_trees == ref.n_trees == 10, dt
        assert_same_trees(model, ref)
    expected = ref.predict(X_int.astype(np.float64))
    for dt in (np.int64, np.int32, np.int16, np.uint8 if X_int.min() >= 0 else np.int8, np.float32, np.float64):
        assert np.array_equal(ref.predict(X_int.astype(dt)), expected), dt
    # bool features
    Xb = X_int > 0
    mb = bst.GBDTModel.train(bst.Dataset(Xb, y), config=cfg)
    assert np.array_equal(mb.predict(Xb), mb.predict(Xb.astype(np.float64)))


def test_float32_model_predicts_float32_and_float64_alike():
    X, y = make_data("squared")
    X32 = X.astype(np.float32)
    model = bst.GBDTModel.train(bst.Dataset(X32, y), config=bst.GBDTConfig(n_estimators=10))
    # thresholds were learned from float32 values: widening them changes nothing
    assert np.array_equal(model.predict(X32), model.predict(X32.astype(np.float64)))


def test_c_and_fortran_order_train_the_same_model():
    X, y = make_data("logistic")
    cfg = bst.GBDTConfig(n_estimators=10, objective=bst.Objective.logistic())
    c = bst.GBDTModel.train(bst.Dataset(np.ascontiguousarray(X), y), config=cfg, n_threads=2)
    f = bst.GBDTModel.train(bst.Dataset(np.asfortranarray(X), y), config=cfg, n_threads=2)
    assert c.n_trees == f.n_trees == 10
    assert_same_trees(c, f)
    assert np.array_equal(c.predict(X), f.predict(np.asfortranarray(X)))


@pytest.mark.parametrize("objective", ["squared", "logistic", "softmax"])
def test_training_threads_do_not_change_predictions(objective, openmp):
    X, y = make_data(objective, n=3000)
    cfg = bst.GBDTConfig(n_estimators=8, objective=OBJECTIVES[objective])
    a = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, n_threads=1)
    b = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, n_threads=2)
    assert np.array_equal(a.predict(X), b.predict(X))


# ----------------------------------------------------------------------------------
# Inspection
# ----------------------------------------------------------------------------------

def test_feature_importance(trained):
    _, model, X, _ = trained
    d = X.shape[1]
    split_counts = np.zeros(d)
    gains = np.zeros(d)
    for tree in model.trees:
        for node in range(tree.n_nodes):
            f = tree.split_feature[node]
            if f >= 0:
                split_counts[f] += 1
                gains[f] += tree.gain[node]
    split = model.feature_importance()
    assert split.shape == (d,)
    assert np.array_equal(split, split_counts)
    assert np.array_equal(model.feature_importance("split"), split_counts)
    assert split.sum() == sum(int(np.sum(t.split_feature >= 0)) for t in model.trees)
    np.testing.assert_allclose(model.feature_importance("gain"), gains, rtol=1e-12)
    assert np.all(model.feature_importance("gain") >= 0)
    # feature 4 carries no signal
    assert split[4] < split[0]
    with pytest.raises(ValueError, match="importance_type"):
        model.feature_importance("cover_weird")


def test_feature_importance_of_unused_feature_is_zero():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1000, 3))
    X[:, 1] = 7.0  # constant
    y = X[:, 0] + X[:, 2]
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=5))
    assert model.feature_importance()[1] == 0
    assert model.feature_importance("gain")[1] == 0
    assert model.feature_importance()[0] > 0 and model.feature_importance()[2] > 0


def test_tree_arrays_are_consistent(trained):
    _, model, X, _ = trained
    for tree in model.trees:
        n = tree.n_nodes
        for name in TREE_ARRAYS:
            assert getattr(tree, name).shape == (n,)
        internal = tree.split_feature >= 0
        assert np.all(tree.left_child[~internal] == -1) and np.all(tree.right_child[~internal] == -1)
        children = np.concatenate([tree.left_child[internal], tree.right_child[internal]])
        assert sorted(children.tolist()) == list(range(1, n))  # every node but the root is a child once
        idx_ = np.flatnonzero(internal)
        assert np.all(tree.left_child[idx_] > idx_) and np.all(tree.right_child[idx_] > idx_)
        # children's rows and hessians add up to their parent's
        idx = np.flatnonzero(internal)
        assert np.array_equal(tree.n_samples[tree.left_child[idx]] + tree.n_samples[tree.right_child[idx]],
                              tree.n_samples[idx])
        np.testing.assert_allclose(tree.cover[tree.left_child[idx]] + tree.cover[tree.right_child[idx]],
                                   tree.cover[idx], rtol=1e-9)
        assert tree.n_samples[0] == X.shape[0]
        assert np.all(tree.split_feature[internal] < X.shape[1])


def test_repr_mentions_the_essentials(trained):
    _, model, _, _ = trained
    text = repr(model)
    assert "GBDTModel" in text and str(model.n_trees) in text


# ----------------------------------------------------------------------------------
# Persistence
# ----------------------------------------------------------------------------------

def _round_trips(model, tmp_path):
    path = tmp_path / "model.bst"
    model.save(path)
    yield "bytes", bst.GBDTModel.from_bytes(model.to_bytes())
    yield "file", bst.GBDTModel.load(path)
    yield "file-str", bst.GBDTModel.load(str(path))
    yield "pickle", pickle.loads(pickle.dumps(model))
    yield "pickle-twice", pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(model))))


def test_persistence_round_trips(trained, tmp_path):
    objective, model, X, _ = trained
    assert model.best_iteration is not None and model.best_score is not None
    Xq = np.vstack([X, np.full((1, X.shape[1]), np.nan)])
    expected, expected_raw = model.predict(Xq), model.predict_raw(Xq)
    for how, loaded in _round_trips(model, tmp_path):
        assert type(loaded) is bst.GBDTModel, how
        assert np.array_equal(loaded.predict(Xq), expected), how
        assert np.array_equal(loaded.predict_raw(Xq), expected_raw), how
        assert loaded.n_trees == model.n_trees, how
        assert loaded.best_iteration == model.best_iteration, how
        assert loaded.best_score == model.best_score, how
        assert loaded.eval_history == model.eval_history, how
        assert loaded.config == model.config, how
        assert loaded.config.objective == OBJECTIVES[objective], how
        assert loaded.objective == model.objective, how
        assert loaded.feature_names == model.feature_names == [f"f{i}" for i in range(X.shape[1])], how
        assert loaded.n_features == model.n_features, how
        assert_same_trees(loaded, model)  # every array, values and dtypes
        assert np.array_equal(loaded.feature_importance("gain"), model.feature_importance("gain"))
        assert loaded.to_bytes() == model.to_bytes(), how


# every GBDTConfig field away from its default (a new field must be added here); fields
# that exclude each other are away from their defaults in one of three configs: GOSS here
# (learning_rate 0.17: 5 rounds on every row, then GOSS), subsample in another, the
# Bayesian bootstrap in the third (GOSS and the bootstrap leave subsample at 1, not 0.8)
NON_DEFAULT_CONFIG = dict(
    n_estimators=6, learning_rate=0.17, objective=bst.Objective.logistic(), metric=bst.Metric.auc(),
    growth_strategy=bst.GrowthStrategy.Depthwise, max_depth=4, n_leaves=9, l1=0.5, l2=2.5,
    min_gain_to_split=0.01, min_child_weight=0.3, min_samples_leaf=4, max_bins=63, cache_size=5,
    early_stopping_rounds=2, seed=11, histogram_mode="i8", prefetch=False, enable_bundling=False,
    renew_leaves=False, quantization_levels=50, histogram_layout="row", verbosity=1,
    colsample_bytree=0.8, colsample_bylevel=0.9, colsample_bynode=0.75, monotone_constraints={0: 1, 2: -1},
    interaction_constraints=((0, 1), (2, 3, 4)),
    goss_top_rate=0.3, goss_other_rate=0.2,
    max_onehot_cats=7, cat_smooth=3.5, cat_l2=0.25, max_cat_threshold=9, min_data_per_group=13,
    cat_encoding="ordered_ctr", ctr_prior_weight=2.0,
    booster="dart", drop_rate=0.3, skip_drop=0.2, max_drop=7, xgboost_dart_mode=True, random_strength=0.4)
EXCLUSIVE_FIELDS = dict(subsample=0.6)  # instead of the GOSS rates
# the fields the exclusive variant resets, and to what
GOSS_FIELDS = {"goss_top_rate": None, "goss_other_rate": None}
# linear leaves: instead of the monotone constraints and DART (neither can be combined with them)
EXCLUSIVE_FIELDS.update(linear_leaves=True, linear_l1=0.05, linear_l2=0.5)
GOSS_FIELDS.update(monotone_constraints=None, booster="gbdt")
BOOTSTRAP_FIELDS = dict(bagging_temperature=0.7)  # instead of GOSS and subsample


@pytest.mark.filterwarnings("ignore:n_leaves=9")  # depth-wise trees do not read it; it round-trips
@pytest.mark.parametrize("exclusive", [False, True, "bootstrap"])
def test_round_trip_keeps_every_config_field(tmp_path, capsys, exclusive):
    fields = set(bst.GBDTConfig().to_dict())
    assert set(NON_DEFAULT_CONFIG) | set(EXCLUSIVE_FIELDS) | set(BOOTSTRAP_FIELDS) == fields
    params = dict(NON_DEFAULT_CONFIG)
    if exclusive is True:
        params.update(GOSS_FIELDS, **EXCLUSIVE_FIELDS)
        at_default = set(GOSS_FIELDS) | set(BOOTSTRAP_FIELDS)
    elif exclusive == "bootstrap":
        params.update(GOSS_FIELDS, **BOOTSTRAP_FIELDS)
        at_default = set(GOSS_FIELDS) | set(EXCLUSIVE_FIELDS) - {"subsample"}
    else:
        at_default = set(EXCLUSIVE_FIELDS) - {"subsample"} | set(BOOTSTRAP_FIELDS)
    cfg = bst.GBDTConfig(**params)
    default = bst.GBDTConfig()
    for name in fields - at_default:
        assert getattr(cfg, name) != getattr(default, name), f"{name} is at its default"
    X, y = make_data("logistic", n=600)
    Xv, yv = make_data("logistic", n=300, seed=1)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, val_set=bst.Dataset(Xv, yv))
    for how, loaded in _round_trips(model, tmp_path):
        for name in fields:
            ours, theirs = getattr(loaded.config, name), getattr(cfg, name)
            assert ours == theirs and type(ours) is type(theirs), (how, name, ours, theirs)
        assert loaded.config == cfg, how
        assert loaded.config.to_dict() == cfg.to_dict(), how
        assert np.array_equal(loaded.predict(X), model.predict(X)), how
    # the loaded config trains the same model
    again = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTModel.from_bytes(model.to_bytes()).config,
                                val_set=bst.Dataset(Xv, yv))
    assert again.n_trees == model.n_trees
    assert again.to_bytes() == model.to_bytes()


@pytest.mark.parametrize("strategy, max_depth", [("leafwise", "auto"), ("leafwise", None), ("leafwise", -1),
                                                 ("leafwise", 3), ("depthwise", "auto"), ("depthwise", 3)])
def test_round_trip_keeps_max_depth_as_asked(strategy, max_depth):
    X, y = make_data("squared", n=300)
    cfg = bst.GBDTConfig(n_estimators=2, growth_strategy=strategy, max_depth=max_depth)
    loaded = bst.GBDTModel.from_bytes(bst.GBDTModel.train(bst.Dataset(X, y), config=cfg).to_bytes()).config
    assert loaded.max_depth == cfg.max_depth
    assert loaded.to_dict()["max_depth"] == cfg.to_dict()["max_depth"]
    if max_depth == "auto":  # still "auto": the other strategy resolves it again
        other = "depthwise" if strategy == "leafwise" else "leafwise"
        assert loaded.replace(growth_strategy=other).max_depth == bst.GBDTConfig(growth_strategy=other).max_depth


def test_loaded_model_keeps_feature_count_check(trained):
    _, model, X, _ = trained
    loaded = bst.GBDTModel.from_bytes(model.to_bytes())
    with pytest.raises(ValueError, match="features"):
        loaded.predict(X[:, :-1])


def test_from_bytes_rejects_garbage():
    with pytest.raises(Exception):
        bst.GBDTModel.from_bytes(b"not a model")


# ----------------------------------------------------------------------------------
# Verbosity
# ----------------------------------------------------------------------------------

def _round_lines(messages):
    return [ln for ln in messages if ln.startswith("[")]


def test_verbosity_logs_one_line_per_round(caplog):
    # verbose output goes through logging ("boosters" logger, INFO); pytest's handlers catch it
    caplog.set_level(logging.INFO, logger="boosters")
    X, y = make_data("squared", n=800)
    bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=7, max_depth=3, verbosity=1))
    lines = _round_lines(caplog.messages)
    assert len(lines) == 7
    for i, line in enumerate(lines, start=1):
        assert re.match(rf"^\[{i}\] train rmse: [0-9.]+$", line), line
    assert all(ln.startswith(("[", "note:")) for ln in caplog.messages)
    assert {r.name for r in caplog.records} == {"boosters"} and {r.levelno for r in caplog.records} == {logging.INFO}


def test_verbosity_with_val_set_and_early_stopping(caplog):
    caplog.set_level(logging.INFO, logger="boosters")
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(400, 4)), rng.normal(size=400)  # pure noise: stops early
    Xv, yv = rng.normal(size=(300, 4)), rng.normal(size=300)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(
        n_estimators=100, max_depth=3, early_stopping_rounds=3, verbosity=1), val_set=bst.Dataset(Xv, yv))
    lines = _round_lines(caplog.messages)
    assert len(lines) == len(model.eval_history) < 100
    for i, (line, score) in enumerate(zip(lines, model.eval_history), start=1):
        m = re.match(rf"^\[{i}\] valid rmse: ([0-9.]+)$", line)
        assert m, line
        assert abs(float(m.group(1)) - score) < 1e-6
    assert caplog.messages[-1] == (f"early stopping: best round {model.best_iteration + 1}, "
                                   f"valid rmse {model.best_score:.6f}")


def test_silent_by_default(capsys, caplog):
    caplog.set_level(logging.DEBUG, logger="boosters")
    X, y = make_data("squared", n=500)
    Xv, yv = make_data("squared", n=200, seed=2)
    bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=5, max_depth=8, cache_size=2),
                        val_set=bst.Dataset(Xv, yv))
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "" and caplog.messages == []


# ----------------------------------------------------------------------------------
# pandas
# ----------------------------------------------------------------------------------

def test_pandas_dataframe_input():
    X, y = make_data("squared", n=1000, d=4)
    df = pd.DataFrame(X, columns=["age", "height", "weight", "score"])
    model = bst.GBDTModel.train(bst.Dataset(df, pd.Series(y)), config=bst.GBDTConfig(n_estimators=5))
    assert model.feature_names == ["age", "height", "weight", "score"]
    ref = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=5))
    assert np.array_equal(model.predict(df), ref.predict(X))
    assert np.array_equal(model.predict(X), ref.predict(X))
    assert bst.GBDTModel.from_bytes(model.to_bytes()).feature_names == model.feature_names
    # explicit names win over the columns
    named = bst.Dataset(df, y, feature_names=["a", "b", "c", "d"])
    assert named.feature_names == ["a", "b", "c", "d"]


def test_pandas_mixed_dtypes_and_non_numeric():
    df = pd.DataFrame({"i": np.arange(100), "f": np.linspace(0, 1, 100, dtype=np.float32), 3: np.ones(100)})
    ds = bst.Dataset(df, np.arange(100.0))
    assert ds.feature_names == ["i", "f", "3"]
    model = bst.GBDTModel.train(ds, config=bst.GBDTConfig(n_estimators=3))
    assert model.predict(df).shape == (100,)
    with pytest.raises(ValueError, match=r"\bX\b"):
        bst.Dataset(pd.DataFrame({"a": ["x", "y"], "b": [1.0, 2.0]}), [0.0, 1.0])


def test_feature_names_default_to_none():
    X, y = make_data("squared", n=300)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=2))
    assert model.feature_names is None
    assert bst.GBDTModel.from_bytes(model.to_bytes()).feature_names is None
