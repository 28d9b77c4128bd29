"""What a boosters.dask worker spends on one tree of one partition, without Dask: the
partition's tasks called in one process, timed in CPU seconds of this process (one
thread; less sensitive to a busy machine than wall time).

- the smaller children's histograms of a depth-6 tree, built as boosters.dask builds them
  (the library's histogram builder, SLOTS nodes per call) and as its first version did
  (one node_rows copy and one column-wise kernel call per node); the two give the same sums;
- a whole tree's tasks (gradients, quantization, root, 6 steps, renewed leaf sums).

    python benchmarks/dask_worker_steps.py [--rows 100000] [--features 28]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import boosters as bst
from boosters._testing.kernels import build_histogram_gathered, build_histogram_packed, node_rows
from boosters.dask import _partition_state as tasks
from boosters.data.binning import BinMapper
from boosters.objectives.registry import make_objective

DEPTH = 6


def per_node_histograms(state, nodes):
    """The first version's PartitionState.histograms: a kernel call per node."""
    if state.quantizer is not None:
        hist = np.zeros((len(nodes), state.binned.total_bins), dtype=np.int64)
        for i, node in enumerate(nodes):
            build_histogram_packed(state.binned, state.packed, hist[i], rows=node_rows(state.partitioner, node))
        return hist
    hist = np.zeros((len(nodes), state.binned.total_bins, 2))
    gh = state.gradients[state.output]
    for i, node in enumerate(nodes):
        rows = node_rows(state.partitioner, node)
        build_histogram_gathered(state.binned, rows, np.ascontiguousarray(gh[rows]), hist[i])
    return hist


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=28)
    args = parser.parse_args()
    n, f = args.rows, args.features
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, f))
    y = (X[:, 0] - X[:, 1] + rng.logistic(size=n) > 0).astype(np.float64)
    mapper = BinMapper(256).fit(X)
    objective = make_objective(bst.Objective.logistic(), None)
    # a full depth-6 tree: every node split at the middle bin of feature `depth`
    steps, level, next_node = [], [0], 1
    for depth in range(DEPTH):
        splits = []
        for node in level:
            splits.append([node, depth % f, 128, 0, next_node, next_node + 1])
            next_node += 2
        steps.append(np.array(splits, dtype=np.int64))
        level = steps[-1][:, 4:].ravel().tolist()
    for mode, quantizer in (("i16", (16, 1000, 42)), ("f64", None)):
        settings = tasks.Settings(np.arange(f, dtype=np.int32), 2 ** (DEPTH + 1) - 1, quantizer)
        state = tasks.make_state(X, y, None, mapper, objective, np.zeros(1), settings, 0)
        tasks.root_histogram(state, 0, tasks.start_tree(state, 0, None, 0, True))

        def histogram_seconds(build) -> float:
            seconds = 0.0
            state.partitioner.reset()
            for splits in steps:
                tasks.split_nodes(state, 0, splits)
                start = time.process_time()
                build(splits[:, 4].tolist())
                seconds += time.process_time() - start
            return seconds

        old = min(histogram_seconds(lambda nodes: per_node_histograms(state, nodes)) for _ in range(5))
        new = min(histogram_seconds(state.histograms) for _ in range(5))
        last = steps[-1][:, 4].tolist()
        same = np.allclose(per_node_histograms(state, last), state.histograms(last), rtol=1e-12, atol=0)
        print(f"{mode}: a depth-{DEPTH} tree's smaller children, {n} rows x {f}: per node {old * 1e3:.1f} ms, "
              f"builder {new * 1e3:.1f} ms CPU ({old / new:.2f}x); same sums: {same}")

    leaves = steps[-1][:, 4:].ravel().tolist()
    settings = tasks.Settings(np.arange(f, dtype=np.int32), 2 ** (DEPTH + 1) - 1, (16, 1000, 42))
    state = tasks.make_state(X, y, None, mapper, objective, np.zeros(1), settings, 0)
    start, n_trees = time.process_time(), 10
    for t in range(n_trees):
        previous = None if t == 0 else (0, np.array(leaves), np.full(len(leaves), 0.01))
        tasks.root_histogram(state, t, tasks.start_tree(state, t, previous, 0, True))
        for splits in steps:
            tasks.split_and_build(state, t, splits, splits[:, 4].tolist(), [])
        tasks.leaf_sums(state, t, leaves)
    print(f"a whole tree's tasks (i16): {(time.process_time() - start) / n_trees * 1e3:.1f} ms CPU per tree")


if __name__ == "__main__":
    main()
