"""Linear leaves (`GBDTConfig(linear_leaves=True)`, LightGBM's linear_tree): each leaf's
Newton fit against a naive NumPy solve, prediction against a naive per-row loop (NaN
fallback included), the training margins against the model's predictions, quality
against LightGBM's linear trees, and the model file."""

import io
import json
import pickle

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import boosters as bst
from boosters.callbacks import record_evaluation
from boosters.model.forest import Forest
from boosters.model.prediction import predict_tree
from boosters.model.tree import Tree
from boosters.training.linear_leaves import newton_coefficients, path_features
from support.tree_compare import assert_same_trees


def piecewise_linear(n, seed=0, nan_share=0.0, step=None):
    """A continuous piecewise-linear target with kinks away from 0 (LightGBM always puts
    a bin edge at 0, boosters does not) and a slope in x0 that flips with x2: constant
    leaves need many splits to follow it, linear leaves few. `step`: features rounded to
    multiples of it (few distinct values: both libraries give each its own bin)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 4))
    if step is not None:
        X = np.round(X / step) * step
    y = (3 * np.maximum(X[:, 0] - 0.37, 0) - 1.5 * np.maximum(0.5 - X[:, 1], 0) + X[:, 0] * np.sign(X[:, 2] - 0.2)
         + 0.5 * X[:, 2] + 0.1 * rng.normal(size=n))
    X[rng.random(X.shape) < nan_share] = np.nan
    return X, y


def rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def naive_tree_output(tree, x):
    """One tree's output for one row, walking its nodes in Python."""
    node = 0
    while tree.split_feature[node] >= 0:
        v = x[tree.split_feature[node]]
        left = bool(tree.default_left[node]) if np.isnan(v) else v <= tree.threshold[node]
        node = tree.left_child[node] if left else tree.right_child[node]
    start = int(tree.linear_n_terms[:node].sum())
    features = tree.linear_features[start:start + tree.linear_n_terms[node]]
    coefs = tree.linear_coefs[start:start + tree.linear_n_terms[node]]
    if not np.all(np.isfinite(x[features])):
        return tree.value[node]
    return tree.linear_const[node] + float(np.dot(coefs, x[features]))


def naive_margins(model, X):
    return model.forest.base_scores[0] + np.array([sum(naive_tree_output(t, x) for t in model.trees) for x in X])


def test_prediction_matches_a_naive_walk_with_nan_fallback():
    X, y = piecewise_linear(1500, nan_share=0.1)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=8, learning_rate=0.2,
                                                                  linear_leaves=True))
    assert all(t.is_linear for t in model.trees)
    assert sum(t.linear_n_terms.sum() for t in model.trees) > 50  # the leaves do have terms
    Xt, _ = piecewise_linear(300, seed=1, nan_share=0.2)
    Xt[:5, 1] = np.inf  # +-inf is missing too: the constant
    Xt[5:10, 2] = -np.inf
    # the same float64 sums in another order: 1e-12
    np.testing.assert_allclose(model.predict_raw(Xt), naive_margins(model, Xt), rtol=0, atol=1e-12)


def test_a_leaf_outputs_its_linear_model_or_on_a_non_finite_feature_its_constant():
    """A stump on f0 (NaN goes left): leaf 1 is 0.5 + 2 f1 (constant 1), leaf 2 is
    -1 + f0 + 3 f1 (constant 2)."""
    tree = Tree([0, -1, -1], [0.0, 0.0, 0.0], [1, 0, 0], [1, 0, 0], [1, -1, -1], [2, -1, -1], [0.0, 1.0, 2.0],
                [1.0, 0.0, 0.0], [2.0, 1.0, 1.0], [2, 1, 1], linear_const=[0.0, 0.5, -1.0], linear_n_terms=[0, 1, 2],
                linear_features=[1, 0, 1], linear_coefs=[2.0, 1.0, 3.0])
    X = np.array([[-1, 2], [-1, np.nan], [1, 2], [1, np.inf], [1, -np.inf], [np.nan, 1], [np.nan, np.nan]])
    expected = [4.5, 1.0, 6.0, 2.0, 2.0, 2.5, 1.0]
    np.testing.assert_array_equal(predict_tree(tree, X, 1), expected)
    forest = Forest(1, np.array([0.25]))
    forest.add(tree, 0)
    forest.add(Tree.leaf(-0.5, 1.0, 2), 0)  # a constant tree beside it: its value
    np.testing.assert_array_equal(forest.predict_margins(X, 1)[:, 0], np.array(expected) + 0.25 - 0.5)


