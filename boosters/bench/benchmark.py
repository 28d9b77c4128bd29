"""Side-by-side runs of boosters, LightGBM, XGBoost and scikit-learn with matched settings.

Used by `python -m boosters demo` and `python -m boosters compare`. Each run times the
whole fit from NumPy arrays (dataset construction / binning included), measures the
peak resident memory of the fit above what the process held before it, and scores
the test set.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass

import numpy as np

LIBRARIES = ("boosters", "lightgbm", "xgboost", "sklearn")


@dataclass
class Settings:
    """The matched hyper-parameters (issue: 31 leaves leaf-wise, lr 0.1, 255 bins, ...)."""

    task: str = "binary"            # "regression" | "binary" | "multiclass"
    n_classes: int = 2
    n_trees: int = 100
    n_leaves: int = 31
    learning_rate: float = 0.1
    max_bins: int = 255             # value bins (LightGBM's max_bin); boosters adds the missing bin
    min_samples_leaf: int = 20
    l2: float = 0.0
    seed: int = 0
    histogram_mode: str = "auto"
    histogram_layout: str = "auto"
    prefetch: bool = True
    categorical: tuple = ()         # categorical feature indices (their columns hold codes 0, 1, ...)
    subsample: float = 1.0          # rows per tree (LightGBM bagging_fraction with bagging_freq=1)
    goss: bool = False              # GOSS at LightGBM's rates (top 0.2, other 0.1); XGBoost has none


@dataclass
class RunResult:
    library: str
    threads: int
    fit_seconds: float
    peak_mb: float
    metric_name: str
    metric: float


def available(library: str) -> bool:
    module = {"sklearn": "sklearn", "xgboost": "xgboost", "lightgbm": "lightgbm"}.get(library)
    return module is None or importlib.util.find_spec(module) is not None


# -- peak memory of a code region (Linux: reset and read the RSS high-water mark) --------

def _read_status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class PeakMemory:
    """`with PeakMemory() as pm: ...` then `pm.peak_mb`: peak RSS inside the block minus
    RSS at its start (nan where /proc is unavailable)."""

    def __enter__(self):
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current RSS
        except OSError:
            pass
        self._start = _read_status_kb("VmRSS")
        return self

    def __exit__(self, *exc):
        peak = _read_status_kb("VmHWM")
        self.peak_mb = float("nan") if peak is None or self._start is None else (peak - self._start) / 1024
        return False


# -- one fit per library ----------------------------------------------------------------------

def boosters_config(s: Settings, verbose: bool = False):
    """The GBDTConfig matching the settings."""
    import boosters as bst

    objective = {"regression": bst.Objective.squared(), "binary": bst.Objective.logistic(),
                 "multiclass": bst.Objective.softmax(s.n_classes)}[s.task]
    return bst.GBDTConfig(
        n_estimators=s.n_trees, learning_rate=s.learning_rate, objective=objective,
        growth_strategy=bst.GrowthStrategy.Leafwise, n_leaves=s.n_leaves, max_depth=None,
        min_samples_leaf=s.min_samples_leaf, l2=s.l2, min_child_weight=1e-3,
        max_bins=s.max_bins + 1, cache_size=s.n_leaves, seed=s.seed,
        histogram_mode=s.histogram_mode, histogram_layout=s.histogram_layout, prefetch=s.prefetch,
        verbosity=1 if verbose else 0, subsample=s.subsample,
        goss_top_rate=0.2 if s.goss else None, goss_other_rate=0.1 if s.goss else None,
        min_data_per_group=100, cat_smooth=10.0, cat_l2=10.0, max_cat_threshold=32, max_onehot_cats=4)


def _fit_boosters(s: Settings, X, y, threads, verbose):
    import boosters as bst

    dataset = bst.Dataset(X, y, categorical_features=list(s.categorical) or None)
    model = bst.GBDTModel.train(dataset, boosters_config(s, verbose), n_threads=threads)
    return lambda Xt: model.predict(Xt, n_threads=threads)


def lightgbm_params(s: Settings, threads: int) -> dict:
    """LightGBM's parameters matching the settings."""
    params = {"objective": s.task, "num_leaves": s.n_leaves, "learning_rate": s.learning_rate,
              "max_bin": s.max_bins, "min_data_in_leaf": s.min_samples_leaf, "lambda_l2": s.l2,
              "min_sum_hessian_in_leaf": 1e-3, "num_threads": threads, "seed": s.seed, "verbose": -1}
    if s.task == "multiclass":
        params["num_class"] = s.n_classes
    if s.subsample < 1.0:
        params.update(bagging_fraction=s.subsample, bagging_freq=1)
    if s.goss:
        params.update(data_sample_strategy="goss", top_rate=0.2, other_rate=0.1)
    if s.categorical:  # LightGBM's defaults, set explicitly (boosters_config uses the same)
        params.update(max_cat_to_onehot=4, cat_smooth=10.0, cat_l2=10.0, max_cat_threshold=32, min_data_per_group=100)
    return params


