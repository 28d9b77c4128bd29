"""Callbacks: code that runs inside the boosting loop of `GBDTModel.train`.

A callback is any object with some of these methods, each taking the training's
`CallbackEnv` (one object for the whole run, updated as it goes):

- ``before_training(env)``: once, before the first round;
- ``before_iteration(env)``: before round ``env.round`` grows (it may set
  ``env.learning_rate``);
- ``after_iteration(env)``: after round ``env.round`` grew and was evaluated;
- ``after_training(env)``: once at the end, also when the training fails
  (``env.error`` is the exception then, None otherwise).

``before_iteration`` or ``after_iteration`` returning True stops the training after the
current round; the model keeps the completed rounds (cut back to ``env.best_iteration``
when early stopping set it). A plain function is an ``after_iteration`` callback.

Without a validation set, the training rows are scored every round (``env.evals_result
["train"]``) only when a callback reads the scores: every callback does, unless its
class says ``reads_scores = False`` (as `learning_rate` and `checkpoint` do).

Built-ins: `early_stopping`, `log_evaluation`, `record_evaluation`, `learning_rate`,
`checkpoint` and `ProgressBar` (tqdm; shown by default at ``verbosity >= 1`` in an
interactive terminal or a notebook).
"""

from __future__ import annotations

import os

from boosters._lib.checks import require_float, require_int
from boosters.io import model_files
from boosters.io.atomic import write_target
from boosters.training.callbacks import CallbackEnv, ProgressBar, early_stopping, log_evaluation

__all__ = ["CallbackEnv", "ProgressBar", "checkpoint", "early_stopping", "learning_rate", "log_evaluation",
           "record_evaluation"]


# ---------------------------------------------------------------------------------------
# LightGBM's and XGBoost's own callbacks

# their callback classes -> how to write them with boosters' (for the error of the others)
_OTHERS = {"lightgbm": "boosters.callbacks.early_stopping, log_evaluation, record_evaluation or learning_rate "
                       "(LightGBM's reset_parameter(learning_rate=...))",
           "xgboost": "boosters.callbacks.early_stopping or log_evaluation; a TrainingCallback subclass becomes a "
                      "class with after_iteration(env) returning True to stop"}


def as_boosters_callbacks(callbacks):
    """`callbacks` with LightGBM's and XGBoost's own early stopping, logging and recording
    callbacks replaced by the boosters callback of the same meaning (lightgbm.early_stopping(10)
    is early_stopping(10)); any other callback of theirs is a TypeError saying how to write
    it (their callbacks read their own training's state, which boosters does not have)."""
    if callbacks is None or isinstance(callbacks, (str, bytes)) or not hasattr(callbacks, "__iter__"):
        return callbacks  # checked (and refused) with the others by the trainer
    return [_translated(c) for c in callbacks]


def _translated(callback):
    library = (type(callback).__module__ or "").split(".")[0]
    if library not in _OTHERS:
        return callback
    kind, given = type(callback).__name__, vars(callback)
    if kind == "_EarlyStoppingCallback" and not isinstance(given.get("min_delta"), list):
        return early_stopping(given["stopping_rounds"], given["min_delta"])
    if kind == "_LogEvaluationCallback":
        return log_evaluation(given["period"])
    if kind == "_RecordEvaluationCallback":
        return record_evaluation(given["eval_result"])
    if kind == "EarlyStopping" and given.get("data") is None and given.get("metric_name") is None \
            and given.get("maximize") is None and not given.get("save_best"):
        return early_stopping(given["rounds"], given.get("_min_delta", 0.0))
    if kind == "EvaluationMonitor":
        return log_evaluation(given["period"])
    raise TypeError(f"callbacks: {library}'s {kind} is {library}'s own callback; write it with "
                    f"{_OTHERS[library]} (boosters' early stopping watches the last validation set's first "
                    f"metric and always keeps the best round)")


# ---------------------------------------------------------------------------------------
# recording


class _RecordEvaluation:
    reads_scores = True

    def __init__(self, result: dict):
        if not isinstance(result, dict):
            raise TypeError(f"result must be a dict, got {type(result).__name__}")
        self.result = result

    def before_training(self, env: CallbackEnv) -> None:
        self.result.clear()
        for data, metrics in env.evals_result.items():
            self.result[data] = {name: [] for name in metrics}

    def after_iteration(self, env: CallbackEnv) -> None:
        for data, metrics in env.evals_result.items():
            for name, scores in metrics.items():
                # the metrics' entries appear at the first round scored (custom metrics name themselves)
                self.result[data].setdefault(name, []).append(scores[-1])


def record_evaluation(result: dict) -> _RecordEvaluation:
    """Record every round's scores into `result` (cleared first).

    `result` becomes ``{"valid": {metric_label: [score per round]}}`` (``"train"``
    without a validation set; one entry per name with named validation sets; the label
    as `Metric.label` writes it, ``"ndcg@10"``), the form `boosters.plotting.plot_metric`
    reads.

    Parameters
    ----------
    result : dict
        The dict to fill.

    Returns
    -------
    callback
        The callback, to pass in ``callbacks=[...]``.

    Examples
    --------
    >>> import numpy as np
    >>> import boosters as bst
    >>> from boosters.callbacks import record_evaluation
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=300)
    >>> scores = {}
    >>> model = bst.GBDTModel.train(bst.Dataset(X[:200], y[:200]), bst.GBDTConfig(n_estimators=5),
    ...                             val_set=bst.Dataset(X[200:], y[200:]), callbacks=[record_evaluation(scores)])
    >>> list(scores), [round(s, 3) for s in scores["valid"]["rmse"]]
    (['valid'], [0.869, 0.832, 0.797, 0.763, 0.73])
    """
    return _RecordEvaluation(result)


