"""Bins of a sparse matrix without densifying it (see docs/design.md, "Sparse input").

Edges: as for dense input (BinMapper), from the sampled rows: a feature's distinct values
are its sampled stored values plus the value 0 weighted by the sampled rows it has no
entry in, so the edges are those of the densified matrix. The bin of 0 is each feature's
*default* bin.

Storage: every feature is a column of its own, with its usual bins, but instead of a
dense column of bins the matrix keeps a row's entries only where it is away from the
feature's default bin: a CSR of histogram indices (uint32, in feature order within a
row), and its transpose without the bins (each column's rows with an entry, for the
partitioner). The histogram of a node is one pass over its rows' entries, each row also added to
one extra bin (a one-bin "totals" column after the features'), and then each feature's
default bin is filled in as the node total minus its other bins (training/histograms/
_sparse.pyx). The split finder and the subtraction then see ordinary columns; with
quantized histograms the filled bin is the exact integer sum, so the trees are those of
the densified matrix bit for bit.
"""

from __future__ import annotations

import numpy as np

from boosters.data._binning import bin_csc, bin_csr, sparse_column_rows
from boosters.data.binned import SPARSE, BinnedMatrix
from boosters.data.binning import _distinct_values, _midpoints, edges_from_distinct, stratified_sample


def fit_sparse(mapper, X, sample_weight: np.ndarray | None) -> None:
    """Set the mapper's edges (`upper_edges`, `n_bins`, `is_usable`, `is_categorical`,
    `sample_rows`, `n_features`) from a canonical CSR/CSC matrix X, as BinMapper.fit does for dense X."""
    n_rows, n_features = X.shape
    rows = stratified_sample(n_rows, mapper.sample_size, mapper.seed) if n_rows > mapper.sample_size else None
    mapper.sample_rows = rows
    sample = (X if rows is None else X[rows]).tocsc()  # the sampled rows only, column by column
    weights = None
    if sample_weight is not None:
        weights = np.asarray(sample_weight if rows is None else sample_weight[rows], dtype=np.float64)
    max_value_bins = mapper.max_bins - 1
    if weights is None:
        edges, usable = _unweighted_edges(sample, max_value_bins)
    else:
        edges, usable = _weighted_edges(sample, weights, max_value_bins)
    mapper.upper_edges = edges
    mapper.is_usable = usable
    mapper.is_categorical = np.zeros(n_features, dtype=bool)  # sparse input holds numeric features only
    mapper.n_bins = np.array([len(e) + 1 for e in edges], dtype=np.int32)
    mapper.n_features = n_features


VALUES_PER_BLOCK = 1 << 18  # stored values sorted together: bounds the sort's temporaries (~40 B each)


