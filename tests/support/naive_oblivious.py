"""A plain NumPy trainer of oblivious (symmetric) trees: the reference for
growth_strategy="oblivious". Bins, gradients, the gain formula and leaf values are
naive_grower's; only the choice of splits differs, written from the documented rules:

- a level's nodes: those of one depth that may be split (depth < max_depth, at least
  max(2, 2 min_samples_leaf) rows, H > 0), in creation order.
- a candidate (feature f, "value bins 1..b go left", missing side) scores the sum over
  the level's nodes of the node's gain where the candidate is valid there (both children
  with H >= min_child_weight and >= min_samples_leaf estimated rows), 0 elsewhere. Per
  feature: b = 1..n_values with missing values right, b = 1..n_values - 1 with them
  left; a node without missing values of f scores both sides alike.
- the level's split is the candidate of the largest sum, if it is > 0 (else the tree
  stops growing); ties keep the lowest feature, then bin, then missing-right. It splits
  every node of the level where it is valid (whatever that node's own gain); the others
  stay leaves.
- a categorical feature (Params.categorical; code c is bin c + 1, bin 0 missing): its
  candidates are its bins b, each alone going left (whatever max_onehot_cats), ordered
  by b; a node's rows of b are floor(H_b * count / H + 1/2), and a b without rows
  there is invalid there (as naive_grower's one-hot rule, without gain > 0).
- default direction, at every node of the level: the learned side (categorical: left
  iff b = 0) where some node the split applies to has missing values of f, else the
  side that holds more of the level's rows (left on a tie).
"""

from __future__ import annotations

import numpy as np

from . import naive_grower as naive


def node_gains(GL, HL, G, H, count, p: naive.Params) -> np.ndarray:
    """A node's gain of each candidate with left sums (GL, HL); -inf where invalid (no
    gain > 0 asked: a level's split needs a positive sum only)."""
    GR, HR = G - GL, H - HL
    gain = 0.5 * (naive.score(GL, HL, p) + naive.score(GR, HR, p) - naive.score(G, H, p)) - p.min_gain_to_split
    rows_left = np.floor(HL * (count / H) + 0.5)
    valid = ((HL >= p.min_child_weight) & (HR >= p.min_child_weight)
             & (rows_left >= p.min_samples_leaf) & (count - rows_left >= p.min_samples_leaf))
    return np.where(valid, gain, -np.inf)


def _node_candidates(bins, g, h, node, f, n_values, p):
    """{missing_left: the node's gains of b = 1..n_values}, and whether it has missing values."""
    node_bins = bins[node.rows, f]
    hist_g = np.bincount(node_bins, weights=g[node.rows], minlength=n_values + 1)
    hist_h = np.bincount(node_bins, weights=h[node.rows], minlength=n_values + 1)
    cum_g, cum_h = np.cumsum(hist_g[1:]), np.cumsum(hist_h[1:])
    has_missing = bool(np.any(node_bins == 0))
    out = {}
    for missing_left in (False, True):
        gm, hm = (hist_g[0], hist_h[0]) if missing_left and has_missing else (0.0, 0.0)
        out[missing_left] = node_gains(gm + cum_g, hm + cum_h, node.G, node.H, len(node.rows), p)
    return out, has_missing


def _node_categories(bins, g, h, node, f, n_values, p):
    """The node's gain of each bin alone going left (-inf where invalid), and whether
    it has missing values."""
    node_bins = bins[node.rows, f]
    count, G, H = len(node.rows), node.G, node.H
    hist_g = np.bincount(node_bins, weights=g[node.rows], minlength=n_values + 1)
    hist_h = np.bincount(node_bins, weights=h[node.rows], minlength=n_values + 1)
    rows = np.floor(hist_h * (count / H) + 0.5)
    gain = 0.5 * (naive.score(hist_g, hist_h, p) + naive.score(G - hist_g, H - hist_h, p)
                  - naive.score(G, H, p)) - p.min_gain_to_split
    valid = ((rows >= 1) & (rows >= p.min_samples_leaf) & (hist_h >= p.min_child_weight)
             & (count - rows >= p.min_samples_leaf) & (H - hist_h >= p.min_child_weight))
    return np.where(valid, gain, -np.inf), bool(rows[0] >= 1)


