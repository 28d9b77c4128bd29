"""Prediction speed against XGBoost and LightGBM (issue 14), printed as a markdown table.

100k x 28 float32 rows; 100-tree models trained with matched settings (31 leaves grown
leaf by leaf: boosters Leafwise, XGBoost lossguide, LightGBM), squared error, plus the
boosters default (depth-wise, max_depth 6). Each call timed wall-clock, best of
`--repeats`, the libraries interleaved in each repeat (a busy machine slows them alike).
Rows: 100k rows at 1 and 2 threads, and 1 row at 1 thread (the per-call overhead).
treelite (its GTIL interpreter) and lleaves (LightGBM's model compiled with LLVM) are
references when installed, skipped otherwise.

    python benchmarks/prediction.py [--repeats 7] [--train-rows 50000]
"""

from __future__ import annotations

import argparse
import time

import lightgbm as lgb
import numpy as np
import xgboost as xgb

import boosters as bst

N_ROWS, N_FEATURES, N_TREES, N_LEAVES = 100_000, 28, 100, 31


def data(n_rows: int):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_rows, N_FEATURES)).astype(np.float32)
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=n_rows)
    return X, y


def train_models(X, y) -> dict:
    """name -> predict(rows, n_threads)."""
    leafwise = bst.GBDTConfig(n_estimators=N_TREES, growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=N_LEAVES,
                              max_depth=None)
    models = {}
    for name, config in (("boosters", leafwise), ("boosters depth-wise 6", bst.GBDTConfig(n_estimators=N_TREES))):
        model = bst.GBDTModel.train(bst.Dataset(X, y), config)
        models[name] = lambda rows, threads, m=model: m.predict(rows, n_threads=threads)
    booster = xgb.train({"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": N_LEAVES, "max_depth": 0,
                         "eta": 0.3}, xgb.DMatrix(X, y), N_TREES)

    set_threads = []

    def xgb_predict(rows, threads):
        if set_threads != [threads]:  # set_param costs ~100 us: only when the count changes
            booster.set_param({"nthread": threads})
            set_threads[:] = [threads]
        return booster.inplace_predict(rows)

    models["XGBoost inplace_predict"] = xgb_predict
    lgb_model = lgb.train({"num_leaves": N_LEAVES, "verbose": -1}, lgb.Dataset(X, y), N_TREES)
    models["LightGBM predict"] = lambda rows, threads: lgb_model.predict(rows, num_threads=threads)
    models.update(_references(booster, lgb_model))
    return models


def _references(booster, lgb_model) -> dict:
    """treelite's GTIL and lleaves, when they are installed (not dependencies)."""
    refs = {}
    try:
        import treelite
    except ImportError:
        print("treelite not installed: skipped")
    else:
        tl_model = treelite.frontend.from_xgboost(booster)
        refs["treelite GTIL (XGBoost model)"] = lambda rows, threads: treelite.gtil.predict(tl_model, rows,
                                                                                             nthread=threads)
    try:
        import lleaves
    except ImportError:
        print("lleaves not installed: skipped")
    else:
        import os
        import tempfile
        folder = tempfile.mkdtemp()
        path = os.path.join(folder, "model.txt")
        lgb_model.save_model(path)
        compiled = lleaves.Model(model_file=path)
        try:
            compiled.compile(cache=os.path.join(folder, "model.o"))
        except Exception as exc:  # e.g. an llvmlite newer than lleaves supports
            print(f"lleaves could not compile the model ({type(exc).__name__}: {exc}): skipped")
        else:
            refs["lleaves (LightGBM model)"] = lambda rows, threads: compiled.predict(rows, n_jobs=threads)
    return refs


def best_times(models: dict, cases: list, repeats: int) -> tuple[dict, dict]:
    """(name, case) -> best wall seconds, and best CPU seconds (the process's, every
    thread's together), every model called in turn in each repeat."""
    wall, cpu = {}, {}
    for _ in range(repeats):
        for label, rows, threads, calls in cases:
            for name, predict in models.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                for _ in range(calls):
                    predict(rows, threads)
                wall[name, label] = min(wall.get((name, label), np.inf), (time.perf_counter() - start) / calls)
                cpu[name, label] = min(cpu.get((name, label), np.inf), (time.process_time() - start_cpu) / calls)
    return wall, cpu


def print_table(models: dict, cases: list, best: dict) -> None:
    print("| model | " + " | ".join(label for label, *_ in cases) + " |")
    print("|---|" + "---:|" * len(cases))
    xgb_name = "XGBoost inplace_predict"
    for name in models:
        cells = []
        for label, *_ in cases:
            seconds = best[name, label]
            cell = f"{seconds * 1e6:.1f} us" if label.startswith("1 row") else f"{seconds * 1e3:.1f} ms"
            if name != xgb_name:
                cell += f" ({seconds / best[xgb_name, label]:.2f}x)"
            cells.append(cell)
        print(f"| {name} | " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--train-rows", type=int, default=50_000)
    args = parser.parse_args()
    X, y = data(N_ROWS)
    models = train_models(X[:args.train_rows], y[:args.train_rows])
    one_row = np.ascontiguousarray(X[:1])
    for predict in models.values():  # warm up: caches, thread pools, first-call setup
        predict(X[:1000], 1)
        predict(X[:1000], 2)
    cases = [("100k rows, 1 thread", X, 1, 1), ("100k rows, 2 threads", X, 2, 1), ("1 row, 1 thread", one_row, 1, 200)]
    wall, cpu = best_times(models, cases, args.repeats)
    print(f"\nWall time, best of {args.repeats} (1 row: mean of 200 calls, best of {args.repeats})\n")
    print_table(models, cases, wall)
    print(f"\nCPU time of the process (every thread's together), best of {args.repeats}\n")
    print_table(models, cases, cpu)
    print("\n(x: time relative to XGBoost inplace_predict)")


if __name__ == "__main__":
    main()
