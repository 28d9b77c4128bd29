"""The boosting loop (RFC-0008): gradients -> tree -> margins, evaluation, callbacks (early
stopping, logging, progress), Ctrl-C; the one loop of every training, run over a backend
(`backend.py`: one machine, or boosters.dask's partitions) that grows the rounds' trees."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from boosters._lib.checks import require_float
from boosters._lib.logs import info_visible, logger
from boosters._lib.threads import effective_n_threads
from boosters.config import GBDTConfig, Metric
from boosters.data.dataset import Dataset
from boosters.data.target_statistics import UNSEEN_CODE
from boosters.model.ensemble import Ensemble
from boosters.model.forest import Forest, check_finite_tree
from boosters.objectives.registry import resolve_targets
from boosters.training.backend import LocalBackend
from boosters.training.callbacks import (CallbackEnv, EarlyStopping, call_hook, check_best_iteration, reads_scores,
                                        training_callbacks)
from boosters.training.dart import DartDropout
from boosters.training.interrupt import InterruptGuard
from boosters.training.linear_leaves import check_linear_training
from boosters.training.ordered_statistics import ordered_statistics
from boosters.training.scores import RoundScores, set_label
from boosters.training.split.constraints import interaction_groups, monotone_directions


@dataclass(eq=False)
class TrainingResult(Ensemble):
    """What a training run produced: the ensemble a GBDTModel holds, and how the run went."""

    n_evictions: int = 0    # histograms evicted from the pool and rebuilt
    seconds: float = 0.0
    kernel_timings: dict = field(default_factory=dict)  # tree growth phase -> (seconds, calls)


def check_groups(config, train, evals: list, train_scored: bool) -> None:
    """The datasets have the query groups that the objective and metric need, before the
    first round; GOSS would split queries, so it is refused with a ranking objective
    (subsample draws whole queries). `evals`: the validation sets, (name, Dataset) each;
    `train_scored`: the training rows are scored each round (no val_set, and callbacks
    that read the scores), so a ranking metric needs the training set's groups."""
    objective = config.objective
    if objective.needs_groups and train.group_boundaries is None:
        raise ValueError(f"train: {objective!r} needs query groups: pass group= (sizes) or qid= (per-row query "
                         f"ids) to Dataset")
    scored = [(set_label(name), dataset) for name, dataset in evals] or ([("train", train)] if train_scored else [])
    for metric in config.resolved_metrics:
        if not isinstance(metric, Metric) or not metric.needs_groups:
            continue
        for where, dataset in scored:
            if dataset.group_boundaries is None:
                raise ValueError(f"{where}: metric {metric.label} scores query groups: pass group= or qid= to its "
                                 f"Dataset")
    if objective.needs_groups and config.goss_top_rate is not None:
        raise ValueError(f"goss_top_rate / goss_other_rate: GOSS picks rows by gradient and would split the query "
                         f"groups that {objective!r} ranks; use subsample (it draws whole queries)")


def named_sets(val_set, is_set=None, kind: str = "Dataset") -> list[tuple[str, object]]:
    """The validation sets as (name, set) pairs, in order: one set is ("valid", it); a
    dict maps names to sets; a list holds (name, set) pairs. A set is a Dataset, or what
    `is_set` says is one (boosters.dask's (X_val, y_val) tuples; `kind` names it in errors)."""
    if val_set is None:
        return []
    if isinstance(val_set, Dataset) if is_set is None else is_set(val_set):
        return [("valid", val_set)]
    pairs = list(val_set.items()) if isinstance(val_set, dict) else val_set
    if not isinstance(pairs, (list, tuple)) or not pairs or not all(
            isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and p[0] for p in pairs):
        one = "a boosters.Dataset" if kind == "Dataset" else f"a {kind}"
        raise TypeError(f"val_set must be {one}, a dict of name -> {kind} or a list of "
                        f"(name, {kind}) pairs, got {val_set!r}")
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError(f"val_set: each validation set needs its own name, got {names}")
    return list(pairs)


