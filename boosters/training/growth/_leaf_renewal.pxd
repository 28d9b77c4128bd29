from libc.stdint cimport int64_t

from boosters.objectives._quantile cimport WeightedValue
from boosters.training.partition._partition cimport RowPartitioner


cdef class LeafRenewal:
    cdef const double[:, ::1] y          # (n_label_rows, n_rows): output k reads row k, or row 0 when there is one
    cdef const double[::1] w             # weights, or empty
    cdef const double[::1] alphas        # per output: the quantile its leaves are renewed to
    cdef WeightedValue[::1] scratch      # (n_rows,): each leaf's residuals at its rows' partition positions
    cdef int n_threads

    cdef void renew(self, RowPartitioner partitioner, const double* margins, Py_ssize_t k,
                    const int64_t* leaves, Py_ssize_t n_leaves, double* quantiles) noexcept nogil
