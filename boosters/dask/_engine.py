"""The growth engine on every worker: each worker holding partitions runs the partitions'
side of every tree (`_exchange.PartitionExchange`: the single-machine growth loop over no
rows of its own, the tree's start, GOSS's selection, quantile and linear leaves) over the
partitions it holds, and every sum over the partitions is made worker to worker: each
engine sends its part to every other engine and adds all the parts itself, in
`_reduction`'s order (the order of the driver's paths: the same bits). No driver and no
scheduler take part in a growth step; the driver makes one call per engine and tree, and
keeps the training's bookkeeping (`_driver.DaskTreeGrower`: row samples, DART's record,
what a rebuilt partition replays).

Every engine runs the same steps on the same global sums, so every engine grows the same
tree; the driver takes the first engine's. The engines message each other through Dask's
own worker RPC (the `actor_execute` handler that Dask's actor handles call), not through
actor handles built on the workers: building one there would make a Dask client on the
worker, which sets itself as the process's default (in a cluster of threads, the user's
process).

A lost worker: the waits of the driver check the workers' liveness, the other engines are
aborted (their waits for the lost one's parts fail), the partitions are rebuilt from the
finished trees as on the driver's paths (`DaskTreeGrower.resume`), and new engines start
on the workers that hold them.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
from concurrent.futures import TimeoutError as WaitTimeout

from boosters.dask import _partition_state as tasks
from boosters.dask._driver import DaskTreeGrower, LostWorker, RunnerResult, Stall, check_connected
from boosters.dask._exchange import PartitionExchange
from boosters.dask._reduction import holder, localized, parts_by_worker, reduction_tree, summed_parts
from boosters.dask._step_runner import fold

# Up to this many engines every sum is all-gathered: each engine sends its part to every other
# (one message hop a sum, W - 1 messages into and out of each engine). Above, the parts are
# added up the reduction tree by the engines holding them and the sum sent back down a
# binomial tree (2 log2 W hops, a few messages into and out of each engine).
ALL_GATHER_ENGINES = 4
LOOP_CHECK_SECONDS = 1.0  # an engine thread's wait for its event loop checks this often that the engine lives


class Aborted(RuntimeError):
    """The driver aborted the engines (a worker was lost): the tree's sums will never complete."""


