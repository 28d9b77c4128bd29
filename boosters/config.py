"""Public configuration: GBDTConfig, Objective, Metric, GrowthStrategy.

Every value is checked when the config is made; a bad one raises ValueError (or
TypeError for a wrong type) naming the parameter and what was expected.
"""

from __future__ import annotations

import copy
import difflib
import enum
import math
import numbers

from boosters._lib.checks import require_float, require_int
from boosters.data.binning import MAX_BINS_LIMIT


class GrowthStrategy(enum.Enum):
    """How a tree grows: level by level (XGBoost) or best leaf first (LightGBM).

    ``Depthwise`` splits every leaf of a level before the next level, up to
    ``max_depth`` (XGBoost's ``grow_policy="depthwise"``). ``Leafwise`` always splits the
    leaf of largest gain, up to ``n_leaves`` leaves (LightGBM; XGBoost's
    ``"lossguide"``). `GBDTConfig` also takes the names ``"depthwise"`` and
    ``"leafwise"``.

    Examples
    --------
    >>> bst.GrowthStrategy("leafwise")
    <GrowthStrategy.Leafwise: 'leafwise'>
    >>> bst.GBDTConfig(growth_strategy="leafwise").max_depth is None  # no depth limit
    True
    """

    Depthwise = "depthwise"
    Leafwise = "leafwise"


_OBJECTIVE_NAMES = ("squared", "logistic", "softmax", "lambdarank", "pairwise", "poisson", "gamma", "tweedie")
_OBJECTIVE_NAMES += ("custom",)  # Objective.custom(function): the user's gradients (CustomObjective)
_OBJECTIVE_NAMES += ("absolute", "huber", "pinball")
_OBJECTIVE_NAMES += ("hinge", "one_vs_rest")
_MULTICLASS = ("softmax", "one_vs_rest")  # one output (tree group) per class; n_classes is set
_LOG_LINK = ("poisson", "gamma", "tweedie")  # margins are log-means; predictions exp(margin)
# multi-target regression: a y of k columns trains one tree group per column (absolute and
# huber: once they exist; a name not in _OBJECTIVE_NAMES is refused before this is read)
_MULTI_TARGET = ("squared", "absolute", "huber")
_PER_TARGET_METRICS = ("rmse", "mae", "huber", "mape")  # a multi-target model's score: the mean over its targets


def _require_variance_power(value) -> float:
    """Tweedie's variance power: a float strictly between 1 and 2 (the compound Poisson-gamma range)."""
    value = require_float("variance_power", value, 1.0, strictly_above=True)
    if value >= 2.0:
        raise ValueError(f"variance_power must be < 2 (use Objective.gamma() for 2), got {value}")
    return value


def _require_n_targets(name: str, value) -> int | None:
    """None (one target, or as many as y has columns) or an int >= 1 (1 is stored as None:
    the single-target objective), for the multi-target objectives only."""
    if value is None:
        return None
    if name not in _MULTI_TARGET:
        raise ValueError(f"n_targets only applies to {', '.join(n for n in _MULTI_TARGET if n in _OBJECTIVE_NAMES)}, "
                         f"not {name}")
    value = require_int("n_targets", value, 1)
    return None if value == 1 else value
def _require_alpha(value) -> float | tuple:
    """Pinball's quantile level: a float in (0, 1), or a strictly increasing list of them (one
    output per level; a one-level list is the float)."""
    if isinstance(value, (list, tuple)) or getattr(value, "ndim", 0) == 1:  # a list, tuple or 1-D array
        levels = tuple(_require_alpha(a) for a in value)
        if not levels:
            raise ValueError("alpha: a list of quantile levels must not be empty")
        if any(a >= b for a, b in zip(levels, levels[1:])):
            raise ValueError(f"alpha: a list of quantile levels must be strictly increasing, got {list(levels)}")
        return levels[0] if len(levels) == 1 else levels
    value = require_float("alpha", value, 0.0, strictly_above=True)
    if value >= 1.0:
        raise ValueError(f"alpha must be < 1 (a quantile level in (0, 1)), got {value}")
    return value


