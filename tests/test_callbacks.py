"""Callbacks in the boosting loop (boosters.callbacks): what they see, stopping, the
built-ins against naive references, the progress bar's terminal rules, logging, and
Ctrl-C (in process, and a real SIGINT to a subprocess)."""

import io
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import types

import numpy as np
import pytest

import boosters as bst
from boosters import callbacks as cb
from boosters.io.atomic import write_atomically
from boosters.training import callbacks as training_callbacks, scores
from boosters.training.interrupt import InterruptGuard
from boosters.objectives import evaluate
from support.numpy_references import gradients, leaf_index
from support.child_python import python_popen
from support.tree_compare import assert_same_trees


def regression(n=600, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] - 2 * X[:, 1] + np.sin(3 * X[:, 2]) + noise * rng.normal(size=n)
    return X, y


def split(X, y, n_train):
    return bst.Dataset(X[:n_train], y[:n_train]), bst.Dataset(X[n_train:], y[n_train:])


def train(n_train=400, val=True, callbacks=None, data=None, n_threads=1, **params):
    X, y = regression() if data is None else data
    train_set, val_set = split(X, y, n_train)
    params.setdefault("max_depth", 3)
    return bst.GBDTModel.train(train_set, bst.GBDTConfig(**params), val_set=val_set if val else None,
                               n_threads=n_threads, callbacks=callbacks)


class Recorder:
    """Every hook call, with what the env held at that moment."""

    def __init__(self, X_probe):
        self.X_probe = X_probe
        self.calls = []

    def before_training(self, env):
        self.calls.append(("before_training", env.round, env.n_rounds, env.model.n_trees))

    def before_iteration(self, env):
        self.calls.append(("before_iteration", env.round, env.model.n_trees, env.learning_rate))

    def after_iteration(self, env):
        scores = {data: {name: list(s) for name, s in metrics.items()} for data, metrics in env.evals_result.items()}
        self.calls.append(("after_iteration", env.round, env.model.n_trees, scores,
                           env.model.predict_raw(self.X_probe)))

    def after_training(self, env):
        self.calls.append(("after_training", env.model.n_trees, env.error))


# ----------------------------------------------------------------------------------
# The protocol: what callbacks see, in which order; stopping
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("objective", [bst.Objective.squared(), bst.Objective.softmax(3)])
def test_hooks_see_each_round_and_the_model_so_far(objective):
    X, y = regression()
    if objective.n_outputs == 3:
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])).astype(np.float64)
    recorder = Recorder(X[400:])
    config = bst.GBDTConfig(n_estimators=6, max_depth=3, objective=objective)
    train_set, val_set = split(X, y, 400)
    model = bst.GBDTModel.train(train_set, config, val_set=val_set, n_threads=1, callbacks=[recorder])
    plain = bst.GBDTModel.train(train_set, config, val_set=val_set, n_threads=1)
    assert_same_trees(model, plain)  # watching does not change the training
    n_out = objective.n_outputs
    calls = recorder.calls
    assert calls[0] == ("before_training", 0, 6, 0)
    assert calls[-1] == ("after_training", 6 * n_out, None)
    rounds = calls[1:-1]
    assert [c[:2] for c in rounds] == [(kind, r) for r in range(6) for kind in ("before_iteration", "after_iteration")]
    metric = config.resolved_metric.name
    for r in range(6):
        before, after = rounds[2 * r], rounds[2 * r + 1]
        assert before[2] == r * n_out and before[3] == config.learning_rate
        assert after[2] == (r + 1) * n_out
        assert after[3] == {"valid": {metric: model.eval_history[:r + 1]}}
        # env.model predicts with the trees so far: the final model's first r + 1 rounds, exactly
        expected = model.forest.predict_margins(X[400:], 1, n_trees=(r + 1) * n_out)
        np.testing.assert_array_equal(after[4], expected[:, 0] if n_out == 1 else expected)


def test_a_callback_stops_the_training_after_the_round():
    model = train(n_estimators=50, callbacks=[lambda env: env.round == 4])
    assert model.n_trees == 5 and model.best_iteration == 4 and len(model.eval_history) == 5
    assert_same_trees(model, train(n_estimators=5))

    class StopBefore:
        def before_iteration(self, env):
            return env.round == 3

    model = train(n_estimators=50, callbacks=[StopBefore()])
    assert model.n_trees == 3 and len(model.eval_history) == 3


def test_every_callback_runs_in_the_round_that_stops():
    seen = []
    model = train(n_estimators=50, callbacks=[lambda env: env.round == 2, lambda env: seen.append(env.round)])
    assert seen == [0, 1, 2] and model.n_trees == 3