@pytest.mark.parametrize("l2, weighted, nan_share", [(0.0, False, 0.0), (2.0, True, 0.1)])
def test_leaf_fit_is_the_newton_step_of_a_naive_solve(l2, weighted, nan_share):
    """Round 2's tree (squared error: g = margin - y, h = 1, times the weight): each leaf's
    intercept and coefficients solve (Z'HZ + l2 D) beta = -Z'g over its rows without
    non-finite values in the leaf's features, times the learning rate."""
    X, y = piecewise_linear(2000, nan_share=nan_share)
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=len(y)) if weighted else None
    lr = 0.3
    cfg = bst.GBDTConfig(n_estimators=2, learning_rate=lr, linear_leaves=True, linear_l2=l2, max_depth=3,
                         subsample=1.0)  # the solve sees every row
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), cfg)
    first = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), cfg.replace(n_estimators=1))
    weights = np.ones(len(y)) if w is None else w
    g = ((first.predict_raw(X) - y) * weights).astype(np.float32)  # the kernel's float32 gradients
    h = weights.astype(np.float32)
    tree = model.trees[1]
    leaves = model.predict_leaf(X)[:, 1]
    paths = path_features(tree, np.ones(X.shape[1], dtype=bool))
    offsets = np.concatenate([[0], np.cumsum(tree.linear_n_terms)])
    n_checked = 0
    for leaf in np.flatnonzero(tree.is_leaf):
        features = paths[leaf]
        rows = np.flatnonzero(leaves == leaf)
        rows = rows[np.all(np.isfinite(X[np.ix_(rows, features)]), axis=1)]
        if len(rows) < len(features) + 1:
            assert tree.linear_n_terms[leaf] == 0 and tree.linear_const[leaf] == tree.value[leaf]
            continue
        Z = np.hstack([X[np.ix_(rows, features)], np.ones((len(rows), 1))])
        A = Z.T @ (Z * h[rows, None].astype(np.float64))
        A[:len(features), :len(features)] += l2 * np.eye(len(features))
        beta = lr * np.linalg.solve(A, -Z.T @ g[rows].astype(np.float64))
        got = tree.linear_coefs[offsets[leaf]:offsets[leaf + 1]]
        assert list(tree.linear_features[offsets[leaf]:offsets[leaf + 1]]) == features
        # the same float64 solve, in another order (lstsq vs solve): 1e-9 of the values' size
        np.testing.assert_allclose(got, beta[:-1], rtol=1e-9, atol=1e-9 * np.abs(beta).max())
        assert tree.linear_const[leaf] == pytest.approx(beta[-1], rel=1e-9, abs=1e-9 * np.abs(beta).max())
        n_checked += 1
    assert n_checked >= 4


def test_first_round_keeps_constant_leaves_as_lightgbm():
    X, y = piecewise_linear(1000)
    linear = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=1, linear_leaves=True))
    constant = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=1))
    tree = linear.trees[0]
    assert tree.linear_n_terms.sum() == 0
    np.testing.assert_array_equal(tree.linear_const[tree.is_leaf], tree.value[tree.is_leaf])
    np.testing.assert_array_equal(linear.predict(X), constant.predict(X))


def test_l1_coordinate_descent_meets_the_optimality_conditions():
    """beta minimises 1/2 b'Ab + c'b + l1 |b[:-1]|: the gradient A beta + c is -l1 sign(beta_j)
    on nonzero coefficients, within [-l1, l1] on zero ones, 0 on the intercept."""
    rng = np.random.default_rng(0)
    Z = np.hstack([rng.normal(size=(50, 3)), np.ones((50, 1))])
    A, c = Z.T @ Z, Z.T @ rng.normal(size=50) * 5
    for l1 in (0.5, 5.0, 50.0):
        beta = newton_coefficients(A, c, l1)
        grad = A @ beta + c
        nonzero = beta[:-1] != 0
        np.testing.assert_allclose(grad[:-1][nonzero], -l1 * np.sign(beta[:-1][nonzero]), atol=1e-8)
        assert np.all(np.abs(grad[:-1][~nonzero]) <= l1 + 1e-8)
        assert abs(grad[-1]) < 1e-8
    assert newton_coefficients(A, c, 1e6)[:-1].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(newton_coefficients(A, c, 0.0), np.linalg.solve(A, -c), rtol=1e-10)


