"""Exact quantiles of values spread over the partitions: the absolute and pinball
objectives' start (quantiles of the labels) and renewed leaves (quantiles of each leaf's
residuals y - margin), equal to the single-machine `objectives._quantile.quantile` with equal
weights: the linear interpolation at position alpha (n - 1) between the order statistics
j and j + 1 (j = floor of the position), NumPy's default `np.quantile`.

The order statistics come from a radix select over the values' bit patterns, mapped to
unsigned keys that sort as the values do: per pass, each partition counts the digit at
`shift` of its keys that agree with the group's prefix found so far (2048 counters per
group), the driver adds the counts and picks the digit of the j-th smallest. Six passes
fix all 64 bits; a seventh fetches the smallest key above the j-th when the (j + 1)-th is
needed and is not equal to it. Worker side: `leaf_start`, `leaf_digits`, `leaf_min_above`
(a tree's leaves, on the partition state) and `label_digits`, `label_min_above` (the
labels, from their blocks); driver side: `select_quantiles`.
"""

from __future__ import annotations

import numpy as np

from boosters.training.growth._node_steps import node_rows

DIGIT_BITS = 11  # 2048 counters a pass (as _sampling.kth_largest's); GOSS's distributed select uses these too
SHIFTS = (53, 42, 31, 20, 9, 0)  # the digits, from the top (the first holds the 11 bits 53-63)
NONE_ABOVE = np.iinfo(np.uint64).max  # no key above: the partition's answer to min_above
_SIGN = np.uint64(1 << 63)
_MASK = np.uint64((1 << DIGIT_BITS) - 1)


def keys_of(values) -> np.ndarray:
    """uint64 keys ordered as the float64 values (negatives: all bits flipped, others: the
    sign bit set)."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    return np.where(bits & _SIGN, ~bits, bits | _SIGN)


def value_of(key: int) -> float:
    """The float64 value of a key (keys_of's inverse)."""
    key = np.uint64(key)
    bits = key & ~_SIGN if key & _SIGN else ~key
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def narrowed(keys: np.ndarray, prefix: int, fixed_low: int) -> np.ndarray:
    """The keys whose bits from `fixed_low` up are `prefix`'s (fixed_low 64: every key)."""
    if fixed_low >= 64:
        return keys
    return keys[(keys >> np.uint64(fixed_low)) == np.uint64(prefix >> fixed_low)]


def digits_of(keys: np.ndarray, shift: int) -> np.ndarray:
    """(2048,) int64 counts of the keys' digit at `shift`."""
    return np.bincount(((keys >> np.uint64(shift)) & _MASK).astype(np.int64), minlength=1 << DIGIT_BITS)


def digit_counts(keys: np.ndarray, prefix: int, fixed_low: int, shift: int) -> np.ndarray:
    """(2048,) int64: the digit at `shift` of the keys narrowed to `prefix` (see narrowed)."""
    return digits_of(narrowed(keys, prefix, fixed_low), shift)


def digit_at(counts: np.ndarray, rank: int) -> tuple[int, int]:
    """A radix select's pass on the driver: the digit holding the `rank`-th smallest key
    (0-based) by the pass's summed digit counts, and that key's rank among the keys of
    that digit. (The k-th largest: digit_at of the counts reversed, rank k - 1.)"""
    below = np.cumsum(counts)
    digit = int(np.searchsorted(below, rank, side="right"))  # the first with more than rank keys up to it
    return digit, rank - (int(below[digit - 1]) if digit else 0)


def min_above(keys: np.ndarray, key: int) -> int:
    above = keys[keys > np.uint64(key)]
    return int(above.min()) if len(above) else int(NONE_ABOVE)


# -- worker side: the labels (for the start), from their blocks ---------------------------------

def _label_keys(y, group: int) -> np.ndarray:
    """The keys of the labels group `group` is a quantile of: a 2-D y's column `group`
    (multi-target: one per target), else every label."""
    y = np.asarray(y)
    return keys_of(y[:, group] if y.ndim == 2 else y)


def label_digits(y, groups: int, prefixes: list, fixed_low: int, shift: int) -> np.ndarray:
    """(groups, 2048) digit counts of the labels' keys, one row per wanted quantile."""
    return np.stack([digit_counts(_label_keys(y, g), prefixes[g], fixed_low, shift) for g in range(groups)])


def label_min_above(y, keys: list) -> np.ndarray:
    return np.array([min_above(_label_keys(y, g), k) for g, k in enumerate(keys)], dtype=np.uint64)


# -- worker side: a tree's leaves, on the partition state ------------------------------------

def leaf_start(state, tree: int, leaves: list) -> np.ndarray:
    """Keep the keys of each leaf's residuals y - margin (the tree's output, its margins
    before the tree, the leaf's rows: with a row sample the sampled ones); the first pass's
    counts."""
    state.expect(tree)
    margins = state.margins[state.output]
    labels = state.y if state.y.ndim == 1 else state.y[:, state.output]  # multi-target: the output's target
    rows = [node_rows(state.partitioner, leaf).astype(np.intp) for leaf in leaves]
    state.residual_keys = [keys_of(labels[r] - margins[r]) for r in rows]
    return leaf_digits(state, tree, [0] * len(leaves), 64, SHIFTS[0])


def leaf_digits(state, tree: int, prefixes: list, fixed_low: int, shift: int) -> np.ndarray:
    state.expect(tree)
    return np.stack([digit_counts(k, p, fixed_low, shift) for k, p in zip(state.residual_keys, prefixes)])


def leaf_min_above(state, tree: int, keys: list) -> np.ndarray:
    state.expect(tree)
    return np.array([min_above(k, key) for k, key in zip(state.residual_keys, keys)], dtype=np.uint64)


def min_of(a, b):
    """The reduction's step for min_above answers."""
    return np.minimum(a, b)


# -- driver side ------------------------------------------------------------------------------

def select_quantiles(counts, digits, smallest_above, n: list, alphas: list) -> list:
    """Per group, the alpha-quantile of its n values (NaN when n is 0), as
    `objectives._quantile.quantile` with equal weights. counts: the first pass's summed digit
    counts; digits(prefixes, fixed_low, shift): a later pass's; smallest_above(keys): per
    group the smallest key above the given one (NONE_ABOVE: none)."""
    groups = len(n)
    positions = [a * (m - 1) for a, m in zip(alphas, n)]
    js = [min(int(p), m - 1) for p, m in zip(positions, n)]
    rank = [max(j, 0) for j in js]  # what is left to skip within the prefix found so far
    prefixes = [0] * groups
    for i, shift in enumerate(SHIFTS):
        if i:
            counts = digits(prefixes, SHIFTS[i - 1], shift)
        counts = np.asarray(counts, dtype=np.int64)
        equal = [0] * groups
        for g in range(groups):
            if n[g] == 0:
                continue
            digit, rank[g] = digit_at(counts[g], rank[g])
            equal[g] = int(counts[g, digit])
            prefixes[g] |= digit << shift
    # the (j + 1)-th: equal to the j-th while keys equal to it remain after it, else the smallest above
    need = [g for g in range(groups) if n[g] and positions[g] != js[g] and rank[g] + 1 >= equal[g]]
    above = smallest_above(prefixes) if need else None
    quantiles = []
    for g in range(groups):
        if n[g] == 0:
            quantiles.append(float("nan"))
            continue
        low = value_of(prefixes[g])
        if positions[g] == js[g]:
            quantiles.append(low)
            continue
        high = value_of(int(above[g])) if above is not None and g in need else low  # (need: above is set)
        quantiles.append(low + (positions[g] - js[g]) * (high - low))
    return quantiles