def test_numpy_true_stops_the_training_as_true_does():
    """A comparison of NumPy scalars answers np.True_, not True: it stops too (it used to be
    ignored, and the training ran all its rounds)."""
    model = train(n_estimators=50, callbacks=[lambda env: np.int64(env.round) == 4])
    assert model.n_trees == 5
    assert_same_trees(model, train(n_estimators=50, callbacks=[lambda env: env.round == 4]))
    assert train(n_estimators=6, callbacks=[lambda env: np.False_]).n_trees == 6


@pytest.mark.parametrize("answer", ["stop", 1, 0.0, [True], np.array([True])])
def test_an_iteration_hook_answering_something_else_is_a_type_error(answer):
    with pytest.raises(TypeError, match="after_iteration.*True to stop"):
        train(n_estimators=5, callbacks=[lambda env: answer])


def test_before_and_after_training_answers_are_not_read():
    """XGBoost's TrainingCallback returns the model from before/after_training: not a stop."""
    class XGBoostStyle:
        def before_training(self, env):
            return env.model

        def after_training(self, env):
            return env.model

    assert_same_trees(train(n_estimators=4, callbacks=[XGBoostStyle()]), train(n_estimators=4))


@pytest.mark.parametrize("best", [-3, 999, 2.5, True, "1"])
def test_a_best_iteration_outside_the_rounds_grown_is_refused(best):
    """A callback's env.best_iteration cuts the model back: one outside the rounds grown made a
    model that load() refused."""
    def set_best(env):
        if env.round == 4:
            env.best_iteration = best
            return True

    with pytest.raises(ValueError, match="best_iteration"):
        train(n_estimators=10, callbacks=[set_best])


def test_a_best_iteration_set_by_a_callback_cuts_the_model_back(tmp_path):
    def set_best(env):
        if env.round == 4:
            env.best_iteration = np.int64(2)
            return True

    model = train(n_estimators=10, callbacks=[set_best])
    assert model.n_trees == 3 and model.best_iteration == 2
    assert_same_trees(model, train(n_estimators=3))
    model.save(tmp_path / "cut.bst")
    assert_same_trees(bst.GBDTModel.load(tmp_path / "cut.bst"), model)


def test_stop_with_early_stopping_keeps_the_best_round():
    X, y = np.random.default_rng(5).normal(size=(700, 4)), np.random.default_rng(6).normal(size=700)  # noise
    full = train(data=(X, y), n_estimators=8)
    best = int(np.argmin(full.eval_history))
    model = train(data=(X, y), n_estimators=100, early_stopping_rounds=50, callbacks=[lambda env: env.round == 7])
    assert model.best_iteration == best and model.n_trees == best + 1
    assert model.eval_history == full.eval_history


def test_after_training_sees_the_error():
    recorder = Recorder(np.zeros((1, 4)))

    def fail(env):
        if env.round == 2:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        train(n_estimators=10, callbacks=[fail, recorder])
    kind, n_trees, error = recorder.calls[-1]
    assert kind == "after_training" and n_trees == 3 and isinstance(error, RuntimeError)


def test_training_without_val_set_scores_the_training_rows_for_callbacks():
    X, y = regression()
    scores = {}
    model = train(val=False, n_estimators=5, callbacks=[cb.record_evaluation(scores)])
    assert list(scores) == ["train"] and len(scores["train"]["rmse"]) == 5
    rmse = np.sqrt(np.mean((model.predict(X[:400]) - y[:400]) ** 2))
    np.testing.assert_allclose(scores["train"]["rmse"][-1], rmse, rtol=1e-10)  # float summation order only
    assert np.all(np.diff(scores["train"]["rmse"]) < 0)
    assert model.eval_history == [] and model.best_score is None


def test_training_rows_are_scored_only_for_callbacks_that_read_scores(monkeypatch, tmp_path):
    """Without a val_set, learning_rate, checkpoint and a callback that says
    reads_scores = False cost no evaluation of the training rows; a plain one does."""
    n_evaluations = []
    real_evaluate = scores.evaluate
    monkeypatch.setattr(scores, "evaluate", lambda *args: n_evaluations.append(1) or real_evaluate(*args))

    class Quiet:
        reads_scores = False

        def __init__(self):
            self.seen = []

        def after_iteration(self, env):
            self.seen.append(dict(env.evals_result))

    quiet = Quiet()
    no_scores = [cb.learning_rate([0.3] * 4), cb.checkpoint(tmp_path / "m.npz", every=2), quiet]
    model = train(val=False, n_estimators=4, callbacks=no_scores)
    assert n_evaluations == [] and quiet.seen == [{}] * 4 and model.n_trees == 4
    seen = []
    train(val=False, n_estimators=4, callbacks=no_scores + [lambda env: seen.append(env.evals_result["train"])])
    assert len(n_evaluations) == 4 and len(seen[-1]["rmse"]) == 4


