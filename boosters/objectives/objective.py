"""The public values `Objective` and `CustomObjective` (re-exported by boosters.config and
boosters): what a training optimises, checked when made, compared, hashed and saved with a
model. The definitions (boosters.objectives.registry) say what each objective does."""

from __future__ import annotations

import copy
import numbers

from boosters._lib.checks import require_float, require_int
from boosters.objectives.base import _SetOnce
from boosters.objectives.parameters import argument_texts
from boosters.objectives.registry import (OBJECTIVES, REFUSED_OBJECTIVES, checked, name_hint, objective_fn,
                                          objective_named, objective_names_known)


# the order Objective's refusal of an unknown name lists the names in (as its docstring and the
# model schema's enum do: the order they were added); the registry holds their definitions
_LISTED = ("squared", "logistic", "softmax", "lambdarank", "pairwise", "poisson", "gamma", "tweedie", "custom",
           "absolute", "huber", "pinball", "hinge", "one_vs_rest")
# the order in which the parameters are checked: a first bad one is the one reported
_CHECK_ORDER = ("n_targets", "variance_power", "ndcg_at", "n_classes", "alpha", "delta")


class Objective(_SetOnce):
    """The loss being minimised: `Objective.squared()`, `.logistic()`, `.softmax(n_classes)`,
    `.hinge()`, `.one_vs_rest(n_classes)`,
    the log-link regressions `.poisson()`, `.gamma()`, `.tweedie(variance_power)`, and for
    ranking within query groups `.lambdarank(ndcg_at)`, `.pairwise()`, and the robust
    regressions `.absolute()`, `.huber(delta)`, `.pinball(alpha)`.

    Make one with the static methods; the constructor takes the name.

    Parameters
    ----------
    name : {"squared", "logistic", "softmax", "lambdarank", "pairwise", "poisson", "gamma", "tweedie", \
"absolute", "huber", "pinball", "hinge", "one_vs_rest"}
        The loss.
    n_classes : int, optional
        The number of classes (>= 2), for softmax and one_vs_rest only.
    ndcg_at : int, optional
        The NDCG truncation, for lambdarank only (default 10).
    variance_power : float, optional
        The Tweedie variance power in (1, 2), for tweedie only (default 1.5).
    n_targets : int, optional
        Multi-target regression (squared, absolute, huber): the number of columns of
        ``y``, one tree group each. None takes it from ``y`` at training (a 2-D ``y`` of
        k >= 2 columns gives k); 1 is the same as None with a 1-D ``y``.
    alpha : float or list of float, optional
        The quantile level(s) in (0, 1), for pinball only (default 0.5).
    delta : float, optional
        The Huber threshold (> 0), for huber only (default 1.0).

    Examples
    --------
    >>> bst.Objective.softmax(3)
    Objective.softmax(3)
    >>> bst.Objective.softmax(3).n_outputs, bst.Objective.logistic().n_outputs
    (3, 1)
    >>> bst.Objective("logistic") == bst.Objective.logistic()
    True
    """

    __slots__ = ("name", "n_classes", "ndcg_at", "variance_power", "n_targets", "alpha", "delta")
    name: str
    n_classes: int | None  # each parameter: None for the objectives that do not take it
    ndcg_at: int | None
    variance_power: float | None
    n_targets: int | None
    alpha: float | tuple[float, ...] | None  # pinball: a level, or several (one output each)
    delta: float | None

    def __init__(self, name: str, n_classes: int | None = None, ndcg_at: int | None = None,
                 variance_power: float | None = None, alpha=None, delta: float | None = None,
                 n_targets: int | None = None):
        found = objective_named(name)
        if found is None:
            raise ValueError(f"objective must be one of {', '.join(map(repr, _LISTED))}, got {name!r}"
                             f"{name_hint(name, objective_names_known(), REFUSED_OBJECTIVES)}")
        fn, defaults = found
        if fn.takes_function and not isinstance(self, CustomObjective):
            raise ValueError(f"objective {fn.name!r} needs its function: use Objective.custom(function)")
        given = {"n_classes": n_classes, "ndcg_at": ndcg_at, "variance_power": variance_power, "alpha": alpha,
                 "delta": delta, "n_targets": n_targets}
        for key in _CHECK_ORDER:  # each parameter the definition takes: the value given, else its default
            value = defaults.get(key) if given[key] is None else given[key]
            setattr(self, key, checked(fn, key, value, OBJECTIVES))
        self.name = fn.name  # an alias saves and compares as its objective

    @staticmethod
    def squared(n_targets: int | None = None) -> "Objective":
        """Squared error regression; starts from the (weighted) mean label.

        A 2-D ``y`` of shape (n_rows, k) trains k tree groups in one model (multi-target
        regression), one per column: output j's trees fit column j alone, from its own
        mean, so they are the trees of a model trained on that column (row weights apply
        to every column). Predictions are then (n_rows, k); the default metric is the mean
        over the columns of each column's RMSE.

        Parameters
        ----------
        n_targets : int, optional
            The number of columns of ``y``; None takes it from ``y`` at training (a
            mismatch is a ValueError).

        Returns
        -------
        Objective

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(100, 2))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, 3 * X[:, 0]),
        ...                             bst.GBDTConfig(n_estimators=5, objective=bst.Objective.squared()))
        >>> model.objective
        Objective.squared()

        Two targets, two tree groups:

        >>> Y = np.column_stack([3 * X[:, 0], X[:, 1] ** 2])
        >>> model = bst.GBDTModel.train(bst.Dataset(X, Y), bst.GBDTConfig(n_estimators=5))
        >>> model.objective, model.n_trees, model.predict(X[:3]).shape
        (Objective.squared(n_targets=2), 10, (3, 2))
        """
        return Objective("squared", n_targets=n_targets)

    @staticmethod
    def logistic() -> "Objective":
        """Binary classification with labels 0/1, or probability labels in [0, 1]; starts
        from the log-odds of the (weighted) mean label.

        The loss is the cross-entropy -y log(p) - (1 - y) log(1 - p), p = sigmoid(margin),
        for hard and soft labels alike (LightGBM's ``binary`` for 0/1 labels and
        ``cross_entropy`` for probabilities; XGBoost's ``binary:logistic`` /
        ``reg:logistic``). `GBDTModel.predict` gives P(y=1), `GBDTModel.predict_raw` the
        log-odds. With probability labels, `Metric.accuracy` counts a row y right when the
        margin is > 0 and 1 - y otherwise, and `Metric.auc` counts it as weight y positive
        and 1 - y negative (as XGBoost's ``error`` and ``auc``).

        Returns
        -------
        Objective

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> y = (X[:, 0] > 0).astype(float)
        >>> model = bst.GBDTModel.train(
        ...     bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, objective=bst.Objective.logistic()))
        >>> model.predict(np.array([[2.0, 0.0], [-2.0, 0.0]])).round(2)
        array([0.58, 0.36])
        """
        return Objective("logistic")

    @staticmethod
    def softmax(n_classes: int) -> "Objective":
        """Multiclass classification with labels 0..n_classes-1, one tree per class per round.

        Parameters
        ----------
        n_classes : int
            The number of classes, >= 2.

        Returns
        -------
        Objective

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(300, 2))
        >>> y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)  # classes 0, 1, 2
        >>> config = bst.GBDTConfig(n_estimators=5, objective=bst.Objective.softmax(3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y), config)
        >>> model.n_trees, model.predict(X[:2]).shape
        (15, (2, 3))
        """
        return Objective("softmax", n_classes)

    @staticmethod
    def lambdarank(ndcg_at: int = 10) -> "Objective":
        """Learning to rank: LambdaRank optimising NDCG@`ndcg_at`, as LightGBM's `lambdarank`.

        Needs query groups (``Dataset(..., group=sizes)`` or ``qid=ids``) and integer
        relevance labels 0..30 (gain 2^label - 1). Each pair of rows of a query with
        different labels, one of them among the top `ndcg_at` by the current scores,
        pushes the better one up by sigmoid(score gap) times the NDCG change of swapping
        them (normalised by the query's ideal DCG and by the score gap, as LightGBM's
        ``lambdarank_norm``). Starts from margin 0; predictions are the raw scores.

        Parameters
        ----------
        ndcg_at : int, default 10
            Truncation: only pairs with a row among the current top `ndcg_at` count
            (LightGBM's ``lambdarank_truncation_level``).

        Returns
        -------
        Objective

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> def queries(n_queries):  # 20 rows per query, relevance 0..3 grows with column 0
        ...     X = rng.normal(size=(20 * n_queries, 3))
        ...     return bst.Dataset(X, np.clip(np.round(X[:, 0] + 1), 0, 3), group=[20] * n_queries)
        >>> config = bst.GBDTConfig(objective=bst.Objective.lambdarank(ndcg_at=5), n_estimators=10)
        >>> model = bst.GBDTModel.train(queries(10), config, val_set=queries(10))
        >>> config.resolved_metric, bool(model.eval_history[-1] > 0.9)  # validation NDCG@5
        (Metric.ndcg(5), True)
        >>> high, low = model.predict(np.array([[2.0, 0.0, 0.0], [-2.0, 0.0, 0.0]]))
        >>> bool(high > low)  # the row with the larger column 0 ranks higher
        True
        """
        return Objective("lambdarank", ndcg_at=ndcg_at)

    @staticmethod
    def pairwise() -> "Objective":
        """Learning to rank with the pairwise logistic loss (RankNet), over every pair of
        rows of a query with different labels.

        Each such pair (i more relevant than j) adds log(1 + exp(-(s_i - s_j))) to the
        loss: unlike lambdarank, all pairs weigh the same, wherever they are ranked. Needs
        query groups; labels are any numbers (only their order within a query matters).
        Starts from margin 0; predictions are the raw scores. The validation metric
        defaults to NDCG@10.

        Returns
        -------
        Objective

        Examples
        --------
        >>> import numpy as np
        >>> import boosters as bst
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(100, 2))
        >>> data = bst.Dataset(X, (X[:, 0] > 0).astype(float), group=[10] * 10)
        >>> config = bst.GBDTConfig(objective=bst.Objective.pairwise(), n_estimators=5)
        >>> scores = bst.GBDTModel.train(data, config).predict(X)
        >>> bool(scores[X[:, 0] > 0].mean() > scores[X[:, 0] <= 0].mean())
        True
        """
        return Objective("pairwise")

    @staticmethod
    def poisson() -> "Objective":
        """Poisson regression of counts y >= 0 (not all 0) with a log link, as LightGBM's
        ``poisson`` (XGBoost's ``count:poisson``).

        Margins are log-means and `GBDTModel.predict` gives exp(margin). The loss is
        exp(f) - y f; the hessian is taken at f + 0.7 (LightGBM's ``poisson_max_delta_step``),
        which damps the steps of leaves whose rows are all 0. Starts from log of the
        (weighted) mean label. The validation metric defaults to the Poisson deviance.

        Returns
        -------
        Objective

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(500, 2))
        >>> y = rng.poisson(np.exp(1 + X[:, 0])).astype(float)
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y),
        ...                             bst.GBDTConfig(n_estimators=50, objective=bst.Objective.poisson()))
        >>> low, high = model.predict(np.array([[-1.0, 0.0], [1.0, 0.0]]))
        >>> bool(0 < low < 2 < 5 < high)  # near exp(0) = 1 and exp(2) = 7.4
        True
        """
        return Objective("poisson")

    @staticmethod
    def gamma() -> "Objective":
        """Gamma regression of positive y with a log link, as LightGBM's ``gamma``
        (XGBoost's ``reg:gamma``).

        Margins are log-means and `GBDTModel.predict` gives exp(margin). The loss is
        y exp(-f) + f (the gamma negative log-likelihood up to constants). Starts from log
        of the (weighted) mean label. The validation metric defaults to the gamma deviance.

        Returns
        -------
        Objective

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(500, 2))
        >>> y = rng.gamma(2.0, np.exp(X[:, 0]) / 2.0)  # mean exp(x0)
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y),
        ...                             bst.GBDTConfig(n_estimators=50, objective=bst.Objective.gamma()))
        >>> low, high = model.predict(np.array([[-1.0, 0.0], [1.0, 0.0]]))
        >>> bool(low < 1 < high)  # near exp(-1) = 0.37 and exp(1) = 2.7
        True
        """
        return Objective("gamma")

    @staticmethod
    def tweedie(variance_power: float = 1.5) -> "Objective":
        """Tweedie regression of y >= 0 (not all 0; typically many zeros and a skewed
        positive tail) with a log link, as LightGBM's ``tweedie`` (XGBoost's ``reg:tweedie``).

        Margins are log-means and `GBDTModel.predict` gives exp(margin). With p the
        variance power, the loss is exp((2-p) f)/(2-p) - y exp((1-p) f)/(1-p). Starts
        from log of the (weighted) mean label. The validation metric defaults to the
        Tweedie deviance with the same power.

        Parameters
        ----------
        variance_power : float, default 1.5
            p in (1, 2): near 1 Poisson-like, near 2 gamma-like (LightGBM's
            ``tweedie_variance_power``).

        Returns
        -------
        Objective

        Examples
        --------
        >>> bst.Objective.tweedie(1.2)
        Objective.tweedie(1.2)
        >>> bst.Metric.default_for(bst.Objective.tweedie(1.2))
        Metric.tweedie_deviance(1.2)
        """
        return Objective("tweedie", variance_power=variance_power)

    @staticmethod
    def custom(function, n_outputs: int = 1, base_score=0.0) -> "CustomObjective":
        """Your own loss: ``function(margins, dataset) -> (grad, hess)``, vectorised over rows.

        Every round the trainer calls `function` with the training margins (read-only
        float64: ``(n_rows,)`` for one output, ``(n_rows, n_outputs)`` for several) and the
        training `Dataset` (its ``y``, ``weights``, ``group_boundaries``, ``init_score``),
        and grows the round's trees from the first and second derivatives of the loss in
        each margin that it returns: two arrays of the margins' shape, float32 or float64,
        finite. Sample weights are not applied for you (as in LightGBM and XGBoost):
        multiply them into ``grad`` and ``hess`` yourself. The returned arrays are
        converted once into the float32 gradient buffer the tree grower reads.

        A model trained with it predicts raw margins (`GBDTModel.predict` equals
        `predict_raw`, as LightGBM's custom objectives); its file records the objective
        as "custom" with its number of outputs, not the function (a loaded model predicts
        but cannot be trained again). It has no default metric: give
        ``GBDTConfig(metric=...)`` to score a validation set (built-in metrics read the
        margins as for their own objectives: log-odds for ``logloss`` and ``auc``).

        Parameters
        ----------
        function : callable
            ``(margins, dataset) -> (grad, hess)``.
        n_outputs : int, default 1
            Margins per row (one tree per output per round).
        base_score : float or sequence of float, default 0.0
            The start margin of every row (one per output, or one for all), as XGBoost's
            ``base_score``; not used with a training ``init_score``.

        Returns
        -------
        CustomObjective

        Examples
        --------
        Squared error written by hand gives the same trees as the built-in objective
        (started from the same mean):

        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(200, 3))
        >>> y = X[:, 0] + 0.1 * rng.normal(size=200)
        >>> def squared_error(margins, dataset):
        ...     return margins - dataset.y, np.ones_like(margins)
        >>> mine = bst.Objective.custom(squared_error, base_score=y.mean())
        >>> a = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, objective=mine))
        >>> b = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5))
        >>> bool(np.array_equal(a.predict(X), b.predict(X)))
        True
        """
        return CustomObjective(function, n_outputs, base_score)

    @staticmethod
    def absolute() -> "Objective":
        """Absolute error (L1) regression, as LightGBM's ``l1`` (XGBoost's ``reg:absoluteerror``).

        The gradient is sign(margin - y) and the hessian 1; once a tree's structure is
        found, each leaf's value is renewed to the (weighted) median of its rows' residuals
        y - margin, times the learning rate (LightGBM's and XGBoost's leaf renewal; with
        row sampling, over the sampled rows). Starts from the (weighted) median label. The
        median is the linear-interpolation one of `numpy.quantile`, as LightGBM's; with
        weights, its weighted generalisation (see `Objective.pinball`). The validation
        metric defaults to MAE.

        Returns
        -------
        Objective

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(1000, 2))
        >>> y = 2 * X[:, 0] + rng.standard_cauchy(1000)  # heavy-tailed noise
        >>> config = bst.GBDTConfig(n_estimators=50, learning_rate=0.1, max_depth=3,
        ...                         objective=bst.Objective.absolute())
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y), config)
        >>> model.predict(np.array([[-1.0, 0.0], [1.0, 0.0]])).round(1)  # median -2 and 2, despite outliers
        array([-1.7,  2.2])
        """
        return Objective("absolute")

    @staticmethod
    def huber(delta: float = 1.0) -> "Objective":
        """Huber regression, as LightGBM's ``huber`` (its ``alpha`` is our `delta`).

        The loss is ``r^2 / 2`` for ``|r| <= delta`` and ``delta (|r| - delta / 2)`` beyond, r = margin - y:
        the gradient is r clipped to [-delta, delta], the hessian 1 (LightGBM's). Starts from
        the (weighted) mean label, as LightGBM. The validation metric defaults to the mean
        Huber loss with the same delta (`Metric.huber`).

        Parameters
        ----------
        delta : float, default 1.0
            Where the loss turns from squared to linear, > 0 (in units of y).

        Returns
        -------
        Objective

        Examples
        --------
        >>> bst.Objective.huber(2.0), bst.Metric.default_for(bst.Objective.huber(2.0))
        (Objective.huber(2.0), Metric.huber(2.0))
        """
        return Objective("huber", delta=delta)

    @staticmethod
    def pinball(alpha=0.5) -> "Objective":
        """Quantile regression with the pinball loss, as LightGBM's ``quantile`` (XGBoost's
        ``reg:quantileerror``); several quantile levels give one model with one output
        (tree group) per level.

        For level a the loss is a (y - f) for y >= f and (1 - a) (f - y) below: the gradient
        is 1 - a where f >= y, -a elsewhere, the hessian 1 (LightGBM's). Once a tree's
        structure is found, each leaf's value is renewed to the (weighted) a-quantile of its
        rows' residuals y - margin, times the learning rate (with row sampling, over the
        sampled rows). Output k starts from the (weighted) a_k-quantile of the labels.

        The quantile of n values sorted ascending is NumPy's default (linear interpolation
        at position a (n - 1), as LightGBM's). With weights, each row sits at the middle of
        its weight's share of the cumulative weight, the positions rescaled so that the
        smallest value is quantile 0 and the largest quantile 1, and the quantile is
        interpolated linearly between them (rows of weight 0 do not count): equal weights
        give the unweighted quantile.

        Quantiles do not cross: with several levels, `GBDTModel.predict` sorts each row's
        predictions (the monotone rearrangement of Chernozhukov, Fernandez-Val and Galichon,
        2010: per row it never increases the distance, in any L^p norm over the levels, to
        non-crossing true quantiles);
        `predict_raw` gives the margins as fitted. The validation metric defaults to the
        mean pinball loss at the same levels (`Metric.pinball`).

        Parameters
        ----------
        alpha : float or list of float, default 0.5
            The quantile level in (0, 1), or a strictly increasing list of levels (output k
            is level alpha[k]; a one-level list is the same as the float).

        Returns
        -------
        Objective

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(2000, 1))
        >>> y = X[:, 0] + rng.normal(size=2000)  # N(x, 1): quantiles x - 1.28, x, x + 1.28
        >>> config = bst.GBDTConfig(n_estimators=50, learning_rate=0.1, max_depth=2,
        ...                         objective=bst.Objective.pinball([0.1, 0.5, 0.9]))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y), config)
        >>> model.predict(np.array([[0.5]])).round(1)  # about 0.5 - 1.28, 0.5, 0.5 + 1.28
        array([[-0.8,  0.4,  1.9]])
        """
        return Objective("pinball", alpha=alpha)

    @staticmethod
    def hinge() -> "Objective":
        """Binary classification with the hinge loss max(0, 1 - s f), s = 2y - 1, labels
        0/1, as XGBoost's ``binary:hinge``.

        Gradients as XGBoost's: where s f < 1, g = -s w and h = w; elsewhere g = 0 and
        h = 1.2e-38 w (float32's smallest normal number; XGBoost's is not weighted): a
        leaf of such rows keeps its margin. Starts, as XGBoost (>= 2.0), from margin 1.0
        when the weighted mean of 2y - 1 is > 0, else 0.0 (its base_score: the Newton step
        from 0 turned into a class). `GBDTModel.predict` gives the class, 1.0 where the
        margin is > 0 and 0.0 elsewhere (as XGBoost: no probabilities);
        `GBDTModel.predict_raw` the margins. The validation metric defaults to
        `Metric.accuracy` (XGBoost's default is its complement, ``error``).

        Returns
        -------
        Objective

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> y = (X[:, 0] > 0).astype(float)
        >>> model = bst.GBDTModel.train(
        ...     bst.Dataset(X, y), bst.GBDTConfig(n_estimators=5, objective=bst.Objective.hinge()))
        >>> model.predict(np.array([[2.0, 0.0], [-2.0, 0.0]]))
        array([1., 0.])
        """
        return Objective("hinge")

    @staticmethod
    def one_vs_rest(n_classes: int) -> "Objective":
        """Multiclass classification as `n_classes` independent binary logistic problems
        (class k against the rest), one tree per class per round, as LightGBM's
        ``multiclassova``.

        Labels are 0..n_classes-1; output k is trained with the logistic loss on the label
        [y == k] and starts from the log-odds of class k's (weighted) share. `GBDTModel.predict`
        gives each class's sigmoid(margin), shape (n_rows, n_classes): the rows are NOT
        normalised to sum to 1 (as LightGBM). The validation metric defaults to
        `Metric.one_vs_rest_logloss`, the loss being minimised.

        Parameters
        ----------
        n_classes : int
            The number of classes, >= 2.

        Returns
        -------
        Objective

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(300, 2))
        >>> y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)  # classes 0, 1, 2
        >>> config = bst.GBDTConfig(n_estimators=5, objective=bst.Objective.one_vs_rest(3))
        >>> model = bst.GBDTModel.train(bst.Dataset(X, y), config)
        >>> probabilities = model.predict(np.array([[-2.0, 0.0], [2.0, 0.0]]))
        >>> probabilities.shape, probabilities.argmax(axis=1)
        ((2, 3), array([0, 2]))
        """
        return Objective("one_vs_rest", n_classes)

    @property
    def n_outputs(self) -> int:
        """The number of margins per row: n_classes for softmax and one_vs_rest, n_targets
        for multi-target regression, the number of quantile levels for pinball, else 1."""
        return objective_fn(self).outputs(self)

    def _with_targets(self, n_targets: int | None) -> "Objective":
        """This objective with `n_targets` targets (the trainer's, from y's columns)."""
        out = copy.copy(self)
        object.__setattr__(out, "n_targets", checked(objective_fn(self), "n_targets", n_targets, OBJECTIVES))  # new
        return out

    @property
    def needs_groups(self) -> bool:
        """The objective ranks rows within query groups (the Dataset must have groups)."""
        return objective_fn(self).needs_groups

    def _key(self):
        return self.name, self.n_classes, self.ndcg_at, self.variance_power, self.n_targets, self.alpha, self.delta

    def __eq__(self, other):
        return isinstance(other, Objective) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Objective.{self.name}({', '.join(argument_texts(objective_fn(self).parameters, self))})"


