# Shared C types of the kernels.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int16_t, int32_t, int64_t

# Bin index storage: uint8 for features with <= 256 bins, uint16 up to 65536.
ctypedef fused bin_t:
    uint8_t
    uint16_t

# Raw feature values accepted by the binning and prediction kernels.
ctypedef fused value_t:
    float
    double

# Row indices inside the partition buffers.
ctypedef uint32_t row_t

cdef extern from "prefetch.h" nogil:
    void boosters_prefetch(const void *ptr)

# A float64 (grad, hess) pair added to a histogram bin in one SIMD operation.
cdef extern from "pairs.h" nogil:
    ctypedef struct boosters_pair:
        pass
    boosters_pair boosters_pair_from_f32(const float* gh)
    void boosters_pair_add(double* bin, boosters_pair v)

# A quantized (grad, hess) pair packed in one word: grad * 2**(bits/2) + hess, with
# hess >= 0. int32: 16-bit values ("i16" mode); int16: 8-bit values ("i8" mode).
ctypedef fused packed_t:
    int16_t
    int32_t



cdef inline int64_t expand_packed(packed_t v) noexcept nogil:
    """The pair re-packed as grad * 2**32 + hess in 64 bits: a sum of such words is the
    packed sum, exact while the hessian total stays below 2**32 and the gradient total
    within 32 signed bits."""
    cdef int shift = 8 if packed_t is int16_t else 16
    cdef int64_t hess = v & ((1 << shift) - 1)
    cdef int64_t grad = (<int64_t> v - hess) >> shift
    return grad * (<int64_t> 1 << 32) + hess
