"""The scikit-learn estimators: sklearn's own estimator checks, and the numbers they give
inside sklearn's tools equal those of GBDTModel.train on the same config and data."""

import inspect
import pickle

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import StackingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.estimator_checks import parametrize_with_checks

import boosters as bst
from boosters.sklearn import CONFIG_PARAMS, GBDTClassifier, GBDTRanker, GBDTRegressor
from support.child_python import python_run

N_THREADS = 2


RANKING_WEIGHTS = ("LambdaRank's gradients come from the pairs of rows within a query and are normalised by "
                   "the query's ideal DCG: repeating a row adds pairs and changes that DCG, so a row weight "
                   "is not the same as repeating the row")


def expected_failed_checks(estimator):
    """The checks an estimator fails by design, with the reason (none for the regressor
    and the classifier)."""
    if isinstance(estimator, GBDTRanker):
        return {"check_sample_weight_equivalence_on_dense_data": RANKING_WEIGHTS,
                "check_sample_weight_equivalence_on_sparse_data": RANKING_WEIGHTS}
    return {}


# Every other check of the installed scikit-learn passes (the ranker's rows are one query
# when no group is given, which is what sklearn's checks fit it on). Every row, as sklearn's
# weight checks compare a weight of 2 with a repeated row (a row sample draws them apart), on
# 15 rows (1 row per leaf: trees that split them), and a rate that fits sklearn's regression
# data in 5 rounds (check_regressors_train).
SKLEARN_CHECKED = dict(n_estimators=5, learning_rate=0.3, subsample=1.0, min_samples_leaf=1, n_threads=N_THREADS)


@parametrize_with_checks([GBDTRegressor(**SKLEARN_CHECKED), GBDTClassifier(**SKLEARN_CHECKED),
                          GBDTRanker(n_estimators=5, n_threads=N_THREADS)],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def regression_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = 2 * np.nan_to_num(X[:, 0]) + np.sin(np.nan_to_num(X[:, 1])) + 0.1 * rng.normal(size=n)
    return X, y


def classification_data(n=300, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n)
    codes = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, codes


def train_model(X, y, objective, weights=None, **params):
    config = bst.GBDTConfig(objective=objective, **params)
    return bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), config, n_threads=N_THREADS)


# -- parameters ----------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [GBDTRegressor, GBDTClassifier, GBDTRanker])
def test_parameters_are_the_config_ones_with_its_defaults(cls):
    config_defaults = {name: p.default for name, p in inspect.signature(bst.GBDTConfig).parameters.items()
                       if name in CONFIG_PARAMS}
    params = cls().get_params()
    own = {GBDTRegressor: set(), GBDTClassifier: {"class_weight"}, GBDTRanker: {"ndcg_at"}}[cls]
    # scikit-learn's names (random_state, n_jobs, verbose) and XGBoost's eval_metric: None, not given
    sklearn_names = {"random_state", "n_jobs", "verbose", "eval_metric"}
    extra = {"n_threads", "importance_type"} | sklearn_names | own
    assert all(params[name] is None for name in sklearn_names)
    assert set(params) == set(CONFIG_PARAMS) | extra
    # growth_strategy is given by name (sklearn wants plain defaults); the config reads it the same
    config_defaults["growth_strategy"] = "leafwise"
    assert {name: params[name] for name in CONFIG_PARAMS} == config_defaults
    assert cls().config(bst.Objective.squared()).growth_strategy is bst.GrowthStrategy.Leafwise


def test_get_set_params_and_clone_round_trip():
    est = GBDTClassifier(n_estimators=7, max_depth=3, class_weight="balanced", monotone_constraints=[1, 0, 0, 0])
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    copy.set_params(learning_rate=0.1, l2=2.0)
    assert copy.learning_rate == 0.1 and copy.l2 == 2.0 and est.learning_rate == 0.05
    assert clone(copy).get_params() == copy.get_params()


@pytest.mark.parametrize("name, value", [("n_estimators", 0), ("learning_rate", -1.0), ("max_bins", 1),
                                         ("subsample", 1.5), ("importance_type", "bogus")])
def test_bad_parameter_raises_at_fit_naming_it(name, value):
    est = GBDTRegressor(**{name: value})  # nothing is checked in __init__
    X, y = regression_data(50)
    with pytest.raises(ValueError, match=name):
        est.fit(X, y)


def test_unknown_parameter_is_a_type_error():
    with pytest.raises(TypeError, match="n_estimator"):
        GBDTRegressor(n_estimator=5)


