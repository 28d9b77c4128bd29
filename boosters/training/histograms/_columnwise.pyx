"""Column-wise histogram kernels (RFC-0007): root build, gathered build, gradient gather,
subtraction; float64 and quantized (packed int64) accumulation.

Flat layout: stored column c (one feature, or a bundle of exclusive features) owns bins
[offsets[c], offsets[c] + n_bins[c]) of a histogram of shape (total_bins, 2) float64
holding (sum_grad, sum_hess) per bin. Gradients are float32 (grad, hess) pairs, 8 bytes
per row. Building is column-parallel ("feature-parallel" in RFC-0007): each thread fills
whole columns (disjoint writes), and rows are always added in the given order, so the
result is bit-identical whatever the thread count.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport uint8_t, uint16_t, int8_t, int16_t, int32_t, int64_t
from libc.string cimport memcpy, memset

from boosters._lib.sequences cimport fill
from boosters._lib.types cimport (bin_t, packed_t, row_t, word_t, boosters_prefetch, repack,
                                  boosters_pair_add, boosters_pair_from_f32)
from boosters._lib.columns cimport BinColumns, make_bin_columns, column_u8, column_u16

DEFAULT_PREFETCH_DISTANCE = 64


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

cdef inline void accumulate_contiguous(
    const bin_t* bins,      # IN: bins of rows 0..n-1 of the range
    const float* gh,        # IN: (grad, hess) of the same rows
    Py_ssize_t n,
    double* hist,           # IN and OUT: this column's bins
) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        boosters_pair_add(hist + 2 * <Py_ssize_t> bins[i], boosters_pair_from_f32(gh + 2 * i))


cdef inline void accumulate_gathered(
    const bin_t* bins,      # IN: the whole column
    const row_t* rows,      # IN: the node's rows
    const float* ordered,   # IN: (grad, hess) of rows[i] at position i
    Py_ssize_t n,
    double* hist,           # IN and OUT: this column's bins
    Py_ssize_t prefetch_distance,
) noexcept nogil:
    cdef Py_ssize_t i, head = 0
    if prefetch_distance > 0 and n > prefetch_distance:
        head = n - prefetch_distance
        for i in range(head):
            boosters_prefetch(bins + rows[i + prefetch_distance])
            boosters_pair_add(hist + 2 * <Py_ssize_t> bins[rows[i]], boosters_pair_from_f32(ordered + 2 * i))
    for i in range(head, n):
        boosters_pair_add(hist + 2 * <Py_ssize_t> bins[rows[i]], boosters_pair_from_f32(ordered + 2 * i))


cdef void build_one_column(
    const BinColumns* cols,
    Py_ssize_t column,
    const row_t* rows,      # IN: NULL for the contiguous range start..start+n
    Py_ssize_t start,
    Py_ssize_t n,
    const float* gh,        # IN: by row (contiguous) or pre-gathered (rows given)
    double* hist,           # OUT: this column's bins, overwritten
    Py_ssize_t n_bins,
    Py_ssize_t prefetch_distance,
) noexcept nogil:
    memset(hist, 0, 2 * n_bins * sizeof(double))
    if rows == NULL:
        if cols.kind[column] == 0:
            accumulate_contiguous(column_u8(cols, column) + start, gh + 2 * start, n, hist)
        else:
            accumulate_contiguous(column_u16(cols, column) + start, gh + 2 * start, n, hist)
    else:
        if cols.kind[column] == 0:
            accumulate_gathered(column_u8(cols, column), rows, gh, n, hist, prefetch_distance)
        else:
            accumulate_gathered(column_u16(cols, column), rows, gh, n, hist, prefetch_distance)


# Quantized mode: one packed word per row (already widened to the bins' width, see
# types.pxd), one integer add per row and column; integer sums are exact, so the result
# does not depend on the order of the rows or on the thread count.

cdef inline void accumulate_packed_contiguous(const bin_t* bins, const word_t* values, Py_ssize_t n,
                                              word_t* hist) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        hist[bins[i]] += values[i]


cdef inline void accumulate_packed_gathered(const bin_t* bins, const row_t* rows, const word_t* ordered,
                                            Py_ssize_t n, word_t* hist,
                                            Py_ssize_t prefetch_distance) noexcept nogil:
    cdef Py_ssize_t i, head = 0
    if prefetch_distance > 0 and n > prefetch_distance:
        head = n - prefetch_distance
        for i in range(head):
            boosters_prefetch(bins + rows[i + prefetch_distance])
            hist[bins[rows[i]]] += ordered[i]
    for i in range(head, n):
        hist[bins[rows[i]]] += ordered[i]


cdef inline void build_column_words(const BinColumns* cols, Py_ssize_t column, const row_t* rows,
                                    Py_ssize_t start, Py_ssize_t n, const word_t* values, word_t* hist,
                                    Py_ssize_t n_bins, Py_ssize_t prefetch_distance) noexcept nogil:
    memset(hist, 0, n_bins * sizeof(word_t))
    if rows == NULL:
        if cols.kind[column] == 0:
            accumulate_packed_contiguous(column_u8(cols, column) + start, values, n, hist)
        else:
            accumulate_packed_contiguous(column_u16(cols, column) + start, values, n, hist)
    else:
        if cols.kind[column] == 0:
            accumulate_packed_gathered(column_u8(cols, column), rows, values, n, hist, prefetch_distance)
        else:
            accumulate_packed_gathered(column_u16(cols, column), rows, values, n, hist, prefetch_distance)


cdef void build_one_column_packed(
    const BinColumns* cols,
    Py_ssize_t column,
    const row_t* rows,      # IN: NULL for the contiguous range start..start+n
    Py_ssize_t start,
    Py_ssize_t n,
    const void* values,     # IN: packed pairs as `sum_bits` words: values[i] is row start + i's
                            #     (contiguous) or rows[i]'s (gathered)
    void* hist,             # OUT: this column's bins (`sum_bits` words), overwritten
    Py_ssize_t n_bins,
    Py_ssize_t prefetch_distance,
    int sum_bits,           # 32, 16 or 8 bits per sum
) noexcept nogil:
    if sum_bits == 32:
        build_column_words(cols, column, rows, start, n, <const int64_t*> values, <int64_t*> hist, n_bins,
                           prefetch_distance)
    elif sum_bits == 16:
        build_column_words(cols, column, rows, start, n, <const int32_t*> values, <int32_t*> hist, n_bins,
                           prefetch_distance)
    else:
        build_column_words(cols, column, rows, start, n, <const int16_t*> values, <int16_t*> hist, n_bins,
                           prefetch_distance)


cdef inline void gather_words(const packed_t* packed, const row_t* rows, Py_ssize_t n, word_t* out,
                              int n_threads) noexcept nogil:
    """out[i] = packed[rows[i]] as a word_t; rows NULL means rows 0..n-1."""
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


cdef void gather_packed(const void* packed, int packed_bits, const row_t* rows, Py_ssize_t n, void* out,
                        int sum_bits, int n_threads) noexcept nogil:
    """out[i] = the pair of row rows[i] (rows NULL: row i) as a `sum_bits` word. packed:
    int32 words (packed_bits 16) or int16 (8); sum_bits >= packed_bits."""
    if packed_bits == 16:
        if sum_bits == 32:
            gather_words(<const int32_t*> packed, rows, n, <int64_t*> out, n_threads)
        else:
            gather_words(<const int32_t*> packed, rows, n, <int32_t*> out, n_threads)
    elif sum_bits == 32:
        gather_words(<const int16_t*> packed, rows, n, <int64_t*> out, n_threads)
    elif sum_bits == 16:
        gather_words(<const int16_t*> packed, rows, n, <int32_t*> out, n_threads)
    else:
        gather_words(<const int16_t*> packed, rows, n, <int16_t*> out, n_threads)


# ----------------------------------------------------------------------------------
# All columns of a node (column-parallel)
# ----------------------------------------------------------------------------------

cdef void build_columns(
    const BinColumns* cols,
    const int32_t* columns,     # IN: columns to build
    Py_ssize_t n_columns,
    const int64_t* offsets,     # IN: histogram offset of every column
    const int32_t* n_bins,      # IN: bin count of every column
    const row_t* rows,          # IN: NULL for contiguous rows start..start+n
    Py_ssize_t start,
    Py_ssize_t n,
    const float* gh,            # IN: gradients by row, or pre-gathered when rows given
    double* hist,               # OUT: the node's histogram (only `columns` written)
    Py_ssize_t prefetch_distance,
    int n_threads,
) noexcept nogil:
    cdef Py_ssize_t j, c
    cdef int t = threads_for_build(n_threads, n_columns, n)
    if t > 1:
        for j in prange(n_columns, schedule="static", num_threads=t):
            c = columns[j]
            build_one_column(cols, c, rows, start, n, gh, hist + 2 * offsets[c], n_bins[c],
                             prefetch_distance)
    else:
        for j in range(n_columns):
            c = columns[j]
            build_one_column(cols, c, rows, start, n, gh, hist + 2 * offsets[c], n_bins[c],
                             prefetch_distance)


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


cdef void subtract_values(
    const double* parent,   # IN
    const double* child,    # IN
    double* out,            # OUT: parent - child; may alias parent (in-place)
    Py_ssize_t n_values,
) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n_values):
        out[i] = parent[i] - child[i]


# Quantized subtraction: the child is never wider than the parent (fewer rows), nor the
# sibling (the child is the smaller one), nor wider than the sibling's parent.

cdef inline void subtract_same_width(const word_t* parent, const word_t* child, word_t* out,
                                     Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        out[j] = parent[j] - child[j]


cdef inline void subtract_widened(const word_t* parent, const packed_t* child, word_t* out,
                                  Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    cdef int child_bits = 4 * sizeof(packed_t), bits = 4 * sizeof(word_t)
    for j in range(n):
        out[j] = parent[j] - <word_t> repack(child[j], child_bits, bits)


cdef inline void narrow_in_place(word_t* words, packed_t* narrow_words, Py_ssize_t n) noexcept nogil:
    """narrow_words[j] = words[j] repacked, where narrow_words is the same memory: word j
    is written over bytes of words <= j, all read already; memcpy stores keep the
    compiler from reordering them across the loads (the types alias)."""
    cdef Py_ssize_t j
    cdef packed_t v
    cdef int bits = 4 * sizeof(word_t), narrow_bits = 4 * sizeof(packed_t)
    for j in range(n):
        v = <packed_t> repack(words[j], bits, narrow_bits)
        memcpy(<char*> narrow_words + j * sizeof(packed_t), &v, sizeof(packed_t))


cdef inline void subtract_from(const word_t* parent, const void* child, int child_bits, word_t* out,
                               Py_ssize_t n) noexcept nogil:
    cdef int bits = 4 * sizeof(word_t)
    if child_bits == bits:
        subtract_same_width(parent, <const word_t*> child, out, n)
    elif child_bits == 16:
        subtract_widened(parent, <const int32_t*> child, out, n)
    else:
        subtract_widened(parent, <const int16_t*> child, out, n)


cdef inline void narrow_from(word_t* words, int out_bits, Py_ssize_t n) noexcept nogil:
    if out_bits == 16:
        narrow_in_place(words, <int32_t*> words, n)
    elif out_bits == 8:
        narrow_in_place(words, <int16_t*> words, n)


cdef void subtract_packed_words(const void* parent, int parent_bits, const void* child, int child_bits,
                                void* out, int out_bits, Py_ssize_t n) noexcept nogil:
    """out = parent - child over n bins of packed words (bits per sum: 32, 16 or 8), out
    in its own width; out may be parent. child_bits, out_bits <= parent_bits."""
    # at the parent's width into out, then narrowed in place
    if parent_bits == 32:
        subtract_from(<const int64_t*> parent, child, child_bits, <int64_t*> out, n)
        narrow_from(<int64_t*> out, out_bits, n)
    elif parent_bits == 16:
        subtract_from(<const int32_t*> parent, child, child_bits, <int32_t*> out, n)
        narrow_from(<int32_t*> out, out_bits, n)
    else:
        subtract_from(<const int16_t*> parent, child, child_bits, <int16_t*> out, n)


# ----------------------------------------------------------------------------------
# Python entry points (tests, benchmarks); the grower uses HistogramBuilder below.
# ----------------------------------------------------------------------------------

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


def column_list(columns, Py_ssize_t n_columns):
    if columns is None:
        return np.arange(n_columns, dtype=np.int32)
    columns = np.ascontiguousarray(columns, dtype=np.int32)
    if columns.ndim != 1 or (columns.size and (columns.min() < 0 or columns.max() >= n_columns)):
        raise ValueError(f"columns must be a 1-D list of column indices in [0, {n_columns})")
    return columns


def _check_hist(hist, Py_ssize_t total_bins, name="hist"):
    if hist.shape[0] != total_bins or hist.shape[1] != 2:
        raise ValueError(f"{name} must have shape ({total_bins}, 2), got {tuple(hist.shape)}")


def check_rows(const row_t[::1] rows, Py_ssize_t n_rows):
    cdef Py_ssize_t i
    cdef row_t worst = 0
    for i in range(rows.shape[0]):
        if rows[i] > worst:
            worst = rows[i]
    if rows.shape[0] and worst >= n_rows:
        raise ValueError(f"rows contains index {worst} but there are only {n_rows} rows")


def build_histogram_contiguous(binned, const float[:, ::1] gh, double[:, ::1] hist,
                               Py_ssize_t start=0, stop=None, columns=None, int n_threads=1):
    """Histogram of rows start..stop in storage order (the root). gh: (n_rows, 2) float32."""
    cdef ColumnsView view = ColumnsView(binned)
    cdef Py_ssize_t end = view.n_rows if stop is None else stop
    if gh.shape[0] != view.n_rows or gh.shape[1] != 2:
        raise ValueError(f"gh must have shape ({view.n_rows}, 2), got {tuple(gh.shape)}")
    _check_hist(hist, view.total_bins)
    if not 0 <= start <= end <= view.n_rows:
        raise ValueError(f"row range [{start}, {end}) is outside [0, {view.n_rows})")
    cdef const int32_t[::1] cols = column_list(columns, view.n_columns)
    if cols.shape[0] == 0:
        return
    with nogil:
        build_columns(&view.cols, &cols[0], cols.shape[0], &view.offsets[0], &view.n_bins[0],
                      NULL, start, end - start, &gh[0, 0], &hist[0, 0], 0, n_threads)


def build_histogram_gathered(binned, const row_t[::1] rows, const float[:, ::1] ordered_gh,
                             double[:, ::1] hist, columns=None, int n_threads=1,
                             bint prefetch=True, Py_ssize_t prefetch_distance=DEFAULT_PREFETCH_DISTANCE):
    """Histogram of the given rows; ordered_gh[i] holds the gradients of rows[i]."""
    cdef ColumnsView view = ColumnsView(binned)
    if ordered_gh.shape[0] < rows.shape[0] or ordered_gh.shape[1] != 2:
        raise ValueError(f"ordered_gh must have shape (>= {rows.shape[0]}, 2), got {tuple(ordered_gh.shape)}")
    _check_hist(hist, view.total_bins)
    check_rows(rows, view.n_rows)
    if prefetch_distance < 0:
        raise ValueError(f"prefetch_distance must be >= 0, got {prefetch_distance}")
    cdef const int32_t[::1] cols = column_list(columns, view.n_columns)
    cdef Py_ssize_t distance = prefetch_distance if prefetch else 0
    cdef const row_t* rows_ptr = &rows[0] if rows.shape[0] else NULL
    cdef const float* gh_ptr = &ordered_gh[0, 0] if ordered_gh.shape[0] else NULL
    cdef row_t no_rows = 0
    if cols.shape[0] == 0:
        return
    if rows_ptr == NULL:
        rows_ptr = &no_rows  # empty node: NULL would mean "contiguous"
    with nogil:
        build_columns(&view.cols, &cols[0], cols.shape[0], &view.offsets[0], &view.n_bins[0],
                      rows_ptr, 0, rows.shape[0], gh_ptr, &hist[0, 0], distance, n_threads)


def gather_gradients(const float[:, ::1] gh, const row_t[::1] rows, float[:, ::1] out, int n_threads=1):
    """out[i] = gh[rows[i]] for every i: the ordered gradients of a node."""
    if gh.shape[1] != 2 or out.shape[1] != 2 or out.shape[0] < rows.shape[0]:
        raise ValueError("gh must be (n_rows, 2) and out (>= len(rows), 2) float32")
    check_rows(rows, gh.shape[0])
    if rows.shape[0] == 0:
        return
    with nogil:
        gather_pairs(&gh[0, 0], &rows[0], rows.shape[0], &out[0, 0], n_threads)


def subtract_histograms(const double[:, ::1] parent, const double[:, ::1] child, double[:, ::1] out):
    """out = parent - child (the sibling's histogram); out may be parent itself."""
    if parent.shape[0] != child.shape[0] or parent.shape[0] != out.shape[0] or \
            parent.shape[1] != 2 or child.shape[1] != 2 or out.shape[1] != 2:
        raise ValueError("parent, child and out must all have the same shape (total_bins, 2)")
    if parent.shape[0] == 0:
        return
    with nogil:
        subtract_values(&parent[0, 0], &child[0, 0], &out[0, 0], 2 * parent.shape[0])


_SUM_BITS = {np.dtype(np.int64): 32, np.dtype(np.int32): 16, np.dtype(np.int16): 8}


def build_histogram_packed(binned, packed, hist, rows=None, columns=None, int n_threads=1,
                           bint prefetch=True, Py_ssize_t prefetch_distance=DEFAULT_PREFETCH_DISTANCE):
    """Quantized histogram: hist[bin] = packed sum of packed[row] over `rows` (all rows
    if None). packed: int32 (i16 mode) or int16 (i8 mode) words, one per row. hist:
    int64, int32 or int16 words (32, 16 or 8 bits per sum, at least the values' bits);
    the caller makes sure the sums fit."""
    cdef ColumnsView view = ColumnsView(binned)
    cdef const int32_t[::1] cols = column_list(columns, view.n_columns)
    cdef const row_t[::1] row_v
    cdef const row_t* rows_ptr = NULL
    cdef Py_ssize_t n = view.n_rows, distance = prefetch_distance if prefetch else 0, j
    cdef const int32_t[::1] q32
    cdef const int16_t[::1] q16
    packed = np.asarray(packed)
    hist = np.asarray(hist)
    if packed.dtype not in (np.int16, np.int32) or packed.shape != (view.n_rows,):
        raise ValueError(f"packed must be int16 or int32 with one entry per row ({view.n_rows})")
    if hist.dtype not in _SUM_BITS or hist.shape != (view.total_bins,) or not hist.flags.c_contiguous:
        raise ValueError(f"hist must be a contiguous int64, int32 or int16 array of {view.total_bins} entries")
    cdef int packed_bits = 16 if packed.dtype == np.int32 else 8
    cdef int sum_bits = _SUM_BITS[hist.dtype]
    if sum_bits < packed_bits:
        raise ValueError("hist words must have at least as many bits per sum as the packed values")
    if rows is not None:
        row_v = np.ascontiguousarray(rows, dtype=np.uint32)
        check_rows(row_v, view.n_rows)
        n = row_v.shape[0]
        if n:
            rows_ptr = &row_v[0]
    if view.total_bins == 0:
        return
    values = np.empty(n, dtype=hist.dtype)  # the rows' pairs in order, as hist words
    cdef int8_t[::1] value_bytes = values.view(np.int8) if n else None
    cdef int8_t[::1] hist_bytes = hist.view(np.int8)
    cdef const void* packed_ptr
    if packed_bits == 16:
        q32 = packed
        packed_ptr = &q32[0] if view.n_rows else NULL
    else:
        q16 = packed
        packed_ptr = &q16[0] if view.n_rows else NULL
    cdef Py_ssize_t word = sum_bits // 4
    cdef row_t no_rows = 0
    if n == 0 and rows is not None:
        rows_ptr = &no_rows
    with nogil:
        if n:
            gather_packed(packed_ptr, packed_bits, rows_ptr, n, &value_bytes[0], sum_bits, n_threads)
        for j in range(cols.shape[0]):
            build_one_column_packed(&view.cols, cols[j], rows_ptr, 0, n,
                                    &value_bytes[0] if n else NULL,
                                    &hist_bytes[0] + view.offsets[cols[j]] * word, view.n_bins[cols[j]],
                                    distance, sum_bits)


def subtract_packed(const int64_t[::1] parent, const int64_t[::1] child, int64_t[::1] out):
    """out = parent - child for quantized histograms (exact); out may be parent."""
    cdef Py_ssize_t i
    if not parent.shape[0] == child.shape[0] == out.shape[0]:
        raise ValueError("parent, child and out must have the same length")
    with nogil:
        for i in range(parent.shape[0]):
            out[i] = parent[i] - child[i]
