"""Out-of-core training (Dataset.from_npy) against in-memory training (np.load + Dataset)
on the same float32 .npy file: the peak anonymous memory (RssAnon, sampled every 10 ms
from /proc/self/status in a thread while the Dataset is made and trained on), the wall
time, and whether the two models are the same (bytes of the saved models, predictions).

Each side runs in its own process, so one's memory does not count in the other's. The
data (rows x features float32, written a block at a time) is made once in --dir.

    python benchmarks/out_of_core.py --rows 2000000 --features 100 --trees 20 --threads 2

With `--memory-limit-mib N` (Linux, root, cgroup v1 memory controller) the out-of-core side
runs in a memory cgroup of N MiB, which counts the page cache too: bin files larger than
what is left of N cannot stay cached, so every histogram pass reads them from the disk
(the regime out-of-core training is for). `--drop-caches` empties the page cache before
each side, so both start from a cold disk.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

BLOCK = 100_000


def write_data(directory: str, n_rows: int, n_features: int) -> None:
    """X.npy (float32) and y.npy, a block of rows at a time (never all of X in memory)."""
    X = np.lib.format.open_memmap(os.path.join(directory, "X.npy"), mode="w+", dtype=np.float32,
                                  shape=(n_rows, n_features))
    y = np.empty(n_rows)
    for start in range(0, n_rows, BLOCK):
        rng = np.random.default_rng(start)
        block = rng.standard_normal((min(BLOCK, n_rows - start), n_features), dtype=np.float32)
        block[rng.random(len(block)) < 0.05, 1] = np.nan
        X[start:start + len(block)] = block
        y[start:start + len(block)] = (block[:, 0] + np.nan_to_num(block[:, 1]) * block[:, 2]
                                       + np.sin(3 * block[:, 3]) + 0.5 * rng.standard_normal(len(block)))
    X.flush()
    del X
    np.save(os.path.join(directory, "y.npy"), y)


def rss_anon_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise RuntimeError("no RssAnon in /proc/self/status")


class PeakSampler(threading.Thread):
    """The largest RssAnon seen while it runs."""

    def __init__(self, interval: float = 0.01):
        super().__init__(daemon=True)
        self.interval, self.peak, self.done = interval, rss_anon_kib(), threading.Event()

    def run(self):
        while not self.done.wait(self.interval):
            self.peak = max(self.peak, rss_anon_kib())

    def stop(self) -> int:
        self.done.set()
        self.join()
        return max(self.peak, rss_anon_kib())


CGROUP = "/sys/fs/cgroup/memory/boosters_out_of_core_bench"


def memory_cgroup(limit_mib: int):
    """A function that moves the calling (child) process into a cgroup v1 memory group of
    `limit_mib` MiB, page cache included."""
    os.makedirs(CGROUP, exist_ok=True)
    with open(os.path.join(CGROUP, "memory.limit_in_bytes"), "w") as f:
        f.write(str(limit_mib * 2**20))

    def enter():
        with open(os.path.join(CGROUP, "tasks"), "w") as f:
            f.write(str(os.getpid()))
    return enter


def drop_page_cache() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("1")


def run_one(mode: str, directory: str, trees: int, threads: int) -> dict:
    """One side, in this process: peak RssAnon and seconds of making the Dataset and training."""
    import boosters as bst

    config = bst.GBDTConfig(n_estimators=trees, max_depth=6, learning_rate=0.1)
    y = np.load(os.path.join(directory, "y.npy"))
    x_path = os.path.join(directory, "X.npy")
    before = rss_anon_kib()
    sampler = PeakSampler()
    sampler.start()
    start = time.perf_counter()
    if mode == "memory":
        data = bst.Dataset(np.load(x_path), y)
    else:
        data = bst.Dataset.from_npy(x_path, y=y)
    made = time.perf_counter()
    model = bst.GBDTModel.train(data, config, n_threads=threads)
    end = time.perf_counter()
    peak = sampler.stop()
    model.save(os.path.join(directory, f"model_{mode}.npz"))
    return {"mode": mode, "rss_anon_before_mib": before / 1024, "peak_rss_anon_mib": peak / 1024,
            "dataset_s": made - start, "train_s": end - made, "total_s": end - start}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dir", default=None, help="where the data and models go (a temporary one by default)")
    parser.add_argument("--memory-limit-mib", type=int, default=None,
                        help="run the out-of-core side in a memory cgroup this large (page cache included)")
    parser.add_argument("--drop-caches", action="store_true", help="empty the page cache before each side")
    parser.add_argument("--run", choices=["memory", "out-of-core"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        print(json.dumps(run_one(args.run, args.dir, args.trees, args.threads)))
        return
    directory = args.dir or tempfile.mkdtemp(prefix="boosters-ooc-bench-")
    write_data(directory, args.rows, args.features)
    raw_mib = args.rows * args.features * 4 / 2**20
    results = {}
    for mode in ("out-of-core", "memory"):
        if args.drop_caches:
            drop_page_cache()
        limit = args.memory_limit_mib if mode == "out-of-core" else None
        out = subprocess.run([sys.executable, __file__, "--run", mode, "--dir", directory, "--trees",
                              str(args.trees), "--threads", str(args.threads)],
                             check=True, capture_output=True, text=True,
                             preexec_fn=None if limit is None else memory_cgroup(limit)).stdout
        results[mode] = json.loads(out.strip().splitlines()[-1])

    import boosters as bst
    ooc = bst.GBDTModel.load(os.path.join(directory, "model_out-of-core.npz"))
    mem = bst.GBDTModel.load(os.path.join(directory, "model_memory.npz"))
    X_head = np.load(os.path.join(directory, "X.npy"), mmap_mode="r")[:100_000]
    same_bytes = ooc.to_bytes() == mem.to_bytes()
    same_predictions = np.array_equal(ooc.predict(X_head), mem.predict(X_head))

    print(f"{args.rows} x {args.features} float32: raw {raw_mib:.0f} MiB; {args.trees} trees of depth 6, "
          f"{args.threads} threads; out-of-core memory limit (page cache included): "
          f"{args.memory_limit_mib or 'none'} MiB; page cache dropped before each side: {args.drop_caches}")
    print("| mode | peak RssAnon (MiB) | raw / peak RssAnon | make Dataset (s) | train (s) | total (s) |")
    print("|---|---|---|---|---|---|")
    for mode, r in results.items():
        print(f"| {mode} | {r['peak_rss_anon_mib']:.0f} | {raw_mib / r['peak_rss_anon_mib']:.2f} | "
              f"{r['dataset_s']:.2f} | {r['train_s']:.2f} | {r['total_s']:.2f} |")
    ratio = results["out-of-core"]["total_s"] / results["memory"]["total_s"]
    print(f"time ratio out-of-core / in-memory (total): {ratio:.2f}; "
          f"train only: {results['out-of-core']['train_s'] / results['memory']['train_s']:.2f}")
    print(f"same model bytes: {same_bytes}; same predictions on 100k rows: {same_predictions}")
    if args.dir is None:
        for name in os.listdir(directory):
            os.remove(os.path.join(directory, name))
        os.rmdir(directory)


if __name__ == "__main__":
    main()
