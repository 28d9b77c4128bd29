"""The library's logger, and verbose output that shows without any logging setup.

Everything boosters reports goes through `logging.getLogger("boosters")`: INFO lines for
verbose output (verbosity >= 1, `log_evaluation`), WARNING for what the user should act
on. A plain script configures no logging, so Python would drop INFO lines;
`info_visible()` then attaches a stderr handler to the "boosters" logger while a training
runs. An application that configured logging (any handler on the logger or above it)
keeps its configuration: its levels and handlers decide what shows.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager

logger = logging.getLogger("boosters")

_lock = threading.Lock()
_users = 0                  # trainings inside info_visible() that attached the handler
_handler: logging.Handler | None = None
_saved_level = logging.NOTSET


@contextmanager
def info_visible():
    """INFO lines of the "boosters" logger reach stderr inside the block when logging is
    not configured; nested and concurrent blocks share one handler (no duplicate lines)."""
    global _users, _handler, _saved_level
    with _lock:
        attach = _users > 0 or not logger.hasHandlers()
        if attach:
            if _users == 0:
                _handler = logging.StreamHandler()  # the current sys.stderr
                _handler.setFormatter(logging.Formatter("%(message)s"))
                _saved_level = logger.level
                logger.addHandler(_handler)
                if logger.getEffectiveLevel() > logging.INFO:
                    logger.setLevel(logging.INFO)
            _users += 1
    try:
        yield
    finally:
        if attach:
            with _lock:
                _users -= 1
                if _users == 0:
                    logger.removeHandler(_handler)
                    logger.setLevel(_saved_level)
                    _handler = None
