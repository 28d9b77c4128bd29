"""The functional API of LightGBM's and XGBoost's users: ``bst.train(params, train_set,
...)`` and ``bst.cv(params, train_set, ...)``, a params dict in their names (GBDTConfig
takes them as aliases) over GBDTModel.train. What differs from theirs is in
docs/migration.md."""

from __future__ import annotations

import numpy as np

from boosters._lib.logs import logger
from boosters._lib.parameter_names import ALIASES, split_thread_params
from boosters.callbacks import as_boosters_callbacks, log_evaluation, record_evaluation
from boosters.config import GBDTConfig
from boosters.data.dataset import Dataset
from boosters.gbdt_model import GBDTModel
from boosters.training.callbacks import EarlyStopping

# the names of the number of rounds (GBDTConfig's n_estimators) in a params dict
ROUND_NAMES = ("n_estimators", *(name for name, (target, _) in ALIASES.items() if target == "n_estimators"))
CLASSIFIERS = ("logistic", "softmax", "one_vs_rest", "hinge")


def _config(params, num_boost_round, early_stopping_rounds=None) -> tuple[GBDTConfig, int]:
    """(the GBDTConfig of `params`, the thread count): the rounds from the params when they
    name them (as LightGBM, which then ignores num_boost_round, with a warning), else
    num_boost_round, else GBDTConfig's default."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of parameter names to values, got {type(params).__name__}")
    n_threads, params = split_thread_params(params)  # threads go to the training, not to the config
    rounds = [name for name in ROUND_NAMES if name in params]
    if num_boost_round is not None:
        if rounds:
            logger.warning("params name the rounds (%s); num_boost_round=%s is ignored, as LightGBM does",
                           rounds[0], num_boost_round)
        else:
            params["n_estimators"] = num_boost_round
    if early_stopping_rounds is not None:
        params["early_stopping_rounds"] = early_stopping_rounds
    return GBDTConfig(**params), n_threads


def _named_valid_sets(train_set, valid_sets, valid_names, evals) -> list[tuple[str, Dataset]]:
    """LightGBM's valid_sets and valid_names (default names "valid_0", ...; the training
    set itself "training"), or XGBoost's evals, [(Dataset, name)]."""
    if evals is not None:
        if valid_sets is not None:
            raise ValueError("give valid_sets (LightGBM) or evals (XGBoost), not both")
        if not all(isinstance(e, tuple) and len(e) == 2 for e in evals):
            raise TypeError("evals must be a list of (Dataset, name) pairs, as XGBoost's")
        return [(name, dataset) for dataset, name in evals]
    if valid_sets is None:
        return []
    if isinstance(valid_sets, Dataset):
        valid_sets = [valid_sets]
    if valid_names is None:
        valid_names = ["training" if d is train_set else f"valid_{i}" for i, d in enumerate(valid_sets)]
    if len(valid_names) != len(valid_sets):
        raise ValueError(f"valid_names has {len(valid_names)} names for {len(valid_sets)} valid_sets")
    return list(zip(valid_names, valid_sets))


