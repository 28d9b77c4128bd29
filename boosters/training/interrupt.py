"""Ctrl-C during training: stop after the current round, keep the completed rounds.

The first SIGINT only sets a flag that the boosting loop reads between rounds (and
between the nogil blocks of the fast path: a block takes at most `grower.BLOCK_SECONDS`
plus one round, and Python runs signal handlers as soon as it returns), so the model is
never left with half a round. A second SIGINT raises KeyboardInterrupt as usual, for a
user who wants out sooner: when Python runs its handler, after the kernel running
returns (the current block in the fast path, about 0.1 s), not at the keypress.

Python runs signal handlers in the main thread only, so the guard installs its handler
when training runs there and SIGINT has Python's default handler (an application's own
handler is left alone); elsewhere Ctrl-C behaves as it would without it.
"""

from __future__ import annotations

import signal
import threading


class InterruptGuard:
    """Context manager: `requested` becomes True at the first Ctrl-C inside the block."""

    def __init__(self):
        self.requested = False
        self._previous = None

    def __enter__(self) -> "InterruptGuard":
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
