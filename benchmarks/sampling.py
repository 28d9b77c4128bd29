"""Row sampling figures: fit time and test metric of boosters without sampling, with
`subsample=0.5` and with GOSS (goss_top_rate=0.2, goss_other_rate=0.1), against
LightGBM without sampling, with bagging (bagging_fraction=0.5, bagging_freq=1) and with
GOSS (data_sample_strategy="goss", top_rate=0.2, other_rate=0.1), at the matched
settings of boosters.bench.benchmark (100 leaf-wise trees of 31 leaves, learning rate
0.1: both libraries' GOSS use every row in the first 10 rounds). Every fit runs in a
fresh process, the settings interleaved across repeats, the fastest repeat kept.

    python benchmarks/sampling.py [--task small|covertype|higgs] [--rows N] [--threads 1 2] [--repeats 3]

The default is the small task (Friedman #1, 50,000 training rows); covertype and higgs
are the synthetic stand-ins of boosters.bench.datasets (581,012 and 1,000,000 rows).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from boosters.bench import benchmark
from boosters.bench.compare import TASKS

TEST_ROWS = 50_000
# sampling name -> (boosters' config changes, LightGBM's parameters)
SAMPLINGS = {
    "none": ({}, {}),
    "subsample 0.5": ({"subsample": 0.5}, {"bagging_fraction": 0.5, "bagging_freq": 1}),
    "GOSS 0.2/0.1": ({"goss_top_rate": 0.2, "goss_other_rate": 0.1},
                     {"data_sample_strategy": "goss", "top_rate": 0.2, "other_rate": 0.1}),
}


def fit(library: str, sampling: str, settings: benchmark.Settings, threads: int, data_dir: str) -> dict:
    """One fit and its test score (runs in the child process)."""
    arrays = {name: np.load(os.path.join(data_dir, name + ".npy")) for name in ("Xtr", "ytr", "Xte", "yte")}
    ours, theirs = SAMPLINGS[sampling]
    if library == "boosters":
        import boosters as bst

        start = time.perf_counter()
        config = benchmark.boosters_config(settings).replace(**ours)
        model = bst.GBDTModel.train(bst.Dataset(arrays["Xtr"], arrays["ytr"]), config, n_threads=threads)
        seconds = time.perf_counter() - start
        prediction = model.predict(arrays["Xte"], n_threads=threads)
    else:
        import lightgbm as lgb

        start = time.perf_counter()
        params = {**benchmark.lightgbm_params(settings, threads), **theirs}
        booster = lgb.train(params, lgb.Dataset(arrays["Xtr"], arrays["ytr"]), num_boost_round=settings.n_trees)
        seconds = time.perf_counter() - start
        prediction = booster.predict(arrays["Xte"], num_threads=threads)
    metric, value = benchmark.score(settings.task, arrays["yte"], prediction)
    return {"seconds": seconds, "metric": metric, "value": value}


def run_child(library, sampling, settings, threads, data_dir) -> dict:
    cmd = [sys.executable, __file__, "--child", library, sampling, json.dumps(dataclasses.asdict(settings)),
           str(threads), data_dir]
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"{library} / {sampling} failed:\n{out.stderr[-2000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=["small", "covertype", "higgs"], default="small")
    parser.add_argument("--rows", type=int, default=None, help="training rows (default: the task's)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    generate, default_rows, settings = TASKS[args.task]
    n_train = args.rows or default_rows
    X, y = generate(n_train + TEST_ROWS, 0)
    print(f"task {args.task}: {n_train} training rows x {X.shape[1]} features, {TEST_ROWS} test rows; "
          f"best of {args.repeats}")
    print("| library | sampling | threads | fit time (s) | vs no sampling | test metric |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as data_dir:
        for name, array in (("Xtr", X[:n_train]), ("ytr", y[:n_train]), ("Xte", X[n_train:]), ("yte", y[n_train:])):
            np.save(os.path.join(data_dir, name + ".npy"), np.ascontiguousarray(array))
        for threads in args.threads:
            best: dict = {}
            for _ in range(args.repeats):
                for library in ("boosters", "lightgbm"):
                    for sampling in SAMPLINGS:
                        r = run_child(library, sampling, settings, threads, data_dir)
                        key = (library, sampling)
                        if key not in best or r["seconds"] < best[key]["seconds"]:
                            best[key] = r
            for (library, sampling), r in best.items():
                ratio = r["seconds"] / best[(library, "none")]["seconds"]
                print(f"| {library} | {sampling} | {threads} | {r['seconds']:.3f} | {ratio:.2f}x | "
                      f"{r['metric']} {r['value']:.5f} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _, _, library, sampling, settings_json, threads, data_dir = sys.argv
        result = fit(library, sampling, benchmark.Settings(**json.loads(settings_json)), int(threads), data_dir)
        print("RESULT " + json.dumps(result))
    else:
        main()
