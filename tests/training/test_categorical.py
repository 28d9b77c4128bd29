"""Categorical splits on integer codes (0, 1, ...; NaN missing): the split found against a
brute force over every partition, LightGBM's tree on the same data, the one-vs-rest /
sorted-partition switch, prediction of unseen and missing codes, the model file, and
training on every path (float64 / quantized, depth- / leaf-wise, multiclass, thousands
of levels) predicting exactly what the training's margins say.
"""

import functools
import io
import itertools
import os
import pickle
import zipfile

import lightgbm as lgb
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import boosters as bst
from boosters.data.categories import MAX_CATEGORIES
from boosters.model.prediction import predict_tree
from boosters.objectives.registry import make_objective
from boosters.training.growth.grower import TreeGrower
from support.naive import naive_goes_left
from support.tree_compare import assert_same_model, assert_same_trees


def categorical_data(n=3000, k=12, seed=1, missing=0.0, n_numeric=1):
    """Codes of k categories of unequal frequencies (column 0), numeric columns, and a
    target driven by a per-category effect (missing: its own effect)."""
    rng = np.random.default_rng(seed)
    p = np.linspace(1, 2, k)
    codes = rng.choice(k, n, p=p / p.sum()).astype(float)
    effect = rng.normal(size=k + 1)
    codes[rng.random(n) < missing] = np.nan
    numeric = rng.normal(size=(n, n_numeric))
    idx = np.where(np.isnan(codes), k, codes).astype(int)
    y = effect[idx] + 0.5 * numeric[:, 0] + 0.3 * rng.normal(size=n)
    return np.column_stack([codes, numeric]), y


# The settings these tests were written for (boosters' defaults before 0.2, XGBoost's):
# depth-wise trees, every row, children down to 1 row and hessian sum 1.
WRITTEN_FOR = dict(growth_strategy="depthwise", learning_rate=0.3, subsample=1.0, min_samples_leaf=1,
                   min_child_weight=1.0)


def one_tree(X, y, categorical=(0,), **params):
    cfg = bst.GBDTConfig(n_estimators=1, histogram_mode="f64", **{**WRITTEN_FOR, **params})
    return bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=list(categorical)), config=cfg, n_threads=1)


def left_codes(tree, node, n_codes):
    """The training codes a categorical split sends left."""
    return {int(c) for c in tree.category_codes(node) if c < n_codes}


def reference_predict(trees, base, X):
    """A pure-NumPy walk of the trees, one row and node at a time (naive_goes_left: a
    categorical split takes a value truncated toward zero as its code; NaN, codes below 0
    and past its words go the default way)."""
    out = np.full(len(X), base, dtype=np.float64)
    for tree in trees:
        for r in range(len(X)):
            node = 0
            while tree.split_feature[node] >= 0:
                node = tree.left_child[node] if naive_goes_left(tree, node, X[r]) else tree.right_child[node]
            out[r] += tree.value[node]
    return out


# ----------------------------------------------------------------------------------
# The split: brute force over every partition
# ----------------------------------------------------------------------------------

def brute_force_best(codes, g, h, l2, cat_l2, include_missing):
    """The best (gain, left set) over every partition of the categories present (the
    missing value as one more category, -1, when include_missing), with the gain of
    boosters' split scan: children scored with l2 + cat_l2, the parent with l2."""
    keys = np.where(np.isnan(codes), -1, codes).astype(int)
    cats = sorted(set(keys.tolist()) if include_missing else set(keys[keys >= 0].tolist()))
    G, H = g.sum(), h.sum()
    parent = G * G / (H + l2)
    best = (-np.inf, None)
    for r in range(1, len(cats)):
        for left in itertools.combinations(cats, r):
            mask = np.isin(keys, left)
            gl, hl = g[mask].sum(), h[mask].sum()
            gain = 0.5 * (gl * gl / (hl + l2 + cat_l2) + (G - gl) ** 2 / (H - hl + l2 + cat_l2) - parent)
            if gain > best[0] + 1e-12:
                best = (gain, set(left))
    return best


