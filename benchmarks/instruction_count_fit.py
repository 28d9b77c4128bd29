"""Instructions of one small fit, for before/after comparisons of the training path that
hold under any load (callgrind counts instructions, not seconds).

    OMP_NUM_THREADS=1 valgrind --tool=callgrind python benchmarks/instruction_count_fit.py none
    OMP_NUM_THREADS=1 valgrind --tool=callgrind python benchmarks/instruction_count_fit.py fit

The fit's count is the second total less the first (import and data): HIGGS-like 20k x 28,
20 trees, 31 leaves leaf-wise, float64 histograms, every row, one thread.
"""
import sys, numpy as np, boosters as bst
from boosters.bench.datasets import make_higgs
X, y = make_higgs(20000, seed=0)
if sys.argv[1] == "fit":
    cfg = bst.GBDTConfig(n_estimators=20, learning_rate=0.1, objective=bst.Objective.logistic(), growth_strategy="leafwise",
                         n_leaves=31, min_samples_leaf=20, min_child_weight=1e-3, subsample=1.0, max_bins=256, histogram_mode="f64")
    bst.GBDTModel.train(bst.Dataset(X, y), cfg, n_threads=1)
print(bst.__file__)
