# Python sequences of node ids, slots and sums into preallocated C buffers: a typed loop
# costs tens of nanoseconds per element where np.ascontiguousarray(list) costs about a
# microsecond per call, and the grower makes several such calls per split.
from libc.stdint cimport int64_t

ctypedef fused number_t:
    int64_t
    double


cdef inline Py_ssize_t fill(object values, number_t[::1] out, str name) except -1:
    cdef Py_ssize_t i, n = len(values)
    if n > out.shape[0]:
        raise ValueError(f"{name}: {n} values, room for {out.shape[0]}")
    for i in range(n):
        out[i] = values[i]
    return n
