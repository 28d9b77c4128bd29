"""LightGBM models converted with `boosters.convert.from_lightgbm` predict what LightGBM
predicts, and anything else is refused with a ValueError.

Every test trains a small LightGBM model and compares, on held-out rows (with NaN,
unseen and negative category codes where they matter): the raw margins, to 1e-12
relative + 1e-12 absolute (both libraries add the same float64 leaf values in the same
order, so they agree to the last bit in practice; the tolerance only allows a different
summation order), the predictions after the output transform (1e-12 too: the same
formulas in float64), and the leaf every row reaches in every tree, exactly
(LightGBM's leaf j is node num_leaves - 1 + j of the converted tree), which checks each
tree's routing on its own, not only the sum.
"""

import json
import re

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
from hypothesis import event, given
from hypothesis import strategies as hypothesis_st

import boosters as bst
from boosters.convert import from_lightgbm
from boosters.convert.lightgbm import ZERO_THRESHOLD, zero_as_missing_split
from support.model_files import fuzz_settings
from support.child_python import python_run
from support.lightgbm_models import leaf_weights, weightless_rows_booster

RTOL = ATOL = 1e-12


def train(params, X, y, rounds=10, **dataset):
    params = {"verbose": -1, "num_leaves": 8, "min_data_in_leaf": 5, "num_threads": 1, "seed": 0, **params}
    return lgb.train(params, lgb.Dataset(X, y, **dataset), num_boost_round=rounds)


def assert_same(model: bst.GBDTModel, booster: lgb.Booster, X):
    """Margins, predictions and leaves of `model` equal LightGBM's on X (module docstring)."""
    np.testing.assert_allclose(model.predict_raw(X), booster.predict(X, raw_score=True), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(model.predict(X), booster.predict(X), rtol=RTOL, atol=ATOL)
    theirs = booster.predict(X, pred_leaf=True).reshape(len(X), -1)
    n_internal = np.array([t.n_nodes - t.n_leaves for t in model.trees])
    np.testing.assert_array_equal(model.predict_leaf(X) - n_internal, theirs)


def regression_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(n) < 0.1, 0] = np.nan  # column 0 has missing values in training (missing type NaN)
    y = np.nan_to_num(X[:, 0], nan=1.5) + X[:, 1] ** 2 - X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def held_out(n=300, seed=1):
    """Rows the model never saw: NaN in every column (column 1-3 had none in training:
    LightGBM compares them as 0.0), zeros and values past the training range."""
    X, _ = regression_data(n, seed)
    X[::7, 1] = np.nan
    X[::11, 2] = np.nan
    X[::13, 3] = 0.0
    X[::17, 1] = 50.0
    return X


def test_regression_with_missing_values_is_reproduced():
    X, y = regression_data()
    booster = train({}, X, y, rounds=20)
    model = from_lightgbm(booster)
    assert model.objective == bst.Objective.squared() and model.n_trees == 20 and model.n_features == 4
    assert model.feature_names is None  # LightGBM's made-up Column_i names are not kept
    assert_same(model, booster, held_out())
    assert np.all(model.forest.base_scores == 0.0)  # LightGBM's starting score is in its first tree


@pytest.mark.parametrize("use_missing", [True, False])
def test_missing_types_none_and_nan(use_missing):
    """use_missing=False: every split has missing type None, NaN compared as 0.0."""
    X, y = regression_data()
    booster = train({"use_missing": use_missing}, X, y)
    types = {int(d) >> 2 & 3 for d in re.findall(r"decision_type=(.*)", booster.model_to_string())[0].split()}
    assert types == ({0, 2} if use_missing else {0})
    assert_same(from_lightgbm(booster), booster, held_out())


def test_every_source_gives_the_same_model(tmp_path):
    X, y = regression_data()
    estimator = lgb.LGBMRegressor(n_estimators=5, num_leaves=8, n_jobs=1, verbose=-1).fit(X, y)
    booster = estimator.booster_
    path = tmp_path / "model.txt"
    booster.save_model(path)
    text = booster.model_to_string()
    expected = booster.predict(held_out(), raw_score=True)
    for source in (booster, estimator, path, str(path), text, text.encode(), bytearray(text.encode()),
                   text.replace("\n", "\r\n")):
        np.testing.assert_allclose(from_lightgbm(source).predict_raw(held_out()), expected, rtol=RTOL, atol=ATOL)


