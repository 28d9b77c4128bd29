"""boosters.dask: data-parallel training on dask.distributed LocalClusters.

The trees are compared field by field (split features, bins, thresholds, default
directions, children, values, gains, covers, row counts) and the predictions bit for
bit, against single-machine training on the concatenated data and across worker counts.
Labels are multiples of 1/8 (or 0/1, or class indices) so that the base score's sums (a
weighted mean, or weighted class counts) are exact whichever way they are split: the
single-machine np.average / np.bincount and the partitions' reduced sums then agree to
the bit (for other labels they agree to float64 rounding).
"""

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster

import boosters as bst
from boosters.dask import _partition_state as tasks
from boosters.dask import predict, train
from boosters.data.binning import BinMapper
from boosters.objectives.registry import make_objective
from boosters._testing.kernels import sample_rows
from boosters.training._sampling import goss_draw_range, goss_scores
from boosters.training.sampling import make_row_sampler
from support.tree_compare import assert_same_trees
from support.dask_clusters import (
    CHUNKS, DEPTHWISE, GOSS, LEAFWISE, clients, dask_train, kill_first_worker,  # noqa: F401 (clients: the fixture)
    lose_a_worker_at, make_data, no_stealing, objective_labels, train_with_validation,
)


# objective name -> its Objective, for the objectives boosters.dask trains
OBJECTIVES = {"squared": bst.Objective.squared(), "logistic": bst.Objective.logistic(), "hinge": bst.Objective.hinge(),
              "huber": bst.Objective.huber(1.0), "poisson": bst.Objective.poisson(), "gamma": bst.Objective.gamma(),
              "tweedie": bst.Objective.tweedie(1.5), "softmax": bst.Objective.softmax(3),
              "one_vs_rest": bst.Objective.one_vs_rest(3)}


FAST_CASES = [("i16", "squared", DEPTHWISE), ("i16", "logistic", LEAFWISE), ("f64", "squared", DEPTHWISE)]
SLOW_CASES = [(m, o, g) for m in ("i16", "i8", "f64") for o in ("squared", "logistic") for g in (DEPTHWISE, LEAFWISE)
              if (m, o, g) not in FAST_CASES]


@pytest.mark.parametrize("mode, objective, growth",
                         FAST_CASES + [pytest.param(*case, marks=pytest.mark.slow) for case in SLOW_CASES])
def test_equals_single_machine_training(clients, mode, objective, growth):
    # quantized histograms are exact integer sums: bit-identical trees by construction;
    # float64 sums of these float32 gradients are exact too (their partial sums fit 53
    # bits), so the order of addition does not show either
    X, y = make_data()
    if objective == "logistic":
        y = (y > 0).astype(np.float64)
    config = bst.GBDTConfig(n_estimators=3, max_depth=4, n_leaves=8, growth_strategy=growth, histogram_mode=mode,
                            objective=getattr(bst.Objective, objective)())
    model = dask_train(clients[2], X, y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
    assert model.forest.trees[0].split_feature[0] >= 0  # the trees really split
    assert np.array_equal(model.predict(X), reference.predict(X))


def test_quantized_trees_depend_on_neither_workers_nor_partitioning(clients):
    # integer histogram sums are exact in any order: 1 worker x 4 partitions and 4 workers
    # x 7 partitions give the single-machine trees
    X, y = make_data(seed=7)
    config = bst.GBDTConfig(n_estimators=3, max_depth=4, histogram_mode="i16", renew_leaves=False)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(dask_train(clients[1], X, y, config), reference)
    assert_same_trees(dask_train(clients[4], X, y, config, chunks=180), reference)


# (objective, histogram mode, workers): one fast case per family (mean-started regression,
# log-link regression, binary classification, multiclass), the rest slow
OBJECTIVE_CASES = [("huber", "i16", 2), ("poisson", "f64", 1), ("hinge", "i16", 1), ("one_vs_rest", "f64", 2)]
SLOW_OBJECTIVE_CASES = [(o, m, n) for o in ("hinge", "huber", "poisson", "gamma", "tweedie", "softmax", "one_vs_rest")
                        for m, n in (("i16", 2), ("f64", 1)) if (o, m, n) not in OBJECTIVE_CASES]


@pytest.mark.parametrize("objective, mode, n_workers", OBJECTIVE_CASES + [
    pytest.param(*case, marks=pytest.mark.slow) for case in SLOW_OBJECTIVE_CASES])
def test_every_objective_equals_single_machine_training(clients, objective, mode, n_workers):
    # quantized: integer sums; float64: the float32 gradients' partial sums over 1200 rows
    # are exact here (a few trees keep the probabilities and means away from extremes), so
    # the trees, base scores and predictions are the single-machine ones bit for bit
    X, y = make_data(seed=12)
    y = objective_labels(objective, y)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode=mode, objective=OBJECTIVES[objective])
    model = dask_train(clients[n_workers], X, y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert model.n_trees == 3 * OBJECTIVES[objective].n_outputs
    assert_same_trees(model, reference)
    assert all(t.split_feature[0] >= 0 for t in model.forest.trees)  # every tree really splits
    assert np.array_equal(model.predict(X), reference.predict(X))


def test_multiclass_quantized_trees_on_1_2_and_4_workers(clients):
    # softmax with weights: per round one tree per class from the round's gradients, each
    # quantized with its own maxima; integer histogram sums, so bit-identical on any
    # number of workers and partitioning, and equal to single-machine training
    X, y = make_data(seed=13)
    y = objective_labels("softmax", y)
    weights = np.random.default_rng(14).integers(0, 4, size=len(y)).astype(np.float64)
    config = bst.GBDTConfig(n_estimators=2, max_depth=3, histogram_mode="i16", objective=bst.Objective.softmax(3))
    reference = bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), config)
    for n_workers, chunks in ((1, CHUNKS), (2, CHUNKS), (4, 180)):
        model = dask_train(clients[n_workers], X, y, config, weights=weights, chunks=chunks)
        assert_same_trees(model, reference)
        assert np.array_equal(model.predict(X), reference.predict(X))
    assert reference.n_trees == 6 and len(np.unique(reference.forest.base_scores)) == 3


@pytest.mark.parametrize("renew_leaves", [False, True])
def test_equals_single_machine_with_weights(clients, renew_leaves):
    X, y = make_data(seed=1)
    weights = np.random.default_rng(2).integers(0, 4, size=len(y)).astype(np.float64)  # zeros included
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16", renew_leaves=renew_leaves)
    model = dask_train(clients[4], X, y, config, weights=weights)
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), config))


def test_float64_histograms_do_not_depend_on_the_worker_count(clients):
    # weights over 60 binary orders of magnitude: float64 sums of the weighted gradients
    # round, so they depend on the order of addition, which the fixed reduction tree
    # fixes for a given partitioning (the single-machine sums do round differently here)
    X, y = make_data(seed=3)
    weights = np.exp2(np.random.default_rng(4).integers(-30, 30, size=len(y))).astype(np.float64)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="f64", min_child_weight=0)
    models = [dask_train(clients[n], X, y, config, weights=weights) for n in (1, 2, 4)]
    for other in models[1:]:
        assert_same_trees(other, models[0])
    # the single-machine model agrees up to that rounding: the same structure, values
    # within 1e-12 relative (float64 sums of a few hundred terms: ~1e-14 at worst)
    reference = bst.GBDTModel.train(bst.Dataset(X, y, weights=weights), config)
    for a, b in zip(models[0].forest.trees, reference.forest.trees):
        assert np.array_equal(a.split_feature, b.split_feature) and np.array_equal(a.threshold_bin, b.threshold_bin)
        np.testing.assert_allclose(a.value, b.value, rtol=1e-12, atol=0)


@pytest.mark.parametrize("objective", ["squared", "logistic", "softmax"] + [
    pytest.param(o, marks=pytest.mark.slow) for o in ("hinge", "huber", "poisson", "gamma", "tweedie", "one_vs_rest")])
