# Counter-based random numbers for nogil kernels: a draw is a hash of (seed, stream,
# counter), so it depends on neither the thread count nor the order of the draws.
# Streams: a tree (the quantizer's stochastic rounding), a boosting round (row sampling);
# each user of a stream kind has its own salt. Column sampling draws integers from a
# `Stream` keyed by (seed, domain, tree, level or node).
from libc.math cimport cos, log, sqrt
from libc.stdint cimport uint64_t


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline uint64_t stream_key(uint64_t seed, uint64_t stream, uint64_t salt) noexcept nogil:
    """The key of one stream of draws of a seeded training."""
    return splitmix64(seed ^ splitmix64(stream + salt))


cdef inline double uniform01(uint64_t key, uint64_t counter) noexcept nogil:
    """Draw `counter` of a stream: uniform in [0, 1), 53 random bits."""
    return <double> (splitmix64(key + counter) >> 11) * 1.1102230246251565e-16


cdef struct Stream:
    uint64_t key
    uint64_t counter


cdef inline Stream stream(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b) noexcept nogil:
    """The stream of (seed, domain, a, b): `domain` separates the uses of one seed
    (column sampling by tree, by level, by node, ...)."""
    cdef Stream s
    s.key = splitmix64(splitmix64(splitmix64(seed ^ splitmix64(domain)) ^ a) ^ b)
    s.counter = 0
    return s


cdef inline uint64_t next_u64(Stream* s) noexcept nogil:  # s: IN and OUT
    s.counter += 1
    return splitmix64(s.key + s.counter)


cdef inline uint64_t below(Stream* s, uint64_t n) noexcept nogil:  # s: IN and OUT
    """A draw in [0, n), n >= 1 (modulo: a bias below n / 2^64, nil for feature counts)."""
    return next_u64(s) % n


cdef inline double standard_normal(uint64_t key, uint64_t counter) noexcept nogil:
    """Draw `counter` of a stream as a standard normal: Box-Muller's cosine half over the
    stream's uniforms 2 counter and 2 counter + 1 (1 - u keeps the logarithm finite)."""
    cdef double u1 = 1.0 - uniform01(key, 2 * counter), u2 = uniform01(key, 2 * counter + 1)
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2)