def test_scores_are_keyed_by_the_metric_label():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 4))
    y = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=600) + 1), 0, 3)  # relevance 0..3
    train_set = bst.Dataset(X[:400], y[:400], group=[20] * 20)
    val_set = bst.Dataset(X[400:], y[400:], group=[20] * 10)
    config = bst.GBDTConfig(n_estimators=5, objective=bst.Objective.lambdarank(), metric=bst.Metric.ndcg(5))
    result = {}
    model = bst.GBDTModel.train(train_set, config, val_set=val_set, n_threads=1,
                                callbacks=[cb.record_evaluation(result)])
    assert result == {"valid": {"ndcg@5": model.eval_history}} and len(model.eval_history) == 5
    expected = evaluate(bst.Metric.ndcg(5), y[400:], model.predict_raw(X[400:]).reshape(-1, 1), None,
                        val_set.group_boundaries)
    np.testing.assert_allclose(result["valid"]["ndcg@5"][-1], expected, rtol=1e-10)  # summation order only


@pytest.mark.parametrize("bad, error, match", [
    (5, TypeError, "callbacks must be a list"),
    ("early", TypeError, "callbacks must be a list"),
    ([3], TypeError, "callbacks: 3 is neither callable"),
])
def test_bad_callbacks_are_rejected(bad, error, match):
    with pytest.raises(error, match=match):
        train(n_estimators=2, callbacks=bad)


# ----------------------------------------------------------------------------------
# early_stopping
# ----------------------------------------------------------------------------------

def naive_early_stopping(history, rounds, min_delta, higher_is_better):
    """(best round, last round trained) of early stopping on a full run's history."""
    best, best_round = None, None
    for r, score in enumerate(history):
        if best is None or (score > best + min_delta if higher_is_better else score < best - min_delta):
            best, best_round = score, r
        if r - best_round >= rounds:
            return best_round, r
    return best_round, len(history) - 1


def test_early_stopping_callback_is_the_config_option():
    X, y = np.random.default_rng(5).normal(size=(700, 4)), np.random.default_rng(6).normal(size=700)
    by_config = train(data=(X, y), n_estimators=100, early_stopping_rounds=4)
    by_callback = train(data=(X, y), n_estimators=100, callbacks=[cb.early_stopping(4)])
    assert by_config.n_trees < 100
    assert_same_trees(by_config, by_callback)
    assert (by_config.best_iteration, by_config.best_score, by_config.eval_history) == \
        (by_callback.best_iteration, by_callback.best_score, by_callback.eval_history)


@pytest.mark.parametrize("objective, metric", [(bst.Objective.squared(), None),
                                               (bst.Objective.logistic(), bst.Metric.auc())])
def test_early_stopping_min_delta_against_a_naive_rule(objective, metric):
    X, y = regression(n=900, noise=2.0)
    if objective.name == "logistic":
        y = (y > 0).astype(np.float64)
    params = dict(data=(X, y), n_train=500, objective=objective, metric=metric, learning_rate=0.5)
    history = train(n_estimators=60, **params).eval_history
    higher = metric is not None
    # a min_delta that changes where the naive rule stops on this history
    min_delta = next(d for d in (0.001, 0.003, 0.01, 0.03, 0.1)
                     if naive_early_stopping(history, 5, d, higher) != naive_early_stopping(history, 5, 0.0, higher))
    for delta in (0.0, min_delta):
        best, last = naive_early_stopping(history, 5, delta, higher)
        model = train(n_estimators=60, callbacks=[cb.early_stopping(5, min_delta=delta)], **params)
        assert len(model.eval_history) == last + 1 and model.eval_history == history[:last + 1]
        assert model.best_iteration == best and model.n_trees == best + 1 and model.best_score == history[best]


