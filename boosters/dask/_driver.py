"""The driver's side of data-parallel training: the partitions and the waits for them
(`Partitions`: a function run on every partition, its results summed; `Stall`: what a wait
can never outlast; recovery after a lost worker), and the grower that keeps the training's
bookkeeping (`DaskTreeGrower`: row samples, DART's record, what a rebuilt partition
replays).

With `steps="tasks"` or `"actors"` the growth engine runs here (`_exchange.PartitionExchange`,
the single-machine growth loop over no rows of its own) and every sum over the partitions is
made by the driver: a fixed tree of Dask tasks, pinned to the workers holding the states,
whose last levels (up to DRIVER_FANIN results) the driver adds itself as it gathers; or one
actor call per worker (`_step_runner.PartitionRunner`), whose results the driver adds. Both
add in `_reduction.reduction_tree`'s order: whatever part of the tree one worker holds all
the partitions of is summed there (`_step_runner.fold`), so one result per worker (or per
run of neighbouring partitions) travels instead of one per partition. With
`steps="workers"` (the default) the engine runs on every worker (`_engine.py`) and the
driver keeps only the bookkeeping.

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
from collections.abc import Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from boosters._lib.logs import logger
from boosters.config import GBDTConfig
from boosters.dask import _partition_state as tasks
from boosters.dask._exchange import PartitionExchange
from boosters.dask._reduction import holder, localized, pairwise_levels, parts_by_worker, reduction_tree, summed_parts
from boosters.dask._step_runner import PartitionRunner, StateNotHere, fold
from boosters.model.tree import Tree
from boosters.training._sampling import KINDS as SAMPLER_KINDS


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


def nbytes(result) -> int:
    """The bytes of a result's arrays: an array, a tuple of results, a keyed list (tasks.keyed)."""
    if isinstance(result, tuple):
        return sum(nbytes(r) for r in result)
    if isinstance(result, list):
        return sum(nbytes(value) for _, value in result)
    return np.asarray(result).nbytes


def first_rows(chunks: Sequence[int]) -> np.ndarray:
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
    `results` maps parts of `trees` (see _reduction.parts_by_worker) to their results
    (futures, actor call results), which the driver adds in the order of the trees
    (_reduction.summed_parts): the same bits as tasks adding them, one task hop less per
    round trip."""

    def __init__(self, trees: list, results: dict, op):
        self.trees, self.results, self.op = trees, results, op

    @property
    def futures(self) -> list:
        """The results to fetch, in the order `finish` takes their values."""
        return list(self.results.values())

    def finish(self, values: list):
        return summed_parts(self.trees, dict(zip(self.results, values)), self.op)


class RunnerResult:
    """One result of an actor call on `worker`: for a call that ran a step on the worker's
    partitions (`steps="actors"`), the sum of one of the parts it was given (`index`);
    for an engine's call (`_engine`), what it returned (`index` None)."""

    def __init__(self, call, index: int | None, worker: str):
        self.call, self.index, self.worker = call, index, worker

    def result(self, timeout=None):
        value = self.call.result(timeout=timeout)
        return value if self.index is None else value[self.index]

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
        self.pending: list = []  # the tasks (or actor calls) submitted since the last completed wait
        self.round_trips = 0     # driver waits
        self.driver_bytes = 0    # of the results the driver gathered
        self.partition_bytes = 0  # of the histograms the partitions' tasks produced
        self.step_tasks = 0      # tasks (actor calls) that `summed` submitted
        self.runners: dict[str, tuple] | None = {} if actors else None  # worker -> its PartitionRunner actor (and the actor's future)
        if actors:
            self._start_runners()

    def _holders(self, states: list) -> list:
        holders = self.client.who_has(states)
        return [sorted(holders[s.key])[0] for s in states]

    def _start_runners(self) -> None:
        """A runner on every worker holding partitions (those of lost workers dropped)."""
        assert self.runners is not None  # with actors
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
        return items[0] if for_workers else DriverSum(trees, dict(zip(trees, items)), op)

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
        assert self.runners is not None  # with actors
        parts = parts_by_worker(trees, self.workers)
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
        return DriverSum(trees, results, op)

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


