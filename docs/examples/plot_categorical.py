"""
Categorical features
====================

A pandas ``category`` column is a categorical feature: its splits send a set of
categories left, so the trees do not need the categories in a meaningful order. Given
as arbitrary numeric codes, the same column fits worse with the same number of trees of
the same depth: a threshold on the codes cannot group cities that lie far apart.
"""

# %%
# Data: 30 cities whose effect on the label has no relation to their code.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import boosters as bst

rng = np.random.default_rng(0)
n, n_cities = 6000, 30
effect = rng.normal(size=n_cities)
city = rng.integers(0, n_cities, size=n)
size = rng.uniform(20, 200, size=n)
y = effect[city] + size / 100 + rng.normal(scale=0.3, size=n)
frame = pd.DataFrame({
    "city": pd.Categorical([f"city_{c:02d}" for c in city]),
    "size": size,
})
print(frame.dtypes)

# %%
# Train twice on the first 4000 rows: with ``city`` as a categorical feature (the
# default for a ``category`` column), and with its codes as plain numbers.
config = bst.GBDTConfig(n_estimators=40, learning_rate=0.1, max_depth=3)
train, test = slice(0, 4000), slice(4000, n)
native = bst.GBDTModel.train(bst.Dataset(frame[train], y[train]), config)
as_numbers = bst.GBDTModel.train(
    bst.Dataset(frame[train].assign(city=frame["city"].cat.codes[train]), y[train],
                categorical_features=[]), config)
print("categorical features:", native.categorical_features, "categories:", len(native.categories[0]))


def rmse(model, X):
    return float(np.sqrt(np.mean((model.predict(X) - y[test]) ** 2)))


results = pd.DataFrame({
    "test RMSE": [rmse(native, frame[test]),
                  rmse(as_numbers, frame[test].assign(city=frame["city"].cat.codes[test]))],
}, index=["category column", "codes as numbers"])
print(results.round(4))

# %%
# At prediction, a frame is coded with the model's categories by value: a frame with
# the categories in another order (or as plain strings) predicts the same.
shuffled = frame[test].assign(city=frame["city"][test].astype(str))
print("same predictions from strings:", np.array_equal(native.predict(shuffled), native.predict(frame[test])))

# %%
# Each city's learned effect (the prediction at a fixed size) against the true one.
grid = pd.DataFrame({"city": pd.Categorical(native.categories[0]), "size": 100.0})
fig, ax = plt.subplots(figsize=(4.5, 4))
ax.scatter(effect + 1.0, native.predict(grid), label="category column")
ax.scatter(effect + 1.0, as_numbers.predict(grid.assign(city=np.arange(n_cities))), marker="x",
           label="codes as numbers")
ax.plot([-1.5, 3.5], [-1.5, 3.5], color="grey")
ax.set_xlabel("true effect at size 100")
ax.set_ylabel("predicted")
ax.legend()
fig.tight_layout()