def test_large_linear_l1_leaves_no_terms():
    X, y = piecewise_linear(1000)
    model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, linear_leaves=True,
                                                                  linear_l1=1e9))
    assert sum(t.linear_n_terms.sum() for t in model.trees) == 0
    some = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, linear_leaves=True,
                                                                 linear_l1=2.0))
    dense = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, linear_leaves=True))
    assert 0 < sum(t.linear_n_terms.sum() for t in some.trees) < sum(t.linear_n_terms.sum() for t in dense.trees)


LGB_MATCHED = dict(learning_rate=0.1, num_leaves=8, reg_lambda=0.0, min_child_weight=0.0, min_child_samples=1,
                   min_data_in_bin=1, verbose=-1)


@pytest.mark.parametrize("linear_l2", [0.0, 2.0])
def test_same_model_as_lightgbm_when_both_bin_alike(linear_l2):
    """101 distinct values per feature: each its own bin in both libraries, so both grow
    the same trees and fit the same linear leaves; the predictions agree to 1e-6 after 20
    rounds on the training rows (LightGBM keeps raw values, gradients and the normal
    equations' sums in float32: relative differences of ~1e-7 per leaf). Held-out rows:
    a few (5 of 1000 here) go another way at a threshold in LightGBM, whose bins see
    float32 values and whose thresholds are float64."""
    X, y = piecewise_linear(3000, step=0.04)
    Xt, yt = X[:2000], y[:2000]
    cfg = bst.GBDTConfig(n_estimators=20, learning_rate=0.1, growth_strategy="leafwise", n_leaves=8, l2=0.0,
                         min_child_weight=0.0, min_samples_leaf=1, subsample=1.0, linear_leaves=True,
                         linear_l2=linear_l2)
    ours = bst.GBDTModel.train(bst.Dataset(Xt, yt), cfg)
    theirs = lgb.LGBMRegressor(n_estimators=20, linear_tree=True, linear_lambda=linear_l2, **LGB_MATCHED).fit(Xt, yt)
    assert sum(t.linear_n_terms.sum() for t in ours.trees) > 100
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=0, atol=1e-6)
    assert np.mean(np.abs(ours.predict(X[2000:]) - theirs.predict(X[2000:])) < 1e-6) > 0.99


def test_better_than_constant_leaves_and_close_to_lightgbm():
    """Held-out RMSE on piecewise-linear data, matched settings (leaf-wise, 8 leaves, 50
    rounds at 0.1, no leaf regularisation). Linear leaves must beat constant leaves by
    far (< 0.6x), and be within 10% of LightGBM's linear_tree (measured: 0.159 vs 0.158
    here; over 5 seeds 0.175 vs 0.176 on average, each seed within 7%: the two bin
    differently)."""
    X, y = piecewise_linear(4000)
    Xt, yt, Xv, yv = X[:3000], y[:3000], X[3000:], y[3000:]
    cfg = bst.GBDTConfig(n_estimators=50, learning_rate=0.1, growth_strategy="leafwise", n_leaves=8, l2=0.0,
                         min_child_weight=0.0, min_samples_leaf=1, subsample=1.0, linear_leaves=True)
    ours = rmse(bst.GBDTModel.train(bst.Dataset(Xt, yt), cfg).predict(Xv), yv)
    ours_constant = rmse(bst.GBDTModel.train(bst.Dataset(Xt, yt), cfg.replace(linear_leaves=False)).predict(Xv), yv)
    params = dict(n_estimators=50, learning_rate=0.1, num_leaves=8, reg_lambda=0.0, min_child_weight=0.0,
                  min_child_samples=1, verbose=-1)
    theirs = rmse(lgb.LGBMRegressor(linear_tree=True, **params).fit(Xt, yt).predict(Xv), yv)
    theirs_constant = rmse(lgb.LGBMRegressor(**params).fit(Xt, yt).predict(Xv), yv)
    assert ours < 0.6 * ours_constant and theirs < 0.6 * theirs_constant
    assert ours <= 1.10 * theirs, (ours, theirs)


