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

Built-ins: `early_stopping`, `log_evaluation`, `record_evaluation`, `learning_rate`,
`checkpoint` and `ProgressBar` (tqdm; shown by default at ``verbosity >= 1`` in an
interactive terminal or a notebook).
"""

from __future__ import annotations

import math
import numbers
import os
import sys
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Callable

from boosters._lib.logs import info_visible, logger

__all__ = ["CallbackEnv", "ProgressBar", "checkpoint", "early_stopping", "learning_rate", "log_evaluation",
           "record_evaluation"]

HOOKS = ("before_training", "before_iteration", "after_iteration", "after_training")


@dataclass(eq=False)
class CallbackEnv:
    """What a callback sees of the training; one object per run, updated every round.

    Parameters
    ----------
    model : GBDTModel
        The model of the trees grown so far (a view: it grows with the training).
    config : GBDTConfig
        The training configuration.
    n_rounds : int
        The number of rounds asked for (``config.n_estimators``).
    round : int
        The 0-based round: about to grow in ``before_iteration``, just grown in
        ``after_iteration``.
    evals_result : dict
        ``{"valid": {metric_name: [score per round]}}`` with a validation set; without
        one, ``{"train": {...}}`` scores of the training rows. Read it, do not modify it.
    learning_rate : float
        The learning rate of the next round grown; ``before_iteration`` may change it.
    best_iteration : int or None
        The round the model is cut back to at the end (early stopping sets it).
    best_score : float or None
        The validation score of ``best_iteration``.
    error : BaseException or None
        In ``after_training``: the exception that ended the training, if any.

    Examples
    --------
    A callback that stops the training once the validation RMSE is below 0.5:

    >>> import numpy as np
    >>> import boosters as bst
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=300)
    >>> def good_enough(env):
    ...     return env.evals_result["valid"]["rmse"][-1] < 0.5
    >>> model = bst.GBDTModel.train(bst.Dataset(X[:200], y[:200]), bst.GBDTConfig(n_estimators=100),
    ...                             val_set=bst.Dataset(X[200:], y[200:]), callbacks=[good_enough])
    >>> model.n_trees < 100, model.eval_history[-1] < 0.5 <= model.eval_history[-2]
    (True, True)
    """

    model: Any
    config: Any
    n_rounds: int
    round: int = 0
    evals_result: dict = field(default_factory=dict)
    learning_rate: float = 0.0
    best_iteration: int | None = None
    best_score: float | None = None
    error: BaseException | None = None


def call_hook(callbacks: list, hook: str, env: CallbackEnv) -> bool:
    """Call `hook` of every callback that has it (all of them, in order); True if any asked to stop."""
    stop = False
    for callback in callbacks:
        method = getattr(callback, hook, None)
        if method is not None and method(env) is True:
            stop = True
    return stop


class _Function:
    """A plain function as an after_iteration callback."""

    def __init__(self, function: Callable):
        self.after_iteration = function


def training_callbacks(config, callbacks) -> list:
    """The callbacks of a training: the user's (checked), early stopping from
    `config.early_stopping_rounds`, and at verbosity >= 1 the progress bar (interactive
    terminal or notebook with tqdm installed) or a log line per round, unless the user
    passed one of those."""
    if callbacks is None:
        callbacks = []
    elif isinstance(callbacks, (str, bytes)) or not hasattr(callbacks, "__iter__"):
        raise TypeError(f"callbacks must be a list of callbacks or None, got {type(callbacks).__name__}")
    out = []
    for callback in callbacks:
        if not any(hasattr(callback, hook) for hook in HOOKS):
            if not callable(callback):
                raise TypeError(f"callbacks: {callback!r} is neither callable nor has any of the methods "
                                f"{', '.join(HOOKS)}")
            callback = _Function(callback)
        out.append(callback)
    if config.verbosity >= 1 and not any(isinstance(c, (_LogEvaluation, ProgressBar)) for c in out):
        out.append(ProgressBar() if progress_bar_wanted() else log_evaluation(1))
    if config.early_stopping_rounds is not None:  # last: its message follows the round's line
        out.append(early_stopping(config.early_stopping_rounds))
    return out


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def check_learning_rate(name: str, value) -> float:
    """A learning rate: a finite number > 0 (TypeError / ValueError naming `name` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _latest(evals_result: dict) -> list[tuple[str, float]]:
    """("valid rmse", score) for the last score of every data set and metric."""
    return [(f"{data} {name}", scores[-1]) for data, metrics in evals_result.items()
            for name, scores in metrics.items() if scores]


# ---------------------------------------------------------------------------------------
# early stopping


class EarlyStopping:
    """Stops when the validation score has not improved for `rounds` rounds (made by
    `early_stopping`; the trainer recognises it to reject NaN scores)."""

    def __init__(self, rounds: int, min_delta: float):
        self.rounds = _positive_int("rounds", rounds)
        if isinstance(min_delta, bool) or not isinstance(min_delta, numbers.Real):
            raise TypeError(f"min_delta must be a number, got {type(min_delta).__name__}")
        if not (math.isfinite(min_delta) and min_delta >= 0):
            raise ValueError(f"min_delta must be a finite number >= 0, got {min_delta!r}")
        self.min_delta = float(min_delta)

    def before_training(self, env: CallbackEnv) -> None:
        if "valid" not in env.evals_result:
            raise ValueError("early stopping needs a val_set to monitor")
        self._name = next(iter(env.evals_result["valid"]))
        self._higher_is_better = env.config.resolved_metric.higher_is_better
        self._best_round = self._best = None

    def _improves(self, score: float) -> bool:
        if math.isnan(score):
            return False
        if self._best is None:
            return True
        if self._higher_is_better:
            return score > self._best + self.min_delta
        return score < self._best - self.min_delta

    def after_iteration(self, env: CallbackEnv) -> bool:
        score = env.evals_result["valid"][self._name][-1]
        if self._improves(score):
            self._best_round, self._best = env.round, score
            env.best_iteration, env.best_score = env.round, score
        if self._best_round is None or env.round - self._best_round < self.rounds:
            return False
        if env.config.verbosity >= 1:
            logger.info("early stopping: best round %d, valid %s %.6f", self._best_round + 1, self._name, self._best)
        return True


def early_stopping(rounds: int, min_delta: float = 0.0) -> EarlyStopping:
    """Stop when the validation score has not improved for `rounds` rounds.

    The model is cut back to the best round (`best_iteration`). Needs a `val_set`; the
    same as ``GBDTConfig(early_stopping_rounds=rounds)`` when ``min_delta`` is 0.

    Parameters
    ----------
    rounds : int
        Rounds without improvement before stopping (>= 1).
    min_delta : float, default 0.0
        The least change of the score that counts as an improvement (>= 0).

    Returns
    -------
    callback
        The callback, to pass in ``callbacks=[...]``.

    Examples
    --------
    >>> import numpy as np
    >>> import boosters as bst
    >>> from boosters.callbacks import early_stopping
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(400, 4)), rng.normal(size=400)  # noise: nothing to learn
    >>> model = bst.GBDTModel.train(bst.Dataset(X[:300], y[:300]), bst.GBDTConfig(n_estimators=100),
    ...                             val_set=bst.Dataset(X[300:], y[300:]), callbacks=[early_stopping(5)])
    >>> model.n_trees == model.best_iteration + 1 < 100
    True
    """
    return EarlyStopping(rounds, min_delta)


# ---------------------------------------------------------------------------------------
# logging and recording


class _LogEvaluation:
    def __init__(self, period: int):
        self.period = _positive_int("period", period)
        self._visible = None

    def before_training(self, env: CallbackEnv) -> None:
        self._visible = ExitStack()
        self._visible.enter_context(info_visible())

    def after_iteration(self, env: CallbackEnv) -> None:
        if (env.round + 1) % self.period == 0:
            logger.info("[%d] %s", env.round + 1, "  ".join(f"{name}: {score:.6f}" for name, score in
                                                           _latest(env.evals_result)))

    def after_training(self, env: CallbackEnv) -> None:
        if self._visible is not None:
            self._visible.close()
            self._visible = None


def log_evaluation(period: int = 1) -> _LogEvaluation:
    """Log the latest scores every `period` rounds, as ``[10] valid rmse: 0.123456``.

    Lines go to the ``"boosters"`` logger at INFO level; when logging is not configured
    they are printed to stderr. ``verbosity >= 1`` logs every round (outside a terminal;
    a progress bar shows the scores in one).

    Parameters
    ----------
    period : int, default 1
        Log rounds period, 2 * period, ... (1-based).

    Returns
    -------
    callback
        The callback, to pass in ``callbacks=[...]``.

    Examples
    --------
    >>> import logging, sys
    >>> import numpy as np
    >>> import boosters as bst
    >>> from boosters.callbacks import log_evaluation
    >>> log = logging.getLogger("boosters")  # here: lines to stdout (a plain script prints them to stderr)
    >>> handler = logging.StreamHandler(sys.stdout)
    >>> log.addHandler(handler)
    >>> log.setLevel(logging.INFO)
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=300)
    >>> model = bst.GBDTModel.train(bst.Dataset(X[:200], y[:200]), bst.GBDTConfig(n_estimators=20),
    ...                             val_set=bst.Dataset(X[200:], y[200:]), callbacks=[log_evaluation(10)])
    [10] valid rmse: 0.136962
    [20] valid rmse: 0.129039
    >>> log.removeHandler(handler)
    >>> log.setLevel(logging.NOTSET)
    """
    return _LogEvaluation(period)


class _RecordEvaluation:
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
                self.result[data][name].append(scores[-1])


def record_evaluation(result: dict) -> _RecordEvaluation:
    """Record every round's scores into `result` (cleared first).

    `result` becomes ``{"valid": {metric_name: [score per round]}}`` (``"train"``
    without a validation set), the form `boosters.plotting.plot_metric` reads.

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
    (['valid'], [0.651, 0.47, 0.352, 0.27, 0.218])
    """
    return _RecordEvaluation(result)


# ---------------------------------------------------------------------------------------
# learning rate schedules


class _LearningRate:
    def __init__(self, schedule):
        if callable(schedule):
            self._rates, self._schedule = None, schedule
        elif isinstance(schedule, (str, bytes, dict)) or not hasattr(schedule, "__len__"):
            raise TypeError(f"schedule must be a list of learning rates or a callable round -> rate, "
                            f"got {type(schedule).__name__}")
        else:
            self._rates = [check_learning_rate(f"schedule[{i}]", r) for i, r in enumerate(schedule)]
            self._schedule = self._rates.__getitem__

    def before_training(self, env: CallbackEnv) -> None:
        if self._rates is not None and len(self._rates) != env.n_rounds:
            raise ValueError(f"schedule has {len(self._rates)} learning rates but the training has "
                             f"{env.n_rounds} rounds (n_estimators)")

    def before_iteration(self, env: CallbackEnv) -> None:
        env.learning_rate = check_learning_rate(f"schedule({env.round})", self._schedule(env.round))


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
    """
    return _LearningRate(schedule)


# ---------------------------------------------------------------------------------------
# checkpoints


def write_atomically(path: str, data: bytes) -> None:
    """Write `data` to a new file beside `path`, flush it to disk, then rename it over
    `path` (atomic on POSIX and Windows): a reader sees the old file or the new one,
    never part of one, even when the process dies mid-write."""
    temporary = f"{path}.{uuid.uuid4().hex[:12]}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class _Checkpoint:
    def __init__(self, path, every: int):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
        self.path = os.fspath(path)
        if not isinstance(self.path, str):
            raise TypeError("path must be a text path, not bytes")
        self.every = _positive_int("every", every)

    def before_training(self, env: CallbackEnv) -> None:
        directory = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(directory):
            raise ValueError(f"path: the directory {directory!r} does not exist")

    def after_iteration(self, env: CallbackEnv) -> None:
        if (env.round + 1) % self.every == 0:
            write_atomically(self.path, env.model.to_bytes())

    def after_training(self, env: CallbackEnv) -> None:
        if env.error is None:  # the final model; after an error the last checkpoint stays
            write_atomically(self.path, env.model.to_bytes())


def checkpoint(path, every: int = 10) -> _Checkpoint:
    """Save the model every `every` rounds, and at the end of the training.

    Each save replaces the file atomically (a temporary file beside it, then a rename):
    the file always holds a whole model, even after Ctrl-C or a crash mid-save. The
    final save is the returned model (cut back to the best round by early stopping,
    the completed rounds after Ctrl-C); after an error the last checkpoint stays.
    Load it with `GBDTModel.load`.

    Parameters
    ----------
    path : str or os.PathLike
        The model file (its directory must exist).
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


# ---------------------------------------------------------------------------------------
# progress bar


def _in_notebook() -> bool:
    """Running in a Jupyter kernel (classic, lab, VS Code, Colab)?"""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and any(c.__name__ == "ZMQInteractiveShell" for c in type(shell).__mro__)


def _is_terminal(stream) -> bool:
    """An interactive terminal that understands carriage returns (not a file, pipe or CI log)."""
    try:
        return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _tqdm_available() -> bool:
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def progress_bar_wanted(stream=None) -> bool:
    """The default at verbosity >= 1: a bar in a terminal or notebook when tqdm is
    installed; elsewhere (logs, CI, pipes) a plain line per round."""
    stream = sys.stderr if stream is None else stream
    return (_in_notebook() or _is_terminal(stream)) and _tqdm_available()


def _tqdm_class(notebook: bool):
    try:
        from tqdm.std import tqdm
    except ImportError as exc:
        raise ImportError("ProgressBar needs tqdm: pip install 'boosters[progress]'") from exc
    if notebook:
        try:
            from tqdm.notebook import IProgress, tqdm as notebook_tqdm
            if IProgress is not None:  # the widget needs ipywidgets; text otherwise
                return notebook_tqdm
        except ImportError:
            pass
    return tqdm


class ProgressBar:
    """A progress bar over the boosting rounds (tqdm): rounds done, elapsed time, ETA and
    the latest validation score.

    At ``verbosity >= 1`` the training shows one by default in an interactive terminal
    or a Jupyter notebook (a widget when ipywidgets is installed), never in a log file,
    a pipe or CI: there it logs a line per round instead. Log lines of the
    ``"boosters"`` logger print above the bar while it runs.

    Parameters
    ----------
    file : file-like, optional
        Where the bar is drawn; default ``sys.stderr``.
    disable : bool or None, default None
        None: show the bar only in a terminal (``file`` is a TTY, ``TERM`` is not
        ``dumb``) or a notebook; True: never; False: always (a non-terminal gets the
        carriage returns too).

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> import boosters as bst
    >>> from boosters.callbacks import ProgressBar
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=300)
    >>> out = io.StringIO()
    >>> model = bst.GBDTModel.train(bst.Dataset(X[:200], y[:200]), bst.GBDTConfig(n_estimators=20),
    ...                             val_set=bst.Dataset(X[200:], y[200:]), callbacks=[ProgressBar(out, disable=False)])
    >>> "20/20" in out.getvalue(), "valid rmse=0.129" in out.getvalue()
    (True, True)
    """

    def __init__(self, file=None, disable: bool | None = None):
        if disable is not None and not isinstance(disable, bool):
            raise TypeError(f"disable must be a bool or None, got {type(disable).__name__}")
        self.file = file
        self.disable = disable
        self._bar = None
        self._context = None

    def before_training(self, env: CallbackEnv) -> None:
        """Open the bar (``env.n_rounds`` steps); log lines print above it from here.

        Parameters
        ----------
        env : CallbackEnv
            The training's state.

        Examples
        --------
        The training calls the hooks; by hand:

        >>> import io
        >>> from boosters.callbacks import CallbackEnv, ProgressBar
        >>> out = io.StringIO()
        >>> bar = ProgressBar(out, disable=False)
        >>> env = CallbackEnv(model=None, config=None, n_rounds=4)
        >>> bar.before_training(env)
        >>> "0/4" in out.getvalue()
        True
        >>> bar.after_training(env)
        """
        file = sys.stderr if self.file is None else self.file
        notebook = self.file is None and _in_notebook()
        disable = not (notebook or _is_terminal(file)) if self.disable is None else self.disable
        tqdm = _tqdm_class(notebook)
        from tqdm.contrib.logging import logging_redirect_tqdm

        self._bar = tqdm(total=env.n_rounds, unit="round", desc="boosters", file=file, disable=disable,
                         dynamic_ncols=True)
        self._context = ExitStack()
        if not disable:  # log lines above the bar, not through it
            self._context.enter_context(logging_redirect_tqdm(loggers=[logger], tqdm_class=tqdm))

    def after_iteration(self, env: CallbackEnv) -> None:
        """Advance the bar by one round and show the latest scores.

        Parameters
        ----------
        env : CallbackEnv
            The training's state (its ``evals_result``).

        Examples
        --------
        >>> import io
        >>> from boosters.callbacks import CallbackEnv, ProgressBar
        >>> out = io.StringIO()
        >>> bar = ProgressBar(out, disable=False)
        >>> env = CallbackEnv(model=None, config=None, n_rounds=4, evals_result={"valid": {"rmse": [0.5]}})
        >>> bar.before_training(env)
        >>> bar.after_iteration(env)
        >>> bar.after_training(env)
        >>> "1/4" in out.getvalue(), "valid rmse=0.5" in out.getvalue()
        (True, True)
        """
        latest = _latest(env.evals_result)
        if latest:
            self._bar.set_postfix_str(", ".join(f"{name}={score:.5g}" for name, score in latest), refresh=False)
        self._bar.update(1)

    def after_training(self, env: CallbackEnv) -> None:
        """Close the bar (it stays on screen with the final count).

        Parameters
        ----------
        env : CallbackEnv
            The training's state.

        Examples
        --------
        >>> import io
        >>> from boosters.callbacks import CallbackEnv, ProgressBar
        >>> bar = ProgressBar(io.StringIO(), disable=False)
        >>> env = CallbackEnv(model=None, config=None, n_rounds=2)
        >>> bar.before_training(env)
        >>> bar.after_training(env)
        >>> bar.after_training(env)  # closing twice is harmless
        """
        if self._bar is not None:
            self._context.close()
            self._bar.close()
            self._bar = self._context = None
