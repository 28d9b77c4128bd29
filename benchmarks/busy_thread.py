"""Training time alone, beside a busy Python thread, and beside a busy process.

A busy thread never releases the GIL on its own: the interpreter takes it away every
switch interval, 5 ms. A training re-takes the GIL after each nogil block and waits for
the busy thread to be interrupted, up to one switch interval each time. Kernels called
one by one from Python paid that per call (50x slower), then about four times per tree
(2.1x f64, 2.3x i16 on this benchmark); now the boosting rounds grow several at a time in
one nogil block of up to 0.1 s (training/_rounds.pyx), and the rest is set-up and the
model's checks (about fifty re-takes: NumPy releases the GIL in most operations on
large arrays).

A busy process shares the CPU but not the GIL: on a 2-core VM (vCPUs that may share a
core, and a host shared with other work) it slows the training too. The difference
between the two ratios is what the GIL still costs.

    python benchmarks/busy_thread.py [--rows 200000] [--features 20] [--trees 40] [--mode auto]

Measured on the 2-core VM (~0.65 s alone), while a busy process cost 0.9-1.05x: 1.23x,
1.22x, 1.32x (f64) and 1.39x, 1.14x, 1.29x (i16) beside a busy thread, ~0.08 s of it the
trained forest's validation (GBDTModel.train: ~28 re-takes; 1.14-1.27x without it);
before the rounds grew without the GIL, 2.1x (f64) and 2.35x (i16) in the same
conditions. When other work loads the host, both ratios rise to ~2x (CPU contention).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time

import boosters as bst
from boosters.bench.datasets import make_friedman

BUSY = "[None for _ in iter(int, 1)]"  # pure Python, forever


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
    process = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.2)  # started
        beside_process = best_fit_seconds(dataset, config, args.repeats)
    finally:
        process.kill()
        process.wait()
    busy = threading.Thread(target=lambda: exec(BUSY), daemon=True)
    busy.start()
    beside_thread = best_fit_seconds(dataset, config, args.repeats)
    print(f"{args.rows} x {args.features}, {args.trees} trees leaf-wise (63 leaves), histogram_mode={args.mode}, "
          f"1 thread: alone {alone:.3f} s; beside a busy Python thread {beside_thread:.3f} s, "
          f"ratio {beside_thread / alone:.2f}x; beside a busy process {beside_process:.3f} s, "
          f"ratio {beside_process / alone:.2f}x")


if __name__ == "__main__":
    main()
