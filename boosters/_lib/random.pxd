# Counter-based random numbers for nogil kernels: a draw is a hash of (seed, stream,
# counter), so it depends on neither the thread count nor the order of the draws.
# Streams: a tree (the quantizer's stochastic rounding), a boosting round (row sampling);
# each user of a stream kind has its own salt.
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
