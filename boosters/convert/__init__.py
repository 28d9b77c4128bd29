"""Models of other libraries as boosters models, and boosters models for other libraries'
serving stacks: XGBoost JSON/UBJSON and LightGBM text models in (predictions equal the
source library's within float32 rounding), XGBoost JSON out.

The source libraries are imported only when one of their objects is passed; a model file
or its bytes needs neither installed.
"""

from boosters.convert.lightgbm import from_lightgbm
from boosters.convert.xgboost import from_xgboost
from boosters.convert.xgboost_export import to_xgboost_json

__all__: list[str] = ["from_lightgbm", "from_xgboost", "to_xgboost_json"]
