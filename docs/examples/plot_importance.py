"""
Feature importance
==================

Five ways to count how much a model uses each feature (`boosters.ImportanceType`), and
`boosters.plotting.plot_importance` to draw them. A split count says how often the
trees cut on a feature, gain how much those cuts improved the loss: a feature with a
weak, smooth effect gets many small cuts.
"""

# %%
# Data: house prices from a size, a categorical district, an age with missing values,
# and a noise column with many distinct values that carries no signal.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import boosters as bst
from boosters.plotting import plot_importance

rng = np.random.default_rng(0)
n = 3000
houses = pd.DataFrame({
    "size": rng.uniform(30, 200, n),
    "district": pd.Categorical(rng.choice(["north", "south", "east", "west", "centre"], n)),
    "age": np.where(rng.random(n) < 0.15, np.nan, rng.uniform(0, 80, n)),
    "noise": rng.normal(size=n),
})
district = houses["district"].map({"north": 0.0, "south": -0.3, "east": 0.2, "west": -0.1,
                                   "centre": 0.8}).astype(float)
price = houses["size"] / 50 + district - houses["age"].fillna(40) / 100 + rng.normal(0, 0.2, n)
model = bst.GBDTModel.train(bst.Dataset(houses, price.to_numpy()),
                            bst.GBDTConfig(n_estimators=60, max_depth=4, learning_rate=0.1))

# %%
# Every kind, each normalised to sum 1 (``normalize=True``; scikit-learn's
# ``feature_importances_`` is the normalised gain).
table = pd.DataFrame({kind.value: model.feature_importance(kind, normalize=True)
                      for kind in bst.ImportanceType}, index=model.feature_names)
print(table.round(3))

# %%
# Gain and split count side by side: ``age`` is split on about as often as ``size``
# but brings a small share of the gain.
fig, axes = plt.subplots(1, 2, figsize=(10, 3))
plot_importance(model, "gain", ax=axes[0])
plot_importance(model, bst.ImportanceType.Split, ax=axes[1])
fig.tight_layout()
plt.show()
