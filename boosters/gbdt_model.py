"""GBDTModel: the user-facing model. It trains (training/), predicts (model/), saves and
loads (io/) and explains (explain/), holding what the training produced: an Ensemble
(`model/ensemble.py`). It sits above those layers so that none of them imports another
beside its own inputs."""

from __future__ import annotations

import copy
import os
import warnings

import numpy as np

from boosters._lib.checks import require_float
from boosters._lib.threads import effective_n_threads
from boosters.callbacks import as_boosters_callbacks
from boosters.config import GBDTConfig, Objective
from boosters.data.dataset import Dataset
from boosters.data.categories import frame_codes
from boosters.data.target_statistics import UNSEEN_CODE, encode
from boosters.data.frames import as_frame
from boosters.data.sparse import as_sparse_matrix, frame_to_sparse, has_sparse_columns, is_sparse
from boosters.data.validation import (as_feature_matrix, as_init_score, as_labels, as_vector, column_names,
                                      init_score_columns, match_columns)
from boosters.explain import shap as _shap
from boosters.explain import shap_package as _shap_package
from boosters.explain.importance import ImportanceType, feature_importance
from boosters.explain.tree_table import trees_to_dataframe
from boosters.io import json_format, model_files, npz_format
from boosters.io.atomic import read_regular_file, write_atomically, write_target
from boosters.model.ensemble import Ensemble
from boosters.model.continued import continued, starting_from
from boosters.model.forest import Forest
from boosters.model.refit import refit_forest
from boosters.model.refit import refused as refit_refused
from boosters.model.tree import Tree
from boosters.training.trainer import GBDTTrainer, named_sets


_FLOAT_MATRIX_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # native byte order