def test_early_stopping_callback_and_config_option_together():
    """Both rules run: the training stops at the first that fires, and the model is cut
    back to the best score (the config's rule, min_delta 0), not the callback's best."""
    X, y = regression(n=900, noise=2.0)
    params = dict(data=(X, y), n_train=500, learning_rate=0.5)
    history = train(n_estimators=60, **params).eval_history
    callback_best, callback_last = naive_early_stopping(history, 3, 0.03, False)
    config_last = naive_early_stopping(history, 8, 0.0, False)[1]
    last = min(callback_last, config_last)
    best = naive_early_stopping(history[:last + 1], 8, 0.0, False)[0]
    assert callback_last < config_last and callback_best != best  # the case where the two differ
    model = train(n_estimators=60, early_stopping_rounds=8, callbacks=[cb.early_stopping(3, min_delta=0.03)],
                  **params)
    assert model.eval_history == history[:last + 1]
    assert model.best_iteration == best and model.n_trees == best + 1 and model.best_score == history[best]


@pytest.mark.parametrize("args, error, match", [
    ((0,), ValueError, "rounds must be >= 1"), ((2.5,), TypeError, "rounds must be an int"),
    ((3, -0.1), ValueError, "min_delta must be finite and >= 0"), ((3, "x"), TypeError, "min_delta"),
])
def test_early_stopping_arguments(args, error, match):
    with pytest.raises(error, match=match):
        cb.early_stopping(*args)


def test_early_stopping_needs_a_val_set():
    with pytest.raises(ValueError, match="early stopping needs a val_set"):
        train(val=False, n_estimators=5, callbacks=[cb.early_stopping(2)])


# ----------------------------------------------------------------------------------
# log_evaluation, record_evaluation
# ----------------------------------------------------------------------------------

def test_log_evaluation_logs_every_period(caplog):
    caplog.set_level(logging.INFO, logger="boosters")
    model = train(n_estimators=10, callbacks=[cb.log_evaluation(3)])
    assert caplog.messages == [f"[{r}] valid rmse: {model.eval_history[r - 1]:.6f}" for r in (3, 6, 9)]
    assert all(rec.name == "boosters" and rec.levelno == logging.INFO for rec in caplog.records)


def test_log_evaluation_without_val_set_logs_the_training_score(caplog):
    caplog.set_level(logging.INFO, logger="boosters")
    X, y = regression()
    model = train(val=False, n_estimators=4, callbacks=[cb.log_evaluation(2)])
    assert [m.split(":")[0] for m in caplog.messages] == ["[2] train rmse", "[4] train rmse"]
    rmse = np.sqrt(np.mean((model.predict(X[:400]) - y[:400]) ** 2))
    assert abs(float(caplog.messages[-1].split(": ")[1]) - rmse) < 1e-6  # printed with 6 decimals


@pytest.mark.parametrize("period, error", [(0, ValueError), (1.0, TypeError), (True, TypeError)])
def test_log_evaluation_period(period, error):
    with pytest.raises(error, match="period"):
        cb.log_evaluation(period)


def test_record_evaluation_holds_every_round():
    result = {"stale": 1}
    model = train(n_estimators=7, callbacks=[cb.record_evaluation(result)])
    assert result == {"valid": {"rmse": model.eval_history}} and len(model.eval_history) == 7
    assert result["valid"]["rmse"] is not model.eval_history  # a copy the training does not touch
    with pytest.raises(TypeError, match="result must be a dict"):
        cb.record_evaluation([])


# ----------------------------------------------------------------------------------
# learning_rate schedules
# ----------------------------------------------------------------------------------

def test_constant_schedule_is_the_plain_training():
    assert_same_trees(train(n_estimators=6, callbacks=[cb.learning_rate([0.3] * 6)]),
                      train(n_estimators=6, learning_rate=0.3))


@pytest.mark.parametrize("as_callable", [False, True])
def test_schedule_scales_each_round_by_its_rate(as_callable):
    """Every leaf of round r holds rate_r * Newton step of the gradients at the margins
    of the rounds before it (squared error: g = margin - y, h = 1; l2 = 1), every row sampled."""
    rates = [0.5, 0.1, 0.9, 0.05, 0.3]
    schedule = (lambda r: rates[r]) if as_callable else rates
    X, y = regression()
    model = train(val=False, n_estimators=5, subsample=1.0, callbacks=[cb.learning_rate(schedule)])
    Xt, yt = X[:400], y[:400]
    for r, tree in enumerate(model.trees):
        margins = model.forest.predict_margins(Xt, 1, n_trees=r)
        g, h = gradients("squared", margins, yt)
        leaves = leaf_index(tree, Xt)
        for leaf in np.unique(leaves):
            rows = leaves == leaf
            expected = -rates[r] * g[rows].sum() / (h[rows].sum() + 1.0)
            np.testing.assert_allclose(tree.value[leaf], expected, rtol=1e-9, err_msg=f"round {r} leaf {leaf}")
    same_rate = train(val=False, n_estimators=5, subsample=1.0, learning_rate=0.5)  # round 0 is the plain first tree
    assert np.array_equal(model.trees[0].value, same_rate.trees[0].value)
    assert not np.array_equal(model.trees[1].value, same_rate.trees[1].value)


