"""Typical LightGBM and XGBoost scripts carried over to boosters with only the import
changed where the API allows it (LightGBM's: `import boosters as lgb`; XGBoost's: DMatrix
is bst.Dataset), each giving the model written in boosters' own API: a params dict in
their names, string objectives and metrics, two named evaluation sets, their early
stopping callback, cross-validation, continued training, and SHAP through the shap
package. What still differs is listed in docs/migration.md."""

import lightgbm
import numpy as np
import shap
import xgboost

import boosters as bst
from support.tree_compare import assert_same_trees


def binary_data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = (X[:, 0] - X[:, 1] * X[:, 2] + 0.5 * rng.normal(size=n) > 0).astype(np.float64)
    return X[:900], y[:900], X[900:], y[900:]


def regression_data(n=1200, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.2 * rng.normal(size=n)
    return X[:900], y[:900], X[900:], y[900:]


def test_a_lightgbm_training_script():
    X_train, y_train, X_valid, y_valid = binary_data()

    # --- the LightGBM script, `import lightgbm as lgb` changed to:
    import boosters as lgb
    params = {"objective": "binary", "metric": ["binary_logloss", "auc"], "num_leaves": 15,
              "learning_rate": 0.1, "feature_fraction": 0.9, "bagging_fraction": 0.8, "bagging_freq": 1,
              "min_data_in_leaf": 10, "lambda_l2": 1.0, "verbose": -1, "num_threads": 1, "seed": 7}
    train_set = lgb.Dataset(X_train, label=y_train)
    valid_set = lgb.Dataset(X_valid, label=y_valid, reference=train_set)
    evals = {}
    booster = lgb.train(params, train_set, num_boost_round=300, valid_sets=[train_set, valid_set],
                        valid_names=["train", "valid"],
                        callbacks=[lgb.early_stopping(10), lgb.record_evaluation(evals)])
    probabilities = booster.predict(X_valid)
    # --- end of the script

    config = bst.GBDTConfig(objective=bst.Objective.logistic(), metric=[bst.Metric.logloss(), bst.Metric.auc()],
                            growth_strategy="leafwise", n_leaves=15, learning_rate=0.1, colsample_bytree=0.9,
                            subsample=0.8, min_samples_leaf=10, l2=1.0, seed=7, n_estimators=300,
                            early_stopping_rounds=10)
    own = bst.GBDTModel.train(bst.Dataset(X_train, y_train), config, val_set=bst.Dataset(X_valid, y_valid),
                              n_threads=1)
    assert booster.n_trees < 300
    assert_same_trees(booster, own)
    assert np.array_equal(probabilities, own.predict(X_valid))
    assert evals["valid"]["logloss"] == list(own.eval_history)  # boosters' metric labels
    assert len(evals["train"]["auc"]) == len(own.eval_history) and evals["train"]["auc"][-1] > 0.9


def test_an_xgboost_training_script():
    X_train, y_train, X_valid, y_valid = regression_data()

    # --- the XGBoost script, `import xgboost as xgb` changed and DMatrix is Dataset:
    import boosters as xgb
    dtrain = xgb.Dataset(X_train, label=y_train)
    dvalid = xgb.Dataset(X_valid, label=y_valid)
    params = {"objective": "reg:squarederror", "eta": 0.1, "max_depth": 4, "subsample": 0.8,
              "colsample_bytree": 0.8, "reg_lambda": 1.0, "min_child_weight": 1, "eval_metric": "rmse",
              "nthread": 1, "seed": 3}
    evals_result = {}
    model = xgb.train(params, dtrain, num_boost_round=300, evals=[(dtrain, "train"), (dvalid, "eval")],
                      early_stopping_rounds=10, evals_result=evals_result, verbose_eval=False)
    best = model.predict(dvalid, iteration_range=(0, model.best_iteration + 1))
    margin = model.predict(dvalid, output_margin=True)
    # --- end of the script

    config = bst.GBDTConfig(objective=bst.Objective.squared(), growth_strategy="depthwise", learning_rate=0.1,
                            max_depth=4, subsample=0.8, colsample_bytree=0.8, l2=1.0, min_child_weight=1.0,
                            metric=bst.Metric.rmse(), seed=3, n_estimators=300, early_stopping_rounds=10)
    own = bst.GBDTModel.train(bst.Dataset(X_train, y_train), config, val_set=bst.Dataset(X_valid, y_valid),
                              n_threads=1)
    assert_same_trees(model, own)
    assert model.best_iteration == own.best_iteration < 299
    assert np.array_equal(best, own.predict(X_valid)) and np.array_equal(margin, own.predict_raw(X_valid))
    assert evals_result["eval"]["rmse"] == list(own.eval_history) and list(evals_result) == ["train", "eval"]


def test_a_cross_validation_script():
    X_train, y_train, _, _ = binary_data(seed=2)
    import boosters as lgb
    params = {"objective": "binary", "num_leaves": 7, "learning_rate": 0.2, "verbose": -1, "num_threads": 1}
    results = lgb.cv(params, lgb.Dataset(X_train, label=y_train), num_boost_round=200, nfold=3, stratified=True,
                     seed=0, callbacks=[lgb.early_stopping(5)])

    own = bst.cv({"objective": bst.Objective.logistic(), "growth_strategy": "leafwise", "n_leaves": 7,
                  "learning_rate": 0.2}, bst.Dataset(X_train, y_train), num_boost_round=200, nfold=3,
                 stratified=True, seed=0, early_stopping_rounds=5)
    assert results == own and sorted(results) == ["valid logloss-mean", "valid logloss-stdv"]
    assert 5 < len(results["valid logloss-mean"]) < 200  # stopped on the mean, at its best round


def test_a_continued_training_script():
    X_train, y_train, _, _ = regression_data(seed=3)
    import boosters as lgb
    # every row each round (LightGBM's default): continued rounds draw their samples anew
    params = {"objective": "regression", "num_leaves": 15, "learning_rate": 0.1, "bagging_fraction": 1.0,
              "verbose": -1}
    train_set = lgb.Dataset(X_train, label=y_train)
    first = lgb.train(params, train_set, num_boost_round=20)
    more = lgb.train(params, train_set, num_boost_round=20, init_model=first)

    at_once = bst.GBDTModel.train(bst.Dataset(X_train, y_train),
                                  bst.GBDTConfig(growth_strategy="leafwise", n_leaves=15, learning_rate=0.1,
                                                 subsample=1.0, n_estimators=40))
    assert_same_trees(more, at_once)


def test_a_shap_script():
    X_train, y_train, X_valid, _ = binary_data(seed=4)
    booster = bst.train({"objective": "binary", "num_leaves": 7, "verbose": -1}, bst.Dataset(X_train, label=y_train),
                        num_boost_round=30)
    explainer = shap.TreeExplainer(booster.to_shap_trees())  # LightGBM: shap.TreeExplainer(booster)
    values = explainer.shap_values(X_valid)
    exact = booster.shap_values(X_valid)  # the features' columns, then the bias
    np.testing.assert_allclose(values, exact[:, :-1], rtol=1e-9, atol=1e-12)  # both float64 TreeSHAP
    np.testing.assert_allclose(explainer.expected_value, exact[0, -1], rtol=1e-12)


def test_their_libraries_train_what_the_scripts_say():
    # the same params dicts in LightGBM and XGBoost themselves fit alike (not the same trees:
    # other binning and gain details), so the ports are not of scripts that only boosters runs
    X_train, y_train, X_valid, y_valid = binary_data(seed=5)
    params = {"objective": "binary", "num_leaves": 15, "learning_rate": 0.1, "verbose": -1, "num_threads": 1}
    theirs = lightgbm.train(params, lightgbm.Dataset(X_train, label=y_train), num_boost_round=50)
    ours = bst.train(params, bst.Dataset(X_train, label=y_train), num_boost_round=50)
    accuracy = [np.mean((p > 0.5) == y_valid) for p in (theirs.predict(X_valid), ours.predict(X_valid))]
    assert abs(accuracy[0] - accuracy[1]) < 0.05
    X_train, y_train, X_valid, y_valid = regression_data(seed=5)
    # XGBoost's own defaults, not boosters': every row, and no row count per leaf
    params = {"objective": "reg:squarederror", "eta": 0.1, "max_depth": 4, "subsample": 1.0,
              "min_child_weight": 1, "nthread": 1}
    theirs = xgboost.train(params, xgboost.DMatrix(X_train, label=y_train), num_boost_round=50)
    ours = bst.train({**params, "min_samples_leaf": 1}, bst.Dataset(X_train, label=y_train), num_boost_round=50)
    rmse = [np.sqrt(np.mean((p - y_valid) ** 2)) for p in (theirs.predict(xgboost.DMatrix(X_valid)),
                                                           ours.predict(X_valid))]
    assert abs(rmse[0] - rmse[1]) < 0.05 * rmse[0]
