"""The scikit-learn estimators' `objective` parameter: a name, an Objective or a callable,
giving the same model as GBDTModel.train with that objective."""

import numpy as np
import pytest
from sklearn.base import clone

import boosters as bst
from boosters.sklearn import REGRESSION_OBJECTIVES, GBDTClassifier, GBDTRanker, GBDTRegressor

N_THREADS = 2


def positive_regression(n=400, seed=0):
    """Positive skewed targets: every regression objective accepts them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, np.exp(0.5 * X[:, 0] + 0.3 * rng.normal(size=n))


def same_model(estimator, X, y, objective, **fit):
    """The estimator's predictions and those of GBDTModel.train with `objective`."""
    estimator.fit(X, y, **fit)
    config = bst.GBDTConfig(n_estimators=estimator.n_estimators, objective=objective)
    return estimator, bst.GBDTModel.train(bst.Dataset(X, y, **fit), config, n_threads=N_THREADS)


AVAILABLE = [name for name in REGRESSION_OBJECTIVES if hasattr(bst.Objective, name)]


@pytest.mark.parametrize("name", AVAILABLE)
def test_regressor_objective_by_name(name):
    """Each name is Objective.<name>() with its defaults: the estimator's model is exactly
    GBDTModel.train's (same predictions, after the objective's output transform)."""
    X, y = positive_regression()
    est, model = same_model(GBDTRegressor(n_estimators=5, objective=name, n_threads=N_THREADS), X, y,
                            getattr(bst.Objective, name)())
    assert est.booster_.objective == getattr(bst.Objective, name)()
    np.testing.assert_array_equal(est.predict(X), model.predict(X))


def test_regressor_objective_as_an_objective_and_the_evals_result_metric():
    X, y = positive_regression()
    est = GBDTRegressor(n_estimators=5, objective=bst.Objective.tweedie(1.2), n_threads=N_THREADS)
    est.fit(X[:300], y[:300], eval_set=(X[300:], y[300:]))
    assert est.booster_.objective == bst.Objective.tweedie(1.2)
    assert list(est.evals_result_["valid"]) == ["tweedie_deviance@1.2"]  # the objective's default metric
    assert np.all(est.predict(X) > 0)  # exp(margin)


def squared_error(margins, dataset):
    return margins - dataset.y, np.ones_like(margins)


def test_regressor_callable_objective_is_a_custom_objective():
    X, y = positive_regression()
    est, model = same_model(GBDTRegressor(n_estimators=5, objective=squared_error, n_threads=N_THREADS), X, y,
                            bst.Objective.custom(squared_error))
    assert est.booster_.objective == bst.Objective.custom(squared_error)
    np.testing.assert_array_equal(est.predict(X), model.predict(X))
    assert clone(est).get_params()["objective"] is squared_error


@pytest.mark.parametrize("objective, error, message", [
    ("bogus", ValueError, "objective must be one of \\['squared'"),
    ("logistic", ValueError, "objective must be one of"),  # a classification name
    (3, TypeError, "objective must be a name, an Objective, a callable or None"),
])
def test_regressor_bad_objective(objective, error, message):
    X, y = positive_regression(50)
    with pytest.raises(error, match=message):
        GBDTRegressor(n_estimators=2, objective=objective).fit(X, y)


def classes(n=400, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), np.linspace(-0.8, 0.8, n_classes - 1))
    return X, np.array(["a", "b", "c", "d"])[y]


def test_classifier_softmax_by_name_for_two_classes():
    """objective="softmax" with two classes: softmax(2), two tree groups; probabilities are
    the model's, in classes_ order, and sum to 1."""
    X, y = classes()
    clf = GBDTClassifier(n_estimators=4, objective="softmax", n_threads=N_THREADS).fit(X, y)
    model = bst.GBDTModel.train(bst.Dataset(X, (y == "b").astype(float)),
                                bst.GBDTConfig(n_estimators=4, objective=bst.Objective.softmax(2)))
    assert clf.booster_.objective == bst.Objective.softmax(2)
    np.testing.assert_array_equal(clf.predict_proba(X), model.predict(X))


def logistic(margins, dataset):
    p = 1.0 / (1.0 + np.exp(-margins))
    return p - dataset.y, p * (1.0 - p)


