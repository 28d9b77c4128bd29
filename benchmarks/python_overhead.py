"""Python time per split of the tree grower: grow_rounds() time minus time spent in its
call into Cython (the boosting rounds: gradients, the growth loop, which runs every split
without the interpreter, leaf values, thresholds, margins), with the cost of the timing
wrapper itself calibrated out. What is left is the per-tree Python of TreeGrower
(copying the grown nodes into a Tree), spread over the trees' splits.

    python benchmarks/python_overhead.py [--rows 50000] [--features 10] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

from boosters.bench import benchmark
from boosters.bench.datasets import make_friedman
from boosters.training.growth import grower as grower_module

KERNEL_CALLS = {"rounds": ("grow_block",)}  # attribute of TreeGrower -> methods that enter Cython


class Timed:
    """Forwards attribute access; times the listed methods."""

    def __init__(self, target, methods, clock):
        self._target, self._methods, self._clock = target, methods, clock

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if name not in self._methods:
            return value
        clock = self._clock

        def timed(*args, **kwargs):
            args = [a._target if isinstance(a, Timed) else a for a in args]
            start = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                clock["kernel"] += time.perf_counter() - start
                clock["calls"] += 1
        return timed


def measure(rows: int, features: int, threads: int, rounds: int = 100) -> dict:
    X, y = make_friedman(rows, features, seed=0)
    settings = benchmark.Settings(task="regression", n_trees=rounds)
    clock = {"kernel": 0.0, "calls": 0, "grow": 0.0, "splits": 0}
    original_init, original_grow = grower_module.TreeGrower.__init__, grower_module.TreeGrower.grow_rounds

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        for attribute, methods in KERNEL_CALLS.items():
            setattr(self, attribute, Timed(getattr(self, attribute), methods, clock))

    def grow(self, *args, **kwargs):
        start = time.perf_counter()
        rounds = original_grow(self, *args, **kwargs)
        clock["grow"] += time.perf_counter() - start
        clock["splits"] += sum(int((tree.split_feature >= 0).sum()) for trees in rounds for tree in trees)
        return rounds

    grower_module.TreeGrower.__init__, grower_module.TreeGrower.grow_rounds = init, grow
    try:
        benchmark._fit_boosters(settings, X, y, threads, False)  # warm up
        for key in clock:
            clock[key] = 0
        start = time.perf_counter()
        benchmark._fit_boosters(settings, X, y, threads, False)
        total = time.perf_counter() - start
    finally:
        grower_module.TreeGrower.__init__, grower_module.TreeGrower.grow_rounds = original_init, original_grow
    # what one timed call costs beyond the call itself
    probe = Timed(type("Probe", (), {"f": staticmethod(lambda *a: None)})(), ("f",), {"kernel": 0.0, "calls": 0})
    n = 100_000
    start = time.perf_counter()
    for _ in range(n):
        probe.f(1, 2)
    wrapper = (time.perf_counter() - start) / n
    python = clock["grow"] - clock["kernel"] - wrapper * clock["calls"]
    return {"fit_s": total, "grow_s": clock["grow"], "kernel_s": clock["kernel"], "python_s": python,
            "splits": clock["splits"], "python_us_per_split": 1e6 * python / clock["splits"],
            "kernel_us_per_split": 1e6 * clock["kernel"] / clock["splits"]}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    r = measure(args.rows, args.features, args.threads)
    print(f"{args.rows} x {args.features}, {args.threads} thread(s): fit {r['fit_s']:.3f} s, grow {r['grow_s']:.3f} s "
          f"over {r['splits']} splits; per split: Python {r['python_us_per_split']:.1f} us, "
          f"Cython calls {r['kernel_us_per_split']:.1f} us ({100 * r['python_s'] / r['fit_s']:.0f}% of the fit in grower Python)")
