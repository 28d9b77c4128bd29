"""metrics.evaluate against scikit-learn."""

import numpy as np
import pytest
import xgboost as xgb
from scipy.special import expit, softmax
from sklearn.metrics import accuracy_score, log_loss, mean_absolute_error, mean_squared_error, roc_auc_score

from boosters.config import Metric
from boosters.objectives import evaluate

N = 2000


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(50)
    y_bin = rng.integers(0, 2, size=N).astype(np.float64)
    return dict(
        y_reg=rng.normal(0, 5, size=N),
        m_reg=rng.normal(0, 5, size=(N, 1)),
        y_bin=y_bin,
        m_bin=(rng.normal(size=N) + 1.5 * (y_bin - 0.5))[:, None] * 2,
        y_cls=rng.integers(0, 4, size=N).astype(np.float64),
        m_cls=rng.normal(0, 2, size=(N, 4)),
        w=rng.uniform(0.0, 3.0, size=N),
    )


def weights(data, weighted):
    return data["w"] if weighted else None


@pytest.mark.parametrize("weighted", [False, True])
def test_rmse_and_mae(data, weighted):
    w = weights(data, weighted)
    y, m = data["y_reg"], data["m_reg"]
    assert evaluate(Metric.rmse(), y, m, w) == pytest.approx(
        np.sqrt(mean_squared_error(y, m[:, 0], sample_weight=w)), rel=1e-12)
    assert evaluate(Metric.mae(), y, m, w) == pytest.approx(
        mean_absolute_error(y, m[:, 0], sample_weight=w), rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_binary_logloss(data, weighted):
    w = weights(data, weighted)
    y, m = data["y_bin"], data["m_bin"]
    got = evaluate(Metric.logloss(), y, m, w)
    assert got == pytest.approx(log_loss(y, expit(m[:, 0]), sample_weight=w), rel=1e-10)


def test_binary_logloss_extreme_margins():
    """Margins far beyond where sigmoid rounds to 0/1: the exact loss, never inf/nan."""
    m = np.array([[-800.0], [-40.0], [40.0], [800.0], [800.0], [-800.0]])
    y = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    got = evaluate(Metric.logloss(), y, m)
    expected = np.mean([np.log1p(np.exp(-800.0)), np.log1p(np.exp(-40.0)), np.log1p(np.exp(-40.0)),
                        0.0, 800.0, 800.0])
    assert np.isfinite(got)
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("metric", [Metric.logloss(), Metric.multiclass_logloss()])
def test_multiclass_logloss(data, weighted, metric):
    w = weights(data, weighted)
    y, m = data["y_cls"], data["m_cls"]
    want = log_loss(y, softmax(m, axis=1), sample_weight=w, labels=[0, 1, 2, 3])
    assert evaluate(metric, y, m, w) == pytest.approx(want, rel=1e-10)


def test_multiclass_logloss_extreme_margins():
    m = np.array([[1e3, -1e3, 0.0], [-1e3, 1e3, 1e3], [5e2, 5e2, 5e2]])
    y = np.array([0.0, 0.0, 2.0])
    got = evaluate(Metric.multiclass_logloss(), y, m)
    expected = np.mean([0.0, 2e3 + np.log(2.0), np.log(3.0)])
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_accuracy(data, weighted):
    w = weights(data, weighted)
    y, m = data["y_bin"], data["m_bin"]
    assert evaluate(Metric.accuracy(), y, m, w) == pytest.approx(
        accuracy_score(y, (m[:, 0] > 0).astype(np.float64), sample_weight=w), rel=1e-12)
    y, m = data["y_cls"], data["m_cls"]
    want = accuracy_score(y, np.argmax(m, axis=1), sample_weight=w)
    assert evaluate(Metric.accuracy(), y, m, w) == pytest.approx(want, rel=1e-12)
    assert evaluate(Metric.multiclass_accuracy(), y, m, w) == pytest.approx(want, rel=1e-12)


def test_binary_accuracy_threshold_at_zero_margin():
    """Margin 0 is probability 0.5: predicted class 0."""
    m = np.array([[0.0], [1e-300], [-1e-300], [0.0]])
    y = np.array([0.0, 1.0, 0.0, 1.0])
    assert evaluate(Metric.accuracy(), y, m) == 0.75


@pytest.mark.parametrize("weighted", [False, True])
def test_auc(data, weighted):
    w = weights(data, weighted)
    y, m = data["y_bin"], data["m_bin"]
    assert evaluate(Metric.auc(), y, m, w) == pytest.approx(roc_auc_score(y, m[:, 0], sample_weight=w), rel=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_levels", [2, 5, 40])
def test_auc_with_tied_scores(data, weighted, n_levels):
    rng = np.random.default_rng(51 + n_levels)
    w = weights(data, weighted)
    y = data["y_bin"]
    m = rng.integers(0, n_levels, size=N).astype(np.float64) + 0.5 * y * rng.integers(0, 2, size=N)
    m = np.round(m)  # many tied scores, some groups mixing both classes
    assert len(np.unique(m)) <= n_levels + 1
    got = evaluate(Metric.auc(), y, m[:, None], w)
    assert got == pytest.approx(roc_auc_score(y, m, sample_weight=w), rel=1e-12)


def test_auc_small_cases_by_hand():
    # all scores tied: 0.5
    assert evaluate(Metric.auc(), np.array([0.0, 1.0, 1.0, 0.0]), np.zeros((4, 1))) == 0.5
    # perfect and reversed ranking
    y = np.array([0.0, 0.0, 1.0, 1.0])
    assert evaluate(Metric.auc(), y, np.array([[1.0], [2.0], [3.0], [4.0]])) == 1.0
    assert evaluate(Metric.auc(), y, np.array([[4.0], [3.0], [2.0], [1.0]])) == 0.0
    # one positive tied with one of two negatives: (1 + 0.5) / 2
    y = np.array([0.0, 0.0, 1.0])
    assert evaluate(Metric.auc(), y, np.array([[1.0], [2.0], [2.0]])) == 0.75
    # weights act as row repetitions
    w = np.array([2.0, 1.0, 3.0, 1.0])
    y = np.array([0.0, 1.0, 1.0, 0.0])
    m = np.array([0.1, 0.4, 0.35, 0.8])
    rep = np.repeat(np.arange(4), w.astype(int))
    assert evaluate(Metric.auc(), y, m[:, None], w) == pytest.approx(
        evaluate(Metric.auc(), y[rep], m[rep, None]), rel=1e-15)


def test_auc_with_one_class_is_nan():
    assert np.isnan(evaluate(Metric.auc(), np.zeros(5), np.arange(5.0)[:, None]))
    assert np.isnan(evaluate(Metric.auc(), np.ones(5), np.arange(5.0)[:, None]))
    # positives with zero weight: none left
    assert np.isnan(evaluate(Metric.auc(), np.array([0.0, 1.0]), np.array([[0.0], [1.0]]), np.array([1.0, 0.0])))


@pytest.mark.parametrize("name", ["rmse", "mae", "logloss", "accuracy", "auc"])
def test_integer_weights_equal_repeated_rows(data, name):
    rng = np.random.default_rng(52)
    n = 300
    w = rng.integers(0, 4, size=n).astype(np.float64)
    rep = np.repeat(np.arange(n), w.astype(int))
    y = data["y_reg"][:n] if name in ("rmse", "mae") else data["y_bin"][:n]
    m = data["m_reg"][:n] if name in ("rmse", "mae") else data["m_bin"][:n]
    got = evaluate(Metric(name), y, m, w)
    assert got == pytest.approx(evaluate(Metric(name), y[rep], m[rep]), rel=1e-12)


@pytest.mark.parametrize("threshold", [0.0, 0.25, -1.5, float(np.log(0.7 / 0.3))])
def test_a_margin_exactly_at_the_threshold_is_class_0(threshold):
    """Class 1 needs margin > t (documented; as XGBoost's error, which counts p > 0.5 as
    class 1: the next test): at exactly t every row is class 0, so labels 0 score 1 and
    labels 1 score 0, and the next float above t is class 1. (The test above mixes labels
    0 and 1 at margin 0 in equal numbers: its score is the same either way.) Whole rows:
    exact, no tolerance."""
    t = threshold
    metrics = [Metric.margin_accuracy(t)] + ([Metric.accuracy()] if t == 0.0 else [])
    at, above, below = (np.full((5, 1), v) for v in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)))
    zeros, ones = np.zeros(5), np.ones(5)
    for metric in metrics:
        assert evaluate(metric, zeros, at) == 1.0
        assert evaluate(metric, ones, at) == 0.0
        assert evaluate(metric, ones, above) == 1.0 and evaluate(metric, zeros, above) == 0.0
        assert evaluate(metric, zeros, below) == 1.0 and evaluate(metric, ones, below) == 0.0
        # weighted, mixed: only the label-0 rows at t count right (weights 1 and 3), beside
        # a label 1 above t (5) and a label 0 below (6); a probability label 0.25 at t counts 0.75
        y = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
        m = np.array([t, t, t, t, above[0, 0], below[0, 0]])[:, None]
        w = np.arange(1.0, 7.0)
        assert evaluate(metric, y, m, w) == (1 + 3 + 5 + 6) / 21
        assert evaluate(metric, np.array([0.25]), np.array([[t]])) == 0.75


def test_margin_0_is_class_0_as_in_xgboost():
    """XGBoost's error of margins exactly 0 (probability 0.5 exactly, in float32 too):
    every row is class 0, so 1 - error is the share of label 0."""
    y = np.array([0.0, 0.0, 0.0, 1.0])
    data = xgb.DMatrix(np.zeros((4, 1)), y, base_margin=np.zeros(4))
    booster = xgb.train({"objective": "binary:logistic", "eval_metric": "error"}, data, 0)
    error = float(booster.eval(data).split(":")[1])
    assert error == 0.25
    assert evaluate(Metric.accuracy(), y, np.zeros((4, 1))) == 1 - error == 0.75
