"""Row-wise multi-column histogram kernels (RFC-0016 Phase 3).

For narrow dense data the uint8 columns are also stored row-major, one row's bins in
one cache line: the kernel loads a row's index and gradient once and updates every
column from that line, where the column-wise kernels re-read them per column.

Parallel over blocks of the node's rows: block 0 accumulates into the destination,
blocks 1.. into private histograms that are then added in block order. Quantized
(integer) sums are exact in any order, so there is one block per thread; float64 sums
depend on their grouping, so their block count depends on the node size only
(`row_blocks`) and the result is the same for any thread count (one thread pays the
reduction of the private histograms, a pass over the bins). Quantized bins are words of
the node's width (see types.pxd).
"""

from cython.parallel cimport prange
from libc.stdint cimport uint8_t, int16_t, int32_t, int64_t
from libc.string cimport memset

from boosters._lib.types cimport (packed_t, row_t, word_t, repack, boosters_prefetch, boosters_pair,
                                  boosters_pair_from_f32, boosters_pair_add)

cdef enum:
    ROWS_PER_BLOCK = 2048          # quantized: rows per thread below which one block is better
    FLOAT_ROWS_PER_BLOCK = 4096    # float64: rows per block (fixed, whatever the thread count)
    MAX_FLOAT_BLOCKS = 8
    MIN_WORK_PER_GROUP = 4096      # float64 one-block nodes: rows x columns per column group