@pytest.mark.parametrize("schedule, error, match", [
    ("0.1", TypeError, "schedule must be a list"), (0.1, TypeError, "schedule must be a list"),
    ([0.1, -0.2], ValueError, r"schedule\[1\] must be finite and > 0"),
    ([0.1, float("nan")], ValueError, r"schedule\[1\]"),
])
def test_schedule_arguments(schedule, error, match):
    with pytest.raises(error, match=match):
        cb.learning_rate(schedule)


def test_schedule_checked_against_the_run():
    with pytest.raises(ValueError, match="schedule has 3 learning rates but the training has 5 rounds"):
        train(n_estimators=5, callbacks=[cb.learning_rate([0.1] * 3)])
    with pytest.raises(ValueError, match=r"schedule\(2\) must be finite and > 0.0, got 0.0"):
        train(n_estimators=5, callbacks=[cb.learning_rate(lambda r: 0.1 if r < 2 else 0.0)])
    with pytest.raises(TypeError, match=r"schedule\(0\) must be a number, got str"):
        train(n_estimators=5, callbacks=[cb.learning_rate(lambda r: "fast")])


# ----------------------------------------------------------------------------------
# checkpoint
# ----------------------------------------------------------------------------------

class ReadCheckpoint:
    """After each round: the checkpoint file's number of trees (None: no file yet)."""

    def __init__(self, path):
        self.path, self.seen = path, []

    def after_iteration(self, env):
        self.seen.append(bst.GBDTModel.load(self.path).n_trees if os.path.exists(self.path) else None)


def test_checkpoint_saves_every_rounds_and_the_final_model(tmp_path):
    path = tmp_path / "model.npz"
    reader = ReadCheckpoint(path)
    X, _ = regression()
    model = train(n_estimators=10, callbacks=[cb.checkpoint(path, every=4), reader])
    assert reader.seen == [None] * 3 + [4] * 4 + [8] * 3
    saved = bst.GBDTModel.load(path)
    assert_same_trees(saved, model)
    np.testing.assert_array_equal(saved.predict(X), model.predict(X))
    assert saved.best_iteration == model.best_iteration == 9
    assert os.listdir(tmp_path) == ["model.npz"]  # no temporary file left


def test_checkpoint_after_early_stopping_is_the_best_round(tmp_path):
    X, y = np.random.default_rng(5).normal(size=(700, 4)), np.random.default_rng(6).normal(size=700)
    path = tmp_path / "model.npz"
    model = train(data=(X, y), n_estimators=100, early_stopping_rounds=4, callbacks=[cb.checkpoint(str(path), 2)])
    saved = bst.GBDTModel.load(path)
    assert saved.n_trees == model.n_trees == model.best_iteration + 1 < 100
    assert_same_trees(saved, model)


def test_checkpoint_keeps_the_last_save_when_training_fails(tmp_path):
    path = tmp_path / "model.npz"

    def fail(env):
        if env.round == 6:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        train(n_estimators=10, callbacks=[cb.checkpoint(path, every=3), fail])
    assert bst.GBDTModel.load(path).n_trees == 6
    assert os.listdir(tmp_path) == ["model.npz"]


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_interrupted_save_leaves_the_old_file_whole(tmp_path, monkeypatch, failing):
    path = str(tmp_path / "model.npz")
    write_atomically(path, b"old model")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, failing, interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, b"new model, half written")
    monkeypatch.undo()
    with open(path, "rb") as f:
        assert f.read() == b"old model"
    assert os.listdir(tmp_path) == ["model.npz"]


def test_save_replaces_the_file_atomically(tmp_path, monkeypatch):
    model, old = train(n_estimators=3), train(n_estimators=2)
    path = tmp_path / "model.npz"
    old.save(path)

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)  # Ctrl-C after the write, before the rename
    with pytest.raises(KeyboardInterrupt):
        model.save(path)
    monkeypatch.undo()
    assert bst.GBDTModel.load(path).n_trees == 2 and os.listdir(tmp_path) == ["model.npz"]
    model.save(str(path))
    assert_same_trees(bst.GBDTModel.load(path), model)
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, got int"):
        model.save(3)


