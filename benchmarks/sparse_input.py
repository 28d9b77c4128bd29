"""Sparse input: boosters vs LightGBM vs XGBoost on a scipy CSR matrix (issue 11).

Bag-of-words-like data (boosters.bench.datasets.make_bag_of_words): each row holds
~density * features counts (values 1..5) at random columns; binary labels from a sparse
linear model (10% of the features matter) plus noise. Every library runs in a fresh subprocess (its own peak RSS), fits on the same
CSR matrix (regenerated from the seed in each subprocess, so nothing is copied between
them) with matched settings (boosters.bench.benchmark.Settings: 31 leaves leaf-wise,
lr 0.1, 255 value bins) and is scored on a held-out CSR matrix (ROC AUC).

Columns: fit time (dataset construction and binning included), the peak RSS of the fit
above the process's RSS before it (the CSR already loaded), that peak over the CSR's own
size (data + indices + indptr; the issue's target: training below twice the CSR's size
in total, i.e. this ratio below 1), the test AUC.

    python benchmarks/sparse_input.py                                   # small smoke run
    python benchmarks/sparse_input.py --rows 1000000 --features 10000 --density 0.001 --trees 100
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


def worker(args) -> None:
    """One library's fit in this process; prints a JSON line."""
    from boosters.bench.benchmark import Settings, run
    from boosters.bench.datasets import make_bag_of_words

    X, y = make_bag_of_words(args.rows, args.features, args.density, args.seed)
    Xt, yt = make_bag_of_words(max(1000, args.rows // 10), args.features, args.density, args.seed + 1)
    csr_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20
    settings = Settings(task="binary", n_trees=args.trees, seed=args.seed)
    result = run(args.worker, settings, X, y, Xt, yt, args.threads)
    print(json.dumps(dict(library=result.library, fit_seconds=result.fit_seconds, peak_mb=result.peak_mb,
                          csr_mb=csr_mb, nnz=int(X.nnz), auc=result.metric)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--features", type=int, default=2_000)
    parser.add_argument("--density", type=float, default=0.005)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--libraries", default="boosters,lightgbm,xgboost")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if args.threads == 0:
        from boosters._lib.threads import effective_n_threads
        args.threads = effective_n_threads(0)
    results = []
    for library in args.libraries.split(","):
        cmd = [sys.executable, __file__, "--worker", library] + [
            f"--{k}={getattr(args, k)}" for k in ("rows", "features", "density", "trees", "threads", "seed")]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{library} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    if not results:
        return
    r0 = results[0]
    print(f"{args.rows} x {args.features} CSR, density {args.density}: {r0['nnz']} stored values, "
          f"{r0['csr_mb']:.1f} MB; {args.trees} trees, {args.threads} threads\n")
    print("| library | fit time (s) | peak RSS of the fit (MB) | peak / CSR size | test AUC |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['library']} | {r['fit_seconds']:.2f} | {r['peak_mb']:.1f} | {r['peak_mb'] / r['csr_mb']:.2f} | "
              f"{r['auc']:.4f} |")


if __name__ == "__main__":
    main()
