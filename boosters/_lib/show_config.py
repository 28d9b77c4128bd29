"""boosters.show_config(): how this installation was built and what it will use."""

from __future__ import annotations

import os
import platform
import sys

from boosters._lib import _build_info
from boosters._lib._openmp import omp_max_threads, openmp_enabled
from boosters._lib.threads import available_cpus, effective_n_threads


def openmp_runtime() -> str | None:
    """The file of the OpenMP runtime the kernels call, or None (serial build, or unknown).

    The symbol ``omp_get_max_threads`` is looked up from the kernels' own module (so the
    answer is the runtime *they* are bound to, not any other copy loaded in the process,
    such as scikit-learn's or LightGBM's), and ``dladdr`` names the file holding it. A
    wheel from PyPI's Linux build answers ``.../boosters.libs/libgomp-<hash>.so.1`` (the
    vendored runtime); a build from source answers the system's ``libgomp.so.1``.
    """
    if not openmp_enabled():
        return None
    import ctypes

    from boosters._lib import _openmp

    try:
        module = ctypes.CDLL(_openmp.__file__)
        address = ctypes.cast(module.omp_get_max_threads, ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None
    if sys.platform == "win32":
        return _windows_module_of(address)

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    for name in (None, "libdl.so.2"):  # glibc < 2.34 keeps dladdr in libdl
        try:
            dladdr = ctypes.CDLL(name).dladdr
        except (OSError, AttributeError):
            continue
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
        info = DlInfo()
        if dladdr(address, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(os.fsdecode(info.dli_fname))
    return None


def _windows_module_of(address: int | None) -> str | None:
    import ctypes
    from ctypes import wintypes

    kernel32 = getattr(ctypes, "WinDLL")("kernel32", use_last_error=True)  # Windows only: typeshed's Linux ctypes lacks it
    handle = wintypes.HMODULE()
    from_address, unchanged_refcount = 0x4, 0x2
    if not kernel32.GetModuleHandleExW(from_address | unchanged_refcount,
                                       ctypes.c_void_p(address), ctypes.byref(handle)):
        return None
    buffer = ctypes.create_unicode_buffer(32768)
    if not kernel32.GetModuleFileNameW(handle, buffer, len(buffer)):
        return None
    return buffer.value


def config_dict() -> dict:
    return {
        "version": _build_info.VERSION,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "compiler": _build_info.C_COMPILER,
        "c_flags": _build_info.C_FLAGS,
        "build_type": _build_info.BUILD_TYPE,
        "openmp": openmp_enabled(),
        "openmp_runtime": openmp_runtime(),
        "omp_max_threads": omp_max_threads(),
        "available_cpus": available_cpus(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "threads_in_effect": effective_n_threads(0),
    }


def show_config() -> None:
    """Print how this installation was built and what it will use.

    The version, Python and platform, the compiler and its flags, whether OpenMP is on
    and which OpenMP runtime file the kernels call (``openmp_runtime``: a wheel's vendored
    libgomp in ``boosters.libs/``, or the system's), and the thread count ``n_threads=0`` uses (``OMP_NUM_THREADS``, the CPU affinity mask
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
