"""The weighted quantile: the start of the absolute and pinball objectives and the value
their leaves are renewed to (training/growth/_leaf_renewal), one definition for both.

Values sorted ascending, row i sits at position q_i = E_i + (w_i - w_first) / 2 (E_i: the
weight of the rows before it), and the alpha-quantile is the linear interpolation at
q = alpha (W - (w_first + w_last) / 2), W the total weight: with equal weights q_i = i and
q = alpha (n - 1), NumPy's default `np.quantile` and LightGBM's PercentileFun. Rows of
weight 0 do not count. Equal weights take two order statistics by selection, O(n) (as
LightGBM); other weights sort, O(n log n).
"""

import numpy as np

from libc.math cimport NAN
from libc.stdlib cimport qsort


cdef int by_value_then_weight(const void* a, const void* b) noexcept nogil:
    """Ascending value, ties by weight: a total order, so the result never depends on the
    rows' order."""
    cdef const WeightedValue* x = <const WeightedValue*> a
    cdef const WeightedValue* y = <const WeightedValue*> b
    if x.value != y.value:
        return -1 if x.value < y.value else 1
    if x.weight != y.weight:
        return -1 if x.weight < y.weight else 1
    return 0


cdef inline void swap(WeightedValue* items, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef WeightedValue t = items[i]
    items[i] = items[j]
    items[j] = t


cdef inline double median_of_three(double a, double b, double c) noexcept nogil:
    if a < b:
        return b if b < c else (c if a < c else a)
    return a if a < c else (c if b < c else b)


cdef double select(WeightedValue* items, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The k-th smallest value (0-based) of items[0:n], reordering them so that the items
    after position k are >= it: quickselect with a median-of-three pivot and a three-way
    partition (runs of equal values, common in residuals, stay linear)."""
    cdef Py_ssize_t lo = 0, hi = n, lt, i, gt
    cdef double pivot
    while hi - lo > 16:
        pivot = median_of_three(items[lo].value, items[(lo + hi) // 2].value, items[hi - 1].value)
        lt, i, gt = lo, lo, hi  # [lo, lt) < pivot, [lt, i) == pivot, [gt, hi) > pivot
        while i < gt:
            if items[i].value < pivot:
                swap(items, lt, i)
                lt += 1
                i += 1
            elif items[i].value > pivot:
                gt -= 1
                swap(items, i, gt)
            else:
                i += 1
        if k < lt:
            hi = lt
        elif k >= gt:
            lo = gt
        else:
            return pivot
    for i in range(lo + 1, hi):  # a short range: insertion sort
        gt = i
        while gt > lo and items[gt - 1].value > items[gt].value:
            swap(items, gt - 1, gt)
            gt -= 1
    return items[k].value


cdef double equal_weight_quantile(WeightedValue* items, Py_ssize_t n, double alpha) noexcept nogil:
    """Linear interpolation at position alpha (n - 1) between two order statistics."""
    cdef double position = alpha * (n - 1), low, high
    cdef Py_ssize_t j = <Py_ssize_t> position, i
    if j >= n - 1:
        j = n - 1
    low = select(items, n, j)
    if position == j:
        return low
    high = items[j + 1].value  # the smallest after position j
    for i in range(j + 2, n):
        if items[i].value < high:
            high = items[i].value
    return low + (position - j) * (high - low)


cdef double weighted_quantile(
    WeightedValue* items,   # IN (reordered): n (value, weight > 0) pairs
    Py_ssize_t n,
    double alpha,           # the level, in [0, 1]
) noexcept nogil:
    """The weighted alpha-quantile of the module docstring; NaN when n == 0."""
    cdef Py_ssize_t i
    cdef double total = 0.0, target, position = 0.0, next_position, span
    cdef bint equal = True
    if n == 0:
        return NAN
    if n == 1:
        return items[0].value
    for i in range(1, n):
        equal = equal and items[i].weight == items[0].weight
    if equal:
        return equal_weight_quantile(items, n, alpha)
    qsort(items, n, sizeof(WeightedValue), by_value_then_weight)
    for i in range(n):
        total += items[i].weight
    target = alpha * (total - 0.5 * (items[0].weight + items[n - 1].weight))
    for i in range(n - 1):  # position: q_i; the gap to q_{i+1} is (w_i + w_{i+1}) / 2 > 0
        next_position = position + 0.5 * (items[i].weight + items[i + 1].weight)
        if target < next_position:
            span = next_position - position
            return items[i].value + (target - position) / span * (items[i + 1].value - items[i].value)
        position = next_position
    return items[n - 1].value


def quantile(values, weights, double alpha):
    """The weighted alpha-quantile of `values` (weights: None for equal ones), as the leaves
    are renewed; NaN without a row of weight > 0."""
    cdef const double[::1] v = np.ascontiguousarray(values, dtype=np.float64)
    cdef const double[::1] w = (np.ones(v.shape[0]) if weights is None
                                else np.ascontiguousarray(weights, dtype=np.float64))
    if w.shape[0] != v.shape[0]:
        raise ValueError("weights must have one value per value")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    cdef WeightedValue[::1] items = np.empty(v.shape[0], dtype=[("value", np.float64), ("weight", np.float64)])
    cdef Py_ssize_t i, n = 0
    for i in range(v.shape[0]):
        if w[i] > 0:
            items[n].value = v[i]
            items[n].weight = w[i]
            n += 1
    return weighted_quantile(&items[0] if n else NULL, n, alpha)
