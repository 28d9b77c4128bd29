"""The installed wheel in a fresh environment without a C compiler (run by .ci/run).

Import, show_config() with OpenMP on and the vendored runtime in use, train, predict,
save and load (both encodings), and a scikit-learn estimator's fit with Dask never
imported. Run with `python -I` from a folder without a ./boosters; BOOSTERS_SMOKE_NO_COMPILER=1
also checks that no compiler is on PATH.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

if os.environ.get("BOOSTERS_SMOKE_NO_COMPILER") == "1":  # .ci/run; not cibuildwheel's test step
    for compiler in ("cc", "gcc", "clang", "c++", "g++"):
        assert shutil.which(compiler) is None, f"a C compiler is on PATH: {shutil.which(compiler)}"

import numpy as np

import boosters as bst
from boosters._lib.show_config import config_dict

package = Path(bst.__file__).parent
assert "site-packages" in package.parts, f"boosters imported from {package}, not the installed wheel"
assert not list(package.rglob("*.pyx")), "the wheel carries Cython sources"

bst.show_config()
config = config_dict()
assert config["openmp"] is True, "the wheel was built without OpenMP"
if sys.platform.startswith("linux"):
    runtime = Path(config["openmp_runtime"])
    assert runtime.parent.name == "boosters.libs", f"the kernels call {runtime}, not the vendored libgomp"
    assert runtime.name.startswith("libgomp-"), runtime

rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 6))
y = X[:, 0] - 2 * X[:, 1] ** 2 + rng.normal(scale=0.1, size=2000)
model = bst.GBDTModel.train(bst.Dataset(X, y), config=bst.GBDTConfig(n_estimators=20), n_threads=0)
pred = model.predict(X)
assert np.corrcoef(pred, y)[0, 1] > 0.9, "the model did not learn"

with tempfile.TemporaryDirectory() as folder:
    for name in ("model.npz", "model.json"):
        path = os.path.join(folder, name)
        model.save(path)
        assert np.array_equal(bst.GBDTModel.load(path).predict(X), pred), name

from boosters.sklearn import GBDTClassifier  # noqa: E402

clf = GBDTClassifier(n_estimators=10).fit(X, (y > np.median(y)).astype(int))
assert clf.score(X, (y > np.median(y)).astype(int)) > 0.8
assert not any(m == "dask" or m.startswith(("dask.", "distributed")) for m in sys.modules), "Dask was imported"
print(f"smoke test passed: {package}")
