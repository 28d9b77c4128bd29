"""boosters.dask's scikit-learn estimators on an in-process LocalCluster (2 workers x 1 thread).

They train with boosters.dask.train, so their models are compared tree by tree (every
field, bit for bit) and their predictions bit for bit against the in-memory
boosters.sklearn estimators on the concatenated data. Identity is the expected result,
not luck: quantized ("i16") histograms are integer sums, and the float64 ones here sum
float32 gradients of labels that are multiples of 1/8 (partial sums exact in float64),
so the order of addition does not show; the base score, a weighted mean, is exact for
these labels and the dyadic weights used below (see tests/dask/test_dask.py). Validation
scores are per-partition sums: equal to float64 rounding (rtol 1e-12).
"""

import pickle
import warnings

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import boosters as bst
from boosters.dask import DaskGBDTClassifier, DaskGBDTRanker, DaskGBDTRegressor, train
from boosters.sklearn import GBDTClassifier, GBDTRanker, GBDTRegressor
from support.dask_clusters import make_data
from support.tree_compare import assert_same_trees

CHUNKS = 350  # 1200 rows: partitions of 350, 350, 350, 150


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


def darr(values, chunks=CHUNKS):
    return da.from_array(values, chunks=(chunks, -1) if values.ndim == 2 else chunks)


def computed(client, lazy):
    return client.compute(lazy).result()


@pytest.mark.parametrize("mode", ["i16", "f64"])
def test_regressor_equals_dask_train_and_the_in_memory_regressor(client, mode):
    X, y = make_data()
    params = dict(n_estimators=3, max_depth=4, histogram_mode=mode, importance_type="split")
    est = DaskGBDTRegressor(**params, client=client).fit(darr(X), darr(y))
    assert_same_trees(est.booster_, train(client, darr(X), darr(y), est.config(bst.Objective.squared())))
    reference = GBDTRegressor(**params).fit(X, y)
    assert_same_trees(est.booster_, reference.booster_)
    assert est.booster_.trees[0].split_feature[0] >= 0  # the trees really split
    assert est.n_features_in_ == 5 and not hasattr(est, "feature_names_in_")
    assert est.best_iteration_ == 2 and est.evals_result_ == {}
    assert np.array_equal(est.feature_importances_, reference.feature_importances_)
    lazy = est.predict(darr(X))
    assert isinstance(lazy, da.Array) and lazy.chunks == ((350, 350, 350, 150),)  # the input's partitions
    assert np.array_equal(computed(client, lazy), reference.predict(X))
    assert est.score(darr(X), darr(y)) == reference.score(X, y)  # sklearn's R^2, on the gathered arrays


def test_classifier_maps_string_labels_back_and_equals_the_in_memory_classifier(client):
    X, y = make_data(seed=1)
    labels = np.where(y > 0, "yes", "no")
    params = dict(n_estimators=3, max_depth=4, histogram_mode="i16")
    clf = DaskGBDTClassifier(**params, client=client).fit(darr(X), darr(labels))
    reference = GBDTClassifier(**params).fit(X, labels)
    assert np.array_equal(clf.classes_, reference.classes_) and clf.classes_.dtype == reference.classes_.dtype
    assert clf.n_classes_ == 2
    assert_same_trees(clf.booster_, reference.booster_)
    proba = clf.predict_proba(darr(X))
    assert proba.chunks == ((350, 350, 350, 150), (2,))
    assert np.array_equal(computed(client, proba), reference.predict_proba(X))
    assert np.array_equal(computed(client, clf.decision_function(darr(X))), reference.decision_function(X))
    predicted = clf.predict(darr(X))
    assert predicted.dtype == reference.classes_.dtype and predicted.numblocks == (4,)
    assert np.array_equal(computed(client, predicted), reference.predict(X))
    assert set(computed(client, predicted)) == {"yes", "no"}
    assert clf.score(darr(X), darr(labels)) == reference.score(X, labels)


@pytest.mark.parametrize("objective", [None, pytest.param("one_vs_rest", marks=pytest.mark.slow),
                                       pytest.param("softmax", marks=pytest.mark.slow)])
