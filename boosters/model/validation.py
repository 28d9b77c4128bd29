"""Structural checks of a forest's flat arrays: everything the prediction kernel takes for
granted (it indexes the arrays without bounds checks).

A forest is valid when every tree is a proper binary tree stored root first, with each
child after its parent: every non-root node is the child of exactly one node that comes
before it, so every node is reached exactly once from the root and a walk always ends.
"""

from __future__ import annotations

from typing import NoReturn

import numpy as np

from boosters.model.linear import LinearLeaves

TREE_ARRAYS = (
    ("split_feature", np.int32),   # -1 at leaves
    ("threshold", np.float64),     # x <= threshold goes left
    ("threshold_bin", np.int32),   # the same split in bins: value bins 1..threshold_bin go left
    ("default_left", np.uint8),    # where NaN goes
    ("left_child", np.int32),      # node index within the tree, -1 at leaves
    ("right_child", np.int32),
    ("value", np.float64),         # leaf output (learning rate applied); internal nodes: their weight
    ("gain", np.float64),          # split gain, 0 at leaves
    ("cover", np.float64),         # hessian sum of the node's rows when fitted
    ("n_samples", np.int64),       # rows in the node when fitted
    ("category_set", np.int32),    # categorical split: its set among the tree's; -1 otherwise
)
# per tree (not per node): set s's words are cat_bitsets[cat_boundaries[s]:cat_boundaries[s + 1]],
# bit c of them is code c going left (LightGBM's cat_boundaries / cat_threshold)
CATEGORY_ARRAYS = (("cat_boundaries", np.int64), ("cat_bitsets", np.uint32))
CATEGORY_ARRAY_DTYPES = dict(CATEGORY_ARRAYS)
# linear leaves (none by default): per node its intercept and number of terms, then every
# node's terms in node order (see model/linear.py)
LINEAR_NODE_ARRAYS = (("linear_const", np.float64), ("linear_n_terms", np.int32))
LINEAR_TERM_ARRAYS = (("linear_features", np.int32), ("linear_coefs", np.float64))
LINEAR_ARRAY_DTYPES = dict(LINEAR_NODE_ARRAYS + LINEAR_TERM_ARRAYS)
MAX_SET_WORDS = 2048               # codes below 2**16
TREE_ARRAY_NAMES = tuple(name for name, _ in TREE_ARRAYS)
TREE_ARRAY_DTYPES = dict(TREE_ARRAYS)


def _fail(what: str, bad: np.ndarray, item: str = "tree", tree_of_node=None, local=None) -> NoReturn:
    """Raise for the first True entry of `bad`: per node when `tree_of_node` is given, else
    per `item` (tree, base score)."""
    i = int(np.flatnonzero(bad)[0])
    where = f"tree {tree_of_node[i]}, node {local[i]}" if tree_of_node is not None else f"{item} {i}"
    raise ValueError(f"invalid forest: {where}: {what}")


