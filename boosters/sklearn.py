"""scikit-learn estimators: `GBDTRegressor`, `GBDTClassifier` and `GBDTRanker`.

They take every `GBDTConfig` parameter as a keyword-only constructor argument, with the
same defaults (the objective is chosen by the class; `growth_strategy` is given by name),
plus `n_threads` and `importance_type`: one `__init__`, built from `GBDTConfig`'s
signature, for the three. As scikit-learn asks, `__init__` only stores them;
`fit` builds the `GBDTConfig`, so a bad value raises there, naming the parameter.
A frame given to `predict` is matched to the training columns by name, in any order
(scikit-learn's own estimators ask for the fit order; see `docs/guide/sklearn.md`).
scikit-learn is an optional dependency: `pip install 'boosters[sklearn]'`.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.class_weight import compute_sample_weight
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import (_check_sample_weight, check_consistent_length, check_is_fitted,
                                          column_or_1d, validate_data)
except ImportError as exc:  # the module is the adapter: nothing to offer without sklearn
    raise ImportError("boosters.sklearn needs scikit-learn >= 1.6: pip install 'boosters[sklearn]'") from exc

from boosters._lib import parameter_names
from boosters._lib.docstrings import fill_doc
from boosters.callbacks import record_evaluation
from boosters.config import DEFAULT_N_LEAVES, GBDTConfig, Objective, objective_from_name
from boosters.data.dataset import Dataset
from boosters.data.frames import as_frame, frame_library
from boosters.data.validation import column_names, is_frame
from boosters.explain.importance import ImportanceType
from boosters.gbdt_model import GBDTModel
from boosters.objectives import objective_fn, transforms
from boosters.objectives.registry import REFUSED_OBJECTIVES, name_hint, objective_named, objective_names_known
from boosters.objectives.registry import names as objective_names

# the GBDTConfig parameters the estimators take (`objective`: None is the class's own)
CONFIG_PARAMS = GBDTConfig._FIELDS

# objectives by name, per estimator: the definitions of its task (made with `Objective.<name>()`;
# those that take the number of classes with it); names this version lacks raise a clear error
REGRESSION_OBJECTIVES = objective_names("regression")
CLASSIFICATION_OBJECTIVES = objective_names("classification")
RANKING_OBJECTIVES = objective_names("ranking")

# Every estimator's constructor parameters with their defaults: GBDTConfig's (growth_strategy
# by name: scikit-learn wants plain defaults), two of its own, and scikit-learn's and XGBoost's
# names (None: not given) that stand for one of them.
_PARAMETERS = {**{name: parameter.default for name, parameter in inspect.signature(GBDTConfig).parameters.items()
                  if name in CONFIG_PARAMS},
               "growth_strategy": "leafwise", "n_threads": 0, "importance_type": "gain",
               "random_state": None, "n_jobs": None, "verbose": None, "eval_metric": None}
# the names above that are aliases of a GBDTConfig parameter (n_jobs is n_threads'; see _n_threads)
_SKLEARN_ALIASES = ("random_state", "verbose", "eval_metric")


def _is_other_name(name: str) -> bool:
    """A LightGBM / XGBoost name the estimators take as a keyword argument (an alias, an
    objective's parameter, or a name refused at fit with what to use instead)."""
    return (name in parameter_names.ALIASES or name in parameter_names.OBJECTIVE_KEYWORDS or name == "alpha"
            or name in parameter_names.REFUSED or name in parameter_names.THREAD_NAMES
            or name in parameter_names.COMBINED_NAMES)


def _storing_init(defaults: dict):
    """An `__init__` taking the keyword arguments `defaults` (name -> default) and storing
    each as an attribute, as scikit-learn asks. Its `__signature__` lists them: sklearn's
    `get_params`, `clone` and `repr` read the parameters from `inspect.signature`."""
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    signature = inspect.Signature([self_parameter] + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                                                        default=default)
                                                      for name, default in defaults.items()])

    def __init__(self, **params):
        # LightGBM's and XGBoost's names (num_leaves, reg_lambda...) are stored too, as LightGBM's
        # estimators store their **kwargs: get_params lists them, so clone keeps them
        others = {name: params.pop(name) for name in list(params) if name not in defaults}
        unknown = [name for name in others if not _is_other_name(name)]
        if unknown:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"{parameter_names.hint(unknown[0], tuple(defaults))}")
        bound = signature.bind(self, **params)  # a TypeError for a positional argument
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            if name != "self":
                setattr(self, name, value)
        for name, value in others.items():
            setattr(self, name, value)
        self._other_params = tuple(others)

    __init__.__signature__ = signature  # type: ignore[attr-defined]  # a function attribute inspect reads
    return __init__


