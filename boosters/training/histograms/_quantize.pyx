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

from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdint cimport int16_t, int64_t, uint64_t

from boosters._lib.types cimport packed_t

cdef enum:
    MAX_CHUNKS = 64


def max_levels(Py_ssize_t n_rows, int bits, requested=None):
    """Largest L for `bits`-bit values (16 or 8) such that n_rows * L < 2**31, and at
    most `requested` (the user's quantization_levels) when given."""
    cdef int64_t cap = 32767 if bits == 16 else 127
    if requested is not None:
        cap = min(cap, requested)
    return int(max(1, min(cap, (2**31 - 1) // max(n_rows, 1))))


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline int64_t round_down(double x, double offset, int64_t low, int64_t high) noexcept nogil:
    """floor(x) for x > -offset, clamped to [low, high]; integer-only, branch-free."""
    cdef int64_t q = (<int64_t> (x + offset)) - <int64_t> offset
    q = low if q < low else q
    return high if q > high else q


cdef void quantize_rows(
    const float* gh,            # IN: (n, 2) (grad, hess) by row
    Py_ssize_t n,
    packed_t* out,              # OUT: one packed pair per row
    int levels,                 # 1 .. the word's limit (127 or 32767)
    uint64_t seed,
    uint64_t tree_index,
    int n_threads,
    double* scales,             # OUT: (scale_g, scale_h): a quantized value q stands for q / scale
) noexcept nogil:
    cdef Py_ssize_t i, c, lo, hi, chunk
    cdef int shift = 8 if packed_t is int16_t else 16
    cdef int n_chunks = <int> max(1, min(<Py_ssize_t> MAX_CHUNKS, min(<Py_ssize_t> n_threads, n // 65536)))
    cdef double[MAX_CHUNKS] max_g
    cdef double[MAX_CHUNKS] max_h
    cdef double mg = 0.0, mh = 0.0, scale_g, scale_h, offset = levels + 1.0, chunk_g, chunk_h
    cdef int64_t qg, qh
    cdef uint64_t key = splitmix64(seed ^ splitmix64(tree_index + 0x632BE59BD9B4E019ULL)), r
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
        for i in range(lo, hi):  # branch-free maxima
            chunk_g = fabs(gh[2 * i]) if fabs(gh[2 * i]) > chunk_g else chunk_g
            chunk_h = fabs(gh[2 * i + 1]) if fabs(gh[2 * i + 1]) > chunk_h else chunk_h
        max_g[c] = chunk_g
        max_h[c] = chunk_h
    for c in range(n_chunks):
        mg = max_g[c] if max_g[c] > mg else mg
        mh = max_h[c] if max_h[c] > mh else mh
    scale_g = levels / mg if mg > 0 else 0.0
    scale_h = levels / mh if mh > 0 else 0.0
    for i in prange(n, schedule="static", num_threads=n_threads):
        r = splitmix64(key + <uint64_t> i)
        qg = round_down(gh[2 * i] * scale_g + <double> (r >> 40) * 5.9604644775390625e-08, offset,
                        -levels, levels)
        qh = round_down(gh[2 * i + 1] * scale_h + <double> ((r >> 16) & 0xFFFFFF) * 5.9604644775390625e-08,
                        offset, 0, levels)
        out[i] = <packed_t> (qg * (1 << shift) + qh)
    scales[0] = scale_g
    scales[1] = scale_h
