"""
Training on a Dask cluster
==========================

``boosters.dask.train`` trains on the row partitions of Dask arrays where they are, on a
dask.distributed cluster, and returns an ordinary ``GBDTModel``; ``boosters.dask.predict``
maps a model over the partitions of a Dask array. Here the cluster is a small local one
(two workers, one thread each, in this process).
"""

# %%
# Data: 4,000 rows in four partitions of 1,000.
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster

import boosters as bst
from boosters.dask import predict, train

rng = np.random.default_rng(0)
X = rng.normal(size=(4000, 6))
y = (X[:, 0] - X[:, 1] + 0.5 * rng.logistic(size=4000) > 0).astype(np.float64)
X_dask, y_dask = da.from_array(X, chunks=(1000, 6)), da.from_array(y, chunks=1000)
config = bst.GBDTConfig(objective="binary", n_estimators=20, max_depth=4)

# %%
# Train and predict on the cluster; both ``with`` blocks close it at the end.
with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
    with Client(cluster) as client:
        stats = {}
        model = train(client, X_dask, y_dask, config, stats=stats)
        probabilities = predict(model, X_dask)  # a lazy Dask array: one task per partition
        print(type(probabilities).__name__, probabilities.shape, probabilities.chunks)
        p = probabilities.compute()
print(model)
print("driver waits per tree:", stats["round_trips"] / model.n_trees)

# %%
# The model is the one single-machine training builds on the same rows.
local = bst.GBDTModel.train(bst.Dataset(X, y), config)
print("max |dask - local| probability:", np.abs(p - local.predict(X)).max())
print(f"training accuracy {((p > 0.5) == y).mean():.3f}")

fig, ax = plt.subplots(figsize=(4.5, 3))
ax.hist([p[y == 0], p[y == 1]], bins=20, label=["y = 0", "y = 1"])
ax.set_xlabel("predicted P(y = 1)")
ax.legend()
fig.tight_layout()
