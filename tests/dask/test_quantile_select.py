"""boosters.dask._quantile_select: exact quantiles of values split over partitions, by a
radix select over their keys, against the single-machine `objectives._quantile.quantile` (equal
weights), bit for bit. The partitions are simulated: lists of arrays whose digit counts
are added as the driver adds the partitions' results."""

import numpy as np
import pytest

from boosters.dask import _quantile_select as select
from boosters.objectives._quantile import quantile


def distributed_quantiles(groups: list, alphas: list) -> list:
    """groups: per group, its values as a list of partitions' arrays."""
    keys = [[select.keys_of(part) for part in parts] for parts in groups]

    def digits(prefixes, fixed_low, shift):
        return np.stack([sum(select.digit_counts(k, prefixes[g], fixed_low, shift) for k in parts)
                         for g, parts in enumerate(keys)])

    def smallest_above(found):
        return np.array([min(select.min_above(k, found[g]) for k in parts) for g, parts in enumerate(keys)],
                        dtype=np.uint64)

    n = [sum(len(k) for k in parts) for parts in keys]
    return select.select_quantiles(digits([0] * len(keys), 64, select.SHIFTS[0]), digits, smallest_above, n, alphas)


def test_keys_sort_as_the_values():
    values = np.array([-np.inf, -1e300, -2.5, -1.0, -1e-300, -0.0, 0.0, 1e-300, 1.0, 2.5, 1e300, np.inf])
    keys = select.keys_of(values)
    assert np.all(np.diff(keys.astype(object)) > 0)
    assert [select.value_of(int(k)) for k in keys] == values.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_equals_the_single_machine_quantile(seed):
    rng = np.random.default_rng(seed)
    groups, alphas, expected = [], [], []
    for g in range(40):
        n = int(rng.choice([1, 2, 3, 7, 50, 333]))
        values = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4)
        if g % 3 == 0:
            values = np.round(values * 2) / 2  # many ties
        if g % 5 == 0:
            values = -np.abs(values)  # all negative
        alpha = float(rng.choice([0.0, 0.1, 0.25, 0.5, 0.9, 1.0, rng.random()]))
        cuts = np.sort(rng.integers(0, n + 1, size=int(rng.integers(0, 4))))
        groups.append(np.split(values, cuts))  # some partitions empty
        alphas.append(alpha)
        expected.append(quantile(values, None, alpha))
    assert distributed_quantiles(groups, alphas) == expected  # exact


def test_a_group_without_values_is_nan():
    result = distributed_quantiles([[np.array([])], [np.array([3.0]), np.array([])]], [0.5, 0.5])
    assert np.isnan(result[0]) and result[1] == 3.0