def test_feature_names_are_kept():
    X, y = regression_data()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    booster = train({}, frame, y)
    model = from_lightgbm(booster)
    assert model.feature_names == ["a", "b", "c", "d"]
    rows = pd.DataFrame(held_out(), columns=["a", "b", "c", "d"])
    np.testing.assert_allclose(model.predict(rows[["d", "c", "b", "a"]]), booster.predict(rows), rtol=RTOL, atol=ATOL)


def categorical_data(n=600, seed=0, n_codes=40):
    """Column 1 holds integer codes 0..n_codes-1 (past 32: sets of two words)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 1] = rng.integers(0, n_codes, n)
    X[rng.random(n) < 0.05, 1] = np.nan
    effect = np.sin(np.arange(n_codes) * 1.7)
    y = X[:, 0] + 2 * effect[np.nan_to_num(X[:, 1], nan=0).astype(int)] + 0.1 * rng.normal(size=n)
    return X, y


def test_categorical_splits_on_codes():
    X, y = categorical_data()
    booster = train({"max_cat_to_onehot": 4, "min_data_per_group": 5, "cat_smooth": 1}, X, y, rounds=15,
                    categorical_feature=[1])
    assert "num_cat=0" not in booster.model_to_string().split("end of trees")[0].split("Tree=1")[0]
    model = from_lightgbm(booster)
    assert model.categorical_features == [1] and model.categories == {1: None}
    rows = categorical_data(400, seed=1)[0]
    rows[::5, 1] = np.array([-1.0, 45.0, 100.0, 70000.0, 2.0**40])[np.arange(len(rows[::5])) % 5]  # unseen
    assert_same(model, booster, rows)
    words = max(len(t.cat_bitsets) for t in model.trees)
    assert words >= 2  # some set reaches past code 31


def test_non_integer_categorical_values_are_truncated_as_lightgbm_does():
    """LightGBM's CategoricalDecision (include/LightGBM/tree.h): NaN goes right, else
    int_fval = static_cast<int>(fval) (toward zero), a negative int_fval goes right, else
    the bit of int_fval in the node's set sends it left."""
    X, y = categorical_data(n_codes=12)
    booster = train({"max_cat_to_onehot": 1, "min_data_per_group": 5, "cat_smooth": 1}, X, y, rounds=10,
                    categorical_feature=[1])
    rows = categorical_data(240, seed=1, n_codes=12)[0]
    rows[:, 1] = np.resize([2.5, 2.9999, 0.3, -0.5, -0.9999, 7.0001, 11.5, 3.5, np.nan, 5.0], len(rows))
    theirs = booster.predict(rows)
    as_missing = rows.copy()
    as_missing[:, 1] = np.nan  # where boosters sent a non-integer value before it truncated them
    assert np.mean(np.abs(theirs - booster.predict(as_missing)) > 1e-3) > 0.3  # LightGBM reads them as codes
    np.testing.assert_allclose(from_lightgbm(booster).predict(rows), theirs, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("values, unseen", [
    (["red", "green", "blue", "cyan", "plum", "teal"], "mauve"),
    ([60, 10, 50, 20, 40, 30], 99),
])
def test_pandas_categories_are_mapped_by_value(values, unseen):
    X, y = categorical_data(n_codes=6)
    values = np.array(values, dtype=object)
    frame = pd.DataFrame({"x": X[:, 0], "colour": pd.Categorical(values[np.nan_to_num(X[:, 1], nan=0).astype(int)]),
                          "z": X[:, 2]})
    frame.loc[::20, "colour"] = np.nan
    booster = train({"min_data_per_group": 5, "cat_smooth": 1}, frame, y, rounds=15)
    model = from_lightgbm(booster)
    assert model.categorical_features == [1]
    assert list(model.categories[1]) == sorted(values)  # pandas' categories, in code order
    rows = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    rows["colour"] = rows["colour"].cat.add_categories([unseen])
    rows.loc[::9, "colour"] = unseen  # unseen in training: LightGBM and boosters send it right
    np.testing.assert_allclose(model.predict(rows), booster.predict(rows), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(model.predict(rows[["z", "colour", "x"]]), booster.predict(rows), rtol=RTOL,
                               atol=ATOL)


def test_ordered_pandas_categories_are_refused():
    """LightGBM codes an ordered category column and splits on the codes as numbers; the
    file does not say which column its category list belongs to."""
    X, y = regression_data()
    frame = pd.DataFrame({"x": X[:, 1], "level": pd.Categorical(np.where(X[:, 2] > 0, "hi", "lo"), ordered=True)})
    booster = train({}, frame, y)
    with pytest.raises(ValueError, match="pandas_categorical has 1 category lists .* 0 categorical features"):
        from_lightgbm(booster)


def classification_data(n_classes, n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[rng.random(n) < 0.1, 2] = np.nan
    score = X[:, 0] + np.sin(2 * X[:, 1]) + rng.normal(scale=0.5, size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y.astype(float)


@pytest.mark.parametrize("params, objective", [
    ({"objective": "binary"}, bst.Objective.logistic()),
    ({"objective": "cross_entropy"}, bst.Objective.logistic()),
    ({"objective": "multiclass", "num_class": 3}, bst.Objective.softmax(3)),
    ({"objective": "multiclassova", "num_class": 3}, bst.Objective.one_vs_rest(3)),
])
def test_classification_objectives(params, objective):
    n_classes = params.get("num_class", 2)
    X, y = classification_data(n_classes)
    booster = train(params, X, y)
    model = from_lightgbm(booster)
    assert model.objective == objective
    assert model.n_trees == 10 * (n_classes if n_classes > 2 else 1)
    assert_same(model, booster, classification_data(n_classes, 300, seed=1)[0])


@pytest.mark.parametrize("params, objective", [
    ({"objective": "regression_l1"}, bst.Objective.absolute()),
    ({"objective": "huber", "alpha": 0.7}, bst.Objective.huber(0.7)),
    ({"objective": "quantile", "alpha": 0.3}, bst.Objective.pinball(0.3)),
    ({"objective": "poisson"}, bst.Objective.poisson()),
    ({"objective": "gamma"}, bst.Objective.gamma()),
    ({"objective": "tweedie", "tweedie_variance_power": 1.2}, bst.Objective.tweedie(1.2)),
])
def test_regression_objectives(params, objective):
    X, y = regression_data()
    if objective.name in ("poisson", "gamma", "tweedie"):
        y = np.exp(0.5 * y / np.abs(y).max()) + (objective.name == "poisson") * np.round(np.abs(y))
    booster = train(params, X, y)
    model = from_lightgbm(booster)
    assert model.objective == objective
    assert_same(model, booster, held_out())


def test_lambdarank():
    X, y = classification_data(4)
    booster = train({"objective": "lambdarank", "lambdarank_truncation_level": 5}, X, y, group=[50] * 10)
    model = from_lightgbm(booster)
    assert model.objective == bst.Objective.lambdarank(5)
    assert_same(model, booster, held_out())


def test_custom_objective_predicts_raw_scores():
    """LightGBM writes no objective for a callable one and predicts raw scores."""
    X, y = regression_data()

    def squared(preds, data):
        return preds - data.get_label(), np.ones_like(preds)

    booster = train({"objective": squared}, X, y)
    model = from_lightgbm(booster)
    assert model.objective.name == "custom" and model.objective.n_outputs == 1
    assert_same(model, booster, held_out())


def test_a_leaf_weight_below_zero_by_round_off_is_converted_as_cover_zero():
    """LightGBM writes -1.1e-16 for a leaf whose rows have hessians 0: converted as cover 0
    (within 1e-9 of the tree's root cover, as SHAP takes it), so that the cover importance,
    trees_to_dataframe and to_xgboost_json's sum_hessian see 0; every other cover as written."""
    X, booster = weightless_rows_booster()
    model = from_lightgbm(booster)
    n_roundoff = 0
    for tree, leaf_weight in zip(model.trees, leaf_weights(booster), strict=True):
        roundoff = (leaf_weight < 0) & (leaf_weight > -1e-12)
        n_roundoff += int(roundoff.sum())
        np.testing.assert_array_equal(tree.cover[tree.split_feature < 0], np.where(roundoff, 0.0, leaf_weight))
    assert n_roundoff > 0  # the round-off this test is about is there
    assert min(tree.cover.min() for tree in model.trees) == 0.0
    assert_same(model, booster, X)


def test_linear_trees():
    X, y = regression_data()
    booster = train({"linear_tree": True, "linear_lambda": 0.1}, X, y)
    model = from_lightgbm(booster)
    assert model.forest.is_linear and any(len(t.linear_coefs) for t in model.trees)
    assert_same(model, booster, held_out())  # NaN in a leaf's feature: the leaf's constant value


def test_linear_trees_with_categorical_splits():
    X, y = categorical_data()
    booster = train({"linear_tree": True, "min_data_per_group": 5, "cat_smooth": 1}, X, y, categorical_feature=[1])
    model = from_lightgbm(booster)
    assert model.forest.is_linear and any(len(t.cat_bitsets) for t in model.trees)
    assert_same(model, booster, categorical_data(300, seed=1)[0])


def test_dart_and_early_stopping():
    X, y = regression_data()
    booster = train({"boosting": "dart", "drop_rate": 0.3}, X, y, rounds=15)
    assert_same(from_lightgbm(booster), booster, held_out())

    valid = regression_data(200, seed=2)
    booster = lgb.train({"verbose": -1, "num_leaves": 31, "learning_rate": 0.5, "num_threads": 1}, lgb.Dataset(X, y),
                        num_boost_round=200, valid_sets=[lgb.Dataset(*valid)],
                        callbacks=[lgb.early_stopping(3, verbose=False)])
    assert 0 < booster.best_iteration < 200
    model = from_lightgbm(booster)
    assert model.n_trees == booster.best_iteration and model.best_iteration == booster.best_iteration - 1
    assert_same(model, booster, held_out())  # LightGBM predicts with the best iteration too
    assert from_lightgbm(booster.model_to_string()).best_iteration is None  # a file does not say


def test_one_leaf_trees():
    """A round that finds no split writes a one-leaf tree (and LightGBM stops there)."""
    X = np.zeros((50, 2))
    booster = train({}, X, np.arange(50.0), rounds=3)
    model = from_lightgbm(booster)
    assert [t.n_nodes for t in model.trees] == [1] and model.trees[0].value[0] == np.mean(np.arange(50.0))
    assert_same(model, booster, held_out()[:, :2])


def test_converted_model_is_a_boosters_model(tmp_path):
    """It saves and loads in boosters' format, and its TreeSHAP values are LightGBM's
    pred_contrib: with squared error and no weights the hessian sums boosters weighs the
    branches by are LightGBM's row counts (1e-12: the same sums in another order)."""
    X, y = categorical_data()
    booster = train({"min_data_per_group": 5, "cat_smooth": 1}, X, y, rounds=10, categorical_feature=[1])
    model = from_lightgbm(booster)
    rows = categorical_data(100, seed=1)[0]
    model.save(tmp_path / "model.bst")
    loaded = bst.GBDTModel.load(tmp_path / "model.bst")
    np.testing.assert_array_equal(loaded.predict(rows), model.predict(rows))
    assert loaded.categorical_features == [1]
    np.testing.assert_allclose(model.shap_values(rows), booster.predict(rows, pred_contrib=True), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("params, message", [
    ({"boosting": "rf", "bagging_fraction": 0.5, "bagging_freq": 1}, "random forest"),
    ({"objective": "binary", "sigmoid": 2.0}, "sigmoid:2"),
    ({"objective": "regression", "reg_sqrt": True}, "reg_sqrt"),
    ({"objective": "fair"}, "'fair' cannot be converted"),
    ({"objective": "mape"}, "'mape' cannot be converted"),
    ({"objective": "cross_entropy_lambda"}, "'cross_entropy_lambda' cannot be converted"),
])
def test_unsupported_models_are_refused(params, message):
    X, y = classification_data(2)
    booster = train(params, X, y, rounds=3)
    with pytest.raises(ValueError, match=f"LightGBM model: .*{re.escape(message)}"):
        from_lightgbm(booster)


def test_zero_as_missing_splits_that_one_node_cannot_hold_are_refused():
    X, y = regression_data()
    X[::3, 1] = 0.0
    booster = train({"zero_as_missing": True}, X, y)
    with pytest.raises(ValueError, match="zero-as-missing split .* retrain with zero_as_missing=False"):
        from_lightgbm(booster)


def lightgbm_zero_as_missing(x: float, threshold: float, default_left: bool) -> bool:
    """LightGBM's NumericalDecision with missing type Zero: True for left."""
    if np.isnan(x):
        x = 0.0
    if -ZERO_THRESHOLD <= x <= ZERO_THRESHOLD:
        return default_left
    return x <= threshold


def test_zero_as_missing_rewrite_is_exact_where_it_exists():
    z = ZERO_THRESHOLD
    edges = [-z, z, np.nextafter(-z, -np.inf), np.nextafter(z, np.inf), np.nextafter(-z, np.inf),
             np.nextafter(z, -np.inf), 0.0, -0.0, -1.0, 1.0, -1e-300, 1e-300]
    xs = [*edges, np.nan, -np.inf, np.inf]
    held = 0
    for threshold in edges:
        for default_left in (False, True):
            split = zero_as_missing_split(threshold, default_left)
            wanted = [lightgbm_zero_as_missing(x, threshold, default_left) for x in xs]
            if split is None:  # then no single node does it: the left side is two pieces
                assert not all(w == (x <= t) for t in edges for x, w in zip(xs, wanted) if not np.isnan(x))
                continue
            held += 1
            t, left = split
            assert [left if np.isnan(x) else x <= t for x in xs] == wanted, (threshold, default_left)
    assert held >= 14  # most cases are one node; the two refused are t > z right, t < -z left


def test_a_file_converts_without_lightgbm(tmp_path):
    """A path (or text) is read by boosters itself: it converts where lightgbm cannot be imported."""
    X, y = regression_data()
    booster = train({}, X, y)
    booster.save_model(tmp_path / "model.txt")
    np.save(tmp_path / "X.npy", held_out())
    script = ("import sys; sys.modules['lightgbm'] = None\n"  # import lightgbm now fails
              "import numpy as np\nfrom boosters.convert import from_lightgbm\n"
              f"model = from_lightgbm({str(tmp_path / 'model.txt')!r})\n"
              f"np.save({str(tmp_path / 'margins.npy')!r}, model.predict_raw(np.load({str(tmp_path / 'X.npy')!r})))\n")
    python_run("-c", script, check=True, timeout=120, cwd=tmp_path)  # not the repo root: its ./boosters has no compiled kernels
    np.testing.assert_allclose(np.load(tmp_path / "margins.npy"), booster.predict(held_out(), raw_score=True),
                               rtol=RTOL, atol=ATOL)


# -- hostile and damaged input -------------------------------------------------------------

@pytest.fixture(scope="module")
def model_text():
    X, y = categorical_data()
    return train({"min_data_per_group": 5, "cat_smooth": 1}, X, y, rounds=3, categorical_feature=[1]).model_to_string()


def pandas_line(text: str, value: str) -> str:
    return text.replace("pandas_categorical:null", "pandas_categorical:" + value)


def no_trees_with_a_million_classes(text: str) -> str:
    """A tiny file asking for a million outputs (each prediction would be a million floats)."""
    header = text.split("Tree=0")[0]
    for key, value in (("num_class", "1000000"), ("num_tree_per_iteration", "1000000"),
                       ("objective", "multiclass num_class:1000000")):
        header = replace_line(header, key, value)
    return header + "end of trees\n"


def replace_line(text: str, key: str, value: str) -> str:
    """The first `key=...` line's value replaced."""
    return re.sub(rf"^{key}=.*$", f"{key}={value}", text, count=1, flags=re.MULTILINE)


@pytest.mark.parametrize("edit, message", [
    (lambda s: "", "starts with the line 'tree'"),
    (lambda s: s[: len(s) // 2], "expected|ends|entries|lacks"),
    (lambda s: s.replace("end of trees", ""), "'end of trees'"),
    (lambda s: s.replace("Tree=1", "Tree=2"), "expected 'Tree=1'"),
    (lambda s: s.replace("num_leaves=", "num_leafs=", 1), "unknown key 'num_leafs'"),
    (lambda s: s.replace("version=v4", "version=v9"), "version 'v9'"),
    (lambda s: replace_line(s, "max_feature_idx", "99"), "feature_names has 3 entries"),
    (lambda s: replace_line(s, "max_feature_idx", "-5"), "max_feature_idx must be in"),
    (lambda s: replace_line(s, "num_class", "99999999999999999999999"), "not an integer"),
    (lambda s: replace_line(s, "num_leaves", "3000000000"), "num_leaves must be in"),
    (lambda s: replace_line(s, "num_leaves", "100"), "leaf_value has 8 entries, expected 100"),
    (lambda s: replace_line(s, "split_feature", "0 0 0 0 0 0 7"), "split_feature must be in \\[0, 2\\]"),
    (lambda s: replace_line(s, "split_feature", "0 0 0 0 0 1 0"), "feature 0 is both numeric and categorical"),
    (lambda s: s.replace("[categorical_feature: 1]", "[categorical_feature: 0,1]"), "feature 0 is both numeric"),
    (lambda s: replace_line(s, "left_child", "0 -2 -3 -4 -5 -6 -7"), "child must come after its parent"),
    (lambda s: replace_line(s, "right_child", "1 3 4 -5 -6 -7 -8"), "not the child of exactly one node"),
    (lambda s: replace_line(s, "left_child", "1 -2 -3 -4 -5 -6 -99"), "left_child must be in"),
    (lambda s: replace_line(s, "threshold", "nan nan nan nan nan nan nan"), "threshold is NaN"),
    (lambda s: replace_line(s, "threshold", "1 2 3 x 5 6 7"), "'x' is not a number"),
    (lambda s: replace_line(s, "threshold", "1_0 2 3 4 5 6 7"), "'1_0' is not a number"),
    (lambda s: replace_line(s, "leaf_value", "inf 1 2 3 4 5 6 7"), "value is not finite"),
    (lambda s: replace_line(s, "decision_type", "12 12 12 12 12 12 12"), "missing type 3"),
    (lambda s: replace_line(s, "decision_type", "99 0 0 0 0 0 0"), "decision_type must be in"),
    (lambda s: replace_line(s, "cat_boundaries", "1 2 4"), "cat_boundaries must run from 0"),
    (lambda s: replace_line(s, "cat_boundaries", "0 2 2"), "cat_boundaries must run from 0"),
    (lambda s: replace_line(s, "cat_boundaries", "0 2 3000"), "cat_boundaries must be in"),
    (lambda s: replace_line(s, "threshold", "2 0 0 0 0 0 0"), "index of one of its 2 category sets"),
    (lambda s: replace_line(s, "cat_threshold", "-1"), "cat_threshold must be in"),
    (lambda s: replace_line(s, "objective", "poisson sigmoid:1"), "unknown options"),
    (lambda s: replace_line(s, "objective", "xgboost"), "unknown objective 'xgboost'"),
    (lambda s: replace_line(s, "objective", "multiclass num_class:3"), "disagrees with num_class=1"),
    (lambda s: s.replace("num_tree_per_iteration=1", "num_tree_per_iteration=2"), "has 1 outputs"),
    (lambda s: no_trees_with_a_million_classes(s), "1000000 outputs .* but only 0 trees"),
    (lambda s: pandas_line(s, "[" * 100000 + "]" * 100000), "not valid JSON"),
    (lambda s: pandas_line(s, "[[1e999999]]"), "all strings or all integers"),
    (lambda s: pandas_line(s, "[[1.5, 2.5]]"), "all strings or all integers"),
    (lambda s: pandas_line(s, "[[1, 2], [3]]"), "2 category lists"),
    (lambda s: pandas_line(s, '{"a": 1}'), "list of lists"),
    (lambda s: s + "pandas_categorical:null\n", "a second 'pandas_categorical' section"),
    (lambda s: s + "\nsomething else\n", "unexpected 'something else'"),
    (lambda s: s.split("end of parameters")[0], "ends before 'end of parameters'"),
    (lambda s: s.replace("[boosting: gbdt]", "boosting gbdt"), "expected a parameter"),
    (lambda s: s.replace("[categorical_feature: 1]", "[categorical_feature: 5]"), "categorical_feature must"),
    (lambda s: replace_line(s, "objective", "lambdarank").replace("[lambdarank_truncation_level: 30]",
                                                                  "[lambdarank_truncation_level: inf]"),
     "lambdarank_truncation_level: 'inf' is not an integer"),
    (lambda s: replace_line(s, "objective", "quantile").replace("[alpha: 0.9]", "[alpha: nan]"), "alpha must be"),
])
def test_damaged_text_is_a_value_error(model_text, edit, message):
    broken = edit(model_text)
    assert broken != model_text
    with pytest.raises(ValueError, match=f"^LightGBM model: .*({message})"):
        from_lightgbm(broken)


@pytest.mark.parametrize("source, error", [
    (None, TypeError), (42, TypeError), (np.zeros(3), TypeError), (b"\xff\xfe", ValueError),
    (b"tree\nversion=v4\n", ValueError),
])
def test_other_arguments(source, error):
    with pytest.raises(error, match="booster_or_path|LightGBM model"):
        from_lightgbm(source)


def test_lightgbms_json_dump_is_refused_with_what_to_give_instead(tmp_path):
    """from_lightgbm reads the text model format; LightGBM's JSON dump (dump_model) gave a
    parse error, or an OSError when one line of JSON was taken for a path."""
    X, y = regression_data()
    booster = train({}, X, y, rounds=3)
    dump = booster.dump_model()
    (tmp_path / "model.json").write_text(json.dumps(dump, indent=2))
    (tmp_path / "model.txt").write_text(booster.model_to_string())
    marked = "\ufeff" + json.dumps(dump)  # after a byte-order mark, as editors on Windows write: taken for a path
    for source in (json.dumps(dump), json.dumps(dump, indent=2), json.dumps(dump).encode(), tmp_path / "model.json",
                   str(tmp_path / "model.json"), marked, marked.encode()):
        with pytest.raises(ValueError, match=r"^LightGBM model: this is JSON \(Booster.dump_model\); from_lightgbm "
                                             r"reads LightGBM's text model format, as Booster.model_to_string"):
            from_lightgbm(source)
    (tmp_path / "{run}").mkdir()
    (tmp_path / "{run}" / "model.txt").write_text(booster.model_to_string())
    for path in (tmp_path / "model.txt", str(tmp_path / "{run}" / "model.txt")):  # a path in braces is no JSON
        np.testing.assert_allclose(from_lightgbm(path).predict(X), booster.predict(X),
                                   rtol=RTOL, atol=ATOL)  # what it reads instead


def test_a_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        from_lightgbm(tmp_path / "absent.txt")


# -- fuzzing: a mutated text is refused, or predicts as LightGBM's rules say -------------------

def lightgbm_walk(tree: dict, x: np.ndarray) -> float:
    """One tree's output for row x by LightGBM's own rules (Tree::Decision in tree.h),
    from the text's fields: an oracle independent of the converter."""
    def numbers(key):
        return [float(v) for v in tree.get(key, "").split()]
    leaf_value = numbers("leaf_value")
    node, steps = 0, 0
    if int(tree["num_leaves"]) > 1:
        feature, threshold = numbers("split_feature"), numbers("threshold")
        decision = numbers("decision_type") if "decision_type" in tree else [0] * len(feature)  # LightGBM's default
        left, right = numbers("left_child"), numbers("right_child")
        boundaries, words = numbers("cat_boundaries"), numbers("cat_threshold")
        while node >= 0:
            steps += 1
            assert steps <= len(feature), "a walk longer than the tree: the converter accepted a cycle"
            v, d, t = x[int(feature[node])], int(decision[node]), threshold[node]
            if d & 1:  # categorical: NaN right; else truncated toward zero, a negative code right
                go_left = False
                if not np.isnan(v) and int(v) >= 0:
                    code, s = int(v), int(t)
                    set_words = words[int(boundaries[s]):int(boundaries[s + 1])]
                    go_left = code // 32 < len(set_words) and (int(set_words[code // 32]) >> (code % 32)) & 1 == 1
            else:
                missing = (d >> 2) & 3
                if np.isnan(v) and missing != 2:
                    v = 0.0
                if (missing == 1 and -ZERO_THRESHOLD <= v <= ZERO_THRESHOLD) or (missing == 2 and np.isnan(v)):
                    go_left = bool(d & 2)
                else:
                    go_left = v <= t
            node = int(left[node] if go_left else right[node])
        node = ~node
    if tree.get("is_linear", "0") != "1":
        return leaf_value[node]
    counts = [int(v) for v in tree["num_features"].split()]  # a linear leaf: NaN in a feature gives leaf_value
    start = sum(counts[:node])
    terms = zip(numbers("leaf_features")[start:start + counts[node]], numbers("leaf_coeff")[start:start + counts[node]])
    out = numbers("leaf_const")[node]
    for f, coef in terms:
        if np.isnan(x[int(f)]):
            return leaf_value[node]
        out += coef * x[int(f)]
    return out


def text_trees(text: str) -> list[dict]:
    """The key=value fields of every Tree=i block."""
    blocks = text.split("end of trees")[0].split("\nTree=")[1:]
    return [dict(line.split("=", 1) for line in block.split("\n")[1:] if "=" in line) for block in blocks]


FUZZ_ROWS = np.array([[0.3, 5.0, -1.0], [np.nan, 33.0, 0.0], [-0.2, np.nan, 2.0], [0.0, 0.0, np.nan],
                      [1e-36, 17.0, -1e-36], [2.5, 39.0, 0.7], [-3.0, -1.0, 1.5], [0.05, 100.0, -0.3]])
TOKEN = re.compile(r"(?<![A-Za-z_])(?:-?[0-9][0-9.e+-]*|nan|inf)")
REPLACEMENTS = ["0", "1", "-1", "2", "3", "7", "8", "-8", "-9", "15", "40", "2147483648", "nan", "inf", "-inf",
                "1e-35", "-1e-35", "9.99999e-36", "0.5", "-0.5", "1e308", "4294967295", "4294967296", "", "1 2"]


@pytest.fixture(scope="module")
def fuzz_texts():
    """Two small models: categorical splits and NaN; linear leaves."""
    X, y = categorical_data(n=300)
    X[::5, 0] = 0.0
    params = {"min_data_per_group": 5, "cat_smooth": 1, "num_leaves": 5}
    return {"categorical": train(params, X, y, rounds=3, categorical_feature=[1]).model_to_string(),
            "linear": train({**params, "linear_tree": True}, X, y, rounds=3).model_to_string()}


def mutate(text: str, data) -> str:
    """One random edit: a number of the trees replaced, a line dropped or repeated, the text cut."""
    kind = data.draw(hypothesis_st.sampled_from(["number", "number", "number", "drop", "repeat", "cut"]))
    if kind == "number":
        end = text.index("end of trees")
        matches = [m for m in TOKEN.finditer(text, 0, end)]
        m = matches[data.draw(hypothesis_st.integers(0, len(matches) - 1))]
        new = data.draw(hypothesis_st.sampled_from(REPLACEMENTS) | hypothesis_st.integers(-20, 20).map(str)
                        | hypothesis_st.floats(allow_nan=False).map(repr))
        return text[:m.start()] + new + text[m.end():]
    lines = text.split("\n")
    i = data.draw(hypothesis_st.integers(0, len(lines) - 1))
    if kind == "drop":
        return "\n".join(lines[:i] + lines[i + 1:])
    if kind == "repeat":
        return "\n".join(lines[:i + 1] + lines[i:])
    return text[:data.draw(hypothesis_st.integers(0, len(text)))]


@pytest.mark.parametrize("kind", ["categorical", "linear"])
@fuzz_settings(ci_examples=150)
@given(data=hypothesis_st.data())
def test_mutated_text_is_refused_or_predicts_as_lightgbm_rules_say(fuzz_texts, kind, data):
    text = mutate(fuzz_texts[kind], data)
    try:
        model = from_lightgbm(text.encode())  # bytes: always text (a str without a line break is a path)
    except ValueError as error:
        assert str(error).startswith("LightGBM model: ")
        event("refused")
        return
    event("converted")
    with np.errstate(over="ignore"):  # a mutated coefficient of 1e308 makes inf, in both
        expected = [sum(lightgbm_walk(tree, row) for tree in text_trees(text)) for row in FUZZ_ROWS]
    np.testing.assert_allclose(model.predict_raw(FUZZ_ROWS), expected, rtol=RTOL, atol=ATOL)
