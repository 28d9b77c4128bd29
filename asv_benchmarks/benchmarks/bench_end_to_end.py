"""End to end: fit time, peak memory and test score of GBDTModel.train from NumPy arrays."""

import functools

import boosters as bst
from boosters.bench import benchmark
import dataclasses

from boosters.bench.datasets import make_bag_of_words, make_covertype, make_friedman, make_higgs, train_test_split

TASKS = {
    # name: (generator, settings): small versions of the comparison tasks
    "covertype-100k": (lambda: make_covertype(100_000, binary=True, seed=0), benchmark.Settings(task="binary")),
    "higgs-200k": (lambda: make_higgs(200_000, seed=0), benchmark.Settings(task="binary")),
    "friedman-50k": (lambda: make_friedman(50_000, 10, seed=0), benchmark.Settings(task="regression")),
    # scipy CSR input, never densified (issue 11)
    "bag-of-words-100k-sparse": (lambda: make_bag_of_words(100_000, 5_000, 0.002, seed=0),
                                 benchmark.Settings(task="binary")),
}


@functools.lru_cache(maxsize=None)
def _split(task):
    X, y = TASKS[task][0]()
    return train_test_split(X, y, 0.2, seed=0)


class Fit:
    params = (list(TASKS), [1, 2])
    param_names = ["task", "n_threads"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, task, n_threads):
        self.X_train, self.X_test, self.y_train, self.y_test = _split(task)
        self.settings = TASKS[task][1]

    def _fit(self, n_threads):
        return benchmark._fit_boosters(self.settings, self.X_train, self.y_train, n_threads, False)

    def time_fit(self, task, n_threads):
        self._fit(n_threads)

    def peakmem_fit(self, task, n_threads):
        self._fit(n_threads)

    def track_test_score(self, task, n_threads):
        predict = self._fit(n_threads)
        return benchmark.score(self.settings.task, self.y_test, predict(self.X_test))[1]

    track_test_score.unit = "rmse / auc"


class FitModes:
    """Every histogram mode, layout and prefetch setting on one task, so a regression in
    any of them shows on the dashboard (the defaults are in Fit)."""

    params = (["f64", "i16", "i8"], ["column", "row"], [True, False], [1, 2])
    param_names = ["histogram_mode", "histogram_layout", "prefetch", "n_threads"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, mode, layout, prefetch, n_threads):
        self.X_train, self.X_test, self.y_train, self.y_test = _split("covertype-100k")
        self.settings = dataclasses.replace(TASKS["covertype-100k"][1], histogram_mode=mode,
                                            histogram_layout=layout, prefetch=prefetch)

    def time_fit(self, mode, layout, prefetch, n_threads):
        benchmark._fit_boosters(self.settings, self.X_train, self.y_train, n_threads, False)

    def track_test_auc(self, mode, layout, prefetch, n_threads):
        predict = benchmark._fit_boosters(self.settings, self.X_train, self.y_train, n_threads, False)
        return benchmark.score("binary", self.y_test, predict(self.X_test))[1]

    track_test_auc.unit = "auc"
