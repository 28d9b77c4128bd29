"""scikit-learn estimators: `GBDTRegressor` and `GBDTClassifier`.

They take every `GBDTConfig` parameter as a constructor argument, with the same defaults
(the objective is chosen by the class; `growth_strategy` is given by name), plus
`n_threads` and `importance_type`. As scikit-learn asks, `__init__` only stores them;
`fit` builds the `GBDTConfig`, so a bad value raises there, naming the parameter.
scikit-learn is an optional dependency: `pip install 'boosters[sklearn]'`.
"""

from __future__ import annotations

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.class_weight import compute_sample_weight
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import (_check_sample_weight, check_consistent_length, check_is_fitted,
                                          column_or_1d, validate_data)
except ImportError as exc:  # the module is the adapter: nothing to offer without sklearn
    raise ImportError("boosters.sklearn needs scikit-learn >= 1.6: pip install 'boosters[sklearn]'") from exc

from boosters.config import GBDTConfig, Metric, Objective
from boosters.data.dataset import Dataset
from boosters.gbdt_model import GBDTModel

# the GBDTConfig parameters the estimators take (the objective comes from the class)
CONFIG_PARAMS = tuple(name for name in GBDTConfig._FIELDS if name != "objective")
IMPORTANCE_TYPES = ("gain", "split")


def _is_frame(X) -> bool:
    """A pandas / polars frame or Arrow table: handed to Dataset as it is, so that its
    categorical columns and names survive (sklearn's check_array would make it floats)."""
    return hasattr(X, "columns") and hasattr(X, "shape") and not isinstance(X, np.ndarray)


