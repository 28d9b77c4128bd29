"""Gradient/hessian kernels of the objectives: float64 margins in, float32 pairs out. Each
objective's definition (boosters/objectives/) names its kernel (KERNELS); a custom
objective's is CustomGradients, filled from Python.

Margins are laid out (n_outputs, n_rows); gradients (n_outputs, n_rows, 2); labels
(n_label_rows, n_rows), n_label_rows 1 (every output reads row 0) or n_outputs (output k
reads row k: several targets). Sample weights scale both the gradient and the hessian.

A pointwise objective (each row's gradient from its own margin and label) is one case of
`pointwise` below, with at most one number per output (`parameters[k]`); `pointwise_rows`
is the one loop over outputs and rows that all of them share. Softmax (a row's outputs
together) and ranking (a query's rows together) have loops of their own.
"""

import numbers

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
    SQUARED_ERROR, LOGISTIC, SOFTMAX, LAMBDARANK, PAIRWISE, POISSON, GAMMA, TWEEDIE
    ABSOLUTE, HUBER, PINBALL, HINGE, ONE_VS_REST

KERNELS = {"squared": SQUARED_ERROR, "logistic": LOGISTIC, "softmax": SOFTMAX, "lambdarank": LAMBDARANK,
           "pairwise": PAIRWISE, "poisson": POISSON, "gamma": GAMMA, "tweedie": TWEEDIE}
KERNELS.update({"absolute": ABSOLUTE, "huber": HUBER, "pinball": PINBALL})
KERNELS.update(hinge=HINGE, one_vs_rest=ONE_VS_REST)
GROUPED = (LAMBDARANK, PAIRWISE)  # one output: a query's rows together
ROW_WISE = (SOFTMAX,)             # a row's outputs together


