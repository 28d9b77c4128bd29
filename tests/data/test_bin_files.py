"""The out-of-core bin folders (data/bin_files.py): each Dataset's own folder, locked while
it exists, even when another process's cleaning removes a new folder before it is locked."""

import os
import tempfile

import pytest

from boosters.data import bin_files


@pytest.mark.parametrize("when", ["before it is opened", "before it is locked"])
def test_a_bin_folder_removed_by_another_process_at_once_is_made_again(tmp_path, monkeypatch, when):
    """Another container's cleaning (which sees no process of this PID) may remove a new
    folder before this process opens it to lock it (the open raised FileNotFoundError out
    of the Dataset), or between that open and the lock: a new folder is made, and locked."""
    made = []
    real_mkdtemp, real_lock = tempfile.mkdtemp, bin_files.leftovers.lock

    def mkdtemp_then_clean(**kwargs):
        made.append(real_mkdtemp(**kwargs))
        if len(made) == 1 and when == "before it is opened":
            os.rmdir(made[0])
        return made[-1]

    def lock_then_clean(path, blocking):
        fd = real_lock(path, blocking)
        if len(made) == 1 and when == "before it is locked":
            os.rmdir(path)
        return fd

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp_then_clean)
    monkeypatch.setattr(bin_files.leftovers, "lock", lock_then_clean)
    folder = bin_files.BinDirectory(str(tmp_path))
    try:
        assert len(made) == 2 and folder.path == made[1]
        assert os.listdir(tmp_path) == [os.path.basename(made[1])]
    finally:
        folder.remove()
    assert os.listdir(tmp_path) == []
