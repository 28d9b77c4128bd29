"""The callback protocol as the trainer runs it: what callbacks see (`CallbackEnv`), how
their hooks are called, which callbacks a run has (the user's, the verbose output,
early stopping from the config), and the built-ins the trainer makes itself: early
stopping, a log line per round (`log_evaluation`) and a tqdm progress bar
(`ProgressBar`, in a terminal or a notebook only). The public module is
`boosters.callbacks`, which re-exports these with the other built-ins."""

from __future__ import annotations

import math
import numbers
import os
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from boosters._lib.checks import require_float, require_int
from boosters._lib.logs import info_visible, logger

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
        ``{"valid": {metric_label: [score per round]}}`` with a validation set (the
        label as `Metric.label` writes it: ``"rmse"``, ``"ndcg@10"``; a custom metric's
        name as it returns it), one entry per metric in the config's order, from the
        first round on; with named validation sets, one entry per set name, in their
        order; without one, ``{"train": {...}}`` scores of the training rows, when a
        callback reads scores. Read it, do not modify it.
    learning_rate : float
        The learning rate of the next round grown; ``before_iteration`` may change it.
    best_iteration : int or None
        The round the model is cut back to at the end (early stopping sets it).
    best_score : float or None
        The validation score of ``best_iteration``.
    error : BaseException or None
        In ``after_training``: the exception that ended the training, if any.
    higher_is_better : dict
        ``{metric_label: bool}``: whether a higher score of each metric in
        `evals_result` is better (filled with them, at the first round).
    monitored : str
        The name of the validation set that early stopping watches and the model's
        ``eval_history`` records: the last one (``"valid"`` for a single set).

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
    higher_is_better: dict = field(default_factory=dict)
    monitored: str = "valid"


def call_hook(callbacks: list, hook: str, env: CallbackEnv) -> bool:
    """Call `hook` of every callback that has it (all of them, in order); True if any asked to
    stop. Only the iteration hooks' answers are read (XGBoost's before/after_training return
    the model): True or NumPy's True stops, None or False goes on, anything else is a
    TypeError naming the callback rather than a guess."""
    stop = False
    for callback in callbacks:
        method = getattr(callback, hook, None)
        if method is None:
            continue
        answer = method(env)
        if hook in ("before_iteration", "after_iteration") and answer is not None:
            if not isinstance(answer, (bool, np.bool_)):
                raise TypeError(f"callbacks: {hook} of {callback!r} returned {type(answer).__name__} {answer!r}; "
                                f"return True to stop the training, False or None to go on")
            stop = stop or bool(answer)
    return stop


def check_best_iteration(env: CallbackEnv, n_rounds: int) -> None:
    """`env.best_iteration` as a callback left it: None or a completed round, 0..n_rounds - 1
    (the model is cut back to it, and a file holding another round would not load)."""
    best = env.best_iteration
    if best is None:
        return
    if isinstance(best, (bool, np.bool_)) or not isinstance(best, numbers.Integral) or not 0 <= best < n_rounds:
        raise ValueError(f"callbacks set env.best_iteration to {best!r}: it must be None or a completed round, "
                         f"an int in 0..{n_rounds - 1}")
    env.best_iteration = int(best)


def reads_scores(callback) -> bool:
    """Does `callback` read ``env.evals_result``? A callback says so in a class attribute
    `reads_scores` (every built-in does); one without it is taken to read them. Without a
    validation set the training rows are scored every round only for callbacks that do."""
    return getattr(callback, "reads_scores", True)


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
    if config.verbosity >= 1 and not any(isinstance(c, (LogEvaluation, ProgressBar)) for c in out):
        out.append(ProgressBar() if progress_bar_wanted() else log_evaluation(1))
    if config.early_stopping_rounds is not None:  # last: its message follows the round's line
        out.append(EarlyStopping(config.early_stopping_rounds, 0.0))
    return out


