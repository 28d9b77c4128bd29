"""End to end: fit time, peak memory and test score of GBDTModel.train from NumPy arrays."""

import functools

import boosters as bst
from boosters.bench import benchmark
import dataclasses

from boosters.bench.datasets import (CATEGORICAL_LEVELS, make_bag_of_words, make_categorical, make_covertype,
                                     make_friedman, make_higgs, train_test_split)

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


# column sampling and constraints on friedman-50k (10 features; y rises in x3 and x4)
CONSTRAINED = {
    "none": {},
    "colsample_bytree=0.5": dict(colsample_bytree=0.5),
    "colsample_bynode=0.5": dict(colsample_bynode=0.5),
    "monotone x3, x4": dict(monotone_constraints={3: 1, 4: 1}),
    "interactions": dict(interaction_constraints=[[0, 1], [2, 3, 4], [5, 6, 7, 8, 9]]),
}


class FitConstrained:
    """Column sampling and constraints: fit time and test RMSE against none."""

    params = (list(CONSTRAINED), [1, 2])
    param_names = ["constraint", "n_threads"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, constraint, n_threads):
        self.X_train, self.X_test, self.y_train, self.y_test = _split("friedman-50k")
        self.config = benchmark.boosters_config(TASKS["friedman-50k"][1]).replace(**CONSTRAINED[constraint])

    def _fit(self, n_threads):
        model = bst.GBDTModel.train(bst.Dataset(self.X_train, self.y_train), self.config, n_threads=n_threads)
        return lambda X: model.predict(X, n_threads=n_threads)

    def time_fit(self, constraint, n_threads):
        self._fit(n_threads)

    def track_test_rmse(self, constraint, n_threads):
        return benchmark.score("regression", self.y_test, self._fit(n_threads)(self.X_test))[1]

    track_test_rmse.unit = "rmse"


class FitCategorical:
    """Categorical codes of 10 to 5000 levels and 4 numeric features (50k rows): fit time
    and test RMSE with categorical splits."""

    params = ([1, 2],)
    param_names = ["n_threads"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, n_threads):
        X, y = make_categorical(50_000, seed=0)
        self.X_train, self.X_test, self.y_train, self.y_test = train_test_split(X, y, 0.2, seed=0)
        self.config = bst.GBDTConfig(n_estimators=100, learning_rate=0.1, growth_strategy="leafwise",
                                     max_depth=None, n_leaves=31, min_samples_leaf=20)

    def _fit(self, n_threads):
        dataset = bst.Dataset(self.X_train, self.y_train, categorical_features=list(range(len(CATEGORICAL_LEVELS))))
        return bst.GBDTModel.train(dataset, config=self.config, n_threads=n_threads)

    def time_fit(self, n_threads):
        self._fit(n_threads)

    def track_test_rmse(self, n_threads):
        model = self._fit(n_threads)
        return float(((model.predict(self.X_test) - self.y_test) ** 2).mean() ** 0.5)

    track_test_rmse.unit = "rmse"


class FitSampling:
    """Row sampling (subsample, GOSS) against none, on the Higgs-like task: fit time and
    test AUC (benchmarks/sampling.py adds LightGBM's bagging and GOSS)."""

    SAMPLINGS = {"none": {}, "subsample-0.5": {"subsample": 0.5},
                 "goss-0.2-0.1": {"goss_top_rate": 0.2, "goss_other_rate": 0.1}}
    params = (list(SAMPLINGS), [1, 2])
    param_names = ["sampling", "n_threads"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, sampling, n_threads):
        self.X_train, self.X_test, self.y_train, self.y_test = _split("higgs-200k")
        self.config = benchmark.boosters_config(TASKS["higgs-200k"][1]).replace(**self.SAMPLINGS[sampling])

    def _fit(self, n_threads):
        return bst.GBDTModel.train(bst.Dataset(self.X_train, self.y_train), self.config, n_threads=n_threads)

    def time_fit(self, sampling, n_threads):
        self._fit(n_threads)

    def track_test_auc(self, sampling, n_threads):
        prediction = self._fit(n_threads).predict(self.X_test, n_threads=n_threads)
        return benchmark.score("binary", self.y_test, prediction)[1]

    track_test_auc.unit = "auc"
