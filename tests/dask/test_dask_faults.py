"""boosters.dask under faults other than a lost worker: workers that Dask's memory monitor
pauses, and a scheduler that goes away. Each ends the training with its own clear
RuntimeError within a bounded time (never a hang, never an error blaming lost data), or,
for a pause shorter than the grace time, is waited out (the model unchanged).

A worker is paused as Dask's memory monitor pauses it: its pause threshold
(`memory_pause_fraction`, `distributed.worker.memory.pause`) is set below its memory use,
and set back to resume it."""

import logging
import os
import signal
import threading
import time

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import boosters as bst
from boosters.dask import _driver, train
from boosters.dask._driver import Partitions
from boosters.dask._engine import WorkerEngines
from support.child_python import python_popen

TIMEOUT = 60  # seconds: a test fails (never hangs) when the training neither ends nor fails by then
CONFIG = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16")
STEPS = ["tasks", "actors"]


def make_data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    return X, np.round(8 * (X[:, 0] - 2 * X[:, 1] + 0.3 * rng.normal(size=n))) / 8


def run_within(seconds, function):
    """function()'s result, or its exception raised here; a test failure when it has done
    neither after `seconds` (it keeps running in a daemon thread)."""
    out = {}

    def target():
        try:
            out["value"] = function()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            out["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the training neither ended nor failed within {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def at_wait(monkeypatch, wait: int, action):
    """action(partitions) once, at the driver's wait number `wait` (1, 2, ...), its tasks
    (or with steps="workers" its engines' calls: the engines' set-up, then one per tree) submitted."""
    gather, results, count = Partitions.gather, WorkerEngines._results, [0]

    def gather_then_act(self, futures, histograms=-1):
        count[0] += 1
        if count[0] == wait:
            action(self)
        return gather(self, futures, histograms)

    def results_then_act(self, calls):
        count[0] += 1
        if count[0] == wait:
            action(self.partitions)
        return results(self, calls)

    monkeypatch.setattr(Partitions, "gather", gather_then_act)
    monkeypatch.setattr(WorkerEngines, "_results", results_then_act)


def until_disconnected(client, seconds=10):
    """Wait until the client has seen its scheduler go (the engines' next tree checks it)."""
    deadline = time.monotonic() + seconds
    while client.status == "running" and time.monotonic() < deadline:
        time.sleep(0.05)


def pause(dask_worker):
    """Pause the worker as its memory monitor does (its memory is above this threshold)."""
    dask_worker.memory_manager.memory_pause_fraction = 1e-9


def pause_now(client, addresses):
    """Pause these workers and return once each has paused: the memory monitor pauses a worker
    at its next tick, and a short training under load could end before that tick."""
    client.run(pause, workers=addresses)
    deadline = time.monotonic() + 10
    while any(status != "paused" for status in
              client.run(lambda dask_worker: dask_worker.status.name, workers=addresses).values()):
        assert time.monotonic() < deadline, "the memory monitor did not pause the worker"
        time.sleep(0.02)


def resume(dask_worker):
    dask_worker.memory_manager.memory_pause_fraction = 0.8  # Dask's default: the monitor resumes it


def worker_status(client, address):
    return client.scheduler_info(n_workers=-1)["workers"][address]["status"]


@pytest.fixture
def cluster():
    """Two in-process single-threaded workers, for one test (it pauses them or stops the
    scheduler: the client and the workers then try to reconnect for a few seconds, not 30)."""
    with dask.config.set({"distributed.comm.timeouts.connect": "3s"}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False, timeout=3) as client:
        yield cluster, client


def dask_train(client, X, y, config=CONFIG, **kwargs):
    return train(client, da.from_array(X, chunks=(350, 5)), da.from_array(y, chunks=350), config, **kwargs)


@pytest.mark.parametrize("steps", STEPS)
def test_a_worker_paused_in_training_is_a_clear_error(cluster, monkeypatch, caplog, steps):
    # the worker holding partition 0 is paused in tree 0 and stays paused: its tasks never
    # run; after a warning and the grace time, a RuntimeError names it and the pause. With
    # actors the steps still run there (an actor call is no task); the linear leaves' pass
    # over the partitions after the tree is tasks, and waits as a task step does
    _, client = cluster
    monkeypatch.setattr(_driver, "PAUSE_GRACE_SECONDS", 1.0, raising=False)
    paused = []
    at_wait(monkeypatch, 3, lambda p: (paused.append(p.workers[0]), pause_now(client, [p.workers[0]])))
    X, y = make_data()
    config = CONFIG if steps == "tasks" else CONFIG.replace(linear_leaves=True)
    with pytest.raises(RuntimeError, match="stayed paused") as error:
        run_within(TIMEOUT, lambda: dask_train(client, X, y, config, steps=steps))
    assert paused[0] in str(error.value) and "distributed.worker.memory.pause" in str(error.value)
    assert "more memory" in str(error.value)
    assert any("paused by Dask's memory monitor" in r.getMessage() and paused[0] in r.getMessage()
               for r in caplog.records)


def test_workers_paused_from_the_start_are_a_clear_error(cluster, monkeypatch):
    # every worker paused before training: nothing can run, not even binning
    _, client = cluster
    monkeypatch.setattr(_driver, "PAUSE_GRACE_SECONDS", 1.0, raising=False)
    client.run(pause)
    deadline = time.monotonic() + 10
    while any(worker_status(client, w) != "paused" for w in client.scheduler_info()["workers"]):
        assert time.monotonic() < deadline, "the memory monitor did not pause the workers"
        time.sleep(0.05)
    X, y = make_data()
    with pytest.raises(RuntimeError, match="stayed paused"):
        run_within(TIMEOUT, lambda: dask_train(client, X, y))


def test_a_worker_paused_from_the_start_is_named_when_the_other_trains_alone(cluster):
    # one worker of two paused before training: Dask puts every partition on the other,
    # which trains alone (the single-machine model); the warning says why
    _, client = cluster
    paused = sorted(client.scheduler_info()["workers"])[0]
    client.run(pause, workers=[paused])
    deadline = time.monotonic() + 10
    while worker_status(client, paused) != "paused":
        assert time.monotonic() < deadline, "the memory monitor did not pause the worker"
        time.sleep(0.05)
    X, y = make_data()
    with pytest.warns(UserWarning, match="held by 1 of the 2 workers") as warned:
        model = run_within(TIMEOUT, lambda: dask_train(client, X, y))
    assert any(paused in str(w.message) and "paused by Dask's memory monitor" in str(w.message) for w in warned)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), CONFIG)
    assert all(np.array_equal(a.value, b.value) for a, b in zip(model.forest.trees, reference.forest.trees))


