# Which child a row goes to at a split: the one rule that prediction and explanation
# (TreeSHAP's "hot" child) must share.
from libc.stdint cimport int64_t, uint32_t


cdef inline bint goes_left_categorical(double x, const uint32_t* words, int64_t n_words,
                                       bint default_left) noexcept nogil:  # words: IN
    """x as a category code: in the set (bit x of the words) goes left; NaN, negative,
    non-integer or past the words: the default direction."""
    cdef int64_t code
    if not (x >= 0.0 and x < 32.0 * n_words):  # NaN fails both
        return default_left
    code = <int64_t> x
    if code != x:
        return default_left
    return (words[code >> 5] >> (code & 31)) & 1


cdef inline bint goes_left_numeric(double x, double threshold, bint default_left) noexcept nogil:
    """x <= threshold goes left; NaN (missing) follows the default direction."""
    if x != x:
        return default_left
    return x <= threshold
