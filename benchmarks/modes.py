"""boosters' histogram settings compared on the comparison tasks: f64 / i16 and software
prefetch on / off, every fit in a fresh process, settings interleaved across repeats
(this VM drifts), fastest of the repeats kept.

    python benchmarks/modes.py [--tasks small covertype higgs] [--threads 1 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile

import numpy as np

from boosters.bench.compare import TASKS, TEST_ROWS, _run_child

SETTINGS = [("f64", True), ("f64", False), ("i16", True), ("i16", False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", nargs="+", default=["small", "covertype", "higgs"])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| task | threads | " + " | ".join(f"{m}, prefetch {'on' if p else 'off'}" for m, p in SETTINGS) + " |")
    print("|---|---:|" + "---:|" * len(SETTINGS))
    for task in args.tasks:
        generate, n_train, base = TASKS[task]
        X, y = generate(n_train + TEST_ROWS, 0)
        with tempfile.TemporaryDirectory() as data_dir:
            for name, array in (("Xtr", X[:n_train]), ("ytr", y[:n_train]), ("Xte", X[n_train:]), ("yte", y[n_train:])):
                np.save(os.path.join(data_dir, name + ".npy"), np.ascontiguousarray(array))
            for threads in args.threads:
                best: dict = {}
                for _ in range(args.repeats):
                    for mode, prefetch in SETTINGS:
                        settings = dataclasses.replace(base, histogram_mode=mode, prefetch=prefetch)
                        r = _run_child("boosters", threads, settings, data_dir)
                        key = (mode, prefetch)
                        if key not in best or r.fit_seconds < best[key].fit_seconds:
                            best[key] = r
                cells = [f"{best[k].fit_seconds:.3f} s ({best[k].metric_name} {best[k].metric:.5f})" for k in SETTINGS]
                print(f"| {task} | {threads} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