@pytest.mark.parametrize("steps", STEPS)
def test_a_pause_shorter_than_the_grace_time_is_waited_out(cluster, monkeypatch, steps):
    # paused in tree 0, resumed once the training has warned of the pause (well within the
    # grace time): the training goes on, and the model is the undisturbed one
    _, client = cluster
    X, y = make_data(seed=3)
    config = CONFIG if steps == "tasks" else CONFIG.replace(linear_leaves=True)  # actors: see above
    undisturbed = dask_train(client, X, y, config, steps=steps)
    paused, warned = [], []

    class ResumeWhenWarned(logging.Handler):
        def emit(self, record):
            if "paused by Dask's memory monitor" in record.getMessage() and not warned:
                warned.append(record.getMessage())
                threading.Timer(0.5, lambda: client.run(resume, workers=paused)).start()

    handler = ResumeWhenWarned(logging.WARNING)
    logging.getLogger("boosters").addHandler(handler)
    try:
        at_wait(monkeypatch, 3, lambda p: (paused.append(p.workers[0]), pause_now(client, paused)))
        model = run_within(TIMEOUT, lambda: dask_train(client, X, y, config, steps=steps))
    finally:
        logging.getLogger("boosters").removeHandler(handler)
    assert warned and paused[0] in warned[0]
    assert model.n_trees == undisturbed.n_trees
    assert all(np.array_equal(a.value, b.value) and np.array_equal(a.split_feature, b.split_feature)
               for a, b in zip(model.forest.trees, undisturbed.forest.trees))


@pytest.mark.parametrize("steps", ["workers"] + STEPS)
def test_a_closed_scheduler_is_a_clear_error(cluster, monkeypatch, steps):
    # the scheduler closes in tree 0 (the engines': tree 1): the client loses every future;
    # the error says that the scheduler went away (not that a partition was lost with a worker)
    cluster_, client = cluster
    at_wait(monkeypatch, 3, lambda p: (cluster_.sync(cluster_.scheduler.close), until_disconnected(client)))
    X, y = make_data()
    with pytest.raises(RuntimeError, match="lost its connection to the Dask scheduler") as error:
        run_within(TIMEOUT, lambda: dask_train(client, X, y, steps=steps))
    assert cluster_.scheduler_address in str(error.value)


def _wait_for_file(path, seconds=60):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.parametrize("steps", ["workers", "tasks"])
def test_a_killed_scheduler_process_is_a_clear_error(tmp_path, monkeypatch, steps):
    # a scheduler in a process of its own, killed (SIGKILL) in the middle of tree 0 (the
    # engines': tree 1)
    scheduler_file = str(tmp_path / "scheduler.json")
    scheduler = python_popen("-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", "0", "--dashboard-address", ":0", "--scheduler-file", scheduler_file)
    worker = None
    try:
        _wait_for_file(scheduler_file)
        worker = python_popen("-m", "distributed.cli.dask_worker", "--scheduler-file",
                                   scheduler_file, "--nthreads", "1", "--no-nanny", "--dashboard-address", ":0")
        with Client(scheduler_file=scheduler_file, set_as_default=False, timeout=10) as client:
            client.wait_for_workers(1, timeout=60)
            at_wait(monkeypatch, 3, lambda p: (os.kill(scheduler.pid, signal.SIGKILL), until_disconnected(client)))
            X, y = make_data()
            with pytest.raises(RuntimeError, match="lost its connection to the Dask scheduler"):
                run_within(TIMEOUT, lambda: dask_train(client, X, y, steps=steps))
    finally:
        for process in (worker, scheduler):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


class FinishedButTheTimedWaitFails:
    """A finished future whose timed wait fails inside distributed's sync() as it did again and
    again in a loaded CI run (UnboundLocalError: asyncio's CancelledError escaped its except)."""

    status = "finished"

    def __init__(self):
        self.timed_waits = 0

    def _timed(self, timeout, value):
        if timeout is not None:
            self.timed_waits += 1
            raise UnboundLocalError("cannot access local variable 'result' where it is not associated with a value")
        return value

    def result(self, timeout=None):
        return self._timed(timeout, 42)

    def exception(self, timeout=None):
        return self._timed(timeout, None)

    def done(self):
        return True


def test_a_finished_future_whose_timed_wait_fails_is_fetched_not_taken_for_a_lost_worker():
    # the driver's waits fetch it without a timeout (no client needed: no liveness check,
    # no recovery); before, each failed wait counted a miss and the fourth was a lost worker
    future = FinishedButTheTimedWaitFails()
    assert Partitions._result(None, future, stall=None) == 42
    _driver.wait_for([future], stall=object())  # returns: the task ended without an error
    assert future.timed_waits == 2
