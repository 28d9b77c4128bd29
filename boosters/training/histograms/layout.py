"""Column-wise or row-wise histogram building ("histogram_layout").

LightGBM times both once per training; boosters uses a cost model so that the choice,
and with float64 histograms the model itself, never depends on timing noise. Measured
on a 2-core AMD EPYC VM (docs/benchmarks/end_to_end.md has the figures):

- narrow dense data (10, 12 and 28 uint8 columns, 50k to 1M rows): row-wise is faster
  end to end in float64 and quantized modes alike (Higgs-shaped 1M x 28, i16: histogram
  time 9.3 s -> 5.7 s), because a gathered node's rows are scattered cache lines and
  the row-wise kernel fetches each once for all columns;
- wide data (128 to 512 columns, 200k rows): column-wise is as fast or faster, and
  float64 row-wise is up to 1.6x slower (the histograms of a row's columns no longer
  fit in L1/L2).

Whatever the layout, a float64 root (rows in order, nothing to gather) is built
column-wise: 20-35% faster there than row-wise (HistogramBuilder.build).
"""

from __future__ import annotations

import numpy as np

MAX_ROWWISE_COLUMNS = 64


def choose_layout(binned, columns: np.ndarray, requested: str) -> str:
    """"row" or "column" for the columns that will be histogrammed."""
    if requested != "auto":
        return requested
    n_u8 = int(np.sum(binned.column_kind[columns] == 0))
    return "row" if 0 < n_u8 <= MAX_ROWWISE_COLUMNS else "column"
