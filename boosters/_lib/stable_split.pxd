# A stable two-way split of a row list in one pass without a data-dependent branch: every
# row is stored at both ends of the output, the rows that go first forwards from the
# start, the others backwards from the end (a store to the wrong end lands on a slot that
# a later row overwrites, or on the row's own slot); then the second part, written
# backwards, is reversed. The partitioner's splits and the row sampler's draws use it.
from boosters._lib.types cimport row_t


cdef inline void store_both_ends(
    row_t* out,                 # OUT: the split's output, n rows
    Py_ssize_t n,
    row_t row,
    size_t first,               # 1: the row goes to the first part, 0: to the second
    Py_ssize_t* n_first,        # IN/OUT: rows stored so far in each part
    Py_ssize_t* n_second,
) noexcept nogil:
    out[n_first[0]] = row
    out[n - 1 - n_second[0]] = row
    n_first[0] += first
    n_second[0] += 1 - first


cdef inline void reverse_second_part(row_t* out, Py_ssize_t n_first, Py_ssize_t n) noexcept nogil:
    """out[n_first:n], stored backwards, in order again."""
    cdef Py_ssize_t lo = n_first, hi = n - 1
    cdef row_t tmp
    while lo < hi:
        tmp = out[lo]
        out[lo] = out[hi]
        out[hi] = tmp
        lo += 1
        hi -= 1
