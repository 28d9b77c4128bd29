"""Row-wise multi-column histogram kernel (RFC-0016 Phase 3).

For narrow dense data the uint8 columns are also stored row-major, one row's bins in
one cache line: the kernel loads a row's index and gradient once and updates every
column from that line, where the column-wise kernels re-read them per column. One
kernel serves float64 and quantized bins (fused over the bin type, see types.pxd); a
quantized row's packed pair is widened once to the bins' word.

Parallel over blocks of the node's rows: block 0 accumulates into the destination,
blocks 1.. into private histograms that are then added in block order. Quantized
(integer) sums are exact in any order, so there is one block per thread; float64 sums
depend on their grouping, so their block count depends on the node size only
(`row_blocks`) and the result is the same for any thread count (one thread pays the
reduction of the private histograms, a pass over the bins).
"""

from cython.parallel cimport prange
from libc.stdint cimport uint8_t, int16_t, int32_t, int64_t
from libc.string cimport memset

from boosters._lib.types cimport (grad_t, hist_t, row_t, repack, boosters_prefetch, boosters_pair,
                                  boosters_pair_from_f32, boosters_pair_add, values_per_bin, values_per_row)

cdef enum:
    ROWS_PER_BLOCK = 2048          # quantized: rows per thread below which one block is better
    FLOAT_ROWS_PER_BLOCK = 4096    # float64: rows per block (fixed, whatever the thread count)
    MAX_FLOAT_BLOCKS = 8
    MIN_WORK_PER_GROUP = 4096      # float64 one-block nodes: rows x columns per column group


