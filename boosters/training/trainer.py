"""The boosting loop (RFC-0008): gradients -> tree -> margins, evaluation, early stopping."""

from __future__ import annotations

import time

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.config import GBDTConfig
from boosters.data.binning import BinMapper
from boosters.data.bundling import bin_and_bundle
from boosters.data.dataset import Dataset
from boosters.model.tree import Forest, predict_tree
from boosters.training.grower import TreeGrower
from boosters.training.metrics import evaluate
from boosters.training.objectives import make_objective


def bin_dataset(dataset: Dataset, config: GBDTConfig, n_threads: int):
    """(BinMapper, BinnedMatrix) of a dataset, cached on it per binning setting."""
    key = (config.max_bins, config.seed, config.enable_bundling)
    if key not in dataset._binned_cache:
        mapper = BinMapper(config.max_bins, seed=config.seed).fit(dataset.X, dataset.weights, n_threads)
        if config.enable_bundling:
            binned = bin_and_bundle(mapper, dataset.X, n_threads, mapper.sample_rows)
        else:
            binned = mapper.transform(dataset.X, n_threads)
        dataset._binned_cache[key] = (mapper, binned)
    return dataset._binned_cache[key]


AUTO_QUANTIZE_MIN_ROWS = 100_000  # measured crossover (docs/benchmarks/end_to_end.md); RFC-0016 DD-3


def resolve_histogram_mode(config: GBDTConfig, n_rows: int) -> str:
    """"auto": full precision for small data, 16-bit quantized histograms otherwise."""
    if config.histogram_mode != "auto":
        return config.histogram_mode
    return "f64" if n_rows < AUTO_QUANTIZE_MIN_ROWS else "i16"


class TrainingResult:
    """What the loop produced; GBDTModel wraps it."""

    def __init__(self, forest, best_iteration, best_score, history, n_evictions, seconds, kernel_timings=None):
        self.forest = forest
        self.best_iteration = best_iteration
        self.best_score = best_score
        self.history = history
        self.n_evictions = n_evictions
        self.seconds = seconds
        self.kernel_timings = kernel_timings or {}  # tree growth phase -> (seconds, calls)


class GBDTTrainer:
    def __init__(self, config: GBDTConfig, n_threads: int = 0):
        self.config = config
        self.n_threads = effective_n_threads(n_threads)

    def train(self, train: Dataset, val_set: Dataset | None = None) -> TrainingResult:
        start = time.perf_counter()
        cfg = self.config
        self._check_inputs(train, val_set)
        objective = make_objective(cfg.objective)
        objective.check_labels(train.y)
        if val_set is not None:
            objective.check_labels(val_set.y)
        metric = cfg.resolved_metric
        n_out = objective.n_outputs

        mapper, binned = bin_dataset(train, cfg, self.n_threads)
        grower = TreeGrower(binned, mapper, cfg, self.n_threads, resolve_histogram_mode(cfg, train.n_rows))
        base = objective.init_scores(train.y, train.weights)
        forest = Forest(n_out, base)
        margins = np.repeat(base[:, None], train.n_rows, axis=1)  # (n_outputs, n_rows)
        gradients = np.empty((n_out, train.n_rows, 2), dtype=np.float32)
        val_margins = None if val_set is None else np.tile(base, (val_set.n_rows, 1))

        history: list[float] = []
        best_round, best_score = None, None
        for round_ in range(cfg.n_estimators):
            objective.gradients(margins, train.y, train.weights, gradients, self.n_threads)
            for k in range(n_out):
                tree = grower.grow(gradients[k], tree_index=round_ * n_out + k)
                grower.update_predictions(margins[k])
                forest.add(tree, k)
                if val_margins is not None:
                    val_margins[:, k] += predict_tree(tree, val_set.X, self.n_threads)
            if val_set is None:
                if cfg.verbosity >= 1:
                    score = evaluate(metric, train.y, margins.T, train.weights)
                    print(f"[{round_ + 1}] train {metric.name}: {score:.6f}")
                continue
            score = evaluate(metric, val_set.y, val_margins, val_set.weights)
            history.append(score)
            if best_score is None or (score > best_score if metric.higher_is_better else score < best_score):
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
        return TrainingResult(forest, best_iteration, best_score, history, grower.n_evictions,
                              time.perf_counter() - start, grower.loop.timings)

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
