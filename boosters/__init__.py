"""boosters: histogram-based gradient boosted decision trees."""

from boosters._lib._build_info import VERSION as __version__
from boosters._lib.show_config import show_config

__all__ = ["__version__", "show_config"]
