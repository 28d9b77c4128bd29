"""Overhead of boosters.dask: training on 2 Dask workers x 1 thread against local
training with 2 threads, the same data and settings; the Dask round trips and bytes per
tree; and whether the two models are identical.

    python benchmarks/dask_overhead.py [--rows 200000] [--features 28] [--trees 20] [--depth 6]
        [--driver-fanin 1 4]

`--driver-fanin`: how many of a reduction's last results the driver sums itself
(`_driver.DRIVER_FANIN`; 1: every sum a Dask task, as before that option existed); several
values are run in turn in each repeat, on the same cluster, with local training in between.

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
from boosters.dask import _driver, train  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--driver-fanin", type=int, nargs="+", default=[_driver.DRIVER_FANIN])
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

        dask_seconds = {fanin: [] for fanin in args.driver_fanin}
        stats = {fanin: {} for fanin in args.driver_fanin}
        local_seconds, models = [], {}
        for _ in range(args.repeats):  # in turn, so that a change of load hits all alike
            for fanin in args.driver_fanin:
                _driver.DRIVER_FANIN = fanin
                start = time.perf_counter()
                models[fanin] = train(client, X, y, config, stats=stats[fanin])
                dask_seconds[fanin].append(time.perf_counter() - start)
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
    for fanin, seconds in dask_seconds.items():
        st = stats[fanin]
        print(f"dask, 2 workers x 1 thread, driver fan-in {fanin}: {min(seconds):.2f} s  "
              f"(runs: {', '.join(f'{s:.2f}' for s in seconds)}); overhead ratio "
              f"{min(seconds) / min(local_seconds):.2f}x; round trips per tree {st['round_trips'] / n_trees:.1f}; "
              f"bytes gathered by the driver per tree {st['driver_bytes'] / n_trees / 1e3:.0f} kB; "
              f"histogram bytes the partitions produced per tree {st['partition_bytes'] / n_trees / 1e3:.0f} kB; "
              f"model identical to local training (trees and predictions): {identical(models[fanin])}")


if __name__ == "__main__":
    main()
