"""`boosters.dask.train` / `predict`: training on the partitions of Dask arrays, where
they are, on an existing dask.distributed cluster (no sockets of our own).

The bin edges come from the same seeded global row sample the single-machine binning
takes (the driver fetches those rows only); each partition is then binned once on a
worker and kept there with its labels and margins (`_partition_state.py`); the growth
engine on every worker grows the trees from histograms the workers sum among themselves
(`_engine.py`; or, with `steps`, the driver's engine from sums made by Dask tasks or
actor calls, `_driver.py`). The boosting loop, DART's choices and early stopping are the single-machine trainer's, run
over the partitions (`_backend.DaskBackend`).
"""

from __future__ import annotations

import warnings

import numpy as np

from boosters._lib.threads import effective_n_threads
from boosters.callbacks import record_evaluation
from boosters.config import GBDTConfig
from boosters.dask import _partition_state as tasks
from boosters.dask import _quantile_select as select
from boosters.dask import _validation
from boosters.dask._backend import DaskBackend
from boosters.dask._engine import WorkerEngines
from boosters.dask._driver import DaskTreeGrower, Partitions, first_rows, fixed_sum, gather, wait_for, worker_statuses
from boosters.dask._sketch_edges import check_bin_edges, sketch_bin_mapper
from boosters.data.validation import as_labels, as_vector
from boosters.data.binning import DEFAULT_BIN_SAMPLE, BinMapper, categorical_edges, stratified_sample
from boosters.data.target_statistics import unseen_code
from boosters.data.categories import categorical_indices, check_codes, feature_label, frame_codes, learn_codes, \
    learn_frame
from boosters.data.frames import as_frame
from boosters.gbdt_model import GBDTModel
from boosters.objectives.objective import CustomObjective
from boosters.objectives.registry import OBJECTIVES, make_objective, objective_fn, resolve_targets
from boosters.training.backend import resolve_histogram_mode
from boosters.training.callbacks import training_callbacks
from boosters.training.histograms._quantize import max_levels
from boosters.training.growth.grower import max_tree_nodes
from boosters.training._sampling import KINDS as SAMPLER_KINDS
from boosters.training._sampling import RowSampler
from boosters.training.sampling import make_row_sampler, sample_size
from boosters.training.scores import set_label
from boosters.training.trainer import GBDTTrainer, named_sets

def _dask_array():
    try:
        import dask.array as da
        import distributed  # noqa: F401  (the client's library, with its futures)
    except ImportError as error:  # pragma: no cover - the extra is installed in the test environment
        raise ImportError("boosters.dask needs dask and distributed: pip install 'boosters[dask]'") from error
    return da


def check_config(config: GBDTConfig) -> None:
    """ValueError naming the first parameter the distributed training does not support yet."""
    if not isinstance(config, GBDTConfig):
        raise TypeError(f"config must be a GBDTConfig, got {type(config).__name__}")
    if not objective_fn(config.objective).distributed:
        supported = ", ".join(fn.name for fn in OBJECTIVES if fn.distributed)
        raise ValueError(f"config.objective: boosters.dask supports {supported} "
                         f"for now, got {config.objective.name!r}")
    if isinstance(config.objective, CustomObjective) and config.objective.function is None:  # ("custom")
        raise ValueError("config.objective: this custom objective has no function (a loaded model's); pass "
                         "Objective.custom(function) to train")
    metrics = config.metric if isinstance(config.metric, tuple) else (config.metric,)
    if any(callable(metric) for metric in metrics):
        raise ValueError(f"config.metric: boosters.dask scores Metric objects (or the objective's default), not "
                         f"a callable, got {config.metric!r}")
    if config.random_strength != 0.0:  # the noise's scale needs the round's gradients summed over the machines
        raise ValueError(f"config.random_strength: boosters.dask does not add score noise yet, got "
                         f"random_strength={config.random_strength} (use 0, or train on one machine)")
    if config.goss_top_rate is not None and config.objective.needs_groups:  # as single-machine training
        raise ValueError("config.goss_top_rate: GOSS would split the query groups of a ranking objective")
    if config.cat_encoding == "ordered_ctr":  # its statistics need every training row in one place
        raise ValueError("config.cat_encoding: boosters.dask does not train with cat_encoding='ordered_ctr'; use "
                         "cat_encoding='splits', or train on one machine (its models predict here)")


def _frame_types() -> tuple:
    """dask.dataframe's DataFrame and Series, () without pandas (no frame can be given then)."""
    try:
        import dask.dataframe as dd
    except ImportError:
        return ()
    return dd.DataFrame, dd.Series


