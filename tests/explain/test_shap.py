"""TreeSHAP: SHAP values and interaction values against a brute-force Shapley computation
(every subset of the features, conditional expectations by cover-weighted traversal) and
against the `shap` package's TreeExplainer on the same trees."""

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import shap

import boosters as bst
from boosters.explain import shap as shap_module
from support.naive import naive_goes_left as goes_left
from support.lightgbm_models import leaf_weights, weightless_rows_booster

# The brute force and the kernel add the same terms in different orders: float64
# round-off of sums of a few hundred terms of size ~1.
EXACT = dict(rtol=1e-9, atol=1e-9)


def conditional_expectation(tree, x, known, node=0):
    """E[tree(x) | the features in `known` fixed to x's values], the others following the
    training data's cover at every split (the path-dependent TreeSHAP game)."""
    if tree.split_feature[node] < 0:
        return tree.value[node]
    left, right = tree.left_child[node], tree.right_child[node]
    if tree.split_feature[node] in known:
        return conditional_expectation(tree, x, known, left if goes_left(tree, node, x) else right)
    return (tree.cover[left] * conditional_expectation(tree, x, known, left)
            + tree.cover[right] * conditional_expectation(tree, x, known, right)) / tree.cover[node]


def game(model, x):
    """v(S) per output group for every subset S of the features (a frozenset)."""
    n_features, n_groups = model.n_features, model.forest.n_groups
    values = {}
    for size in range(n_features + 1):
        for subset in itertools.combinations(range(n_features), size):
            v = np.array(model.forest.base_scores, dtype=np.float64)
            for tree, group in zip(model.trees, model.forest.tree_group):
                v[group] += conditional_expectation(tree, x, set(subset))
            values[frozenset(subset)] = v
    return values


def brute_force_shap(model, x):
    """(n_groups, n_features + 1): the Shapley values of the game, then v(empty set)."""
    m = model.n_features
    v = game(model, x)
    phi = np.zeros((model.forest.n_groups, m + 1))
    for i in range(m):
        others = [f for f in range(m) if f != i]
        for size in range(m):
            weight = math.factorial(size) * math.factorial(m - size - 1) / math.factorial(m)
            for subset in itertools.combinations(others, size):
                s = frozenset(subset)
                phi[:, i] += weight * (v[s | {i}] - v[s])
    phi[:, m] = v[frozenset()]
    return phi


def brute_force_interactions(model, x):
    """(n_groups, m + 1, m + 1): the Shapley interaction index (Lundberg et al. 2020),
    halved between [i, j] and [j, i]; the diagonal keeps the rest of the SHAP value."""
    m = model.n_features
    v = game(model, x)
    phi = brute_force_shap(model, x)
    out = np.zeros((model.forest.n_groups, m + 1, m + 1))
    for i, j in itertools.permutations(range(m), 2):
        others = [f for f in range(m) if f not in (i, j)]
        for size in range(m - 1):
            weight = math.factorial(size) * math.factorial(m - size - 2) / (2 * math.factorial(m - 1))
            for subset in itertools.combinations(others, size):
                s = frozenset(subset)
                out[:, i, j] += weight * (v[s | {i, j}] - v[s | {i}] - v[s | {j}] + v[s])
    for i in range(m):
        out[:, i, i] = phi[:, i] - out[:, i, :m].sum(axis=1) + out[:, i, i]
    out[:, m, m] = phi[:, m]
    return out


def per_group(values, model):
    """The public result with the group axis kept: (n_rows, n_groups, ...)."""
    return values[:, None] if model.forest.n_groups == 1 else values


def numeric_model(seed=0, missing=0.15, n=400, **params):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] + 2 * X[:, 1] * X[:, 2] + np.sin(X[:, 3])
    X[rng.random(X.shape) < missing] = np.nan
    cfg = bst.GBDTConfig(**{"n_estimators": 8, "max_depth": 4, "learning_rate": 0.5, **params})
    return bst.GBDTModel.train(bst.Dataset(X, y), cfg, n_threads=1), X


