"""Dataset: features, labels and weights, checked once and kept as given."""

from __future__ import annotations

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.data.binned import BinnedMatrix
from boosters.data.binning import BinMapper
from boosters.data.bundling import bin_and_bundle
from boosters.data.sparse_binning import bin_sparse, fit_sparse
from boosters.data.fingerprint import fingerprint
from boosters.data.categories import categorical_indices, check_codes, feature_label, learn_frame, recode
from boosters.data.frames import as_frame
from boosters.data.groups import query_boundaries
from boosters.data.sparse import as_sparse_matrix, frame_to_sparse, has_sparse_columns, is_sparse, sparse_fingerprint
from boosters.data.validation import as_feature_matrix, as_init_score, as_labels, as_vector, match_columns


def _either(name: str, value, alias: str, alias_value):
    """The value of a parameter given by its name or by LightGBM's (never both)."""
    if alias_value is None:
        return value
    if value is not None:
        raise ValueError(f"{name} and {alias} are the same parameter (LightGBM's name); give one")
    return alias_value


class Dataset:
    """Training or evaluation data: features, labels and weights, checked once.

    Nothing passed in is modified. Training bins ``X`` once per binning setting and keeps
    the bins (`binned`), so a Dataset reused for several trainings is binned once. ``X``
    and the weights are referenced, not copied, so the caller may change them in place
    afterwards: the cached bins are kept only while a fingerprint of their contents (a
    CRC-32 per 4 MiB, a few GB/s) is unchanged, and are rebuilt otherwise.

    Parameters
    ----------
    X : array-like, DataFrame, pyarrow.Table or scipy.sparse matrix
        The features, ``(n_rows, n_features)``; NaN (None, null, ``pd.NA``) is missing.
        Any 2-D numeric array (float32/float64/int/bool, C or Fortran order; referenced,
        not copied, when already float32/float64); a pandas or polars DataFrame or a
        pyarrow Table, read column by column; a scipy.sparse CSR/CSC matrix (or a pandas
        frame with sparse columns), kept sparse and never densified: a stored or implicit
        zero is the value 0, and its features are numeric.
    y : array-like, optional
        One finite label per row (needed to train); or, for multi-target regression, k >= 2
        per row: shape (n_rows, k), one tree group per column (see `Objective.squared`).
    weights : array-like, optional
        One finite, non-negative weight per row, not all zero.
    feature_names : sequence of str, optional
        One unique name per feature; a frame's column names by default.
    categorical_features : "auto", list of int or str, optional
        The categorical features, as indices or names; "auto" (the default for a frame)
        takes its pandas ``category``, Arrow dictionary and polars ``Categorical``/``Enum``
        columns; None (the default for an array) or ``[]`` for none. Raw values (strings,
        integers, categories) are mapped to codes 0..k-1 (`X` then holds the codes, NaN
        for missing) and ``categories[f]`` keeps the values in code order; a numeric column
        is taken as the codes themselves (``categories[f]`` None), integers in
        [0, 65534).
    group : array-like of int, optional
        For ranking: the sizes of consecutive query groups (positive integers summing to
        the number of rows), as LightGBM's ``group``. At most one of `group` and `qid`.
    qid : array-like, optional
        For ranking: one query id per row, each query's rows contiguous, as XGBoost's
        ``qid``.
    init_score : array-like, optional
        A starting margin per row, ``(n_rows,)`` or ``(n_rows, n_outputs)`` (LightGBM's
        ``init_score``, XGBoost's ``base_margin``): training boosts from it instead of the
        objective's constant start, and a validation set's scores add it.
    label, weight, feature_name, categorical_feature : optional
        LightGBM's names of `y`, `weights`, `feature_names` and `categorical_features`
        (keyword only; ``"auto"`` is the default), so that ``lgb.Dataset(X, label=y)``
        carries over; a name and its alias given together is a ValueError.
    reference : Dataset, optional
        Accepted for LightGBM's validation sets and unused: a validation set is always
        binned with the training set's bin edges.

    Attributes
    ----------
    X : numpy.ndarray or scipy.sparse matrix
        The features as trained on (categorical columns as codes).
    y, weights : numpy.ndarray or None
        As given, as float arrays (`y` (n_rows,), or (n_rows, k) with k targets per row).
    feature_names : list of str or None
        The feature names.
    categorical_features : list of int
        The sorted indices of the categorical features.
    categories : dict
        Categorical feature index -> its raw values in code order (None: given as codes).
    init_score : numpy.ndarray or None
        The starting margins as given, float64 (read-only), or None.
    group_boundaries : numpy.ndarray or None
        With query groups: their row boundaries (int64, n_groups + 1; group q is rows
        ``group_boundaries[q]:group_boundaries[q + 1]``); None without groups.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(100, 3))
    >>> bst.Dataset(X, X[:, 0] > 0)
    Dataset(100 rows, 3 features, dtype=float64, labels)

    A frame's category columns are categorical features:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"size": [1.5, 2.0, None, 3.1],
    ...                    "city": pd.Categorical(["Oslo", "Rome", "Oslo", None])})
    >>> data = bst.Dataset(df, y=[1.0, 2.0, 3.0, 4.0])
    >>> data.feature_names, data.categorical_features, list(data.categories[1])
    (['size', 'city'], [1], ['Oslo', 'Rome'])
    >>> data.X[:, 1]  # the codes, NaN for missing
    array([ 0.,  1.,  0., nan])
    """

    def __init__(self, X, y=None, weights=None, feature_names=None, categorical_features=None,
                 group=None, qid=None, init_score=None, *, label=None, weight=None, feature_name="auto",
                 categorical_feature="auto", reference=None):
        y = _either("y", y, "label", label)
        weights = _either("weights", weights, "weight", weight)
        feature_names = _either("feature_names", feature_names, "feature_name",
                                None if isinstance(feature_name, str) and feature_name == "auto" else feature_name)
        if not (isinstance(categorical_feature, str) and categorical_feature == "auto"):
            categorical_features = _either("categorical_features", categorical_features, "categorical_feature",
                                           categorical_feature)
        if reference is not None and not isinstance(reference, Dataset):
            raise TypeError(f"reference must be a Dataset (it is not used), got {type(reference).__name__}")
        sparse_columns = has_sparse_columns(X)
        frame = None if is_sparse(X) or sparse_columns else as_frame(X)
        if is_sparse(X):
            self.X = as_sparse_matrix(X, "X")
        elif sparse_columns:
            self.X = frame_to_sparse(X, "X")
            if feature_names is None:
                feature_names = [str(c) for c in X.columns]
        elif frame is None:
            self.X = as_feature_matrix(X, "X")
        elif frame.shape[0] == 0 or frame.shape[1] == 0:
            raise ValueError(f"X is empty: shape {frame.shape}; need at least one row and one feature")
        n_rows, n_features = self.X.shape if frame is None else frame.shape
        if n_rows >= 2**32:
            raise ValueError(f"X has {n_rows} rows; at most 2**32 - 1 are supported")
        if feature_names is None and frame is not None:
            feature_names = frame.names
        if feature_names is not None:
            feature_names = [str(name) for name in feature_names]
            if len(feature_names) != n_features:
                raise ValueError(f"feature_names has {len(feature_names)} names but X has {n_features} features")
            if len(set(feature_names)) != n_features:
                raise ValueError("feature_names must be unique")
        self.feature_names = feature_names
        if categorical_features is None and frame is not None:
            categorical_features = "auto"
        auto = [] if frame is None else frame.categorical_columns()
        self.categorical_features = categorical_indices(categorical_features, n_features, feature_names, auto)
        if self.categorical_features and frame is None and is_sparse(self.X):
            raise ValueError("categorical_features: sparse X holds numeric features only; give the categorical "
                             "columns in a dense array or frame")
        if frame is None or not self.categorical_features:
            self.X = as_feature_matrix(X, "X") if frame is not None else self.X
            for f in self.categorical_features:
                check_codes(self.X[:, f], feature_label(f, feature_names))
            self.categories = {f: None for f in self.categorical_features}
        else:
            self.X, self.categories = learn_frame(frame, self.categorical_features, feature_names)
        self.y = None if y is None else as_labels(y, n_rows, "y")
        self.weights = None
        if weights is not None:
            w = as_vector(weights, n_rows, "weights")
            if np.any(w < 0):
                raise ValueError("weights must be >= 0")
            if not np.any(w > 0):
                raise ValueError("weights must not all be zero")
            self.weights = w
        self.group_boundaries = query_boundaries(group, qid, n_rows)
        self.init_score = None if init_score is None else as_init_score(init_score, n_rows)
        self._binned_cache: dict = {}  # (max_bins, seed, bundling) -> (BinMapper, BinnedMatrix)
        self._binned_from = None        # fingerprints of X and weights the cache was built from

    def binned(self, max_bins: int = 256, seed: int = 42, bundling: bool = True,
               n_threads: int = 0) -> tuple[BinMapper, BinnedMatrix]:
        """X in bins, as a training with these settings bins it.

        Cached per setting, and rebuilt when X or the weights changed since (see the
        class notes).

        Parameters
        ----------
        max_bins : int, default 256
            At most this many bins per feature, bin 0 (missing) included.
        seed : int, default 42
            Seeds the row sample the bin edges come from.
        bundling : bool, default True
            Mutually exclusive sparse features share columns.
        n_threads : int, default 0
            Threads; 0 uses every available core.

        Returns
        -------
        mapper : boosters.data.binning.BinMapper
            The bin edges per feature (``mapper.n_bins``: bins per feature).
        binned : boosters.data.binned.BinnedMatrix
            The bins of every row.

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(1000, 2))
        >>> data = bst.Dataset(X)
        >>> mapper, binned = data.binned(max_bins=16)
        >>> mapper.n_bins, binned.n_rows
        (array([16, 16], dtype=int32), 1000)
        >>> data.binned(max_bins=16)[1] is binned  # cached
        True
        """
        if not isinstance(bundling, bool):
            raise TypeError(f"bundling must be True or False, got {bundling!r}")
        n_threads = effective_n_threads(n_threads)
        x_contents = (sparse_fingerprint(self.X, fingerprint, n_threads) if self.is_sparse
                      else fingerprint(self.X, n_threads))
        contents = (x_contents,
                    None if self.weights is None else fingerprint(self.weights, n_threads))
        if contents != self._binned_from:
            self._binned_cache.clear()
            self._binned_from = contents
        categorical = tuple(self.categorical_features)
        key = (max_bins, seed, bundling, categorical)
        cached = self._binned_cache.get(key)  # one read: another thread may clear the cache
        if cached is None:
            if self.is_sparse:  # never densified; features stored sparse are not bundled
                mapper = BinMapper(max_bins, seed=seed)
                fit_sparse(mapper, self.X, self.weights)
                cached = self._binned_cache[key] = (mapper, bin_sparse(mapper, self.X, n_threads))
                return cached
            mapper = BinMapper(max_bins, seed=seed, categorical_features=categorical).fit(
                self.X, self.weights, n_threads)
            if bundling:
                binned = bin_and_bundle(mapper, self.X, n_threads, mapper.sample_rows)
            else:
                binned = mapper.transform(self.X, n_threads)
            cached = self._binned_cache[key] = (mapper, binned)
        return cached

    def features_for(self, n_features: int, feature_names: list[str] | None, categories: dict,
                     name: str = "X", unseen: float = np.nan):
        """X as a model of these features reads it (the rule of `GBDTModel.predict` for a
        Dataset, and of a validation set): its columns matched to `feature_names` by name
        when both have names, in any order (ValueError naming `name` and the missing or
        unexpected columns), by position otherwise; its categorical features recoded to
        `categories` (feature -> values in code order) by value.

        Parameters
        ----------
        n_features : int
            The model's number of features.
        feature_names : list of str or None
            The model's feature names.
        categories : dict
            The model's categorical features: index -> raw values in code order (None
            for a feature learnt from codes).
        name : str, default "X"
            How error messages name this data ("val_set" for a validation set).
        unseen : float, default NaN
            The code of a category value `categories` lacks (NaN: missing).

        Returns
        -------
        numpy.ndarray or scipy.sparse matrix
            ``(n_rows, n_features)``, feature j the model's feature j (`X` itself when
            nothing moves or changes code).

        Examples
        --------
        >>> import pandas as pd
        >>> data = bst.Dataset(pd.DataFrame({"b": [1.0, 2.0], "a": [3.0, 4.0]}))
        >>> data.features_for(2, ["a", "b"], {})
        array([[3., 1.],
               [4., 2.]])
        """
        X, given = self.X, self.categories
        if feature_names is not None and self.feature_names is not None:
            order = match_columns(self.feature_names, feature_names, name)
            if order is not None:
                X = X[:, order]
                position = {int(c): f for f, c in enumerate(order)}
                given = {position[c]: values for c, values in given.items()}
        if X.shape[1] != n_features:
            raise ValueError(f"{name} has {X.shape[1]} features but the model was trained on {n_features}")
        if is_sparse(X):  # self.X was checked when the Dataset was made; a column selection
            return X if X is self.X else as_sparse_matrix(X, name)  # may leave a row's indices unsorted
        return recode(X, given, categories, feature_names, name, unseen)

    @property
    def is_sparse(self) -> bool:
        """X is a scipy.sparse CSR/CSC matrix."""
        return is_sparse(self.X)

    @property
    def n_rows(self) -> int:
        """The number of rows."""
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        """The number of features."""
        return self.X.shape[1]

    @property
    def shape(self) -> tuple[int, int]:
        """(n_rows, n_features)."""
        return self.X.shape

    @property
    def n_groups(self) -> int | None:
        """The number of query groups (None without groups).

        Returns
        -------
        int or None
            ``len(group_boundaries) - 1``, or None when the Dataset has no groups.

        Examples
        --------
        >>> import numpy as np
        >>> import boosters as bst
        >>> bst.Dataset(np.zeros((5, 2)), np.zeros(5), group=[2, 3]).n_groups
        2
        """
        return None if self.group_boundaries is None else len(self.group_boundaries) - 1

    @property
    def has_labels(self) -> bool:
        """Whether labels (`y`) were given."""
        return self.y is not None

    def subset(self, rows) -> "Dataset":
        """The Dataset of some of the rows (LightGBM's ``Dataset.subset``): the features,
        labels, weights, init_score and categories of `rows`, in the order given; with
        query groups, `rows` must hold whole queries (each query's rows consecutive).

        Parameters
        ----------
        rows : array-like of int
            Row indices, each in ``0..n_rows - 1``.

        Returns
        -------
        Dataset
            A new Dataset (its arrays are copies; this one is unchanged).

        Examples
        --------
        >>> import numpy as np
        >>> import boosters as bst
        >>> data = bst.Dataset(np.arange(8.0).reshape(4, 2), [0.0, 1.0, 2.0, 3.0])
        >>> part = data.subset([3, 1])
        >>> part.n_rows, part.y.tolist()
        (2, [3.0, 1.0])
        """
        rows = np.asarray(rows)
        if rows.ndim != 1 or not (rows.size == 0 or np.issubdtype(rows.dtype, np.integer)):
            raise TypeError(f"rows must be a 1-D array of row indices, got {rows.dtype} of shape {rows.shape}")
        if rows.size == 0 or rows.min() < 0 or rows.max() >= self.n_rows:
            raise ValueError(f"rows must be indices in 0..{self.n_rows - 1}, at least one")
        group = None
        if self.group_boundaries is not None:
            query = np.searchsorted(self.group_boundaries, rows, side="right") - 1
            starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])  # each run of one query's rows
            group = np.diff(np.r_[starts, len(rows)])
            sizes = np.diff(self.group_boundaries)[query[starts]]
            if len(np.unique(query[starts])) != len(starts) or not np.array_equal(group, sizes):
                raise ValueError("rows: with query groups, take whole queries, each query's rows consecutive")
        part = Dataset(self.X[rows], None if self.y is None else self.y[rows],
                       None if self.weights is None else self.weights[rows], self.feature_names,
                       self.categorical_features, group=group,
                       init_score=None if self.init_score is None else self.init_score[rows])
        part.categories = dict(self.categories)  # the codes in X are this Dataset's
        return part

    def __repr__(self):
        parts = [f"{self.n_rows} rows", f"{self.n_features} features", f"dtype={self.X.dtype}"]
        if self.is_sparse:
            parts.append(f"sparse {self.X.format}, {self.X.nnz} stored")
        if self.y is not None:
            parts.append("labels" if self.y.ndim == 1 else f"labels of {self.y.shape[1]} targets")
        if self.weights is not None:
            parts.append("weights")
        if self.group_boundaries is not None:
            parts.append(f"{self.n_groups} query groups")
        if self.init_score is not None:
            parts.append("init_score")
        if self.categorical_features:
            parts.append(f"categorical_features={self.categorical_features}")
        return f"Dataset({', '.join(parts)})"

    # -- data larger than memory (boosters/data/out_of_core.py) ------------------------------

    @classmethod
    def from_batches(cls, batches, label=None, weight=None, feature_names=None, categorical_features=None,
                     group=None, qid=None, init_score=None, directory=None) -> "Dataset":
        """A Dataset from batches of rows, never holding all of them: binned to disk.

        The batches are read three times (rows and labels; the bin sample; the binning,
        when training first needs the bins), so they must come out the same each time:
        each later pass is checked against the first (a fingerprint per block), and a
        batch that differs is a ValueError, never a model of mismatched rows.
        The bins are those of ``Dataset`` on all the rows concatenated, so the model is
        the same; they are kept in memory-mapped files (see
        `boosters.data.out_of_core.OutOfCoreDataset`, which this returns).

        Parameters
        ----------
        batches : iterable or callable
            A re-iterable (a list, or an object whose ``iter()`` starts anew) or a callable
            returning a fresh iterable, of batches: 2-D numeric arrays, pandas DataFrames,
            pyarrow Tables or RecordBatches, polars DataFrames; or tuples ``(X, y)`` /
            ``(X, y, weights)`` of them. A plain iterator (read once) is refused.
        label : str, optional
            For frame batches: the column holding the labels (not a feature).
        weight : str, optional
            For frame batches: the column holding the weights (not a feature), another
            column than `label`.
        feature_names : sequence of str, optional
            One unique name per feature; the frame batches' column names by default.
        categorical_features : "auto", list of int or str, optional
            As for `Dataset`: "auto" (the default for frame batches) takes the category
            columns. Their values get the codes that `Dataset` gives them on all rows (a
            declared order as it is, else the distinct values of all batches, sorted);
            a numeric column holds the codes themselves.
        group : array-like of int, optional
            Ranking: the sizes of consecutive query groups, as for `Dataset`.
        qid : array-like, optional
            Ranking: one query id per row, as for `Dataset`.
        init_score : array-like, optional
            A starting margin per row, as for `Dataset`.
        directory : str or path, optional
            Where the bin files go, in a new folder ``boosters-bins-<pid>-<random>``; the
            system's temporary directory by default. They are removed when the Dataset is
            closed or garbage collected; the folders of processes that died (killed while
            binning) are removed by the next Dataset made in the same directory.

        Returns
        -------
        boosters.data.out_of_core.OutOfCoreDataset
            A Dataset to train on (``with`` closes it).

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> def batches():  # e.g. read from a database, a chunk at a time
        ...     for i in range(4):
        ...         X = np.random.default_rng(i).normal(size=(250, 3))
        ...         yield X, X[:, 0] + X[:, 1]
        >>> with bst.Dataset.from_batches(batches) as data:
        ...     model = bst.GBDTModel.train(data, bst.GBDTConfig(n_estimators=5))
        >>> model.n_trees
        5
        """
        from boosters.data.out_of_core import from_batches
        return from_batches(batches, label, weight, feature_names, categorical_features, group, qid, init_score,
                            directory)

    @classmethod
    def from_npy(cls, path, y=None, weights=None, feature_names=None, categorical_features=None, group=None,
                 qid=None, init_score=None, directory=None, block_rows: int = 65536) -> "Dataset":
        """A Dataset from a 2-D ``.npy`` file, read in row blocks with ordinary reads (never
        mapped: a file truncated while it is read is an error, not a crash). A ``.npz``
        archive is refused: pass the ``.npy`` array file.

        As `from_batches`: the bins go to disk, the model equals the in-memory one.

        Parameters
        ----------
        path : str or path
            The ``.npy`` file of the features, ``(n_rows, n_features)``.
        y : array-like, optional
            The labels, one per row (they are held in memory).
        weights : array-like, optional
            The weights, one per row.
        feature_names : sequence of str, optional
            One unique name per feature.
        categorical_features : "auto", list of int or str, optional
            As for `from_batches`.
        group : array-like of int, optional
            Ranking: the sizes of consecutive query groups, as for `Dataset`.
        qid : array-like, optional
            Ranking: one query id per row, as for `Dataset`.
        init_score : array-like, optional
            A starting margin per row, as for `Dataset`.
        directory : str or path, optional
            Where the bin files go (see `from_batches`).
        block_rows : int, default 65536
            At most this many rows (and 8 MiB) read and binned at a time.

        Returns
        -------
        boosters.data.out_of_core.OutOfCoreDataset
            A Dataset to train on (``with`` closes it).

        Examples
        --------
        >>> import os, tempfile
        >>> X = np.random.default_rng(0).normal(size=(1000, 3)).astype(np.float32)
        >>> path = os.path.join(tempfile.mkdtemp(), "X.npy")
        >>> np.save(path, X)
        >>> with bst.Dataset.from_npy(path, y=X[:, 0]) as data:
        ...     print(data)
        Dataset(1000 rows, 3 features, out of core from X.npy, labels)
        """
        from boosters.data.out_of_core import from_npy
        return from_npy(path, y, weights, feature_names, categorical_features, group, qid, init_score, directory,
                        block_rows)

    @classmethod
    def from_parquet(cls, path, label=None, weight=None, feature_names=None, categorical_features=None,
                     group=None, qid=None, init_score=None, directory=None, block_rows: int = 65536) -> "Dataset":
        """A Dataset from a Parquet file, read by batches of rows (needs pyarrow).

        As `from_batches`: the bins go to disk, the model equals the in-memory one.

        Parameters
        ----------
        path : str or path
            The Parquet file; its columns are the features, less `label` and `weight`.
        label : str, optional
            The column of the labels.
        weight : str, optional
            The column of the weights (another column than `label`).
        feature_names : sequence of str, optional
            One unique name per feature; the column names by default.
        categorical_features : "auto", list of int or str, optional
            As for `from_batches`.
        group : array-like of int, optional
            Ranking: the sizes of consecutive query groups, as for `Dataset`.
        qid : array-like, optional
            Ranking: one query id per row, as for `Dataset`.
        init_score : array-like, optional
            A starting margin per row, as for `Dataset`.
        directory : str or path, optional
            Where the bin files go (see `from_batches`).
        block_rows : int, default 65536
            Rows read and binned at a time.

        Returns
        -------
        boosters.data.out_of_core.OutOfCoreDataset
            A Dataset to train on (``with`` closes it).

        Examples
        --------
        >>> import os, tempfile
        >>> import pandas as pd
        >>> df = pd.DataFrame({"a": np.arange(100.0), "b": np.ones(100), "y": np.arange(100.0) % 7})
        >>> path = os.path.join(tempfile.mkdtemp(), "data.parquet")
        >>> df.to_parquet(path)
        >>> with bst.Dataset.from_parquet(path, label="y") as data:
        ...     print(data, data.feature_names)
        Dataset(100 rows, 2 features, out of core from data.parquet, labels) ['a', 'b']
        """
        from boosters.data.out_of_core import from_parquet
        return from_parquet(path, label, weight, feature_names, categorical_features, group, qid, init_score,
                            directory, block_rows)