# What the estimators' docstrings share, here and in boosters.dask: the fields "%(name)s" that
# `fill_doc` fills. The Dask estimators' parameters differ in n_threads and add their own.
# (numpydoc reads a parameter's names from one line)
_CONFIG_PARAMETERS_DOC = "    " + ", ".join(name for name in CONFIG_PARAMS
                                           if name not in ("growth_strategy", "objective")) + """ : optional
        The `boosters.GBDTConfig` parameters of the same names, with its defaults.
        LightGBM's and XGBoost's names of them (``num_leaves``, ``reg_lambda``,
        ``min_child_samples``...: :doc:`/parameters`) and objective parameters
        (``alpha``, ``num_class``...) are keyword arguments too, stored as given and
        listed by `get_params`; a name and its alias with different values is a
        ValueError at fit.
    objective : str, Objective or callable, optional
        The loss: None is the estimator's own (see its description); a name (see the
        estimator), an `Objective`, or a callable ``(margins, dataset) -> (grad, hess)``
        (`Objective.custom`).
    growth_strategy : {"depthwise", "leafwise", "oblivious"}, default "leafwise"
        The tree growth strategy, by name (`GrowthStrategy` member names also work);
        leaf-wise also beside XGBoost's parameter names (a params dict in XGBoost's
        names grows depth-wise; here give ``grow_policy="depthwise"``).
    random_state : int, numpy.random.RandomState or None, default None
        scikit-learn's name of `seed`: an int is the seed; a ``RandomState`` draws one
        at each fit (as scikit-learn's estimators draw theirs); None leaves `seed` (42
        by default) in effect, as LightGBM's and XGBoost's estimators do, so that a
        default estimator is reproducible.
    n_jobs : int or None, default None
        scikit-learn's name of the thread count: None and -1 are every core, -2 every
        core but one (as joblib); overrides `n_threads` (both given and different: an
        error).
    verbose : int, optional
        scikit-learn's / LightGBM's name of `verbosity`; below 0 is silent (0).
    eval_metric : str, Metric or list of them, optional
        XGBoost's name of `metric`: the metrics scored on `eval_set` each round; early
        stopping follows the first (LightGBM's ``first_metric_only``; XGBoost's follows
        the last).
"""
_IMPORTANCE_TYPE_DOC = """\
    importance_type : str, default "gain"
        The kind of `feature_importances_`: "split", "gain", "cover", "average_gain" or
        "average_cover" (or a `boosters.ImportanceType`).
"""
_DOCS = {
    "parameters": _CONFIG_PARAMETERS_DOC + """\
    n_threads : int, default 0
        Threads for training and prediction; 0 or -1 uses every available core, -2 all but one.
""" + _IMPORTANCE_TYPE_DOC,
    "class_weight": """
    class_weight : None, "balanced" or dict, default None
        Per-class weights ({label: weight}, or "balanced": inversely proportional to the
        class frequencies), multiplied into `sample_weight`.""",
    "ndcg_at": """
    ndcg_at : int, default 10
        The NDCG truncation level the LambdaRank gradients optimise.""",
    "classes_": """
    classes_ : ndarray
        The labels seen in `fit`, sorted.
    n_classes_ : int
        Their number.""",
    "fitted_attributes": """
    booster_, n_features_in_, feature_names_in_, best_iteration_, evals_result_, best_score_, feature_importances_
        As in `GBDTRegressor`.""",
    # fit's and predict's
    "X": """
    X : array-like, sparse matrix or frame of shape (n_samples, n_features)
        Features: a NumPy array, scipy.sparse CSR/CSC, pandas or polars DataFrame or
        pyarrow Table (see `boosters.Dataset`); NaN / null / pd.NA is missing.""",
    "eval_set": """
    eval_set : (X_val, y_val) or list of such pairs, optional
        Scored every round (`evals_result_`, `best_score_`); early stopping
        (`early_stopping_rounds`) follows the last pair that is not fit's own (X, y)
        (that pair, the very objects given to fit, scores the training rows).""",
    "categorical_features_callbacks": """
    categorical_features : "auto", list of int or str, optional
        As in `boosters.Dataset`: a frame's categorical columns by default.
    callbacks : list, optional
        Training callbacks (see `boosters.callbacks`), passed to `GBDTModel.train`.""",
    "init_score": """
    init_score : array-like of shape (n_samples,) or (n_samples, n_outputs), optional
        Keyword-only. Starting margins of the rows (LightGBM's ``init_score``), instead
        of the objective's constant start; `predict` does not add them (give them to
        ``booster_.predict(X, init_score=...)``).
    eval_init_score : array-like or list of them, optional
        Keyword-only. Starting margins of the `eval_set` rows (a list: one per pair).
    eval_names : list of str, optional
        Keyword-only. The eval sets' names in `evals_result_`: default "valid" for one
        held-out pair, else LightGBM's "valid_0", "valid_1"... ("training" for fit's own).
    eval_metric : str, Metric or list of them, optional
        Keyword-only. This fit's metrics (LightGBM's fit argument), instead of the
        constructor's `eval_metric` / `metric`.
    init_model : GBDTModel, path or fitted estimator, optional
        Keyword-only. Continue training it (LightGBM's `init_model`, XGBoost's
        `xgb_model`): see `GBDTModel.train`.""",
    "X_predict": """
    X : array-like, sparse matrix or frame of shape (n_samples, n_features)
        A frame's columns are matched to the training columns by name (any order).""",
    "predict_options": """
    raw_score, output_margin, pred_leaf, pred_contrib, start_iteration, num_iteration, iteration_range : optional
        Keyword-only. LightGBM's and XGBoost's prediction options, as
        `boosters.GBDTModel.predict` takes them: the raw margins, the leaves, the SHAP
        values (the bias last), and the rounds used.""",
    "iteration_options": """
    start_iteration, num_iteration, iteration_range : optional
        Keyword-only. The rounds used, as `boosters.GBDTModel.predict` takes them.""",
}


@contextlib.contextmanager
def _about(name: str):
    """A ValueError or TypeError raised inside, its message prefixed with `name` (the
    data it is about); raised as ValueError or TypeError, whatever the subclass (its
    constructor may take other arguments)."""
    try:
        yield
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from exc
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from exc


