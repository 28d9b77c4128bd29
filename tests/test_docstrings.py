"""Every public name has a numpydoc docstring with its parameters and an example, the
examples run (doctest), and the API reference (docs/api.rst) lists every public name.

The public modules are listed in docs/conf.py (PUBLIC_MODULES: one place, read here and
by the Sphinx build); docs/parameters.md must have a row for every GBDTConfig parameter.
"""

import doctest
import enum
import importlib
import importlib.util
import inspect
import re
import runpy
from pathlib import Path

import numpy as np
import pytest
from numpydoc.validate import validate

import boosters as bst

DOCS = Path(__file__).resolve().parent.parent / "docs"
CONF = runpy.run_path(str(DOCS / "conf.py"))
PUBLIC_MODULES = CONF["PUBLIC_MODULES"]

# numpydoc's checks (numpydoc.readthedocs.io, "Validation"): GL08 no docstring, SS01 no
# summary, PR01 a parameter not documented, PR02 a documented parameter that does not
# exist, RT01 no Returns section though something is returned, EX01 no Examples section.
CHECKS = {
    "function": {"GL08", "SS01", "PR01", "PR02", "RT01", "EX01"},
    "class": {"GL08", "SS01", "PR01", "PR02", "EX01"},
    "enum": {"GL08", "SS01", "EX01"},  # an enum's constructor is Enum's own
    "property": {"GL08", "SS01"},  # an attribute: a summary says what it holds
}
# Examples assume these, as the API reference says.
DOCTEST_GLOBALS = {"np": np, "bst": bst}
DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def module_public_names(module_name: str) -> list[str]:
    """The module's __all__ (less dunders), else the classes and functions it defines
    whose names do not start with an underscore."""
    module = importlib.import_module(module_name)
    if hasattr(module, "__all__"):  # less submodules (boosters.callbacks has its own section)
        return [name for name in module.__all__
                if not name.startswith("__") and not inspect.ismodule(getattr(module, name))]
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
            and obj.__module__ == module_name]


def class_members(cls) -> list[tuple[str, str]]:
    """(name, "function" | "property") of the public methods and properties of `cls`,
    including those inherited from boosters' own (private) base classes."""
    members, seen = [], set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("boosters"):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(attr, property):
                members.append((name, "property"))
            elif isinstance(attr, (staticmethod, classmethod)) or inspect.isfunction(attr):
                members.append((name, "function"))
    return members


def public_objects() -> list[tuple[str, str]]:
    """(qualified name, kind) of every public class, function, method and property."""
    out = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module_public_names(module_name):
            obj = getattr(module, name)
            qualified = f"{module_name}.{name}"
            if inspect.isclass(obj):
                out.append((qualified, "enum" if issubclass(obj, enum.Enum) else "class"))
                out += [(f"{qualified}.{member}", kind) for member, kind in class_members(obj)]
            else:
                out.append((qualified, "function"))
    return out


PUBLIC = public_objects()


def resolve(qualified: str):
    """The object a qualified name (module.attr.attr) names, and its owner (or None)."""
    for cut in range(qualified.count("."), 0, -1):
        module_name, rest = qualified.rsplit(".", cut)[0], qualified.split(".")[-cut:]
        try:
            obj = importlib.import_module(module_name)
        except ImportError:
            continue
        owner = None
        for part in rest:
            owner, obj = obj, inspect.getattr_static(obj, part)
        return obj, owner
    raise ImportError(qualified)


def failed_checks(qualified: str, kind: str) -> list[str]:
    errors = validate(qualified)["errors"]
    return [f"{code}: {message}" for code, message in errors if code in CHECKS[kind]]


def test_public_names_are_found():
    names = {name for name, _ in PUBLIC}
    # a sample that must be there: a class, a static method, a property, a function, sklearn
    assert {"boosters.GBDTModel", "boosters.Objective.softmax", "boosters.GBDTModel.n_trees",
            "boosters.show_config", "boosters.sklearn.GBDTClassifier.predict_proba"} <= names


@pytest.mark.parametrize("qualified, kind", PUBLIC, ids=[p[0] for p in PUBLIC])
def test_docstring(qualified, kind):
    errors = failed_checks(qualified, kind)
    assert not errors, f"{qualified}:\n" + "\n".join(errors)


def doctests():
    finder = doctest.DocTestFinder(recurse=False)
    out = []
    for qualified, _ in PUBLIC:
        obj, owner = resolve(qualified)
        if isinstance(obj, (staticmethod, classmethod)):
            obj = getattr(owner, qualified.rsplit(".", 1)[1])
        for test in finder.find(obj, qualified, module=False, globs=dict(DOCTEST_GLOBALS)):
            if test.examples:
                out.append(test)
    return out


DOCTESTS = doctests()


def test_doctests_are_found():
    names = {test.name for test in DOCTESTS}
    assert {"boosters.GBDTConfig", "boosters.GBDTModel.predict", "boosters.Objective.softmax",
            "boosters.show_config"} <= names


@pytest.mark.parametrize("test", DOCTESTS, ids=[test.name for test in DOCTESTS])
def test_doctest(test):
    report = []
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)


def api_sections() -> dict[str, set[str]]:
    """docs/api.rst: module (currentmodule) -> the names its autosummary lists."""
    sections, module, in_autosummary = {}, None, False
    for line in (DOCS / "api.rst").read_text().splitlines():
        if match := re.match(r"\.\. currentmodule:: (\S+)$", line):
            module = match.group(1)
            sections.setdefault(module, set())
        elif line.startswith(".. autosummary::"):
            in_autosummary = True
        elif in_autosummary and re.match(r"   [A-Za-z_]\w*$", line):
            sections[module].add(line.strip())
        elif line and not line.startswith(" "):
            in_autosummary = False
    return sections


def test_api_reference_lists_every_public_name():
    sections = api_sections()
    assert sorted(sections) == sorted(PUBLIC_MODULES)
    for module_name in PUBLIC_MODULES:
        assert sections[module_name] == set(module_public_names(module_name)), module_name


def test_parameter_table_lists_every_config_parameter():
    """docs/parameters.md has a row for every GBDTConfig parameter (first column)."""
    rows = set(re.findall(r"^\| `(\w+)` \|", (DOCS / "parameters.md").read_text(), re.MULTILINE))
    assert rows == set(bst.GBDTConfig._FIELDS)
