# random_strength (CatBoost's): normal noise on each split candidate's score while the
# best split is chosen, never on the gain the split keeps (importance, leaf-wise order).
# A draw is a hash of (seed, tree, node, feature, candidate): the same at any thread count
# and whichever nodes are searched together. Candidate counters: a numeric split
# 2 * bin + default_left; a categorical one 2 * its index in the scan + its direction.
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t

from boosters._lib.random cimport splitmix64, standard_normal, stream_key

cdef inline uint64_t noise_tree_key(uint64_t seed, uint64_t tree_index) noexcept nogil:
    return stream_key(seed, tree_index, 0x510E527FADE682D1ULL)  # the noise streams' salt


cdef inline uint64_t noise_node_key(uint64_t tree_key, int64_t node) noexcept nogil:
    return splitmix64(tree_key ^ splitmix64(<uint64_t> node))


cdef inline double score_noise(uint64_t node_key, int32_t feature, uint64_t counter) noexcept nogil:
    """The standard normal draw of one candidate of one (tree, node)."""
    return standard_normal(splitmix64(node_key + <uint64_t> feature), counter)


cdef inline double noisy_key(double gain, double sd, uint64_t node_key, int32_t feature,
                             uint64_t counter) noexcept nogil:
    """A valid candidate's (gain > 0) selection key gain + sd * z, -inf for an invalid one."""
    return gain + sd * score_noise(node_key, feature, counter) if gain > 0.0 else -INFINITY