cdef class GradientKernel:
    """One objective's gradients over fixed buffers: `compute` (C, no GIL) refills `out`
    from the current margins. The trainer makes one per training and the boosting round
    calls it without the GIL; `run` is the same from Python."""

    def __init__(self, str objective,
                 const double[:, ::1] margins,   # IN: (n_outputs, n_rows), read at each compute
                 labels,                          # IN: (n_rows,) or (n_label_rows, n_rows) float64
                 const double[::1] w,             # IN: weights, or empty
                 float[:, :, ::1] out,            # OUT: (n_outputs, n_rows, 2) (grad, hess)
                 int n_threads=1,
                 groups=None,                     # IN: ranking's query boundaries (int64, n_groups + 1)
                 int ndcg_at=10,                  # IN: lambdarank's truncation
                 inverse_max_dcg=None,            # IN: lambdarank's 1 / ideal DCG@ndcg_at per query
                 parameters=0.0):                 # IN: one number per output, or one for all (see pointwise)
        if objective not in KERNELS:
            raise ValueError(f"objective must be one of {sorted(KERNELS)}, got {objective!r}")
        self.objective = KERNELS[objective]
        label_rows = np.asarray(labels)
        if label_rows.ndim == 1:
            label_rows = label_rows[None, :]
        self.labels = label_rows  # a C-contiguous float64 (n_label_rows, n_rows) view, or a TypeError/ValueError
        cdef Py_ssize_t n_rows = self.labels.shape[1], n_outputs = margins.shape[0]
        if self.objective in GROUPED and n_outputs != 1:
            raise ValueError(f"{objective} has one output, got margins for {n_outputs}")
        if self.objective == SOFTMAX and n_outputs < 2:
            raise ValueError("softmax needs at least 2 classes")
        if margins.shape[1] != n_rows or n_outputs < 1:
            raise ValueError(f"margins must have shape (n_outputs, {n_rows})")
        if self.labels.shape[0] not in (1, n_outputs) or (self.objective in ROW_WISE and self.labels.shape[0] != 1):
            raise ValueError(f"labels must have 1 or n_outputs ({n_outputs}) rows of {n_rows}")
        if out.shape[0] != n_outputs or out.shape[1] != n_rows or out.shape[2] != 2:
            raise ValueError(f"gradients must have shape ({n_outputs}, {n_rows}, 2)")
        if w.shape[0] not in (0, n_rows):
            raise ValueError("weights must be empty or have one value per row")
        if isinstance(parameters, numbers.Real):
            parameters = np.full(n_outputs, parameters)
        self.parameters = np.ascontiguousarray(parameters, dtype=np.float64)
        if self.parameters.shape[0] != n_outputs:
            raise ValueError(f"parameters must be one number or one per output ({n_outputs})")
        self.margins, self.w, self.out = margins, w, out
        self.y = self.labels[0]
        self.n_threads = n_threads
        if self.objective in GROUPED:
            self._set_queries(objective, groups, ndcg_at, inverse_max_dcg)

    def _set_queries(self, str objective, groups, int ndcg_at, inverse_max_dcg):
        """The ranking objectives' queries, per-query constants and scratch. The boundaries
        and lambdarank's labels were validated by the caller (data.groups, the objective):
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
        if self.objective == LAMBDARANK:
            lambdarank_queries(self, wp)
        elif self.objective == PAIRWISE:
            pairwise_queries(self, wp)
        elif self.objective == SOFTMAX:
            softmax_rows(self.margins, self.y, wp, self.out, self.n_threads)
        else:
            pointwise_rows(self.objective, self.margins, self.labels, wp, self.parameters, self.out,
                           self.n_threads)


# -- pointwise objectives --------------------------------------------------------------------

cdef inline (double, double) pointwise(int objective, double f, double y, double parameter) noexcept nogil:
    """One row's (gradient, hessian) of the loss at margin f, label y, before its weight.
    To add a pointwise objective: an Objective enum value, its name in KERNELS, a case
    here (its `parameter`: the output's number), its two-line loop in pointwise_rows, and
    its definition in boosters/objectives/ (its `kernel`: that name)."""
    cdef double p, a, b
    if objective == SQUARED_ERROR:  # (f - y)^2 / 2
        return f - y, 1.0
    if objective == LOGISTIC or objective == ONE_VS_REST:
        # log(1 + e^f) - y f, p = sigmoid(f), y in [0, 1] (a class or a probability); h floored:
        # finite Newton steps. One-vs-rest: output k against [y == k], `parameter` is k
        if objective == ONE_VS_REST:
            y = 1.0 if y == parameter else 0.0
        p = 1.0 / (1.0 + exp(-f))
        return p - y, larger(p * (1.0 - p), MIN_HESSIAN)
    if objective == HINGE:
        # max(0, 1 - s f), s = 2y - 1 (XGBoost's binary:hinge); where s f >= 1 the hessian is
        # FLT_MIN (a leaf of such rows keeps its margin)
        a = 2.0 * y - 1.0
        if a * f < 1.0:
            return -a, 1.0
        return 0.0, FLT_MIN
    # log-link regression: f is a log-mean (LightGBM's poisson, gamma, tweedie)
    if objective == POISSON:
        # exp(f) - y f; the hessian is taken max_delta_step (`parameter`) above f: it damps
        # the Newton steps of leaves whose rows are all 0 (their exact step is -inf)
        return exp(f) - y, exp(f + parameter)
    if objective == GAMMA:  # y exp(-f) + f
        p = y * exp(-f)
        return 1.0 - p, p
    if objective == TWEEDIE:  # exp((2-p) f)/(2-p) - y exp((1-p) f)/(1-p), p = `parameter` in (1, 2)
        a = exp((2.0 - parameter) * f)
        b = y * exp((1.0 - parameter) * f)
        return a - b, (2.0 - parameter) * a - (1.0 - parameter) * b
    # robust regression (LightGBM's l1, huber, quantile): the hessian is 1; absolute's and
    # pinball's leaves are renewed to residual quantiles after (_leaf_renewal)
    if objective == ABSOLUTE:  # |f - y|; the gradient 0 at f == y
        return (f > y) - (f < y), 1.0
    if objective == HUBER:  # (f - y)^2 / 2 within `parameter` (delta) of y, linear beyond: f - y clipped
        p = f - y
        return (parameter if p > parameter else (-parameter if p < -parameter else p)), 1.0
    if objective == PINBALL:  # level a = `parameter`: a (y - f) for y >= f, (1 - a) (f - y) below
        return (1.0 - parameter if f >= y else -parameter), 1.0
    return 0.0, 0.0  # not reached: the constructor accepts only known objectives


cdef inline void store(float* out, const double* w, Py_ssize_t i, (double, double) grad_hess) noexcept nogil:
    """Row i's weighted (gradient, hessian) into out[2i], out[2i + 1]."""
    cdef double wi = weight_at(w, i)
    out[2 * i] = <float> (wi * grad_hess[0])
    out[2 * i + 1] = <float> (wi * grad_hess[1])


cdef void pointwise_rows(
    int objective,
    const double[:, ::1] margins,   # IN: (n_outputs, n_rows)
    const double[:, ::1] labels,    # IN: (1 or n_outputs, n_rows)
    const double* w,                # IN: weights, NULL for unit weights
    const double[::1] parameters,   # IN: one per output
    float[:, :, ::1] out,           # OUT: (n_outputs, n_rows, 2) (grad, hess)
    int n_threads,
) noexcept nogil:
    """out[k, i] = w_i * pointwise(f_ki, y of output k at row i, parameters[k]). The row
    loop is spelled once per objective, the objective a constant in it: with the choice
    inside, the compiler neither unswitches nor vectorises it (squared error ran 2.5x
    slower, benchmarks/gradient_kernels.py)."""
    cdef Py_ssize_t k, i, n = margins.shape[1]
    cdef const double* f
    cdef const double* y
    cdef float* g
    cdef double p
    for k in range(margins.shape[0]):
        if n == 0:
            return
        f, y, g = &margins[k, 0], &labels[k if labels.shape[0] > 1 else 0, 0], &out[k, 0, 0]
        p = parameters[k]
        if objective == SQUARED_ERROR:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(SQUARED_ERROR, f[i], y[i], p))
        elif objective == LOGISTIC:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(LOGISTIC, f[i], y[i], p))
        elif objective == POISSON:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(POISSON, f[i], y[i], p))
        elif objective == GAMMA:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(GAMMA, f[i], y[i], p))
        elif objective == TWEEDIE:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(TWEEDIE, f[i], y[i], p))
        elif objective == ABSOLUTE:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(ABSOLUTE, f[i], y[i], p))
        elif objective == HUBER:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(HUBER, f[i], y[i], p))
        elif objective == PINBALL:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(PINBALL, f[i], y[i], p))
        elif objective == HINGE:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(HINGE, f[i], y[i], p))
        elif objective == ONE_VS_REST:
            for i in prange(n, schedule="static", num_threads=n_threads):
                store(g, w, i, pointwise(ONE_VS_REST, f[i], y[i], p))


# -- softmax: a row's outputs together --------------------------------------------------------

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


# -- custom objectives: gradients from Python -----------------------------------------------

cdef class CustomGradients(GradientKernel):
    """The gradient kernel of a custom objective (`Objective.custom`): the trainer calls the
    user's Python function before each round and copies its (grad, hess) into `out`
    (`Custom.fill`); the round's `compute` has nothing left to do. The boosting rounds
    read `out` and the `margins` they update, as with any kernel."""

    def __init__(self,
                 const double[:, ::1] margins,   # IN: (n_outputs, n_rows), what the rounds update
                 float[:, :, ::1] out):           # IN: (n_outputs, n_rows, 2) (grad, hess), filled by the trainer
        if out.shape[0] != margins.shape[0] or out.shape[1] != margins.shape[1] or out.shape[2] != 2:
            raise ValueError(f"gradients must have shape ({margins.shape[0]}, {margins.shape[1]}, 2)")
        self.margins, self.out = margins, out
        self.n_threads = 1

    cdef void compute(self) noexcept nogil:
        pass  # filled before the round, with the GIL