def _unweighted_edges(sample, max_value_bins: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Every feature's edges, from blocks of adjacent features of about VALUES_PER_BLOCK
    stored values (one sort per block, so memory stays bounded)."""
    n_features = sample.shape[1]
    edges, usable, f0 = [], [], 0
    while f0 < n_features:  # at least one feature per block
        f1 = max(f0 + 1, int(np.searchsorted(sample.indptr, sample.indptr[f0] + VALUES_PER_BLOCK, side="right")) - 1)
        f1 = min(f1, n_features)
        lo, hi = sample.indptr[f0], sample.indptr[f1]
        e, u = _block_edges(sample.data[lo:hi], sample.indptr[f0:f1 + 1] - lo, sample.shape[0], max_value_bins)
        edges += e
        usable.append(u)
        f0 = f1
    return edges, np.concatenate(usable)


def _block_edges(data: np.ndarray, indptr: np.ndarray, n_sampled: int,
                 max_value_bins: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The edges of a block of features (CSC data and column starts of the sample): the
    stored values and each feature's implicit zeros sorted by (feature, value) in one
    pass, distinct values and counts by run boundaries, then the cuts of every feature
    with few distinct values vectorised (midpoints); the others, edges_from_distinct one
    by one (equal-weight cuts). The edges are exactly those of edges_from_distinct."""
    n_features = len(indptr) - 1
    stored = np.diff(indptr)
    feature = np.repeat(np.arange(n_features, dtype=np.int32), stored)
    values = np.asarray(data, dtype=np.float64)
    nan = np.isnan(values)
    has_missing = np.bincount(feature[nan], minlength=n_features) > 0
    n_zeros = n_sampled - stored  # implicit zeros (rows storing NaN are missing, not zero)
    with_zeros = np.flatnonzero(n_zeros > 0)
    feature = np.concatenate([feature[~nan], with_zeros.astype(np.int32)])
    values = np.concatenate([values[~nan], np.zeros(len(with_zeros))])
    weight = np.concatenate([np.ones(len(values) - len(with_zeros)), n_zeros[with_zeros].astype(np.float64)])
    order = np.lexsort((values, feature))
    feature, values, weight = feature[order], values[order], weight[order]
    del order
    new_run = np.ones(len(values), dtype=bool)  # a new distinct value (-0.0 == 0.0: one value)
    new_run[1:] = (feature[1:] != feature[:-1]) | (values[1:] != values[:-1])
    starts = np.flatnonzero(new_run)
    distinct, d_feature = values[starts] + 0.0, feature[starts]  # + 0.0: -0.0 is 0.0
    counts = np.add.reduceat(weight, starts) if len(starts) else np.zeros(0)
    del feature, values, weight, new_run, starts
    n_distinct = np.bincount(d_feature, minlength=n_features)
    first = np.concatenate([[0], np.cumsum(n_distinct)])
    # few distinct values: a cut between each neighbouring pair (a feature's are cuts[lo:hi - 1])
    cuts = _midpoints(distinct[:-1], distinct[1:]) if len(distinct) > 1 else np.zeros(0)
    few = n_distinct <= max_value_bins
    edges = []
    for f in range(n_features):  # slices and appends only, except for many distinct values
        lo, hi = first[f], first[f + 1]
        if hi - lo == 0:
            edges.append(np.array([np.inf]))
        elif few[f]:
            edges.append(np.append(cuts[lo:hi - 1], np.inf))
        else:
            edges.append(edges_from_distinct(distinct[lo:hi], counts[lo:hi], max_value_bins))
    usable = np.array([len(e) > 1 for e in edges]) | (has_missing & (n_distinct > 0))
    return edges, usable


def _weighted_edges(sample, weights: np.ndarray, max_value_bins: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Every feature's edges from its weighted values, one feature at a time; rows of zero
    weight say nothing (as BinMapper.fit)."""
    n_sampled, n_features = sample.shape
    edges, usable = [], np.zeros(n_features, dtype=bool)
    for f in range(n_features):
        lo, hi = sample.indptr[f], sample.indptr[f + 1]
        values = np.asarray(sample.data[lo:hi], dtype=np.float64)
        present = ~np.isnan(values)
        stored = np.zeros(n_sampled, dtype=bool)
        stored[sample.indices[lo:hi]] = True
        n_zeros = float(weights[~stored].sum())
        w = weights[sample.indices[lo:hi]]
        keep = present & (w > 0)
        distinct, counts = (_distinct_values(values[keep], w[keep]) if keep.any()
                            else (np.zeros(0), np.zeros(0)))
        if n_zeros > 0:
            distinct, counts = _add_zeros(distinct, counts, n_zeros)
        e = edges_from_distinct(distinct, counts, max_value_bins)
        edges.append(e)
        usable[f] = len(e) > 1 or (not present.all() and len(distinct) > 0)
    return edges, usable


def _add_zeros(distinct: np.ndarray, counts: np.ndarray, n_zeros: float) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values with the value 0 weighing n_zeros more (-0.0 is 0)."""
    i = int(np.searchsorted(distinct, 0.0))
    if i < len(distinct) and distinct[i] == 0.0:
        counts = counts.copy()
        counts[i] += n_zeros
        distinct = distinct.copy()
        distinct[i] = 0.0
        return distinct, counts
    return np.insert(distinct, i, 0.0), np.insert(counts, i, n_zeros)


def default_bins(mapper) -> np.ndarray:
    """Each feature's bin of the value 0 (1 + the first upper edge >= 0)."""
    return np.array([1 + int(np.searchsorted(e, 0.0)) for e in mapper.upper_edges], dtype=np.int32)


def bin_sparse(mapper, X, n_threads: int) -> BinnedMatrix:
    """The BinnedMatrix of a canonical CSR/CSC matrix: one sparse column per feature, rows
    stored as their non-default entries (see the module notes)."""
    n_rows, n_features = X.shape
    default = default_bins(mapper)
    column_n_bins = np.append(mapper.n_bins, 1)  # the features', then the totals column
    column_offsets = np.zeros(n_features + 2, dtype=np.int64)
    np.cumsum(column_n_bins, out=column_offsets[1:])
    if column_offsets[-1] >= 2**32:
        raise ValueError("X: too many features and bins for sparse input (histogram indices must fit in 32 bits)")
    edges = np.concatenate(mapper.upper_edges)
    edge_offsets = np.zeros(n_features + 1, dtype=np.int64)
    np.cumsum([len(e) for e in mapper.upper_edges], out=edge_offsets[1:])
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    args = (X.data, X.indices, X.indptr, edges, edge_offsets, default, column_offsets[:n_features])
    if X.format == "csr":
        bin_csr(*args, indptr, None, n_threads)
        np.cumsum(indptr, out=indptr)
        entries = np.empty(int(indptr[-1]), dtype=np.uint32)
        bin_csr(*args, indptr, entries, n_threads)
    else:
        bin_csc(*args, indptr, None)
        np.cumsum(indptr, out=indptr)
        entries = np.empty(int(indptr[-1]), dtype=np.uint32)
        bin_csc(*args, indptr, entries)
    n_columns = n_features + 1
    # each column's rows with an entry (4 bytes per entry): a split walks them beside the
    # node's rows instead of searching every row's entries
    col_indptr = np.empty(n_columns + 1, dtype=np.int64)
    col_rows = np.empty(len(entries), dtype=np.uint32)
    sparse_column_rows(indptr, entries, np.repeat(np.arange(n_columns, dtype=np.int32), column_n_bins),
                       col_indptr, col_rows)
    return BinnedMatrix(np.empty((0, n_rows), dtype=np.uint8), np.empty((0, n_rows), dtype=np.uint16),
                        np.full(n_columns, SPARSE), np.arange(n_columns), column_n_bins, mapper.n_bins,
                        np.arange(n_features), sparse=(indptr, entries, np.append(default, -1), col_indptr, col_rows))
