"""Data frames read column by column: pandas DataFrames, pyarrow Tables and polars
DataFrames, recognised by their type's module (none of those libraries is imported here),
and any other table that exports the Arrow C stream interface (`__arrow_c_stream__`: DuckDB
relations, ...), read through pyarrow.

Why three small adapters rather than one (narwhals): a categorical column must give its
dictionary codes and say whether its category order is declared (pandas `category`,
polars `Enum`) or not (polars `Categorical`, Arrow dictionaries); narwhals maps pandas
`category` and polars `Categorical` to the same dtype and gives neither the codes nor the
declared order, so the per-library code would stay. The Arrow C stream interface is the
common adapter for everything else.

Each adapter gives a column's name, whether it is numeric (numbers and bools, read as
floats with NaN for missing) and whether its dtype is categorical (pandas `category`, an
Arrow dictionary column, polars `Categorical`/`Enum`: what `categorical_features="auto"`
picks up), and a dictionary encoding of a non-numeric column: per row the index of its
value in an array of values (-1 = missing), and whether that array's order is the frame's
own declared one (pandas `category`, polars `Enum`) rather than arbitrary.
"""

from __future__ import annotations

import numpy as np

_ARROW_NUMERIC = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "halffloat", "float", "double"}
_FLOAT32_NAMES = {"float32", "Float32", "float16", "halffloat", "float", "Float16"}


def frame_library(X, name: str = "X") -> str | None:
    """"pandas", "pyarrow" or "polars" when X is a DataFrame / Table of that library,
    "arrow-stream" for another table exporting the Arrow C stream interface (and a pyarrow
    RecordBatch: a table of one batch). TypeError naming `name` for a polars LazyFrame."""
    library = type(X).__module__.partition(".")[0]
    if library == "pandas" and hasattr(X, "columns") and hasattr(X, "iloc"):
        return library
    if library == "pyarrow" and hasattr(X, "column_names") and hasattr(X, "num_rows"):
        return "arrow-stream" if type(X).__name__ == "RecordBatch" else library  # read as a Table
    if library == "polars" and type(X).__name__ == "LazyFrame":
        raise TypeError(f"{name} is a polars LazyFrame, a query not yet run: collect it first ({name}.collect())")
    if library == "polars" and hasattr(X, "columns") and hasattr(X, "to_series"):
        return library
    if hasattr(type(X), "__arrow_c_stream__") and library not in ("pandas", "pyarrow", "polars"):
        return "arrow-stream"
    return None


def _arrow_table(X):
    """A table exporting the Arrow C stream interface, as a pyarrow Table (its columns
    are referenced, not copied)."""
    try:
        import pyarrow
    except ImportError:
        raise ImportError(f"reading a {type(X).__name__} (an Arrow C stream) needs pyarrow: "
                          f"pip install 'boosters[arrow]'") from None
    return pyarrow.table(X)


class Column:
    """One column of a frame, as boosters reads it (see the module notes)."""

    name: str
    dtype: object  # the library's dtype, for messages
    numeric: bool
    categorical: bool
    float32: bool  # numeric and no wider than float32

    def floats(self, dtype) -> np.ndarray:
        raise NotImplementedError

    def encoded(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """(indices: int64 per row, -1 = missing; values; True when their order is declared)."""
        raise NotImplementedError


class _PandasColumn(Column):
    def __init__(self, series, name):
        self.series, self.name = series, name
        self.dtype = dtype = series.dtype
        self.categorical = str(dtype) == "category"
        self.numeric = getattr(dtype, "kind", "O") in "biuf" and not self.categorical
        self.float32 = str(dtype) in _FLOAT32_NAMES

    def floats(self, dtype):
        return self.series.to_numpy(dtype=dtype, na_value=np.nan)

    def encoded(self):
        if self.categorical:
            return (self.series.cat.codes.to_numpy(dtype=np.int64),
                    np.asarray(self.series.dtype.categories.to_numpy()), True)
        indices, values = self.series.factorize()  # missing (None, NaN, pd.NA) -> -1
        return indices.astype(np.int64, copy=False), np.asarray(values), False


class _ArrowColumn(Column):
    def __init__(self, chunked, name):
        self.chunked, self.name, self.dtype = chunked, name, chunked.type
        type_name = str(chunked.type)
        self.categorical = hasattr(chunked.type, "index_type")  # a DictionaryType
        self.numeric = type_name in _ARROW_NUMERIC
        self.float32 = type_name in _FLOAT32_NAMES

    def floats(self, dtype):
        try:
            return self.chunked.cast("float32" if dtype == np.float32 else "float64").to_numpy()
        except ValueError:  # pyarrow.ArrowInvalid: an integer beyond 2**53, which float64 cannot hold exactly
            raise ValueError(f"column {self.name!r} ({self.dtype}) holds integers beyond 2**53, which float64 "
                             f"cannot hold exactly; cast it to float64 yourself if rounding them is fine") from None

    def encoded(self):
        chunked = self.chunked if self.categorical else self.chunked.dictionary_encode()
        chunks = chunked.unify_dictionaries().chunks  # one dictionary for all chunks
        if not chunks:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=object), False
        indices = np.concatenate([c.indices.fill_null(-1).to_numpy(zero_copy_only=False) for c in chunks])
        indices = indices.astype(np.int64, copy=False)
        values = chunks[0].dictionary.to_numpy(zero_copy_only=False)
        null = np.asarray(chunks[0].dictionary.is_null())
        if null.any():  # a null value in the dictionary is missing, as a null index is
            kept = np.where(null, -1, np.cumsum(~null) - 1)  # its index among the values kept
            indices, values = np.where(indices >= 0, kept[indices], -1), values[~null]
        return indices, values, False