@pytest.mark.parametrize("missing", [0.0, 0.1])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_root_split_is_the_best_partition(seed, missing):
    """With l2 = cat_l2 = 0 and cat_smooth = 0 the sorted partition is optimal for
    squared error (Fisher 1958): the scan's root split must be the brute force's best
    of all 2^(k-1) - 1 partitions (missing as a category too), gain within 1e-9."""
    k = 7
    X, y = categorical_data(n=700, k=k, seed=seed, missing=missing, n_numeric=1)
    X = X[:, :1]
    model = one_tree(X, y, max_depth=1, l2=0.0, cat_l2=0.0, cat_smooth=0.0, min_data_per_group=1,
                     min_child_weight=0.0, max_cat_threshold=64, learning_rate=1.0)
    tree = model.trees[0]
    assert tree.split_feature[0] == 0 and tree.category_set[0] == 0
    g = (y.mean() - y).astype(np.float32).astype(np.float64)  # float32 gradients at the base margin
    gain, left = brute_force_best(X[:, 0], g, np.ones_like(g), 0.0, 0.0, include_missing=missing > 0)
    found = left_codes(tree, 0, k)
    if missing > 0:
        found = found | ({-1} if tree.default_left[0] else set())
    all_cats = set(range(k)) | ({-1} if missing > 0 else set())
    assert found in (left, all_cats - left)
    np.testing.assert_allclose(tree.gain[0], gain, rtol=1e-9)


def test_gain_uses_cat_l2_and_the_scan_respects_max_cat_threshold():
    """cat_l2 enters the children's scores (the brute force with the same formula agrees
    on the gain when the best set is reachable), and max_cat_threshold = 1 limits the
    left set to one category from either end of the order."""
    X, y = categorical_data(n=900, k=8, seed=5, n_numeric=1)
    X = X[:, :1]
    g = (y.mean() - y).astype(np.float32).astype(np.float64)
    model = one_tree(X, y, max_depth=1, l2=1.0, cat_l2=5.0, cat_smooth=0.0, min_data_per_group=1, learning_rate=1.0)
    tree = model.trees[0]
    keys = X[:, 0].astype(int)
    left = left_codes(tree, 0, 8)
    mask = np.isin(keys, list(left))
    gl, hl, G, H = g[mask].sum(), mask.sum(), g.sum(), len(g)
    expected = 0.5 * (gl ** 2 / (hl + 6.0) + (G - gl) ** 2 / (H - hl + 6.0) - G ** 2 / (H + 1.0))
    np.testing.assert_allclose(tree.gain[0], expected, rtol=1e-9)
    single = one_tree(X, y, max_depth=1, cat_smooth=0.0, min_data_per_group=1, max_cat_threshold=1).trees[0]
    chosen = left_codes(single, 0, 8)
    means = [g[keys == c].mean() for c in range(8)]
    ends = {int(np.argmin(means)), int(np.argmax(means))}
    assert len(chosen) == 1 and chosen <= ends


# ----------------------------------------------------------------------------------
# One-vs-rest against sorted partition
# ----------------------------------------------------------------------------------

def test_onehot_up_to_max_onehot_cats_partition_above():
    """4 categories whose effects pair up (0, 1 low; 2, 3 high): with max_onehot_cats=4
    (the default) each category is tried alone (the best one-vs-rest split, by brute
    force over singletons); with 3 the sorted partition finds {0, 1} | {2, 3}."""
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, 2000).astype(float)
    y = np.array([-1.0, -0.8, 1.1, 1.0])[codes.astype(int)] + 0.1 * rng.normal(size=2000)
    X = codes[:, None]
    common = dict(max_depth=1, l2=1.0, cat_smooth=1.0, min_data_per_group=10)
    onehot = one_tree(X, y, max_onehot_cats=4, **common).trees[0]
    chosen = left_codes(onehot, 0, 4)
    g = (y.mean() - y).astype(np.float32).astype(np.float64)
    G, H = g.sum(), len(g)

    def gain(c):
        m = codes == c
        return 0.5 * (g[m].sum() ** 2 / (m.sum() + 1) + (G - g[m].sum()) ** 2 / (H - m.sum() + 1) - G ** 2 / (H + 1))

    assert len(chosen) == 1 and chosen == {max(range(4), key=gain)}
    np.testing.assert_allclose(onehot.gain[0], gain(chosen.pop()), rtol=1e-9)
    partition = one_tree(X, y, max_onehot_cats=3, cat_l2=0.0, **common).trees[0]
    assert left_codes(partition, 0, 4) in ({0, 1}, {2, 3})


