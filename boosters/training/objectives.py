"""Objectives: label checks, the optimal constant start, gradients (the output transform is the
model's: boosters.objectives.transforms)."""

from __future__ import annotations

import numpy as np

from boosters.config import Objective
from boosters.objectives import _gradients, _quantile, transforms
from boosters.objectives.ranking import ideal_dcg
from boosters.training.targets import kernel_labels, per_target

_EPS = 1e-15
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_FLOAT32_SAFE = _FLOAT32_MAX / 16  # headroom: margins may overshoot the labels


def _weighted_mean(values: np.ndarray, weights: np.ndarray | None) -> float:
    return float(np.average(values, weights=weights))


class ObjectiveFunction:
    """Base: margins are (n_outputs, n_rows) float64; gradients (n_outputs, n_rows, 2) float32."""

    def __init__(self, spec: Objective):
        self.spec = spec
        self.n_outputs = spec.n_outputs

    def check_labels(self, y: np.ndarray) -> None:
        pass

    def gradient_bound(self, y: np.ndarray) -> float:
        """An upper bound of |gradient| and hessian per unit of weight (classification: 1)."""
        return 1.0

    def check_scale(self, y: np.ndarray, weights: np.ndarray | None) -> None:
        """Gradients are float32: labels or weights whose gradients could overflow it (an
        all-NaN model, silently) are an error instead."""
        w_max = 1.0 if weights is None else float(weights.max())
        bound = max(self.gradient_bound(y), 1.0)  # the hessian per unit of weight is at most 1
        if bound * w_max < _FLOAT32_SAFE:
            return
        if weights is None or bound >= _FLOAT32_SAFE:
            raise ValueError(f"y: labels up to {float(np.abs(y).max()):.3g} give gradients beyond float32's range "
                             f"(up to {_FLOAT32_MAX:.3g}); rescale y")
        raise ValueError(f"weights: weights up to {w_max:.3g} with these labels give gradients beyond float32's "
                         f"range (up to {_FLOAT32_MAX:.3g}); rescale the weights")

    def init_scores(self, y: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def kernel_parameters(self) -> float | np.ndarray:
        """The kernel's number per output (one for all): see _gradients.pointwise."""
        return 0.0

    def gradient_kernel(self, margins, y, weights, out, n_threads: int) -> _gradients.GradientKernel:
        """The gradients of `margins` into `out` as a C kernel bound to these buffers: the
        boosting round calls it without the GIL, as the margins change."""
        w = np.empty(0) if weights is None else weights
        return _gradients.GradientKernel(self.spec.name, margins, kernel_labels(y), w, out, n_threads,
                                          parameters=self.kernel_parameters())

    def gradients(self, margins, y, weights, out, n_threads: int) -> None:
        self.gradient_kernel(margins, y, weights, out, n_threads).run()

    transform = staticmethod(transforms.identity)  # predictions from (n_rows, n_outputs) margins


class SquaredError(ObjectiveFunction):
    def gradient_bound(self, y):
        # |margin - y| with margins between the labels' extremes
        return 2.0 * float(np.abs(y).max()) if y.size else 0.0

    def init_scores(self, y, weights):
        return per_target(_weighted_mean, y, weights)  # a 2-D y: each column's mean


class Logistic(ObjectiveFunction):
    """Cross-entropy: 0/1 labels or probability labels in [0, 1], the same gradients p - y."""

    def check_labels(self, y):
        bad = ~((y >= 0) & (y <= 1))  # NaN too
        if np.any(bad):
            raise ValueError(f"y: logistic objective needs labels in [0, 1] (classes 0/1 or probabilities), "
                             f"found {y[np.argmax(bad)]}")

    def init_scores(self, y, weights):
        p = min(max(_weighted_mean(y, weights), _EPS), 1 - _EPS)
        return np.array([np.log(p / (1 - p))])

    transform = staticmethod(transforms.sigmoid)


class Hinge(ObjectiveFunction):
    """XGBoost's binary:hinge: labels 0/1, predictions are classes."""

    def check_labels(self, y):
        bad = (y != 0) & (y != 1)
        if np.any(bad):
            raise ValueError(f"y: hinge objective needs labels 0 or 1, found {y[np.argmax(bad)]}")

    def init_scores(self, y, weights):
        """XGBoost's (>= 2.0) start: the Newton step from margin 0, the weighted mean of
        2y - 1, turned into a class (1.0 where > 0, else 0.0) as its base_score is."""
        return np.array([1.0 if _weighted_mean(2.0 * y - 1.0, weights) > 0 else 0.0])

    transform = staticmethod(transforms.hinge_class)


POISSON_MAX_DELTA_STEP = 0.7  # LightGBM's poisson_max_delta_step default


class LogLink(ObjectiveFunction):
    """Poisson, gamma and Tweedie regression: margins are log-means, predictions exp(margin);
    the start is log of the (weighted) mean label (LightGBM's boost_from_average)."""

    def check_labels(self, y):
        name = self.spec.name
        if name == "gamma":
            if np.any(y <= 0):
                raise ValueError(f"y: gamma objective needs labels > 0, found {float(y.min())}")
            return
        if np.any(y < 0):
            raise ValueError(f"y: {name} objective needs labels >= 0, found {float(y.min())}")

    def gradient_bound(self, y):
        # mean and label near each other: |gradient| about max(y) (gamma: about max(y) / min(y))
        if not y.size:
            return 0.0
        return float(y.max() / y.min()) if self.spec.name == "gamma" else float(y.max())

    def init_scores(self, y, weights):
        # training labels only: a validation set may well be all 0
        mean = _weighted_mean(y, weights)
        if mean <= 0:
            raise ValueError(f"y: {self.spec.name} objective needs some training label > 0 (with weight > 0): "
                             f"the start, log of the mean label, would be -inf")
        return np.array([np.log(mean)])

    def kernel_parameters(self):
        return {"poisson": POISSON_MAX_DELTA_STEP, "gamma": 0.0, "tweedie": self.spec.variance_power}[self.spec.name]

    transform = staticmethod(transforms.exponential)


class QuantileRegression(ObjectiveFunction):
    """Absolute error (the median) and pinball (alpha-quantiles, one output per level): the
    gradients only point the way; after each tree the leaves are renewed to the weighted
    quantile of their rows' residuals (training/_leaf_renewal). Each output starts from its level's
    quantile of the labels (LightGBM's BoostFromScore)."""

    def __init__(self, spec: Objective):
        super().__init__(spec)
        # per output; absolute's 0.5 for each (one output per target)
        self.levels = (np.full(self.n_outputs, 0.5) if spec.name == "absolute"
                       else np.atleast_1d(np.asarray(spec.alpha, dtype=np.float64)))

    def init_scores(self, y, weights):
        if y.ndim == 2:  # absolute with several targets: each column's median
            return per_target(lambda labels, w: _quantile.quantile(labels, w, 0.5), y, weights)
        return np.array([_quantile.quantile(y, weights, a) for a in self.levels])

    def kernel_parameters(self):
        return self.levels  # absolute: 0.5, unused by its gradient

    def gradient_kernel(self, margins, y, weights, out, n_threads):
        kernel = super().gradient_kernel(margins, y, weights, out, n_threads)
        kernel.leaf_quantiles = self.levels
        return kernel

    transform = staticmethod(transforms.sorted_quantiles)  # one level: the margin itself


class Huber(ObjectiveFunction):
    """Huber loss (LightGBM's huber): starts from the (weighted) mean label, as LightGBM."""

    def gradient_bound(self, y):
        return self.spec.delta

    def init_scores(self, y, weights):
        return per_target(_weighted_mean, y, weights)  # a 2-D y: each column's mean

    def kernel_parameters(self):
        return self.spec.delta


def _check_class_labels(spec: Objective, y: np.ndarray) -> None:
    k = spec.n_outputs
    bad = (y != np.floor(y)) | (y < 0) | (y >= k)
    if np.any(bad):
        raise ValueError(f"y: {spec.name}({k}) needs integer labels in 0..{k - 1}, found {y[np.argmax(bad)]}")


class Softmax(ObjectiveFunction):
    def check_labels(self, y):
        _check_class_labels(self.spec, y)

    def init_scores(self, y, weights):
        w = np.ones_like(y) if weights is None else weights
        prior = np.bincount(y.astype(np.int64), weights=w, minlength=self.n_outputs) / w.sum()
        return np.log(np.maximum(prior, _EPS))

    transform = staticmethod(transforms.softmax)


class OneVsRest(ObjectiveFunction):
    """LightGBM's multiclassova: output k is a logistic model of [y == k]."""

    def check_labels(self, y):
        _check_class_labels(self.spec, y)

    def init_scores(self, y, weights):
        # each output's log-odds of its class share, clipped as Logistic's
        w = np.ones_like(y) if weights is None else weights
        share = np.bincount(y.astype(np.int64), weights=w, minlength=self.n_outputs) / w.sum()
        share = np.clip(share, _EPS, 1 - _EPS)
        return np.log(share / (1 - share))

    def kernel_parameters(self):
        return np.arange(self.n_outputs, dtype=np.float64)  # output k's class: its label is [y == k]

    transform = staticmethod(transforms.sigmoid_per_class)


class LambdaRank(ObjectiveFunction):
    """LambdaRank (NDCG@ndcg_at) within the query groups given at construction."""

    def __init__(self, spec: Objective, groups: np.ndarray | None):
        super().__init__(spec)
        if groups is None:
            raise ValueError(f"{spec.name} needs query groups: pass group= (sizes) or qid= (per-row query ids) "
                             "to the training Dataset")
        self.groups = groups

    def check_labels(self, y):
        # the only check: the kernel's gains 2^label - 1 trust it
        bad = (y != np.floor(y)) | (y < 0) | (y > _gradients.MAX_LABEL)
        if np.any(bad):
            raise ValueError(f"y: lambdarank needs integer relevance labels in 0..{_gradients.MAX_LABEL}, "
                             f"found {y[np.argmax(bad)]}")

    def gradient_bound(self, y):
        # per pair at most 1/0.01 (an NDCG change <= 1 over the score gap's floor), times the pairs of a row
        return 100.0 * float(np.diff(self.groups).max())

    def init_scores(self, y, weights):
        return np.zeros(1)  # scores only order the rows of a query: no constant helps (as LightGBM)

    def gradient_kernel(self, margins, y, weights, out, n_threads):
        """The kernel, with each query's ideal DCG computed here once (the labels do not change)."""
        w = np.empty(0) if weights is None else weights
        ideal = ideal_dcg(y, self.groups, self.spec.ndcg_at)
        inverse_max_dcg = np.divide(1.0, ideal, out=np.zeros_like(ideal), where=ideal > 0)  # 0: no gradient
        return _gradients.GradientKernel("lambdarank", margins, y, w, out, n_threads, groups=self.groups,
                                          ndcg_at=self.spec.ndcg_at, inverse_max_dcg=inverse_max_dcg)


class Pairwise(LambdaRank):
    """RankNet's pairwise logistic loss within the query groups: any labels (their order counts)."""

    def check_labels(self, y):
        pass  # finite, as Dataset checks

    def gradient_bound(self, y):
        return float(np.diff(self.groups).max())  # rho <= 1 per pair, one pair per other row

    def gradient_kernel(self, margins, y, weights, out, n_threads):
        w = np.empty(0) if weights is None else weights
        return _gradients.GradientKernel("pairwise", margins, y, w, out, n_threads, groups=self.groups)


class CustomObjectiveFunction(ObjectiveFunction):
    """`Objective.custom`: the user's function gives each round's gradients, which `fill`
    converts once into the float32 buffer the grower reads (its kernel does nothing)."""

    def check_scale(self, y, weights):
        pass  # the user's gradients are checked as they come (fill)

    def init_scores(self, y, weights):
        return np.array(self.spec.base_score)

    def gradient_kernel(self, margins, y, weights, out, n_threads):
        if self.spec.function is None:
            raise ValueError("objective: this custom objective was loaded from a file and has no function; "
                             "pass Objective.custom(function) to train")
        self.margins, self.out = margins, out
        return _gradients.CustomGradients(margins, out)

    def fill(self, dataset) -> None:
        """Call the user's function on the current margins (read-only: (n_rows,) for one
        output, else (n_rows, n_outputs)) and `dataset`; its (grad, hess) into the buffer."""
        view = self.margins[0] if self.n_outputs == 1 else self.margins.T
        view = view.view()
        view.flags.writeable = False
        result = self.spec.function(view, dataset)
        if not isinstance(result, tuple) or len(result) != 2:
            raise TypeError(f"objective: the custom objective must return a (grad, hess) pair, got "
                            f"{type(result).__name__}")
        for j, (name, values) in enumerate(zip(("grad", "hess"), result)):
            values = np.asarray(values)
            if values.dtype not in (np.float32, np.float64) or values.shape != view.shape:
                raise ValueError(f"objective: the custom objective's {name} must be a float32 or float64 array "
                                 f"of the margins' shape {view.shape}, got {values.dtype} {values.shape}")
            target = self.out[:, :, j]  # (n_outputs, n_rows)
            with np.errstate(over="ignore"):  # beyond float32's range: inf, refused just below
                np.copyto(target, values if self.n_outputs == 1 else values.T, casting="same_kind")
            if not np.all(np.isfinite(target)):
                raise ValueError(f"objective: the custom objective's {name} has NaN or inf (or values beyond "
                                 f"float32's range)")


def make_objective(spec: Objective, groups: np.ndarray | None = None) -> ObjectiveFunction:
    """The objective's functions; `groups`: the training rows' query boundaries (ranking)."""
    if spec.name == "custom":
        return CustomObjectiveFunction(spec)
    if spec.needs_groups:
        return {"lambdarank": LambdaRank, "pairwise": Pairwise}[spec.name](spec, groups)
    return {"squared": SquaredError, "logistic": Logistic, "softmax": Softmax, "poisson": LogLink,
            "gamma": LogLink, "tweedie": LogLink, "absolute": QuantileRegression, "huber": Huber,
            "pinball": QuantileRegression, "hinge": Hinge, "one_vs_rest": OneVsRest}[spec.name](spec)