@pytest.mark.parametrize("cls", [GBDTRegressor, GBDTClassifier, GBDTRanker])
def test_parameters_are_keyword_only(cls):
    """One __init__ built from the parameter list: every parameter keyword-only (a value
    given by position, which of 38 parameters it meant is a guess, is a TypeError)."""
    kinds = {p.kind for p in inspect.signature(cls).parameters.values()}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}
    with pytest.raises(TypeError, match="positional"):
        cls(5)


# -- the numbers are GBDTModel.train's --------------------------------------------------------

def test_regressor_equals_gbdt_model_train_exactly():
    X, y = regression_data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
    est = GBDTRegressor(n_estimators=10, max_depth=4, n_threads=N_THREADS).fit(X, y, sample_weight=w)
    model = train_model(X, y, bst.Objective.squared(), weights=w, n_estimators=10, max_depth=4)
    np.testing.assert_array_equal(est.predict(X), model.predict(X, n_threads=N_THREADS))
    assert est.n_features_in_ == 5 and not hasattr(est, "feature_names_in_")
    assert est.best_iteration_ == 9 and est.evals_result_ == {}


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_equals_gbdt_model_train_exactly(n_classes):
    X, codes = classification_data(n_classes=n_classes)
    labels = np.array(["cat", "dog", "emu"])[codes]  # sorted: classes_ order = code order
    est = GBDTClassifier(n_estimators=8, learning_rate=0.3, n_threads=N_THREADS).fit(X, labels)
    objective = bst.Objective.logistic() if n_classes == 2 else bst.Objective.softmax(n_classes)
    model = train_model(X, codes.astype(float), objective, n_estimators=8, learning_rate=0.3)
    p = model.predict(X, n_threads=N_THREADS)
    expected = np.column_stack([1 - p, p]) if n_classes == 2 else p
    np.testing.assert_array_equal(est.predict_proba(X), expected)
    np.testing.assert_array_equal(est.decision_function(X), model.predict_raw(X, n_threads=N_THREADS))
    assert list(est.classes_) == ["cat", "dog", "emu"][:n_classes] and est.n_classes_ == n_classes
    # string labels round trip: predict gives the labels, the most probable one per row
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(expected, axis=1)])
    assert est.score(X, labels) > 0.8  # separable enough that 8 rounds at rate 0.3 fit the training data


def test_labels_of_any_type_map_to_the_same_model():
    X, codes = classification_data(n_classes=3)
    on_codes = GBDTClassifier(n_estimators=5).fit(X, codes)
    for values in (np.array([10, 11, 12]), np.array([-1.0, 0.0, 7.0]), np.array(["a", "b", "c"], dtype=object)):
        est = GBDTClassifier(n_estimators=5).fit(X, values[codes])
        np.testing.assert_array_equal(est.classes_, values)
        np.testing.assert_array_equal(est.predict_proba(X), on_codes.predict_proba(X))
        np.testing.assert_array_equal(est.predict(X), values[on_codes.predict(X)])


def test_class_weight_balanced_equals_explicit_sample_weights():
    X, codes = classification_data(n_classes=3)
    keep = (codes != 2) | (np.arange(len(codes)) % 4 == 0)  # class 2 rare
    X, codes = X[keep], codes[keep]
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=len(codes))
    balanced = GBDTClassifier(n_estimators=6, class_weight="balanced").fit(X, codes, sample_weight=w)
    explicit = GBDTClassifier(n_estimators=6).fit(X, codes, sample_weight=w * compute_sample_weight("balanced", codes))
    np.testing.assert_array_equal(balanced.predict_proba(X), explicit.predict_proba(X))
    unweighted = GBDTClassifier(n_estimators=6).fit(X, codes, sample_weight=w)
    assert not np.array_equal(balanced.predict_proba(X), unweighted.predict_proba(X))  # the weights matter
    by_dict = GBDTClassifier(n_estimators=6, class_weight={0: 1.0, 1: 2.0, 2: 5.0}).fit(X, codes)
    dict_weights = np.array([1.0, 2.0, 5.0])[codes]
    np.testing.assert_array_equal(by_dict.predict_proba(X),
                                  GBDTClassifier(n_estimators=6).fit(X, codes, sample_weight=dict_weights)
                                  .predict_proba(X))


def test_single_class_is_an_error():
    with pytest.raises(ValueError, match="at least 2 classes"):
        GBDTClassifier().fit(np.zeros((5, 2)), np.ones(5))


# -- fitted attributes -------------------------------------------------------------------------

