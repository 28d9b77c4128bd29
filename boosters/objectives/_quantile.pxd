cdef struct WeightedValue:
    double value
    double weight


cdef double weighted_quantile(WeightedValue* items, Py_ssize_t n, double alpha) noexcept nogil
