"""Column sampling and constraints against XGBoost and LightGBM at matched settings
(leaf-wise, 31 leaves, lr 0.1, 255 value bins, lambda 0, min_child_weight 1e-3): fit
time (fastest of the repeats) and test RMSE on Friedman #1 data, where y rises in x3
and x4 (monotone case) and x0 interacts only with x1 (interaction case).

    python benchmarks/constraints.py [--rows 50000] [--trees 100] [--threads 1 2] [--repeats 3]

Cases: no constraint; colsample_bytree=0.5 (LightGBM feature_fraction);
colsample_bynode=0.5 (LightGBM feature_fraction_bynode); monotone +1 on x3 and x4
(the "basic" method in all three); interaction groups [[0, 1], [2, 3, 4], [5..9]].
Column sampling draws differ between the libraries: compare quality, not trees.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from boosters.bench.datasets import make_friedman, train_test_split

GROUPS = [[0, 1], [2, 3, 4], [5, 6, 7, 8, 9]]
CASES = {  # name: (boosters, xgboost, lightgbm) parameters
    "none": ({}, {}, {}),
    "colsample_bytree=0.5": (dict(colsample_bytree=0.5), dict(colsample_bytree=0.5), dict(feature_fraction=0.5)),
    "colsample_bynode=0.5": (dict(colsample_bynode=0.5), dict(colsample_bynode=0.5),
                             dict(feature_fraction_bynode=0.5)),
    "monotone x3, x4": (dict(monotone_constraints={3: 1, 4: 1}), dict(monotone_constraints="(0,0,0,1,1,0,0,0,0,0)"),
                        dict(monotone_constraints=[0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
                             monotone_constraints_method="basic")),
    "interactions": (dict(interaction_constraints=GROUPS), dict(interaction_constraints=str(GROUPS)),
                     dict(interaction_constraints=GROUPS)),
}


def fit_boosters(params, X, y, threads, trees):
    import boosters as bst

    config = bst.GBDTConfig(n_estimators=trees, learning_rate=0.1, growth_strategy="leafwise", n_leaves=31,
                            max_depth=None, l2=0.0, min_child_weight=1e-3, min_samples_leaf=20, max_bins=256,
                            cache_size=31, seed=0, **params)
    model = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=threads)
    return lambda Xt: model.predict(Xt, n_threads=threads)


def fit_xgboost(params, X, y, threads, trees):
    import xgboost as xgb

    booster = xgb.train(dict(objective="reg:squarederror", tree_method="hist", grow_policy="lossguide",
                             max_leaves=31, max_depth=0, eta=0.1, max_bin=255, min_child_weight=1e-3,
                             reg_lambda=0.0, nthread=threads, seed=0, **params),
                        xgb.QuantileDMatrix(X, y, max_bin=255, nthread=threads), num_boost_round=trees)
    return lambda Xt: booster.predict(xgb.DMatrix(Xt, nthread=threads))


def fit_lightgbm(params, X, y, threads, trees):
    import lightgbm as lgb

    booster = lgb.train(dict(objective="regression", num_leaves=31, learning_rate=0.1, max_bin=255,
                             min_data_in_leaf=20, lambda_l2=0.0, min_sum_hessian_in_leaf=1e-3,
                             num_threads=threads, seed=0, verbose=-1, **params),
                        lgb.Dataset(X, y), num_boost_round=trees)
    return lambda Xt: booster.predict(Xt, num_threads=threads)


LIBRARIES = {"boosters": fit_boosters, "xgboost": fit_xgboost, "lightgbm": fit_lightgbm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = make_friedman(args.rows, 10, seed=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, 0.2, seed=0)
    print(f"Friedman #1, {len(X_train)} training rows, {args.trees} trees; fit seconds / test RMSE\n")
    print("| case | threads | " + " | ".join(LIBRARIES) + " |")
    print("|---|---:|" + "---:|" * len(LIBRARIES))
    for case, per_library in CASES.items():
        for threads in args.threads:
            cells = []
            for (name, fit), params in zip(LIBRARIES.items(), per_library):
                best, predict = float("inf"), None
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    predict = fit(params, X_train, y_train, threads, args.trees)
                    best = min(best, time.perf_counter() - start)
                rmse = float(np.sqrt(np.mean((predict(X_test) - y_test) ** 2)))
                cells.append(f"{best:.2f} s / {rmse:.4f}")
            print(f"| {case} | {threads} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
