"""Shared test fixtures."""

import os

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
