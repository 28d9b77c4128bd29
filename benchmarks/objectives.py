"""Fit time of each objective against LightGBM (XGBoost where LightGBM has no equivalent)
with matched settings, and the held-out metric of both.

Every case: `--rows` training rows x 20 features of the kind the objective is for (counts
for Poisson, skewed positive targets for gamma/Tweedie, heavy-tailed noise for L1/Huber/
quantiles, probabilities for cross-entropy, classes for one-vs-rest, ...), 100k held-out
rows, `--rounds` rounds of 31 leaves leaf-wise, learning rate 0.1, 255 value bins,
min_data_in_leaf 20, min_sum_hessian_in_leaf 1e-3, no L2; 1 and 2 threads, best of
`--repeats` fits. Where one boosters model stands for several LightGBM ones (several
quantiles, several targets), the LightGBM time is the sum of their fits.
"""

import argparse
import time
from dataclasses import dataclass, field
from typing import Callable

import lightgbm as lgb
import numpy as np
import xgboost as xgb
from sklearn import metrics

import boosters as bst

POWER = 1.5
QUANTILES = [0.1, 0.5, 0.9]
N_CLASSES = 5
N_TARGETS = 3


def signal(X):
    return 0.5 * X[:, 0] + 0.3 * np.sin(2 * X[:, 1]) + 0.2 * X[:, 2] * X[:, 3]


def make_data(kind: str, n_rows: int, n_features: int, rng):
    X = rng.normal(size=(n_rows, n_features))
    f = signal(X)
    mu = np.exp(f)
    if kind == "poisson":
        return X, rng.poisson(mu).astype(float)
    if kind == "gamma":
        return X, rng.gamma(2.0, mu / 2.0)
    if kind == "tweedie":  # compound Poisson-gamma: N ~ Poisson(mu / 2) claims of mean 2
        counts = rng.poisson(mu / 2.0)
        y = np.zeros(n_rows)
        has = counts > 0
        y[has] = rng.gamma(2.0 * counts[has], 1.0)  # a sum of k Gamma(2, 1) is Gamma(2k, 1)
        return X, y
    if kind == "heavy_tail":  # Student-t noise with 2 degrees of freedom: no variance
        return X, 3 * f + rng.standard_t(2.0, n_rows)
    if kind == "gaussian":
        return X, 3 * f + rng.normal(size=n_rows)
    if kind.startswith("piecewise_linear"):  # linear within regions: what linear leaves fit
        # the kink at 0 or 0.3: LightGBM always puts a bin edge at 0, which finds the first exactly
        kink = 0.3 if kind.endswith("shifted") else 0.0
        return X, np.where(X[:, 0] > kink, 2 * X[:, 1] - X[:, 2], -X[:, 1] + 0.5 * X[:, 3]) + 0.1 * rng.normal(size=n_rows)
    if kind == "probability":  # soft labels: the probability itself
        return X, 1.0 / (1.0 + np.exp(-3 * f))
    if kind == "binary":
        return X, (rng.random(n_rows) < 1.0 / (1.0 + np.exp(-3 * f))).astype(float)
    if kind == "classes":
        scores = np.stack([3 * signal(np.roll(X, c, axis=1)) for c in range(N_CLASSES)], axis=1)
        return X, np.argmax(scores + rng.gumbel(size=scores.shape), axis=1).astype(float)
    if kind == "targets":
        return X, np.stack([3 * signal(np.roll(X, t, axis=1)) + rng.normal(size=n_rows)
                            for t in range(N_TARGETS)], axis=1)
    raise ValueError(kind)


def mean_pinball(y, predictions, alphas):
    predictions = predictions.reshape(len(y), len(alphas))
    return float(np.mean([metrics.mean_pinball_loss(y, predictions[:, j], alpha=a) for j, a in enumerate(alphas)]))


