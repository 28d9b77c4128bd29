"""`python -m boosters compare`: boosters vs LightGBM, XGBoost and scikit-learn.

Every fit runs in a fresh process (no shared allocator or OpenMP runtime between
libraries; peak memory is that process's), libraries interleaved across repeats, and
the fastest of the repeats is kept. The data are generated once and passed as .npy.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from boosters.bench import benchmark
from boosters.bench.datasets import (CATEGORICAL_LEVELS, COVERTYPE_CLASSES, make_bag_of_words, make_categorical,
                                     make_covertype, make_friedman, make_higgs)

# task -> (generator(n_rows, seed) -> (X, y), default training rows, settings)
TASKS = {
    "covertype": (lambda n, seed: make_covertype(n, binary=True, seed=seed), 581_012,
                  benchmark.Settings(task="binary")),
    "covertype-multiclass": (lambda n, seed: make_covertype(n, seed=seed), 581_012,
                             benchmark.Settings(task="multiclass", n_classes=COVERTYPE_CLASSES)),
    "higgs": (lambda n, seed: make_higgs(n, seed=seed), 1_000_000, benchmark.Settings(task="binary")),
    "small": (lambda n, seed: make_friedman(n, 10, seed=seed), 50_000, benchmark.Settings(task="regression")),
    # issue 11: categorical codes (10, 100, 1000, 5000 levels) + 4 numeric features
    "categorical": (lambda n, seed: make_categorical(n, seed=seed), 200_000,
                    benchmark.Settings(task="regression", categorical=tuple(range(len(CATEGORICAL_LEVELS))))),
    # a bag of words: scipy CSR, 5000 features, 0.2% stored
    "sparse": (lambda n, seed: make_bag_of_words(n, 5_000, 0.002, seed=seed), 500_000,
               benchmark.Settings(task="binary")),
    "higgs-subsample": (lambda n, seed: make_higgs(n, seed=seed), 1_000_000,
                        benchmark.Settings(task="binary", subsample=0.5)),
    "higgs-goss": (lambda n, seed: make_higgs(n, seed=seed), 1_000_000, benchmark.Settings(task="binary", goss=True)),
}
# libraries that cannot run a task's settings (scikit-learn: no sparse input, no row sampling,
# at most 255 categories; XGBoost: no GOSS)
UNSUPPORTED = {"categorical": {"sklearn"}, "sparse": {"sklearn"}, "higgs-subsample": {"sklearn"},
               "higgs-goss": {"sklearn", "xgboost"}}
TEST_ROWS = 100_000


def _child(library: str, threads: int, settings_json: str, data_dir: str) -> None:
    """Runs inside the fresh process: one fit, result as JSON on stdout."""
    settings = benchmark.Settings(**json.loads(settings_json))
    arrays = {name: _load(data_dir, name) for name in ("Xtr", "ytr", "Xte", "yte")}
    result = benchmark.run(library, settings, arrays["Xtr"], arrays["ytr"], arrays["Xte"], arrays["yte"], threads)
    print("RESULT " + json.dumps(dataclasses.asdict(result)))


def _save(data_dir: str, name: str, array) -> None:
    if hasattr(array, "tocsr"):  # a scipy.sparse matrix stays sparse
        import scipy.sparse as sp

        sp.save_npz(os.path.join(data_dir, name + ".npz"), array.tocsr())
    else:
        np.save(os.path.join(data_dir, name + ".npy"), np.ascontiguousarray(array))


def _load(data_dir: str, name: str):
    path = os.path.join(data_dir, name)
    if os.path.exists(path + ".npz"):
        import scipy.sparse as sp

        return sp.load_npz(path + ".npz")
    return np.load(path + ".npy")


def _run_child(library, threads, settings, data_dir) -> benchmark.RunResult:
    cmd = [sys.executable, "-m", "boosters.bench.compare", library, str(threads),
           json.dumps(dataclasses.asdict(settings)), data_dir]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"{library} failed:\n{out.stderr[-2000:]}")
    return benchmark.RunResult(**json.loads(lines[-1][len("RESULT "):]))


def run_isolated(libraries, settings, X_train, y_train, X_test, y_test, threads_list, repeats=1):
    """Fit every library in its own process per thread count; fastest of `repeats`."""
    results = []
    with tempfile.TemporaryDirectory() as data_dir:
        for name, array in (("Xtr", X_train), ("ytr", y_train), ("Xte", X_test), ("yte", y_test)):
            _save(data_dir, name, array)
        for threads in threads_list:
            best: dict[str, benchmark.RunResult] = {}
            for _ in range(repeats):
                for lib in libraries:
                    r = _run_child(lib, threads, settings, data_dir)
                    if lib not in best or r.fit_seconds < best[lib].fit_seconds:
                        best[lib] = r
            results.extend(best[lib] for lib in libraries)
    return results


def run_compare(task: str, rows: int | None, threads_list, libraries, repeats: int,
                histogram_mode: str = "auto", prefetch: bool = True) -> int:
    generate, default_rows, settings = TASKS[task]
    settings = dataclasses.replace(settings, histogram_mode=histogram_mode, prefetch=prefetch)
    n_train = rows or default_rows
    libraries = [lib for lib in (libraries or benchmark.LIBRARIES)
                 if benchmark.available(lib) and lib not in UNSUPPORTED.get(task, ())]
    X, y = generate(n_train + TEST_ROWS, 0)
    print(f"task {task}: {n_train} train rows x {X.shape[1]} features, {TEST_ROWS} test rows; "
          f"libraries {', '.join(libraries)}; threads {threads_list}; best of {repeats}")
    results = run_isolated(libraries, settings, X[:n_train], y[:n_train], X[n_train:], y[n_train:],
                           threads_list, repeats)
    print(benchmark.format_table(results))
    print("JSON " + json.dumps([dataclasses.asdict(r) for r in results]))
    return 0


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])
