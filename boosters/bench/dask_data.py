"""Benchmark data on a Dask cluster: one partition per worker, generated on its worker.

The scheduler alone may put every block of a generated array on one worker (it did: a
`dask.array.random` array persisted on 2 workers had both blocks on one), which measures
one worker, not several. `make_block` lives here, in the package, because the workers
must import it: a benchmark script's own functions travel to separate worker processes
as references they cannot resolve. Needs the `dask` extra.
"""

from __future__ import annotations

from operator import getitem

import numpy as np


def make_block(seed: int, rows: int, features: int) -> tuple[np.ndarray, np.ndarray]:
    """`rows` rows of `features` standard normal features and a binary label whose logit is
    x0 - x1 + 0.5 x2 x3 (logistic noise), from `seed`."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, features))
    logit = X[:, 0] - X[:, 1] + 0.5 * X[:, 2] * X[:, 3]
    return X, (logit + rng.logistic(size=rows) > 0).astype(np.float64)


def spread_data(client, rows: int, features: int) -> tuple:
    """(X, y) as persisted Dask arrays of `rows` rows in all: one equal partition per worker
    of `client`'s cluster, block i generated on worker i (make_block(i, ...)); an
    AssertionError if the blocks did not land one per worker."""
    try:
        import dask.array as da
        from dask import delayed
        from distributed import wait
    except ImportError as error:  # pragma: no cover - the benchmarks install dask
        raise ImportError("boosters.bench.dask_data needs Dask: pip install 'boosters[dask]'") from error
    workers = sorted(client.scheduler_info()["workers"])
    sizes = [len(part) for part in np.array_split(np.arange(rows), len(workers))]
    blocks = [client.submit(make_block, i, n, features, workers=[w], pure=False)
              for i, (n, w) in enumerate(zip(sizes, workers))]
    X = da.concatenate([da.from_delayed(delayed(getitem)(b, 0), (n, features), np.float64)
                        for b, n in zip(blocks, sizes)])
    y = da.concatenate([da.from_delayed(delayed(getitem)(b, 1), (n,), np.float64) for b, n in zip(blocks, sizes)])
    X, y = client.persist([X, y])
    wait([X, y])
    holders = {h for hs in client.who_has(blocks).values() for h in hs}
    assert len(holders) == len(workers), f"partitions on {len(holders)} of {len(workers)} workers"
    return X, y
