"""Shared test fixtures."""

import os
import signal

import pytest

from boosters._lib._openmp import openmp_enabled


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture
def openmp():
    """For tests that compare thread counts: on a serial build every thread count runs
    the same serial code, so they would pass without showing anything. CI must build
    with OpenMP (the test fails there); elsewhere a serial build skips them."""
    if not openmp_enabled():
        if in_ci():
            pytest.fail("boosters was built without OpenMP in CI: thread-count tests would pass trivially")
        pytest.skip("serial build (no OpenMP): thread counts cannot differ")


@pytest.fixture
def sigint_handler():
    """Python's own Ctrl-C handler for the test, the previous disposition after it.

    A process started in the background (`nohup pytest &`, many CI runners) inherits
    SIGINT ignored, and the library then rightly installs no handler of its own, so the
    Ctrl-C tests would see nothing. With a handler installed, a subprocess the test starts
    gets SIGINT's default disposition too (exec resets caught signals; ignored ones stay
    ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        # None: a handler not set from Python, which cannot be put back; the default then
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