def test_checkpoint_file_mode_follows_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomically(str(tmp_path / "m.npz"), b"x")
    finally:
        os.umask(old)
    assert (os.stat(tmp_path / "m.npz").st_mode & 0o777) == 0o644  # as open() makes it, not mkstemp's 0600


def test_checkpoint_refuses_a_fifo_before_training_and_saves_through_a_symlink(tmp_path):
    """os.replace turned a FIFO (or a device) at the path into a regular file, and a link
    into a file of its own: the FIFO is refused before the first round, a link followed."""
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    rounds = []
    with pytest.raises(OSError, match="pipe.npz' is a FIFO"):
        train(n_estimators=3, callbacks=[cb.checkpoint(fifo, every=1), lambda env: rounds.append(env.round)])
    assert rounds == [] and fifo.is_fifo()
    target, link = tmp_path / "model.npz", tmp_path / "link.npz"
    link.symlink_to(target)
    model = train(n_estimators=3, callbacks=[cb.checkpoint(link, every=2)])
    assert link.is_symlink() and sorted(os.listdir(tmp_path)) == ["link.npz", "model.npz", "pipe.npz"]
    X, _ = regression()
    np.testing.assert_array_equal(bst.GBDTModel.load(target).predict(X), model.predict(X))  # exactly


def test_checkpoint_arguments(tmp_path):
    with pytest.raises(TypeError, match="path must be a str or path-like"):
        cb.checkpoint(3)
    with pytest.raises(ValueError, match="every must be >= 1"):
        cb.checkpoint(tmp_path / "m.npz", every=0)
    with pytest.raises(ValueError, match="path: the directory .* does not exist"):
        train(n_estimators=2, callbacks=[cb.checkpoint(tmp_path / "missing" / "m.npz")])


# ----------------------------------------------------------------------------------
# Progress bar: only in a terminal or notebook
# ----------------------------------------------------------------------------------

class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_shows_rounds_and_the_latest_score():
    out = io.StringIO()
    model = train(n_estimators=12, callbacks=[cb.ProgressBar(out, disable=False)])
    text = out.getvalue()
    assert "12/12" in text and "round" in text
    assert f"valid rmse={model.eval_history[-1]:.5g}" in text


def test_progress_bar_draws_nothing_outside_a_terminal(monkeypatch):
    out = io.StringIO()
    train(n_estimators=5, callbacks=[cb.ProgressBar(out)])
    assert out.getvalue() == ""
    terminal = FakeTerminal()
    train(n_estimators=5, callbacks=[cb.ProgressBar(terminal)])
    assert "5/5" in terminal.getvalue() and "\r" in terminal.getvalue()
    monkeypatch.setenv("TERM", "dumb")  # a terminal without cursor control
    dumb = FakeTerminal()
    train(n_estimators=5, callbacks=[cb.ProgressBar(dumb)])
    assert dumb.getvalue() == ""
    never = FakeTerminal()
    train(n_estimators=5, callbacks=[cb.ProgressBar(never, disable=True)])
    assert never.getvalue() == ""


def test_verbosity_shows_a_bar_in_a_terminal_and_log_lines_elsewhere(monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="boosters")
    monkeypatch.delenv("TERM", raising=False)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    train(n_estimators=6, verbosity=1)
    assert "6/6" in terminal.getvalue() and "valid rmse=" in terminal.getvalue()
    assert [m for m in caplog.messages if m.startswith("[")] == []  # the bar shows the scores
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    train(n_estimators=6, verbosity=1)
    assert sys.stderr.getvalue() == ""
    assert len([m for m in caplog.messages if m.startswith("[")]) == 6


def test_no_default_bar_without_tqdm(monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="boosters")
    for name in [m for m in sys.modules if m == "tqdm" or m.startswith("tqdm.")] + ["tqdm"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed: importing it raises ImportError
    monkeypatch.delenv("TERM", raising=False)
    assert not training_callbacks.progress_bar_wanted(FakeTerminal())
    train(n_estimators=3, verbosity=1)
    assert len([m for m in caplog.messages if m.startswith("[")]) == 3
    with pytest.raises(ImportError, match=r"pip install 'boosters\[progress\]'"):
        train(n_estimators=3, callbacks=[cb.ProgressBar()])


def test_notebook_gets_a_bar(monkeypatch, capsys):
    class ZMQInteractiveShell:  # the class name Jupyter kernels' shells have (or inherit)
        pass

    class ColabShell(ZMQInteractiveShell):
        pass

    for shell in (ZMQInteractiveShell, ColabShell):
        monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=shell))
        assert training_callbacks._in_notebook() and training_callbacks.progress_bar_wanted(io.StringIO())
    train(n_estimators=4, callbacks=[cb.ProgressBar()])  # no ipywidgets here: the text bar, on stderr
    assert "4/4" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    assert not training_callbacks._in_notebook()


