"""Data-parallel growth: the driver runs the single-machine growth loop
(`training/growth/_grow.GrowthLoop`, built by `TreeGrower.exchanging` over no rows) and
this module is its exchange, the one point where distributed growth differs: each step's
splits go to the partitions, which move their rows and build the histograms of one child
of each split parent (the smaller one by the split's hessian sums, known before the
split), and a fixed tree of Dask tasks sums them into the loop's pool. Node numbering,
split rules, the subtraction trick, depth-wise levels, leaf-wise best-gain-first order,
constraints and the tree's arrays are the engine's own.

- workers (`_partition_state.py`): per tree, gradients and the root's histogram; per
  step, the step's splits applied to their rows and the chosen children's histograms;
- driver: the engine, fed the summed histograms and the children's row counts.

One growth step is one round trip: the driver has every partition split the step's nodes
and build the histograms of the children the driver picked (the smaller ones by the splits'
hessian sums), sums the results, and waits for the sum (the children's row counts and
histograms). The sums follow `reduction_tree`:

- float sums: a binary tree over the partitions fixed by their number alone (neighbours
  paired level by level), so their order of addition (and every float64 bit) depends on
  the partitioning only, never on the number of workers or on which worker holds which
  partition. Float64 histograms are summed in that tree; small float results (the renewed
  leaves' gradient sums, validation scores) travel one per partition, keyed by its first
  row (`tasks.keyed`), and the driver adds them in that order (`in_order`);
- integer sums and maxima (quantized histograms, row counts, the gradients' maxima, the
  radix selects' digit counts), and keyed results: exact in any order, so each worker
  first sums all the partitions it holds, and the workers' sums are added next.

Whatever part of the tree one worker holds all the partitions of is computed there, in one
task (`_step_runner.fold`, pinned to that worker) or in that worker's one actor call: one
result per worker, or per run of neighbouring partitions, travels instead of one per
partition. The rest are tasks of one addition each, whose last levels (up to DRIVER_FANIN
results) the driver adds itself when it gathers (one task hop less per round trip); with
actors the driver adds all of the rest.

A lost worker: a wait that outlasts LIVENESS_SECONDS checks that the partitions'
workers are alive (tasks pinned to a dead one would wait forever), and raises
LostWorker if not. The training then recovers: Dask recomputes the lost states from
their lineage (blocks, binning), every partition's state is rebuilt from the finished
trees (`tasks.resume`: each tree's recorded split steps replayed on the rows) and pinned
to its holder, and the tree grows again from its start: growth is deterministic (the
quantized rounding is seeded per row and tree), so the model is the undisturbed one.

What a wait can never outlast (`Stall`, checked at each LIVENESS_SECONDS of it): the client's
connection to the scheduler (lost: every future is gone, a RuntimeError says so), and
workers that Dask's memory monitor paused (above `distributed.worker.memory.pause` of their
memory limit a worker runs no new task): the wait logs a warning and gives them
PAUSE_GRACE_SECONDS to resume, then stops with a RuntimeError naming them.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import CancelledError, ThreadPoolExecutor

import numpy as np

from boosters._lib.logs import logger
from boosters.config import GBDTConfig
from boosters.dask import _partition_state as tasks
from boosters.dask import _quantile_select as select
from boosters.dask._step_runner import PartitionRunner, StateNotHere, fold
from boosters.model.tree import Tree
from boosters.objectives.registry import objective_fn
from boosters.training._sampling import KINDS as SAMPLER_KINDS
from boosters.training.growth.grower import TreeGrower
from boosters.training.linear_leaves import empty_sums, fitted_leaves, leaf_slots, set_linear_leaves


LIVENESS_SECONDS = 1.0  # a wait longer than this checks that the partitions' workers are alive
PAUSE_GRACE_SECONDS = 30.0  # how long a wait blocked by paused workers waits for them to resume
# what distributed raises when a wait times out (asyncio's is not the builtin before Python 3.11)
WAIT_TIMEOUTS = (TimeoutError, asyncio.TimeoutError)
# distributed's sync() returns a result it never set (UnboundLocalError) when the awaited wait
# ends with asyncio's CancelledError, a BaseException its `except Exception` misses; seen once
# under heavy load in a timed wait for a result: waited for again, at most this many times in
# a row, then taken for a lost worker (the training recovers and grows the tree again). A
# future that is done by then is fetched without a timeout instead: no timed wait, no miss (a
# loaded CI run saw the timed wait fail so again and again on finished futures)
SYNC_MISSES = 3


class LostWorker(RuntimeError):
    """A worker holding partitions left the cluster: the tasks pinned to it will never
    run. The training recovers (`Partitions.recover`) and grows the tree again."""


class Stall:
    """One wait of the driver that lasts: `check()`, called at each LIVENESS_SECONDS
    without a result, raises what would keep it waiting forever.

    - the client lost its connection to the scheduler: RuntimeError (check_connected);
    - a worker of `pinned` (the workers the awaited tasks are pinned to) left the cluster:
      LostWorker (the training recovers);
    - workers paused by their memory monitor block the wait for a task (a paused worker
      runs none; an actor call still runs there, `tasks=False`): those of `pinned`, those
      with tasks assigned, or all when none runs. A warning is logged when first seen, and
      a RuntimeError naming them raised when they stay paused PAUSE_GRACE_SECONDS."""

    def __init__(self, client, pinned=()):
        self.client, self.pinned = client, set(pinned)
        self.paused_since = None

    def check(self, tasks: bool = True) -> None:
        statuses = worker_statuses(self.client)
        lost = sorted(self.pinned - set(statuses))
        if lost:
            raise LostWorker(f"boosters.dask: worker(s) {', '.join(lost)} holding partitions left the cluster")
        blocking = self._paused(statuses) if tasks else []
        if not blocking:
            self.paused_since = None
        elif self.paused_since is None:
            self.paused_since = time.monotonic()
            logger.warning("boosters.dask: worker(s) %s paused by Dask's memory monitor (process memory above "
                           "distributed.worker.memory.pause of the memory limit): they run no task; the training "
                           "waits up to %.0f s for them to resume", ", ".join(blocking), PAUSE_GRACE_SECONDS)
        elif time.monotonic() - self.paused_since >= PAUSE_GRACE_SECONDS:
            raise RuntimeError(
                f"boosters.dask: worker(s) {', '.join(blocking)} stayed paused for {PAUSE_GRACE_SECONDS:.0f} s: Dask "
                f"pauses a worker whose process memory is above distributed.worker.memory.pause of its memory limit "
                f"(0.8 by default), and a paused worker runs no task, so the training cannot go on. Give the workers "
                f"more memory (a larger memory_limit, or more workers for the same data), train on fewer, larger "
                f"partitions (each partition's state costs memory of its own), or release other data they hold")

    def _paused(self, statuses: dict) -> list:
        """The paused workers that block the wait (see the class)."""
        paused = sorted(w for w, status in statuses.items() if status == "paused")
        if not paused or len(paused) == len(statuses):
            return paused
        try:
            busy = {w for w, keys in self.client.processing(workers=paused).items() if keys}
        except OSError:  # the scheduler went away just now
            check_connected(self.client)
            raise
        return [w for w in paused if w in self.pinned or w in busy]


def check_connected(client) -> None:
    """RuntimeError unless the client is connected to its scheduler: when it loses the
    connection, Dask drops every future (the partitions' states with them)."""
    if client.status != "running":
        address = getattr(client.scheduler, "address", None) or "?"
        raise RuntimeError(f"boosters.dask: the client lost its connection to the Dask scheduler at {address} "
                           f"(client status {client.status!r}): the scheduler stopped or cannot be reached, and the "
                           f"training's data on the workers went with it; start the scheduler (or the cluster) again "
                           f"and train again")


def worker_statuses(client) -> dict:
    """Address -> status ("running", "paused", ...) of the workers in the cluster now."""
    check_connected(client)
    try:
        workers = client.scheduler_info(n_workers=-1)["workers"]
    except OSError:  # the scheduler went away just now
        check_connected(client)
        raise
    return {address: str(info.get("status", "running")) for address, info in workers.items()}


DRIVER_FANIN = 4  # a reduction's last levels (at most this many results) are summed by the driver


def pairwise_levels(items: list, combine, keep: int = 1) -> list:
    """Neighbours combined pairwise, level by level (an order fixed by their number alone),
    until at most `keep` items are left."""
    while len(items) > keep:
        pairs = [combine(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = pairs + items[len(items) - len(items) % 2:]
    return items


def reduction_tree(workers: list, any_order: bool, keep: int = 1) -> list:
    """The order in which a sum over the partitions (partition i held by workers[i]) adds
    them: nested pairs (a, b) of partition indices, `pairwise_levels` of them until at most
    `keep` are left (the driver adds those). Float sums (`any_order` False): neighbours
    paired level by level over all the partitions, an order fixed by their number alone.
    Exact sums (`any_order`): each worker's partitions paired first, then the workers'
    sums (workers sorted by address), so that a worker holds all of its sum's partitions."""
    def pair(a, b):
        return a, b

    if not any_order:
        return pairwise_levels(list(range(len(workers))), pair, keep)
    mine = {}
    for i, worker in enumerate(workers):
        mine.setdefault(worker, []).append(i)
    return pairwise_levels([pairwise_levels(mine[w], pair)[0] for w in sorted(mine)], pair, keep)


def in_order(keyed: list, op=tasks.add):
    """The sum of keyed results [(key, value)] (tasks.keyed) in the order of their keys:
    pairwise_levels over the partitions, the fixed order of float sums."""
    return pairwise_levels([value for _, value in sorted(keyed, key=lambda kv: kv[0])], op)[0]


def nbytes(result) -> int:
    """The bytes of a result's arrays: an array, a tuple of results, a keyed list (tasks.keyed)."""
    if isinstance(result, tuple):
        return sum(nbytes(r) for r in result)
    if isinstance(result, list):
        return sum(nbytes(value) for _, value in result)
    return np.asarray(result).nbytes


def holder(tree, workers: list):
    """The worker holding every partition of `tree` (a partition index or a pair of
    trees), None when they are on several."""
    if isinstance(tree, int):
        return workers[tree]
    left, right = holder(tree[0], workers), holder(tree[1], workers)
    return left if left == right else None


def held_parts(tree, workers: list, out: dict) -> None:
    """The largest parts of `tree` that one worker holds all the partitions of, appended
    to out[worker] (in the tree's order)."""
    worker = holder(tree, workers)
    if worker is not None:
        out.setdefault(worker, []).append(tree)
    else:
        held_parts(tree[0], workers, out)
        held_parts(tree[1], workers, out)


def localized(trees: list) -> tuple[list, list]:
    """The partition indices of `trees` in order, and the trees with each index replaced by
    its position in that list (what `fold` takes)."""
    indices = []

    def local(tree):
        if isinstance(tree, int):
            indices.append(tree)
            return len(indices) - 1
        return local(tree[0]), local(tree[1])

    return indices, [local(tree) for tree in trees]


def first_rows(chunks: tuple) -> np.ndarray:
    """Each partition's first row in the whole data (int64), from the partitions' row counts."""
    return np.concatenate([[0], np.cumsum(chunks)[:-1]]).astype(np.int64)


def gather(client, futures):
    """client.gather(futures) (a future or a list of them) after wait_for: bounded by what
    a Stall checks."""
    wait_for(futures if isinstance(futures, list) else [futures])
    try:
        return client.gather(futures)
    except Exception:
        check_connected(client)
        raise


def fixed_sum(client, futures: list, op=tasks.add):
    """The sum (or another `op`) of task results, as a task: `pairwise_levels` of tasks."""
    return pairwise_levels(futures, lambda a, b: client.submit(op, a, b, pure=False))[0]


class DriverSum:
    """A sum the driver finishes when it gathers the results (`Partitions.gather`):
    `items` are results (futures, actor call results) or pairs of items, each pair added
    (op(left, right)), then the items' values added pairwise level by level: the order of
    `reduction_tree`, so the same bits as tasks adding them, one task hop less per round
    trip."""

    def __init__(self, items: list, op):
        self.items, self.op = items, op

    @property
    def futures(self) -> list:
        """The results to fetch, in the order `finish` takes their values."""
        def results(item):
            return results(item[0]) + results(item[1]) if isinstance(item, tuple) else [item]

        return [r for item in self.items for r in results(item)]

    def finish(self, values: list):
        values = iter(values)

        def value(item):
            return self.op(value(item[0]), value(item[1])) if isinstance(item, tuple) else next(values)

        return pairwise_levels([value(item) for item in self.items], self.op)[0]


class RunnerResult:
    """One result of an actor call that ran a step on a worker's partitions
    (`steps="actors"`): the sum of one of the parts it was given."""

    def __init__(self, call, index: int, worker: str):
        self.call, self.index, self.worker = call, index, worker

    def result(self, timeout=None):
        return self.call.result(timeout=timeout)[self.index]

    def done(self) -> bool:
        return self.call.done()


class Gathered:
    """A reduction the driver already waited for (`steps="actors"`): later calls take its value."""

    def __init__(self, value):
        self.value = value


class Partitions:
    """The partitions' states (futures) and the workers holding them: runs a function on
    every partition and sums the results (`summed`).

    `actors=False`: tasks pinned to the workers holding the states, each summing the
    results of a part of the reduction tree its worker holds, then tasks adding those,
    whose last levels the driver adds. `actors=True`: one Dask actor per worker
    (`_step_runner.PartitionRunner`) runs the function on that worker's states and sums
    the parts it holds, in one call per worker, and the driver adds the rest in the same
    order (the same bits). The calls skip the scheduler (a round trip of a few
    milliseconds instead of tens), and the driver receives each worker's sums instead of
    the last few. Sequential passes (`chain`) and rebuilding after a loss stay tasks in both."""

    def __init__(self, client, states: list, actors: bool = False):
        self.client = client
        self.states = states
        self.workers = self._holders(states)
        self.pending = []        # the tasks (or actor calls) submitted since the last completed wait
        self.round_trips = 0     # driver waits
        self.driver_bytes = 0    # of the results the driver gathered
        self.partition_bytes = 0  # of the histograms the partitions' tasks produced
        self.step_tasks = 0      # tasks (actor calls) that `summed` submitted
        self.runners = {} if actors else None  # worker -> its PartitionRunner actor (and the actor's future)
        if actors:
            self._start_runners()

    def _holders(self, states: list) -> list:
        holders = self.client.who_has(states)
        return [sorted(holders[s.key])[0] for s in states]

    def _start_runners(self) -> None:
        """A runner on every worker holding partitions (those of lost workers dropped)."""
        self.runners = {w: r for w, r in self.runners.items() if w in set(self.workers)}
        new = {w: self.client.submit(PartitionRunner, actor=True, workers=[w], allow_other_workers=False, pure=False)
               for w in sorted(set(self.workers) - set(self.runners))}
        self._wait(list(new.values()), pinned=True)
        with self.client.as_current():  # the actor handles bind to the current client: ours, not the default
            self.runners.update({w: (future.result(), future) for w, future in new.items()})

    def summed(self, function, *args, each=None, op=tasks.add, any_order: bool = False, for_workers: bool = False):
        """The sum (by `op`) of function(state_i, *args) over the partitions, each run on the
        worker holding state_i (pure=False: the tasks mutate the states, never deduplicate
        them); `each`: one more argument per partition, each[i] for state_i. `any_order`:
        op's results are the same bits in any order of addition (integers, maxima), and
        each worker adds its partitions' results first (see reduction_tree). A future when
        later tasks take the sum (`for_workers`; with actors, the gathered value), else a
        DriverSum for `gather`."""
        each = [()] * len(self.states) if each is None else [(e,) for e in each]
        if self.runners is not None:
            result = self._summed_by_actors(function, args, each, op, reduction_tree(self.workers, any_order))
            return Gathered(self.gather(result)) if for_workers else result
        trees = reduction_tree(self.workers, any_order, 1 if for_workers else DRIVER_FANIN)
        items = [self._submit_sum(tree, function, args, each, op) for tree in trees]
        return items[0] if for_workers else DriverSum(items, op)

    def _submit_sum(self, tree, function, args: tuple, each: list, op):
        """A future of the sum of `tree`'s partitions: a `fold` task on the worker holding
        them all, else a task adding the sums of its two halves."""
        worker = holder(tree, self.workers)
        if worker is None:
            future = self.client.submit(op, self._submit_sum(tree[0], function, args, each, op),
                                        self._submit_sum(tree[1], function, args, each, op), pure=False)
        else:
            indices, (local,) = localized([tree])
            future = self.client.submit(fold, function, [self.states[i] for i in indices], args,
                                        [each[i] for i in indices], local, op, workers=[worker],
                                        allow_other_workers=False, pure=False)
        self.pending.append(future)
        self.step_tasks += 1
        return future

    def _summed_by_actors(self, function, args: tuple, each: list, op, trees: list) -> DriverSum:
        """The parts of `trees` each worker holds summed in one actor call per worker; the rest by the driver."""
        args = tuple(a.value if isinstance(a, Gathered) else a for a in args)
        parts = {}
        for tree in trees:
            held_parts(tree, self.workers, parts)
        results = {}  # a held part (its tree) -> its result
        for worker in sorted(parts):
            if self.runners[worker][1].status != "finished":  # its worker is gone, the actor with it
                raise LostWorker(f"boosters.dask: worker {worker} holding partitions left the cluster")
            indices, local = localized(parts[worker])
            call = self.runners[worker][0].run(function, [self.states[i].key for i in indices], args,
                                               [each[i] for i in indices], local, op)
            for j, tree in enumerate(parts[worker]):
                results[tree] = RunnerResult(call, j, worker)
            self.step_tasks += 1
        self.pending += list(results.values())

        def item(tree):
            return results[tree] if tree in results else (item(tree[0]), item(tree[1]))

        return DriverSum([item(tree) for tree in trees], op)

    def chain(self, function, first, *args) -> list:
        """function(state_i, *args, previous) on every partition in order, `previous` being
        `first` for the first one and the result of the one before for the others: a pass
        over all the rows in order, one pinned task after the other."""
        futures, previous = [], first
        for state, worker in zip(self.states, self.workers):
            previous = self.client.submit(function, state, *args, previous, workers=[worker],
                                          allow_other_workers=False, pure=False)
            futures.append(previous)
        self.pending += futures
        return futures

    def gather(self, futures, histograms: int = -1):
        """The results of `futures` (futures, DriverSums or Gathered; one wait); `histograms`:
        which of them is a reduced histogram (each partition produced one of its size), -1 none. LostWorker if a
        worker holding partitions leaves the cluster meanwhile."""
        self.round_trips += 1
        parts, stall = [], Stall(self.client, self.workers)
        for item in futures if isinstance(futures, list) else [futures]:
            if isinstance(item, Gathered):
                parts.append(item.value)
                continue
            values = [self._result(f, stall) for f in (item.futures if isinstance(item, DriverSum) else [item])]
            self.driver_bytes += sum(nbytes(value) for value in values)
            parts.append(item.finish(values) if isinstance(item, DriverSum) else values[0])
        self.pending = []  # all done: every task submitted so far fed these results
        results = parts if isinstance(futures, list) else parts[0]
        if histograms >= 0:
            self.count_histograms(parts[histograms])
        return results

    def count_histograms(self, reduced) -> None:
        """A reduced histogram gathered: each partition produced one of its size."""
        self.partition_bytes += len(self.states) * np.asarray(reduced).nbytes

    def _result(self, future, stall: Stall):
        """The future's result; LostWorker if a worker holding a partition left the
        cluster meanwhile (its pinned tasks would wait for it forever); what else `stall`
        raises (a lost scheduler, paused workers)."""
        misses = 0
        while True:
            try:
                return future.result(timeout=LIVENESS_SECONDS)
            except WAIT_TIMEOUTS:
                stall.check(tasks=not isinstance(future, RunnerResult))  # an actor call runs on a paused worker
            except UnboundLocalError as error:  # see SYNC_MISSES
                if future.done():
                    return future.result()
                misses += 1
                check_connected(self.client)
                if misses > SYNC_MISSES:
                    raise LostWorker("boosters.dask: a wait for a partition's result kept failing inside "
                                     "distributed") from error
            except CancelledError as error:  # Dask gave up a task whose inputs were lost: recover tells why
                check_connected(self.client)  # or every future went with the scheduler
                raise LostWorker("boosters.dask: a partition's task was cancelled (its worker left?)") from error
            except (OSError, StateNotHere) as error:
                # an actor call whose worker went away (before the scheduler knows it), or whose state
                # moved: recover (safe even if the worker lives); an OSError of the step itself is the step's
                check_connected(self.client)
                if not isinstance(future, RunnerResult) or not (
                        isinstance(error, StateNotHere) or type(error).__name__ == "CommClosedError"
                        or "contact Actor's worker" in str(error)):
                    raise
                raise LostWorker(f"boosters.dask: worker {future.worker} holding partitions did not answer") from error
            except Exception:  # a lost scheduler can surface as anything (distributed's own errors too): say so
                check_connected(self.client)
                raise

    def recover(self, rebuild, *args, each=None) -> None:
        """After a lost worker: the abandoned tasks released; once Dask has recomputed the
        lost states from their data (their lineage: the raw blocks, then the binning),
        every state replaced by rebuild(state, *args), a new state made on the worker that
        holds the old one, or, where a worker holds more partitions than an even share, on
        a live worker holding fewer (a replacement worker, say: the old state's data moves
        there once, see PartitionState.__reduce__; later tasks are pinned where the new one
        is). The states on the live workers are rebuilt too (a task of the abandoned step
        may still be using them). `each`: one more argument per partition (as summed).
        LostWorker if another worker is lost meanwhile (recover again)."""
        for future in self.pending:  # no one wants them any more: the scheduler forgets them
            if isinstance(future, RunnerResult):
                self._finish_call(future)
            else:
                future.release()
        self.pending = []
        self._wait(self.states, pinned=False)
        self.workers = balanced(self._holders(self.states), alive_workers(self.client))
        # a preference, not a pin: should this worker die too, Dask must be able to
        # recompute the new state elsewhere from its lineage (a pinned task could not run)
        each = [()] * len(self.states) if each is None else [(e,) for e in each]
        rebuilt = [self.client.submit(rebuild, state, *args, *extra, workers=[worker], allow_other_workers=True,
                                      pure=False)
                   for state, worker, extra in zip(self.states, self.workers, each)]
        self._wait(rebuilt, pinned=False)
        self.states = rebuilt
        self.workers = self._holders(rebuilt)
        if self.runners is not None:
            self._start_runners()

    def _finish_call(self, item: RunnerResult) -> None:
        """Wait for an abandoned actor call to end while its worker lives: it may still be
        using a state that the rebuilding is about to read (an actor runs beside the
        worker's task thread, not after it)."""
        while True:
            try:
                item.result(timeout=LIVENESS_SECONDS)
                return
            except WAIT_TIMEOUTS:
                if item.worker not in alive_workers(self.client):
                    return
            except Exception:  # noqa: BLE001 - its error belongs to the abandoned step
                return

    def _wait(self, futures: list, pinned: bool) -> None:
        """wait_for the tasks; `pinned`: they run on self.workers, check that those are alive."""
        wait_for(futures, Stall(self.client, self.workers if pinned else ()))


def alive_workers(client) -> list:
    """The addresses of the workers in the cluster now, sorted."""
    return sorted(worker_statuses(client))


def balanced(holders: list, alive: list) -> list:
    """Per partition, the worker to keep its state on: its holder, unless the holder has
    more than an even share (ceil(partitions / live workers)); the surplus (its last
    partitions) goes to the live workers holding the fewest, in order."""
    if not alive:
        return list(holders)
    share = -(-len(holders) // len(alive))
    counts = {w: 0 for w in alive}
    for w in holders:
        counts[w] = counts.get(w, 0) + 1
    targets = list(holders)
    for i in reversed(range(len(holders))):
        fewest = min(alive, key=lambda w: (counts[w], w))
        if counts[holders[i]] > share and counts[fewest] < share:
            counts[holders[i]] -= 1
            counts[fewest] += 1
            targets[i] = fewest
    return targets


def wait_for(futures: list, stall: Stall | None = None) -> None:
    """Wait for tasks whose results stay on the workers (never fetched); raise a task's
    error, or a RuntimeError when Dask cancelled one (a lost input it cannot recompute).
    `stall` is checked at each LIVENESS_SECONDS of waiting (default: one for tasks pinned
    nowhere: it raises for a lost scheduler or paused workers)."""
    for future in futures:
        stall = Stall(future.client) if stall is None else stall
        while True:
            try:
                error = future.exception(timeout=LIVENESS_SECONDS)  # waits; fetches no result
                break
            except WAIT_TIMEOUTS:
                stall.check()
            except UnboundLocalError:  # see SYNC_MISSES
                if not future.done():
                    stall.check()
                    continue
                error = future.exception()
                break
            except CancelledError:
                error = None
                break
            except Exception:  # a lost scheduler can surface as anything (distributed's own errors too): say so
                check_connected(future.client)
                raise
        if future.status == "cancelled":
            check_connected(future.client)  # or every future went with the scheduler
            raise RuntimeError("boosters.dask: a partition was lost with its worker (the worker died, or its "
                               "nanny restarted it: above distributed.worker.memory.terminate of its memory "
                               "limit, say) and Dask cannot recompute it (its data has no recipe Dask can run "
                               "again, e.g. it was scattered to that worker); train on data Dask can rebuild, "
                               "such as data read from storage or embedded in the graph")
        if error is not None:
            raise error


class PartitionExchange:
    """The growth loop's exchange over partitions (GrowthLoop's `exchange`): each step's
    splits go to every partition, which moves its rows and builds the histograms asked for;
    the sums go into the loop. How a sum over the partitions is made is the subclass's
    `_sum(function, *args, op, any_order)`: the driver's tasks or actor calls
    (DaskTreeGrower), or the engines' worker-to-worker exchange (_engine.WorkerEngine).
    Both add in `reduction_tree`'s order: the same bits. Needs `tree_index`, `quantizer`,
    `histograms` (the loop's pool) and `steps` (the tree's steps as sent, for a replay)."""

    def step(self, loop, n_splits: int, n_built: int, n_leaves: int) -> None:
        """One growth step of `loop` (GrowthLoop.step_splits, step_nodes): every partition
        splits its rows and builds the histograms of the children to build; their sums
        (integers, quantized histograms: in any order; float64 histograms: in the
        partitions' fixed order) go into the pool, the left children's rows into
        step_counts, and on the tree's last step the leaves' float sums (quantized
        training) into leaf_sums, added in the partitions' order."""
        splits = np.asarray(loop.step_splits)[:n_splits]
        sent = self._with_categories(splits[:, :6].copy(), splits, loop)
        self.steps.append(sent)
        built = np.asarray(loop.step_nodes)[:n_built].tolist()
        leaves = np.asarray(loop.step_nodes)[:n_leaves].tolist()
        counts, hist, leaf_sums = self._sum(tasks.split_and_build, self.tree_index, sent, built, leaves,
                                            op=tasks.add_each, any_order=self.quantizer is not None)
        self._count_histograms(hist)
        np.asarray(loop.step_counts)[:n_splits] = counts[0]
        for node, histogram in zip(built, hist):
            self.histograms[node] = histogram
        if leaves:
            np.asarray(loop.leaf_sums)[:n_leaves] = in_order(leaf_sums)

    def leaf_sums(self, loop, n_leaves: int) -> None:
        """The float gradient sums of the leaves step_nodes[:n_leaves] into leaf_sums,
        added in the partitions' order."""
        leaves = np.asarray(loop.step_nodes)[:n_leaves].tolist()
        sums = in_order(self._sum(tasks.keyed, tasks.leaf_sums, self.tree_index, leaves, any_order=True))
        np.asarray(loop.leaf_sums)[:n_leaves] = sums

    def _count_histograms(self, histograms: list) -> None:
        """A step's histograms were summed (the driver's path counts their bytes)."""

    @staticmethod
    def _with_categories(splits: np.ndarray, step: np.ndarray, loop) -> np.ndarray:
        """The step's split rows as the partitions take them (tasks.split_rows): when a
        split is categorical, every row gets a flag (1: categorical) and the words of its
        bitset of the bins going left."""
        categorical = step[:, 6].astype(bool)
        if not categorical.any():
            return splits
        words = np.asarray(loop.category_bins)
        extra = np.zeros((len(splits), 1 + words.shape[1]), dtype=np.int64)
        extra[categorical, 0] = 1
        extra[categorical, 1:] = words[splits[categorical, 0]]
        return np.hstack([splits, extra])


class DaskTreeGrower(PartitionExchange):
    """Grows the trees of a training whose rows live in `partitions` (binned with
    `mapper`; `layout`: a BinnedMatrix of the same bins, no rows needed; `quantizer`: the
    partitions' (bits, levels, seed), None for float64 histograms). The growth loop, the
    split search and the tree's assembly are the single-machine engine's
    (`TreeGrower.exchanging`); this is its exchange: each growth step's splits go to the
    partitions, which split their rows and build the histograms, summed here in the
    partitions' fixed order (`step`). It also starts each tree on the partitions (DART,
    row samples, GOSS, quantization), selects the quantile leaves' values and fits the
    linear leaves over the partitions."""

    def __init__(self, partitions: Partitions, mapper, layout, config: GBDTConfig, n_rows: int, quantizer=None,
                 feature_names=None):
        self.partitions = partitions
        self.quantizer = quantizer
        self.config = config
        self.n_rows = n_rows
        self.n_outputs = config.objective.n_outputs  # trees per round
        self.engine = TreeGrower.exchanging(self, layout, mapper, config, n_rows, self.n_outputs,
                                            "f64" if quantizer is None else "i16", feature_names)
        self.histograms = self.engine.pool.data  # slot i: node i's histogram, summed over the partitions
        self.sampler = None  # the row sampler (sample_rows), None: every tree sees every row
        self.sample_seconds = 0.0  # the driver's time drawing the row samples' partition counts
        self.sample_bytes = 0  # what the partitions were sent to draw their part of the samples
        # per grown tree: (output, its split steps, leaf nodes, leaf values, and with a row
        # sample the tree's splits for the other rows), for `resume`
        self.finished = []
        # absolute, pinball: the leaves renewed to their residuals' quantile at each output's level
        self.leaf_quantiles = objective_fn(config.objective).quantile_levels(config.objective)
        self.learning_rate = config.learning_rate  # DART: each round's (smaller when rounds are dropped)
        # linear leaves: fitted after each tree on the partitions' raw rows (normal equations chained over them)
        self.linear = config.linear_leaves
        self.numeric = ~np.asarray(mapper.is_categorical)
        self.linear_l1, self.linear_l2 = config.linear_l1, config.linear_l2
        self.dart_rounds = []  # DART: per round chosen so far, tasks.dart_round's record (None: none dropped)
        self.resumed = False  # the partitions were rebuilt: the next tree starts from their margins as they are
        self.resumed_before_dart = False  # ... but not from the next round's DART record (see resume)

    # -- one tree ---------------------------------------------------------------------------

    def sample_rows(self, sampler, chunks: tuple, query_sizes=None) -> None:
        """Sample each round's rows with `sampler` (the library's RowSampler of the whole
        training, uniform or GOSS): `chunks` are the partitions' row counts, in order;
        with `query_sizes` (per partition, its queries' rows) a uniform sampler draws whole
        queries (its "rows" are the query indices)."""
        if sampler is not None and sampler.kind not in (SAMPLER_KINDS["uniform"], SAMPLER_KINDS["goss"]):
            raise ValueError("boosters.dask samples rows uniformly or by GOSS only")
        self.sampler = sampler
        self.goss = sampler is not None and sampler.kind == SAMPLER_KINDS["goss"]
        self.goss_starts = {}  # GOSS round -> per partition: where the round's selection pass stands at its first row
        self.bounds = first_rows(chunks if query_sizes is None else [len(s) for s in query_sizes])
        self.query_sizes = None if query_sizes is None else np.concatenate(query_sizes)
        self.sample_sizes = {}  # round -> rows of the round's sampled queries (sampling whole queries)
        self.counts = {}  # round -> per partition: the round's sampled rows before its first row
        self.next_counts = None  # (round, future): the next round's counts, drawn while this round grows
        self.executor = None

    def _round_sample(self, round_: int) -> list:
        """Per partition, what it needs to draw its part of the round's row sample itself:
        (round, sampled rows before its first row). The driver's one pass over the row
        indices (O(n_rows) time, O(partitions) memory) per round, in a thread while the
        round before grows (taken_below releases the GIL)."""
        if round_ not in self.counts:
            start = time.perf_counter()
            if self.next_counts is not None and self.next_counts[0] == round_:
                self.counts[round_] = self.next_counts[1].result().tolist()
            else:
                self.counts[round_] = self.sampler.taken_below(round_, self.bounds).tolist()
            self.sample_seconds += time.perf_counter() - start  # what the driver waited for
            self.sample_bytes += 16 * len(self.bounds)
            self.next_counts = None
            if round_ + 1 < self.config.n_estimators:
                if self.executor is None:  # one thread, ended when the training's grower goes
                    self.executor = ThreadPoolExecutor(1, thread_name_prefix="boosters-dask-sample")
                self.next_counts = (round_ + 1, self.executor.submit(self.sampler.taken_below, round_ + 1,
                                                                     self.bounds))
            elif self.executor is not None:
                self.executor.shutdown(wait=False)
                self.executor = None
        return [(round_, n) for n in self.counts[round_]]

    def resume(self, n_outputs: int) -> None:
        """After a lost worker: every partition rebuilt with the margins of the finished
        trees and the gradients of their round (see Partitions.recover); with row sampling,
        each round's sample drawn again by every partition."""
        each, n_parts = None, len(self.partitions.states)
        if self.goss:  # the rounds whose samples were drawn (the current one's may still be to draw)
            rounds = []
            for r in range(len(self.finished) // n_outputs + 1):
                if r >= self.sampler.warmup_rounds and r not in self.goss_starts:
                    break
                rounds.append(self.goss_starts.get(r, [None] * n_parts))
            each = [[r[i] for r in rounds] for i in range(n_parts)]
        elif self.sampler is not None:
            rounds = [self._round_sample(r) for r in range(len(self.finished) // n_outputs + 1)]
            each = [[r[i][1] for r in rounds] for i in range(n_parts)]
        self.partitions.recover(tasks.resume, self.finished, n_outputs, self.dart_rounds, each=each)
        self.resumed = True
        # lost between two rounds, before DART chose the next one's dropout: the rebuilt
        # partitions did not start that round, its first tree starts it
        self.resumed_before_dart = 0 < len(self.dart_rounds) <= len(self.finished) // n_outputs

    def grow_tree(self, previous_leaves, output: int, new_round: bool, tree_index: int) -> Tree:
        """The tree of `output` (the training's tree `tree_index`, the next one to grow),
        after adding `previous_leaves` (see tasks.start_tree) to the workers' margins (a new
        round's start takes DART's record of the round, dart_rounds[round], too)."""
        if tree_index != len(self.finished):
            raise ValueError(f"tree_index: the next tree is {len(self.finished)}, got {tree_index}")
        p = self.partitions
        if self.resumed:  # the rebuilt margins hold every finished tree, the gradients are the round's
            previous_leaves, new_round = None, new_round and self.resumed_before_dart
        if previous_leaves is not None:  # the splits for the rows outside its sample, its linear leaves (or None)
            previous_leaves = (*previous_leaves, *self.finished[-1][4:])
        # a new round's row sample (round tree_index // n_outputs): each partition draws its part
        round_ = 0 if self.sampler is None else tree_index // self.sampler.n_outputs
        goss_round = self.goss and round_ >= self.sampler.warmup_rounds
        if goss_round and round_ not in self.goss_starts:  # a new round, or one resumed before its sample
            self._goss_sample(round_, tree_index, previous_leaves, self._dart_record(tree_index))
            previous_leaves, new_round = None, False  # added, and the round's gradients computed
        sample = (self._round_sample(round_)
                  if self.sampler is not None and not self.goss and new_round else None)
        sampled = self.sampler is not None and (goss_round or not self.goss)
        self.tree_index, self.output = tree_index, output
        self.steps = []  # the splits sent to the partitions, step by step
        start = (tree_index, previous_leaves, output, new_round, self._dart_record(tree_index) if new_round else None)
        if self.quantizer is None:  # no gradient scales to agree on first: the root's histogram in the same call
            self.histograms[0] = p.gather(p.summed(tasks.start_float_tree, *start, each=sample), histograms=0)
        else:
            # the maxima of absolute values: the same in any order; the root's tasks take them
            maxima = p.summed(tasks.start_tree, *start, each=sample, op=tasks.maximum, any_order=True, for_workers=True)
            maxima, self.histograms[0] = p.gather([maxima, p.summed(tasks.root_histogram, tree_index, maxima,
                                                                    any_order=True)],
                                                  histograms=1)
            self.engine.builder.scales[:] = tasks.quantization_scales(maxima, self.quantizer[1])
        self.resumed = False  # the partitions started the tree: from now on as any other
        tree = self.engine.grow_exchanged(output, tree_index, self._sampled_rows(round_) if sampled else self.n_rows,
                                          self.learning_rate,
                                          None if self.leaf_quantiles is None else self._leaf_quantiles)
        if self.linear:
            self._fit_linear(tree)
        outside = None
        if self.sampler is not None:  # the rows outside the sample follow the tree's own rule, as at prediction:
            default_left = np.asarray(tree.default_left, dtype=np.int64)  # the growth steps' splits (category
            outside = [step.copy() for step in self.steps]  # sets too) with the tree's missing-value directions
            for step in outside:
                step[:, 3] = default_left[step[:, 0]]
        self.finished.append((self.output, self.steps, *self.leaves(tree), outside, tree if self.linear else None))
        return tree

    # -- the engine's exchange (PartitionExchange) --------------------------------------------

    def _sum(self, function, *args, op=tasks.add, any_order: bool = False):
        p = self.partitions
        return p.gather(p.summed(function, *args, op=op, any_order=any_order))

    def _count_histograms(self, histograms: list) -> None:
        self.partitions.count_histograms(histograms)

    def _sampled_rows(self, round_: int) -> int:
        """The rows of the round's sample: the sampler's count, or when it draws whole
        queries, their rows (the driver draws the query indices, O(queries))."""
        if self.query_sizes is None:
            return self.sampler.n_sample
        if round_ not in self.sample_sizes:
            order = np.empty(len(self.query_sizes), dtype=np.uint32)
            k = self.sampler.draw_range(round_, 0, len(order), 0, order)
            self.sample_sizes[round_] = int(self.query_sizes[order[:k].astype(np.int64)].sum())
        return self.sample_sizes[round_]

    def _dart_record(self, tree_index: int):
        """DART's record of the tree's round (tasks.dart_round), None without DART."""
        return self.dart_rounds[tree_index // self.n_outputs] if self.dart_rounds else None

    def _goss_sample(self, round_: int, tree_index: int, previous_leaves, dart) -> None:
        """The round's GOSS sample, the single-machine one: the previous tree added and the
        round's gradients and scores computed on every partition, the top_k-th largest
        score found exactly by a radix select over the partitions' reduced digit counts
        (one round trip per digit), then the selection pass over the rows in partition
        order (a chain of tasks, each partition's rows drawn from where the one before
        left the pass). Where the pass stood at each partition is kept, for `resume`."""
        p, sampler = self.partitions, self.sampler
        k, prefix, fixed_low = sampler.top_k, 0, 64
        counts = p.gather(p.summed(tasks.start_goss_round, tree_index, previous_leaves, dart, select.SHIFTS[0],
                                   any_order=True))
        for j, shift in enumerate(select.SHIFTS):
            if j:
                counts = p.gather(p.summed(tasks.goss_digits, tree_index, prefix, fixed_low, shift, any_order=True))
            from_top, rank = select.digit_at(np.asarray(counts)[::-1], k - 1)  # the k-th largest's digit
            digit, k = len(counts) - 1 - from_top, rank + 1
            prefix, fixed_low = prefix | (digit << shift), shift
        threshold = float(np.array(prefix, dtype=np.uint64).view(np.float64))
        # k: the rows scoring the threshold itself that the top set takes (the first ones)
        start = (threshold, k, self.n_rows - sampler.top_k, sampler.other_k)
        ends = p.gather(p.chain(tasks.goss_draw, start, tree_index, round_))
        self.goss_starts[round_] = [start] + ends[:-1]

    def _fit_linear(self, tree: Tree) -> None:
        """The tree's linear leaves, as single-machine LinearLeafFitter fits them: the
        normal equations summed over the partitions' rows by a chain of tasks in partition
        order (the single-machine sums, in row order), solved here."""
        paths, fitted = fitted_leaves(tree, self.numeric, self.tree_index // self.n_outputs == 0)
        sums = None
        if fitted:
            p, slots = self.partitions, leaf_slots(tree, fitted, paths)
            sums = p.gather(p.chain(tasks.linear_sums, empty_sums(slots), self.tree_index, tree, slots))[-1]
        set_linear_leaves(tree, paths, fitted, sums, self.learning_rate, self.linear_l1, self.linear_l2)

    def _leaf_quantiles(self, leaves: list, counts: list) -> list:
        """Absolute and pinball: the quantile (the output's level) of each leaf's rows'
        residuals, selected exactly over the partitions (_quantile_select)."""
        p, index = self.partitions, self.tree_index

        def digits(prefixes, fixed_low, shift):
            return p.gather(p.summed(select.leaf_digits, index, prefixes, fixed_low, shift, any_order=True))

        def smallest_above(keys):
            return p.gather(p.summed(select.leaf_min_above, index, keys, op=select.min_of, any_order=True))

        start = p.gather(p.summed(select.leaf_start, index, leaves, any_order=True))
        alpha = float(self.leaf_quantiles[self.output])
        return select.select_quantiles(start, digits, smallest_above, counts, [alpha] * len(leaves))

    @staticmethod
    def leaves(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
        """The tree's leaf nodes and values: what the workers add to their margins."""
        leaves = np.flatnonzero(np.asarray(tree.left_child) < 0)
        return leaves, np.asarray(tree.value)[leaves]
