from libc.stdint cimport int64_t


cdef class GradientKernel:
    cdef int objective                       # an Objective enum value (_gradients.pyx)
    cdef const double[:, ::1] margins        # (n_outputs, n_rows)
    cdef const double[:, ::1] labels         # (1 or n_outputs, n_rows): output k reads row k of several
    cdef const double[::1] y                 # labels row 0 (softmax's classes, ranking's relevance)
    cdef const double[::1] w                 # weights, or empty
    cdef float[:, :, ::1] out                # (n_outputs, n_rows, 2) (grad, hess): the gradients
    cdef int n_threads
    cdef const double[::1] parameters        # per output: poisson's max_delta_step, tweedie's power, ...
    cdef public object leaf_quantiles        # absolute, pinball: per output the level its leaves renew to; else None
    # ranking only: query q is rows groups[q]:groups[q + 1]
    cdef const int64_t[::1] groups
    cdef double[:, ::1] sums                 # per row: (lambda, hessian) before the query's scaling
    # lambdarank only
    cdef const double[::1] inverse_max_dcg   # per query: 1 / ideal DCG@ndcg_at (0 when that is 0)
    cdef int ndcg_at
    cdef double[::1] discounts               # 1 / log2(2 + position) up to the longest query
    cdef int64_t[::1] order, order_scratch   # per row: its query's rows by score (each query its own slice)

    cdef void compute(self) noexcept nogil