class DaskTreeGrower(PartitionExchange):
    """Grows the trees of a training whose rows live in `partitions` (binned with
    `mapper`; `quantizer`: the partitions' (bits, levels, seed), None for float64
    histograms): the driver's bookkeeping of the training's trees (each round's row
    sample, DART's record, what a rebuilt partition replays after a lost worker), and the
    partitions' side of each tree (PartitionExchange) with every sum made by the driver's
    tasks or actor calls (`partitions.summed`). `_engine.WorkerEngines` keeps this
    bookkeeping and moves the partitions' side into an engine on every worker."""

    def __init__(self, partitions: Partitions, mapper, config: GBDTConfig, n_rows: int, quantizer=None,
                 feature_names=None):
        self.partitions = partitions
        self.config = config
        self._take_training(config, n_rows, quantizer)
        if self.grows_on_driver:
            self._build_engine(mapper, config, feature_names)
        self.sampler: Any = None  # the row sampler (a RowSampler; sample_rows), None: every tree sees every row
        self.sample_seconds = 0.0  # the driver's time drawing the row samples' partition counts
        self.sample_bytes = 0  # what the partitions were sent to draw their part of the samples
        # per grown tree: (output, its split steps, leaf nodes, leaf values, and with a row
        # sample the tree's splits for the other rows), for `resume`
        self.finished: list[tuple] = []
        self.learning_rate = config.learning_rate  # DART: each round's (smaller when rounds are dropped)
        self.dart_rounds: list = []  # DART: per round chosen so far, tasks.dart_round's record (None: none dropped)
        self.resumed = False  # the partitions were rebuilt: the next tree starts from their margins as they are
        self.resumed_before_dart = False  # ... but not from the next round's DART record (see resume)

    grows_on_driver = True  # the engine runs here (WorkerEngines: on the workers)

    # -- the training's trees ------------------------------------------------------------------

    def sample_rows(self, sampler, chunks: tuple, query_sizes=None) -> None:
        """Sample each round's rows with `sampler` (the library's RowSampler of the whole
        training, uniform or GOSS): `chunks` are the partitions' row counts, in order;
        with `query_sizes` (per partition, its queries' rows) a uniform sampler draws whole
        queries (its "rows" are the query indices)."""
        if sampler is not None and sampler.kind not in (SAMPLER_KINDS["uniform"], SAMPLER_KINDS["goss"]):
            raise ValueError("boosters.dask samples rows uniformly or by GOSS only")
        self.sampler = sampler
        self.goss = sampler is not None and sampler.kind == SAMPLER_KINDS["goss"]
        self.goss_starts: dict[int, list] = {}  # GOSS round -> per partition: where the round's selection pass stands at its first row
        self.bounds = first_rows(chunks if query_sizes is None else [len(s) for s in query_sizes])
        self.query_sizes = None if query_sizes is None else np.concatenate(query_sizes)
        self.sample_sizes: dict[int, int] = {}  # round -> rows of the round's sampled queries (sampling whole queries)
        self.counts: dict[int, list[int]] = {}  # round -> per partition: the round's sampled rows before its first row
        self.next_counts: tuple[int, Future] | None = None  # (round, future): the next round's counts, drawn while this round grows
        self.executor: ThreadPoolExecutor | None = None

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
        if self.resumed:  # the rebuilt margins hold every finished tree, the gradients are the round's
            previous_leaves, new_round = None, new_round and self.resumed_before_dart
        if previous_leaves is not None:  # the splits for the rows outside its sample, its linear leaves (or None)
            previous_leaves = (*previous_leaves, *self.finished[-1][4:])
        # a new round's row sample (round tree_index // n_outputs): each partition draws its part
        round_ = 0 if self.sampler is None else tree_index // self.sampler.n_outputs
        goss_round = self.goss and round_ >= self.sampler.warmup_rounds
        goss = None
        if goss_round and round_ not in self.goss_starts:  # a new round, or one resumed before its sample
            goss = (round_, self.sampler.top_k, self.sampler.other_k)
        sample = (self._round_sample(round_)
                  if self.sampler is not None and not self.goss and new_round else None)
        sampled = self.sampler is not None and (goss_round or not self.goss)
        tree, steps, goss_starts = self.grow_on_partitions(
            tree_index, output, (previous_leaves, new_round, self._dart_record(tree_index)), sample, goss,
            self._sampled_rows(round_) if sampled else self.n_rows, self.learning_rate)
        self.resumed = False  # the partitions started the tree: from now on as any other
        if goss_starts is not None:
            self.goss_starts[round_] = goss_starts
        outside = None
        if self.sampler is not None:  # the rows outside the sample follow the tree's own rule, as at prediction:
            default_left = np.asarray(tree.default_left, dtype=np.int64)  # the growth steps' splits (category
            outside = [step.copy() for step in steps]  # sets too) with the tree's missing-value directions
            for step in outside:
                step[:, 3] = default_left[step[:, 0]]
        self.finished.append((output, steps, *self.leaves(tree), outside, tree if self.linear else None))
        return tree

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

    @staticmethod
    def leaves(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
        """The tree's leaf nodes and values: what the workers add to their margins."""
        leaves = np.flatnonzero(np.asarray(tree.left_child) < 0)
        return leaves, np.asarray(tree.value)[leaves]

    def close(self) -> None:
        """The training ended: nothing held here outlives it."""

    # -- the partitions' side, by the driver's tasks or actor calls (PartitionExchange) --------

    def _start_tree(self, start: tuple, sample) -> None:
        """PartitionExchange's, in one round trip: with float64 histograms (no quantization
        scales to agree on first) the root's histogram comes with the start; quantized, the
        root's tasks take the maxima's sum as a future."""
        p = self.partitions
        if self.quantizer is None:
            self.histograms[0] = p.gather(p.summed(tasks.start_float_tree, *start, each=sample), histograms=0)
            return
        maxima = p.summed(tasks.start_tree, *start, each=sample, op=tasks.maximum, any_order=True, for_workers=True)
        maxima, self.histograms[0] = p.gather([maxima, p.summed(tasks.root_histogram, start[0], maxima,
                                                                any_order=True)],
                                              histograms=1)
        self.engine.builder.scales[:] = tasks.quantization_scales(maxima, self.quantizer[1])

    def _sum(self, function, *args, each=None, op=tasks.add, any_order: bool = False):
        p = self.partitions
        return p.gather(p.summed(function, *args, each=each, op=op, any_order=any_order))

    def _chain(self, function, first, *args, every: bool = False):
        p = self.partitions
        results = p.gather(p.chain(function, first, *args))
        return results if every else results[-1]

    def _count_histograms(self, histograms: list) -> None:
        self.partitions.count_histograms(histograms)