# ----------------------------------------------------------------------------------
# LightGBM
# ----------------------------------------------------------------------------------

LGB_COMMON = dict(objective="regression", max_bin=255, min_data_in_bin=1, feature_pre_filter=False, verbose=-1,
                  num_threads=1, deterministic=True, force_col_wise=True, boost_from_average=True,
                  min_sum_hessian_in_leaf=1e-3)


def compare_with_lightgbm(d, tree, node, rows, X, k, cat_l2, lr):
    """Walk LightGBM's dump and boosters' tree together on the training rows."""
    assert len(rows) == (d["leaf_count"] if "leaf_index" in d else d["internal_count"])
    if "leaf_index" in d:
        assert tree.split_feature[node] == -1
        if cat_l2 == 0:  # LightGBM's leaves below a categorical split use l2 + cat_l2
            np.testing.assert_allclose(tree.value[node], d["leaf_value"], rtol=1e-9, atol=1e-12)
        return
    assert tree.split_feature[node] == d["split_feature"]
    x = X[rows, d["split_feature"]]
    if d["decision_type"] == "==":
        lgb_left = {int(c) for c in d["threshold"].split("||")}
        assert tree.category_set[node] >= 0
        assert left_codes(tree, node, k) == lgb_left
        goes_left = np.isin(x, list(lgb_left))
    else:
        assert tree.category_set[node] == -1
        goes_left = x <= d["threshold"]
        assert np.array_equal(goes_left, x <= tree.threshold[node])
    # LightGBM's split_gain is 2x boosters' gain (RFC-0008's 1/2), printed as float32
    np.testing.assert_allclose(2 * tree.gain[node], d["split_gain"], rtol=1e-5)
    compare_with_lightgbm(d["left_child"], tree, tree.left_child[node], rows[goes_left], X, k, cat_l2, lr)
    compare_with_lightgbm(d["right_child"], tree, tree.right_child[node], rows[~goes_left], X, k, cat_l2, lr)