def train(params: dict, train_set: Dataset, num_boost_round: int | None = None, valid_sets=None,
          valid_names=None, callbacks=None, init_model=None, *, evals=None, evals_result: dict | None = None,
          early_stopping_rounds: int | None = None, verbose_eval=None, xgb_model=None) -> GBDTModel:
    """Train a model from a params dict, as ``lightgbm.train`` and ``xgboost.train``.

    Parameters
    ----------
    params : dict
        GBDTConfig's parameters, by boosters', LightGBM's or XGBoost's names
        (``{"objective": "binary", "num_leaves": 31, "eta": 0.1}``), and the thread
        count (``num_threads``, ``nthread``, ``n_jobs``; -1 or None: every core).
    train_set : Dataset
        The training data, with labels.
    num_boost_round : int, optional
        The rounds; the params' own name for them wins (with a warning), as LightGBM.
        Default: the params', else GBDTConfig's default (100).
    valid_sets : list of Dataset, optional
        Scored after every round, each under its name in `valid_names` (default
        ``"valid_0"``, ...; the training set itself ``"training"``, scored on the
        training rows). Early stopping watches the last one that is not the training set.
    valid_names : list of str, optional
        The names of `valid_sets`.
    callbacks : list, optional
        boosters callbacks (``boosters.callbacks``); LightGBM's and XGBoost's own
        callback objects are refused with the boosters callback to use instead.
    init_model : GBDTModel, str or path, optional
        Continue training this model (LightGBM's `init_model`, XGBoost's `xgb_model`):
        the new trees grow from its margins and follow its trees in the model returned.
    evals : list of (Dataset, str), optional
        XGBoost's form of `valid_sets` and `valid_names`.
    evals_result : dict, optional
        Filled with every set's scores per round, ``{name: {metric: [...]}}``.
    early_stopping_rounds : int, optional
        Stop when the watched set's first metric has not improved for this many rounds.
    verbose_eval : bool or int, optional
        Log the scores every round (True) or every `verbose_eval` rounds.
    xgb_model : GBDTModel, str or path, optional
        XGBoost's name for `init_model`.

    Returns
    -------
    GBDTModel
        The trained model (with `init_model`, its trees then the new ones).

    Examples
    --------
    >>> import numpy as np
    >>> import boosters as bst
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = (X[:, 0] > 0).astype(float)
    >>> train_set, valid = bst.Dataset(X[:300], y[:300]), bst.Dataset(X[300:], y[300:])
    >>> scores = {}
    >>> model = bst.train({"objective": "binary", "eta": 0.3}, train_set, num_boost_round=20,
    ...                   valid_sets=[train_set, valid], evals_result=scores)
    >>> sorted(scores), model.n_trees
    (['training', 'valid_1'], 20)
    """
    config, n_threads = _config(params, num_boost_round, early_stopping_rounds)
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a boosters.Dataset, got {type(train_set).__name__}")
    named = _named_valid_sets(train_set, valid_sets, valid_names, evals)
    callbacks = list(callbacks or [])
    if evals_result is not None:
        callbacks.append(record_evaluation(evals_result))
    if verbose_eval:
        callbacks.append(log_evaluation(1 if verbose_eval is True else int(verbose_eval)))
    if init_model is not None and xgb_model is not None:
        raise ValueError("give init_model (LightGBM) or xgb_model (XGBoost), not both")
    return GBDTModel.train(train_set, config, val_set=named or None, n_threads=n_threads, callbacks=callbacks,
                           init_model=init_model if init_model is not None else xgb_model)


def _folds(train_set: Dataset, nfold: int, stratified: bool, shuffle: bool, seed: int) -> list[tuple]:
    """(train rows, test rows) of each fold: whole queries when the set has query groups;
    with `stratified`, each class spread over the folds in turn."""
    rng = np.random.default_rng(seed)
    if train_set.group_boundaries is not None:  # folds of whole queries
        bounds = train_set.group_boundaries
        queries = rng.permutation(len(bounds) - 1) if shuffle else np.arange(len(bounds) - 1)
        parts = [np.sort(part) for part in np.array_split(queries, nfold)]
        tests = [np.concatenate([np.arange(bounds[q], bounds[q + 1]) for q in part]) for part in parts]
    elif stratified:
        fold_of = np.empty(train_set.n_rows, dtype=np.int64)
        for label in np.unique(train_set.y):
            rows = np.flatnonzero(train_set.y == label)
            rows = rng.permutation(rows) if shuffle else rows
            fold_of[rows] = (np.arange(len(rows)) + rng.integers(nfold)) % nfold
        tests = [np.flatnonzero(fold_of == k) for k in range(nfold)]
    else:
        rows = rng.permutation(train_set.n_rows) if shuffle else np.arange(train_set.n_rows)
        tests = [np.sort(part) for part in np.array_split(rows, nfold)]
    every = np.arange(train_set.n_rows)
    return [(np.setdiff1d(every, test), test) for test in tests]


def _given_folds(folds, train_set: Dataset) -> list[tuple]:
    """`folds` as (train rows, test rows) pairs: a list of them, or a scikit-learn splitter
    (its ``split(X, y, groups)``; groups: the query of each row when the set has them)."""
    if hasattr(folds, "split"):
        groups = None
        if train_set.group_boundaries is not None:
            sizes = np.diff(train_set.group_boundaries)
            groups = np.repeat(np.arange(len(sizes)), sizes)  # (len(sizes) is n_groups)
        folds = folds.split(np.zeros((train_set.n_rows, 1)), train_set.y, groups)
    return [(np.asarray(a), np.asarray(b)) for a, b in folds]


def _best_round(means: list, higher_is_better: bool, rounds: int) -> int:
    """The round early stopping on the mean scores stops at (patience `rounds`)."""
    best = 0
    for r in range(1, len(means)):
        if (means[r] > means[best]) if higher_is_better else (means[r] < means[best]):
            best = r
        elif r - best >= rounds:
            break
    return best