@pytest.mark.slow  # a longer variant of the test above (registered on main: deselected by default)
def test_close_to_lightgbm_with_linear_lambda_and_missing_values():
    """linear_l2 is LightGBM's linear_lambda; NaN rows use the constants in both. Held-out
    RMSE within 5% of LightGBM's (measured: 0.613 vs 0.598)."""
    X, y = piecewise_linear(4000, seed=2, nan_share=0.05)
    Xt, yt, Xv, yv = X[:3000], y[:3000], X[3000:], y[3000:]
    cfg = bst.GBDTConfig(n_estimators=60, learning_rate=0.1, growth_strategy="leafwise", n_leaves=8, l2=0.0,
                         min_child_weight=0.0, min_samples_leaf=1, subsample=1.0, linear_leaves=True, linear_l2=5.0)
    ours = rmse(bst.GBDTModel.train(bst.Dataset(Xt, yt), cfg).predict(Xv), yv)
    theirs = rmse(lgb.LGBMRegressor(linear_tree=True, linear_lambda=5.0, n_estimators=60, learning_rate=0.1,
                                    num_leaves=8, reg_lambda=0.0, min_child_weight=0.0, min_child_samples=1,
                                    verbose=-1).fit(Xt, yt).predict(Xv), yv)
    assert ours <= 1.05 * theirs, (ours, theirs)


SETTINGS = {
    "depthwise": dict(),
    "leafwise_i16": dict(growth_strategy="leafwise", n_leaves=12, histogram_mode="i16"),
    "subsample": dict(subsample=0.6),
    "goss": dict(goss_top_rate=0.3, goss_other_rate=0.2, learning_rate=0.5),
    "colsample": dict(colsample_bytree=0.7, l2=0.0, linear_l2=1.0, linear_l1=0.5),
}


@pytest.mark.parametrize("setting", SETTINGS)
def test_training_margins_are_the_models_predictions(setting):
    """The training rows' scores after the last round (their margins, updated with the
    linear leaves) equal the model's predictions on them: the update follows prediction
    (1e-12: the same sums in another order)."""
    X, y = piecewise_linear(1500, nan_share=0.05)
    w = np.random.default_rng(1).uniform(0.5, 2, size=len(y))
    scores = {}
    cfg = bst.GBDTConfig(**{"n_estimators": 6, "learning_rate": 0.3, "linear_leaves": True, **SETTINGS[setting]})
    model = bst.GBDTModel.train(bst.Dataset(X, y, weights=w), cfg, callbacks=[record_evaluation(scores)])
    expected = np.sqrt(np.average((model.predict(X) - y) ** 2, weights=w))
    assert scores["train"]["rmse"][-1] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("sampling", [dict(subsample=0.6), dict(goss_top_rate=0.3, goss_other_rate=0.2)])
def test_leaves_are_fitted_on_the_rounds_sampled_rows(monkeypatch, sampling):
    """With row sampling a leaf's model is fitted on the rows its tree was grown on: per
    leaf, the rows handed to the fit are the leaf's `n_samples` training rows."""
    from boosters.training.linear_leaves import LinearLeafFitter
    seen = []
    fit_tree = LinearLeafFitter._fit_tree

    def spy(self, tree, k, leaf_of_row, first_round, learning_rate, rows):
        seen.append((tree, np.bincount(leaf_of_row[rows], minlength=tree.n_nodes), len(rows)))
        return fit_tree(self, tree, k, leaf_of_row, first_round, learning_rate, rows)

    monkeypatch.setattr(LinearLeafFitter, "_fit_tree", spy)
    X, y = piecewise_linear(1000)
    cfg = bst.GBDTConfig(**{"n_estimators": 5, "learning_rate": 0.5, "linear_leaves": True, **sampling})
    bst.GBDTModel.train(bst.Dataset(X, y), cfg)
    sizes = [n for _, _, n in seen]
    assert min(sizes) == 600 if "subsample" in sampling else sizes[:2] == [1000, 1000] and sizes[2:] == [500] * 3
    for tree, counts, _ in seen:
        np.testing.assert_array_equal(counts[tree.is_leaf], tree.n_samples[tree.is_leaf])


