"""The boosting loop (RFC-0008): gradients -> tree -> margins, evaluation, callbacks (early
stopping, logging, progress), Ctrl-C."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from boosters._lib.checks import require_float
from boosters._lib.logs import info_visible, logger
from boosters._lib.threads import effective_n_threads
from boosters.config import GBDTConfig
from boosters.data.dataset import Dataset
from boosters.data.validation import init_score_columns
from boosters.model.ensemble import Ensemble
from boosters.model.forest import Forest, check_finite_tree
from boosters.training.callbacks import (CallbackEnv, EarlyStopping, call_hook, check_best_iteration, reads_scores,
                                        training_callbacks)
from boosters.training.dart import DartDropout
from boosters.training.growth.grower import TreeGrower
from boosters.training.interrupt import InterruptGuard
from boosters.training.linear_leaves import LinearLeafFitter, check_linear_training
from boosters.training.metrics import check_groups
from boosters.training.objectives import CustomObjectiveFunction, make_objective
from boosters.training.scores import RoundScores
from boosters.training.split.constraints import interaction_groups, monotone_directions
from boosters.training.targets import resolve_targets

AUTO_QUANTIZE_MIN_ROWS = 100_000  # measured crossover (docs/benchmarks/end_to_end.md); RFC-0016 DD-3


def resolve_histogram_mode(config: GBDTConfig, n_rows: int) -> str:
    """"auto": full precision for small data, 16-bit quantized histograms otherwise."""
    if config.histogram_mode != "auto":
        return config.histogram_mode
    return "f64" if n_rows < AUTO_QUANTIZE_MIN_ROWS else "i16"


@dataclass(eq=False)
class TrainingResult(Ensemble):
    """What a training run produced: the ensemble a GBDTModel holds, and how the run went."""

    n_evictions: int = 0    # histograms evicted from the pool and rebuilt
    seconds: float = 0.0
    kernel_timings: dict = field(default_factory=dict)  # tree growth phase -> (seconds, calls)


def start_margins(objective, train: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The forest's base scores and the training margins (n_outputs, n_rows) it boosts
    from: the objective's constant start, or with `train.init_score` that alone (base 0:
    the start is not added, as LightGBM's boost_from_average and XGBoost's base_score
    are not with an init_score / base_margin)."""
    if train.init_score is None:
        base = objective.init_scores(train.y, train.weights)
        return base, np.repeat(base[:, None], train.n_rows, axis=1)
    columns = init_score_columns(train.init_score, objective.n_outputs, "train: init_score")
    return np.zeros(objective.n_outputs), np.array(columns.T, order="C")  # a copy: the rounds update it