def as_arrays(X, y=None, weights=None, feature_names=None, categorical_features=None, categories=None,
              lengths: bool = True, unseen: float = np.nan):
    """Dask DataFrame / Series as Dask arrays, the feature names (None for an array) and
    the categorical features' categories (feature -> its values in code order, None for
    integer codes). `feature_names`: the columns to take, in that order.

    Training (`categories` None): the categorical features are `categorical_features`
    (as Dataset's: "auto", a frame's default, takes its pandas ``category`` columns;
    indices or names; a numeric column or an array's is taken as the codes) and each
    partition is coded as Dataset codes a frame: the categories of a ``category`` column
    are its dtype's, the same in every partition of a Dask DataFrame whose categories are
    known. Validation set, prediction: a frame's categorical columns are coded with the
    training's `categories` by value, as GBDTModel.predict codes a frame. `lengths`: the
    frame's partitions' row counts computed (training needs them; prediction does not);
    `unseen`: the code of a category value `categories` lacks (see `GBDTModel._codes`)."""
    frame_types = _frame_types()
    names, learn = None, categories is None
    if frame_types and isinstance(X, frame_types[0]):
        if feature_names is not None:
            X = X[list(feature_names)]
        names = [str(c) for c in X.columns]
        category_columns = [j for j, dtype in enumerate(X.dtypes) if str(dtype) == "category"]
        for column, dtype in X.dtypes.items():
            if dtype.kind not in "biuf" and str(dtype) != "category":
                raise ValueError(f"X: column {column!r} has dtype {dtype}; boosters.dask takes numeric and pandas "
                                 f"category columns (give other categorical values as a category column)")
        if categories is None:
            categorical = categorical_indices("auto" if categorical_features is None else categorical_features,
                                              len(names), names, category_columns)
            categories = _frame_categories(X, categorical, names)
        if categories or category_columns:  # coded partition by partition (frames of the partitions' class)
            meta = type(X._meta)(np.zeros((0, len(names))), columns=X.columns)
            X = X.map_partitions(_coded_partition, names, learn, categories, unseen, meta=meta)
        X = X.to_dask_array(lengths=True if lengths else None)
    elif categories is None:  # an array: integer codes, checked as its partitions are binned
        n_features = X.shape[1] if getattr(X, "ndim", 0) == 2 else 0
        categories = {f: None for f in categorical_indices(categorical_features, n_features, None, [])}
    y, weights = (v.to_dask_array(lengths=True) if frame_types and isinstance(v, frame_types[1]) else v
                  for v in (y, weights))
    return X, y, weights, names, categories


def _frame_categories(X, categorical: list, names: list) -> dict:
    """The categories of a Dask DataFrame's categorical features (see as_arrays): a
    ``category`` column's from its dtype (ValueError naming X when Dask does not know
    them), None for a numeric column (codes)."""
    from dask.dataframe.utils import has_known_categories

    categories: dict[int, np.ndarray | None] = {}
    for f in categorical:
        column = X.columns[f]
        dtype = X.dtypes.iloc[f]
        if dtype.kind in "biuf":
            categories[f] = None
        elif not has_known_categories(X[column]):
            raise ValueError(f"X: the categories of column {column!r} are unknown to Dask (they differ from one "
                             f"partition to the next); make them known first: X = X.categorize(columns="
                             f"[{column!r}]) or X[{column!r}].cat.as_known()")
        else:
            codes = np.zeros(0, dtype=np.int64)
            categories[f] = learn_codes(codes, np.asarray(dtype.categories.to_numpy()), True,
                                        feature_label(f, names))[1]
    return categories


def _coded_partition(frame, names: list, learn, categories: dict, unseen: float = np.nan):
    """A pandas partition as the float matrix of its features (a frame of them): with
    `learn`, as Dataset codes it (the categorical features' codes checked), else coded by
    value with `categories`."""
    if len(frame) == 0:
        matrix = np.zeros((0, frame.shape[1]))
    else:
        pandas_frame = as_frame(frame)
        assert pandas_frame is not None  # a pandas partition
        if learn:
            matrix = learn_frame(pandas_frame, sorted(categories), names)[0]
        else:
            matrix = frame_codes(pandas_frame, None, categories, names, unseen)
    return type(frame)(np.asarray(matrix, dtype=np.float64), columns=frame.columns, index=frame.index)


def _check_collections(da, X, y, weights, of: str = ""):
    """TypeError / ValueError naming the argument (`of`: "val_set " for the validation set's)."""
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise TypeError(f"{of}X must be a 2-D dask.array.Array, got {type(X).__name__}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{of}X must be numeric (bool, int or float); got dtype {X.dtype}")
    if np.isnan(X.shape[0]):
        raise ValueError(f"{of}X: the partitions' row counts must be known (call X.compute_chunk_sizes())")
    for name, values in (("y", y), ("weights", weights)):
        if values is None and name == "weights":
            continue
        multi_target = name == "y" and isinstance(values, da.Array) and values.ndim == 2
        if not multi_target and (not isinstance(values, da.Array) or values.ndim != 1):
            raise TypeError(f"{of}{name} must be a 1-D dask.array.Array, got {type(values).__name__}")
        if values.shape[0] != X.shape[0]:
            raise ValueError(f"{of}{name} has {values.shape[0]} rows but {of}X has {X.shape[0]}")