class _SetOnce:
    """Objectives and metrics are values (compared, hashed, saved with a model): each
    attribute is set once, when the object is made, and never rebound afterwards, so a
    changed one is a new object that its constructor has checked."""

    __slots__ = ()

    def __setattr__(self, name, value):
        if hasattr(self, name):
            raise AttributeError(f"{type(self).__name__} is immutable: make a new one (for example "
                                 f"Objective.huber(delta=2.0)) rather than setting {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable: {name!r} cannot be deleted")


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

    def __init__(self, name: str, n_classes: int | None = None, ndcg_at: int | None = None,
                 variance_power: float | None = None, alpha=None, delta: float | None = None,
                 n_targets: int | None = None):
        if name == "custom" and not isinstance(self, CustomObjective):
            raise ValueError("objective 'custom' needs its function: use Objective.custom(function)")
        if name not in _OBJECTIVE_NAMES:
            raise ValueError(f"objective must be one of {', '.join(map(repr, _OBJECTIVE_NAMES))}, got {name!r}")
        self.n_targets = _require_n_targets(name, n_targets)
        if name == "tweedie":
            variance_power = _require_variance_power(1.5 if variance_power is None else variance_power)
        elif variance_power is not None:
            raise ValueError(f"variance_power only applies to tweedie, not {name}")
        self.variance_power = variance_power
        if name == "lambdarank":
            ndcg_at = require_int("ndcg_at", 10 if ndcg_at is None else ndcg_at, 1)
        elif ndcg_at is not None:
            raise ValueError(f"ndcg_at only applies to lambdarank, not {name}")
        self.ndcg_at = ndcg_at
        if name in _MULTICLASS:
            if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral):
                raise TypeError(f"n_classes must be an int >= 2, got {type(n_classes).__name__} {n_classes!r}")
            if n_classes < 2:
                raise ValueError(f"n_classes must be >= 2 for {name}, got {n_classes}")
            n_classes = int(n_classes)
        elif n_classes is not None:
            raise ValueError(f"n_classes only applies to softmax and one_vs_rest, not {name}")
        self.name = name
        self.n_classes = n_classes
        self._set_robust_parameters(name, alpha, delta)

    def _set_robust_parameters(self, name, alpha, delta) -> None:
        """pinball's alpha (a float, or a tuple of increasing levels) and huber's delta."""
        if name == "pinball":
            alpha = _require_alpha(0.5 if alpha is None else alpha)
        elif alpha is not None:
            raise ValueError(f"alpha only applies to pinball, not {name}")
        if name == "huber":
            delta = require_float("delta", 1.0 if delta is None else delta, 0.0, strictly_above=True)
        elif delta is not None:
            raise ValueError(f"delta only applies to huber, not {name}")
        self.alpha, self.delta = alpha, delta

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
        array([0.88, 0.1 ])
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
        array([-1.8,  2. ])
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
        if self.n_targets is not None:
            return self.n_targets
        if self.name == "pinball" and isinstance(self.alpha, tuple):  # one output per quantile level
            return len(self.alpha)
        return self.n_classes if self.name in _MULTICLASS else 1

    def _with_targets(self, n_targets: int | None) -> "Objective":
        """This objective with `n_targets` targets (the trainer's, from y's columns)."""
        out = copy.copy(self)
        object.__setattr__(out, "n_targets", _require_n_targets(self.name, n_targets))  # a new object
        return out

    @property
    def needs_groups(self) -> bool:
        """The objective ranks rows within query groups (the Dataset must have groups)."""
        return self.name in ("lambdarank", "pairwise")

    def _key(self):
        return self.name, self.n_classes, self.ndcg_at, self.variance_power, self.n_targets, self.alpha, self.delta

    def __eq__(self, other):
        return isinstance(other, Objective) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if self.n_targets is not None:  # the single-target call with n_targets added
            call = repr(self._with_targets(None))
            return f"{call[:-1]}{'' if call.endswith('()') else ', '}n_targets={self.n_targets})"
        if self.name == "tweedie":
            return f"Objective.tweedie({self.variance_power})"
        if self.name in _MULTICLASS:
            return f"Objective.{self.name}({self.n_classes})"
        if self.name == "lambdarank":
            return f"Objective.lambdarank(ndcg_at={self.ndcg_at})"
        if self.name == "pinball":
            return f"Objective.pinball({list(self.alpha) if isinstance(self.alpha, tuple) else self.alpha})"
        if self.name == "huber":
            return f"Objective.huber({self.delta})"
        return f"Objective.{self.name}()"


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

    @property
    def n_outputs(self) -> int:
        """The number of margins per row, as given."""
        return self.custom_outputs

    def _key(self):
        return (*super()._key(), self.function, self.custom_outputs, self.base_score)

    def __repr__(self):
        name = getattr(self.function, "__name__", repr(self.function))
        return f"Objective.custom({name}, n_outputs={self.custom_outputs}, base_score={self.base_score})"


# metric name -> objectives it can score
_METRIC_OBJECTIVES = {
    "rmse": ("squared",),
    "mae": ("squared",),
    "logloss": ("logistic", "softmax"),
    "auc": ("logistic",),
    "accuracy": ("logistic", "softmax"),
    "multiclass_logloss": ("softmax",),
    "multiclass_accuracy": ("softmax",),
    # mean unit deviances of the log-link regressions (any of them: all predict a positive mean)
    "poisson_deviance": _LOG_LINK,
    "gamma_deviance": _LOG_LINK,
    "tweedie_deviance": _LOG_LINK,
    # ranking metrics order each query's rows by any single score
    "ndcg": ("lambdarank", "pairwise", "squared", "logistic"),
    "map": ("lambdarank", "pairwise", "squared", "logistic"),
}
_ROBUST = ("absolute", "huber", "pinball")  # margins are the predictions, as squared error's
_METRIC_OBJECTIVES.update({"rmse": ("squared", *_ROBUST), "mae": ("squared", *_ROBUST),
                           "mape": ("squared", *_ROBUST), "huber": ("squared", *_ROBUST),
                           "pinball": ("squared", *_ROBUST)})
_RANKING_METRICS = ("ndcg", "map")
# classification: hinge margins are scores like logistic's; one-vs-rest's argmax is its class
_METRIC_OBJECTIVES.update(auc=("logistic", "hinge"), accuracy=("logistic", "softmax", "hinge", "one_vs_rest"),
                          multiclass_accuracy=("softmax", "one_vs_rest"), margin_accuracy=("logistic", "hinge"),
                          one_vs_rest_logloss=("one_vs_rest",))


