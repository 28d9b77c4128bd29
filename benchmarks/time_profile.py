"""Where the time of one boosters training goes, on the comparison tasks.

    python benchmarks/time_profile.py --task small --threads 1 2

Per phase: binning (edges, value -> bin), gradients, tree growth split into its kernels
(the growth loop times each kernel call: partition, histogram build, subtraction, split
search), margin updates, and the rest. A warm-up fit runs first (first-touch page
faults and OpenMP thread start-up are not profiled).
"""

from __future__ import annotations

import argparse
import collections
import time

from boosters import Dataset
from boosters.bench import benchmark
from boosters.bench.compare import TASKS
from boosters.data import binning
from boosters.objectives import classification, regression
from boosters.training.growth import grower
from boosters.training.trainer import GBDTTrainer

WRAPPED = [  # (owner, method, label)
    (binning.BinMapper, "fit", "bin edges"),
    (binning.BinMapper, "transform", "value -> bin"),
    (grower.TreeGrower, "grow", "tree growth"),
    (grower.TreeGrower, "update_predictions", "margin update"),
] + [(cls, "gradients", "gradients") for cls in (regression.Squared, classification.Logistic, classification.Softmax)]


def profile(task: str, threads: int, rows: int | None = None) -> tuple[float, dict, dict]:
    generate, default_rows, settings = TASKS[task]
    X, y = generate(rows or default_rows, 0)
    config = benchmark.boosters_config(settings)
    seconds = collections.Counter()
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in WRAPPED]

    def timed(function, label):
        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[label] += time.perf_counter() - start
        return call

    try:
        for (owner, name, label), (_, _, function) in zip(WRAPPED, originals):
            setattr(owner, name, timed(function, label))
        GBDTTrainer(config, threads).train(Dataset(X, y))  # warm-up
        seconds.clear()
        start = time.perf_counter()
        result = GBDTTrainer(config, threads).train(Dataset(X, y))
        total = time.perf_counter() - start
    finally:
        for owner, name, function in originals:
            setattr(owner, name, function)
    return total, dict(seconds), result.kernel_timings


def report(task: str, threads: int, rows: int | None = None) -> str:
    total, phases, kernels = profile(task, threads, rows)
    lines = [f"{task}, {threads} thread(s): {total:.3f} s", "| phase | seconds | share | kernel calls |",
             "|---|---:|---:|---:|"]
    for label, sec in sorted(phases.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {label} | {sec:.3f} | {100 * sec / total:.0f}% | |")
        if label == "tree growth":
            for name, (ksec, calls) in sorted(kernels.items(), key=lambda kv: -kv[1][0]):
                lines.append(f"| &nbsp;&nbsp;{name} | {ksec:.3f} | {100 * ksec / total:.0f}% | {calls} |")
            rest = sec - sum(k for k, _ in kernels.values())
            lines.append(f"| &nbsp;&nbsp;growth loop and per-tree Python | {rest:.3f} | {100 * rest / total:.0f}% | |")
    other = total - sum(phases.values())
    lines.append(f"| rest of training (set-up, base score, Python loop) | {other:.3f} | {100 * other / total:.0f}% | |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=sorted(TASKS), default="small")
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--rows", type=int, default=None)
    args = parser.parse_args()
    for n_threads in args.threads:
        print(report(args.task, n_threads, args.rows) + "\n")
