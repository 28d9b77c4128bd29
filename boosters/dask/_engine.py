"""The growth engine on every worker (prototype): each worker holding partitions runs the
single-machine growth loop (`TreeGrower.exchanging`) over its partitions, and the loop's
exchange sums histograms, counts and leaf sums with the other workers' engines directly,
worker to worker, through Dask actors (no scheduler task, no driver in a step).

Every engine runs the same loop on the same global sums, so every engine grows the same
tree; the driver makes one call per engine and tree and takes the first engine's tree.
The sums follow `_driver.reduction_tree` exactly as the driver's actor path adds them
(each worker folds the parts of the tree whose partitions it holds; every worker then
adds all the parts in the tree's order), so the models are the same bits.

Prototype scope (`train(..., _engine="worker")`): no row sampling, GOSS, DART, linear
leaves, quantile leaves or validation set (`WorkerEngines.supports`), and a lost worker
ends the training with a RuntimeError (the engines are aborted) instead of recovering.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from boosters.dask import _partition_state as tasks
from boosters.dask._driver import (
    DaskTreeGrower, LostWorker, PartitionExchange, RunnerResult, Stall, held_parts, localized, pairwise_levels,
    reduction_tree,
)
from boosters.dask._step_runner import fold
from boosters.data.binned import BinnedMatrix
from boosters.training.growth.grower import TreeGrower


class Aborted(RuntimeError):
    """The driver aborted the engines (a worker was lost): the tree's sums will never complete."""


class WorkerEngine(PartitionExchange):
    """A Dask actor: this worker's partitions, its copy of the growth engine, whose
    exchange it is (the steps as on the driver's path, each sum made by `_sum`), and its
    mailbox for the other engines' parts of each sum."""

    def __init__(self):
        self.mail, self.waiters = {}, {}
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="boosters-engine")
        self.seq = 0
        self.aborted = False

    async def setup(self, rank: int, peers: list, part_ranks: list, keys: dict, config, mapper, n_rows: int,
                    quantizer, feature_names):
        """`part_ranks`: the rank of the engine holding each partition; `keys`: partition
        index -> its state's key, for this engine's partitions."""
        from distributed import get_worker
        from distributed.actor import Actor

        worker = get_worker()
        # handles bound to this worker (a handle sent to an actor is bound to no worker)
        self.peers = [Actor(p._cls, p._address, p.key, worker=worker) for p in peers]
        self.rank, self.loop = rank, asyncio.get_running_loop()
        self.part_ranks, self.quantizer = part_ranks, quantizer
        self.states = [None] * len(part_ranks)
        for i, key in keys.items():
            self.states[i] = worker.data[key]
        self.engine = TreeGrower.exchanging(self, BinnedMatrix.allocate(0, mapper.n_bins), mapper, config, n_rows,
                                            config.objective.n_outputs, "f64" if quantizer is None else "i16",
                                            feature_names)
        self.histograms = self.engine.pool.data
        self.n_rows, self.previous = n_rows, None
        return rank

    async def deliver(self, seq: int, src: int, payload) -> None:
        key = (seq, src)
        waiter = self.waiters.pop(key, None)
        if waiter is not None:
            waiter.set_result(payload)
        else:
            self.mail[key] = payload

    async def abort(self) -> None:
        """Every wait for another engine's part fails (Aborted): the engine's thread ends its tree."""
        self.aborted = True
        for waiter in self.waiters.values():
            if not waiter.done():
                waiter.set_exception(Aborted("boosters.dask: the training was aborted"))
        self.waiters.clear()

    async def _receive(self, seq: int, src: int):
        key = (seq, src)
        if self.aborted:
            raise Aborted("boosters.dask: the training was aborted")
        if key in self.mail:
            return self.mail.pop(key)
        waiter = self.loop.create_future()
        self.waiters[key] = waiter
        return await waiter

    async def _all_gather(self, seq: int, mine: dict) -> dict:
        """Every engine's parts: this engine's sent to each other, theirs received."""
        others = [r for r in range(len(self.peers)) if r != self.rank]
        await asyncio.gather(*(self.peers[r].deliver(seq, self.rank, mine) for r in others))
        parts = dict(mine)
        for theirs in await asyncio.gather(*(self._receive(seq, r) for r in others)):
            parts.update(theirs)
        return parts

    def _sum(self, function, *args, op=tasks.add, any_order: bool = False):
        """The sum over every partition of function(state, *args), in the order of
        `reduction_tree` (the driver's actor path's order: the same bits): this engine's
        parts folded here, the others' received from their engines."""
        trees = reduction_tree(self.part_ranks, any_order)
        held = {}
        for tree in trees:
            held_parts(tree, self.part_ranks, held)
        mine = {}
        for tree in held.get(self.rank, []):
            indices, (local,) = localized([tree])
            mine[tree] = fold(function, [self.states[i] for i in indices], args, [()] * len(indices), local, op)
        self.seq += 1
        parts = asyncio.run_coroutine_threadsafe(self._all_gather(self.seq, mine), self.loop).result()

        def value(tree):
            return parts[tree] if tree in parts else op(value(tree[0]), value(tree[1]))

        return pairwise_levels([value(tree) for tree in trees], op)[0]

    async def grow(self, tree_index: int, output: int, new_round: bool, learning_rate: float):
        """The training's tree `tree_index` (of `output`), the previous one's leaves first
        added to the margins: [the tree] from engine 0, [None] from the others."""
        tree = await self.loop.run_in_executor(self.thread, self._grow, tree_index, output, new_round, learning_rate)
        return [tree]

    def _grow(self, tree_index: int, output: int, new_round: bool, learning_rate: float):
        self.tree_index, self.steps = tree_index, []
        start = (tree_index, self.previous, output, new_round, None)
        if self.quantizer is None:
            self.histograms[0] = self._sum(tasks.start_float_tree, *start)
        else:
            maxima = self._sum(tasks.start_tree, *start, op=tasks.maximum, any_order=True)
            self.histograms[0] = self._sum(tasks.root_histogram, tree_index, maxima, any_order=True)
            self.engine.builder.scales[:] = tasks.quantization_scales(maxima, self.quantizer[1])
        tree = self.engine.grow_exchanged(output, tree_index, self.n_rows, learning_rate)
        self.previous = (output, *DaskTreeGrower.leaves(tree))
        return tree if self.rank == 0 else None

