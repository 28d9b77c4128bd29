"""Multi-target regression: a y of shape (n_rows, k) trains k tree groups in one model.

Each output's gradients read only its own column and every output starts from its own
mean, so output j's trees are exactly the trees of a model trained on column j alone
(same seed: the row sample of a round is shared by its trees). That is the main check:
exact equality with k single-target models, then the shapes of everything a model
returns, the metric (mean over the targets), early stopping, save/load, the sklearn
estimator, and quality against LightGBM (which has no multi-target trees: one model per
column, as scikit-learn's MultiOutputRegressor).
"""

import json
import pickle

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.multioutput import MultiOutputRegressor

import boosters as bst
from boosters.callbacks import record_evaluation
from boosters.io.validation import objective_from_json
from boosters.sklearn import GBDTRegressor
from boosters.objectives import evaluate
from support.tree_compare import assert_same_tree_list


def targets_data(n=400, n_features=5, seed=0):
    """Three targets of different shapes and scales (x0 step, smooth x1 * x2, large-scale x3)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    Y = np.column_stack([np.where(X[:, 0] > 0, 1.0, -1.0), np.sin(X[:, 1]) * X[:, 2], 50.0 * X[:, 3]])
    return X, Y + 0.1 * rng.normal(size=Y.shape)


@pytest.mark.parametrize("growth, extra", [
    ("depthwise", {}),
    ("leafwise", {}),
    ("depthwise", dict(subsample=0.7)),   # one row sample per round, shared by the round's trees
    ("leafwise", dict(l1=0.5, min_child_weight=3.0)),
])
def test_each_output_is_the_single_target_model_exactly(growth, extra):
    X, Y = targets_data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(X))
    config = bst.GBDTConfig(n_estimators=8, learning_rate=0.2, growth_strategy=growth, n_leaves=8,
                            histogram_mode="f64", **extra)
    multi = bst.GBDTModel.train(bst.Dataset(X, Y, weights=w), config, n_threads=2)
    assert multi.objective == bst.Objective.squared(n_targets=3)
    assert multi.n_trees == 8 * 3
    margins = multi.predict_raw(X)
    for j in range(3):
        single = bst.GBDTModel.train(bst.Dataset(X, Y[:, j], weights=w), config, n_threads=2)
        assert_same_tree_list(multi.trees[j::3], single.trees)  # output j's trees, exactly
        assert multi.forest.base_scores[j] == single.forest.base_scores[0]
        np.testing.assert_array_equal(margins[:, j], single.predict_raw(X))


def test_categorical_features_and_quantized_histograms_train_every_target():
    """Quantized rounding and column samples are seeded per tree (round * k + output), so
    the trees differ from single-target models' there: compare quality instead. Each
    target's training RMSE must fall well below its standard deviation (at most 0.3 x)."""
    X, Y = targets_data(n=2000)
    X[:, 4] = np.random.default_rng(2).integers(0, 6, size=len(X))
    Y[:, 0] += X[:, 4]  # a categorical effect
    for mode in ("i16", "i8"):
        config = bst.GBDTConfig(n_estimators=40, learning_rate=0.3, histogram_mode=mode, colsample_bytree=0.8)
        model = bst.GBDTModel.train(bst.Dataset(X, Y, categorical_features=[4]), config, n_threads=2)
        rmse = np.sqrt(((model.predict(X) - Y) ** 2).mean(axis=0))
        assert np.all(rmse < 0.3 * Y.std(axis=0)), (mode, rmse)


def test_shapes_of_predictions_explanations_and_tables():
    X, Y = targets_data(n=200)
    model = bst.GBDTModel.train(bst.Dataset(X, Y), bst.GBDTConfig(n_estimators=4, max_depth=3))
    n, k, f = len(X), 3, X.shape[1]
    assert model.predict(X).shape == model.predict_raw(X).shape == (n, k)
    np.testing.assert_array_equal(model.predict(X), model.predict_raw(X))  # identity link
    phi = model.shap_values(X[:20])
    assert phi.shape == (20, k, f + 1)  # as softmax: per output, the features then the bias
    np.testing.assert_allclose(phi.sum(axis=2), model.predict_raw(X[:20]), rtol=1e-10, atol=1e-10)
    assert model.shap_interaction_values(X[:5]).shape == (5, k, f + 1, f + 1)
    leaves = model.predict_leaf(X)
    assert leaves.shape == (n, 4 * k)
    margin_1 = model.forest.base_scores[1] + sum(model.trees[t].value[leaves[:, t]] for t in range(1, 4 * k, k))
    np.testing.assert_allclose(margin_1, model.predict_raw(X)[:, 1], rtol=1e-12)
    assert model.feature_importance("split").shape == (f,)
    table = model.trees_to_dataframe()
    assert sorted(table["tree_index"].unique()) == list(range(4 * k))
    assert len(table) == sum(t.n_nodes for t in model.trees)