def _fit_lightgbm(s: Settings, X, y, threads, verbose):
    import lightgbm as lgb

    dataset = lgb.Dataset(X, y, categorical_feature=list(s.categorical) or "auto")
    booster = lgb.train(lightgbm_params(s, threads), dataset, num_boost_round=s.n_trees)
    return lambda Xt: booster.predict(Xt, num_threads=threads)


def _fit_xgboost(s: Settings, X, y, threads, verbose):
    import xgboost as xgb

    objective = {"regression": "reg:squarederror", "binary": "binary:logistic",
                 "multiclass": "multi:softprob"}[s.task]
    params = {"objective": objective, "tree_method": "hist", "grow_policy": "lossguide",
              "max_leaves": s.n_leaves, "max_depth": 0, "eta": s.learning_rate, "max_bin": s.max_bins,
              "min_child_weight": 1e-3, "lambda": s.l2, "nthread": threads, "seed": s.seed}
    if s.task == "multiclass":
        params["num_class"] = s.n_classes
    if s.goss:
        raise ValueError("XGBoost has no GOSS")
    if s.subsample < 1.0:
        params["subsample"] = s.subsample
    types = None
    if s.categorical:
        types = ["c" if j in s.categorical else "q" for j in range(X.shape[1])]
        params["max_cat_to_onehot"] = 4
    matrix = dict(feature_types=types, enable_categorical=bool(s.categorical), nthread=threads)
    booster = xgb.train(params, xgb.QuantileDMatrix(X, y, max_bin=s.max_bins, **matrix), num_boost_round=s.n_trees)
    return lambda Xt: booster.predict(xgb.DMatrix(Xt, **matrix))


def _fit_sklearn(s: Settings, X, y, threads, verbose):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from threadpoolctl import threadpool_limits

    cls = HistGradientBoostingRegressor if s.task == "regression" else HistGradientBoostingClassifier
    model = cls(max_iter=s.n_trees, learning_rate=s.learning_rate, max_leaf_nodes=s.n_leaves,
                max_bins=s.max_bins, min_samples_leaf=s.min_samples_leaf, l2_regularization=s.l2,
                early_stopping=False, random_state=s.seed)
    with threadpool_limits(threads, user_api="openmp"):
        model.fit(X, y)

    def predict(Xt):
        with threadpool_limits(threads, user_api="openmp"):
            if s.task == "regression":
                return model.predict(Xt)
            proba = model.predict_proba(Xt)
            return proba[:, 1] if s.task == "binary" else proba
    return predict


_FITTERS = {"boosters": _fit_boosters, "lightgbm": _fit_lightgbm, "xgboost": _fit_xgboost,
            "sklearn": _fit_sklearn}


def score(task: str, y_true: np.ndarray, prediction: np.ndarray) -> tuple[str, float]:
    """RMSE for regression, ROC AUC for binary, accuracy for multiclass."""
    if task == "regression":
        return "rmse", float(np.sqrt(np.mean((prediction - y_true) ** 2)))
    if task == "binary":
        from boosters.config import Metric
        from boosters.objectives import evaluate

        margin = np.log(np.clip(prediction, 1e-15, 1)) - np.log(np.clip(1 - prediction, 1e-15, 1))
        return "auc", evaluate(Metric.auc(), y_true, margin[:, None])
    return "accuracy", float(np.mean(np.argmax(prediction, axis=1) == y_true))


_MODULES = {"boosters": ["boosters"], "lightgbm": ["lightgbm"], "xgboost": ["xgboost"],
            "sklearn": ["sklearn.ensemble", "threadpoolctl"]}


def run(library: str, settings: Settings, X_train, y_train, X_test, y_test, threads: int,
        verbose: bool = False) -> RunResult:
    """Fit one library and measure it. Its modules are imported first: importing a
    library (over a second for LightGBM or XGBoost) is not part of its fit."""
    for module in _MODULES[library]:
        importlib.import_module(module)
    with PeakMemory() as memory:
        start = time.perf_counter()
        predict = _FITTERS[library](settings, X_train, y_train, threads, verbose)
        seconds = time.perf_counter() - start
    name, value = score(settings.task, y_test, predict(X_test))
    return RunResult(library, threads, seconds, memory.peak_mb, name, value)


def format_table(results: list[RunResult]) -> str:
    """A Markdown table; ratios are against the faster of LightGBM and XGBoost at the same
    thread count."""
    rows = ["| library | threads | fit time (s) | vs best of LightGBM/XGBoost | peak memory (MB) | test metric |",
            "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        rivals = [o.fit_seconds for o in results
                  if o.threads == r.threads and o.library in ("lightgbm", "xgboost")]
        ratio = f"{r.fit_seconds / min(rivals):.2f}x" if rivals else "-"
        rows.append(f"| {r.library} | {r.threads} | {r.fit_seconds:.3f} | {ratio} | {r.peak_mb:.1f} | "
                    f"{r.metric_name} {r.metric:.5f} |")
    return "\n".join(rows)
