"""The one place that decides how many threads a kernel may use.

Every kernel takes its thread count explicitly; callers get it from
`effective_n_threads`, which respects OMP_NUM_THREADS, the CPU affinity mask and
the cgroup CPU quota (containers), so `n_threads=0` never oversubscribes.

After `fork()` (multiprocessing's 'fork' and 'forkserver' start methods, gunicorn
--preload, Celery's prefork pool) the child inherits an OpenMP runtime whose worker
threads do not exist in it: libgomp's next parallel region with more than one thread
waits for them forever. The runtime is shared: LightGBM, and XGBoost or scikit-learn
where they link the system libgomp (conda, distribution packages), start the same
thread pool as boosters, and leave no trace boosters could read (counting the parent's
threads says nothing: numpy's BLAS starts its own on import). So every process made
by fork runs boosters serially, with a one-time warning, whatever the parent ran;
`n_threads=1` never starts a team, so it cannot hang. Processes started fresh
('spawn', joblib's loky, Dask's nannies) use threads as usual.
"""

from __future__ import annotations

import functools
import numbers
import os
import sys
import time
import warnings

from boosters._lib._openmp import openmp_enabled
from boosters._lib.cgroup import cpu_quota


_QUOTA_SECONDS = 1.0  # the cgroup quota is read again after this: it costs ~50 us, 4x a one-row prediction
_quota_read: tuple[float, int | None] = (-float("inf"), None)  # (when, quota)


def cached_cpu_quota() -> int | None:
    """The cgroup CPU quota, read at most once a second (a container's quota seldom changes)."""
    global _quota_read
    now = time.monotonic()
    if now - _quota_read[0] > _QUOTA_SECONDS:
        _quota_read = (now, cpu_quota())
    return _quota_read[1]


def available_cpus() -> int:
    """CPUs this process may run on: the affinity mask, capped by the cgroup quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    quota = cached_cpu_quota()
    if quota is not None:
        n = min(n, quota)
    return max(1, n)


def _omp_num_threads_env() -> int | None:
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    try:
        n = int(value)
    except ValueError:
        return None
    return n if n > 0 else None


def _multiprocessing_child_of_fork() -> bool:
    """True in a multiprocessing child made by fork ('fork', or 'forkserver': a fork of
    the server), whose Process class names its start method: the at-fork hook below
    misses the fork when boosters is first imported in the child."""
    process = sys.modules.get("multiprocessing.process")
    return process is not None and getattr(process.current_process(), "_start_method", None) in ("fork", "forkserver")


_in_forked_child = _multiprocessing_child_of_fork()
_fork_warned = False


def _mark_forked_child() -> None:
    global _in_forked_child
    _in_forked_child = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_mark_forked_child)


@functools.cache  # os.cpu_count() costs ~10 us, the machine's CPUs do not change
def max_n_threads() -> int:
    """The largest n_threads accepted: more threads than this only cost memory (each
    OpenMP thread has its own stack; tens of thousands exhaust the process)."""
    return max(256, 4 * (os.cpu_count() or 1))


def effective_n_threads(n_threads: int = 0) -> int:
    """Threads to use: `n_threads` if positive; for 0 and -1, OMP_NUM_THREADS or all
    available CPUs; for -k (k >= 2), that many but k - 1 (at least one), as joblib's n_jobs.

    Always 1 in a build without OpenMP, and in a process made by fork (see the module
    docstring), which warns once when more than one thread was asked for.
    """
    global _fork_warned
    if type(n_threads) is not int and (isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral)):
        raise TypeError(f"n_threads must be an int (0 or -1 = all cores), got {type(n_threads).__name__}")
    if n_threads > 256 and n_threads > max_n_threads():  # max_n_threads() >= 256
        raise ValueError(f"n_threads must be at most {max_n_threads()} (4 per CPU, at least 256), got {n_threads}")
    if not openmp_enabled():
        return 1
    if n_threads <= 0:  # 0 and -1: every core; -2: every core but one (scikit-learn's / joblib's n_jobs)
        every_core = min(_omp_num_threads_env() or available_cpus(), max_n_threads())
        n_threads = every_core if n_threads == 0 else max(1, every_core + 1 + n_threads)
    if _in_forked_child and n_threads > 1:
        if not _fork_warned:
            _fork_warned = True
            warnings.warn("boosters: this process was forked (multiprocessing's 'fork' or 'forkserver' start "
                          "method, gunicorn --preload, Celery prefork...); OpenMP threads used before the fork, "
                          "by boosters or another library such as LightGBM, would hang it, so boosters runs "
                          "single-threaded here. Start child processes with 'spawn' (or joblib's loky) for "
                          "multi-threaded boosters in them; n_threads=1 silences this warning.",
                          RuntimeWarning, stacklevel=2)
        return 1
    return int(n_threads)
