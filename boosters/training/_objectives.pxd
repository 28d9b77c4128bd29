cdef class GradientKernel:
    cdef int objective                       # SQUARED_ERROR, LOGISTIC or SOFTMAX
    cdef const double[:, ::1] margins        # (n_outputs, n_rows)
    cdef const double[::1] y
    cdef const double[::1] w                 # weights, or empty
    cdef float[:, :, ::1] out                # (n_outputs, n_rows, 2) (grad, hess): the gradients
    cdef int n_threads

    cdef void compute(self) noexcept nogil
