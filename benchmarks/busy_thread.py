"""Training time alone and beside a busy Python thread (one that never releases the GIL
on its own: the interpreter takes it away every switch interval, 5 ms).

A kernel call that re-takes the GIL when it returns waits for the busy thread to be
interrupted, up to one switch interval: a growth loop that released the GIL around each
kernel call paid that per call. A tree that grows in one nogil block pays it a few times
per tree (the round's gradients, leaf values and margin update still run with the GIL).

    python benchmarks/busy_thread.py [--rows 200000] [--features 20] [--trees 40] [--mode auto]
"""

from __future__ import annotations

import argparse
import threading
import time

import boosters as bst
from boosters.bench.datasets import make_friedman


def best_fit_seconds(dataset, config, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        bst.GBDTModel.train(dataset, config, n_threads=1)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--trees", type=int, default=40)
    parser.add_argument("--mode", default="auto", help="histogram_mode: auto, f64, i16 or i8")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = make_friedman(args.rows, args.features, seed=0)
    dataset = bst.Dataset(X, y)
    config = bst.GBDTConfig(n_estimators=args.trees, growth_strategy="leafwise", n_leaves=63, max_depth=None,
                            histogram_mode=args.mode)
    bst.GBDTModel.train(dataset, config, n_threads=1)  # warm up: binning cached, pages touched
    alone = best_fit_seconds(dataset, config, args.repeats)
    busy = threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True)
    busy.start()
    beside = best_fit_seconds(dataset, config, args.repeats)
    print(f"{args.rows} x {args.features}, {args.trees} trees leaf-wise (63 leaves), histogram_mode={args.mode}, "
          f"1 thread: alone {alone:.3f} s, beside a busy Python thread {beside:.3f} s, ratio {beside / alone:.2f}x")


if __name__ == "__main__":
    main()
