"""Where a one-thread fit's time goes, and its histogram throughput.

    python benchmarks/one_thread_profile.py [--task higgs] [--rows 100000] [--repeats 3]

The comparison task's data and settings (`python -m boosters compare`: 100 trees, 31
leaves leaf-wise, lr 0.1, 255 bins), one thread, best of the repeats: binning timed
apart from training, the growth loop's kernel timers (histogram build, subtraction,
split search, partition), and the rest of training (gradients, margins, leaf values,
Python). The histogram throughput is (row, feature) updates per second: a tree builds
its root's histogram over every row, then at each split the smaller child's (the larger
is parent - smaller); the updates are those rows times the features, counted from the
trees' node sizes (the pool holds every leaf's histogram at these settings: no rebuilds).
Compare with `benchmarks/scatter_add_ceiling.c`, a plain C scatter-add on one core.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import boosters as bst
from boosters.bench.benchmark import boosters_config
from boosters.bench.compare import TASKS


def histogram_rows(model) -> int:
    """Rows summed into histograms: every tree's root, then each split's smaller child."""
    total = 0
    for tree in model.forest.trees:
        total += int(tree.n_samples[0])
        for node in np.flatnonzero(tree.left_child >= 0):
            total += int(min(tree.n_samples[tree.left_child[node]], tree.n_samples[tree.right_child[node]]))
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="higgs")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    generate, _, settings = TASKS[args.task]
    X, y = generate(args.rows, 0)
    config = boosters_config(settings)
    best = None
    for _ in range(args.repeats):
        dataset = bst.Dataset(X, y)
        start = time.perf_counter()
        dataset.binned(config.max_bins, config.seed, config.enable_bundling, 1)
        binned = time.perf_counter()
        model = bst.GBDTModel.train(dataset, config, n_threads=1)
        trained = time.perf_counter()
        run = {"binning": binned - start, "training": trained - binned, "model": model}
        if best is None or run["binning"] + run["training"] < best["binning"] + best["training"]:
            best = run
    model, total = best["model"], best["binning"] + best["training"]
    kernels = {name: seconds for name, (seconds, _) in model.ensemble.kernel_timings.items()}
    parts = {"binning": best["binning"], **kernels,
             "rest of training (gradients, margins, leaf values, Python)": best["training"] - sum(kernels.values())}
    print(f"{args.task}, {args.rows} rows x {X.shape[1]} features, 1 thread: fit {total:.3f} s")
    for name, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<58} {seconds:7.3f} s  {seconds / total:6.1%}")
    updates = histogram_rows(model) * X.shape[1]
    build = kernels.get("histogram build", float("nan"))
    print(f"histogram updates: {updates / 1e9:.2f} G (row, feature); {updates / build / 1e9:.2f} G/s in the "
          f"build kernel, {updates / total / 1e9:.2f} G/s over the whole fit")


if __name__ == "__main__":
    main()
