"""Trainings that share the cores: K fits of T threads each at once on C cores, against
the same K fits one after another (the issue's goal: at once takes at most as long).

    python benchmarks/shared_cores.py [--rows 100000] [--trees 100] [--threads 2]
        [--concurrent 2 4] [--libraries boosters lightgbm xgboost] [--repeats 3]
        [--python /path/to/other/venv/bin/python ...]

Every fit runs in its own process (as GridSearchCV's workers, Dask workers on one node,
or pods): each makes its data (HIGGS-like, `boosters.bench.datasets.make_higgs`) and
imports its library, says it is ready, and waits; the parent starts all K fits at once
and takes the time from the first start to the last end ("at once"), then runs the
same K fits one at a time and adds their times ("in turn"). The ratio at once / in turn
is the figure: 1 means sharing the cores costs nothing over taking turns, K / (C / T)
or more is a collapse (the fits slow each other beyond the cores they share). The load
is made by the benchmark itself, so nothing else needs to run; other work on the
machine adds to it (its load average is printed before each configuration).

The library "boosters-fixed-team" is boosters with its team never shrunk for the load
(boosters/_lib/load.py), as before it followed the load: the same build, A/B in one run.
`--python` adds other interpreters' boosters (a `before` build's venv, say) as
libraries named by their path, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
spec = json.loads(sys.argv[1])
from boosters.bench import benchmark, datasets
if spec["fixed_team"]:  # boosters as before its team followed the load: all threads, never judged taken
    from boosters._lib import load
    load.WAIT_TAKEN, load.free_cpus = float("inf"), lambda: None
X, y = datasets.make_higgs(spec["rows"], seed=spec["seed"])
settings = benchmark.Settings(task="binary", n_trees=spec["trees"])
for module in benchmark._MODULES[spec["library"]]:
    __import__(module)
print("READY", flush=True)
sys.stdin.readline()
start = time.time()
benchmark._FITTERS[spec["library"]](settings, X, y, spec["threads"], False)
print("JSON " + json.dumps({"start": start, "end": time.time()}), flush=True)
"""


def start_fits(python: str, library: str, threads: int, k: int, rows: int, trees: int) -> list:
    """k child processes, each ready to fit (data made, library imported)."""
    procs = []
    for i in range(k):
        fixed = library == "boosters-fixed-team"
        spec = json.dumps({"library": "boosters" if fixed else library, "fixed_team": fixed, "threads": threads,
                           "rows": rows, "trees": trees, "seed": i})
        # outside any source tree: `-c` would import ./boosters (no compiled kernels) first
        procs.append(subprocess.Popen([python, "-c", CHILD, spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, cwd=tempfile.gettempdir()))
    for p in procs:
        line = "?"
        while line and line.strip() != "READY":  # an editable install may log its rebuild first
            line = p.stdout.readline()
        if not line:
            raise RuntimeError(f"a {library} fit did not start (exit {p.wait()})")
    return procs


def finish(procs: list) -> list[dict]:
    results = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"a fit failed (exit {p.returncode})")
        results.append(json.loads([ln for ln in out.splitlines() if ln.startswith("JSON ")][-1][5:]))
    return results


def at_once(python, library, threads, k, rows, trees) -> float:
    procs = start_fits(python, library, threads, k, rows, trees)
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    times = finish(procs)
    return max(t["end"] for t in times) - min(t["start"] for t in times)


def in_turn(python, library, threads, k, rows, trees) -> float:
    total = 0.0
    for _ in range(k):
        (p,) = start_fits(python, library, threads, 1, rows, trees)
        p.stdin.write("go\n")
        p.stdin.flush()
        (t,) = finish([p])
        total += t["end"] - t["start"]
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--threads", type=int, nargs="+", default=[2])
    parser.add_argument("--concurrent", type=int, nargs="+", default=None,
                        help="K values (default: K x T = 2C and 4C)")
    parser.add_argument("--libraries", nargs="+", default=["boosters", "lightgbm", "xgboost"])
    parser.add_argument("--python", nargs="*", default=[], help="other interpreters' boosters, measured too")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    runs = [(sys.executable, lib, lib) for lib in args.libraries]
    runs += [(py, "boosters", f"boosters@{py}") for py in args.python]
    rows = []
    for threads in args.threads:
        ks = args.concurrent or sorted({max(1, 2 * cores // threads), max(1, 4 * cores // threads)})
        for k in ks:
            print(f"\n{k} fits x {threads} threads on {cores} cores ({k * threads / cores:g}x the cores), "
                  f"{args.rows} rows, {args.trees} trees; load average {os.getloadavg()[0]:.1f}", flush=True)
            for repeat in range(args.repeats):
                for python, library, label in runs:  # interleaved: machine noise hits all alike
                    together = at_once(python, library, threads, k, args.rows, args.trees)
                    apart = in_turn(python, library, threads, k, args.rows, args.trees)
                    rows.append({"label": label, "threads": threads, "k": k, "at_once": together,
                                 "in_turn": apart, "ratio": together / apart})
                    print(f"  {label:<40} at once {together:7.2f} s   in turn {apart:7.2f} s   "
                          f"ratio {together / apart:5.2f}", flush=True)
    print("\nmedian ratio (at once / in turn) per library, threads, K:")
    keys = sorted({(r["label"], r["threads"], r["k"]) for r in rows}, key=lambda t: (t[1], t[2], t[0]))
    for label, threads, k in keys:
        ratios = sorted(r["ratio"] for r in rows if (r["label"], r["threads"], r["k"]) == (label, threads, k))
        print(f"  {label:<40} T={threads} K={k}: {ratios[len(ratios) // 2]:5.2f}  (all: "
              + ", ".join(f"{x:.2f}" for x in ratios) + ")")
    print("JSON " + json.dumps(rows))


if __name__ == "__main__":
    main()