def test_categorical_features_are_not_regressors():
    rng = np.random.default_rng(0)
    n = 2000
    colour = rng.integers(0, 5, n)
    x = rng.uniform(-1, 1, n)
    y = np.array([3.0, -1.0, 0.5, 2.0, -2.0])[colour] * x + 0.05 * rng.normal(size=n)
    frame = pd.DataFrame({"colour": pd.Categorical(np.array(list("abcde"))[colour]), "x": x})
    model = bst.GBDTModel.train(bst.Dataset(frame, y), bst.GBDTConfig(n_estimators=30, learning_rate=0.3,
                                                                      linear_leaves=True))
    assert any(np.any(t.category_set >= 0) for t in model.trees)
    features = np.concatenate([t.linear_features for t in model.trees])
    assert set(features.tolist()) == {1}  # "x" only
    assert rmse(model.predict(frame), y) < 0.1
    scores = {}
    bst.GBDTModel.train(bst.Dataset(frame, y), model.config, callbacks=[record_evaluation(scores)])
    assert scores["train"]["rmse"][-1] == pytest.approx(rmse(model.predict(frame), y), rel=1e-12)


def test_softmax_trains_each_class_linear():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(1500, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-1, 1]).astype(float)
    scores = {}
    cfg = bst.GBDTConfig(objective=bst.Objective.softmax(3), n_estimators=5, learning_rate=0.3, linear_leaves=True)
    model = bst.GBDTModel.train(bst.Dataset(X, y), cfg, callbacks=[record_evaluation(scores)])
    assert model.n_trees == 15 and all(t.is_linear for t in model.trees)
    p = model.predict(X)
    logloss = -np.mean(np.log(p[np.arange(len(y)), y.astype(int)]))
    assert scores["train"]["multiclass_logloss"][-1] == pytest.approx(logloss, rel=1e-10)


def test_early_stopping_keeps_the_best_linear_round():
    X, y = piecewise_linear(3000, nan_share=0.02)
    cfg = bst.GBDTConfig(n_estimators=200, learning_rate=0.5, linear_leaves=True, early_stopping_rounds=5)
    model = bst.GBDTModel.train(bst.Dataset(X[:2000], y[:2000]), cfg, val_set=bst.Dataset(X[2000:], y[2000:]))
    assert model.n_trees == model.best_iteration + 1 < 200
    assert model.best_score == pytest.approx(rmse(model.predict(X[2000:]), y[2000:]), rel=1e-12)


def test_result_does_not_depend_on_threads():
    X, y = piecewise_linear(3000, nan_share=0.05)
    cfg = bst.GBDTConfig(n_estimators=5, linear_leaves=True, subsample=0.8)
    one = bst.GBDTModel.train(bst.Dataset(X, y), cfg, n_threads=1)
    two = bst.GBDTModel.train(bst.Dataset(X, y), cfg, n_threads=2)
    assert one.to_bytes() == two.to_bytes()
    np.testing.assert_array_equal(one.predict(X, n_threads=1), one.predict(X, n_threads=2))


@pytest.fixture(scope="module")
def linear_model():
    X, y = piecewise_linear(800, nan_share=0.05)
    cfg = bst.GBDTConfig(n_estimators=4, learning_rate=0.3, linear_leaves=True, linear_l1=0.01, linear_l2=0.5)
    return bst.GBDTModel.train(bst.Dataset(X, y, feature_names=list("abcd")), cfg), X


def test_save_load_pickle_round_trip(linear_model, tmp_path):
    model, X = linear_model
    path = tmp_path / "linear.npz"
    model.save(path)
    for loaded in (bst.GBDTModel.load(path), bst.GBDTModel.from_bytes(model.to_bytes()),
                   pickle.loads(pickle.dumps(model))):
        assert loaded.config == model.config and loaded.config.linear_leaves
        assert_same_trees(loaded, model)
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert bst.GBDTModel.from_bytes(model.to_bytes()).to_bytes() == model.to_bytes()


def test_a_constant_model_file_has_no_linear_keys():
    X, y = piecewise_linear(300)
    data = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=2)).to_bytes()
    header, arrays = decode(data)
    assert not any(name.startswith("linear") for name in arrays)
    assert not any(name.startswith("linear") for name in header["config"])


def decode(data: bytes):
    with np.load(io.BytesIO(data)) as z:
        arrays = {name: z[name] for name in z.files}
    return json.loads(arrays.pop("header").tobytes()), arrays


def encode(header, arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **arrays)
    return buf.getvalue()


def internal_node_with_a_term(arrays):
    n_terms = arrays["linear_n_terms"].copy()
    n_terms[0] = 1  # the first tree's root is split
    return n_terms