def test_validation_set_and_early_stopping(clients, objective):
    # each objective's default metric (rmse, logloss, multiclass logloss, accuracy, huber,
    # the deviances, the one-vs-rest logloss): all means over the validation rows
    X, y = make_data(n=1600, seed=6)
    y = objective_labels(objective, y)
    config = bst.GBDTConfig(n_estimators=60, max_depth=4, learning_rate=0.8, early_stopping_rounds=3,
                            histogram_mode="i16", objective=OBJECTIVES[objective])
    model = train(clients[2], da.from_array(X[:1200], chunks=(CHUNKS, 5)), da.from_array(y[:1200], chunks=CHUNKS),
                  config, val_set=(da.from_array(X[1200:], chunks=(150, 5)), da.from_array(y[1200:], chunks=150)))
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config,
                                    val_set=bst.Dataset(X[1200:], y[1200:]))
    assert len(reference.eval_history) < 60  # it did stop early
    assert model.best_iteration == reference.best_iteration and model.n_trees == reference.n_trees
    assert_same_trees(model, reference)
    # the scores are means summed per partition: equal to float64 rounding (~1e-16 per addition)
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=1e-12)
    assert model.best_score == pytest.approx(reference.best_score, rel=1e-12)


@pytest.mark.parametrize("renew_leaves", [False, True])
def test_one_round_trip_per_growth_step(clients, renew_leaves):
    # depth-wise: the root (gradients, quantization, histogram) then one per level (the
    # renewed leaves' sums come with the last); the partitions' histograms are int64
    # words, one per bin, and only the smaller child of each split is built
    X, y = make_data()
    stats = {}
    model = dask_train(clients[2], X, y, bst.GBDTConfig(n_estimators=2, max_depth=3, histogram_mode="i16",
                                                        renew_leaves=renew_leaves, growth_strategy="depthwise",
                                                        subsample=1.0), stats=stats, steps="tasks")
    trees = model.forest.trees
    assert all(np.sum(np.asarray(t.left_child) >= 0) == 7 for t in trees)  # full depth-3 trees
    assert stats["round_trips"] == 2 * (1 + 3)
    total_bins = 5 * 256
    built = 2 * (1 + 1 + 2)  # per tree: the root, the smaller child of the root and of each depth-1 node
    assert stats["partition_bytes"] == 4 * built * total_bins * 8


def test_predict_is_a_dask_array_of_the_model_predictions(clients):
    X, y = make_data()
    model = bst.GBDTModel.train(bst.Dataset(X, (y > 0).astype(float)),
                                bst.GBDTConfig(n_estimators=3, objective=bst.Objective.logistic()))
    lazy = predict(model, da.from_array(X, chunks=(CHUNKS, 2)))
    assert isinstance(lazy, da.Array) and lazy.shape == (len(X),) and lazy.numblocks == (4,)
    assert np.array_equal(clients[2].compute(lazy).result(), model.predict(X))
    raw = clients[2].compute(predict(model, da.from_array(X, chunks=CHUNKS), raw=True)).result()
    assert np.array_equal(raw, model.predict_raw(X))


COLUMN_SAMPLING = [dict(colsample_bytree=0.6), dict(colsample_bylevel=0.5), dict(colsample_bynode=0.5)]
ROW_SAMPLING = [dict(subsample=0.5), dict(subsample=0.7, colsample_bynode=0.6, colsample_bytree=0.8), GOSS]
FAST_SAMPLING = [(COLUMN_SAMPLING[0], "i16", DEPTHWISE, 2), (COLUMN_SAMPLING[1], "f64", DEPTHWISE, 4),
                 (COLUMN_SAMPLING[2], "i16", LEAFWISE, 1), (ROW_SAMPLING[0], "i16", DEPTHWISE, 4),
                 (ROW_SAMPLING[1], "f64", LEAFWISE, 2), (GOSS, "i16", DEPTHWISE, 4), (GOSS, "f64", LEAFWISE, 2)]
SLOW_SAMPLING = [(c, m, g, w) for c in COLUMN_SAMPLING + ROW_SAMPLING for m in ("i16", "f64")
                 for g in (DEPTHWISE, LEAFWISE) for w in (1, 2, 4) if (c, m, g, w) not in FAST_SAMPLING]


@pytest.mark.parametrize("sampling, mode, growth, n_workers",
                         FAST_SAMPLING + [pytest.param(*case, marks=pytest.mark.slow) for case in SLOW_SAMPLING],
                         ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) if isinstance(v, dict) else None)
