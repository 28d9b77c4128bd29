"""Leaf tables of oblivious (symmetric) forests for _oblivious.pyx: built from a forest's
checked flat arrays when every tree is symmetric (each level one numeric split: the same
feature, threshold and default side at every split node of the level), else None and
the general walk predicts."""

from __future__ import annotations

import numpy as np

from boosters.model._oblivious import ObliviousForest

MAX_DEPTH = 24            # deeper trees keep the general walk (a table of 2**depth values)
MAX_TABLE_PER_NODE = 4    # tables up to 4 values per node of the forest (shallow leaves repeat)


def oblivious_forest(arrays: dict, offsets: np.ndarray, groups: np.ndarray) -> ObliviousForest | None:
    """The tables of a forest's flat arrays, or None where some tree is not oblivious or
    the tables would take over MAX_TABLE_PER_NODE values per node. Tree t's leaf index
    has bit k (from the top) set where the row went right at level k; a leaf above the
    last level fills the entries of every path below it."""
    levels: list[tuple] = []
    tables, level_start, table_start = [], [0], [0]
    budget = MAX_TABLE_PER_NODE * max(1, len(arrays["split_feature"]))
    for lo in offsets[:-1].tolist():
        tree_levels = _levels(arrays, lo)
        if tree_levels is None:
            return None
        split_levels, leaves = tree_levels
        depth = len(split_levels)
        table_start.append(table_start[-1] + (1 << depth))
        if table_start[-1] > budget:
            return None
        table = np.empty(1 << depth)
        for nodes, prefix, d in leaves:
            span = 1 << (depth - d)
            for node, p in zip(nodes.tolist(), prefix.tolist()):
                table[p * span:(p + 1) * span] = arrays["value"][lo + node]
        levels += split_levels
        tables.append(table)
        level_start.append(len(levels))
    return ObliviousForest(np.array([f for f, _, _ in levels], dtype=np.int32),
                           np.array([x for _, x, _ in levels], dtype=np.float64),
                           np.array([d for _, _, d in levels], dtype=np.uint8),
                           np.array(level_start, dtype=np.int64),
                           np.concatenate(tables) if tables else np.zeros(0), np.array(table_start, dtype=np.int64),
                           np.ascontiguousarray(groups, dtype=np.int32))


def _levels(arrays: dict, lo: int):
    """(the levels' (feature, threshold, default_left), the leaves as (nodes, path
    prefixes, depth) per depth) of the tree whose root is node lo, or None if it is not
    symmetric."""
    feature, threshold, dl = arrays["split_feature"], arrays["threshold"], arrays["default_left"]
    nodes, prefix = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    split_levels: list[tuple] = []
    leaves = []
    while nodes.size:
        at = lo + nodes
        split = feature[at] >= 0
        leaves.append((nodes[~split], prefix[~split], len(split_levels)))
        nodes, prefix, at = nodes[split], prefix[split], at[split]
        if not nodes.size:
            break
        first = at[0]
        if (np.any(feature[at] != feature[first]) or np.any(threshold[at] != threshold[first])
                or np.any(dl[at] != dl[first]) or np.any(arrays["category_set"][at] >= 0)
                or len(split_levels) == MAX_DEPTH):
            return None
        split_levels.append((int(feature[first]), float(threshold[first]), int(dl[first])))
        nodes = np.concatenate([arrays["left_child"][at], arrays["right_child"][at]]).astype(np.int64)
        prefix = np.concatenate([2 * prefix, 2 * prefix + 1])
    return split_levels, leaves
