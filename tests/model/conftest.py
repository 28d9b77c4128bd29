"""The prediction kernels' thread teams, tested on small data."""

import pytest

from boosters.model import prediction


@pytest.fixture(autouse=True)
def thread_teams_on_small_data(monkeypatch):
    """A prediction of fewer than VISITS_PER_THREAD row-tree visits per thread runs on one
    thread (`prediction.threads_for_visits`); these tests' rows are few, and they are about
    the kernels' teams: every visit is worth a thread here."""
    monkeypatch.setattr(prediction, "VISITS_PER_THREAD", 1)