def categorical_model(seed=0):
    """Column 0: codes of 9 categories (partition splits, some NaN); 1-2 numeric."""
    rng = np.random.default_rng(seed)
    n = 600
    codes = rng.integers(0, 9, n).astype(float)
    effect = rng.normal(size=9) * 2
    numeric = rng.normal(size=(n, 2))
    y = effect[codes.astype(int)] + numeric[:, 0] * numeric[:, 1]
    codes[rng.random(n) < 0.1] = np.nan
    X = np.column_stack([codes, numeric])
    cfg = bst.GBDTConfig(n_estimators=6, max_depth=4, learning_rate=0.5, max_onehot_cats=2)
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[0]), cfg, n_threads=1)
    assert any(np.any(t.category_set >= 0) for t in model.trees)  # the case under test
    return model, X


def multiclass_model():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] * X[:, 2] > 0.3)
    X[rng.random(X.shape) < 0.1] = np.nan
    cfg = bst.GBDTConfig(n_estimators=4, max_depth=3, objective=bst.Objective.softmax(3))
    return bst.GBDTModel.train(bst.Dataset(X, y), cfg, n_threads=1), X


MODELS = {"numeric_missing": numeric_model, "categorical": categorical_model, "multiclass": multiclass_model}


def test_split_rule_of_the_reference_is_prediction():
    """The brute force's split rule reproduces predict_raw (so it plays the same trees)."""
    for make in MODELS.values():
        model, X = make()
        for x, margin in zip(X[:40], per_group(model.predict_raw(X[:40]), model)):
            walked = game(model, x)[frozenset(range(model.n_features))]
            np.testing.assert_allclose(walked, margin, **EXACT)


@pytest.mark.parametrize("name", MODELS)
def test_shap_values_match_brute_force_shapley(name):
    model, X = MODELS[name]()
    rows = X[:12]
    got = per_group(model.shap_values(rows), model)
    for r, x in enumerate(rows):
        np.testing.assert_allclose(got[r], brute_force_shap(model, x), **EXACT)


@pytest.mark.parametrize("name", MODELS)
def test_interaction_values_match_brute_force(name):
    model, X = MODELS[name]()
    rows = X[:6]
    got = per_group(model.shap_interaction_values(rows), model)
    for r, x in enumerate(rows):
        np.testing.assert_allclose(got[r], brute_force_interactions(model, x), **EXACT)


def test_rows_with_every_value_missing_and_unseen_categories():
    """All-NaN rows follow every default direction; codes the training never saw (and
    negative ones) go the default way too, fractional ones as their truncated code."""
    model, X = categorical_model()
    rows = np.array([[np.nan, np.nan, np.nan], [50.0, 0.1, -0.2], [-1.0, 0.0, 0.0], [2.5, 1.0, 1.0]])
    got = model.shap_values(rows)
    for r, x in enumerate(rows):
        np.testing.assert_allclose(got[r], brute_force_shap(model, x)[0], **EXACT)
    np.testing.assert_allclose(got.sum(axis=1), model.predict_raw(rows), rtol=1e-12, atol=1e-12)


def shap_package_model(model):
    """Our trees in the shap package's dict format; internal nodes carry the cover-weighted
    mean of their leaves (what TreeExplainer's expected value reads)."""
    trees = []
    n_groups = model.forest.n_groups
    for tree, group in zip(model.trees, model.forest.tree_group):
        leaf = tree.split_feature < 0
        values = np.array(tree.value, dtype=np.float64)
        for node in range(tree.n_nodes - 1, -1, -1):  # children after parents
            if not leaf[node]:
                lc, rc = tree.left_child[node], tree.right_child[node]
                values[node] = (tree.cover[lc] * values[lc] + tree.cover[rc] * values[rc]) / tree.cover[node]
        per_output = np.zeros((tree.n_nodes, n_groups))
        per_output[:, group] = values
        trees.append({
            "children_left": np.where(leaf, -1, tree.left_child).astype(np.int32),
            "children_right": np.where(leaf, -1, tree.right_child).astype(np.int32),
            "children_default": np.where(leaf, -1, np.where(tree.default_left == 1, tree.left_child,
                                                           tree.right_child)).astype(np.int32),
            "features": np.where(leaf, -2, tree.split_feature).astype(np.int32),
            "thresholds": np.where(leaf, 0.0, tree.threshold),
            "values": per_output,
            "node_sample_weight": np.array(tree.cover, dtype=np.float64),
        })
    return {"trees": trees, "base_offset": np.array(model.forest.base_scores), "tree_output": "raw_value",
            "input_dtype": np.float64, "internal_dtype": np.float64}


