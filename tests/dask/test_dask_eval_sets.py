"""boosters.dask with several named validation sets and several metrics: the local
`GBDTModel.train(val_set=...)` API on Dask collections.

The scores are compared with rtol=1e-12 against single-machine training on the same sets:
each validation partition scores its rows and the driver averages the partitions' means
by their row (or query) counts, in the partitions' order, where one machine takes one mean
over all the rows: the same value up to float64 rounding of a differently ordered sum. The
trees are compared exactly (the labels are multiples of 1/8: see test_dask.py).
"""

import dask.array as da
import numpy as np
import pytest

from distributed import Client, LocalCluster

import boosters as bst
from boosters.callbacks import record_evaluation
from boosters.dask import DaskGBDTClassifier, DaskGBDTRanker, DaskGBDTRegressor, train
from boosters.dask._partition_state import worker_threads
from boosters.sklearn import GBDTClassifier, GBDTRegressor
from support.dask_clusters import (  # noqa: F401 (clients: the fixture)
    clients, dask_train, lose_a_worker_at, make_data, no_stealing,
)
from support.tree_compare import assert_same_trees

RTOL = 1e-12  # per-partition means averaged by their counts vs one mean over all rows: float64 rounding


def darr(values, chunks):
    return da.from_array(values, chunks=(chunks, -1) if values.ndim == 2 else chunks)


def split_sets(X, y):
    """Training rows 0..1200, set "a" rows 1200..1400 (2 partitions), set "b" 1400..1600 (3)."""
    return ((X[:1200], y[:1200]), {"a": (X[1200:1400], y[1200:1400]), "b": (X[1400:], y[1400:])},
            {"a": 100, "b": 70})


def as_dask_sets(sets: dict, chunks: dict) -> dict:
    return {name: (darr(Xv, chunks[name]), darr(yv, chunks[name])) for name, (Xv, yv) in sets.items()}


def local(train_xy, sets: dict, config, **dataset_kwargs):
    """(model, evals_result) of single-machine training on the same named sets."""
    scores = {}
    model = bst.GBDTModel.train(bst.Dataset(*train_xy), config,
                                val_set={name: bst.Dataset(Xv, yv, **dataset_kwargs.get(name, {}))
                                         for name, (Xv, yv) in sets.items()},
                                callbacks=[record_evaluation(scores)])
    return model, scores


def assert_same_scores(result, expected):
    assert list(result) == list(expected)
    for name in expected:
        assert list(result[name]) == list(expected[name]), name
        for label in expected[name]:
            np.testing.assert_allclose(result[name][label], expected[name][label], rtol=RTOL, err_msg=f"{name} {label}")


@pytest.mark.parametrize("steps", ["workers", "tasks"])
def test_two_sets_and_two_metrics_score_as_local_training(clients, steps):
    X, y = make_data(n=1600, seed=31)
    train_xy, sets, chunks = split_sets(X, y)
    config = bst.GBDTConfig(n_estimators=5, max_depth=3, histogram_mode="i16",
                            metric=[bst.Metric.rmse(), bst.Metric.mae()])
    scores = {}
    model = dask_train(clients[2], *train_xy, config, val_set=as_dask_sets(sets, chunks), evals_result=scores,
                       steps=steps)
    reference, expected = local(train_xy, sets, config)
    assert_same_trees(model, reference)
    assert list(expected) == ["a", "b"] and list(expected["a"]) == ["rmse", "mae"]
    assert_same_scores(scores, expected)
    assert model.eval_history == scores["b"]["rmse"]  # the first metric on the last set
    # a list of (name, (X_val, y_val)) pairs: the same sets in the same order
    listed = {}
    again = dask_train(clients[2], *train_xy, config, val_set=list(as_dask_sets(sets, chunks).items()),
                       evals_result=listed, steps=steps)
    assert_same_trees(again, model)
    assert listed == scores


