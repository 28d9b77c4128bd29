"""`Objective.custom`: the user's function gives each round's gradients."""

from __future__ import annotations

import numpy as np

from boosters.objectives import _gradients, transforms
from boosters.objectives.base import ObjectiveFn


class Custom(ObjectiveFn):
    """The user's function gives each round's gradients, which `fill` converts once into the
    float32 buffer the grower reads (its kernel does nothing); the model predicts the margins."""

    name = "custom"
    takes_function = True  # its function, n_outputs and base_score are CustomObjective's
    any_metric = True  # the user's loss: any metric may read its margins
    task = None  # the estimators take a callable, not the name
    kernel = None  # _gradients.CustomGradients
    transform = staticmethod(transforms.raw)

    @classmethod
    def outputs(cls, spec):
        return spec.custom_outputs  # as given

    @classmethod
    def default_metric(cls, spec):
        return None  # the user's loss: no metric is known to follow it

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