cdef int row_blocks(Py_ssize_t n_rows, bint exact, int n_threads) noexcept nogil:
    """Row blocks for a node: quantized, one per thread (>= ROWS_PER_BLOCK rows each);
    float64, by node size alone."""
    if exact:
        return <int> max(1, min(min(n_rows // ROWS_PER_BLOCK, <Py_ssize_t> n_threads), <Py_ssize_t> MAX_ROW_BLOCKS))
    return <int> max(1, min(n_rows // FLOAT_ROWS_PER_BLOCK, <Py_ssize_t> MAX_FLOAT_BLOCKS))


cdef inline void accumulate_rows_f64(const uint8_t* matrix, Py_ssize_t stride, const int64_t* col_offsets,
                                     Py_ssize_t n_cols, const row_t* rows, Py_ssize_t start,
                                     Py_ssize_t lo, Py_ssize_t hi, const float* gh, double* hist,
                                     Py_ssize_t prefetch) noexcept nogil:
    # rows NULL: rows start+lo..start+hi; gradients are read by row (no gathered copy)
    cdef Py_ssize_t i, c, row
    cdef const uint8_t* line
    cdef boosters_pair v
    for i in range(lo, hi):
        if prefetch > 0 and rows != NULL and i + prefetch < hi:
            boosters_prefetch(matrix + <Py_ssize_t> rows[i + prefetch] * stride)
            boosters_prefetch(gh + 2 * <Py_ssize_t> rows[i + prefetch])
        row = start + i if rows == NULL else <Py_ssize_t> rows[i]
        line = matrix + row * stride
        v = boosters_pair_from_f32(gh + 2 * row)
        for c in range(n_cols):
            boosters_pair_add(hist + 2 * (col_offsets[c] + line[c]), v)


cdef void build_rowwise(
    const uint8_t* matrix,          # IN: (n_rows, stride) row-major bins of the row-wise columns
    Py_ssize_t stride,
    const int64_t* col_offsets,     # IN: histogram offset of each row-wise column
    const int64_t* col_bins,        # IN: bin count of each row-wise column
    Py_ssize_t n_cols,
    const row_t* rows,              # IN: the node's rows, NULL for rows start..start+n
    Py_ssize_t start,
    Py_ssize_t n,
    const float* gh,                # IN: (n_rows, 2) gradients, read by row
    double* hist,                   # OUT: (row-wise columns overwritten)
    double* scratch,                # scratch: (MAX_ROW_BLOCKS - 1) histograms of total_bins
    Py_ssize_t total_bins,
    int n_blocks,
    int n_threads,
    Py_ssize_t prefetch,            # rows ahead to prefetch in gathered nodes; 0: off
) noexcept nogil:
    """Float64 histogram of a node's row-wise columns."""
    cdef Py_ssize_t blk, c, j, k, lo, hi, chunk = (n + n_blocks - 1) // n_blocks
    cdef double* dst
    cdef int groups = 1
    cdef Py_ssize_t grp, c0, c1
    if n_blocks == 1 and n_threads > 1:
        groups = <int> max(1, min(min(<Py_ssize_t> n_threads, n_cols), n * n_cols // MIN_WORK_PER_GROUP))
    if groups > 1:
        # a node too small for its own row blocks: threads split its columns, each
        # summing every row in order (the same sums as one block; the rows fit in cache)
        for grp in prange(groups, schedule="static", num_threads=groups):
            c0 = grp * n_cols // groups
            c1 = (grp + 1) * n_cols // groups
            for c in range(c0, c1):
                memset(hist + 2 * col_offsets[c], 0, 2 * col_bins[c] * sizeof(double))
            accumulate_rows_f64(matrix + c0, stride, col_offsets + c0, c1 - c0, rows, start, 0, n, gh, hist,
                                prefetch)
        return
    if n_blocks == 1:  # no parallel region for a small node
        for c in range(n_cols):
            memset(hist + 2 * col_offsets[c], 0, 2 * col_bins[c] * sizeof(double))
        accumulate_rows_f64(matrix, stride, col_offsets, n_cols, rows, start, 0, n, gh, hist, prefetch)
        return
    for blk in prange(n_blocks, schedule="static", num_threads=min(n_threads, n_blocks)):
        lo = blk * chunk
        hi = min(lo + chunk, n)
        dst = hist if blk == 0 else scratch + (blk - 1) * 2 * total_bins
        for c in range(n_cols):
            memset(dst + 2 * col_offsets[c], 0, 2 * col_bins[c] * sizeof(double))
        accumulate_rows_f64(matrix, stride, col_offsets, n_cols, rows, start, lo, hi, gh, dst, prefetch)
    # add blocks 1.. in order, column by column (columns are independent)
    for c in prange(n_cols, schedule="static", num_threads=min(n_threads, n_cols)):
        for k in range(1, n_blocks):
            for j in range(2 * col_offsets[c], 2 * (col_offsets[c] + col_bins[c])):
                hist[j] += scratch[(k - 1) * 2 * total_bins + j]


cdef inline void accumulate_rows_words(const uint8_t* matrix, Py_ssize_t stride, const int64_t* col_offsets,
                                       Py_ssize_t n_cols, const row_t* rows, Py_ssize_t start,
                                       Py_ssize_t lo, Py_ssize_t hi, const packed_t* packed,
                                       word_t* hist, Py_ssize_t prefetch) noexcept nogil:
    # packed pairs are read by row and widened to the bins' word once per row
    cdef Py_ssize_t i, c, row
    cdef const uint8_t* line
    cdef word_t v
    cdef int from_bits = 4 * sizeof(packed_t), to_bits = 4 * sizeof(word_t)
    for i in range(lo, hi):
        if prefetch > 0 and rows != NULL and i + prefetch < hi:
            boosters_prefetch(matrix + <Py_ssize_t> rows[i + prefetch] * stride)
            boosters_prefetch(packed + <Py_ssize_t> rows[i + prefetch])
        row = start + i if rows == NULL else <Py_ssize_t> rows[i]
        line = matrix + row * stride
        v = <word_t> repack(packed[row], from_bits, to_bits)
        for c in range(n_cols):
            hist[col_offsets[c] + line[c]] += v


cdef inline void rowwise_words(const uint8_t* matrix, Py_ssize_t stride, const int64_t* col_offsets,
                               const int64_t* col_bins, Py_ssize_t n_cols, const row_t* rows, Py_ssize_t start,
                               Py_ssize_t n, const packed_t* packed, word_t* hist, word_t* scratch,
                               Py_ssize_t total_bins, int n_blocks, int n_threads, Py_ssize_t prefetch) noexcept nogil:
    cdef Py_ssize_t blk, c, j, k, lo, hi, chunk = (n + n_blocks - 1) // n_blocks
    cdef word_t* dst
    if n_blocks == 1:  # no parallel region for a small node
        for c in range(n_cols):
            memset(hist + col_offsets[c], 0, col_bins[c] * sizeof(word_t))
        accumulate_rows_words(matrix, stride, col_offsets, n_cols, rows, start, 0, n, packed, hist, prefetch)
        return
    for blk in prange(n_blocks, schedule="static", num_threads=min(n_threads, n_blocks)):
        lo = blk * chunk
        hi = min(lo + chunk, n)
        dst = hist if blk == 0 else scratch + (blk - 1) * total_bins
        for c in range(n_cols):
            memset(dst + col_offsets[c], 0, col_bins[c] * sizeof(word_t))
        accumulate_rows_words(matrix, stride, col_offsets, n_cols, rows, start, lo, hi, packed, dst, prefetch)
    for c in prange(n_cols, schedule="static", num_threads=min(n_threads, n_cols)):
        for k in range(1, n_blocks):
            for j in range(col_offsets[c], col_offsets[c] + col_bins[c]):
                hist[j] += scratch[(k - 1) * total_bins + j]


cdef inline void rowwise_any_words(const uint8_t* matrix, Py_ssize_t stride, const int64_t* col_offsets,
                                   const int64_t* col_bins, Py_ssize_t n_cols, const row_t* rows, Py_ssize_t start,
                                   Py_ssize_t n, const packed_t* packed, void* hist, void* scratch, int sum_bits,
                                   Py_ssize_t total_bins, int n_blocks, int n_threads,
                                   Py_ssize_t prefetch) noexcept nogil:
    if sum_bits == 32:
        rowwise_words(matrix, stride, col_offsets, col_bins, n_cols, rows, start, n, packed, <int64_t*> hist,
                      <int64_t*> scratch, total_bins, n_blocks, n_threads, prefetch)
    elif sum_bits == 16:
        rowwise_words(matrix, stride, col_offsets, col_bins, n_cols, rows, start, n, packed, <int32_t*> hist,
                      <int32_t*> scratch, total_bins, n_blocks, n_threads, prefetch)
    else:
        rowwise_words(matrix, stride, col_offsets, col_bins, n_cols, rows, start, n, packed, <int16_t*> hist,
                      <int16_t*> scratch, total_bins, n_blocks, n_threads, prefetch)


cdef void build_rowwise_packed(
    const uint8_t* matrix,          # IN: (n_rows, stride) row-major bins of the row-wise columns
    Py_ssize_t stride,
    const int64_t* col_offsets,     # IN: histogram offset of each row-wise column
    const int64_t* col_bins,        # IN: bin count of each row-wise column
    Py_ssize_t n_cols,
    const row_t* rows,              # IN: the node's rows, NULL for rows start..start+n
    Py_ssize_t start,
    Py_ssize_t n,
    const void* packed,             # IN: packed pairs (int32 or int16 words), read by row
    int packed_bits,                # 16 (int32 words) or 8 (int16 words)
    void* hist,                     # OUT: `sum_bits` words (row-wise columns overwritten)
    void* scratch,                  # scratch: (MAX_ROW_BLOCKS - 1) histograms of total_bins words
    int sum_bits,                   # 32, 16 or 8 bits per sum; >= packed_bits
    Py_ssize_t total_bins,
    int n_blocks,
    int n_threads,
    Py_ssize_t prefetch,            # rows ahead to prefetch in gathered nodes; 0: off
) noexcept nogil:
    if packed_bits == 16:
        rowwise_any_words(matrix, stride, col_offsets, col_bins, n_cols, rows, start, n, <const int32_t*> packed,
                          hist, scratch, sum_bits, total_bins, n_blocks, n_threads, prefetch)
    else:
        rowwise_any_words(matrix, stride, col_offsets, col_bins, n_cols, rows, start, n, <const int16_t*> packed,
                          hist, scratch, sum_bits, total_bins, n_blocks, n_threads, prefetch)
