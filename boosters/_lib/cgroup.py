"""The container's limits, read from the cgroup filesystem: v2 (one hierarchy, newer
Docker, Kubernetes and systemd hosts) first, else v1 (a folder per controller, older
hosts). Without either (not Linux, no limit set) each reader answers None. Used by
`threads.py` (CPU quota) and `memory.py` (memory headroom)."""

from __future__ import annotations

import math
import os

ROOT = "/sys/fs/cgroup"  # where the process's own cgroup is mounted (a container's namespace)
_V1_UNLIMITED = 1 << 62  # v1 writes "no limit" as 2^63 - 1 rounded to a page; no host has 4 EiB


def _read_first_line(relative_path: str) -> str | None:
    try:
        with open(os.path.join(ROOT, relative_path)) as f:
            return f.readline().strip()
    except OSError:
        return None


def _read_int(relative_path: str) -> int | None:
    line = _read_first_line(relative_path)
    if line is None:  # no file
        return None
    try:
        return int(line)
    except ValueError:  # not a number ("max")
        return None


def cpu_quota() -> int | None:
    """CPUs allowed by the cgroup quota (v2 `cpu.max` or v1 CFS), or None if unlimited."""
    line = _read_first_line("cpu.max")
    if line:
        fields = line.split()
        if len(fields) == 2 and fields[0] != "max":
            try:
                return max(1, math.ceil(int(fields[0]) / int(fields[1])))
            except (ValueError, ZeroDivisionError):
                pass
    quota, period = _read_int("cpu/cpu.cfs_quota_us"), _read_int("cpu/cpu.cfs_period_us")
    if quota is not None and quota > 0 and period:
        return max(1, math.ceil(quota / period))
    return None


def memory_headroom() -> int | None:
    """Bytes left under the cgroup memory limit (v2 `memory.max` less `memory.current`, or
    v1 `memory.limit_in_bytes` less `memory.usage_in_bytes`), None without a limit."""
    if _read_first_line("memory.max") is not None:  # v2; its "max" (no limit) reads as None
        limit, used = _read_int("memory.max"), _read_int("memory.current")
    else:
        limit, used = _read_int("memory/memory.limit_in_bytes"), _read_int("memory/memory.usage_in_bytes")
        if limit is not None and limit >= _V1_UNLIMITED:
            limit = None
    if limit is None or used is None:
        return None
    return max(0, limit - used)
