"""The package's layering, read from the source with `ast` (lazy imports inside functions
count): data flows data -> objectives -> config -> training -> model -> io / explain ->
GBDTModel and the other public modules (callbacks, sklearn, plotting), which no lower layer
imports; objectives/ (every objective's and metric's definition, its gradient kernel and
output transform) imports only data/ and _lib/, so that both training/ and model/ can read
it; model/ imports nothing from training/ (training/ imports model/ to build its trees),
data/ nothing from any of them, and the benchmark tools stay outside the library. Inside
training/ and model/ the rooms are layered the same way (TRAINING_ROOMS, MODEL_ROOMS)."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import boosters
import boosters as bst
from boosters.training.trainer import TrainingResult

# The layering is a property of the sources: read the checkout's package folder (the one
# beside tests/), which holds the .pyx/.pxd files a wheel leaves out; the installed package
# where the tests run without a checkout.
_SOURCE = Path(__file__).resolve().parents[1] / "boosters"
PACKAGE = _SOURCE if (_SOURCE / "__init__.py").is_file() else Path(boosters.__file__).parent

# the public modules on top of everything: GBDTModel, the functional API (train, cv), the
# callbacks module (public names of training.callbacks, plus its own built-ins), the
# estimators, the plots, the converters from and to other libraries' model formats
PUBLIC_LAYER = ("boosters.gbdt_model", "boosters.functional", "boosters.callbacks", "boosters.sklearn",
                "boosters.plotting", "boosters.convert", "boosters.dask")
LIBRARY_ABOVE_OBJECTIVES = ("boosters.config", "boosters.training", "boosters.model", "boosters.io",
                            "boosters.explain")
# training/'s rooms, lowest first: the partitioner keeps each node's rows; the histogram
# builders read a node's rows from it; the split finder reads the histograms it is given;
# the growth loop drives the three; the trainer (the boosting loop) drives the growth
TRAINING_ROOMS = ("boosters.training.partition", "boosters.training.histograms", "boosters.training.split",
                  "boosters.training.growth", "boosters.training.trainer")
# model/'s rooms, lowest first: a tree's arrays; the prediction driver over flat arrays of
# trees; the forest (trees in boosting order, flattened for the driver); the ensemble
MODEL_ROOMS = ("boosters.model.tree", "boosters.model.prediction", "boosters.model.forest", "boosters.model.ensemble")


def rooms_import_only_lower_rooms(rooms: tuple[str, ...]) -> dict:
    """room -> the rooms after it in `rooms` (lowest first), which it must not import."""
    return {room: rooms[i + 1:] for i, room in enumerate(rooms)}


# module prefix -> prefixes it must not import
FORBIDDEN = {
    "boosters.data": ("boosters.objectives", *LIBRARY_ABOVE_OBJECTIVES, *PUBLIC_LAYER),
    "boosters.objectives": (*LIBRARY_ABOVE_OBJECTIVES, *PUBLIC_LAYER),
    "boosters.config": ("boosters.training", "boosters.model", "boosters.io", "boosters.explain", *PUBLIC_LAYER),
    "boosters.model": ("boosters.training", "boosters.io", "boosters.explain", *PUBLIC_LAYER),
    "boosters.training": ("boosters.io", "boosters.explain", *PUBLIC_LAYER),
    "boosters.io": ("boosters.training", "boosters.explain", *PUBLIC_LAYER),
    "boosters.explain": ("boosters.training", "boosters.io", *PUBLIC_LAYER),
    **rooms_import_only_lower_rooms(TRAINING_ROOMS),
    **rooms_import_only_lower_rooms(MODEL_ROOMS),
}
OPTIONAL_DEPENDENCIES = ("pandas", "pyarrow", "polars", "scipy", "sklearn", "matplotlib", "tqdm", "graphviz", "dask",
                         "distributed", "shap")
# modules that import an optional library inside the function that needs it, with an
# ImportError naming the extra when it is missing
LAZY_OPTIONAL = {"boosters.data.sparse": ("scipy",), "boosters.training.callbacks": ("tqdm",),
                 "boosters.plotting": ("matplotlib", "graphviz"), "boosters.explain.tree_table": ("pandas",),
                 "boosters.data.frames": ("pyarrow",), "boosters.data.block_sources": ("pyarrow",),
                 "boosters.dask.training": ("dask", "distributed"), "boosters.dask.estimators": ("distributed",),
                 "boosters.dask._step_runner": ("distributed",), "boosters.dask._engine": ("distributed",),
                 "boosters.dask._partition_state": ("distributed",),
                 "boosters.explain.shap_package": ("shap",)}
# modules that are the adapter to one optional library (never imported by boosters itself)
ADAPTERS = {"boosters.sklearn": "sklearn", "boosters.dask.estimators": "sklearn"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module named by an import statement anywhere in the source (functions too)."""
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from .x import y
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import|c?import\s+([\w.]+))", re.MULTILINE)


