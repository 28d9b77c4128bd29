"""Covertype (binary), one thread: binning and training on the cached bins timed apart,
with the kernel timers, best of 3. Run it with each build's python, alternately, to tell
a change in one phase from the variance between processes."""

import sys
import time

import boosters as bst
from boosters.bench.benchmark import Settings, boosters_config
from boosters.bench.datasets import make_covertype


def main():
    X, y = make_covertype(581_012, binary=True, seed=0)
    config = boosters_config(Settings(task="binary"))
    best = {}
    for _ in range(3):
        dataset = bst.Dataset(X, y)
        start = time.perf_counter()
        dataset.binned(config.max_bins, config.seed, config.enable_bundling, 1)
        binned = time.perf_counter()
        model = bst.GBDTModel.train(dataset, config, n_threads=1)
        trained = time.perf_counter()
        for phase, seconds in (("binning", binned - start), ("training", trained - binned)):
            best[phase] = min(best.get(phase, float("inf")), seconds)
    print(sys.prefix, {phase: round(seconds, 3) for phase, seconds in best.items()})
    print({phase: (round(seconds, 3), calls) for phase, (seconds, calls) in sorted(model.ensemble.kernel_timings.items())})


if __name__ == "__main__":
    main()
