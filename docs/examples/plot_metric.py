"""
Training curves
===============

`boosters.plotting.plot_metric` draws the validation score per boosting round: from a
model trained with a ``val_set`` (the dashed line marks its best round), or from an
``evals_result_`` dictionary such as a scikit-learn estimator fitted with an
``eval_set`` records.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import boosters as bst
from boosters.plotting import plot_metric
from boosters.sklearn import GBDTClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(4000, 8))
logit = X[:, 0] - 2 * X[:, 1] * X[:, 2] + np.sin(3 * X[:, 3])
y = (logit + rng.logistic(size=4000) > 0).astype(float)
train, valid = slice(0, 3000), slice(3000, None)

# %%
# A model with a validation set and early stopping: the curve of its log loss.
config = bst.GBDTConfig(n_estimators=300, learning_rate=0.3, max_depth=5, objective=bst.Objective.logistic(),
                        early_stopping_rounds=20)
model = bst.GBDTModel.train(bst.Dataset(X[train], y[train]), config, val_set=bst.Dataset(X[valid], y[valid]))
print(f"best round {model.best_iteration}, validation {config.resolved_metric.name} {model.best_score:.4f}")

# %%
# The estimator records the same history as ``evals_result_``; two learning rates compared
# on one axes.
fig, ax = plt.subplots(figsize=(6, 3.5))
for rate in (0.3, 0.05):
    est = GBDTClassifier(n_estimators=200, learning_rate=rate, max_depth=5)
    est.fit(X[train], y[train], eval_set=[(X[valid], y[valid])])
    (scores,) = est.evals_result_["valid"].values()
    plot_metric({f"learning_rate={rate}": {"logloss": scores}}, ax=ax)
plot_metric(model)
plt.show()
