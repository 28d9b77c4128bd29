"""Fit time of the log-link objectives (Poisson, gamma, Tweedie) against LightGBM with
matched settings: 500k rows x 20 features, 200 rounds of 31 leaves leaf-wise, learning rate
0.1, 255 value bins, 1 and 2 threads, best of `--repeats` fits; the held-out mean deviance
of both (scikit-learn's mean_*_deviance) beside the times."""

import argparse
import time

import lightgbm as lgb
import numpy as np
from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance, mean_tweedie_deviance

import boosters as bst

POWER = 1.5


def make_data(kind: str, n_rows: int, n_features: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    mu = np.exp(0.5 * X[:, 0] + 0.3 * np.sin(2 * X[:, 1]) + 0.2 * X[:, 2] * X[:, 3])
    if kind == "poisson":
        y = rng.poisson(mu).astype(float)
    elif kind == "gamma":
        y = rng.gamma(2.0, mu / 2.0)
    else:  # compound Poisson-gamma: N ~ Poisson(mu / 2) claims of mean 2
        counts = rng.poisson(mu / 2.0)
        y = np.zeros(n_rows)
        has = counts > 0
        y[has] = rng.gamma(2.0 * counts[has], 1.0)  # a sum of k Gamma(2, 1) is Gamma(2k, 1)
    return X, y


def deviance(kind, y, prediction):
    if kind == "poisson":
        return mean_poisson_deviance(y, prediction)
    if kind == "gamma":
        return mean_gamma_deviance(y, prediction)
    return mean_tweedie_deviance(y, prediction, power=POWER)


def best_fit(fit, repeats):
    best, model = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        model = fit()
        best = min(best, time.perf_counter() - start)
    return best, model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| objective | threads | boosters fit (s) | LightGBM fit (s) | boosters / LightGBM | boosters deviance | LightGBM deviance |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind in ("poisson", "gamma", "tweedie"):
        X, y = make_data(kind, args.rows + 100_000, args.features)
        X_train, y_train, X_test, y_test = X[:args.rows], y[:args.rows], X[args.rows:], y[args.rows:]
        objective = {"poisson": bst.Objective.poisson(), "gamma": bst.Objective.gamma(),
                     "tweedie": bst.Objective.tweedie(POWER)}[kind]
        config = bst.GBDTConfig(objective=objective, n_estimators=args.rounds, learning_rate=0.1,
                                growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=31, max_depth=None,
                                min_samples_leaf=20, min_child_weight=1e-3, l2=0.0, max_bins=256)
        params = dict(objective=kind, num_leaves=31, learning_rate=0.1, min_data_in_leaf=20,
                      min_sum_hessian_in_leaf=1e-3, lambda_l2=0.0, max_bin=255, verbose=-1)
        if kind == "tweedie":
            params["tweedie_variance_power"] = POWER
        for threads in args.threads:
            ours_s, ours = best_fit(lambda: bst.GBDTModel.train(bst.Dataset(X_train, y_train), config,
                                                                n_threads=threads), args.repeats)
            theirs_s, theirs = best_fit(lambda: lgb.train({**params, "num_threads": threads},
                                                          lgb.Dataset(X_train, y_train), args.rounds),
                                        args.repeats)
            print(f"| {kind} | {threads} | {ours_s:.2f} | {theirs_s:.2f} | {ours_s / theirs_s:.2f}x | "
                  f"{deviance(kind, y_test, ours.predict(X_test)):.5f} | "
                  f"{deviance(kind, y_test, theirs.predict(X_test)):.5f} |")


if __name__ == "__main__":
    main()
