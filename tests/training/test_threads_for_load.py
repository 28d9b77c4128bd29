"""The training's team follows the load on the cores (boosters/_lib/load.py): halved when its
thread waits for a core a large share of a block, tried larger again after quiet blocks."""

import os

import numpy as np
import pytest

import boosters as bst
from boosters._lib import load
from boosters._lib.load import ThreadsForLoad


class FakeCores:
    """Wall and waited seconds the test advances: `block(seconds, waited_share)`."""

    def __init__(self, free=None):
        self.wall = self.waited = 0.0
        self.free = free  # CPUs no thread is ready to run on (None: unknown, as off Linux)

    def follower(self, n_threads):
        return ThreadsForLoad(n_threads, waited=lambda: self.waited, clock=lambda: self.wall,
                              free=lambda: self.free)

    def block(self, threads: ThreadsForLoad, seconds: float, waited_share: float) -> int:
        threads.started()
        self.wall += seconds
        self.waited += seconds * waited_share
        threads.finished()
        return threads.n_threads


def test_idle_cores_keep_every_thread():
    cores, threads = FakeCores(), None
    threads = cores.follower(8)
    assert [cores.block(threads, 0.1, 0.02) for _ in range(50)] == [8] * 50


def test_taken_cores_halve_the_team_down_to_one():
    cores = FakeCores()
    threads = cores.follower(8)
    assert [cores.block(threads, 0.1, 0.6) for _ in range(5)] == [4, 2, 1, 1, 1]


def test_short_blocks_are_judged_together():
    # one 5 ms block that waited 80%: too short to judge alone (MIN_WINDOW_SECONDS)
    cores = FakeCores()
    threads = cores.follower(4)
    assert cores.block(threads, 0.005, 0.8) == 4
    n_blocks = int(load.MIN_WINDOW_SECONDS / 0.005) + 1
    assert [cores.block(threads, 0.005, 0.8) for _ in range(n_blocks)][-1] == 2


def test_a_larger_team_is_tried_after_quiet_blocks_and_backs_off_when_the_cores_are_still_taken():
    cores = FakeCores()
    threads = cores.follower(2)
    assert cores.block(threads, 0.1, 0.6) == 1
    quiet_blocks = round(load.FIRST_QUIET_SECONDS / 0.1)
    sizes = [cores.block(threads, 0.1, 0.0) for _ in range(quiet_blocks)]
    assert sizes[:-1] == [1] * (quiet_blocks - 1) and sizes[-1] == 2  # tried after FIRST_QUIET_SECONDS
    assert cores.block(threads, 0.1, 0.6) == 1                         # taken again: back to one,
    sizes = [cores.block(threads, 0.1, 0.0) for _ in range(2 * quiet_blocks)]
    assert sizes.index(2) == 2 * quiet_blocks - 1                      # the next try after twice as long
    assert cores.block(threads, 0.1, 0.05) == 2                        # the try held: the cores are free
    assert cores.block(threads, 0.1, 0.6) == 1
    sizes = [cores.block(threads, 0.1, 0.0) for _ in range(quiet_blocks)]
    assert sizes[-1] == 2                                              # waits FIRST_QUIET_SECONDS again


def test_a_training_starts_with_the_cpus_free_now():
    # free_cpus counts this thread among the runnable ones: 1 free CPU = 2 threads
    for free, expected in [(None, 8), (16, 8), (7, 8), (3, 4), (1, 2), (0, 1), (-5, 1)]:
        assert FakeCores(free).follower(8).n_threads == expected


def test_a_larger_team_is_tried_only_when_the_cpus_it_adds_are_free():
    cores = FakeCores(free=None)
    threads = cores.follower(4)
    assert cores.block(threads, 0.1, 0.6) == 2
    assert cores.block(threads, 0.1, 0.6) == 1
    cores.free = 0  # another training holds the other cores: no try, however quiet this one is
    quiet_blocks = round(load.FIRST_QUIET_SECONDS / 0.1)
    assert [cores.block(threads, 0.1, 0.0) for _ in range(3 * quiet_blocks)] == [1] * (3 * quiet_blocks)
    cores.free = 1  # it ended: one more CPU, so a team of two is tried after the next quiet spell
    sizes = [cores.block(threads, 0.1, 0.0) for _ in range(quiet_blocks)]
    assert sizes[-1] == 2
    cores.free = 2  # free_cpus counts this training's own team as free: 2 free CPUs = a team of 3
    sizes = [cores.block(threads, 0.1, 0.0) for _ in range(quiet_blocks + 1)]
    assert sizes[-1] == 3
    cores.free = 3
    sizes = [cores.block(threads, 0.1, 0.0) for _ in range(quiet_blocks + 1)]
    assert sizes[-1] == 4


def test_the_free_cpus_are_read_from_the_kernel():
    free = load.free_cpus()
    assert free is None or free <= (os.cpu_count() or 1) - 1  # this thread is running


def test_a_process_held_to_some_cpus_is_not_judged_by_the_hosts_counts(monkeypatch):
    # a cpuset (or a quota): the host's runnable threads say nothing of this process's CPUs
    if not hasattr(os, "sched_getaffinity") or (os.cpu_count() or 1) < 2:
        pytest.skip("needs Linux and two CPUs")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert load.free_cpus() is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(os.cpu_count())))
    monkeypatch.setattr(load, "cached_cpu_quota", lambda: 1)
    assert load.free_cpus() is None


def test_without_the_kernels_statistics_every_thread_is_used():
    # macOS, Windows: no wait to measure, so nothing to follow (as before)
    threads = ThreadsForLoad(4, waited=lambda: float("nan"), clock=lambda: 0.0, free=lambda: 0)
    threads.started()
    threads.finished()
    assert not threads.following and threads.n_threads == 4


def test_one_thread_is_never_measured():
    calls = []
    threads = ThreadsForLoad(1, waited=lambda: calls.append(1) or 0.0, clock=lambda: 0.0)
    threads.started()
    threads.finished()
    assert threads.n_threads == 1 and not calls


def test_this_threads_wait_is_read_where_the_kernel_says_it():
    waited = load._waited_seconds()
    assert waited != waited or waited >= 0.0  # NaN where the kernel keeps no schedstat
    assert 1 <= ThreadsForLoad(4).n_threads <= 4  # as many as are free now


@pytest.mark.usefixtures("openmp")
def test_the_model_does_not_depend_on_the_team_the_load_left(monkeypatch):
    # the cores look taken after every block: the team halves block by block while the
    # rounds grow; the model is the one of a training at a fixed thread count
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    y = X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.normal(size=3000)
    config = bst.GBDTConfig(n_estimators=12, max_depth=4, subsample=0.8, histogram_mode="i16")
    fixed = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=1)
    sizes = []
    original = ThreadsForLoad.finished

    def cores_taken(self):
        self._window_wall, self._window_wait = 1.0, 0.9
        original(self)
        sizes.append(self.n_threads)

    monkeypatch.setattr(ThreadsForLoad, "finished", cores_taken)
    monkeypatch.setattr(load, "free_cpus", lambda: None)  # starts with all 4, whatever runs beside
    monkeypatch.setattr("boosters.training.growth.grower.BLOCK_SECONDS", 0.0)  # one round a block
    followed = bst.GBDTModel.train(bst.Dataset(X, y), config, n_threads=4)
    assert sizes[:3] == [2, 1, 1]
    assert followed.to_bytes() == fixed.to_bytes()