@pytest.mark.parametrize("cat_l2", [0.0, 10.0])
@pytest.mark.parametrize("seed", [1, 4])
def test_one_tree_matches_lightgbm(seed, cat_l2):
    """Same split features, category sets and row counts at every node, gains within
    float32 printing (rtol 1e-5), and leaf values within 1e-9 when cat_l2 = 0 (LightGBM
    computes the leaves under a categorical split with l2 + cat_l2, boosters with l2)."""
    k = 12
    X, y = categorical_data(n=3000, k=k, seed=seed, n_numeric=2)
    # LightGBM keeps labels in float32, and bins > 255 distinct values its own way
    y = y.astype(np.float32).astype(np.float64)
    X[:, 1:] = np.round(X[:, 1:], 1)
    lr = 0.5
    params = dict(LGB_COMMON, num_leaves=6, learning_rate=lr, lambda_l2=1.0, min_data_in_leaf=20,
                  cat_smooth=10.0, cat_l2=cat_l2, max_cat_threshold=32, min_data_per_group=100, max_cat_to_onehot=4)
    booster = lgb.train(params, lgb.Dataset(X, y, categorical_feature=[0]), num_boost_round=1)
    dump = booster.dump_model()["tree_info"][0]["tree_structure"]
    model = one_tree(X, y, growth_strategy="leafwise", max_depth=None, n_leaves=6, learning_rate=lr, l2=1.0,
                     min_samples_leaf=20, min_child_weight=1e-3, cat_smooth=10.0, cat_l2=cat_l2,
                     max_cat_threshold=32, min_data_per_group=100, max_onehot_cats=4)
    tree = model.trees[0]
    assert np.sum(tree.category_set >= 0) >= 2  # the comparison covers categorical splits
    # boosters keeps the base score apart, LightGBM adds it to the first tree's leaves
    shifted = bst.model.tree.Tree(**{**tree.arrays(), "value": tree.value + model.forest.base_scores[0]},
                                  cat_boundaries=tree.cat_boundaries, cat_bitsets=tree.cat_bitsets)
    compare_with_lightgbm(dump, shifted, 0, np.arange(len(y)), X, k, cat_l2, lr)
    if cat_l2 == 0:
        np.testing.assert_allclose(model.predict(X), booster.predict(X), rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------------
# Prediction: unseen and missing codes
# ----------------------------------------------------------------------------------

@pytest.mark.parametrize("missing_effect", [-5.0, 5.0])
def test_unseen_and_missing_codes_follow_the_default_direction(missing_effect):
    """One split on 10 codes where missing rows share the low-effect side (or the high
    one): NaN, negative codes, past the training codes (10, 33, 1e9) all land in the
    default child; a training code lands where its set says, and so does a value that
    truncates to one (2.5 is code 2, -0.5 code 0, as in LightGBM and XGBoost)."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 10, 3000).astype(float)
    effect = np.where(np.arange(10) < 3, -5.0, 5.0)
    y = effect[codes.astype(int)] + 0.1 * rng.normal(size=3000)
    miss = rng.random(3000) < 0.1
    codes[miss] = np.nan
    y[miss] = missing_effect
    tree = one_tree(codes[:, None], y, max_depth=1, cat_smooth=1.0, min_data_per_group=10).trees[0]
    assert tree.category_set[0] == 0
    low_left = left_codes(tree, 0, 10) == {0, 1, 2}
    assert low_left or left_codes(tree, 0, 10) == set(range(3, 10))
    assert bool(tree.default_left[0]) == (low_left == (missing_effect < 0))  # learned: missing joins its side
    default = tree.value[tree.left_child[0] if tree.default_left[0] else tree.right_child[0]]
    odd = np.array([np.nan, -1.0, -0.0, 2.5, 10.0, 33.0, 1e9, np.inf, -np.inf, -0.5, 9.99])[:, None]
    got = predict_tree(tree, odd, 1)
    expected = [default] * len(odd)
    low, high = (tree.left_child[0], tree.right_child[0]) if low_left else (tree.right_child[0], tree.left_child[0])
    expected[2] = expected[9] = tree.value[low]  # -0.0 and -0.5 are code 0
    expected[3] = tree.value[low]  # 2.5 is code 2
    expected[10] = tree.value[high]  # 9.99 is code 9
    np.testing.assert_array_equal(got, expected)
    seen = np.arange(10, dtype=float)[:, None]
    np.testing.assert_array_equal(predict_tree(tree, seen, 1), reference_predict([tree], 0.0, seen))
    np.testing.assert_array_equal(predict_tree(tree, odd, 1), reference_predict([tree], 0.0, odd))


# ----------------------------------------------------------------------------------
# Model file and importance
# ----------------------------------------------------------------------------------

def test_save_load_round_trip_and_importance(tmp_path):
    X, y = categorical_data(n=2000, k=40, seed=2, missing=0.05, n_numeric=2)
    ds = bst.Dataset(X, y, categorical_features=[0])
    model = bst.GBDTModel.train(ds, config=bst.GBDTConfig(n_estimators=8, cat_smooth=1.0, min_data_per_group=20))
    assert sum(int(np.sum(t.category_set >= 0)) for t in model.trees) >= 8
    query = np.vstack([X[:200], [[np.nan, 0.1, 0.2], [55.0, 0.0, 0.0], [-3.0, 1.0, 1.0], [1.5, 0.0, 0.0]]])
    expected = model.predict(query)
    np.testing.assert_array_equal(
        expected, reference_predict(model.trees, model.forest.base_scores[0], query))
    path = tmp_path / "model.npz"
    model.save(path)
    for loaded in (bst.GBDTModel.load(path), bst.GBDTModel.from_bytes(model.to_bytes()),
                   pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(loaded.predict(query), expected)
        assert_same_model(loaded, model)
    # split importance counts every split on the feature, categorical ones included
    splits = sum(int(np.sum(t.split_feature == 0)) for t in model.trees)
    assert model.feature_importance("split")[0] == splits
    gains = sum(float(t.gain[t.split_feature == 0].sum()) for t in model.trees)
    np.testing.assert_allclose(model.feature_importance("gain")[0], gains, rtol=1e-12)


def test_numeric_models_write_the_old_file_members():
    """A model without categorical splits writes exactly the members older versions
    wrote (so it loads there), and those files load here."""
    X, y = categorical_data(n=500, k=5, seed=0)
    numeric = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=2)).to_bytes()
    with zipfile.ZipFile(io.BytesIO(numeric)) as zf:
        names = {n.removesuffix(".npy") for n in zf.namelist()}
    assert not names & {"category_set", "tree_cat_sets", "cat_boundaries", "cat_bitsets"}
    model = bst.GBDTModel.from_bytes(numeric)
    assert all(np.all(t.category_set == -1) and len(t.cat_bitsets) == 0 for t in model.trees)
    np.testing.assert_array_equal(model.predict(X), reference_predict(model.trees, model.forest.base_scores[0], X))


@pytest.mark.parametrize("edit", ["set past the tree's sets", "empty set", "leaf with a set", "bad boundaries"])
def test_bad_category_arrays_are_rejected(edit):
    X, y = categorical_data(n=800, k=20, seed=3)
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[0]),
                                config=bst.GBDTConfig(n_estimators=1, max_depth=2, cat_smooth=1.0,
                                                      min_data_per_group=10))
    tree = model.trees[0]
    node = int(np.flatnonzero(tree.category_set >= 0)[0])
    if edit == "set past the tree's sets":
        cs = tree.category_set.copy()
        cs[node] = len(tree.cat_boundaries) - 1
        tree.category_set = cs
    elif edit == "empty set":
        tree.cat_boundaries = np.zeros_like(tree.cat_boundaries)
    elif edit == "leaf with a set":
        cs = tree.category_set.copy()
        cs[int(np.flatnonzero(tree.split_feature < 0)[0])] = 0
        tree.category_set = cs
    else:
        b = tree.cat_boundaries.copy()
        b[-1] += 5
        tree.cat_boundaries = b
    with pytest.raises(ValueError, match="invalid forest"):
        model.predict(X)


# ----------------------------------------------------------------------------------
# Every training path: prediction equals the training margins
# ----------------------------------------------------------------------------------

def grow_and_compare(X, y, categorical, config):
    """Grow config.n_estimators rounds with the TreeGrower and check that walking the
    trees (the prediction kernel, and the NumPy reference on some rows) gives the
    margins the rounds accumulated through the partition (bins). Returns the trees."""
    ds = bst.Dataset(X, y, categorical_features=categorical)
    mapper, binned = ds.binned(config.max_bins, config.seed, config.enable_bundling, 1)
    objective = make_objective(config.objective)
    n_out = config.objective.n_outputs
    margins = np.zeros((n_out, len(y)))
    kernel = objective.gradient_kernel(margins, y, None, np.empty((n_out, len(y), 2), np.float32), 1)
    mode = config.histogram_mode if config.histogram_mode != "auto" else "f64"
    grower = TreeGrower(binned, mapper, config, 1, kernel, margins, histogram_mode=mode)
    rounds = []
    while len(rounds) < config.n_estimators:  # blocks of rounds (fewer when they take long)
        rounds += grower.grow_rounds(len(rounds), config.n_estimators - len(rounds))
    for k in range(n_out):
        trees = [r[k] for r in rounds]
        predicted = sum(predict_tree(t, X, 1) for t in trees)
        # the same leaves, so equal up to the order of the float64 additions
        np.testing.assert_allclose(margins[k], predicted, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(reference_predict(trees, 0.0, X[:100]), predicted[:100], rtol=1e-12, atol=1e-12)
    return [t for r in rounds for t in r]


@pytest.mark.parametrize("layout", ["column", "row"])
@pytest.mark.parametrize("mode", ["f64", "i16", "i8"])
@pytest.mark.parametrize("growth", ["depthwise", "leafwise"])
def test_every_path_predicts_its_training_margins(mode, growth, layout):
    X, y = categorical_data(n=4000, k=30, seed=6, missing=0.05, n_numeric=3)
    X = np.column_stack([X, np.random.default_rng(0).integers(0, 3, len(y))])  # a second, one-vs-rest feature
    config = bst.GBDTConfig(n_estimators=5, growth_strategy=growth, n_leaves=12, max_depth=4 if growth == "depthwise"
                            else None, histogram_mode=mode, cat_smooth=2.0, min_data_per_group=20,
                            histogram_layout=layout)
    trees = grow_and_compare(X, y, [0, 4], config)
    assert sum(int(np.sum(t.category_set >= 0)) for t in trees) >= 5
    # the thread count changes nothing
    ds = bst.Dataset(X, y, categorical_features=[0, 4])
    one, two = (bst.GBDTModel.train(ds, config=config, n_threads=t) for t in (1, 2))
    assert_same_trees(two, one)


def test_multiclass_with_categorical_features():
    X, y = categorical_data(n=3000, k=25, seed=7, missing=0.02, n_numeric=2)
    classes = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])).astype(float)
    config = bst.GBDTConfig(n_estimators=4, objective=bst.Objective.softmax(3), max_depth=3, histogram_mode="f64",
                            cat_smooth=2.0, min_data_per_group=20)
    trees = grow_and_compare(X, classes, [0], config)
    assert sum(int(np.sum(t.category_set >= 0)) for t in trees) >= 3


@pytest.mark.parametrize("mode", ["f64", "i16"])
def test_thousands_of_levels(mode):
    """5,000 codes (uint16 bins, far above max_bins): trained and predicted alike, and the
    model learns the per-code effect (the numeric column alone explains little)."""
    rng = np.random.default_rng(8)
    n, k = 40_000, 5000
    codes = rng.integers(0, k, n).astype(float)
    effect = rng.normal(size=k)
    x = rng.normal(size=n)
    y = effect[codes.astype(int)] + 0.2 * x + 0.1 * rng.normal(size=n)
    X = np.column_stack([codes, x])
    mapper, binned = bst.Dataset(X, y, categorical_features=[0]).binned(256, 42, True, 1)
    assert mapper.n_bins[0] == k + 1 and binned.bins_u16.shape[0] == 1
    config = bst.GBDTConfig(n_estimators=10, growth_strategy="leafwise", max_depth=None, n_leaves=31, max_bins=256,
                            histogram_mode=mode, cat_smooth=1.0, min_data_per_group=5, max_cat_threshold=2500,
                            learning_rate=0.5)
    trees = grow_and_compare(X, y, [0], config)
    assert max(len(t.cat_bitsets) for t in trees) > 32  # sets spanning many words
    ds = bst.Dataset(X, y, categorical_features=[0])
    model = bst.GBDTModel.train(ds, config=config, n_threads=2)  # big nodes are partitioned in parallel
    residual = np.var(y - model.predict(X)) / np.var(y)
    assert residual < 0.5  # a numeric-only model cannot go below ~0.96
    serial = bst.GBDTModel.train(ds, config=config, n_threads=1)
    assert_same_trees(model, serial)


def test_codes_up_to_max_categories():
    """The largest allowed code trains (65535 bins); one more is a ValueError."""
    rng = np.random.default_rng(9)
    codes = rng.integers(0, 3, 600).astype(float)
    codes[:200] = MAX_CATEGORIES - 1
    y = (codes == MAX_CATEGORIES - 1) * 2.0 + rng.normal(size=600) * 0.1
    tree = one_tree(codes[:, None], y, max_depth=1, cat_smooth=1.0, min_data_per_group=10).trees[0]
    assert tree.category_set[0] == 0
    np.testing.assert_array_equal(predict_tree(tree, np.array([[MAX_CATEGORIES - 1.0]]), 1),
                                  reference_predict([tree], 0.0, np.array([[MAX_CATEGORIES - 1.0]])))
    codes[0] = MAX_CATEGORIES
    with pytest.raises(ValueError, match="categorical feature 0"):
        one_tree(codes[:, None], y)


def test_categorical_features_are_never_bundled():
    """Sparse one-hot-like categorical columns stay in their own columns (EFB would
    otherwise bundle them), and the model is the one trained without bundling."""
    rng = np.random.default_rng(10)
    n = 2000
    X = np.zeros((n, 4))
    which = rng.integers(0, 4, n)
    X[np.arange(n), which] = rng.integers(1, 6, n)
    y = X @ np.array([1.0, -1.0, 0.5, 2.0]) + 0.1 * rng.normal(size=n)
    ds = bst.Dataset(X, y, categorical_features=[0, 1])
    _, binned = ds.binned(256, 42, True, 1)
    assert binned.feature_column[0] != binned.feature_column[1]
    assert not binned.is_bundled(0) and not binned.is_bundled(1)
    cfg = bst.GBDTConfig(n_estimators=3, cat_smooth=1.0, min_data_per_group=10, histogram_mode="f64")
    a = bst.GBDTModel.train(ds, config=cfg)
    b = bst.GBDTModel.train(ds, config=cfg.replace(enable_bundling=False))
    assert_same_trees(b, a)


# ----------------------------------------------------------------------------------
# Damaged model files
# ----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def categorical_model_bytes() -> bytes:
    X, y = categorical_data(n=1500, k=70, seed=11, missing=0.05, n_numeric=2)
    cfg = bst.GBDTConfig(n_estimators=3, max_depth=3, cat_smooth=1.0, min_data_per_group=10)
    return bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[0]), config=cfg).to_bytes()


CATEGORY_MEMBERS = ("category_set", "tree_cat_sets", "cat_boundaries", "cat_bitsets")


@settings(max_examples=int(os.environ.get("BOOSTERS_FUZZ_EXAMPLES", "0")) or 150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_damaged_category_arrays_are_rejected_or_predict_like_the_reference(data):
    """A categorical model file with one category array changed (an entry set to another
    value, or the array cut or lengthened) is rejected with the one ValueError, or loads
    and predicts exactly as the NumPy walk of its trees (which indexes the sets and
    would fail on arrays the kernel could read out of bounds)."""
    with np.load(io.BytesIO(categorical_model_bytes())) as z:
        arrays = {name: z[name] for name in z.files}
    name = data.draw(st.sampled_from(CATEGORY_MEMBERS))
    a = arrays[name].copy()
    how = data.draw(st.sampled_from(["set", "cut", "extend"]))
    if how == "set" and len(a):
        i = data.draw(st.integers(0, len(a) - 1))
        lo, hi = (0, 2**32 - 1) if a.dtype == np.uint32 else (-3, 3000)
        a[i] = data.draw(st.integers(lo, hi))
    elif how == "cut" and len(a):
        a = a[:data.draw(st.integers(0, len(a) - 1))]
    else:
        a = np.concatenate([a, np.full(data.draw(st.integers(1, 3)), data.draw(st.integers(0, 5)), a.dtype)])
    arrays[name] = a
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    try:
        model = bst.GBDTModel.from_bytes(buf.getvalue())
    except ValueError as exc:
        assert str(exc).startswith("not a valid boosters model: "), exc
        event("rejected")
        return
    event("loaded")
    X, _ = categorical_data(n=60, k=70, seed=12, missing=0.1, n_numeric=2)
    X[:6, 0] = [80.0, 2000.0, -1.0, 3.5, 1e12, np.nan]
    np.testing.assert_array_equal(model.predict(X), reference_predict(model.trees, model.forest.base_scores[0], X))


# ----------------------------------------------------------------------------------
# The NumPy reference grower
# ----------------------------------------------------------------------------------

def reference_data(seed, n=3000):
    """Codes of 40 and 3 categories (NaN 5%), small-integer numeric features (NaN 5%):
    both sides bin them alike."""
    rng = np.random.default_rng(seed)
    wide = rng.choice(40, n, p=np.linspace(1, 3, 40) / np.linspace(1, 3, 40).sum()).astype(float)
    narrow = rng.integers(0, 3, n).astype(float)
    numeric = rng.integers(0, 30, (n, 2)).astype(float)
    y = rng.normal(size=40)[wide.astype(int)] + np.array([0.0, 1.0, -1.0])[narrow.astype(int)] \
        + 0.1 * numeric[:, 0] - 0.05 * numeric[:, 1] + 0.3 * rng.normal(size=n)
    X = np.column_stack([numeric[:, 0], wide, narrow, numeric[:, 1]])
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, y.astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("case", [
    dict(max_depth=4),
    dict(leafwise=True, max_depth=None, n_leaves=20, min_samples_leaf=15),
    dict(max_depth=5, cat_smooth=3.0, cat_l2=1.0, min_data_per_group=30, max_cat_threshold=6, l2=0.5),
    dict(objective="logistic", max_depth=4, cat_smooth=5.0, min_data_per_group=50),
], ids=["depthwise", "leafwise", "small-groups", "logistic"])
def test_trees_equal_the_naive_reference(case):
    """Whole trees against naive_grower.py (an independent NumPy implementation of the
    documented rules): structure, row counts, default directions and category sets
    exactly; values, covers and gains to float64 rounding (as test_naive_grower.py)."""
    from support import naive_grower as naive
    from support.matched_params import boosters_config

    X, y = reference_data(seed=len(str(case)))
    if case.get("objective") == "logistic":
        y = (y > np.median(y)).astype(float)
    p = naive.Params(categorical=(1, 2), **{"learning_rate": 0.3, **case})
    extra = dict(max_onehot_cats=p.max_onehot_cats, cat_smooth=p.cat_smooth, cat_l2=p.cat_l2,
                 max_cat_threshold=p.max_cat_threshold, min_data_per_group=p.min_data_per_group)
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[1, 2]), boosters_config(p, 4, **extra),
                                n_threads=2)
    base, trees, margins, values = naive.train(X, y, p, 4)
    assert model.n_trees == len(trees)
    n_categorical = 0
    for t, (ours, ref) in enumerate(zip(model.trees, trees)):
        label = f"tree {t}"
        assert ours.n_nodes == ref.n_nodes, label
        for name in ("split_feature", "threshold_bin", "default_left", "left_child", "right_child", "n_samples"):
            np.testing.assert_array_equal(getattr(ours, name), getattr(ref, name), err_msg=f"{label}: {name}")
        for i, node in enumerate(ref.nodes):
            if node.left_bins is not None:
                n_categorical += 1
                n_codes = len(values[node.feature])
                assert left_codes(ours, i, n_codes) == {b - 1 for b in node.left_bins if b > 0}, f"{label} node {i}"
            else:
                assert ours.category_set[i] == -1
        np.testing.assert_allclose(ours.cover, ref.cover, rtol=1e-12, err_msg=f"{label}: cover")
        value_tol = 1e-12 * p.learning_rate * ref.abs_grad / (ref.cover + p.l2) + 1e-300
        assert np.all(np.abs(ours.value - ref.value) <= value_tol), f"{label}: values"
        np.testing.assert_allclose(ours.gain, ref.gain, rtol=0, atol=1e-9 * max(1.0, np.abs(ref.gain).max()))
    assert n_categorical >= 4  # the comparison covers categorical splits
    np.testing.assert_allclose(model.predict_raw(X).reshape(margins.shape), margins, rtol=1e-10, atol=1e-10)