class _PolarsColumn(Column):
    def __init__(self, series, name):
        self.series, self.name, self.dtype = series, name, series.dtype
        kind = type(series.dtype).__name__
        self.is_enum = kind == "Enum"
        self.categorical = kind in ("Categorical", "Enum")
        self.numeric = series.dtype.is_numeric() or kind == "Boolean"
        self.float32 = kind in ("Float32", "Float16")

    def floats(self, dtype):
        # a float32 column is read as it is; anything else through Float64 (null -> NaN)
        series = self.series if self.float32 and dtype == np.float32 else self.series.cast(float)
        return series.to_numpy().astype(dtype, copy=False)

    def encoded(self):
        series = self.series
        if self.is_enum:  # physical codes index the declared categories
            indices = series.to_physical().cast(int).fill_null(-1).to_numpy()
            return indices.astype(np.int64, copy=False), series.dtype.categories.to_numpy(), True
        if self.categorical:
            series = series.cast(str)
        values = series.drop_nulls().unique()
        indices = series.replace_strict(values, list(range(len(values))), default=-1).to_numpy()
        return indices.astype(np.int64, copy=False), values.to_numpy(), False


class Frame:
    """A frame's columns, read one at a time."""

    def __init__(self, X, library: str):
        self.X, self.library = X, library
        if library == "pyarrow":
            self.names = [str(c) for c in X.column_names]
            self.shape = (X.num_rows, X.num_columns)
        else:
            self.names = [str(c) for c in X.columns]
            self.shape = (X.shape[0], X.shape[1])

    def column(self, j: int) -> Column:
        if self.library == "pandas":
            return _PandasColumn(self.X.iloc[:, j], self.names[j])
        if self.library == "pyarrow":
            return _ArrowColumn(self.X.column(j), self.names[j])
        return _PolarsColumn(self.X.to_series(j), self.names[j])

    def categorical_columns(self) -> list[int]:
        """The columns whose dtype is categorical (what `categorical_features="auto"` picks)."""
        return [j for j in range(self.shape[1]) if self.column(j).categorical]


def as_frame(X, name: str = "X") -> Frame | None:
    """X's columns when X is a pandas/polars DataFrame or a pyarrow Table; None otherwise."""
    library = frame_library(X, name)
    if library == "arrow-stream":
        return Frame(_arrow_table(X), "pyarrow")
    return None if library is None else Frame(X, library)


def frame_matrix(frame: Frame, name: str, encoders: dict | None = None, order=None) -> np.ndarray:
    """The frame as a (n_rows, n_features) float matrix, Fortran order: feature j is column
    `order[j]` (column j without `order`); numeric columns as floats (missing = NaN),
    and the features in `encoders` through `encoders[j](column) -> float codes`. float32
    when every numeric column read is float32, float64 otherwise."""
    encoders = encoders or {}
    n_rows = frame.shape[0]
    sources = range(frame.shape[1]) if order is None else [int(c) for c in order]
    if n_rows == 0 or len(sources) == 0:
        raise ValueError(f"{name} is empty: shape {frame.shape}; need at least one row and one feature")
    if frame.library == "pandas" and not encoders:
        df = frame.X if order is None else frame.X.iloc[:, sources]
        dtypes = list(df.dtypes)
        if all(d == dtypes[0] for d in dtypes) and dtypes[0] in (np.float32, np.float64):
            return np.asarray(df)  # one float block: no copy
    columns = [frame.column(c) for c in sources]
    for j, column in enumerate(columns):
        if j not in encoders and not column.numeric:
            hint = ("; declare it in categorical_features to use it as a categorical feature"
                    if not column.categorical else "")
            raise ValueError(f"{name}: column {column.name!r} has dtype {column.dtype}; features must be numeric "
                             f"(bool, int, float, or pandas' nullable Int/Float/boolean){hint}")
    numeric = [c for j, c in enumerate(columns) if j not in encoders]
    dtype = np.float32 if numeric and all(c.float32 for c in numeric) else np.float64
    out = np.empty((n_rows, len(columns)), dtype=dtype, order="F")
    for j, column in enumerate(columns):
        if j in encoders:
            out[:, j] = encoders[j](column)
            continue
        try:
            out[:, j] = column.floats(dtype)
        except ValueError as exc:  # a column float64 cannot hold (it names the column)
            raise ValueError(f"{name}: {exc}") from None
    return out
