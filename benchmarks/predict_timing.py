"""Prediction time: 100k rows x 28 features, a 100-tree 31-leaf leaf-wise model, 1 and 2
threads, best of 7 calls (wall). Run it with each build's python for a before/after."""

import sys
import time

import numpy as np

import boosters as bst


def best_seconds(call, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100_000, 28))
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + 0.1 * rng.normal(size=len(X))
    config = bst.GBDTConfig(n_estimators=100, growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=31,
                            max_depth=None, learning_rate=0.1)
    model = bst.GBDTModel.train(bst.Dataset(X[:50_000], y[:50_000]), config, n_threads=2)
    for threads in (1, 2):
        seconds = best_seconds(lambda: model.predict(X, n_threads=threads))
        print(f"{sys.prefix}: predict 100k rows, {threads} thread(s): {seconds * 1000:.1f} ms")


if __name__ == "__main__":
    main()
