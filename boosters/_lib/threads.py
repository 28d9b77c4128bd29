"""The one place that decides how many threads a kernel may use.

Every kernel takes its thread count explicitly; callers get it from
`effective_n_threads`, which respects OMP_NUM_THREADS, the CPU affinity mask and
the cgroup CPU quota (containers), so `n_threads=0` never oversubscribes.
"""

from __future__ import annotations

import math
import numbers
import os

from boosters._lib._openmp import openmp_enabled


def _read_first_line(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return None


def cgroup_cpu_quota() -> int | None:
    """CPUs allowed by the cgroup quota (v2 `cpu.max` or v1 CFS), or None if unlimited."""
    line = _read_first_line("/sys/fs/cgroup/cpu.max")
    if line:
        fields = line.split()
        if len(fields) == 2 and fields[0] != "max":
            try:
                return max(1, math.ceil(int(fields[0]) / int(fields[1])))
            except (ValueError, ZeroDivisionError):
                pass
    quota = _read_first_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
    period = _read_first_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
    try:
        if quota is not None and period is not None and int(quota) > 0:
            return max(1, math.ceil(int(quota) / int(period)))
    except (ValueError, ZeroDivisionError):
        pass
    return None


def available_cpus() -> int:
    """CPUs this process may run on: the affinity mask, capped by the cgroup quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
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


def effective_n_threads(n_threads: int = 0) -> int:
    """Threads to use: `n_threads` if positive; for 0, OMP_NUM_THREADS or all available CPUs.

    Always 1 in a build without OpenMP.
    """
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral):
        raise TypeError(f"n_threads must be an int (0 = all cores), got {type(n_threads).__name__}")
    if n_threads < 0:
        raise ValueError(f"n_threads must be >= 0 (0 = all cores), got {n_threads}")
    if not openmp_enabled():
        return 1
    if n_threads == 0:
        return _omp_num_threads_env() or available_cpus()
    return int(n_threads)
