# Shared C types of the kernels.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int32_t, int64_t

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