def test_one_set_alone_or_named_valid_is_the_same_training(clients):
    # one (X_val, y_val) tuple is the set "valid": the same model and the same score bits
    # as a list naming it so (the one-set reduction is the one before several sets)
    X, y = make_data(n=1600, seed=32)
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16")
    pair = (darr(X[1200:], 150), darr(y[1200:], 150))
    alone, named = {}, {}
    model = dask_train(clients[2], X[:1200], y[:1200], config, val_set=pair, evals_result=alone)
    again = dask_train(clients[2], X[:1200], y[:1200], config, val_set=[("valid", pair)], evals_result=named)
    assert alone == named and list(alone) == ["valid"] and list(alone["valid"]) == ["rmse"]
    assert model.eval_history == again.eval_history == alone["valid"]["rmse"]
    assert_same_trees(model, again)
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=RTOL)


def test_early_stopping_watches_the_last_set(clients):
    X, y = make_data(n=1600, seed=33)
    train_xy, sets, chunks = split_sets(X, y)
    config = bst.GBDTConfig(n_estimators=60, max_depth=4, learning_rate=0.9, histogram_mode="i16",
                            early_stopping_rounds=2, metric=[bst.Metric.mae(), bst.Metric.rmse()])
    scores = {}
    model = dask_train(clients[2], *train_xy, config, val_set=as_dask_sets(sets, chunks), evals_result=scores)
    reference, expected = local(train_xy, sets, config)
    assert model.best_iteration == reference.best_iteration < 59  # stopped early
    assert_same_trees(model, reference)
    assert_same_scores(scores, expected)
    # the set "b" alone stops at the same round: it is the one watched
    alone = dask_train(clients[2], *train_xy, config, val_set=as_dask_sets({"b": sets["b"]}, chunks))
    assert alone.best_iteration == model.best_iteration
    np.testing.assert_array_equal(alone.eval_history, model.eval_history)


def test_the_training_rows_as_a_set_are_never_watched(clients):
    # the very X and y given to train among the sets (LightGBM's valid_sets=[train, ...]):
    # scored as the others, early stopping watches the last other set, as one machine
    X, y = make_data(n=1600, seed=34)
    config = bst.GBDTConfig(n_estimators=60, max_depth=4, learning_rate=0.9, histogram_mode="i16",
                            early_stopping_rounds=2)
    Xd, yd = darr(X[:1200], 350), darr(y[:1200], 350)
    held_out = (darr(X[1200:], 150), darr(y[1200:], 150))
    scores = {}
    model = train(clients[2], Xd, yd, config, val_set=[("valid", held_out), ("training", (Xd, yd))],
                  evals_result=scores)
    train_set = bst.Dataset(X[:1200], y[:1200])
    expected = {}
    reference = bst.GBDTModel.train(train_set, config, val_set=[("valid", bst.Dataset(X[1200:], y[1200:])),
                                                                ("training", train_set)],
                                    callbacks=[record_evaluation(expected)])
    assert model.best_iteration == reference.best_iteration < 59
    assert_same_trees(model, reference)
    assert_same_scores(scores, expected)
    assert model.eval_history == scores["valid"]["rmse"]


def test_several_sets_survive_lost_workers(clients, monkeypatch):
    # lost while trees grow and at a round's score: every set's partitions are rebuilt
    # from the scored rounds, the scores are those of the undisturbed training
    X, y = make_data(n=1600, seed=35)
    train_xy, sets, chunks = split_sets(X, y)
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16", growth_strategy="depthwise",
                            metric=[bst.Metric.rmse(), bst.Metric.mae()])
    undisturbed_scores, scores, stats = {}, {}, {}
    undisturbed = dask_train(clients[2], *train_xy, config, val_set=as_dask_sets(sets, chunks),
                             evals_result=undisturbed_scores, steps="tasks")
    lose_a_worker_at(monkeypatch, {3, 5, 10, 14})  # 4 waits a tree, then the round's score (5, 10, ...)
    model = dask_train(clients[2], *train_xy, config, val_set=as_dask_sets(sets, chunks), evals_result=scores,
                       steps="tasks", stats=stats)
    assert stats["recoveries"] == 4
    assert_same_trees(model, undisturbed)
    assert scores == undisturbed_scores


