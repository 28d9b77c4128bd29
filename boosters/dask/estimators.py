"""scikit-learn estimators on Dask collections: `DaskGBDTRegressor`, `DaskGBDTClassifier`.

They extend the base of `boosters.sklearn`'s estimators, so they take the same parameters
with the same checks and the same `GBDTConfig` mapping, plus `client`. `fit` trains with
`boosters.dask.train` on Dask arrays or DataFrames; `predict` / `predict_proba` map the
model over the row partitions of X and return lazy Dask arrays. They train what
`boosters.dask.train` trains (every regression objective, absolute and pinball without
sample weights; every classification objective, multiclass included): the others are
refused with a ValueError naming the parameter.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, clone
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from boosters._lib.checks import require_int
from boosters._lib.docstrings import fill_doc
from boosters.config import GBDTConfig, Objective
from boosters._lib import parameter_names
from boosters._lib.threads import effective_n_threads
from boosters.dask._driver import gather
from boosters.dask._partition_state import worker_threads
from boosters.dask.training import _dask_array, _frame_types, as_arrays, check_config, train
from boosters.data.target_statistics import unseen_code
from boosters.explain.importance import ImportanceType
from boosters.objectives import objective_fn
from boosters.sklearn import (_CONFIG_PARAMETERS_DOC, _DOCS, _IMPORTANCE_TYPE_DOC, _PARAMETERS, _class_codes,
                              _classification_objective, _eval_names, _GBDTEstimator, _per_eval_set, _ranking_objective,
                              _storing_init)

# The docstring parts of boosters.sklearn's estimators (fill_doc's fields), with those that differ here:
# the parameters (n_threads: the workers' threads are Dask's; client and steps), the data (Dask collections).
_DASK_DOCS = {
    **_DOCS,
    "parameters": _CONFIG_PARAMETERS_DOC + """\
    n_threads : int, default 0
        Threads of each partition's training and prediction tasks on its worker; 0
        means one (the workers' own threads run the partitions in parallel).
    n_jobs : int or None, default None
        Also `num_threads` / `nthread`, as LightGBM's and XGBoost's Dask estimators take
        them: the threads per worker of each partition's training and prediction tasks
        (`n_threads`); -1 (or 0) all the worker's threads (Dask's ``nthreads``), -2 all
        but one; None: not given (`n_threads`). The model does not depend on them.
""" + _IMPORTANCE_TYPE_DOC + """\
    client : distributed.Client, optional
        The cluster to train on; None uses ``distributed.default_client()`` at `fit`.
        A pickled estimator leaves it out (unpickled, it uses the default client).
    steps : {"workers", "actors", "tasks"}, default "workers"
        How the growth steps reach the partitions (``boosters.dask.train``'s `steps`):
        "workers" runs the growth engine on every worker, which sum each step's
        histograms among themselves; "actors" and "tasks" run it on the driver. The same
        model every way.
""",
    "X": """
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        Numeric features (NaN is missing) and a DataFrame's pandas category columns
        (categorical features); a DataFrame's columns name them.""",
    "sample_weight": """
    sample_weight : dask.array.Array or dask.dataframe.Series of shape (n_samples,), optional
        Non-negative row weights.""",
    "eval_set": """
    eval_set : (X_val, y_val) or list of such pairs, optional
        Dask collections, each scored every round with every metric (`evals_result_`);
        early stopping (`early_stopping_rounds`) watches the first metric on the last
        pair that is not fit's own (X, y) (that pair, the very objects given to fit, is
        scored as the others, unweighted, and named "training").
    eval_names : list of str, optional
        Keyword-only. The eval sets' names in `evals_result_`: by default "valid" for a
        single held-out pair, else LightGBM's "valid_0", "valid_1"...""",
    "X_predict": """
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        A DataFrame's columns are taken by the names of `fit` (any order).""",
    "fitted_attributes": """
    booster_, n_features_in_, feature_names_in_, best_iteration_, evals_result_, best_score_, feature_importances_
        As in `DaskGBDTRegressor`.""",
}


