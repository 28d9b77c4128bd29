"""
SHAP values and interactions
============================

Explain a model's predictions feature by feature with exact TreeSHAP, then find the
interaction the model learned: here, tenure matters only for customers over 50.
"""

# %%
# Data: four features, one categorical, one with missing values; the label has one
# interaction (tenure x age above 50).
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import boosters as bst

rng = np.random.default_rng(0)
n = 2000
frame = pd.DataFrame({
    "age": rng.integers(18, 80, n).astype(float),
    "income": rng.lognormal(10, 0.5, n),
    "city": pd.Categorical(rng.choice(["Lyon", "Oslo", "Porto", "Turin"], n)),
    "tenure": rng.exponential(5, n),
})
frame.loc[rng.random(n) < 0.1, "tenure"] = np.nan
city_effect = frame["city"].map({"Lyon": 0.0, "Oslo": 1.0, "Porto": -0.5, "Turin": 0.5}).astype(float)
y = (0.03 * frame["age"] + np.log(frame["income"]) / 4 + city_effect
     + 0.1 * frame["tenure"].fillna(10) * (frame["age"] > 50) + rng.normal(0, 0.2, n))
model = bst.GBDTModel.train(bst.Dataset(frame, y),
                            bst.GBDTConfig(n_estimators=100, max_depth=4, learning_rate=0.1))

# %%
# One contribution per feature and the bias (last column); each row sums to its margin.
phi = model.shap_values(frame)
print(phi.shape)
print(np.abs(phi.sum(axis=1) - model.predict_raw(frame)).max())

# %%
# How much each feature moves the predictions (mean absolute SHAP value), and the
# per-row values behind it.
names = model.feature_names
order = np.argsort(np.abs(phi[:, :-1]).mean(axis=0))
fig, ax = plt.subplots(figsize=(6, 3))
for position, f in enumerate(order):
    jitter = rng.uniform(-0.25, 0.25, n)
    ax.scatter(phi[:, f], position + jitter, s=3, alpha=0.4)
ax.set_yticks(range(len(order)), [names[f] for f in order])
ax.axvline(0, color="grey", lw=0.8)
ax.set_xlabel("SHAP value (contribution to the margin)")
fig.tight_layout()

# %%
# Interactions: tenure's effect depends on age. Its SHAP value against its own value
# splits into two bands, and the tenure x age interaction value (doubled: the matrix
# holds half of it in each of [i, j] and [j, i]) is what separates them.
inter = model.shap_interaction_values(frame.iloc[:800])
tenure, age = names.index("tenure"), names.index("age")
fig, axes = plt.subplots(1, 2, figsize=(8, 3), sharex=True)
colour = frame["age"].iloc[:800] > 50
for ax, values, title in ((axes[0], phi[:800, tenure], "SHAP value of tenure"),
                          (axes[1], 2 * inter[:, tenure, age], "tenure x age interaction")):
    ax.scatter(frame["tenure"].iloc[:800], values, c=colour, cmap="coolwarm", s=5)
    ax.set_xlabel("tenure (red: age > 50)")
    ax.set_title(title)
fig.tight_layout()
plt.show()
