"""The installed package: build facts, show_config and the thread-count helper."""

import boosters
from boosters._lib import _build_info
from conftest import in_ci
from boosters._lib._openmp import openmp_enabled
from boosters._lib.threads import effective_n_threads

import pytest


def test_version_is_exposed():
    assert boosters.__version__ == _build_info.VERSION
    assert boosters.__version__.count(".") == 2


def test_show_config_reports_version_flags_openmp_threads(capsys):
    boosters.show_config()
    out = capsys.readouterr().out
    assert boosters.__version__ in out
    assert "-O3" in out  # the kernels are always built optimized
    assert f"openmp            : {openmp_enabled()}" in out
    assert f"threads_in_effect : {effective_n_threads(0)}" in out


def test_ci_builds_with_openmp():
    """A serial build passes every thread-count test trivially: CI must have OpenMP."""
    if in_ci():
        assert openmp_enabled(), "CI built boosters without OpenMP"
        assert _build_info.OPENMP_AT_BUILD


def test_show_config_names_the_openmp_runtime_file():
    from pathlib import Path

    from boosters._lib.show_config import config_dict, openmp_runtime

    runtime = openmp_runtime()
    assert config_dict()["openmp_runtime"] == runtime
    if not openmp_enabled():
        assert runtime is None
    elif runtime is not None:  # None only where dladdr is missing (not on Linux/macOS)
        assert Path(runtime).is_file()
        assert "omp" in Path(runtime).name.lower()  # libgomp / libomp / vcomp / libiomp5


def test_openmp_flag_matches_build():
    assert openmp_enabled() == _build_info.OPENMP_AT_BUILD
    if _build_info.OPENMP_AT_BUILD:
        assert "openmp" in _build_info.C_FLAGS


def test_effective_n_threads_respects_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    expected = 3 if openmp_enabled() else 1
    assert effective_n_threads(0) == expected
    assert effective_n_threads(5) == (5 if openmp_enabled() else 1)


def test_effective_n_threads_defaults_to_available_cpus(monkeypatch):
    from boosters._lib.threads import available_cpus

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert effective_n_threads(0) == (available_cpus() if openmp_enabled() else 1)


def test_negative_thread_counts_are_joblibs():
    # -1 is every core (as 0), -k every core but k - 1, at least one (scikit-learn's n_jobs)
    every = effective_n_threads(0)
    assert effective_n_threads(-1) == every
    assert effective_n_threads(-2) == max(1, every - 1)
    assert effective_n_threads(-10_000) == 1
    with pytest.raises(ValueError, match="n_threads"):
        effective_n_threads(10**6)


@pytest.mark.parametrize("bad", [1.5, "2", None, True])
def test_effective_n_threads_rejects_non_int(bad):
    with pytest.raises(TypeError, match="n_threads"):
        effective_n_threads(bad)


def test_child_interpreters_start_outside_the_repository():
    """A test's child interpreter started in the repository root imports its ./boosters, which
    has no compiled kernels under a wheel install (CI failed so on 16 tests while every local,
    editable run passed). Every child goes through child_python, which starts it elsewhere."""
    import pathlib
    import re

    tests = pathlib.Path(__file__).parent
    direct = []
    for path in sorted(tests.rglob("*.py")):  # every test file and helper, in every folder
        lines = path.read_text().splitlines()
        name = path.relative_to(tests).as_posix()
        direct += [f"{name}:{n + 1}" for n, line in enumerate(lines) if name != "support/child_python.py"
                   and re.search(r"sys\.executable\s*[,\]]", line)
                   and "cwd=" not in " ".join(lines[n:n + 3])]  # a call that names its directory
    assert direct == [], f"start child interpreters with child_python.python_run/popen: {direct}"


def fake_cgroup(root, files: dict) -> None:
    """A cgroup filesystem under `root`: {relative path: first line}."""
    for relative_path, line in files.items():
        path = root / relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(line + "\n")


V1_UNLIMITED = "9223372036854771712"  # what cgroup v1 writes for "no limit": 2^63 - 1 rounded to a page


@pytest.mark.parametrize("files, quota, headroom", [
    ({}, None, None),  # no cgroup filesystem
    ({"cpu.max": "250000 100000", "memory.max": "1000000", "memory.current": "400000"}, 3, 600000),  # v2
    ({"cpu.max": "max 100000", "memory.max": "max", "memory.current": "400000"}, None, None),  # v2, no limits
    ({"memory.max": "1000", "memory.current": "5000"}, None, 0),  # over the limit: nothing left
    ({"cpu/cpu.cfs_quota_us": "150000", "cpu/cpu.cfs_period_us": "100000",  # v1
      "memory/memory.limit_in_bytes": "2000000", "memory/memory.usage_in_bytes": "500000"}, 2, 1500000),
    ({"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000",  # v1, no limits
      "memory/memory.limit_in_bytes": V1_UNLIMITED, "memory/memory.usage_in_bytes": "500000"}, None, None),
])
def test_cgroup_limits_are_read_from_v2_or_v1(tmp_path, monkeypatch, files, quota, headroom):
    from boosters._lib import cgroup

    fake_cgroup(tmp_path, files)
    monkeypatch.setattr(cgroup, "ROOT", str(tmp_path))
    assert cgroup.cpu_quota() == quota
    assert cgroup.memory_headroom() == headroom


def test_available_memory_is_capped_by_a_cgroup_v1_limit(tmp_path, monkeypatch):
    """Older container hosts (cgroup v1): the limit was not read, so available_memory gave
    the host's MemAvailable and a too large SHAP interaction output was OOM-killed instead
    of refused."""
    from boosters._lib import cgroup, memory

    fake_cgroup(tmp_path, {"memory/memory.limit_in_bytes": str(3 << 30),
                           "memory/memory.usage_in_bytes": str(1 << 30)})
    monkeypatch.setattr(cgroup, "ROOT", str(tmp_path))
    monkeypatch.setattr(memory, "_meminfo_available", lambda: 64 << 30)
    assert memory.available_memory() == 2 << 30
    with pytest.raises(MemoryError, match="needs 3.0 GiB but 2.0 GiB of memory is available"):
        memory.require_memory(3 << 30, "this output", "ask for less")
