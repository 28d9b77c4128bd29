"""The worker side of `steps="actors"`: one Dask actor per worker that runs a growth
step's function on the partition states that worker holds.

An actor's method call goes from the driver to the worker directly (no scheduler, no
task), so a round trip costs a few milliseconds instead of the tens that a task's trip
through the scheduler costs. The states themselves stay ordinary Dask results (in the
worker's memory under their keys), so a lost worker's states are recomputed from their
lineage as with tasks; only the calls bypass the scheduler.
"""

from __future__ import annotations


class StateNotHere(KeyError):
    """A partition state is not (or no longer) in this worker's memory: Dask moved it."""


class PartitionRunner:
    """Runs function(state, *args, *extra) on the states held by this actor's worker."""

    def run(self, function, keys: list, args: tuple, each: list) -> list:
        """One result per key, in order; `each`: one tuple of extra arguments per key."""
        from distributed import get_worker  # on a worker: distributed is installed

        data = get_worker().data
        missing = [key for key in keys if key not in data]
        if missing:
            raise StateNotHere(f"partition state {missing[0]!r} is not on this worker")
        return [function(data[key], *args, *extra) for key, extra in zip(keys, each)]
