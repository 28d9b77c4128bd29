"""SHAP values and SHAP interaction values of a forest: exact path-dependent TreeSHAP
(the kernels are in `_shap.pyx`), with the node covers (hessian sums) as the weights of
the data the trees saw, like XGBoost's `pred_contribs` / `pred_interactions` and
LightGBM's `pred_contrib`.

The kernels run without the GIL, so Python can only act on Ctrl-C between calls: rows
go through them in blocks of about `SHAP_BLOCK_WORK` units of work (~0.1 s each).
"""

from __future__ import annotations

import numpy as np

from boosters._lib.memory import require_memory
from boosters.explain._shap import ShapForest
from boosters.explain._shap import shap_interaction_values as _interaction_kernel
from boosters.explain._shap import shap_values as _shap_kernel
from boosters.model.forest import Forest
from boosters.model.prediction import check_sparse_input, row_blocks

__all__ = ["shap_values", "shap_interaction_values"]

SHAP_BLOCK_WORK = 1 << 24  # path updates per kernel call (a path update: a few ns)
_MIN_BLOCK_ROWS = 256
# the walk recurses once per level and keeps (depth + 1) path elements per level: 32 bytes x
# 1025 x 1026 / 2, about 17 MB a thread, and 1024 C stack frames, at this depth
MAX_SHAP_DEPTH = 1024


def shap_values(forest: Forest, X, n_threads: int) -> np.ndarray:
    """Exact SHAP values of a forest (path-dependent TreeSHAP); `GBDTModel.shap_values`
    is the user-facing form.

    Parameters
    ----------
    forest : Forest
        The trees (their covers weight the branches of unknown features).
    X : numpy.ndarray or scipy.sparse matrix
        float32/float64 feature matrix with the forest's features (already coded as the
        model's `_features` does); NaN is missing.
    n_threads : int
        Threads to use, >= 1 (see `boosters._lib.threads.effective_n_threads`).

    Returns
    -------
    numpy.ndarray
        float64 (n_rows, n_groups, n_features + 1): per output group, each feature's
        contribution and, last, the bias (the expected margin). A row sums to its margin.

    Examples
    --------
    >>> import numpy as np
    >>> import boosters as bst
    >>> from boosters.explain.shap import shap_values
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5))
    >>> values = shap_values(model.forest, X[:3], n_threads=1)
    >>> values.shape
    (3, 1, 3)
    >>> bool(np.allclose(values.sum(axis=2)[:, 0], model.predict_raw(X[:3])))
    True
    """
    refuse_linear_leaves(forest)
    n_rows, n_features = X.shape
    out = np.zeros((n_rows, forest.n_groups, n_features + 1), dtype=np.float64)
    out[:, :, n_features] = forest.base_scores
    if forest.n_trees == 0:
        return out
    shap_forest = _shap_forest(forest, X)
    out[:, :, n_features] += _expected_margins(forest, shap_forest)
    paths = np.zeros((n_threads, shap_forest.path_bytes()), dtype=np.uint8)
    rows = np.zeros((n_threads, n_features), dtype=np.float64)
    work = _row_work(forest, shap_forest)
    for start, block in _row_blocks(X, work, n_threads):
        _shap_kernel(shap_forest, block, out[start:start + block.shape[0]], paths, rows, n_threads)
    return out


def shap_interaction_values(forest: Forest, X, n_threads: int) -> np.ndarray:
    """Exact SHAP interaction values of a forest; `GBDTModel.shap_interaction_values` is
    the user-facing form.

    Parameters
    ----------
    forest : Forest
        The trees.
    X : numpy.ndarray or scipy.sparse matrix
        As in `shap_values`.
    n_threads : int
        Threads to use, >= 1.

    Returns
    -------
    numpy.ndarray
        float64 (n_rows, n_groups, n_features + 1, n_features + 1), laid out as XGBoost's
        `pred_interactions`: entry [i, j] (i != j) is half of the pair's interaction
        effect (the matrix is symmetric), [i, i] feature i's main effect, the bias at
        [n_features, n_features]; summed over the last axis, a row gives its SHAP values.

    Examples
    --------
    >>> import numpy as np
    >>> import boosters as bst
    >>> from boosters.explain.shap import shap_interaction_values, shap_values
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0] * X[:, 1]), bst.GBDTConfig(n_estimators=5))
    >>> inter = shap_interaction_values(model.forest, X[:3], n_threads=1)
    >>> inter.shape
    (3, 1, 3, 3)
    >>> bool(np.allclose(inter.sum(axis=3), shap_values(model.forest, X[:3], n_threads=1)))
    True
    """
    refuse_linear_leaves(forest)
    n_rows, n_features = X.shape
    width = n_features + 1
    require_memory(n_rows * forest.n_groups * width * width * 8,
                   f"shap_interaction_values of {n_rows} rows x {forest.n_groups} output(s) x {width} x {width} "
                   f"(float64)", "pass fewer rows at a time")
    out = np.zeros((n_rows, forest.n_groups, width, width), dtype=np.float64)
    out[:, :, n_features, n_features] = forest.base_scores
    if forest.n_trees == 0:
        return out
    shap_forest = _shap_forest(forest, X)
    out[:, :, n_features, n_features] += _expected_margins(forest, shap_forest)
    offsets, features = _tree_features(forest.flat())
    paths = np.zeros((n_threads, shap_forest.path_bytes()), dtype=np.uint8)
    rows = np.zeros((n_threads, n_features), dtype=np.float64)
    phis = np.zeros((n_threads, forest.n_groups + 2, width), dtype=np.float64)
    # a tree's walk repeats twice per distinct feature it splits on
    work = _row_work(forest, shap_forest) * (1 + 2 * len(features) / forest.n_trees) + forest.n_groups * width ** 2
    if len(features) == 0:  # stumps only: the kernel reads through the first element
        features = np.zeros(1, dtype=np.int32)
    for start, block in _row_blocks(X, work, n_threads):
        _interaction_kernel(shap_forest, block, out[start:start + block.shape[0]], offsets, features,
                            paths, rows, phis, n_threads)
    return out