class Metric(_SetOnce):
    """An evaluation metric: `Metric.rmse()`, `.mae()`, `.logloss()`, `.auc()`, `.accuracy()`,
    `.multiclass_logloss()`, `.multiclass_accuracy()`, the deviances `.poisson_deviance()`,
    `.gamma_deviance()`, `.tweedie_deviance(variance_power)`, for query groups
    `.ndcg(k)`, `.map(k)`, for regression `.mape()`, `.pinball(alpha)`, `.huber(delta)`,
    and for classification `.margin_accuracy(threshold)`, `.one_vs_rest_logloss()`.

    `logloss` and `accuracy` also score softmax models. Make one with the static methods;
    the constructor takes the name. With a ``val_set``, training scores the validation set
    with it every round (`GBDTModel.eval_history`) and early stopping follows it.

    Parameters
    ----------
    name : str
        One of "rmse", "mae", "logloss", "auc", "accuracy", "multiclass_logloss",
        "multiclass_accuracy", "poisson_deviance", "gamma_deviance", "tweedie_deviance",
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
    (round 0 here: two rounds without a better AUC stop the training after round 2):

    >>> X = np.random.default_rng(0).normal(size=(200, 2))
    >>> y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(float)
    >>> config = bst.GBDTConfig(n_estimators=10, objective=bst.Objective.logistic(),
    ...                         metric=bst.Metric.auc(), early_stopping_rounds=2)
    >>> model = bst.GBDTModel.train(bst.Dataset(X[:150], y[:150]), config,
    ...                             val_set=bst.Dataset(X[150:], y[150:]))
    >>> np.round(model.eval_history, 3), model.best_iteration, model.n_trees
    (array([0.977, 0.972, 0.976]), 0, 1)
    """

    __slots__ = ("name", "k", "variance_power", "alpha", "delta", "threshold")

    def __init__(self, name: str, k: int | None = None, variance_power: float | None = None, alpha=None,
                 delta: float | None = None, threshold: float | None = None):
        if isinstance(name, str) and name.startswith(("pinball@", "huber@")):  # labels written to model files
            name, alpha, delta = _robust_metric_label(name, alpha, delta)
        if isinstance(name, str) and name.startswith("margin_accuracy@") and threshold is None:
            name, _, threshold_text = name.partition("@")  # the label written to model files
            try:
                threshold = float(threshold_text)
            except ValueError:
                raise ValueError(f"metric margin_accuracy@t needs a number t, got {threshold_text!r}") from None
        if isinstance(name, str) and name.startswith("tweedie_deviance@") and variance_power is None:
            name, _, power_text = name.partition("@")  # the label written to model files
            try:
                variance_power = float(power_text)
            except ValueError:
                raise ValueError(f"metric tweedie_deviance@p needs a number p, got {power_text!r}") from None
        if isinstance(name, str) and "@" in name and k is None:  # "ndcg@10", as LightGBM names it
            name, _, k_text = name.partition("@")
            if not k_text.isdigit():
                raise ValueError(f"metric {name}@k needs an integer k, got {k_text!r}")
            k = int(k_text)
        if name not in _METRIC_OBJECTIVES:
            raise ValueError(f"metric must be one of {sorted(_METRIC_OBJECTIVES)}, got {name!r}")
        if name in _RANKING_METRICS:
            k = require_int("k", 10 if k is None else k, 1)
        elif k is not None:
            raise ValueError(f"k only applies to the ranking metrics {_RANKING_METRICS}, not {name}")
        if name == "tweedie_deviance":
            variance_power = _require_variance_power(1.5 if variance_power is None else variance_power)
        elif variance_power is not None:
            raise ValueError(f"variance_power only applies to tweedie_deviance, not {name}")
        if name == "margin_accuracy":
            threshold = require_float("threshold", 0.0 if threshold is None else threshold, -math.inf)  # finite
        elif threshold is not None:
            raise ValueError(f"threshold only applies to margin_accuracy, not {name}")
        self.name = name
        self.k = k
        self.variance_power = variance_power
        if name == "pinball":
            alpha = _require_alpha(0.5 if alpha is None else alpha)
        elif alpha is not None:
            raise ValueError(f"alpha only applies to pinball, not {name}")
        if name == "huber":
            delta = require_float("delta", 1.0 if delta is None else delta, 0.0, strictly_above=True)
        elif delta is not None:
            raise ValueError(f"delta only applies to huber, not {name}")
        self.alpha, self.delta = alpha, delta
        self.threshold = threshold

    @staticmethod
    def rmse() -> "Metric":
        """Root mean squared error (regression); of a multi-target model, the mean over its
        targets of each target's RMSE.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.rmse()
        Metric.rmse()
        """
        return Metric("rmse")

    @staticmethod
    def mae() -> "Metric":
        """Mean absolute error (regression); of a multi-target model, the mean over its
        targets of each target's MAE.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.mae()
        Metric.mae()
        """
        return Metric("mae")

    @staticmethod
    def logloss() -> "Metric":
        """Binary (logistic) or multiclass (softmax) log loss.

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.logloss()
        Metric.logloss()
        """
        return Metric("logloss")

    @staticmethod
    def auc() -> "Metric":
        """Area under the ROC curve of the margins (logistic, hinge); a probability label y
        counts as weight y positive and 1 - y negative (as XGBoost's ``auc``).

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.auc()
        Metric.auc()
        """
        return Metric("auc")

    @staticmethod
    def accuracy() -> "Metric":
        """Share of rows whose predicted class is the label: margin > 0 (logistic, hinge) or
        the largest margin (softmax, one_vs_rest). A probability label y counts y right
        for class 1 and 1 - y for class 0 (as XGBoost's ``error``).

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.accuracy()
        Metric.accuracy()
        """
        return Metric("accuracy")

    @staticmethod
    def multiclass_logloss() -> "Metric":
        """Multiclass log loss (softmax; the default metric for it).

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.multiclass_logloss()
        Metric.multiclass_logloss()
        """
        return Metric("multiclass_logloss")

    @staticmethod
    def multiclass_accuracy() -> "Metric":
        """Share of rows whose most probable class is the label (softmax).

        Returns
        -------
        Metric

        Examples
        --------
        >>> bst.Metric.multiclass_accuracy()
        Metric.multiclass_accuracy()
        """
        return Metric("multiclass_accuracy")

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
        if self.alpha is not None:  # "pinball@0.1,0.9"
            return "pinball@" + ",".join(repr(a) for a in (self.alpha if isinstance(self.alpha, tuple)
                                                           else (self.alpha,)))
        if self.delta is not None:
            return f"huber@{self.delta!r}"
        if self.variance_power is not None:
            return f"{self.name}@{self.variance_power!r}"
        if self.threshold is not None:
            return f"{self.name}@{self.threshold!r}"
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def needs_groups(self) -> bool:
        """The metric scores the rows of each query group (the Dataset must have groups)."""
        return self.name in _RANKING_METRICS

    @property
    def higher_is_better(self) -> bool:
        """True for AUC, accuracies, NDCG and MAP; False for losses (what early stopping maximises)."""
        return self.name in ("auc", "accuracy", "multiclass_accuracy", "ndcg", "map", "margin_accuracy")

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
        if objective.name == "custom":  # margins of the user's loss: any metric may read them
            return True
        if objective.n_targets is not None and self.name not in _PER_TARGET_METRICS:
            return False  # multi-target regression: per-target regression metrics only
        if objective.name == "pinball" and objective.n_outputs > 1:  # a multi-quantile model: its levels only
            return self.name == "pinball" and self.alpha == objective.alpha
        if self.name == "pinball" and isinstance(self.alpha, tuple):
            return False
        return objective.name in _METRIC_OBJECTIVES[self.name]

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
        if objective.name == "custom":
            raise ValueError("a custom objective has no default metric: pass GBDTConfig(metric=...)")
        if objective.name == "lambdarank":
            return Metric("ndcg", objective.ndcg_at)
        if objective.name == "pairwise":
            return Metric("ndcg", 10)
        if objective.name == "tweedie":
            return Metric("tweedie_deviance", variance_power=objective.variance_power)
        if objective.name in _LOG_LINK:
            return Metric(f"{objective.name}_deviance")
        if objective.name in _ROBUST:
            return {"absolute": Metric("mae"), "huber": Metric("huber", delta=objective.delta),
                    "pinball": Metric("pinball", alpha=objective.alpha)}[objective.name]
        if objective.name == "hinge":
            return Metric("accuracy")
        if objective.name == "one_vs_rest":
            return Metric("one_vs_rest_logloss")
        return {"squared": Metric("rmse"), "logistic": Metric("logloss"),
                "softmax": Metric("multiclass_logloss")}[objective.name]

    def _key(self):
        return self.name, self.k, self.variance_power, self.alpha, self.delta, self.threshold

    def __eq__(self, other):
        return isinstance(other, Metric) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        argument = next((a for a in (self.variance_power, self.threshold, self.k, self.delta, self.alpha) if a is not None), None)
        if isinstance(argument, tuple):
            argument = list(argument)
        return f"Metric.{self.name}({'' if argument is None else argument})"