def test_progress_bar_disable_argument():
    with pytest.raises(TypeError, match="disable must be a bool or None"):
        cb.ProgressBar(disable="no")


# ----------------------------------------------------------------------------------
# Ctrl-C
# ----------------------------------------------------------------------------------

def sigint_at(round_, times=1):
    def send(env):
        if env.round == round_:
            for _ in range(times):
                os.kill(os.getpid(), signal.SIGINT)
    return send


@pytest.mark.usefixtures("sigint_handler")
def test_ctrl_c_returns_the_completed_rounds(caplog):
    model = train(n_estimators=50, callbacks=[sigint_at(3)])
    assert model.n_trees == 4 and model.best_iteration == 3 and len(model.eval_history) == 4
    assert_same_trees(model, train(n_estimators=4))
    assert caplog.records[-1].levelno == logging.WARNING
    assert caplog.messages[-1] == "training interrupted (Ctrl-C): the model keeps the 4 completed rounds"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


@pytest.mark.usefixtures("sigint_handler")
def test_ctrl_c_with_early_stopping_keeps_the_best_round(caplog):
    X, y = np.random.default_rng(5).normal(size=(700, 4)), np.random.default_rng(6).normal(size=700)
    history = train(data=(X, y), n_estimators=8).eval_history
    best = int(np.argmin(history))
    model = train(data=(X, y), n_estimators=100, early_stopping_rounds=50, callbacks=[sigint_at(7)])
    assert model.n_trees == best + 1 and model.eval_history == history
    assert caplog.messages[-1].endswith(f"8 completed rounds, cut back to the best round {best + 1}")


@pytest.mark.usefixtures("sigint_handler")
def test_second_ctrl_c_raises():
    with pytest.raises(KeyboardInterrupt):
        train(n_estimators=50, callbacks=[sigint_at(2, times=2)])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_guard_leaves_other_threads_and_custom_handlers_alone():
    installed = []
    thread = threading.Thread(target=lambda: installed.append(InterruptGuard().__enter__()._previous))
    thread.start()
    thread.join()
    assert installed == [None]  # Python handles signals in the main thread only

    def custom(signum, frame):
        pass

    previous = signal.signal(signal.SIGINT, custom)
    try:
        with InterruptGuard():
            assert signal.getsignal(signal.SIGINT) is custom
    finally:
        signal.signal(signal.SIGINT, previous)


CHILD = """
import json, sys, numpy as np, boosters as bst
from boosters import callbacks as cb
rng = np.random.default_rng(0)
X = rng.normal(size=(1000, 4)); y = X[:, 0] - 2 * X[:, 1] + 0.3 * rng.normal(size=1000)
val = bst.Dataset(X[800:], y[800:]) if sys.argv[1] == "val" else None
callbacks = [cb.checkpoint("model.npz", every=7)] if val is not None else None
print("START", flush=True)
model = bst.GBDTModel.train(bst.Dataset(X[:800], y[:800]), bst.GBDTConfig(n_estimators=10**7, max_depth=2),
                            val_set=val, n_threads=1, callbacks=callbacks)
again = bst.GBDTModel.from_bytes(model.to_bytes())  # every array checked
result = {"n_trees": model.n_trees, "best_iteration": model.best_iteration,
          "same": bool(np.array_equal(again.predict(X), model.predict(X)))}
if val is not None:
    saved = bst.GBDTModel.load("model.npz")
    result["saved_same"] = saved.n_trees == model.n_trees and bool(np.array_equal(saved.predict(X), model.predict(X)))
print("RESULT " + json.dumps(result), flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
@pytest.mark.usefixtures("sigint_handler")
@pytest.mark.parametrize("path", ["fast", "val"])
def test_sigint_to_a_training_process(tmp_path, path):
    """A real Ctrl-C: the fast path (no callbacks, no val_set: many rounds per nogil
    block) and the round-by-round path with a checkpoint; the process returns the model
    of the completed rounds instead of dying. Runs outside the source tree."""
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    proc = python_popen(str(script), path, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if line.startswith("START"):
                break
        else:
            pytest.fail(f"the child never started: {proc.stderr.read()}")
        # let it train a while: past the setup, inside the rounds (10**7 rounds take hours)
        threading.Event().wait(1.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    result = json.loads([ln for ln in out.splitlines() if ln.startswith("RESULT ")][0][7:])
    assert 0 < result["n_trees"] < 10**7
    assert result["best_iteration"] == result["n_trees"] - 1 and result["same"]
    assert f"training interrupted (Ctrl-C): the model keeps the {result['n_trees']} completed rounds" in err
    if path == "val":
        assert result["saved_same"]
        assert sorted(os.listdir(tmp_path)) == ["child.py", "model.npz"]


# ----------------------------------------------------------------------------------
# Verbose output in a plain script: logging that shows without any setup
# ----------------------------------------------------------------------------------

SCRIPT = """
import logging, sys, numpy as np, boosters as bst
rng = np.random.default_rng(0)
X, y = rng.normal(size=(400, 3)), rng.normal(size=400)
bst.GBDTModel.train(bst.Dataset(X[:300], y[:300]), bst.GBDTConfig(n_estimators=30, early_stopping_rounds=3, verbosity=1),
                    val_set=bst.Dataset(X[300:], y[300:]), callbacks=eval(sys.argv[1]))