class _GBDTEstimator(BaseEstimator):
    """What the three estimators share: input checks, fitting, importances. Each sets its
    `__init__` with `_storing_init` (all parameters keyword-only)."""

    booster_: GBDTModel  # set by fit (an annotation only: check_is_fitted looks for the attribute)

    if TYPE_CHECKING:
        # The constructor type checkers see (mypy, pyright): each estimator's `__init__`
        # is made by `_storing_init` at run time (tests/test_typing.py checks that these
        # names and defaults are `_PARAMETERS`). `other_params`: LightGBM's and XGBoost's
        # names, the classifier's class_weight, the ranker's ndcg_at, the Dask ones'.
        def __init__(
            self, *,
            n_estimators: int = 100,
            learning_rate: float = 0.05,
            objective: str | Objective | Callable[..., Any] | None = None,
            metric: Any = None,
            growth_strategy: str = "leafwise",
            max_depth: int | str | None = "auto",
            n_leaves: int = 15,
            l1: float = 0.0,
            l2: float = 1.0,
            min_gain_to_split: float = 0.0,
            min_child_weight: float = 1e-3,
            min_samples_leaf: int = 20,
            max_bins: int = 256,
            cache_size: int = 8,
            early_stopping_rounds: int | None = None,
            seed: int = 42,
            histogram_mode: str = "auto",
            prefetch: bool = True,
            enable_bundling: bool = True,
            renew_leaves: bool = True,
            quantization_levels: int | None = None,
            histogram_layout: str = "auto",
            verbosity: int = 0,
            colsample_bytree: float = 1.0,
            colsample_bylevel: float = 1.0,
            colsample_bynode: float = 1.0,
            monotone_constraints: Any = None,
            interaction_constraints: Any = None,
            subsample: float = 0.8,
            goss_top_rate: float | None = None,
            goss_other_rate: float | None = None,
            max_onehot_cats: int = 4,
            cat_smooth: float = 10.0,
            cat_l2: float = 10.0,
            max_cat_threshold: int = 32,
            min_data_per_group: int = 100,
            cat_encoding: str = "splits",
            ctr_prior_weight: float = 1.0,
            booster: str = "gbdt",
            drop_rate: float = 0.1,
            skip_drop: float = 0.5,
            max_drop: int | None = 50,
            xgboost_dart_mode: bool = False,
            linear_leaves: bool = False,
            linear_l1: float = 0.0,
            linear_l2: float = 0.0,
            random_strength: float = 0.0,
            bagging_temperature: float | None = None,
            n_threads: int = 0,
            importance_type: str | ImportanceType = "gain",
            random_state: int | np.random.RandomState | None = None,
            n_jobs: int | None = None,
            verbose: int | None = None,
            eval_metric: Any = None,
            **other_params: Any,
        ) -> None: ...

    def __setstate__(self, state):
        # an estimator pickled before a parameter existed: that parameter at its default
        super().__setstate__({**{name: value for name, value in _PARAMETERS.items() if name not in state}, **state})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True      # NaN is a missing value, routed by every split
        tags.input_tags.sparse = True         # CSR / CSC, never densified
        tags.input_tags.categorical = True    # pandas `category` columns are categorical features
        return tags

    def get_params(self, deep=True):
        """The parameters, LightGBM's and XGBoost's names given to the constructor included.

        Parameters
        ----------
        deep : bool, default True
            As scikit-learn's `BaseEstimator.get_params`.

        Returns
        -------
        dict
            Parameter name -> value.

        Examples
        --------
        >>> from boosters.sklearn import GBDTRegressor
        >>> GBDTRegressor(num_leaves=15, growth_strategy="leafwise").get_params()["num_leaves"]
        15
        """
        params = super().get_params(deep=deep)
        params.update({name: getattr(self, name) for name in getattr(self, "_other_params", ())})
        return params

    def set_params(self, **params):
        """Set parameters; LightGBM's and XGBoost's names (aliases) too.

        Parameters
        ----------
        **params
            Parameter name -> value.

        Returns
        -------
        self

        Examples
        --------
        >>> import boosters as bst
        >>> from boosters.sklearn import GBDTRegressor
        >>> GBDTRegressor().set_params(reg_lambda=2.0).config(bst.Objective.squared()).l2
        2.0
        """
        others = {name: params.pop(name) for name in list(params)
                  if name not in self._get_param_names() and _is_other_name(name)}
        for name, value in others.items():
            setattr(self, name, value)
        self._other_params = tuple(dict.fromkeys((*getattr(self, "_other_params", ()), *others)))
        return super().set_params(**params)

    def _named_params(self, draw_seed: bool = True) -> dict:
        """The config's parameters as given to the estimator: its own, with each of
        scikit-learn's, LightGBM's and XGBoost's names that is set in place of its
        canonical parameter when that one has its default (both set and different: the
        config's ValueError naming both)."""
        params = {name: getattr(self, name) for name in CONFIG_PARAMS}
        others = {name: getattr(self, name) for name in _SKLEARN_ALIASES if getattr(self, name) is not None}
        others.update({name: getattr(self, name) for name in getattr(self, "_other_params", ())})
        if "random_state" in others and draw_seed:  # a RandomState draws once per config
            others["random_state"] = _seed_from_random_state(others["random_state"])
        for name in others:
            target = parameter_names.ALIASES.get(name, (None,))[0]
            if target in params and _is_default(target, params[target]):
                del params[target]
        return {**params, **others}

    def config(self, objective: Objective) -> GBDTConfig:
        """The `GBDTConfig` of these parameters with `objective`.

        Parameters
        ----------
        objective : Objective
            The objective (`fit` resolves it from the `objective` parameter, the
            estimator's class and the labels).

        Returns
        -------
        GBDTConfig
            Raises ValueError / TypeError naming a bad parameter.

        Examples
        --------
        >>> import boosters as bst
        >>> from boosters.sklearn import GBDTRegressor
        >>> cfg = GBDTRegressor(n_estimators=7, growth_strategy="leafwise").config(bst.Objective.squared())
        >>> cfg.n_estimators, cfg.growth_strategy
        (7, <GrowthStrategy.Leafwise: 'leafwise'>)
        """
        params = {name: value for name, value in self._named_params().items()  # the objective is `objective`
                  if not _is_objective_keyword(name) and name not in parameter_names.THREAD_NAMES
                  and parameter_names.ALIASES.get(name, (None,))[0] != "objective"}
        return GBDTConfig(**{**params, "objective": objective})

    def _n_threads(self) -> int:
        """The threads of training and prediction: `n_threads`, or scikit-learn's `n_jobs`
        (None: not given; -1: every core, -2 every core but one, as joblib)."""
        thread_names = {name: getattr(self, name) for name in getattr(self, "_other_params", ())
                        if name in parameter_names.THREAD_NAMES}
        if self.n_jobs is not None:
            thread_names["n_jobs"] = self.n_jobs
        if not thread_names:
            return self.n_threads
        n_threads, _ = parameter_names.split_thread_params(thread_names)
        if self.n_threads != 0 and self.n_threads != n_threads:
            raise ValueError(f"n_threads={self.n_threads!r} and {thread_names} are the thread count given twice "
                             "with different values: give one")
        return n_threads

    def _objective(self, task: str, default: Objective, n_classes: int | None = None) -> Objective:
        """The `objective` parameter as an Objective: None is `default`; a name of the
        `task`'s objectives is `Objective.<name>()` (with `n_classes` for the multiclass ones); an
        Objective as it is; a callable is `Objective.custom` (n_classes outputs for
        more than two classes)."""
        named = self._named_params(draw_seed=False)
        spec = next((value for name, value in named.items()  # LightGBM's objective_type... too
                     if name == "objective" or parameter_names.ALIASES.get(name, (None,))[0] == "objective"), None)
        keywords = {name: value for name, value in named.items() if _is_objective_keyword(name)}
        if spec is None:
            if keywords:
                raise ValueError(f"objective parameter(s) {sorted(keywords)} need an objective named with them "
                                 "(objective='quantile', alpha=0.9)")
            return default
        if isinstance(spec, Objective):
            return spec
        if isinstance(spec, str):
            names = objective_names(task)
            fn = objective_fn(spec) if objective_named(spec) is not None else None
            if fn is None or fn.name not in names or not hasattr(Objective, fn.name):
                available = [name for name in names if hasattr(Objective, name)]
                raise ValueError(f"objective must be one of {available} (or a LightGBM / XGBoost name of one), an "
                                 f"Objective or a callable, got {spec!r}"
                                 f"{name_hint(spec, objective_names_known(), REFUSED_OBJECTIVES)}")
            if fn.takes("n_classes"):
                keywords.setdefault("num_class", n_classes)
            return objective_from_name(spec, keywords)
        if callable(spec):
            return Objective.custom(spec, n_outputs=1 if n_classes is None or n_classes == 2 else n_classes)
        raise TypeError(f"objective must be a name, an Objective, a callable or None, got {spec!r}")

    # -- input checks ------------------------------------------------------------------------

    def _check_X(self, X, reset: bool):
        # a frame is handed on as it is, so that its categorical columns and names survive
        # (sklearn's check_array would make it floats); its values are checked by Dataset / GBDTModel
        if frame_library(X) == "arrow-stream":  # another library's table: read once, as a pyarrow Table
            frame = as_frame(X)
            assert frame is not None  # a table (frame_library)
            X = frame.X
        if is_frame(X):
            if not reset and self._same_names_reordered(X):
                return X  # the booster matches the columns by name
            return validate_data(self, X, reset=reset, skip_check_array=True)
        return validate_data(self, X, reset=reset, accept_sparse=["csr", "csc"], ensure_all_finite="allow-nan",
                             dtype=[np.float64, np.float32])

    def _same_names_reordered(self, X) -> bool:
        """X's columns are the training columns, each once, in another order."""
        fitted = getattr(self, "feature_names_in_", None)
        names = column_names(X)
        return (fitted is not None and names is not None and len(names) == len(set(names)) == len(fitted)
                and set(names) == set(fitted) and names != list(fitted))

    def _check_y(self, X, y, y_numeric: bool, multi_output: bool = False):
        """y as the booster reads it: 1-D, or 2-D (n_samples, k >= 2) when `multi_output`."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        y = np.asarray(y) if multi_output else y
        y = y if multi_output and y.ndim == 2 and y.shape[1] > 1 else column_or_1d(y, warn=True)
        if y_numeric:
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("y must be finite (no NaN or inf)")
        check_consistent_length(X, y)
        return y

    def _checked_eval_sets(self, eval_set, y_numeric: bool, multi_output: bool = False, train=None):
        """eval_set (a pair or a list of pairs) as a list of checked (X_val, y_val) pairs, or
        None; a pair that is fit's very (X, y) (`train`, as given) is None: the training
        rows, scored on their margins (as LightGBM's)."""
        if eval_set is None:
            return None
        pairs = eval_set if isinstance(eval_set, list) else [eval_set]
        if not pairs or not all(isinstance(pair, tuple) and len(pair) == 2 for pair in pairs):
            raise ValueError("eval_set must be an (X_val, y_val) pair or a list of such pairs")
        checked: list[tuple | None] = []
        for X_val, y_val in pairs:
            if train is not None and X_val is train[0] and y_val is train[1]:
                checked.append(None)
                continue
            with _about("eval_set"):  # scikit-learn's messages (feature names, lengths) do not say which data
                X_val = self._check_X(X_val, reset=False)
                checked.append((X_val, self._check_y(X_val, y_val, y_numeric, multi_output)))
        return checked

    # -- training ------------------------------------------------------------------------------

    def _fit(self, X, y, sample_weight, eval_pairs, categorical_features, objective: Objective, callbacks,
             queries=None, eval_queries=None, init_score=None, eval_init_score=None, eval_names=None,
             eval_metric=None, init_model=None):
        """Train on checked (X, y), with y (and the eval pairs') as the objective reads it.
        `eval_pairs`: `_checked_eval_sets`'; `queries` / `eval_queries`: the Dataset
        keyword arguments of a ranker's query groups; `init_score` / `eval_init_score`: the
        starting margins of the training / eval rows (one array per eval set, a list);
        `eval_metric`: this fit's metrics (LightGBM's fit argument); `init_model`: a model,
        its path or a fitted estimator to continue."""
        ImportanceType.parse(self.importance_type)  # a ValueError naming importance_type, before training
        config = self.config(objective)
        if eval_metric is not None:
            config = config.replace(metric=eval_metric)
        train = Dataset(X, y, weights=sample_weight, categorical_features=categorical_features, init_score=init_score,
                        **(queries or {}))
        if eval_pairs is None and eval_init_score is not None:
            raise ValueError("eval_init_score is given without an eval_set")
        val_set = None
        if eval_pairs is not None:
            names = _eval_names(eval_pairs, eval_names)
            inits = _per_eval_set("eval_init_score", eval_init_score, len(eval_pairs))
            val_set = []
            for name, pair, init in zip(names, eval_pairs, inits):
                if pair is None:  # fit's own rows
                    val_set.append((name, train))
                    continue
                with _about("eval_set"):  # Dataset names its own arguments (X, y): say which data they are
                    X_val, y_val = pair
                    val_set.append((name, Dataset(X_val, y_val, categorical_features=categorical_features,
                                                  init_score=init, **(eval_queries or {}))))
        scores: dict[str, dict[str, list[float]]] = {}
        if val_set is not None and (callbacks is None or isinstance(callbacks, (list, tuple))):
            callbacks = [*(callbacks or []), record_evaluation(scores)]  # every metric's scores
        continued_rounds = 0
        if init_model is not None:
            if isinstance(init_model, _GBDTEstimator):
                check_is_fitted(init_model, "booster_")
                init_model = init_model.booster_
            init_model = GBDTModel._init_model(init_model)  # a path loaded once
            continued_rounds = init_model.n_trees // init_model.forest.n_groups
        self.booster_ = GBDTModel.train(train, config, val_set=val_set, n_threads=self._n_threads(),
                                        callbacks=callbacks, init_model=init_model)
        self.best_iteration_ = self.booster_.best_iteration
        # named as the trainer names them for callbacks (record_evaluation, CallbackEnv.evals_result)
        self.evals_result_ = scores
        # LightGBM's best_score_: every set's every metric at the best round (the model's last round)
        best = self.booster_.n_trees // self.booster_.forest.n_groups - continued_rounds - 1  # this fit's rounds
        self.best_score_ = {name: {label: history[best] for label, history in metrics.items() if history}
                            for name, metrics in scores.items()}
        return self

    @property
    def feature_importances_(self) -> np.ndarray:
        """Per feature, its share of the total importance of kind `importance_type` (see
        `GBDTModel.feature_importance`): non-negative, summing to 1; all zeros when the
        trees have no split.

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3))
        >>> est = GBDTRegressor(n_estimators=5, max_depth=2).fit(X, 3 * X[:, 0] + X[:, 1])
        >>> est.feature_importances_.round(2)
        array([1., 0., 0.])
        """
        check_is_fitted(self, "booster_")
        return self.booster_.feature_importance(self.importance_type, normalize=True)

    def _raw(self, X, method):
        check_is_fitted(self, "booster_")
        return method(self._check_X(X, reset=False), n_threads=self._n_threads())

    def _booster_predict(self, X, **options):
        """booster_.predict of X with prediction options (GBDTModel.predict's)."""
        return self._raw(X, lambda X, n_threads: self.booster_.predict(X, n_threads=n_threads, **options))

    def shap_explanation(self, X, interactions: bool = False):
        """The booster's exact SHAP values of X as a ``shap.Explanation`` for shap's plots
        (`GBDTModel.shap_explanation`: raw margins, categorical features included).

        Parameters
        ----------
        X : array-like, DataFrame or scipy.sparse matrix
            The rows to explain, as for `predict`.
        interactions : bool, default False
            SHAP interaction values instead.

        Returns
        -------
        shap.Explanation

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTRegressor
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> est = GBDTRegressor(n_estimators=5).fit(X, X[:, 0])
        >>> est.shap_explanation(X[:4]).values.shape
        (4, 3)
        """
        check_is_fitted(self, "booster_")
        return self.booster_.shap_explanation(self._check_X(X, reset=False), interactions, self.n_threads)

    def to_shap_trees(self) -> dict:
        """The booster's trees in shap's tree-ensemble form:
        ``shap.TreeExplainer(estimator.to_shap_trees())`` (`GBDTModel.to_shap_trees`).

        Returns
        -------
        dict

        Examples
        --------
        >>> import numpy as np
        >>> import shap
        >>> from boosters.sklearn import GBDTRegressor
        >>> X = np.random.default_rng(0).normal(size=(200, 3))
        >>> est = GBDTRegressor(n_estimators=5).fit(X, X[:, 0])
        >>> shap.TreeExplainer(est.to_shap_trees()).shap_values(X[:4]).shape
        (4, 3)
        """
        check_is_fitted(self, "booster_")
        return self.booster_.to_shap_trees()


@fill_doc(**_DOCS)
class GBDTRegressor(RegressorMixin, _GBDTEstimator):
    """Gradient boosted trees for regression, with the `GBDTConfig` parameters as
    constructor arguments. The objective is squared error unless `objective` names
    another: "squared", "absolute", "huber", "pinball", "poisson", "gamma" or "tweedie"
    (each `Objective.<name>()` with its defaults; pass an `Objective` for other
    parameters), or is an `Objective` or a callable. A 2-D ``y`` trains one tree group
    per column (multi-target regression; `predict` then gives one column per target).

    Parameters
    ----------
    %(parameters)s

    Attributes
    ----------
    booster_ : GBDTModel
        The trained model.
    n_features_in_ : int
        Number of features seen in `fit`.
    feature_names_in_ : ndarray of str
        Column names of a frame given to `fit` (only then).
    best_iteration_ : int
        The 0-based round the model ends at: with early stopping (`early_stopping_rounds`
        or an `early_stopping` callback) the best validation round, the trees after it
        dropped; otherwise the last round, even with an `eval_set`.
    evals_result_ : dict
        ``{"valid": {metric_label: [score per round]}}`` with an `eval_set` (the metric is
        `GBDTConfig.resolved_metric`, by its label such as ``"ndcg@10"``; the form of
        `boosters.callbacks.record_evaluation`, read by `boosters.plotting.plot_metric`;
        one entry per eval set, by `eval_names`), ``{}`` without.
    best_score_ : dict
        ``{set_name: {metric_label: score}}``: every eval set's scores at the model's
        last round (the best one with early stopping), as LightGBM's; ``{}`` without.
    feature_importances_ : ndarray of float64
        Normalised importance of each feature (sums to 1).

    Examples
    --------
    >>> import numpy as np
    >>> from boosters.sklearn import GBDTRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4))
    >>> y = X[:, 0] + np.sin(X[:, 1])
    >>> est = GBDTRegressor(n_estimators=20, learning_rate=0.3).fit(X[:200], y[:200])
    >>> est.predict(X[:3]).round(2)
    array([-0.06, -0.14, -1.62])
    >>> round(est.score(X[200:], y[200:]), 2)  # R^2 on held-out rows
    0.95
    """

    if not TYPE_CHECKING:  # (type checkers read _GBDTEstimator's signature)
        __init__ = _storing_init(_PARAMETERS)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # a 2-D y: one tree group per column
        return tags

    def fit(self, X, y, sample_weight=None, eval_set=None, categorical_features=None, callbacks=None, *,
            init_score=None, eval_init_score=None, eval_names=None, eval_metric=None, init_model=None):
        """Train on (X, y).

        Parameters
        ----------
        %(X)s
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Finite targets; several columns train one tree group per column in one model
            (multi-target regression, see `boosters.Objective.squared`).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights (of every target of the row).
        %(eval_set)s
        %(categorical_features_callbacks)s
        %(init_score)s

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTRegressor
        >>> rng = np.random.default_rng(0)
        >>> X, X_val = rng.normal(size=(300, 3)), rng.normal(size=(100, 3))
        >>> est = GBDTRegressor(n_estimators=200, early_stopping_rounds=5)
        >>> est = est.fit(X, X[:, 0], eval_set=(X_val, X_val[:, 0]))
        >>> est.best_iteration_ < 199, len(est.evals_result_["valid"]["rmse"]) > 0
        (True, True)
        """
        given = (X, y)
        X = self._check_X(X, reset=True)
        y = self._check_y(X, y, y_numeric=True, multi_output=True)
        sample_weight = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        eval_pairs = self._checked_eval_sets(eval_set, y_numeric=True, multi_output=True, train=given)
        objective = self._objective("regression", Objective.squared())
        return self._fit(X, y, sample_weight, eval_pairs, categorical_features, objective, callbacks,
                         init_score=init_score, eval_init_score=eval_init_score, eval_names=eval_names,
                         eval_metric=eval_metric, init_model=init_model)

    def predict(self, X, *, raw_score: bool = False, output_margin: bool = False, pred_leaf: bool = False,
                pred_contrib: bool = False, start_iteration: int = 0, num_iteration=None, iteration_range=None):
        """Predicted values.

        Parameters
        ----------
        %(X_predict)s
        %(predict_options)s

        Returns
        -------
        ndarray of shape (n_samples,), or (n_samples, n_targets) after a 2-D `y`

        Examples
        --------
        >>> import numpy as np
        >>> import pandas as pd
        >>> from boosters.sklearn import GBDTRegressor
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
        >>> est = GBDTRegressor(n_estimators=10).fit(df, df["a"] - df["b"])
        >>> bool((est.predict(df[["b", "a"]]) == est.predict(df)).all())  # columns by name
        True
        """
        return self._booster_predict(X, raw_score=raw_score, output_margin=output_margin, pred_leaf=pred_leaf,
                                     pred_contrib=pred_contrib, start_iteration=start_iteration,
                                     num_iteration=num_iteration, iteration_range=iteration_range)


@fill_doc(**_DOCS)
class GBDTClassifier(ClassifierMixin, _GBDTEstimator):
    """Gradient boosted trees for classification: logistic loss for two classes, softmax
    for more, unless `objective` names another ("logistic", "softmax", "one_vs_rest",
    "hinge": the multiclass ones with the number of classes) or is an `Objective` (with
    one output for two classes, else one per class) or a callable (a custom objective
    with one output for two classes, else one per class; its margins are read as
    log-odds / class scores: `predict_proba` applies the sigmoid / softmax to them).
    Labels may be of any type; `classes_` holds them sorted, and probabilities come in
    that order (the objective sees the class indices 0..n_classes-1).

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
    >>> import numpy as np
    >>> from boosters.sklearn import GBDTClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=300) > 0, "yes", "no")
    >>> clf = GBDTClassifier(n_estimators=10).fit(X, y)
    >>> clf.classes_
    array(['no', 'yes'], dtype='<U3')
    >>> clf.predict_proba(X[:2]).round(3)
    array([[0.492, 0.508],
           [0.492, 0.508]])
    >>> clf.predict(X[:2])
    array(['yes', 'yes'], dtype='<U3')
    """

    if not TYPE_CHECKING:  # (type checkers read _GBDTEstimator's signature)
        __init__ = _storing_init({**_PARAMETERS, "class_weight": None})

    def fit(self, X, y, sample_weight=None, eval_set=None, categorical_features=None, callbacks=None, *,
            init_score=None, eval_init_score=None, eval_names=None, eval_metric=None, init_model=None):
        """Train on (X, y); the labels of an `eval_set` must be among the training labels.

        Parameters
        ----------
        %(X)s
        y : array-like of shape (n_samples,)
            Class labels of any type (at least two classes).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights.
        %(eval_set)s
        %(categorical_features_callbacks)s
        %(init_score)s

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 2))
        >>> y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
        >>> clf = GBDTClassifier(n_estimators=5, class_weight="balanced").fit(X, y)
        >>> clf.n_classes_, clf.predict_proba(X).shape
        (3, (300, 3))
        """
        given = (X, y)
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
        eval_pairs = self._checked_eval_sets(eval_set, y_numeric=False, train=given)
        if eval_pairs is not None:
            eval_pairs = [None if pair is None else (pair[0], self._encode(pair[1])) for pair in eval_pairs]
        objective = _classification_objective(self, self.n_classes_)
        return self._fit(X, self._encode(y), sample_weight, eval_pairs, categorical_features, objective, callbacks,
                         init_score=init_score, eval_init_score=eval_init_score, eval_names=eval_names,
                         eval_metric=eval_metric, init_model=init_model)

    def _encode(self, y) -> np.ndarray:
        """Labels -> their index in classes_ (float, as Dataset reads labels)."""
        return _class_codes(self.classes_, y)

    def predict_proba(self, X, *, start_iteration: int = 0, num_iteration=None, iteration_range=None) -> np.ndarray:
        """Class probabilities.

        Parameters
        ----------
        %(X_predict)s
        %(iteration_options)s

        Returns
        -------
        ndarray of shape (n_samples, ``n_classes_``)
            Columns in `classes_` order; rows sum to 1 (one-vs-rest: its per-class
            sigmoids divided by their sum; hinge: 1 for the predicted class, 0 for the
            other, as XGBoost's).

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 2))
        >>> clf = GBDTClassifier(n_estimators=5).fit(X, X[:, 0] > 0)
        >>> p = clf.predict_proba(X)
        >>> p.shape, bool(np.allclose(p.sum(axis=1), 1.0))
        ((200, 2), True)
        """
        check_is_fitted(self, "booster_")
        rounds = dict(start_iteration=start_iteration, num_iteration=num_iteration, iteration_range=iteration_range)
        if self.booster_.objective.name == "custom":  # raw margins: log-odds or class scores
            margins = self._booster_predict(X, raw_score=True, **rounds)
            p = transforms.sigmoid(margins[:, None]) if margins.ndim == 1 else transforms.softmax(margins)
        else:
            p = self._booster_predict(X, **rounds)
        return objective_fn(self.booster_.objective).class_probabilities(p)

    def decision_function(self, X) -> np.ndarray:
        """Raw margins (before the sigmoid / softmax).

        Parameters
        ----------
        %(X_predict)s

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, ``n_classes_``)
            The log-odds of ``classes_[1]`` for two classes, one margin per class otherwise.

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 2))
        >>> clf = GBDTClassifier(n_estimators=5).fit(X, X[:, 0] > 0)
        >>> margin = clf.decision_function(X)
        >>> bool(np.allclose(1 / (1 + np.exp(-margin)), clf.predict_proba(X)[:, 1]))
        True
        """
        return self._raw(X, lambda X, n_threads: self.booster_.predict_raw(X, n_threads=n_threads))

    def predict(self, X, *, raw_score: bool = False, output_margin: bool = False, pred_leaf: bool = False,
                pred_contrib: bool = False, start_iteration: int = 0, num_iteration=None, iteration_range=None) -> np.ndarray:
        """The most probable class of each row.

        Parameters
        ----------
        %(X_predict)s
        %(predict_options)s

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from `classes_` (with `raw_score` / `output_margin`, `pred_leaf` or
            `pred_contrib`: what `boosters.GBDTModel.predict` returns for them, as LightGBM's).

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 2))
        >>> clf = GBDTClassifier(n_estimators=5).fit(X, np.where(X[:, 0] > 0, "pos", "neg"))
        >>> clf.predict(X[:4])
        array(['pos', 'pos', 'neg', 'pos'], dtype='<U3')
        """
        rounds = dict(start_iteration=start_iteration, num_iteration=num_iteration, iteration_range=iteration_range)
        if raw_score or output_margin or pred_leaf or pred_contrib:
            return self._booster_predict(X, raw_score=raw_score, output_margin=output_margin, pred_leaf=pred_leaf,
                                         pred_contrib=pred_contrib, **rounds)
        proba = self.predict_proba(X, **rounds)  # first: it raises NotFittedError before classes_ is read
        return self.classes_[np.argmax(proba, axis=1)]


@fill_doc(**_DOCS)
class GBDTRanker(_GBDTEstimator):
    """Gradient boosted trees for learning to rank: LambdaRank
    (`Objective.lambdarank(ndcg_at)`) on integer relevance labels 0..30, rows grouped into
    queries by `group` (sizes) or `qid` (one query id per row). `objective` may name
    "lambdarank" (with `ndcg_at`) or "pairwise", or be an `Objective` or a callable.

    Parameters
    ----------
    %(parameters)s
    %(ndcg_at)s

    Attributes
    ----------
    %(fitted_attributes)s

    Examples
    --------
    >>> import numpy as np
    >>> from boosters.sklearn import GBDTRanker
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> relevance = np.clip(np.round(X[:, 0] + 1), 0, 3)
    >>> ranker = GBDTRanker(n_estimators=10).fit(X, relevance, group=[20] * 10)
    >>> scores = ranker.predict(X[:20])  # one query's rows
    >>> bool(np.corrcoef(scores, relevance[:20])[0, 1] > 0.8)
    True
    """

    if not TYPE_CHECKING:  # (type checkers read _GBDTEstimator's signature)
        __init__ = _storing_init({**_PARAMETERS, "ndcg_at": 10})

    def fit(self, X, y, sample_weight=None, eval_set=None, categorical_features=None, callbacks=None, *,
            group=None, qid=None, eval_group=None, eval_qid=None, init_score=None, eval_init_score=None,
            eval_names=None, eval_metric=None, init_model=None):
        """Train on (X, y) with the rows grouped into queries.

        Parameters
        ----------
        %(X)s
        y : array-like of shape (n_samples,)
            Relevance labels: integers 0..30.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights.
        eval_set : (X_val, y_val) or list of one such pair, optional
            Scored every round with NDCG (`evals_result_`); early stopping when
            `early_stopping_rounds` is set.
        %(categorical_features_callbacks)s
        group : array-like of int, optional
            Keyword-only, as are `qid`, `eval_group` and `eval_qid`. Query sizes, in row
            order (they sum to n_samples), as LightGBM's. Give `group` or `qid`; without
            either, all rows are one query.
        qid : array-like, optional
            The query id of each row, as XGBoost's; a query's rows must be contiguous.
        eval_group, eval_qid : array-like, optional
            The queries of `eval_set`, as `group` / `qid` (one query without either).
        %(init_score)s

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTRanker
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(120, 2))
        >>> y = (X[:, 0] > 0).astype(int)
        >>> qid = np.repeat(np.arange(12), 10)  # 12 queries of 10 rows
        >>> GBDTRanker(n_estimators=3).fit(X, y, qid=qid).n_features_in_
        2
        """
        X = self._check_X(X, reset=True)
        y = self._check_y(X, y, y_numeric=True)
        sample_weight = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        eval_pairs = self._checked_eval_sets(eval_set, y_numeric=True)
        if eval_pairs is not None and len(eval_pairs) != 1:
            raise ValueError(f"eval_set: GBDTRanker scores one (X_val, y_val) pair, got {len(eval_pairs)}")
        if isinstance(eval_group, list) and len(eval_group) == 1 and not np.isscalar(eval_group[0]):
            eval_group = eval_group[0]  # LightGBM's form: one array per eval set
        eval_queries = None if eval_pairs is None else _queries(eval_group, eval_qid, eval_pairs[0][0].shape[0])
        return self._fit(X, y, sample_weight, eval_pairs, categorical_features, _ranking_objective(self),
                         callbacks, queries=_queries(group, qid, X.shape[0]), eval_queries=eval_queries,
                         init_score=init_score, eval_init_score=eval_init_score, eval_names=eval_names,
                         eval_metric=eval_metric, init_model=init_model)

    def predict(self, X, *, raw_score: bool = False, output_margin: bool = False, pred_leaf: bool = False,
                pred_contrib: bool = False, start_iteration: int = 0, num_iteration=None, iteration_range=None) -> np.ndarray:
        """Ranking scores: within a query, a higher score ranks a row higher.

        Parameters
        ----------
        %(X_predict)s
        %(predict_options)s

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> import numpy as np
        >>> from boosters.sklearn import GBDTRanker
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 2))
        >>> ranker = GBDTRanker(n_estimators=5).fit(X, (X[:, 1] > 0).astype(int), group=[10] * 10)
        >>> ranker.predict(X).shape
        (100,)
        """
        scores = not (pred_leaf or pred_contrib)  # the raw margins are the scores
        return self._booster_predict(X, raw_score=scores or raw_score, output_margin=output_margin,
                                     pred_leaf=pred_leaf, pred_contrib=pred_contrib, start_iteration=start_iteration,
                                     num_iteration=num_iteration, iteration_range=iteration_range)


def _eval_names(eval_pairs: list, eval_names) -> list[str]:
    """The eval sets' names: `eval_names`, else "valid" for a single held-out set, else
    LightGBM's "valid_0", "valid_1"... ("training" for fit's own rows)."""
    if eval_names is not None:
        names = [eval_names] if isinstance(eval_names, str) else list(eval_names)
        if len(names) != len(eval_pairs) or not all(isinstance(name, str) for name in names):
            raise ValueError(f"eval_names must be one name per eval_set pair ({len(eval_pairs)}), got {eval_names!r}")
        return names
    if len(eval_pairs) == 1 and eval_pairs[0] is not None:
        return ["valid"]
    return ["training" if pair is None else f"valid_{i}" for i, pair in enumerate(eval_pairs)]


def _per_eval_set(name: str, value, n_sets: int) -> list:
    """One value per eval set: a list of them, or one value for a single set."""
    if value is None:
        return [None] * n_sets
    if isinstance(value, list) and (n_sets > 1 or len(value) == 1):
        if len(value) != n_sets:
            raise ValueError(f"{name}: give one per eval_set pair ({n_sets}), got {len(value)}")
        return value
    if n_sets != 1:
        raise ValueError(f"{name}: give a list of one per eval_set pair ({n_sets})")
    return [value]


def _is_objective_keyword(name: str) -> bool:
    """An objective's parameter given beside it (num_class, alpha, quantile_alpha...)."""
    return name in parameter_names.OBJECTIVE_KEYWORDS or name == "alpha"


def _is_default(name: str, value) -> bool:
    """Whether the estimator's parameter `name` holds its default (an alias may then replace it)."""
    default = _PARAMETERS.get(name, DEFAULT_N_LEAVES if name == "n_leaves" else None)
    try:
        return value is default or bool(value == default)
    except (TypeError, ValueError):
        return False


def _seed_from_random_state(random_state) -> int:
    """boosters' seed from scikit-learn's random_state: an int is the seed; a
    `numpy.random.RandomState` draws one (a new one each fit, as scikit-learn's own
    estimators draw theirs); None is not given (boosters' `seed`, default 42)."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.uint32).max, dtype=np.uint64))
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise ValueError(f"random_state must be an int, a numpy.random.RandomState or None, got {random_state!r}")
    return int(random_state)


def _classification_objective(estimator: _GBDTEstimator, n_classes: int) -> Objective:
    """A classifier's objective for `n_classes` classes (also the Dask classifier's):
    its `objective` parameter, by default logistic for two classes, else softmax; a
    ValueError unless it has one output for two classes (or two), else one per class."""
    default = Objective.logistic() if n_classes == 2 else Objective.softmax(n_classes)
    objective = estimator._objective("classification", default, n_classes)
    if objective.n_outputs not in ((1, 2) if n_classes == 2 else (n_classes,)):
        raise ValueError(f"objective {objective!r} has {objective.n_outputs} outputs; y has {n_classes} "
                         f"classes (give one output for two classes, else one per class)")
    return objective


def _ranking_objective(estimator: _GBDTEstimator) -> Objective:
    """A ranker's objective (also the Dask ranker's): its `objective` parameter, by
    default (or named "lambdarank") LambdaRank with the estimator's `ndcg_at`."""
    default = Objective.lambdarank(ndcg_at=estimator.ndcg_at)
    return default if estimator.objective == "lambdarank" else estimator._objective("ranking", default)


def _class_codes(classes: np.ndarray, y) -> np.ndarray:
    """Labels -> their index in the sorted `classes` (float, as Dataset reads labels); a
    ValueError names labels not among them. (Also the Dask classifier's, per partition.)"""
    codes = np.minimum(np.searchsorted(classes, y), len(classes) - 1)
    unknown = classes[codes] != y
    if np.any(unknown):
        raise ValueError(f"y holds labels not seen in training: {np.unique(np.asarray(y)[unknown])[:5]!r}")
    return codes.astype(np.float64)


def _queries(group, qid, n_rows: int) -> dict:
    """The Dataset keyword arguments of the queries (Dataset checks them): all rows one
    query when neither `group` nor `qid` is given."""
    if group is None and qid is None:
        return {"group": [n_rows]}
    return {"group": group, "qid": qid}
