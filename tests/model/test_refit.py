"""GBDTModel.refit (LightGBM's refit): each leaf blended with the Newton step of the new
rows that reach it, tree by tree from the margins the refit trees give; checked against a
row-by-row NumPy reference, and against the trained model itself (refit on its own
training rows with decay 0 gives its leaf values back)."""

import numpy as np
import pytest

import boosters as bst


def make_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + 0.3 * rng.normal(size=n)


def naive_refit(model, X, y, decay_rate, gradient):
    """Row by row: each tree's leaves from the gradients (gradient(margin, y) -> (g, h))
    at the margins before its round, per output."""
    config, n_out = model.config, model.forest.n_groups
    margins = np.tile(np.asarray(model.forest.base_scores, dtype=np.float64), (len(y), 1))
    leaves = model.predict_leaf(X)
    values = []
    for t, tree in enumerate(model.trees):
        k = t % n_out
        if k == 0:
            g_all, h_all = gradient(margins.copy(), y)
        g, h = {}, {}
        for r in range(len(y)):
            leaf = leaves[r, t]
            g[leaf] = g.get(leaf, 0.0) + float(np.float32(g_all[r, k]))
            h[leaf] = h.get(leaf, 0.0) + float(np.float32(h_all[r, k]))
        value = np.array(tree.value, dtype=np.float64)
        for node in np.flatnonzero(np.asarray(tree.left_child) < 0):
            G, H = g.get(node, 0.0), h.get(node, 0.0)
            T = np.sign(G) * max(abs(G) - config.l1, 0.0)
            new = -T / (H + config.l2) if H + config.l2 > 0 else 0.0
            value[node] = decay_rate * value[node] + (1 - decay_rate) * config.learning_rate * new
        for r in range(len(y)):
            margins[r, k] += value[leaves[r, t]]
        values.append(value)
    return values


def squared(margins, y):
    return margins - y[:, None], np.ones_like(margins)


def logistic(margins, y):
    p = 1 / (1 + np.exp(-margins))
    return p - y[:, None], p * (1 - p)


@pytest.mark.parametrize("objective, gradient", [(bst.Objective.squared(), squared),
                                                 (bst.Objective.logistic(), logistic)])
def test_refit_matches_the_row_by_row_reference(objective, gradient):
    X, y = make_data()
    if objective.name == "logistic":
        y = (y > 0).astype(np.float64)
    config = bst.GBDTConfig(n_estimators=8, max_depth=3, objective=objective, l1=0.5, l2=2.0, learning_rate=0.3)
    model = bst.GBDTModel.train(bst.Dataset(X[:400], y[:400]), config)
    refit = model.refit(X[400:], y[400:], decay_rate=0.7)
    expected = naive_refit(model, X[400:], y[400:], 0.7, gradient)
    for tree, values in zip(refit.trees, expected):  # float64 sums in another order: 1e-12 relative
        np.testing.assert_allclose(tree.value, values, rtol=1e-12, atol=1e-15)
    assert all(np.array_equal(a.split_feature, b.split_feature) and np.array_equal(a.threshold, b.threshold)
               for a, b in zip(refit.trees, model.trees))  # the structure is kept
    assert model.refit(X[400:], y[400:], decay_rate=1.0).to_bytes() == model.to_bytes()


def test_refit_on_the_training_rows_gives_the_leaves_back():
    # decay 0 on the very rows it was trained on (float64 histograms, no sampling): every
    # leaf is the Newton step the training took (their sums in another order: 1e-9)
    X, y = make_data(seed=1)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=10, max_depth=4, learning_rate=0.3,
                                                                   histogram_mode="f64", l2=1.0, subsample=1.0))
    refit = model.refit(X, y, decay_rate=0.0)
    for a, b in zip(refit.trees, model.trees):
        np.testing.assert_allclose(a.value, b.value, rtol=1e-9, atol=1e-12)
    shifted = model.refit(X, y + 10.0, decay_rate=0.0)
    assert shifted.predict(X).mean() > model.predict(X).mean() + 5.0


def test_multiclass_refit_by_round():
    X, y = make_data(seed=2)
    labels = np.digitize(y, [-1.0, 0.5]).astype(np.float64)
    model = bst.GBDTModel.train(bst.Dataset(X, labels), bst.GBDTConfig(n_estimators=4, max_depth=2,
                                                                        objective=bst.Objective.softmax(3)))

    def softmax(margins, y):
        p = np.exp(margins - margins.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        onehot = np.eye(3)[y.astype(int)]
        return p - onehot, 1.5 * p * (1 - p)  # k / (k - 1) p (1 - p), as LightGBM

    refit = model.refit(X, labels, decay_rate=0.5)
    for tree, values in zip(refit.trees, naive_refit(model, X, labels, 0.5, softmax)):
        np.testing.assert_allclose(tree.value, values, rtol=1e-6, atol=1e-9)  # float32 gradients' rounding


def test_what_refit_refuses():
    X, y = make_data()
    for config in (bst.GBDTConfig(n_estimators=2, objective=bst.Objective.absolute()),
                   bst.GBDTConfig(n_estimators=2, booster="dart"),
                   bst.GBDTConfig(n_estimators=2, linear_leaves=True)):
        with pytest.raises(ValueError, match="refit: "):
            bst.GBDTModel.train(bst.Dataset(X, y), config).refit(X, y)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=2))
    with pytest.raises(ValueError, match="decay_rate must be in"):
        model.refit(X, y, decay_rate=1.5)
    with pytest.raises(ValueError, match="y"):
        model.refit(X, y[:10])
