"""Trees as struct-of-arrays, and the forest that groups them for prediction.

The prediction kernel trusts its arrays (no bounds checks), so they are checked
(`model.validation.check_forest`) right before it runs whenever the trees changed:
a forest keeps its nodes in validated, read-only flat arrays, and its trees become
views of them; replacing a tree, a tree's array, a group or the base scores makes the
next prediction validate again.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.model._predict import (MAX_PACKED_FEATURES, PackedForest, predict_forest, predict_forest_csr,
                                     predict_leaves, predict_leaves_csr)
from boosters.model._linear import add_linear_outputs
from boosters.model.linear import LinearLeaves
from boosters.model.validation import (CATEGORY_ARRAY_DTYPES, LINEAR_ARRAY_DTYPES, TREE_ARRAY_DTYPES,
                                       TREE_ARRAY_NAMES, check_categories, check_forest, check_linear)

__all__ = ["TREE_ARRAY_NAMES", "CsrRows", "FlatForest", "Forest", "Tree", "check_sparse_input", "predict_tree",
           "row_blocks"]

_STAMPS = itertools.count()  # a new stamp on every change of a tree's arrays
_last_stamp = -1             # the latest stamp of any tree: unchanged, no tree has changed


def _new_stamp() -> int:
    global _last_stamp
    _last_stamp = next(_STAMPS)
    return _last_stamp


@dataclass(eq=False)
class Tree:
    split_feature: np.ndarray
    threshold: np.ndarray
    threshold_bin: np.ndarray
    default_left: np.ndarray
    left_child: np.ndarray
    right_child: np.ndarray
    value: np.ndarray
    gain: np.ndarray
    cover: np.ndarray
    n_samples: np.ndarray
    # categorical splits (none by default): node i's set category_set[i] (-1: a numeric
    # split) has words cat_bitsets[cat_boundaries[s]:cat_boundaries[s + 1]], bit c: code c left
    category_set: np.ndarray | None = None
    cat_boundaries: np.ndarray | None = None
    cat_bitsets: np.ndarray | None = None
    # linear leaves (None: a tree of constant leaves): node i's intercept linear_const[i] and
    # its linear_n_terms[i] terms, every node's terms in node order (see model/linear.py)
    linear_const: np.ndarray | None = None
    linear_n_terms: np.ndarray | None = None
    linear_features: np.ndarray | None = None
    linear_coefs: np.ndarray | None = None

    def __setattr__(self, name, value):
        if value is None and name in ("category_set", "cat_boundaries", "cat_bitsets"):
            value = {"category_set": np.full(len(self.split_feature), -1), "cat_boundaries": [0],
                     "cat_bitsets": []}[name]
        dtype = TREE_ARRAY_DTYPES.get(name) or CATEGORY_ARRAY_DTYPES.get(name) or LINEAR_ARRAY_DTYPES.get(name)
        if dtype is not None and value is not None:
            value = np.ascontiguousarray(value, dtype=dtype)
            if value.ndim != 1:
                raise ValueError(f"Tree.{name} must be 1-D, got shape {value.shape}")
        object.__setattr__(self, name, value)
        if dtype is not None:  # after the change: a forest that sees the stamp sees the array
            object.__setattr__(self, "_stamp", _new_stamp())

    @classmethod
    def leaf(cls, value: float, cover: float, n_samples: int) -> "Tree":
        return cls([-1], [0.0], [0], [0], [-1], [-1], [value], [0.0], [cover], [n_samples])

    @property
    def n_nodes(self) -> int:
        return len(self.split_feature)

    @property
    def is_leaf(self) -> np.ndarray:
        return self.split_feature < 0

    @property
    def n_leaves(self) -> int:
        return int(np.sum(self.is_leaf))

    def depth(self) -> int:
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for node in range(self.n_nodes):  # children always come after their parent
            if self.split_feature[node] >= 0:
                depth[self.left_child[node]] = depth[self.right_child[node]] = depth[node] + 1
        return int(depth.max())

    def arrays(self) -> dict:
        return {name: getattr(self, name) for name in TREE_ARRAY_NAMES}

    @property
    def is_linear(self) -> bool:
        """Its leaves hold linear models (`linear_*` arrays set)."""
        return self.linear_const is not None

    def linear_arrays(self) -> dict:
        """The `linear_*` arrays; for a tree of constant leaves, the linear form of them
        (intercept = value at leaves, no terms)."""
        if self.is_linear:
            return {name: getattr(self, name) for name in LINEAR_ARRAY_DTYPES}
        return dict(linear_const=np.where(self.is_leaf, self.value, 0.0),
                    linear_n_terms=np.zeros(self.n_nodes, np.int32), linear_features=np.zeros(0, np.int32),
                    linear_coefs=np.zeros(0))

    def linear_leaves(self) -> LinearLeaves:
        """The tree's linear models, checked."""
        return check_linear(self.linear_arrays(), self.split_feature, np.array([0, self.n_nodes], dtype=np.int64))

    def equals(self, other: "Tree") -> bool:
        if self.is_linear != other.is_linear:
            return False
        names = (*TREE_ARRAY_NAMES, *CATEGORY_ARRAY_DTYPES, *(LINEAR_ARRAY_DTYPES if self.is_linear else ()))
        return all(np.array_equal(getattr(self, n), getattr(other, n)) for n in names)

    def category_codes(self, node: int) -> np.ndarray:
        """The codes a categorical split sends left (its set's bits; past the feature's
        training codes they are the default direction)."""
        s = self.category_set[node]
        if s < 0:
            raise ValueError(f"node {node} is not a categorical split")
        words = self.cat_bitsets[self.cat_boundaries[s]:self.cat_boundaries[s + 1]]
        return np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))