log = logging.getLogger("boosters")
print("AFTER", log.handlers, log.level, flush=True)
"""


def start_script(tmp_path, callbacks, stderr):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    return python_popen(str(script), callbacks, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=stderr, text=True)


@pytest.mark.parametrize("callbacks", ["None", "[bst.callbacks.log_evaluation(1)]"])
def test_plain_script_prints_verbose_lines_to_stderr(tmp_path, callbacks):
    proc = start_script(tmp_path, callbacks, subprocess.PIPE)
    stdout, stderr = proc.communicate(timeout=120)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if not ln.startswith(("--", "Running", "ninja"))]  # editable rebuild
    rounds = [ln for ln in lines if ln.startswith("[")]
    assert rounds and [ln.split("]")[0] for ln in rounds] == [f"[{r}" for r in range(1, len(rounds) + 1)]  # once each
    assert lines[-1].startswith("early stopping: best round ")
    assert "\r" not in done.stderr and "\x1b" not in done.stderr  # no control characters in a log
    assert done.stdout.splitlines()[-1] == "AFTER [] 0"  # the temporary handler and level are gone


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_plain_script_in_a_terminal_shows_the_bar(tmp_path):
    import fcntl
    import pty
    import struct
    import termios
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal's size: 100 columns
    proc = start_script(tmp_path, "None", follower)  # stderr is a terminal
    os.close(follower)
    chunks = []
    try:
        while True:  # read while it runs, so that a full terminal buffer never blocks it
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed its side and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.communicate(timeout=120)
    finally:
        os.close(leader)
        proc.kill()
    text = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0, text
    assert "\r" in text and "round" in text and "valid rmse=" in text and "<" in text  # "elapsed<ETA"
    assert "early stopping: best round " in text  # the log line, printed above the bar
    assert not any(ln.startswith("[1] valid") for ln in text.splitlines())  # the bar replaces per-round lines


def test_a_callback_may_set_the_learning_rate_itself():
    class Halve:
        def before_iteration(self, env):
            env.learning_rate = 0.6 * 0.5 ** env.round

    by_env = train(n_estimators=4, callbacks=[Halve()])
    by_schedule = train(n_estimators=4, callbacks=[cb.learning_rate([0.6, 0.3, 0.15, 0.075])])
    assert_same_trees(by_env, by_schedule)

    class Zero:
        def before_iteration(self, env):
            env.learning_rate = 0.0 if env.round == 2 else 0.3

    with pytest.raises(ValueError, match="env.learning_rate must be finite and > 0.0, got 0.0"):
        train(n_estimators=4, callbacks=[Zero()])


def test_a_checkpoint_writes_the_encoding_its_name_asks_for(tmp_path):
    # as GBDTModel.save: .json the JSON document, .npz the binary one; another suffix is
    # refused when the callback is made, before any training
    from boosters.callbacks import checkpoint

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    data, config = bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=4)
    for name in ("model.json", "model.npz"):
        model = bst.GBDTModel.train(data, config, callbacks=[checkpoint(tmp_path / name, every=2)])
        written = (tmp_path / name).read_bytes()
        assert written == (model.to_json_bytes() if name.endswith(".json") else model.to_bytes())
    with pytest.raises(ValueError, match="'.txt'"):
        checkpoint(tmp_path / "model.txt")