class GBDTModel:
    """A trained gradient boosted tree ensemble.

    Make one with `GBDTModel.train`, or `GBDTModel.load` / `from_bytes` / pickle.

    Parameters
    ----------
    ensemble : boosters.model.ensemble.Ensemble
        What the training produced (a ``TrainingResult``: the Ensemble and how the run
        went) or a loaded Ensemble, kept as ``model.ensemble``; the properties read
        through it.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3))
    >>> y = X[:, 0] + 0.5 * X[:, 1] ** 2
    >>> config = bst.GBDTConfig(n_estimators=50, learning_rate=0.1, early_stopping_rounds=5)
    >>> model = bst.GBDTModel.train(bst.Dataset(X[:400], y[:400]), config,
    ...                             val_set=bst.Dataset(X[400:], y[400:]))
    >>> model.n_trees == model.best_iteration + 1, round(model.best_score, 3)
    (True, 0.258)
    >>> model.predict(X[:3]).round(3)
    array([0.179, 0.301, 1.924])
    """

    def __init__(self, ensemble: Ensemble):
        if not isinstance(ensemble, Ensemble):
            raise TypeError(f"ensemble must be a boosters Ensemble, got {type(ensemble).__name__}")
        self.ensemble = ensemble

    @classmethod
    def train(cls, dataset: Dataset, config: GBDTConfig | None = None,
              val_set: Dataset | dict[str, Dataset] | list[tuple[str, Dataset]] | None = None,
              n_threads: int = 0, callbacks=None, init_model=None) -> "GBDTModel":
        """Train a model on `dataset`.

        With `val_set`, every round is evaluated on it (``eval_history``) and
        ``config.early_stopping_rounds`` stops the training when the score stops
        improving. Ctrl-C stops the training at the end of the current round and returns
        the model of the completed rounds (a warning is logged); a second Ctrl-C raises
        KeyboardInterrupt when the kernel running returns: within the round, or, when
        rounds grow in blocks without the GIL (no callbacks, no `val_set`), after the
        current block (about 0.1 s, or one round if a round takes longer). At
        ``config.verbosity >= 1`` the scores are shown: a progress bar in a terminal or
        notebook, a line per round (``logging``) elsewhere.

        Parameters
        ----------
        dataset : Dataset
            The training data, with labels.
        config : GBDTConfig, optional
            The parameters; default ``GBDTConfig()``.
        val_set : Dataset, dict of str to Dataset, or list of (str, Dataset), optional
            Validation data with labels, evaluated after every round. Several named
            sets (a dict, or (name, Dataset) pairs) are each scored under their name
            (``boosters.callbacks.record_evaluation``: ``{name: {metric: [...]}}``; a
            single Dataset's name is ``"valid"``); the training Dataset itself may be one
            of them (its training scores, as LightGBM's ``valid_sets=[train, ...]``).
            Early stopping and ``eval_history`` follow the last set that is not the
            training set.
        n_threads : int, default 0
            Threads to use; 0 uses all available cores.
        callbacks : list, optional
            Callbacks called in the boosting loop (see `boosters.callbacks`): objects
            with ``before_iteration(env)`` / ``after_iteration(env)`` (returning True stops
            the training), ``before_training(env)`` / ``after_training(env)``; a plain
            function is called after every round. LightGBM's and XGBoost's early stopping,
            logging and recording callbacks are taken as boosters' of the same meaning;
            their others are refused with a TypeError saying how to write them.
        init_model : GBDTModel, str or path, optional
            Continue training this model (LightGBM's `init_model`, XGBoost's
            `xgb_model`): the new trees grow from its margins (its raw predictions, as the
            Datasets' init_score; a Dataset with an init_score of its own is refused) and
            follow its trees in the model returned. Without row or column sampling and
            with float64 histograms, n rounds then m more are the n + m rounds' model;
            sampling and quantization draw the continued rounds as a new training's.

        Returns
        -------
        GBDTModel
            The trained model (with `init_model`: its trees, then the new ones).

        Examples
        --------
        >>> import numpy as np
        >>> import boosters as bst
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 4))
        >>> y = X[:, 0] - 2 * X[:, 1] + 0.1 * rng.normal(size=300)
        >>> config = bst.GBDTConfig(n_estimators=100, early_stopping_rounds=5)
        >>> model = bst.GBDTModel.train(bst.Dataset(X[:200], y[:200]), config,
        ...                             val_set=bst.Dataset(X[200:], y[200:]))
        >>> model.n_trees, model.best_iteration, round(model.best_score, 3)
        (91, 90, 0.461)
        >>> model.predict(X[:3]).round(2)
        array([ 0.33, -1.25,  2.38])
        """
        config = GBDTConfig() if config is None else config
        if not isinstance(config, GBDTConfig):
            raise TypeError(f"config must be a GBDTConfig, got {type(config).__name__}")
        callbacks = as_boosters_callbacks(callbacks)  # LightGBM's and XGBoost's own, translated or refused
        old = None if init_model is None else cls._init_model(init_model)
        if old is not None and (old.ensemble.target_statistics or (config.cat_encoding == "ordered_ctr"
                                                                   and dataset.categorical_features)):
            raise ValueError("init_model: continued training is not supported with cat_encoding='ordered_ctr' "
                             "(the new trees would read other target statistics than the old ones); train anew, "
                             "or use cat_encoding='splits'")
        if old is not None:  # every Dataset's margins start from the old model's predictions
            started = starting_from(old, dataset, "dataset")
            val_set = [(name, started if d is dataset else starting_from(old, d, name))
                       for name, d in named_sets(val_set)] or None
            dataset = started
        result = GBDTTrainer(config, n_threads).train(dataset, val_set, callbacks, as_model=cls)
        result.forest.flat(grown=True)  # read-only from here, as a loaded model's trees
        return cls(result) if old is None else cls(continued(old.ensemble, result))

    @classmethod
    def _init_model(cls, init_model) -> "GBDTModel":
        if isinstance(init_model, GBDTModel):
            return init_model
        if isinstance(init_model, (str, bytes)) or hasattr(init_model, "__fspath__"):
            return cls.load(init_model)
        raise TypeError(f"init_model must be a GBDTModel or the path of a saved one, got {type(init_model).__name__}")

    # -- what the training produced ----------------------------------------------------------

    @property
    def forest(self) -> Forest:
        """The trees, their output groups and base scores."""
        return self.ensemble.forest

    @property
    def objective(self) -> Objective:
        """The objective the model was trained for."""
        return self.ensemble.objective

    @property
    def config(self) -> GBDTConfig | None:
        """The training configuration (None if unknown)."""
        return self.ensemble.config

    @property
    def n_features(self) -> int:
        """The number of features the model reads."""
        return self.ensemble.n_features

    @property
    def feature_names(self) -> list[str] | None:
        """The training feature names, or None."""
        return self.ensemble.feature_names

    @property
    def categorical_features(self) -> list[int]:
        """The sorted indices of the categorical features."""
        return self.ensemble.categorical_features

    @property
    def categories(self) -> dict:
        """Categorical feature -> its raw values in code order (None: trained on codes)."""
        return self.ensemble.categories

    @property
    def best_iteration(self) -> int | None:
        """The 0-based round the model ends with: with early stopping the round with the
        best validation score (later rounds dropped), otherwise the last round."""
        return self.ensemble.best_iteration

    @property
    def best_score(self) -> float | None:
        """The validation score of `best_iteration` (None without a val_set): the best one
        with early stopping, otherwise the last round's."""
        return self.ensemble.best_score

    @property
    def eval_history(self) -> list[float]:
        """The validation score of every round (empty without a val_set)."""
        return self.ensemble.eval_history

    @property
    def n_trees(self) -> int:
        """The number of trees (rounds x outputs)."""
        return self.forest.n_trees

    @property
    def trees(self) -> list[Tree]:
        """The trees in boosting order (their arrays are read-only; assign new ones to edit)."""
        return self.forest.trees

    def __getitem__(self, rounds) -> "GBDTModel":
        """The model of some boosting rounds, as XGBoost's ``booster[a:b]``: ``model[a:b]``
        keeps the trees of rounds a..b-1 (every output's), ``model[i]`` round i's; the base
        scores, objective and features are the model's, the training record is not kept.

        Parameters
        ----------
        rounds : slice or int
            0-based rounds; a slice's step must be 1, negative ends count from the last.

        Returns
        -------
        GBDTModel
            A new model (its trees are this model's, shared read-only).

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=10))
        >>> first, rest = model[:4], model[4:]
        >>> first.n_trees, rest.n_trees
        (4, 6)
        >>> base = model.forest.base_scores[0]
        >>> bool(np.allclose(first.predict_raw(X) + rest.predict_raw(X) - base, model.predict_raw(X)))
        True
        """
        n_out = self.forest.n_groups
        n_rounds = self.n_trees // n_out
        if isinstance(rounds, (int, np.integer)) and not isinstance(rounds, bool):
            index = int(rounds) + (n_rounds if rounds < 0 else 0)
            if not 0 <= index < n_rounds:
                raise IndexError(f"round {rounds} is out of range: the model has {n_rounds} rounds")
            rounds = slice(index, index + 1)
        if not isinstance(rounds, slice) or rounds.step not in (None, 1):
            raise TypeError(f"a model is sliced by rounds, model[start:stop] (step 1) or model[i], got {rounds!r}")
        start, stop, _ = rounds.indices(n_rounds)
        forest = Forest(n_out, self.forest.base_scores)
        for t in range(start * n_out, max(start, stop) * n_out):
            forest.add(self.forest.trees[t], self.forest.tree_group[t])
        forest.flat(grown=True)
        ensemble = Ensemble(forest, self.objective, self.n_features, self.feature_names,
                            categories=dict(self.ensemble.categories),
                            target_statistics=dict(self.ensemble.target_statistics))
        return GBDTModel(ensemble)

    def refit(self, X, y, weights=None, decay_rate: float = 0.9, n_threads: int = 0) -> "GBDTModel":
        """The model with its leaf values renewed on new data, its trees' splits kept
        (LightGBM's ``refit``).

        Tree by tree, each leaf's value becomes ``decay_rate * old + (1 - decay_rate) *
        new``, `new` being the training's leaf weight (L1 soft-thresholded Newton step of
        the config's `l1` and `l2`, times its `learning_rate`) from the gradients of the
        rows that reach the leaf, at the new rows' margins before the tree (a leaf no row
        reaches: new = 0). Refused (ValueError): custom, ranking and quantile
        (absolute, pinball) objectives, DART, linear leaves.

        Parameters
        ----------
        X : array-like, DataFrame, scipy.sparse matrix or Dataset
            The new rows, as for `predict`.
        y : array-like
            Their labels.
        weights : array-like, optional
            Their weights.
        decay_rate : float, default 0.9
            The old value's share, in [0, 1] (LightGBM's default 0.9).
        n_threads : int, default 0
            Threads (0: every core).

        Returns
        -------
        GBDTModel
            A new model (this one is unchanged).

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 2))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=10, max_depth=2))
        >>> shifted = model.refit(X, X[:, 0] + 5.0, decay_rate=0.0)
        >>> bool(shifted.predict(X).mean() > model.predict(X).mean() + 1.0)
        True
        """
        why = refit_refused(self.objective, self.config, self.forest)
        if why is not None:
            raise ValueError(f"refit: {why}")
        decay_rate = require_float("decay_rate", decay_rate, 0.0)
        if decay_rate > 1.0:
            raise ValueError(f"decay_rate must be in [0, 1], got {decay_rate}")
        features = self._features(X)
        n_rows = features.shape[0]
        labels = as_labels(y, n_rows, "y")
        w = None if weights is None else as_vector(weights, n_rows, "weights")
        forest = refit_forest(self.forest, self.objective, self.config, features, labels, w, decay_rate,
                              effective_n_threads(n_threads))
        ensemble = copy.copy(self.ensemble)
        ensemble.forest = forest
        return GBDTModel(ensemble)

    def _rounds(self, start_iteration: int, num_iteration, iteration_range) -> "GBDTModel":
        """The model predict's round options ask for: all rounds by default."""
        if iteration_range is not None:  # XGBoost: [begin, end), (0, 0) for all
            if start_iteration or num_iteration:
                raise ValueError("give iteration_range (XGBoost) or start_iteration / num_iteration (LightGBM), "
                                 "not both")
            begin, end = iteration_range
            return self if (begin, end) == (0, 0) else self[begin:end if end > 0 else None]
        if not start_iteration and (num_iteration is None or num_iteration <= 0):
            return self
        n_rounds = self.n_trees // self.forest.n_groups
        stopped_early = len(self.ensemble.eval_history) > n_rounds  # scored rounds past the best, cut off
        if not start_iteration and num_iteration == self.best_iteration == n_rounds - 1 and stopped_early:
            # a LightGBM habit: its best_iteration counts rounds, boosters' (and XGBoost's) is 0-based
            warnings.warn(f"num_iteration=best_iteration ({num_iteration}) leaves out the best round: "
                          "boosters' best_iteration is 0-based (as XGBoost's; LightGBM's is a count) and the "
                          "model keeps only the rounds up to it, so predict(X) already uses the best round",
                          UserWarning, stacklevel=3)
        end = None if num_iteration is None or num_iteration <= 0 else start_iteration + num_iteration
        return self[start_iteration:end]

    # -- prediction --------------------------------------------------------------------

    def _features(self, X) -> np.ndarray:
        """X as the float matrix the trees read: a frame's or Dataset's columns are matched
        to the model's features by name (when both have names), an array's by position;
        categorical features coded with the model's categories by value, then, in a model
        of ordered CTRs, replaced by their target statistics."""
        tables = self.ensemble.target_statistics
        if not tables:
            return self._codes(X)
        X = self._codes(X, UNSEEN_CODE)
        if is_sparse(X):
            raise ValueError("X: a model trained with cat_encoding='ordered_ctr' reads its categorical features "
                             "from a dense array or frame, not a scipy.sparse matrix")
        return encode(X, tables)

    def _codes(self, X, unseen: float = np.nan) -> np.ndarray:
        """`_features` before target statistics; `unseen`: the code of a category value the
        model has not seen (NaN: missing)."""
        if type(X) is np.ndarray and X.ndim == 2 and X.dtype in _FLOAT_MATRIX_DTYPES and X.size:
            self._check_width(X.shape[1])  # the common case first: what as_feature_matrix returns as is
            return X
        names, categories = self.feature_names, self.ensemble.categories
        if isinstance(X, Dataset):
            return X.features_for(self.n_features, names, categories, "X", unseen)
        if is_sparse(X):  # numeric values, categorical features as codes (as an array's)
            X = as_sparse_matrix(X, "X")
            self._check_width(X.shape[1])
            return X
        if has_sparse_columns(X):
            given = column_names(X)
            assert given is not None  # has_sparse_columns: a pandas DataFrame
            order = None if names is None else match_columns(given, names, "X")
            X = frame_to_sparse(X if order is None else X.iloc[:, order], "X")
            self._check_width(X.shape[1])
            return X
        frame = as_frame(X)
        if frame is None:
            X = as_feature_matrix(X, "X")
            self._check_width(X.shape[1])
            return X
        order = None if names is None else match_columns(frame.names, names, "X")
        self._check_width(frame.shape[1] if order is None else len(order))
        return frame_codes(frame, order, categories, names, unseen)

    def _check_width(self, n_columns: int) -> None:
        if n_columns != self.n_features:
            raise ValueError(f"X has {n_columns} features but the model was trained on {self.n_features}")

    def _margins(self, X, n_threads: int, init_score) -> np.ndarray:
        """(n_rows, n_outputs) margins of X, plus `init_score` (or a Dataset's own)."""
        if init_score is None and isinstance(X, Dataset):
            init_score = X.init_score
        margins = self.ensemble.predict_margins(self._features(X), effective_n_threads(n_threads))
        if init_score is not None:
            margins += init_score_columns(as_init_score(init_score, len(margins)), margins.shape[1])
        return margins

    def predict_raw(self, X, n_threads: int = 0, init_score=None) -> np.ndarray:
        """The raw margins: before the objective's link (log-odds for logistic).

        Parameters
        ----------
        X : array-like, DataFrame, pyarrow.Table, scipy.sparse matrix or Dataset
            The rows to predict, as for `predict`.
        n_threads : int, default 0
            Threads; 0 uses every available core.
        init_score : array-like, optional
            Starting margins added to the model's, as for `predict`.

        Returns
        -------
        numpy.ndarray
            ``(n_rows,)`` for one output, ``(n_rows, n_classes)`` for softmax,
            ``(n_rows, n_targets)`` for multi-target regression.

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> model = bst.GBDTModel.train(
        ...     bst.Dataset(X, X[:, 0] > 0),
        ...     bst.GBDTConfig(n_estimators=5, objective=bst.Objective.logistic()))
        >>> margin = model.predict_raw(X[:2])
        >>> np.allclose(1 / (1 + np.exp(-margin)), model.predict(X[:2]))
        True
        """
        margins = self._margins(X, n_threads, init_score)
        return margins[:, 0] if margins.shape[1] == 1 else margins

    def predict(self, X, n_threads: int = 0, init_score=None, *, raw_score: bool = False,
                output_margin: bool = False, pred_leaf: bool = False, pred_contrib: bool = False,
                start_iteration: int = 0, num_iteration: int | None = None,
                iteration_range: tuple[int, int] | None = None) -> np.ndarray:
        """Predictions: values (squared error), P(y=1) (logistic) or class probabilities.

        LightGBM's and XGBoost's options are taken too: `raw_score` / `output_margin`
        (`predict_raw`), `pred_leaf` (`predict_leaf`), `pred_contrib` (`shap_values`), and
        the rounds to use: `start_iteration` and `num_iteration` (LightGBM) or
        `iteration_range` (XGBoost). A model cut back by early stopping has its best
        round's trees only, so the default (every round) is the best iteration's.

        Parameters
        ----------
        X : array-like, DataFrame, pyarrow.Table, scipy.sparse matrix or Dataset
            The rows to predict, with the training features; NaN is missing. A frame's
            columns (or a named Dataset's) are matched to the model's feature names in any
            order, missing or extra columns raise ValueError naming them; an array's are
            taken by position. Categorical features are coded with the model's categories
            by value. A scipy.sparse CSR/CSC matrix is never densified (a stored or
            implicit zero is 0).
        n_threads : int, default 0
            Threads; 0 uses every available core. The result does not depend on it.
        init_score : array-like, optional
            Starting margins, ``(n_rows,)`` or ``(n_rows, n_outputs)``, added to the
            model's margins before the output transform (a Dataset's own ``init_score``
            when None, as XGBoost's ``base_margin``). A model trained with an init_score
            has start 0, so this gives init_score + trees, as LightGBM and XGBoost.
        raw_score, output_margin : bool, default False
            The raw margins (LightGBM's and XGBoost's names of `predict_raw`).
        pred_leaf : bool, default False
            The leaf of every row in every tree (`predict_leaf`).
        pred_contrib : bool, default False
            The SHAP values with the bias last (`shap_values`; XGBoost's shape for
            several outputs, ``(n_rows, n_outputs, n_features + 1)``).
        start_iteration : int, default 0
            The first round used (LightGBM).
        num_iteration : int, optional
            The number of rounds used from `start_iteration`; None or <= 0: all.
        iteration_range : tuple of (int, int), optional
            The rounds [begin, end) used (XGBoost; (0, 0): all).

        Returns
        -------
        numpy.ndarray
            ``(n_rows,)``; ``(n_rows, n_classes)`` for softmax, ``(n_rows, n_targets)``
            for multi-target regression (with the options: as the methods named).

        Examples
        --------
        >>> import pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
        >>> model = bst.GBDTModel.train(bst.Dataset(df, 2 * df["a"]), bst.GBDTConfig(n_estimators=5))
        >>> p = model.predict(df)
        >>> p.shape, np.array_equal(model.predict(df[["b", "a"]]), p)  # matched by name
        ((200,), True)
        >>> np.array_equal(model.predict(df, num_iteration=3), model[:3].predict(df))
        True
        """
        model = self._rounds(start_iteration, num_iteration, iteration_range)
        if sum(map(bool, (raw_score or output_margin, pred_leaf, pred_contrib))) > 1:
            raise ValueError("predict: ask for one of raw_score/output_margin, pred_leaf and pred_contrib")
        if pred_leaf:
            return model.predict_leaf(X, n_threads)
        if pred_contrib:
            return model.shap_values(X, n_threads)
        if raw_score or output_margin:
            return model.predict_raw(X, n_threads, init_score)
        return model.ensemble.transform(model._margins(X, n_threads, init_score))

    # -- inspection ----------------------------------------------------------------------

    def feature_importance(self, importance_type: ImportanceType | str = "split", normalize: bool = False) -> np.ndarray:
        """Per feature, how much the trees use it.

        Parameters
        ----------
        importance_type : ImportanceType or str, default "split"
            ``"split"`` (number of splits on the feature), ``"gain"`` (their total gain),
            ``"cover"`` (their total cover, the hessian sum reaching them),
            ``"average_gain"`` or ``"average_cover"`` (per split); see `ImportanceType`.
        normalize : bool, default False
            Scale to sum 1 (as scikit-learn's ``feature_importances_``).

        Returns
        -------
        numpy.ndarray
            float64, shape (n_features,); 0 for a feature never split on.

        Examples
        --------
        >>> import numpy as np, boosters as bst
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3)); y = 2 * X[:, 0] + X[:, 1]
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, max_depth=2))
        >>> model.feature_importance("split")
        array([13.,  2.,  0.])
        >>> model.feature_importance(bst.ImportanceType.AverageCover).round(1)
        array([110.8,  79.5,   0. ])
        """
        return feature_importance(self.forest, self.n_features, importance_type, normalize)

    def predict_leaf(self, X, n_threads: int = 0) -> np.ndarray:
        """The leaf each row reaches in every tree (LightGBM's ``pred_leaf``).

        Parameters
        ----------
        X : array-like, DataFrame, scipy.sparse matrix or Dataset
            As for `predict`; NaN means missing.
        n_threads : int, default 0
            Threads to use (0: all available cores).

        Returns
        -------
        numpy.ndarray
            int32, shape (n_rows, n_trees): the leaf's node index within its tree
            (``model.trees[t].value[leaf]`` is its value; the ``node_index`` of
            `trees_to_dataframe`). Trees are in boosting order (for softmax: round by
            round, one tree per class).

        Examples
        --------
        >>> import numpy as np, boosters as bst
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3)); y = 2 * X[:, 0] + X[:, 1]
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=3, max_depth=2))
        >>> leaves = model.predict_leaf(X[:2])
        >>> leaves
        array([[5, 3, 3],
               [5, 3, 3]], dtype=int32)
        >>> margin = model.forest.base_scores[0] + sum(t.value[leaves[:, i]] for i, t in enumerate(model.trees))
        >>> bool(np.allclose(margin, model.predict_raw(X[:2])))
        True
        """
        return self.forest.predict_leaves(self._features(X), effective_n_threads(n_threads))

    def trees_to_dataframe(self):
        """Every node of every tree as a pandas DataFrame, one row per node.

        Returns
        -------
        pandas.DataFrame
            Columns: ``tree_index``, ``node_index`` (within the tree, as `predict_leaf`),
            ``node_depth`` (root 0), ``parent_index``, ``left_child``, ``right_child``
            (nullable ints: missing at the root / at leaves), ``split_feature`` (the
            feature's name, ``"f<i>"`` without names; None at leaves), ``split_gain``,
            ``threshold`` (a numeric split sends ``x <= threshold`` left; NaN at leaves and
            categorical splits), ``decision_type`` (``"<="``, or ``"in"`` for a
            categorical split), ``categories`` (the category values a categorical split
            sends left, their codes for a model trained on codes), ``missing_direction``
            (``"left"`` or ``"right"``), ``value`` (the node's output; the prediction at
            leaves), ``cover`` (hessian sum) and ``count`` (training rows). A model with
            linear leaves adds ``linear_const`` (a leaf's intercept) and ``linear_terms``
            (a leaf's ``{feature: coefficient}``); see :doc:`/guide/linear_leaves`.

        Examples
        --------
        >>> import numpy as np, boosters as bst
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 2)); y = 2 * X[:, 0] + X[:, 1]
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y, feature_names=["a", "b"]),
        ...                             bst.GBDTConfig(n_estimators=2, max_depth=1))
        >>> df = model.trees_to_dataframe()
        >>> len(df)  # two trees of one split and two leaves
        6
        >>> df[["tree_index", "node_index", "left_child", "right_child", "node_depth", "count"]]
           tree_index  node_index  left_child  right_child  node_depth  count
        0           0           0           1            2           0    160
        1           0           1        <NA>         <NA>           1     79
        2           0           2        <NA>         <NA>           1     81
        3           1           0           1            2           0    160
        4           1           1        <NA>         <NA>           1     86
        5           1           2        <NA>         <NA>           1     74
        >>> df["value"].iloc[[1, 2, 4, 5]].round(2).tolist()  # leaf values
        [-0.08, 0.08, -0.07, 0.07]
        >>> df.loc[0, ["split_feature", "decision_type", "missing_direction"]].tolist()
        ['a', '<=', 'right']
        """
        return trees_to_dataframe(self.trees, self.feature_names, self.categories)

    # -- SHAP values -------------------------------------------------------------------------

    def shap_values(self, X, n_threads: int = 0) -> np.ndarray:
        """Exact SHAP values (path-dependent TreeSHAP): each feature's contribution to each
        row's raw margin.

        Computed from the trees alone, with the node covers (hessian sums of the training
        rows) as the distribution of the features, like XGBoost's ``pred_contribs`` and
        LightGBM's ``pred_contrib``. Missing values follow each split's default direction
        and categorical features their split's category set, exactly as in prediction.
        A model with linear leaves raises ValueError (TreeSHAP assumes constant leaves).

        Parameters
        ----------
        X : array-like, DataFrame, scipy.sparse matrix or Dataset
            The rows to explain, as for `predict` (frame columns matched by name).
        n_threads : int, default 0
            Threads (0 = all available cores); the result does not depend on it.

        Returns
        -------
        numpy.ndarray
            float64, ``(n_rows, n_features + 1)``, or ``(n_rows, n_classes, n_features + 1)``
            for softmax (``n_targets`` for multi-target regression): the contributions of the features, then (last column) the bias,
            the model's expected margin. A row sums to its `predict_raw` margin.

        Examples
        --------
        >>> import numpy as np
        >>> import boosters as bst
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3))
        >>> y = 2 * X[:, 0] + X[:, 1] * X[:, 2]
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=20, max_depth=3))
        >>> phi = model.shap_values(X[:2])
        >>> phi.shape
        (2, 4)
        >>> bool(np.allclose(phi.sum(axis=1), model.predict_raw(X[:2])))
        True
        """
        values = _shap.shap_values(self.forest, self._features(X), effective_n_threads(n_threads))
        return values[:, 0] if values.shape[1] == 1 else values

    def shap_interaction_values(self, X, n_threads: int = 0) -> np.ndarray:
        """Exact SHAP interaction values (path-dependent TreeSHAP): each pair of features'
        joint contribution to each row's raw margin.

        Laid out as XGBoost's ``pred_interactions``: entry ``[i, j]`` (i != j) is half of
        the interaction effect of features i and j (the matrix is symmetric), ``[i, i]`` the
        main effect of feature i, ``[n_features, n_features]`` the bias (expected margin),
        and the rest of the last row and column 0. Summing over the last axis gives
        `shap_values`; summing everything gives the margin. The cost grows with the number
        of distinct features per tree: about 2 x that many times `shap_values`.

        Parameters
        ----------
        X : array-like, DataFrame, scipy.sparse matrix or Dataset
            The rows to explain, as for `predict` (frame columns matched by name).
        n_threads : int, default 0
            Threads (0 = all available cores); the result does not depend on it.

        Returns
        -------
        numpy.ndarray
            float64, ``(n_rows, n_features + 1, n_features + 1)``, or
            ``(n_rows, n_classes, n_features + 1, n_features + 1)`` for softmax.

        Examples
        --------
        >>> import numpy as np
        >>> import boosters as bst
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3))
        >>> y = X[:, 1] * X[:, 2]
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=20, max_depth=3))
        >>> inter = model.shap_interaction_values(X[:2])
        >>> inter.shape
        (2, 4, 4)
        >>> bool(np.allclose(inter.sum(axis=2), model.shap_values(X[:2])))
        True
        >>> bool(np.allclose(inter, inter.transpose(0, 2, 1)))
        True
        """
        values = _shap.shap_interaction_values(self.forest, self._features(X),
                                               effective_n_threads(n_threads))
        return values[:, 0] if values.shape[1] == 1 else values

    def shap_explanation(self, X, interactions: bool = False, n_threads: int = 0):
        """`shap_values` (or `shap_interaction_values`) as a ``shap.Explanation``, the
        object shap's plots take (``shap.plots.beeswarm``, ``waterfall``, ``scatter``...).

        The values are boosters' own exact TreeSHAP values of the raw margin, categorical
        features included: their codes are the ``data``, their categories the
        ``display_data`` the plots label with. Needs the shap package
        (``pip install 'boosters[shap]'``).

        Parameters
        ----------
        X : array-like, DataFrame, scipy.sparse matrix or Dataset
            The rows to explain, as for `predict` (frame columns matched by name).
        interactions : bool, default False
            SHAP interaction values (laid out as shap's: no bias row or column).
        n_threads : int, default 0
            Threads (0 = all available cores); the result does not depend on it.

        Returns
        -------
        shap.Explanation
            ``values`` (n_rows, n_features), or (n_rows, n_features, n_features) with
            `interactions`, plus a last axis of the outputs for softmax or multi-target
            models; ``base_values`` the expected margin; ``data``; ``feature_names``.

        Examples
        --------
        >>> import numpy as np
        >>> import boosters as bst
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, 2 * X[:, 0] + X[:, 1]), bst.GBDTConfig(n_estimators=10))
        >>> exp = model.shap_explanation(X[:5])
        >>> exp.values.shape, exp.feature_names
        ((5, 3), ['f0', 'f1', 'f2'])
        >>> bool(np.allclose(exp.values.sum(axis=1) + exp.base_values, model.predict_raw(X[:5])))
        True
        """
        return _shap_package.explanation(self.ensemble, self._features(X), effective_n_threads(n_threads),
                                         interactions)

    def to_shap_trees(self) -> dict:
        """The trees in shap's own tree-ensemble form, which ``shap.TreeExplainer`` takes:
        ``shap.TreeExplainer(model.to_shap_trees())``.

        shap then computes the SHAP values itself, with the same split rule
        (``x <= threshold`` left, missing values the default direction), covers and base
        score: its values and ``expected_value`` are this model's `shap_values` (raw
        margins). shap's trees have numeric splits only: a model with categorical
        features (or linear leaves) raises ValueError; `shap_explanation` covers them.

        Returns
        -------
        dict
            ``{"trees": [...], "base_offset": ..., ...}``: a dict per tree with
            ``children_left``, ``children_right``, ``children_default``, ``features``,
            ``thresholds``, ``values`` and ``node_sample_weight`` (the covers).

        Examples
        --------
        >>> import numpy as np
        >>> import boosters as bst
        >>> import shap
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, 2 * X[:, 0] + X[:, 1]), bst.GBDTConfig(n_estimators=10))
        >>> explainer = shap.TreeExplainer(model.to_shap_trees())
        >>> bool(np.allclose(explainer.shap_values(X[:5]), model.shap_values(X[:5])[:, :-1]))
        True
        """
        return _shap_package.shap_tree_model(self.ensemble)

    # -- persistence -------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The model as .npz bytes (tree arrays + a JSON header); no pickle involved.

        Returns
        -------
        bytes

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5))
        >>> copy = bst.GBDTModel.from_bytes(model.to_bytes())
        >>> np.array_equal(copy.predict(X), model.predict(X))
        True
        """
        return npz_format.to_bytes(self.ensemble)

    @classmethod
    def from_bytes(cls, data: bytes) -> "GBDTModel":
        """A model from `to_bytes` output.

        Every array is checked before a tree is used; anything that is not a valid model
        raises ``ValueError("not a valid boosters model: ...")``.

        Parameters
        ----------
        data : bytes
            What `to_bytes` returned.

        Returns
        -------
        GBDTModel

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5))
        >>> bst.GBDTModel.from_bytes(model.to_bytes()).n_trees
        5
        >>> bst.GBDTModel.from_bytes(b"junk")
        Traceback (most recent call last):
        ...
        ValueError: not a valid boosters model: ...
        """
        return cls(npz_format.from_bytes(data))

    def to_json_bytes(self) -> bytes:
        """The model as a JSON document (UTF-8): the same content as `to_bytes`, for people
        to read and other tools to parse.

        Its layout is the published JSON Schema ``boosters/io/model.schema.json`` (see the
        format page of the docs). Floats are written so that they read back exactly;
        infinite thresholds are the strings ``"inf"`` / ``"-inf"``.

        Returns
        -------
        bytes

        Examples
        --------
        >>> import json
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5))
        >>> doc = json.loads(model.to_json_bytes())
        >>> doc["format_version"], doc["objective"], len(doc["trees"])
        (1, {'name': 'squared', 'n_classes': None}, 5)
        >>> copy = bst.GBDTModel.from_json_bytes(model.to_json_bytes())
        >>> np.array_equal(copy.predict(X), model.predict(X))
        True
        """
        return json_format.to_json_bytes(self.ensemble)

    @classmethod
    def from_json_bytes(cls, data) -> "GBDTModel":
        """A model from `to_json_bytes` output.

        Checked as `from_bytes` checks a model (the same checks run on both encodings);
        anything that is not a valid model raises ``ValueError("not a valid boosters
        model: ...")`` naming the field.

        Parameters
        ----------
        data : bytes or str
            A JSON document, as `to_json_bytes` writes it.

        Returns
        -------
        GBDTModel

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5))
        >>> bst.GBDTModel.from_json_bytes(model.to_json_bytes()).n_trees
        5
        >>> bst.GBDTModel.from_json_bytes(b'{"format_version": 1}')
        Traceback (most recent call last):
        ...
        ValueError: not a valid boosters model: missing field 'base_scores'
        """
        return cls(json_format.from_json_bytes(data))

    def dump_model(self) -> dict:
        """The model as plain Python data (as LightGBM's ``Booster.dump_model()``): the
        JSON document of `to_json_bytes`, parsed.

        Dicts, lists, str, int, float, bool and None only, so ``json.dumps`` takes it
        (infinite thresholds are the strings ``"inf"`` / ``"-inf"``, which ``float()``
        reads). It holds everything a prediction needs: ``objective`` (its name and
        parameters), ``n_groups`` (outputs), ``base_scores`` (one per output),
        ``n_features``, ``feature_names``, the categorical features' ``categories`` (and
        ``target_statistics`` in a model of ``cat_encoding="ordered_ctr"``), and per
        tree its output ``group`` and its ``nodes`` as arrays indexed by node
        (``split_feature``, ``threshold``, ``default_left`` for missing values,
        ``left_child`` / ``right_child``, ``value``, ``gain``, ``cover`` (hessian sum),
        ``n_samples``, and ``category_set`` with the tree's ``category_sets`` in a model
        with categorical splits), plus ``linear`` for linear leaves; then the training's
        ``config`` and validation history. Unlike LightGBM's nested nodes, a tree's nodes
        are flat arrays, node 0 the root. :doc:`/format` tells how a tree predicts from
        them. ``from_json_bytes(json.dumps(dump))`` reads it back.

        Returns
        -------
        dict

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5, max_depth=1))
        >>> dump = model.dump_model()
        >>> dump["objective"], dump["n_groups"], len(dump["trees"])
        ({'name': 'squared', 'n_classes': None}, 1, 5)
        >>> nodes = dump["trees"][0]["nodes"]
        >>> nodes["split_feature"], nodes["left_child"], nodes["right_child"]
        ([0, -1, -1], [1, -1, -1], [2, -1, -1])
        >>> margin = dump["base_scores"][0]  # row 0 down each stump: x <= threshold goes left
        >>> for tree in dump["trees"]:
        ...     nodes = tree["nodes"]
        ...     leaf = 1 if X[0, nodes["split_feature"][0]] <= float(nodes["threshold"][0]) else 2
        ...     margin += nodes["value"][leaf]
        >>> bool(margin == model.predict_raw(X[:1])[0])
        True
        """
        return json_format.to_document(self.ensemble)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model to a file, in the encoding its name asks for: ``.npz`` the
        compact binary (`to_bytes`), ``.json`` the JSON document (`to_json_bytes`).

        Any other name is refused with a ValueError naming its suffix and those that
        work (``.bst``, the binary encoding's name in older docs, works too): ``.txt``,
        ``.ubj``, ``.model`` or no suffix is what LightGBM's and XGBoost's users name
        those libraries' formats, which are not written here (for XGBoost, write
        ``bst.convert.to_xgboost_json(model)`` to a ``.json`` file). See :doc:`/format`.

        The file is replaced atomically (a temporary file beside it, then a rename): it
        holds the old model or the new one, never part of one, even after Ctrl-C or a
        crash mid-write. The temporary file, ``<path>.boosters-tmp-<pid>-<random>``, of a
        process killed mid-write is removed by the next save to `path`. A symbolic link is
        followed: the file it points to is replaced (the temporary file is made beside
        that file) and the link stays. A path that is not a regular file (a directory,
        FIFO, device or socket) is refused with an OSError naming it, before anything is
        written; it is never replaced.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write, ending in ``.npz`` or ``.json``.

        Examples
        --------
        >>> import os, tempfile
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5))
        >>> folder = tempfile.mkdtemp()
        >>> model.save(os.path.join(folder, "model.npz"))
        >>> model.save(os.path.join(folder, "model.json"))
        >>> open(os.path.join(folder, "model.json"), "rb").read(1)
        b'{'
        >>> np.array_equal(bst.GBDTModel.load(os.path.join(folder, "model.json")).predict(X),
        ...                bst.GBDTModel.load(os.path.join(folder, "model.npz")).predict(X))
        True
        >>> model.save(os.path.join(folder, "model.txt"))
        Traceback (most recent call last):
        ...
        ValueError: cannot save a model as '...model.txt': its suffix is '.txt'; a model file's name ends in '.npz' ...
        """
        write_target(path)  # a directory, FIFO or device there: OSError, whatever its name
        encoding = model_files.encoding_for_save(path)
        write_atomically(path, self.to_json_bytes() if encoding == model_files.JSON else self.to_bytes())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "GBDTModel":
        """Read a model written by `save`, checked as `from_bytes` checks it.

        The name must end as `save` writes it (``.npz``, ``.json``, or ``.bst``); any other
        is refused with a ValueError saying which reader takes the file, most likely
        another library's model (``bst.convert.from_lightgbm`` for LightGBM's ``.txt``,
        ``bst.convert.from_xgboost`` for XGBoost's ``.json`` and ``.ubj``). The encoding
        is read from the file's content: a JSON document starts with ``{`` (after a UTF-8
        byte-order mark, if any), the binary format is a zip file. Anything else, an
        XGBoost or LightGBM model renamed included, raises ``ValueError("not a valid
        boosters model: ...")`` (naming the converter for those). A path that is not a
        regular file (a directory, FIFO, device or socket) is refused with an OSError
        naming it, without reading it (a FIFO would block).

        Parameters
        ----------
        path : str or os.PathLike
            The file to read.

        Returns
        -------
        GBDTModel

        Examples
        --------
        >>> import os, tempfile
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5))
        >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
        >>> model.save(path)
        >>> bst.GBDTModel.load(path)
        GBDTModel(Objective.squared(), n_trees=5, n_features=3, best_iteration=4)
        """
        data = read_regular_file(path)
        model_files.check_load_suffix(path)
        try:
            if json_format.is_json_document(data):
                return cls.from_json_bytes(data)
            return cls.from_bytes(data)
        except ValueError as exc:
            other = model_files.other_library_model(data)
            if other is None:
                raise
            raise ValueError(f"not a valid boosters model: {os.fsdecode(path)!r}: {other}") from exc

    def __getstate__(self):
        return {"bytes": self.to_bytes()}

    def __setstate__(self, state):
        if not isinstance(state, dict) or "bytes" not in state:
            raise ValueError("not a valid boosters model: a pickled GBDTModel holds its bytes")
        self.ensemble = npz_format.from_bytes(state["bytes"])

    def __repr__(self):
        return (f"GBDTModel({self.objective!r}, n_trees={self.n_trees}, n_features={self.n_features}, "
                f"best_iteration={self.best_iteration})")
