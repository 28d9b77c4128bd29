"""The prediction driver: a forest's checked flat arrays (`FlatForest`, built and cached by
`Forest.flat`) or one tree through the kernels (_predict.pyx, _oblivious.pyx for forests
of symmetric trees, and _linear.pyx for linear leaves), dense rows, CSR or CSC, in row
blocks: the kernels run without the GIL, so Python acts on Ctrl-C between blocks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from boosters.model._linear import add_linear_outputs
from boosters.model._oblivious import ObliviousForest
from boosters.model._predict import (PackedForest, predict_forest, predict_forest_csr, predict_leaves,
                                     predict_leaves_csr)
from boosters.model.linear import LinearLeaves
from boosters.model.tree import Tree
from boosters.model.validation import check_categories, check_forest

__all__ = ["CsrRows", "FlatForest", "check_sparse_input", "forest_leaves", "forest_margins", "predict_tree",
           "row_blocks"]


class FlatForest(NamedTuple):
    """Every tree's nodes concatenated (validated, read-only): what the kernel reads."""

    arrays: dict           # TREE_ARRAY_NAMES -> 1-D array over all nodes
    tree_offsets: np.ndarray  # int64: tree t owns nodes tree_offsets[t]:tree_offsets[t + 1]
    tree_group: np.ndarray    # int32: output column of each tree
    n_features: int           # features the trees read (largest split feature + 1)
    categories: tuple | None = None  # categorical splits: (per tree its first set, set boundaries, words)
    linear: LinearLeaves | None = None  # linear leaves (None: every leaf constant)
    packed: PackedForest | None = None  # the nodes packed for traversal (None: categorical splits)
    oblivious: ObliviousForest | None = None  # every tree symmetric: leaf tables (None: not)



def forest_margins(flat: FlatForest, X: np.ndarray, n_threads: int, n_trees: int, n_groups: int,
                   base_scores: np.ndarray | None) -> np.ndarray:
    """(n_rows, n_groups) margins of the first `n_trees` trees of `flat`, from
    `base_scores` (None: from 0). `n_threads`: an effective count."""
    _check_width(X, flat.n_features)
    n_threads = threads_for_visits(n_threads, X.shape[0], n_trees)
    out = np.zeros((X.shape[0], n_groups), dtype=np.float64)
    if base_scores is not None:
        out += base_scores
    if n_trees == 0:
        return out
    a = flat.arrays
    check_sparse_input(X, flat.categories)
    if flat.linear is not None:
        _add_linear_outputs(a, flat.tree_offsets[: n_trees + 1], flat.tree_group[:n_trees], flat.linear,
                            _category_args(a, flat.categories), X, out, n_threads, flat.packed)
        return out
    if flat.oblivious is not None and not _is_sparse(X):
        _packed_walk(flat.oblivious, X, out, n_trees, n_threads)
        return out
    if flat.packed is not None and not _is_sparse(X):
        _packed_walk(flat.packed, X, out, n_trees, n_threads)
        return out
    trees = (a["split_feature"], a["threshold"], a["default_left"], a["left_child"], a["right_child"],
             a["value"], flat.tree_offsets[: n_trees + 1], flat.tree_group[:n_trees])
    _run_in_blocks(predict_forest, predict_forest_csr, X, _block_rows(n_trees), trees,
                   _category_args(a, flat.categories), out, n_threads)
    return out


def forest_leaves(flat: FlatForest, X: np.ndarray, n_threads: int, n_trees: int) -> np.ndarray:
    """(n_rows, n_trees) int32: the leaf each row reaches in every tree of `flat`.
    `n_threads`: an effective count."""
    _check_width(X, flat.n_features)
    n_threads = threads_for_visits(n_threads, X.shape[0], n_trees)
    out = np.zeros((X.shape[0], n_trees), dtype=np.int32)
    if n_trees == 0:
        return out
    if flat.packed is not None and not _is_sparse(X):
        _packed_walk(flat.packed, X, out, n_trees, n_threads)
        return out
    a = flat.arrays
    trees = (a["split_feature"], a["threshold"], a["default_left"], a["left_child"], a["right_child"],
             flat.tree_offsets)
    check_sparse_input(X, flat.categories)
    _run_in_blocks(predict_leaves, predict_leaves_csr, X, _block_rows(n_trees), trees,
                   _category_args(a, flat.categories), out, n_threads)
    return out


PREDICT_BLOCK_VISITS = 1 << 24  # ~0.05-0.2 s of kernel time per block
_MIN_BLOCK_ROWS = 4096          # enough rows for every thread's 64-row blocks


def _block_rows(n_trees: int) -> int:
    """Rows per prediction block: about PREDICT_BLOCK_VISITS row-tree visits."""
    return max(_MIN_BLOCK_ROWS, PREDICT_BLOCK_VISITS // max(n_trees, 1))


# Row-tree visits worth a thread: ~0.7-2 ms of walking (10-30 ns a visit). A thread team
# costs ~10 us to start and join on idle cores and milliseconds on shared ones (a thread
# waits for its core), so a small prediction runs on the caller's thread alone.
VISITS_PER_THREAD = 1 << 16


def threads_for_visits(n_threads: int, n_rows: int, n_trees: int) -> int:
    """Threads worth using for n_rows rows through n_trees trees (at most n_threads)."""
    return max(1, min(n_threads, n_rows * max(n_trees, 1) // VISITS_PER_THREAD))


def _packed_walk(packed: PackedForest | ObliviousForest, X: np.ndarray, out: np.ndarray, n_trees: int,
                 n_threads: int) -> None:
    """`packed.predict` of the first n_trees trees over X's rows, in blocks (`_block_rows`:
    Python acts on Ctrl-C between them)."""
    rows = _block_rows(n_trees)
    if X.shape[0] <= rows:  # one block: no slicing (single rows are served this way)
        _predict_block(packed, X, out, n_trees, n_threads)
        return
    for start in range(0, X.shape[0], rows):
        _predict_block(packed, X[start:start + rows], out[start:start + rows], n_trees, n_threads)


def _predict_block(packed: PackedForest | ObliviousForest, X: np.ndarray, out: np.ndarray, n_trees: int,
                   n_threads: int) -> None:
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
    n_threads = threads_for_visits(n_threads, X.shape[0], 1)
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