def _robust_metric_label(label: str, alpha, delta):
    """("pinball", levels, None) from "pinball@0.1,0.9"; ("huber", None, delta) from "huber@1.0"."""
    name, _, text = label.partition("@")
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"metric {name}@... needs numbers after the @, got {text!r}") from None
    if name == "huber":
        if len(values) != 1:
            raise ValueError(f"metric huber@delta needs one number, got {text!r}")
        return name, alpha, values[0]
    return name, values if len(values) > 1 else values[0], delta


HISTOGRAM_MODES = ("auto", "f64", "i16", "i8")
DEFAULT_DEPTHWISE_MAX_DEPTH = 6
HISTOGRAM_LAYOUTS = ("auto", "column", "row")


def _is_feature_key(key):
    """A feature index (int, not bool) or name (str)."""
    return isinstance(key, str) or (isinstance(key, numbers.Integral) and not isinstance(key, bool))


def _feature_key(name, key):
    if not _is_feature_key(key):
        raise TypeError(f"{name}: a feature is an index (int) or a name (str), got {type(key).__name__} {key!r}")
    if not isinstance(key, str) and key < 0:
        raise ValueError(f"{name}: feature indices must be >= 0, got {key}")
    return key if isinstance(key, str) else int(key)


def _direction(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value not in (-1, 0, 1):
        raise ValueError(f"{name}: a direction is -1, 0 or 1, got {value!r}")
    return int(value)


def _monotone_constraints(value):
    """None, a sequence of -1/0/1 (one per feature), or a dict {feature index or name: -1/0/1};
    features are matched to the data at training."""
    name = "monotone_constraints"
    if value is None:
        return None
    if isinstance(value, dict):
        out = {}
        for key, direction in value.items():
            out[_feature_key(name, key)] = _direction(name, direction)
        return out
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be None, a sequence of -1/0/1 per feature or a dict "
                        f"{{feature: -1/0/1}}, got {type(value).__name__}")
    return tuple(_direction(name, direction) for direction in value)


def _interaction_constraints(value):
    """None, or a sequence of groups, each a sequence of feature indices or names."""
    name = "interaction_constraints"
    if value is None:
        return None
    groups = []
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be None or a list of lists of features, got {type(value).__name__}")
    for group in value:
        if isinstance(group, (str, bytes, dict)) or not hasattr(group, "__iter__"):
            raise TypeError(f"{name}: each group must be a list of features, got {type(group).__name__} {group!r}")
        group = tuple(_feature_key(name, key) for key in group)
        if not group:
            raise ValueError(f"{name}: a group must not be empty")
        groups.append(group)
    return tuple(groups)


def _require_fraction(name, value, allow_none=False):
    """A number in (0, 1]."""
    if value is None and allow_none:
        return None
    value = require_float(name, value, 0.0, strictly_above=True)
    if value > 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value}")
    return value


BOOSTERS = ("gbdt", "dart")


def _require_probability(name: str, value) -> float:
    """A float in [0, 1]."""
    value = require_float(name, value, 0.0)
    if value > 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value