def test_three_classes_equal_the_in_memory_classifier(client, objective):
    # softmax by default for more than two classes (or the named objective, one output
    # per class); "balanced" class weights of 400 rows per class are exactly 1
    X, y = make_data(seed=20)
    labels = np.array(["low", "mid", "top"])[np.argsort(np.argsort(y, kind="stable")) // 400]  # 400 each
    params = dict(n_estimators=3, max_depth=3, histogram_mode="i16", objective=objective, class_weight="balanced")
    clf = DaskGBDTClassifier(**params, client=client).fit(darr(X), darr(labels))
    reference = GBDTClassifier(**params).fit(X, labels)
    assert list(clf.classes_) == ["low", "mid", "top"] and clf.n_classes_ == 3
    assert clf.booster_.objective == reference.booster_.objective
    assert clf.booster_.n_trees == 9
    assert_same_trees(clf.booster_, reference.booster_)
    proba = clf.predict_proba(darr(X))
    assert proba.chunks == ((350, 350, 350, 150), (3,))
    assert np.array_equal(computed(client, proba), reference.predict_proba(X))  # the numbers, bit for bit
    margins = clf.decision_function(darr(X))
    assert margins.chunks == ((350, 350, 350, 150), (3,))
    assert np.array_equal(computed(client, margins), reference.decision_function(X))
    assert np.array_equal(computed(client, clf.predict(darr(X))), reference.predict(X))
    assert len(set(reference.predict(X))) == 3


@pytest.mark.parametrize("objective", ["poisson", "absolute", pytest.param("huber", marks=pytest.mark.slow),
                                       pytest.param("gamma", marks=pytest.mark.slow),
                                       pytest.param("tweedie", marks=pytest.mark.slow)])
def test_regression_objectives_equal_the_in_memory_regressor(client, objective):
    X, y = make_data(seed=21)
    y = np.abs(y) + 0.125  # > 0, multiples of 1/8: exact mean
    params = dict(n_estimators=3, max_depth=3, histogram_mode="i16", objective=objective)
    est = DaskGBDTRegressor(**params, client=client).fit(darr(X), darr(y))
    reference = GBDTRegressor(**params).fit(X, y)
    assert est.booster_.objective.name == objective
    assert_same_trees(est.booster_, reference.booster_)
    assert np.array_equal(computed(client, est.predict(darr(X))), reference.predict(X))


@pytest.mark.parametrize("class_weight", ["balanced", {0: 1.0, 1: 3.0}])
def test_class_weight_and_sample_weight_as_the_in_memory_classifier(client, class_weight):
    # exactly 400 of 1200 rows in class 1: "balanced" weighs 0.75 and 1.5, exact in float64
    X, y = make_data(seed=2)
    labels = (np.argsort(np.argsort(y, kind="stable")) >= 800).astype(np.int64)
    weights = np.random.default_rng(3).integers(0, 4, size=len(y)).astype(np.float64)
    params = dict(n_estimators=3, max_depth=3, histogram_mode="i16", class_weight=class_weight)
    clf = DaskGBDTClassifier(**params, client=client).fit(darr(X), darr(labels), sample_weight=darr(weights))
    reference = GBDTClassifier(**params).fit(X, labels, sample_weight=weights)
    assert_same_trees(clf.booster_, reference.booster_)
    assert np.array_equal(computed(client, clf.predict_proba(darr(X))), reference.predict_proba(X))


def test_dataframes_keep_feature_names_and_take_columns_by_name(client):
    X, y = make_data(seed=4)
    names = [f"f{j}" for j in range(5)]
    frame = pd.DataFrame(X, columns=names)
    params = dict(n_estimators=3, max_depth=3, histogram_mode="i16")
    est = DaskGBDTRegressor(**params, client=client).fit(dd.from_pandas(frame, npartitions=3),
                                                          dd.from_pandas(pd.Series(y), npartitions=3))
    reference = GBDTRegressor(**params).fit(frame, y)
    assert list(est.feature_names_in_) == names == list(reference.feature_names_in_)
    assert est.booster_.feature_names == names
    assert_same_trees(est.booster_, reference.booster_)
    shuffled = dd.from_pandas(frame[names[::-1]], npartitions=4)  # columns taken by name
    lazy = est.predict(shuffled)
    assert isinstance(lazy, da.Array) and lazy.numblocks == (4,)  # one block per partition of the frame
    assert np.array_equal(computed(client, lazy), reference.predict(frame))
    # a filter that empties the middle partition: it predicts no rows
    parts = dd.from_pandas(frame, npartitions=3)
    kept = (frame.index < 300) | (frame.index >= 900)
    filtered = parts[dd.from_pandas(pd.Series(kept), npartitions=3)]
    assert computed(client, filtered.map_partitions(len)).tolist() == [300, 0, 300]
    assert np.array_equal(computed(client, est.predict(filtered)), reference.predict(frame[kept]))
    # a Series of strings as labels (pandas' string dtype), without Dask's warning on converting it
    words = pd.Series(np.where(y > 0, "b", "a"), dtype="string")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        clf = DaskGBDTClassifier(**params, client=client).fit(dd.from_pandas(frame, npartitions=3),
                                                             dd.from_pandas(words, npartitions=3))
    reference = GBDTClassifier(**params).fit(frame, words)
    assert list(clf.classes_) == ["a", "b"]
    assert_same_trees(clf.booster_, reference.booster_)
    assert list(computed(client, clf.predict(shuffled))) == list(reference.predict(frame))


def test_category_columns_are_categorical_features(client):
    # pandas category columns of a Dask DataFrame: the in-memory estimator's categorical
    # features (the same categories, trees and category sets); prediction codes a frame's
    # category columns by value, so a frame whose dtype lists them in another order predicts the same
    rng = np.random.default_rng(21)
    n = 1200
    colour = rng.integers(0, 5, size=n)
    x = rng.normal(size=n)
    y = np.round(8 * (x + np.array([-2.0, 1.0, 0.0, 2.0, -1.0])[colour] + 0.3 * rng.normal(size=n))) / 8
    frame = pd.DataFrame({"x": x, "colour": pd.Categorical(np.array(list("abcde"))[colour])})
    params = dict(n_estimators=3, max_depth=3, histogram_mode="i16")
    est = DaskGBDTRegressor(**params, client=client).fit(dd.from_pandas(frame, npartitions=3),
                                                          dd.from_pandas(pd.Series(y), npartitions=3))
    reference = GBDTRegressor(**params).fit(frame, y)
    assert est.booster_.categorical_features == reference.booster_.categorical_features == [1]
    assert_same_trees(est.booster_, reference.booster_)
    assert any((np.asarray(t.category_set) >= 0).any() for t in est.booster_.forest.trees)
    reordered = frame.assign(colour=frame["colour"].cat.reorder_categories(list("edcba")))
    assert np.array_equal(computed(client, est.predict(dd.from_pandas(reordered, npartitions=4))),
                          reference.predict(frame))


@pytest.mark.parametrize("estimator", [pytest.param("regressor", marks=pytest.mark.slow), "classifier",
                                       pytest.param("multiclass", marks=pytest.mark.slow)])
def test_eval_set_early_stopping_gives_best_iteration(client, estimator):
    X, y = make_data(n=1600, seed=6)
    if estimator == "classifier":
        y = np.where(y > 0, "up", "down")
    if estimator == "multiclass":
        y = np.array(["down", "flat", "up"])[np.digitize(y, [-1.0, 1.0])]
    params = dict(n_estimators=60, max_depth=3, learning_rate=1.0, early_stopping_rounds=2, histogram_mode="i16")
    dask_class, local_class = ((DaskGBDTRegressor, GBDTRegressor) if estimator == "regressor" else
                               (DaskGBDTClassifier, GBDTClassifier))
    est = dask_class(**params, client=client).fit(darr(X[:1200]), darr(y[:1200]),
                                                  eval_set=[(darr(X[1200:], 150), darr(y[1200:], 150))])
    reference = local_class(**params).fit(X[:1200], y[:1200], eval_set=(X[1200:], y[1200:]))
    metric = {"regressor": "rmse", "classifier": "logloss", "multiclass": "multiclass_logloss"}[estimator]
    scores = reference.evals_result_["valid"][metric]
    assert len(scores) < 60 and len(scores) > reference.best_iteration_ + 1  # it did stop early
    assert est.best_iteration_ == reference.best_iteration_ and est.booster_.n_trees == reference.booster_.n_trees
    assert_same_trees(est.booster_, reference.booster_)
    assert list(est.evals_result_) == ["valid"] and list(est.evals_result_["valid"]) == [metric]
    np.testing.assert_allclose(est.evals_result_["valid"][metric], reference.evals_result_["valid"][metric],
                               rtol=1e-12)


def test_get_params_set_params_clone_and_pickle(client):
    clf = DaskGBDTClassifier(n_estimators=4, class_weight="balanced", client=client)
    params = clf.get_params()
    assert set(params) == set(GBDTClassifier().get_params()) | {"client", "steps"}
    assert params["client"] is client and params["n_estimators"] == 4 and params["class_weight"] == "balanced"
    copy = clone(clf)
    assert copy is not clf and copy.client is client and copy.get_params() == params  # the client is shared
    assert clf.set_params(max_depth=2) is clf and clf.max_depth == 2
    with pytest.raises(ValueError, match="bogus"):
        clf.set_params(bogus=1)
    with pytest.raises(TypeError, match="bogus"):
        DaskGBDTRegressor(bogus=1)
    X, y = make_data(n=400, seed=8)
    clf.fit(darr(X, 100), darr(y > 0, 100))
    restored = pickle.loads(pickle.dumps(clf))  # the client is left out
    assert restored.client is None and restored.max_depth == 2
    assert np.array_equal(computed(client, restored.predict_proba(darr(X, 100))),
                          computed(client, clf.predict_proba(darr(X, 100))))
    assert "Threads of each partition's training and prediction tasks" in DaskGBDTRegressor.__doc__  # not in-memory


def test_the_default_client(client):
    X, y = make_data(n=400, seed=9)
    with client.as_current():
        est = DaskGBDTRegressor(n_estimators=2).fit(darr(X, 100), darr(y, 100))
    assert est.client is None and est.booster_.n_trees == 2


def test_bad_input(client):
    X, y = make_data(n=200, seed=10)
    Xd, yd = darr(X, 100), darr(y, 100)
    est = DaskGBDTRegressor(n_estimators=2, client=client)
    with pytest.raises(TypeError, match="X must be a 2-D dask.array.Array or a dask.dataframe.DataFrame, got ndarray"):
        est.fit(X, yd)
    with pytest.raises(TypeError, match="y must be a 1-D dask.array.Array"):
        est.fit(Xd, y)
    with pytest.raises(TypeError, match="sample_weight must be a 1-D dask.array.Array"):
        est.fit(Xd, yd, sample_weight=np.ones(200))
    with pytest.raises(ValueError, match="y has 199 rows but X has 200"):
        est.fit(Xd, yd[:199])
    with pytest.raises(ValueError, match="eval_set must be an"):
        est.fit(Xd, yd, eval_set=[Xd, yd])
    with pytest.raises(ValueError, match="eval_set must be an"):
        est.fit(Xd, yd, eval_set=[Xd])
    with pytest.raises(ValueError, match="eval_set X has 4 features"):
        est.fit(Xd, yd, eval_set=(Xd[:, :4], yd))
    with pytest.raises(ValueError, match="weights: .*unweighted"):
        DaskGBDTRegressor(objective="absolute", client=client).fit(Xd, yd, sample_weight=yd * 0 + 1)
    with pytest.raises(ValueError, match="n_threads must be >= 0"):
        DaskGBDTRegressor(n_threads=-1, client=client).fit(Xd, yd)
    with pytest.raises(ValueError, match="importance_type"):
        DaskGBDTRegressor(importance_type="bogus", client=client).fit(Xd, yd)
    with pytest.raises(ValueError, match="max_depth"):
        DaskGBDTRegressor(max_depth=-3, client=client).fit(Xd, yd)
    with pytest.raises(TypeError, match="client must be a distributed.Client or None, got str"):
        DaskGBDTRegressor(client="tcp://nowhere").fit(Xd, yd)
    with pytest.raises(ValueError, match="X: column 'c' has dtype"):
        est.fit(dd.from_pandas(pd.DataFrame(X).assign(c="x"), npartitions=2), yd)
    with pytest.raises(NotFittedError):
        est.predict(Xd)
    est.fit(Xd, yd)
    with pytest.raises(ValueError, match="X has 4 features, but DaskGBDTRegressor was fitted with 5"):
        est.predict(Xd[:, :4])
    named = DaskGBDTRegressor(n_estimators=2, client=client).fit(
        dd.from_pandas(pd.DataFrame(X, columns=list("abcde")), npartitions=2), yd)
    with pytest.raises(ValueError, match="X must have the columns of fit"):
        named.predict(dd.from_pandas(pd.DataFrame(X, columns=list("abcdz")), npartitions=2))

    clf = DaskGBDTClassifier(n_estimators=2, client=client)
    with pytest.raises(ValueError, match="objective Objective.logistic.. has 1 outputs; y has 3 classes"):
        DaskGBDTClassifier(objective=bst.Objective.logistic(), client=client).fit(Xd, darr(np.arange(200) % 3, 100))
    with pytest.raises(ValueError, match="y has 1 class; a classifier needs at least 2"):
        clf.fit(Xd, darr(np.zeros(200), 100))
    with pytest.raises(ValueError, match="Unknown label type"):
        clf.fit(Xd, yd)  # continuous
    with pytest.raises(ValueError, match="labels not seen in training"):
        clf.fit(Xd, darr(y > 0, 100), eval_set=(Xd, darr(np.where(y > 0, 1, 2), 100)))
    with pytest.raises(ValueError, match="class_weight"):
        DaskGBDTClassifier(class_weight="bogus", client=client).fit(Xd, darr(y > 0, 100))


@pytest.mark.slow
def test_process_workers():
    # the label coding, the class weights and the prediction tasks travel to other
    # processes (pickled): the same model and predictions as in memory
    X, y = make_data(seed=11)
    labels = np.where(y > 0, "up", "down")
    params = dict(n_estimators=2, max_depth=3, histogram_mode="i16", class_weight={"up": 2.0})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        clf = DaskGBDTClassifier(**params, client=client).fit(darr(X), darr(labels))
        predicted = computed(client, clf.predict(darr(X)))
        proba = computed(client, clf.predict_proba(darr(X)))
    reference = GBDTClassifier(**params).fit(X, labels)
    assert_same_trees(clf.booster_, reference.booster_)
    assert np.array_equal(proba, reference.predict_proba(X)) and np.array_equal(predicted, reference.predict(X))


def test_ranker_equals_the_in_memory_ranker(client):
    # queries of 20 rows, 5 in each partition: each partition computes its queries' gradients
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 4))
    y = np.clip(np.round(X[:, 0] - X[:, 1] + rng.normal(size=400) + 1.5), 0, 3)
    qid = np.repeat(np.arange(20), 20)
    for objective in ("lambdarank", "pairwise"):
        params = dict(n_estimators=3, max_depth=3, objective=objective, ndcg_at=5)
        est = DaskGBDTRanker(**params, client=client).fit(darr(X, 100), darr(y, 100), qid=darr(qid, 100))
        reference = GBDTRanker(**params).fit(X, y, qid=qid)
        assert est.booster_.objective == reference.booster_.objective
        assert_same_trees(est.booster_, reference.booster_)
        assert np.array_equal(computed(client, est.predict(darr(X))), reference.predict(X))
    # early stopping on NDCG@5 of an eval_set, as the in-memory ranker
    params = dict(n_estimators=30, max_depth=3, learning_rate=0.5, ndcg_at=5, early_stopping_rounds=2)
    est = DaskGBDTRanker(**params, client=client).fit(darr(X[:300], 100), darr(y[:300], 100), qid=darr(qid[:300], 100),
                                                      eval_set=(darr(X[300:], 40), darr(y[300:], 40)),
                                                      eval_qid=darr(qid[300:], 40))
    reference = GBDTRanker(**params).fit(X[:300], y[:300], qid=qid[:300], eval_set=[(X[300:], y[300:])],
                                         eval_qid=qid[300:])
    assert est.best_iteration_ == reference.best_iteration_ < 29
    assert_same_trees(est.booster_, reference.booster_)
    np.testing.assert_allclose(est.evals_result_["valid"]["ndcg@5"], reference.evals_result_["valid"]["ndcg@5"],
                               rtol=1e-12)
    with pytest.raises(ValueError, match="eval_qid: give the eval_set rows' query ids"):
        DaskGBDTRanker(n_estimators=1, client=client).fit(darr(X, 100), darr(y, 100), qid=darr(qid, 100),
                                                          eval_set=(darr(X, 100), darr(y, 100)))
    with pytest.raises(ValueError, match="qid: query 1 has rows in more than one partition"):
        DaskGBDTRanker(n_estimators=1, client=client).fit(darr(X, 100), darr(y, 100),
                                                          qid=darr(np.repeat(np.arange(5), 80), 100))
