"""Writes the model files that tests/io/test_model_compatibility.py loads: one small model per
kind of content a file can hold, saved by the format of this version, with the rows it
predicts and its predictions. Run once when a format version is added (`python
tests/models/make_models.py FORMAT_VERSION`); never rewrite a committed version's files:
later versions must keep reading them and predicting the same.

`python tests/models/make_models.py --values` wrote values.pkl once: pickles of `values()`
(objectives, metrics, configs) as the version before boosters/objectives/ pickled them
(tests/objectives/test_objective_definitions.py loads it); never rewrite it either."""

import pickle
import sys
import warnings
from pathlib import Path

import numpy as np

import boosters as bst


def models():
    rng = np.random.default_rng(2026)
    X = rng.normal(size=(400, 5))
    X[:, 4] = rng.integers(0, 6, 400)
    X[rng.random(400) < 0.05, 1] = np.nan  # missing values follow the default directions
    f = X[:, 0] + np.where(X[:, 4] % 2 == 0, 0.8, -0.8) + np.nan_to_num(X[:, 1])
    small = dict(n_estimators=12, learning_rate=0.3, max_depth=3)
    yield "squared_categorical", X, bst.Dataset(X, f + 0.1 * rng.normal(size=400), categorical_features=[4]), \
        bst.GBDTConfig(**small)
    yield "softmax", X, bst.Dataset(X, np.digitize(f, [-0.5, 0.5]).astype(float), categorical_features=[4]), \
        bst.GBDTConfig(objective=bst.Objective.softmax(3), **small)
    yield "pinball_levels", X, bst.Dataset(X, f + rng.standard_t(2, 400)), \
        bst.GBDTConfig(objective=bst.Objective.pinball([0.1, 0.5, 0.9]), **small)
    yield "two_targets_huber", X, bst.Dataset(X, np.stack([f, -f], axis=1) + rng.normal(size=(400, 2))), \
        bst.GBDTConfig(objective=bst.Objective.huber(1.0), **small)
    yield "linear_leaves", X[:, :4], bst.Dataset(X[:, :4], X[:, 0] * (X[:, 2] > 0) + 0.1 * rng.normal(size=400)), \
        bst.GBDTConfig(linear_leaves=True, linear_l2=0.1, **small)
    yield "poisson_dart", X, bst.Dataset(X, rng.poisson(np.exp(0.5 * np.tanh(f))).astype(float)), \
        bst.GBDTConfig(objective=bst.Objective.poisson(), booster="dart", drop_rate=0.3, **small)


# the defaults before version 0.2 (values.pkl holds configs made with them)
OLD_DEFAULTS = dict(learning_rate=0.3, growth_strategy="depthwise", n_leaves=31, min_child_weight=1.0,
                    min_samples_leaf=1, subsample=1.0)


def values() -> list:
    """Public values whose pickles must keep loading: objectives, metrics, configs."""
    O, M = bst.Objective, bst.Metric
    with warnings.catch_warnings():  # n_leaves, not read depth-wise, is kept as it was
        warnings.simplefilter("ignore")
        configs = [bst.GBDTConfig(objective=O.huber(0.5), metric=[M.mae(), M.huber(0.5)], n_estimators=7,
                                  **OLD_DEFAULTS),
                   bst.GBDTConfig(objective=O.softmax(3), **OLD_DEFAULTS)]
    return [O.squared(), O.squared(n_targets=3), O.absolute(), O.huber(2.0), O.pinball([0.1, 0.9]), O.poisson(),
            O.gamma(), O.tweedie(1.2), O.logistic(), O.softmax(4), O.one_vs_rest(3), O.hinge(), O.lambdarank(5),
            O.pairwise(), O.custom(None, n_outputs=2, base_score=[1.0, 2.0]), M.rmse(), M.pinball([0.2, 0.8]),
            M.huber(0.5), M.tweedie_deviance(1.4), M.margin_accuracy(0.3), M.ndcg(4), M.map(), M.auc(),
            *configs]


def main(version: str):
    folder = Path(__file__).parent / f"v{version}"
    folder.mkdir(exist_ok=True)
    for name, X, data, config in models():
        model = bst.GBDTModel.train(data, config, n_threads=1)
        model.save(folder / f"{name}.bst")
        model.save(folder / f"{name}.bstr.json")  # the same model in the JSON encoding
        np.savez(folder / f"{name}.expected.npz", X=X, raw=model.predict_raw(X, n_threads=1),
                 prediction=model.predict(X, n_threads=1))


if __name__ == "__main__":
    if sys.argv[1] == "--values":
        (Path(__file__).parent / "values.pkl").write_bytes(pickle.dumps(values()))
    else:
        main(sys.argv[1])