def test_metric_is_the_mean_over_targets_of_each_targets_metric():
    rng = np.random.default_rng(0)
    y, margins, w = rng.normal(size=(50, 3)), rng.normal(size=(50, 3)), rng.uniform(0.1, 2.0, size=50)
    naive_rmse = np.mean([np.sqrt(np.average((margins[:, j] - y[:, j]) ** 2, weights=w)) for j in range(3)])
    naive_mae = np.mean([np.average(np.abs(margins[:, j] - y[:, j]), weights=w) for j in range(3)])
    # float64 sums of 50 terms: agreement to 1e-12 relative
    assert evaluate(bst.Metric.rmse(), y, margins, w) == pytest.approx(naive_rmse, rel=1e-12)
    assert evaluate(bst.Metric.mae(), y, margins, w) == pytest.approx(naive_mae, rel=1e-12)
    assert evaluate(bst.Metric.rmse(), y, margins) == pytest.approx(
        np.mean(np.sqrt(((margins - y) ** 2).mean(axis=0))), rel=1e-12)


def test_early_stopping_follows_the_mean_rmse_and_keeps_whole_rounds():
    X, Y = targets_data(n=600)
    train, val = bst.Dataset(X[:400], Y[:400]), bst.Dataset(X[400:], Y[400:])
    config = bst.GBDTConfig(n_estimators=300, learning_rate=0.3, max_depth=4, early_stopping_rounds=5)
    model = bst.GBDTModel.train(train, config, val_set=val)
    assert model.best_iteration < 299
    assert model.n_trees == 3 * (model.best_iteration + 1)
    history = np.array(model.eval_history)
    assert model.best_score == history[model.best_iteration] == history.min()
    # the recorded score is the mean over targets of each target's validation RMSE
    rmse = np.sqrt(((model.predict(X[400:]) - Y[400:]) ** 2).mean(axis=0)).mean()
    assert model.best_score == pytest.approx(rmse, rel=1e-9)


def test_training_rows_scored_for_callbacks_and_dart_rescaling():
    """Without a val_set a callback reading scores gets the training rows' mean RMSE; DART
    rescales every output's trees and margins (its score is recomputed from the model)."""
    X, Y = targets_data(n=500)
    record = {}
    model = bst.GBDTModel.train(bst.Dataset(X, Y), bst.GBDTConfig(n_estimators=5),
                                callbacks=[record_evaluation(record)])
    training_rmse = np.sqrt(((model.predict(X) - Y) ** 2).mean(axis=0)).mean()
    assert record["train"]["rmse"][-1] == pytest.approx(training_rmse, rel=1e-12)
    config = bst.GBDTConfig(n_estimators=20, booster="dart", drop_rate=0.3, skip_drop=0.0)
    model = bst.GBDTModel.train(bst.Dataset(X[:400], Y[:400]), config, val_set=bst.Dataset(X[400:], Y[400:]))
    assert model.n_trees == 60
    val_rmse = np.sqrt(((model.predict(X[400:]) - Y[400:]) ** 2).mean(axis=0)).mean()
    assert model.best_score == pytest.approx(val_rmse, rel=1e-9)  # the validation margins follow the rescaling


def test_save_load_pickle_and_the_objective_in_the_file():
    X, Y = targets_data(n=200)
    model = bst.GBDTModel.train(bst.Dataset(X, Y[:, :2]), bst.GBDTConfig(n_estimators=3))
    for copy in (bst.GBDTModel.from_bytes(model.to_bytes()), pickle.loads(pickle.dumps(model))):
        assert copy.objective == bst.Objective.squared(n_targets=2) == copy.config.objective
        np.testing.assert_array_equal(copy.predict(X), model.predict(X))
    header = json.loads(np.load(__import__("io").BytesIO(model.to_bytes()))["header"].tobytes())
    assert header["objective"] == {"name": "squared", "n_classes": None, "n_targets": 2}
    assert header["n_groups"] == 2
    # a single-target model's file is as before: no n_targets key
    single = bst.GBDTModel.train(bst.Dataset(X, Y[:, 0]), bst.GBDTConfig(n_estimators=1))
    header = json.loads(np.load(__import__("io").BytesIO(single.to_bytes()))["header"].tobytes())
    assert header["objective"] == {"name": "squared", "n_classes": None}