def train(client, X, y, config: GBDTConfig | None = None, weights=None, val_set=None,
          stats: dict | None = None, bin_edges: str = "sample", categorical_features=None,
          steps: str = "workers", qid=None, val_qid=None, evals_result: dict | None = None,
          n_threads: int = 1) -> GBDTModel:
    """Train a model on Dask arrays, data-parallel over their row partitions.

    Parameters
    ----------
    client : distributed.Client
        The cluster to run on.
    X : dask.array.Array or dask.dataframe.DataFrame
        (n_rows, n_features) features; NaN means missing. A DataFrame's columns must be
        numeric (bool, int or float) or pandas ``category`` with known categories (the
        categorical features, by default); they name the features.
    y : dask.array.Array or dask.dataframe.Series
        (n_rows,) labels; (n_rows, k) for multi-target regression (squared, huber,
        absolute: k tree groups).
    config : GBDTConfig, optional
        The training settings: every objective (squared, huber, poisson, gamma, tweedie,
        logistic, hinge, softmax, one_vs_rest: gradients per row, a start from sums over the
        rows; custom objectives, called on each partition's rows; lambdarank and pairwise,
        with `qid`; absolute and pinball, without weights, their start and leaves exact
        quantiles selected over the partitions), float64 or quantized histograms, either
        growth strategy, early stopping, column sampling, uniform row sampling and GOSS (not
        with a ranking objective), monotone and interaction constraints, multi-target
        regression (a 2-D y), DART, linear leaves, several metrics (each scored on every
        validation set). Refused (ValueError naming the parameter): GOSS with a ranking
        objective (as one machine), a callable metric.
    weights : dask.array.Array or dask.dataframe.Series, optional
        (n_rows,) row weights.
    val_set : (X_val, y_val), dict of str to (X_val, y_val), or list of (str, (X_val, y_val)), optional
        Validation sets of Dask collections as X and y, as `GBDTModel.train`'s `val_set`
        takes Datasets: one (X_val, y_val) tuple is named "valid"; a dict or a list of
        (name, (X_val, y_val)) pairs names several. Each is scored after every round
        with every metric of ``config.resolved_metrics`` (``model.eval_history``: the
        first metric on the last set; every score in a callback's ``env.evals_result``,
        ``{name: {metric_label: [per round]}}``); early stopping
        (``config.early_stopping_rounds``) watches the first metric on the last set that
        is not the training data itself (a pair of the very X and y objects given, as
        LightGBM's ``valid_sets=[train, ...]``: scored as the others, without weights).
        Each metric must be a mean over the rows of a per-row loss, or a ranking metric
        (ndcg, map: a mean over the queries, with `val_qid`); the objectives' defaults
        are; auc is not (ValueError naming config.metric).
    stats : dict, optional
        Filled with what the training cost in communication: ``round_trips`` (times the
        driver waited for the workers), ``driver_bytes`` (results the driver gathered)
        and ``partition_bytes`` (histograms the partitions' tasks produced: what the
        reduction moves between workers, at most), ``step_tasks`` (the Dask tasks, or actor
        calls, that the steps' sums submitted), ``recoveries`` (lost workers survived),
        ``partition_workers`` (the workers holding the partitions at the end: a recovery
        spreads them over the live workers),
        ``sample_bytes`` (sent to the partitions to draw their parts of the row samples)
        and ``sample_seconds`` (the driver's wait for the row samples' counts).
    bin_edges : {"sample", "sketch"}, default "sample"
        "sample": the single-machine training's edges, from its seeded row sample.
        "sketch": from a mergeable weighted quantile sketch of every row (the user guide page
        "Bin edges from a quantile sketch").
    qid : dask.array.Array or dask.dataframe.Series, optional
        (n_rows,) query ids, for the ranking objectives (lambdarank, pairwise; needed by
        them, unused by the others): each query's rows consecutive, and in one row
        partition of X (ValueError naming qid when a query is cut by a partition boundary
        or appears twice).
    val_qid : dask.array.Array, dask.dataframe.Series, list or dict of them, optional
        The validation rows' query ids, as `qid`: needed when a metric is a ranking one
        (ndcg, map; the ranking objectives' default), a mean over the queries. One for a
        single set; for several, a list of one per set (in `val_set`'s order, as XGBoost's
        ``eval_qid``) or a dict by set name.
    evals_result : dict, optional
        Filled with every round's scores, ``{set_name: {metric_label: [score per
        round]}}`` (`boosters.callbacks.record_evaluation`'s form; XGBoost's
        ``evals_result``), ``{}`` without a val_set.
    n_threads : int, default 1
        The threads of each partition's kernels (binning, gradients, histograms, row
        partitioning) on its worker: 1 by default (the workers' own threads run the
        partitions in parallel); 0 or -1: the worker's thread count (Dask's ``nthreads``,
        as XGBoost's and LightGBM's Dask training take it), -k that many but k - 1. The
        model does not depend on it.
    steps : {"workers", "actors", "tasks"}, default "workers"
        How each growth step reaches the partitions; the same model every way.
        "workers": the growth engine runs on every worker holding partitions, over the
        partitions it holds, and the workers sum each step's histograms among themselves,
        worker to worker in the same fixed order (no scheduler and no driver in a step; the
        driver makes one call per worker and tree). "actors": the driver runs the engine,
        and one Dask actor per worker runs each step on the partitions it holds; the
        driver sums every partition's result (round trips that skip the scheduler, a few
        milliseconds, at the cost of the driver receiving every worker's histograms).
        "tasks": the driver runs the engine, each step is one Dask task per partition,
        summed by a fixed tree of Dask tasks (the scheduler sees every step, about 20
        milliseconds a round trip on a small cluster). Each survives a lost worker.
    categorical_features : "auto", list of int or str, optional
        As Dataset's: the categorical features, by index or name; "auto" (the default for
        a DataFrame) takes its ``category`` columns. A numeric column or an array's
        column is taken as the integer codes themselves.

    Returns
    -------
    GBDTModel
        The model: the same trees for any number of workers (for a given partitioning of
        X), and the single-machine model's up to float64 rounding of the histogram sums.
        A worker lost during training is survived: the lost partitions are recomputed
        from their data, every partition is rebuilt from the finished trees and the
        current tree grows again, giving the undisturbed model (RuntimeError after
        _backend.MAX_RECOVERIES losses in a row).

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from boosters.dask import train
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = X[:, 0] - 2 * X[:, 1]
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
    ...                   dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     model = train(client, da.from_array(X, chunks=100), da.from_array(y, chunks=100),
    ...                   bst.GBDTConfig(n_estimators=5, max_depth=3))
    >>> model.n_trees
    5
    """
    da = _dask_array()
    config = GBDTConfig() if config is None else config
    check_config(config)
    effective_n_threads(n_threads)  # an int, not too many: a TypeError / ValueError naming n_threads
    if evals_result is not None and not isinstance(evals_result, dict):
        raise TypeError(f"evals_result must be a dict, got {type(evals_result).__name__}")
    check_bin_edges(bin_edges)
    if steps not in ("workers", "actors", "tasks"):
        raise ValueError(f"steps must be 'workers', 'actors' or 'tasks', got {steps!r}")
    if val_set is None and config.early_stopping_rounds is not None:
        raise ValueError("early_stopping_rounds needs a val_set to monitor")
    given = (X, y)  # a val_set that is these very objects is the training rows (never monitored)
    X, y, weights, feature_names, categories = as_arrays(X, y, weights, categorical_features=categorical_features)
    _check_collections(da, X, y, weights)
    if y.ndim == 2 and y.shape[1] == 1:  # one column: one label per row, as Dataset takes it
        y = y[:, 0]
    spec = resolve_targets(config.objective, np.broadcast_to(0.0, y.shape), None)  # y's shape only (no memory)
    if spec != config.objective:  # y's columns set the number of targets (tree groups), as on one machine
        config = config.replace(objective=spec)
    val_names, val_pairs, val_qids, training_sets = [], [], [], []
    if val_set is not None:
        for metric in config.resolved_metrics:
            _validation.check_metric(metric)
        for name, pair in named_sets(val_set, _is_val_pair, "(X_val, y_val) tuple"):
            where = set_label(name)
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise TypeError(f"{where} must be a tuple (X_val, y_val) of Dask collections, got {pair!r}")
            if pair[0] is given[0] and pair[1] is given[1]:
                training_sets.append(name)  # fit's own rows (LightGBM's valid_sets=[train]): never monitored
            X_val, y_val, _, _, _ = as_arrays(*pair, feature_names=feature_names, categories=categories)
            _check_collections(da, X_val, y_val, None, f"{where} ")
            resolve_targets(config.objective, np.broadcast_to(0.0, y.shape), np.broadcast_to(0.0, y_val.shape))
            if X_val.shape[1] != X.shape[1]:
                raise ValueError(f"{where} has {X_val.shape[1]} features but X has {X.shape[1]}")
            val_names.append(name)
            val_pairs.append((X_val, y_val))
        needs_groups = any(metric.needs_groups for metric in config.resolved_metrics)
        for name, (X_val, _), q in zip(val_names, val_pairs, _per_set(val_qid, val_names)):
            label = "val_qid" if name == "valid" else f"val_qid of {set_label(name)}"
            val_qids.append(_query_ids(da, q, X_val.shape[0], label, set_label(name)) if needs_groups else None)
    n_rows = int(X.shape[0])
    if n_rows == 0:
        raise ValueError("X has no rows")
    X = X.rechunk({1: -1})  # a partition holds whole rows
    y = _rows_as(y, X)
    weights = None if weights is None else weights.rechunk((X.chunks[0],))
    if objective_fn(config.objective).quantile_levels(config.objective) is not None and weights is not None:
        raise ValueError(f"weights: boosters.dask renews {config.objective.name}'s leaves to unweighted quantiles "
                         f"only for now; train without weights")
    if config.objective.needs_groups:
        qid = _query_ids(da, qid, X.shape[0]).rechunk((X.chunks[0],))
    else:
        qid = None
    X, y, weights, qid = _without_empty_partitions(da, X, y, weights, qid)
    q_blocks = [None] * X.numblocks[0] if qid is None else client.compute(list(qid.to_delayed()))
    query_sizes = None if qid is None else _query_sizes(client, q_blocks)
    objective = (make_objective(config.objective, None) if query_sizes is None  # (qid is None)
                 else _driver_ranking_objective(config.objective, query_sizes))

    x_blocks = client.compute(list(X.to_delayed().ravel()))
    w_blocks = [None] * len(x_blocks) if weights is None else client.compute(list(weights.to_delayed()))
    mapper = (sketch_bin_mapper(client, x_blocks, w_blocks, config) if bin_edges == "sketch"
              else _bin_mapper(client, x_blocks, w_blocks, X.chunks[0], config))
    if categories:
        mapper = _with_categories(mapper, gather(client, [
            client.submit(_category_codes, xb, sorted(categories), feature_names, first, pure=False)
            for xb, first in zip(x_blocks, first_rows(X.chunks[0]).tolist())]), sorted(categories))
    sampler = (make_row_sampler(config, n_rows, objective.n_outputs, 1) if query_sizes is None  # GOSS's holds n_rows
               else _query_sampler(config, query_sizes, objective.n_outputs))
    if config.bagging_temperature is not None:  # no sample: the partitions weigh their rows (Settings.bootstrap)
        sampler = None
    states, base = _partition_states(client, x_blocks, y, w_blocks, q_blocks, mapper, objective, config,
                                     X.chunks[0], sampler, query_sizes, n_threads)
    del x_blocks, w_blocks  # binned: the raw blocks can go (Dask keeps their recipe, to rebuild a lost state)
    partitions = Partitions(client, states, actors=steps == "actors")
    _warn_if_crowded(client, partitions.workers)
    grower_class = WorkerEngines if steps == "workers" else DaskTreeGrower
    grower = grower_class(partitions, mapper, config, n_rows, _quantizer(config, n_rows), feature_names)
    grower.sample_rows(sampler, X.chunks[0], query_sizes)
    validation = None if val_set is None else _validation_partitions(client, val_names, val_pairs, val_qids, base,
                                                                      objective, steps != "tasks")
    backend = DaskBackend(config, grower, base, int(X.shape[1]), feature_names, categories, validation, val_names,
                          training_sets)
    try:
        recorded = None if evals_result is None else [record_evaluation(evals_result)]
        result = GBDTTrainer(config).run(backend, training_callbacks(config, recorded))  # none reads env.model
    finally:
        grower.close()
    result.forest.flat(grown=True)
    if stats is not None:
        stats.update(backend.stats())
    return GBDTModel(result)


