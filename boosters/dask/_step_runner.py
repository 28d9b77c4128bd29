"""The worker side of a growth step: `fold` runs the step's function on some of the
partition states a worker holds and sums their results there, in the order the driver
gives (see `_driver.reduction_tree`), so that one result per worker (or per run of
neighbouring partitions) travels instead of one per partition. A task runs it with
`steps="tasks"`; with `steps="actors"`, one Dask actor per worker (`PartitionRunner`).

An actor's method call goes from the driver to the worker directly (no scheduler, no
task), so a round trip costs a few milliseconds instead of the tens that a task's trip
through the scheduler costs. The states themselves stay ordinary Dask results (in the
worker's memory under their keys), so a lost worker's states are recomputed from their
lineage as with tasks; only the calls bypass the scheduler.
"""

from __future__ import annotations


class StateNotHere(KeyError):
    """A partition state is not (or no longer) in this worker's memory: Dask moved it."""


def fold(function, states: list, args: tuple, each: list, tree, op):
    """function(states[i], *args, *each[i]) for the partitions i of `tree` (a position in
    `states`, or a pair of trees), summed with op as `tree` pairs them: op(left, right).
    Each partition's result is computed when its sum needs it, so that at most one per
    level of the tree is held at a time."""
    if isinstance(tree, int):
        return function(states[tree], *args, *each[tree])
    return op(fold(function, states, args, each, tree[0], op), fold(function, states, args, each, tree[1], op))


class PartitionRunner:
    """Runs `fold` on the states held by this actor's worker."""

    def run(self, function, keys: list, args: tuple, each: list, trees: list, op) -> list:
        """fold(function, states, args, each, tree, op) for each of `trees` (positions in
        `keys`, the states' keys; `each`: one tuple of extra arguments per key)."""
        from distributed import get_worker  # on a worker: distributed is installed

        data = get_worker().data
        missing = [key for key in keys if key not in data]
        if missing:
            raise StateNotHere(f"partition state {missing[0]!r} is not on this worker")
        states = [data[key] for key in keys]
        return [fold(function, states, args, each, tree, op) for tree in trees]