# ---------------------------------------------------------------------------------------
# learning rate schedules


class _LearningRate:
    reads_scores = False  # without a val_set, the training rows need not be scored for it

    def __init__(self, schedule):
        if callable(schedule):
            self._rates, self._schedule = None, schedule
        elif isinstance(schedule, (str, bytes, dict)) or not hasattr(schedule, "__len__"):
            raise TypeError(f"schedule must be a list of learning rates or a callable round -> rate, "
                            f"got {type(schedule).__name__}")
        else:
            self._rates = [require_float(f"schedule[{i}]", r, 0.0, strictly_above=True) for i, r in enumerate(schedule)]
            self._schedule = self._rates.__getitem__

    def before_training(self, env: CallbackEnv) -> None:
        if self._rates is not None and len(self._rates) != env.n_rounds:
            raise ValueError(f"schedule has {len(self._rates)} learning rates but the training has "
                             f"{env.n_rounds} rounds (n_estimators)")

    def before_iteration(self, env: CallbackEnv) -> None:
        env.learning_rate = require_float(f"schedule({env.round})", self._schedule(env.round), 0.0,
                                          strictly_above=True)


def learning_rate(schedule) -> _LearningRate:
    """A learning rate per round: a list, or a function of the 0-based round.

    Like LightGBM's ``reset_parameter(learning_rate=...)``. The trees' leaf values are
    scaled by the round's rate; ``config.learning_rate`` still decides GOSS's warm-up.

    Parameters
    ----------
    schedule : list of float or callable
        One rate per round (exactly ``n_estimators`` of them), or ``round -> rate``.
        Every rate is a finite number > 0.

    Returns
    -------
    callback
        The callback, to pass in ``callbacks=[...]``.

    Examples
    --------
    Decay from 0.5 by 10% a round:

    >>> import numpy as np
    >>> import boosters as bst
    >>> from boosters.callbacks import learning_rate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=200)
    >>> decay = learning_rate(lambda r: 0.5 * 0.9 ** r)
    >>> model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=30), callbacks=[decay])
    >>> model.n_trees
    30

    The rate scales the leaf values: rates 0.3 then 0.6 grow round 0 as a constant 0.3
    does, and round 1 (the same gradients, so the same tree) with twice its leaf values:

    >>> config = bst.GBDTConfig(n_estimators=2, learning_rate=0.3)
    >>> scheduled = bst.GBDTModel.train(bst.Dataset(X, y), config, callbacks=[learning_rate([0.3, 0.6])])
    >>> constant = bst.GBDTModel.train(bst.Dataset(X, y), config)
    >>> [np.allclose(scheduled.trees[r].value, ratio * constant.trees[r].value) for r, ratio in [(0, 1), (1, 2)]]
    [True, True]
    """
    return _LearningRate(schedule)


# ---------------------------------------------------------------------------------------
# checkpoints


class _Checkpoint:
    reads_scores = False

    def __init__(self, path, every: int):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
        self.path = os.fspath(path)
        if not isinstance(self.path, str):
            raise TypeError("path must be a text path, not bytes")
        model_files.encoding_for_save(self.path)  # an unknown suffix: ValueError now, not at the first save
        self.every = require_int("every", every, 1)

    def before_training(self, env: CallbackEnv) -> None:
        directory = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(directory):
            raise ValueError(f"path: the directory {directory!r} does not exist")
        write_target(self.path)  # a FIFO, device or directory there: refused now, not at the first save

    def _write(self, model) -> None:
        model.save(self.path)  # atomically, in the encoding its name asks for

    def after_iteration(self, env: CallbackEnv) -> None:
        if (env.round + 1) % self.every == 0:
            self._write(env.model)

    def after_training(self, env: CallbackEnv) -> None:
        if env.error is None:  # the final model; after an error the last checkpoint stays
            self._write(env.model)


def checkpoint(path, every: int = 10) -> _Checkpoint:
    """Save the model every `every` rounds, and at the end of the training.

    Each save replaces the file atomically (a temporary file beside it, then a rename):
    the file always holds a whole model, even after Ctrl-C or a crash mid-save. As
    `GBDTModel.save`, it follows a symbolic link (the link stays) and refuses a path
    that is not a regular file (OSError, before the training starts). The
    final save is the returned model (cut back to the best round by early stopping,
    the completed rounds after Ctrl-C); after an error the last checkpoint stays.
    Load it with `GBDTModel.load`.

    Parameters
    ----------
    path : str or os.PathLike
        The model file (its directory must exist), ending in ``.npz`` or ``.json``: the
        encoding `GBDTModel.save` writes for that name (any other suffix: ValueError).
    every : int, default 10
        Save after rounds every, 2 * every, ... (1-based).

    Returns
    -------
    callback
        The callback, to pass in ``callbacks=[...]``.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import boosters as bst
    >>> from boosters.callbacks import checkpoint
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=200)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=25),
    ...                             callbacks=[checkpoint(path, every=10)])
    >>> bst.GBDTModel.load(path).n_trees
    25
    """
    return _Checkpoint(path, every)
