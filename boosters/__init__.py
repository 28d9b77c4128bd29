"""boosters: histogram-based gradient boosted decision trees.

    import boosters as bst
    model = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(...))
    model.predict(X)
"""

from boosters._lib._build_info import VERSION as __version__
from boosters._lib.show_config import show_config
from boosters.config import GBDTConfig, GrowthStrategy, Metric, Objective
from boosters.data.dataset import Dataset
from boosters.model.gbdt_model import GBDTModel

__all__ = [
    "__version__",
    "Dataset",
    "GBDTConfig",
    "GBDTModel",
    "GrowthStrategy",
    "Metric",
    "Objective",
    "show_config",
]
