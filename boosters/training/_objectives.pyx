"""Gradient/hessian kernels of the objectives: float64 margins in, float32 pairs out.

Margins are laid out (n_outputs, n_rows); gradients (n_outputs, n_rows, 2). Sample
weights scale both the gradient and the hessian.
"""

import numpy as np

from boosters.data.groups import kernel_boundaries

from cython.parallel cimport prange
from libc.float cimport FLT_MIN
from libc.math cimport exp, fabs, log2
from libc.stdint cimport int64_t
from libc.string cimport memcpy

cdef double MIN_HESSIAN = 1e-16  # keeps Newton steps finite where p(1-p) underflows


cdef inline double larger(double a, double b) noexcept nogil:
    """max(a, b) as one instruction (libm's fmax is a call)."""
    return a if a > b else b


cdef inline double weight_at(const double* w, Py_ssize_t i) noexcept nogil:  # w: IN, NULL for unit weights
    return w[i] if w != NULL else 1.0


cdef enum Objective:
    SQUARED_ERROR, LOGISTIC, SOFTMAX, LAMBDARANK, PAIRWISE, POISSON, GAMMA, TWEEDIE, HINGE, ONE_VS_REST

OBJECTIVES = {"squared": SQUARED_ERROR, "logistic": LOGISTIC, "softmax": SOFTMAX, "lambdarank": LAMBDARANK,
              "pairwise": PAIRWISE, "poisson": POISSON, "gamma": GAMMA, "tweedie": TWEEDIE,
              "hinge": HINGE, "one_vs_rest": ONE_VS_REST}


cdef class GradientKernel:
    """One objective's gradients over fixed buffers: `compute` (C, no GIL) refills `out`
    from the current margins. The trainer makes one per training and the boosting round
    calls it without the GIL; `run` is the same from Python."""

    def __init__(self, str objective,
                 const double[:, ::1] margins,   # IN: (n_outputs, n_rows), read at each compute
                 const double[::1] y,             # IN
                 const double[::1] w,             # IN: weights, or empty
                 float[:, :, ::1] out,            # OUT: (n_outputs, n_rows, 2) (grad, hess)
                 int n_threads=1,
                 groups=None,                     # IN: ranking's query boundaries (int64, n_groups + 1)
                 int ndcg_at=10,                  # IN: lambdarank's truncation
                 inverse_max_dcg=None,            # IN: lambdarank's 1 / ideal DCG@ndcg_at per query
                 double parameter=0.0):           # IN: poisson's max_delta_step, tweedie's variance power
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {sorted(OBJECTIVES)}, got {objective!r}")
        self.objective = OBJECTIVES[objective]
        cdef bint multiclass = self.objective in (SOFTMAX, ONE_VS_REST)
        cdef Py_ssize_t n_outputs = margins.shape[0] if multiclass else 1
        if multiclass and n_outputs < 2:
            raise ValueError(f"{objective} needs at least 2 classes")
        if margins.shape[0] != n_outputs or margins.shape[1] != y.shape[0]:
            raise ValueError(f"margins must have shape ({n_outputs}, {y.shape[0]})")
        if out.shape[0] != n_outputs or out.shape[1] != y.shape[0] or out.shape[2] != 2:
            raise ValueError(f"gradients must have shape ({n_outputs}, {y.shape[0]}, 2)")
        if w.shape[0] not in (0, y.shape[0]):
            raise ValueError("weights must be empty or have one value per row")
        self.margins, self.y, self.w, self.out = margins, y, w, out
        self.n_threads = n_threads
        self.parameter = parameter
        if self.objective in (LAMBDARANK, PAIRWISE):
            self._set_queries(objective, groups, ndcg_at, inverse_max_dcg)

    def _set_queries(self, str objective, groups, int ndcg_at, inverse_max_dcg):
        """The ranking objectives' queries, per-query constants and scratch. The boundaries
        and lambdarank's labels were validated by the caller (data.groups, objectives.py):
        only the O(1) shape checks that keep the indices in range are made here."""
        n_rows = self.y.shape[0]
        self.groups = kernel_boundaries(groups, n_rows, objective)
        self.sums = np.empty((n_rows, 2))
        if self.objective == PAIRWISE:
            return
        if ndcg_at < 1:
            raise ValueError(f"ndcg_at must be >= 1, got {ndcg_at}")
        if inverse_max_dcg is None or np.shape(inverse_max_dcg) != (self.groups.shape[0] - 1,):
            raise ValueError(f"lambdarank needs inverse_max_dcg: one 1 / ideal DCG@ndcg_at per query "
                             f"({self.groups.shape[0] - 1})")
        self.ndcg_at = ndcg_at
        self.inverse_max_dcg = np.ascontiguousarray(inverse_max_dcg, dtype=np.float64)
        self.discounts = 1.0 / np.log2(2.0 + np.arange(np.diff(self.groups).max()))
        self.order = np.empty(n_rows, dtype=np.int64)
        self.order_scratch = np.empty(n_rows, dtype=np.int64)

    def run(self):
        with nogil:
            self.compute()

    cdef void compute(self) noexcept nogil:
        cdef const double* wp = &self.w[0] if self.w.shape[0] > 0 else NULL
        if self.objective == SQUARED_ERROR:
            squared_error_rows(self.margins, self.y, wp, self.out, self.n_threads)
        elif self.objective == LOGISTIC:
            logistic_rows(self.margins, self.y, wp, self.out, self.n_threads)
        elif self.objective == POISSON:
            poisson_rows(self.margins, self.y, wp, self.out, self.n_threads, self.parameter)
        elif self.objective == GAMMA:
            gamma_rows(self.margins, self.y, wp, self.out, self.n_threads)
        elif self.objective == TWEEDIE:
            tweedie_rows(self.margins, self.y, wp, self.out, self.n_threads, self.parameter)
        elif self.objective == HINGE:
            hinge_rows(self.margins, self.y, wp, self.out, self.n_threads)
        elif self.objective == ONE_VS_REST:
            one_vs_rest_rows(self.margins, self.y, wp, self.out, self.n_threads)
        elif self.objective == LAMBDARANK:
            lambdarank_queries(self, wp)
        elif self.objective == PAIRWISE:
            pairwise_queries(self, wp)
        else:
            softmax_rows(self.margins, self.y, wp, self.out, self.n_threads)


