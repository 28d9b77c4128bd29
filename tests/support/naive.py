"""Naive NumPy twins of the optimized kernels: the tests compare the two."""

import numpy as np

from boosters._testing.kernels import leaf_scores, split_gains
from boosters.data.binned import BinnedMatrix


def naive_bins(X: np.ndarray, upper_edges: list[np.ndarray]) -> np.ndarray:
    """(n_rows, n_features) bins: 0 for NaN, else 1 + first edge index with x <= edge."""
    X = np.asarray(X, dtype=np.float64)
    out = np.zeros(X.shape, dtype=np.int64)
    for f, edges in enumerate(upper_edges):
        col = X[:, f]
        present = ~np.isnan(col)
        out[present, f] = 1 + np.searchsorted(edges, col[present], side="left")
    return out


def naive_histogram(binned: BinnedMatrix, gh: np.ndarray, rows=None) -> np.ndarray:
    """(total_bins, 2) float64 histogram of `rows` (all rows if None), rows added in order."""
    dense = binned.to_dense().astype(np.int64)
    rows = np.arange(binned.n_rows) if rows is None else np.asarray(rows)
    g = gh[rows].astype(np.float64)
    hist = np.zeros((binned.total_bins, 2))
    for f in range(binned.n_features):
        idx = binned.hist_offsets[f] + dense[rows, f]
        np.add.at(hist[:, 0], idx, g[:, 0])  # sequential, in row order: same sums as the kernel
        np.add.at(hist[:, 1], idx, g[:, 1])
    return hist


def binned_from_dense(dense: np.ndarray, n_bins) -> BinnedMatrix:
    """A BinnedMatrix holding the given (n_rows, n_features) integer bins."""
    dense = np.asarray(dense)
    binned = BinnedMatrix.allocate(dense.shape[0], np.asarray(n_bins))
    for f in range(dense.shape[1]):
        col = binned.feature_bins(f)
        col[:] = dense[:, f]
    return binned


def random_binned(rng, n_rows: int, n_bins) -> BinnedMatrix:
    n_bins = np.asarray(n_bins)
    dense = np.stack([rng.integers(0, b, size=n_rows) for b in n_bins], axis=1)
    return binned_from_dense(dense, n_bins)


def random_gradients(rng, n_rows: int) -> np.ndarray:
    gh = np.empty((n_rows, 2), dtype=np.float32)
    gh[:, 0] = rng.normal(size=n_rows)
    gh[:, 1] = rng.uniform(0.01, 1.0, size=n_rows)
    return gh


