"""What many Dask partitions cost: the same rows trained as 2, 20, 200 ... partitions on 2
Dask workers x 1 thread, and where the time goes.

    python benchmarks/dask_partitions.py [--rows 200000] [--features 28] [--trees 10] [--depth 6]
        [--partitions 2 20 200] [--steps tasks actors] [--repeats 2] [--placement contiguous]

Every run trains the same rows (each worker's half generated once on that worker, then cut
into its partitions: "contiguous", partitions 0..P/2-1 on the first worker and the rest on
the other; "interleaved", partition i on worker i % 2, as Dask places the blocks of an array
it computes) with the same settings (logistic, depth 6, i16 histograms, bin edges from the row sample),
so the models must be identical whatever P (checked). Runs go in turn (P, steps) within
each repeat, so that a change of the machine's load hits all alike; the minimum is kept.

Per run it reports the wall time of `trees` trees and of 1 tree (the difference divided by
trees - 1 is the time per tree; the 1-tree run is the set-up plus one tree), and, per tree:

- round trips (driver waits), the Dask tasks the training submitted (the driver's
  client.submit calls, the set-up's included: what the scheduler handles) and the tasks
  (actor calls with steps="actors") of the growth steps' sums (stats["step_tasks"]);
- the driver's seconds submitting tasks (building and sending the graph), waiting for
  results, and summing the partitions' results itself (DriverSum.finish);
- the workers' task seconds (Dask's task stream: compute time of every task, by kind),
  with steps="tasks" only (actor calls are not in the task stream);
- bytes the driver gathered.

`--no-dask`: a worker's own CPU time per tree for `--rows` rows cut into `--partitions`
partitions (its functions called in this process, without Dask), split into the histograms'
build, the rest of the steps and the worker's sums of its partitions' results:

    python benchmarks/dask_partitions.py --no-dask --rows 100000 --partitions 1 10 100
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import dask.array as da
import numpy as np
from dask import delayed
from dask.utils import key_split
from distributed import Client, LocalCluster, get_task_stream, wait

import boosters as bst
from boosters.dask import _driver, train


def make_half(seed: int, rows: int, features: int) -> tuple:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, features))
    logit = X[:, 0] - X[:, 1] + 0.5 * X[:, 2] * X[:, 3]
    return X, (logit + rng.logistic(size=rows) > 0).astype(np.float64)


def cut(half: tuple, start: int, stop: int, which: int):
    return half[which][start:stop].copy()


def partitioned_data(client, rows: int, features: int, n_partitions: int, placement: str) -> tuple:
    """The same rows for any n_partitions (even): each worker's half made on it, cut into
    n_partitions / 2 partitions each; "contiguous": a half's partitions stay on its worker
    (partitions 0..P/2-1 on the first), "interleaved": partition i goes to worker i % 2 (as
    Dask tends to place the blocks of an array it computes)."""
    workers = sorted(client.scheduler_info()["workers"])[:2]
    sizes = [rows // 2, rows - rows // 2]
    halves = [client.submit(make_half, i, n, features, workers=[w], pure=False)
              for i, (n, w) in enumerate(zip(sizes, workers))]
    X_parts, y_parts = [], []
    for h, (half, n_half) in enumerate(zip(halves, sizes)):
        bounds = np.linspace(0, n_half, n_partitions // 2 + 1).astype(int)
        for j, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:])):
            worker = workers[h] if placement == "contiguous" else workers[(h * (n_partitions // 2) + j) % 2]
            for which, parts, shape in ((0, X_parts, (stop - start, features)), (1, y_parts, (stop - start,))):
                block = client.submit(cut, half, start, stop, which, workers=[worker], pure=False)
                parts.append(da.from_delayed(delayed(block), shape, np.float64))
    X, y = da.concatenate(X_parts), da.concatenate(y_parts)
    X, y = client.persist([X, y])
    wait([X, y])
    del halves
    return X, y


class DriverClock:
    """Seconds the driver spends submitting, waiting and summing, and the tasks it submits."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.calls = defaultdict(int)
        self._saved = []

    def wrap(self, owner, name: str, kind: str, count=None):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[kind] += time.perf_counter() - start
                if count is not None:
                    self.calls[kind] += count(*args, **kwargs)

        self._saved.append((owner, name, original))
        setattr(owner, name, timed)

    def __enter__(self):
        self.wrap(Client, "submit", "submit", lambda *a, **k: 1)
        self.wrap(_driver.Partitions, "_result", "wait")
        self.wrap(_driver.DriverSum, "finish", "driver sums")
        return self

    def __exit__(self, *exc):
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)


