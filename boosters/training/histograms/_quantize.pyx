"""Gradient discretization (RFC-0016 Phase 2; LightGBM's quantized training).

Per tree, gradients and hessians are scaled into small integers, grad in [-L, L] and
hess in [0, L], with scales L / max|g| and L / max|h| of that tree's rows, and rounded
stochastically: q = floor(x + u), u uniform in [0, 1), so the rounding is unbiased. The
floor is taken as trunc(x + u + L + 1) - (L + 1), in float64 then int64 (the argument is
positive, so truncation is the floor; branch-free, where floor() and float clamps
compile to mispredicted branches on signed gradients). u comes from a counter-based
hash of (seed, tree, row): the same for a given seed and row, whatever the thread
count. Each pair is packed in one word (see types.pxd).

L is chosen so that the packed 64-bit sums of a whole dataset cannot overflow:
n_rows * L < 2**31, and is at most the user's `quantization_levels`. The histogram
builder then stores each node's sums in the narrowest words that n_node * L fits
(see histograms/_build.pyx).
"""

import numpy as np

from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdint cimport int16_t, int32_t, int64_t, uint64_t

from boosters._lib.random cimport splitmix64, stream_key
from boosters._lib.types cimport packed_t, row_t

cdef enum:
    MAX_CHUNKS = 64


