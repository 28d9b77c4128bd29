"""
Looking inside the trees
========================

`boosters.plotting.plot_tree` draws one tree with its split conditions (a categorical
split lists the categories it sends left), where missing values go, and the leaf
values. `GBDTModel.trees_to_dataframe` gives every node as a table, and
`GBDTModel.predict_leaf` the leaf each row reaches, whose values add up to the
prediction.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import boosters as bst
from boosters.plotting import plot_tree

rng = np.random.default_rng(0)
n = 2000
houses = pd.DataFrame({
    "size": rng.uniform(30, 200, n),
    "district": pd.Categorical(rng.choice(["north", "south", "east", "west", "centre"], n)),
    "age": np.where(rng.random(n) < 0.15, np.nan, rng.uniform(0, 80, n)),
})
premium = houses["district"].isin(["centre", "east"]).to_numpy()
price = houses["size"] / 50 + premium - houses["age"].fillna(40) / 100 + rng.normal(0, 0.2, n)
model = bst.GBDTModel.train(bst.Dataset(houses, price),
                            bst.GBDTConfig(n_estimators=20, max_depth=3, learning_rate=0.3))

# %%
# The first tree: each box a node, "yes" where its condition holds, "missing" where a
# missing value goes.
plot_tree(model, tree_index=0, show_info=("count", "gain"))
plt.show()

# %%
# The same tree as a table (one row per node).
nodes = model.trees_to_dataframe()
pd.set_option("display.width", 150)
pd.set_option("display.max_columns", 12)
print(nodes[nodes.tree_index == 0][["node_index", "node_depth", "split_feature", "decision_type", "threshold",
                                    "categories", "missing_direction", "value", "count"]].round(3))

# %%
# The leaf each row reaches in each tree (node indices, as in the table): the leaves'
# values plus the base score are the prediction.
leaves = model.predict_leaf(houses.iloc[:3])
print(leaves[:, :6])
values = nodes.set_index(["tree_index", "node_index"])["value"]
margin = model.forest.base_scores[0] + np.array(
    [sum(values[(t, leaf)] for t, leaf in enumerate(row)) for row in leaves])
print(np.round(margin, 6), np.round(model.predict(houses.iloc[:3]), 6))
