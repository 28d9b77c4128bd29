"""
Quickstart: train, validate, predict
====================================

Train a regression model with a validation set and early stopping, look at the
validation curve, and compare predictions with the truth.
"""

# %%
# Data: a smooth signal of two features, three features of noise.
import matplotlib.pyplot as plt
import numpy as np

import boosters as bst

rng = np.random.default_rng(0)
X = rng.normal(size=(4000, 5))
y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.2, size=len(X))
train = bst.Dataset(X[:3000], y[:3000], feature_names=[f"x{i}" for i in range(5)])
valid = bst.Dataset(X[3000:], y[3000:], feature_names=train.feature_names)

# %%
# Train: the validation RMSE is computed every round; training stops 20 rounds after
# the best one and keeps the trees up to it.
config = bst.GBDTConfig(n_estimators=500, learning_rate=0.1, early_stopping_rounds=20)
model = bst.GBDTModel.train(train, config=config, val_set=valid)
print(model)
print(f"best round {model.best_iteration}, validation RMSE {model.best_score:.4f}")

# %%
# The validation curve (``model.eval_history``: one score per round trained).
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(model.eval_history)
ax.axvline(model.best_iteration, color="grey", linestyle="--", label="best round")
ax.set_xlabel("round")
ax.set_ylabel("validation RMSE")
ax.legend()
fig.tight_layout()

# %%
# Predictions against the truth, and which features the trees split on.
pred = model.predict(X[3000:])
gain = model.feature_importance("gain")
print("split gain per feature:", {name: round(float(g), 1) for name, g in zip(train.feature_names, gain)})
fig, ax = plt.subplots(figsize=(4, 4))
ax.scatter(y[3000:], pred, s=4, alpha=0.5)
ax.plot([y.min(), y.max()], [y.min(), y.max()], color="grey")
ax.set_xlabel("true value")
ax.set_ylabel("prediction")
fig.tight_layout()
