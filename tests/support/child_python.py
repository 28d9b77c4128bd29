"""Fresh interpreters for the tests that need one (a crash, a hang, a fork, a kill must not
take pytest with it).

A child runs from a directory outside the repository unless a test names one: `python -c`
and `python -m` put the working directory first on sys.path, and the repository's
./boosters has no compiled kernels when boosters is installed from a wheel (CI), so a
child started in the repository root imports the wrong, empty package.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile

__all__ = ["python_popen", "python_run"]


def _outside_the_repository(kwargs: dict) -> dict:
    if kwargs.get("cwd") is None:
        kwargs["cwd"] = tempfile.gettempdir()
    return kwargs


def python_run(*args, **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run([python, *args], **kwargs)` outside the repository."""
    return subprocess.run([sys.executable, *map(str, args)], **_outside_the_repository(kwargs))


def python_popen(*args, **kwargs) -> subprocess.Popen:
    """`subprocess.Popen([python, *args], **kwargs)` outside the repository."""
    return subprocess.Popen([sys.executable, *map(str, args)], **_outside_the_repository(kwargs))
