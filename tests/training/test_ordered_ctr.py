"""cat_encoding="ordered_ctr" end to end: the trees grow on the ordered statistics (the
numeric path, one engine), any other data reads the full-data tables, the model keeps
them through save/load, and what cannot work is refused naming both options."""

import json
import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse

import boosters as bst
from boosters.convert import to_xgboost_json
from boosters.dask.training import check_config
from boosters.data.target_statistics import fit_statistics
from boosters.sklearn import GBDTClassifier

CTR = dict(cat_encoding="ordered_ctr")


def _frame(n, seed=0, n_cities=30):
    rng = np.random.default_rng(seed)
    effect = np.random.default_rng(99).normal(size=n_cities)
    city = rng.integers(0, n_cities, n)
    x = rng.normal(size=n)
    y = (effect[city] + x + rng.normal(size=n) > 0).astype(float)
    names = np.array([f"c{i:02d}" for i in range(n_cities)], dtype=object)[city]
    names[rng.random(n) < 0.05] = None
    return pd.DataFrame({"x": x, "city": pd.Categorical(names)}), y


def _logloss(p, y):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def _config(**changes):
    return bst.GBDTConfig(**{**dict(n_estimators=20, max_depth=4, objective=bst.Objective.logistic(), **CTR),
                             **changes})


def test_the_trees_grow_on_the_ordered_statistics_and_predict_reads_the_tables():
    """One engine: the model equals a default training on the encoded matrix (numeric),
    and predicting raw frames equals predicting the tables' values."""
    X, y = _frame(3000)
    data = bst.Dataset(X, y)
    model = bst.GBDTModel.train(data, _config(), n_threads=1)
    encoded, tables = fit_statistics(data.X, y, data.categorical_features, data.categories, 1.0, seed=42)
    reference = bst.GBDTModel.train(bst.Dataset(encoded, y, feature_names=["x", "city"]),
                                    _config(cat_encoding="splits"), n_threads=1)
    assert [t.split_feature.tolist() for t in model.trees] == [t.split_feature.tolist() for t in reference.trees]
    np.testing.assert_array_equal(model.ensemble.target_statistics[1], tables[1])
    X_test, _ = _frame(500, seed=1)
    codes = bst.Dataset(X_test).features_for(2, ["x", "city"], data.categories)
    table = tables[1]
    want = np.where(np.isnan(codes[:, 1]), np.nan, table[np.nan_to_num(codes[:, 1], nan=0).astype(int)])
    np.testing.assert_array_equal(model.predict(X_test), reference.predict(np.column_stack([codes[:, 0], want])))


def test_unseen_and_missing_categories():
    """An unseen value reads the prior (the table's last entry), a missing one the
    numeric split's missing side, in a frame, a Dataset and integer codes alike."""
    X, y = _frame(2000)
    model = bst.GBDTModel.train(bst.Dataset(X, y), _config(), n_threads=1)
    table = model.ensemble.target_statistics[1]
    assert table[-1] == pytest.approx(y.mean())
    rows = pd.DataFrame({"x": [0.3, 0.3, 0.3], "city": pd.Categorical(["zz_unseen", None, "c03"])})
    numeric = np.array([[0.3, table[-1]], [0.3, np.nan], [0.3, table[3]]])
    reference = bst.GBDTModel.train(bst.Dataset(*_encoded(X, y)), _config(cat_encoding="splits"), n_threads=1)
    np.testing.assert_array_equal(model.predict(rows), reference.predict(numeric))
    np.testing.assert_array_equal(model.predict(bst.Dataset(rows)), reference.predict(numeric))
    # integer codes: a code past the training's is unseen
    codes = bst.Dataset(X).X
    before = codes.copy()
    by_code = bst.GBDTModel.train(bst.Dataset(codes, y, categorical_features=[1]), _config(), n_threads=1)
    np.testing.assert_array_equal(codes, before)  # the caller's codes are not replaced
    assert len(by_code.ensemble.target_statistics[1]) == 31
    got = by_code.predict(np.array([[0.3, 500.0], [0.3, np.nan], [0.3, 3.0]]))
    np.testing.assert_array_equal(got, reference.predict(numeric))


def _encoded(X, y):
    data = bst.Dataset(X, y)
    return fit_statistics(data.X, y, data.categorical_features, data.categories, 1.0, seed=42)[0], y


