"""OpenMP runtimes in one process: boosters beside scikit-learn, LightGBM and XGBoost.

Each scenario runs in a fresh interpreter (the order of imports decides which runtime
copies get loaded). For each it prints threadpoolctl's view of the OpenMP runtimes
(file, version, threads) and the wall time of a boosters fit (median of ``--repeat``),
alone and right after a LightGBM / XGBoost / scikit-learn fit (their worker threads
may still spin-wait when boosters' runtime starts its own).

    python benchmarks/openmp_runtimes.py [--rows 200000] [--rounds 50] [--repeat 5]

Docs: docs/benchmarks/wheels.md (the OpenMP policy of the wheels).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

SCENARIO = r"""
import json, statistics, sys, time
args = json.loads(sys.argv[1])
imports = args["imports"]
for name in imports:
    __import__(name)
import numpy as np
import boosters as bst
from threadpoolctl import threadpool_info

rng = np.random.default_rng(0)
X = rng.normal(size=(args["rows"], 20)).astype(np.float32)
y = X[:, 0] * 2 + np.sin(X[:, 1] * 3) + X[:, 2] * X[:, 3] + rng.normal(scale=0.1, size=args["rows"])
config = bst.GBDTConfig(n_estimators=args["rounds"], n_leaves=31, learning_rate=0.1)

def boosters_fit():
    bst.GBDTModel.train(bst.Dataset(X, y), config=config)

others = {}
if "lightgbm" in imports:
    import lightgbm
    others["lightgbm"] = lambda: lightgbm.LGBMRegressor(n_estimators=args["rounds"], num_leaves=31, verbose=-1).fit(X, y)
if "xgboost" in imports:
    import xgboost
    others["xgboost"] = lambda: xgboost.XGBRegressor(n_estimators=args["rounds"], max_leaves=31, tree_method="hist", grow_policy="lossguide", max_depth=0).fit(X, y)
if "sklearn" in imports:
    from sklearn.ensemble import HistGradientBoostingRegressor
    others["sklearn"] = lambda: HistGradientBoostingRegressor(max_iter=args["rounds"], max_leaf_nodes=31, early_stopping=False).fit(X, y)

boosters_fit()  # warm-up: the first fit starts the thread pool
for fit in others.values():
    fit()
out = {"runtimes": [
    {k: d.get(k) for k in ("internal_api", "prefix", "filepath", "version", "num_threads")}
    for d in threadpool_info() if d["user_api"] == "openmp"
]}
def timed(fn):
    t = time.perf_counter(); fn(); return time.perf_counter() - t
out["boosters_alone_s"] = statistics.median(timed(boosters_fit) for _ in range(args["repeat"]))
for name, fit in others.items():
    times = []
    for _ in range(args["repeat"]):
        fit()
        times.append(timed(boosters_fit))  # right after the other library's parallel regions
    out[f"boosters_after_{name}_s"] = statistics.median(times)
    out[f"{name}_s"] = statistics.median(timed(fit) for _ in range(args["repeat"]))
print(json.dumps(out))
"""

SCENARIOS = {
    "boosters only": [],
    "sklearn, lightgbm, xgboost, then boosters": ["sklearn", "lightgbm", "xgboost"],
    "boosters first, then the others": ["boosters", "sklearn", "lightgbm", "xgboost"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for title, imports in SCENARIOS.items():
        payload = json.dumps({"imports": imports, "rows": args.rows, "rounds": args.rounds, "repeat": args.repeat})
        done = subprocess.run([sys.executable, "-I", "-c", SCENARIO, payload], capture_output=True, text=True)
        if done.returncode:
            print(f"## {title}: failed\n{done.stderr}")
            continue
        result = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"## {title}")
        for rt in result.pop("runtimes"):
            print(f"  runtime {rt['internal_api']:<8} {rt['version']!s:<8} threads={rt['num_threads']} {rt['filepath']}")
        for key, value in result.items():
            print(f"  {key:<28} {value:.3f}")


if __name__ == "__main__":
    main()