class FlatForest(NamedTuple):
    """Every tree's nodes concatenated (validated, read-only): what the kernel reads."""

    arrays: dict           # TREE_ARRAY_NAMES -> 1-D array over all nodes
    tree_offsets: np.ndarray  # int64: tree t owns nodes tree_offsets[t]:tree_offsets[t + 1]
    tree_group: np.ndarray    # int32: output column of each tree
    n_features: int           # features the trees read (largest split feature + 1)
    categories: tuple | None = None  # categorical splits: (per tree its first set, set boundaries, words)
    linear: LinearLeaves | None = None  # linear leaves (None: every leaf constant)
    packed: PackedForest | None = None  # the nodes packed for traversal (None: categorical splits)


def _group_array(tree_group) -> np.ndarray:
    groups = np.asarray(tree_group)
    if groups.dtype.kind not in "iu" and groups.size:
        raise ValueError(f"invalid forest: tree groups must be ints, got {groups.dtype}")
    if groups.size and (groups.min() < 0 or groups.max() > np.iinfo(np.int32).max):
        raise ValueError("invalid forest: a tree group is outside the int32 range")
    return groups.astype(np.int32)


class Forest:
    """Trees in boosting order; tree i adds to output column `tree_group[i]`."""

    def __init__(self, n_groups: int, base_scores: np.ndarray):
        self.n_groups = n_groups
        self.base_scores = base_scores
        self.trees: list[Tree] = []
        self.tree_group: list[int] = []
        # (what the flat arrays were built from, FlatForest): replaced as a whole, so a
        # thread reads a consistent pair without a lock
        self._cache: tuple | None = None

    @classmethod
    def from_flat(cls, n_groups: int, base_scores: np.ndarray, arrays: dict, tree_offsets: np.ndarray,
                  tree_group: np.ndarray, categories: tuple | None = None, linear: dict | None = None) -> "Forest":
        """A forest over already concatenated arrays (a loaded model): validated now,
        ValueError naming the problem. `categories`: the trees' category sets as
        (per tree: number of sets), (all sets' word boundaries, from 0), (all words).
        `linear`: linear leaves, `LINEAR_ARRAY_DTYPES` names -> every tree's arrays
        concatenated (every tree is then linear)."""
        forest = cls(n_groups, base_scores)
        arrays = {name: np.array(arrays.get(name)) for name in TREE_ARRAY_NAMES}  # ours: made read-only below
        n_features = check_forest(arrays, tree_offsets, tree_group, n_groups, forest.base_scores)
        n_trees = len(tree_group)
        boundaries, bitsets = [np.zeros(1, np.int64)] * n_trees, [np.zeros(0, np.uint32)] * n_trees
        if categories is not None:
            boundaries, bitsets = _split_sets(*categories, n_trees)
        flat_sets = check_categories(arrays["category_set"], tree_offsets, boundaries, bitsets)
        flat_linear = None
        if linear is not None:
            linear = {name: np.array(linear.get(name)) for name in LINEAR_ARRAY_DTYPES}
            flat_linear = check_linear(linear, arrays["split_feature"], tree_offsets)
            n_features = max(n_features, flat_linear.n_features)
        for t, (lo, hi, group) in enumerate(zip(tree_offsets[:-1], tree_offsets[1:], tree_group)):
            tree = Tree(**{name: arrays[name][lo:hi] for name in TREE_ARRAY_NAMES},
                        cat_boundaries=boundaries[t], cat_bitsets=bitsets[t])
            if flat_linear is not None:
                terms = slice(flat_linear.term_offsets[lo], flat_linear.term_offsets[hi])
                tree.linear_const, tree.linear_n_terms = flat_linear.const[lo:hi], linear["linear_n_terms"][lo:hi]
                tree.linear_features, tree.linear_coefs = flat_linear.features[terms], flat_linear.coefs[terms]
            forest.add(tree, int(group))
        forest._install(arrays, np.array(tree_offsets), np.array(tree_group), n_features, flat_sets, flat_linear)
        return forest

    @property
    def base_scores(self) -> np.ndarray:
        """The margin every prediction starts from, one per output group (read-only)."""
        return self._base_scores

    @base_scores.setter
    def base_scores(self, value) -> None:
        scores = np.array(value, dtype=np.float64)
        scores.flags.writeable = False
        self._base_scores = scores

    def add(self, tree: Tree, group: int) -> None:
        self.trees.append(tree)
        self.tree_group.append(group)

    def truncate(self, n_trees: int) -> None:
        del self.trees[n_trees:]
        del self.tree_group[n_trees:]

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def __getstate__(self):
        # a pickle carries the trees, never a "checked" cache: the unpickled forest checks again
        return {**self.__dict__, "_cache": None}

    @property
    def _flat(self) -> FlatForest | None:
        """The flat arrays last built (None before the first `flat()`)."""
        return None if self._cache is None else self._cache[1]

    def _state(self) -> tuple:
        """What the flat arrays are built from: the latest tree stamp (read first: a later
        change makes a new one), objects compared by identity (the trees in a list copy),
        and values."""
        return (_last_stamp, self.base_scores, list(self.trees), list(self.tree_group), self.n_groups,
                tuple(t._stamp for t in self.trees))

    def _unchanged(self, old: tuple) -> bool:
        """No tree, group or base score changed since `old` (a `_state()`). While no tree
        anywhere has a new stamp, comparing the lists (C loops, identity first) is enough:
        little Python work per prediction, whatever the number of trees."""
        stamp, base_scores, trees, groups, n_groups, stamps = old
        if base_scores is not self.base_scores or n_groups != self.n_groups or groups != self.tree_group:
            return False
        if trees != self.trees:  # Tree compares by identity (eq=False)
            return False
        return stamp == _last_stamp or stamps == tuple(t._stamp for t in self.trees)

    def flat(self, *, grown: bool = False) -> FlatForest:
        """The validated flat arrays, rebuilt (and validated again) when anything changed.
        `grown=True`: the trees come straight from this process's grower, valid by
        construction, so the first build skips the check (dozens of NumPy calls, each a
        GIL re-take that a busy Python thread makes slow); later changes are checked."""
        cache = self._cache
        if cache is not None and self._unchanged(cache[0]):
            if cache[0][0] != _last_stamp:  # the same trees: keep the new stamp (fast check next time)
                self._cache = (self._state(), cache[1])
            return cache[1]
        state = self._state()
        offsets = np.zeros(self.n_trees + 1, dtype=np.int64)
        np.cumsum([t.n_nodes for t in self.trees], out=offsets[1:])
        arrays = {name: np.concatenate([getattr(t, name) for t in self.trees]) if self.trees
                  else np.zeros(0, dtype) for name, dtype in TREE_ARRAY_DTYPES.items()}
        groups = _group_array(self.tree_group)
        if grown and cache is None:
            feature = arrays["split_feature"]
            n_features = int(feature.max()) + 1 if feature.size else 0
        else:
            n_features = check_forest(arrays, offsets, groups, self.n_groups, self.base_scores)
        flat_sets = check_categories(arrays["category_set"], offsets, [t.cat_boundaries for t in self.trees],
                                     [t.cat_bitsets for t in self.trees])
        linear = None
        if any(t.is_linear for t in self.trees):  # every tree in linear form (constant trees: no terms)
            parts = [t.linear_arrays() for t in self.trees]
            linear = check_linear({name: np.concatenate([p[name] for p in parts]) for name in LINEAR_ARRAY_DTYPES},
                                  arrays["split_feature"], offsets)
            n_features = max(n_features, linear.n_features)
        return self._install(arrays, offsets, groups, n_features, flat_sets, linear, state)

    @property
    def is_linear(self) -> bool:
        """Some tree has linear leaves."""
        return any(t.is_linear for t in self.trees)

    def _install(self, arrays: dict, offsets: np.ndarray, groups: np.ndarray, n_features: int,
                 categories: tuple | None = None, linear: LinearLeaves | None = None,
                 state: tuple | None = None) -> FlatForest:
        """Keep checked arrays: read-only, and the trees become views of them, so an
        in-place edit (which would bypass the check) fails, and replacing an array is
        seen by the next `flat()`. `state`: the `_state()` read before the arrays were."""
        state = self._state() if state is None else state
        for arr in (*arrays.values(), offsets, groups):
            arr.flags.writeable = False
        for tree, lo, hi in zip(self.trees, offsets[:-1], offsets[1:]):
            for name in TREE_ARRAY_NAMES:
                object.__setattr__(tree, name, arrays[name][lo:hi])
            for name in CATEGORY_ARRAY_DTYPES:  # the tree's own arrays (the kernel reads a rebased copy)
                getattr(tree, name).flags.writeable = False
            for name in LINEAR_ARRAY_DTYPES if tree.is_linear else ():  # the same: predictions read `linear`
                getattr(tree, name).flags.writeable = False
        for arr in (*(categories or ()), *(linear or ())):
            arr.flags.writeable = False
        packed = None
        if categories is None and len(groups) and n_features < MAX_PACKED_FEATURES:
            packed = PackedForest(arrays["split_feature"], arrays["threshold"], arrays["default_left"],
                                  arrays["left_child"], arrays["right_child"], arrays["value"], offsets, groups)
        flat = FlatForest(arrays, offsets, groups, n_features, categories, linear, packed)
        self._cache = (state, flat)
        return flat

    def predict_margins(self, X: np.ndarray, n_threads: int, n_trees: int | None = None,
                        include_base: bool = True) -> np.ndarray:
        """(n_rows, n_groups) margins of the first `n_trees` trees (all by default).
        `n_threads` as everywhere (0 = all cores; capped, serial after a fork)."""
        n_threads = effective_n_threads(n_threads)
        flat = self.flat()
        n_trees = self.n_trees if n_trees is None else n_trees
        if not 0 <= n_trees <= self.n_trees:
            raise ValueError(f"n_trees must be in [0, {self.n_trees}], got {n_trees}")
        _check_width(X, flat.n_features)
        out = np.zeros((X.shape[0], self.n_groups), dtype=np.float64)
        if include_base:
            out += self.base_scores
        if n_trees == 0:
            return out
        a = flat.arrays
        check_sparse_input(X, flat.categories)
        if flat.linear is not None:
            _add_linear_outputs(a, flat.tree_offsets[: n_trees + 1], flat.tree_group[:n_trees], flat.linear,
                                _category_args(a, flat.categories), X, out, n_threads, flat.packed)
            return out
        if flat.packed is not None and not _is_sparse(X):
            _packed_walk(flat.packed, X, out, n_trees, n_threads)
            return out
        trees = (a["split_feature"], a["threshold"], a["default_left"], a["left_child"], a["right_child"],
                 a["value"], flat.tree_offsets[: n_trees + 1], flat.tree_group[:n_trees])
        _run_in_blocks(predict_forest, predict_forest_csr, X, _block_rows(n_trees), trees,
                       _category_args(a, flat.categories), out, n_threads)
        return out

    def predict_leaves(self, X: np.ndarray, n_threads: int) -> np.ndarray:
        """(n_rows, n_trees) int32: the leaf (node index within its tree) each row reaches
        in every tree; X as for `predict_margins` (checked, dense or scipy.sparse)."""
        n_threads = effective_n_threads(n_threads)
        flat = self.flat()
        _check_width(X, flat.n_features)
        out = np.zeros((X.shape[0], self.n_trees), dtype=np.int32)
        if self.n_trees == 0:
            return out
        if flat.packed is not None and not _is_sparse(X):
            _packed_walk(flat.packed, X, out, self.n_trees, n_threads)
            return out
        a = flat.arrays
        trees = (a["split_feature"], a["threshold"], a["default_left"], a["left_child"], a["right_child"],
                 flat.tree_offsets)
        check_sparse_input(X, flat.categories)
        _run_in_blocks(predict_leaves, predict_leaves_csr, X, _block_rows(self.n_trees), trees,
                       _category_args(a, flat.categories), out, n_threads)
        return out