class EarlyStopping:
    """Stops when the validation score of the first metric (on the monitored set, the
    last validation set) has not improved for `rounds` rounds (made by `early_stopping`;
    the trainer recognises it to reject NaN scores)."""

    reads_scores = True

    def __init__(self, rounds: int, min_delta: float):
        self.rounds = require_int("rounds", rounds, 1)
        self.min_delta = require_float("min_delta", min_delta, 0.0)

    def before_training(self, env: CallbackEnv) -> None:
        if env.monitored not in env.evals_result:
            raise ValueError("early stopping needs a val_set to monitor")
        if env.config is not None and not env.config.resolved_metrics:
            raise ValueError("early stopping needs a metric: a custom objective has no default one; "
                             "pass GBDTConfig(metric=...)")
        self._name: str | None = None  # the first metric's label, known once it is scored
        self._best_round: int | None = None
        self._best: float | None = None

    def _improves(self, score: float) -> bool:
        if math.isnan(score):
            return False
        if self._best is None:
            return True
        if self._higher_is_better:
            return score > self._best + self.min_delta
        return score < self._best - self.min_delta

    def after_iteration(self, env: CallbackEnv) -> bool:
        if self._name is None:  # the first metric, as LightGBM's first_metric_only
            self._name = next(iter(env.evals_result[env.monitored]))
            self._higher_is_better = env.higher_is_better[self._name]
        score = env.evals_result[env.monitored][self._name][-1]
        if self._improves(score):
            self._best_round, self._best = env.round, score
            env.best_iteration, env.best_score = env.round, score
        if self._best_round is None or env.round - self._best_round < self.rounds:
            return False
        if env.config.verbosity >= 1:
            logger.info("early stopping: best round %d, %s %s %.6f", self._best_round + 1, env.monitored, self._name,
                        self._best)
        return True


def early_stopping(rounds: int, min_delta: float = 0.0) -> EarlyStopping:
    """Stop when the validation score has not improved for `rounds` rounds.

    The model is cut back to the best round (`best_iteration`). Needs a `val_set`; the
    same as ``GBDTConfig(early_stopping_rounds=rounds)`` when ``min_delta`` is 0. With
    several metrics it follows the first one (LightGBM's ``first_metric_only=True``).

    With ``early_stopping_rounds`` in the config as well, both rules run: the training
    stops at the first of them that fires, and the model is cut back to the round of
    the best validation score (the config's rule, which counts any improvement, runs
    last and has the final say on ``best_iteration``).

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
# the scores shown by the log line and the progress bar


def latest_scores(evals_result: dict) -> list[tuple[str, float]]:
    """("valid rmse", score) for the last score of every data set and metric."""
    return [(f"{data} {name}", scores[-1]) for data, metrics in evals_result.items()
            for name, scores in metrics.items() if scores]


# ---------------------------------------------------------------------------------------
# a log line per round


class LogEvaluation:
    """Logs the latest scores every `period` rounds (made by `log_evaluation`)."""

    reads_scores = True

    def __init__(self, period: int):
        self.period = require_int("period", period, 1)
        self._visible: ExitStack | None = None

    def before_training(self, env: CallbackEnv) -> None:
        self._visible = ExitStack()
        self._visible.enter_context(info_visible())

    def after_iteration(self, env: CallbackEnv) -> None:
        if (env.round + 1) % self.period == 0:
            logger.info("[%d] %s", env.round + 1, "  ".join(f"{name}: {score:.6f}" for name, score in
                                                           latest_scores(env.evals_result)))

    def after_training(self, env: CallbackEnv) -> None:
        if self._visible is not None:
            self._visible.close()
            self._visible = None


def log_evaluation(period: int = 1) -> LogEvaluation:
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
    [10] valid rmse: 0.588415
    [20] valid rmse: 0.397669
    >>> log.removeHandler(handler)
    >>> log.setLevel(logging.NOTSET)
    """
    return LogEvaluation(period)


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
    >>> "20/20" in out.getvalue(), "valid rmse=0.397" in out.getvalue()
    (True, True)
    """

    reads_scores = True

    def __init__(self, file=None, disable: bool | None = None):
        if disable is not None and not isinstance(disable, bool):
            raise TypeError(f"disable must be a bool or None, got {type(disable).__name__}")
        self.file = file
        self.disable = disable
        self._bar: Any = None  # a tqdm bar while training
        self._context: ExitStack | None = None

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
        latest = latest_scores(env.evals_result)
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
            assert self._context is not None  # opened with the bar
            self._context.close()
            self._bar.close()
            self._bar = self._context = None
