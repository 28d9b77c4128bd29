"""predict_leaf: the leaf of every row in every tree, against a naive walk of the trees,
and the leaf values summing to predict_raw."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import boosters as bst
from boosters.model import prediction
from support.naive import naive_goes_left, naive_leaf


def naive_leaves(model, X) -> np.ndarray:
    return np.array([[naive_leaf(tree, x) for tree in model.trees] for x in X], dtype=np.int32)


def margins_from_leaves(model, leaves) -> np.ndarray:
    """(n_rows, n_groups) base score plus each tree's leaf value in its output group."""
    out = np.tile(model.forest.base_scores, (len(leaves), 1))
    for t, (tree, group) in enumerate(zip(model.trees, model.forest.tree_group)):
        out[:, group] += tree.value[leaves[:, t]]
    return out


def data(seed=0, n=500, missing=True, categorical=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    if categorical:
        X[:, 3] = rng.integers(0, 12, n)
    y = X[:, 0] + np.sin(2 * X[:, 1]) + (X[:, 3] % 3 if categorical else 0) + 0.1 * rng.normal(size=n)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("growth", [bst.GrowthStrategy.Depthwise, bst.GrowthStrategy.Leafwise])
def test_leaves_match_a_naive_walk_and_sum_to_the_margins(categorical, growth):
    X, y = data(categorical=categorical)
    cfg = bst.GBDTConfig(n_estimators=15, max_depth=4, n_leaves=12, growth_strategy=growth)
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[3] if categorical else None), cfg)
    if categorical:
        assert any(np.any(t.category_set >= 0) for t in model.trees)  # the categorical rule is exercised
    Xt, _ = data(seed=1, n=300, categorical=categorical)
    if categorical:
        Xt[:5, 3] = [12, 40, -1, 2.5, np.nan]  # unseen, past the words, negative, non-integer, missing
    leaves = model.predict_leaf(Xt)
    assert leaves.shape == (300, model.n_trees) and leaves.dtype == np.int32
    assert np.array_equal(leaves, naive_leaves(model, Xt))
    for t, tree in enumerate(model.trees):
        assert np.all(tree.split_feature[leaves[:, t]] < 0)  # every index is a leaf
    # the same values added in another order: equal to rounding
    np.testing.assert_allclose(margins_from_leaves(model, leaves)[:, 0], model.predict_raw(Xt), rtol=1e-12, atol=1e-12)


def test_softmax_leaves_sum_to_every_class_margin():
    X, _ = data(missing=False)
    y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=6, max_depth=3,
                                                                  objective=bst.Objective.softmax(3)))
    leaves = model.predict_leaf(X)
    assert leaves.shape == (len(X), 18)  # 6 rounds x 3 classes
    assert np.array_equal(leaves, naive_leaves(model, X))
    np.testing.assert_allclose(margins_from_leaves(model, leaves), model.predict_raw(X), rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def model_and_data():
    X, y = data(missing=False)
    names = [f"c{i}" for i in range(5)]
    model = bst.GBDTModel.train(bst.Dataset(X, y, feature_names=names), bst.GBDTConfig(n_estimators=10, max_depth=4))
    return model, X, names


def test_sparse_input_gives_the_dense_leaves(model_and_data):
    model, X, _ = model_and_data
    Xz = np.where(np.abs(X) < 0.7, 0.0, X)  # implicit zeros are 0.0
    expected = model.predict_leaf(Xz)
    assert np.array_equal(model.predict_leaf(sp.csr_matrix(Xz)), expected)
    assert np.array_equal(model.predict_leaf(sp.csc_matrix(Xz)), expected)
    assert np.array_equal(model.predict_leaf(sp.csr_matrix(np.zeros((4, 5)))), model.predict_leaf(np.zeros((4, 5))))


def test_row_blocks_do_not_change_leaves_or_margins(model_and_data, monkeypatch):
    """Dense, CSR and CSC input through blocks of 3 rows (the shared row-block generator)
    give exactly the one-block result, also for a block whose rows are all implicit zeros."""
    model, X, _ = model_and_data
    Xz = np.where(np.abs(X) < 0.7, 0.0, X)[:50]
    Xz[3:6] = 0.0  # rows 3-5: one whole CSR block without a stored entry
    leaves, margins = model.predict_leaf(Xz), model.predict_raw(Xz)
    np.testing.assert_array_equal(leaves, naive_leaves(model, Xz))
    monkeypatch.setattr(prediction, "_MIN_BLOCK_ROWS", 3)
    monkeypatch.setattr(prediction, "PREDICT_BLOCK_VISITS", 1)
    for matrix in (Xz, sp.csr_matrix(Xz), sp.csc_matrix(Xz)):
        np.testing.assert_array_equal(model.predict_leaf(matrix, n_threads=1), leaves)
        np.testing.assert_array_equal(model.predict_raw(matrix, n_threads=1), margins)


def test_sparse_input_of_a_categorical_model_is_refused():
    X, y = data(categorical=True, missing=False)
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[3]),
                                bst.GBDTConfig(n_estimators=3, max_depth=3, max_onehot_cats=2))
    assert any(np.any(t.category_set >= 0) for t in model.trees)  # the case under test
    with pytest.raises(ValueError, match="categorical splits predicts dense input"):
        model.predict_leaf(sp.csr_matrix(X))


def test_frames_are_matched_by_name(model_and_data):
    model, X, names = model_and_data
    frame = pd.DataFrame(X, columns=names)
    expected = model.predict_leaf(X)
    assert np.array_equal(model.predict_leaf(frame[names[::-1]]), expected)
    assert np.array_equal(model.predict_leaf(X.astype(np.float32)), model.predict_leaf(X.astype(np.float32).astype(np.float64)))


def test_leaves_do_not_depend_on_the_thread_count(model_and_data, openmp):
    model, X, _ = model_and_data
    assert np.array_equal(model.predict_leaf(X, n_threads=1), model.predict_leaf(X, n_threads=2))


def test_bad_input_is_refused_as_predict_refuses_it(model_and_data):
    model, _, _ = model_and_data
    with pytest.raises(ValueError, match="X is empty"):
        model.predict_leaf(np.zeros((0, 5)))
    with pytest.raises(ValueError, match="X has 4 features"):
        model.predict_leaf(np.zeros((3, 4)))


def test_a_single_leaf_tree_gives_leaf_zero():
    X = np.ones((20, 2))
    model = bst.GBDTModel.train(bst.Dataset(X, np.arange(20.0)), bst.GBDTConfig(n_estimators=3))
    assert np.array_equal(model.predict_leaf(X), np.zeros((20, 3), dtype=np.int32))