def multi_rmse(y, predictions):
    return float(np.mean(np.sqrt(np.mean((y - predictions.reshape(y.shape)) ** 2, axis=0))))


def accuracy(y, probabilities):
    return metrics.accuracy_score(y, np.argmax(probabilities, axis=1))


@dataclass
class Case:
    name: str
    data: str
    objective: Callable[[], "bst.Objective"]     # boosters' (made when run: helpers add objectives)
    reference: list                              # one params dict per reference model
    score: Callable                              # (y_test, predictions) -> the held-out metric
    score_name: str
    config: dict = field(default_factory=dict)   # more boosters settings
    library: str = "lightgbm"
    label_column: Callable = None                # reference model j's labels from y


CASES = [
    Case("squared", "gaussian", lambda: bst.Objective.squared(), [{"objective": "regression"}],
         lambda y, p: metrics.root_mean_squared_error(y, p), "RMSE"),
    Case("absolute", "heavy_tail", lambda: bst.Objective.absolute(), [{"objective": "l1"}],
         metrics.mean_absolute_error, "MAE"),
    Case("huber", "heavy_tail", lambda: bst.Objective.huber(1.0), [{"objective": "huber", "alpha": 1.0}],
         metrics.mean_absolute_error, "MAE"),
    Case("pinball(0.9)", "heavy_tail", lambda: bst.Objective.pinball(0.9), [{"objective": "quantile", "alpha": 0.9}],
         lambda y, p: mean_pinball(y, p, [0.9]), "pinball loss"),
    Case("pinball([0.1, 0.5, 0.9])", "heavy_tail", lambda: bst.Objective.pinball(QUANTILES),
         [{"objective": "quantile", "alpha": a} for a in QUANTILES],
         lambda y, p: mean_pinball(y, p, QUANTILES), "mean pinball loss"),
    Case("poisson", "poisson", lambda: bst.Objective.poisson(), [{"objective": "poisson"}],
         metrics.mean_poisson_deviance, "deviance"),
    Case("gamma", "gamma", lambda: bst.Objective.gamma(), [{"objective": "gamma"}],
         metrics.mean_gamma_deviance, "deviance"),
    Case("tweedie", "tweedie", lambda: bst.Objective.tweedie(POWER),
         [{"objective": "tweedie", "tweedie_variance_power": POWER}],
         lambda y, p: metrics.mean_tweedie_deviance(y, p, power=POWER), "deviance"),
    Case("logistic", "binary", lambda: bst.Objective.logistic(), [{"objective": "binary"}],
         metrics.log_loss, "log loss"),
    Case("cross-entropy", "probability", lambda: bst.Objective.logistic(), [{"objective": "cross_entropy"}],
         lambda y, p: metrics.log_loss((y > 0.5).astype(float), p), "log loss vs y > 0.5"),
    Case("one_vs_rest(5)", "classes", lambda: bst.Objective.one_vs_rest(N_CLASSES),
         [{"objective": "multiclassova", "num_class": N_CLASSES}], accuracy, "accuracy"),
    Case("softmax(5)", "classes", lambda: bst.Objective.softmax(N_CLASSES),
         [{"objective": "multiclass", "num_class": N_CLASSES}], accuracy, "accuracy"),
    Case("squared, 3 targets", "targets", lambda: bst.Objective.squared(),
         [{"objective": "regression"}] * N_TARGETS, multi_rmse, "mean RMSE",
         label_column=lambda y, j: y[:, j]),
    Case("linear leaves", "piecewise_linear", lambda: bst.Objective.squared(),
         [{"objective": "regression", "linear_tree": True, "linear_lambda": 0.0}],
         lambda y, p: metrics.root_mean_squared_error(y, p), "RMSE", config={"linear_leaves": True}),
    Case("linear leaves, kink at 0.3", "piecewise_linear_shifted", lambda: bst.Objective.squared(),
         [{"objective": "regression", "linear_tree": True, "linear_lambda": 0.0}],
         lambda y, p: metrics.root_mean_squared_error(y, p), "RMSE", config={"linear_leaves": True}),
    Case("DART", "gaussian", lambda: bst.Objective.squared(),
         [{"objective": "regression", "boosting": "dart", "drop_rate": 0.1, "skip_drop": 0.5, "max_drop": 50}],
         lambda y, p: metrics.root_mean_squared_error(y, p), "RMSE",
         config={"booster": "dart", "drop_rate": 0.1, "skip_drop": 0.5, "max_drop": 50}),
    # LightGBM has no hinge loss: XGBoost's binary:hinge, its predictions 0/1 as ours
    Case("hinge", "binary", lambda: bst.Objective.hinge(), [{"objective": "binary:hinge"}],
         metrics.accuracy_score, "accuracy", library="xgboost"),
]


