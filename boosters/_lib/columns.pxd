# Raw access to a BinnedMatrix's feature columns from nogil kernels.
from libc.stdint cimport uint8_t, uint16_t, int8_t, int32_t


cdef struct BinColumns:
    const uint8_t* u8       # (n_u8_features, n_rows) feature-major, C-contiguous
    const uint16_t* u16     # (n_u16_features, n_rows) feature-major, C-contiguous
    Py_ssize_t n_rows
    const int8_t* kind      # per feature: 0 -> u8 storage, 1 -> u16 storage
    const int32_t* column   # per feature: row of its storage matrix


cdef inline const uint8_t* column_u8(const BinColumns* c, Py_ssize_t feature) noexcept nogil:
    return c.u8 + <Py_ssize_t> c.column[feature] * c.n_rows


cdef inline const uint16_t* column_u16(const BinColumns* c, Py_ssize_t feature) noexcept nogil:
    return c.u16 + <Py_ssize_t> c.column[feature] * c.n_rows


cdef inline Py_ssize_t bin_at(const BinColumns* c, Py_ssize_t feature, Py_ssize_t row) noexcept nogil:
    if c.kind[feature] == 0:
        return column_u8(c, feature)[row]
    return column_u16(c, feature)[row]


cdef inline BinColumns make_bin_columns(
    const uint8_t[:, ::1] u8,
    const uint16_t[:, ::1] u16,
    const int8_t[::1] kind,
    const int32_t[::1] column,
    Py_ssize_t n_rows,
):
    """Pointers into the given views; the caller keeps the views alive."""
    cdef BinColumns c
    c.u8 = &u8[0, 0] if u8.shape[0] > 0 else NULL
    c.u16 = &u16[0, 0] if u16.shape[0] > 0 else NULL
    c.n_rows = n_rows
    c.kind = &kind[0]
    c.column = &column[0]
    return c
