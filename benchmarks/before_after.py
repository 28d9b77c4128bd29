"""Before/after comparison of two boosters installations in one run.

    python benchmarks/before_after.py --before /path/to/venv_before/bin/python \
        --after /path/to/venv_after/bin/python --task small --repeats 7

Each repeat runs `python -m boosters compare --libraries boosters` once with each
interpreter (alternating, so that machine noise hits both alike), and LightGBM and
XGBoost once with the `after` interpreter; every fit is in a fresh process. The table
keeps the fastest fit of each (library, threads), and the ratio of each boosters build
to the faster of LightGBM and XGBoost.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile


def run(python: str, task: str, libraries: list[str], threads: list[int], rows: int | None) -> list[dict]:
    cmd = [python, "-m", "boosters", "compare", "--task", task, "--libraries", *libraries,
           "--threads", *map(str, threads)]
    if rows:
        cmd += ["--rows", str(rows)]
    # run outside any source tree: `-m` would import ./boosters (no compiled kernels) first
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()).stdout
    return json.loads([ln for ln in out.splitlines() if ln.startswith("JSON ")][-1][5:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--task", default="small")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    best: dict[tuple[str, int], dict] = {}
    for _ in range(args.repeats):
        for label, python, libraries in (("before", args.before, ["boosters"]),
                                         ("after", args.after, ["boosters", "lightgbm", "xgboost"])):
            for r in run(python, args.task, libraries, args.threads, args.rows):
                key = (r["library"] if r["library"] != "boosters" else f"boosters {label}", r["threads"])
                if key not in best or r["fit_seconds"] < best[key]["fit_seconds"]:
                    best[key] = r
    print(f"task {args.task}, best of {args.repeats}\n")
    print("| build | threads | fit (s) | vs faster of LightGBM/XGBoost | peak MB | test metric |")
    print("|---|---:|---:|---:|---:|---:|")
    for t in args.threads:
        rival = min(best[(lib, t)]["fit_seconds"] for lib in ("lightgbm", "xgboost"))
        for name in ("boosters before", "boosters after", "lightgbm", "xgboost"):
            r = best[(name, t)]
            print(f"| {name} | {t} | {r['fit_seconds']:.3f} | {r['fit_seconds'] / rival:.2f}x | "
                  f"{r['peak_mb']:.1f} | {r['metric_name']} {r['metric']:.5f} |")


if __name__ == "__main__":
    main()