def _warn_if_crowded(client, holders: list) -> None:
    """A UserWarning when the partitions sit on fewer workers than they could: each worker
    trains on the partitions it holds, so the others would idle (Dask can put every block of
    a generated or persisted array on one worker)."""
    statuses = worker_statuses(client)
    used = len(set(holders))
    if used < min(len(holders), len(statuses)):
        paused = sorted(w for w, status in statuses.items() if status == "paused")
        why = (f" (worker(s) {', '.join(paused)} are paused by Dask's memory monitor: their memory is above "
               f"distributed.worker.memory.pause, they run no task)" if paused else "")
        warnings.warn(f"boosters.dask: the {len(holders)} partitions are held by {used} of the {len(statuses)} "
                      f"workers, which train alone{why}; spread them first (client.rebalance, or persist the "
                      f"data on more workers)", UserWarning, stacklevel=3)


def _is_val_pair(val_set) -> bool:
    """One validation set given alone: an (X_val, y_val) tuple (not a (name, set) pair)."""
    return isinstance(val_set, tuple) and len(val_set) == 2 and not isinstance(val_set[0], (str, tuple))


def _per_set(val_qid, names: list) -> list:
    """val_qid per validation set: one collection (a single set), a list or tuple of one
    per set (in val_set's order), or a dict by set name."""
    if val_qid is None:
        return [None] * len(names)
    if isinstance(val_qid, dict):
        unknown = sorted(set(val_qid) - set(names))
        if unknown:
            raise ValueError(f"val_qid: no validation set is named {unknown[0]!r} (the sets: {names})")
        return [val_qid.get(name) for name in names]
    if isinstance(val_qid, (list, tuple)):
        if len(val_qid) != len(names):
            raise ValueError(f"val_qid: give one per validation set ({len(names)}), got {len(val_qid)}")
        return list(val_qid)
    if len(names) != 1:
        raise ValueError(f"val_qid: give a list (or a dict by name) of one per validation set ({len(names)})")
    return [val_qid]


