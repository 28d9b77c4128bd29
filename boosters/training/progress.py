"""How a training shows its progress at ``verbosity >= 1`` or when asked: a log line per
round (`log_evaluation`) or a tqdm progress bar (`ProgressBar`, in a terminal or a
notebook only). Both are callbacks; `boosters.callbacks` re-exports them."""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from typing import TYPE_CHECKING

from boosters._lib.checks import require_int
from boosters._lib.logs import info_visible, logger

if TYPE_CHECKING:  # annotations only: training.callbacks imports this module
    from boosters.training.callbacks import CallbackEnv


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
        self._visible = None

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
    [10] valid rmse: 0.136962
    [20] valid rmse: 0.129039
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
    >>> "20/20" in out.getvalue(), "valid rmse=0.129" in out.getvalue()
    (True, True)
    """

    reads_scores = True

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
            self._context.close()
            self._bar.close()
            self._bar = self._context = None
