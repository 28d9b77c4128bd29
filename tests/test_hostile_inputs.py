"""Defects found by hostile testing (issue 10): each test failed before its fix."""

import textwrap

import numpy as np
import pytest

import boosters as bst
from boosters._lib.threads import max_n_threads
from support.child_python import python_run


def _model(n=2000, d=5, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5)), X


@pytest.mark.parametrize("n_threads", [max_n_threads() + 1, 40_000, 100_000])
def test_too_many_threads_is_a_value_error(n_threads):
    model, X = _model()
    with pytest.raises(ValueError, match="n_threads"):
        model.predict(X, n_threads=n_threads)
    with pytest.raises(ValueError, match="n_threads"):
        bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=1), n_threads=n_threads)


def test_many_threads_below_the_limit_still_predict_the_same():
    model, X = _model()
    np.testing.assert_array_equal(model.predict(X, n_threads=64), model.predict(X, n_threads=1))


_FORK_SCRIPT = textwrap.dedent("""
    import os, sys, warnings
    import numpy as np, boosters as bst
    X = np.random.default_rng(0).normal(size=(50_000, 10))
    m = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5), n_threads=2)
    expected = m.predict(X, n_threads=2)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            same = np.array_equal(m.predict(X), expected) and np.array_equal(m.predict(X, n_threads=2), expected)
            m2 = bst.GBDTModel.train(bst.Dataset(X[:5000], X[:5000, 0]), bst.GBDTConfig(n_estimators=2))
        n_warned = sum("forked" in str(c.message) for c in caught)
        os.write(w, f"{int(same)} {n_warned} {m2.n_trees}".encode())
        os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    print("CHILD", os.read(r, 100).decode(), os.waitstatus_to_exitcode(status))
""")


def test_forked_child_predicts_and_trains_serially_with_one_warning(tmp_path):
    # before the fix the child hung in libgomp (a parallel region after fork); run outside
    # the source tree, whose ./boosters (no compiled kernels) `-c` would import first
    out = python_run("-c", _FORK_SCRIPT, capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("CHILD")][0]
    same, n_warned, n_trees, code = line.split()[1:]
    assert (same, n_warned, n_trees, code) == ("1", "1", "2", "0")


def test_feature_of_only_infinities_can_be_split():
    # the cut between -inf and +inf was their midpoint, NaN, so the feature never split
    rng = np.random.default_rng(0)
    X = np.where(rng.random((400, 1)) < 0.5, -np.inf, np.inf)
    y = (X[:, 0] > 0).astype(np.float64)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=20, learning_rate=0.5))
    tree = model.trees[0]
    assert tree.split_feature[0] == 0
    assert -np.inf < tree.threshold[0] < np.inf
    np.testing.assert_allclose(model.predict(X), y, atol=1e-3)


def test_softmax_n_classes_must_be_an_int():
    with pytest.raises(TypeError, match="n_classes"):
        bst.Objective.softmax(3.0)
    with pytest.raises(ValueError, match="n_classes"):
        bst.Objective.softmax(1)


@pytest.mark.parametrize("seed", [2**64, -1])
def test_seed_outside_uint64_is_rejected_naming_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        bst.GBDTConfig(seed=seed)


def test_largest_uint64_seed_trains():
    X = np.random.default_rng(0).normal(size=(300, 3))
    cfg = bst.GBDTConfig(seed=2**64 - 1, histogram_mode="i16", n_estimators=2)
    assert bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), cfg).n_trees == 2


@pytest.mark.usefixtures("sigint_handler")
def test_ctrl_c_interrupts_a_long_predict_between_row_blocks(monkeypatch):
    # before: one kernel call over all rows, so Ctrl-C took effect only when it returned
    # (57 s later in the report); now the kernel runs in row blocks and the interpreter
    # raises KeyboardInterrupt between them. SIGINT arrives as the first block ends: the
    # rows after that block must never be predicted.
    import os
    import signal

    from boosters.model import prediction

    model, X = _model(n=2000)
    X = np.tile(X, (20, 1))  # 40k rows
    monkeypatch.setattr(prediction, "PREDICT_BLOCK_VISITS", 4096 * model.n_trees)  # 4096-row blocks
    kernel, rows_predicted = prediction._predict_block, []  # the packed kernel's call per row block

    def first_block_interrupted(packed, X_block, *args):
        kernel(packed, X_block, *args)
        rows_predicted.append(X_block.shape[0])
        if len(rows_predicted) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C during the first block

    monkeypatch.setattr(prediction, "_predict_block", first_block_interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.predict(X, n_threads=1)
    assert rows_predicted == [4096]  # before the fix: [40000], one call for every row


def _one_class_validation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = (X[:, 0] > 0).astype(np.float64)
    return bst.Dataset(X, y), bst.Dataset(X[:50], np.ones(50))


def test_nan_validation_metric_with_early_stopping_is_an_error():
    # before: AUC of a one-class validation set (NaN) was taken, and early stopping kept one round
    train, val = _one_class_validation()
    cfg = bst.GBDTConfig(n_estimators=20, objective=bst.Objective.logistic(), metric=bst.Metric.auc(),
                         early_stopping_rounds=3)
    with pytest.raises(ValueError, match="auc is NaN.*both classes"):
        bst.GBDTModel.train(train, cfg, val_set=val)


def test_nan_validation_metric_without_early_stopping_warns_once_and_keeps_every_round():
    train, val = _one_class_validation()
    cfg = bst.GBDTConfig(n_estimators=5, objective=bst.Objective.logistic(), metric=bst.Metric.auc())
    with pytest.warns(RuntimeWarning, match="auc is NaN") as caught:
        model = bst.GBDTModel.train(train, cfg, val_set=val)
    assert sum("is NaN" in str(w.message) for w in caught) == 1
    assert model.n_trees == 5 and model.best_iteration == 4
    assert len(model.eval_history) == 5 and np.isnan(model.eval_history).all()


@pytest.mark.parametrize("labels, weights, name", [(1e39, None, "y"), (-3e37, None, "y"), (1.0, 1e39, "weights"),
                                                    (1e30, 1e9, "weights"), (1e-30, 1e39, "weights")])
def test_labels_or_weights_that_overflow_float32_gradients_are_rejected(labels, weights, name):
    # before: an all-NaN model without an error
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = labels * X[:, 0]
    w = None if weights is None else np.full(200, weights)
    with pytest.raises(ValueError, match=f"^{name}: .*float32"):
        bst.GBDTModel.train(bst.Dataset(X, y, weights=w), bst.GBDTConfig(n_estimators=2))


@pytest.mark.parametrize("objective", [bst.Objective.logistic(), bst.Objective.squared()])
def test_large_but_safe_labels_and_weights_train_finite_models(objective):
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(np.float64) * (1.0 if objective.name == "logistic" else 1e36)
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=np.full(200, 1e30 if objective.name == "logistic" else 1.0)),
                                bst.GBDTConfig(n_estimators=3, objective=objective))
    assert np.isfinite(model.predict(X)).all()