PREDICT_BLOCK_VISITS = 1 << 24  # ~0.05-0.2 s of kernel time per block
_MIN_BLOCK_ROWS = 4096          # enough rows for every thread's 64-row blocks


def _block_rows(n_trees: int) -> int:
    """Rows per prediction block: about PREDICT_BLOCK_VISITS row-tree visits."""
    return max(_MIN_BLOCK_ROWS, PREDICT_BLOCK_VISITS // max(n_trees, 1))


def _packed_walk(packed: PackedForest, X: np.ndarray, out: np.ndarray, n_trees: int, n_threads: int) -> None:
    """`packed.predict` of the first n_trees trees over X's rows, in blocks (`_block_rows`:
    Python acts on Ctrl-C between them)."""
    rows = _block_rows(n_trees)
    if X.shape[0] <= rows:  # one block: no slicing (single rows are served this way)
        _predict_block(packed, X, out, n_trees, n_threads)
        return
    for start in range(0, X.shape[0], rows):
        _predict_block(packed, X[start:start + rows], out[start:start + rows], n_trees, n_threads)


def _predict_block(packed: PackedForest, X: np.ndarray, out: np.ndarray, n_trees: int, n_threads: int) -> None:
    """One block of rows through the packed kernel, which reads C-contiguous rows (a block
    in another memory order is copied)."""
    packed.predict(np.ascontiguousarray(X), out, n_trees, n_threads)


def _run_in_blocks(dense_kernel, csr_kernel, X, rows: int, trees: tuple, category_args: tuple, out: np.ndarray,
                   n_threads: int) -> None:
    """A prediction kernel over X's row blocks (`row_blocks`), each writing its rows of `out`:
    `dense_kernel(block, *trees, out_rows, n_threads, *category_args)` or
    `csr_kernel(data, indices, indptr, *trees, out_rows, n_threads)`."""
    for start, block in row_blocks(X, rows):
        part = out[start:start + block.shape[0]]
        if isinstance(block, CsrRows):
            csr_kernel(*block.kernel_arrays(), *trees, part, n_threads)
        else:
            dense_kernel(block, *trees, part, n_threads, *category_args)


LINEAR_BLOCK_VISITS = 1 << 22  # (row, tree) pairs per block of linear-leaf prediction: their leaves, 16 MB


def _add_linear_outputs(arrays: dict, tree_offsets: np.ndarray, tree_group: np.ndarray, linear: LinearLeaves,
                        category_args: tuple, X, out: np.ndarray, n_threads: int,
                        packed: PackedForest | None = None) -> None:
    """out[:, g] += the outputs of the group-g trees (`tree_offsets`, `tree_group`: the trees
    predicted) with linear leaves: each row's leaves (the prediction kernel), then their
    linear models (`_linear.add_linear_outputs`), summed in tree order. A sparse X is read
    in dense blocks. `packed`: the forest's packed nodes, to find the leaves with (the
    general walk without)."""
    n_trees = len(tree_group)
    walk = (arrays["split_feature"], arrays["threshold"], arrays["default_left"], arrays["left_child"],
            arrays["right_child"], tree_offsets)
    for start, block in row_blocks(X, max(1, LINEAR_BLOCK_VISITS // max(n_trees, 1)), densify=True):
        leaves = np.zeros((block.shape[0], n_trees), dtype=np.int32)
        if packed is not None:
            packed.predict(np.ascontiguousarray(block), leaves, n_trees, n_threads)
        else:
            predict_leaves(block, *walk, leaves, n_threads, *category_args)
        add_linear_outputs(block, leaves, tree_offsets, tree_group, arrays["value"], *linear,
                           out[start:start + block.shape[0]], n_threads)


def _check_width(X: np.ndarray, n_features: int) -> None:
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    if X.shape[1] < n_features:
        raise ValueError(f"X has {X.shape[1]} features but the trees split on feature {n_features - 1}")


def predict_tree(tree: Tree, X: np.ndarray, n_threads: int, check: bool = True) -> np.ndarray:
    """One tree's outputs for every row of X (1-D). The tree is checked first, unless
    `check=False`: for a tree the grower just built, valid by construction (the check
    would cost the trainer ~10% of its time on every round with a validation set)."""
    offsets = np.array([0, tree.n_nodes], dtype=np.int64)
    group = np.zeros(1, dtype=np.int32)
    if check:
        _check_width(X, check_forest(tree.arrays(), offsets, group, 1, np.zeros(1)))
    categories = None
    if check:
        categories = check_categories(tree.category_set, offsets, [tree.cat_boundaries], [tree.cat_bitsets])
    elif np.any(tree.category_set >= 0):
        categories = (np.array([0, len(tree.cat_boundaries) - 1]), tree.cat_boundaries, tree.cat_bitsets)
    out = np.zeros((X.shape[0], 1), dtype=np.float64)
    check_sparse_input(X, categories)
    if tree.is_linear:
        linear = tree.linear_leaves()
        if check:
            _check_width(X, linear.n_features)
        _add_linear_outputs(tree.arrays(), offsets, group, linear, _category_args(tree.arrays(), categories), X,
                            out, n_threads)
        return out[:, 0]
    trees = (tree.split_feature, tree.threshold, tree.default_left, tree.left_child, tree.right_child,
             tree.value, offsets, group)
    _run_in_blocks(predict_forest, predict_forest_csr, X, PREDICT_SPARSE_BLOCK_ROWS, trees,
                   _category_args(tree.arrays(), categories), out, n_threads)
    return out[:, 0]


def _category_args(arrays: dict, categories: tuple | None) -> tuple:
    """predict_forest's category arguments: none for a forest without categorical splits."""
    return () if categories is None else (arrays["category_set"], *categories)


def _split_sets(n_sets: np.ndarray, boundaries: np.ndarray, bitsets: np.ndarray, n_trees: int) -> tuple[list, list]:
    """Per-tree boundaries (from 0) and words of sets stored for all trees together
    (`n_sets` per tree; `boundaries` of every set, from 0), checked to be consistent."""
    n_sets = np.asarray(n_sets)
    if (n_sets.dtype != np.int64 or n_sets.shape != (n_trees,) or np.any((n_sets < 0) | (n_sets >= len(boundaries)))
            or boundaries.dtype != np.int64 or bitsets.dtype != np.uint32
            or len(boundaries) != int(n_sets.sum()) + 1 or boundaries[0] != 0
            or np.any(np.diff(boundaries) < 0) or boundaries[-1] != len(bitsets)):
        raise ValueError("invalid forest: the category sets' arrays are inconsistent")
    first = np.concatenate([[0], np.cumsum(n_sets)])
    per_tree_b, per_tree_w = [], []
    for lo, hi in zip(first[:-1], first[1:]):
        b = boundaries[lo:hi + 1]
        per_tree_b.append(b - b[0])
        per_tree_w.append(bitsets[b[0]:b[-1]])
    return per_tree_b, per_tree_w


def check_sparse_input(X, categories) -> None:
    """ValueError for a scipy.sparse X when the trees have categorical splits (`categories`
    not None): the CSR kernels have no category sets, so such a model reads dense input."""
    if categories is not None and _is_sparse(X):
        raise ValueError("X: a model with categorical splits predicts dense input (an array or a frame), "
                         "not a scipy.sparse matrix")


PREDICT_SPARSE_BLOCK_ROWS = 1 << 16  # predict_tree's blocks (a CSC block converted to CSR at a time)


def _is_sparse(X) -> bool:
    """A scipy.sparse CSR/CSC matrix (checked by data/sparse.py; duck typing, no import)."""
    return hasattr(X, "format") and hasattr(X, "indptr")


class CsrRows(NamedTuple):
    """Consecutive rows of a sparse matrix as CSR arrays: row i's entries are
    data[indptr[i]:indptr[i + 1]] (indptr may be a slice of the whole matrix's, its
    offsets then index the whole matrix's data and indices: no copy)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    n_columns: int

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.indptr) - 1, self.n_columns

    def kernel_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(data, indices, indptr) for the CSR kernels, which read through the first element
        of data and indices: a one-element pair that no row owns when there is none."""
        if len(self.indices) == 0:
            return np.zeros(1, dtype=self.data.dtype), np.zeros(1, dtype=self.indptr.dtype), self.indptr
        return self.data, self.indices, self.indptr


def row_blocks(X, rows: int, densify: bool = False):
    """(start, block) for X's rows in blocks of at most `rows`, in order. A dense X gives
    row slices (views); a scipy.sparse X gives `CsrRows` (a CSR's own arrays; a CSC
    converted to CSR one block at a time), or with `densify` dense blocks (for kernels
    without a CSR form; an implicit zero is 0.0, as in prediction). The kernels run
    without the GIL, so Python acts on Ctrl-C between blocks: keep a block ~0.1 s."""
    sparse = _is_sparse(X)
    rows = max(int(rows), 1)
    for start in range(0, X.shape[0], rows):
        stop = min(start + rows, X.shape[0])
        if not sparse:
            yield start, X[start:stop]
        elif densify:
            yield start, X[start:stop].toarray()
        elif X.format == "csr":
            yield start, CsrRows(X.data, X.indices, X.indptr[start:stop + 1], X.shape[1])
        else:
            block = X[start:stop].tocsr()
            block.sort_indices()
            yield start, CsrRows(block.data, block.indices, block.indptr, X.shape[1])