class _GBDTEstimator(BaseEstimator):
    """What the regressor and the classifier share: parameters, input checks, fitting."""

    def __init__(self, n_estimators=100, learning_rate=0.3, metric=None, growth_strategy="depthwise",
                 max_depth="auto", n_leaves=31, l1=0.0, l2=1.0, min_gain_to_split=0.0, min_child_weight=1.0,
                 min_samples_leaf=1, max_bins=256, cache_size=8, early_stopping_rounds=None, seed=42,
                 histogram_mode="auto", prefetch=True, enable_bundling=True, renew_leaves=True,
                 quantization_levels=None, histogram_layout="auto", verbosity=0, colsample_bytree=1.0,
                 colsample_bylevel=1.0, colsample_bynode=1.0, monotone_constraints=None,
                 interaction_constraints=None, subsample=1.0, goss_top_rate=None, goss_other_rate=None,
                 max_onehot_cats=4, cat_smooth=10.0, cat_l2=10.0, max_cat_threshold=32, min_data_per_group=100,
                 n_threads=0, importance_type="gain"):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.metric = metric
        self.growth_strategy = growth_strategy
        self.max_depth = max_depth
        self.n_leaves = n_leaves
        self.l1 = l1
        self.l2 = l2
        self.min_gain_to_split = min_gain_to_split
        self.min_child_weight = min_child_weight
        self.min_samples_leaf = min_samples_leaf
        self.max_bins = max_bins
        self.cache_size = cache_size
        self.early_stopping_rounds = early_stopping_rounds
        self.seed = seed
        self.histogram_mode = histogram_mode
        self.prefetch = prefetch
        self.enable_bundling = enable_bundling
        self.renew_leaves = renew_leaves
        self.quantization_levels = quantization_levels
        self.histogram_layout = histogram_layout
        self.verbosity = verbosity
        self.colsample_bytree = colsample_bytree
        self.colsample_bylevel = colsample_bylevel
        self.colsample_bynode = colsample_bynode
        self.monotone_constraints = monotone_constraints
        self.interaction_constraints = interaction_constraints
        self.subsample = subsample
        self.goss_top_rate = goss_top_rate
        self.goss_other_rate = goss_other_rate
        self.max_onehot_cats = max_onehot_cats
        self.cat_smooth = cat_smooth
        self.cat_l2 = cat_l2
        self.max_cat_threshold = max_cat_threshold
        self.min_data_per_group = min_data_per_group
        self.n_threads = n_threads
        self.importance_type = importance_type

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True      # NaN is a missing value, routed by every split
        tags.input_tags.sparse = True         # CSR / CSC, never densified
        tags.input_tags.categorical = True    # pandas `category` columns are categorical features
        return tags

    def config(self, objective: Objective) -> GBDTConfig:
        """The GBDTConfig of these parameters (raises ValueError / TypeError naming a bad one)."""
        return GBDTConfig(objective=objective, **{name: getattr(self, name) for name in CONFIG_PARAMS})

    # -- input checks ------------------------------------------------------------------------

    def _check_X(self, X, reset: bool):
        if _is_frame(X):  # names and width checked by sklearn, values by Dataset / GBDTModel
            return validate_data(self, X, reset=reset, skip_check_array=True)
        return validate_data(self, X, reset=reset, accept_sparse=["csr", "csc"], ensure_all_finite="allow-nan",
                             dtype=[np.float64, np.float32])

    def _check_y(self, X, y, y_numeric: bool):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        y = column_or_1d(y, warn=True)
        if y_numeric:
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("y must be finite (no NaN or inf)")
        check_consistent_length(X, y)
        return y

    def _eval_pair(self, eval_set):
        """eval_set as one (X_val, y_val) pair, or None."""
        if eval_set is None:
            return None
        if isinstance(eval_set, list):
            if len(eval_set) != 1:
                raise ValueError(f"eval_set: give one (X_val, y_val) pair, got a list of {len(eval_set)}")
            eval_set = eval_set[0]
        if not isinstance(eval_set, tuple) or len(eval_set) != 2:
            raise ValueError("eval_set must be an (X_val, y_val) pair or a list with one such pair")
        return eval_set

    # -- training ------------------------------------------------------------------------------

    def _fit(self, X, y, sample_weight, eval_set, categorical_features, objective: Objective, encode_y):
        """Train on (X, encoded y); `encode_y` maps labels to what the objective reads."""
        if self.importance_type not in IMPORTANCE_TYPES:
            raise ValueError(f"importance_type must be 'gain' or 'split', got {self.importance_type!r}")
        config = self.config(objective)
        train = Dataset(X, encode_y(y), weights=sample_weight, categorical_features=categorical_features)
        val_set = None
        pair = self._eval_pair(eval_set)
        if pair is not None:
            X_val = self._check_X(pair[0], reset=False)
            y_val = self._check_y(X_val, pair[1], y_numeric=objective.name == "squared")
            val_set = Dataset(X_val, encode_y(y_val), categorical_features=categorical_features)
        self.booster_ = GBDTModel.train(train, config, val_set=val_set, n_threads=self.n_threads)
        self.best_iteration_ = self.booster_.best_iteration
        metric = config.metric or Metric.default_for(objective)
        self.evals_result_ = {} if val_set is None else {"valid_0": {metric.name: list(self.booster_.eval_history)}}
        return self

    @property
    def feature_importances_(self) -> np.ndarray:
        """Per feature, its share of the total `importance_type` ("gain" or "split");
        all zeros when the trees have no split."""
        check_is_fitted(self, "booster_")
        importance = self.booster_.feature_importance(self.importance_type)
        total = importance.sum()
        return importance / total if total > 0 else importance

    def _raw(self, X, method):
        check_is_fitted(self, "booster_")
        return method(self._check_X(X, reset=False), n_threads=self.n_threads)


class GBDTRegressor(RegressorMixin, _GBDTEstimator):
    """Gradient boosted trees for regression (squared error), with the GBDTConfig
    parameters as constructor arguments."""

    def fit(self, X, y, sample_weight=None, eval_set=None, categorical_features=None):
        """Train. `eval_set`: an (X_val, y_val) pair (or a list with one) scored every
        round, used for early stopping when `early_stopping_rounds` is set.
        `categorical_features`: indices or names, as in `Dataset`."""
        X = self._check_X(X, reset=True)
        y = self._check_y(X, y, y_numeric=True)
        sample_weight = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        return self._fit(X, y, sample_weight, eval_set, categorical_features, Objective.squared(), lambda v: v)

    def predict(self, X):
        return self._raw(X, lambda X, n_threads: self.booster_.predict(X, n_threads=n_threads))


