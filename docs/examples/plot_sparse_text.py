"""
Sparse text features
====================

Bag-of-words features are a ``scipy.sparse`` CSR matrix: mostly zeros. ``bst.Dataset``
takes the CSR matrix as it is (training never builds the dense matrix), here for a small
generated corpus of sentences about cooking or football, and the gain importance shows
which words the trees use.
"""

# %%
# A corpus made on the spot (no download): each sentence has five words common to both
# topics, two words of its own topic and, about three times in ten, one of the other topic.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

import boosters as bst

rng = np.random.default_rng(0)
shared = ("the today we they really great fast new after before long short good bad big small very "
          "again never always friends family weekend morning evening night home town city club").split()
topics = {0: "oven recipe garlic butter simmer sauce bake dinner flour salt".split(),
          1: "goal match striker referee penalty league coach score pitch season".split()}
labels = rng.integers(0, 2, 600)
texts = [" ".join(rng.choice(shared, 5).tolist() + rng.choice(topics[t], 2).tolist()
                  + rng.choice(topics[1 - t], 1 if rng.random() < 0.3 else 0).tolist())
         for t in labels]
print(texts[0], "->", labels[0])

# %%
# Word counts as a CSR matrix; the vocabulary names the features.
vectorizer = CountVectorizer()
X = vectorizer.fit_transform(texts).tocsr()
print(type(X).__name__, X.shape, f"{X.nnz / np.prod(X.shape):.1%} of the entries stored")
words = list(vectorizer.get_feature_names_out())
train = bst.Dataset(X[:450], labels[:450], feature_names=words)

# %%
# A binary classifier on the sparse matrix; prediction reads the CSR rows directly.
config = bst.GBDTConfig(objective="binary", n_estimators=30, num_leaves=7, learning_rate=0.2)
model = bst.GBDTModel.train(train, config, n_threads=1)
accuracy = ((model.predict(X[450:]) > 0.5) == labels[450:]).mean()
print(f"held-out accuracy: {accuracy:.3f}")

# %%
# The ten words of largest total split gain.
gain = model.feature_importance("gain")
top = np.argsort(gain)[::-1][:10]
for i in top:
    print(f"{words[i]:>10} {gain[i]:8.1f}")
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.barh([words[i] for i in top[::-1]], gain[top[::-1]])
ax.set_xlabel("total split gain")
fig.tight_layout()