def _validation_partitions(client, names: list, pairs: list, qids: list, base, objective,
                           actors: bool) -> Partitions:
    """Every validation set's partitions on the workers (_validation.ValidationState each:
    rows, labels, margins from the base scores, the set's index in `names`), scored after
    each round (DaskBackend): one Partitions of them all, so that a round is scored in one
    round trip and a lost worker's are all rebuilt."""
    da, states = _dask_array(), []
    for set_index, (name, (X_val, y_val), qid) in enumerate(zip(names, pairs, qids)):
        where = set_label(name)
        if X_val.shape[0] == 0:
            raise ValueError(f"{where} X has no rows")
        X_val = X_val.rechunk({1: -1})
        y_val = _rows_as(y_val, X_val)
        qid = None if qid is None else qid.rechunk((X_val.chunks[0],))
        X_val, y_val, qid = _without_empty_partitions(da, X_val, y_val, qid)
        x_blocks = client.compute(list(X_val.to_delayed().ravel()))
        y_blocks = client.compute(list(y_val.to_delayed().ravel()))
        q_blocks = [None] * len(x_blocks) if qid is None else client.compute(list(qid.to_delayed()))
        if qid is not None:  # its queries each in one partition
            _query_sizes(client, q_blocks, "val_qid" if name == "valid" else f"val_qid of {where}")
        states += [client.submit(_validation.make_validation_state, xb, yb, objective, base, qb, first, set_index,
                                 where, pure=False)
                   for xb, yb, qb, first in zip(x_blocks, y_blocks, q_blocks, first_rows(X_val.chunks[0]).tolist())]
    wait_for(states)
    return Partitions(client, states, actors)


