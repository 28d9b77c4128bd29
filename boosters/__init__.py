"""boosters: histogram-based gradient boosted decision trees.

    import boosters as bst
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(...))
    model.predict(X)
"""

try:
    from boosters._lib._build_info import VERSION as __version__
except ModuleNotFoundError as exc:  # the source tree itself, without its compiled kernels
    raise ImportError(
        "boosters is being imported from its source directory, which has no compiled kernels. "
        "Install it (pip install .) and run from another directory, or install it in editable "
        "mode (pip install -e .), which works from here too."
    ) from exc
from boosters import callbacks, convert
from boosters._lib.show_config import show_config
from boosters.callbacks import early_stopping, log_evaluation, record_evaluation
from boosters.config import GBDTConfig, GrowthStrategy, Metric, Objective
from boosters.data.dataset import Dataset
from boosters.explain.importance import ImportanceType
from boosters.gbdt_model import GBDTModel
from boosters.functional import cv, train

__all__ = [
    "__version__",
    "callbacks",
    "convert",
    "cv",
    "early_stopping",
    "Dataset",
    "GBDTConfig",
    "GBDTModel",
    "GrowthStrategy",
    "ImportanceType",
    "log_evaluation",
    "Metric",
    "Objective",
    "record_evaluation",
    "show_config",
    "train",
]