def test_eval_set_early_stopping_and_history():
    X, y = regression_data(400)
    X_val, y_val = regression_data(200, seed=1)
    est = GBDTRegressor(n_estimators=200, learning_rate=0.5, early_stopping_rounds=5, n_threads=N_THREADS)
    est.fit(X, y, eval_set=[(X_val, y_val)])
    config = bst.GBDTConfig(n_estimators=200, learning_rate=0.5, early_stopping_rounds=5)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config, val_set=bst.Dataset(X_val, y_val), n_threads=N_THREADS)
    assert est.best_iteration_ == model.best_iteration < 199  # it stopped early
    assert est.evals_result_ == {"valid": {"rmse": model.eval_history}}
    np.testing.assert_array_equal(est.predict(X_val), model.predict(X_val, n_threads=N_THREADS))
    same = GBDTRegressor(n_estimators=200, learning_rate=0.5, early_stopping_rounds=5, n_threads=N_THREADS)
    np.testing.assert_array_equal(same.fit(X, y, eval_set=(X_val, y_val)).predict(X_val), est.predict(X_val))


def test_eval_set_labels_go_through_classes():
    X, codes = classification_data(n_classes=2)
    labels = np.array(["no", "yes"])[codes]
    est = GBDTClassifier(n_estimators=5).fit(X[:200], labels[:200], eval_set=(X[200:], labels[200:]))
    model = bst.GBDTModel.train(bst.Dataset(X[:200], codes[:200]), bst.GBDTConfig(
        n_estimators=5, objective=bst.Objective.logistic()), val_set=bst.Dataset(X[200:], codes[200:]))
    assert est.evals_result_ == {"valid": {"logloss": model.eval_history}}
    with pytest.raises(ValueError, match="not seen in training"):
        est.fit(X[:200], labels[:200], eval_set=(X[200:], np.full(100, "maybe")))
    with pytest.raises(ValueError, match="eval_set"):
        est.fit(X, labels, eval_set=[(X, labels, labels)])


def test_several_eval_sets_names_and_best_scores():
    # LightGBM's habits: a list of pairs, fit's own (X, y) among them scores the training
    # rows ("training"), eval_names, eval_metric and best_score_; early stopping follows the
    # last held-out set, as GBDTModel.train with the same sets
    X, codes = classification_data(n_classes=2)
    X_train, y_train, X_a, y_a, X_b, y_b = X[:150], codes[:150], X[150:220], codes[150:220], X[220:], codes[220:]
    est = GBDTClassifier(n_estimators=200, learning_rate=0.5, early_stopping_rounds=3)
    est.fit(X_train, y_train, eval_set=[(X_train, y_train), (X_a, y_a), (X_b, y_b)], eval_metric=["auc", "logloss"])
    assert list(est.evals_result_) == ["training", "valid_1", "valid_2"]
    model = bst.GBDTModel.train(bst.Dataset(X_train, y_train), bst.GBDTConfig(
        n_estimators=200, learning_rate=0.5, early_stopping_rounds=3, objective=bst.Objective.logistic(),
        metric=[bst.Metric.auc(), bst.Metric.logloss()]), val_set=bst.Dataset(X_b, y_b))
    assert est.booster_.n_trees == model.n_trees < 200 and est.evals_result_["valid_2"]["auc"] == model.eval_history
    best = est.booster_.best_iteration
    assert est.best_score_["valid_1"]["logloss"] == est.evals_result_["valid_1"]["logloss"][best]
    assert est.best_score_["training"]["auc"] == est.evals_result_["training"]["auc"][best]
    named = GBDTClassifier(n_estimators=3).fit(X_train, y_train, eval_set=[(X_a, y_a)], eval_names=["holdout"])
    assert list(named.evals_result_) == ["holdout"]
    with pytest.raises(ValueError, match="eval_names"):
        GBDTClassifier(n_estimators=3).fit(X_train, y_train, eval_set=[(X_a, y_a)], eval_names=["a", "b"])


def test_estimators_continue_a_model():
    X, y = regression_data(300)  # every row: no row sample that the continued rounds would draw anew
    first = GBDTRegressor(n_estimators=5, max_depth=3, subsample=1.0).fit(X, y)
    more = GBDTRegressor(n_estimators=5, max_depth=3, subsample=1.0).fit(X, y, init_model=first)
    at_once = GBDTRegressor(n_estimators=10, max_depth=3, subsample=1.0).fit(X, y)
    assert np.array_equal(more.predict(X), at_once.predict(X)) and more.booster_.n_trees == 10


@pytest.mark.parametrize("make", [lambda: GBDTRegressor(n_estimators=2), lambda: GBDTClassifier(n_estimators=2),
                                  lambda: GBDTRanker(n_estimators=2)])