def best_fit(fit, repeats):
    best, model = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        model = fit()
        best = min(best, time.perf_counter() - start)
    return best, model


def reference_fit(case, params, X, y, rounds, threads):
    if case.library == "xgboost":
        params = {**params, "tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0,
                  "eta": 0.1, "min_child_weight": 1e-3, "reg_lambda": 0.0, "max_bin": 255, "nthread": threads}
        return xgb.train(params, xgb.DMatrix(X, y, nthread=threads), rounds)
    params = {**params, "num_leaves": 31, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "min_sum_hessian_in_leaf": 1e-3, "lambda_l2": 0.0, "max_bin": 255, "verbose": -1,
              "num_threads": threads}
    return lgb.train(params, lgb.Dataset(X, y), rounds)


def reference_predict(case, model, X):
    return model.predict(xgb.DMatrix(X) if case.library == "xgboost" else X)


def run_case(case, args, threads, rng):
    X, y = make_data(case.data, args.rows + 100_000, args.features, rng)
    X_train, y_train, X_test, y_test = X[:args.rows], y[:args.rows], X[args.rows:], y[args.rows:]
    config = bst.GBDTConfig(objective=case.objective(), n_estimators=args.rounds, learning_rate=0.1,
                            growth_strategy="leafwise", n_leaves=31, max_depth=None, min_samples_leaf=20,
                            min_child_weight=1e-3, l2=0.0, max_bins=256, **case.config)
    ours_s, ours = best_fit(lambda: bst.GBDTModel.train(bst.Dataset(X_train, y_train), config, n_threads=threads),
                            args.repeats)
    label = case.label_column or (lambda labels, j: labels)
    theirs_s, theirs = 0.0, []
    for j, params in enumerate(case.reference):
        seconds, model = best_fit(lambda: reference_fit(case, params, X_train, label(y_train, j), args.rounds,
                                                        threads), args.repeats)
        theirs_s += seconds
        theirs.append(reference_predict(case, model, X_test))
    theirs_prediction = theirs[0] if len(theirs) == 1 else np.stack(theirs, axis=1)
    return (ours_s, theirs_s, case.score(y_test, ours.predict(X_test)), case.score(y_test, theirs_prediction))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    print("| objective | reference | threads | boosters fit (s) | reference fit (s) | boosters / reference | "
          "held-out metric | boosters | reference |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|")
    for case in CASES:
        if args.cases and case.name not in args.cases:
            continue
        for threads in args.threads:
            ours_s, theirs_s, ours_score, theirs_score = run_case(case, args, threads, np.random.default_rng(0))
            reference = "XGBoost" if case.library == "xgboost" else "LightGBM"
            if len(case.reference) > 1:
                reference += f" x{len(case.reference)}"
            print(f"| {case.name} | {reference} | {threads} | {ours_s:.2f} | {theirs_s:.2f} | "
                  f"{ours_s / theirs_s:.2f}x | {case.score_name} | {ours_score:.5f} | {theirs_score:.5f} |", flush=True)


if __name__ == "__main__":
    main()
