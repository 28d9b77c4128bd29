from libc.stdint cimport uint64_t

from boosters._lib.types cimport packed_t, row_t


cdef void quantize_rows(const float* gh, const row_t* rows, Py_ssize_t n, packed_t* out, int levels, uint64_t seed,
                        uint64_t tree_index, int n_threads, double* scales) noexcept nogil