def cv(params: dict, train_set: Dataset, num_boost_round: int | None = None, nfold: int = 5,
       stratified: bool | None = None, shuffle: bool = True, folds=None, metrics=None,
       callbacks=None, early_stopping_rounds: int | None = None, seed: int = 0,
       eval_train_metric: bool = False, return_cvbooster: bool = False) -> dict:
    """Cross-validation, as ``lightgbm.cv``: the per-round mean and standard deviation
    of every metric over the folds' held-out rows.

    Parameters
    ----------
    params : dict
        As `train`'s.
    train_set : Dataset
        The data, with labels; with query groups the folds keep queries whole.
    num_boost_round : int, optional
        As `train`'s.
    nfold : int, default 5
        The number of folds (when `folds` is not given).
    stratified : bool, optional
        Spread each class evenly over the folds; default: for the classification
        objectives (as LightGBM's default True, which applies only to them).
    shuffle : bool, default True
        Shuffle the rows (queries) before cutting the folds.
    folds : list of (train rows, test rows) or a scikit-learn splitter, optional
        The folds themselves; a splitter's ``split(X, y, groups)`` gets each row's
        query as its group.
    metrics : str, Metric or list, optional
        The metrics (GBDTConfig's `metric`); default the params' or the objective's.
    callbacks : list, optional
        Passed to every fold's training; an early stopping callback (boosters',
        LightGBM's or XGBoost's) stops on the folds' mean instead, as
        `early_stopping_rounds`.
    early_stopping_rounds : int, optional
        Stop at the round after which the mean of the first metric has not improved for
        this many rounds; the results end at the best round.
    seed : int, default 0
        Seeds the shuffling.
    eval_train_metric : bool, default False
        Also score each fold's training rows (``"train ..."`` keys).
    return_cvbooster : bool, default False
        Also return the folds' models (``"cvbooster"``: a list of GBDTModel).

    Returns
    -------
    dict
        ``{"valid <metric>-mean": [...], "valid <metric>-stdv": [...], ...}`` per round
        (LightGBM's keys; XGBoost's cv returns a DataFrame with ``test-<metric>-mean``
        columns instead). The standard deviation is over the folds (ddof 0, as both).

    Examples
    --------
    >>> import numpy as np
    >>> import boosters as bst
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=300)
    >>> result = bst.cv({"objective": "regression", "max_depth": 3}, bst.Dataset(X, y), num_boost_round=10)
    >>> sorted(result), len(result["valid rmse-mean"])
    (['valid rmse-mean', 'valid rmse-stdv'], 10)
    """
    params = dict(params or {})
    if metrics is not None:
        params["metric"] = metrics
    config, n_threads = _config(params, num_boost_round)
    # early stopping watches the folds' mean, not each fold (as lightgbm.cv): taken out of the callbacks
    callbacks = as_boosters_callbacks(list(callbacks or []))
    stoppers = [c for c in callbacks if isinstance(c, EarlyStopping)]
    callbacks = [c for c in callbacks if not isinstance(c, EarlyStopping)]
    if stoppers and early_stopping_rounds is None:
        early_stopping_rounds = stoppers[0].rounds
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a boosters.Dataset, got {type(train_set).__name__}")
    if config.early_stopping_rounds is not None and early_stopping_rounds is None:
        early_stopping_rounds = config.early_stopping_rounds  # on the folds' mean, not on each fold
    config = config.replace(early_stopping_rounds=None)
    if folds is None:
        if stratified is None:
            stratified = config.objective.name in CLASSIFIERS
        fold_rows = _folds(train_set, nfold, stratified, shuffle, seed)
    else:
        fold_rows = _given_folds(folds, train_set)
    scores, models = [], []
    for train_rows, test_rows in fold_rows:
        fold_train, held_out = train_set.subset(train_rows), train_set.subset(test_rows)
        sets = ([("train", fold_train)] if eval_train_metric else []) + [("valid", held_out)]
        result: dict[str, dict[str, list[float]]] = {}
        models.append(GBDTModel.train(fold_train, config, val_set=sets, n_threads=n_threads,
                                      callbacks=callbacks + [record_evaluation(result)]))
        scores.append(result)
    out = {}
    for name in scores[0]:
        for label in scores[0][name]:
            per_fold = np.array([fold[name][label] for fold in scores])  # (folds, rounds)
            out[f"{name} {label}-mean"] = per_fold.mean(axis=0).tolist()
            out[f"{name} {label}-stdv"] = per_fold.std(axis=0).tolist()
    if early_stopping_rounds is not None:
        first = next(iter(scores[0]["valid"]))
        higher = getattr(config.resolved_metrics[0], "higher_is_better", False)  # a callable: lower is better
        best = _best_round(out[f"valid {first}-mean"], higher, early_stopping_rounds)
        out = {key: values[:best + 1] for key, values in out.items()}
    if return_cvbooster:
        out["cvbooster"] = models
    return out
