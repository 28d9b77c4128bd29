"""DART boosting (Rashmi & Gilad-Bachrach 2015, "DART: Dropouts meet Multiple Additive
Regression Trees"): each round drops a random set of earlier rounds, fits its new trees
to the gradients of the margins without them, then rescales the new and the dropped trees
so that together they add about what the dropped ones added before.

Selection (LightGBM's ``uniform_drop=True``, XGBoost's ``sample_type="uniform"``): with
probability ``skip_drop`` a round drops nothing; otherwise each earlier round is dropped
with probability ``min(drop_rate, max_drop / rounds so far)``, at most ``max_drop`` of
them. Nothing forces a drop (XGBoost's ``one_drop`` is off by default too). A round's
trees (one per output) are dropped together; the base score is never dropped.

Normalisation with k dropped rounds and learning rate lr: the new trees are grown with
learning rate ``lr / (k + a)`` and the dropped ones are scaled by ``k / (k + a)``, with
``a = 1`` (the paper's, LightGBM's default) or ``a = lr`` (``xgboost_dart_mode``,
XGBoost's ``normalize_type="tree"``).

This module is the forest's side (which rounds drop, the trees' scales) and the
margins' side that every owner of margins applies to its rows (`DroppedMargins`,
`scale_down_dropped`: `backend.LocalBackend`, boosters.dask's partitions), from the
dropped trees' predictions on the raw rows, computed once per round (`DartRound`).
Nothing per tree is kept but its values as grown and its current scale, so the trees of
the best round (early stopping) can be restored exactly. The random numbers come from
`config.seed` alone: the model does not depend on the thread count.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np

from boosters._lib.logs import logger
from boosters.config import GBDTConfig
from boosters.model.forest import Forest
from boosters.model.tree import Tree

DART_STREAM = 0xDA27  # keeps the dropout's random numbers apart from the other seeded draws


class DartRound(NamedTuple):
    """A round's dropout as the margins' owners apply it, in this order: the dropped trees
    taken out of the training margins before the round's gradients, put back at `factor`
    after its growth; the validation margins lose (1 - factor) of them before its trees
    are added. `trees`: (output, tree) of the dropped rounds at their values when the
    round started (shallow copies: rescaling gives the forest's trees new value arrays)."""

    factor: float
    trees: list


class DartDropout:
    """The dropout of one training, on the forest's side: each round's dropped rounds
    (`choose_round`), the trees' scales (`rescale`), the scales of the best round
    (`remember`, `restore_best`)."""

    def __init__(self, config: GBDTConfig, n_outputs: int):
        self.drop_rate, self.skip_drop, self.max_drop = config.drop_rate, config.skip_drop, config.max_drop
        self.xgboost_mode = config.xgboost_dart_mode
        self.rng = np.random.default_rng([config.seed, DART_STREAM])
        self.n_outputs = n_outputs
        self.grown_values: list[list[np.ndarray]] = []  # per round, per output: the tree's values as grown
        self.scales: list[float] = []                    # per round: the factor its grown values carry now
        self.best: tuple[int, list[float]] | None = None  # (round, scales after it) of the best round so far
        self._dropped = np.zeros(0, dtype=np.int64)
        self._factor = 1.0

    def choose_round(self, forest: Forest, learning_rate: float) -> tuple[float, DartRound | None]:
        """Choose this round's dropped rounds: the learning rate of the round's new trees,
        and the round's DartRound (None when nothing is dropped)."""
        self._dropped = self._choose(len(self.scales))
        n_dropped = len(self._dropped)
        if n_dropped == 0:
            self._factor = 1.0
            return learning_rate, None
        a = learning_rate if self.xgboost_mode else 1.0
        self._factor = n_dropped / (n_dropped + a)
        trees = [(k, copy.copy(forest.trees[r * self.n_outputs + k])) for r in self._dropped
                 for k in range(self.n_outputs)]  # in round order, as predict_dropped adds them
        return learning_rate / (n_dropped + a), DartRound(self._factor, trees)

    def rescale(self, forest: Forest, new_trees: list[Tree]) -> None:
        """After the round's trees grew (before they join `forest`): the new trees
        recorded, the dropped rounds' trees scaled by k / (k + a)."""
        self.grown_values.append([tree.value for tree in new_trees])
        self.scales.append(1.0)
        for r in self._dropped:
            self.scales[r] *= self._factor
            self._set_values(forest, int(r))

    def remember(self, round_: int, best_iteration: int | None) -> None:
        """After round `round_`'s callbacks: keep the scales when it is the best round."""
        if best_iteration == round_:
            self.best = (round_, list(self.scales))

    def restore_best(self, forest: Forest, best_iteration: int) -> None:
        """The trees of rounds up to `best_iteration` as they were right after it."""
        if self.best is None or self.best[0] != best_iteration:
            logger.warning("DART: best_iteration %d was not chosen by early stopping at its round; the trees "
                           "keep the scales of the last round", best_iteration)
            return
        for r, scale in enumerate(self.best[1]):
            if self.scales[r] != scale:
                self.scales[r] = scale
                self._set_values(forest, int(r))

    def _choose(self, n_rounds: int) -> np.ndarray:
        """The earlier rounds (indices) this round drops."""
        if self.rng.random() < self.skip_drop or n_rounds == 0:
            return np.zeros(0, dtype=np.int64)
        rate = self.drop_rate if self.max_drop is None else min(self.drop_rate, self.max_drop / n_rounds)
        dropped = np.flatnonzero(self.rng.random(n_rounds) < rate)
        return dropped if self.max_drop is None else dropped[:self.max_drop]

    def _set_values(self, forest: Forest, r: int) -> None:
        for k, values in enumerate(self.grown_values[r]):
            forest.trees[r * self.n_outputs + k].value = values * self.scales[r]


class DroppedMargins:
    """A round's dropped trees on the training margins of some rows (one machine's, or
    a Dask partition's; margins (n_outputs, n_rows)): taken out before the round's
    gradients (`take_out`), put back at their new scale after its trees (`put_back`,
    or the next `take_out`)."""

    def __init__(self):
        self.pending = None  # (factor, the dropped trees' margins (n_rows, n_outputs)) until put back

    def take_out(self, margins: np.ndarray, dart: DartRound | None, X, n_threads: int) -> None:
        self.put_back(margins)
        if dart is not None:
            dropped = predict_dropped(dart.trees, len(margins), X, n_threads)
            margins -= dropped.T
            self.pending = (dart.factor, dropped)

    def put_back(self, margins: np.ndarray) -> None:
        if self.pending is not None:
            factor, dropped = self.pending
            margins += factor * dropped.T
            self.pending = None


def scale_down_dropped(val_margins: np.ndarray, dart: DartRound | None, X, n_threads: int) -> None:
    """Validation margins (n_rows, n_outputs) hold the dropped trees at full scale: they
    lose (1 - factor) of them before the round's trees are added."""
    if dart is not None:
        val_margins -= (1.0 - dart.factor) * predict_dropped(dart.trees, val_margins.shape[1], X, n_threads)


def predict_dropped(trees: list[tuple[int, Tree]], n_outputs: int, X, n_threads: int) -> np.ndarray:
    """(n_rows, n_outputs): the sum of `trees` ((output, tree) pairs, as DartRound.trees
    holds them) on X's rows, each row's sum in the trees' order (boosters.dask's
    partitions compute the same bits on their rows)."""
    dropped = Forest(n_outputs, np.zeros(n_outputs))
    for k, tree in trees:  # a copy: the sub-forest's flat arrays must not become the tree's
        dropped.add(copy.copy(tree), k)
    dropped.flat(grown=True)  # the grower's trees, valid by construction
    return dropped.predict_margins(X, n_threads, include_base=False)