cdef int row_blocks(Py_ssize_t n_rows, bint exact, int n_threads) noexcept nogil:
    """Row blocks for a node: exact (quantized) sums, one per thread (>= ROWS_PER_BLOCK
    rows each); float64, by node size alone."""
    if exact:
        return <int> max(1, min(min(n_rows // ROWS_PER_BLOCK, <Py_ssize_t> n_threads), <Py_ssize_t> MAX_ROW_BLOCKS))
    return <int> max(1, min(n_rows // FLOAT_ROWS_PER_BLOCK, <Py_ssize_t> MAX_FLOAT_BLOCKS))


cdef inline void accumulate_rows(
    const RowMatrix* m,
    Py_ssize_t c0,              # columns c0..c1-1 of the row-wise matrix
    Py_ssize_t c1,
    const row_t* rows,          # IN: the node's rows; NULL: rows start+lo..start+hi
    Py_ssize_t start,
    Py_ssize_t lo,
    Py_ssize_t hi,
    const grad_t* values,       # IN: gradients by row (float32 pairs or packed words), no gathered copy
    hist_t* hist,               # IN and OUT
    Py_ssize_t prefetch,
) noexcept nogil:
    # The matrix is read through m here, not passed in pieces: gcc then indexes a row's
    # bins and the column offsets with one counter (one instruction less per column).
    cdef Py_ssize_t i, c, row
    cdef const uint8_t* line
    cdef boosters_pair pair
    cdef hist_t word
    cdef const uint8_t* matrix = m.bins + c0
    cdef const int64_t* col_offsets = m.offsets + c0
    cdef Py_ssize_t stride = m.stride, n_cols = c1 - c0
    for i in range(lo, hi):
        if prefetch > 0 and rows != NULL and i + prefetch < hi:
            boosters_prefetch(matrix + <Py_ssize_t> rows[i + prefetch] * stride)
            boosters_prefetch(values + values_per_row(values) * <Py_ssize_t> rows[i + prefetch])
        row = start + i if rows == NULL else <Py_ssize_t> rows[i]
        line = matrix + row * stride
        if hist_t is double:
            pair = boosters_pair_from_f32(<const float*> values + 2 * row)
            for c in range(n_cols):
                boosters_pair_add(hist + 2 * (col_offsets[c] + line[c]), pair)
        else:
            word = <hist_t> repack(<int64_t> values[row], 4 * sizeof(grad_t), 4 * sizeof(hist_t))
            for c in range(n_cols):
                hist[col_offsets[c] + line[c]] += word


cdef void build_rows(
    const RowMatrix* m,
    const row_t* rows,          # IN: the node's rows, NULL for rows start..start+n
    Py_ssize_t start,
    Py_ssize_t n,
    const grad_t* values,       # IN: gradients by row: float32 pairs for float64 bins, else
                                #     packed words (widened to the bins' words per row)
    hist_t* hist,               # OUT: the node's histogram (row-wise columns overwritten)
    hist_t* scratch,            # OUT: scratch, (MAX_ROW_BLOCKS - 1) histograms of m.total_bins bins
    int n_blocks,
    int n_threads,
    Py_ssize_t prefetch,        # rows ahead to prefetch in gathered nodes; 0: off
) noexcept nogil:
    """Histogram of a node's row-wise columns."""
    cdef Py_ssize_t w = values_per_bin(hist)
    cdef Py_ssize_t blk, c, j, k, lo, hi, chunk = (n + n_blocks - 1) // n_blocks
    cdef Py_ssize_t n_cols = m.n_cols, total = w * m.total_bins
    cdef const int64_t* col_offsets = m.offsets
    cdef const int64_t* col_bins = m.n_bins
    cdef hist_t* dst
    cdef int groups = 1
    cdef Py_ssize_t grp, c0, c1
    if hist_t is double:
        if n_blocks == 1 and n_threads > 1:
            groups = <int> max(1, min(min(<Py_ssize_t> n_threads, n_cols), n * n_cols // MIN_WORK_PER_GROUP))
    if groups > 1:
        # a float64 node too small for its own row blocks: threads split its columns,
        # each summing every row in order (the same sums as one block; the rows fit in cache)
        for grp in prange(groups, schedule="static", num_threads=groups):
            c0 = grp * n_cols // groups
            c1 = (grp + 1) * n_cols // groups
            for c in range(c0, c1):
                memset(hist + w * col_offsets[c], 0, w * col_bins[c] * sizeof(hist_t))
            accumulate_rows(m, c0, c1, rows, start, 0, n, values, hist, prefetch)
        return
    if n_blocks == 1:  # no parallel region for a small node
        for c in range(n_cols):
            memset(hist + w * col_offsets[c], 0, w * col_bins[c] * sizeof(hist_t))
        accumulate_rows(m, 0, n_cols, rows, start, 0, n, values, hist, prefetch)
        return
    for blk in prange(n_blocks, schedule="static", num_threads=min(n_threads, n_blocks)):
        lo = blk * chunk
        hi = min(lo + chunk, n)
        dst = hist if blk == 0 else scratch + (blk - 1) * total
        for c in range(n_cols):
            memset(dst + w * col_offsets[c], 0, w * col_bins[c] * sizeof(hist_t))
        accumulate_rows(m, 0, n_cols, rows, start, lo, hi, values, dst, prefetch)
    # add blocks 1.. in order, column by column (columns are independent)
    for c in prange(n_cols, schedule="static", num_threads=min(n_threads, n_cols)):
        for k in range(1, n_blocks):
            for j in range(w * col_offsets[c], w * (col_offsets[c] + col_bins[c])):
                hist[j] += scratch[(k - 1) * total + j]


cdef void build_rows_words(
    const RowMatrix* m,
    const row_t* rows,          # IN: as build_rows
    Py_ssize_t start,
    Py_ssize_t n,
    const void* packed,         # IN: packed pairs by row, int32 (packed_bits 16) or int16 (8) words
    int packed_bits,
    void* hist,                 # OUT: `sum_bits` words (row-wise columns overwritten)
    void* scratch,              # OUT: scratch, (MAX_ROW_BLOCKS - 1) histograms of `sum_bits` words
    int sum_bits,               # 32, 16 or 8 bits per sum; >= packed_bits
    int n_blocks,
    int n_threads,
    Py_ssize_t prefetch,
) noexcept nogil:
    """build_rows for quantized bins of any width: the width dispatch of the row-wise kernel."""
    if packed_bits == 16:
        if sum_bits == 32:
            build_rows(m, rows, start, n, <const int32_t*> packed, <int64_t*> hist, <int64_t*> scratch,
                       n_blocks, n_threads, prefetch)
        else:
            build_rows(m, rows, start, n, <const int32_t*> packed, <int32_t*> hist, <int32_t*> scratch,
                       n_blocks, n_threads, prefetch)
    elif sum_bits == 32:
        build_rows(m, rows, start, n, <const int16_t*> packed, <int64_t*> hist, <int64_t*> scratch,
                   n_blocks, n_threads, prefetch)
    elif sum_bits == 16:
        build_rows(m, rows, start, n, <const int16_t*> packed, <int32_t*> hist, <int32_t*> scratch,
                   n_blocks, n_threads, prefetch)
    else:
        build_rows(m, rows, start, n, <const int16_t*> packed, <int16_t*> hist, <int16_t*> scratch,
                   n_blocks, n_threads, prefetch)