class GBDTTrainer:
    def __init__(self, config: GBDTConfig, n_threads: int = 0):
        self.config = config
        self.n_threads = effective_n_threads(n_threads)

    def train(self, train: Dataset, val_set=None, callbacks=None, as_model=None) -> TrainingResult:
        """Boost `config.n_estimators` rounds (fewer when a callback, early stopping or
        Ctrl-C stops it). `val_set`: a Dataset, or several named ones (see `named_sets`;
        the training Dataset itself among them is scored on its margins), scored every
        round; early stopping watches the last. `callbacks`: see `boosters.callbacks`;
        `as_model` wraps the result into what they see as `env.model` (GBDTModel.train
        passes GBDTModel)."""
        start = time.perf_counter()
        evals = self._check_inputs(train, named_sets(val_set))
        cfg = self.config
        for val in [dataset for _, dataset, X in evals if X is not None] or [None]:
            objective_spec = resolve_targets(cfg.objective, train.y, None if val is None else val.y)
        if objective_spec != cfg.objective:  # y's columns set the number of targets (tree groups)
            cfg = cfg.replace(objective=objective_spec)
        callbacks = training_callbacks(cfg, callbacks)
        # the training rows are scored every round only for callbacks that read the scores
        train_scored = not evals and any(reads_scores(c) for c in callbacks)
        check_groups(cfg, train, [(name, dataset) for name, dataset, _ in evals], train_scored)
        train, evals, statistics = ordered_statistics(cfg, train, evals)
        backend = LocalBackend(cfg, train, evals, train_scored, self.n_threads)
        if statistics:  # the model reads raw categories: codes, then their statistics
            backend.categories, backend.target_statistics = statistics
        result = self.run(backend, callbacks, as_model)
        result.seconds = time.perf_counter() - start
        return result

    def run(self, backend, callbacks: list, as_model=None) -> TrainingResult:
        """The boosting loop over `backend` (see backend.py), with `callbacks` as
        `training_callbacks` makes them; `as_model` as in `train`."""
        cfg = backend.config
        result = TrainingResult(Forest(backend.n_outputs, backend.base_scores), cfg.objective, backend.n_features,
                                backend.feature_names, cfg, categories=dict(backend.categories),
                                target_statistics=dict(getattr(backend, "target_statistics", {})))
        scores = RoundScores(cfg, backend, result.eval_history, any(isinstance(c, EarlyStopping) for c in callbacks))
        dropout = None if cfg.booster != "dart" else DartDropout(cfg, backend.n_outputs)
        env = CallbackEnv(result if as_model is None else as_model(result), cfg, cfg.n_estimators,
                          evals_result=scores.evals_result, learning_rate=cfg.learning_rate,
                          higher_is_better=scores.higher_is_better, monitored=scores.monitored)
        with info_visible() if cfg.verbosity >= 1 else nullcontext(), InterruptGuard() as interrupt:
            try:
                call_hook(callbacks, "before_training", env)
                self._boost(backend, result, env, callbacks, scores, interrupt, dropout)
                self._finish(result, env, interrupt.requested, dropout)
            except BaseException as error:
                env.error = error
                raise
            finally:
                call_hook(callbacks, "after_training", env)
        backend.finish(result)
        return result

    @staticmethod
    def _boost(backend, result: TrainingResult, env: CallbackEnv, callbacks: list, scores: RoundScores,
               interrupt: InterruptGuard, dropout: DartDropout | None = None) -> None:
        """The rounds. With callbacks, DART (`dropout`) or a backend that needs it (a
        validation set, a custom objective's gradients, a distributed training), one at a
        time, each evaluated; else many grow in one nogil block (see grower.py). Ctrl-C is
        seen between rounds (between blocks in the fast path). Every tree is checked as it
        comes: a diverging run stops with an error naming its round, not with a model of NaN."""
        one_at_a_time = bool(callbacks) or dropout is not None or backend.one_round_at_a_time
        round_ = 0
        while round_ < env.n_rounds and not interrupt.requested:
            env.round = round_
            stop = call_hook(callbacks, "before_iteration", env)
            check_best_iteration(env, round_)
            if stop:
                break
            # a callback may have changed it; with DART the round's new trees grow at a smaller rate
            learning_rate = require_float("env.learning_rate", env.learning_rate, 0.0, strictly_above=True)
            learning_rate, dart = (learning_rate, None) if dropout is None else \
                dropout.choose_round(result.forest, learning_rate)
            block = backend.grow_rounds(round_, 1 if one_at_a_time else env.n_rounds - round_, learning_rate, dart)
            for r, trees in enumerate(block):
                for tree in trees:
                    check_finite_tree(tree, round_ + r, env.config)
            if dropout is not None:
                dropout.rescale(result.forest, block[0])
            for trees in block:
                for k, tree in enumerate(trees):
                    result.forest.add(tree, k)
            round_ += len(block)
            if one_at_a_time:
                scores.add(env.round, block[0], dart)
                # what env.model reports while training: the best round so far, or the last
                result.best_iteration = env.round if env.best_iteration is None else env.best_iteration
                result.best_score = (env.best_score if env.best_iteration is not None
                                     else result.eval_history[-1] if result.eval_history else None)
                stop = call_hook(callbacks, "after_iteration", env)
                check_best_iteration(env, round_)
                if dropout is not None:
                    dropout.remember(env.round, env.best_iteration)
                if stop:
                    break

    @staticmethod
    def _finish(result: TrainingResult, env: CallbackEnv, interrupted: bool,
                dropout: DartDropout | None = None) -> None:
        """Cut the forest back to the best round when early stopping chose one (with DART,
        its trees scaled as they were then); the best iteration and score of the model."""
        forest, n_out = result.forest, result.forest.n_groups
        n_rounds = forest.n_trees // n_out
        check_best_iteration(env, n_rounds)
        if env.best_iteration is not None:
            if dropout is not None:
                dropout.restore_best(forest, env.best_iteration)
            forest.truncate((env.best_iteration + 1) * n_out)
            result.best_iteration, result.best_score = env.best_iteration, env.best_score
        else:
            result.best_iteration = n_rounds - 1 if n_rounds else None
            result.best_score = result.eval_history[-1] if result.eval_history else None
        if interrupted:
            kept = "" if env.best_iteration is None else f", cut back to the best round {env.best_iteration + 1}"
            logger.warning("training interrupted (Ctrl-C): the model keeps the %d completed rounds%s",
                           n_rounds, kept)

    def _check_inputs(self, train: Dataset, evals: list) -> list[tuple]:
        """TypeError / ValueError naming what is wrong, before any work; the validation
        sets (`evals`: (name, Dataset) each) with their rows as the model reads them: the
        features matched to the training's by name, categories by value, as at prediction
        (None for the training Dataset itself)."""
        if not isinstance(train, Dataset):
            raise TypeError(f"train must be a boosters.Dataset, got {type(train).__name__}")
        if not train.has_labels:
            raise ValueError("train has no labels: pass y to Dataset(X, y)")
        for name, dataset in evals:
            if not isinstance(dataset, Dataset):
                raise TypeError(f"{set_label(name)} must be a boosters.Dataset or None, got {type(dataset).__name__}")
            if not dataset.has_labels:
                raise ValueError(f"{set_label(name)} has no labels: pass y to Dataset(X, y)")
        if not evals and self.config.early_stopping_rounds is not None:
            raise ValueError("early_stopping_rounds needs a val_set to monitor")
        check_linear_training(train, self.config)
        # feature names and indices of the constraints match the data (before binning it)
        monotone_directions(self.config, train.n_features, train.feature_names)
        interaction_groups(self.config, train.n_features, train.feature_names)
        # ordered CTRs give a category not seen in training the prior: tell it apart from missing
        unseen = UNSEEN_CODE if self.config.cat_encoding == "ordered_ctr" else np.nan
        return [(name, dataset, None if dataset is train else
                 dataset.features_for(train.n_features, train.feature_names, train.categories, set_label(name),
                                      unseen))
                for name, dataset in evals]
