"""OpenMP after fork: a process made by fork runs boosters serially, whatever ran OpenMP
in its parent (issue: a forked child hung when another library had used OpenMP before
the fork). libgomp's worker threads do not survive a fork and LightGBM shares boosters'
libgomp, so before the fix a child's first parallel region after a multi-threaded
LightGBM call waited for them forever.

Each case runs a script in a subprocess: the parent runs a library's OpenMP code with two
threads, then a child (os.fork, multiprocessing's fork / forkserver / spawn, joblib's
loky) runs every kernel family with two threads asked for and reports the thread counts
boosters gives it. A hung child is killed after CHILD_TIMEOUT and reported as hung; the
whole run is killed after RUN_TIMEOUT. Both are generous: a hang is forever, while a
child on a loaded two-core machine takes seconds (importing the libraries dominates).
"""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from boosters._lib.threads import _omp_num_threads_env, available_cpus, max_n_threads
from support.child_python import python_popen

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork and libgomp: Linux")

CHILD_TIMEOUT = 120
RUN_TIMEOUT = 300

SCRIPT = textwrap.dedent('''
    import json, os, sys, time, traceback, warnings
    import numpy as np

    USER, HOW, IMPORT, TIMEOUT = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 8))
    y = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=X.shape[0])


    def parent_openmp():
        """A multi-threaded OpenMP call in the parent (none for "none")."""
        if USER == "lightgbm":
            import lightgbm
            lightgbm.train({"num_threads": 2, "verbose": -1}, lightgbm.Dataset(X, y), 3)
        elif USER == "xgboost":
            import xgboost
            xgboost.train({"nthread": 2, "tree_method": "hist"}, xgboost.DMatrix(X, y, nthread=2), 3)
        elif USER == "sklearn":
            from sklearn.ensemble import HistGradientBoostingRegressor  # OpenMP on all cores
            HistGradientBoostingRegressor(max_iter=3).fit(X, y)
        elif USER == "boosters":
            import boosters as bst
            bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=3), n_threads=2)


    def child():
        """Every kernel family with two threads asked for: binning, histograms (float and
        quantized, dense and sparse), partitions, splits, sampling, prediction, leaves, SHAP."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import scipy.sparse
            import boosters as bst
            from boosters._lib.threads import effective_n_threads
            model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=3), n_threads=2)
            bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(
                n_estimators=3, growth_strategy=bst.GrowthStrategy.Leafwise, histogram_mode="i16", subsample=0.5),
                n_threads=2)
            sparse = scipy.sparse.csr_matrix(np.where(np.abs(X) > 1, X, 0.0))
            bst.GBDTModel.train(bst.Dataset(sparse, y), bst.GBDTConfig(n_estimators=2), n_threads=2)
            model.predict(X, n_threads=2)
            model.predict_leaf(X, n_threads=2)
            model.shap_values(X[:500], n_threads=2)
            model.shap_interaction_values(X[:100], n_threads=2)
            threads = [effective_n_threads(0), effective_n_threads(2)]
        return {"threads": threads, "fork_warnings": sum("forked" in str(w.message) for w in caught)}


    def by_os_fork():
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.write(w, json.dumps(child()).encode())
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(0)  # never back into the parent's code
        os.close(w)
        deadline = time.monotonic() + TIMEOUT
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return "hung"
            time.sleep(0.1)
        with os.fdopen(r) as f:
            return json.loads(f.read() or '"died"')


    def by_multiprocessing():
        import multiprocessing
        with multiprocessing.get_context(HOW).Pool(1) as pool:  # leaving it kills a hung worker
            try:
                return pool.apply_async(child).get(TIMEOUT)
            except multiprocessing.TimeoutError:
                return "hung"


    def by_loky():
        # loky starts fresh interpreters; joblib caps their OpenMP threads (OMP_NUM_THREADS)
        # at inner_max_num_threads
        from joblib import Parallel, delayed, parallel_config
        from joblib.externals.loky import get_reusable_executor
        try:
            with parallel_config(backend="loky", n_jobs=2, inner_max_num_threads=2):
                return Parallel(timeout=TIMEOUT)(delayed(child)() for _ in range(1))[0]
        except TimeoutError:
            return "hung"
        finally:
            get_reusable_executor().shutdown(kill_workers=True)  # idle workers would outlive the run


    if __name__ == "__main__":
        if IMPORT == "early":
            import boosters  # registers boosters' at-fork hook in the parent
        parent_openmp()
        run = {"os.fork": by_os_fork, "loky": by_loky}.get(HOW, by_multiprocessing)
        print("RESULT " + json.dumps(run()), flush=True)
''')