def _without_empty_partitions(da, X, *others):
    """X and the collections partitioned as X (None: absent) without their empty row
    partitions (a filter may leave some): they hold no rows to bin or to train on, and
    leaving them out moves no row."""
    kept = [i for i, n in enumerate(X.chunks[0]) if n > 0]
    if len(kept) == len(X.chunks[0]):
        return (X, *others)
    return tuple(None if c is None else da.concatenate([c.blocks[i] for i in kept]) for c in (X, *others))


def _rows_as(y, X):
    """y partitioned as X's rows (a 2-D y: all its targets in each partition)."""
    return y.rechunk((X.chunks[0],) + tuple((n,) for n in y.shape[1:]))


def _query_ids(da, qid, n_rows: int, name: str = "qid", of: str = "val_set"):
    """Query ids (`name`: qid, or val_qid for the validation set `of`'s) as a 1-D Dask array of n_rows."""
    if qid is None:
        raise ValueError(f"{name}: ranking needs the rows' query ids ({name.split()[0]}=, a Dask array or Series)")
    frames = _frame_types()
    if frames and isinstance(qid, frames[1]):
        qid = qid.to_dask_array(lengths=True)
    if not isinstance(qid, da.Array) or qid.ndim != 1:
        raise TypeError(f"{name} must be a 1-D dask.array.Array or dask.dataframe.Series, got {type(qid).__name__}")
    if qid.shape[0] != n_rows:
        raise ValueError(f"{name} has {qid.shape[0]} rows but {'X' if name == 'qid' else of + ' X'} has {n_rows}")
    if qid.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {qid.dtype}")
    return qid


def _query_sizes(client, q_blocks: list, name: str = "qid") -> list:
    """Per partition, its queries' sizes (rows), after checking that every query's rows
    are consecutive and in one partition (each partition checks its own, the driver that
    no query id appears in two partitions)."""
    runs = gather(client, [client.submit(tasks.query_runs, qb, name, pure=False) for qb in q_blocks])
    ids = np.concatenate([r[0] for r in runs])
    unique, counts = np.unique(ids, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"{name}: query {unique[np.argmax(counts > 1)].item()!r} has rows in more than one "
                         f"partition (each query's rows must be consecutive and in one partition: rechunk so "
                         f"that no partition boundary cuts a query)")
    return [r[1] for r in runs]


def _driver_ranking_objective(spec, query_sizes: list):
    """The ranking objective the driver checks the labels' scale and takes the start with:
    its gradients' bound reads the largest query only, so it gets one query of that size."""
    return make_objective(spec, np.array([0, max(int(s.max()) for s in query_sizes)], dtype=np.int64))