@pytest.mark.parametrize("n_labels", [45, 51])
def test_eval_set_labels_of_the_wrong_length_name_eval_set(make, n_labels):
    """An eval_set whose y has fewer or more labels than X_val rows was scikit-learn's
    'Found input variables with inconsistent numbers of samples', naming neither."""
    X, y = regression_data(100)
    est, y = make(), (y > 0).astype(np.int64)
    queries = dict(group=[50, 50], eval_group=[50]) if isinstance(est, GBDTRanker) else {}
    with pytest.raises(ValueError, match=rf"eval_set: .*inconsistent numbers of samples: \[50, {n_labels}\]"):
        est.fit(X, y, eval_set=(X[:50], y[:n_labels] if n_labels < 50 else np.r_[y[:50], 1]), **queries)


class ConversionError(ValueError):
    """A ValueError subclass whose constructor takes two arguments (as UnicodeDecodeError's takes five)."""

    def __init__(self, what, why):
        super().__init__(f"{what}: {why}")


class Unconvertible:
    def __array__(self, *args, **kwargs):
        raise ConversionError("cannot convert", "a test's object")


def test_an_eval_set_error_of_any_value_error_subclass_names_eval_set():
    """An error was raised again as its own type with the eval_set prefix: a subclass whose
    constructor takes other arguments became a TypeError about that constructor."""
    X, y = regression_data(100)
    with pytest.raises(ValueError, match="^eval_set: cannot convert: a test's object$"):
        GBDTRegressor(n_estimators=2).fit(X, y, eval_set=(Unconvertible(), y))


@pytest.mark.parametrize("kind", ["gain", "split", "cover", "average_gain", "average_cover",
                                  bst.ImportanceType.AverageCover])
def test_feature_importances_are_normalised_importances_of_each_kind(kind):
    X, y = regression_data()
    est = GBDTRegressor(n_estimators=10, importance_type=kind).fit(X, y)
    raw = est.booster_.feature_importance(kind)
    assert raw.sum() > 0 and not np.isclose(raw.sum(), 1.0)  # the raw totals are not already shares
    np.testing.assert_allclose(est.feature_importances_, raw / raw.sum(), rtol=1e-15)
    np.testing.assert_allclose(est.feature_importances_.sum(), 1.0, rtol=1e-12)
    if kind in ("gain", "split", "cover"):
        assert np.argmax(est.feature_importances_) == 0  # y is mostly 2 * x0


def test_feature_importances_follow_set_params_without_refitting():
    X, y = regression_data()
    est = GBDTRegressor(n_estimators=10).fit(X, y)
    gain = est.feature_importances_
    split = est.set_params(importance_type="split").feature_importances_
    counts = est.booster_.feature_importance("split")
    np.testing.assert_allclose(split, counts / counts.sum(), rtol=1e-15)
    assert not np.allclose(gain, split)


def test_fit_callbacks_are_those_of_gbdt_model_train():
    """A callback list given to fit reaches GBDTModel.train: the same records, the same
    stop, the same learning-rate schedule, so the same model."""
    X, y = regression_data(400)
    X_val, y_val = regression_data(200, seed=1)

    def stop_after_round_4(env):
        return env.round >= 3

    class StopAt4:
        def after_iteration(self, env):
            return stop_after_round_4(env)

    schedule = [0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]
    from_fit, from_train = {}, {}
    est = GBDTRegressor(n_estimators=10, n_threads=N_THREADS)
    est.fit(X, y, eval_set=(X_val, y_val), callbacks=[bst.callbacks.record_evaluation(from_fit), StopAt4(),
                                                       bst.callbacks.learning_rate(schedule)])
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=10), val_set=bst.Dataset(X_val, y_val),
                                n_threads=N_THREADS,
                                callbacks=[bst.callbacks.record_evaluation(from_train), StopAt4(),
                                           bst.callbacks.learning_rate(schedule)])
    assert est.booster_.n_trees == model.n_trees == 4  # stopped after the 4th round
    assert from_fit == from_train and len(from_fit["valid"]["rmse"]) == 4
    assert est.evals_result_ == from_fit  # record_evaluation's form: {"valid": {"rmse": [...]}}
    np.testing.assert_array_equal(est.predict(X_val), model.predict(X_val, n_threads=N_THREADS))
    plain = GBDTRegressor(n_estimators=4, n_threads=N_THREADS).fit(X, y)
    assert not np.array_equal(plain.predict(X_val), est.predict(X_val))  # the schedule changed the trees


