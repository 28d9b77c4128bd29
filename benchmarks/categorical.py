"""Categorical features: test metric and fit time of boosters, LightGBM
(`categorical_feature`) and XGBoost (`enable_categorical=True`, hist), and of boosters and
LightGBM on the same data one-hot encoded.

Synthetic regression data: categorical columns of 10, 100, 1000 and 5000 levels (codes of
Zipf-like frequencies, each level with its own effect on the target) and numeric columns.
The one-hot variant encodes the columns of at most `--onehot-max-levels` levels (dense
float32 0/1 columns); wider ones stay as integer codes used as numbers (dense one-hot of
5000 levels would take rows x 5000 x 4 bytes), which the output says.

    python benchmarks/categorical.py [--rows 20000] [--trees 100] [--threads 0] [--onehot-max-levels 1000]

Settings matched across libraries: leaf-wise, 31 leaves, learning rate 0.1, l2 = 1,
min_samples_leaf = 20, 256 bins (LightGBM max_bin=255), categorical parameters at
LightGBM's defaults (max_cat_to_onehot 4, cat_smooth 10, cat_l2 10, max_cat_threshold
32, min_data_per_group 100) on both boosters and LightGBM; XGBoost's max_cat_to_onehot 4.
"""

from __future__ import annotations

import argparse
import os
import time

import lightgbm as lgb
import numpy as np
import xgboost as xgb

import boosters as bst
from boosters.bench.datasets import CATEGORICAL_LEVELS, make_categorical

LEVELS = CATEGORICAL_LEVELS
N_NUMERIC = 4


def one_hot(X: np.ndarray, max_levels: int) -> np.ndarray:
    """Columns of at most max_levels levels as 0/1 columns (NaN: all zeros); wider ones
    and the numeric columns as they are."""
    parts = []
    for j, k in enumerate(LEVELS):
        if k <= max_levels:
            codes = X[:, j]
            block = np.zeros((len(X), k), dtype=np.float32)
            ok = ~np.isnan(codes)
            block[np.flatnonzero(ok), codes[ok].astype(int)] = 1.0
            parts.append(block)
        else:
            parts.append(X[:, j:j + 1].astype(np.float32))
    parts.append(X[:, len(LEVELS):].astype(np.float32))
    return np.hstack(parts)


def rmse(a, b) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)))


def fit_boosters(X, y, Xt, trees, threads, categorical):
    cfg = bst.GBDTConfig(n_estimators=trees, learning_rate=0.1, growth_strategy="leafwise", max_depth=None,
                         n_leaves=31, l2=1.0, min_samples_leaf=20, min_child_weight=1e-3, max_bins=256)
    start = time.perf_counter()
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=categorical), config=cfg, n_threads=threads)
    return time.perf_counter() - start, model.predict(Xt, n_threads=threads)


def fit_lightgbm(X, y, Xt, trees, threads, categorical):
    params = dict(objective="regression", learning_rate=0.1, num_leaves=31, lambda_l2=1.0, min_data_in_leaf=20,
                  min_sum_hessian_in_leaf=1e-3, max_bin=255, num_threads=threads or os.cpu_count(), verbose=-1,
                  max_cat_to_onehot=4, cat_smooth=10.0, cat_l2=10.0, max_cat_threshold=32, min_data_per_group=100)
    start = time.perf_counter()
    booster = lgb.train(params, lgb.Dataset(X, y, categorical_feature=categorical or "auto"), num_boost_round=trees)
    return time.perf_counter() - start, booster.predict(Xt)


def fit_xgboost(X, y, Xt, trees, threads):
    types = ["c"] * len(LEVELS) + ["q"] * N_NUMERIC
    params = dict(objective="reg:squarederror", tree_method="hist", eta=0.1, grow_policy="lossguide", max_leaves=31,
                  max_depth=0, reg_lambda=1.0, max_bin=256, max_cat_to_onehot=4, nthread=threads or os.cpu_count())
    start = time.perf_counter()
    train = xgb.DMatrix(X, y, feature_types=types, enable_categorical=True)
    booster = xgb.train(params, train, num_boost_round=trees)
    seconds = time.perf_counter() - start
    return seconds, booster.predict(xgb.DMatrix(Xt, feature_types=types, enable_categorical=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000, help="training rows (a quarter more for the test)")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--onehot-max-levels", type=int, default=1000)
    args = parser.parse_args()
    X, y = make_categorical(args.rows + args.rows // 4, LEVELS, N_NUMERIC)
    X, Xt, y, yt = X[:args.rows], X[args.rows:], y[:args.rows], y[args.rows:]
    categorical = list(range(len(LEVELS)))
    wide = [k for k in LEVELS if k > args.onehot_max_levels]
    O, Ot = one_hot(X, args.onehot_max_levels), one_hot(Xt, args.onehot_max_levels)
    print(f"{args.rows} training rows, {len(yt)} test rows; categorical columns of {LEVELS} levels + "
          f"{N_NUMERIC} numeric; one-hot: {O.shape[1]} columns" + (f" (levels {wide} kept as codes)" if wide else ""))
    runs = [
        ("boosters", "categorical", lambda: fit_boosters(X, y, Xt, args.trees, args.threads, categorical)),
        ("LightGBM", "categorical", lambda: fit_lightgbm(X, y, Xt, args.trees, args.threads, categorical)),
        ("XGBoost", "categorical", lambda: fit_xgboost(X, y, Xt, args.trees, args.threads)),
        ("boosters", "one-hot", lambda: fit_boosters(O, y, Ot, args.trees, args.threads, [])),
        ("LightGBM", "one-hot", lambda: fit_lightgbm(O, y, Ot, args.trees, args.threads, [])),
    ]
    print(f"{'library':<10} {'input':<12} {'fit s':>8} {'test RMSE':>10}")
    for library, variant, run in runs:
        seconds, predicted = run()
        print(f"{library:<10} {variant:<12} {seconds:>8.2f} {rmse(predicted, yt):>10.4f}")


if __name__ == "__main__":
    main()