# -- the kernels --------------------------------------------------------------------------

cdef void squared_error_rows(
    const double[:, ::1] margins,   # IN: (1, n_rows)
    const double[::1] y,             # IN
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (1, n_rows, 2) (grad, hess)
    int n_threads,
) noexcept nogil:
    """g = w (f - y), h = w."""
    cdef Py_ssize_t i
    cdef double wi
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        wi = weight_at(w, i)
        out[0, i, 0] = <float> (wi * (margins[0, i] - y[i]))
        out[0, i, 1] = <float> wi


cdef inline void logistic_pair(double f, double y, double w, float* out) noexcept nogil:  # out: OUT (grad, hess)
    """p = sigmoid(f): g = w (p - y), h = w max(p (1 - p), 1e-16)."""
    cdef double p = 1.0 / (1.0 + exp(-f))
    out[0] = <float> (w * (p - y))
    out[1] = <float> (w * larger(p * (1.0 - p), MIN_HESSIAN))


cdef void logistic_rows(
    const double[:, ::1] margins,   # IN: (1, n_rows)
    const double[::1] y,             # IN: labels in [0, 1]
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (1, n_rows, 2) (grad, hess)
    int n_threads,
) noexcept nogil:
    """Cross-entropy of p = sigmoid(f) against y in [0, 1] (0/1 or a probability)."""
    cdef Py_ssize_t i
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        logistic_pair(margins[0, i], y[i], weight_at(w, i), &out[0, i, 0])


cdef void one_vs_rest_rows(
    const double[:, ::1] margins,   # IN: (n_classes, n_rows)
    const double[::1] y,             # IN: class labels 0..n_classes-1
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (n_classes, n_rows, 2) (grad, hess)
    int n_threads,
) noexcept nogil:
    """Output k: the logistic loss of its own margin against [y == k] (LightGBM's multiclassova)."""
    cdef Py_ssize_t i, k
    cdef double wi
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        wi = weight_at(w, i)
        for k in range(margins.shape[0]):
            logistic_pair(margins[k, i], 1.0 if y[i] == k else 0.0, wi, &out[k, i, 0])


