"""Overhead of boosters.dask: training on 2 Dask workers x 1 thread against local
training with 2 threads, the same data and settings; the Dask round trips and bytes per
tree; and whether the two models are identical.

    python benchmarks/dask_overhead.py [--rows 200000] [--features 28] [--trees 20] [--depth 6]

The data are generated on the workers (dask.array.random, one partition per worker) and
fetched once for the local training. The cluster runs worker processes (no shared GIL).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# this folder's sparse.py would shadow the `sparse` package that dask.array probes for
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import boosters as bst  # noqa: E402
from boosters.dask import train  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    config = bst.GBDTConfig(n_estimators=args.trees, max_depth=args.depth, objective=bst.Objective.logistic())
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        state = da.random.RandomState(0)
        X = state.normal(size=(args.rows, args.features), chunks=((args.rows + 1) // 2, args.features))
        logit = X[:, 0] - X[:, 1] + 0.5 * X[:, 2] * X[:, 3]
        y = (logit + state.logistic(size=args.rows, chunks=X.chunks[0]) > 0).astype(np.float64)
        X, y = client.persist([X, y])
        X_local, y_local = client.compute([X, y], sync=True)

        dask_seconds, stats = [], {}
        for _ in range(args.repeats):
            start = time.perf_counter()
            model = train(client, X, y, config, stats=stats)
            dask_seconds.append(time.perf_counter() - start)
    local_seconds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        reference = bst.GBDTModel.train(bst.Dataset(X_local, y_local), config, n_threads=2)
        local_seconds.append(time.perf_counter() - start)
    identical = (model.n_trees == reference.n_trees and all(
        np.array_equal(getattr(a, f), getattr(b, f)) for a, b in zip(model.forest.trees, reference.forest.trees)
        for f in ("split_feature", "threshold_bin", "value", "n_samples"))
        and np.array_equal(model.predict(X_local), reference.predict(X_local)))
    n_trees = model.n_trees
    print(f"{args.rows} rows x {args.features} features, {n_trees} trees of depth {args.depth}, "
          f"histograms {'i16' if args.rows >= 100_000 else 'f64'} (auto)")
    for label, seconds in (("local, 2 threads:          ", local_seconds),
                           ("dask, 2 workers x 1 thread:", dask_seconds)):
        print(f"{label} {min(seconds):.2f} s  (runs: {', '.join(f'{s:.2f}' for s in seconds)})")
    print(f"overhead ratio: {min(dask_seconds) / min(local_seconds):.2f}x")
    print(f"round trips per tree: {stats['round_trips'] / n_trees:.1f}")
    print(f"bytes gathered by the driver per tree: {stats['driver_bytes'] / n_trees / 1e3:.0f} kB; "
          f"histogram bytes the partitions produced per tree: {stats['partition_bytes'] / n_trees / 1e3:.0f} kB")
    print(f"model identical to local training (trees and predictions): {identical}")


if __name__ == "__main__":
    main()
