"""Histogram kernel of the sparse columns (sparse input, see data/sparse_binning.py).

A row stores only its entries away from each feature's default bin (the bin of 0), as
histogram indices; a node's histogram of the sparse columns is one pass over its rows'
entries (LightGBM's multi-value sparse bin, XGBoost's CSR histogram index). Each row is
also added to `totals_bin`, so the node's totals are known, and each sparse feature's
default bin is then filled in as the node total minus its other bins (`fill_defaults`:
exact for quantized sums, which are integers). The split finder, the subtraction and the
pool then see ordinary columns.

Parallel as the row-wise kernel (_rowwise.pyx): blocks of the node's rows, block 0 into
the destination, the others into private histograms added in block order; float64 block
counts depend on the node size only, so the sums do not depend on the thread count.
"""

from cython.parallel cimport prange
from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t
from libc.string cimport memset

from boosters._lib.types cimport (grad_t, hist_t, row_t, repack, boosters_pair, boosters_pair_from_f32,
                                  boosters_pair_add, values_per_bin)


cdef inline void accumulate_entries(
    const SparseRows* m,
    const row_t* rows,          # IN: the node's rows; NULL: rows start+lo..start+hi
    Py_ssize_t start,
    Py_ssize_t lo,
    Py_ssize_t hi,
    const grad_t* values,       # IN: gradients by row (float32 pairs or packed words)
    hist_t* hist,               # IN and OUT
) noexcept nogil:
    cdef Py_ssize_t i, k, row
    cdef boosters_pair pair
    cdef hist_t word
    cdef const int64_t* indptr = m.indptr
    cdef const uint32_t* entries = m.entries
    for i in range(lo, hi):
        row = start + i if rows == NULL else <Py_ssize_t> rows[i]
        if hist_t is double:
            pair = boosters_pair_from_f32(<const float*> values + 2 * row)
            boosters_pair_add(hist + 2 * m.totals_bin, pair)
            for k in range(indptr[row], indptr[row + 1]):
                boosters_pair_add(hist + 2 * <Py_ssize_t> entries[k], pair)
        else:
            word = <hist_t> repack(<int64_t> values[row], 4 * sizeof(grad_t), 4 * sizeof(hist_t))
            hist[m.totals_bin] += word
            for k in range(indptr[row], indptr[row + 1]):
                hist[entries[k]] += word


cdef void fill_defaults(
    const SparseRows* m,
    hist_t* hist,               # IN and OUT: a node's histogram; its sparse default bins written
) noexcept nogil:
    """Every sparse column's default bin (empty after accumulation): the node's totals
    minus the column's other bins."""
    cdef Py_ssize_t c, b, j, w = values_per_bin(hist), lo
    cdef hist_t rest
    for c in range(m.first_col, m.last_col):
        if m.col_default[c] < 0:
            continue
        lo = m.col_offsets[c]
        for j in range(w):  # grad and hess of a float64 pair; the packed word otherwise
            rest = 0
            for b in range(lo, m.col_offsets[c + 1]):
                rest += hist[w * b + j]
            hist[w * (lo + m.col_default[c]) + j] = hist[w * m.totals_bin + j] - rest


cdef void build_sparse(
    const SparseRows* m,
    const row_t* rows,          # IN: the node's rows, NULL for rows start..start+n
    Py_ssize_t start,
    Py_ssize_t n,
    const grad_t* values,       # IN: gradients by row: float32 pairs for float64 bins, else
                                #     packed words (widened to the bins' words per row)
    hist_t* hist,               # OUT: the node's histogram (bins lo..hi overwritten)
    hist_t* scratch,            # OUT: scratch, (n_blocks - 1) histograms of hi - lo bins
    int n_blocks,
    int n_threads,
) noexcept nogil:
    """Histogram of a node's sparse columns, their default bins filled in."""
    cdef Py_ssize_t w = values_per_bin(hist)
    cdef Py_ssize_t blk, j, k, first, last, chunk = (n + n_blocks - 1) // n_blocks
    cdef Py_ssize_t width = w * (m.hi - m.lo)
    cdef hist_t* dst
    if n_blocks <= 1:
        memset(hist + w * m.lo, 0, width * sizeof(hist_t))
        accumulate_entries(m, rows, start, 0, n, values, hist)
        fill_defaults(m, hist)
        return
    for blk in prange(n_blocks, schedule="static", num_threads=min(n_threads, n_blocks)):
        first = blk * chunk
        last = min(first + chunk, n)
        # a private histogram is indexed like the node's: shifted so that bin lo is its start
        dst = hist if blk == 0 else scratch + (blk - 1) * width - w * m.lo
        memset(dst + w * m.lo, 0, width * sizeof(hist_t))
        accumulate_entries(m, rows, start, first, last, values, dst)
    for j in prange(w * m.lo, w * m.hi, schedule="static", num_threads=n_threads):
        for k in range(1, n_blocks):  # blocks added in order
            hist[j] += scratch[(k - 1) * width + j - w * m.lo]
    fill_defaults(m, hist)


cdef void build_sparse_words(
    const SparseRows* m,
    const row_t* rows,          # IN: as build_sparse
    Py_ssize_t start,
    Py_ssize_t n,
    const void* packed,         # IN: packed pairs by row, int32 (packed_bits 16) or int16 (8) words
    int packed_bits,
    void* hist,                 # OUT: `sum_bits` words (bins lo..hi overwritten)
    void* scratch,              # OUT: scratch, (n_blocks - 1) histograms of `sum_bits` words
    int sum_bits,               # 32, 16 or 8 bits per sum; >= packed_bits
    int n_blocks,
    int n_threads,
) noexcept nogil:
    """build_sparse for quantized bins of any width: the width dispatch."""
    if packed_bits == 16:
        if sum_bits == 32:
            build_sparse(m, rows, start, n, <const int32_t*> packed, <int64_t*> hist, <int64_t*> scratch,
                         n_blocks, n_threads)
        else:
            build_sparse(m, rows, start, n, <const int32_t*> packed, <int32_t*> hist, <int32_t*> scratch,
                         n_blocks, n_threads)
    elif sum_bits == 32:
        build_sparse(m, rows, start, n, <const int16_t*> packed, <int64_t*> hist, <int64_t*> scratch,
                     n_blocks, n_threads)
    elif sum_bits == 16:
        build_sparse(m, rows, start, n, <const int16_t*> packed, <int32_t*> hist, <int32_t*> scratch,
                     n_blocks, n_threads)
    else:
        build_sparse(m, rows, start, n, <const int16_t*> packed, <int16_t*> hist, <int16_t*> scratch,
                     n_blocks, n_threads)