cdef void hinge_rows(
    const double[:, ::1] margins,   # IN: (1, n_rows)
    const double[::1] y,             # IN: 0 / 1 labels
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (1, n_rows, 2) (grad, hess)
    int n_threads,
) noexcept nogil:
    """Loss max(0, 1 - s f), s = 2y - 1 (XGBoost's binary:hinge): where s f < 1, g = -s w and
    h = w; elsewhere g = 0 and h = FLT_MIN (unweighted, as XGBoost), so leaves of such rows
    keep their margins."""
    cdef Py_ssize_t i
    cdef double s, wi
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        s = 2.0 * y[i] - 1.0
        if margins[0, i] * s < 1.0:
            wi = weight_at(w, i)
            out[0, i, 0] = <float> (-s * wi)
            out[0, i, 1] = <float> wi
        else:
            out[0, i, 0] = 0.0
            out[0, i, 1] = FLT_MIN


cdef void softmax_rows(
    const double[:, ::1] margins,   # IN: (n_classes, n_rows), n_classes >= 2
    const double[::1] y,             # IN: class labels 0..n_classes-1
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (n_classes, n_rows, 2) (grad, hess)
    int n_threads,
) noexcept nogil:
    """p = softmax(f) over the K outputs: g_k = w (p_k - [y == k]),
    h_k = w K/(K-1) p_k (1 - p_k) (LightGBM's diagonal hessian bound)."""
    cdef Py_ssize_t n_classes = margins.shape[0]
    cdef double factor = n_classes / (n_classes - 1.0)
    cdef Py_ssize_t i, k, label
    cdef double top, total, p, wi
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        top = margins[0, i]
        for k in range(1, n_classes):
            top = larger(top, margins[k, i])
        total = 0.0
        for k in range(n_classes):
            total = total + exp(margins[k, i] - top)
        label = <Py_ssize_t> y[i]
        wi = weight_at(w, i)
        for k in range(n_classes):
            p = exp(margins[k, i] - top) / total
            out[k, i, 0] = <float> (wi * (p - (1.0 if k == label else 0.0)))
            out[k, i, 1] = <float> (wi * larger(factor * p * (1.0 - p), MIN_HESSIAN))


# -- log-link regression: margins are log-means (LightGBM's poisson, gamma, tweedie) --------

cdef void poisson_rows(
    const double[:, ::1] margins,   # IN: (1, n_rows)
    const double[::1] y,             # IN: counts >= 0
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (1, n_rows, 2) (grad, hess)
    int n_threads,
    double max_delta_step,           # IN: the hessian is taken this far above the margin
) noexcept nogil:
    """Loss exp(f) - y f: g = w (exp(f) - y), h = w exp(f + max_delta_step). The inflated
    hessian damps the Newton steps of leaves whose rows are all 0 (their exact step is -inf)."""
    cdef Py_ssize_t i
    cdef double wi
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        wi = weight_at(w, i)
        out[0, i, 0] = <float> (wi * (exp(margins[0, i]) - y[i]))
        out[0, i, 1] = <float> (wi * exp(margins[0, i] + max_delta_step))


cdef void gamma_rows(
    const double[:, ::1] margins,   # IN: (1, n_rows)
    const double[::1] y,             # IN: > 0
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (1, n_rows, 2) (grad, hess)
    int n_threads,
) noexcept nogil:
    """Loss y exp(-f) + f: g = w (1 - y exp(-f)), h = w y exp(-f)."""
    cdef Py_ssize_t i
    cdef double wi, ratio
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        wi = weight_at(w, i)
        ratio = y[i] * exp(-margins[0, i])
        out[0, i, 0] = <float> (wi * (1.0 - ratio))
        out[0, i, 1] = <float> (wi * ratio)