class WorkerEngine(PartitionExchange):
    """A Dask actor: the partitions its worker holds, its copy of the growth engine whose
    exchange it is, and its mailbox for the other engines' messages, each keyed by
    (the engine's count of its exchanges, a tag)."""

    def __init__(self):
        self.mail, self.waiters = {}, {}
        self.seq = 0
        self.aborted = self.closed = False

    async def setup(self, rank: int, peers: list, part_ranks: list, keys: dict, config, mapper, n_rows: int,
                    quantizer, feature_names) -> int:
        """`peers`: every engine's (worker address, actor key), by rank; `part_ranks`: the
        rank of the engine holding each partition; `keys`: partition index -> its state's
        key, for this engine's partitions (in its worker's memory)."""
        from distributed import get_worker

        self.worker = get_worker()
        self.rank, self.peers, self.part_ranks = rank, peers, part_ranks
        self.loop = asyncio.get_running_loop()
        self.states: list = [None] * len(part_ranks)
        for i, key in keys.items():
            self.states[i] = self.worker.data[key]
        self._take_training(config, n_rows, quantizer)
        self._build_engine(mapper, config, feature_names)
        return rank

    async def grow(self, tree_index: int, output: int, start: tuple, sample, goss, n_rows: int,
                   learning_rate: float):
        """grow_on_partitions in a thread of the engine's own (the event loop stays free for
        the other engines' messages): (the tree, its steps, the GOSS selection's starts)
        from engine 0, None from the others. A daemon thread: one left waiting for a
        cluster that went away never holds up the process's exit."""
        done = self.loop.create_future()

        def report(method, value):
            if not done.done():
                method(value)

        def run():
            try:
                grown = self.grow_on_partitions(tree_index, output, start, sample, goss, n_rows, learning_rate)
            except BaseException as error:  # noqa: BLE001 - handed to the caller as it is
                answer = (done.set_exception, error)
            else:
                answer = (done.set_result, grown)
            try:
                self.loop.call_soon_threadsafe(report, *answer)
            except RuntimeError:  # the worker's loop closed meanwhile: no one waits for the answer
                pass

        threading.Thread(target=run, name="boosters-engine", daemon=True).start()
        grown = await done
        return grown if self.rank == 0 else None

    async def close(self) -> None:
        """The engine's thread stops at its next wait (Aborted), and the partitions' states
        are no longer held here (after a recovery the old states go as soon as Dask
        releases them)."""
        self.closed = True
        await self.abort()
        # released: no method runs on a closed engine
        self.states, self.engine, self.histograms = None, None, None  # type: ignore[assignment]

    # -- messages between engines ----------------------------------------------------------------

    async def deliver(self, key: tuple, payload) -> None:
        waiter = self.waiters.pop(key, None)
        if waiter is not None:
            waiter.set_result(payload)
        else:
            self.mail[key] = payload

    async def abort(self) -> None:
        """Every wait for another engine's message fails (Aborted): the engine's thread ends its tree."""
        self.aborted = True
        for waiter in self.waiters.values():
            if not waiter.done():
                waiter.set_exception(Aborted("boosters.dask: the training was aborted"))
        self.waiters.clear()

    async def _send(self, rank: int, key: tuple, payload) -> None:
        from distributed.protocol import to_serialize

        address, actor = self.peers[rank]
        reply = await self.worker.rpc(address).actor_execute(
            function="deliver", actor=actor, args=[to_serialize(key), to_serialize(payload)], kwargs={})
        if reply.get("status") != "OK":
            raise RuntimeError(f"boosters.dask: engine {rank} at {address} did not take a message: "
                               f"{reply.get('exception', reply)!r}")

    async def _receive(self, key: tuple):
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
        await asyncio.gather(*(self._send(r, (seq, self.rank), mine) for r in others))
        parts = dict(mine)
        for theirs in await asyncio.gather(*(self._receive((seq, r)) for r in others)):
            parts.update(theirs)
        return parts

    def _run(self, coroutine):
        """Run a message coroutine on the worker's event loop (from the engine's thread);
        Aborted when the engine is closed or its loop stops meanwhile (the cluster closed)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        while True:
            try:
                return future.result(timeout=LOOP_CHECK_SECONDS)
            except WaitTimeout:
                if self.closed or self.loop.is_closed() or not self.loop.is_running():
                    future.cancel()
                    raise Aborted("boosters.dask: the engine was closed") from None

    def _exchanged(self, mine: dict) -> dict:
        self.seq += 1
        return self._run(self._all_gather(self.seq, mine))

    # -- sums and passes over the partitions (PartitionExchange) -----------------------------------

    def _sum(self, function, *args, each=None, op=tasks.add, any_order: bool = False):
        """The sum over every partition of function(state_i, *args, *each[i]), in the order of
        `reduction_tree`: this engine's parts folded here, the others' received from their engines."""
        each = [()] * len(self.states) if each is None else [(e,) for e in each]
        trees = reduction_tree(self.part_ranks, any_order)
        mine = {}
        for tree in parts_by_worker(trees, self.part_ranks).get(self.rank, []):
            indices, (local,) = localized([tree])
            mine[tree] = fold(function, [self.states[i] for i in indices], args, [each[i] for i in indices],
                              local, op)
        if len(self.peers) <= ALL_GATHER_ENGINES:
            return summed_parts(trees, self._exchanged(mine), op)
        return self._reduced(trees, mine, op)

    def _reduced(self, trees: list, mine: dict, op):
        """The sum of `trees` (one: reduction_tree's root) made up the tree: each node above
        the held parts is added by the engine holding its first partition, from its two
        children's values (the right one received from its engine when another holds it), in
        the order of the nodes' heights on every engine (so that no engine waits for a value
        that waits for it); then the root's engine sends the sum to every engine."""
        self.seq += 1
        seq, (root,) = self.seq, trees

        def owner(node):
            while not isinstance(node, int):
                node = node[0]
            return self.part_ranks[node]

        levels: dict[int, list] = {}
        send_to: dict = {}  # levels: height -> the nodes above the held parts; node -> its parent's engine

        def height(node) -> int:  # 0: a part one engine holds all of (parts_by_worker's)
            if holder(node, self.part_ranks) is not None:
                return 0
            h = 1 + max(height(node[0]), height(node[1]))
            if owner(node[1]) != owner(node):
                send_to[node[1]] = owner(node)
            levels.setdefault(h, []).append(node)
            return h

        height(root)
        values = dict(mine)
        for node, value in mine.items():
            if node in send_to:
                self._run(self._send(send_to[node], (seq, node), value))
        for h in sorted(levels):
            for node in levels[h]:
                if owner(node) != self.rank:
                    continue
                right = values[node[1]] if owner(node[1]) == self.rank else self._run(self._receive((seq, node[1])))
                values[node] = op(values[node[0]], right)
                if node in send_to:
                    self._run(self._send(send_to[node], (seq, node), values[node]))
        return self._broadcast(values.get(root), owner(root))

    def _broadcast(self, value, root: int):
        """`value` of engine `root`, on every engine: sent down a binomial tree over the
        engines (each receives it once, from the engine 2^k places before it)."""
        self.seq += 1
        order = [root] + [r for r in range(len(self.peers)) if r != root]
        position, k = order.index(self.rank), 1
        if position:
            value = self._run(self._receive((self.seq, "sum")))
        while k <= position:
            k *= 2
        while position + k < len(order):
            self._run(self._send(order[position + k], (self.seq, "sum"), value))
            k *= 2
        return value

    def _chain(self, function, first, *args, every: bool = False):
        """The pass over the partitions in order: each engine runs its partitions' links, the
        previous link's result received from its engine when another holds it; then every
        link's result (or the last) goes to every engine."""
        self.seq += 1
        seq, n = self.seq, len(self.part_ranks)
        mine, previous = {}, first
        for i in range(n):
            if self.part_ranks[i] != self.rank:
                continue
            if i > 0 and self.part_ranks[i - 1] != self.rank:
                previous = self._run(self._receive((seq, ("after", i - 1))))
            previous = function(self.states[i], *args, previous)
            if every or i == n - 1:
                mine[i] = previous
            if i + 1 < n and self.part_ranks[i + 1] != self.rank:
                self._run(self._send(self.part_ranks[i + 1], (seq, ("after", i)), previous))
        results = self._exchanged(mine)
        return [results[i] for i in range(n)] if every else results[n - 1]


