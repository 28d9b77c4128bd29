"""`python -m boosters demo`: train on the built-in covertype-shaped dataset."""

from __future__ import annotations

import time

import numpy as np

from boosters.bench import benchmark
from boosters.bench.compare import run_isolated
from boosters._lib.threads import effective_n_threads
from boosters.config import GBDTConfig, GrowthStrategy, Metric, Objective
from boosters.data.dataset import Dataset
from boosters.bench.datasets import COVERTYPE_CLASSES, make_covertype, train_test_split
from boosters.gbdt_model import GBDTModel


def run_demo(n_rows: int, binary: bool, rounds: int, threads: int, compare: bool = True) -> int:
    threads = effective_n_threads(threads)
    X, y = make_covertype(n_rows, binary=binary, seed=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_fraction=0.2, seed=0)
    task = "binary" if binary else "multiclass"
    n_classes = 2 if binary else COVERTYPE_CLASSES
    print(f"covertype-shaped data: {len(y_train)} train / {len(y_test)} test rows, {X.shape[1]} features "
          f"(10 terrain + 44 one-hot), {'binary' if binary else f'{n_classes} classes'}; {threads} threads")
    settings = benchmark.Settings(task=task, n_classes=n_classes, n_trees=rounds)

    objective = Objective.logistic() if binary else Objective.softmax(n_classes)
    metric = Metric.auc() if binary else Metric.multiclass_accuracy()
    config = GBDTConfig(
        n_estimators=rounds, learning_rate=settings.learning_rate, objective=objective, metric=metric,
        growth_strategy=GrowthStrategy.Leafwise, n_leaves=settings.n_leaves, max_depth=None,
        min_samples_leaf=settings.min_samples_leaf, l2=settings.l2, min_child_weight=1e-3,
        subsample=settings.subsample, max_bins=settings.max_bins + 1, cache_size=settings.n_leaves, verbosity=1)
    start = time.perf_counter()
    model = GBDTModel.train(Dataset(X_train, y_train), config, val_set=Dataset(X_test, y_test), n_threads=threads)
    seconds = time.perf_counter() - start
    name, value = benchmark.score(task, y_test, model.predict(X_test, n_threads=threads))
    print(f"\nboosters: {model.n_trees} trees in {seconds:.2f} s (per-round validation included); "
          f"test {name} = {value:.4f}")

    rivals = [lib for lib in ("lightgbm", "xgboost") if benchmark.available(lib)] if compare else []
    if compare and not rivals:
        print("\nInstall lightgbm and xgboost-cpu (pip install '.[compare]') to see them side by side.")
    if rivals:
        print(f"\nSide by side, matched settings ({settings.n_leaves} leaves leaf-wise, learning rate "
              f"{settings.learning_rate}, {settings.max_bins} bins, {rounds} trees), fit from NumPy arrays:\n")
        results = run_isolated(["boosters"] + rivals, settings, X_train, y_train, X_test, y_test, [threads])
        print(benchmark.format_table(results))
        print("\n(each fit in a fresh process; peak memory is the fit's peak RSS above the loaded data)")
    return 0
