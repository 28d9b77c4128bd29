"""Bin edges from a mergeable quantile sketch of the partitions (`bin_edges="sketch"` of
`boosters.dask.train`), for when a row sample is not enough: every row counts.

Each partition is sketched where it is (one task per partition, pinned nowhere: the task
reads the partition's block), the sketches are merged in the fixed binary tree of tasks
the histograms are summed in (so the merged sketch, and the edges, depend on the
partitioning only, not on the number of workers), and the driver fetches the merged
sketch (at most `size` values per feature) and makes the edges from it.

A row's weight in the sketch is its training weight (1 without weights). The edges are
made before the first tree, where for most objectives every row's hessian is its weight
times a constant (squared error, huber: 1; logistic, softmax, one_vs_rest: p (1 - p) at
the base scores, the same for every row; poisson: the exponential of the base score): for
them this is the hessian-weighted sketch of seed 004. For gamma and tweedie the first
hessians depend on the labels, and the sketch stays weighted by the training weights only.

Every summary keeps SIZE_PER_BIN * max_bins values, so each level of the merge tree (and
each partition's own pruning) adds at most about 1 / (2 * SIZE_PER_BIN * max_bins) of the
total weight to a quantile's rank error (quantile_sketch.py): with 16 per bin and 256 bins,
1/8192 per level, 1/32 of a bin's share; at most a third of a share over 1024 partitions
(10 levels and the partitions' own pruning). That is the worst case the bound allows.
"""

from __future__ import annotations

from boosters.config import GBDTConfig
from boosters.dask._driver import fixed_sum, gather
from boosters.data.binning import BinMapper
from boosters.data.quantile_sketch import QuantileSketch

SIZE_PER_BIN = 16
BIN_EDGES = ("sample", "sketch")


def check_bin_edges(bin_edges) -> None:
    if bin_edges not in BIN_EDGES:
        raise ValueError(f"bin_edges must be one of {', '.join(map(repr, BIN_EDGES))}, got {bin_edges!r}")


def sketch_bin_mapper(client, x_blocks: list, w_blocks: list, config: GBDTConfig) -> BinMapper:
    """The BinMapper of the merged sketch of the partitions (x_blocks, w_blocks: futures of
    their blocks and weights, None for no weights), for config.max_bins."""
    size = SIZE_PER_BIN * config.max_bins
    sketches = [client.submit(sketch_partition, xb, wb, size, pure=False) for xb, wb in zip(x_blocks, w_blocks)]
    merged = gather(client, fixed_sum(client, sketches, op=merge_sketches))
    return merged.bin_mapper(config.max_bins, seed=config.seed)


def sketch_partition(X, weights, size: int) -> QuantileSketch:
    """One partition's sketch (a task on a worker)."""
    return QuantileSketch(X.shape[1], size).add(X, weights)


def merge_sketches(a: QuantileSketch, b: QuantileSketch) -> QuantileSketch:
    """Two sketches merged (a task of the merge tree)."""
    return a.merge(b)