def run_case(tmp_path, user, how, import_boosters="early"):
    """The child's report: {"threads": [for n_threads=0, for n_threads=2], "fork_warnings": n},
    or "hung"."""
    script = tmp_path / "fork_case.py"
    script.write_text(SCRIPT)
    # outside the source tree, whose ./boosters (no compiled kernels) would be imported first;
    # a session of its own so that a hung grandchild goes with the run
    proc = python_popen(str(script), user, how, import_boosters, str(CHILD_TIMEOUT),
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{user} then {how}: the run hung past {RUN_TIMEOUT} s")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    return json.loads([ln for ln in out.splitlines() if ln.startswith("RESULT ")][0][7:])


SERIAL = {"threads": [1, 1], "fork_warnings": 1}


def fresh_process():
    """What a freshly started child gets: all CPUs (or OMP_NUM_THREADS) for 0, 2 for 2."""
    return {"threads": [min(_omp_num_threads_env() or available_cpus(), max_n_threads()), 2], "fork_warnings": 0}


@pytest.mark.parametrize("user", ["lightgbm", "xgboost", "sklearn", "boosters", "none"])
def test_a_forked_child_runs_serially_whatever_ran_openmp_before(tmp_path, openmp, user):
    # before: after LightGBM the child hung in the binning kernel; after XGBoost or
    # scikit-learn (here with their own libgomp copies, elsewhere the system's) or after
    # nothing it ran two threads. "none" is serial too: another library's use cannot be
    # told apart from no use, so every fork is treated alike
    assert run_case(tmp_path, user, "os.fork") == SERIAL


def test_a_multiprocessing_fork_child_importing_boosters_late_runs_serially(tmp_path, openmp):
    # boosters imported only in the child, after the fork: the at-fork hook was not there
    # to see it; before, the child hung after the parent's LightGBM call
    assert run_case(tmp_path, "lightgbm", "fork", import_boosters="late") == SERIAL


def test_a_forkserver_child_runs_serially(tmp_path, openmp):
    # the server is a fork parent too: its preloads (the main module since Python 3.14)
    # may run OpenMP code
    assert run_case(tmp_path, "lightgbm", "forkserver") == SERIAL


def test_a_spawned_child_uses_threads(tmp_path, openmp):
    assert run_case(tmp_path, "lightgbm", "spawn") == fresh_process()


def test_a_loky_worker_uses_the_threads_joblib_gives_it(tmp_path, openmp):
    # OMP_NUM_THREADS=2 from inner_max_num_threads, so 2 for n_threads=0 as well
    assert run_case(tmp_path, "lightgbm", "loky") == {"threads": [2, 2], "fork_warnings": 0}


@pytest.mark.slow
@pytest.mark.parametrize("how", ["fork", "forkserver", "spawn"])
# import_boosters: in the parent before the fork, or only in the child
@pytest.mark.parametrize("user, import_boosters", [
    ("lightgbm", "early"), ("lightgbm", "late"), ("xgboost", "early"), ("xgboost", "late"),
    ("sklearn", "early"), ("sklearn", "late"), ("boosters", "early")])
def test_start_methods_after_each_openmp_user(tmp_path, openmp, user, import_boosters, how):
    expected = fresh_process() if how == "spawn" else SERIAL
    assert run_case(tmp_path, user, how, import_boosters) == expected


@pytest.mark.slow
@pytest.mark.parametrize("user", ["xgboost", "sklearn", "boosters"])
def test_loky_after_each_openmp_user(tmp_path, openmp, user):
    assert run_case(tmp_path, user, "loky") == {"threads": [2, 2], "fork_warnings": 0}


def _calls(source, name):
    """The argument text of every call `name(...)` in source."""
    for match in re.finditer(rf"\b{name}\(", source):
        depth, i = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        yield source[match.end():i - 1]


def test_every_parallel_region_takes_its_thread_count_from_the_caller():
    """A prange or parallel block without num_threads runs OMP_NUM_THREADS threads (all
    cores by default) whatever effective_n_threads decided, so it would hang a forked
    child: each must take the count its caller passes down (a guard for new kernels)."""
    package = Path(__file__).resolve().parents[1] / "boosters"
    sources = [p for ext in ("pyx", "pxd", "pxi") for p in package.rglob(f"*.{ext}")]
    assert sources
    missing = [f"{path.name}: {name}({args[:60]}...)" for path in sources
               for name in ("prange", "parallel") for args in _calls(path.read_text(), name)
               if "num_threads" not in args]
    assert missing == []
    pragmas = [f"{path.name}: {line.strip()}" for path in package.rglob("*.h") for line in path.read_text().splitlines()
               if "#pragma omp parallel" in line and "num_threads" not in line]
    assert pragmas == []