def test_no_target_leakage_through_an_id_like_column():
    """A column with a category per one or two rows and a target independent of it: the
    ordered statistic leaves the validation loss where the model without it is, while
    the greedy statistic (each training row's own target in its category's mean) makes
    the trees trust it and the validation loss worse."""
    rng = np.random.default_rng(5)
    n = 6000
    x = rng.normal(size=n)
    y = (x + rng.normal(size=n) > 0).astype(float)
    ids = rng.integers(0, 4000, n).astype(float)
    train, valid = slice(0, 4000), slice(4000, n)
    config = _config(n_estimators=60, learning_rate=0.1)

    def val_loss(model, X):
        return _logloss(model.predict(X[valid]), y[valid])

    X = np.column_stack([x, ids])
    without = val_loss(bst.GBDTModel.train(bst.Dataset(x[train, None], y[train]), config, n_threads=1),
                       x[:, None])
    ordered = bst.GBDTModel.train(bst.Dataset(X[train], y[train], categorical_features=[1]), config, n_threads=1)
    table = ordered.ensemble.target_statistics[1]
    greedy_X = np.column_stack([x, table[ids.astype(int)]])  # the full-data statistic on the training rows
    greedy = bst.GBDTModel.train(bst.Dataset(greedy_X[train], y[train]), config.replace(cat_encoding="splits"),
                                 n_threads=1)
    valid_X = greedy_X.copy()  # validation rows read the same table either way
    assert val_loss(ordered, X) < without + 0.01
    assert val_loss(greedy, valid_X) > without + 0.3  # measured: +0.0024 ordered, +1.04 greedy
    gain = ordered.feature_importance("gain")
    assert gain[1] < 0.2 * gain[0]  # the trees barely use the ordered statistic


def test_predict_after_save_and_load_in_both_formats(tmp_path):
    X, y = _frame(2000)
    model = bst.GBDTModel.train(bst.Dataset(X, y), _config(ctr_prior_weight=2.5), n_threads=1)
    X_test, _ = _frame(300, seed=3)
    X_test.loc[0, "city"] = None
    X_test["city"] = X_test["city"].cat.add_categories(["new"])
    X_test.loc[1, "city"] = "new"
    expected = model.predict(X_test)
    for name in ("m.npz", "m.json"):
        model.save(tmp_path / name)
        loaded = bst.GBDTModel.load(tmp_path / name)
        np.testing.assert_array_equal(loaded.predict(X_test), expected)
        assert loaded.config.cat_encoding == "ordered_ctr" and loaded.config.ctr_prior_weight == 2.5
        np.testing.assert_array_equal(loaded.ensemble.target_statistics[1], model.ensemble.target_statistics[1])
    np.testing.assert_array_equal(model[:5].predict(X_test), bst.GBDTModel.load(tmp_path / "m.npz")[:5].predict(X_test))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X_test), expected)


def test_a_file_with_a_bad_table_is_refused():
    X, y = _frame(500)
    model = bst.GBDTModel.train(bst.Dataset(X, y), _config(n_estimators=2), n_threads=1)
    doc = json.loads(model.to_json_bytes())
    n = len(model.ensemble.target_statistics[1])
    for change, message in [(lambda t: t["tables"][0].append(0.5), f"must hold {n} numbers"),
                            (lambda t: t.update(features=[0]), "categorical features"),
                            (lambda t: t.update(tables=[]), "one table per feature"),
                            (lambda t: t.update(extra=1), "'features' and 'tables'")]:
        bad = json.loads(json.dumps(doc))
        change(bad["target_statistics"])
        with pytest.raises(ValueError, match=message):
            bst.GBDTModel.from_json_bytes(json.dumps(bad))


def test_the_same_model_at_one_and_two_threads():
    X, y = _frame(4000)
    one = bst.GBDTModel.train(bst.Dataset(X, y), _config(subsample=0.8), n_threads=1)
    two = bst.GBDTModel.train(bst.Dataset(X, y), _config(subsample=0.8), n_threads=2)
    assert one.to_json_bytes() == two.to_json_bytes()


def test_validation_sets_read_the_full_data_tables():
    X, y = _frame(3000)
    train, valid = bst.Dataset(X[:2000], y[:2000]), bst.Dataset(X[2000:], y[2000:])
    model = bst.GBDTModel.train(train, _config(), val_set=valid, n_threads=1)
    assert model.best_score == pytest.approx(_logloss(model.predict(X[2000:]), y[2000:]), rel=1e-9)


def test_shap_and_importance_attribute_to_the_original_column():
    X, y = _frame(2000)
    model = bst.GBDTModel.train(bst.Dataset(X, y), _config(), n_threads=1)
    shap = model.shap_values(X[:50])
    assert shap.shape == (50, 3)
    np.testing.assert_allclose(shap.sum(axis=1), model.predict_raw(X[:50]), rtol=1e-9, atol=1e-9)
    assert np.abs(shap[:, 1]).mean() > 0.1
    assert model.feature_importance("gain")[1] > 0
    assert model.trees_to_dataframe()["split_feature"].isin(["city"]).any()


