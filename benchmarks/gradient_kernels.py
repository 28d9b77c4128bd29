"""Time of one gradient-kernel pass (GradientKernel.run) per pointwise objective and softmax:
1M rows (softmax: 4 classes), unit and random weights, 1 and 2 threads, best of `--repeats`.
Run it with two installs to compare kernels before and after a change."""

import argparse
import time

import numpy as np

try:  # an install before the kernels moved into boosters/objectives/
    from boosters.objectives import _gradients
except ImportError:
    from boosters.training import _objectives as _gradients


def kernel_args(name, n_rows, weighted, rng):
    k = 4 if name == "softmax" else 1
    margins = rng.normal(0, 1, size=(k, n_rows))
    y = {"logistic": (rng.random(n_rows) < 0.5).astype(float), "softmax": rng.integers(0, 4, n_rows).astype(float)
         }.get(name, rng.gamma(2.0, 1.0, n_rows))
    w = rng.random(n_rows) if weighted else np.empty(0)
    extra = {"poisson": 0.7, "tweedie": 1.5}
    kwargs = {} if name not in extra else {"parameters": extra[name]}
    try:  # the argument's name before the pointwise loop
        _gradients.GradientKernel(name, margins, y, w, np.empty((k, n_rows, 2), np.float32), 1, **kwargs)
    except TypeError:
        kwargs = {} if name not in extra else {"parameter": extra[name]}
    return margins, y, w, np.empty((k, n_rows, 2), np.float32), kwargs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| objective | weights | threads | ms per pass |")
    print("|---|---|---:|---:|")
    for name in ("squared", "logistic", "poisson", "gamma", "tweedie", "softmax"):
        for weighted in (False, True):
            margins, y, w, out, kwargs = kernel_args(name, args.rows, weighted, rng)
            for threads in (1, 2):
                kernel = _gradients.GradientKernel(name, margins, y, w, out, threads, **kwargs)
                best = float("inf")
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    kernel.run()
                    best = min(best, time.perf_counter() - start)
                print(f"| {name} | {'random' if weighted else 'unit'} | {threads} | {1e3 * best:.2f} |")


if __name__ == "__main__":
    main()