def test_dataframe_names_and_categorical_columns():
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame({"x": rng.normal(size=n),
                          "colour": pd.Categorical(rng.choice(["red", "green", "blue"], size=n))})
    y = frame["x"].to_numpy() + np.where(frame["colour"] == "red", 3.0, 0.0)
    est = GBDTRegressor(n_estimators=10).fit(frame, y)
    assert list(est.feature_names_in_) == ["x", "colour"] and est.n_features_in_ == 2
    assert est.booster_.categorical_features == [1]
    model = bst.GBDTModel.train(bst.Dataset(frame, y), bst.GBDTConfig(n_estimators=10))
    np.testing.assert_array_equal(est.predict(frame), model.predict(frame))
    # columns are matched by name: another order predicts the same (sklearn's own estimators refuse it)
    np.testing.assert_array_equal(est.predict(frame[["colour", "x"]]), model.predict(frame))


@pytest.mark.parametrize("to_frame", [lambda df: df, pl.from_pandas,
                                      lambda df: pa.Table.from_pandas(df, preserve_index=False)])
def test_predict_matches_frame_columns_by_name(to_frame):
    X, codes = classification_data(n_classes=3)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    clf = GBDTClassifier(n_estimators=5, n_threads=N_THREADS).fit(to_frame(df), codes)
    expected = clf.predict_proba(to_frame(df))
    reordered = to_frame(df[["d", "b", "a", "c"]])
    np.testing.assert_array_equal(clf.predict_proba(reordered), expected)
    np.testing.assert_array_equal(clf.decision_function(reordered), clf.decision_function(to_frame(df)))
    np.testing.assert_array_equal(clf.predict(reordered), clf.predict(to_frame(df)))
    # positionally the reordered frame is other data: the name matching is what makes them equal
    with pytest.warns(UserWarning, match="does not have valid feature names"):  # sklearn's warning for arrays
        assert not np.array_equal(clf.predict_proba(df[["d", "b", "a", "c"]].to_numpy()), expected)
    with pytest.raises(ValueError, match="Feature names unseen at fit time:\n- e"):
        clf.predict(to_frame(df.rename(columns={"d": "e"})))
    with pytest.raises(ValueError, match="Feature names seen at fit time, yet now missing:\n- c"):
        clf.predict(to_frame(df[["a", "b", "d"]]))


def test_sklearn_column_order_check_is_the_one_deliberate_difference():
    """sklearn's check_dataframe_column_names_consistency (not among the checks
    parametrize_with_checks runs here) wants a ValueError for a frame whose columns come in
    another order; the estimators match them by name instead, as GBDTModel.predict does."""
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency
    with pytest.raises(AssertionError, match="predict did not raise"):
        check_dataframe_column_names_consistency("GBDTRegressor", GBDTRegressor(n_estimators=2))


class ArrowStream:
    """A table of some other library that exports only the Arrow C stream interface."""

    def __init__(self, table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize("to_frame", [lambda X: pl.DataFrame(X, schema=["a", "b", "c", "d", "e"]),
                                      lambda X: pa.table({name: X[:, i] for i, name in enumerate("abcde")}),
                                      lambda X: ArrowStream(pa.table({n: X[:, i] for i, n in enumerate("abcde")}))])
def test_polars_and_arrow_frames_equal_the_array(to_frame):
    X, y = regression_data()
    est = GBDTRegressor(n_estimators=5).fit(to_frame(X), y)
    assert list(est.feature_names_in_) == list("abcde")
    np.testing.assert_array_equal(est.predict(to_frame(X)), GBDTRegressor(n_estimators=5).fit(X, y).predict(X))


def test_pickle_round_trip():
    X, y = regression_data()
    est = GBDTRegressor(n_estimators=5).fit(X, y)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(X), est.predict(X))


# -- the ranker ----------------------------------------------------------------------------------

