# Raw access to a BinnedMatrix from nogil kernels: its stored columns, and the
# features they hold (a column is one feature or a bundle of exclusive features).
from libc.stdint cimport uint8_t, uint16_t, int8_t, int32_t, int64_t


cdef struct BinColumns:
    const uint8_t* u8       # (n_u8_columns, n_rows) column-major, C-contiguous
    const uint16_t* u16     # (n_u16_columns, n_rows) column-major, C-contiguous
    Py_ssize_t n_rows
    const int8_t* kind      # per column: 0 -> u8 storage, 1 -> u16 storage
    const int32_t* index    # per column: row of its storage matrix


cdef struct FeatureMap:
    const int32_t* column         # per feature: the column holding it
    const int64_t* decode_start   # per feature: start of its value -> bin table, -1 if alone
    const uint16_t* decode        # the tables, concatenated


cdef inline const uint8_t* column_u8(const BinColumns* c, Py_ssize_t column) noexcept nogil:
    return c.u8 + <Py_ssize_t> c.index[column] * c.n_rows


cdef inline const uint16_t* column_u16(const BinColumns* c, Py_ssize_t column) noexcept nogil:
    return c.u16 + <Py_ssize_t> c.index[column] * c.n_rows


cdef inline BinColumns make_bin_columns(
    const uint8_t[:, ::1] u8,       # IN
    const uint16_t[:, ::1] u16,     # IN
    const int8_t[::1] kind,         # IN
    const int32_t[::1] index,       # IN
    Py_ssize_t n_rows,
):
    """Pointers into the given views; the caller keeps the views alive."""
    cdef BinColumns c
    c.u8 = &u8[0, 0] if u8.shape[0] > 0 else NULL
    c.u16 = &u16[0, 0] if u16.shape[0] > 0 else NULL
    c.n_rows = n_rows
    c.kind = &kind[0]
    c.index = &index[0]
    return c


cdef inline FeatureMap make_feature_map(
    const int32_t[::1] column,          # IN
    const int64_t[::1] decode_start,    # IN
    const uint16_t[::1] decode,         # IN
):
    cdef FeatureMap m
    m.column = &column[0]
    m.decode_start = &decode_start[0]
    m.decode = &decode[0]
    return m
