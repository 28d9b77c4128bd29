"""Column-wise histogram kernels (RFC-0007): one column's histogram of a node, gradient
gather, subtraction.

Flat layout: stored column c (one feature, or a bundle of exclusive features) owns bins
[offsets[c], offsets[c] + n_bins[c]) of a node's histogram. A bin is a float64
(sum_grad, sum_hess) pair, or in quantized mode one packed word (see hist_t in
types.pxd): one accumulation kernel serves both, fused over the bin type. Building is
column-parallel ("feature-parallel" in RFC-0007, scheduled by the caller): each thread
fills whole columns (disjoint writes), and rows are always added in the given order, so
the result is bit-identical whatever the thread count (integer sums are exact anyway).
"""

from cython.parallel cimport prange
from libc.stdint cimport int16_t, int32_t, int64_t
from libc.string cimport memcpy, memset

from boosters._lib.columns cimport BinColumns, column_u8, column_u16, make_bin_columns
from boosters._lib.types cimport (bin_t, hist_t, packed_t, row_t, word_t, boosters_prefetch, repack,
                                  boosters_pair_add, boosters_pair_from_f32, values_per_bin)


cdef int threads_for_build(int n_threads, Py_ssize_t n_columns, Py_ssize_t n_rows) noexcept nogil:
    """Threads worth using for one histogram build (1 = serial)."""
    if n_threads <= 1 or n_columns < MIN_COLUMNS_PARALLEL:
        return 1
    cdef Py_ssize_t by_work = (n_rows * n_columns) // MIN_WORK_PER_THREAD
    if by_work < 2:
        return 1
    return <int> min(<Py_ssize_t> n_threads, min(by_work, n_columns))


# ----------------------------------------------------------------------------------
# One column
# ----------------------------------------------------------------------------------

cdef inline void add_row(
    hist_t* hist,           # IN and OUT: the column's bins
    Py_ssize_t bin,
    const void* values,     # IN: the rows' values in the bins' own terms: float32 (grad, hess)
                            #     pairs for float64 bins (one SIMD add), else words of hist_t
    Py_ssize_t i,
) noexcept nogil:
    """hist[bin] += value i."""
    if hist_t is double:
        boosters_pair_add(hist + 2 * bin, boosters_pair_from_f32(<const float*> values + 2 * i))
    else:
        hist[bin] += (<const hist_t*> values)[i]


cdef inline void accumulate_contiguous(
    const bin_t* bins,      # IN: bins of rows 0..n-1 of the range
    const void* values,     # IN: values of the same rows (see add_row)
    Py_ssize_t n,
    hist_t* hist,           # IN and OUT: this column's bins
) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        add_row(hist, bins[i], values, i)


cdef inline void accumulate_gathered(
    const bin_t* bins,      # IN: the whole column
    const row_t* rows,      # IN: the node's rows
    const void* values,     # IN: the value of rows[i] at position i (see add_row)
    Py_ssize_t n,
    hist_t* hist,           # IN and OUT: this column's bins
    Py_ssize_t prefetch_distance,
) noexcept nogil:
    cdef Py_ssize_t i, head = 0
    if prefetch_distance > 0 and n > prefetch_distance:
        head = n - prefetch_distance
        for i in range(head):
            boosters_prefetch(bins + rows[i + prefetch_distance])
            add_row(hist, bins[rows[i]], values, i)
    for i in range(head, n):
        add_row(hist, bins[rows[i]], values, i)


cdef void build_column(
    const BinColumns* cols,
    Py_ssize_t column,
    const row_t* rows,      # IN: the node's rows; NULL for the contiguous range start..start+n
    Py_ssize_t start,
    Py_ssize_t n,
    const void* values,     # IN: values[i] is the value of row start + i (contiguous) or of
                            #     rows[i] (gathered); float32 pairs or hist_t words (see add_row)
    hist_t* hist,           # OUT: this column's bins, overwritten
    Py_ssize_t n_bins,
    Py_ssize_t prefetch_distance,   # gathered rows ahead to prefetch; 0: off
) noexcept nogil:
    memset(hist, 0, values_per_bin(hist) * n_bins * sizeof(hist_t))
    if rows == NULL:
        if cols.kind[column] == 0:
            accumulate_contiguous(column_u8(cols, column) + start, values, n, hist)
        else:
            accumulate_contiguous(column_u16(cols, column) + start, values, n, hist)
    else:
        if cols.kind[column] == 0:
            accumulate_gathered(column_u8(cols, column), rows, values, n, hist, prefetch_distance)
        else:
            accumulate_gathered(column_u16(cols, column), rows, values, n, hist, prefetch_distance)


