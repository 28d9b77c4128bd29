# Binary search in sorted index arrays (CSR rows, sparse columns), for nogil kernels.
from libc.stdint cimport int32_t, int64_t, uint32_t

ctypedef fused sorted_t:
    int32_t
    int64_t
    uint32_t


cdef inline Py_ssize_t lower_bound(const sorted_t* items, Py_ssize_t first, Py_ssize_t stop,
                                   sorted_t value) noexcept nogil:  # items: IN, sorted in [first, stop)
    """The first position in [first, stop) whose item is >= value; stop if there is none."""
    cdef Py_ssize_t half, n = stop - first
    while n > 0:
        half = n >> 1
        if items[first + half] < value:
            first += half + 1
            n -= half + 1
        else:
            n = half
    return first
