"""TreeSHAP speed: boosters `shap_values` / `shap_interaction_values` against XGBoost's
`pred_contribs` / `pred_interactions` on models of the same shape.

    python benchmarks/shap.py --rows 20000 --features 20 --rounds 100 --depth 6 --explain 2000

Both libraries fit the same data with the same rounds, depth, learning rate and bins
(depth-wise growth), so the trees have about the same number of leaves (the table says
how many); then each explains the same rows with 1 and 2 threads. Timings (wall clock
and this process's CPU time) are the best of `--repeats` calls; the explained rows are
already in each library's input format (an array for boosters, a DMatrix for XGBoost).
Both compute exact path-dependent TreeSHAP with the node covers as weights; the script
checks that each library's rows sum to its own margins before it reports.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import xgboost as xgb

import boosters as bst


def make_data(n_rows: int, n_features: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    y = X[:, 0] + 2 * X[:, 1] * X[:, 2] + np.sin(3 * X[:, 3]) + 0.5 * np.abs(X[:, 4:]).sum(axis=1) / n_features
    y += 0.1 * rng.normal(size=n_rows)
    X[rng.random(X.shape) < 0.05] = np.nan  # missing values: both follow the default direction
    return X, y


def best_time(fn, repeats: int) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds of this process): on a shared machine the CPU
    time of a one-thread call is the steadier measure of the work done."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000, help="training rows")
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--explain", type=int, default=2000, help="rows explained by shap_values")
    parser.add_argument("--explain-interactions", type=int, default=200)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    X, y = make_data(args.rows, args.features)
    rows, inter_rows = X[:args.explain], X[:args.explain_interactions]
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(
        n_estimators=args.rounds, max_depth=args.depth, learning_rate=0.1, max_bins=256))
    booster = xgb.train({"tree_method": "hist", "max_depth": args.depth, "eta": 0.1, "max_bin": 256,
                         "lambda": 1.0, "min_child_weight": 1.0},
                        xgb.DMatrix(X, y), num_boost_round=args.rounds)
    drows, dinter = xgb.DMatrix(rows), xgb.DMatrix(inter_rows)
    xgb_leaves = int((booster.trees_to_dataframe()["Feature"] == "Leaf").sum())
    our_leaves = sum(t.n_leaves for t in model.trees)

    # each library's rows sum to its own margins (a sanity check, not a comparison)
    np.testing.assert_allclose(model.shap_values(rows).sum(axis=1), model.predict_raw(rows), rtol=1e-6)
    contribs = booster.predict(drows, pred_contribs=True)
    np.testing.assert_allclose(contribs.sum(axis=1), booster.predict(drows, output_margin=True), rtol=1e-4, atol=1e-4)

    results = []
    for threads in args.threads:
        booster.set_param({"nthread": threads})
        timings = {
            "shap_values": (
                best_time(lambda: model.shap_values(rows, n_threads=threads), args.repeats),
                best_time(lambda: booster.predict(drows, pred_contribs=True), args.repeats), len(rows)),
            "interaction_values": (
                best_time(lambda: model.shap_interaction_values(inter_rows, n_threads=threads), args.repeats),
                best_time(lambda: booster.predict(dinter, pred_interactions=True), args.repeats), len(inter_rows)),
        }
        for kind, (ours, theirs, n) in timings.items():
            results.append((kind, threads, n, ours, theirs))

    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; xgboost {xgb.__version__}")
    print(f"{args.rows} training rows x {args.features} features, {args.rounds} rounds of depth {args.depth}: "
          f"boosters {our_leaves} leaves, XGBoost {xgb_leaves} leaves; best of {args.repeats}\n")
    print("| what | threads | rows | boosters wall (ms) | XGBoost wall (ms) | XGBoost / boosters wall "
          "| boosters CPU (ms) | XGBoost CPU (ms) | XGBoost / boosters CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, threads, n, (ours, our_cpu), (theirs, their_cpu) in results:
        print(f"| {kind} | {threads} | {n} | {ours * 1e3:.1f} | {theirs * 1e3:.1f} | {theirs / ours:.2f} "
              f"| {our_cpu * 1e3:.1f} | {their_cpu * 1e3:.1f} | {their_cpu / our_cpu:.2f} |")


if __name__ == "__main__":
    main()
