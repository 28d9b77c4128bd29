"""A plain NumPy gradient boosting trainer: the reference for boosters' growth loop.

Written from RFC-0008 and the documented rules, sharing no code with the library:

- bins: pre-binned data only. Each distinct non-NaN value of a feature is a value bin
  (1, 2, ... in increasing order), bin 0 holds the missing values; so a feature needs
  fewer distinct values than `max_bins`.
- gradients: squared error g = w (f - y), h = w; logistic g = w (p - y),
  h = w max(p (1 - p), 1e-16); softmax g_k = w (p_k - [y = k]), h_k = w K/(K-1) p_k (1 - p_k);
  rounded to float32 (the library keeps gradients in float32).
- gain of a split: 1/2 [S(G_L, H_L) + S(G_R, H_R) - S(G, H)] - min_gain_to_split with
  S(G, H) = T(G)^2 / (H + l2) and T the L1 soft threshold. A split is valid when its gain
  is > 0, both children have H >= min_child_weight and both children's estimated row
  counts are >= min_samples_leaf; the left count is estimated from hessians,
  floor(H_L * count / H + 1/2), the right one is count minus that.
- candidates: "value bins 1..b go left". When the node has rows with a missing value of
  the feature, each b is tried with those rows right and left ("all values left, missing
  right" included); otherwise b < the last value bin. Ties keep the lowest feature, then
  the lowest bin, then missing-right.
- a node may be split when depth < max_depth and it has >= max(2, 2 min_samples_leaf) rows.
  Depth-wise: every splittable node of a level, in node order. Leaf-wise: the leaf with
  the largest gain (ties: lowest node id) until n_leaves leaves. Children are numbered in
  the order they are made: left, then right.
- default direction of missing values: the learned one where the node had missing values
  of the split feature, else the child with more rows (left on a tie).
- leaf value (every node): -T(G) / (H + l2) * learning_rate.
- categorical features (Params.categorical): code c is bin c + 1, bin 0 missing; a
  candidate is a set of bins going left. Per bin, rows are floor(H_bin * count / H + 1/2);
  bins with no row take no part. At most max_onehot_cats categories: each bin alone
  left. Otherwise the bins with >= cat_smooth rows, sorted by (G / (H + cat_smooth),
  bin), the first i + 1 from either end (ascending first) for i below max_cat_threshold
  and (used + 1) // 2: skipped while the left side is short of rows or hessian, stopped
  once the right side is short of rows, of min_data_per_group rows or of hessian, skipped
  while fewer than min_data_per_group rows were added since the last tried split; the
  children are scored with l2 + cat_l2. Missing values go left iff bin 0 is in the set.

Node sums G, H are summed directly over each node's rows, in row order; the library
gets them from histograms (bin sums, the subtraction trick), so they agree to float64
rounding, not bit for bit.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

MIN_HESSIAN = 1e-16


@dataclass
class Params:
    objective: str = "squared"        # "squared", "logistic" or "softmax"
    n_classes: int = 1                # softmax only
    leafwise: bool = False
    max_depth: int | None = 6         # None: no limit
    n_leaves: int = 31                # leaf-wise only
    learning_rate: float = 0.3
    l1: float = 0.0
    l2: float = 1.0
    min_gain_to_split: float = 0.0
    min_child_weight: float = 1.0
    min_samples_leaf: int = 1
    # LightGBM's shortcut (SerialTreeLearner::FindBestSplits): a feature without a valid
    # split in a node is not tried in the node's descendants. boosters tries every
    # feature in every node, and finds splits LightGBM misses where a feature gains
    # nothing in a node (l1, min_gain_to_split, or a gain that rounds to <= 0) but does
    # in a child.
    skip_features_unsplittable_in_parent: bool = False
    # categorical features (LightGBM's rules, see the module notes)
    categorical: tuple = ()
    max_onehot_cats: int = 4
    cat_smooth: float = 10.0
    cat_l2: float = 10.0
    max_cat_threshold: int = 32
    min_data_per_group: int = 100


@dataclass
class Node:
    rows: np.ndarray
    depth: int
    G: float
    H: float
    feature: int = -1
    bin: int = 0
    default_left: bool = False
    left: int = -1
    right: int = -1
    gain: float = 0.0
    best: tuple | None = field(default=None, repr=False)  # (gain, feature, bin, default_left, left bins or None)
    left_bins: frozenset | None = None  # categorical split: the bins going left
    features: list | None = field(default=None, repr=False)  # those tried; None: all
    splittable: list | None = field(default=None, repr=False)  # those with a valid split


# -- data ---------------------------------------------------------------------------

def prebin(X: np.ndarray, categorical=()) -> tuple[np.ndarray, list[np.ndarray]]:
    """(bins (n_rows, n_features), per feature its sorted distinct non-NaN values; a
    categorical feature's values are its codes 0..max, bin c + 1 for code c)."""
    bins = np.zeros(X.shape, dtype=np.int64)
    values = []
    for f in range(X.shape[1]):
        col = X[:, f]
        present = ~np.isnan(col)
        if f in categorical:
            bins[present, f] = col[present].astype(np.int64) + 1
            values.append(np.arange(int(col[present].max()) + 1 if present.any() else 0, dtype=np.float64))
            continue
        distinct = np.unique(col[present])
        bins[present, f] = 1 + np.searchsorted(distinct, col[present])
        values.append(distinct)
    return bins, values


def threshold_value(values: np.ndarray, b: int) -> float:
    """The raw threshold of "value bins 1..b go left": the midpoint between the b-th and
    the next distinct value, +inf after the last one."""
    return float(values[b - 1] / 2 + values[b] / 2) if b < len(values) else float("inf")


# -- objectives ---------------------------------------------------------------------------

def base_scores(objective: str, y: np.ndarray, w: np.ndarray, n_classes: int = 1) -> np.ndarray:
    """The optimal constant margins."""
    if objective == "squared":
        return np.array([np.sum(w * y) / np.sum(w)])
    if objective == "logistic":
        p = np.clip(np.sum(w * y) / np.sum(w), 1e-15, 1 - 1e-15)
        return np.array([np.log(p / (1 - p))])
    prior = np.array([np.sum(w[y == k]) for k in range(n_classes)]) / np.sum(w)
    return np.log(np.maximum(prior, 1e-15))


def gradients(objective: str, margins: np.ndarray, y: np.ndarray, w: np.ndarray) -> list[tuple]:
    """Per output: (g, h) as float32 values held in float64. margins: (n_rows, n_outputs)."""
    def f32(a):
        return a.astype(np.float32).astype(np.float64)

    if objective == "squared":
        return [(f32(w * (margins[:, 0] - y)), f32(w))]
    if objective == "logistic":
        p = 1.0 / (1.0 + np.exp(-margins[:, 0]))
        return [(f32(w * (p - y)), f32(w * np.maximum(p * (1 - p), MIN_HESSIAN)))]
    k = margins.shape[1]
    e = np.exp(margins - margins.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return [(f32(w * (p[:, c] - (y == c))), f32(w * np.maximum(k / (k - 1) * p[:, c] * (1 - p[:, c]), MIN_HESSIAN)))
            for c in range(k)]


# -- one split ------------------------------------------------------------------------------

def soft_threshold(G, l1):
    return np.sign(G) * np.maximum(np.abs(G) - l1, 0.0)


def score(G, H, p: Params):
    """T(G)^2 / (H + l2), 0 where H + l2 <= 0."""
    denom = H + p.l2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, soft_threshold(G, p.l1) ** 2 / denom, 0.0)


def leaf_value(G, H, p: Params) -> float:
    denom = H + p.l2
    return float(-soft_threshold(G, p.l1) / denom * p.learning_rate) if denom > 0 else 0.0


def candidate_gains(GL, HL, G, H, count, p: Params) -> np.ndarray:
    """Gain of each candidate with left sums (GL, HL); -inf where it is not valid."""
    GR, HR = G - GL, H - HL
    gain = 0.5 * (score(GL, HL, p) + score(GR, HR, p) - score(G, H, p)) - p.min_gain_to_split
    rows_left = np.floor(HL * (count / H) + 0.5)
    valid = ((gain > 0) & (HL >= p.min_child_weight) & (HR >= p.min_child_weight)
             & (rows_left >= p.min_samples_leaf) & (count - rows_left >= p.min_samples_leaf))
    return np.where(valid, gain, -np.inf)


def best_split(bins, g, h, rows, n_value_bins, G, H, p: Params, features=None):
    """((gain, feature, bin, default_left) of the node's best split or None, the
    features that have a valid split)."""
    best = None
    splittable = []
    count = len(rows)
    if H <= 0:
        return None, splittable
    for f in range(len(n_value_bins)) if features is None else features:
        n_values = n_value_bins[f]
        node_bins = bins[rows, f]
        if f in p.categorical:
            candidate = best_categorical_split(node_bins, g[rows], h[rows], n_values + 1, G, H, p)
            if candidate is not None:
                splittable.append(f)
                if best is None or candidate[0] > best[0]:
                    best = (candidate[0], f, 0, 0 in candidate[1], candidate[1])
            continue
        hist_g = np.bincount(node_bins, weights=g[rows], minlength=n_values + 1)
        hist_h = np.bincount(node_bins, weights=h[rows], minlength=n_values + 1)
        # left sums of "value bins 1..b go left", b = 1..n_values
        cum_g, cum_h = np.cumsum(hist_g[1:]), np.cumsum(hist_h[1:])
        has_missing = bool(np.any(node_bins == 0))
        directions = [(False, 0.0, 0.0, n_values if has_missing else n_values - 1)]
        if has_missing:
            directions.append((True, hist_g[0], hist_h[0], n_values - 1))
        for missing_left, gm, hm, n_candidates in directions:  # missing-right first: it wins ties
            if n_candidates <= 0:
                continue
            gains = candidate_gains(gm + cum_g[:n_candidates], hm + cum_h[:n_candidates], G, H, count, p)
            b = int(np.argmax(gains))  # the first maximum: the lowest bin
            if not np.isfinite(gains[b]):
                continue
            if f not in splittable:
                splittable.append(f)
            candidate = (float(gains[b]), f, b + 1, missing_left, None)
            # strict >: an equal gain keeps the earlier feature; within a feature the lower bin
            if best is None or candidate[0] > best[0] or (
                    candidate[0] == best[0] and candidate[1] == best[1] and candidate[2] < best[2]):
                best = candidate
    return best, splittable


def best_categorical_split(node_bins, g, h, n_bins, G, H, p: Params):
    """(gain, frozenset of bins going left) of a categorical feature's best split in a
    node, or None (the rules are in the module notes)."""
    count = len(node_bins)
    hist_g = np.bincount(node_bins, weights=g, minlength=n_bins)
    hist_h = np.bincount(node_bins, weights=h, minlength=n_bins)
    rows = np.floor(hist_h * (count / H) + 0.5)
    parent = score(G, H, p)
    children_p = Params(l1=p.l1, l2=p.l2 + p.cat_l2)

    def gain(gl, hl, children):
        return float(0.5 * (score(gl, hl, children) + score(G - gl, H - hl, children) - parent) - p.min_gain_to_split)

    best = None
    present = [b for b in range(n_bins) if rows[b] >= 1]
    if n_bins - 1 <= p.max_onehot_cats:
        for b in present:
            if (rows[b] < p.min_samples_leaf or hist_h[b] < p.min_child_weight
                    or count - rows[b] < p.min_samples_leaf or H - hist_h[b] < p.min_child_weight):
                continue
            value = gain(hist_g[b], hist_h[b], p)
            if value > 0 and (best is None or value > best[0]):
                best = (value, frozenset([b]))
        return best
    used = sorted((b for b in present if rows[b] >= p.cat_smooth),
                  key=lambda b: (hist_g[b] / (hist_h[b] + p.cat_smooth), b))
    n_scan = min(p.max_cat_threshold, (len(used) + 1) // 2)
    for order in (used, used[::-1]):
        gl = hl = left_rows = group = 0.0
        for i in range(min(n_scan, len(order))):
            b = order[i]
            gl, hl = gl + hist_g[b], hl + hist_h[b]
            left_rows, group = left_rows + rows[b], group + rows[b]
            if left_rows < p.min_samples_leaf or hl < p.min_child_weight:
                continue
            right_rows = count - left_rows
            if right_rows < p.min_samples_leaf or right_rows < p.min_data_per_group or H - hl < p.min_child_weight:
                break
            if group < p.min_data_per_group:
                continue
            group = 0.0
            value = gain(gl, hl, children_p)
            if value > 0 and (best is None or value > best[0]):
                best = (value, frozenset(order[:i + 1]))
    return best


# -- one tree ----------------------------------------------------------------------------------

class NaiveTree:
    """Nodes in creation order, as arrays named like boosters' Tree."""

    def __init__(self, nodes: list[Node], g: np.ndarray, p: Params):
        self.nodes = nodes
        self.split_feature = np.array([n.feature for n in nodes])
        self.threshold_bin = np.array([n.bin for n in nodes])
        self.default_left = np.array([int(n.default_left) for n in nodes])
        self.left_child = np.array([n.left for n in nodes])
        self.right_child = np.array([n.right for n in nodes])
        self.gain = np.array([n.gain for n in nodes])
        self.cover = np.array([n.H for n in nodes])
        self.n_samples = np.array([len(n.rows) for n in nodes])
        self.value = np.array([leaf_value(n.G, n.H, p) for n in nodes])
        # what float64 rounding of the sums is relative to: sum |g| per node
        self.abs_grad = np.array([float(np.abs(g[n.rows]).sum()) for n in nodes])

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    def leaf_of_rows(self, n_rows: int) -> np.ndarray:
        out = np.full(n_rows, -1)
        for i, node in enumerate(self.nodes):
            if node.feature < 0:
                out[node.rows] = i
        return out


def grow_tree(bins, n_value_bins, g, h, p: Params) -> NaiveTree:
    rows = np.arange(len(g))
    nodes = [Node(rows, 0, _row_sum(g, rows), _row_sum(h, rows))]
    min_rows = max(2, 2 * p.min_samples_leaf)

    def evaluate(i):
        node = nodes[i]
        deep_enough = p.max_depth is not None and node.depth >= p.max_depth
        if not deep_enough and len(node.rows) >= min_rows:
            node.best, node.splittable = best_split(bins, g, h, node.rows, n_value_bins, node.G, node.H, p,
                                                    node.features)

    def split(i):
        node = nodes[i]
        node.gain, node.feature, node.bin, missing_left, node.left_bins = node.best
        b = bins[node.rows, node.feature]
        goes_left = ((b >= 1) & (b <= node.bin)) | ((b == 0) & missing_left)
        if node.left_bins is not None:
            goes_left = np.isin(b, list(node.left_bins))
        left_rows, right_rows = node.rows[goes_left], node.rows[~goes_left]
        has_missing = bool(np.any(b == 0))
        node.default_left = missing_left if has_missing else len(left_rows) >= len(right_rows)
        node.left, node.right = len(nodes), len(nodes) + 1
        features = node.splittable if p.skip_features_unsplittable_in_parent else None
        for child_rows in (left_rows, right_rows):
            nodes.append(Node(child_rows, node.depth + 1, _row_sum(g, child_rows), _row_sum(h, child_rows),
                              features=features))
        return node.left, node.right

    evaluate(0)
    if p.leafwise:
        heap = [(-nodes[0].best[0], 0)] if nodes[0].best else []
        n_leaves = 1
        while heap and n_leaves < p.n_leaves:
            _, i = heapq.heappop(heap)  # largest gain; ties: lowest node id
            n_leaves += 1
            for child in split(i):
                if n_leaves < p.n_leaves:  # children of the last split stay leaves
                    evaluate(child)
                    if nodes[child].best:
                        heapq.heappush(heap, (-nodes[child].best[0], child))
    else:
        level = [0]
        while level:
            next_level = []
            for i in level:
                if nodes[i].best:
                    next_level.extend(split(i))
            for child in next_level:
                evaluate(child)
            level = next_level
    return NaiveTree(nodes, g, p)


def _row_sum(a, rows) -> float:
    """Sum in row order (np.sum would add pairwise)."""
    return float(np.cumsum(a[rows])[-1]) if len(rows) else 0.0


# -- boosting ----------------------------------------------------------------------------------

def train(X, y, p: Params, n_rounds: int, weights=None):
    """(base scores, trees in boosting order (softmax: one per class per round),
    training margins (n_rows, n_outputs))."""
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    bins, values = prebin(np.asarray(X, dtype=np.float64), p.categorical)
    n_value_bins = [len(v) for v in values]
    base = base_scores(p.objective, y, w, p.n_classes)
    margins = np.tile(base, (len(y), 1))
    trees = []
    for _ in range(n_rounds):
        per_output = gradients(p.objective, margins, y, w)
        for k, (g, h) in enumerate(per_output):
            tree = grow_tree(bins, n_value_bins, g, h, p)
            trees.append(tree)
            margins[:, k] += tree.value[tree.leaf_of_rows(len(y))]
    return base, trees, margins, values
