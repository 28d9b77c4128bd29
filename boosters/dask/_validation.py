"""The validation sets of a Dask training: each partition of every (X_val, y_val) kept on
a worker with its margins, updated tree by tree; every metric reduced from per-partition
sums (a fixed order, set by set), for `eval_history`, `evals_result` and early stopping.

Only metrics that are a mean over rows of a per-row loss (after a transform) reduce this
way: each partition scores its rows with the library's own metric function
(`objectives.evaluate`), and the partitions' means are averaged by their row counts. rmse
(the mean squared error, then its root), mae, mape, huber, the (multiclass, one-vs-rest)
log losses, the poisson / gamma / tweedie deviances, pinball and the accuracies are such
means; they agree with the single-machine scores to float64 rounding. The ranking metrics
(ndcg, map) are means over the queries, each in one partition: the partitions' means are
averaged by their query counts. Others (auc) are refused (`check_metric`).
"""

from __future__ import annotations

import numpy as np

from boosters.data.groups import query_boundaries
from boosters.data.validation import as_feature_matrix, as_labels
from boosters.model.prediction import predict_tree
from boosters.objectives.registry import METRICS, evaluate, metric_fn
from boosters.training.dart import scale_down_dropped


def check_metric(metric) -> None:
    """ValueError naming config.metric unless `metric` reduces over the partitions: a mean
    over rows (the definition's row_mean) or over queries (needs_groups)."""
    try:
        fn = metric_fn(metric)
    except ValueError:
        fn = None
    if fn is None or (fn.row_mean is None and not fn.needs_groups):
        rows = ", ".join(m.name for m in METRICS if m.row_mean is not None)
        queries = ", ".join(m.name for m in METRICS if m.needs_groups)
        raise ValueError(f"config.metric: boosters.dask scores a validation set with a metric that is a mean over "
                         f"rows ({rows}) or queries ({queries}), got {metric!r}")


class ValidationState:
    """A validation partition's rows, labels and margins (n_rows, n_outputs): the base
    scores plus the trees of the rounds scored so far; `groups`: its queries' boundaries
    (ranking metrics), None without; `set_index`, `first_row`: its validation set (in the
    order of val_set) and its place there (the key of its scores, keyed_round)."""

    def __init__(self, X, y, base_scores, groups=None, first_row: int = 0, set_index: int = 0):
        self.X, self.y, self.base_scores, self.groups, self.first_row = X, y, base_scores, groups, first_row
        self.set_index = set_index
        self.margins = np.repeat(np.asarray(base_scores, dtype=np.float64)[None, :], len(self.X), axis=0)

    def add(self, trees: list) -> None:
        """Add a round's trees (one per output) to the margins."""
        for k, tree in enumerate(trees):
            self.margins[:, k] += predict_tree(tree, self.X, 1, check=False)


def make_validation_state(X, y, objective, base_scores, qid=None, first_row: int = 0, set_index: int = 0,
                          where: str = "val_set") -> ValidationState:
    """A partition of validation set `set_index` (`where`: how errors name it) checked."""
    X = as_feature_matrix(X, f"{where} X")
    y = as_labels(y, len(X), f"{where} y")
    objective.check_labels(y)
    groups = None if qid is None else query_boundaries(None, np.asarray(qid), len(X))
    return ValidationState(X, y, base_scores, groups, first_row, set_index)


def resume(state: ValidationState, rounds: list) -> ValidationState:
    """A new state of `state`'s partition whose margins hold the scored rounds (each
    (trees, DART's record or None), see add_round), added in the same order: the same
    bits. Reads only its rows and labels (a task of an abandoned round may still use `state`)."""
    new = ValidationState(state.X, state.y, state.base_scores, state.groups, state.first_row, state.set_index)
    for trees, dart in rounds:
        add_round(new, trees, dart)
    return new


def add_round(state: ValidationState, trees: list, dart=None) -> None:
    """A round's trees (one per output) added to the margins; with DART (`dart`: the
    round's dart.DartRound), first the dropped trees scaled down as the single-machine
    validation margins are (backend.LocalBackend.val_scores)."""
    scale_down_dropped(state.margins, dart, state.X, 1)
    state.add(trees)


def keyed_round(state: ValidationState, trees: list, metrics: tuple, dart=None) -> list:
    """[((set_index, first_row), score_round(...))]: the partition's shares keyed by its set
    and place (tasks.keyed's form), for the driver to add set by set in the partitions'
    order (_reduction.in_order)."""
    return [((state.set_index, state.first_row), score_round(state, trees, metrics, dart))]


def score_round(state: ValidationState, trees: list, metrics: tuple, dart=None) -> tuple:
    """add_round; then per metric its share of the overall mean (metric_share): a tuple,
    summed entry by entry (tasks.add_each)."""
    add_round(state, trees, dart)
    return tuple(metric_share(state, metric) for metric in metrics)


def metric_share(state: ValidationState, metric) -> np.ndarray:
    """(the metric's mean here x rows, rows), or for a ranking metric (its mean here x
    queries, queries): the partition's share of the overall mean."""
    if metric_fn(metric).needs_groups:
        n = len(state.groups) - 1
        return np.array([evaluate(metric, state.y, state.margins, groups=state.groups) * n if n else 0.0, float(n)])
    row_mean = metric_fn(metric).row_mean
    assert row_mean is not None  # checked before training (the metrics without one are refused)
    to_mean = row_mean[0]
    n = len(state.y)
    if state.y.ndim == 2:  # multi-target: each target's share, the score is their mean (objectives.registry.per_target_mean)
        return np.array([to_mean(evaluate(metric, state.y[:, k], state.margins[:, k:k + 1])) * n if n else 0.0
                         for k in range(state.y.shape[1])] + [float(n)])
    return np.array([to_mean(evaluate(metric, state.y, state.margins)) * n if n else 0.0, float(n)])


def overall_score(metric, sums: np.ndarray) -> float:
    if metric_fn(metric).needs_groups:
        return float(sums[0] / sums[1])
    row_mean = metric_fn(metric).row_mean
    assert row_mean is not None  # checked before training
    from_mean = row_mean[1]
    return float(np.mean([from_mean(s / sums[-1]) for s in sums[:-1]]))