def _query_sampler(config: GBDTConfig, query_sizes: list, n_outputs: int):
    """Ranking with `subsample`: the single-machine sampler of whole queries as a uniform
    draw over the query indices (the same draws), None when every query is taken."""
    n_queries = sum(len(s) for s in query_sizes)
    n_sample = sample_size(config.subsample, n_queries)
    return None if n_sample is None else RowSampler("uniform", n_queries, n_outputs, config.seed, 1, n_sample=n_sample)


def _partition_states(client, x_blocks, y, w_blocks, q_blocks, mapper, objective, config: GBDTConfig,
                      chunks: tuple, sampler, query_sizes=None, n_threads: int = 1) -> tuple[list, np.ndarray]:
    """Every row partition (x_blocks, w_blocks, q_blocks: futures, the last two None when
    absent; `chunks`: their row counts)
    binned and kept on a worker (futures of PartitionState, waited for, never fetched),
    after its labels and weights are checked; and the base scores. `sampler`: the
    training's row sampler (None: every row), whose kind the partitions draw by; over the
    queries (of `query_sizes`, per partition) when they are given. `n_threads`: the
    partitions' kernels' threads (Settings.n_threads)."""
    y_blocks = client.compute(list(y.to_delayed().ravel()))
    sums = [client.submit(_checked_label_sums, objective, yb, wb, pure=False) for yb, wb in zip(y_blocks, w_blocks)]
    sums, extremes = gather(client, fixed_sum(client, sums, tasks.combine_label_sums))
    if not sums[-1] > 0:
        raise ValueError("weights must not all be zero")
    # the labels' range and the largest weight: all the objective's float32 check reads
    objective.check_scale(np.array([-extremes[0], extremes[1]]), None if w_blocks[0] is None else extremes[2:])
    n_rows = int(sum(chunks))
    base = (_label_quantiles(client, y_blocks, objective.levels, n_rows)
            if objective.levels is not None else tasks.base_scores(objective, sums))
    row_sample = None
    if sampler is not None:
        row_sample = (("goss", config.seed, sampler.weight) if sampler.kind == SAMPLER_KINDS["goss"] else
                      ("uniform", n_rows, sampler.n_sample, config.seed) if query_sizes is None else
                      ("queries", sampler.n_rows, sampler.n_sample, config.seed))
    settings = tasks.Settings(np.flatnonzero(mapper.is_usable).astype(np.int32),
                              max_tree_nodes(config, n_rows), _quantizer(config, n_rows),
                              config.histogram_layout, config.prefetch, row_sample=row_sample,
                              raw_rows=config.booster == "dart" or config.linear_leaves, n_threads=n_threads,
                              bootstrap=(None if config.bagging_temperature is None
                                         else (config.seed, config.bagging_temperature)))
    first_queries = [0] * len(chunks) if query_sizes is None else first_rows([len(s) for s in query_sizes]).tolist()
    states = [client.submit(tasks.make_state, xb, yb, wb, mapper, objective, base, settings, first, qb, fq,
                            pure=False)
              for xb, yb, wb, qb, first, fq in zip(x_blocks, y_blocks, w_blocks, q_blocks, first_rows(chunks).tolist(),
                                                   first_queries)]
    wait_for(states)
    return states, base


def _label_quantiles(client, y_blocks: list, alphas, n_rows: int) -> np.ndarray:
    """Absolute and pinball's start: the labels' quantile at each level, selected exactly
    over the partitions (the single-machine init_scores, without weights)."""
    groups = len(alphas)

    def summed(function, *args, op=tasks.add):
        parts = [client.submit(function, yb, *args, pure=False) for yb in y_blocks]
        return gather(client, fixed_sum(client, parts, op))

    counts = summed(select.label_digits, groups, [0] * groups, 64, select.SHIFTS[0])
    quantiles = select.select_quantiles(
        counts, lambda prefixes, low, shift: summed(select.label_digits, groups, prefixes, low, shift),
        lambda keys: summed(select.label_min_above, keys, op=select.min_of), [n_rows] * groups, list(alphas))
    return np.array(quantiles)


def _quantizer(config: GBDTConfig, n_rows: int):
    """(bits, levels, seed) of the quantized histograms the single-machine training would
    use on these rows ("auto": by the row count), None for float64."""
    mode = resolve_histogram_mode(config, n_rows)
    if mode == "f64":
        return None
    bits = 16 if mode == "i16" else 8
    return bits, max_levels(n_rows, bits, config.quantization_levels), config.seed