def max_levels(Py_ssize_t n_rows, int bits, requested=None):
    """Largest L for `bits`-bit values (16 or 8) such that n_rows * L < 2**31, and at
    most `requested` (the user's quantization_levels) when given."""
    cdef int64_t cap = 32767 if bits == 16 else 127
    if requested is not None:
        cap = min(cap, requested)
    return int(max(1, min(cap, (2**31 - 1) // max(n_rows, 1))))


cdef inline int64_t round_down(double x, double offset, int64_t low, int64_t high) noexcept nogil:
    """floor(x) for x > -offset, clamped to [low, high]; integer-only, branch-free."""
    cdef int64_t q = (<int64_t> (x + offset)) - <int64_t> offset
    q = low if q < low else q
    return high if q > high else q


cdef inline void pair_max(const float* pair, double* mg, double* mh) noexcept nogil:
    """Running maxima of |grad| and |hess| (IN and OUT), branch-free."""
    mg[0] = fabs(pair[0]) if fabs(pair[0]) > mg[0] else mg[0]
    mh[0] = fabs(pair[1]) if fabs(pair[1]) > mh[0] else mh[0]


cdef inline void quantize_pair(const float* pair, uint64_t r, double scale_g, double scale_h, double offset,
                               int levels, packed_t* out) noexcept nogil:  # pair: IN, out: OUT
    """One row's pair, rounded stochastically with the random bits r, packed."""
    cdef int shift = 8 if packed_t is int16_t else 16
    cdef int64_t qg = round_down(pair[0] * scale_g + <double> (r >> 40) * 5.9604644775390625e-08, offset,
                                 -levels, levels)
    cdef int64_t qh = round_down(pair[1] * scale_h + <double> ((r >> 16) & 0xFFFFFF) * 5.9604644775390625e-08,
                                 offset, 0, levels)
    out[0] = <packed_t> (qg * (1 << shift) + qh)


cdef void quantize_rows(
    const float* gh,            # IN: (n_rows, 2) (grad, hess) by row
    const row_t* rows,          # IN: n rows to quantize (a row sample), NULL: rows 0..n-1
    Py_ssize_t n,
    packed_t* out,              # OUT: one packed pair per row (only `rows`' written)
    int levels,                 # 1 .. the word's limit (127 or 32767)
    uint64_t seed,
    uint64_t tree_index,
    int n_threads,
    double* scales,             # OUT: (scale_g, scale_h): a quantized value q stands for q / scale
) noexcept nogil:
    """The scales come from the maxima over `rows`. The loops are spelled out per row
    source so that neither tests it per row."""
    cdef Py_ssize_t i, c, lo, hi, chunk, row
    cdef int n_chunks = <int> max(1, min(<Py_ssize_t> MAX_CHUNKS, min(<Py_ssize_t> n_threads, n // 65536)))
    cdef double[MAX_CHUNKS] max_g
    cdef double[MAX_CHUNKS] max_h
    cdef double mg = 0.0, mh = 0.0, scale_g, scale_h, offset = levels + 1.0, chunk_g, chunk_h
    cdef uint64_t key = stream_key(seed, tree_index, 0x632BE59BD9B4E019ULL)
    if n == 0:
        scales[0] = scales[1] = 0.0
        return
    chunk = (n + n_chunks - 1) // n_chunks
    # max over rows: chunked, each chunk's max then the max of those (order-free)
    for c in prange(n_chunks, schedule="static", num_threads=n_chunks):
        lo = c * chunk
        hi = min(lo + chunk, n)
        chunk_g = 0.0  # thread-local: writing max_g[c] per row would bounce its cache line
        chunk_h = 0.0
        if rows == NULL:
            for i in range(lo, hi):
                pair_max(gh + 2 * i, &chunk_g, &chunk_h)
        else:
            for i in range(lo, hi):
                pair_max(gh + 2 * <Py_ssize_t> rows[i], &chunk_g, &chunk_h)
        max_g[c] = chunk_g
        max_h[c] = chunk_h
    for c in range(n_chunks):
        mg = max_g[c] if max_g[c] > mg else mg
        mh = max_h[c] if max_h[c] > mh else mh
    scale_g = levels / mg if mg > 0 else 0.0
    scale_h = levels / mh if mh > 0 else 0.0
    # the random bits are the row's, whatever its position in `rows`
    if rows == NULL:
        for i in prange(n, schedule="static", num_threads=n_threads):
            quantize_pair(gh + 2 * i, splitmix64(key + <uint64_t> i), scale_g, scale_h, offset, levels, out + i)
    else:
        for i in prange(n, schedule="static", num_threads=n_threads):
            row = rows[i]
            quantize_pair(gh + 2 * row, splitmix64(key + <uint64_t> row), scale_g, scale_h, offset, levels,
                          out + row)
    scales[0] = scale_g
    scales[1] = scale_h


def quantize_block(const float[:, ::1] gh, out, int levels, uint64_t seed, uint64_t tree_index,
                   uint64_t first_row, double scale_g, double scale_h, int n_threads=1):
    """Quantize the (n, 2) float32 gradients of rows first_row .. first_row + n - 1 of a
    larger training into `out` (int32: "i16", int16: "i8"; one per row) with the given
    scales: the words quantize_rows writes for those rows when the whole training's
    maxima set the scales (the data-parallel training's partitions, boosters.dask)."""
    cdef int32_t[::1] out32
    cdef int16_t[::1] out16
    cdef Py_ssize_t i, n = gh.shape[0]
    cdef double offset = levels + 1.0
    cdef uint64_t key = stream_key(seed, tree_index, 0x632BE59BD9B4E019ULL) + first_row
    out = np.asarray(out)
    cdef int cap = {np.dtype(np.int32): 32767, np.dtype(np.int16): 127}.get(out.dtype, 0)
    if gh.shape[1] != 2 or out.shape != (n,) or cap == 0:
        raise ValueError("gh must be (n_rows, 2) and out an int32 or int16 array of n_rows entries")
    if not 1 <= levels <= cap:
        raise ValueError(f"levels must be in [1, {cap}] for this packing, got {levels}")
    if n == 0:
        return
    if cap == 32767:
        out32 = out
        for i in prange(n, schedule="static", num_threads=n_threads, nogil=True):
            quantize_pair(&gh[i, 0], splitmix64(key + <uint64_t> i), scale_g, scale_h, offset, levels, &out32[i])
    else:
        out16 = out
        for i in prange(n, schedule="static", num_threads=n_threads, nogil=True):
            quantize_pair(&gh[i, 0], splitmix64(key + <uint64_t> i), scale_g, scale_h, offset, levels, &out16[i])