def check_forest(arrays: dict, tree_offsets: np.ndarray, tree_group: np.ndarray, n_groups: int,
                 base_scores: np.ndarray) -> int:
    """Raise ValueError naming the first problem; return how many features the trees read
    (largest split feature + 1, 0 for stumps only).

    `arrays`: TREE_ARRAY_NAMES -> 1-D arrays of every tree's nodes, concatenated;
    tree t owns nodes tree_offsets[t]:tree_offsets[t + 1]; its output column is tree_group[t].
    """
    if isinstance(n_groups, bool) or not isinstance(n_groups, (int, np.integer)) or n_groups < 1:
        raise ValueError(f"invalid forest: n_groups must be an int >= 1, got {n_groups!r}")
    if base_scores.dtype != np.float64 or base_scores.shape != (n_groups,):
        raise ValueError(f"invalid forest: base_scores must be float64 of shape ({n_groups},), "
                         f"got {base_scores.dtype} {base_scores.shape}")
    if not np.all(np.isfinite(base_scores)):
        _fail("is not finite", ~np.isfinite(base_scores), item="base score")
    for name, dtype in [*TREE_ARRAYS, ("tree_offsets", np.int64), ("tree_group", np.int32)]:
        arr = tree_offsets if name == "tree_offsets" else tree_group if name == "tree_group" else arrays.get(name)
        if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1:
            got = f"{arr.dtype} with shape {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
            raise ValueError(f"invalid forest: {name} must be a 1-D {np.dtype(dtype)} array, got {got}")

    n_trees = len(tree_group)
    n_nodes = len(arrays["split_feature"])
    if (len(tree_offsets) != n_trees + 1 or tree_offsets[0] != 0 or tree_offsets[-1] != n_nodes
            or np.any((tree_offsets < 0) | (tree_offsets > n_nodes))):
        raise ValueError(f"invalid forest: tree_offsets must run from 0 to the node count {n_nodes} "
                         f"in {n_trees + 1} entries")
    sizes = np.diff(tree_offsets)
    if np.any(sizes < 1):
        _fail("has no nodes", sizes < 1)
    for name in TREE_ARRAY_NAMES:
        if len(arrays[name]) != n_nodes:
            raise ValueError(f"invalid forest: {name} has {len(arrays[name])} entries, split_feature {n_nodes}")
    if np.any((tree_group < 0) | (tree_group >= n_groups)):
        _fail(f"its group is outside 0..{n_groups - 1}", (tree_group < 0) | (tree_group >= n_groups))

    tree_of_node = np.repeat(np.arange(n_trees), sizes)
    first = tree_offsets[:-1][tree_of_node]             # global index of each node's root
    local = np.arange(n_nodes) - first                  # index within its tree
    size = sizes[tree_of_node]
    feature, left, right = arrays["split_feature"], arrays["left_child"], arrays["right_child"]
    at = dict(tree_of_node=tree_of_node, local=local)

    if np.any(feature < -1):
        _fail("split feature is below -1", feature < -1, **at)
    internal = feature >= 0
    leaf_with_children = ~internal & ((left != -1) | (right != -1))
    if np.any(leaf_with_children):
        _fail("a leaf (split feature -1) must have children -1", leaf_with_children, **at)
    for name, child in (("left", left), ("right", right)):
        outside = internal & ((child <= local) | (child >= size))
        if np.any(outside):
            _fail(f"{name} child must come after its parent, inside the tree", outside, **at)
    # every non-root node has exactly one parent (children come after parents, so with
    # this, each node is reached exactly once from its root)
    parents = np.bincount(np.concatenate([first[internal] + left[internal], first[internal] + right[internal]]),
                          minlength=n_nodes)
    expected = np.ones(n_nodes, dtype=np.int64)
    expected[tree_offsets[:-1]] = 0
    if np.any(parents != expected):
        _fail("node is not the child of exactly one node", parents != expected, **at)

    # a threshold may be -inf (a cut below the rest of the values when the data hold -inf)
    # or +inf, but not NaN: no row would go left
    if np.any(np.isnan(arrays["threshold"])):
        _fail("threshold is NaN", np.isnan(arrays["threshold"]), **at)
    for name in ("value", "gain", "cover"):
        if not np.all(np.isfinite(arrays[name])):
            _fail(f"{name} is not finite", ~np.isfinite(arrays[name]), **at)
    if np.any(arrays["default_left"] > 1):
        _fail("default_left must be 0 or 1", arrays["default_left"] > 1, **at)
    for name in ("threshold_bin", "n_samples"):
        if np.any(arrays[name] < 0):
            _fail(f"{name} is negative", arrays[name] < 0, **at)
    category_set = arrays["category_set"]
    bad = (category_set < -1) | (~internal & (category_set != -1))
    if np.any(bad):
        _fail("category_set must be -1 at leaves and >= -1 elsewhere", bad, **at)
    return int(feature.max()) + 1 if n_nodes else 0