class WorkerEngines(DaskTreeGrower):
    """The driver's side: the training's bookkeeping (DaskTreeGrower's) with each tree
    grown by one WorkerEngine per worker holding partitions, one call per engine."""

    grows_on_driver = False

    def __init__(self, partitions, mapper, config, n_rows: int, quantizer=None, feature_names=None):
        super().__init__(partitions, mapper, config, n_rows, quantizer, feature_names)
        self.setup = (config, mapper, n_rows, quantizer, feature_names)
        self.engines: list = []
        self.futures: list = []
        self._start_engines()

    def _start_engines(self) -> None:
        """One engine per worker holding partitions (sorted by address: its rank), set up on them."""
        p = self.partitions
        client = p.client
        self.holders = sorted(set(p.workers))
        part_ranks = [self.holders.index(w) for w in p.workers]
        self.futures = [client.submit(WorkerEngine, actor=True, workers=[w], allow_other_workers=False, pure=False)
                        for w in self.holders]
        p._wait(self.futures, pinned=True)
        with client.as_current():  # the actor handles bind to the current client: ours, not the default
            self.engines = [f.result() for f in self.futures]
        peers = [(w, f.key) for w, f in zip(self.holders, self.futures)]
        calls = [RunnerResult(engine.setup(rank, peers, part_ranks,
                                           {i: s.key for i, s in enumerate(p.states) if part_ranks[i] == rank},
                                           *self.setup), None, worker)
                 for rank, (engine, worker) in enumerate(zip(self.engines, self.holders))]
        self._results(calls)

    def grow_on_partitions(self, tree_index: int, output: int, start: tuple, sample, goss, n_rows: int,
                           learning_rate: float):
        """One call per engine, the tree from the first; the driver's one wait per tree."""
        # the engines talk to each other and to the driver without the scheduler, and could
        # go on without it; but the partitions' states (and a recovery) need it: stop as the
        # driver's paths do when it is gone (a RuntimeError naming it)
        check_connected(self.partitions.client)
        self.partitions.step_tasks += len(self.engines)
        calls = [RunnerResult(engine.grow(tree_index, output, start, sample, goss, n_rows, learning_rate),
                              None, worker)
                 for engine, worker in zip(self.engines, self.holders)]
        grown = self._results(calls)[0]
        self.partitions.driver_bytes += len(pickle.dumps(grown, protocol=5))  # the tree and its steps
        return grown

    def _results(self, calls: list) -> list:
        """The calls' results (one driver wait); a lost worker: the engines aborted, LostWorker."""
        p = self.partitions
        p.round_trips += 1
        stall = Stall(p.client, self.holders)
        try:
            return [p._result(call, stall) for call in calls]
        except Exception as error:
            if not (isinstance(error, LostWorker) or "Actor was lost" in str(error)):
                raise
            self._abort()
            raise LostWorker(f"boosters.dask: a worker holding partitions was lost ({error})") from error

    def _abort(self) -> None:
        """The live engines stop waiting for the lost one's parts: their trees end."""
        for engine in self.engines:
            try:
                engine.abort().result(timeout=5)
            except Exception:  # noqa: BLE001 - its worker may be the lost one
                pass

    def resume(self, n_outputs: int) -> None:
        """The partitions rebuilt (DaskTreeGrower's), then new engines on their workers."""
        self.close()
        super().resume(n_outputs)
        self._start_engines()

    def close(self) -> None:
        """The engines' threads ended and their actors released."""
        for engine in self.engines:
            try:
                engine.close().result(timeout=5)
            except Exception:  # noqa: BLE001 - its worker may be gone
                pass
        for future in self.futures:
            future.release()
        self.engines, self.futures = [], []