class _DaskGBDTEstimator(_GBDTEstimator):
    """What the Dask estimators share: the client, input checks, training, mapping the
    model over partitions. Each sets its `__init__` with `_storing_init`."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False       # Dask arrays and DataFrames
        tags.input_tags.categorical = True   # pandas category columns of a Dask DataFrame
        return tags

    def __getstate__(self):
        # a client is a live connection to a scheduler: it is not pickled
        return {**super().__getstate__(), "client": None}

    def __sklearn_clone__(self):
        # sklearn's clone deep-copies every parameter; the clone shares the client instead
        params = {name: clone(value, safe=False) for name, value in self.get_params(deep=False).items()
                  if name != "client"}
        return type(self)(**params, client=self.client)

    def _client(self):
        from distributed import Client, default_client
        if self.client is None:
            try:
                return default_client()
            except ValueError as error:
                raise ValueError("client: none given and no default dask.distributed client is running "
                                 "(start one with distributed.Client(...))") from error
        if not isinstance(self.client, Client):
            raise TypeError(f"client must be a distributed.Client or None, got {type(self.client).__name__}")
        return self.client

    def _checked_config(self, objective: Objective) -> GBDTConfig:
        """The GBDTConfig of the parameters, checked before any data is touched."""
        ImportanceType.parse(self.importance_type)  # a ValueError naming importance_type
        self._worker_threads()  # a TypeError / ValueError naming n_threads or n_jobs
        config = self.config(objective)
        check_config(config)  # what boosters.dask cannot train yet: a ValueError naming it
        return config

    def _worker_threads(self) -> int:
        """The threads of each partition's tasks on its worker (see n_jobs): `n_threads`
        (0: one), or the thread aliases' value (n_jobs, num_threads, nthread...), -1 for
        all of the worker's threads (_partition_state.worker_threads resolves it there)."""
        require_int("n_threads", self.n_threads, 0)
        given = {name: getattr(self, name) for name in getattr(self, "_other_params", ())
                 if name in parameter_names.THREAD_NAMES}
        if self.n_jobs is not None:
            given["n_jobs"] = self.n_jobs
        if not given:
            return self.n_threads or 1
        n_threads, _ = parameter_names.split_thread_params(given)  # a TypeError naming a non-int
        effective_n_threads(n_threads)  # a ValueError for more threads than the machine can have
        n_threads = -1 if n_threads == 0 else n_threads  # 0 and -1: all of the worker's
        if self.n_threads != 0 and self.n_threads != n_threads:
            raise ValueError(f"n_threads={self.n_threads!r} and {given} are the threads per worker given twice "
                             f"with different values: give one")
        return n_threads

    # -- input checks ------------------------------------------------------------------------

    def _check_X(self, X, reset: bool, name: str = "X"):
        """X as given (a DataFrame keeps its names for `train`), checked: a 2-D Dask array
        or a Dask DataFrame of numeric and pandas category columns, as wide as in `fit` (a
        frame's columns: the fitted names, in any order). `reset`: record its width and names."""
        da, frames = _dask_array(), _frame_types()
        if frames and isinstance(X, frames[0]):
            columns = list(X.columns)
            for column, dtype in X.dtypes.items():
                if dtype.kind not in "biuf" and str(dtype) != "category":
                    raise ValueError(f"{name}: column {column!r} has dtype {dtype}; the Dask estimators take "
                                     f"numeric and category columns (give other categorical values as a "
                                     f"category column)")
        elif isinstance(X, da.Array) and X.ndim == 2:
            columns = None
            if X.dtype.kind not in "biuf":
                raise ValueError(f"{name} must be numeric (bool, int or float); got dtype {X.dtype}")
        else:
            raise TypeError(f"{name} must be a 2-D dask.array.Array or a dask.dataframe.DataFrame, got "
                            f"{type(X).__name__} (boosters.sklearn's estimators take in-memory data)")
        width = X.shape[1] if columns is None else len(columns)
        if reset:
            self.n_features_in_ = width
            if columns is not None and all(isinstance(c, str) for c in columns):
                self.feature_names_in_ = np.asarray(columns, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            return X
        fitted = getattr(self, "feature_names_in_", None)
        if columns is not None and fitted is not None:
            missing = [c for c in fitted if c not in columns]
            if missing or width != len(fitted):
                raise ValueError(f"{name} must have the columns of fit ({list(fitted)}), got {columns}")
        elif width != self.n_features_in_:
            raise ValueError(f"{name} has {width} features, but {type(self).__name__} was fitted with "
                             f"{self.n_features_in_}")
        return X

    def _checked_data(self, X, y, sample_weight) -> tuple:
        """`fit`'s X (its features recorded), y and sample_weight, checked."""
        return (self._check_X(X, reset=True), self._check_vector(y, "y"),
                None if sample_weight is None else self._check_vector(sample_weight, "sample_weight"))

    def _check_vector(self, values, name: str):
        """A 1-D Dask array or Series (y, weights) as a 1-D Dask array (row counts known)."""
        da, frames = _dask_array(), _frame_types()
        if frames and isinstance(values, frames[1]):
            if not isinstance(values.dtype, np.dtype):  # strings, categories: as Python objects
                values = values.astype(object)
            values = values.to_dask_array(lengths=True)
        if not isinstance(values, da.Array) or values.ndim != 1:
            raise TypeError(f"{name} must be a 1-D dask.array.Array or a dask.dataframe.Series, got "
                            f"{type(values).__name__}")
        return values

    def _eval_sets(self, eval_set, given) -> list | None:
        """eval_set (a pair or a list of pairs) as a list of checked (X_val, y_val) pairs of
        Dask collections, or None; a pair that is fit's very (X, y) (`given`, as given) is
        None: the training rows (scored as a set, named "training", never monitored)."""
        if eval_set is None:
            return None
        pairs = eval_set if isinstance(eval_set, list) else [eval_set]
        if not pairs or not all(isinstance(pair, tuple) and len(pair) == 2 for pair in pairs):
            raise ValueError("eval_set must be an (X_val, y_val) pair or a list of such pairs")
        return [None if X_val is given[0] and y_val is given[1] else
                (self._check_X(X_val, reset=False, name="eval_set X"), self._check_vector(y_val, "eval_set y"))
                for X_val, y_val in pairs]

    # -- training and prediction -------------------------------------------------------------

    def _train(self, client, X, y, sample_weight, eval_pairs, config: GBDTConfig, qid=None, eval_qid=None,
               eval_names=None):
        """Train on checked Dask collections (y as the objective reads it); `eval_pairs`:
        `_eval_sets`' (None entries: the training rows), their y as the objective reads
        it; `eval_qid`: one per pair (a ranker's)."""
        val_set, val_qid = None, None
        if eval_pairs is not None:
            names = _eval_names(eval_pairs, eval_names)
            # fit's own rows: the very objects train takes, which it then never monitors (as one machine)
            val_set = [(name, (X, y) if pair is None else pair) for name, pair in zip(names, eval_pairs)]
            if eval_qid is not None:
                val_qid = [qid if pair is None else q for pair, q in zip(eval_pairs, eval_qid)]
        elif eval_names is not None:
            raise ValueError("eval_names is given without an eval_set")
        scores: dict[str, dict[str, list[float]]] = {}
        self.booster_ = train(client, X, y, config, weights=sample_weight, val_set=val_set, steps=self.steps,
                              qid=qid, val_qid=val_qid, evals_result=scores, n_threads=self._worker_threads())
        self.best_iteration_ = self.booster_.best_iteration
        # the form of boosters.callbacks.record_evaluation, as the in-memory estimators
        self.evals_result_ = scores
        # LightGBM's best_score_: every set's every metric at the model's last round (the best one)
        best = self.booster_.n_trees // self.booster_.forest.n_groups - 1
        self.best_score_ = {name: {label: history[best] for label, history in metrics.items() if history}
                            for name, metrics in scores.items()}
        return self

    def _map(self, X, block_function, n_columns: int | None = None, dtype=np.float64):
        """`block_function(block, model, n_threads)` over the row partitions of X (a frame's
        columns taken by the fitted names): a lazy Dask array, one block per partition."""
        check_is_fitted(self, "booster_")
        X = self._check_X(X, reset=False)
        if isinstance(X, _dask_array().Array):
            X = X.rechunk({1: -1})  # blocks of whole rows
        else:  # lazily (the partitions' row counts stay unknown); category columns coded by value
            names = getattr(self, "feature_names_in_", None)
            X = as_arrays(X, feature_names=names, categories=self.booster_.categories, lengths=False,
                          unseen=unseen_code(self.booster_.ensemble))[0]
            X = X.astype(np.float64) if X.dtype == object else X  # bool and float columns together
        args = (self.booster_, self._worker_threads())
        if n_columns is None:
            return X.map_blocks(block_function, *args, drop_axis=1, dtype=dtype, meta=np.empty((0,), dtype))
        return X.map_blocks(block_function, *args, chunks=(X.chunks[0], (n_columns,)), dtype=dtype,
                            meta=np.empty((0, n_columns), dtype))


def _predictions(block, model, n_threads, raw=False):
    """The model's predictions (margins with `raw`) of a block of rows; none for an empty
    block (a partition a filter emptied)."""
    if len(block) == 0:
        return np.empty((0, model.forest.n_groups) if model.forest.n_groups > 1 else 0)
    return (model.predict_raw if raw else model.predict)(block, n_threads=worker_threads(n_threads))


def _probabilities(block, model, n_threads):
    """(rows, n_classes) class probabilities, as GBDTClassifier's."""
    if len(block) == 0:
        return np.empty((0, max(2, model.forest.n_groups)))
    return objective_fn(model.objective).class_probabilities(_predictions(block, model, n_threads))


def _labels(block, model, n_threads, classes):
    return classes[np.argmax(_probabilities(block, model, n_threads), axis=1)]


def _row_class_weights(codes, class_weights):
    return class_weights[codes.astype(np.intp)]


@fill_doc(**_DASK_DOCS)
class DaskGBDTRegressor(RegressorMixin, _DaskGBDTEstimator):
    """Gradient boosted trees for regression on Dask collections: `boosters.sklearn.GBDTRegressor`'s
    parameters and attributes, trained data-parallel with `boosters.dask.train` (squared
    error by default; any regression objective `boosters.dask` supports: squared, huber,
    poisson, gamma, tweedie, absolute, pinball) and predicting lazily.

    Parameters
    ----------
    %(parameters)s

    Attributes
    ----------
    booster_ : GBDTModel
        The trained model (an ordinary one: save it, or predict in memory).
    n_features_in_ : int
        Number of features seen in `fit`.
    feature_names_in_ : ndarray of str
        Column names of a DataFrame given to `fit` (only then).
    best_iteration_ : int
        The 0-based round the model ends at (the best validation round with early stopping).
    evals_result_ : dict
        ``{set_name: {metric_label: [score per round]}}`` with an `eval_set` (``"valid"``
        for a single pair; by `eval_names`, else "valid_0", "valid_1"...; every metric of
        `metric` / `eval_metric`, by its label), ``{}`` without.
    best_score_ : dict
        ``{set_name: {metric_label: score}}``: every eval set's scores at the model's
        last round (the best one with early stopping), as LightGBM's; ``{}`` without.
    feature_importances_ : ndarray of float64
        Normalised importance of each feature (sums to 1).

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from boosters.dask import DaskGBDTRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = X[:, 0] - 2 * X[:, 1]
    >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
    ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     est = DaskGBDTRegressor(n_estimators=5).fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    ...     predictions = est.predict(da.from_array(X, chunks=100))  # lazy: one task per partition
    ...     type(predictions).__name__, predictions.numblocks, est.booster_.n_trees
    ('Array', (4,), 5)
    """

    if not TYPE_CHECKING:  # (type checkers read _GBDTEstimator's signature)
        __init__ = _storing_init({**_PARAMETERS, "client": None, "steps": "workers"})

    def fit(self, X, y, sample_weight=None, eval_set=None, *, eval_names=None):
        """Train on (X, y), partition by partition where they are.

        Parameters
        ----------
        %(X)s
        y : dask.array.Array or dask.dataframe.Series of shape (n_samples,)
            Finite targets.
        %(sample_weight)s
        %(eval_set)s

        Returns
        -------
        self

        Examples
        --------
        >>> import dask.array as da
        >>> from distributed import Client, LocalCluster
        >>> from boosters.dask import DaskGBDTRegressor
        >>> rng = np.random.default_rng(0)
        >>> X, X_val = rng.normal(size=(400, 3)), rng.normal(size=(200, 3))
        >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
        ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
        ...     est = DaskGBDTRegressor(n_estimators=100, learning_rate=0.8, early_stopping_rounds=2).fit(
        ...         da.from_array(X, chunks=200), da.from_array(X[:, 0], chunks=200),
        ...         eval_set=(da.from_array(X_val, chunks=100), da.from_array(X_val[:, 0], chunks=100)))
        >>> est.best_iteration_ < 99, len(est.evals_result_["valid"]["rmse"]) == est.best_iteration_ + 3
        (True, True)
        """
        client = self._client()
        config = self._checked_config(self._objective("regression", Objective.squared()))
        with client.as_current():  # what Dask computes on the way (a Series' row counts) runs there
            given = (X, y)
            X, y, sample_weight = self._checked_data(X, y, sample_weight)
            return self._train(client, X, y, sample_weight, self._eval_sets(eval_set, given), config,
                               eval_names=eval_names)

    def predict(self, X):
        """Predicted values, lazily: one task per row partition of X.

        Parameters
        ----------
        %(X_predict)s

        Returns
        -------
        dask.array.Array of shape (n_samples,)
            One block per row partition of X.

        Examples
        --------
        >>> import dask.array as da
        >>> from distributed import Client, LocalCluster
        >>> from boosters.dask import DaskGBDTRegressor
        >>> X = np.random.default_rng(0).normal(size=(300, 2))
        >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
        ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
        ...     est = DaskGBDTRegressor(n_estimators=5).fit(da.from_array(X, chunks=100),
        ...                                                 da.from_array(X[:, 0], chunks=100))
        >>> lazy = est.predict(da.from_array(X, chunks=150))  # computed anywhere, even without the cluster
        >>> lazy.chunks, bool((lazy.compute(scheduler="sync") == est.booster_.predict(X)).all())
        (((150, 150),), True)
        """
        return self._map(X, _predictions)


@fill_doc(**_DASK_DOCS)
class DaskGBDTClassifier(ClassifierMixin, _DaskGBDTEstimator):
    """Gradient boosted trees for classification on Dask collections:
    `boosters.sklearn.GBDTClassifier`'s parameters and attributes, trained data-parallel
    with `boosters.dask.train` (logistic loss for two classes, softmax for more, unless
    `objective` names another: "one_vs_rest", "hinge") and predicting lazily. Labels may
    be of any type; `classes_` holds them sorted, found with `dask.array.unique`, and the
    labels are coded 0..n_classes-1 partition by partition.

    Parameters
    ----------
    %(parameters)s
    %(class_weight)s

    Attributes
    ----------
    %(classes_)s
    %(fitted_attributes)s

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from boosters.dask import DaskGBDTClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=400) > 0, "yes", "no")
    >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
    ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     clf = DaskGBDTClassifier(n_estimators=5).fit(da.from_array(X, chunks=100), da.from_array(y, chunks=100))
    >>> clf.classes_
    array(['no', 'yes'], dtype='<U3')
    >>> X[2:5, 0].round(2), clf.predict(da.from_array(X[2:5], chunks=3)).compute(scheduler="sync")
    (array([ 1.3 , -1.27, -2.33]), array(['yes', 'no', 'no'], dtype='<U3'))
    """

    if not TYPE_CHECKING:  # (type checkers read _GBDTEstimator's signature)
        __init__ = _storing_init({**_PARAMETERS, "class_weight": None, "client": None, "steps": "workers"})

    def fit(self, X, y, sample_weight=None, eval_set=None, *, eval_names=None):
        """Train on (X, y), partition by partition where they are; the labels of an
        `eval_set` must be among the training labels.

        Parameters
        ----------
        %(X)s
        y : dask.array.Array or dask.dataframe.Series of shape (n_samples,)
            Class labels of any type (at least two classes).
        %(sample_weight)s
        %(eval_set)s

        Returns
        -------
        self

        Examples
        --------
        >>> import dask.array as da
        >>> from distributed import Client, LocalCluster
        >>> from boosters.dask import DaskGBDTClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(400, 2))
        >>> y = X[:, 0] + 0.5 * rng.normal(size=400) > 1  # few True
        >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
        ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
        ...     clf = DaskGBDTClassifier(n_estimators=5, class_weight="balanced").fit(
        ...         da.from_array(X, chunks=200), da.from_array(y, chunks=200))
        >>> clf.classes_, clf.n_features_in_
        (array([False,  True]), 2)
        """
        client = self._client()
        # the parameters checked before any data is touched (the objective again once the classes are known)
        self._checked_config(self._objective("classification", Objective.logistic(), 2))
        with client.as_current():  # what Dask computes on the way (a Series' row counts) runs there
            return self._fit_classes(client, X, y, sample_weight, eval_set, eval_names)

    def _fit_classes(self, client, X, y, sample_weight, eval_set, eval_names=None):
        """`fit` after the parameters are checked: the classes found with Dask, the labels
        (and eval_set's) coded 0..n_classes-1 partition by partition, class_weight applied,
        the objective chosen for the number of classes as GBDTClassifier's."""
        da = _dask_array()
        given = (X, y)
        X, y, sample_weight = self._checked_data(X, y, sample_weight)
        eval_pairs = self._eval_sets(eval_set, given)
        classes, counts = gather(client, client.compute(list(da.unique(y, return_counts=True))))
        check_classification_targets(classes)  # a ValueError for continuous or NaN labels
        if len(classes) < 2:
            raise ValueError(f"y has {len(classes)} class; a classifier needs at least 2 classes")
        self.classes_, self.n_classes_ = classes, len(classes)
        config = self._checked_config(_classification_objective(self, self.n_classes_))
        codes = y.map_blocks(partial(_class_codes, classes), dtype=np.float64)
        class_weights = self._class_weights(counts)
        if class_weights is not None:
            by_class = codes.map_blocks(partial(_row_class_weights, class_weights=class_weights), dtype=np.float64)
            sample_weight = by_class if sample_weight is None else sample_weight * by_class
        if eval_pairs is not None:
            eval_pairs = [None if pair is None else
                          (pair[0], pair[1].map_blocks(partial(_class_codes, classes), dtype=np.float64))
                          for pair in eval_pairs]
        return self._train(client, X, codes, sample_weight, eval_pairs, config, eval_names=eval_names)

    def _class_weights(self, counts: np.ndarray) -> np.ndarray | None:
        """Per class (`classes_` order) its rows' class_weight factor, as sklearn's
        compute_sample_weight gives it; `counts`: the rows of each class."""
        if self.class_weight is None:
            return None
        if isinstance(self.class_weight, str) and self.class_weight == "balanced":
            counts = counts.astype(np.float64)  # compute_class_weight's "balanced", from the counts
            return counts.sum() / (len(counts) * counts)
        return compute_class_weight(self.class_weight, classes=self.classes_, y=self.classes_)

    def predict_proba(self, X):
        """Class probabilities, lazily: one task per row partition of X.

        Parameters
        ----------
        %(X_predict)s

        Returns
        -------
        dask.array.Array of shape (n_samples, n_classes)
            Columns in `classes_` order; rows sum to 1 (one-vs-rest: its per-class
            sigmoids divided by their sum; hinge: 1 for the predicted class).

        Examples
        --------
        >>> import dask.array as da
        >>> from distributed import Client, LocalCluster
        >>> from boosters.dask import DaskGBDTClassifier
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
        ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
        ...     clf = DaskGBDTClassifier(n_estimators=5).fit(da.from_array(X, chunks=100),
        ...                                                  da.from_array(X[:, 0] > 0, chunks=100))
        >>> p = clf.predict_proba(da.from_array(X, chunks=100)).compute(scheduler="sync")
        >>> p.shape, bool(np.allclose(p.sum(axis=1), 1.0))
        ((200, 2), True)
        """
        check_is_fitted(self, "booster_")
        return self._map(X, _probabilities, n_columns=self.n_classes_)

    def decision_function(self, X):
        """Raw margins (the log-odds of ``classes_[1]`` for two classes, else one margin per
        class), lazily: one task per row partition.

        Parameters
        ----------
        %(X_predict)s

        Returns
        -------
        dask.array.Array of shape (n_samples,) or (n_samples, n_classes)

        Examples
        --------
        >>> import dask.array as da
        >>> from distributed import Client, LocalCluster
        >>> from boosters.dask import DaskGBDTClassifier
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
        ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
        ...     clf = DaskGBDTClassifier(n_estimators=5).fit(da.from_array(X, chunks=100),
        ...                                                  da.from_array(X[:, 0] > 0, chunks=100))
        >>> margin = clf.decision_function(da.from_array(X, chunks=100)).compute(scheduler="sync")
        >>> p = clf.predict_proba(da.from_array(X, chunks=100)).compute(scheduler="sync")
        >>> bool(np.allclose(1 / (1 + np.exp(-margin)), p[:, 1]))
        True
        """
        check_is_fitted(self, "booster_")
        n_outputs = self.booster_.forest.n_groups
        return self._map(X, partial(_predictions, raw=True), n_columns=None if n_outputs == 1 else n_outputs)

    def predict(self, X):
        """The most probable class of each row, lazily: one task per row partition of X.

        Parameters
        ----------
        %(X_predict)s

        Returns
        -------
        dask.array.Array of shape (n_samples,)
            Labels from `classes_`.

        Examples
        --------
        >>> import dask.array as da
        >>> from distributed import Client, LocalCluster
        >>> from boosters.dask import DaskGBDTClassifier
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
        ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
        ...     clf = DaskGBDTClassifier(n_estimators=5).fit(
        ...         da.from_array(X, chunks=100), da.from_array(np.where(X[:, 0] > 0, "pos", "neg"), chunks=100))
        >>> clf.predict(da.from_array(X[:4], chunks=2)).compute(scheduler="sync")
        array(['pos', 'pos', 'neg', 'pos'], dtype='<U3')
        """
        check_is_fitted(self, "booster_")
        return self._map(X, partial(_labels, classes=self.classes_), dtype=self.classes_.dtype)


@fill_doc(**_DASK_DOCS)
class DaskGBDTRanker(_DaskGBDTEstimator):
    """Gradient boosted trees for learning to rank on Dask collections:
    `boosters.sklearn.GBDTRanker`'s parameters and attributes (LambdaRank by default, or
    "pairwise"), trained data-parallel with `boosters.dask.train`, the rows' queries given
    by `qid`; `predict` gives lazy ranking scores.

    Parameters
    ----------
    %(parameters)s
    %(ndcg_at)s

    Attributes
    ----------
    %(fitted_attributes)s

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from boosters.dask import DaskGBDTRanker
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> relevance = np.clip(np.round(X[:, 0] + 1), 0, 3)
    >>> qid = np.repeat(np.arange(10), 20)  # 10 queries of 20 rows, 5 in each partition
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
    ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     ranker = DaskGBDTRanker(n_estimators=10).fit(da.from_array(X, chunks=100), da.from_array(relevance,
    ...                                                  chunks=100), qid=da.from_array(qid, chunks=100))
    >>> scores = ranker.booster_.predict(X[:20])  # one query's rows
    >>> bool(np.corrcoef(scores, relevance[:20])[0, 1] > 0.8)
    True
    """

    if not TYPE_CHECKING:  # (type checkers read _GBDTEstimator's signature)
        __init__ = _storing_init({**_PARAMETERS, "ndcg_at": 10, "client": None, "steps": "workers"})

    def fit(self, X, y, sample_weight=None, eval_set=None, *, qid, eval_qid=None, eval_names=None):
        """Train on (X, y) with the rows grouped into queries by `qid`.

        Parameters
        ----------
        %(X)s
        y : dask.array.Array or dask.dataframe.Series of shape (n_samples,)
            Relevance labels (integers 0..30 for LambdaRank).
        %(sample_weight)s
        eval_set : (X_val, y_val) or a list of such pairs, optional
            Each scored after every round (NDCG@ndcg_at by default), for `evals_result_`;
            early stopping watches the last; their queries given by `eval_qid`.
        qid : dask.array.Array or dask.dataframe.Series of shape (n_samples,)
            Keyword-only, as are `eval_qid` and `eval_names`: each row's query id. A
            query's rows are consecutive and in one row partition of X (ValueError naming
            qid otherwise).
        eval_qid : dask.array.Array, dask.dataframe.Series or list of them, optional
            The query ids of `eval_set`'s rows, as `qid`: a list of one per pair (as
            XGBoost's ``eval_qid``; any value, None say, for a pair that is fit's own X
            and y, whose queries are `qid`), or one for a single pair.
        eval_names : list of str, optional
            The eval sets' names in `evals_result_` (as the other Dask estimators').

        Returns
        -------
        DaskGBDTRanker
            self

        Examples
        --------
        >>> import dask.array as da
        >>> from distributed import Client, LocalCluster
        >>> from boosters.dask import DaskGBDTRanker
        >>> rng = np.random.default_rng(1)
        >>> X = rng.normal(size=(120, 2))
        >>> y = np.clip(np.round(X[:, 0] + 1), 0, 3)
        >>> qid = np.repeat(np.arange(6), 20)  # 6 queries of 20 rows, 3 in each partition
        >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
        ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
        ...     ranker = DaskGBDTRanker(n_estimators=3).fit(da.from_array(X, chunks=60), da.from_array(y, chunks=60),
        ...                                                 qid=da.from_array(qid, chunks=60))
        >>> ranker.booster_.n_trees
        3
        """
        client = self._client()
        config = self._checked_config(_ranking_objective(self))
        with client.as_current():
            given = (X, y)
            X, y, sample_weight = self._checked_data(X, y, sample_weight)
            eval_pairs = self._eval_sets(eval_set, given)
            if eval_pairs is None and eval_qid is not None:
                raise ValueError("eval_qid is given without an eval_set")
            if eval_pairs is not None:
                if eval_qid is None and any(pair is not None for pair in eval_pairs):
                    raise ValueError("eval_qid: give the eval_set rows' query ids (its NDCG is scored per query)")
                eval_qid = _per_eval_set("eval_qid", eval_qid, len(eval_pairs))
                eval_qid = [None if pair is None else self._check_vector(q, "eval_qid")
                            for pair, q in zip(eval_pairs, eval_qid)]
            return self._train(client, X, y, sample_weight, eval_pairs, config, qid=self._check_vector(qid, "qid"),
                               eval_qid=eval_qid, eval_names=eval_names)

    def predict(self, X):
        """Ranking scores, lazily (within a query, a higher score ranks a row higher): one
        task per row partition of X.

        Parameters
        ----------
        %(X_predict)s

        Returns
        -------
        dask.array.Array of shape (n_samples,)
            One block per row partition of X.

        Examples
        --------
        >>> import dask.array as da
        >>> from distributed import Client, LocalCluster
        >>> from boosters.dask import DaskGBDTRanker
        >>> rng = np.random.default_rng(2)
        >>> X = rng.normal(size=(100, 2))
        >>> y = np.clip(np.round(X[:, 0] + 1), 0, 3)
        >>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
        ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
        ...     ranker = DaskGBDTRanker(n_estimators=3).fit(da.from_array(X, chunks=50), da.from_array(y, chunks=50),
        ...                                                 qid=da.from_array(np.repeat(np.arange(4), 25), chunks=50))
        >>> scores = ranker.predict(da.from_array(X, chunks=50))  # lazy: one task per partition
        >>> bool((scores.compute(scheduler="sync") == ranker.booster_.predict(X)).all())
        True
        """
        return self._map(X, _predictions)
