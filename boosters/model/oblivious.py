"""Leaf tables of oblivious (symmetric) forests for _oblivious.pyx: built from a forest's
checked flat arrays when every tree is symmetric (each level one numeric split: the same
feature, threshold and default side at every split node of the level), else None and
the general walk predicts. The whole forest is checked and tabled level by level in
NumPy (a few calls per level, not per tree)."""

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
    feature, threshold, dl = arrays["split_feature"], arrays["threshold"], arrays["default_left"]
    n_trees = len(offsets) - 1
    starts = np.asarray(offsets[:-1], dtype=np.int64)
    tree_of = np.repeat(np.arange(n_trees), np.diff(offsets))
    nodes, prefix = starts.copy(), np.zeros(n_trees, dtype=np.int64)  # every tree's level d, all at once
    levels, leaves = [], []  # per depth: (trees, their split), (leaf nodes, prefixes, depth)
    depth = 0
    while nodes.size:
        split = feature[nodes] >= 0
        leaves.append((nodes[~split], prefix[~split], depth))
        nodes, prefix = nodes[split], prefix[split]
        if not nodes.size:
            break
        trees, first, which = np.unique(tree_of[nodes], return_index=True, return_inverse=True)
        same = nodes[first][which]  # the first split node of the same tree's level
        if (depth == MAX_DEPTH or np.any(feature[nodes] != feature[same]) or np.any(threshold[nodes] != threshold[same])
                or np.any(dl[nodes] != dl[same]) or np.any(arrays["category_set"][nodes] >= 0)):
            return None
        levels.append((trees, nodes[first]))
        base = starts[tree_of[nodes]]
        nodes = np.concatenate([base + arrays["left_child"][nodes], base + arrays["right_child"][nodes]])
        prefix = np.concatenate([2 * prefix, 2 * prefix + 1])
        depth += 1
    tree_depth = np.zeros(n_trees, dtype=np.int64)
    for trees, _ in levels:
        tree_depth[trees] += 1
    table_start = np.concatenate([[0], np.cumsum(np.left_shift(1, tree_depth))]).astype(np.int64)
    if table_start[-1] > MAX_TABLE_PER_NODE * max(1, len(feature)):
        return None
    table = np.empty(int(table_start[-1]))
    for leaf, leaf_prefix, d in leaves:  # a leaf at depth d fills 2**(depth_t - d) entries
        t = tree_of[leaf]
        span = np.left_shift(1, tree_depth[t] - d)
        first = np.repeat(table_start[t] + leaf_prefix * span - (np.cumsum(span) - span), span)
        table[first + np.arange(int(span.sum()))] = np.repeat(arrays["value"][leaf], span)
    # the levels in tree order, each tree's from the top
    trees = np.concatenate([t for t, _ in levels]) if levels else np.zeros(0, dtype=np.int64)
    at = np.concatenate([n for _, n in levels]) if levels else np.zeros(0, dtype=np.int64)
    level_depth = np.concatenate([np.full(len(t), d) for d, (t, _) in enumerate(levels)]) if levels else at
    order = np.lexsort((level_depth, trees))
    at = at[order]
    level_start = np.concatenate([[0], np.cumsum(tree_depth)]).astype(np.int64)
    return ObliviousForest(feature[at].astype(np.int32), threshold[at].astype(np.float64), dl[at].astype(np.uint8),
                           level_start, table, table_start, np.ascontiguousarray(groups, dtype=np.int32))
