"""Fingerprints of the models a matrix of trainings produces, to prove a refactoring changes
no model: every objective family, categorical and sparse input, sampling, DART, linear
leaves, multi-target, ranking, quantized histograms, constraints, both growth strategies,
on one machine and on Dask (the engines on the workers, tasks and actors); and, for the objectives and metrics, every
objective with a validation set (its default metric's scores are in the file), every metric
given explicitly, weights and init_score, the predictions and raw margins of those models
(``name#predict``: the output transforms) and the estimators' class probabilities.

    python benchmarks/model_fingerprints.py > before.json     # on the commit before
    python benchmarks/model_fingerprints.py > after.json      # on the commit after
    python benchmarks/model_fingerprints.py --compare before.json after.json

(--compare also reads the files the test suite writes with BOOSTERS_MODEL_FINGERPRINTS set:
every model each test makes; see tests/conftest.py.)

Each line is a training's name and the SHA-256 of its model's ``to_bytes()`` (the compact
binary format: every tree array, base score and header field), so equal fingerprints are
byte-identical models; a ``#predict`` line is the SHA-256 of predictions' bytes. ``--no-dask``
skips the Dask half.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np

import boosters as bst

N_ROWS = 3000


def features(seed: int = 0, n: int = N_ROWS) -> np.ndarray:
    """Five numeric features (10% NaN in one) and a categorical one (codes 0..7)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[rng.random(n) < 0.1, 2] = np.nan
    X[:, 5] = rng.integers(0, 8, n)
    return X


