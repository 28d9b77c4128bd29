"""Type checkers read boosters' annotations: the package ships the PEP 561 marker
``py.typed`` (without it mypy and pyright skip an installed package as untyped), mypy
flags wrongly typed arguments to the main entry points and passes the right calls, and
mypy passes over the package itself (configured in pyproject.toml's [tool.mypy])."""

import ast
import re
import shutil
from importlib import resources
from pathlib import Path

import pytest

import boosters
from boosters.sklearn import _PARAMETERS, _GBDTEstimator
from support.child_python import python_run

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"  # pytest's configuration too: always there

# A user's script: the lines marked "# E: <code>" are the errors mypy must report, and the
# only ones (every other call is right).
SNIPPET = """\
import numpy as np
import boosters as bst
from boosters.sklearn import GBDTClassifier, GBDTRanker, GBDTRegressor

X, y = np.zeros((10, 2)), np.zeros(10)
dataset = bst.Dataset(X, y)
config = bst.GBDTConfig(n_estimators=10, learning_rate=0.1, objective=bst.Objective.logistic(),
                        growth_strategy="leafwise", metric=[bst.Metric.rmse()])
model = bst.GBDTModel.train(dataset, config, val_set=dataset, n_threads=2)
predictions: np.ndarray = model.predict(X, num_iteration=5)
model.save("model.npz")
loaded: bst.GBDTModel = bst.GBDTModel.load("model.npz")
booster = bst.train({"objective": "binary", "num_leaves": 15}, dataset, num_boost_round=10)
GBDTRegressor(n_estimators=10, num_leaves=31, objective="quantile", alpha=0.9)
GBDTClassifier(class_weight="balanced", learning_rate=0.05)
GBDTRanker(ndcg_at=5, max_depth=4)

bst.GBDTConfig(n_estimators="ten")  # E: arg-type
bst.GBDTConfig(learning_rate="0.1")  # E: arg-type
bst.GBDTModel.train(dataset, {"n_estimators": 10})  # E: arg-type
model.predict(X, num_iteration="5")  # E: arg-type
model.save(42)  # E: arg-type
bst.train({"objective": "binary"}, dataset, num_boost_round=2.5)  # E: arg-type
GBDTRegressor(n_estimators="ten")  # E: arg-type
GBDTRanker(5)  # E: call-arg
"""


def test_the_installed_package_has_py_typed():
    marker = resources.files("boosters") / "py.typed"
    assert marker.is_file()
    assert marker.read_bytes() == b""  # the whole package is typed ("partial\n" would say otherwise)


@pytest.fixture(scope="module")
def mypy_lines(tmp_path_factory) -> list[str]:
    """One mypy run (~20 s on 2 idle cores, the whole package analysed once) over the
    package these tests import and a user's script (SNIPPET, as check.py), with the
    repository's configuration ([tool.mypy]: the compiled kernels and the untyped optional
    dependencies are Any). mypy reads a copy of the package's Python sources (and stubs,
    and py.typed): site-packages may not be on MYPYPATH, which mypy refuses, and the
    compiled kernels stay behind."""
    src = tmp_path_factory.mktemp("mypy")
    package = Path(boosters.__file__).parent
    shutil.copytree(package, src / "boosters",
                    ignore=lambda folder, names: [n for n in names if not (n.endswith((".py", ".pyi", ".typed"))
                                                                          or (Path(folder) / n).is_dir())])
    (src / "check.py").write_text(SNIPPET)
    done = python_run("-m", "mypy", "--config-file", PYPROJECT, "--no-incremental", "--cache-dir", src / "cache",
                      "--no-error-summary", "boosters", "check.py", cwd=src, capture_output=True, text=True,
                      timeout=600)
    assert done.returncode in (0, 1) and not done.stderr, done.stdout + done.stderr  # 1: the snippet's errors
    return done.stdout.strip().splitlines()


def test_mypy_flags_wrong_arguments_and_passes_right_calls(mypy_lines):
    """mypy on a user's script: the str given for an int, a dict for a GBDTConfig, a float
    for a round count, a positional estimator argument are errors; the right calls of
    GBDTConfig, GBDTModel.train / predict / save / load, boosters.train and the
    estimators' constructors (LightGBM's names among their keywords) are not."""
    output = "\n".join(mypy_lines)
    expected = {(i, m[1]) for i, line in enumerate(SNIPPET.splitlines(), 1) if (m := re.search(r"# E: (\S+)", line))}
    found = {(int(m[1]), m[2]) for e in mypy_lines
             if (m := re.fullmatch(r"check\.py:(\d+): error: .*\[(\S+)\]", e))}
    assert found == expected, output
    assert ('check.py:18: error: Argument "n_estimators" to "GBDTConfig" has incompatible type "str"; '
            'expected "int"  [arg-type]') in mypy_lines, output


def test_mypy_passes_over_the_package(mypy_lines):
    """`mypy boosters` finds no error (notes aside): every line mypy wrote is about the
    user's script."""
    assert [e for e in mypy_lines if not e.startswith("check.py:") and ": note: " not in e] == []


def test_the_estimators_typed_signature_is_their_parameters():
    """The constructor type checkers read (`_GBDTEstimator.__init__`, under TYPE_CHECKING)
    takes the parameters `_storing_init` makes the estimators' __init__ from, keyword-only,
    with the same defaults."""
    tree = ast.parse(Path(boosters.sklearn.__file__).read_text())
    estimator = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "_GBDTEstimator")
    init = next(node for block in estimator.body if isinstance(block, ast.If) for node in block.body
                if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    arguments = init.args
    assert [a.arg for a in arguments.args] == ["self"] and arguments.kwarg.arg == "other_params"
    typed = {a.arg: ast.literal_eval(d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)}
    assert typed == _PARAMETERS
    assert all(a.annotation is not None for a in arguments.kwonlyargs)
    assert "__init__" not in vars(_GBDTEstimator)  # for type checkers only: at run time the estimators' own


def test_mypy_configuration_names_every_compiled_module():
    """pyproject.toml's [tool.mypy] override for the Cython kernels (no stubs: Any to mypy)
    names every .pyx module of the repository, so that a new kernel does not fail `mypy`."""
    text = PYPROJECT.read_text()
    override = text[text.index("[tool.mypy]"):]
    override = override[:override.index("ignore_missing_imports")]
    listed = set(re.findall(r'"(boosters\.[\w.]+)"', override)) - {"boosters._lib._build_info"}
    root = PYPROJECT.parent
    kernels = {".".join(path.relative_to(root).with_suffix("").parts) for path in (root / "boosters").rglob("*.pyx")}
    assert kernels and listed == kernels