def cython_imported_modules(source: str) -> set[str]:
    """Module names of the import / cimport lines of a .pyx or .pxd file (all absolute here)."""
    return {a or b for a, b in CYTHON_IMPORT.findall(source)}


def violations(module: str, imports: set[str]) -> list[str]:
    out = []
    for layer, forbidden in FORBIDDEN.items():
        if module == layer or module.startswith(layer + "."):
            out += [f"{module} imports {name}" for name in imports
                    if any(name == f or name.startswith(f + ".") for f in forbidden)]
    in_bench = module == "boosters.bench" or module.startswith("boosters.bench.")
    if not in_bench and module != "boosters.__main__":
        out += [f"{module} imports {name}" for name in imports
                if name == "boosters.bench" or name.startswith("boosters.bench.")]
        out += [f"{module} imports optional {name}" for name in imports
                if name.split(".")[0] in OPTIONAL_DEPENDENCIES
                and name.split(".")[0] not in (*LAZY_OPTIONAL.get(module, ()), ADAPTERS.get(module))]
    return out


def library_modules():
    for pattern in ("*.py", "*.pyx", "*.pxd"):
        for path in sorted(PACKAGE.rglob(pattern)):
            yield path, module_name(path)


def test_every_layer_imports_only_layers_below_it():
    found = []
    n_checked = 0
    for path, module in library_modules():
        source = path.read_text()
        imports = (imported_modules(source, module, path.stem == "__init__") if path.suffix == ".py"
                   else cython_imported_modules(source))
        found += violations(module, imports)
        n_checked += 1
    assert n_checked > 30  # the walk really saw the package
    assert found == []


def test_lazy_optional_imports_are_inside_functions():
    for module, name in ((m, n) for m, names in LAZY_OPTIONAL.items() for n in names):
        source = (PACKAGE.parent / (module.replace(".", "/") + ".py")).read_text()
        top_level = [node for node in ast.parse(source).body if isinstance(node, (ast.Import, ast.ImportFrom))]
        names = [alias.name for node in top_level for alias in node.names] + \
                [node.module or "" for node in top_level if isinstance(node, ast.ImportFrom)]
        assert not any(n.split(".")[0] == name for n in names), f"{module} imports {name} at import time"
        assert any(m.split(".")[0] == name for m in imported_modules(source, module))


