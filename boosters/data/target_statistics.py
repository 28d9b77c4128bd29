"""Ordered target statistics for categorical features (CatBoost's ordered CTRs): each
categorical column becomes a numeric one, the smoothed mean target of its category, which
then goes through the ordinary numeric binning and split search.

On the training rows a row's statistic reads only the rows before it in one seeded random
permutation (CatBoost's "ordered" scheme): its own target never enters its feature, so a
category seen once carries no information about its row's label (no target leakage). Any
other data (validation sets, prediction) reads the statistic of all training rows.

    statistic = (sum of targets before + prior_weight * prior) / (rows before + prior_weight)

`prior` is the mean target of the training rows. Weights are not used (CatBoost's
counters count rows). A missing category stays missing (NaN: the numeric split's missing
side, as a category split sends it); a category not seen in training gets the prior.
"""

from __future__ import annotations

import numpy as np

from boosters.data.categories import MAX_CATEGORIES

# the code a raw category value not seen in training is given at prediction (any code at
# or past a table's categories reads the prior)
UNSEEN_CODE = float(MAX_CATEGORIES)


def unseen_code(ensemble) -> float:
    """The code a model gives a category value it has not seen: UNSEEN_CODE (the prior)
    in a model of target statistics, NaN (missing) otherwise."""
    return UNSEEN_CODE if ensemble.target_statistics else np.nan


def ordered_statistics(codes: np.ndarray, y: np.ndarray, prior: float, prior_weight: float,
                       permutation: np.ndarray) -> np.ndarray:
    """Each training row's statistic from the rows before it in `permutation` (row indices
    in the order they are seen) with the same code; NaN where the code is NaN.

    Vectorised: the rows sorted by (code, position in the permutation) (a stable radix
    sort of the uint16 codes of the rows in permutation order), the targets summed
    cumulatively and restarted at each code's first row."""
    n = len(codes)
    rows = permutation[~np.isnan(codes[permutation])]
    order = rows[np.argsort(codes[rows].astype(np.uint16), kind="stable")]  # codes < MAX_CATEGORIES
    sorted_codes, targets = codes[order], y[order]
    k = np.arange(len(order))
    first = np.ones(len(order), dtype=bool)
    first[1:] = sorted_codes[1:] != sorted_codes[:-1]
    start = np.maximum.accumulate(np.where(first, k, 0))  # each row's code's first row
    before = np.concatenate(([0.0], np.cumsum(targets)[:-1]))  # sum of all targets before
    sums = before - before[start]
    out = np.full(n, np.nan)
    out[order] = (sums + prior_weight * prior) / ((k - start) + prior_weight)
    return out


def full_table(codes: np.ndarray, y: np.ndarray, n_codes: int, prior: float, prior_weight: float) -> np.ndarray:
    """The statistic of each code from all training rows, then the prior (for an unseen
    category): float64, n_codes + 1 entries."""
    known = ~np.isnan(codes)
    index = codes[known].astype(np.int64)
    sums = np.bincount(index, weights=y[known], minlength=n_codes)
    counts = np.bincount(index, minlength=n_codes)
    return np.append((sums + prior_weight * prior) / (counts + prior_weight), prior)


def fit_statistics(X: np.ndarray, y: np.ndarray, features: list[int], categories: dict, prior_weight: float,
                   seed: int) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """The training matrix with `features` (categorical, as codes) replaced by their
    ordered statistics (a new float64 array: X is not modified), and per feature the
    table `encode` reads later (see `full_table`). One permutation, drawn from `seed`,
    serves every feature."""
    y = np.asarray(y, dtype=np.float64)
    prior = float(y.mean())
    permutation = np.random.default_rng(seed).permutation(len(y))
    out = np.array(X, dtype=np.float64)
    tables = {}
    for f in features:
        codes = out[:, f].copy()
        tables[f] = full_table(codes, y, n_codes(codes, categories.get(f)), prior, prior_weight)
        out[:, f] = ordered_statistics(codes, y, prior, prior_weight, permutation)
    return out, tables


def n_codes(codes: np.ndarray, values: np.ndarray | None) -> int:
    """The categories of a feature: its values' count, or for integer codes (`values`
    None) the largest code + 1."""
    return len(values) if values is not None else int(np.nanmax(codes, initial=-1.0)) + 1


def encode(X: np.ndarray, tables: dict[int, np.ndarray]) -> np.ndarray:
    """X (categorical features as codes) with each feature of `tables` replaced by its
    statistic: a new float64 array. NaN stays NaN (missing); a code that is not an
    integer in the table's range (an unseen category) reads the prior, the last entry."""
    out = np.array(X, dtype=np.float64)
    for f, table in tables.items():
        codes = out[:, f]
        known = ~np.isnan(codes)
        seen = known & (codes >= 0) & (codes < len(table) - 1) & (codes == np.floor(codes))
        index = np.full(len(codes), len(table) - 1, dtype=np.int64)
        index[seen] = codes[seen].astype(np.int64)
        values = table[index]
        values[~known] = np.nan
        out[:, f] = values
    return out
