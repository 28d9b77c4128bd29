"""Learning to rank within query groups (LambdaRank, pairwise): margins are scores that order
each query's rows; NDCG and MAP, and the ideal DCG that LambdaRank normalises by."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from boosters.objectives import _gradients
from boosters.objectives.base import MetricFn, ObjectiveFn
from boosters.objectives.parameters import K, NDCG_AT, Parameter

RANKED = ("lambdarank", "pairwise", "squared", "logistic")  # ranking metrics order each query's rows by any score


class LambdaRank(ObjectiveFn):
    """LambdaRank (NDCG@ndcg_at) within the query groups given at construction."""

    name = kernel = "lambdarank"
    aliases = {"rank:ndcg": {}}
    parameters: ClassVar[tuple[Parameter, ...]] = (NDCG_AT,)
    task = "ranking"
    needs_groups = True

    @classmethod
    def default_metric(cls, spec):
        return "ndcg", {"k": spec.ndcg_at}

    def __init__(self, spec, groups: np.ndarray | None = None):
        super().__init__(spec, groups)
        if groups is None:
            raise ValueError(f"{spec.name} needs query groups: pass group= (sizes) or qid= (per-row query ids) "
                             "to the training Dataset")
        self.groups = groups

    def check_labels(self, y):
        # the only check: the kernel's gains 2^label - 1 trust it
        bad = (y != np.floor(y)) | (y < 0) | (y > _gradients.MAX_LABEL)
        if np.any(bad):
            raise ValueError(f"y: lambdarank needs integer relevance labels in 0..{_gradients.MAX_LABEL}, "
                             f"found {y[np.argmax(bad)]}")

    def gradient_bound(self, y):
        # per pair at most 1/0.01 (an NDCG change <= 1 over the score gap's floor), times the pairs of a row
        return 100.0 * float(np.diff(self.groups).max())

    def init_scores(self, y, weights):
        return np.zeros(1)  # scores only order the rows of a query: no constant helps (as LightGBM)

    def gradient_kernel(self, margins, y, weights, out, n_threads):
        """The kernel, with each query's ideal DCG computed here once (the labels do not change)."""
        w = np.empty(0) if weights is None else weights
        ideal = ideal_dcg(y, self.groups, self.spec.ndcg_at)
        inverse_max_dcg = np.divide(1.0, ideal, out=np.zeros_like(ideal), where=ideal > 0)  # 0: no gradient
        return _gradients.GradientKernel(self.kernel, margins, y, w, out, n_threads, groups=self.groups,
                                          ndcg_at=self.spec.ndcg_at, inverse_max_dcg=inverse_max_dcg)


class Pairwise(LambdaRank):
    """RankNet's pairwise logistic loss within the query groups: any labels (their order counts)."""

    name = kernel = "pairwise"
    aliases = {"rank:pairwise": {}}
    parameters = ()  # every pair counts: no truncation

    @classmethod
    def default_metric(cls, spec):
        return "ndcg", {"k": 10}

    def check_labels(self, y):
        pass  # finite, as Dataset checks

    def gradient_bound(self, y):
        return float(np.diff(self.groups).max())  # rho <= 1 per pair, one pair per other row

    def gradient_kernel(self, margins, y, weights, out, n_threads):
        w = np.empty(0) if weights is None else weights
        return _gradients.GradientKernel(self.kernel, margins, y, w, out, n_threads, groups=self.groups)


def _query_positions(groups: np.ndarray, key: np.ndarray):
    """Rows ordered by `key` descending within each query (ties in row order), the query
    of each ordered row and its 0-based position in its query."""
    query = np.repeat(np.arange(len(groups) - 1), np.diff(groups))
    order = np.lexsort((-key, query))  # stable: by query, then by key descending
    position = np.arange(len(key)) - groups[query]
    return order, query, position


def _query_mean(per_query: np.ndarray, groups: np.ndarray, w) -> float:
    """Mean over the queries; with weights, each query weighs its rows' mean weight (as LightGBM)."""
    if w is None:
        return float(per_query.mean())
    query_weight = np.add.reduceat(w, groups[:-1]) / np.diff(groups)
    return float(np.sum(per_query * query_weight) / np.sum(query_weight))


def _dcg(gain, key, groups, k):
    """Per query: DCG@k of its rows ordered by `key` descending (ties in row order)."""
    order, _, position = _query_positions(groups, key)
    contribution = np.where(position < k, gain[order] / np.log2(2.0 + position), 0.0)
    return np.add.reduceat(contribution, groups[:-1])


def ideal_dcg(y, groups, k):
    """Per query: the best DCG@k of its labels `y` (gain 2^label - 1, discount
    1/log2(2 + position)), the rows sorted by label; 0 without a relevant row.
    NDCG's denominator, and lambdarank's (computed once per training)."""
    return _dcg(np.exp2(y) - 1.0, y, groups, k)


def ndcg(y, margins, w, groups, k):
    """Mean NDCG@k over the queries (gain 2^label - 1, discount 1/log2(2 + position);
    a query whose ideal DCG is 0 scores 1), as LightGBM."""
    ideal = ideal_dcg(y, groups, k)
    actual = _dcg(np.exp2(y) - 1.0, margins[:, 0], groups, k)
    per_query = np.ones(len(ideal))
    np.divide(actual, ideal, out=per_query, where=ideal > 0)
    return _query_mean(per_query, groups, w)


def average_precision(y, margins, w, groups, k):
    """Mean AP@k over the queries (relevant: label > 0.5; a query's sum of precision@i at
    the relevant positions i <= k over min(k, its relevant rows); 1 without any), as LightGBM."""
    order, _, position = _query_positions(groups, margins[:, 0])
    relevant = (y[order] > 0.5).astype(np.float64)
    hits = np.cumsum(relevant)
    hits -= np.repeat(hits[groups[:-1]] - relevant[groups[:-1]], np.diff(groups))  # per query
    precision = np.where((position < k) & (relevant > 0), hits / (position + 1.0), 0.0)
    n_relevant = np.add.reduceat(relevant, groups[:-1])
    per_query = np.ones(len(n_relevant))
    np.divide(np.add.reduceat(precision, groups[:-1]), np.minimum(n_relevant, k), out=per_query,
              where=n_relevant > 0)
    return _query_mean(per_query, groups, w)


class Ndcg(MetricFn):
    name, objectives, higher_is_better, needs_groups = "ndcg", RANKED, True, True
    parameters = (K,)
    function = staticmethod(ndcg)

    @classmethod
    def score(cls, metric, y, margins, w, groups):
        return ndcg(y, margins, w, groups, metric.k)


class Map(MetricFn):
    aliases = {"mean_average_precision": {}}
    name, objectives, higher_is_better, needs_groups = "map", RANKED, True, True
    parameters = (K,)
    function = staticmethod(average_precision)

    @classmethod
    def score(cls, metric, y, margins, w, groups):
        return average_precision(y, margins, w, groups, metric.k)
