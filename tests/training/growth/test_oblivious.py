"""Oblivious (symmetric) trees, growth_strategy="oblivious": against the NumPy reference
of naive_oblivious.py node by node (tolerances: tree_compare.assert_same_as_naive_tree),
the symmetric structure, thread independence, and the whole path a model takes
(prediction, save and load, SHAP, importance, export)."""

import numpy as np
import pytest

import boosters as bst
from boosters.explain.tree_table import node_depths
from support import naive_grower as naive
from support import naive_oblivious
from support.matched_params import boosters_config
from support.prebinned import positive_weights, prebinned_data
from support.tree_compare import assert_same_as_naive, assert_same_model, assert_same_trees


def train_both(X, y, n_rounds, weights=None, n_threads=2, **params):
    """(boosters model, reference (base, trees, margins, values), Params)."""
    p = naive.Params(**params)
    config = boosters_config(p, n_rounds).replace(growth_strategy="oblivious")
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), config, n_threads=n_threads)
    return model, naive_oblivious.train(X, y, p, n_rounds, weights), p


def assert_symmetric(tree):
    """Every split node of a depth has the same feature, threshold and missing side."""
    depth = node_depths(tree)
    split = tree.split_feature >= 0
    for d in np.unique(depth[split]):
        at = split & (depth == d)
        for name in ("split_feature", "threshold_bin", "default_left"):
            assert len(np.unique(getattr(tree, name)[at])) == 1, f"depth {d}: {name} differs"