class GBDTClassifier(ClassifierMixin, _GBDTEstimator):
    """Gradient boosted trees for classification: logistic loss for two classes, softmax
    for more. Labels may be of any type; `classes_` holds them sorted, and probabilities
    come in that order. `class_weight`: None, "balanced" or {label: weight}, multiplied
    into `sample_weight`."""

    def __init__(self, n_estimators=100, learning_rate=0.3, metric=None, growth_strategy="depthwise",
                 max_depth="auto", n_leaves=31, l1=0.0, l2=1.0, min_gain_to_split=0.0, min_child_weight=1.0,
                 min_samples_leaf=1, max_bins=256, cache_size=8, early_stopping_rounds=None, seed=42,
                 histogram_mode="auto", prefetch=True, enable_bundling=True, renew_leaves=True,
                 quantization_levels=None, histogram_layout="auto", verbosity=0, colsample_bytree=1.0,
                 colsample_bylevel=1.0, colsample_bynode=1.0, monotone_constraints=None,
                 interaction_constraints=None, subsample=1.0, goss_top_rate=None, goss_other_rate=None,
                 max_onehot_cats=4, cat_smooth=10.0, cat_l2=10.0, max_cat_threshold=32, min_data_per_group=100,
                 n_threads=0, importance_type="gain", class_weight=None):
        super().__init__(
            n_estimators=n_estimators, learning_rate=learning_rate, metric=metric, growth_strategy=growth_strategy,
            max_depth=max_depth, n_leaves=n_leaves, l1=l1, l2=l2, min_gain_to_split=min_gain_to_split,
            min_child_weight=min_child_weight, min_samples_leaf=min_samples_leaf, max_bins=max_bins,
            cache_size=cache_size, early_stopping_rounds=early_stopping_rounds, seed=seed,
            histogram_mode=histogram_mode, prefetch=prefetch, enable_bundling=enable_bundling,
            renew_leaves=renew_leaves, quantization_levels=quantization_levels, histogram_layout=histogram_layout,
            verbosity=verbosity, colsample_bytree=colsample_bytree, colsample_bylevel=colsample_bylevel,
            colsample_bynode=colsample_bynode, monotone_constraints=monotone_constraints,
            interaction_constraints=interaction_constraints, subsample=subsample, goss_top_rate=goss_top_rate,
            goss_other_rate=goss_other_rate, max_onehot_cats=max_onehot_cats, cat_smooth=cat_smooth,
            cat_l2=cat_l2, max_cat_threshold=max_cat_threshold, min_data_per_group=min_data_per_group,
            n_threads=n_threads, importance_type=importance_type)
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None, eval_set=None, categorical_features=None):
        """Train. `eval_set`: an (X_val, y_val) pair (or a list with one) scored every
        round, used for early stopping when `early_stopping_rounds` is set; its labels
        must be among the training labels. `categorical_features`: indices or names, as in
        `Dataset`."""
        X = self._check_X(X, reset=True)
        y = self._check_y(X, y, y_numeric=False)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        self.n_classes_ = len(self.classes_)
        if self.n_classes_ < 2:
            raise ValueError(f"y has {self.n_classes_} class; a classifier needs at least 2 classes")
        sample_weight = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        if self.class_weight is not None:
            by_class = compute_sample_weight(self.class_weight, y)
            sample_weight = by_class if sample_weight is None else sample_weight * by_class
        objective = Objective.logistic() if self.n_classes_ == 2 else Objective.softmax(self.n_classes_)
        return self._fit(X, y, sample_weight, eval_set, categorical_features, objective, self._encode)

    def _encode(self, y) -> np.ndarray:
        """Labels -> their index in classes_ (float, as Dataset reads labels)."""
        codes = np.searchsorted(self.classes_, y)
        codes = np.minimum(codes, self.n_classes_ - 1)
        unknown = self.classes_[codes] != y
        if np.any(unknown):
            raise ValueError(f"y holds labels not seen in training: {np.unique(np.asarray(y)[unknown])[:5]!r}")
        return codes.astype(np.float64)

    def predict_proba(self, X) -> np.ndarray:
        """(n_rows, ``n_classes_``) probabilities, columns in ``classes_`` order."""
        p = self._raw(X, lambda X, n_threads: self.booster_.predict(X, n_threads=n_threads))
        return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p

    def decision_function(self, X) -> np.ndarray:
        """Raw margins: (n_rows,) log-odds of ``classes_[1]`` for two classes, (n_rows, ``n_classes_``) otherwise."""
        return self._raw(X, lambda X, n_threads: self.booster_.predict_raw(X, n_threads=n_threads))

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)  # first: it raises NotFittedError before classes_ is read
        return self.classes_[np.argmax(proba, axis=1)]