cdef void build_column_words(
    const BinColumns* cols,
    Py_ssize_t column,
    const row_t* rows,      # IN: as build_column
    Py_ssize_t start,
    Py_ssize_t n,
    const void* words,      # IN: the rows' packed pairs as `sum_bits` words (gather_words)
    void* hist,             # OUT: this column's bins, `sum_bits` words, overwritten
    int sum_bits,           # 32, 16 or 8 bits per sum
    Py_ssize_t n_bins,
    Py_ssize_t prefetch_distance,
) noexcept nogil:
    """build_column for quantized bins of any width: the width dispatch of the column-wise
    kernel."""
    if sum_bits == 32:
        build_column(cols, column, rows, start, n, words, <int64_t*> hist, n_bins, prefetch_distance)
    elif sum_bits == 16:
        build_column(cols, column, rows, start, n, words, <int32_t*> hist, n_bins, prefetch_distance)
    else:
        build_column(cols, column, rows, start, n, words, <int16_t*> hist, n_bins, prefetch_distance)


# ----------------------------------------------------------------------------------
# Gradient gather: the node's values in row order, read once per column build
# ----------------------------------------------------------------------------------

cdef void gather_pairs(
    const float* gh,        # IN: (grad, hess) by row
    const row_t* rows,      # IN
    Py_ssize_t n,
    float* ordered,         # OUT: ordered[i] = gh[rows[i]]
    int n_threads,
) noexcept nogil:
    cdef Py_ssize_t i
    cdef int t = <int> min(<Py_ssize_t> n_threads, n // GATHER_ROWS_PER_THREAD)
    if t > 1:
        for i in prange(n, schedule="static", num_threads=t):
            memcpy(ordered + 2 * i, gh + 2 * <Py_ssize_t> rows[i], 2 * sizeof(float))
    else:
        for i in range(n):
            memcpy(ordered + 2 * i, gh + 2 * <Py_ssize_t> rows[i], 2 * sizeof(float))


cdef inline void widen_rows(
    const packed_t* packed, # IN: packed pairs by row
    const row_t* rows,      # IN: NULL means rows 0..n-1
    Py_ssize_t n,
    word_t* out,            # OUT: out[i] = the pair of rows[i], repacked as a word_t
    int n_threads,
) noexcept nogil:
    cdef Py_ssize_t i
    cdef int t = <int> min(<Py_ssize_t> n_threads, n // GATHER_ROWS_PER_THREAD)
    cdef int from_bits = 4 * sizeof(packed_t), to_bits = 4 * sizeof(word_t)
    if rows == NULL:
        if t > 1:
            for i in prange(n, schedule="static", num_threads=t):
                out[i] = <word_t> repack(packed[i], from_bits, to_bits)
        else:
            for i in range(n):
                out[i] = <word_t> repack(packed[i], from_bits, to_bits)
    elif t > 1:
        for i in prange(n, schedule="static", num_threads=t):
            out[i] = <word_t> repack(packed[rows[i]], from_bits, to_bits)
    else:
        for i in range(n):
            out[i] = <word_t> repack(packed[rows[i]], from_bits, to_bits)


cdef void gather_words(
    const void* packed,     # IN: packed pairs by row, int32 (packed_bits 16) or int16 (8) words
    int packed_bits,
    const row_t* rows,      # IN: NULL means rows 0..n-1
    Py_ssize_t n,
    void* out,              # OUT: out[i] = the pair of rows[i] as a `sum_bits` word
    int sum_bits,           # >= packed_bits
    int n_threads,
) noexcept nogil:
    """Quantized gather, widening each row's pair once to the node's bin width: the width
    dispatch of the gather."""
    if packed_bits == 16:
        if sum_bits == 32:
            widen_rows(<const int32_t*> packed, rows, n, <int64_t*> out, n_threads)
        else:
            widen_rows(<const int32_t*> packed, rows, n, <int32_t*> out, n_threads)
    elif sum_bits == 32:
        widen_rows(<const int16_t*> packed, rows, n, <int64_t*> out, n_threads)
    elif sum_bits == 16:
        widen_rows(<const int16_t*> packed, rows, n, <int32_t*> out, n_threads)
    else:
        widen_rows(<const int16_t*> packed, rows, n, <int16_t*> out, n_threads)


# ----------------------------------------------------------------------------------
# Subtraction: sibling = parent - child
# ----------------------------------------------------------------------------------

cdef void subtract_bins(
    const hist_t* parent,   # IN
    const hist_t* child,    # IN
    hist_t* out,            # OUT: parent - child; may alias parent (in place)
    Py_ssize_t n_bins,
) noexcept nogil:
    """Bins of one type: float64 pairs, or packed words of one width (exact)."""
    cdef Py_ssize_t j
    for j in range(values_per_bin(parent) * n_bins):
        out[j] = parent[j] - child[j]


# Quantized subtraction across widths: the child is never wider than the parent (fewer
# rows), nor the sibling (the child is the smaller one), nor wider than the sibling's parent.

cdef inline void subtract_widened(
    const word_t* parent,   # IN
    const packed_t* child,  # IN: narrower words (16 or 32 bits: packed_t's types)
    word_t* out,            # OUT: parent - child at the parent's width; may alias parent
    Py_ssize_t n,
) noexcept nogil:
    cdef Py_ssize_t j
    cdef int child_bits = 4 * sizeof(packed_t), bits = 4 * sizeof(word_t)
    for j in range(n):
        out[j] = parent[j] - <word_t> repack(child[j], child_bits, bits)


cdef inline void narrow_in_place(
    word_t* words,          # IN: n words
    packed_t* narrow_words, # OUT: the same memory: narrow_words[j] = words[j] repacked
    Py_ssize_t n,
) noexcept nogil:
    """Word j is written over bytes of words <= j, all read already; memcpy stores keep
    the compiler from reordering them across the loads (the types alias)."""
    cdef Py_ssize_t j
    cdef packed_t v
    cdef int bits = 4 * sizeof(word_t), narrow_bits = 4 * sizeof(packed_t)
    for j in range(n):
        v = <packed_t> repack(words[j], bits, narrow_bits)
        memcpy(<char*> narrow_words + j * sizeof(packed_t), &v, sizeof(packed_t))


cdef inline void subtract_at_width(
    const word_t* parent,   # IN
    const void* child,      # IN: `child_bits` words, child_bits <= the parent's
    int child_bits,
    word_t* out,            # OUT: parent - child, `out_bits` words (<= the parent's); may alias parent
    int out_bits,
    Py_ssize_t n,
) noexcept nogil:
    # at the parent's width into out, then narrowed in place
    cdef int bits = 4 * sizeof(word_t)
    if child_bits == bits:
        subtract_bins(parent, <const word_t*> child, out, n)
    elif child_bits == 16:
        subtract_widened(parent, <const int32_t*> child, out, n)
    else:
        subtract_widened(parent, <const int16_t*> child, out, n)
    if out_bits == 16 and bits == 32:
        narrow_in_place(out, <int32_t*> out, n)
    elif out_bits == 8 and bits > 8:
        narrow_in_place(out, <int16_t*> out, n)


cdef void subtract_words(
    const void* parent,     # IN: `parent_bits` words
    int parent_bits,
    const void* child,      # IN: `child_bits` words, child_bits <= parent_bits
    int child_bits,
    void* out,              # OUT: parent - child as `out_bits` words (<= parent_bits); may be parent
    int out_bits,
    Py_ssize_t n_bins,
) noexcept nogil:
    """Quantized subtraction over n_bins packed words (bits per sum: 32, 16 or 8): the
    width dispatch of the subtraction."""
    if parent_bits == 32:
        subtract_at_width(<const int64_t*> parent, child, child_bits, <int64_t*> out, out_bits, n_bins)
    elif parent_bits == 16:
        subtract_at_width(<const int32_t*> parent, child, child_bits, <int32_t*> out, out_bits, n_bins)
    else:
        subtract_at_width(<const int16_t*> parent, child, child_bits, <int16_t*> out, out_bits, n_bins)


cdef class ColumnsView:
    """A BinnedMatrix's columns as a BinColumns struct, with the views kept alive."""

    def __init__(self, binned):
        self.u8 = binned.bins_u8
        self.u16 = binned.bins_u16
        self.kind = binned.column_kind
        self.index = binned.column_index
        self.offsets = binned.column_offsets
        self.n_bins = binned.column_n_bins
        self.n_rows = binned.n_rows
        self.n_columns = binned.n_columns
        self.total_bins = binned.total_bins
        self.cols = make_bin_columns(self.u8, self.u16, self.kind, self.index, self.n_rows)
