"""Categorical features on real data: the UCI Adult census table (income > 50K), 8
categorical columns (2 to 42 levels) and 2 numeric ones, as a pandas frame.

boosters (category columns picked up by "auto"), LightGBM (pandas category columns) and
XGBoost (`enable_categorical=True`, hist) on the categories, and all three on the same
frame one-hot encoded (`pandas.get_dummies`). Test AUC and log loss on a seeded 25%
hold-out; fit time is the best of `--repeats` fits (Dataset / DMatrix construction
included), one process, libraries interleaved.

    python benchmarks/categorical_real.py --csv adult.csv [--threads 1 2] [--repeats 3]

The CSV: the Adult data with a header row naming the columns below (any copy of UCI's
adult.data with these columns; extra columns are ignored). Settings matched: leaf-wise,
31 leaves, learning rate 0.1, 200 trees, min 20 rows per leaf, l2 = 1, 255 value bins;
categorical parameters at LightGBM's defaults on boosters and LightGBM; XGBoost's
max_cat_to_onehot 4.
"""

from __future__ import annotations

import argparse
import os
import time

import lightgbm as lgb
import numpy as np
import pandas as pd
import xgboost as xgb

import boosters as bst
from boosters.bench.benchmark import score

CATEGORICAL = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
               "native-country"]
NUMERIC = ["age", "hours-per-week"]
TREES = 200


def load(path: str, seed: int = 0):
    df = pd.read_csv(path, skipinitialspace=True)
    y = (df["salary"].astype(str).str.strip().str.rstrip(".") == ">50K").to_numpy(np.float64)
    X = df[NUMERIC + CATEGORICAL].copy()
    for c in CATEGORICAL:
        X[c] = X[c].astype(str).str.strip().replace("?", np.nan).astype("category")
    test = np.random.default_rng(seed).random(len(X)) < 0.25
    return X[~test], y[~test], X[test], y[test]


def fit_boosters(X, y, Xt, threads):
    cfg = bst.GBDTConfig(n_estimators=TREES, learning_rate=0.1, objective=bst.Objective.logistic(),
                         growth_strategy="leafwise", max_depth=None, n_leaves=31, l2=1.0, min_samples_leaf=20,
                         min_child_weight=1e-3, max_bins=256)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=cfg, n_threads=threads)
    return lambda: model.predict(Xt, n_threads=threads)


def fit_lightgbm(X, y, Xt, threads):
    params = dict(objective="binary", learning_rate=0.1, num_leaves=31, lambda_l2=1.0, min_data_in_leaf=20,
                  min_sum_hessian_in_leaf=1e-3, max_bin=255, num_threads=threads, verbose=-1,
                  max_cat_to_onehot=4, cat_smooth=10.0, cat_l2=10.0, max_cat_threshold=32, min_data_per_group=100)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=TREES)
    return lambda: booster.predict(Xt, num_threads=threads)


def fit_xgboost(X, y, Xt, threads):
    params = dict(objective="binary:logistic", tree_method="hist", eta=0.1, grow_policy="lossguide", max_leaves=31,
                  max_depth=0, reg_lambda=1.0, max_bin=255, min_child_weight=1e-3, max_cat_to_onehot=4,
                  nthread=threads)
    booster = xgb.train(params, xgb.DMatrix(X, y, enable_categorical=True, nthread=threads), num_boost_round=TREES)
    return lambda: booster.predict(xgb.DMatrix(Xt, enable_categorical=True, nthread=threads))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y, Xt, yt = load(args.csv)
    dummies = pd.get_dummies(pd.concat([X, Xt]), columns=CATEGORICAL, dtype=np.float32)
    O, Ot = dummies.iloc[:len(X)], dummies.iloc[len(X):]
    print(f"Adult: {len(X)} training rows, {len(Xt)} test rows; {len(CATEGORICAL)} categorical columns "
          f"({', '.join(str(X[c].cat.categories.size) for c in CATEGORICAL)} levels) + {len(NUMERIC)} numeric; "
          f"one-hot: {O.shape[1]} columns; {os.cpu_count()} cores")
    runs = [("boosters", "categorical", fit_boosters, X, Xt), ("LightGBM", "categorical", fit_lightgbm, X, Xt),
            ("XGBoost", "categorical", fit_xgboost, X, Xt), ("boosters", "one-hot", fit_boosters, O, Ot),
            ("LightGBM", "one-hot", fit_lightgbm, O, Ot), ("XGBoost", "one-hot", fit_xgboost, O, Ot)]
    print("| library | input | threads | fit time (s) | test AUC | test log loss |")
    print("|---|---|---:|---:|---:|---:|")
    for threads in args.threads:
        best = {}
        for _ in range(args.repeats):
            for library, variant, fit, train, test in runs:
                start = time.perf_counter()
                predict = fit(train, y, test, threads)
                seconds = time.perf_counter() - start
                if (library, variant) not in best or seconds < best[library, variant][0]:
                    p = np.clip(predict(), 1e-15, 1 - 1e-15)
                    logloss = float(-np.mean(yt * np.log(p) + (1 - yt) * np.log(1 - p)))
                    best[library, variant] = (seconds, score("binary", yt, p)[1], logloss)
        for (library, variant), (seconds, auc, logloss) in best.items():
            print(f"| {library} | {variant} | {threads} | {seconds:.3f} | {auc:.5f} | {logloss:.5f} |")


if __name__ == "__main__":
    main()
