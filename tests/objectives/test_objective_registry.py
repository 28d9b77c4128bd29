"""The registry of objective and metric definitions (boosters/objectives/): one definition per
name, found from a name or from the public value (Objective, Metric). What each definition
says is pinned, as the public values show it, in tests/objectives/test_objective_definitions.py."""

from __future__ import annotations

import numpy as np
import pytest

import boosters as bst
from boosters.objectives import OBJECTIVES, _gradients, objective, objective_fn, registry
from boosters.objectives.regression import Pinball, PinballLoss
from boosters.objectives.registry import METRICS, make_objective, metric_fn, owners


def test_every_objective_has_one_definition():
    assert sorted(fn.name for fn in OBJECTIVES) == sorted(objective._LISTED)  # the refusal lists every name
    assert all(objective_fn(name).name == name for name in objective._LISTED)
    names = [fn.name for fn in OBJECTIVES] + [alias for fn in OBJECTIVES for alias in fn.aliases]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("fn", METRICS, ids=[fn.name for fn in METRICS])
def test_every_metric_has_one_definition(fn):
    assert [other.name for other in METRICS].count(fn.name) == 1
    assert metric_fn(bst.Metric(fn.name)) is fn and metric_fn(fn.name) is fn


def test_an_alias_makes_its_objective_with_the_defaults_it_implies(monkeypatch):
    """No definition has aliases yet; one given to pinball (as LightGBM's quantile, whose
    default level is 0.9) makes the pinball objective, which saves and compares as such."""
    monkeypatch.setattr(Pinball, "aliases", {"quantile": {"alpha": 0.9}})
    monkeypatch.setattr(registry, "_BY_NAME", registry.by_name(OBJECTIVES))
    assert objective_fn("quantile") is Pinball
    made = bst.Objective("quantile")
    assert made == bst.Objective.pinball(0.9) and repr(made) == "Objective.pinball(0.9)"
    assert bst.Objective("quantile", alpha=0.2) == bst.Objective.pinball(0.2)  # a value given wins


def test_a_metric_alias_makes_its_metric_with_the_defaults_it_implies(monkeypatch):
    monkeypatch.setattr(PinballLoss, "aliases", {"quantile": {"alpha": 0.9}})
    monkeypatch.setattr(registry, "_METRICS_BY_NAME", registry.by_name(METRICS))
    assert metric_fn("quantile") is PinballLoss and "quantile" in registry.metric_names()
    made = bst.Metric("quantile")
    assert made == bst.Metric.pinball(0.9) and made.label == "pinball@0.9"
    assert bst.Metric("quantile@0.1,0.2") == bst.Metric.pinball([0.1, 0.2])  # the label's levels


def test_a_parameter_is_refused_naming_the_objectives_that_take_it():
    assert owners("n_targets") == "squared, absolute, huber"
    assert owners("n_classes") == "softmax and one_vs_rest"
    assert (owners("ndcg_at"), owners("variance_power"), owners("alpha"), owners("delta")) == \
        ("lambdarank", "tweedie", "pinball", "huber")
    for fn in OBJECTIVES:  # each parameter is an Objective attribute, which a value saves
        assert all(p.name in bst.Objective.__slots__ for p in fn.parameters)
    assert owners("k", METRICS) == "the ranking metrics ('ndcg', 'map')"
    assert [owners(key, METRICS) for key in ("variance_power", "threshold", "alpha", "delta")] == \
        ["tweedie_deviance", "margin_accuracy", "pinball", "huber"]
    for fn in METRICS:  # at most one parameter: the value a label writes after its "@"
        assert len(fn.parameters) <= 1 and all(p.name in bst.Metric.__slots__ for p in fn.parameters)


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="objective must be one of"):
        objective_fn("cox")
    with pytest.raises(ValueError, match="metric must be one of"):
        metric_fn("cox")


# an Objective of each definition with the labels it trains on, for the contract tests
EXAMPLES = {"softmax": (bst.Objective.softmax(3), "class"), "one_vs_rest": (bst.Objective.one_vs_rest(3), "class"),
            "logistic": (bst.Objective("logistic"), "binary"), "hinge": (bst.Objective("hinge"), "binary"),
            "custom": (bst.Objective.custom(lambda m, d: (m, m)), "value")}


def test_each_objective_names_a_gradient_kernel_and_each_kernel_has_its_objective():
    kernels = [fn.kernel for fn in OBJECTIVES if not fn.takes_function]
    assert sorted(kernels) == sorted(_gradients.KERNELS)
    assert [fn.kernel for fn in OBJECTIVES if fn.takes_function] == [None]  # custom: the user's CustomGradients


@pytest.mark.parametrize("fn", [fn for fn in OBJECTIVES if not fn.any_metric], ids=lambda fn: fn.name)
def test_the_default_metric_of_an_objective_scores_it(fn):
    spec = EXAMPLES[fn.name][0] if fn.name in EXAMPLES else bst.Objective(fn.name)
    assert bst.Metric.default_for(spec).supports(spec)


@pytest.mark.parametrize("fn", [fn for fn in OBJECTIVES if fn.distributed], ids=lambda fn: fn.name)
@pytest.mark.parametrize("weighted", [False, True])
def test_a_distributed_objective_starts_from_its_label_sums(fn, weighted):
    """boosters.dask's start: init_scores_from_sums of the label_sums reduced over the
    partitions (plus the weight total) is init_scores of all the rows, unless the start is
    a quantile of the labels (quantile_levels), which boosters.dask selects instead."""
    spec, kind = EXAMPLES[fn.name] if fn.name in EXAMPLES else (bst.Objective(fn.name), "value")
    bound = make_objective(spec, np.array([0, 40], dtype=np.int64) if fn.needs_groups else None)
    if bound.levels is not None:
        assert fn.quantile_levels(spec) is not None
        return
    rng = np.random.default_rng(0)
    y = {"value": rng.uniform(0.5, 3.0, 40), "binary": rng.integers(0, 2, 40).astype(float),
         "class": rng.integers(0, 3, 40).astype(float)}[kind]
    w = rng.uniform(0.5, 2.0, 40) if weighted else None
    parts = [slice(0, 15), slice(15, 40)]
    sums = 0
    for p in parts:  # two partitions' sums, reduced
        w_p = None if w is None else w[p]
        sums = sums + np.append(bound.label_sums(y[p], w_p), len(y[p]) if w_p is None else w_p.sum())
    np.testing.assert_allclose(bound.init_scores_from_sums(sums), bound.init_scores(y, w), rtol=1e-12, atol=1e-15)
