"""A tree as a struct of arrays (one entry per node), and the change stamps through which
a forest sees that a tree's arrays were replaced (model/forest.py)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from boosters.model.linear import LinearLeaves
from boosters.model.validation import (CATEGORY_ARRAY_DTYPES, LINEAR_ARRAY_DTYPES, TREE_ARRAY_DTYPES,
                                       TREE_ARRAY_NAMES, check_linear)

__all__ = ["Tree"]

_STAMPS = itertools.count()  # a new stamp on every change of a tree's arrays
last_stamp = -1              # the latest stamp of any tree: unchanged, no tree has changed


def _new_stamp() -> int:
    global last_stamp
    last_stamp = next(_STAMPS)
    return last_stamp


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
    # (None given: __setattr__ stores the arrays of no categorical split, so they are never None)
    category_set: np.ndarray = None  # type: ignore[assignment]
    cat_boundaries: np.ndarray = None  # type: ignore[assignment]
    cat_bitsets: np.ndarray = None  # type: ignore[assignment]
    # linear leaves (None: a tree of constant leaves): node i's intercept linear_const[i] and
    # its linear_n_terms[i] terms, every node's terms in node order (see model/linear.py)
    linear_const: np.ndarray | None = None
    linear_n_terms: np.ndarray | None = None
    linear_features: np.ndarray | None = None
    linear_coefs: np.ndarray | None = None
    if TYPE_CHECKING:  # set by __setattr__ at each array change; not a dataclass field at run time
        _stamp: int = field(init=False, repr=False)

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
        arrays = ([-1], [0.0], [0], [0], [-1], [-1], [value], [0.0], [cover], [n_samples])
        return cls(*(np.array(a) for a in arrays))  # __setattr__ casts each to its dtype

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
