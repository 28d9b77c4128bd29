"""Overhead of boosters.dask: training on 2 Dask workers x 1 thread against local
training with 2 threads, the same data and settings; the Dask round trips and bytes per
tree; and whether the two models are identical.

    python benchmarks/dask_overhead.py [--rows 200000] [--features 28] [--trees 20] [--depth 6]
        [--driver-fanin 1 4] [--steps workers tasks actors]

`--driver-fanin`: how many of a reduction's last results the driver sums itself
(`_driver.DRIVER_FANIN`; 1: every sum a Dask task, as before that option existed); several
values are run in turn in each repeat, on the same cluster, with local training in between.
`--steps`: `boosters.dask.train(steps=...)`, each run in turn too.

The data are generated on the workers (numpy's generator, one partition on each worker) and
fetched once for the local training. The cluster runs worker processes (no shared GIL).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from distributed import Client, LocalCluster

import boosters as bst
from boosters.bench.dask_data import spread_data
from boosters.dask import _driver, train


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--driver-fanin", type=int, nargs="+", default=[_driver.DRIVER_FANIN])
    parser.add_argument("--steps", nargs="+", choices=["workers", "tasks", "actors"],
                        default=["workers", "tasks", "actors"])
    args = parser.parse_args()
    config = bst.GBDTConfig(n_estimators=args.trees, max_depth=args.depth, objective=bst.Objective.logistic())
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        X, y = spread_data(client, args.rows, args.features)
        X_local, y_local = client.compute([X, y], sync=True)

        # (steps, driver fan-in): the fan-in applies to steps="tasks" only
        variants = [("tasks", fanin) for fanin in args.driver_fanin] * ("tasks" in args.steps)
        variants += [("actors", None)] * ("actors" in args.steps)
        variants += [("workers", None)] * ("workers" in args.steps)
        dask_seconds = {v: [] for v in variants}
        stats = {v: {} for v in variants}
        local_seconds, models = [], {}
        for _ in range(args.repeats):  # in turn, so that a change of load hits all alike
            for steps, fanin in variants:
                _driver.DRIVER_FANIN = fanin or _driver.DRIVER_FANIN
                start = time.perf_counter()
                models[steps, fanin] = train(client, X, y, config, stats=stats[steps, fanin], steps=steps)
                dask_seconds[steps, fanin].append(time.perf_counter() - start)
            start = time.perf_counter()
            reference = bst.GBDTModel.train(bst.Dataset(X_local, y_local), config, n_threads=2)
            local_seconds.append(time.perf_counter() - start)

    def identical(model):
        return (model.n_trees == reference.n_trees and all(
            np.array_equal(getattr(a, f), getattr(b, f)) for a, b in zip(model.forest.trees, reference.forest.trees)
            for f in ("split_feature", "threshold_bin", "value", "n_samples"))
            and np.array_equal(model.predict(X_local), reference.predict(X_local)))
    n_trees = reference.n_trees
    print(f"{args.rows} rows x {args.features} features, {n_trees} trees of depth {args.depth}, "
          f"histograms {'i16' if args.rows >= 100_000 else 'f64'} (auto)")
    print(f"local, 2 threads: {min(local_seconds):.2f} s  (runs: {', '.join(f'{s:.2f}' for s in local_seconds)})")
    for (steps, fanin), seconds in dask_seconds.items():
        st = stats[steps, fanin]
        how = f"steps={steps}" + (f", driver fan-in {fanin}" if fanin else "")
        print(f"dask, 2 workers x 1 thread, {how}: {min(seconds):.2f} s  "
              f"(runs: {', '.join(f'{s:.2f}' for s in seconds)}); overhead ratio "
              f"{min(seconds) / min(local_seconds):.2f}x; round trips per tree {st['round_trips'] / n_trees:.1f}; "
              f"bytes gathered by the driver per tree {st['driver_bytes'] / n_trees / 1e3:.0f} kB; "
              f"histogram bytes the partitions produced per tree {st['partition_bytes'] / n_trees / 1e3:.0f} kB; "
              f"model identical to local training (trees and predictions): {identical(models[steps, fanin])}")

if __name__ == "__main__":
    main()
