"""How much memory this process may still take, for refusing outputs that cannot fit.

An output of tens of GiB allocated with `np.zeros` "succeeds" on Linux (pages are mapped
lazily) and the process is killed later, while the kernel fills it. Outputs whose size
grows faster than their input (SHAP interaction values: rows x features^2) are checked up
front against what the machine, and the container's memory limit, have left.
"""

from __future__ import annotations

import os

from boosters._lib.cgroup import memory_headroom

GIB = 1 << 30


def _meminfo_available() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (Linux), else the free physical pages."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def available_memory() -> int | None:
    """Bytes this process can still allocate without swapping or being killed, as best
    known: the smaller of the machine's available memory and the cgroup's headroom; None
    when neither can be read (the check is then skipped)."""
    known = [b for b in (_meminfo_available(), memory_headroom()) if b is not None]
    return min(known) if known else None


def require_memory(n_bytes: int, what: str, advice: str) -> None:
    """MemoryError, before allocating, when `what` needs more than the memory available."""
    available = available_memory()
    if available is not None and n_bytes > available:
        raise MemoryError(f"{what} needs {n_bytes / GIB:.1f} GiB but {available / GIB:.1f} GiB of memory is "
                          f"available: {advice}")