def level_split(bins, g, h, level, n_value_bins, p):
    """(summed gain, feature, bin, missing_left) of a level's split, or None (categorical:
    bin is the category's, missing_left None)."""
    best = None
    for f, n_values in enumerate(n_value_bins):
        if f in p.categorical:
            total = np.zeros(n_values + 1)
            for node in level:
                gains, _ = _node_categories(bins, g, h, node, f, n_values, p)
                total += np.where(np.isfinite(gains), gains, 0.0)
            for b in range(n_values + 1):
                if total[b] > 0 and (best is None or total[b] > best[0]):
                    best = (float(total[b]), f, b, None)
            continue
        if n_values < 1:
            continue
        totals = {False: np.zeros(n_values), True: np.zeros(n_values)}
        for node in level:
            gains, _ = _node_candidates(bins, g, h, node, f, n_values, p)
            for side in (False, True):
                totals[side] += np.where(np.isfinite(gains[side]), gains[side], 0.0)
        for b in range(1, n_values + 1):
            for side in (False, True):
                if side and b == n_values:
                    continue
                total = totals[side][b - 1]
                if total > 0 and (best is None or total > best[0]):
                    best = (float(total), f, b, side)
    return best


def grow_tree(bins, n_value_bins, g, h, p: naive.Params) -> naive.NaiveTree:
    rows = np.arange(len(g))
    nodes = [naive.Node(rows, 0, naive._row_sum(g, rows), naive._row_sum(h, rows))]
    min_rows = max(2, 2 * p.min_samples_leaf)
    level = [0]
    while level:
        level = [i for i in level if nodes[i].depth < p.max_depth and len(nodes[i].rows) >= min_rows
                 and nodes[i].H > 0]
        split = level_split(bins, g, h, [nodes[i] for i in level], n_value_bins, p) if level else None
        if split is None:
            break
        _, f, b, missing_left = split
        categorical = missing_left is None
        parents, any_missing = [], False
        for i in level:
            node = nodes[i]
            if categorical:
                gains, has_missing = _node_categories(bins, g, h, node, f, n_value_bins[f], p)
                gain = gains[b]
            else:
                gains, has_missing = _node_candidates(bins, g, h, node, f, n_value_bins[f], p)
                gain = gains[missing_left][b - 1]
            if np.isfinite(gain):
                node.feature, node.bin, node.gain = f, 0 if categorical else b, float(gain)
                node.left_bins = frozenset([b]) if categorical else None
                parents.append(i)
                any_missing = any_missing or has_missing
        if categorical:
            missing_left = b == 0
        n_left = n_right = 0
        next_level = []
        for i in parents:
            node = nodes[i]
            nb = bins[node.rows, f]
            goes_left = nb == b if categorical else ((nb >= 1) & (nb <= b)) | ((nb == 0) & missing_left)
            node.left, node.right = len(nodes), len(nodes) + 1
            for child_rows in (node.rows[goes_left], node.rows[~goes_left]):
                nodes.append(naive.Node(child_rows, node.depth + 1, naive._row_sum(g, child_rows),
                                        naive._row_sum(h, child_rows)))
            n_left += int(goes_left.sum())
            n_right += int((~goes_left).sum())
            next_level += [node.left, node.right]
        for i in parents:
            nodes[i].default_left = missing_left if any_missing else n_left >= n_right
        level = next_level
    return naive.NaiveTree(nodes, g, p)


def train(X, y, p: naive.Params, n_rounds: int, weights=None):
    """naive_grower.train with oblivious trees: (base scores, trees, training margins,
    bin values)."""
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    bins, values = naive.prebin(np.asarray(X, dtype=np.float64), p.categorical)
    n_value_bins = [len(v) for v in values]
    base = naive.base_scores(p.objective, y, w, p.n_classes)
    margins = np.tile(base, (len(y), 1))
    trees = []
    for _ in range(n_rounds):
        for k, (g, h) in enumerate(naive.gradients(p.objective, margins, y, w)):
            tree = grow_tree(bins, n_value_bins, g, h, p)
            trees.append(tree)
            margins[:, k] += tree.value[tree.leaf_of_rows(len(y))]
    return base, trees, margins, values