def test_sampling_equals_single_machine_training(clients, sampling, mode, growth, n_workers):
    # the same column draws (the library's, seeded by tree, depth and node) and the same
    # row sample (each partition draws its part of the single-machine sample; GOSS: after
    # an exact distributed k-th largest score): the single-machine trees, bit for bit
    # (float64 sums of these gradients are exact too)
    X, y = make_data(seed=10)
    config = bst.GBDTConfig(n_estimators=4, max_depth=4, n_leaves=8, growth_strategy=growth, histogram_mode=mode,
                            **{"subsample": 1.0, **sampling})  # only the sampling under test
    stats = {}
    chunks = 180 if n_workers == 4 else CHUNKS  # 7 partitions on 4 workers, 4 on fewer
    model = dask_train(clients[n_workers], X, y, config, chunks=chunks, stats=stats)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))
    # and the sampling shows: the trees differ from the unsampled ones
    defaults = bst.GBDTConfig()
    unsampled = bst.GBDTModel.train(bst.Dataset(X, y), config.replace(
        **{**{name: getattr(defaults, name) for name in sampling if name != "learning_rate"}, "subsample": 1.0}))
    assert any(not np.array_equal(a.split_feature, b.split_feature) or not np.array_equal(a.n_samples, b.n_samples)
               for a, b in zip(model.forest.trees, unsampled.forest.trees))
    if "subsample" in sampling:  # the root holds the round's sample; each partition was sent 2 integers a round
        assert all(t.n_samples[0] == round(sampling["subsample"] * len(y)) for t in model.forest.trees)
        assert stats["sample_bytes"] == 16 * -(-len(y) // chunks) * 4
    else:
        assert stats["sample_bytes"] == 0
    if "goss_top_rate" in sampling:  # the warm-up rounds see every row, then the 240 + 120 GOSS rows
        assert [t.n_samples[0] for t in model.forest.trees] == [1200, 1200, 360, 360]


def test_partitions_draw_their_part_of_the_single_machine_row_sample():
    # the driver counts each partition's sampled rows before it; each partition then
    # draws its rows alone: together, the single-machine sample of every round (empty
    # partitions and one at the very end included)
    n, first_rows = 1000, np.array([0, 0, 137, 400, 400, 999])
    sampler = make_row_sampler(bst.GBDTConfig(subsample=0.3, seed=3), n, 1, 1)
    stops = np.append(first_rows[1:], n)
    for round_ in range(3):
        taken, others = sample_rows(sampler, round_, np.zeros((1, n, 2), dtype=np.float32))
        before = sampler.taken_below(round_, first_rows)
        assert before.tolist() == [np.sum(taken < f) for f in first_rows]
        parts = []
        for start, stop, n_before in zip(first_rows, stops, before):
            out = np.empty(stop - start + 1, dtype=np.uint32)
            k = sampler.draw_range(round_, start, stop, n_before, out)
            assert np.array_equal(np.sort(out[:stop - start]), np.arange(stop - start))  # theirs, then the others
            parts.append(out[:k].astype(np.int64) + start)
        assert np.array_equal(np.concatenate(parts), taken)
    with pytest.raises(ValueError, match="bounds must increase"):
        sampler.taken_below(0, [5, 3])
    with pytest.raises(ValueError, match="n_before"):
        sampler.draw_range(0, 0, 10, 301, np.empty(11, dtype=np.uint32))


def test_partitions_draw_their_part_of_the_single_machine_goss_sample():
    # scores with many ties at the threshold (integer gradients): from where the pass
    # stands at each partition's first row, the partitions' draws are the single-machine
    # sample and re-weighted gradients, ties taken first-come across partitions
    n, first_rows = 1000, [0, 0, 137, 400, 400, 999]
    rng = np.random.default_rng(1)
    gh = np.stack([rng.integers(-3, 4, size=(n, 2)), rng.integers(0, 3, size=(n, 2))], axis=2).astype(np.float32)
    gh = np.ascontiguousarray(gh.transpose(1, 0, 2))  # (2 outputs, n, 2)
    sampler = make_row_sampler(bst.GBDTConfig(goss_top_rate=0.2, goss_other_rate=0.1, learning_rate=1.0), n, 2, 1)
    for round_ in (1, 2):
        expected_gh = gh.copy()
        taken, _ = sample_rows(sampler, round_, expected_gh)
        scores = goss_scores(gh)
        threshold = np.sort(scores)[::-1][sampler.top_k - 1]
        assert np.sum(scores == threshold) > np.sum(scores > threshold) // 4  # ties: plenty
        at = (threshold, sampler.top_k - int(np.sum(scores > threshold)), n - sampler.top_k, sampler.other_k)
        parts, drawn_gh = [], gh.copy()
        for start, stop in zip(first_rows, first_rows[1:] + [n]):
            part = np.ascontiguousarray(drawn_gh[:, start:stop])
            out = np.empty(stop - start + 1, dtype=np.uint32)
            k, at = goss_draw_range(sampler.seed, round_, sampler.weight, scores[start:stop], part, start, at, out)
            drawn_gh[:, start:stop] = part
            parts.append(out[:k].astype(np.int64) + start)
        assert at[1:] == (0, 0, 0)  # every tie, rest row and draw accounted for
        assert np.array_equal(np.concatenate(parts), taken)
        assert np.array_equal(drawn_gh, expected_gh)


@pytest.mark.parametrize("mode, growth", [("i16", DEPTHWISE), ("f64", LEAFWISE),
                                          pytest.param("i16", LEAFWISE, marks=pytest.mark.slow),
                                          pytest.param("f64", DEPTHWISE, marks=pytest.mark.slow)])
def test_monotone_and_interaction_constraints_equal_single_machine(clients, mode, growth):
    # the driver's split search is constrained as GrowthLoop's (the library's NodeConstraints)
    # and the trees' weights clamped to their monotone bounds: single-machine training's
    # trees, and the predictions rise with feature 0 and fall with feature 1
    X, y = make_data(seed=19)
    config = bst.GBDTConfig(n_estimators=4, max_depth=4, histogram_mode=mode, growth_strategy=growth,
                            monotone_constraints=[1, -1, 0, 0, 0], interaction_constraints=[[0, 1], [1, 2, 3, 4]])
    model = dask_train(clients[2], X, y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
    grid = np.tile(np.nanmean(X, axis=0), (50, 1))
    grid[:, 0] = np.linspace(-3, 3, 50)
    assert np.all(np.diff(model.predict(grid)) >= 0)
    grid[:, 0], grid[:, 1] = 0.0, np.linspace(-3, 3, 50)
    assert np.all(np.diff(model.predict(grid)) <= 0)
    # the constraints bind: the unconstrained model differs
    assert not np.array_equal(model.predict(X), bst.GBDTModel.train(
        bst.Dataset(X, y), bst.GBDTConfig(n_estimators=4, max_depth=4, histogram_mode=mode,
                                          growth_strategy=growth)).predict(X))


@pytest.mark.parametrize("change, name", [
    (dict(objective=bst.Objective.custom(None)), "objective"),  # a loaded model's: no function to train with
    (dict(objective=bst.Objective.lambdarank(), **GOSS), "goss_top_rate"),  # it would split queries (as one machine)
    (dict(metric=lambda margins, dataset: ("zero", 0.0, False)), "metric"),  # it reads a whole Dataset
    (dict(metric=(bst.Metric.rmse(), lambda margins, dataset: ("zero", 0.0, False))), "metric"),
    (dict(cat_encoding="ordered_ctr"), "cat_encoding"),  # its statistics need all training rows at once
])
def test_refuses_what_it_does_not_support_yet(clients, change, name):
    X, y = make_data(n=100)
    with pytest.raises(ValueError, match=f"config.{name}"):
        dask_train(clients[1], X, y, bst.GBDTConfig(n_estimators=1, **change), chunks=50)


def squared_error(margins, dataset):
    """A custom objective: squared error's gradients from the partition's rows (row-wise)."""
    return margins - dataset.y, np.ones_like(margins)


def softmax_gradients(margins, dataset):
    """A custom 3-class softmax objective (multi-output margins (rows, 3))."""
    p = np.exp(margins - margins.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    onehot = np.eye(3)[dataset.y.astype(int)]
    return p - onehot, np.maximum(2 * p * (1 - p), 1e-16)


@pytest.mark.parametrize("function, n_outputs, mode, n_workers", [
    (squared_error, 1, "i16", 2), (squared_error, 1, "f64", 4), (softmax_gradients, 3, "i16", 2)])
def test_custom_objectives_equal_single_machine_training(clients, monkeypatch, function, n_outputs, mode, n_workers):
    # the function runs on each partition's margins and rows (a Dataset of its X, y and
    # weights); row-wise gradients are the single-machine ones, so are the trees
    X, y = make_data(seed=6)
    if n_outputs == 3:
        y = objective_labels("softmax", y)
    objective = bst.Objective.custom(function, n_outputs=n_outputs, base_score=0.25)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode=mode, objective=objective,
                            metric=bst.Metric.rmse() if n_outputs == 1 else None)
    model = dask_train(clients[n_workers], X, y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict_raw(X), reference.predict_raw(X))


def test_a_custom_objective_gets_each_partition_s_rows(clients):
    def checking(margins, dataset):
        assert dataset.X.shape == (len(margins), 5) and len(dataset.y) == len(margins) < 1200  # a partition's
        return squared_error(margins, dataset)

    X, y = make_data()
    config = bst.GBDTConfig(n_estimators=1, max_depth=2, objective=bst.Objective.custom(checking))
    dask_train(clients[1], X, y, config)  # its assertions run on the partitions: an error would fail training
    with pytest.raises(ValueError, match="custom objective's grad"):  # its checks are the single-machine ones
        dask_train(clients[1], X, y, bst.GBDTConfig(n_estimators=1, objective=bst.Objective.custom(
            lambda m, d: (np.ones(3), np.ones_like(m)))))


def ranking_data(seed=0):
    """Queries of 5-40 rows, relevance labels 0-3; `chunks`: partitions that never cut a query."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 41, size=50)
    qid = np.repeat(np.arange(50) * 7 + 3, sizes)  # ids need not be 0..n-1
    X = rng.normal(size=(len(qid), 5))
    y = np.clip(np.round(X[:, 0] - X[:, 1] + rng.normal(size=len(qid)) + 1.5), 0, 3)
    ends = np.cumsum(sizes)
    cuts = [0] + [int(ends[i]) for i in (9, 19, 34)] + [len(qid)]
    return X, y, qid, tuple(np.diff(cuts).tolist())


@pytest.mark.parametrize("objective, mode, n_workers", [
    ("lambdarank", "i16", 2), ("pairwise", "f64", 4), pytest.param("lambdarank", "f64", 1, marks=pytest.mark.slow)])
def test_ranking_equals_single_machine_training(clients, objective, mode, n_workers):
    # each partition computes its queries' gradients: those of the single-machine training
    X, y, qid, chunks = ranking_data()
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode=mode,
                            objective=getattr(bst.Objective, objective)())
    model = train(clients[n_workers], da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)),
                  config, qid=da.from_array(qid, chunks=(chunks,)))
    reference = bst.GBDTModel.train(bst.Dataset(X, y, qid=qid), config)
    assert all(np.sum(np.asarray(t.left_child) >= 0) >= 3 for t in model.forest.trees)  # real trees
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))


@pytest.mark.parametrize("mode, n_workers, extra", [("i16", 2, {}), ("f64", 4, dict(colsample_bynode=0.7))])
def test_ranking_samples_whole_queries_as_one_machine(clients, mode, n_workers, extra):
    # subsample draws whole queries: each partition draws its part of the single-machine
    # draw over the query indices (what lies before it counted by the driver) and takes
    # those queries' rows; the root's row count is the sampled queries' rows
    X, y, qid, chunks = ranking_data(seed=5)
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode=mode, subsample=0.6,
                            objective=bst.Objective.lambdarank(), **extra)
    model = train(clients[n_workers], da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)),
                  config, qid=da.from_array(qid, chunks=(chunks,)))
    reference = bst.GBDTModel.train(bst.Dataset(X, y, qid=qid), config)
    assert all(t.n_samples[0] < len(y) for t in reference.forest.trees)  # rows were sampled
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))


def test_ranking_with_query_sampling_survives_recoveries(clients, monkeypatch):
    X, y, qid, chunks = ranking_data(seed=6)
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16", subsample=0.5,
                            objective=bst.Objective.pairwise())
    lose_a_worker_at(monkeypatch, {3, 9, 14})
    stats = {}
    model = train(clients[2], da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)), config,
                  qid=da.from_array(qid, chunks=(chunks,)), stats=stats, steps="tasks")
    assert stats["recoveries"] == 3
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, y, qid=qid), config))


@pytest.mark.parametrize("metric", [None, bst.Metric.map(k=5)])
def test_ranking_validation_and_early_stopping(clients, metric):
    # NDCG (the default) and MAP are means over the queries: each validation partition
    # scores its queries, the partitions' means are averaged by their query counts
    X, y, qid, chunks = ranking_data(seed=3)
    X_val, y_val, qid_val, val_chunks = ranking_data(seed=4)
    config = bst.GBDTConfig(n_estimators=25, max_depth=3, learning_rate=0.5, histogram_mode="i16",
                            objective=bst.Objective.lambdarank(ndcg_at=5), early_stopping_rounds=2, metric=metric)
    model = train(clients[2], da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)), config,
                  qid=da.from_array(qid, chunks=(chunks,)),
                  val_set=(da.from_array(X_val, chunks=(val_chunks, -1)), da.from_array(y_val, chunks=(val_chunks,))),
                  val_qid=da.from_array(qid_val, chunks=(val_chunks,)))
    reference = bst.GBDTModel.train(bst.Dataset(X, y, qid=qid), config, val_set=bst.Dataset(X_val, y_val, qid=qid_val))
    assert model.best_iteration == reference.best_iteration < 24  # it stopped early
    assert_same_trees(model, reference)
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=1e-12)  # means: float64 rounding
    shuffled = qid_val.copy()
    third = int(np.flatnonzero(np.diff(qid_val))[1]) + 1  # the first row of the third query, in partition 0
    shuffled[[0, third]] = shuffled[[third, 0]]  # a partition's query ids whose rows are not consecutive
    with pytest.raises(ValueError, match="val_qid: the rows of query .* are not contiguous"):
        train(clients[1], da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)), config,
              qid=da.from_array(qid, chunks=(chunks,)), val_set=(da.from_array(X_val, chunks=(val_chunks, -1)),
                                                                  da.from_array(y_val, chunks=(val_chunks,))),
              val_qid=da.from_array(shuffled, chunks=(val_chunks,)))
    with pytest.raises(ValueError, match="val_qid: ranking needs"):
        train(clients[1], da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)), config,
              qid=da.from_array(qid, chunks=(chunks,)), val_set=(da.from_array(X_val, chunks=(val_chunks, -1)),
                                                                  da.from_array(y_val, chunks=(val_chunks,))))


def test_pinball_validation_scores(clients):
    X, y = make_data(n=1600, seed=14)
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16", objective=bst.Objective.pinball([0.2, 0.7]))
    model, _ = train_with_validation(clients[2], X, y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    assert_same_trees(model, reference)
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=1e-12)


def test_ranking_input_errors(clients):
    X, y, qid, chunks = ranking_data(seed=1)
    config = bst.GBDTConfig(n_estimators=1, objective=bst.Objective.lambdarank())
    Xd, yd = da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,))
    with pytest.raises(ValueError, match="qid: ranking needs"):
        train(clients[1], Xd, yd, config)
    cut = (chunks[0] + 2,) + (chunks[1] - 2,) + chunks[2:]  # the first partition ends inside a query
    with pytest.raises(ValueError, match="qid: query .* more than one partition"):
        train(clients[1], da.from_array(X, chunks=(cut, -1)), da.from_array(y, chunks=(cut,)), config,
              qid=da.from_array(qid, chunks=(cut,)))
    shuffled = qid.copy()
    shuffled[[0, -1]] = shuffled[[-1, 0]]  # query ids whose rows are not consecutive
    with pytest.raises(ValueError, match="qid"):
        train(clients[1], Xd, yd, config, qid=da.from_array(shuffled, chunks=(chunks,)))
    with pytest.raises(ValueError, match="qid has"):
        train(clients[1], Xd, yd, config, qid=da.from_array(qid[:-1], chunks=len(qid) - 1))


@pytest.mark.parametrize("objective, mode, growth, n_workers, sampling", [
    (bst.Objective.absolute(), "i16", DEPTHWISE, 2, {}),
    (bst.Objective.pinball(0.3), "f64", LEAFWISE, 4, {}),
    (bst.Objective.pinball([0.1, 0.5, 0.9]), "i16", DEPTHWISE, 2, {}),
    (bst.Objective.absolute(), "i16", DEPTHWISE, 4, dict(subsample=0.7, colsample_bynode=0.8)),
    pytest.param(bst.Objective.pinball(0.8), "i8", LEAFWISE, 1, GOSS, marks=pytest.mark.slow),
])
@pytest.mark.parametrize("labels", ["eighths", "continuous"])
def test_quantile_objectives_equal_single_machine_training(clients, objective, mode, growth, n_workers, sampling,
                                                           labels):
    # the start (the labels' quantiles) and every leaf (its residuals' quantile) selected
    # exactly over the partitions: the single-machine values, bit for bit. Labels in
    # eighths tie often (equal order statistics); continuous ones interpolate
    X, y = make_data(seed=12)
    if labels == "continuous":
        y = y + np.random.default_rng(1).normal(size=len(y))
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, n_leaves=6, growth_strategy=growth, histogram_mode=mode,
                            objective=objective, **sampling)
    model = dask_train(clients[n_workers], X, y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X, y), config)
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict_raw(X), reference.predict_raw(X))


@pytest.mark.parametrize("objective, mode, n_workers, sampling", [
    (bst.Objective.squared(), "i16", 2, {}), (bst.Objective.huber(0.5), "f64", 4, {}),
    (bst.Objective.absolute(), "i16", 2, dict(subsample=0.7)),
    pytest.param(bst.Objective.squared(n_targets=3), "i8", 1, GOSS, marks=pytest.mark.slow)])
def test_multi_target_regression_equals_single_machine_training(clients, objective, mode, n_workers, sampling):
    # a 2-D y: one tree group per target (its columns), each from its target's start
    X, y = make_data(seed=13)
    Y = np.column_stack([y, np.round(8 * np.nan_to_num(X[:, 2])) / 8, -y / 2])  # multiples of 1/8: exact means
    config = bst.GBDTConfig(n_estimators=2, max_depth=3, histogram_mode=mode, objective=objective, **sampling)
    model = train(clients[n_workers], da.from_array(X, chunks=(CHUNKS, -1)), da.from_array(Y, chunks=(CHUNKS, -1)),
                  config)
    reference = bst.GBDTModel.train(bst.Dataset(X, Y), config)
    assert model.forest.n_groups == 3
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))


def test_multi_target_regression_input_errors(clients):
    X, y = make_data()
    Y = da.from_array(np.column_stack([y, y]), chunks=(CHUNKS, -1))
    Xd = da.from_array(X, chunks=(CHUNKS, -1))
    with pytest.raises(ValueError, match=r"y: shape \(1200, 2\) holds 2 targets.*logistic"):
        train(clients[1], Xd, Y, bst.GBDTConfig(n_estimators=1, objective=bst.Objective.logistic()))
    with pytest.raises(ValueError, match="y: .* needs y of shape"):
        train(clients[1], Xd, Y, bst.GBDTConfig(n_estimators=1, objective=bst.Objective.squared(n_targets=3)))
    with pytest.raises(ValueError, match="y has 1193 rows but X has 1200"):
        train(clients[1], Xd, Y[:1193], bst.GBDTConfig(n_estimators=1))
    with pytest.raises(ValueError, match="val_set y has 1193 rows but val_set X has 1200"):
        train(clients[1], Xd, Y, bst.GBDTConfig(n_estimators=1), val_set=(Xd, Y[:1193]))
    with pytest.raises(ValueError, match="val_set: y has 1 target"):
        train(clients[1], Xd, Y, bst.GBDTConfig(n_estimators=1), val_set=(Xd, da.from_array(y, chunks=CHUNKS)))


def test_multi_target_validation_scores(clients):
    # the score is the mean over the targets of each target's rmse, as metrics.per_target_mean
    X, y = make_data(n=1600, seed=15)
    Y = np.column_stack([y, 2 * y - 1, np.round(8 * np.nan_to_num(X[:, 3])) / 8])
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16")
    model, _ = train_with_validation(clients[2], X, Y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], Y[:1200]), config, val_set=bst.Dataset(X[1200:], Y[1200:]))
    assert_same_trees(model, reference)
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=1e-12)


@pytest.mark.parametrize("mode, objective, extra, n_workers", [
    ("i16", bst.Objective.squared(), {}, 2),
    ("f64", bst.Objective.logistic(), dict(xgboost_dart_mode=True, subsample=0.7), 4),
    ("i16", bst.Objective.softmax(3), dict(max_drop=1), 2),
    ("i16", bst.Objective.squared(), dict(goss_top_rate=0.3, goss_other_rate=0.2), 2),
    pytest.param("i8", bst.Objective.absolute(), dict(colsample_bytree=0.8), 1, marks=pytest.mark.slow),
])
def test_dart_equals_single_machine_training(clients, mode, objective, extra, n_workers):
    # each round drops earlier rounds as the single-machine DartDropout draws them: the
    # partitions take the dropped trees' predictions on their raw rows out of the margins,
    # the new trees grow at the round's smaller rate, the dropped ones are rescaled and put
    # back; validation margins follow as on one machine; early stopping restores the scales
    X, y = make_data(n=1600, seed=17)
    y = objective_labels(objective.name, y)
    config = bst.GBDTConfig(n_estimators=12, max_depth=3, histogram_mode=mode, objective=objective, booster="dart",
                            drop_rate=0.3, skip_drop=0.2, learning_rate=0.3, early_stopping_rounds=4, **extra)
    model, _ = train_with_validation(clients[n_workers], X, y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    assert model.best_iteration == reference.best_iteration
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict_raw(X), reference.predict_raw(X))
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=1e-12)


@pytest.mark.parametrize("mode, objective, extra, n_workers", [
    ("i16", bst.Objective.squared(), {}, 2),
    ("f64", bst.Objective.squared(), dict(subsample=0.7, linear_l2=0.1), 4),
    ("i16", bst.Objective.softmax(3), dict(linear_l1=0.01), 2),
    ("i16", bst.Objective.huber(1.0), dict(colsample_bytree=0.8), 2),
    pytest.param("i16", bst.Objective.squared(), dict(goss_top_rate=0.2, goss_other_rate=0.1), 1,
                 marks=pytest.mark.slow),
])
def test_linear_leaves_equal_single_machine_training(clients, mode, objective, extra, n_workers):
    # each leaf's normal equations summed by a chain of tasks over the partitions in row
    # order (the single-machine sums), solved on the driver; the partitions move their
    # margins to the linear outputs on their raw rows, as on one machine
    X, y = make_data(n=1600, seed=19)
    y = objective_labels(objective.name, np.round(8 * (y + 0.5 * np.nan_to_num(X[:, 2] * X[:, 0]))) / 8)
    config = bst.GBDTConfig(n_estimators=5, max_depth=3, histogram_mode=mode, objective=objective, linear_leaves=True,
                            learning_rate=0.5, **extra)
    model, _ = train_with_validation(clients[n_workers], X, y, config)
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    assert sum(t.linear_n_terms.sum() for t in model.forest.trees) > 0  # linear leaves were fitted
    assert_same_trees(model, reference)
    for field in ("linear_const", "linear_n_terms", "linear_features", "linear_coefs"):
        assert all(np.array_equal(getattr(a, field), getattr(b, field))
                   for a, b in zip(model.forest.trees, reference.forest.trees)), field
    assert np.array_equal(model.predict_raw(X), reference.predict_raw(X))
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=1e-12)


def test_linear_leaves_survive_recoveries(clients, monkeypatch):
    # lost while a tree grows, while its normal equations are chained and at a validation
    # score: the rebuilt partitions replay each finished tree's linear leaves too
    X, y = make_data(n=1600, seed=20)
    config = bst.GBDTConfig(n_estimators=4, max_depth=2, histogram_mode="i16", linear_leaves=True, learning_rate=0.5)
    undisturbed, _ = train_with_validation(clients[2], X, y, config)
    lose_a_worker_at(monkeypatch, {5, 9, 13, 20})
    model, stats = train_with_validation(clients[2], X, y, config, steps="tasks")
    assert stats["recoveries"] == 4
    assert_same_trees(model, undisturbed)
    assert all(np.array_equal(a.linear_coefs, b.linear_coefs)
               for a, b in zip(model.forest.trees, undisturbed.forest.trees))
    assert model.eval_history == undisturbed.eval_history


def test_dart_survives_recoveries(clients, monkeypatch):
    # lost at a round's root (after its dropout), at a validation score (the next round's
    # dropout chosen), in a later tree and at late validation scores (after earlier scored
    # rounds were rescaled): the partitions replay every round's dropout, the validation
    # partitions every scored round as it was scored
    X, y = make_data(n=1600, seed=18)
    config = bst.GBDTConfig(n_estimators=6, max_depth=3, histogram_mode="i16", booster="dart", drop_rate=0.5,
                            skip_drop=0.0, learning_rate=0.5, growth_strategy="depthwise")
    undisturbed, _ = train_with_validation(clients[2], X, y, config)
    lose_a_worker_at(monkeypatch, {6, 10, 17, 23, 30, 36})
    model, stats = train_with_validation(clients[2], X, y, config, steps="tasks")
    assert stats["recoveries"] == 6
    assert_same_trees(model, undisturbed)
    assert model.eval_history == undisturbed.eval_history
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    assert_same_trees(model, reference)


def test_dart_survives_a_recovery_between_rounds(clients, monkeypatch):
    # lost at round 3's validation score, after rounds that dropped trees: the partitions
    # are rebuilt before the next round's dropout is chosen (the trainer chooses it at the
    # round's start, after the callbacks), so that round's first tree starts it (the
    # round before's dropped trees put back, its own taken out, its gradients) on the
    # rebuilt partitions; the model is the single-machine one
    X, y = make_data(n=1600, seed=18)
    config = bst.GBDTConfig(n_estimators=6, max_depth=3, histogram_mode="i16", booster="dart", drop_rate=0.5,
                            skip_drop=0.0, learning_rate=0.5)
    lose_a_worker_at(monkeypatch, {20})  # waits: 4 per tree, then the round's score (5, 10, 15, 20)
    model, stats = train_with_validation(clients[2], X, y, config, steps="tasks")
    assert stats["recoveries"] == 1
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    assert_same_trees(model, reference)


def test_quantile_objectives_refuse_weights(clients):
    X, y = make_data()
    with pytest.raises(ValueError, match="weights: .*unweighted"):
        dask_train(clients[1], X, y, bst.GBDTConfig(n_estimators=1, objective=bst.Objective.absolute()),
                   weights=np.ones(len(y)))


def test_a_validation_metric_must_be_a_mean_over_rows(clients):
    # a given metric that is such a mean is scored as single-machine training scores it
    # (to float64 rounding); auc is not a mean over rows: refused with a val_set
    X, y = make_data(n=1600, seed=15)
    y = (y > 0).astype(np.float64)
    Xd, yd = da.from_array(X[:1200], chunks=(CHUNKS, 5)), da.from_array(y[:1200], chunks=CHUNKS)
    val = (da.from_array(X[1200:], chunks=(150, 5)), da.from_array(y[1200:], chunks=150))
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, objective=bst.Objective.logistic(),
                            metric=bst.Metric.accuracy())
    model = train(clients[2], Xd, yd, config, val_set=val)
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=1e-12)
    with pytest.raises(ValueError, match="config.metric: .*mean over rows.*Metric.auc"):
        train(clients[2], Xd, yd, config.replace(metric=bst.Metric.auc()), val_set=val)


def test_dask_dataframes(clients):
    # numeric columns of mixed dtypes, named: the single-machine model of the pandas frame
    X, y = make_data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(5)]).assign(f4=lambda f: f["f4"].fillna(0).round())
    frame["f4"] = frame["f4"].astype(np.int64)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16")
    model = train(clients[2], dd.from_pandas(frame, npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3),
                  config)
    reference = bst.GBDTModel.train(bst.Dataset(frame, y), config)
    assert model.feature_names == reference.feature_names == list(frame.columns)
    assert_same_trees(model, reference)
    shuffled = dd.from_pandas(frame[frame.columns[::-1]], npartitions=2)  # taken by name
    assert np.array_equal(clients[2].compute(predict(model, shuffled)).result(), reference.predict(frame))
    with pytest.raises(ValueError, match="X: column 'c' has dtype .*numeric and pandas category columns"):
        train(clients[1], dd.from_pandas(frame.assign(c="x"), npartitions=2),
              dd.from_pandas(pd.Series(y), npartitions=2))


def test_partitions_a_filter_emptied_are_left_out(clients):
    # a filter that empties the middle partitions of X and of the validation set: training
    # and scoring skip them, and the model (row sampling included: global row indices are
    # unchanged) is single-machine training's on the kept rows
    X, y = make_data(seed=23)
    frame, kept = pd.DataFrame(X, columns=list("abcde")), (np.arange(len(y)) < 300) | (np.arange(len(y)) >= 900)
    parts, labels = dd.from_pandas(frame, npartitions=4), dd.from_pandas(pd.Series(y), npartitions=4)
    mask = dd.from_pandas(pd.Series(kept), npartitions=4)
    X_kept, y_kept = parts[mask], labels[mask]
    assert clients[2].compute(X_kept.map_partitions(len)).result().tolist() == [300, 0, 0, 300]
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16", subsample=0.7)
    model = train(clients[2], X_kept, y_kept, config, val_set=(X_kept, y_kept))
    local = bst.Dataset(frame[kept], y[kept])
    reference = bst.GBDTModel.train(local, config, val_set=local)
    assert_same_trees(model, reference)
    assert model.eval_history == pytest.approx(reference.eval_history, rel=1e-12)  # float64 sums' order


def test_bad_input(clients):
    X, y = make_data(n=100)
    Xd, yd = da.from_array(X, chunks=50), da.from_array(y, chunks=50)
    with pytest.raises(TypeError, match="X must be a 2-D dask.array"):
        train(clients[1], X, yd)
    with pytest.raises(TypeError, match="y must be a 1-D dask.array"):
        train(clients[1], Xd, y)
    with pytest.raises(ValueError, match="y has 99 rows but X has 100"):
        train(clients[1], Xd, yd[:99])
    bad = y.copy()
    bad[70] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        train(clients[1], Xd, da.from_array(bad, chunks=50))
    with pytest.raises(ValueError, match="weights must be >= 0"):
        train(clients[1], Xd, yd, weights=da.from_array(-np.ones(100), chunks=50))
    # the objective's label checks, on every partition; its float32 range check, on the reduced extremes
    for objective, last, message in ((bst.Objective.gamma(), 0.0, "gamma objective needs labels > 0"),
                                     (bst.Objective.softmax(3), 3.0, r"softmax\(3\) needs integer"),
                                     (bst.Objective.squared(), 1e38, "rescale y")):
        labels = np.r_[np.ones(99), last]
        with pytest.raises(ValueError, match=message):
            train(clients[1], Xd, da.from_array(labels, chunks=50), bst.GBDTConfig(objective=objective))
    big = da.from_array(np.r_[np.ones(50), np.full(50, 1e37)], chunks=50)  # y's largest label in the other partition
    with pytest.raises(ValueError, match="weights: weights up to 1e\\+37"):
        train(clients[1], Xd, da.from_array(np.r_[np.full(50, 4.0), np.ones(50)], chunks=50), weights=big)
    with pytest.raises(ValueError, match="poisson objective needs some training label > 0"):
        train(clients[1], Xd, da.from_array(np.zeros(100), chunks=50),
              bst.GBDTConfig(objective=bst.Objective.poisson()))
    with pytest.raises(ValueError, match="early_stopping_rounds needs a val_set"):
        train(clients[1], Xd, yd, bst.GBDTConfig(early_stopping_rounds=2))
    with pytest.raises(ValueError, match="val_set has 4 features but X has 5"):
        train(clients[1], Xd, yd, val_set=(Xd[:, :4], yd))
    with pytest.raises(TypeError, match="model must be a GBDTModel"):
        predict("model", Xd)


def test_a_rebuilt_partition_state_refuses_to_train():
    # what Dask would rebuild from the data after losing the worker that held the state:
    # its margins and row partition are gone, so every task of a later tree must fail
    X, y = make_data(n=100)
    settings = tasks.Settings(np.arange(5, dtype=np.int32), 7, None)
    state = tasks.make_state(X, y, None, BinMapper(16).fit(X), make_objective(bst.Objective.squared(), None),
                             np.zeros(1), settings, 0)
    tasks.start_tree(state, 0, None, 0, True)  # the first tree starts from the rebuilt state: fine
    with pytest.raises(RuntimeError, match="was lost .* expected tree 2, it is at 0"):
        tasks.start_tree(state, 3, None, 0, True)
    with pytest.raises(RuntimeError, match="was lost"):
        tasks.split_nodes(state, 1, np.array([[0, 0, 3, 0, 1, 2]]))


@pytest.mark.parametrize("mode, growth", [("i16", DEPTHWISE), ("f64", DEPTHWISE), ("i16", LEAFWISE)])
def test_the_model_survives_recoveries(clients, monkeypatch, mode, growth):
    # recovered in the middle of tree 0, at round 0's validation score, twice in a row at
    # tree 1's root and at tree 2's last step: the model, its validation scores and its
    # predictions are those of the undisturbed run, bit for bit (the rebuilt margins add
    # the same values in the same order, the trees grow again the same way)
    X, y = make_data(n=1600, seed=8)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, n_leaves=6, growth_strategy=growth, histogram_mode=mode)
    # waits per full tree: the root, one per level (depth-wise) or split (leaf-wise; the
    # renewed leaves of quantized training come with the last one)
    n = 1 + (3 if growth is DEPTHWISE else 5)

    undisturbed, _ = train_with_validation(clients[2], X, y, config)
    # waits (retries counted): tree 0 1-2, again 3..n+2, validation n+3, again n+4, tree 1
    # n+5, again n+6, again n+7..2n+6, validation 2n+7, tree 2 2n+8..3n+7
    lose_a_worker_at(monkeypatch, {2, n + 3, n + 5, n + 6, 3 * n + 7})
    model, stats = train_with_validation(clients[2], X, y, config, steps="tasks")
    assert stats["recoveries"] == 5
    assert_same_trees(model, undisturbed)
    assert all(len(t.value) == (15 if growth is DEPTHWISE else 11) for t in model.forest.trees)  # full trees: n holds
    assert model.eval_history == undisturbed.eval_history
    assert np.array_equal(model.predict(X), undisturbed.predict(X))


def test_the_model_survives_recoveries_with_sampling(clients, monkeypatch):
    # as above, with row and column sampling: every rebuilt partition draws the rounds'
    # samples again and adds each finished tree to its sampled rows (by the growth
    # steps) and to the others (by the tree's splits); the model is the single-machine
    # one (quantized), and its validation scores those of the undisturbed run
    X, y = make_data(n=1600, seed=8)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16", subsample=0.6, colsample_bynode=0.6,
                            growth_strategy="depthwise")
    n = 1 + 3

    undisturbed, _ = train_with_validation(clients[2], X, y, config)
    lose_a_worker_at(monkeypatch, {2, n + 3, n + 5, n + 6, 3 * n + 7})
    model, stats = train_with_validation(clients[2], X, y, config, steps="tasks")
    assert stats["recoveries"] == 5
    assert all(len(t.value) == 15 for t in model.forest.trees)  # full trees: the waits are numbered as above
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    assert_same_trees(undisturbed, reference)
    assert_same_trees(model, undisturbed)
    assert model.eval_history == undisturbed.eval_history
    assert np.array_equal(model.predict(X), undisturbed.predict(X))


def test_the_model_survives_recoveries_with_goss(clients, monkeypatch):
    # lost workers in the warm-up rounds and in GOSS rounds (while the k-th largest score
    # is searched, and while trees grow): the rebuilt partitions draw the finished GOSS
    # rounds' samples again from where the selection pass stood at each of them, and a
    # round whose sample was not drawn yet draws it again; the single-machine model
    X, y = make_data(seed=11)
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16", growth_strategy="depthwise", **GOSS)
    # waits: 4 per warm-up tree; a GOSS tree 1 + 5 (the select) + 1 (the selection pass) + 4
    lose_a_worker_at(monkeypatch, {2, 7, 12, 16, 25})
    stats = {}
    model = dask_train(clients[2], X, y, config, stats=stats, steps="tasks")
    assert stats["recoveries"] == 5
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, y), config))


def test_multiclass_recoveries_replay_a_round_s_trees(clients, monkeypatch):
    # lost in the middle of a round's second tree (class 1): the rebuilt partitions replay
    # the earlier rounds, take the round's gradients from the margins before it, then add
    # the round's finished trees; the model is the undisturbed (single-machine) one
    X, y = make_data(seed=16)
    y = objective_labels("softmax", y)
    config = bst.GBDTConfig(n_estimators=2, max_depth=2, histogram_mode="i16", objective=bst.Objective.softmax(3))
    # 3 waits per tree (the root, two levels): tree 1 is 4-6, lost at 5; again 6-8, tree 2
    # 9-11, tree 3 12-14, tree 4 (round 1, class 1) 15-17, lost at 16
    lose_a_worker_at(monkeypatch, {5, 16})
    stats = {}
    model = dask_train(clients[2], X, y, config, stats=stats, steps="tasks")
    assert stats["recoveries"] == 2
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, y), config))


def test_a_killed_worker_process_is_survived(monkeypatch):
    # worker processes holding partitions die twice: the one holding validation partition
    # 0 while round 0 is scored, then one holding partitions in the middle of a later tree;
    # Dask recomputes their states from their data, the training rebuilds every state from
    # the finished trees and grows the tree again: the model is the undisturbed one, which
    # is the single-machine one (quantized)
    X, y = make_data(n=1600, seed=9)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16")

    # waits: tree 0 1-4, validation 5 (a kill), retried 6, tree 1 7-10, validation 11, tree 2
    # from 12: the second kill at its first level (if the first loss shows one wait later,
    # the second comes one step earlier, still in a tree)
    lose_a_worker_at(monkeypatch, {5, 13}, kill_first_worker)
    stats = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        model = train(client, da.from_array(X[:1200], chunks=(CHUNKS, 5)), da.from_array(y[:1200], chunks=CHUNKS),
                      config, val_set=(da.from_array(X[1200:], chunks=(200, 5)), da.from_array(y[1200:], chunks=200)),
                      stats=stats, steps="tasks")
    assert stats["recoveries"] == 2
    reference = bst.GBDTModel.train(bst.Dataset(X[:1200], y[:1200]), config, val_set=bst.Dataset(X[1200:], y[1200:]))
    assert_same_trees(model, reference)
    assert np.array_equal(model.predict(X), reference.predict(X))
    np.testing.assert_allclose(model.eval_history, reference.eval_history, rtol=1e-12)  # means: float64 rounding


def test_a_partition_dask_cannot_recompute_is_a_clear_error(monkeypatch):
    # the data were scattered to one worker, which dies: Dask cannot rebuild the lost
    # partitions and cancels them; the training stops with a RuntimeError saying so
    # (never waits for them, never fails with a bare CancelledError)
    X, y = make_data(n=800, seed=2)
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16")

    lose_a_worker_at(monkeypatch, {3}, kill_first_worker)
    with no_stealing(), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        first = sorted(client.scheduler_info()["workers"])[0]
        blocks = client.scatter([X[:400], X[400:], y[:400], y[400:]], workers=[first])
        Xd = da.concatenate([da.from_delayed(b, (400, 5), np.float64) for b in blocks[:2]])
        yd = da.concatenate([da.from_delayed(b, (400,), np.float64) for b in blocks[2:]])
        with pytest.warns(UserWarning, match="held by 1 of the 2 workers"), \
                pytest.raises(RuntimeError, match="Dask cannot recompute"):
            train(client, Xd, yd, config, steps="tasks")


@pytest.mark.slow
def test_process_workers_and_sampled_bin_edges():
    # 210k rows: the bin edges come from the seeded 200k-row sample, which the driver
    # fetches; "auto" picks 16-bit quantized histograms as single-machine training does
    rng = np.random.default_rng(5)
    X = rng.normal(size=(210_000, 2)).astype(np.float32)
    y = np.round(8 * (X[:, 0] + 0.5 * rng.normal(size=len(X)))) / 8
    config = bst.GBDTConfig(n_estimators=2, max_depth=2)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster, set_as_default=False) as client:
        model = dask_train(client, X, y, config, chunks=70_000)
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, y), config))


# -- categorical features ------------------------------------------------------------------------

def make_categorical_frame(n=1200, seed=10):
    """Two numeric and two categorical columns: "many" (40 of its 45 categories present:
    more than max_onehot_cats, the sorted-partition search) and "few" (3 categories and
    missing values: one category against the rest)."""
    rng = np.random.default_rng(seed)
    many, few = rng.integers(0, 40, size=n), rng.integers(0, 3, size=n)
    x0, x1 = rng.normal(size=n), rng.normal(size=n)
    x1[rng.random(n) < 0.05] = np.nan
    signal = x0 - 0.5 * np.nan_to_num(x1) + 2 * np.sin(1.7 * many) + (few == 1) + 0.3 * rng.normal(size=n)
    few_values = pd.Series(np.array(["a", "b", "c"])[few]).mask(rng.random(n) < 0.05)
    frame = pd.DataFrame({"x0": x0, "many": pd.Categorical([f"c{v}" for v in many],
                                                           categories=[f"c{v}" for v in range(45)]),
                          "x1": x1, "few": pd.Categorical(few_values)})
    return frame, np.round(8 * signal) / 8


def assert_categorical_splits(model):
    """Both categorical features are split on, "many" with several categories on a side."""
    sets = {}
    for tree in model.forest.trees:
        for node in np.flatnonzero(np.asarray(tree.category_set) >= 0):
            sets.setdefault(int(tree.split_feature[node]), []).append(tree.category_set[node])
    assert set(sets) == {1, 3}
    many_left = [bin(int(w)).count("1") for t in model.forest.trees for w in t.cat_bitsets]
    assert max(many_left) > 1


@pytest.mark.parametrize("mode, n_workers, bin_edges", [
    ("i16", 2, "sample"), ("f64", 1, "sample"), pytest.param("i16", 1, "sample", marks=pytest.mark.slow),
    pytest.param("f64", 2, "sample", marks=pytest.mark.slow), pytest.param("i8", 4, "sample", marks=pytest.mark.slow),
    pytest.param("i16", 2, "sketch", marks=pytest.mark.slow)])
def test_categorical_frames_equal_single_machine_training(clients, mode, n_workers, bin_edges):
    # a Dask DataFrame with pandas category columns (known categories): the categories
    # are the dtype's, the bins and the categorical splits those of single-machine
    # training on the pandas frame, tree by tree (their category sets too) and bit for bit
    # (the sketch's numeric edges too: 1200 rows keep every summary exact)
    frame, y = make_categorical_frame()
    config = bst.GBDTConfig(n_estimators=3, max_depth=4, histogram_mode=mode)
    model = train(clients[n_workers], dd.from_pandas(frame, npartitions=4), dd.from_pandas(pd.Series(y), npartitions=4),
                  config, bin_edges=bin_edges)
    reference = bst.GBDTModel.train(bst.Dataset(frame, y), config)
    assert model.categorical_features == reference.categorical_features == [1, 3]
    assert all(np.array_equal(model.categories[f], reference.categories[f]) for f in (1, 3))
    assert_same_trees(model, reference)
    assert_categorical_splits(model)
    expected = reference.predict(frame)
    assert np.array_equal(model.predict(frame), expected)
    # predict on a Dask DataFrame: its category columns coded by value with the model's categories
    lazy = predict(model, dd.from_pandas(frame, npartitions=3))
    assert np.array_equal(clients[n_workers].compute(lazy).result(), expected)


@pytest.mark.parametrize("sampling", [dict(subsample=0.6, colsample_bynode=0.7),
                                      pytest.param(GOSS, marks=pytest.mark.slow)], ids=["subsample", "goss"])
def test_categorical_frames_with_row_sampling(clients, sampling):
    # the rows outside a round's sample follow each finished tree's categorical splits
    # too (their sets of bins going left): the model is single-machine training's
    frame, y = make_categorical_frame()
    config = bst.GBDTConfig(n_estimators=6, max_depth=4, histogram_mode="i16", **sampling)
    model = train(clients[2], dd.from_pandas(frame, npartitions=4), dd.from_pandas(pd.Series(y), npartitions=4),
                  config)
    reference = bst.GBDTModel.train(bst.Dataset(frame, y), config)
    assert_same_trees(model, reference)
    assert_categorical_splits(model)
    assert np.array_equal(model.predict(frame), reference.predict(frame))


@pytest.mark.parametrize("sampling", [dict(subsample=0.6, colsample_bytree=0.8),
                                      pytest.param(GOSS, marks=pytest.mark.slow)], ids=["subsample", "goss"])
def test_multiclass_with_row_sampling(clients, sampling):
    # one sample per round, shared by the round's trees (GOSS: scores summed over the
    # classes), as single-machine training
    X, y = make_data(seed=17)
    config = bst.GBDTConfig(n_estimators=4, max_depth=3, histogram_mode="i16", objective=bst.Objective.softmax(3),
                            **sampling)
    model = dask_train(clients[2], X, objective_labels("softmax", y), config)
    assert_same_trees(model, bst.GBDTModel.train(bst.Dataset(X, objective_labels("softmax", y)), config))


@pytest.mark.parametrize("growth", [LEAFWISE, pytest.param(DEPTHWISE, marks=pytest.mark.slow)])
def test_integer_codes_with_categorical_features(clients, growth):
    # a Dask array of integer codes, categorical_features naming the columns: the
    # single-machine model of Dataset(X, categorical_features=...); a code above every
    # code of the bin sample's rows still gets its bin (the bins count the largest code
    # over all rows, reduced over the partitions)
    frame, y = make_categorical_frame(seed=11)
    X = np.column_stack([frame["x0"], frame["many"].cat.codes, frame["x1"],
                         frame["few"].cat.codes.replace(-1, np.nan)]).astype(np.float64)
    config = bst.GBDTConfig(n_estimators=3, max_depth=4, n_leaves=10, growth_strategy=growth, histogram_mode="i16")
    model = train(clients[2], da.from_array(X, chunks=(CHUNKS, -1)), da.from_array(y, chunks=CHUNKS), config,
                  categorical_features=[1, 3])
    reference = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[1, 3]), config)
    assert model.categories == {1: None, 3: None}
    assert_same_trees(model, reference)
    assert_categorical_splits(model)
    assert np.array_equal(model.predict(X), reference.predict(X))


def test_categorical_recoveries_and_validation_frames(clients, monkeypatch):
    # lost workers in the middle of trees whose steps hold categorical splits: the states
    # rebuilt by replaying those splits give the undisturbed model, which is the
    # single-machine one (quantized); the validation frame is coded with the training's
    # categories by value (its own dtype lists them in another order)
    frame, y = make_categorical_frame(n=1600, seed=12)
    train_frame, val_frame = frame.iloc[:1200], frame.iloc[1200:].reset_index(drop=True)
    val_frame = val_frame.assign(many=val_frame["many"].cat.reorder_categories(
        val_frame["many"].cat.categories[::-1]))
    config = bst.GBDTConfig(n_estimators=3, max_depth=3, histogram_mode="i16")

    def run():
        stats = {}
        model = train(clients[2], dd.from_pandas(train_frame, npartitions=4),
                      dd.from_pandas(pd.Series(y[:1200]), npartitions=4), config,
                      val_set=(dd.from_pandas(val_frame, npartitions=2), dd.from_pandas(pd.Series(y[1200:]),
                                                                                        npartitions=2)), stats=stats, steps="tasks")
        return model, stats

    undisturbed, _ = run()
    reference = bst.GBDTModel.train(bst.Dataset(train_frame, y[:1200]), config,
                                    val_set=bst.Dataset(val_frame, y[1200:]))
    assert_same_trees(undisturbed, reference)
    assert_categorical_splits(undisturbed)
    # the scores are means summed per partition: equal to float64 rounding (~1e-16 per addition)
    np.testing.assert_allclose(undisturbed.eval_history, reference.eval_history, rtol=1e-12)
    # waits: tree 0 1-4 (lost at 3: again 4-7), validation 8, tree 1 9-12 (lost at 11: again 12-15)
    lose_a_worker_at(monkeypatch, {3, 11})
    model, stats = run()
    assert stats["recoveries"] == 2
    assert_same_trees(model, undisturbed)
    assert model.eval_history == undisturbed.eval_history


def test_categorical_input_errors(clients):
    frame, y = make_categorical_frame(n=200)
    labels = dd.from_pandas(pd.Series(y), npartitions=2)
    unknown = dd.from_pandas(frame, npartitions=2)
    unknown = unknown.assign(few=unknown["few"].cat.as_unknown())
    with pytest.raises(ValueError, match="X: the categories of column 'few' are unknown .*as_known"):
        train(clients[1], unknown, labels)
    with pytest.raises(ValueError, match="X: column 'few' has dtype .*numeric and pandas category columns"):
        train(clients[1], dd.from_pandas(frame.assign(few=frame["few"].astype(object)), npartitions=2), labels)
    codes = np.column_stack([frame["x0"], frame["many"].cat.codes + 0.5])
    with pytest.raises(ValueError, match=r"X: categorical feature 1: code \d+\.5 at row 0 .* partition starting at "
                                         r"row (0|100)\)"):
        train(clients[1], da.from_array(codes, chunks=(100, 2)), da.from_array(y, chunks=100),
              categorical_features=[1])
    with pytest.raises(ValueError, match="categorical_features: index 2 is outside"):
        train(clients[1], da.from_array(codes, chunks=(100, 2)), da.from_array(y, chunks=100),
              categorical_features=[2])


def test_a_categorical_split_row_sends_its_set_of_bins_left():
    # the step row of a categorical split: flag 1, then the words of the bins going left
    # (bit b: bin b, the missing bin 0 included), whatever its threshold bin says
    from boosters._testing.kernels import node_rows

    codes = np.array([0, 1, 2, 3, np.nan, 2, 1, 0, 3, np.nan])
    X = np.column_stack([codes, np.arange(10.0)])
    settings = tasks.Settings(np.arange(2, dtype=np.int32), 3, None)
    state = tasks.make_state(X, np.zeros(10), None, BinMapper(16, categorical_features=[0]).fit(X),
                             make_objective(bst.Objective.squared(), None), np.zeros(1), settings, 0)
    tasks.start_tree(state, 0, None, 0, True)
    counts = tasks.split_nodes(state, 0, np.array([[0, 0, 1, 0, 1, 2, 1, 0b1001]]))  # missing and code 2 left
    assert counts.tolist() == [[4], [6]]
    assert node_rows(state.partitioner, 1).tolist() == [2, 4, 5, 9]
    tasks.start_tree(state, 1, None, 0, False)
    with pytest.raises(ValueError, match="categorical split of feature 0: .* bitset must cover its 5 bins"):
        tasks.split_nodes(state, 1, np.array([[0, 0, 1, 0, 1, 2, 1]]))  # a flag and no words
