"""Type checkers read boosters' annotations: the package ships the PEP 561 marker
``py.typed`` (without it mypy and pyright skip an installed package as untyped), and mypy
flags a wrongly typed argument."""

import os
import shutil
from importlib import resources
from pathlib import Path


import boosters
from support.child_python import python_run

SNIPPET = """\
import boosters as bst

bst.GBDTConfig(n_estimators=10, learning_rate=0.1)
bst.GBDTConfig(n_estimators="ten")
"""


def test_the_installed_package_has_py_typed():
    marker = resources.files("boosters") / "py.typed"
    assert marker.is_file()
    assert marker.read_bytes() == b""  # the whole package is typed ("partial\n" would say otherwise)


def test_mypy_flags_a_wrong_argument_type(tmp_path):
    """mypy on a script using the package these tests import (a copy of its sources, so
    that site-packages need not be on MYPYPATH, which mypy refuses): the str given for
    an int is an error, the right call is not."""
    package = Path(boosters.__file__).parent
    shutil.copytree(package, tmp_path / "src" / "boosters",
                    ignore=lambda folder, names: [n for n in names if not (n.endswith((".py", ".pyi", ".typed"))
                                                                          or (Path(folder) / n).is_dir())])
    (tmp_path / "check.py").write_text(SNIPPET)
    done = python_run("-m", "mypy", "--no-incremental", "--cache-dir", tmp_path / "cache", "--follow-imports=silent",
                      "--ignore-missing-imports", "--no-error-summary", "check.py",
                      cwd=tmp_path, env={**os.environ, "MYPYPATH": str(tmp_path / "src")},
                      capture_output=True, text=True, timeout=600)
    errors = done.stdout.strip().splitlines()
    assert errors == ['check.py:4: error: Argument "n_estimators" to "GBDTConfig" has incompatible type "str"; '
                      'expected "int"  [arg-type]'], done.stdout + done.stderr

