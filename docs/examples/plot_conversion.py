"""
Converting LightGBM and XGBoost models
======================================

``boosters.convert.from_lightgbm`` and ``from_xgboost`` turn a trained LightGBM or
XGBoost model into a ``GBDTModel`` predicting what the original predicts;
``to_xgboost_json`` writes a boosters model as an XGBoost JSON model that XGBoost loads.
"""

# %%
# The same data for the three libraries, float32 (XGBoost's own precision), with 10% of
# one feature missing.
import lightgbm as lgb
import matplotlib.pyplot as plt
import numpy as np
import xgboost as xgb

import boosters as bst
from boosters.convert import from_lightgbm, from_xgboost, to_xgboost_json

rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 5)).astype(np.float32)
X[rng.random(2000) < 0.1, 0] = np.nan
y = (np.nan_to_num(X[:, 0]) + X[:, 1] ** 2 - X[:, 2] + 0.5 * rng.normal(size=2000) > 0.5).astype(float)
X_train, y_train, X_test = X[:1500], y[:1500], X[1500:]

# %%
# LightGBM: both libraries add the same float64 leaf values, so the margins agree and
# the probabilities differ at most in the last bits of the sigmoid.
booster = lgb.train({"objective": "binary", "num_leaves": 15, "verbose": -1, "num_threads": 1},
                    lgb.Dataset(X_train, y_train), num_boost_round=50)
from_lgb = from_lightgbm(booster)
print(from_lgb)
diff_lgb = np.abs(from_lgb.predict(X_test) - booster.predict(X_test)).max()
print(f"LightGBM: max |difference| of P(y=1): {diff_lgb:.2e}")

# %%
# XGBoost: it sums float32 leaf values in float32, boosters in float64, so the two agree
# within float32 rounding.
clf = xgb.XGBClassifier(n_estimators=50, max_depth=4, learning_rate=0.2, n_jobs=1).fit(X_train, y_train)
from_xgb = from_xgboost(clf)
diff_xgb = np.abs(from_xgb.predict(X_test) - clf.predict_proba(X_test)[:, 1]).max()
print(f"XGBoost: max |difference| of P(y=1): {diff_xgb:.2e}")

# %%
# The other way: a boosters model, trained as ``lightgbm.train`` is called (LightGBM's
# parameter names: leaf-wise trees), exported as XGBoost JSON and loaded by XGBoost.
model = bst.train({"objective": "binary", "num_leaves": 15, "num_threads": 1},
                  bst.Dataset(X_train, y_train), num_boost_round=50)
loaded = xgb.Booster(model_file=bytearray(to_xgboost_json(model)))
p_xgb = loaded.predict(xgb.DMatrix(X_test))
diff_out = np.abs(model.predict(X_test) - p_xgb).max()
print(f"boosters -> XGBoost: max |difference| of P(y=1): {diff_out:.2e}")

# %%
# Each converted model's probabilities against the original's.
fig, axes = plt.subplots(1, 3, figsize=(9, 3), sharey=True)
pairs = [("LightGBM", booster.predict(X_test), from_lgb.predict(X_test)),
         ("XGBoost", clf.predict_proba(X_test)[:, 1], from_xgb.predict(X_test)),
         ("XGBoost (loaded)", p_xgb, model.predict(X_test))]
for ax, (name, theirs, ours) in zip(axes, pairs):
    ax.scatter(theirs, ours, s=4)
    ax.set_xlabel(f"{name} P(y=1)")
axes[0].set_ylabel("boosters P(y=1)")
fig.tight_layout()
