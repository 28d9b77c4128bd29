"""Prediction from many Python threads at once on one model (issue 14: `predict` is safe to
call concurrently). The first prediction of a fresh or loaded model builds and validates its
flat node arrays: threads that race on it must each get the right answer, and a model whose
trees are being read by other threads must never give a wrong or partial result."""

import numpy as np
import pytest

import boosters as bst
from support.threads import in_threads

N_JOBS = 8


def _models():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    X[:, 4] = rng.integers(0, 7, 3000)  # categorical codes
    y_class = np.digitize(X[:, 0] + np.where(X[:, 4] % 2 == 0, 0.5, -0.5), [-0.5, 0.5]).astype(float)
    y_reg = X[:, 0] * X[:, 1] + X[:, 2] + 0.1 * rng.normal(size=3000)
    softmax = bst.GBDTModel.train(bst.Dataset(X, y_class, categorical_features=[4]),
                                  bst.GBDTConfig(n_estimators=30, objective=bst.Objective.softmax(3), max_depth=4))
    linear = bst.GBDTModel.train(bst.Dataset(X[:, :4], y_reg), bst.GBDTConfig(n_estimators=20, linear_leaves=True))
    # numeric splits only: the packed kernel (float32 rows: its float32 thresholds)
    numeric = bst.GBDTModel.train(bst.Dataset(X[:, :4], y_reg), bst.GBDTConfig(n_estimators=40))
    return {"softmax, categorical": (softmax, X), "linear leaves": (linear, X[:, :4]),
            "numeric, packed": (numeric, X[:, :4].astype(np.float32))}


MODELS = _models()


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("fresh", [False, True], ids=["warm", "loaded"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_predictions_from_many_threads_equal_serial_ones(name, fresh, n_threads):
    """8 Python threads predict (and predict_raw / predict_leaf) overlapping row slices of one
    model at once; every result equals the serial one exactly. `loaded`: a model just read
    from bytes, so the threads race on building its flat arrays."""
    trained, X = MODELS[name]
    model = bst.GBDTModel.from_bytes(trained.to_bytes()) if fresh else trained
    slices = [slice(i * 300, i * 300 + 900) for i in range(N_JOBS)]
    methods = ("predict", "predict_raw", "predict_leaf")
    expected = {m: getattr(trained, m)(X, n_threads=1) for m in methods}
    jobs = [lambda s=s, m=m: getattr(model, m)(X[s], n_threads=n_threads) for s in slices for m in methods]
    results = in_threads(jobs)
    for (s, m), got in zip([(s, m) for s in slices for m in methods], results):
        np.testing.assert_array_equal(got, expected[m][s])