cdef void tweedie_rows(
    const double[:, ::1] margins,   # IN: (1, n_rows)
    const double[::1] y,             # IN: >= 0
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (1, n_rows, 2) (grad, hess)
    int n_threads,
    double p,                        # IN: the variance power, 1 < p < 2
) noexcept nogil:
    """Loss exp((2-p) f)/(2-p) - y exp((1-p) f)/(1-p):
    g = w (exp((2-p) f) - y exp((1-p) f)), h = w ((2-p) exp((2-p) f) - (1-p) y exp((1-p) f))."""
    cdef Py_ssize_t i
    cdef double wi, a, b
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        wi = weight_at(w, i)
        a = exp((2.0 - p) * margins[0, i])
        b = y[i] * exp((1.0 - p) * margins[0, i])
        out[0, i, 0] = <float> (wi * (a - b))
        out[0, i, 1] = <float> (wi * ((2.0 - p) * a - (1.0 - p) * b))


# -- lambdarank ---------------------------------------------------------------------------
# LightGBM's lambdarank (Burges 2010, "From RankNet to LambdaRank to LambdaMART"), with its
# defaults: gain 2^label - 1, discount 1/log2(2 + position), sigmoid 1, pair weights
# |delta NDCG| / (0.01 + |score gap|) and the per-query log2(1 + S)/S normalisation.

MAX_LABEL = 30  # gains 2^label - 1 stay exact in float64; LightGBM's default label_gain has 31 entries


cdef inline double gain(double label) noexcept nogil:
    return (<double> (<int64_t> 1 << <int> label)) - 1.0


cdef void sort_by_score(int64_t* order, int64_t* scratch, const double* score, Py_ssize_t n) noexcept nogil:
    """order[0:n] = 0..n-1 by score, highest first, ties in row order (a stable bottom-up
    merge sort; the same order for any thread count)."""
    cdef Py_ssize_t i, width = 1, lo, mid, hi, a, b
    cdef int64_t* src = order
    cdef int64_t* dst = scratch
    cdef int64_t* swap
    for i in range(n):
        order[i] = i
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a, b, i = lo, mid, lo
            while i < hi:  # the left run wins ties: stable
                if b >= hi or (a < mid and score[src[a]] >= score[src[b]]):
                    dst[i] = src[a]
                    a += 1
                else:
                    dst[i] = src[b]
                    b += 1
                i += 1
            lo = hi
        swap, src, dst = src, dst, src
        width *= 2
    if src != order:
        memcpy(order, src, n * sizeof(int64_t))


cdef void lambdarank_queries(GradientKernel kernel, const double* w) noexcept nogil:
    """Every query's lambdas, one query per thread at a time (disjoint rows and scratch)."""
    cdef Py_ssize_t q, start, n
    for q in prange(kernel.groups.shape[0] - 1, schedule="dynamic", num_threads=kernel.n_threads):
        start = kernel.groups[q]
        n = kernel.groups[q + 1] - start
        lambdarank_query(&kernel.margins[0, start], &kernel.y[start], w + start if w != NULL else NULL,
                         n, kernel.ndcg_at, kernel.inverse_max_dcg[q], &kernel.discounts[0], &kernel.order[start],
                         &kernel.order_scratch[start], &kernel.sums[start, 0], &kernel.out[0, start, 0])


