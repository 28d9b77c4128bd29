"""The forest: trees in boosting order, each adding to one output group, and the checked
flat arrays the prediction kernels read (`Forest.flat`, cached).

The prediction kernel trusts its arrays (no bounds checks), so they are checked
(`model.validation.check_forest`) right before it runs whenever the trees changed:
a forest keeps its nodes in validated, read-only flat arrays, and its trees become
views of them; replacing a tree, a tree's array, a group or the base scores makes the
next prediction validate again.
"""

from __future__ import annotations

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.model import tree as tree_stamps
from boosters.model._predict import MAX_PACKED_FEATURES, PackedForest
from boosters.model.linear import LinearLeaves
from boosters.model.oblivious import oblivious_forest
from boosters.model.prediction import FlatForest, forest_leaves, forest_margins
from boosters.model.tree import Tree
from boosters.model.validation import (CATEGORY_ARRAY_DTYPES, LINEAR_ARRAY_DTYPES, TREE_ARRAY_DTYPES,
                                       TREE_ARRAY_NAMES, check_categories, check_forest, check_linear)

__all__ = ["Forest", "check_finite_tree"]


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
                  tree_group: np.ndarray, categories: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                  linear: dict | None = None) -> "Forest":
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
                assert linear is not None  # flat_linear is made from it
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
        return (tree_stamps.last_stamp, self.base_scores, list(self.trees), list(self.tree_group), self.n_groups,
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
        return stamp == tree_stamps.last_stamp or stamps == tuple(t._stamp for t in self.trees)

    def flat(self, *, grown: bool = False) -> FlatForest:
        """The validated flat arrays, rebuilt (and validated again) when anything changed.
        `grown=True`: the trees come straight from this process's grower, valid by
        construction, so the first build skips the check (dozens of NumPy calls, each a
        GIL re-take that a busy Python thread makes slow); later changes are checked."""
        cache = self._cache
        if cache is not None and self._unchanged(cache[0]):
            if cache[0][0] != tree_stamps.last_stamp:  # the same trees: keep the new stamp (fast check next time)
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
        # oblivious trees (every level one numeric split): leaf tables, one comparison a level
        oblivious = oblivious_forest(arrays, offsets, groups) if packed is not None and linear is None else None
        flat = FlatForest(arrays, offsets, groups, n_features, categories, linear, packed, oblivious)
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
        return forest_margins(flat, X, n_threads, n_trees, self.n_groups, self.base_scores if include_base else None)

    def predict_leaves(self, X: np.ndarray, n_threads: int) -> np.ndarray:
        """(n_rows, n_trees) int32: the leaf (node index within its tree) each row reaches
        in every tree; X as for `predict_margins` (checked, dense or scipy.sparse)."""
        n_threads = effective_n_threads(n_threads)
        return forest_leaves(self.flat(), X, n_threads, self.n_trees)


def check_finite_tree(tree: Tree, round_: int, config) -> None:
    """ValueError when a tree just grown in round `round_` (0-based) of a training with
    `config` (a GBDTConfig) has a value, or with linear leaves a coefficient, that is not
    finite: the boosting diverged (a log-link objective's exp overflowing at a large
    learning rate, say), every later tree would be NaN, and this is where it shows first
    (a gradient or hessian becomes inf, then a leaf value NaN). O(nodes), before the tree
    joins the forest, on one machine and on Dask alike."""
    arrays = (tree.value, tree.linear_const, tree.linear_coefs) if tree.is_linear else (tree.value,)
    if all(np.isfinite(a).all() for a in arrays if a is not None):  # (a linear tree has both)
        return
    raise ValueError(f"training diverged: the tree of round {round_ + 1} has values that are not finite (NaN or "
                     f"inf) with {config.objective!r}; lower learning_rate (now {config.learning_rate}) or raise l2")


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
