"""The gradient kernel of a custom objective (`Objective.custom`): the trainer calls the
user's Python function before each round and copies its (grad, hess) into `out`; the
round's `compute` has nothing left to do."""

from boosters.training._objectives cimport GradientKernel


cdef class CustomGradients(GradientKernel):
    """A GradientKernel whose buffer is filled from Python (`CustomObjectiveFunction.fill`):
    the boosting rounds read `out` and the `margins` they update, as with any kernel."""

    def __init__(self,
                 const double[:, ::1] margins,   # IN: (n_outputs, n_rows), what the rounds update
                 float[:, :, ::1] out):           # IN: (n_outputs, n_rows, 2) (grad, hess), filled by the trainer
        if out.shape[0] != margins.shape[0] or out.shape[1] != margins.shape[1] or out.shape[2] != 2:
            raise ValueError(f"gradients must have shape ({margins.shape[0]}, {margins.shape[1]}, 2)")
        self.margins, self.out = margins, out
        self.n_threads = 1

    cdef void compute(self) noexcept nogil:
        pass  # filled before the round, with the GIL