MUTATIONS = {
    "coefficient NaN": (lambda a: {"linear_coefs": np.where(np.arange(len(a["linear_coefs"])) == 0, np.nan,
                                                             a["linear_coefs"])}, "linear_coefs"),
    "intercept inf": (lambda a: {"linear_const": np.full_like(a["linear_const"], np.inf)}, "linear_const"),
    "terms at an internal node": (lambda a: {"linear_n_terms": internal_node_with_a_term(a)}, "linear_n_terms"),
    "negative feature": (lambda a: {"linear_features": -np.ones_like(a["linear_features"])}, "linear_features"),
    "feature past the model's": (lambda a: {"linear_features": np.full_like(a["linear_features"], 9)}, "feature"),
    "fewer coefficients": (lambda a: {"linear_coefs": a["linear_coefs"][:-1]}, "linear_coefs"),
    "wrong dtype": (lambda a: {"linear_n_terms": a["linear_n_terms"].astype(np.int64)}, "linear_n_terms"),
    "a member missing": (lambda a: {"linear_coefs": None}, "come together"),
}


@pytest.mark.parametrize("case", MUTATIONS)
def test_damaged_linear_arrays_are_rejected(linear_model, case):
    model, _ = linear_model
    header, arrays = decode(model.to_bytes())
    change, message = MUTATIONS[case]
    for name, value in change(arrays).items():
        if value is None:
            del arrays[name]
        else:
            arrays[name] = value
    with pytest.raises(ValueError, match=message):
        bst.GBDTModel.from_bytes(encode(header, arrays))


def test_config_and_arrays_must_agree(linear_model):
    model, _ = linear_model
    header, arrays = decode(model.to_bytes())
    for name in [n for n in arrays if n.startswith("linear")]:
        del arrays[name]
    with pytest.raises(ValueError, match="linear_leaves"):
        bst.GBDTModel.from_bytes(encode(header, arrays))


def test_sparse_prediction_equals_dense(linear_model):
    model, X = linear_model
    dense = np.nan_to_num(X)
    dense[dense < -1] = 0.0  # stored and implicit zeros
    for matrix in (sp.csr_matrix(dense), sp.csc_matrix(dense)):
        np.testing.assert_array_equal(model.predict(matrix), model.predict(dense))


def test_sparse_training_data_is_refused():
    X, y = piecewise_linear(200)
    with pytest.raises(ValueError, match="linear_leaves needs dense training data"):
        bst.GBDTModel.train(bst.Dataset(sp.csr_matrix(X), y), bst.GBDTConfig(n_estimators=2, linear_leaves=True))


def test_monotone_constraints_are_refused():
    with pytest.raises(ValueError, match="linear_leaves cannot be combined with monotone_constraints"):
        bst.GBDTConfig(linear_leaves=True, monotone_constraints=(1, 0))
    assert bst.GBDTConfig(linear_leaves=True, monotone_constraints=(0, 0)).linear_leaves


def test_shap_is_refused_and_the_table_shows_the_models(linear_model):
    model, X = linear_model
    with pytest.raises(ValueError, match="linear leaves"):
        model.shap_values(X[:2])
    with pytest.raises(ValueError, match="linear leaves"):
        model.shap_interaction_values(X[:2])
    table = model.trees_to_dataframe()
    leaves = table[table["split_feature"].isna()]
    assert leaves["linear_terms"].map(len).sum() == sum(t.linear_n_terms.sum() for t in model.trees)
    tree = model.trees[-1]
    last = leaves[leaves["tree_index"] == model.n_trees - 1]
    assert last["linear_const"].tolist() == tree.linear_const[tree.is_leaf].tolist()
    assert set().union(*last["linear_terms"].map(set)) <= set("abcd")
    assert table.loc[~table["split_feature"].isna(), "linear_terms"].isna().all()


@pytest.mark.parametrize("changes", [dict(booster="dart"), dict(objective=bst.Objective.absolute()),
                                     dict(objective=bst.Objective.pinball([0.1, 0.9]))])
def test_linear_leaves_refuse_dart_and_renewed_leaves(changes):
    """DART rescales leaf constants and absolute/pinball renew them to residual quantiles;
    neither knows a leaf's linear model: a ValueError when the config is made."""
    with pytest.raises(ValueError, match="linear_leaves cannot be combined"):
        bst.GBDTConfig(linear_leaves=True, **changes)
    bst.GBDTConfig(linear_leaves=False, **changes)  # each alone is fine
