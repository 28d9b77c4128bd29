"""A training's thread count that follows the load on the cores.

A training's threads meet at a barrier many times per tree (every node's histograms,
split search and partition). When other work holds the cores (GridSearchCV's parallel
fits, Dask workers or pods on one node, a notebook beside a web server), a team thread
waits in the run queue for a core while its mates spin at the barrier for it (OpenMP
runtimes spin a while before they sleep): the team moves at the pace of its slowest
member, and the spinning takes the cores the waiting threads need. K trainings of T
threads on fewer than K x T cores then take several times longer at once than one
after another.

So the trainer starts with the threads the machine has free (its online CPUs less the
threads ready to run right now, Linux's /proc/loadavg; every thread asked for in a
process held to some CPUs, whose own CPUs the host's counts do not tell), then measures,
over each block of rounds, how long its own thread was ready to run but waited for a core
(Linux's scheduler statistics), and halves its team when that is a large share of the
block: the cores are taken. Where the kernel keeps no such statistics (macOS, Windows),
a training uses every thread asked for, as before. After a quiet spell it tries a team
twice as large again (up to the count asked for) if that many cores are free, waiting
twice as long after each try that met taken cores: a try in vain costs a block with a
team the cores cannot run. Every kernel's
sums are thread-count independent, so this changes a training's time, never its model.
"""

from __future__ import annotations

import math
import os
import threading
import time
from typing import Callable

from boosters._lib.threads import cached_cpu_quota

# A thread that waited for a core this share of a window or more: the cores are taken
# (K teams of T threads on K x T / 2 cores wait about half of the time; one team of two beside
# one single thread on two cores, a third).
WAIT_TAKEN = 0.25
# Below this share a window is quiet: after QUIET_SECONDS of them, a larger team is tried.
WAIT_QUIET = 0.1
MIN_WINDOW_SECONDS = 0.03   # shares are taken over at least this much time (a block may be 1 ms)
FIRST_QUIET_SECONDS = 0.5   # quiet time before the first try of a larger team,
MAX_QUIET_SECONDS = 16.0    # doubled after each try that met taken cores, up to this
FREE_READINGS, FREE_READING_GAP = 3, 0.0005  # the free CPUs: the most of 3 readings 0.5 ms apart

_SCHEDSTAT = "/proc/thread-self/schedstat"  # ns on a CPU, ns waiting to run, timeslices
_LOADAVG = "/proc/loadavg"  # "0.52 0.58 0.59 3/1234 5678": the 4th field's first number is running now


def free_cpus() -> int | None:
    """The machine's CPUs that no other work is ready to run on right now, counting this
    thread as running: online CPUs less Linux's count of runnable threads, not counting
    this process's others (its OpenMP workers spin a while after a parallel region; other
    work in threads of this process is missed too, and left to the wait measure). None
    where unknown, and for a process held to some CPUs (an affinity mask, a container's
    cpuset or CPU quota): both counts are the host's, which say nothing of its own CPUs."""
    cpus = os.cpu_count() or 1
    try:
        if len(os.sched_getaffinity(0)) < cpus or cached_cpu_quota() is not None:
            return None  # a cpuset or a quota: the host's count says nothing of this process's CPUs
        with open(_LOADAVG, "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
    except (AttributeError, OSError, IndexError, ValueError):  # no sched_getaffinity: not Linux
        return None
    return cpus - running + _own_other_runnable_threads()


def _own_other_runnable_threads() -> int:
    """This process's threads, other than this one, that are running or ready to run."""
    me, n = str(threading.get_native_id()), 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0
    for task in tasks:
        if task == me:
            continue
        try:
            with open(f"/proc/self/task/{task}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]  # after the name, which may hold ") "
        except (OSError, IndexError):
            continue  # the thread ended
        n += state == b"R"
    return n


def _waited_seconds() -> float:
    """Seconds this thread has waited, ready to run, for a core (NaN where unknown: not
    Linux, or a kernel without scheduler statistics)."""
    for path in (_SCHEDSTAT, f"/proc/self/task/{threading.get_native_id()}/schedstat"):  # Linux < 3.17: the 2nd
        try:
            with open(path, "rb") as f:
                return int(f.read().split()[1]) * 1e-9
        except (OSError, IndexError, ValueError):
            continue
    return math.nan


class ThreadsForLoad:
    """The thread count of a training's next block of rounds, 1..`n_threads`: `n_threads`
    until the cores are taken (see the module docstring). Call `started()` and
    `finished()` around each block, on the thread that runs it."""

    def __init__(self, n_threads: int, waited: Callable[[], float] | None = None,
                 clock: Callable[[], float] = time.monotonic, free: Callable[[], int | None] | None = None):
        """`waited`, `clock`, `free`: seconds waited for a core, wall seconds and the free
        CPUs (`free_cpus`; tests pass their own)."""
        self.most = self.n_threads = max(1, int(n_threads))
        self._clock, self._free = clock, free or free_cpus
        self._waited = waited or _waited_seconds
        # nothing to follow with one thread, nor where this thread's wait is not kept (not Linux)
        self.following = self.most > 1 and not math.isnan(self._waited())
        if self.following:
            self.n_threads = self._affordable(self.most, 1)
        self._window_wall = self._window_wait = 0.0
        self._quiet = 0.0                       # seconds of quiet windows at this team size
        self._quiet_needed = FIRST_QUIET_SECONDS
        self._trying = False                    # this team size is a try of a larger team
        self._start = (0.0, 0.0)

    def started(self) -> None:
        if self.following:
            self._start = (self._clock(), self._waited())

    def finished(self) -> None:
        """The block ended: the window's shares decide the next team size."""
        if not self.following:
            return
        wall, wait = self._clock(), self._waited()
        self._window_wall += wall - self._start[0]
        self._window_wait += wait - self._start[1]
        if self._window_wall < MIN_WINDOW_SECONDS:
            return
        share = self._window_wait / self._window_wall
        window, self._window_wall, self._window_wait = self._window_wall, 0.0, 0.0
        if share >= WAIT_TAKEN and self.n_threads > 1:
            if self._trying:  # the larger team met taken cores again: wait longer before the next try
                self._quiet_needed = min(2 * self._quiet_needed, MAX_QUIET_SECONDS)
            self.n_threads, self._quiet, self._trying = max(1, self.n_threads // 2), 0.0, False
            return
        if self._trying:  # the larger team held a window: the cores are free again
            self._trying, self._quiet_needed = False, FIRST_QUIET_SECONDS
        if share < WAIT_QUIET and self.n_threads < self.most:
            self._quiet += window
            if self._quiet >= self._quiet_needed:
                larger = self._affordable(min(self.most, 2 * self.n_threads), self.n_threads)
                self._quiet, self._trying = 0.0, larger > self.n_threads
                self.n_threads = larger

    def _affordable(self, wanted: int, now: int) -> int:
        """The most threads, up to `wanted` and at least `now`, that this thread and the free
        CPUs can run (`free_cpus` counts this process's other threads, its team, as free)."""
        most_free = -(1 << 30)
        for reading in range(FREE_READINGS):  # the most of a few: a thread that ran for a moment is no load
            free = self._free()
            if free is None or 1 + free >= wanted:  # unknown, or enough: later readings change nothing
                return wanted
            most_free = max(most_free, free)
            if reading + 1 < FREE_READINGS:
                time.sleep(FREE_READING_GAP)
        return max(now, min(wanted, 1 + most_free))
