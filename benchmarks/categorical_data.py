"""Cost of the categorical data layer: reading a frame with categorical columns into codes
(Dataset construction) and coding a frame by value at prediction, per library and column
kind, against reading the same frame's numeric columns only.

    python benchmarks/categorical_data.py --rows 1000000 --levels 10 1000 --repeats 5

Prints one line per case: the best of `--repeats` in milliseconds and nanoseconds per
value. Numbers only: no model is trained (the splits are not what this measures).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from boosters import Dataset
from boosters.data.categories import frame_codes
from boosters.data.frames import as_frame


def best_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def frames(rows: int, levels: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    values = np.array([f"level_{i:05d}" for i in range(levels)], dtype=object)
    strings = values[rng.integers(0, levels, rows)]
    numeric = rng.normal(size=rows)
    out = {
        "pandas numeric": pd.DataFrame({"x": numeric, "y": numeric}),
        "pandas category": pd.DataFrame({"x": numeric, "c": pd.Categorical(strings, categories=values)}),
        "pandas strings": pd.DataFrame({"x": numeric, "c": strings}),
    }
    try:
        import pyarrow as pa
        out["pyarrow dictionary"] = pa.table({"x": numeric, "c": pa.array(strings).dictionary_encode()})
    except ImportError:
        pass
    try:
        import polars as pl
        out["polars Categorical"] = pl.DataFrame({"x": numeric, "c": pl.Series(strings, dtype=pl.Categorical)})
        out["polars Enum"] = pl.DataFrame({"x": numeric, "c": pl.Series(strings, dtype=pl.Enum(list(values)))})
    except ImportError:
        pass
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--levels", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    y = np.zeros(args.rows)
    print(f"{'case':<22} {'levels':>6} {'Dataset ms':>11} {'ns/value':>9} {'predict-coding ms':>18} {'ns/value':>9}")
    for levels in args.levels:
        for case, X in frames(args.rows, levels).items():
            categorical = [] if case.endswith("numeric") else ["c"]
            ds = Dataset(X, y, categorical_features=categorical)
            build = best_ms(lambda: Dataset(X, y, categorical_features=categorical), args.repeats)
            frame = as_frame(X)
            code = best_ms(lambda: frame_codes(frame, None, ds.categories, ds.feature_names), args.repeats)
            per = 1e6 / (2 * args.rows)
            print(f"{case:<22} {levels:>6} {build:>11.1f} {build * per:>9.1f} {code:>18.1f} {code * per:>9.1f}")


if __name__ == "__main__":
    main()
