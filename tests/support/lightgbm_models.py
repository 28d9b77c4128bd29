"""LightGBM boosters with hessian-free rows and their leaf weights, for the conversion and
SHAP tests."""

import lightgbm as lgb
import numpy as np


def weightless_rows_booster():
    """(X, booster) of a LightGBM training whose rows with X[:, 0] > 1 have hessian 0: a
    leaf of only such rows has the hessian sum (leaf_weight) -1.1e-16, round-off."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=400)
    weightless = X[:, 0] > 1.0

    def objective(pred, data):
        grad = pred - data.get_label()
        grad[weightless] = -2.0
        return grad, np.where(weightless, 0.0, 1.0)

    booster = lgb.train({"objective": objective, "max_depth": 3, "num_leaves": 8, "min_sum_hessian_in_leaf": 0.0,
                         "min_data_in_leaf": 0, "lambda_l2": 1.0, "learning_rate": 0.3, "verbose": -1,
                         "boost_from_average": False}, lgb.Dataset(X, y), 3)
    return X, booster


def leaf_weights(booster) -> list:
    """Each tree's leaf_weight line of the model text, in leaf order."""
    return [np.array(line.split("=", 1)[1].split(), dtype=np.float64)
            for line in booster.model_to_string().splitlines() if line.startswith("leaf_weight=")]