@pytest.mark.parametrize("params", [{}, {"max_depth": 7, "n_estimators": 30, "learning_rate": 0.2},
                                    {"growth_strategy": bst.GrowthStrategy.Leafwise, "n_leaves": 24,
                                     "max_depth": None, "n_estimators": 10}])
def test_shap_values_match_the_shap_package(params):
    """Depth-7 and leaf-wise trees repeat features on a path: the UNWIND case."""
    model, X = numeric_model(seed=1, n=2000, **params)
    explainer = shap.TreeExplainer(shap_package_model(model))
    rows = X[:200]
    expected = explainer.shap_values(rows, check_additivity=False)
    got = model.shap_values(rows)
    # shap's C++ kernel runs the same algorithm in float64 in another order of operations
    np.testing.assert_allclose(got[:, :-1], expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got[:, -1], np.ravel(explainer.expected_value)[0], rtol=1e-12)


def test_interaction_values_match_the_shap_package():
    model, X = numeric_model(seed=2, n=1000, max_depth=5, n_estimators=10)
    explainer = shap.TreeExplainer(shap_package_model(model))
    rows = X[:50]
    expected = explainer.shap_interaction_values(rows)
    got = model.shap_interaction_values(rows)
    np.testing.assert_allclose(got[:, :-1, :-1], expected, rtol=1e-9, atol=1e-9)


