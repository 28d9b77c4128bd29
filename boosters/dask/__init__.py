"""Distributed training on dask.distributed: `train` on Dask arrays, `predict` as a Dask
array. Needs the `dask` extra (dask and distributed), imported when these are called."""

from boosters.dask.training import predict, train

__all__ = ["predict", "train"]