def _checked_label_sums(objective, y, weights):
    """A partition's labels and weights checked as Dataset checks them; their sums and
    extremes (tasks.label_sums)."""
    y = as_labels(y, len(y), "y")
    objective.check_labels(y)
    if weights is not None:
        weights = as_vector(weights, len(y), "weights")
        if np.any(weights < 0):
            raise ValueError("weights must be >= 0")
    return tasks.label_sums(objective, y, weights)


def _bin_mapper(client, x_blocks, w_blocks, chunks: tuple, config: GBDTConfig) -> BinMapper:
    """The bin edges of the single-machine training: from the same seeded row sample
    (every row up to DEFAULT_BIN_SAMPLE rows), each partition's sampled rows taken where
    it is and fetched to the driver."""
    n_rows = int(sum(chunks))
    rows = stratified_sample(n_rows, DEFAULT_BIN_SAMPLE, config.seed) if n_rows > DEFAULT_BIN_SAMPLE else None
    starts = np.concatenate([[0], np.cumsum(chunks)])
    taken = []
    for i, (xb, wb) in enumerate(zip(x_blocks, w_blocks)):
        local = None if rows is None else rows[(rows >= starts[i]) & (rows < starts[i + 1])] - starts[i]
        taken.append(client.submit(_take_rows, xb, wb, local, pure=False))
    parts = gather(client, taken)  # in row order: the sample's rows are increasing
    sample = np.concatenate([x for x, _ in parts])
    sample_weights = None if w_blocks[0] is None else np.concatenate([w for _, w in parts])
    return BinMapper(config.max_bins, seed=config.seed).fit(sample, sample_weights)


def _category_codes(X, categorical: list, names, first_row: int) -> list:
    """A partition's categorical features' codes, checked as Dataset checks them, and
    summed up for categorical_edges: the largest code, and a NaN for missing values."""
    X = np.asarray(X)
    summaries = []
    for f in categorical:
        codes = X[:, f].astype(np.float64)
        try:
            check_codes(codes, feature_label(f, names))
        except ValueError as error:  # its row is the partition's
            raise ValueError(f"X: {error} (row of the partition starting at row {first_row})") from None
        present = codes[~np.isnan(codes)]
        summaries.append(np.array(([present.max()] if present.size else []) +
                                  ([np.nan] if present.size < codes.size else []), dtype=np.float64))
    return summaries


def _with_categories(mapper: BinMapper, summaries: list, categorical: list) -> BinMapper:
    """The mapper with the `categorical` features binned as BinMapper.fit bins them (code
    c -> bin c + 1, as many bins as the largest code over all rows asks), from the
    partitions' summaries (_category_codes)."""
    mapper.categorical_features = tuple(categorical)
    mapper.is_categorical = np.zeros(mapper.n_features, dtype=bool)
    for i, f in enumerate(categorical):
        mapper.set_categorical(f, *categorical_edges(np.concatenate([s[i] for s in summaries]), f))
    return mapper


def _take_rows(X, weights, rows):
    """The rows (None: all) of a partition and of its weights."""
    X = np.asarray(X)
    if rows is None:
        return X, weights
    return X[rows], None if weights is None else np.asarray(weights)[rows]


def predict(model: GBDTModel, X, raw: bool = False):
    """The model's predictions of a Dask array, partition by partition.

    Parameters
    ----------
    model : GBDTModel
        Any boosters model.
    X : dask.array.Array or dask.dataframe.DataFrame
        (n_rows, n_features) features (a DataFrame's columns are taken by the model's
        feature names when it has them; its categorical columns are coded with the
        model's categories by value, as GBDTModel.predict codes a frame).
    raw : bool, default False
        Margins (``predict_raw``) instead of predictions.

    Returns
    -------
    dask.array.Array
        (n_rows,) for a single output, else (n_rows, n_outputs); lazy, one task per
        row partition.

    Examples
    --------
    >>> import dask.array as da
    >>> from boosters.dask import predict
    >>> X = np.random.default_rng(0).normal(size=(300, 2))
    >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=3))
    >>> lazy = predict(model, da.from_array(X, chunks=100))
    >>> np.array_equal(lazy.compute(scheduler="sync"), model.predict(X))
    True
    """
    da = _dask_array()
    if not isinstance(model, GBDTModel):
        raise TypeError(f"model must be a GBDTModel, got {type(model).__name__}")
    X = as_arrays(X, feature_names=model.feature_names, categories=model.categories,
                  unseen=unseen_code(model.ensemble))[0]
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise TypeError(f"X must be a 2-D dask.array.Array, got {type(X).__name__}")
    X = X.rechunk({1: -1})
    method = model.predict_raw if raw else model.predict
    n_outputs = model.forest.n_groups
    if n_outputs == 1:
        return X.map_blocks(lambda block: method(block, n_threads=1), drop_axis=1, dtype=np.float64)
    return X.map_blocks(lambda block: method(block, n_threads=1), chunks=(X.chunks[0], (n_outputs,)),
                        dtype=np.float64)
