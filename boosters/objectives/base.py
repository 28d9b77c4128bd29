"""What the objectives and metrics share: `ObjectiveFn`, the base of every objective, and the
helpers of their starts and metrics."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from boosters.objectives import _gradients, transforms
from boosters.objectives.parameters import Parameter

FLOAT32_MAX = float(np.finfo(np.float32).max)
FLOAT32_SAFE = FLOAT32_MAX / 16  # headroom: margins may overshoot the labels


def weighted_mean(values: np.ndarray, weights: np.ndarray | None) -> float:
    """The mean of `values`, weighted by `weights` (None: equal weights)."""
    return float(np.average(values, weights=weights))


def n_targets(y: np.ndarray) -> int:
    """Labels per row: 1 for a 1-D y, k for a (n_rows, k) one."""
    return 1 if y.ndim == 1 else y.shape[1]


def kernel_labels(y: np.ndarray) -> np.ndarray:
    """Labels as the gradient kernel reads them: a 1-D y as it is, a (n_rows, k) y as its
    (k, n_rows) transpose (output k reads row k; one copy per training)."""
    return y if y.ndim == 1 else np.ascontiguousarray(y.T)


def per_target(start, y: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """`start(labels, weights) -> float` of each target (column of a 2-D y; a 1-D y is one),
    on contiguous labels, so that output j's start is bit for bit a single-target model's
    on column j."""
    return np.array([start(labels, weights) for labels in kernel_labels(y).reshape(-1, len(y))])


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


class ObjectiveFn:
    """One objective. Class level, what it is: its name, its gradient kernel (by the kernel's
    name in _gradients) and the model's output transform; an instance, bound to a training's
    Objective (`spec`, and the query groups of a ranking objective), what it does: label
    checks, the optimal constant start, the gradients. Margins are (n_outputs, n_rows)
    float64; gradients (n_outputs, n_rows, 2) float32."""

    name: ClassVar[str]  # as Objective.name and the model files write it
    aliases: ClassVar[dict[str, dict]] = {}  # more names Objective(name) takes -> the parameter defaults each
    #                                          implies; the Objective made saves and compares as `name`
    parameters: ClassVar[tuple[Parameter, ...]] = ()  # its keywords, in the order of its repr
    takes_function: ClassVar[bool] = False  # the user's function gives the gradients: only Objective.custom
    #                                         (a CustomObjective) makes it
    any_metric: ClassVar[bool] = False  # every metric may read its margins (the user's loss: custom)
    kernel: ClassVar[str | None]  # its _gradients.GradientKernel
    task: ClassVar[str | None] = "regression"  # the estimator that takes it by name ("regression",
    # "classification", "ranking"); None: none (custom)
    needs_groups: ClassVar[bool] = False  # ranks the rows of query groups
    distributed: ClassVar[bool] = True  # boosters.dask trains it (label_sums or quantile_levels hold)
    transform = staticmethod(transforms.identity)  # the model's predictions from (n_rows, n_outputs) margins

    @classmethod
    def takes(cls, parameter: str) -> bool:
        """Whether it has the parameter named `parameter` (Objective's attribute)."""
        return any(p.name == parameter for p in cls.parameters)

    @classmethod
    def outputs(cls, spec) -> int:
        """Margins per row (Objective.n_outputs): one per target."""
        return spec.n_targets or 1

    @classmethod
    def default_metric(cls, spec) -> tuple[str, dict] | None:
        """The metric GBDTConfig scores when none is given, as (name, Metric's keywords);
        None: none (a custom objective)."""
        raise NotImplementedError

    @classmethod
    def only_default_metric(cls, spec) -> bool:
        """No metric but its default can score it (a multi-quantile pinball model: its levels)."""
        return False

    @classmethod
    def quantile_levels(cls, spec) -> np.ndarray | None:
        """Per output, the quantile its start and renewed leaves take (absolute, pinball);
        None: no renewal, the start from init_scores."""
        return None

    @classmethod
    def allows_linear_leaves(cls, spec) -> bool:
        """Whether GBDTConfig(linear_leaves=True) may train it: not when its leaves are renewed
        to residual quantiles after the fit (quantile_levels), which a linear model does not have."""
        return cls.quantile_levels(spec) is None

    @staticmethod
    def class_probabilities(p: np.ndarray) -> np.ndarray:
        """A classifier's (n_rows, n_classes) class probabilities from the model's
        predictions `p`: a single output's p is class 1's."""
        return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p

    def __init__(self, spec, groups: np.ndarray | None = None):
        """`spec`: the training's Objective; `groups`: its query boundaries (ranking objectives)."""
        self.spec = spec
        self.n_outputs = spec.n_outputs
        self.levels = self.quantile_levels(spec)  # per output; None: no renewal

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
        if bound * w_max < FLOAT32_SAFE:
            return
        if weights is None or bound >= FLOAT32_SAFE:
            raise ValueError(f"y: labels up to {float(np.abs(y).max()):.3g} give gradients beyond float32's range "
                             f"(up to {FLOAT32_MAX:.3g}); rescale y")
        raise ValueError(f"weights: weights up to {w_max:.3g} with these labels give gradients beyond float32's "
                         f"range (up to {FLOAT32_MAX:.3g}); rescale the weights")

    def init_scores(self, y: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    def kernel_parameters(self) -> float | np.ndarray:
        """The kernel's number per output (one for all): see _gradients.pointwise."""
        return 0.0

    def gradient_kernel(self, margins, y, weights, out, n_threads: int) -> _gradients.GradientKernel:
        """The gradients of `margins` into `out` as a C kernel bound to these buffers: the
        boosting round calls it without the GIL, as the margins change."""
        w = np.empty(0) if weights is None else weights
        return _gradients.GradientKernel(self.kernel, margins, kernel_labels(y), w, out, n_threads,
                                          parameters=self.kernel_parameters())

    def gradients(self, margins, y, weights, out, n_threads: int) -> None:
        self.gradient_kernel(margins, y, weights, out, n_threads).run()

    # boosters.dask: the start from sums reduced over the partitions
    def label_sums(self, y: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
        """A partition's share of what init_scores needs (float64 `y` and `weights`; the
        caller appends the weight total): this default, the (weighted) label sum per target."""
        return y.sum(axis=0) if weights is None else (weights @ y if y.ndim == 2 else (weights * y).sum())

    def init_scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """init_scores from the reduced label_sums (last entry: the weight total). This
        default holds for an objective whose start depends on the labels only through their
        weighted mean (each target's, multi-target)."""
        return self.init_scores(np.array([sums[:-1] / sums[-1]]) if len(sums) > 2 else np.array([sums[0] / sums[1]]),
                                None)


class MetricFn:
    """One metric: what it is (read by the trainer's scores, early stopping and
    boosters.dask) and its NumPy kernel on labels (n_rows,), margins (n_rows, n_outputs)
    and optional weights."""

    name: ClassVar[str]  # as Metric.name
    aliases: ClassVar[dict[str, dict]] = {}  # more names Metric(name) takes -> the parameter defaults each implies
    parameters: ClassVar[tuple[Parameter, ...]] = ()  # at most one: the value its label writes after an "@"
    objectives: ClassVar[tuple[str, ...]]  # the objectives whose margins it can score
    higher_is_better: ClassVar[bool] = False
    needs_groups: ClassVar[bool] = False  # a mean over query groups (ndcg, map)
    per_target: ClassVar[bool] = False  # scores a multi-target model: the mean over its targets
    row_mean: ClassVar[tuple | None] = None  # boosters.dask: (score -> mean over rows, mean -> score);
    #                                          None: not a mean over rows
    nan_hint: ClassVar[str] = "no defined value on this data"  # why its score can be NaN
    function: ClassVar  # the kernel (y, margins, w) -> float

    @classmethod
    def takes(cls, parameter: str) -> bool:
        """Whether it has the parameter named `parameter` (Metric's attribute)."""
        return any(p.name == parameter for p in cls.parameters)

    @classmethod
    def supports(cls, metric, objective) -> bool:
        """Whether `metric` (a Metric of this name) can score a model of `objective` by what
        the metric is; Metric.supports applies the objective's rules first."""
        return objective.name in cls.objectives

    @classmethod
    def score(cls, metric, y, margins, w, groups) -> float:
        """`metric` (a Metric of this name: its parameter) of the margins."""
        return cls.function(y, margins, w)
