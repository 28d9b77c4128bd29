# random_strength (CatBoost's): normal noise on each split candidate's score while the
# best split is chosen, never on the gain the split keeps (importance, leaf-wise order).
# A draw is a hash of (seed, tree, node, feature, candidate): the same at any thread count
# and whichever nodes are searched together. Candidate counters: a numeric split
# 2 * bin + default_left; a categorical one 2 * its index in the scan + its direction.
from libc.math cimport INFINITY, exp, log, sqrt
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


cdef inline double score_noise_sd(double random_strength, const float* gh, Py_ssize_t n_rows, uint64_t round_,
                                  double learning_rate) noexcept nogil:  # gh: IN, (n_rows, 2)
    """random_strength's noise scale on a round's split gains (CatBoost's
    CalcScoreStDev): random_strength * sqrt(mean g^2) (the gradients' deviation from 0)
    * L / (1 + L), L = n_rows * exp(-round * learning_rate) (CalcDerivativesStDevFromZero-
    Multiplier: the noise fades as the model grows), halved: CatBoost adds it to a
    score sum_leaves G^2 / (H + l2), twice boosters' gain. A serial sum: the same at any
    thread count."""
    cdef Py_ssize_t i
    cdef double s = 0.0
    if n_rows == 0:
        return 0.0
    for i in range(n_rows):
        s += <double> gh[2 * i] * <double> gh[2 * i]
    return 0.5 * random_strength * sqrt(s / n_rows) / (1.0 + exp(round_ * learning_rate - log(<double> n_rows)))
