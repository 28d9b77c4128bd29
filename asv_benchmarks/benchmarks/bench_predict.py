"""Prediction: 100k x 28 float32 rows through a 100-tree, 31-leaf leaf-wise model, and the
per-call cost of a single row (see benchmarks/prediction.py for the comparison with XGBoost
and LightGBM)."""

import functools

import numpy as np

import boosters as bst

N_ROWS, N_FEATURES = 100_000, 28


@functools.lru_cache(maxsize=None)
def _model_and_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, N_FEATURES)).astype(np.float32)
    y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=N_ROWS)
    config = bst.GBDTConfig(n_estimators=100, growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=31,
                            max_depth=None)
    model = bst.GBDTModel.train(bst.Dataset(X[:20_000], y[:20_000]), config, n_threads=2)
    return model, X


class Predict:
    params = ([np.float32, np.float64], [1, 2])
    param_names = ["dtype", "n_threads"]
    timeout = 300

    def setup(self, dtype, n_threads):
        self.model, X = _model_and_rows()
        self.X = X.astype(dtype)
        self.model.predict(self.X[:100], n_threads=n_threads)  # the packed layout is built once, here

    def time_predict(self, dtype, n_threads):
        self.model.predict(self.X, n_threads=n_threads)

    def time_predict_leaf(self, dtype, n_threads):
        self.model.predict_leaf(self.X, n_threads=n_threads)

    def track_rows_per_second(self, dtype, n_threads):
        import time
        start = time.perf_counter()
        self.model.predict(self.X, n_threads=n_threads)
        return N_ROWS / (time.perf_counter() - start)

    track_rows_per_second.unit = "rows/s"


class PredictOneRow:
    def setup(self):
        self.model, X = _model_and_rows()
        self.row = np.ascontiguousarray(X[:1])
        self.model.predict(self.row, n_threads=1)

    def time_predict_one_row(self):
        self.model.predict(self.row, n_threads=1)