@pytest.mark.parametrize("module, source, expected", [
    ("boosters.model.tree", "def f():\n    from boosters.training.trainer import GBDTTrainer\n",
     "boosters.training.trainer"),
    ("boosters.model.tree", "from ..training import trainer\n", "boosters.training"),
    ("boosters.data.dataset", "import boosters.model.tree\n", "boosters.model.tree"),
    ("boosters.training.trainer", "from boosters.io import npz_format\n", "boosters.io"),
    ("boosters.training.trainer", "from boosters.callbacks import CallbackEnv\n", "boosters.callbacks"),
    ("boosters.explain.shap", "def f():\n    import boosters.plotting\n", "boosters.plotting"),
    ("boosters.model.tree", "from boosters.sklearn import GBDTRegressor\n", "boosters.sklearn"),
    ("boosters.gbdt_model", "from boosters.bench.datasets import make_friedman\n", "boosters.bench.datasets"),
    ("boosters.data.validation", "def f():\n    import pandas as pd\n", "pandas"),
    ("boosters.training.split.constraints", "from boosters.training.growth.grower import TreeGrower\n",
     "boosters.training.growth"),
    ("boosters.training.histograms.layout", "def f():\n    from boosters.training.split import constraints\n",
     "boosters.training.split"),
    ("boosters.training.growth.grower", "from boosters.training.trainer import GBDTTrainer\n",
     "boosters.training.trainer"),
    ("boosters.model.tree", "from boosters.model.forest import Forest\n", "boosters.model.forest"),
    ("boosters.model.prediction", "from .forest import Forest\n", "boosters.model.forest"),
    ("boosters.objectives.regression", "from boosters.config import Objective\n", "boosters.config"),
    ("boosters.objectives.ranking", "def f():\n    from boosters.training import trainer\n", "boosters.training"),
    ("boosters.objectives.registry", "from ..model import tree\n", "boosters.model"),
    ("boosters.data.dataset", "import boosters.objectives\n", "boosters.objectives"),
    ("boosters.config", "from boosters.training.trainer import GBDTTrainer\n", "boosters.training"),
])
def test_the_check_finds_a_violation(module, source, expected):
    """The walker resolves lazy, relative and absolute imports, so the test above can fail."""
    found = violations(module, imported_modules(source, module))
    assert any(expected in v for v in found), found


def test_cython_imports_are_read():
    source = "from libc.stdint cimport int32_t\ncimport numpy\nfrom boosters.training.split._split cimport X\n"
    assert cython_imported_modules(source) == {"libc.stdint", "numpy", "boosters.training.split._split"}
    assert violations("boosters.model._predict", cython_imported_modules(source)) != []
    assert violations("boosters.training.partition._partition", cython_imported_modules(source)) != []
    assert violations("boosters.objectives._gradients", {"boosters.training.partition._partition"}) != []


def test_allowed_imports_are_not_flagged():
    assert violations("boosters.training.trainer", {"boosters.model.tree", "boosters.data.dataset",
                                                    "boosters.training.callbacks"}) == []
    assert violations("boosters.__main__", {"boosters.bench.demo"}) == []
    assert violations("boosters.bench.compare", {"boosters.bench.datasets", "sklearn"}) == []
    assert violations("boosters.sklearn", {"sklearn.base", "boosters.gbdt_model"}) == []
    assert violations("boosters.gbdt_model", {"sklearn.base"}) != []  # only the adapter may
    assert violations("boosters.training.growth._grow", {"boosters.training.partition._partition",
                                                         "boosters.training.histograms._build",
                                                         "boosters.training.split._split"}) == []
    assert violations("boosters.model.forest", {"boosters.model.tree", "boosters.model.prediction"}) == []
    assert violations("boosters.model.ensemble", {"boosters.objectives.registry"}) == []
    assert violations("boosters.training.growth._rounds", {"boosters.objectives._gradients"}) == []
    assert violations("boosters.objectives._gradients", {"boosters.data.groups"}) == []
    assert violations("boosters.config", {"boosters.objectives.objective", "boosters.data.binning"}) == []


def test_the_model_holds_what_the_training_produced():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), config=bst.GBDTConfig(n_estimators=3))
    assert isinstance(model.ensemble, TrainingResult)
    assert model.forest is model.ensemble.forest and model.config is model.ensemble.config
    assert model.ensemble.seconds > 0 and model.n_trees == 3
