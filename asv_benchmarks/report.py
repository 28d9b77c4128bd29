"""Markdown tables from asv result files: `python report.py [results.json ...]`.

With several result files (repeated `asv run --python=same --set-commit-hash ...` runs,
or runs on several commits) every figure is the best over the files given: on a noisy
machine the fastest run is the one least disturbed by other work.
"""

from __future__ import annotations

import glob
import itertools
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(paths):
    machine = json.load(open(os.path.join(os.path.dirname(paths[0]), "machine.json")))
    best: dict[tuple, float] = {}
    for path in paths:
        data = json.load(open(path))
        for name, row in data["results"].items():
            values, params = row[0], row[1]
            if values is None:
                continue
            combos = list(itertools.product(*params)) if params else [()]
            higher_is_better = name.split(".")[-1].startswith("track_")
            for combo, value in zip(combos, values):
                if value is None:
                    continue
                key = (name, combo)
                if key not in best or (value > best[key] if higher_is_better else value < best[key]):
                    best[key] = value
    return machine, best


def fmt(name: str, value: float) -> str:
    method = name.split(".")[-1]
    if method.startswith("time_"):
        return f"{value * 1e3:.2f} ms"
    if method.startswith("peakmem_"):
        return f"{value / 2**20:.0f} MiB"
    if value > 1e6:
        return f"{value:.3g}"
    return f"{value:.5f}"


def main(paths):
    if not paths:
        paths = sorted(p for p in glob.glob(os.path.join(HERE, ".asv/results/*/*.json"))
                       if not p.endswith("machine.json"))
    machine, best = load(paths)
    print(f"machine: {machine.get('cpu')}, {machine.get('num_cpu')} CPUs, {machine.get('os')}; "
          f"best of {len(paths)} asv run(s)\n")
    print("| benchmark | parameters | result |\n|---|---|---|")
    for (name, combo), value in sorted(best.items()):
        print(f"| {name.split('.', 1)[1]} | {', '.join(str(c).strip(chr(39)) for c in combo)} | {fmt(name, value)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