def softmax(margins, dataset):
    e = np.exp(margins - margins.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return p - np.eye(margins.shape[1])[dataset.y.astype(int)], p * (1.0 - p)


def test_classifier_callable_objective_reads_margins_as_log_odds():
    """Two classes: one output; predict_proba is the sigmoid of decision_function (to
    1e-15) and predict its most probable class."""
    X, y = classes()
    clf = GBDTClassifier(n_estimators=8, objective=logistic, n_threads=N_THREADS).fit(X, y)
    assert clf.booster_.objective.n_outputs == 1
    margin = clf.decision_function(X)
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p[:, 1], 1.0 / (1.0 + np.exp(-margin)), rtol=1e-15)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(margin > 0).astype(int)])
    assert np.mean(clf.predict(X) == y) > 0.8  # it learnt


def test_classifier_callable_objective_for_several_classes_has_one_output_per_class():
    X, y = classes(n_classes=3)
    clf = GBDTClassifier(n_estimators=8, objective=softmax, n_threads=N_THREADS).fit(X, y)
    assert clf.booster_.objective.n_outputs == 3
    scores = clf.decision_function(X)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(X), e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    assert np.mean(clf.predict(X) == y) > 0.7


@pytest.mark.parametrize("objective, n_classes, message", [
    (bst.Objective.logistic(), 3, "has 1 outputs; y has 3 classes"),
    (bst.Objective.softmax(4), 3, "has 4 outputs; y has 3 classes"),
    ("logistic", 3, "has 1 outputs; y has 3 classes"),
    ("poisson", 2, "objective must be one of \\['logistic', 'softmax'"),
])
def test_classifier_objective_must_fit_the_classes(objective, n_classes, message):
    X, y = classes(n_classes=n_classes)
    with pytest.raises(ValueError, match=message):
        GBDTClassifier(n_estimators=2, objective=objective).fit(X, y)


def ranking(n_queries=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20 * n_queries, 3))
    return X, np.clip(np.round(X[:, 0] + 1 + 0.3 * rng.normal(size=len(X))), 0, 3), [20] * n_queries


def test_ranker_pairwise_by_name_and_lambdarank_with_ndcg_at():
    X, y, group = ranking()
    ranker = GBDTRanker(n_estimators=4, objective="pairwise", n_threads=N_THREADS).fit(X, y, group=group)
    model = bst.GBDTModel.train(bst.Dataset(X, y, group=group),
                                bst.GBDTConfig(n_estimators=4, objective=bst.Objective.pairwise()))
    np.testing.assert_array_equal(ranker.predict(X), model.predict(X))
    named = GBDTRanker(n_estimators=2, objective="lambdarank", ndcg_at=3).fit(X, y, group=group)
    assert named.booster_.objective == bst.Objective.lambdarank(ndcg_at=3)
    given = GBDTRanker(n_estimators=2, objective=bst.Objective.lambdarank(ndcg_at=7)).fit(X, y, group=group)
    assert given.booster_.objective == bst.Objective.lambdarank(ndcg_at=7)


@pytest.mark.parametrize("name", ["one_vs_rest", "hinge"])
def test_classifier_one_vs_rest_and_hinge_by_name(name):
    """one_vs_rest: Objective.one_vs_rest(n_classes) (three classes here), its per-class
    sigmoids divided by their sum in predict_proba (rows sum to 1 within 1e-12, the ratios
    those of GBDTModel.predict); hinge (two classes): predict_proba is the predicted class
    one-hot, predict the booster's class."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    n_classes = 3 if name == "one_vs_rest" else 2
    y = np.digitize(X[:, 0], [-0.5, 0.5] if n_classes == 3 else [0.0])
    clf = GBDTClassifier(n_estimators=8, objective=name, n_threads=N_THREADS).fit(X, y)
    expected = bst.Objective.one_vs_rest(3) if name == "one_vs_rest" else bst.Objective.hinge()
    assert clf.booster_.objective == expected
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    raw = clf.booster_.predict(X)
    if name == "one_vs_rest":
        np.testing.assert_allclose(p, raw / raw.sum(axis=1, keepdims=True), rtol=1e-12)
    else:
        np.testing.assert_array_equal(p[:, 1], raw)
        np.testing.assert_array_equal(clf.predict(X), raw.astype(int))
    assert np.mean(clf.predict(X) == y) > 0.9
