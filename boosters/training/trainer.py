"""The boosting loop (RFC-0008): gradients -> tree -> margins, evaluation, early stopping."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.config import GBDTConfig
from boosters.data.categories import recode
from boosters.data.dataset import Dataset
from boosters.model.ensemble import Ensemble
from boosters.model.tree import Forest, predict_tree
from boosters.training.constraints import interaction_groups, monotone_directions
from boosters.training.grower import TreeGrower
from boosters.training.metrics import check_groups, evaluate
from boosters.training.objectives import make_objective

# why a validation metric can be NaN, for its error message
_NAN_HINTS = {"auc": "AUC needs both classes in the validation labels"}

AUTO_QUANTIZE_MIN_ROWS = 100_000  # measured crossover (docs/benchmarks/end_to_end.md); RFC-0016 DD-3


def resolve_histogram_mode(config: GBDTConfig, n_rows: int) -> str:
    """"auto": full precision for small data, 16-bit quantized histograms otherwise."""
    if config.histogram_mode != "auto":
        return config.histogram_mode
    return "f64" if n_rows < AUTO_QUANTIZE_MIN_ROWS else "i16"


@dataclass(eq=False)
class TrainingResult(Ensemble):
    """What a training run produced: the ensemble a GBDTModel holds, and how the run went."""

    n_evictions: int = 0    # histograms evicted from the pool and rebuilt
    seconds: float = 0.0
    kernel_timings: dict = field(default_factory=dict)  # tree growth phase -> (seconds, calls)


class GBDTTrainer:
    def __init__(self, config: GBDTConfig, n_threads: int = 0):
        self.config = config
        self.n_threads = effective_n_threads(n_threads)

    def train(self, train: Dataset, val_set: Dataset | None = None) -> TrainingResult:
        start = time.perf_counter()
        cfg = self.config
        self._check_inputs(train, val_set)
        objective = make_objective(cfg.objective, train.group_boundaries)
        objective.check_labels(train.y)
        objective.check_scale(train.y, train.weights)
        if val_set is not None:
            objective.check_labels(val_set.y)
        metric = cfg.resolved_metric
        n_out = objective.n_outputs

        mapper, binned = train.binned(cfg.max_bins, cfg.seed, cfg.enable_bundling, self.n_threads)
        base = objective.init_scores(train.y, train.weights)
        forest = Forest(n_out, base)
        margins = np.repeat(base[:, None], train.n_rows, axis=1)  # (n_outputs, n_rows)
        gradient_kernel = objective.gradient_kernel(margins, train.y, train.weights,
                                                    np.empty((n_out, train.n_rows, 2), dtype=np.float32),
                                                    self.n_threads)
        grower = TreeGrower(binned, mapper, cfg, self.n_threads, gradient_kernel, margins,
                            resolve_histogram_mode(cfg, train.n_rows), feature_names=train.feature_names)
        val_margins = None if val_set is None else np.tile(base, (val_set.n_rows, 1))
        # the validation codes by value with the training's mapping, as at prediction
        val_X = None if val_set is None else recode(val_set.X, val_set.categories, train.categories,
                                                    train.feature_names, "val_set")

        history: list[float] = []
        best_round, best_score = None, None
        nan_warned = False
        # with nothing to do between rounds, many grow in one nogil block (see grower.py)
        one_at_a_time = val_set is not None or cfg.verbosity >= 1
        for round_, trees in enumerate(self._rounds(grower, cfg.n_estimators, one_at_a_time)):
            for k, tree in enumerate(trees):
                forest.add(tree, k)
                if val_margins is not None:
                    val_margins[:, k] += predict_tree(tree, val_X, self.n_threads, check=False)
            if val_set is None:
                if cfg.verbosity >= 1:
                    score = evaluate(metric, train.y, margins.T, train.weights, train.group_boundaries)
                    print(f"[{round_ + 1}] train {metric.name}: {score:.6f}")
                continue
            score = evaluate(metric, val_set.y, val_margins, val_set.weights, val_set.group_boundaries)
            history.append(score)
            if np.isnan(score):  # never a best round; early stopping cannot work without a score
                if cfg.early_stopping_rounds is not None:
                    raise ValueError(f"val_set: the validation {metric.name} is NaN at round {round_ + 1} "
                                     f"({_NAN_HINTS.get(metric.name, 'no defined value on this data')}); "
                                     f"early stopping cannot select a round from it")
                if not nan_warned:
                    nan_warned = True
                    warnings.warn(f"val_set: the validation {metric.name} is NaN from round {round_ + 1} "
                                  f"({_NAN_HINTS.get(metric.name, 'no defined value on this data')})",
                                  RuntimeWarning, stacklevel=3)
            elif best_score is None or (score > best_score if metric.higher_is_better else score < best_score):
                best_round, best_score = round_, score
            if cfg.verbosity >= 1:
                print(f"[{round_ + 1}] valid {metric.name}: {score:.6f}")
            if cfg.early_stopping_rounds is not None and round_ - best_round >= cfg.early_stopping_rounds:
                if cfg.verbosity >= 1:
                    print(f"early stopping: best round {best_round + 1}, valid {metric.name} {best_score:.6f}")
                break

        if cfg.early_stopping_rounds is not None:
            forest.truncate((best_round + 1) * n_out)
            best_iteration = best_round
        else:
            best_iteration = forest.n_trees // n_out - 1
            best_score = history[-1] if history else None
        if grower.n_evictions and cfg.verbosity >= 1:
            print(f"note: {grower.n_evictions} histograms were evicted and rebuilt; "
                  f"a larger cache_size avoids that")
        return TrainingResult(
            forest, cfg.objective, train.n_features, train.feature_names, cfg, best_iteration, best_score,
            history, categories=dict(train.categories), n_evictions=grower.n_evictions,
            seconds=time.perf_counter() - start, kernel_timings=grower.loop.timings)

    @staticmethod
    def _rounds(grower: TreeGrower, n_rounds: int, one_at_a_time: bool):
        """The trees of each round, round by round; grown one round at a time or in blocks."""
        round_ = 0
        while round_ < n_rounds:
            block = grower.grow_rounds(round_, 1 if one_at_a_time else n_rounds - round_)
            yield from block
            round_ += len(block)

    def _check_inputs(self, train: Dataset, val_set: Dataset | None) -> None:
        if not isinstance(train, Dataset):
            raise TypeError(f"train must be a boosters.Dataset, got {type(train).__name__}")
        if not train.has_labels:
            raise ValueError("train has no labels: pass y to Dataset(X, y)")
        if val_set is not None:
            if not isinstance(val_set, Dataset):
                raise TypeError(f"val_set must be a boosters.Dataset or None, got {type(val_set).__name__}")
            if not val_set.has_labels:
                raise ValueError("val_set has no labels: pass y to Dataset(X, y)")
            if val_set.n_features != train.n_features:
                raise ValueError(f"val_set has {val_set.n_features} features but train has {train.n_features}")
        elif self.config.early_stopping_rounds is not None:
            raise ValueError("early_stopping_rounds needs a val_set to monitor")
        check_groups(self.config, train, val_set)
        # feature names and indices of the constraints match the data (before binning it)
        monotone_directions(self.config, train.n_features, train.feature_names)
        interaction_groups(self.config, train.n_features, train.feature_names)
