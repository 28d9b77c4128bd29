# A small counter-based random number generator: every draw is a hash of (key, counter),
# so a stream depends only on what seeds it (seed, tree, node, ...), never on threads or
# on the order other streams were used in. splitmix64's finalizer (Steele et al. 2014),
# the one the quantizer's stochastic rounding uses (histograms/_quantize.pyx).
from libc.stdint cimport uint64_t


cdef inline uint64_t mix64(uint64_t x) noexcept nogil:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef struct Stream:
    uint64_t key
    uint64_t counter


cdef inline Stream stream(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b) noexcept nogil:
    """The stream of (seed, domain, a, b): `domain` separates the uses of one seed
    (column sampling by tree, by level, by node, ...)."""
    cdef Stream s
    s.key = mix64(mix64(mix64(seed ^ mix64(domain)) ^ a) ^ b)
    s.counter = 0
    return s


cdef inline uint64_t next_u64(Stream* s) noexcept nogil:  # s: IN and OUT
    s.counter += 1
    return mix64(s.key + s.counter)


cdef inline uint64_t below(Stream* s, uint64_t n) noexcept nogil:  # s: IN and OUT
    """A draw in [0, n), n >= 1 (modulo: a bias below n / 2^64, nil for feature counts)."""
    return next_u64(s) % n