def refuse_linear_leaves(forest: Forest) -> None:
    """TreeSHAP explains constant leaves: a linear leaf's output also moves with its features."""
    if forest.is_linear:
        raise ValueError("SHAP values of a model with linear leaves (linear_leaves=True) are not supported: "
                         "TreeSHAP assumes constant leaf values")


def _shap_forest(forest: Forest, X) -> ShapForest:
    """The kernels' view of the forest, after checking X against it (as prediction does)."""
    flat = forest.flat()
    a = flat.arrays
    n_features = X.shape[1]
    check_sparse_input(X, flat.categories)  # prediction refuses it: no SHAP values of margins it cannot give
    if flat.n_features > n_features:
        raise ValueError(f"X has {n_features} features but the trees split on feature {flat.n_features - 1}")
    cover = checked_covers(flat)
    categories = None if flat.categories is None else (a["category_set"], *flat.categories)
    shap_forest = ShapForest(a["split_feature"], a["threshold"], a["default_left"], a["left_child"],
                             a["right_child"], a["value"], cover, flat.tree_offsets, flat.tree_group, categories)
    if shap_forest.max_depth > MAX_SHAP_DEPTH:
        raise ValueError(f"SHAP values support trees up to depth {MAX_SHAP_DEPTH}; this forest has a tree of depth "
                         f"{shap_forest.max_depth}")
    return shap_forest


def checked_covers(flat) -> np.ndarray:
    """The covers TreeSHAP weighs the branches with (`leaf_roundoff_as_zero`); ValueError
    naming the first node whose cover cannot be such a weight."""
    split = flat.arrays["split_feature"] >= 0
    cover = leaf_roundoff_as_zero(flat.arrays["cover"], split, flat.tree_offsets)
    bad = ~np.isfinite(cover) | (cover < 0) | (split & (cover <= 0))
    if np.any(bad):
        node = int(np.flatnonzero(bad)[0])
        tree = int(np.searchsorted(flat.tree_offsets, node, side="right")) - 1
        raise ValueError(f"SHAP values need the trees' covers: tree {tree}, node {node - flat.tree_offsets[tree]} "
                         f"has cover {cover[node]} (a split needs a positive, finite cover, a leaf a finite "
                         f"cover >= 0)")
    return cover


def leaf_roundoff_as_zero(cover: np.ndarray, split: np.ndarray, tree_offsets: np.ndarray) -> np.ndarray:
    """The covers, with a leaf's tiny negative cover (within 1e-9 of its tree's root's)
    taken as 0: a sum of hessians that are 0 can come out as -1e-16 in the library that
    trained the model (LightGBM writes such leaf weights); a leaf of cover 0 is one no
    training row reached, which TreeSHAP handles. `from_lightgbm` applies it when it
    converts; here it is for the files converted before it did."""
    roundoff = ~split & (cover < 0)
    if not roundoff.any():
        return cover
    # a tree's largest cover is its root's (children split their parent's rows); every tree has a node
    scale = np.repeat(np.abs(cover[tree_offsets[:-1]]), np.diff(tree_offsets))
    return np.where(roundoff & (cover >= -1e-9 * scale), 0.0, cover)


def _expected_margins(forest: Forest, shap_forest: ShapForest) -> np.ndarray:
    """Per output group: the cover-weighted mean output of its trees (without the base score)."""
    groups = forest.flat().tree_group
    return np.bincount(groups, weights=shap_forest.expected_values(), minlength=forest.n_groups)


def _tree_features(flat) -> tuple[np.ndarray, np.ndarray]:
    """The distinct features each tree splits on: tree t's are features[offsets[t]:offsets[t + 1]]."""
    n_trees = len(flat.tree_group)
    feature = flat.arrays["split_feature"]
    tree = np.repeat(np.arange(n_trees, dtype=np.int64), np.diff(flat.tree_offsets))
    width = max(flat.n_features, 1)
    keys = np.unique(tree[feature >= 0] * width + feature[feature >= 0])
    offsets = np.zeros(n_trees + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // width, minlength=n_trees), out=offsets[1:])
    return offsets, (keys % width).astype(np.int32)


def _row_work(forest: Forest, shap_forest: ShapForest) -> float:
    """A row's path updates through the whole forest, roughly: nodes x depth."""
    return float(forest.flat().tree_offsets[-1]) * (shap_forest.max_depth + 1)


def _row_blocks(X, work_per_row: float, n_threads: int):
    """(start, dense block) of about SHAP_BLOCK_WORK work each (`row_blocks`, a sparse
    matrix densified one block at a time)."""
    rows = max(_MIN_BLOCK_ROWS * n_threads, int(SHAP_BLOCK_WORK / max(work_per_row, 1.0)))
    return row_blocks(X, rows, densify=True)
