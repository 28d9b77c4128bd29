"""How the driver's and the scheduler's work per tree grows with the number of Dask workers:
1, 2, 4, 8 worker processes x 1 thread, one partition on each, small data.

    python benchmarks/dask_scaling.py [--rows 20000] [--features 28] [--trees 20] [--depth 6]
        [--workers 1 2 4 8] [--steps workers tasks actors] [--repeats 3]

`--rows` is the total, cut into one equal partition per worker (each generated on its worker),
so that the data per worker shrinks as workers are added and what grows is the coordination.

The scheduler and the workers run as their own processes (`dask scheduler`, `dask worker
--nworkers W --nthreads 1`), not as a LocalCluster: a LocalCluster's scheduler runs inside the
driver's process, and its CPU time would be counted as the driver's. Per tree it reports:

- driver CPU: time.process_time() of this process (the client and its threads) around
  `train`, divided by the trees;
- scheduler CPU: the scheduler process's user + system seconds (psutil) around `train`;
- scheduler tasks: a SchedulerPlugin's count of tasks that moved to "processing" (every task
  the scheduler sent to a worker; actor calls go straight to the worker holding the actor
  and are not scheduler tasks, so the count of the steps' sums, stats["step_tasks"]: tasks or actor
  calls, is shown beside it);
- round trips: times the driver waited for the workers (stats["round_trips"]);
- bytes into the driver: the bytes of the arrays in the results the driver gathered
  (stats["driver_bytes"]; with steps="workers", the pickled tree and its steps that the
  first engine returns; not counted: message framing, pickled Python objects such as task
  metadata, and the scheduler's own traffic);
- wall time: of `train`, the set-up (bin edges, the partitions' state) included;
- runs: the repeats in the figures. A run whose partitions were held by fewer than W workers
  at the end (stats["partition_workers"]; it happened at W=2, the data having moved onto one
  worker after an earlier training on the same cluster) is left out and printed as such.

Each (workers, steps) is run `--repeats` times, in turn within a cluster; the median and the
range (min-max) are printed, as a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import psutil
from distributed import Client
from distributed.diagnostics.plugin import SchedulerPlugin

import boosters as bst
from boosters.bench.dask_data import spread_data
from boosters.dask import train


class CountProcessing(SchedulerPlugin):
    """Counts the tasks that the scheduler sends to a worker (transitions to "processing")."""

    name = "count-processing"

    def __init__(self):
        self.count = 0

    def transition(self, key, start, finish, *args, **kwargs):
        if finish == "processing":
            self.count += 1


def processing_count(dask_scheduler) -> int:
    return dask_scheduler.plugins[CountProcessing.name].count


class Cluster:
    """A `dask scheduler` process and `dask worker --nworkers W --nthreads 1` on this machine."""

    def __init__(self, n_workers: int):
        self.dir = tempfile.mkdtemp(prefix="dask_scaling_")
        self.file = os.path.join(self.dir, "scheduler.json")
        dask = os.path.join(os.path.dirname(sys.executable), "dask")
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir)
        self.scheduler = subprocess.Popen([dask, "scheduler", "--scheduler-file", self.file, "--port", "0",
                                           "--no-dashboard"], **quiet)
        self.workers = subprocess.Popen([dask, "worker", "--scheduler-file", self.file, "--nworkers", str(n_workers),
                                         "--nthreads", "1", "--no-dashboard", "--local-directory", self.dir], **quiet)
        self.n_workers = n_workers

    def __enter__(self):
        while not os.path.exists(self.file) or not os.path.getsize(self.file):
            time.sleep(0.1)
        time.sleep(0.2)
        with open(self.file) as f:
            self.address = json.load(f)["address"]
        return self

    def __exit__(self, *exc):
        for process in (self.workers, self.scheduler):
            process.terminate()
            process.wait(timeout=30)


def scheduler_cpu(process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def number(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000, help="in all, over the workers")
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--steps", nargs="+", choices=["workers", "tasks", "actors"],
                        default=["workers", "tasks", "actors"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    config = bst.GBDTConfig(n_estimators=args.trees, max_depth=args.depth, objective=bst.Objective.logistic())
    print(f"{args.rows} rows x {args.features} features in all, one equal partition per worker; logistic, "
          f"{args.trees} trees of depth {args.depth}; worker processes x 1 thread; "
          f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.2f}", flush=True)
    columns = ["driver CPU ms", "scheduler CPU ms", "scheduler tasks", "step tasks or actor calls", "round trips",
               "driver kB", "wall ms"]
    results = {}  # (workers, steps) -> column -> per-tree values over the repeats
    started = time.perf_counter()
    for n_workers in args.workers:
        with Cluster(n_workers) as cluster, Client(cluster.address) as client:
            client.wait_for_workers(n_workers, timeout=120)
            client.register_plugin(CountProcessing())
            scheduler = psutil.Process(cluster.scheduler.pid)
            X, y = spread_data(client, args.rows, args.features)
            train(client, X, y, config.replace(n_estimators=1))  # warm up imports on the workers
            for repeat in range(args.repeats):
                for steps in args.steps:
                    stats = {}
                    tasks_before = client.run_on_scheduler(processing_count)
                    cpu_before, sched_before, wall_before = time.process_time(), scheduler_cpu(scheduler), \
                        time.perf_counter()
                    model = train(client, X, y, config, stats=stats, steps=steps)
                    wall, cpu, sched = time.perf_counter() - wall_before, time.process_time() - cpu_before, \
                        scheduler_cpu(scheduler) - sched_before
                    tasks = client.run_on_scheduler(processing_count) - tasks_before
                    t = model.n_trees
                    print(f"W={n_workers} steps={steps} repeat {repeat}: {wall:.2f} s, driver CPU {cpu:.2f} s, "
                          f"scheduler tasks {tasks}, workers holding the partitions {stats['partition_workers']}",
                          flush=True)
                    row = results.setdefault((n_workers, steps), {c: [] for c in columns + ["left out"]})
                    if stats["partition_workers"] < n_workers:  # Dask moved partitions together: not W workers
                        row["left out"].append(stats["partition_workers"])
                        continue
                    for column, value in zip(columns, (cpu * 1e3, sched * 1e3, tasks, stats["step_tasks"],
                                                       stats["round_trips"], stats["driver_bytes"] / 1e3,
                                                       wall * 1e3)):
                        row[column].append(value / t)
    print(f"\nran {time.perf_counter() - started:.0f} s; load average at end {os.getloadavg()[0]:.2f}\n")
    print("| workers | steps | runs | " + " | ".join(f"{c} per tree" for c in columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    for (n_workers, steps), row in results.items():
        cells = [f"{len(row[columns[0]])} of {args.repeats}"]
        if not row[columns[0]]:
            print(f"| {n_workers} | {steps} | " + " | ".join(cells + ["-"] * len(columns)) + " |")
            continue
        for column in columns:
            values = row[column]
            median = statistics.median(values)
            cells.append(number(median) if max(values) == min(values) else
                         f"{number(median)} ({number(min(values))}-{number(max(values))})")
        print(f"| {n_workers} | {steps} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
