"""Trees as struct-of-arrays, and the forest that groups them for prediction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from boosters.model._predict import predict_forest

_TREE_ARRAYS = (
    ("split_feature", np.int32),   # -1 at leaves
    ("threshold", np.float64),     # x <= threshold goes left
    ("threshold_bin", np.int32),   # the same split in bins: value bins 1..threshold_bin go left
    ("default_left", np.uint8),    # where NaN goes
    ("left_child", np.int32),      # -1 at leaves
    ("right_child", np.int32),
    ("value", np.float64),         # leaf output (learning rate applied); internal nodes: their weight
    ("gain", np.float64),          # split gain, 0 at leaves
    ("cover", np.float64),         # hessian sum of the node's training rows
    ("n_samples", np.int64),       # training rows in the node
)
TREE_ARRAY_NAMES = tuple(name for name, _ in _TREE_ARRAYS)


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

    def __post_init__(self):
        for name, dtype in _TREE_ARRAYS:
            setattr(self, name, np.ascontiguousarray(getattr(self, name), dtype=dtype))

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

    def equals(self, other: "Tree") -> bool:
        return all(np.array_equal(getattr(self, n), getattr(other, n)) for n in TREE_ARRAY_NAMES)


class Forest:
    """Trees in boosting order; tree i adds to output column `tree_group[i]`."""

    def __init__(self, n_groups: int, base_scores: np.ndarray):
        self.n_groups = n_groups
        self.base_scores = np.asarray(base_scores, dtype=np.float64)
        self.trees: list[Tree] = []
        self.tree_group: list[int] = []
        self._flat = None

    def add(self, tree: Tree, group: int) -> None:
        self.trees.append(tree)
        self.tree_group.append(group)
        self._flat = None

    def truncate(self, n_trees: int) -> None:
        del self.trees[n_trees:]
        del self.tree_group[n_trees:]
        self._flat = None

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def _flat_arrays(self):
        if self._flat is None:
            offsets = np.zeros(self.n_trees + 1, dtype=np.int64)
            np.cumsum([t.n_nodes for t in self.trees], out=offsets[1:])
            cat = {name: np.concatenate([getattr(t, name) for t in self.trees]) if self.trees
                   else np.zeros(0, dtype) for name, dtype in _TREE_ARRAYS}
            self._flat = (cat, offsets, np.asarray(self.tree_group, dtype=np.int32))
        return self._flat

    def predict_margins(self, X: np.ndarray, n_threads: int, n_trees: int | None = None,
                        include_base: bool = True) -> np.ndarray:
        """(n_rows, n_groups) margins of the first `n_trees` trees (all by default)."""
        out = np.zeros((X.shape[0], self.n_groups), dtype=np.float64)
        if include_base:
            out += self.base_scores
        n_trees = self.n_trees if n_trees is None else n_trees
        if n_trees == 0:
            return out
        cat, offsets, groups = self._flat_arrays()
        predict_forest(X, cat["split_feature"], cat["threshold"], cat["default_left"],
                       cat["left_child"], cat["right_child"], cat["value"],
                       offsets[: n_trees + 1], groups[:n_trees], out, n_threads)
        return out


def predict_tree(tree: Tree, X: np.ndarray, n_threads: int) -> np.ndarray:
    """One tree's outputs for every row of X (1-D)."""
    out = np.zeros((X.shape[0], 1), dtype=np.float64)
    predict_forest(X, tree.split_feature, tree.threshold, tree.default_left, tree.left_child,
                   tree.right_child, tree.value, np.array([0, tree.n_nodes], dtype=np.int64),
                   np.zeros(1, dtype=np.int32), out, n_threads)
    return out[:, 0]
