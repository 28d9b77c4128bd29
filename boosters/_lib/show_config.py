"""boosters.show_config(): how this installation was built and what it will use."""

from __future__ import annotations

import os
import platform
import sys

from boosters._lib import _build_info
from boosters._lib._openmp import omp_max_threads, openmp_enabled
from boosters._lib.threads import available_cpus, effective_n_threads


def config_dict() -> dict:
    return {
        "version": _build_info.VERSION,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "compiler": _build_info.C_COMPILER,
        "c_flags": _build_info.C_FLAGS,
        "build_type": _build_info.BUILD_TYPE,
        "openmp": openmp_enabled(),
        "omp_max_threads": omp_max_threads(),
        "available_cpus": available_cpus(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "threads_in_effect": effective_n_threads(0),
    }


def show_config() -> None:
    """Print how this installation was built and what it will use.

    The version, Python and platform, the compiler and its flags, whether OpenMP is on,
    and the thread count ``n_threads=0`` uses (``OMP_NUM_THREADS``, the CPU affinity mask
    and container CPU quotas are respected). Worth pasting into a bug report.

    Examples
    --------
    >>> bst.show_config()  # doctest: +ELLIPSIS
    boosters build and runtime configuration
      version           : ...
      threads_in_effect : ...
    """
    info = config_dict()
    width = max(len(k) for k in info)
    print("boosters build and runtime configuration")
    for key, value in info.items():
        print(f"  {key:<{width}} : {value}")
