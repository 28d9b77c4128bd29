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


class BundleLayout:
    """Which features share which stored column, and how each is encoded there."""

    def __init__(self, n_bins: np.ndarray, bundles: list[list[int]], default_bin: np.ndarray):
        self.n_bins = np.asarray(n_bins, dtype=np.int32)
        self.bundles = bundles
        in_bundle = {f for members in bundles for f in members}
        # Column order: by first feature, so the layout stays close to the feature order.
        self.columns = sorted([[f] for f in range(len(self.n_bins)) if f not in in_bundle] + bundles,
                              key=lambda members: members[0])
        n_features = len(self.n_bins)
        self.kind, self.index, self.column_n_bins = [], [], []
        self.feature_column = np.zeros(n_features, dtype=np.int32)
        self.feature_offset = np.zeros(n_features, dtype=np.int32)
        self.feature_default = np.full(n_features, -1, dtype=np.int32)
        counts = {U8: 0, U16: 0}
        for c, members in enumerate(self.columns):
            k = U8 if len(members) > 1 or self.n_bins[members[0]] <= 256 else U16
            self.kind.append(k)
            self.index.append(counts[k])
            counts[k] += 1
            offset = 1
            for f in members:
                self.feature_column[f] = c
                if len(members) > 1:
                    self.feature_offset[f], self.feature_default[f] = offset, default_bin[f]
                    offset += int(self.n_bins[f]) - 1
            self.column_n_bins.append(offset if len(members) > 1 else int(self.n_bins[members[0]]))
        self.n_u8, self.n_u16 = counts[U8], counts[U16]

    def allocate(self, n_rows: int) -> BinnedMatrix:
        return BinnedMatrix(np.empty((self.n_u8, n_rows), dtype=np.uint8),
                            np.empty((self.n_u16, n_rows), dtype=np.uint16), self.kind, self.index,
                            self.column_n_bins, self.n_bins, self.feature_column, self.feature_offset,
                            self.feature_default)

    def encode(self, plain: BinnedMatrix, out: BinnedMatrix, start: int) -> np.ndarray:
        """Write the rows of `plain` (one column per feature) at rows start.. of `out`;
        returns, per bundle, whether some row had two members away from their default
        (then that bundle cannot hold those rows)."""
        stop = start + plain.n_rows
        conflicts = np.zeros(len(self.bundles), dtype=bool)
        bundle_of = {id(members): k for k, members in enumerate(self.bundles)}
        for c, members in enumerate(self.columns):
            target = out.column_bins(c)[start:stop]
            if len(members) == 1:
                target[:] = plain.feature_bins(members[0])
                continue
            target[:] = 0
            n_away = np.zeros(plain.n_rows, dtype=np.uint8)
            for f in members:
                bins = plain.feature_bins(f)
                d = int(self.feature_default[f])
                away = bins != d
                b = bins[away].astype(np.int32)
                target[away] = self.feature_offset[f] + np.where(b < d, b, b - 1)
                n_away += away
            conflicts[bundle_of[id(members)]] = bool((n_away > 1).any())
        return conflicts


def bundle_features(binned: BinnedMatrix, usable: np.ndarray) -> BinnedMatrix:
    """A BinnedMatrix whose exclusive sparse features share columns (unchanged if no
    two features can be bundled); bundles found on every row of `binned`."""
    bundles, default_bin = find_bundles(binned, usable)
    if not bundles:
        return binned
    layout = BundleLayout(binned.n_bins, bundles, default_bin)
    out = layout.allocate(binned.n_rows)
    layout.encode(binned, out, 0)
    return out


CHUNK_ROWS = 65536


def bin_and_bundle(mapper, X: np.ndarray, n_threads: int, sample_rows: np.ndarray | None = None) -> BinnedMatrix:
    """Bin X straight into its bundled layout, never holding one column per feature for
    all rows: bundles are found on the binning sample, then X is binned and encoded in
    chunks of rows. A bundle that the full data contradicts (two members away from their
    default in one row) is split back into separate columns, so nothing is lost."""
    n_rows = X.shape[0]
    if sample_rows is None or len(sample_rows) >= n_rows:
        return bundle_features(mapper.transform(X, n_threads), mapper.is_usable & ~mapper.is_categorical)
    sample = _bin_rows(mapper, X, sample_rows, n_threads)
    bundles, default_bin = find_bundles(sample, mapper.is_usable & ~mapper.is_categorical)  # never categorical
    del sample
    while True:
        layout = BundleLayout(mapper.n_bins, bundles, default_bin)
        out = layout.allocate(n_rows)
        conflicts = np.zeros(len(bundles), dtype=bool)
        for start in range(0, n_rows, CHUNK_ROWS):
            conflicts |= layout.encode(mapper.transform(X[start:start + CHUNK_ROWS], n_threads), out, start)
        if not conflicts.any():
            return out
        bundles = [members for members, bad in zip(bundles, conflicts) if not bad]


def _bin_rows(mapper, X: np.ndarray, rows: np.ndarray, n_threads: int) -> BinnedMatrix:
    """The bins of the given rows of X, binned a chunk of rows at a time (no copy of all
    those rows of X at once)."""
    parts = [mapper.transform(X[rows[i:i + CHUNK_ROWS // 4]], n_threads)
             for i in range(0, len(rows), CHUNK_ROWS // 4)]
    first = parts[0]
    return BinnedMatrix(np.concatenate([p.bins_u8 for p in parts], axis=1),
                        np.concatenate([p.bins_u16 for p in parts], axis=1),
                        first.column_kind, first.column_index, first.column_n_bins, first.n_bins,
                        first.feature_column)