cdef void lambdarank_query(
    const double* score,        # IN: the query's n margins
    const double* y,            # IN: its labels (integers 0..30)
    const double* w,            # IN: its weights, NULL for unit weights
    Py_ssize_t n, int ndcg_at,
    double inverse_max_dcg,     # IN: 1 / ideal DCG@ndcg_at (0: no relevant row, no gradient)
    const double* discounts,    # IN: discount(position) for positions 0..n-1
    int64_t* order,             # scratch: n
    int64_t* order_scratch,     # scratch: n
    double* sums,               # scratch: (n, 2)
    float* out,                 # OUT: (n, 2) (grad, hess)
) noexcept nogil:
    """For each pair (i, j) of rows with labels l_i > l_j, one of them among the top
    ndcg_at by score: rho = 1 / (1 + exp(s_i - s_j)), dNDCG = |gain_i - gain_j|
    |discount(rank_i) - discount(rank_j)| / ideal DCG, divided by 0.01 + |s_i - s_j|
    unless all scores are equal; g_i -= rho dNDCG, g_j += rho dNDCG, both h +=
    rho (1 - rho) dNDCG. Then g and h are scaled by log2(1 + S) / S, S the sum of
    2 rho dNDCG over the pairs, and by the row weights."""
    cdef Py_ssize_t i, j, r, a, b, high, low
    cdef double delta_score, delta_ndcg, rho, lam, hess, total = 0.0, factor = 1.0
    cdef bint scaled_by_gap
    for r in range(2 * n):
        sums[r] = 0.0
    if inverse_max_dcg == 0.0:  # every label 0: nothing to order
        for r in range(2 * n):
            out[r] = 0.0
        return
    sort_by_score(order, order_scratch, score, n)
    scaled_by_gap = score[order[0]] != score[order[n - 1]]
    for i in range(min(n - 1, <Py_ssize_t> ndcg_at)):
        a = order[i]
        for j in range(i + 1, n):
            b = order[j]
            if y[a] == y[b]:
                continue
            high, low = (a, b) if y[a] > y[b] else (b, a)  # the more relevant row of the pair first
            delta_score = score[high] - score[low]
            # |gain difference| * |discount difference| / ideal DCG
            delta_ndcg = fabs(gain(y[a]) - gain(y[b])) * (discounts[i] - discounts[j]) * inverse_max_dcg
            if scaled_by_gap:
                delta_ndcg /= 0.01 + fabs(delta_score)
            rho = 1.0 / (1.0 + exp(delta_score))
            lam = rho * delta_ndcg
            hess = rho * (1.0 - rho) * delta_ndcg
            sums[2 * high] -= lam
            sums[2 * low] += lam
            sums[2 * high + 1] += hess
            sums[2 * low + 1] += hess
            total += 2.0 * lam
    if total > 0.0:
        factor = log2(1.0 + total) / total
    for r in range(n):
        out[2 * r] = <float> (sums[2 * r] * factor * weight_at(w, r))
        out[2 * r + 1] = <float> (sums[2 * r + 1] * factor * weight_at(w, r))


# -- pairwise (RankNet) -------------------------------------------------------------------

cdef void pairwise_queries(GradientKernel kernel, const double* w) noexcept nogil:
    """Every query's RankNet gradients, one query per thread at a time."""
    cdef Py_ssize_t q, start, n
    for q in prange(kernel.groups.shape[0] - 1, schedule="dynamic", num_threads=kernel.n_threads):
        start = kernel.groups[q]
        n = kernel.groups[q + 1] - start
        pairwise_query(&kernel.margins[0, start], &kernel.y[start], w + start if w != NULL else NULL, n,
                       &kernel.sums[start, 0], &kernel.out[0, start, 0])


cdef void pairwise_query(
    const double* score,        # IN: the query's n margins
    const double* y,            # IN: its labels (any order-able values)
    const double* w,            # IN: its weights, NULL for unit weights
    Py_ssize_t n,
    double* sums,               # scratch: (n, 2)
    float* out,                 # OUT: (n, 2) (grad, hess)
) noexcept nogil:
    """The logistic loss log(1 + exp(-(s_i - s_j))) of every pair with l_i > l_j (Burges
    et al. 2005): rho = 1 / (1 + exp(s_i - s_j)); g_i -= rho, g_j += rho, both
    h += rho (1 - rho); then times the row weights. Pairs in row order: the same sums
    for any thread count."""
    cdef Py_ssize_t i, j, r, high, low
    cdef double rho, hess
    for r in range(2 * n):
        sums[r] = 0.0
    for i in range(n - 1):
        for j in range(i + 1, n):
            if y[i] == y[j]:
                continue
            high, low = (i, j) if y[i] > y[j] else (j, i)
            rho = 1.0 / (1.0 + exp(score[high] - score[low]))
            hess = rho * (1.0 - rho)
            sums[2 * high] -= rho
            sums[2 * low] += rho
            sums[2 * high + 1] += hess
            sums[2 * low + 1] += hess
    for r in range(n):
        out[2 * r] = <float> (sums[2 * r] * weight_at(w, r))
        out[2 * r + 1] = <float> (larger(sums[2 * r + 1], 0.0) * weight_at(w, r))