def check_categories(category_set: np.ndarray, tree_offsets: np.ndarray, boundaries: list,
                     bitsets: list) -> tuple | None:
    """Check the trees' category sets (per tree: `boundaries` from 0, each set 1 to
    MAX_SET_WORDS words, ending at its number of `bitsets` words; every node's set
    index below the tree's number of sets) and concatenate them for the kernel: (per
    tree its first set, every set's words' start and end, all words), or None when no
    node has a categorical split. `category_set` passed check_forest."""
    n_trees = len(tree_offsets) - 1
    if len(boundaries) != n_trees or len(bitsets) != n_trees:
        raise ValueError("invalid forest: category sets must be given for every tree")
    n_sets = np.fromiter((len(b) - 1 for b in boundaries), np.int64, n_trees)
    if not n_sets.any() and not any(len(w) for w in bitsets) and all(b[0] == 0 for b in boundaries):
        if np.any(category_set >= 0):  # the common case, numeric trees: no per-tree NumPy calls
            _fail("category_set is past the tree's 0 sets", category_set >= 0, item="node")
        return None
    for t, (b, words) in enumerate(zip(boundaries, bitsets)):
        for name, arr, dtype in (("cat_boundaries", b, np.int64), ("cat_bitsets", words, np.uint32)):
            if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1:
                raise ValueError(f"invalid forest: tree {t}: {name} must be a 1-D {np.dtype(dtype)} array")
        sizes = np.diff(b)
        if len(b) < 1 or b[0] != 0 or b[-1] != len(words) or np.any((sizes < 1) | (sizes > MAX_SET_WORDS)):
            raise ValueError(f"invalid forest: tree {t}: cat_boundaries must run from 0 to the "
                             f"{len(words)} words of cat_bitsets, 1 to {MAX_SET_WORDS} words a set")
    sizes = np.diff(tree_offsets)
    outside = category_set >= np.repeat(n_sets, sizes)
    if np.any(outside):
        node = int(np.flatnonzero(outside)[0])
        tree = int(np.searchsorted(tree_offsets, node, side="right")) - 1
        raise ValueError(f"invalid forest: tree {tree}, node {node - tree_offsets[tree]}: "
                         f"category_set is past the tree's {n_sets[tree]} sets")
    if not np.any(category_set >= 0):
        return None
    tree_sets = np.zeros(n_trees + 1, dtype=np.int64)
    np.cumsum(n_sets, out=tree_sets[1:])
    word_offsets = np.cumsum([0] + [len(w) for w in bitsets])
    all_boundaries = np.concatenate([b[:-1] + off for b, off in zip(boundaries, word_offsets)]
                                    + [word_offsets[-1:]]).astype(np.int64)
    return tree_sets, all_boundaries, np.concatenate(bitsets).astype(np.uint32)


def check_linear(arrays: dict, split_feature: np.ndarray, tree_offsets: np.ndarray) -> LinearLeaves:
    """Check the linear leaves of a forest (`arrays`: LINEAR_ARRAY_DTYPES names -> every
    tree's arrays concatenated; `split_feature` passed check_forest) and return them with
    the terms' offsets: per node a finite intercept and a number of terms (0 at internal
    nodes), per term a feature index >= 0 and a finite coefficient."""
    for name, dtype in LINEAR_ARRAY_DTYPES.items():
        arr = arrays.get(name)
        if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1:
            raise ValueError(f"invalid forest: {name} must be a 1-D {np.dtype(dtype)} array")
    const, n_terms = arrays["linear_const"], arrays["linear_n_terms"]
    features, coefs = arrays["linear_features"], arrays["linear_coefs"]
    n_nodes = len(split_feature)
    if len(const) != n_nodes or len(n_terms) != n_nodes:
        raise ValueError(f"invalid forest: linear_const and linear_n_terms must have {n_nodes} entries, one per node")
    sizes = np.diff(tree_offsets)
    tree_of_node = np.repeat(np.arange(len(sizes)), sizes)
    at = dict(tree_of_node=tree_of_node, local=np.arange(n_nodes) - tree_offsets[:-1][tree_of_node])
    if not np.all(np.isfinite(const)):
        _fail("linear_const is not finite", ~np.isfinite(const), **at)
    bad = (n_terms < 0) | ((split_feature >= 0) & (n_terms != 0))
    if np.any(bad):
        _fail("linear_n_terms must be >= 0 at leaves and 0 at internal nodes", bad, **at)
    offsets = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(n_terms, out=offsets[1:])
    if len(features) != offsets[-1] or len(coefs) != offsets[-1]:
        raise ValueError(f"invalid forest: linear_features and linear_coefs must have {offsets[-1]} entries, "
                         f"the sum of linear_n_terms")
    if np.any(features < 0):
        raise ValueError("invalid forest: a linear_features entry is negative")
    if not np.all(np.isfinite(coefs)):
        raise ValueError("invalid forest: a linear_coefs entry is not finite")
    return LinearLeaves(const, offsets, features, coefs)