def _checked_metrics(metric, objective: Objective):
    """`metric` as GBDTConfig keeps it: None, one Metric or callable, or a tuple of them
    (a list or tuple given: several metrics, the first one driving early stopping)."""
    several = isinstance(metric, (list, tuple))
    items = tuple(metric) if several else (() if metric is None else (metric,))
    if several and not items:
        raise ValueError("metric: give at least one metric in the list, or None for the objective's default")
    for item in items:
        if isinstance(item, Metric):
            if not item.supports(objective):
                raise ValueError(f"metric {item!r} cannot score objective {objective!r}")
        elif not callable(item):
            raise TypeError(f"metric must be a Metric (e.g. Metric.rmse()), a callable (margins, dataset) -> "
                            f"(name, value, higher_is_better), a list of them or None, got {item!r}")
    built_in = [item for item in items if isinstance(item, Metric)]
    if len(set(built_in)) != len(built_in):
        raise ValueError(f"metric: a metric is given twice in {list(items)!r}")
    return items if several else metric


class GBDTConfig:
    """Everything that defines a GBDT training run.

    Every value is checked here: a bad one raises ValueError (TypeError for a wrong type)
    naming the parameter; an unknown name suggests the closest one. The attributes hold
    the values in effect. :doc:`/parameters` lists each parameter's LightGBM and XGBoost
    equivalent.

    Split gain (RFC-0008): ``1/2 [T(G_L)^2/(H_L+l2) + T(G_R)^2/(H_R+l2) - T(G)^2/(H+l2)]
    - min_gain_to_split``, with ``T`` the soft threshold by ``l1``; a leaf's value is
    ``-T(G)/(H+l2) * learning_rate``.

    Parameters
    ----------
    n_estimators : int, default 100
        Boosting rounds (softmax: one tree per class per round).
    learning_rate : float, default 0.3
        Shrinkage of every leaf value, > 0.
    objective : Objective or callable, optional
        The loss; None is `Objective.squared()`. A callable ``(margins, dataset) ->
        (grad, hess)`` is ``Objective.custom(callable)`` (one output; see there).
    metric : Metric, callable or list of them, optional
        The validation metric; None is the objective's default (`Metric.default_for`).
        A callable ``(margins, dataset) -> (name, value, higher_is_better)`` scores the
        raw margins (``(n_rows,)`` or ``(n_rows, n_outputs)``, float64) of a `Dataset`,
        as LightGBM's ``feval``. A list or tuple: every one is scored each round
        (``evals_result`` has them all, `GBDTModel.eval_history` the first), and early
        stopping follows the first, as LightGBM's ``first_metric_only=True``.
    growth_strategy : GrowthStrategy or {"depthwise", "leafwise"}, default Depthwise
        Level by level (XGBoost) or best leaf first (LightGBM).
    max_depth : int, None or "auto", default "auto"
        Depth limit. "auto" is 6 depth-wise and no limit leaf-wise (LightGBM's default);
        None or -1 is no limit (leaf-wise only). The attribute holds the limit in
        effect; `to_dict` keeps what was asked, so `replace` resolves "auto" again.
    n_leaves : int, default 31
        Leaf limit of leaf-wise trees.
    l1 : float, default 0
        L1 regularization of leaf values and gains.
    l2 : float, default 1
        L2 regularization of leaf values and gains.
    min_gain_to_split : float, default 0
        A split must gain more than this. The gain carries the factor 1/2, so ``g`` is
        LightGBM's ``min_gain_to_split=2g`` and XGBoost's ``gamma=2g``.
    min_child_weight : float, default 1
        Minimum hessian sum of a child.
    min_samples_leaf : int, default 1
        Minimum rows of a child, estimated from hessians during the search (exact for
        squared error).
    max_bins : int, default 256
        Bins per feature, the missing-value bin included (2..65535): 256 is LightGBM's
        ``max_bin=255``; 256 keeps bins in one byte.
    cache_size : int, default 8
        Histogram slots. A tree needs at most ``n_leaves`` (leaf-wise) or ``2**max_depth``
        (depth-wise) to never rebuild an evicted parent; fewer is slower, same model.
    early_stopping_rounds : int, optional
        Stop when the validation metric has not improved for this many rounds and keep the
        trees up to the best round; needs a ``val_set``.
    seed : int, default 42
        Fixes all randomness: the binning sample, quantized rounding, row and column samples.
    histogram_mode : {"auto", "f64", "i16", "i8"}, default "auto"
        "f64": float64 histograms; "i16" / "i8": gradients quantized to 16 / 8-bit integers
        (stochastic rounding, seeded) summed in exact integer histograms; "auto": "f64"
        below 100k rows, "i16" above.
    prefetch : bool, default True
        Software prefetch in the gathered histogram kernels.
    enable_bundling : bool, default True
        Store mutually exclusive sparse features (one-hot groups) in shared columns (EFB);
        the same trees, grown faster.
    renew_leaves : bool, default True
        Quantized modes: leaf values from the full-precision gradients.
    quantization_levels : int, optional
        Quantized modes: gradients become integers in [-levels, levels] (LightGBM's
        ``num_grad_quant_bins``); None is as many as the mode allows. Fewer levels let more
        nodes use narrow histogram bins (faster), with coarser gradients.
    histogram_layout : {"auto", "column", "row"}, default "auto"
        Histograms built column by column, row by row over a row-major copy of the uint8
        columns, or chosen by a measured cost model.
    verbosity : int, default 0
        1: one log line per round.
    colsample_bytree : float, default 1.0
        Share in (0, 1] of the usable features each tree may split on:
        ``max(1, floor(share * n))``, as XGBoost.
    colsample_bylevel : float, default 1.0
        Share of the tree's features each level (node depth, leaf-wise too) may split on.
    colsample_bynode : float, default 1.0
        Share of the level's features each node may split on.
    monotone_constraints : sequence or dict, optional
        -1 / 0 / +1 per feature (decreasing, none, increasing): one per feature, or
        ``{feature index or name: direction}``. Names are matched to the training data.
    interaction_constraints : list of lists, optional
        Groups of features (indices or names) that may appear together on a root-to-leaf
        path; a feature in no group only appears on paths of its own (XGBoost's rule).
    subsample : float, default 1.0
        Share in (0, 1] of the rows each round's trees see: ``round(subsample * n_rows)``
        drawn without replacement per round (LightGBM's bagging with ``bagging_freq=1``).
    goss_top_rate : float, optional
        GOSS (set with `goss_other_rate`, not with `subsample`): the share ``a`` of rows
        kept each round for their largest ``|gradient * hessian|``.
    goss_other_rate : float, optional
        GOSS: the share ``b`` of rows drawn from the rest, their gradients and hessians
        multiplied by ``(1 - a) / b``; ``a + b <= 1``. The first ``int(1 / learning_rate)``
        rounds use every row, as in LightGBM.
    max_onehot_cats : int, default 4
        Categorical features with at most this many categories try each category alone
        against the rest (LightGBM's ``max_cat_to_onehot``).
    cat_smooth : float, default 10
        Sorted categorical partition: categories with at least this many rows take part,
        ordered by ``G / (H + cat_smooth)``.
    cat_l2 : float, default 10
        Sorted categorical partition: added to `l2` in the children's gain.
    max_cat_threshold : int, default 32
        Sorted categorical partition: at most this many categories on the left side.
    min_data_per_group : int, default 100
        Sorted categorical partition: rows at least on the right side and in each group of
        categories between two tried splits.
    booster : {"gbdt", "dart"}, default "gbdt"
        "dart": DART (Rashmi & Gilad-Bachrach 2015), dropout of whole earlier rounds; see
        :doc:`/guide/dart`. The four parameters below are read only with "dart".
    drop_rate : float, default 0.1
        DART: the probability in [0, 1] that each earlier round is dropped, when the round
        does not skip dropout.
    skip_drop : float, default 0.5
        DART: the probability in [0, 1] that a round drops nothing (plain boosting).
    max_drop : int or None, default 50
        DART: at most this many rounds are dropped (the drop rate is capped at
        ``max_drop / rounds so far``, as LightGBM); None is no limit.
    xgboost_dart_mode : bool, default False
        DART normalisation with k dropped rounds: False scales the new trees by
        ``learning_rate / (k + 1)`` and the dropped ones by ``k / (k + 1)`` (the paper's,
        LightGBM's default); True by ``learning_rate / (k + learning_rate)`` and
        ``k / (k + learning_rate)`` (XGBoost's ``normalize_type="tree"``).
    linear_leaves : bool, default False
        Each leaf of a tree holds a linear model of the numeric features split on along its
        path (LightGBM's ``linear_tree``; :doc:`/guide/linear_leaves`), fitted by a Newton
        step on the leaf's rows; rows with NaN (or +-inf) in those features, there and at
        prediction, use the leaf's constant value. Dense training data only; not with
        `monotone_constraints`.
    linear_l1 : float, default 0
        L1 penalty on the linear leaves' coefficients (not their intercepts).
    linear_l2 : float, default 0
        L2 penalty on the linear leaves' coefficients (LightGBM's ``linear_lambda``).
    **unknown
        Any other keyword is an error: ValueError naming it (and the closest parameter).

    See Also
    --------
    GBDTModel.train : trains with a config.

    Examples
    --------
    >>> config = bst.GBDTConfig(n_estimators=200, learning_rate=0.05,
    ...                         growth_strategy="leafwise", n_leaves=63)
    >>> config.max_depth is None, config.growth_strategy
    (True, <GrowthStrategy.Leafwise: 'leafwise'>)
    >>> bst.GBDTConfig(n_estimator=10)
    Traceback (most recent call last):
    ...
    ValueError: unknown GBDTConfig parameter(s): 'n_estimator' (did you mean 'n_estimators'?)
    """

    _FIELDS = (
        "n_estimators", "learning_rate", "objective", "metric", "growth_strategy", "max_depth",
        "n_leaves", "l1", "l2", "min_gain_to_split", "min_child_weight", "min_samples_leaf",
        "max_bins", "cache_size", "early_stopping_rounds", "seed", "histogram_mode", "prefetch",
        "enable_bundling", "renew_leaves", "quantization_levels", "histogram_layout", "verbosity",
        "colsample_bytree", "colsample_bylevel", "colsample_bynode", "monotone_constraints",
        "interaction_constraints",
        "subsample", "goss_top_rate", "goss_other_rate",
        "max_onehot_cats", "cat_smooth", "cat_l2", "max_cat_threshold", "min_data_per_group",
        "booster", "drop_rate", "skip_drop", "max_drop", "xgboost_dart_mode",
        "linear_leaves", "linear_l1", "linear_l2",
    )

    def __init__(
        self,
        n_estimators: int = 100,
        learning_rate: float = 0.3,
        objective: Objective | None = None,
        metric: Metric | None = None,
        growth_strategy: GrowthStrategy = GrowthStrategy.Depthwise,
        max_depth: int | str | None = "auto",
        n_leaves: int = 31,
        l1: float = 0.0,
        l2: float = 1.0,
        min_gain_to_split: float = 0.0,
        min_child_weight: float = 1.0,
        min_samples_leaf: int = 1,
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
        monotone_constraints=None,
        interaction_constraints=None,
        subsample: float = 1.0,
        goss_top_rate: float | None = None,
        goss_other_rate: float | None = None,
        max_onehot_cats: int = 4,
        cat_smooth: float = 10.0,
        cat_l2: float = 10.0,
        max_cat_threshold: int = 32,
        min_data_per_group: int = 100,
        booster: str = "gbdt",
        drop_rate: float = 0.1,
        skip_drop: float = 0.5,
        max_drop: int | None = 50,
        xgboost_dart_mode: bool = False,
        linear_leaves: bool = False,
        linear_l1: float = 0.0,
        linear_l2: float = 0.0,
        **unknown,
    ):
        if unknown:
            raise ValueError(f"unknown GBDTConfig parameter(s): {self._with_hints(unknown)}")
        self.n_estimators = require_int("n_estimators", n_estimators, 1)
        self.learning_rate = require_float("learning_rate", learning_rate, 0.0, strictly_above=True)
        objective = Objective.squared() if objective is None else objective
        if callable(objective) and not isinstance(objective, Objective):
            objective = Objective.custom(objective)
        if not isinstance(objective, Objective):
            raise TypeError(f"objective must be an Objective (e.g. Objective.squared()) or a callable "
                            f"(margins, dataset) -> (grad, hess), got {objective!r}")
        self.objective = objective
        self.metric = _checked_metrics(metric, objective)
        if isinstance(growth_strategy, str):
            try:
                growth_strategy = GrowthStrategy(growth_strategy.lower())
            except ValueError:
                raise ValueError(f"growth_strategy must be 'depthwise' or 'leafwise', got {growth_strategy!r}") from None
        if not isinstance(growth_strategy, GrowthStrategy):
            raise TypeError(f"growth_strategy must be a GrowthStrategy, got {growth_strategy!r}")
        self.growth_strategy = growth_strategy
        self._max_depth_asked = max_depth
        if isinstance(max_depth, str) and max_depth == "auto":
            max_depth = DEFAULT_DEPTHWISE_MAX_DEPTH if growth_strategy is GrowthStrategy.Depthwise else None
        elif isinstance(max_depth, numbers.Integral) and max_depth == -1:
            max_depth = None
        if isinstance(max_depth, str):
            raise TypeError(f"max_depth must be an int, None or 'auto', got {max_depth!r}")
        self.max_depth = require_int("max_depth", max_depth, 1, allow_none=True)
        if self.max_depth is None and growth_strategy is GrowthStrategy.Depthwise:
            raise ValueError("max_depth must be set (>= 1) for GrowthStrategy.Depthwise")
        self.n_leaves = require_int("n_leaves", n_leaves, 2)
        self.l1 = require_float("l1", l1, 0.0)
        self.l2 = require_float("l2", l2, 0.0)
        self.min_gain_to_split = require_float("min_gain_to_split", min_gain_to_split, 0.0)
        self.min_child_weight = require_float("min_child_weight", min_child_weight, 0.0)
        self.min_samples_leaf = require_int("min_samples_leaf", min_samples_leaf, 1)
        self.max_bins = require_int("max_bins", max_bins, 2, MAX_BINS_LIMIT)
        self.cache_size = require_int("cache_size", cache_size, 2)
        self.early_stopping_rounds = require_int("early_stopping_rounds", early_stopping_rounds, 1, allow_none=True)
        self.seed = require_int("seed", seed, 0, 2**64 - 1)  # a uint64 in the kernels
        if histogram_mode not in HISTOGRAM_MODES:
            raise ValueError(f"histogram_mode must be one of {HISTOGRAM_MODES}, got {histogram_mode!r}")
        self.histogram_mode = histogram_mode
        if not isinstance(prefetch, bool):
            raise TypeError(f"prefetch must be True or False, got {prefetch!r}")
        self.prefetch = prefetch
        if not isinstance(enable_bundling, bool):
            raise TypeError(f"enable_bundling must be True or False, got {enable_bundling!r}")
        self.enable_bundling = enable_bundling
        if not isinstance(renew_leaves, bool):
            raise TypeError(f"renew_leaves must be True or False, got {renew_leaves!r}")
        self.renew_leaves = renew_leaves
        self.quantization_levels = require_int("quantization_levels", quantization_levels, 1, 32767, allow_none=True)
        if histogram_layout not in HISTOGRAM_LAYOUTS:
            raise ValueError(f"histogram_layout must be one of {HISTOGRAM_LAYOUTS}, got {histogram_layout!r}")
        self.histogram_layout = histogram_layout
        self.verbosity = require_int("verbosity", verbosity, 0)
        self.colsample_bytree = _require_fraction("colsample_bytree", colsample_bytree)
        self.colsample_bylevel = _require_fraction("colsample_bylevel", colsample_bylevel)
        self.colsample_bynode = _require_fraction("colsample_bynode", colsample_bynode)
        self.monotone_constraints = _monotone_constraints(monotone_constraints)
        self.interaction_constraints = _interaction_constraints(interaction_constraints)
        self.max_onehot_cats = require_int("max_onehot_cats", max_onehot_cats, 0)
        self.cat_smooth = require_float("cat_smooth", cat_smooth, 0.0)
        self.cat_l2 = require_float("cat_l2", cat_l2, 0.0)
        self.max_cat_threshold = require_int("max_cat_threshold", max_cat_threshold, 1)
        self.min_data_per_group = require_int("min_data_per_group", min_data_per_group, 1)
        self._set_row_sampling(subsample, goss_top_rate, goss_other_rate)
        self._set_dart(booster, drop_rate, skip_drop, max_drop, xgboost_dart_mode)
        self._set_linear_leaves(linear_leaves, linear_l1, linear_l2)
        object.__setattr__(self, "_checked", True)  # from here on, an assignment is checked (__setattr__)

    @classmethod
    def _with_hints(cls, names) -> str:
        """Unknown parameter names, each with the closest parameter's name where one is close."""
        hints = []
        for name in names:
            close = difflib.get_close_matches(name, cls._FIELDS, n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        return ", ".join(hints)

    def __setattr__(self, name, value):
        """``config.name = value`` is checked as the constructor checks it (with every other
        parameter: ``config.replace(name=value)``), so a config never holds a value it would
        refuse; a name that is not a parameter is an AttributeError."""
        if "_checked" not in self.__dict__:  # being made: __init__ checks each value
            object.__setattr__(self, name, value)
            return
        if name not in self._FIELDS:
            raise AttributeError(f"GBDTConfig has no parameter {self._with_hints([name])}")
        self.__dict__.update(self.replace(**{name: value}).__dict__)

    def __delattr__(self, name):
        raise AttributeError(f"GBDTConfig parameters cannot be deleted ({name!r}); set them or use replace()")

    def _set_dart(self, booster, drop_rate, skip_drop, max_drop, xgboost_dart_mode):
        if booster not in BOOSTERS:
            raise ValueError(f"booster must be one of {BOOSTERS}, got {booster!r}")
        self.booster = booster
        self.drop_rate = _require_probability("drop_rate", drop_rate)
        self.skip_drop = _require_probability("skip_drop", skip_drop)
        self.max_drop = require_int("max_drop", max_drop, 1, allow_none=True)
        if not isinstance(xgboost_dart_mode, bool):
            raise TypeError(f"xgboost_dart_mode must be True or False, got {xgboost_dart_mode!r}")
        self.xgboost_dart_mode = xgboost_dart_mode

    def _set_row_sampling(self, subsample, goss_top_rate, goss_other_rate):
        self.subsample = _require_fraction("subsample", subsample)
        self.goss_top_rate = _require_fraction("goss_top_rate", goss_top_rate, allow_none=True)
        self.goss_other_rate = _require_fraction("goss_other_rate", goss_other_rate, allow_none=True)
        if (goss_top_rate is None) != (goss_other_rate is None):
            raise ValueError("goss_top_rate and goss_other_rate are set together (GOSS needs both), got "
                             f"goss_top_rate={goss_top_rate!r}, goss_other_rate={goss_other_rate!r}")
        if goss_top_rate is None:
            return
        if self.goss_top_rate == 1.0 or self.goss_top_rate + self.goss_other_rate > 1.0:
            raise ValueError("goss_top_rate + goss_other_rate must be at most 1 with goss_top_rate < 1, got "
                             f"goss_top_rate={self.goss_top_rate}, goss_other_rate={self.goss_other_rate}")
        if self.subsample != 1.0:
            raise ValueError(f"subsample={self.subsample} cannot be combined with GOSS (goss_top_rate, "
                             "goss_other_rate): choose one row sampling")

    def _set_linear_leaves(self, linear_leaves, linear_l1, linear_l2):
        if not isinstance(linear_leaves, bool):
            raise TypeError(f"linear_leaves must be True or False, got {linear_leaves!r}")
        self.linear_leaves = linear_leaves
        self.linear_l1 = require_float("linear_l1", linear_l1, 0.0)
        self.linear_l2 = require_float("linear_l2", linear_l2, 0.0)
        # a leaf's slope can go against a monotone constraint that only its constant obeys
        monotone = self.monotone_constraints
        directions = monotone.values() if isinstance(monotone, dict) else monotone or ()
        if linear_leaves and any(d != 0 for d in directions):
            raise ValueError("linear_leaves cannot be combined with monotone_constraints: a leaf's linear "
                             "model may go against the constraint")
        # DART rescales the trees' constant values; a linear leaf's coefficients would keep their scale
        if linear_leaves and self.booster == "dart":
            raise ValueError("linear_leaves cannot be combined with booster='dart' (DART rescales leaf constants, "
                             "not linear models)")
        # leaf renewal sets a leaf's constant to a residual quantile after the fit (LightGBM refuses l1 too)
        if linear_leaves and self.objective.name in ("absolute", "pinball"):
            raise ValueError(f"linear_leaves cannot be combined with {self.objective!r}: its leaves are renewed "
                             f"to residual quantiles, which a linear model does not have")

    @property
    def resolved_metric(self):
        """The metric used for evaluation: the given one (the first of several), or the
        objective's default; None for a custom objective without a metric.

        Examples
        --------
        >>> bst.GBDTConfig(objective=bst.Objective.logistic()).resolved_metric
        Metric.logloss()
        """
        metrics = self.resolved_metrics
        return metrics[0] if metrics else None

    @property
    def resolved_metrics(self) -> tuple:
        """Every metric scored each round, in order (Metric objects and callables): the
        given ones, or the objective's default; none for a custom objective without a
        metric. Early stopping follows the first (as LightGBM's ``first_metric_only``).

        Examples
        --------
        >>> bst.GBDTConfig(objective=bst.Objective.logistic(),
        ...                metric=[bst.Metric.auc(), bst.Metric.logloss()]).resolved_metrics
        (Metric.auc(), Metric.logloss())
        """
        if isinstance(self.metric, tuple):
            return self.metric
        if self.metric is not None:
            return (self.metric,)
        return () if self.objective.name == "custom" else (Metric.default_for(self.objective),)

    def to_dict(self) -> dict:
        """The parameters as given (max_depth "auto" stays "auto").

        Returns
        -------
        dict
            Parameter name -> value; ``GBDTConfig(**config.to_dict()) == config``.

        Examples
        --------
        >>> d = bst.GBDTConfig(learning_rate=0.1).to_dict()
        >>> d["learning_rate"], d["max_depth"]
        (0.1, 'auto')
        """
        out = {name: getattr(self, name) for name in self._FIELDS}
        if isinstance(self._max_depth_asked, str):
            out["max_depth"] = self._max_depth_asked
        return out

    def replace(self, **changes) -> "GBDTConfig":
        """A copy with some parameters changed (validated again).

        Parameters
        ----------
        **changes
            Parameters to change, by name.

        Returns
        -------
        GBDTConfig

        Examples
        --------
        >>> config = bst.GBDTConfig(max_depth="auto")
        >>> config.max_depth, config.replace(growth_strategy="leafwise").max_depth
        (6, None)
        """
        return GBDTConfig(**{**self.to_dict(), **changes})

    def __eq__(self, other):
        return isinstance(other, GBDTConfig) and self.to_dict() == other.to_dict()

    def __repr__(self):
        return "GBDTConfig(" + ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items()) + ")"