def naive_unpack(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(grad, hess) int64 of packed words, decoded from the documented packing alone:
    word = grad * 2**bits + hess with 0 <= hess < 2**bits, bits = 8, 16 or 32 for int16,
    int32 or int64 words (not with the library's unpack)."""
    bits = {np.dtype(np.int16): 8, np.dtype(np.int32): 16, np.dtype(np.int64): 32}[np.asarray(words).dtype]
    v = np.asarray(words).astype(np.int64)
    hess = np.mod(v, 2**bits)
    return (v - hess) // 2**bits, hess


def naive_packed_histogram(binned, packed, rows=None):
    """Integer (sum_grad, sum_hess) per bin of the rows' packed pairs."""
    q_g, q_h = naive_unpack(packed)
    dense = binned.to_dense().astype(np.int64)
    rows = np.arange(binned.n_rows) if rows is None else np.asarray(rows)
    g, h = np.zeros(binned.total_bins, np.int64), np.zeros(binned.total_bins, np.int64)
    for f in range(binned.n_features):
        idx = binned.hist_offsets[f] + dense[rows, f]
        np.add.at(g, idx, q_g[rows])
        np.add.at(h, idx, q_h[rows])
    return g, h


# --- row partition, split finding, prediction ---------------------------------------------


def dense_bins(rng, n_rows: int, n_bins, missing=0.1) -> np.ndarray:
    """(n_rows, n_features) random bins: value bins 1..n-1, bin 0 (missing) with
    probability `missing` (a scalar or one value per feature)."""
    n_bins = np.asarray(n_bins)
    missing = np.broadcast_to(np.asarray(missing, dtype=np.float64), n_bins.shape)
    cols = []
    for b, p in zip(n_bins, missing):
        col = rng.integers(1, b, size=n_rows)
        col[rng.random(n_rows) < p] = 0
        cols.append(col)
    return np.stack(cols, axis=1)


def naive_partition(feature_bins: np.ndarray, rows: np.ndarray, threshold_bin: int, default_left: bool):
    """(left_rows, right_rows): value bins 1..threshold_bin and (if default_left) the
    missing bin 0 go left; both sides keep the order of `rows`."""
    rows = np.asarray(rows)
    b = np.asarray(feature_bins, dtype=np.int64)[rows]
    left = ((b >= 1) & (b <= threshold_bin)) | ((b == 0) & bool(default_left))
    return rows[left], rows[~left]


def naive_best_split(hist, hist_offsets, n_bins, features, G, H, count, *, l1, l2,
                     min_child_weight, min_gain_to_split, min_samples_leaf):
    """Brute force over every (feature, threshold bin, missing direction) candidate.

    Returns None or (gain, feature, bin, default_left, has_missing, left_g, left_h).
    Candidates are listed in tie order (feature, bin, missing right before left) and the
    first maximum wins; prefix sums are sequential (np.cumsum) so equal partitions
    (e.g. across an empty bin) give equal gains. The gain formula is the library's one
    (_gain.pxd, through boosters._testing): this reference checks the enumeration,
    the missing directions, the constraints and the ties, not the formula.
    """
    if H <= 0:
        return None
    parent = float(leaf_scores(G, H, l1, l2))
    best_gain, best = 0.0, None
    for f in sorted(int(f) for f in features):
        fh = np.asarray(hist[hist_offsets[f]:hist_offsets[f] + n_bins[f]], dtype=np.float64)
        gm, hm = fh[0]
        has_missing = bool(gm != 0.0 or hm != 0.0)
        cg, ch = np.cumsum(fh[1:, 0]), np.cumsum(fh[1:, 1])
        n_value = n_bins[f] - 1
        cand = []  # (bin, default_left, G_left, H_left) in tie order
        for b in range(1, n_value + 1):
            for dl in (False, True):
                if dl and not has_missing:
                    continue
                right_has_bins = b < n_value or (has_missing and not dl)
                if not right_has_bins:
                    continue
                cand.append((b, dl, cg[b - 1] + gm if dl else cg[b - 1], ch[b - 1] + hm if dl else ch[b - 1]))
        if not cand:
            continue
        bins = np.array([c[0] for c in cand])
        dls = np.array([c[1] for c in cand])
        gl = np.array([c[2] for c in cand], dtype=np.float64)
        hl = np.array([c[3] for c in cand], dtype=np.float64)
        hr = H - hl
        gr = G - gl
        cl = np.floor(hl * count / H + 0.5)
        valid = ((hl >= min_child_weight) & (hr >= min_child_weight)
                 & (cl >= min_samples_leaf) & (count - cl >= min_samples_leaf))
        gain = split_gains(gl, hl, gr, hr, parent, l1, l2, min_gain_to_split)
        gain = np.where(valid, gain, -np.inf)
        k = int(np.argmax(gain))  # first maximum: lowest bin, then missing right
        if gain[k] > best_gain:
            best_gain = float(gain[k])
            best = (best_gain, f, int(bins[k]), bool(dls[k]), has_missing, float(gl[k]), float(hl[k]))
    return best


def naive_goes_left(tree, node: int, x) -> bool:
    """The split rule as prediction applies it to row `x` at `node`: a categorical split
    takes the value truncated toward zero as its code (2.5 is code 2, -0.5 code 0, as
    LightGBM and XGBoost) and sends the codes of its set left, NaN, codes below 0 and codes
    past its words the default way; a numeric split x <= threshold, NaN the default way."""
    v = x[tree.split_feature[node]]
    s = tree.category_set[node]
    if s >= 0:
        words = tree.cat_bitsets[tree.cat_boundaries[s]:tree.cat_boundaries[s + 1]]
        if np.isnan(v) or v <= -1 or v >= 32 * len(words):
            return bool(tree.default_left[node])
        code = int(v)
        return bool((int(words[code >> 5]) >> (code & 31)) & 1)
    if np.isnan(v):
        return bool(tree.default_left[node])
    return bool(v <= tree.threshold[node])


def naive_leaf(tree, x) -> int:
    """Walk one row down one tree, one node at a time (the rule of model/_predict.pyx)."""
    node = 0
    while tree.split_feature[node] >= 0:
        node = tree.left_child[node] if naive_goes_left(tree, node, x) else tree.right_child[node]
    return node


def naive_predict_tree(tree, X: np.ndarray) -> np.ndarray:
    """One tree's value for every row by plain traversal (all rows step together): NaN
    follows default_left, else x <= threshold goes left (the comparison in float64)."""
    X = np.asarray(X)
    n = X.shape[0]
    rows = np.arange(n)
    node = np.zeros(n, dtype=np.int64)
    while True:
        f = tree.split_feature[node].astype(np.int64)
        internal = f >= 0
        if not internal.any():
            break
        r, nd = rows[internal], node[internal]
        x = X[r, f[internal]].astype(np.float64)
        go_left = np.where(np.isnan(x), tree.default_left[nd] != 0, x <= tree.threshold[nd])
        node[internal] = np.where(go_left, tree.left_child[nd], tree.right_child[nd])
    return tree.value[node].astype(np.float64)


def naive_predict_forest(trees, groups, base_scores, n_groups: int, X: np.ndarray) -> np.ndarray:
    """(n_rows, n_groups): base score, then each tree's value added in tree order."""
    out = np.zeros((X.shape[0], n_groups), dtype=np.float64)
    out += np.asarray(base_scores, dtype=np.float64)
    for tree, g in zip(trees, groups):
        out[:, g] += naive_predict_tree(tree, X)
    return out