class GBDTTrainer:
    def __init__(self, config: GBDTConfig, n_threads: int = 0):
        self.config = config
        self.n_threads = effective_n_threads(n_threads)

    def train(self, train: Dataset, val_set: Dataset | None = None, callbacks=None,
              as_model=None) -> TrainingResult:
        """Boost `config.n_estimators` rounds (fewer when a callback, early stopping or
        Ctrl-C stops it). `callbacks`: see `boosters.callbacks`; `as_model` wraps the
        result into what they see as `env.model` (GBDTModel.train passes GBDTModel)."""
        start = time.perf_counter()
        val_X = self._check_inputs(train, val_set)
        cfg = self.config
        objective_spec = resolve_targets(cfg.objective, train.y, None if val_set is None else val_set.y)
        if objective_spec != cfg.objective:  # y's columns set the number of targets (tree groups)
            cfg = cfg.replace(objective=objective_spec)
        callbacks = training_callbacks(cfg, callbacks)
        # the training rows are scored every round only for callbacks that read the scores
        train_scored = val_set is None and any(reads_scores(c) for c in callbacks)
        check_groups(cfg, train, val_set, train_scored)
        objective = make_objective(cfg.objective, train.group_boundaries)
        objective.check_labels(train.y)
        objective.check_scale(train.y, train.weights)
        if val_set is not None:
            objective.check_labels(val_set.y)

        mapper, binned = train.binned(cfg.max_bins, cfg.seed, cfg.enable_bundling, self.n_threads)
        base, margins = start_margins(objective, train)
        forest = Forest(objective.n_outputs, base)
        gradients = np.empty((objective.n_outputs, train.n_rows, 2), dtype=np.float32)
        gradient_kernel = objective.gradient_kernel(margins, train.y, train.weights, gradients, self.n_threads)
        grower = TreeGrower(binned, mapper, cfg, self.n_threads, gradient_kernel, margins,
                            resolve_histogram_mode(cfg, train.n_rows), feature_names=train.feature_names,
                            query_groups=train.group_boundaries if cfg.objective.needs_groups else None)
        if cfg.linear_leaves:
            grower.linear_leaves = LinearLeafFitter(train.X, ~mapper.is_categorical, gradients, margins,
                                                    cfg.linear_l1, cfg.linear_l2, self.n_threads)
        result = TrainingResult(forest, cfg.objective, train.n_features, train.feature_names, cfg,
                                categories=dict(train.categories))
        scores = RoundScores(cfg, train, val_set, val_X, margins, base, result.eval_history, train_scored,
                              any(isinstance(c, EarlyStopping) for c in callbacks), self.n_threads)
        dropout = None if cfg.booster != "dart" else DartDropout(
            cfg, objective.n_outputs, train.X, margins, self.n_threads,
            *((scores.val_X, scores.val_margins) if val_set is not None else ()))
        env = CallbackEnv(result if as_model is None else as_model(result), cfg, cfg.n_estimators,
                          evals_result=scores.evals_result, learning_rate=cfg.learning_rate,
                          higher_is_better=scores.higher_is_better)
        # a custom objective's gradients come from Python before each round
        before_round = (lambda: objective.fill(train)) if isinstance(objective, CustomObjectiveFunction) else None
        with info_visible() if cfg.verbosity >= 1 else nullcontext(), InterruptGuard() as interrupt:
            try:
                call_hook(callbacks, "before_training", env)
                self._boost(grower, result, env, callbacks, scores, interrupt, dropout, before_round)
                self._finish(result, env, interrupt.requested, dropout)
            except BaseException as error:
                env.error = error
                raise
            finally:
                call_hook(callbacks, "after_training", env)
        if grower.n_evictions and cfg.verbosity >= 1:
            logger.info("note: %d histograms were evicted and rebuilt; a larger cache_size avoids that",
                        grower.n_evictions)
        result.n_evictions, result.kernel_timings = grower.n_evictions, grower.loop.timings
        result.seconds = time.perf_counter() - start
        return result

    @staticmethod
    def _boost(grower: TreeGrower, result: TrainingResult, env: CallbackEnv, callbacks: list,
               scores: RoundScores, interrupt: InterruptGuard, dropout: DartDropout | None = None,
               before_round=None) -> None:
        """The rounds. With callbacks, a validation set, DART (`dropout`) or `before_round`
        (a custom objective's gradients), one at a time, each evaluated; with none of
        them, many grow in one nogil block (see grower.py). Ctrl-C is seen between rounds
        (between blocks in the fast path). Every tree is checked as it comes: a diverging
        run stops with an error naming its round, not with a model of NaN."""
        one_at_a_time = (bool(callbacks) or scores.val_set is not None or dropout is not None
                         or before_round is not None)
        round_ = 0
        while round_ < env.n_rounds and not interrupt.requested:
            env.round = round_
            stop = call_hook(callbacks, "before_iteration", env)
            check_best_iteration(env, round_)
            if stop:
                break
            if env.learning_rate != grower.rounds.learning_rate:  # a callback changed it
                grower.rounds.learning_rate = require_float("env.learning_rate", env.learning_rate, 0.0,
                                                             strictly_above=True)
            if dropout is not None:  # the round's new trees grow at a smaller rate when rounds are dropped
                grower.rounds.learning_rate = dropout.drop(result.forest, env.learning_rate)
            if before_round is not None:  # after the dropout: the gradients of the margins without the dropped trees
                before_round()
            block = grower.grow_rounds(round_, 1 if one_at_a_time else env.n_rounds - round_)
            for r, trees in enumerate(block):
                for tree in trees:
                    check_finite_tree(tree, round_ + r, env.config)
            if dropout is not None:
                dropout.normalize(result.forest, block[0])
            for trees in block:
                for k, tree in enumerate(trees):
                    result.forest.add(tree, k)
            round_ += len(block)
            if one_at_a_time:
                scores.add(env.round, block[0])
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

    def _check_inputs(self, train: Dataset, val_set: Dataset | None):
        """TypeError / ValueError naming what is wrong, before any work; the validation
        rows as the model reads them (None without a val_set): its features matched to the
        training's by name, categories by value, as at prediction."""
        if not isinstance(train, Dataset):
            raise TypeError(f"train must be a boosters.Dataset, got {type(train).__name__}")
        if not train.has_labels:
            raise ValueError("train has no labels: pass y to Dataset(X, y)")
        if val_set is not None:
            if not isinstance(val_set, Dataset):
                raise TypeError(f"val_set must be a boosters.Dataset or None, got {type(val_set).__name__}")
            if not val_set.has_labels:
                raise ValueError("val_set has no labels: pass y to Dataset(X, y)")
        elif self.config.early_stopping_rounds is not None:
            raise ValueError("early_stopping_rounds needs a val_set to monitor")
        check_linear_training(train, self.config)
        # feature names and indices of the constraints match the data (before binning it)
        monotone_directions(self.config, train.n_features, train.feature_names)
        interaction_groups(self.config, train.n_features, train.feature_names)
        if val_set is None:
            return None
        return val_set.features_for(train.n_features, train.feature_names, train.categories, "val_set")