@pytest.mark.parametrize("bad", [1, 0, -2, 2.0, "2", True])
def test_bad_n_targets_in_a_file(bad):
    with pytest.raises(ValueError, match="n_targets"):
        objective_from_json({"name": "squared", "n_classes": None, "n_targets": bad})


def test_objective_spec():
    assert bst.Objective.squared(n_targets=1) == bst.Objective.squared()  # one target: the plain objective
    assert bst.Objective.squared(3).n_outputs == 3
    assert repr(bst.Objective.squared(n_targets=3)) == "Objective.squared(n_targets=3)"
    assert bst.Objective.squared(3) != bst.Objective.squared(2)
    with pytest.raises(ValueError, match="n_targets only applies to squared"):
        bst.Objective("logistic", n_targets=2)
    with pytest.raises(ValueError, match="n_targets"):
        bst.Objective.squared(n_targets=0)
    with pytest.raises(TypeError, match="n_targets"):
        bst.Objective.squared(n_targets=2.5)
    # a ranking metric reads one score per row
    with pytest.raises(ValueError, match="cannot score"):
        bst.GBDTConfig(objective=bst.Objective.squared(2), metric=bst.Metric.ndcg())
    assert bst.GBDTConfig(objective=bst.Objective.squared(2), metric=bst.Metric.mae()).metric == bst.Metric.mae()


def test_label_and_objective_mismatches_are_clear_errors():
    X, Y = targets_data(n=100)
    fit = bst.GBDTModel.train
    with pytest.raises(ValueError, match=r"y: shape \(100, 3\) holds 3 targets .*logistic"):
        fit(bst.Dataset(X, Y), bst.GBDTConfig(n_estimators=1, objective=bst.Objective.logistic()))
    with pytest.raises(ValueError, match=r"needs y of shape \(n_rows, 2\), got \(100, 3\)"):
        fit(bst.Dataset(X, Y), bst.GBDTConfig(n_estimators=1, objective=bst.Objective.squared(2)))
    with pytest.raises(ValueError, match=r"needs y of shape \(n_rows, 2\), got \(100,\)"):
        fit(bst.Dataset(X, Y[:, 0]), bst.GBDTConfig(n_estimators=1, objective=bst.Objective.squared(2)))
    with pytest.raises(ValueError, match="val_set: y has 2 target"):
        fit(bst.Dataset(X, Y), bst.GBDTConfig(n_estimators=1), val_set=bst.Dataset(X, Y[:, :2]))
    with pytest.raises(ValueError, match="cannot score"):  # the metric meets the resolved objective
        fit(bst.Dataset(X, Y), bst.GBDTConfig(n_estimators=1, metric=bst.Metric.map()))


def test_dataset_checks_two_dimensional_labels():
    X, Y = targets_data(n=50)
    data = bst.Dataset(X, Y)
    assert data.y.shape == (50, 3) and data.y.flags.c_contiguous and not data.y.flags.writeable
    assert repr(data) == "Dataset(50 rows, 5 features, dtype=float64, labels of 3 targets)"
    assert bst.Dataset(X, Y[:, :1]).y.shape == (50,)  # one column is one label per row
    np.testing.assert_array_equal(bst.Dataset(X, np.asfortranarray(Y)).y, Y)
    bad = Y.copy()
    bad[7, 2] = np.nan
    with pytest.raises(ValueError, match=r"y contains NaN or inf \(first at row 7, column 2"):
        bst.Dataset(X, bad)
    with pytest.raises(ValueError, match="y has 49 rows but X has 50"):
        bst.Dataset(X, Y[:49])
    with pytest.raises(ValueError, match="y has no columns"):
        bst.Dataset(X, np.empty((50, 0)))
    with pytest.raises(ValueError, match="y must be numeric"):
        bst.Dataset(X, Y.astype(str))


def test_sklearn_regressor_takes_two_dimensional_y_and_equals_per_column_estimators():
    X, Y = targets_data(n=300)
    params = dict(n_estimators=10, learning_rate=0.2, histogram_mode="f64", n_threads=2)
    est = GBDTRegressor(**params).fit(X, Y, eval_set=(X[:100], Y[:100]))
    assert est.predict(X).shape == (300, 3)
    assert est.__sklearn_tags__().target_tags.multi_output
    per_column = MultiOutputRegressor(GBDTRegressor(**params)).fit(X, Y)
    np.testing.assert_array_equal(est.predict(X), per_column.predict(X))  # the same trees, one per column
    assert len(est.evals_result_["valid"]["rmse"]) == 10
    with pytest.raises(ValueError, match="val_set: y has 2 target"):
        GBDTRegressor(**params).fit(X, Y, eval_set=(X[:100], Y[:100, :2]))


