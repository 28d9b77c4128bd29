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

# A quantized (grad, hess) pair packed in one word: grad * 2**bits + hess, hess >= 0 in
# the low `bits` bits. A row's pair: packed_t, int32 (16-bit values, "i16" mode) or int16
# (8-bit values, "i8"). A histogram bin's sums: word_t, 16-, 32- or 64-bit words
# (bits = 8, 16, 32 per sum), the width chosen per node so that its sums cannot overflow.
ctypedef fused packed_t:
    int16_t
    int32_t

ctypedef fused word_t:
    int16_t
    int32_t
    int64_t

# What the histogram kernels accumulate, one type for both precisions:
#   hist_t    a bin                                   a row's value added to it
#   double    float64 (grad, hess): 2 values per bin  float32 (grad, hess) pair
#   int64_t   packed sums, 32 bits per sum            a word of the bin's type, or a
#   int32_t   16                                      narrower packed_t widened to it
#   int16_t   8                                       (repack)
ctypedef fused hist_t:
    double
    int16_t
    int32_t
    int64_t

# A row's (grad, hess) as stored for the kernels that read it by row: float32 pairs (two
# values per row, for float64 histograms) or one packed word (packed_t).
ctypedef fused grad_t:
    float
    int16_t
    int32_t


cdef inline Py_ssize_t values_per_bin(const hist_t* hist) noexcept nogil:
    """Array elements per histogram bin: a (grad, hess) float64 pair, or one packed word."""
    return 2 if hist_t is double else 1


cdef inline Py_ssize_t values_per_row(const grad_t* values) noexcept nogil:
    """Array elements per row of gradients: a float32 (grad, hess) pair, or one packed word."""
    return 2 if grad_t is float else 1


cdef inline int64_t word_hess(int64_t v, int bits) noexcept nogil:
    return v & ((<int64_t> 1 << bits) - 1)


cdef inline int64_t word_grad(int64_t v, int bits) noexcept nogil:
    return (v - word_hess(v, bits)) >> bits


cdef inline int64_t repack(int64_t v, int from_bits, int to_bits) noexcept nogil:
    """The same pair with `to_bits` bits per sum; exact while the sums fit (a sum of
    repacked words is the repacked sum)."""
    if from_bits == to_bits:
        return v
    return word_grad(v, from_bits) * (<int64_t> 1 << to_bits) + word_hess(v, from_bits)