def ranking_data(n_queries=30, per_query=12, seed=0):
    """Queries of `per_query` rows; relevance 0..3 from the first two features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * per_query, 4))
    score = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=len(X))
    relevance = np.digitize(score, [-0.5, 0.5, 1.5]).astype(np.float64)
    return X, relevance, [per_query] * n_queries


def test_ranker_equals_gbdt_model_train_with_lambdarank():
    X, y, group = ranking_data()
    ranker = GBDTRanker(n_estimators=8, ndcg_at=5, n_threads=N_THREADS).fit(X, y, group=group)
    config = bst.GBDTConfig(n_estimators=8, objective=bst.Objective.lambdarank(ndcg_at=5))
    model = bst.GBDTModel.train(bst.Dataset(X, y, group=group), config, n_threads=N_THREADS)
    np.testing.assert_array_equal(ranker.predict(X), model.predict_raw(X, n_threads=N_THREADS))
    qid = np.repeat(np.arange(len(group)), group) * 7 + 3  # any ids, contiguous runs
    by_qid = GBDTRanker(n_estimators=8, ndcg_at=5, n_threads=N_THREADS).fit(X, y, qid=qid)
    np.testing.assert_array_equal(by_qid.predict(X), ranker.predict(X))
    # the groups matter: one big query is another model
    one_query = GBDTRanker(n_estimators=8, ndcg_at=5, n_threads=N_THREADS).fit(X, y)
    assert not np.array_equal(one_query.predict(X), ranker.predict(X))


def test_ranker_eval_set_with_its_queries():
    X, y, group = ranking_data(40)
    X_val, y_val, group_val = ranking_data(20, seed=1)
    ranker = GBDTRanker(n_estimators=200, learning_rate=0.5, early_stopping_rounds=5, n_threads=N_THREADS)
    ranker.fit(X, y, group=group, eval_set=[(X_val, y_val)], eval_group=group_val)
    config = bst.GBDTConfig(n_estimators=200, learning_rate=0.5, early_stopping_rounds=5,
                            objective=bst.Objective.lambdarank())
    model = bst.GBDTModel.train(bst.Dataset(X, y, group=group), config,
                                val_set=bst.Dataset(X_val, y_val, group=group_val), n_threads=N_THREADS)
    assert ranker.evals_result_ == {"valid": {"ndcg@10": model.eval_history}}  # the metric's label
    assert ranker.best_iteration_ == model.best_iteration < 199  # it stopped early
    with pytest.raises(ValueError, match="not both"):
        ranker.fit(X, y, group=group, qid=np.zeros(len(y)))
    with pytest.raises(ValueError, match="eval_set: .*not both"):
        ranker.fit(X, y, group=group, eval_set=(X_val, y_val), eval_group=group_val, eval_qid=np.zeros(len(y_val)))


def test_ranker_fit_arguments_are_those_of_the_other_estimators_then_the_queries():
    """fit(X, y, sample_weight, eval_set, categorical_features, callbacks) as the regressor
    and the classifier; the query arguments come after, keyword-only, then the starting
    margins (keyword-only, as the regressor's and the classifier's)."""
    fit_parameters = [list(inspect.signature(cls.fit).parameters.items()) for cls in
                      (GBDTRegressor, GBDTClassifier, GBDTRanker)]
    assert fit_parameters[0] == fit_parameters[1] == fit_parameters[2][:7] + fit_parameters[2][11:]
    assert [(name, p.kind) for name, p in fit_parameters[2][7:]] == [
        (name, inspect.Parameter.KEYWORD_ONLY)
        for name in ("group", "qid", "eval_group", "eval_qid", "init_score", "eval_init_score", "eval_names",
                     "eval_metric", "init_model")]
    X, y, group = ranking_data()
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=len(y))
    by_position = GBDTRanker(n_estimators=4, n_threads=N_THREADS).fit(X, y, w, group=group)
    by_name = GBDTRanker(n_estimators=4, n_threads=N_THREADS).fit(X, y, sample_weight=w, group=group)
    unweighted = GBDTRanker(n_estimators=4, n_threads=N_THREADS).fit(X, y, group=group)
    np.testing.assert_array_equal(by_position.predict(X), by_name.predict(X))
    assert not np.array_equal(by_position.predict(X), unweighted.predict(X))  # the third argument is the weights


def test_ranker_checks_the_eval_rows_once(monkeypatch):
    X, y, group = ranking_data()
    checked = []
    check_X = GBDTRanker._check_X
    monkeypatch.setattr(GBDTRanker, "_check_X", lambda self, X, reset: checked.append(reset) or check_X(self, X, reset))
    GBDTRanker(n_estimators=2, n_threads=N_THREADS).fit(X, y, group=group, eval_set=(X[:60], y[:60]),
                                                        eval_group=group[:5])
    assert checked == [True, False]  # the training rows, then the validation rows


def test_ranker_on_frames_with_a_categorical_column():
    X, y, group = ranking_data()
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(
        kind=pd.Categorical(np.where(X[:, 2] > 0, "news", "shop")))
    qid = np.repeat(np.arange(len(group)), group)
    val = pa.Table.from_pandas(df.iloc[:120], preserve_index=False)
    ranker = GBDTRanker(n_estimators=6, n_threads=N_THREADS).fit(df, y, qid=qid, eval_set=(val, y[:120]),
                                                                eval_qid=qid[:120])
    assert ranker.booster_.categorical_features == [4] and list(ranker.feature_names_in_) == list(df.columns)
    config = bst.GBDTConfig(n_estimators=6, objective=bst.Objective.lambdarank())
    model = bst.GBDTModel.train(bst.Dataset(df, y, qid=qid), config, n_threads=N_THREADS,
                                val_set=bst.Dataset(df.iloc[:120], y[:120], qid=qid[:120]))
    assert ranker.evals_result_ == {"valid": {"ndcg@10": model.eval_history}}
    np.testing.assert_array_equal(ranker.predict(df[["kind", "d", "c", "b", "a"]]), model.predict_raw(df))


def test_ranker_learns_the_order_in_a_pipeline():
    X, y, group = ranking_data()
    X_test, y_test, group_test = ranking_data(10, seed=2)
    pipe = make_pipeline(StandardScaler(), GBDTRanker(n_estimators=20, n_threads=N_THREADS))
    pipe.fit(X, y, gbdtranker__group=group)
    scores = pipe.predict(X_test)
    bounds = np.cumsum([0] + group_test)
    from sklearn.metrics import ndcg_score
    ndcg = np.mean([ndcg_score([y_test[a:b]], [scores[a:b]], k=10) for a, b in zip(bounds[:-1], bounds[1:])])
    shuffled = np.mean([ndcg_score([y_test[a:b]], [np.random.default_rng(a).permutation(scores[a:b])], k=10)
                        for a, b in zip(bounds[:-1], bounds[1:])])
    # the relevance is a noisy function of two features: a learnt order is far above a random one
    assert ndcg > 0.85 and ndcg > shuffled + 0.1


# -- inside scikit-learn's tools -----------------------------------------------------------------

def test_pipeline_equals_model_on_transformed_data():
    X, y = regression_data()
    X = np.nan_to_num(X)
    pipe = make_pipeline(StandardScaler(), GBDTRegressor(n_estimators=6, n_threads=N_THREADS)).fit(X, y)
    Z = StandardScaler().fit_transform(X)
    model = train_model(Z, y, bst.Objective.squared(), n_estimators=6)
    np.testing.assert_array_equal(pipe.predict(X), model.predict(Z, n_threads=N_THREADS))


def test_pipeline_with_pandas_output_keeps_names():
    X, y = regression_data()
    X = pd.DataFrame(np.nan_to_num(X), columns=[f"f{i}" for i in range(5)])
    pipe = make_pipeline(StandardScaler(), GBDTRegressor(n_estimators=5)).set_output(transform="pandas").fit(X, y)
    assert list(pipe[-1].feature_names_in_) == list(X.columns)
    assert pipe[-1].booster_.feature_names == list(X.columns)


def test_column_transformer_with_pandas_output_keeps_categories():
    """A ColumnTransformer set to pandas output hands the estimator a frame whose category
    column is still a category: a categorical feature, named after the transformer."""
    rng = np.random.default_rng(4)
    n = 400
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "colour": pd.Categorical(rng.choice(["red", "green", "blue"], size=n))})
    y = df["x1"].to_numpy() + np.where(df["colour"] == "red", 3.0, 0.0)
    columns = ColumnTransformer([("num", StandardScaler(), ["x1", "x2"]), ("cat", "passthrough", ["colour"])])
    pipe = make_pipeline(columns, GBDTRegressor(n_estimators=8, n_threads=N_THREADS)).set_output(transform="pandas")
    pipe.fit(df, y)
    booster = pipe[-1].booster_
    assert booster.feature_names == ["num__x1", "num__x2", "cat__colour"]
    assert booster.categorical_features == [2]
    assert booster.categories[2].tolist() == ["blue", "green", "red"]
    Z = clone(columns).set_output(transform="pandas").fit_transform(df)
    model = bst.GBDTModel.train(bst.Dataset(Z, y), bst.GBDTConfig(n_estimators=8), n_threads=N_THREADS)
    np.testing.assert_array_equal(pipe.predict(df), model.predict(Z, n_threads=N_THREADS))
    # the raw frame's columns in another order go through the transformer by name too
    np.testing.assert_array_equal(pipe.predict(df[["colour", "x2", "x1"]]), pipe.predict(df))


def test_cross_val_score_equals_manual_folds():
    X, y = regression_data()
    folds = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(GBDTRegressor(n_estimators=5, n_threads=N_THREADS), X, y, cv=folds,
                             scoring="neg_mean_squared_error")
    manual = []
    for train, test in folds.split(X):
        model = train_model(X[train], y[train], bst.Objective.squared(), n_estimators=5)
        manual.append(-np.mean((model.predict(X[test], n_threads=N_THREADS) - y[test]) ** 2))
    np.testing.assert_allclose(scores, manual, rtol=1e-12)  # same predictions, sklearn's mean


def test_grid_search_picks_by_score_and_refits():
    X, y = regression_data()
    grid = GridSearchCV(GBDTRegressor(n_estimators=5, n_threads=N_THREADS),
                        {"max_depth": [1, 4], "learning_rate": [0.05, 0.5]}, cv=3).fit(X, y)
    best = np.argmax(grid.cv_results_["mean_test_score"])
    assert grid.best_params_ == grid.cv_results_["params"][best]
    assert grid.best_params_ == {"max_depth": 4, "learning_rate": 0.5}  # deeper, faster fits 5 rounds best
    model = train_model(X, y, bst.Objective.squared(), n_estimators=5, **grid.best_params_)
    np.testing.assert_array_equal(grid.predict(X), model.predict(X, n_threads=N_THREADS))


def test_calibrated_classifier():
    X, codes = classification_data(n_classes=2, n=400)
    folds = StratifiedKFold(3)
    calibrated = CalibratedClassifierCV(GBDTClassifier(n_estimators=5, n_threads=N_THREADS), cv=folds,
                                        method="sigmoid").fit(X, codes)
    np.testing.assert_allclose(calibrated.predict_proba(X).sum(axis=1), 1.0, rtol=1e-12)
    # each fold's estimator is GBDTModel.train on that fold's training rows
    for (train, _), fold in zip(folds.split(X, codes), calibrated.calibrated_classifiers_):
        model = train_model(X[train], codes[train].astype(float), bst.Objective.logistic(), n_estimators=5)
        np.testing.assert_array_equal(fold.estimator.predict_proba(X)[:, 1], model.predict(X, n_threads=N_THREADS))
    assert calibrated.score(X, codes) > 0.8  # the classes are mostly separable from x0, x1


def test_stacking_classifier():
    X, codes = classification_data(n_classes=3)
    labels = np.array(["a", "b", "c"])[codes]
    # few rounds: a rate of 0.3 for the score below
    stack = StackingClassifier([("gbdt", GBDTClassifier(n_estimators=5, learning_rate=0.3)),
                                ("scaled", make_pipeline(FunctionTransformer(),
                                                         GBDTClassifier(n_estimators=3, learning_rate=0.3)))],
                               final_estimator=LogisticRegression(), cv=3).fit(X, labels)
    np.testing.assert_array_equal(stack.estimators_[0].predict_proba(X),
                                  GBDTClassifier(n_estimators=5, learning_rate=0.3).fit(X, labels).predict_proba(X))
    assert set(stack.predict(X)) <= {"a", "b", "c"} and stack.score(X, labels) > 0.8


def test_sparse_input_equals_dense():
    X, y = regression_data()
    X = np.where(np.abs(X) < 0.5, 0.0, np.nan_to_num(X))  # half zeros
    dense = GBDTRegressor(n_estimators=5).fit(X, y)
    sparse = GBDTRegressor(n_estimators=5).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(sparse.predict(sp.csc_matrix(X)), dense.predict(X))


def test_missing_sklearn_is_an_import_error_naming_the_extra(tmp_path):
    code = ("import sys; sys.modules['sklearn'] = None\n"
            "try:\n    import boosters.sklearn\nexcept ImportError as e:\n    print('ERR', e)")
    # run outside the source tree (CI runs pytest from the repo root, where -c would import ./boosters)
    out = python_run("-c", code, capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout
    assert "boosters[sklearn]" in out.splitlines()[-1] and out.splitlines()[-1].startswith("ERR")


def test_import_boosters_does_not_import_sklearn(tmp_path):
    code = "import sys, boosters; print('sklearn' in sys.modules, 'boosters.sklearn' in sys.modules)"
    # run outside the source tree (CI runs pytest from the repo root, where -c would import ./boosters)
    out = python_run("-c", code, capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout
    assert out.splitlines()[-1].split() == ["False", "False"]  # an editable install may log its rebuild first


def test_prediction_options_of_lightgbm_and_xgboost():
    X, codes = classification_data(n_classes=3)
    clf = GBDTClassifier(n_estimators=6).fit(X, codes)
    booster = clf.booster_
    assert np.array_equal(clf.predict(X, raw_score=True), booster.predict_raw(X))
    assert np.array_equal(clf.predict(X, pred_leaf=True), booster.predict_leaf(X))
    assert np.array_equal(clf.predict(X, pred_contrib=True), booster.shap_values(X))
    assert np.array_equal(clf.predict_proba(X, num_iteration=2), booster[:2].predict(X))
    assert np.array_equal(clf.predict(X, iteration_range=(0, 3)), np.argmax(booster[:3].predict(X), axis=1))
    X, y = regression_data(200)
    reg = GBDTRegressor(n_estimators=6).fit(X, y)
    assert np.array_equal(reg.predict(X, start_iteration=2, num_iteration=3), reg.booster_[2:5].predict(X))
    with pytest.raises(ValueError, match="one of raw_score"):
        reg.predict(X, raw_score=True, pred_leaf=True)