def worker_seconds(records: list) -> dict:
    """Compute seconds of the task stream's tasks, by the task's function name."""
    out = defaultdict(float)
    for record in records:
        kind = key_split(record["key"])
        for phase in record["startstops"]:
            if phase["action"] == "compute":
                out[kind] += phase["stop"] - phase["start"]
    return out


def worker_cpu(rows: int, features: int, depth: int, partitions: list) -> None:
    """Without Dask: a worker's functions (boosters.dask._partition_state) for `rows` rows cut
    into each number of `partitions`, one process, CPU seconds per depth-`depth` tree (every
    node split at the middle bin), split into their parts: the histograms' build (the
    library's builder), the rest of `histograms` (widening and copying the pool out), and
    the worker's sums of its partitions' results."""
    from boosters.dask import _partition_state as tasks
    from boosters.data.binning import BinMapper
    from boosters.objectives.registry import make_objective

    X, y = make_half(0, rows, features)
    mapper, objective = BinMapper(256).fit(X), make_objective(bst.Objective.logistic(), None)
    steps, level, next_node = [], [0], 1
    for d in range(depth):
        steps.append(np.array([[node, d % features, 128, 0, next_node + 2 * i, next_node + 2 * i + 1]
                               for i, node in enumerate(level)], dtype=np.int64))
        next_node += 2 * len(level)
        level = steps[-1][:, 4:].ravel().tolist()
    settings = tasks.Settings(np.arange(features, dtype=np.int32), 2 ** (depth + 1) - 1, (16, 1000, 42))
    build = tasks.build_nodes
    for n_parts in partitions:
        bounds = np.linspace(0, rows, n_parts + 1).astype(int)
        states = [tasks.make_state(X[a:b], y[a:b], None, mapper, objective, np.zeros(1), settings, a)
                  for a, b in zip(bounds[:-1], bounds[1:])]
        seconds = defaultdict(float)

        def timed_build(*args):
            start = time.process_time()
            build(*args)
            seconds["build"] += time.process_time() - start

        tasks.build_nodes = timed_build
        n_trees, start = 3, time.process_time()
        for t in range(n_trees):
            previous = None if t == 0 else (0, np.array(level), np.full(len(level), 0.01))
            maxima = np.max([tasks.start_tree(s, t, previous, 0, True) for s in states], axis=0)
            for k, splits in enumerate([None] + steps):
                begin = time.process_time()
                if splits is None:
                    results = [tasks.root_histogram(s, t, maxima) for s in states]
                else:
                    last = k == len(steps)
                    results = [tasks.split_and_build(s, t, splits, [] if last else splits[:, 4].tolist(),
                                                     level if last else []) for s in states]
                seconds["steps"] += time.process_time() - begin
                begin = time.process_time()
                total = results[0]
                for r in results[1:]:
                    total = tasks.add_each(total, r) if isinstance(r, tuple) else tasks.add(total, r)
                seconds["sums"] += time.process_time() - begin
        tasks.build_nodes = build
        per_tree = (time.process_time() - start) / n_trees * 1e3
        print(f"{n_parts} partition(s) of {rows // n_parts} rows: {per_tree:.1f} ms CPU per tree; of it, histograms "
              f"built {seconds['build'] / n_trees * 1e3:.1f} ms, the rest of the steps "
              f"{(seconds['steps'] - seconds['build']) / n_trees * 1e3:.1f} ms, the worker's sums "
              f"{seconds['sums'] / n_trees * 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--partitions", type=int, nargs="+", default=[2, 20, 200])
    parser.add_argument("--steps", nargs="+", choices=["tasks", "actors"], default=["tasks", "actors"])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--placement", choices=["contiguous", "interleaved"], default="contiguous")
    parser.add_argument("--no-dask", action="store_true",
                        help="the worker's CPU time only: --rows rows cut into --partitions partitions, one process")
    args = parser.parse_args()
    if args.no_dask:
        return worker_cpu(args.rows, args.features, args.depth, args.partitions)
    config = bst.GBDTConfig(n_estimators=args.trees, max_depth=args.depth, objective=bst.Objective.logistic(),
                            histogram_mode="i16")
    one_tree = config.replace(n_estimators=1)
    print(f"{args.rows} rows x {args.features} features, logistic, depth {args.depth}, i16 histograms; "
          f"2 worker processes x 1 thread; {args.placement} partitions")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        data = {p: partitioned_data(client, args.rows, args.features, p, args.placement) for p in args.partitions}
        runs = [(p, s) for p in args.partitions for s in args.steps]
        seconds = {run: [] for run in runs}
        setup = {run: [] for run in runs}
        detail, models = {}, {}
        for repeat in range(args.repeats):
            for p, steps in runs:
                X, y = data[p]
                start = time.perf_counter()
                train(client, X, y, one_tree, steps=steps)
                setup[p, steps].append(time.perf_counter() - start)
                stats = {}
                with DriverClock() as clock, get_task_stream(client) as stream:
                    start = time.perf_counter()
                    models[p, steps] = train(client, X, y, config, stats=stats, steps=steps)
                    seconds[p, steps].append(time.perf_counter() - start)
                if repeat == 0:
                    detail[p, steps] = (stats, dict(clock.seconds), dict(clock.calls), worker_seconds(stream.data))
                print(f"P={p} steps={steps}: {seconds[p, steps][-1]:.2f} s, 1 tree {setup[p, steps][-1]:.2f} s",
                      flush=True)
        X_local = np.asarray(data[args.partitions[0]][0][:2000].compute())
    reference = models[runs[0]]
    for (p, steps), times in seconds.items():
        stats, driver, calls, workers = detail[p, steps]
        model = models[p, steps]
        identical = all(np.array_equal(getattr(a, f), getattr(b, f))
                        for a, b in zip(model.forest.trees, reference.forest.trees)
                        for f in ("split_feature", "threshold_bin", "value", "n_samples")) and \
            np.array_equal(model.predict(X_local), reference.predict(X_local))
        t = args.trees
        per_tree = (min(times) - min(setup[p, steps])) / (t - 1)
        print(f"\nP={p} steps={steps}: {t} trees {min(times):.2f} s (runs {', '.join(f'{s:.2f}' for s in times)}); "
              f"1 tree {min(setup[p, steps]):.2f} s; per tree {per_tree * 1e3:.0f} ms; identical model: {identical}")
        step_tasks = stats.get("step_tasks", float("nan")) / t
        print(f"  per tree: round trips {stats['round_trips'] / t:.1f}, "
              f"tasks submitted {calls.get('submit', 0) / t:.0f} (of them, or actor calls, for the steps' sums: "
              f"{step_tasks:.0f}), "
              f"driver gathered {stats['driver_bytes'] / t / 1e3:.0f} kB")
        print("  driver s per tree: " + ", ".join(f"{k} {v / t * 1e3:.0f} ms" for k, v in sorted(driver.items())))
        if workers:
            total = sum(workers.values())
            top = sorted(workers.items(), key=lambda kv: -kv[1])[:6]
            print(f"  workers' task s per tree (both workers): {total / t * 1e3:.0f} ms; "
                  + ", ".join(f"{k} {v / t * 1e3:.0f} ms" for k, v in top))


if __name__ == "__main__":
    main()