CASES = {
    "plain": dict(max_depth=4),
    "deep": dict(max_depth=7, min_child_weight=0.0),
    "l1-l2": dict(max_depth=5, l1=3.0, l2=0.25),
    "min-gain": dict(max_depth=5, min_gain_to_split=4.0),
    "min-child-weight": dict(max_depth=6, min_child_weight=60.0),
    "min-samples-leaf": dict(max_depth=6, min_samples_leaf=50),
    "no-l2": dict(max_depth=5, l2=0.0, min_child_weight=0.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_squared_error_trees_equal_the_reference(case):
    X, y = prebinned_data(seed=1)
    model, reference, p = train_both(X, y, 4, objective="squared", learning_rate=0.3, **CASES[case])
    assert_same_as_naive(model, reference, p, X)
    for tree in model.trees:
        assert_symmetric(tree)
    assert reference[1][0].n_nodes >= 7  # the case grows real trees


def test_a_node_where_the_level_split_is_invalid_stays_a_leaf():
    # the limits leave some nodes of a level unsplit: the reference agrees on which
    X, y = prebinned_data(seed=1)
    model, reference, p = train_both(X, y, 3, objective="squared", max_depth=6, min_samples_leaf=50)
    assert_same_as_naive(model, reference, p, X)
    tree = model.trees[0]
    leaves_above_the_bottom = (tree.split_feature < 0) & (node_depths(tree) < node_depths(tree).max())
    assert leaves_above_the_bottom.any()


@pytest.mark.parametrize("limits", [dict(), dict(min_samples_leaf=40, min_child_weight=2.0),
                                    dict(l1=0.5, min_gain_to_split=0.2)], ids=["plain", "min-rows", "l1-min-gain"])
def test_logistic_trees_equal_the_reference(limits):
    X, y = prebinned_data(seed=2, objective="logistic")
    model, reference, p = train_both(X, y, 4, objective="logistic", learning_rate=0.5, max_depth=5, **limits)
    assert_same_as_naive(model, reference, p, X)


def test_softmax_trees_equal_the_reference():
    X, y = prebinned_data(n=2000, seed=3, objective="softmax", n_classes=3)
    model, reference, p = train_both(X, y, 3, objective="softmax", n_classes=3, learning_rate=0.5, max_depth=4)
    assert model.n_trees == 9  # one tree per class per round
    assert_same_as_naive(model, reference, p, X)


def test_weighted_trees_equal_the_reference():
    X, y = prebinned_data(seed=4)
    model, reference, p = train_both(X, y, 3, weights=positive_weights(len(y), seed=4), max_depth=5)
    assert_same_as_naive(model, reference, p, X)


# -- the whole path of a model ---------------------------------------------------------------

def noisy_data(n=3000, seed=0, n_features=8):
    """Continuous features (more than max_bins distinct values), NaNs in two."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.random(n) < 0.1, 1] = np.nan
    X[rng.random(n) < 0.05, 4] = np.nan
    y = np.sin(2 * X[:, 0]) + np.nan_to_num(X[:, 1]) * X[:, 2] + 0.5 * (X[:, 3] > 0) + 0.2 * rng.normal(size=n)
    return X, y


def oblivious(**params):
    # every row, children down to 1 row and hessian sum 1 (the defaults before version 0.2)
    base = dict(n_estimators=15, growth_strategy="oblivious", max_depth=5, learning_rate=0.3, subsample=1.0,
                min_samples_leaf=1, min_child_weight=1.0)
    return bst.GBDTConfig(**{**base, **params})


@pytest.mark.parametrize("params", [dict(), dict(histogram_mode="i16"), dict(histogram_mode="i8"),
                                    dict(subsample=0.7, colsample_bytree=0.8, colsample_bylevel=0.7),
                                    dict(goss_top_rate=0.2, goss_other_rate=0.2),
                                    dict(objective=bst.Objective.softmax(3))],
                         ids=["f64", "i16", "i8", "sampling", "goss", "softmax"])
def test_trees_are_symmetric_and_equal_at_1_and_2_threads(params):
    X, y = noisy_data()
    if "objective" in params:
        y = np.digitize(y, [-0.5, 0.5]).astype(np.float64)
    config = oblivious(**params)
    one = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=1)
    two = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2)
    assert_same_model(one, two, X)
    for tree in one.trees:
        assert_symmetric(tree)
    assert max(tree.n_nodes for tree in one.trees) >= 31  # full depth-5 trees somewhere


def test_the_default_depth_is_6_and_catboost_names_are_accepted():
    assert bst.GBDTConfig(growth_strategy="oblivious").max_depth == 6
    config = bst.GBDTConfig(grow_policy="SymmetricTree")
    assert config.growth_strategy is bst.GrowthStrategy.Oblivious
    assert bst.GBDTConfig(grow_policy="Lossguide").growth_strategy is bst.GrowthStrategy.Leafwise
    assert bst.GBDTConfig(grow_policy="Depthwise").growth_strategy is bst.GrowthStrategy.Depthwise
    with pytest.raises(ValueError, match="max_depth must be set"):
        bst.GBDTConfig(growth_strategy="oblivious", max_depth=None)


def test_save_load_shap_importance_table_and_xgboost_export():
    import xgboost as xgb
    from boosters.convert import from_xgboost, to_xgboost_json

    X, y = noisy_data()
    model = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(), n_threads=1)
    raw = model.predict_raw(X)
    for back in (bst.GBDTModel.from_bytes(model.to_bytes()), bst.GBDTModel.from_json_bytes(model.to_json_bytes())):
        assert_same_model(back, model, X)
    # SHAP: contributions plus the bias add up to the margin
    contributions = model.shap_values(X[:300])
    np.testing.assert_allclose(contributions.sum(axis=1), raw[:300], rtol=1e-9, atol=1e-9)
    # importance: the gain of a feature is the gains of its splits, summed
    gains = np.zeros(X.shape[1])
    for tree in model.trees:
        split = tree.split_feature >= 0
        np.add.at(gains, tree.split_feature[split], tree.gain[split])
    np.testing.assert_allclose(model.feature_importance("gain"), gains, rtol=1e-12)
    table = model.trees_to_dataframe()
    assert len(table) == sum(tree.n_nodes for tree in model.trees)
    # XGBoost reads the exported trees and predicts the same margins (float32 sums)
    booster = xgb.Booster(model_file=bytearray(to_xgboost_json(model)))
    theirs = booster.predict(xgb.DMatrix(X[:300]), output_margin=True)
    np.testing.assert_allclose(theirs, raw[:300], rtol=0, atol=1e-4)
    back = from_xgboost(to_xgboost_json(model))  # leaf values in float32: the same leaves, close values
    np.testing.assert_array_equal(back.predict_leaf(X), model.predict_leaf(X))
    np.testing.assert_allclose(back.predict_raw(X), raw, rtol=0, atol=1e-6)


def test_dart_and_linear_leaves():
    X, y = noisy_data()
    plain = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(), n_threads=1)
    plain_loss = np.mean((plain.predict(X) - y) ** 2)
    dart = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(booster="dart", drop_rate=0.2), n_threads=1)
    linear = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(linear_leaves=True), n_threads=1)
    for model in (dart, linear):
        for tree in model.trees:
            assert_symmetric(tree)
    # DART (dropped trees rescaled) learns slower, but learns; linear leaves fit closer
    assert plain_loss < np.mean((dart.predict(X) - y) ** 2) < 0.8 * np.var(y)
    assert np.mean((linear.predict(X) - y) ** 2) < 0.7 * plain_loss


def test_monotone_and_interaction_constraints_hold():
    from support.constraint_checks import assert_monotone, assert_paths_within_groups

    X, y = noisy_data()
    model = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(monotone_constraints={3: 1, 0: -1}), n_threads=1)
    assert_monotone(model, X, 3, 1)
    assert_monotone(model, X, 0, -1)
    groups = [[0, 1, 2], [2, 3]]
    model = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(interaction_constraints=groups), n_threads=1)
    assert_paths_within_groups(model, [set(g) for g in groups])
    for tree in model.trees:
        assert_symmetric(tree)


def test_what_cannot_work_is_refused():
    with pytest.raises(ValueError, match="colsample_bynode.*oblivious"):
        bst.GBDTConfig(growth_strategy="oblivious", colsample_bynode=0.5)


def categorical_data(seed, n=3000):
    """Codes of 40 and 3 categories and two small-integer features, NaN 5% each."""
    rng = np.random.default_rng(seed)
    wide = rng.choice(40, n, p=np.linspace(1, 3, 40) / np.linspace(1, 3, 40).sum()).astype(float)
    narrow = rng.integers(0, 3, n).astype(float)
    numeric = rng.integers(0, 30, (n, 2)).astype(float)
    y = 2 * rng.normal(size=40)[wide.astype(int)] + np.array([0.0, 1.0, -1.0])[narrow.astype(int)] \
        + 0.1 * numeric[:, 0] - 0.05 * numeric[:, 1] + 0.3 * rng.normal(size=n)
    X = np.column_stack([numeric[:, 0], wide, narrow, numeric[:, 1]])
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y.astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("case", [dict(max_depth=4), dict(max_depth=5, min_samples_leaf=20, l2=0.5)],
                         ids=["plain", "limits"])
def test_categorical_levels_split_one_category_from_the_rest(case):
    X, y = categorical_data(seed=len(str(case)))
    p = naive.Params(categorical=(1, 2), learning_rate=0.3, **case)
    config = boosters_config(p, 4).replace(growth_strategy="oblivious")
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[1, 2]), config, n_threads=2)
    base, trees, margins, values = naive_oblivious.train(X, y, p, 4)
    assert model.n_trees == len(trees)
    n_categorical = 0
    for t, (ours, ref) in enumerate(zip(model.trees, trees)):
        for name in ("split_feature", "threshold_bin", "default_left", "left_child", "right_child", "n_samples"):
            np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name), err_msg=f"tree {t}: {name}")
        for i, node in enumerate(ref.nodes):
            if node.left_bins is not None:
                n_categorical += 1
                codes = {int(c) for c in ours.category_codes(i) if c < len(values[node.feature])}
                assert codes == {b - 1 for b in node.left_bins if b > 0}, f"tree {t} node {i}"
        np.testing.assert_allclose(ours.gain, ref.gain, rtol=0, atol=1e-9 * max(1.0, np.abs(ref.gain).max()))
        assert_symmetric(ours)
    assert n_categorical >= 4  # the comparison covers categorical levels
    np.testing.assert_allclose(model.predict_raw(X).reshape(margins.shape), margins, rtol=1e-10, atol=1e-10)


def test_estimators_take_it():
    from boosters.sklearn import GBDTClassifier, GBDTRegressor

    X, y = noisy_data()
    regressor = GBDTRegressor(n_estimators=10, growth_strategy="oblivious", n_threads=1).fit(X, y)
    assert regressor.booster_.config.growth_strategy is bst.GrowthStrategy.Oblivious
    classifier = GBDTClassifier(n_estimators=10, grow_policy="SymmetricTree", n_threads=1).fit(X, y > 0)
    for tree in classifier.booster_.trees:
        assert_symmetric(tree)


@pytest.mark.parametrize("objective", [bst.Objective.squared(), bst.Objective.softmax(3)], ids=["squared", "softmax"])
def test_leaf_tables_predict_the_general_walk_bit_for_bit(objective):
    # the oblivious prediction kernel (a leaf index from one comparison per level) against
    # the packed walk of the same forest: float32 and float64 rows, NaNs, the first trees
    from boosters.model.prediction import _packed_walk

    X, y = noisy_data()
    if objective.n_outputs > 1:
        y = np.digitize(y, [-0.5, 0.5]).astype(np.float64)
    model = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(objective=objective, min_samples_leaf=30), n_threads=1)
    flat = model.forest.flat()
    assert flat.oblivious is not None
    assert any((tree.split_feature < 0).sum() < 2 ** 5 for tree in model.trees)  # leaves above the last level
    rows = X[:700].copy()
    rows[::5, 0] = np.nan  # a feature without missing values in training: the level's default side
    n_groups = model.forest.n_groups
    for dtype in (np.float64, np.float32):
        for n_trees in (model.n_trees, 7):
            walked, tabled = np.zeros((700, n_groups)), np.zeros((700, n_groups))
            _packed_walk(flat.packed, rows.astype(dtype), walked, n_trees, 2)
            _packed_walk(flat.oblivious, rows.astype(dtype), tabled, n_trees, 2)
            np.testing.assert_array_equal(tabled, walked)
    walked = np.zeros((700, n_groups)) + model.forest.base_scores  # predict_raw starts from the base scores
    _packed_walk(flat.packed, rows, walked, model.n_trees, 1)
    np.testing.assert_array_equal(model.predict_raw(rows).reshape(700, -1), walked)  # through the tables


def test_only_symmetric_numeric_forests_get_leaf_tables():
    X, y = noisy_data(n=800)
    depthwise = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(growth_strategy="depthwise"), n_threads=1)
    linear = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(linear_leaves=True, n_estimators=3), n_threads=1)
    assert depthwise.forest.flat().oblivious is None
    assert linear.forest.flat().oblivious is None
    X, y = categorical_data(seed=0, n=800)
    categorical = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[1, 2]), oblivious(), n_threads=1)
    assert categorical.forest.flat().oblivious is None


def test_random_strength_on_a_one_node_level_draws_find_bests_noise():
    """A stump's only level is its root: the level's noisy choice must be the depth-wise
    root's, draw for draw (the same keys and counters), and the noise must change the
    model (a strength at which it wins over the gains)."""
    X, y = noisy_data()
    X = np.nan_to_num(X)  # no missing values: one candidate per threshold in both scans
    stump = dict(n_estimators=8, max_depth=1, learning_rate=0.3, random_strength=20.0)
    noisy = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(**stump), n_threads=2)
    depthwise = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(**stump, growth_strategy="depthwise"), n_threads=1)
    assert_same_trees(noisy, depthwise)  # not the files: their configs differ
    plain = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(**{**stump, "random_strength": 0.0}))
    assert [t.split_feature[0] for t in noisy.trees] != [t.split_feature[0] for t in plain.trees]


def test_random_strength_keeps_levels_symmetric_and_thread_independent():
    X, y = noisy_data()
    config = oblivious(random_strength=2.0, bagging_temperature=1.0)
    one = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=1)
    two = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=2)
    assert_same_model(one, two, X)
    for tree in one.trees:
        assert_symmetric(tree)
    plain = bst.GBDTModel.train(bst.Dataset(X, y), oblivious(bagging_temperature=1.0), n_threads=1)
    assert not np.array_equal(one.predict(X), plain.predict(X))
