"""The public value `Metric` (re-exported by boosters.config and boosters): what scores a
model each round, checked when made, compared, hashed and saved with a model."""

from __future__ import annotations

from boosters._lib.docstrings import fill_doc
from boosters.objectives.base import _SetOnce
from boosters.objectives.objective import Objective
from boosters.objectives.parameters import K, argument_texts, label_text
from boosters.objectives.registry import (METRICS, REFUSED_METRICS, checked, metric_fn, metric_named, metric_names,
                                          name_hint, objective_fn)

# the order in which the parameters are checked: a first bad one is the one reported
_CHECK_ORDER = ("k", "variance_power", "threshold", "alpha", "delta")


def _factory_doc(factory):
    """Fill the %(returns_and_example)s field of a factory without parameters: its Returns, and
    an example that makes the metric (its repr)."""
    return fill_doc(returns_and_example=f"""
        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.{factory.__name__}()
        Metric.{factory.__name__}()""")(factory)


class Metric(_SetOnce):
    """An evaluation metric: `Metric.rmse()`, `.mse()`, `.mae()`, `.logloss()`, `.auc()`,
    `.accuracy()`, `.error()`, `.multiclass_logloss()`, `.multiclass_accuracy()`,
    `.multiclass_error()`, the deviances `.poisson_deviance()`,
    `.gamma_deviance()`, `.tweedie_deviance(variance_power)`, for query groups
    `.ndcg(k)`, `.map(k)`, for regression `.mape()`, `.pinball(alpha)`, `.huber(delta)`,
    and for classification `.margin_accuracy(threshold)`, `.one_vs_rest_logloss()`.

    `logloss` and `accuracy` also score softmax models. Make one with the static methods;
    the constructor takes the name. With a ``val_set``, training scores the validation set
    with it every round (`GBDTModel.eval_history`) and early stopping follows it.

    Parameters
    ----------
    name : str
        One of "rmse", "mse", "mae", "logloss", "auc", "accuracy", "error", "multiclass_logloss",
        "multiclass_accuracy", "multiclass_error", "poisson_deviance", "gamma_deviance", "tweedie_deviance",
        "ndcg", "map", "mape", "pinball", "huber" (or "ndcg@k", "map@k", as LightGBM names
        them; "tweedie_deviance@p", "pinball@alpha" or "pinball@a1,a2,...", "huber@delta"),
        "margin_accuracy" (or "margin_accuracy@t"), "one_vs_rest_logloss".
    k : int, optional
        The truncation of "ndcg" and "map" (default 10).
    variance_power : float, optional
        The power of "tweedie_deviance", in (1, 2) (default 1.5).
    alpha : float or list of float, optional
        The quantile level(s) of "pinball", in (0, 1) (default 0.5).
    delta : float, optional
        The threshold of "huber", > 0 (default 1.0).
    threshold : float, optional
        The margin threshold of "margin_accuracy" (default 0.0).

    Examples
    --------
    >>> bst.Metric.auc(), bst.Metric.auc().higher_is_better
    (Metric.auc(), True)
    >>> bst.Metric("rmse") == bst.Metric.rmse(), bst.Metric("ndcg@5") == bst.Metric.ndcg(5)
    (True, True)

    One validation score per round; early stopping keeps the round with the highest AUC
    (round 1 here: two rounds without a better AUC stop the training after round 3):

    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float)
    >>> config = bst.GBDTConfig(n_estimators=10, objective=bst.Objective.logistic(),
    ...                         metric=bst.Metric.auc(), early_stopping_rounds=2)
    >>> model = bst.GBDTModel.train(bst.Dataset(X[:150], y[:150]), config,
    ...                             val_set=bst.Dataset(X[150:], y[150:]))
    >>> np.round(model.eval_history, 3), model.best_iteration, model.n_trees
    (array([0.909, 0.973, 0.966, 0.967]), 1, 2)
    """

    __slots__ = ("name", "k", "variance_power", "alpha", "delta", "threshold")
    name: str
    k: int | None  # each parameter: None for the metrics that do not take it
    variance_power: float | None
    alpha: float | tuple[float, ...] | None
    delta: float | None
    threshold: float | None

    def __init__(self, name: str, k: int | None = None, variance_power: float | None = None, alpha=None,
                 delta: float | None = None, threshold: float | None = None):
        given = {"k": k, "variance_power": variance_power, "threshold": threshold, "alpha": alpha, "delta": delta}
        if isinstance(name, str) and "@" in name:  # a label, as model files write them
            name, given = _parse_label(name, given)
        found = metric_named(name)
        if found is None:
            raise ValueError(f"metric must be one of {sorted(fn.name for fn in METRICS)}, got {name!r}"
                             f"{name_hint(name, metric_names(), REFUSED_METRICS)}")
        fn, defaults = found
        for key in _CHECK_ORDER:  # each parameter the definition takes: the value given, else its default
            value = defaults.get(key) if given[key] is None else given[key]
            setattr(self, key, checked(fn, key, value, METRICS))
        self.name = fn.name  # an alias saves and compares as its metric

    @staticmethod
    @_factory_doc
    def rmse() -> "Metric":
        """Root mean squared error (regression); of a multi-target model, the mean over its
        targets of each target's RMSE.

        %(returns_and_example)s
        """
        return Metric("rmse")

    @staticmethod
    @_factory_doc
    def mse() -> "Metric":
        """Mean squared error (regression; LightGBM's ``l2``); of a multi-target model, the
        mean over its targets of each target's MSE.

        %(returns_and_example)s
        """
        return Metric("mse")

    @staticmethod
    @_factory_doc
    def mae() -> "Metric":
        """Mean absolute error (regression); of a multi-target model, the mean over its
        targets of each target's MAE.

        %(returns_and_example)s
        """
        return Metric("mae")

    @staticmethod
    @_factory_doc
    def logloss() -> "Metric":
        """Binary (logistic) or multiclass (softmax) log loss.

        %(returns_and_example)s
        """
        return Metric("logloss")

    @staticmethod
    @_factory_doc
    def auc() -> "Metric":
        """Area under the ROC curve of the margins (logistic, hinge); a probability label y
        counts as weight y positive and 1 - y negative (as XGBoost's ``auc``).

        %(returns_and_example)s
        """
        return Metric("auc")

    @staticmethod
    @_factory_doc
    def accuracy() -> "Metric":
        """Share of rows whose predicted class is the label: margin > 0 (logistic, hinge) or
        the largest margin (softmax, one_vs_rest). A probability label y counts y right
        for class 1 and 1 - y for class 0 (as XGBoost's ``error``).

        %(returns_and_example)s
        """
        return Metric("accuracy")

    @staticmethod
    @_factory_doc
    def multiclass_logloss() -> "Metric":
        """Multiclass log loss (softmax; the default metric for it).

        %(returns_and_example)s
        """
        return Metric("multiclass_logloss")

    @staticmethod
    @_factory_doc
    def multiclass_accuracy() -> "Metric":
        """Share of rows whose most probable class is the label (softmax).

        %(returns_and_example)s
        """
        return Metric("multiclass_accuracy")

    @staticmethod
    @_factory_doc
    def error() -> "Metric":
        """1 - `accuracy`: the share of rows whose predicted class is not the label
        (XGBoost's ``error``, LightGBM's ``binary_error``).

        %(returns_and_example)s
        """
        return Metric("error")

    @staticmethod
    @_factory_doc
    def multiclass_error() -> "Metric":
        """1 - `multiclass_accuracy` (XGBoost's ``merror``, LightGBM's ``multi_error``).

        %(returns_and_example)s
        """
        return Metric("multiclass_error")

    @staticmethod
    def ndcg(k: int = 10) -> "Metric":
        """Mean NDCG@k over the query groups, as LightGBM's ``ndcg`` (gain 2^label - 1).

        Rows of each query are ordered by score (ties keep the row order); a query's DCG@k
        sums gain / log2(2 + position) over its top k, divided by the best possible
        DCG@k. A query with no relevant row (ideal DCG 0) counts as 1. With weights, a
        query weighs the mean weight of its rows. Needs query groups.

        Parameters
        ----------
        k : int, default 10
            How many top positions of each query count.

        Returns
        -------
        Metric

        Examples
        --------
        >>> import boosters as bst
        >>> bst.Metric.ndcg(5)
        Metric.ndcg(5)
        >>> bst.Metric.ndcg(5).label
        'ndcg@5'
        """
        return Metric("ndcg", k)

    @staticmethod
    def map(k: int = 10) -> "Metric":
        """Mean average precision at k over the query groups, as LightGBM's ``map``.

        A row is relevant when its label is > 0.5. A query's AP@k sums precision@i over
        the positions i <= k holding a relevant row, divided by min(k, relevant rows of
        the query); a query with no relevant row counts as 1. Needs query groups.

        Parameters
        ----------
        k : int, default 10
            How many top positions of each query count.

        Returns
        -------
        Metric

        Examples
        --------
        >>> import boosters as bst
        >>> bst.Metric.map(3)
        Metric.map(3)
        """
        return Metric("map", k)

    @staticmethod
    def poisson_deviance() -> "Metric":
        """Mean Poisson deviance 2 (y log(y / mu) - (y - mu)) (0 log 0 = 0), mu = exp(margin),
        as scikit-learn's ``mean_poisson_deviance``; weighted when weights are given.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.poisson_deviance(), bst.Metric.poisson_deviance().higher_is_better
        (Metric.poisson_deviance(), False)
        """
        return Metric("poisson_deviance")

    @staticmethod
    def gamma_deviance() -> "Metric":
        """Mean gamma deviance 2 (log(mu / y) + y / mu - 1), mu = exp(margin), y > 0, as
        scikit-learn's ``mean_gamma_deviance``; weighted when weights are given.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.default_for(bst.Objective.gamma())
        Metric.gamma_deviance()
        """
        return Metric("gamma_deviance")

    @staticmethod
    def tweedie_deviance(variance_power: float = 1.5) -> "Metric":
        """Mean Tweedie deviance with power p, mu = exp(margin):
        2 (y^(2-p) / ((1-p)(2-p)) - y mu^(1-p) / (1-p) + mu^(2-p) / (2-p)),
        as scikit-learn's ``mean_tweedie_deviance(power=p)``; weighted when weights are given.

        Parameters
        ----------
        variance_power : float, default 1.5
            p, in (1, 2).

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.tweedie_deviance(1.3).label
        'tweedie_deviance@1.3'
        """
        return Metric("tweedie_deviance", variance_power=variance_power)

    @staticmethod
    def mape() -> "Metric":
        """Mean absolute percentage error ``|y - f| / max(1, |y|)``, as LightGBM's ``mape`` (the
        floor 1 keeps labels near 0 finite; scikit-learn's uses a tiny floor instead);
        weighted when weights are given. A fraction, not a percentage.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.mape(), bst.Metric.mape().higher_is_better
        (Metric.mape(), False)
        """
        return Metric("mape")

    @staticmethod
    def pinball(alpha=0.5) -> "Metric":
        """Mean pinball loss at quantile level alpha: alpha (y - f) where y >= f, (1 - alpha)
        (f - y) elsewhere, as scikit-learn's ``mean_pinball_loss`` and LightGBM's
        ``quantile`` metric; weighted when weights are given.

        With several levels it scores a multi-quantile model (`Objective.pinball` with as
        many levels): the mean over the levels of each level's mean pinball loss, on the
        model's predictions (each row's quantiles sorted, as `GBDTModel.predict` gives them).

        Parameters
        ----------
        alpha : float or list of float, default 0.5
            The quantile level in (0, 1), or a strictly increasing list of them.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.pinball(0.9).label, bst.Metric.pinball([0.1, 0.9]).label
        ('pinball@0.9', 'pinball@0.1,0.9')
        """
        return Metric("pinball", alpha=alpha)

    @staticmethod
    def huber(delta: float = 1.0) -> "Metric":
        """Mean Huber loss: ``r^2 / 2`` for ``|r| <= delta``, ``delta (|r| - delta / 2)`` beyond, r = f - y,
        as LightGBM's ``huber`` metric; weighted when weights are given.

        Parameters
        ----------
        delta : float, default 1.0
            Where the loss turns from squared to linear, > 0.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.huber(0.5).label
        'huber@0.5'
        """
        return Metric("huber", delta=delta)

    @staticmethod
    def margin_accuracy(threshold: float = 0.0) -> "Metric":
        """Share of rows whose class (1 where the margin is > `threshold`, else 0) is the
        label, for logistic and hinge models: XGBoost's ``error@t`` turned into an accuracy,
        on margins instead of probabilities.

        For a logistic model, ``threshold`` t on the margin is the probability threshold
        sigmoid(t): ``margin_accuracy(0.0)`` is `Metric.accuracy` and 1 - XGBoost's ``error``;
        ``margin_accuracy(log(p / (1 - p)))`` is 1 - its ``error@p``. A probability label y
        counts y right when the class is 1 and 1 - y when it is 0 (as XGBoost).
        Weighted when weights are given.

        Parameters
        ----------
        threshold : float, default 0.0
            The margin above which a row is classed 1.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.margin_accuracy(0.5), bst.Metric.margin_accuracy(0.5).label
        (Metric.margin_accuracy(0.5), 'margin_accuracy@0.5')
        >>> bst.Metric("margin_accuracy@-1.0") == bst.Metric.margin_accuracy(-1.0)
        True
        """
        return Metric("margin_accuracy", threshold=threshold)

    @staticmethod
    def one_vs_rest_logloss() -> "Metric":
        """The loss a one-vs-rest model minimises: the sum over the classes k of the binary
        log loss of output k against the label [y == k], averaged over the rows (weighted
        when weights are given); the default metric of `Objective.one_vs_rest`.

        LightGBM's ``multi_logloss`` on a ``multiclassova`` model is -log sigmoid(margin of
        the label's class) instead, which ignores the other classes' outputs.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.default_for(bst.Objective.one_vs_rest(3))
        Metric.one_vs_rest_logloss()
        """
        return Metric("one_vs_rest_logloss")

    @property
    def label(self) -> str:
        """The metric's name with its cut-off, as LightGBM writes it ("ndcg@10"; else the name);
        the Tweedie deviance's with its power ("tweedie_deviance@1.5")."""
        parameter = next(iter(metric_fn(self).parameters), None)  # at most one
        return self.name if parameter is None else f"{self.name}@{label_text(getattr(self, parameter.name))}"

    @property
    def needs_groups(self) -> bool:
        """The metric scores the rows of each query group (the Dataset must have groups)."""
        return metric_fn(self).needs_groups

    @property
    def higher_is_better(self) -> bool:
        """True for AUC, accuracies, NDCG and MAP; False for losses (what early stopping maximises)."""
        return metric_fn(self).higher_is_better

    def supports(self, objective: Objective) -> bool:
        """Whether this metric can score a model trained for `objective`.

        Parameters
        ----------
        objective : Objective
            The training objective.

        Returns
        -------
        bool

        Examples
        --------
        >>> bst.Metric.auc().supports(bst.Objective.logistic())
        True
        >>> bst.Metric.auc().supports(bst.Objective.squared())
        False
        """
        objective_def, metric_def = objective_fn(objective), metric_fn(self)
        if objective_def.any_metric:  # margins of the user's loss: any metric may read them
            return True
        if objective.n_targets is not None and not metric_def.per_target:
            return False  # multi-target regression: per-target regression metrics only
        if objective_def.only_default_metric(objective):  # a multi-quantile model: its levels only
            return self == Metric.default_for(objective)
        return metric_def.supports(self, objective)

    @staticmethod
    def default_for(objective: Objective) -> "Metric":
        """The metric used when `GBDTConfig.metric` is None: RMSE, log loss,
        multiclass log loss, the objective's deviance for the log-link regressions (the
        Tweedie deviance with the objective's power), or NDCG@k for ranking; accuracy
        for hinge and the one-vs-rest log loss for one_vs_rest.

        Parameters
        ----------
        objective : Objective
            The training objective.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.default_for(bst.Objective.softmax(3))
        Metric.multiclass_logloss()
        """
        default = objective_fn(objective).default_metric(objective)
        if default is None:
            raise ValueError("a custom objective has no default metric: pass GBDTConfig(metric=...)")
        name, parameters = default
        return Metric(name, **parameters)

    def _key(self):
        return self.name, self.k, self.variance_power, self.alpha, self.delta, self.threshold

    def __eq__(self, other):
        return isinstance(other, Metric) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Metric.{self.name}({', '.join(argument_texts(metric_fn(self).parameters, self))})"


def _parse_label(label: str, given: dict) -> tuple[str, dict]:
    """The metric's name and keywords from a label, as model files write them ("ndcg@10",
    "pinball@0.1,0.9", "huber@1.0", "tweedie_deviance@1.5", "margin_accuracy@0.5"): the text
    after the "@" is the value of the metric's parameter, which wins over the keyword given
    (pinball's levels, huber's delta: label_wins) or only fills an absent one. Any other
    label is read as name@k (as LightGBM names its ranking metrics), so that "rmse@3" is
    refused as k given to rmse, and with k given it stays an unknown name."""
    name, _, text = label.partition("@")
    found = metric_named(name)
    parameter = next(iter(found[0].parameters), None) if found else None
    if parameter is not None and (parameter.label_wins or given[parameter.name] is None):
        assert parameter.from_label is not None  # every metric parameter reads a label
        return name, {**given, parameter.name: parameter.from_label(name, text)}
    if given["k"] is None:
        assert K.from_label is not None
        return name, {**given, "k": K.from_label(name, text)}
    return label, given