def test_multiclass_matches_the_shap_package():
    model, X = multiclass_model()
    explainer = shap.TreeExplainer(shap_package_model(model))
    expected = np.asarray(explainer.shap_values(X[:30], check_additivity=False))  # (rows, features, classes)
    got = model.shap_values(X[:30])
    assert got.shape == (30, 3, 4)
    np.testing.assert_allclose(got[:, :, :-1], expected.transpose(0, 2, 1), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("objective", [bst.Objective.squared(), bst.Objective.logistic(), bst.Objective.softmax(4)])
def test_rows_sum_to_the_margin(objective):
    """Efficiency on deeper trees and every output shape, within 1e-6 relative (the
    promise; float64 sums of ~1000 terms are far inside it)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1000, 8))
    y = X[:, 0] + X[:, 1] * X[:, 2] - X[:, 3] ** 2
    if objective.name != "squared":  # classes: quantile bins of y
        n_classes = max(objective.n_outputs, 2)
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    X[rng.random(X.shape) < 0.05] = np.nan
    cfg = bst.GBDTConfig(n_estimators=10, max_depth=8, objective=objective)
    model = bst.GBDTModel.train(bst.Dataset(X, y), cfg)
    margins = per_group(model.predict_raw(X), model)
    values = per_group(model.shap_values(X), model)
    assert values.shape == (1000, objective.n_outputs, 9)
    np.testing.assert_allclose(values.sum(axis=2), margins, rtol=1e-6, atol=1e-9)
    inter = per_group(model.shap_interaction_values(X[:50]), model)
    np.testing.assert_allclose(inter.sum(axis=3), values[:50], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(inter, inter.transpose(0, 1, 3, 2), rtol=1e-9, atol=1e-9)
    assert np.all(inter[:, :, -1, :-1] == 0) and np.all(inter[:, :, :-1, -1] == 0)


def test_thread_count_and_blocks_do_not_change_results(monkeypatch):
    model, X = numeric_model(n=1500, max_depth=6, n_estimators=20)
    one = model.shap_values(X, n_threads=1)
    np.testing.assert_array_equal(model.shap_values(X, n_threads=2), one)
    inter = model.shap_interaction_values(X[:300], n_threads=1)
    np.testing.assert_array_equal(model.shap_interaction_values(X[:300], n_threads=2), inter)
    monkeypatch.setattr(shap_module, "_MIN_BLOCK_ROWS", 7)
    monkeypatch.setattr(shap_module, "SHAP_BLOCK_WORK", 1)  # blocks of 7 rows per thread
    np.testing.assert_array_equal(model.shap_values(X, n_threads=2), one)
    np.testing.assert_array_equal(model.shap_interaction_values(X[:300], n_threads=2), inter)


def test_float32_frames_and_sparse_input_give_the_array_result():
    model, X = categorical_model()
    expected = model.shap_values(X)
    np.testing.assert_allclose(model.shap_values(X.astype(np.float32)),
                               model.shap_values(X.astype(np.float32).astype(np.float64)), rtol=0, atol=0)
    frame = pd.DataFrame(X, columns=["f0", "f1", "f2"])
    named = bst.GBDTModel.train(bst.Dataset(frame, np.nan_to_num(X[:, 0]), categorical_features=[0]),
                                bst.GBDTConfig(n_estimators=3, max_depth=3), n_threads=1)
    reordered = frame[["f2", "f0", "f1"]]
    np.testing.assert_array_equal(named.shap_values(reordered), named.shap_values(frame))
    assert expected.shape == (len(X), 4)


def test_sparse_input_gives_the_dense_result(monkeypatch):
    model, X = numeric_model()
    dense = np.nan_to_num(X)
    dense[np.abs(dense) < 0.5] = 0.0  # implicit zeros in the sparse matrix (0.0, as in prediction)
    expected, expected_inter = model.shap_values(dense), model.shap_interaction_values(dense[:60])
    monkeypatch.setattr(shap_module, "_MIN_BLOCK_ROWS", 7)
    monkeypatch.setattr(shap_module, "SHAP_BLOCK_WORK", 1)  # blocks of 7 rows: densified block by block
    for matrix in (sp.csr_matrix(dense), sp.csc_matrix(dense)):
        np.testing.assert_array_equal(model.shap_values(matrix, n_threads=1), expected)
        np.testing.assert_array_equal(model.shap_interaction_values(matrix[:60], n_threads=1), expected_inter)


def test_sparse_input_of_a_categorical_model_is_refused_as_predict_refuses_it():
    model, X = categorical_model()
    matrix = sp.csr_matrix(np.nan_to_num(X))
    for method in (model.predict_raw, model.shap_values, model.shap_interaction_values):
        with pytest.raises(ValueError, match="categorical splits predicts dense input"):
            method(matrix)


def test_stumps_only_model_gives_the_bias():
    X = np.zeros((50, 2))
    y = np.arange(50, dtype=float)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=3), n_threads=1)
    assert all(t.n_nodes == 1 for t in model.trees)
    phi = model.shap_values(X[:3])
    np.testing.assert_allclose(phi[:, :2], 0.0, atol=0)
    np.testing.assert_allclose(phi[:, 2], model.predict_raw(X[:3]), rtol=1e-12)
    inter = model.shap_interaction_values(X[:3])
    np.testing.assert_allclose(inter[:, 2, 2], model.predict_raw(X[:3]), rtol=1e-12)
    assert np.count_nonzero(inter[:, :2, :]) == 0


def test_bad_input_is_rejected():
    model, X = numeric_model()
    with pytest.raises(ValueError, match="features"):
        model.shap_values(X[:, :3])
    with pytest.raises(ValueError, match="n_threads"):
        model.shap_values(X, n_threads=10**6)  # -1 is every core, as scikit-learn's n_jobs
    bad = model.trees[0]
    bad.cover = np.where(bad.split_feature >= 0, 0.0, bad.cover)  # a loaded model without covers
    with pytest.raises(ValueError, match="cover"):
        model.shap_values(X)
    with pytest.raises(ValueError, match="cover"):
        model.shap_interaction_values(X)


@pytest.mark.usefixtures("sigint_handler")
@pytest.mark.parametrize("method", ["shap_values", "shap_interaction_values"])
def test_ctrl_c_interrupts_between_row_blocks(monkeypatch, method):
    """The kernel runs without the GIL, so Python acts on Ctrl-C only between kernel calls:
    with SIGINT arriving during the first block, no later block may run."""
    import os
    import signal

    model, X = numeric_model()
    X = np.tile(X, (10, 1))  # 4000 rows
    monkeypatch.setattr(shap_module, "_MIN_BLOCK_ROWS", 500)
    monkeypatch.setattr(shap_module, "SHAP_BLOCK_WORK", 1)  # blocks of 500 rows on one thread
    name = "_shap_kernel" if method == "shap_values" else "_interaction_kernel"
    kernel, block_rows = getattr(shap_module, name), []

    def first_block_interrupted(forest, block, *args):
        kernel(forest, block, *args)
        block_rows.append(block.shape[0])
        if len(block_rows) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C during the first block

    monkeypatch.setattr(shap_module, name, first_block_interrupted)
    with pytest.raises(KeyboardInterrupt):
        getattr(model, method)(X, n_threads=1)
    assert block_rows == [500]


def test_a_tree_too_deep_for_the_walk_is_refused_before_the_kernel():
    """A chain of MAX_SHAP_DEPTH + 1 splits (as a crafted model file may hold) would need
    ~17 MB of path per thread and as many C stack frames: a ValueError, not a crash; one
    level less is explained, and its SHAP values add up to the margin (within 1e-9)."""
    from boosters.explain.shap import MAX_SHAP_DEPTH
    from boosters.model.forest import Forest
    from boosters.model.tree import Tree

    def chain(depth):  # node 2d splits x0 <= d: left a leaf (2d + 1), right the next split (2d + 2)
        n = 2 * depth + 1
        split = np.full(n, -1)
        split[0:n - 1:2] = 0
        left, right = np.full(n, -1), np.full(n, -1)
        left[0:n - 1:2] = np.arange(1, n, 2)
        right[0:n - 1:2] = np.arange(2, n + 1, 2)
        threshold = np.zeros(n)
        threshold[0:n - 1:2] = np.arange(depth)
        value = np.where(split < 0, np.arange(n) * 1e-3, 0.0)
        cover = np.linspace(2.0 * n, 1.0, n)
        return Tree(split, threshold, np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.uint8), left, right, value,
                    np.zeros(n), cover, np.ones(n, dtype=np.int64))

    X = np.array([[3.5], [MAX_SHAP_DEPTH + 5.0]])
    deep = Forest(1, np.zeros(1))
    deep.add(chain(MAX_SHAP_DEPTH + 1), 0)
    with pytest.raises(ValueError, match=f"up to depth {MAX_SHAP_DEPTH}"):
        shap_module.shap_values(deep, X, n_threads=1)
    ok = Forest(1, np.zeros(1))
    ok.add(chain(MAX_SHAP_DEPTH), 0)
    phi = shap_module.shap_values(ok, X, n_threads=1)
    np.testing.assert_allclose(phi.sum(axis=-1)[:, 0], ok.predict_margins(X, 1)[:, 0], atol=1e-9)


def test_interaction_values_too_large_for_memory_are_refused_up_front():
    """200,000 rows x 2,001 x 2,001 float64 is 6.4 TB: refused with the size before anything is
    allocated (np.zeros succeeds lazily on Linux and the kernel is killed later, filling it)."""
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 200_000, size=40_000), rng.integers(0, 2_000, size=40_000)
    X = sp.csr_matrix((rng.normal(size=40_000), (rows, cols)), shape=(200_000, 2_000))
    model = bst.GBDTModel.train(bst.Dataset(X[:2000], rng.normal(size=2000)), bst.GBDTConfig(n_estimators=2),
                                n_threads=1)
    with pytest.raises(MemoryError, match=r"200000 rows x 1 output\(s\) x 2001 x 2001.*GiB.*fewer rows"):
        model.shap_interaction_values(X)


def test_interaction_values_check_the_memory_they_need(monkeypatch):
    X = np.random.default_rng(0).normal(size=(300, 20))
    model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=2), n_threads=1)
    needed = 300 * 21 * 21 * 8
    monkeypatch.setattr("boosters._lib.memory.available_memory", lambda: needed - 1)
    with pytest.raises(MemoryError, match="needs"):
        model.shap_interaction_values(X)
    monkeypatch.setattr("boosters._lib.memory.available_memory", lambda: needed)
    assert model.shap_interaction_values(X).shape == (300, 21, 21)


def refreshed_xgboost_model():
    """An XGBoost model whose covers XGBoost's `refresh` updater recomputed on rows that
    never reach one leaf of the first tree: that leaf keeps its value with cover 0 (a
    real model file; every split keeps a positive cover). (booster, X, rows in that leaf)"""
    import xgboost as xgb

    rng = np.random.default_rng(11)
    X = rng.normal(size=(600, 4))
    y = X[:, 0] + X[:, 1] * X[:, 2] + np.sin(X[:, 3]) + 0.1 * rng.normal(size=600)
    params = {"tree_method": "hist", "max_depth": 3, "eta": 0.5, "base_score": 0.0, "nthread": 1}
    trained = xgb.train(params, xgb.DMatrix(X, y), 4)
    leaves = trained.predict(xgb.DMatrix(X), pred_leaf=True)
    in_leaf = leaves[:, 0] == leaves[0, 0]  # the rows of one leaf of tree 0
    refresh = {**params, "process_type": "update", "updater": "refresh", "refresh_leaf": False}
    with warnings.catch_warnings():  # "you have manually specified the updater"
        warnings.simplefilter("ignore")
        refreshed = xgb.train(refresh, xgb.DMatrix(X[~in_leaf], y[~in_leaf]), 4, xgb_model=trained)
    return refreshed, X, in_leaf


def test_a_leaf_of_zero_cover_gives_finite_values_that_sum_to_the_margin():
    """A branch of cover 0 is one the path keeps none of when its feature is unknown: the
    walk must skip it (UNWIND would divide by its zero fraction: NaN). Rows that reach the
    zero-cover leaf and rows that pass by it: SHAP values finite, equal to the brute-force
    Shapley values (1e-9: float64 sums in another order), summing to the margin (1e-9);
    interaction values finite and summing to the SHAP values (1e-9); and XGBoost's own
    pred_contribs on the same trees (it sums in float32: 1e-5)."""
    import xgboost as xgb
    from boosters.convert.xgboost import from_xgboost

    booster, X, in_leaf = refreshed_xgboost_model()
    model = from_xgboost(booster)
    zero = [(t, node) for t, tree in enumerate(model.trees) for node in np.flatnonzero(tree.cover == 0)]
    assert zero, "the case under test: a node of cover 0"
    assert all(model.trees[t].split_feature[node] < 0 for t, node in zero)  # leaves only: splits need a cover
    assert in_leaf.any() and (~in_leaf).any()
    phi = model.shap_values(X)
    assert np.isfinite(phi).all()
    np.testing.assert_allclose(phi.sum(axis=1), model.predict_raw(X), rtol=1e-9, atol=1e-9)
    rows = np.r_[np.flatnonzero(in_leaf)[:6], np.flatnonzero(~in_leaf)[:6]]
    for r in rows:
        np.testing.assert_allclose(phi[r], brute_force_shap(model, X[r])[0], **EXACT)
    contribs = booster.predict(xgb.DMatrix(X), pred_contribs=True)
    np.testing.assert_allclose(phi, contribs, rtol=1e-5, atol=1e-5)
    inter = model.shap_interaction_values(X[rows])
    assert np.isfinite(inter).all()
    np.testing.assert_allclose(inter.sum(axis=2), phi[rows], rtol=1e-9, atol=1e-9)
    for i, r in enumerate(rows[::3]):
        np.testing.assert_allclose(inter[3 * i], brute_force_interactions(model, X[r])[0], **EXACT)


def test_a_leaf_whose_cover_is_negative_round_off_counts_as_zero():
    """LightGBM writes a leaf's hessian sum of rows whose hessians are 0 as -1.1e-16: SHAP
    refused the converted model ('a split needs a positive cover', of a leaf). from_lightgbm
    now converts it as 0; in a file converted before (rebuilt here from the text's leaf
    weights), a leaf's cover within -1e-9 of its tree's root cover is 0 (a leaf no weight
    reached); the values sum to the margin (1e-12: float64 round-off of sums of a few terms
    of size ~1) and are those of the model converted now, exactly."""
    X, booster = weightless_rows_booster()
    converted = bst.convert.from_lightgbm(booster)
    document = json.loads(converted.to_json_bytes())
    for tree, leaf_weight in zip(document["trees"], leaf_weights(booster), strict=True):
        tree["nodes"]["cover"][-len(leaf_weight):] = leaf_weight.tolist()  # leaves follow the splits
    model = bst.GBDTModel.from_json_bytes(json.dumps(document).encode())
    covers = np.concatenate([tree.cover for tree in model.trees])
    assert -1e-12 < covers.min() < 0  # the round-off this test is about is there
    phi = model.shap_values(X)
    assert np.all(np.isfinite(phi))
    np.testing.assert_allclose(phi.sum(axis=1), model.predict_raw(X), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(phi, converted.shap_values(X))
    # only round-off: a leaf's real negative cover stays, and is refused
    split = np.array([True, False, False, True, False, False])
    cover = np.array([10.0, 10.0, -1e-15, 4.0, 4.0, -1e-3])
    fixed = shap_module.leaf_roundoff_as_zero(cover, split, np.array([0, 3, 6]))
    np.testing.assert_array_equal(fixed, [10.0, 10.0, 0.0, 4.0, 4.0, -1e-3])
