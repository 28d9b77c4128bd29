"""
Learning to rank with LambdaRank
================================

Synthetic search queries: each query has 5 to 39 documents with a graded relevance 0..4.
A LambdaRank model (LightGBM's ``"lambdarank"`` objective name is accepted) learns to
sort each query's documents, and NDCG@10 on validation queries is scored every round.
"""

# %%
# Data: rows of one query are contiguous; ``group=`` gives the query sizes.
import matplotlib.pyplot as plt
import numpy as np

import boosters as bst

rng = np.random.default_rng(0)


def make_queries(n_queries):
    sizes = rng.integers(5, 40, n_queries)
    X = rng.normal(size=(sizes.sum(), 6))
    relevance = X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 * X[:, 2] + rng.normal(scale=0.7, size=len(X))
    return X, np.clip(np.floor(relevance + 1.5), 0, 4), sizes


X, y, sizes = make_queries(200)
X_val, y_val, sizes_val = make_queries(100)
train = bst.Dataset(X, y, group=sizes)
valid = bst.Dataset(X_val, y_val, group=sizes_val)

# %%
# Train: the validation metric defaults to NDCG at the objective's cut-off (10 here).
config = bst.GBDTConfig(objective="lambdarank", lambdarank_truncation_level=10, n_estimators=40,
                        num_leaves=15, learning_rate=0.1)
model = bst.GBDTModel.train(train, config, val_set=valid, n_threads=1)
print(config.objective, config.resolved_metric)
print(f"validation NDCG@10: round 1 {model.eval_history[0]:.4f}, round 40 {model.eval_history[-1]:.4f}")

# %%
# NDCG@10 of each validation query, by hand: gain 2**relevance - 1, discount
# log2(position + 1), divided by the ideal order's (queries with no relevant document
# count as 1). Their mean is the metric above.
scores = model.predict(X_val)  # raw scores; sort each query's rows by them


def ndcg_at_10(rel, score):
    k = min(10, len(rel))
    discount = 1 / np.log2(np.arange(2, k + 2))
    dcg = ((2 ** rel[np.argsort(-score, kind="stable")][:k] - 1) * discount).sum()
    ideal = ((2 ** np.sort(rel)[::-1][:k] - 1) * discount).sum()
    return dcg / ideal if ideal > 0 else 1.0


bounds = valid.group_boundaries
per_query = np.array([ndcg_at_10(y_val[a:b], scores[a:b]) for a, b in zip(bounds[:-1], bounds[1:])])
print(f"mean of per-query NDCG@10: {per_query.mean():.4f}; worst query {per_query.min():.3f}")

# %%
# NDCG@10 per round, and the per-query NDCG@10 of the first 30 validation queries.
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
ax1.plot(np.arange(1, len(model.eval_history) + 1), model.eval_history)
ax1.set_xlabel("round")
ax1.set_ylabel("validation NDCG@10")
ax2.bar(np.arange(30), per_query[:30])
ax2.set_xlabel("validation query")
ax2.set_ylabel("NDCG@10")
fig.tight_layout()
