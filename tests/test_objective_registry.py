"""The registry of objective and metric definitions (boosters/objectives/): one definition per
name, found from a name or from the public value (Objective, Metric). What each definition
says is pinned, as the public values show it, in tests/test_objective_definitions.py."""

from __future__ import annotations

import pytest

import boosters as bst
from boosters.objectives import OBJECTIVES, objective, objective_fn
from boosters.objectives.registry import METRICS, metric_fn


def test_every_objective_has_one_definition():
    assert sorted(fn.name for fn in OBJECTIVES) == sorted(objective._OBJECTIVE_NAMES)
    assert all(objective_fn(name).name == name for name in objective._OBJECTIVE_NAMES)


@pytest.mark.parametrize("fn", METRICS, ids=[fn.name for fn in METRICS])
def test_every_metric_has_one_definition(fn):
    assert [other.name for other in METRICS].count(fn.name) == 1
    assert metric_fn(bst.Metric(fn.name)) is fn and metric_fn(fn.name) is fn


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="objective must be one of"):
        objective_fn("cox")
    with pytest.raises(ValueError, match="metric must be one of"):
        metric_fn("cox")
