"""Gradient discretization (RFC-0016 Phase 2; LightGBM's quantized training).

Per tree, gradients and hessians are scaled into small integers, grad in [-L, L] and
hess in [0, L], with scales L / max|g| and L / max|h| of that tree's rows, and rounded
stochastically (floor(x + u), u uniform in [0, 1), so the rounding is unbiased). u comes
from a counter-based hash of (seed, tree, row): the same for a given seed and row,
whatever the thread count. Each pair is packed in one word (see types.pxd).

L is chosen so that the packed 64-bit sums of a whole dataset cannot overflow:
n_rows * L < 2**31.
"""

import numpy as np

from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdint cimport int16_t, int32_t, int64_t, uint64_t

from boosters._lib.types cimport packed_t

cdef enum:
    MAX_CHUNKS = 64


def max_levels(Py_ssize_t n_rows, int bits):
    """Largest L for `bits`-bit values (16 or 8) such that n_rows * L < 2**31."""
    cdef int64_t cap = 32767 if bits == 16 else 127
    return int(max(1, min(cap, (2**31 - 1) // max(n_rows, 1))))


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline double clamp(double x, double lo, double hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef inline double exact_floor(double x) noexcept nogil:
    """floor(x) for |x| < 2**63, inline (libm's floor is a call without SSE4.1)."""
    cdef double t = <double> (<int64_t> x)  # truncates toward zero
    return t - (t > x)


def quantize_gradients(const float[:, ::1] gh, packed_t[::1] out, int levels, uint64_t seed,
                       uint64_t tree_index, int n_threads=1):
    """Quantize (n_rows, 2) float32 gradients into packed words; returns (scale_g,
    scale_h): a quantized value q stands for q / scale."""
    cdef Py_ssize_t n = gh.shape[0], i, c, lo, hi, chunk
    cdef int shift = 8 if packed_t is int16_t else 16
    cdef int cap = 127 if packed_t is int16_t else 32767
    if gh.shape[1] != 2 or out.shape[0] != n:
        raise ValueError("gh must be (n_rows, 2) and out must have n_rows entries")
    if not 1 <= levels <= cap:
        raise ValueError(f"levels must be in [1, {cap}] for this packing, got {levels}")
    if n == 0:
        return 0.0, 0.0
    cdef int n_chunks = <int> max(1, min(<Py_ssize_t> MAX_CHUNKS, min(<Py_ssize_t> n_threads, n // 65536)))
    cdef double[MAX_CHUNKS] max_g
    cdef double[MAX_CHUNKS] max_h
    cdef double mg = 0.0, mh = 0.0, scale_g, scale_h, L = levels, qg, qh
    cdef uint64_t key = splitmix64(seed ^ splitmix64(tree_index + 0x632BE59BD9B4E019ULL)), r
    chunk = (n + n_chunks - 1) // n_chunks
    with nogil:
        # max over rows: chunked, each chunk's max then the max of those (order-free)
        for c in prange(n_chunks, schedule="static", num_threads=n_chunks):
            lo = c * chunk
            hi = min(lo + chunk, n)
            max_g[c] = 0.0
            max_h[c] = 0.0
            for i in range(lo, hi):  # branch-free maxima
                max_g[c] = fabs(gh[i, 0]) if fabs(gh[i, 0]) > max_g[c] else max_g[c]
                max_h[c] = fabs(gh[i, 1]) if fabs(gh[i, 1]) > max_h[c] else max_h[c]
        for c in range(n_chunks):
            mg = max_g[c] if max_g[c] > mg else mg
            mh = max_h[c] if max_h[c] > mh else mh
        scale_g = L / mg if mg > 0 else 0.0
        scale_h = L / mh if mh > 0 else 0.0
        for i in prange(n, schedule="static", num_threads=n_threads):
            r = splitmix64(key + <uint64_t> i)
            qg = clamp(exact_floor(gh[i, 0] * scale_g + <double> (r >> 40) * 5.9604644775390625e-08), -L, L)
            qh = clamp(exact_floor(gh[i, 1] * scale_h + <double> ((r >> 16) & 0xFFFFFF) * 5.9604644775390625e-08), 0.0, L)
            out[i] = <packed_t> ((<int64_t> qg) * (1 << shift) + <int64_t> qh)
    return scale_g, scale_h


def unpack(packed):
    """(grad, hess) int64 arrays of packed words: int16/int32 per row, or int64 sums."""
    packed = np.asarray(packed)
    shift = {np.dtype(np.int16): 8, np.dtype(np.int32): 16, np.dtype(np.int64): 32}[packed.dtype]
    v = packed.astype(np.int64)
    hess = v & ((1 << shift) - 1)
    return (v - hess) >> shift, hess
