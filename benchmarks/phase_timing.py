"""covertype binary, 1 thread: Dataset, binning, boosting phases separately, best of 3."""
import sys, time
import numpy as np
import boosters as bst
from boosters.bench.datasets import make_covertype
from boosters.bench.benchmark import Settings, boosters_config
X, y = make_covertype(581_012, binary=True, seed=0)
cfg = boosters_config(Settings(task="binary"))
best = {}
for _ in range(3):
    t0 = time.perf_counter(); ds = bst.Dataset(X, y); t1 = time.perf_counter()
    ds.binned(cfg.max_bins, cfg.seed, cfg.enable_bundling, 1); t2 = time.perf_counter()
    m = bst.GBDTModel.train(ds, cfg, n_threads=1); t3 = time.perf_counter()
    for k, v in (("dataset", t1 - t0), ("binning", t2 - t1), ("train (bins cached)", t3 - t2)):
        best[k] = min(best.get(k, 1e9), v)
    timings = m.ensemble.kernel_timings
print(sys.prefix, {k: round(v, 3) for k, v in best.items()})
print({k: (round(s, 3), c) for k, (s, c) in sorted(timings.items())})
