"""GBDTModel: the user-facing model. It trains (training/), predicts (model/), saves and
loads (io/) and explains (explain/), holding what the training produced: an Ensemble
(`model/ensemble.py`). It sits above those layers so that none of them imports another
beside its own inputs."""

from __future__ import annotations

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.config import GBDTConfig, Objective
from boosters.data.dataset import Dataset
from boosters.data.categories import frame_codes, recode
from boosters.data.frames import as_frame
from boosters.data.sparse import as_sparse_matrix, frame_to_sparse, has_sparse_columns, is_sparse
from boosters.data.validation import as_feature_matrix, column_names, match_columns
from boosters.explain.importance import feature_importance
from boosters.io import npz_format
from boosters.model.ensemble import Ensemble
from boosters.model.tree import Forest, Tree
from boosters.training.trainer import GBDTTrainer


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
    (True, 0.139)
    >>> model.predict(X[:3]).round(3)
    array([0.13 , 0.207, 1.695])
    """

    def __init__(self, ensemble: Ensemble):
        if not isinstance(ensemble, Ensemble):
            raise TypeError(f"ensemble must be a boosters Ensemble, got {type(ensemble).__name__}")
        self.ensemble = ensemble

    @classmethod
    def train(cls, dataset: Dataset, config: GBDTConfig | None = None, val_set: Dataset | None = None,
              n_threads: int = 0) -> "GBDTModel":
        """Train on `dataset`; with `val_set`, evaluate every round (and stop early when
        `config.early_stopping_rounds` is set). `n_threads=0` uses all available cores."""
        config = GBDTConfig() if config is None else config
        if not isinstance(config, GBDTConfig):
            raise TypeError(f"config must be a GBDTConfig, got {type(config).__name__}")
        result = GBDTTrainer(config, n_threads).train(dataset, val_set)
        result.forest.flat(grown=True)  # read-only from here, as a loaded model's trees
        return cls(result)

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
        """The 0-based round with the best validation score (the last round without a val_set)."""
        return self.ensemble.best_iteration

    @property
    def best_score(self) -> float | None:
        """The validation score of `best_iteration` (None without a val_set)."""
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

    # -- prediction --------------------------------------------------------------------

    def _features(self, X) -> np.ndarray:
        """X as the float matrix the trees read: a frame's or Dataset's columns are matched
        to the model's features by name (when both have names), an array's by position;
        categorical features coded with the model's categories by value."""
        names, categories = self.feature_names, self.ensemble.categories
        if isinstance(X, Dataset):
            given, given_categories, X = X.feature_names, X.categories, X.X
            if names is not None and given is not None:
                order = match_columns(given, names, "X")
                if order is not None:
                    X = X[:, order]
                    position = {int(c): f for f, c in enumerate(order)}
                    given_categories = {position[c]: values for c, values in given_categories.items()}
            self._check_width(X.shape[1])
            if is_sparse(X):  # column selection may leave a row's indices unsorted
                return as_sparse_matrix(X, "X")
            return recode(X, given_categories, categories, names, "X")
        if is_sparse(X):  # numeric values, categorical features as codes (as an array's)
            X = as_sparse_matrix(X, "X")
            self._check_width(X.shape[1])
            return X
        if has_sparse_columns(X):
            order = None if names is None else match_columns(column_names(X), names, "X")
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
        return frame_codes(frame, order, categories, names)

    def _check_width(self, n_columns: int) -> None:
        if n_columns != self.n_features:
            raise ValueError(f"X has {n_columns} features but the model was trained on {self.n_features}")

    def predict_raw(self, X, n_threads: int = 0) -> np.ndarray:
        """The raw margins: before the objective's link (log-odds for logistic).

        Parameters
        ----------
        X : array-like, DataFrame, pyarrow.Table, scipy.sparse matrix or Dataset
            The rows to predict, as for `predict`.
        n_threads : int, default 0
            Threads; 0 uses every available core.

        Returns
        -------
        numpy.ndarray
            ``(n_rows,)`` for one output, ``(n_rows, n_classes)`` for softmax.

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
        margins = self.ensemble.predict_margins(self._features(X), effective_n_threads(n_threads))
        return margins[:, 0] if margins.shape[1] == 1 else margins

    def predict(self, X, n_threads: int = 0) -> np.ndarray:
        """Predictions: values (squared error), P(y=1) (logistic) or class probabilities.

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

        Returns
        -------
        numpy.ndarray
            ``(n_rows,)``; ``(n_rows, n_classes)`` for softmax.

        Examples
        --------
        >>> import pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
        >>> model = bst.GBDTModel.train(bst.Dataset(df, 2 * df["a"]), bst.GBDTConfig(n_estimators=5))
        >>> p = model.predict(df)
        >>> p.shape, np.array_equal(model.predict(df[["b", "a"]]), p)  # matched by name
        ((200,), True)
        """
        return self.ensemble.predict(self._features(X), effective_n_threads(n_threads))

    # -- inspection ----------------------------------------------------------------------

    def feature_importance(self, importance_type: str = "split") -> np.ndarray:
        """Per feature: number of splits ("split") or total split gain ("gain")."""
        return feature_importance(self.forest, self.n_features, importance_type)

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

    def save(self, path) -> None:
        """Write the model to a file (the `to_bytes` format).

        Parameters
        ----------
        path : str or os.PathLike
            The file to write.

        Examples
        --------
        >>> import os, tempfile
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=5))
        >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
        >>> model.save(path)
        >>> np.array_equal(bst.GBDTModel.load(path).predict(X), model.predict(X))
        True
        """
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    @classmethod
    def load(cls, path) -> "GBDTModel":
        """Read a model written by `save`, checked as `from_bytes` checks it.

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
        with open(path, "rb") as f:
            return cls.from_bytes(f.read())

    def __getstate__(self):
        return {"bytes": self.to_bytes()}

    def __setstate__(self, state):
        if not isinstance(state, dict) or "bytes" not in state:
            raise ValueError("not a valid boosters model: a pickled GBDTModel holds its bytes")
        self.ensemble = npz_format.from_bytes(state["bytes"])

    def __repr__(self):
        return (f"GBDTModel({self.objective!r}, n_trees={self.n_trees}, n_features={self.n_features}, "
                f"best_iteration={self.best_iteration})")