LIGHTGBM_MATCHED = dict(n_estimators=20, learning_rate=0.1, num_leaves=15, min_child_samples=20, reg_lambda=0.0,
                        min_child_weight=1e-3, max_bin=255, min_data_in_bin=1, feature_pre_filter=False,
                        deterministic=True, force_col_wise=True, n_jobs=1, verbose=-1)


def test_each_target_equals_lightgbm_on_integer_features():
    """LightGBM has no multi-target trees: one LGBMRegressor per column (scikit-learn's
    MultiOutputRegressor). Integer features bin the same in both libraries, so each
    target's trees are LightGBM's (matched leaf-wise settings, tests/support/matched_params.py):
    margins within 1e-6 after 20 rounds (float64 sums in another order, LightGBM's leaf
    values rounded in its model; measured: at most 1.4e-7, on the target of scale 30)."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 20, size=(2000, 4)).astype(float)
    Y = np.column_stack([X[:, 0] > 9, X[:, 1] * X[:, 2] / 20, 30 * np.sin(X[:, 3])]) + rng.normal(size=(2000, 3))
    ours = GBDTRegressor(n_estimators=20, learning_rate=0.1, growth_strategy="leafwise", n_leaves=15,
                         min_samples_leaf=20, l2=0.0, min_child_weight=1e-3, subsample=1.0, histogram_mode="f64",
                         n_threads=2).fit(X, Y)
    theirs = MultiOutputRegressor(lgb.LGBMRegressor(**LIGHTGBM_MATCHED)).fit(X, Y)
    assert np.ptp(theirs.predict(X), axis=0).min() > 1.0  # every target's trees have learnt something
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-6)


def test_held_out_rmse_per_target_close_to_lightgbm():
    """Continuous features bin slightly differently in the two libraries, so the trees
    drift apart: each target's held-out RMSE after 60 rounds within 5% of LightGBM's
    (one model per column; measured here: 0.5% worse, 1.0% and 0.2% better; with seeds 4
    and 5 at most 2.8% worse)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4000, 5))
    Y = np.column_stack([np.sin(2 * X[:, 0]) + X[:, 1], X[:, 1] * X[:, 2], 100 * np.tanh(X[:, 3])])
    Y += 0.3 * rng.normal(size=Y.shape) * np.array([1, 1, 100])
    train, test = slice(0, 3000), slice(3000, None)
    params = dict(LIGHTGBM_MATCHED, n_estimators=60)
    ours = GBDTRegressor(n_estimators=60, learning_rate=0.1, growth_strategy="leafwise", n_leaves=15,
                         min_samples_leaf=20, l2=0.0, min_child_weight=1e-3, subsample=1.0, histogram_mode="f64",
                         n_threads=2).fit(X[train], Y[train])
    theirs = MultiOutputRegressor(lgb.LGBMRegressor(**params)).fit(X[train], Y[train])

    def rmse(prediction):
        return np.sqrt(((prediction - Y[test]) ** 2).mean(axis=0))

    ratio = rmse(ours.predict(X[test])) / rmse(theirs.predict(X[test]))
    assert np.all(ratio < 1.05), ratio


@pytest.mark.parametrize("objective", [bst.Objective.absolute(), bst.Objective.huber(1.0)])
def test_robust_objectives_with_several_targets_are_the_single_target_models(objective):
    """Absolute (its leaves renewed to each target's residual medians, its start each
    column's median) and Huber with a 2-D y: each output's predictions equal the
    single-target model's on that column exactly; the default metric is the per-target
    mean (MAE, Huber loss), and the file keeps the number of targets."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1500, 4))
    Y = np.stack([X[:, 0] + rng.standard_t(2, 1500), -X[:, 1] + rng.standard_t(2, 1500)], axis=1)
    config = bst.GBDTConfig(objective=objective, n_estimators=15, learning_rate=0.2, max_depth=3)
    model = bst.GBDTModel.train(bst.Dataset(X, Y), config, n_threads=1)
    assert model.objective.n_targets == 2 and model.predict(X).shape == (1500, 2)
    for j in range(2):
        single = bst.GBDTModel.train(bst.Dataset(X, Y[:, j].copy()), config, n_threads=1)
        np.testing.assert_array_equal(model.predict(X)[:, j], single.predict(X))
    metric = model.config.resolved_metric
    per_column = [evaluate(metric, Y[:, j].copy(), model.predict_raw(X)[:, j:j + 1]) for j in range(2)]
    assert evaluate(metric, Y, model.predict_raw(X)) == pytest.approx(np.mean(per_column), rel=1e-12)
    assert bst.GBDTModel.from_bytes(model.to_bytes()).objective == model.objective
