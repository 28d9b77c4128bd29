"""Distributed training on dask.distributed: `train` on Dask arrays, `predict` as a Dask
array, and the scikit-learn estimators `DaskGBDTRegressor` / `DaskGBDTClassifier` /
`DaskGBDTRanker`. Needs
the `dask` extra (dask and distributed), imported when these are called; the estimators
also need scikit-learn (the `sklearn` extra), imported when they are first named."""

from boosters.dask.training import predict, train

__all__ = ["DaskGBDTClassifier", "DaskGBDTRanker", "DaskGBDTRegressor", "predict", "train"]


def __getattr__(name: str):
    # the scikit-learn estimators, imported when first named: train works without scikit-learn
    if name in ("DaskGBDTClassifier", "DaskGBDTRanker", "DaskGBDTRegressor"):
        from boosters.dask import estimators
        globals()[name] = getattr(estimators, name)
        return globals()[name]
    raise AttributeError(f"module 'boosters.dask' has no attribute {name!r}")