def labels(kind: str, X: np.ndarray, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = len(X)
    f = X[:, 0] + 0.5 * np.sin(2 * X[:, 1]) + np.where(X[:, 5] % 2 == 0, 0.7, -0.7)
    if kind == "gaussian":
        return 2 * f + 0.3 * rng.normal(size=n)
    if kind == "heavy_tail":
        return 2 * f + rng.standard_t(2.0, n)
    if kind == "counts":
        return rng.poisson(np.exp(0.5 * f)).astype(float)
    if kind == "positive":
        return rng.gamma(2.0, np.exp(0.5 * f) / 2.0)
    if kind == "binary":
        return (rng.random(n) < 1 / (1 + np.exp(-2 * f))).astype(float)
    if kind == "classes":
        return np.digitize(f + 0.3 * rng.normal(size=n), [-0.7, 0.7]).astype(float)
    if kind == "relevance":
        return np.digitize(f + 0.3 * rng.normal(size=n), [-0.7, 0.0, 0.7]).astype(float)
    if kind == "targets":
        return np.stack([2 * f, -f + X[:, 3]], axis=1) + 0.3 * rng.normal(size=(n, 2))
    raise ValueError(kind)


def squared_error(margins, dataset):
    """A custom objective: squared error's gradients."""
    return margins - dataset.y, np.ones_like(margins)


def one_hot_squared_error(margins, dataset):
    """A custom objective of one output per class: squared error against the one-hot labels."""
    return margins - (dataset.y[:, None] == np.arange(margins.shape[1])), np.ones_like(margins)


OBJECTIVES = {  # name -> (objective, label kind)
    "squared": (bst.Objective.squared(), "gaussian"),
    "absolute": (bst.Objective.absolute(), "heavy_tail"),
    "huber": (bst.Objective.huber(1.0), "heavy_tail"),
    "pinball": (bst.Objective.pinball(0.7), "heavy_tail"),
    "multi-quantile": (bst.Objective.pinball([0.2, 0.5, 0.8]), "heavy_tail"),
    "poisson": (bst.Objective.poisson(), "counts"),
    "gamma": (bst.Objective.gamma(), "positive"),
    "tweedie": (bst.Objective.tweedie(1.5), "counts"),
    "logistic": (bst.Objective.logistic(), "binary"),
    "hinge": (bst.Objective.hinge(), "binary"),
    "softmax": (bst.Objective.softmax(3), "classes"),
    "one-vs-rest": (bst.Objective.one_vs_rest(3), "classes"),
    "multi-target": (bst.Objective.squared(), "targets"),
    "lambdarank": (bst.Objective.lambdarank(5), "relevance"),
    "pairwise": (bst.Objective.pairwise(), "relevance"),
    "custom": (bst.Objective.custom(squared_error), "gaussian"),
}
RANKING = ("lambdarank", "pairwise")

VARIANTS = {  # name -> GBDTConfig parameters over the base ones
    "depthwise": {},
    "leafwise": dict(growth_strategy="leafwise", n_leaves=15),
    "i16": dict(histogram_mode="i16"),
    "i8-leafwise": dict(histogram_mode="i8", growth_strategy="leafwise", n_leaves=15),
    "subsample": dict(subsample=0.6, colsample_bytree=0.7, colsample_bynode=0.8),
    "goss": dict(goss_top_rate=0.2, goss_other_rate=0.1),
    "dart": dict(booster="dart", drop_rate=0.3, skip_drop=0.2),
    "linear": dict(linear_leaves=True, linear_l2=0.1),
    "constraints": dict(monotone_constraints={0: 1}, interaction_constraints=[[0, 1, 5], [2, 3, 4]]),
}
BASE = dict(n_estimators=12, learning_rate=0.2, max_depth=4, seed=7)


def query_ids(n: int) -> np.ndarray:
    """Queries of 25 rows: a whole number of them in each of the Dask partitions (n / 3 rows)."""
    return np.repeat(np.arange(n // 25 + 1), 25)[:n]


def refused(objective_name: str, variant: str) -> bool:
    """Combinations a configuration refuses (the library says so; nothing to compare)."""
    if variant == "linear" and objective_name in ("absolute", "pinball", "multi-quantile"):
        return True
    if variant == "goss" and objective_name in RANKING:
        return True
    return False


def single_machine() -> dict:
    out = {}
    X = features()
    for name, (objective, kind) in OBJECTIVES.items():
        y = labels(kind, X)
        for variant, params in VARIANTS.items():
            if refused(name, variant):
                continue
            config = bst.GBDTConfig(objective=objective, **BASE, **params)
            qid = query_ids(len(X)) if name in RANKING else None
            data = bst.Dataset(X, y, qid=qid, categorical_features=[5])
            out[f"local/{name}/{variant}"] = fingerprint(bst.GBDTModel.train(data, config, n_threads=2))
    out.update(single_machine_inputs())
    out.update(objectives_and_metrics())
    return out


def single_machine_inputs() -> dict:
    """Sparse input, early stopping on a validation set, weights, many categories."""
    import scipy.sparse as sp

    out = {}
    rng = np.random.default_rng(3)
    X = features()
    y = labels("gaussian", X)
    sparse = sp.random(N_ROWS, 40, density=0.05, format="csr", random_state=4)
    sparse = sp.hstack([sparse, sp.csr_matrix(np.nan_to_num(X[:, :3]))], format="csr")
    for variant in ("depthwise", "leafwise", "i16"):
        config = bst.GBDTConfig(**BASE, **VARIANTS[variant])
        out[f"local/sparse/{variant}"] = fingerprint(bst.GBDTModel.train(bst.Dataset(sparse, y), config, n_threads=2))
    config = bst.GBDTConfig(**{**BASE, "n_estimators": 60}, early_stopping_rounds=5)
    model = bst.GBDTModel.train(bst.Dataset(X[:2000], y[:2000], categorical_features=[5]), config,
                                val_set=bst.Dataset(X[2000:], y[2000:], categorical_features=[5]), n_threads=2)
    out["local/early-stopping"] = fingerprint(model)
    weights = rng.uniform(0.5, 2.0, N_ROWS)
    out["local/weights"] = fingerprint(bst.GBDTModel.train(bst.Dataset(X, y, weights=weights),
                                                           bst.GBDTConfig(**BASE), n_threads=2))
    many = X.copy()
    many[:, 5] = rng.integers(0, 60, N_ROWS)
    out["local/many-categories"] = fingerprint(bst.GBDTModel.train(
        bst.Dataset(many, y + many[:, 5] % 3, categorical_features=[5]), bst.GBDTConfig(**BASE), n_threads=2))
    return out


# objectives and metrics: more variants, with a validation set (the default metric scored)
EXTRA_OBJECTIVES = {
    "multi-target-absolute": (bst.Objective.absolute(), "targets"),
    "multi-target-huber": (bst.Objective.huber(0.5), "targets"),
    "tweedie-1.2": (bst.Objective.tweedie(1.2), "counts"),
    "huber-2": (bst.Objective.huber(2.0), "heavy_tail"),
}
METRICS = {  # label -> (metric, objective name of OBJECTIVES whose margins it scores)
    "rmse": (bst.Metric.rmse(), "squared"),
    "mae": (bst.Metric.mae(), "absolute"),
    "mape": (bst.Metric.mape(), "huber"),
    "huber": (bst.Metric.huber(0.7), "squared"),
    "pinball": (bst.Metric.pinball(0.3), "pinball"),
    "pinball-levels": (bst.Metric.pinball([0.2, 0.5, 0.8]), "multi-quantile"),
    "poisson_deviance": (bst.Metric.poisson_deviance(), "tweedie"),
    "gamma_deviance": (bst.Metric.gamma_deviance(), "gamma"),
    "tweedie_deviance": (bst.Metric.tweedie_deviance(1.3), "poisson"),
    "logloss": (bst.Metric.logloss(), "softmax"),
    "multiclass_logloss": (bst.Metric.multiclass_logloss(), "softmax"),
    "one_vs_rest_logloss": (bst.Metric.one_vs_rest_logloss(), "one-vs-rest"),
    "auc": (bst.Metric.auc(), "logistic"),
    "accuracy": (bst.Metric.accuracy(), "one-vs-rest"),
    "multiclass_accuracy": (bst.Metric.multiclass_accuracy(), "softmax"),
    "margin_accuracy": (bst.Metric.margin_accuracy(0.4), "hinge"),
    "ndcg": (bst.Metric.ndcg(3), "pairwise"),
    "map": (bst.Metric.map(4), "squared"),
    "multi-target-mape": (bst.Metric.mape(), "multi-target"),
    "custom-auc": (bst.Metric.auc(), "custom"),
}
N_TRAIN = 2000  # rows of a training with a validation set: the rest validate


def predictions(model, X) -> str:
    """The SHA-256 of the model's predictions and raw margins (the output transform)."""
    return hashlib.sha256(model.predict(X, n_threads=2).tobytes() + model.predict_raw(X, n_threads=2).tobytes()
                          ).hexdigest()


def validated(X, y, config, qid=None, weights=None, init_score=None):
    """A model trained on the first N_TRAIN rows and scored each round on the others."""
    def part(rows):
        return bst.Dataset(X[rows], y[rows], weights=None if weights is None else weights[rows],
                           qid=None if qid is None else qid[rows], categorical_features=[5],
                           init_score=None if init_score is None else init_score[rows])
    train, val = slice(0, N_TRAIN), slice(N_TRAIN, None)
    return bst.GBDTModel.train(part(train), config, val_set=part(val), n_threads=2)


def objectives_and_metrics() -> dict:
    """Every objective with a validation set (the default metric, or rmse for custom),
    weighted, and from an init_score; every metric given; the estimators' probabilities."""
    out = {}
    X = features()
    rng = np.random.default_rng(5)
    weights = rng.uniform(0.2, 3.0, N_ROWS)
    for name, (objective, kind) in {**OBJECTIVES, **EXTRA_OBJECTIVES}.items():
        y = labels(kind, X)
        qid = query_ids(len(X)) if name in RANKING else None
        metric = bst.Metric.rmse() if name == "custom" else None
        config = bst.GBDTConfig(objective=objective, metric=metric, **BASE)
        for variant, model in (
                ("validation", lambda: validated(X, y, config, qid)),
                ("weights", lambda: validated(X, y, config, qid, weights=weights)),
                ("init-score", lambda: validated(X, y, config, qid, init_score=init_scores(objective, y, rng)))):
            model = model()
            out[f"local/{variant}/{name}"] = fingerprint(model)
            out[f"local/{variant}/{name}#predict"] = predictions(model, X)
    for label, (metric, name) in METRICS.items():
        objective, kind = OBJECTIVES[name]
        qid = query_ids(len(X)) if name in RANKING or metric.needs_groups else None
        config = bst.GBDTConfig(objective=objective, metric=metric, **BASE)
        out[f"local/metric/{label}"] = fingerprint(validated(X, labels(kind, X), config, qid))
    config = bst.GBDTConfig(objective=bst.Objective.logistic(), early_stopping_rounds=3,
                            metric=[bst.Metric.accuracy(), bst.Metric.auc(), bst.Metric.logloss()], **BASE)
    out["local/metric/three"] = fingerprint(validated(X, labels("binary", X), config))
    out.update(class_probabilities(X))
    return out


def init_scores(objective, y, rng):
    """A start margin per row and output, near the objective's scale."""
    k = objective.n_outputs if y.ndim == 1 else y.shape[1]
    scores = 0.1 * rng.normal(size=(len(y), k))
    return scores[:, 0] if k == 1 else scores


def class_probabilities(X) -> dict:
    """GBDTClassifier's predict_proba and predict per classification objective (and a custom one)."""
    from boosters.sklearn import GBDTClassifier

    out = {}
    for name, objective, kind in (("logistic", "logistic", "binary"), ("hinge", "hinge", "binary"),
                                  ("softmax", "softmax", "classes"), ("one-vs-rest", "one_vs_rest", "classes"),
                                  ("custom-binary", squared_error, "binary"),
                                  ("custom-classes", one_hot_squared_error, "classes")):
        y = labels(kind, X)
        classifier = GBDTClassifier(objective=objective, n_estimators=8, max_depth=3, n_threads=2).fit(X, y)
        out[f"local/classifier/{name}"] = fingerprint(classifier.booster_)
        out[f"local/classifier/{name}#predict"] = hashlib.sha256(
            classifier.predict_proba(X).tobytes() + classifier.predict(X).tobytes()).hexdigest()
    return out


DASK_OBJECTIVES = ("squared", "absolute", "pinball", "poisson", "logistic", "softmax", "multi-target",
                   "lambdarank", "custom")
DASK_VARIANTS = ("depthwise", "leafwise", "i16", "subsample", "goss", "dart", "linear", "constraints")


def on_dask() -> dict:
    import dask.array as da
    from distributed import Client, LocalCluster

    import boosters.dask

    out = {}
    X = features()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        dX = da.from_array(X, chunks=(N_ROWS // 3, X.shape[1]))
        for name in DASK_OBJECTIVES:
            objective, kind = OBJECTIVES[name]
            y = labels(kind, X)
            dy = da.from_array(y, chunks=(N_ROWS // 3,) + y.shape[1:])
            qid = da.from_array(query_ids(N_ROWS), chunks=N_ROWS // 3) if name in RANKING else None
            for variant in DASK_VARIANTS:
                if refused(name, variant) or (variant == "goss" and name in RANKING):
                    continue
                config = bst.GBDTConfig(objective=objective, **BASE, **VARIANTS[variant])
                for steps in ("workers", "tasks", "actors"):
                    if steps == "actors" and variant not in ("depthwise", "i16"):
                        continue  # the step kind is orthogonal to the features: two variants suffice
                    try:
                        model = boosters.dask.train(client, dX, dy, config, categorical_features=[5], steps=steps,
                                                    qid=qid)
                    except ValueError as error:  # refused on Dask: recorded as such
                        out[f"dask/{steps}/{name}/{variant}"] = f"refused: {error}"
                        continue
                    out[f"dask/{steps}/{name}/{variant}"] = fingerprint(model)
        out.update(dask_objectives_and_metrics(client, X))
    return out


def dask_objectives_and_metrics(client, X) -> dict:
    """Every objective on Dask with a validation set, and weighted (where Dask takes
    weights); the Dask classifier's probabilities."""
    import dask.array as da

    import boosters.dask
    from boosters.dask import DaskGBDTClassifier

    out = {}
    chunks = N_TRAIN // 2

    def array(values):
        return da.from_array(values, chunks=(chunks,) + values.shape[1:])

    rng = np.random.default_rng(6)
    weights = rng.uniform(0.2, 3.0, N_ROWS)
    train, val = slice(0, N_TRAIN), slice(N_TRAIN, None)
    for name, (objective, kind) in {**OBJECTIVES, **EXTRA_OBJECTIVES}.items():
        y = labels(kind, X)
        qid = query_ids(len(X)) if name in RANKING else None
        metric = bst.Metric.rmse() if name == "custom" else None
        config = bst.GBDTConfig(objective=objective, metric=metric, **BASE)
        for variant, w in (("validation", None), ("weights", weights)):
            try:
                model = boosters.dask.train(
                    client, array(X[train]), array(y[train]), config, categorical_features=[5],
                    weights=None if w is None else array(w[train]),
                    val_set=(array(X[val]), array(y[val])),
                    qid=None if qid is None else array(qid[train]), val_qid=None if qid is None else array(qid[val]))
            except ValueError as error:  # refused on Dask: recorded as such
                out[f"dask/{variant}/{name}"] = f"refused: {error}"
                continue
            out[f"dask/{variant}/{name}"] = fingerprint(model)
            out[f"dask/{variant}/{name}#predict"] = predictions(model, X)
    for name, objective, kind in (("logistic", "logistic", "binary"), ("hinge", "hinge", "binary"),
                                  ("softmax", "softmax", "classes"), ("one-vs-rest", "one_vs_rest", "classes"),
                                  ("custom-binary", squared_error, "binary")):
        y = labels(kind, X)
        classifier = DaskGBDTClassifier(client=client, objective=objective, n_estimators=8, max_depth=3).fit(
            array(X), array(y))
        out[f"dask/classifier/{name}"] = fingerprint(classifier.booster_)
        out[f"dask/classifier/{name}#predict"] = hashlib.sha256(
            classifier.predict_proba(array(X)).compute().tobytes()
            + classifier.predict(array(X)).compute().tobytes()).hexdigest()
    return out


def fingerprint(model) -> str:
    return hashlib.sha256(model.to_bytes()).hexdigest()


def _read(path: str) -> dict:
    """A fingerprint file (what precedes its JSON is skipped: a development install's
    rebuild prints to stdout before the script does)."""
    with open(path) as f:
        text = f.read()
    return json.loads(text[text.index("{"):])


def compare(before_path: str, after_path: str) -> int:
    before, after = _read(before_path), _read(after_path)
    differ = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    missing = sorted(before.keys() ^ after.keys())
    print(f"{len(before.keys() & after.keys())} trainings in both; {len(differ)} differ; "
          f"{len(missing)} in one only")
    for key in differ:
        print("differs:", key)
    for key in missing:
        print("in one only:", key)
    return 1 if differ or missing else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    out = single_machine()
    if not args.no_dask:
        out.update(on_dask())
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