def test_regression_refit_sklearn_and_the_callers_data_unchanged():
    X, y = _frame(2000)
    target = y + X["x"].to_numpy()
    before = X.copy()
    model = bst.GBDTModel.train(bst.Dataset(X, target), _config(objective=bst.Objective.squared()), n_threads=1)
    pd.testing.assert_frame_equal(X, before)
    assert np.mean((model.predict(X) - target) ** 2) < np.var(target)
    refitted = model.refit(X, target + 1.0, decay_rate=0.0)
    assert refitted.predict(X).mean() > model.predict(X).mean() + 0.5
    clf = GBDTClassifier(n_estimators=10, cat_encoding="ordered_ctr", n_threads=1).fit(X, y)
    assert clf.booster_.ensemble.target_statistics and clf.predict_proba(X).shape == (len(X), 2)


def test_refusals_name_both_options():
    X, y = _frame(600)
    data = bst.Dataset(X, y)
    with pytest.raises(ValueError, match="cat_encoding must be 'splits' or 'ordered_ctr'"):
        bst.GBDTConfig(cat_encoding="ordered")
    with pytest.raises(ValueError, match="ctr_prior_weight"):
        bst.GBDTConfig(ctr_prior_weight=0.0)
    with pytest.raises(ValueError, match="ordered_ctr.*3 outputs.*splits"):
        bst.GBDTModel.train(bst.Dataset(X, np.arange(600) % 3), _config(objective=bst.Objective.softmax(3)))
    with pytest.raises(ValueError, match="ordered_ctr.*ranking.*splits"):
        bst.GBDTModel.train(bst.Dataset(X, y, group=[300, 300]), _config(objective=bst.Objective.lambdarank()))
    model = bst.GBDTModel.train(data, _config(n_estimators=2), n_threads=1)
    with pytest.raises(ValueError, match="init_model.*ordered_ctr"):
        bst.GBDTModel.train(data, _config(cat_encoding="splits", n_estimators=2), init_model=model)
    plain = bst.GBDTModel.train(data, _config(cat_encoding="splits", n_estimators=2), n_threads=1)
    with pytest.raises(ValueError, match="init_model.*ordered_ctr"):
        bst.GBDTModel.train(data, _config(n_estimators=2), init_model=plain)
    with pytest.raises(ValueError, match="cannot export to XGBoost.*ordered_ctr.*splits"):
        to_xgboost_json(model)
    with pytest.raises(ValueError, match="shap's tree format"):
        model.to_shap_trees()
    with pytest.raises(ValueError, match="ordered_ctr.*scipy.sparse"):
        model.predict(scipy.sparse.csr_matrix(np.ones((2, 2))))
    with pytest.raises(ValueError, match="boosters.dask.*ordered_ctr.*splits"):
        check_config(_config())


def test_without_categorical_features_the_option_changes_nothing():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = X[:, 0] + rng.normal(size=500)
    a = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, **CTR), n_threads=1)
    b = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5), n_threads=1)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert not a.ensemble.target_statistics


def test_boosters_dask_predicts_a_model_of_ordered_statistics():
    """boosters.dask codes a Dask DataFrame's partitions as predict codes a frame (an
    unseen category: the prior, not missing)."""
    import dask.dataframe as dd
    from boosters.dask import predict

    X, y = _frame(1500)
    model = bst.GBDTModel.train(bst.Dataset(X, y), _config(), n_threads=1)
    X_test, _ = _frame(200, seed=4)
    X_test["city"] = X_test["city"].cat.add_categories(["new"])
    X_test.loc[:20, "city"] = "new"
    lazy = predict(model, dd.from_pandas(X_test, npartitions=3))
    np.testing.assert_array_equal(lazy.compute(scheduler="sync"), model.predict(X_test))


def test_a_feature_of_few_categories_keeps_its_category_splits():
    """As CatBoost's one_hot_max_size: at most max_onehot_cats categories, category splits."""
    X, y = _frame(2000)
    X["size"] = pd.Categorical(np.array(["s", "m", "l"])[np.arange(2000) % 3])
    y = y * (X["size"] != "s").to_numpy()
    model = bst.GBDTModel.train(bst.Dataset(X, y), _config(), n_threads=1)
    assert sorted(model.ensemble.target_statistics) == [1] and model.categorical_features == [1, 2]
    splits = model.trees_to_dataframe()
    assert (splits["decision_type"] == "in").any() and set(splits.loc[splits["decision_type"] == "in",
                                                                      "split_feature"]) == {"size"}
    # its unseen values go where its missing ones do (the category split's rule)
    rows = pd.DataFrame({"x": [0.1, 0.1], "city": ["c01", "c01"], "size": ["xl", None]})
    assert model.predict(rows)[0] == model.predict(rows)[1]
    every = bst.GBDTModel.train(bst.Dataset(X, y), _config(max_onehot_cats=0), n_threads=1)
    assert sorted(every.ensemble.target_statistics) == [1, 2]
    for m in (model, every):
        np.testing.assert_array_equal(bst.GBDTModel.from_json_bytes(m.to_json_bytes()).predict(X), m.predict(X))