class WorkerEngines:
    """The driver's side: one WorkerEngine per worker holding partitions; grows each tree
    with one call per engine (what DaskBackend asks of a grower)."""

    @staticmethod
    def supports(config, sampler, val_set) -> bool:
        return (sampler is None and val_set is None and config.booster != "dart" and not config.linear_leaves
                and config.objective.name not in ("absolute", "pinball"))

    def __init__(self, partitions, mapper, config, n_rows: int, quantizer, feature_names):
        client = partitions.client
        self.partitions = partitions
        holders = sorted(set(partitions.workers))
        part_ranks = [holders.index(w) for w in partitions.workers]
        futures = [client.submit(WorkerEngine, actor=True, workers=[w], allow_other_workers=False, pure=False)
                   for w in holders]
        with client.as_current():
            self.engines = [f.result() for f in futures]
        self._futures = futures
        calls = [engine.setup(rank, self.engines, part_ranks,
                              {i: s.key for i, s in enumerate(partitions.states) if part_ranks[i] == rank},
                              config, mapper, n_rows, quantizer, feature_names)
                 for rank, engine in enumerate(self.engines)]
        [call.result() for call in calls]
        self.learning_rate = config.learning_rate
        self.dart_rounds = []
        self.sample_bytes, self.sample_seconds = 0, 0.0
        self.holders = holders

    def grow_tree(self, previous_leaves, output: int, new_round: bool, tree_index: int):
        """One call per engine; waits that check the workers' liveness (a lost worker:
        the engines are aborted and LostWorker raised)."""
        self.partitions.round_trips += 1  # the driver's one wait per tree (stats)
        self.partitions.step_tasks += len(self.engines)
        stall = Stall(self.partitions.client, self.holders)
        try:  # a call to a lost worker's actor can fail at once
            calls = [RunnerResult(engine.grow(tree_index, output, new_round, self.learning_rate), 0, worker)
                     for engine, worker in zip(self.engines, self.holders)]
            return [self.partitions._result(call, stall) for call in calls][0]
        except Exception as error:
            lost = isinstance(error, LostWorker) or "Actor was lost" in str(error)
            if not lost:
                raise
            for engine in self.engines:  # the others wait for the lost one's parts: end their tree
                try:
                    engine.abort().result(timeout=5)
                except Exception:  # noqa: BLE001 - its worker may be the lost one
                    pass
            raise LostWorker(f"boosters.dask: a worker holding partitions was lost ({error})") from error

    def resume(self, n_outputs: int) -> None:
        raise RuntimeError("boosters.dask: a worker holding partitions was lost, and the prototype engine "
                           "(_engine='worker') does not recover yet; train with the default engine to survive it")

    leaves = staticmethod(DaskTreeGrower.leaves)
