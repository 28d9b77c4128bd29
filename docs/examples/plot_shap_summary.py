"""
SHAP summary plot
=================

`boosters.plotting.plot_shap_summary` shows every row's SHAP value for every feature:
features sorted by their mean absolute SHAP value, each point coloured by the feature's
value (grey: missing). It takes the arrays, so it draws SHAP values from any source.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import boosters as bst
from boosters.plotting import plot_shap_summary

rng = np.random.default_rng(0)
n = 2000
houses = pd.DataFrame({
    "size": rng.uniform(30, 200, n),
    "district": pd.Categorical(rng.choice(["north", "south", "east", "west", "centre"], n)),
    "age": np.where(rng.random(n) < 0.15, np.nan, rng.uniform(0, 80, n)),
    "noise": rng.normal(size=n),
})
premium = houses["district"].isin(["centre", "east"]).to_numpy()
price = houses["size"] / 50 + premium - houses["age"].fillna(40) / 100 + rng.normal(0, 0.2, n)
model = bst.GBDTModel.train(bst.Dataset(houses, price),
                            bst.GBDTConfig(n_estimators=100, max_depth=4, learning_rate=0.1))

# %%
# Exact TreeSHAP values (the last column is the bias, which the plot leaves out).
shap_values = model.shap_values(houses)
plot_shap_summary(shap_values, houses)
plt.tight_layout()
plt.show()
