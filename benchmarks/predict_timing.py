"""predict on 100k rows x 28 features, 100 trees of 31 leaves, 1 and 2 threads; best of 7 (wall)."""
import sys, time
import numpy as np
import boosters as bst
rng = np.random.default_rng(0)
X = rng.normal(size=(100_000, 28)); y = X[:, 0] * 2 + np.sin(X[:, 1] * 3) + rng.normal(size=len(X)) * 0.1
cfg = bst.GBDTConfig(n_estimators=100, growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=31, max_depth=None, learning_rate=0.1)
model = bst.GBDTModel.train(bst.Dataset(X[:50_000], y[:50_000]), cfg, n_threads=2)
for t in (1, 2):
    best = min((lambda: (s := time.perf_counter(), model.predict(X, n_threads=t), time.perf_counter() - s)[2])() for _ in range(7))
    print(f"{sys.prefix}: predict 100k rows, {t} thread(s): {best * 1000:.1f} ms")
