from libc.stdint cimport int64_t, uint32_t, uint64_t

from boosters._lib.types cimport row_t


cdef class RowSampler:
    cdef readonly int kind                  # UNIFORM, GOSS, QUERIES or BAYESIAN
    cdef readonly Py_ssize_t n_rows, n_outputs
    cdef readonly Py_ssize_t n_sample       # rows sampled per round (after the warm-up)
    cdef readonly Py_ssize_t top_k, other_k # GOSS: rows kept for their gradients, rows drawn among the rest
    cdef readonly double weight             # GOSS: factor of the drawn rows' gradients and hessians
    cdef readonly double temperature        # BAYESIAN: a row's weight is (-log U)^temperature
    cdef readonly Py_ssize_t warmup_rounds  # rounds before the first sample (every row used)
    cdef readonly uint64_t seed
    cdef int n_threads
    cdef double[::1] scores                 # GOSS: |g h| by row
    cdef uint64_t[::1] keys                 # GOSS: the scores' bit patterns, overwritten by the selection
    cdef const int64_t[::1] groups          # QUERIES: query q is rows groups[q]:groups[q + 1]
    cdef uint32_t[::1] query_order          # QUERIES: the drawn queries, then the others

    cdef Py_ssize_t sample(self, uint64_t round_, float* gh, row_t* out) noexcept nogil
    cdef Py_ssize_t _queries(self, uint64_t key, row_t* out) noexcept nogil
    cdef Py_ssize_t _goss(self, uint64_t key, float* gh, row_t* out) noexcept nogil
    cdef void _bayesian(self, uint64_t key, float* gh) noexcept nogil
