"""Exclusive feature bundling (EFB, as in LightGBM; RFC-0016 Phase 3b).

Sparse features that are never away from their most frequent bin in the same row
(one-hot groups, typically) are stored as one column, so one histogram pass serves
them all. Exclusivity is checked on every training row, not on a sample, so the
bundled column loses nothing: the split finder recovers each feature's histogram
exactly (its most frequent bin by difference) and the trees are those of the
unbundled data, up to floating-point ties.
"""

from __future__ import annotations

import numpy as np

from boosters.data.binned import U8, U16, BinnedMatrix

MAX_BUNDLE_BINS = 256          # bundles are stored as uint8
MAX_NONDEFAULT_FRACTION = 0.5  # denser features are never bundled: they would conflict anyway


def find_bundles(binned: BinnedMatrix, usable: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
    """Greedy bundling: sparse features by decreasing non-default count, each joins the
    first bundle it conflicts with nowhere and fits in (<= 256 bins). Returns the
    bundles of two or more features and every feature's default (most frequent) bin."""
    n_rows = binned.n_rows
    default_bin = np.zeros(binned.n_features, dtype=np.int32)
    candidates = []
    for f in range(binned.n_features):
        if not usable[f] or binned.n_bins[f] > MAX_BUNDLE_BINS:
            continue
        counts = np.bincount(binned.feature_bins(f), minlength=binned.n_bins[f])
        default_bin[f] = int(np.argmax(counts))
        if n_rows - counts[default_bin[f]] <= MAX_NONDEFAULT_FRACTION * n_rows:
            candidates.append((-(n_rows - int(counts[default_bin[f]])), f))
    bundles: list[list[int]] = []
    occupied: list[np.ndarray] = []  # per bundle: rows where some member is away from its default
    sizes: list[int] = []
    away = np.empty(n_rows, dtype=bool)
    scratch = np.empty(n_rows, dtype=bool)
    for _, f in sorted(candidates):
        np.not_equal(binned.feature_bins(f), default_bin[f], out=away)  # one feature's mask at a time
        extra = int(binned.n_bins[f]) - 1
        for k in range(len(bundles)):
            if sizes[k] + extra <= MAX_BUNDLE_BINS and not np.logical_and(occupied[k], away, out=scratch).any():
                bundles[k].append(f)
                occupied[k] |= away
                sizes[k] += extra
                break
        else:
            bundles.append([f])
            occupied.append(away.copy())
            sizes.append(1 + extra)
    return [sorted(b) for b in bundles if len(b) > 1], default_bin


def bundle_features(binned: BinnedMatrix, usable: np.ndarray) -> BinnedMatrix:
    """A BinnedMatrix whose exclusive sparse features share columns (unchanged if no
    two features can be bundled)."""
    bundles, default_bin = find_bundles(binned, usable)
    if not bundles:
        return binned
    in_bundle = {f: k for k, members in enumerate(bundles) for f in members}
    # Column order: by first feature, so the layout stays close to the feature order.
    column_features = [[f] for f in range(binned.n_features) if f not in in_bundle] + bundles
    column_features.sort(key=lambda members: members[0])

    n_u8 = sum(1 for m in column_features if len(m) > 1 or binned.n_bins[m[0]] <= 256)
    bins_u8 = np.empty((n_u8, binned.n_rows), dtype=np.uint8)
    bins_u16 = np.empty((len(column_features) - n_u8, binned.n_rows), dtype=np.uint16)
    kind, index, column_n_bins = [], [], []
    feature_column = np.zeros(binned.n_features, dtype=np.int32)
    feature_offset = np.zeros(binned.n_features, dtype=np.int32)
    feature_default = np.full(binned.n_features, -1, dtype=np.int32)
    for c, members in enumerate(column_features):
        if len(members) == 1:
            f = members[0]
            k = U8 if binned.n_bins[f] <= 256 else U16
            storage = bins_u8 if k == U8 else bins_u16
            i = sum(1 for kk in kind if kk == k)
            storage[i] = binned.feature_bins(f)
            kind.append(k)
            index.append(i)
            column_n_bins.append(binned.n_bins[f])
            feature_column[f] = c
            continue
        i = sum(1 for kk in kind if kk == U8)
        column = bins_u8[i]
        column[:] = 0
        offset = 1
        for f in members:
            bins = binned.feature_bins(f)
            d = default_bin[f]
            away = bins != d
            b = bins[away].astype(np.int32)
            column[away] = offset + np.where(b < d, b, b - 1)
            feature_column[f], feature_offset[f], feature_default[f] = c, offset, d
            offset += int(binned.n_bins[f]) - 1
        kind.append(U8)
        index.append(i)
        column_n_bins.append(offset)
    return BinnedMatrix(bins_u8, bins_u16, kind, index, column_n_bins, binned.n_bins,
                        feature_column, feature_offset, feature_default)
