"""Gradient/hessian kernels of the objectives: float64 margins in, float32 pairs out.

Margins are laid out (n_outputs, n_rows); gradients (n_outputs, n_rows, 2). Sample
weights scale both the gradient and the hessian.
"""

from cython.parallel cimport prange
from libc.math cimport exp

cdef double MIN_HESSIAN = 1e-16  # keeps Newton steps finite where p(1-p) underflows


cdef inline double larger(double a, double b) noexcept nogil:
    """max(a, b) as one instruction (libm's fmax is a call)."""
    return a if a > b else b


cdef inline double weight_at(const double* w, Py_ssize_t i) noexcept nogil:  # w: IN, NULL for unit weights
    return w[i] if w != NULL else 1.0


cdef enum Objective:
    SQUARED_ERROR, LOGISTIC, SOFTMAX

OBJECTIVES = {"squared": SQUARED_ERROR, "logistic": LOGISTIC, "softmax": SOFTMAX}


cdef class GradientKernel:
    """One objective's gradients over fixed buffers: `compute` (C, no GIL) refills `out`
    from the current margins. The trainer makes one per training and the boosting round
    calls it without the GIL; `run` is the same from Python."""

    def __init__(self, str objective,
                 const double[:, ::1] margins,   # IN: (n_outputs, n_rows), read at each compute
                 const double[::1] y,             # IN
                 const double[::1] w,             # IN: weights, or empty
                 float[:, :, ::1] out,            # OUT: (n_outputs, n_rows, 2) (grad, hess)
                 int n_threads=1):
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {sorted(OBJECTIVES)}, got {objective!r}")
        self.objective = OBJECTIVES[objective]
        cdef Py_ssize_t n_outputs = margins.shape[0] if self.objective == SOFTMAX else 1
        if self.objective == SOFTMAX and n_outputs < 2:
            raise ValueError("softmax needs at least 2 classes")
        if margins.shape[0] != n_outputs or margins.shape[1] != y.shape[0]:
            raise ValueError(f"margins must have shape ({n_outputs}, {y.shape[0]})")
        if out.shape[0] != n_outputs or out.shape[1] != y.shape[0] or out.shape[2] != 2:
            raise ValueError(f"gradients must have shape ({n_outputs}, {y.shape[0]}, 2)")
        if w.shape[0] not in (0, y.shape[0]):
            raise ValueError("weights must be empty or have one value per row")
        self.margins, self.y, self.w, self.out = margins, y, w, out
        self.n_threads = n_threads

    def run(self):
        with nogil:
            self.compute()

    cdef void compute(self) noexcept nogil:
        cdef const double* wp = &self.w[0] if self.w.shape[0] > 0 else NULL
        if self.objective == SQUARED_ERROR:
            squared_error_rows(self.margins, self.y, wp, self.out, self.n_threads)
        elif self.objective == LOGISTIC:
            logistic_rows(self.margins, self.y, wp, self.out, self.n_threads)
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


cdef void logistic_rows(
    const double[:, ::1] margins,   # IN: (1, n_rows)
    const double[::1] y,             # IN: 0 / 1 labels
    const double* w,                 # IN: weights, NULL for unit weights
    float[:, :, ::1] out,            # OUT: (1, n_rows, 2) (grad, hess)
    int n_threads,
) noexcept nogil:
    """p = sigmoid(f): g = w (p - y), h = w max(p (1 - p), 1e-16)."""
    cdef Py_ssize_t i
    cdef double p, wi
    for i in prange(y.shape[0], schedule="static", num_threads=n_threads):
        p = 1.0 / (1.0 + exp(-margins[0, i]))
        wi = weight_at(w, i)
        out[0, i, 0] = <float> (wi * (p - y[i]))
        out[0, i, 1] = <float> (wi * larger(p * (1.0 - p), MIN_HESSIAN))


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