def ranking_sets(seed):
    """Queries of 5-40 rows; chunks that never cut a query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 41, size=20)
    qid = np.repeat(np.arange(20) * 3 + 1, sizes)
    X = rng.normal(size=(len(qid), 5))
    y = np.clip(np.round(X[:, 0] - X[:, 1] + rng.normal(size=len(qid)) + 1.5), 0, 3)
    ends = np.cumsum(sizes)
    chunks = tuple(np.diff([0, int(ends[7]), int(ends[13]), len(qid)]).tolist())
    return X, y, qid, chunks


def test_ranking_with_two_sets_and_their_query_ids(clients):
    X, y, qid, chunks = ranking_sets(40)
    sets = {name: ranking_sets(seed) for name, seed in (("a", 41), ("b", 42))}
    config = bst.GBDTConfig(n_estimators=6, max_depth=3, histogram_mode="i16",
                            objective=bst.Objective.lambdarank(ndcg_at=5),
                            metric=[bst.Metric.ndcg(k=5), bst.Metric.map(k=3)])
    Xd, yd, qd = darr(X, chunks), darr(y, chunks), darr(qid, chunks)
    dask_sets = [(name, (darr(Xv, c), darr(yv, c))) for name, (Xv, yv, _, c) in sets.items()]
    qids = [darr(q, c) for _, _, q, c in sets.values()]
    scores, by_name = {}, {}
    model = train(clients[2], Xd, yd, config, qid=qd, val_set=dask_sets, val_qid=qids, evals_result=scores)
    again = train(clients[2], Xd, yd, config, qid=qd, val_set=dict(dask_sets), val_qid=dict(zip(sets, qids)),
                  evals_result=by_name)
    assert by_name == scores
    expected = {}
    reference = bst.GBDTModel.train(bst.Dataset(X, y, qid=qid), config,
                                    val_set={name: bst.Dataset(Xv, yv, qid=q) for name, (Xv, yv, q, _) in sets.items()},
                                    callbacks=[record_evaluation(expected)])
    assert_same_trees(model, reference)
    assert_same_trees(again, reference)
    assert list(scores["a"]) == ["ndcg@5", "map@3"]
    assert_same_scores(scores, expected)
    with pytest.raises(ValueError, match=r"val_qid: give one per validation set \(2\), got 1"):
        train(clients[1], Xd, yd, config, qid=qd, val_set=dask_sets, val_qid=qids[:1])
    with pytest.raises(ValueError, match="val_qid: give a list"):
        train(clients[1], Xd, yd, config, qid=qd, val_set=dask_sets, val_qid=qids[0])
    with pytest.raises(ValueError, match="val_qid: no validation set is named 'c'"):
        train(clients[1], Xd, yd, config, qid=qd, val_set=dask_sets, val_qid={"c": qids[0]})
    with pytest.raises(ValueError, match="val_qid of val_set 'b': ranking needs"):
        train(clients[1], Xd, yd, config, qid=qd, val_set=dask_sets, val_qid={"a": qids[0]})
    with pytest.raises(ValueError, match="val_qid of val_set 'a' has .* rows but val_set 'a' X has"):
        train(clients[1], Xd, yd, config, qid=qd, val_set=dask_sets, val_qid=qids[::-1])


def test_bad_sets_are_refused(clients):
    X, y = make_data(n=400, seed=36)
    Xd, yd = darr(X, 200), darr(y, 200)
    pair = (darr(X[:100], 50), darr(y[:100], 50))
    config = bst.GBDTConfig(n_estimators=1)
    with pytest.raises(TypeError, match=r"val_set must be a \(X_val, y_val\) tuple, a dict of name"):
        train(clients[1], Xd, yd, config, val_set=[pair])
    with pytest.raises(TypeError, match=r"val_set must be"):
        train(clients[1], Xd, yd, config, val_set=(Xd, yd, yd))
    with pytest.raises(ValueError, match="each validation set needs its own name"):
        train(clients[1], Xd, yd, config, val_set=[("a", pair), ("a", pair)])
    with pytest.raises(TypeError, match=r"val_set 'b' must be a tuple \(X_val, y_val\)"):
        train(clients[1], Xd, yd, config, val_set={"a": pair, "b": Xd})
    with pytest.raises(ValueError, match="val_set 'b' has 4 features but X has 5"):
        train(clients[1], Xd, yd, config, val_set={"a": pair, "b": (pair[0][:, :4], pair[1])})
    with pytest.raises(TypeError, match="val_set 'b' y must be a 1-D dask.array.Array"):
        train(clients[1], Xd, yd, config, val_set={"a": pair, "b": (pair[0], y[:100])})
    with pytest.raises(ValueError, match="config.metric: .*Metric.auc"):
        train(clients[1], Xd, (yd > 0).astype(float), config.replace(objective=bst.Objective.logistic(),
              metric=[bst.Metric.logloss(), bst.Metric.auc()]), val_set=(pair[0], (pair[1] > 0).astype(float)))
    with pytest.raises(TypeError, match="evals_result must be a dict"):
        train(clients[1], Xd, yd, config, val_set=pair, evals_result=[])


# -- the Dask estimators ----------------------------------------------------------------------


def test_regressor_eval_sets_and_names_score_as_the_in_memory_regressor(clients):
    X, y = make_data(n=1600, seed=37)
    params = dict(n_estimators=30, max_depth=3, learning_rate=0.9, histogram_mode="i16", early_stopping_rounds=2,
                  metric=["mae", "rmse"])
    sets = [(X[1200:1400], y[1200:1400]), (X[1400:], y[1400:])]
    dask_sets = [(darr(Xv, 100), darr(yv, 100)) for Xv, yv in sets]
    est = DaskGBDTRegressor(**params, client=clients[2]).fit(darr(X[:1200], 350), darr(y[:1200], 350),
                                                             eval_set=dask_sets, eval_names=["a", "b"])
    reference = GBDTRegressor(**params).fit(X[:1200], y[:1200], eval_set=sets, eval_names=["a", "b"])
    assert est.best_iteration_ == reference.best_iteration_ < 29  # early stopping on "b"'s mae
    assert_same_trees(est.booster_, reference.booster_)
    assert list(est.evals_result_["a"]) == ["mae", "rmse"]
    assert_same_scores(est.evals_result_, reference.evals_result_)
    assert list(est.best_score_) == ["a", "b"]
    np.testing.assert_allclose(est.best_score_["b"]["mae"], reference.best_score_["b"]["mae"], rtol=RTOL)
    # without names: LightGBM's valid_0, valid_1...; fit's own X and y: "training", never watched
    Xd, yd = darr(X[:1200], 350), darr(y[:1200], 350)
    est = DaskGBDTRegressor(**params, client=clients[2]).fit(Xd, yd, eval_set=[dask_sets[1], (Xd, yd)])
    X0, y0 = X[:1200], y[:1200]
    reference = GBDTRegressor(**params).fit(X0, y0, eval_set=[sets[1], (X0, y0)])
    assert list(est.evals_result_) == list(reference.evals_result_) == ["valid_0", "training"]
    assert est.best_iteration_ == reference.best_iteration_ < 29
    assert_same_scores(est.evals_result_, reference.evals_result_)
    with pytest.raises(ValueError, match="eval_names must be one name per eval_set pair"):
        DaskGBDTRegressor(client=clients[1]).fit(Xd, yd, eval_set=dask_sets, eval_names=["a"])
    with pytest.raises(ValueError, match="eval_names is given without an eval_set"):
        DaskGBDTRegressor(n_estimators=1, client=clients[1]).fit(Xd, yd, eval_names=["a"])


def test_classifier_eval_sets(clients):
    X, y = make_data(n=1600, seed=38)
    labels = np.where(y > 0, "up", "down")
    params = dict(n_estimators=5, max_depth=3, histogram_mode="i16", eval_metric=["logloss", "error"])
    sets = [(X[1200:1400], labels[1200:1400]), (X[1400:], labels[1400:])]
    est = DaskGBDTClassifier(**params, client=clients[2]).fit(
        darr(X[:1200], 350), darr(labels[:1200], 350), eval_set=[(darr(Xv, 100), darr(yv, 100)) for Xv, yv in sets])
    reference = GBDTClassifier(**params).fit(X[:1200], labels[:1200], eval_set=sets)
    assert list(est.evals_result_) == ["valid_0", "valid_1"]
    assert_same_trees(est.booster_, reference.booster_)
    assert_same_scores(est.evals_result_, reference.evals_result_)


def test_ranker_eval_sets_with_one_eval_qid_each(clients):
    X, y, qid, chunks = ranking_sets(43)
    sets = {name: ranking_sets(seed) for name, seed in (("a", 44), ("b", 45))}
    params = dict(n_estimators=20, max_depth=3, learning_rate=0.7, ndcg_at=5, early_stopping_rounds=2)
    est = DaskGBDTRanker(**params, client=clients[2]).fit(
        darr(X, chunks), darr(y, chunks), qid=darr(qid, chunks),
        eval_set=[(darr(Xv, c), darr(yv, c)) for Xv, yv, _, c in sets.values()],
        eval_qid=[darr(q, c) for _, _, q, c in sets.values()], eval_names=list(sets))
    expected = {}
    reference = bst.GBDTModel.train(bst.Dataset(X, y, qid=qid), est.config(bst.Objective.lambdarank(ndcg_at=5)),
                                    val_set={name: bst.Dataset(Xv, yv, qid=q) for name, (Xv, yv, q, _) in sets.items()},
                                    callbacks=[record_evaluation(expected)])
    assert est.best_iteration_ == reference.best_iteration
    assert_same_trees(est.booster_, reference)
    assert list(est.evals_result_) == ["a", "b"] and list(est.evals_result_["a"]) == ["ndcg@5"]
    assert_same_scores(est.evals_result_, expected)
    with pytest.raises(ValueError, match=r"eval_qid: give a list of one per eval_set pair \(2\)"):
        DaskGBDTRanker(n_estimators=1, client=clients[1]).fit(
            darr(X, chunks), darr(y, chunks), qid=darr(qid, chunks),
            eval_set=[(darr(Xv, c), darr(yv, c)) for Xv, yv, _, c in sets.values()], eval_qid=darr(qid, chunks))


# -- threads per worker -----------------------------------------------------------------------


def test_n_jobs_are_the_threads_per_worker():
    with no_stealing():
        cluster = LocalCluster(n_workers=1, threads_per_worker=3, processes=False, dashboard_address=":0")
    with cluster, Client(cluster, set_as_default=False) as client:
        # on a worker: -1 and 0 its thread count (Dask's nthreads), -2 all but one, k itself
        assert client.gather([client.submit(worker_threads, n, pure=False) for n in (-1, 0, -2, 2)]) == [3, 3, 2, 2]
        X, y = make_data(n=1200, seed=39)
        Xd, yd = darr(X, 600), darr(y, 600)
        params = dict(n_estimators=3, max_depth=4, histogram_mode="i16", client=client)
        one = DaskGBDTRegressor(**params).fit(Xd, yd)
        for threads in (dict(n_jobs=-1), dict(n_jobs=2), dict(num_threads=3), dict(n_jobs=-2),
                        dict(n_threads=2, n_jobs=2)):
            est = DaskGBDTRegressor(**params, **threads).fit(Xd, yd)
            assert_same_trees(est.booster_, one.booster_)  # the model does not depend on the threads
            assert np.array_equal(client.compute(est.predict(Xd)).result(), one.booster_.predict(X))
        with pytest.raises(TypeError, match="n_jobs must be an int or None"):
            DaskGBDTRegressor(n_jobs="all", client=client).fit(Xd, yd)
        with pytest.raises(TypeError, match="nthread must be an int or None"):
            DaskGBDTRegressor(nthread=1.5, client=client).fit(Xd, yd)
        with pytest.raises(ValueError, match="threads per worker given twice"):
            DaskGBDTRegressor(n_threads=3, n_jobs=2, client=client).fit(Xd, yd)
        with pytest.raises(ValueError, match="n_threads must be at most"):
            DaskGBDTRegressor(n_jobs=10**6, client=client).fit(Xd, yd)
        with pytest.raises(ValueError, match="n_threads must be >= 0"):
            DaskGBDTRegressor(n_threads=-1, client=client).fit(Xd, yd)
        # boosters.dask.train's n_threads: the same model
        assert_same_trees(train(client, Xd, yd, bst.GBDTConfig(n_estimators=3, max_depth=4, histogram_mode="i16"),
                                n_threads=-1), one.booster_)
