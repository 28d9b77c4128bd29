"""Linear leaves: fit and prediction time against constant leaves (boosters) and
LightGBM's linear_tree, 1 thread, best of 3 (wall). 20k training rows of the piecewise-
linear data of docs/guide/linear_leaves.md, 100 rounds of 31-leaf leaf-wise trees at 0.1;
prediction of 100k rows."""

import time

import lightgbm as lgb
import numpy as np

import boosters as bst


def best_seconds(call, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 8))
    y = (3 * np.maximum(X[:, 0] - 0.37, 0) - 1.5 * np.maximum(0.5 - X[:, 1], 0)
         + X[:, 0] * np.sign(X[:, 2] - 0.2) + 0.5 * X[:, 2] + 0.1 * rng.normal(size=n))
    return X, y


def main():
    X, y = data(20_000, 0)
    X_test, y_test = data(100_000, 1)
    for linear in (False, True):
        config = bst.GBDTConfig(n_estimators=100, learning_rate=0.1, growth_strategy="leafwise", n_leaves=31,
                                linear_leaves=linear)
        fit = best_seconds(lambda: bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=1))
        model = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=1)
        predict = best_seconds(lambda: model.predict(X_test, n_threads=1))
        rmse = np.sqrt(np.mean((model.predict(X_test) - y_test) ** 2))
        print(f"boosters linear_leaves={linear}: fit {fit:.2f} s, predict {predict * 1000:.0f} ms, "
              f"test RMSE {rmse:.4f}")
        params = dict(n_estimators=100, learning_rate=0.1, num_leaves=31, linear_tree=linear, n_jobs=1, verbose=-1)
        fit = best_seconds(lambda: lgb.LGBMRegressor(**params).fit(X, y))
        theirs = lgb.LGBMRegressor(**params).fit(X, y)
        predict = best_seconds(lambda: theirs.predict(X_test))
        rmse = np.sqrt(np.mean((theirs.predict(X_test) - y_test) ** 2))
        print(f"LightGBM linear_tree={linear}: fit {fit:.2f} s, predict {predict * 1000:.0f} ms, "
              f"test RMSE {rmse:.4f}")


if __name__ == "__main__":
    main()