class CustomObjective(Objective):
    """An objective of your own (made by `Objective.custom`): its gradient function, its
    number of outputs and start margins. `function` is None for a model loaded from a
    file (it predicts; it cannot train)."""

    __slots__ = ("function", "custom_outputs", "base_score")

    def __init__(self, function, n_outputs: int = 1, base_score=0.0):
        super().__init__("custom")
        if function is not None and not callable(function):
            raise TypeError(f"objective: a custom objective is a callable (margins, dataset) -> (grad, hess), "
                            f"got {type(function).__name__} {function!r}")
        self.function = function
        self.custom_outputs = require_int("n_outputs", n_outputs, 1)
        if isinstance(base_score, numbers.Real) and not isinstance(base_score, bool):
            base_score = [base_score] * self.custom_outputs
        if isinstance(base_score, (str, bytes)) or not hasattr(base_score, "__len__") \
                or len(base_score) != self.custom_outputs:
            raise ValueError(f"base_score must be a number or {self.custom_outputs} numbers (one per output), "
                             f"got {base_score!r}")
        self.base_score = tuple(require_float("base_score", b, -float("inf")) for b in base_score)

    def _key(self):
        return (*super()._key(), self.function, self.custom_outputs, self.base_score)

    def __repr__(self):
        name = getattr(self.function, "__name__", repr(self.function))
        return f"Objective.custom({name}, n_outputs={self.custom_outputs}, base_score={self.base_score})"
