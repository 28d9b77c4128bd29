"""Scaling with cores, for a machine with many (the device machine: 16 cores): fit and
prediction time at 1, 2, 4, 8 and 16 threads for boosters, LightGBM and XGBoost, on
HIGGS-like 1M x 28 and on a wide dense set (200k x 400), 100 trees, 31 leaves leaf-wise,
lr 0.1, 255 bins (binning included, as `python -m boosters compare`).

    python benchmarks/many_cores.py [--threads 1 2 4 8 16] [--repeats 2] [--quick]
        [--out docs/benchmarks/many_cores.json]

Every fit runs in a fresh process (`boosters.bench.compare.run_isolated`), libraries
interleaved, best of the repeats. Prediction: each library's model predicts 100k test
rows in its own process (boosters `predict`, LightGBM `predict(num_threads=)`, XGBoost
`inplace_predict` with `nthread`), best of 5 calls. The parallel efficiency at T threads
is t(1) / (T t(T)). `--quick` is a small run to check the script (100k rows, 20 trees).
The machine, its core count and the load average are printed first.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

from boosters.bench import benchmark
from boosters.bench.compare import run_isolated
from boosters.bench.datasets import make_friedman, make_higgs, train_test_split

LIBRARIES = ["boosters", "lightgbm", "xgboost"]

PREDICT_CHILD = r"""
import json, sys, time
import numpy as np
spec = json.loads(sys.argv[1])
X = np.load(spec["X"]); y = np.load(spec["y"]); Xt = np.load(spec["Xt"])
lib, threads, trees = spec["library"], spec["threads"], spec["trees"]
if lib == "boosters":
    import boosters as bst
    cfg = bst.GBDTConfig(n_estimators=trees, growth_strategy="leafwise", n_leaves=31, max_depth=None)
    model = bst.GBDTModel.train(bst.Dataset(X, y), cfg, n_threads=0)
    call = lambda: model.predict(Xt, n_threads=threads)
elif lib == "lightgbm":
    import lightgbm as lgb
    model = lgb.train({"objective": "regression", "num_leaves": 31, "verbose": -1}, lgb.Dataset(X, y), trees)
    call = lambda: model.predict(Xt, num_threads=threads)
else:
    import xgboost as xgb
    model = xgb.train({"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0,
                       "eta": 0.1}, xgb.QuantileDMatrix(X, y), trees)
    model.set_param({"nthread": threads})
    call = lambda: model.inplace_predict(Xt)
best = float("inf")
for _ in range(5):
    start = time.perf_counter(); call(); best = min(best, time.perf_counter() - start)
print("JSON " + json.dumps({"seconds": best}))
"""


def predict_times(X, y, Xt, threads_list, trees) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, array in (("X", X), ("y", y), ("Xt", Xt)):
            paths[name] = os.path.join(tmp, f"{name}.npy")
            np.save(paths[name], array)
        for threads in threads_list:
            for library in LIBRARIES:
                spec = json.dumps({**paths, "library": library, "threads": threads, "trees": trees})
                out = subprocess.run([sys.executable, "-c", PREDICT_CHILD, spec], capture_output=True, text=True,
                                     check=True, cwd=tempfile.gettempdir()).stdout
                seconds = json.loads([ln for ln in out.splitlines() if ln.startswith("JSON ")][-1][5:])["seconds"]
                rows.append({"library": library, "threads": threads, "predict_seconds": seconds})
                print(f"  predict {library:<9} {threads:>2} threads: {seconds * 1000:8.1f} ms", flush=True)
    return rows


def efficiency_table(rows: list[dict], key: str) -> str:
    lines = [f"| library | threads | {key} | efficiency |", "|---|---:|---:|---:|"]
    for library in LIBRARIES:
        mine = {r["threads"]: r[key] for r in rows if r["library"] == library}
        for threads, seconds in sorted(mine.items()):
            eff = mine[min(mine)] * min(mine) / (threads * seconds)
            lines.append(f"| {library} | {threads} | {seconds:.3f} | {eff:.0%} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{len(os.sched_getaffinity(0))} usable; load average {os.getloadavg()}", flush=True)
    trees = 20 if args.quick else 100
    datasets = {"higgs 1M x 28": lambda: make_higgs(100_000 if args.quick else 1_100_000, seed=0),
                "wide 200k x 400": lambda: make_friedman(30_000 if args.quick else 222_000, 400, seed=0)}
    report = {}
    for name, make in datasets.items():
        X, y = make()
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_fraction=0.1 if not args.quick else 0.2)
        task = "binary" if name.startswith("higgs") else "regression"
        settings = benchmark.Settings(task=task, n_trees=trees)
        print(f"\n{name}: fit, {len(X_train)} rows, threads {args.threads}", flush=True)
        fits = run_isolated(LIBRARIES, settings, X_train, y_train, X_test, y_test, args.threads, args.repeats)
        fit_rows = [dataclasses.asdict(r) for r in fits]
        print(efficiency_table(fit_rows, "fit_seconds"), flush=True)
        print(f"\n{name}: predict {len(X_test)} rows", flush=True)
        predict_rows = predict_times(X_train, y_train.astype(np.float64), X_test, args.threads, trees)
        print(efficiency_table(predict_rows, "predict_seconds"), flush=True)
        report[name] = {"fit": fit_rows, "predict": predict_rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"machine": platform.platform(), "cpus": os.cpu_count(), "report": report}, f, indent=1)


if __name__ == "__main__":
    main()
