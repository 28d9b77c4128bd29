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


# -- model fingerprints: every model the suite makes, for refactorings that must not change one ---------------------
#
#   BOOSTERS_MODEL_FINGERPRINTS=before.json pytest      (on the commit before)
#   BOOSTERS_MODEL_FINGERPRINTS=after.json pytest       (on the commit after)
#   python benchmarks/model_fingerprints.py --compare before.json after.json
#
# Each test's models (every GBDTModel made in the test process: trained, loaded, converted)
# as the sorted SHA-256 digests of their to_bytes(); tests drawing hypothesis examples are
# left out (their examples differ from run to run).

_FINGERPRINTS_PATH = os.environ.get("BOOSTERS_MODEL_FINGERPRINTS")
_fingerprints: dict = {}


@pytest.fixture(autouse=_FINGERPRINTS_PATH is not None)
def _model_fingerprints(request, monkeypatch):
    import functools
    import hashlib

    from boosters.gbdt_model import GBDTModel

    if getattr(request.node.obj, "is_hypothesis_test", False):
        yield
        return
    digests = _fingerprints.setdefault(request.node.nodeid, [])
    made = GBDTModel.__init__

    @functools.wraps(made)  # its signature stays GBDTModel's (the docstring checks read it)
    def recording_init(self, *args, **kwargs):
        made(self, *args, **kwargs)
        try:
            digests.append(hashlib.sha256(self.to_bytes()).hexdigest())
        except Exception as error:  # noqa: BLE001 - a model that cannot be written: what it says
            digests.append(f"not written: {type(error).__name__}")

    monkeypatch.setattr(GBDTModel, "__init__", recording_init)
    yield
    digests.sort()


def pytest_sessionfinish(session):
    if _FINGERPRINTS_PATH is not None:
        import json

        with open(_FINGERPRINTS_PATH, "w") as f:
            json.dump({test: d for test, d in sorted(_fingerprints.items()) if d}, f, indent=0)
