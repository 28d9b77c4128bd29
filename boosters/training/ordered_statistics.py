"""cat_encoding="ordered_ctr" at training: the training Dataset with its categorical
features replaced by their ordered target statistics, the validation sets' by the
statistics of all training rows (data/target_statistics.py holds the arithmetic, which
prediction reads too); what the scheme cannot serve is refused here, before any work."""

from __future__ import annotations

import numpy as np

from boosters.data.dataset import Dataset
from boosters.data.out_of_core import OutOfCoreDataset
from boosters.data.target_statistics import encode, fit_statistics, n_codes


def check_ordered_statistics(config, train: Dataset) -> None:
    """ValueError naming both options when `config`'s ordered CTRs cannot serve `train`."""
    objective = config.objective
    if objective.n_outputs != 1 or (train.y is not None and train.y.ndim != 1):
        raise ValueError(f"cat_encoding='ordered_ctr' computes one statistic of a single target; {objective!r} "
                         f"has {objective.n_outputs} outputs (use cat_encoding='splits' for multiclass and "
                         f"multi-target training)")
    if objective.needs_groups:
        raise ValueError(f"cat_encoding='ordered_ctr' is not supported with the ranking objective {objective!r}: "
                         f"use cat_encoding='splits'")
    if isinstance(train, OutOfCoreDataset):
        raise ValueError("cat_encoding='ordered_ctr' needs the raw categorical columns; an out-of-core Dataset "
                         "holds only bins: use cat_encoding='splits' or an in-memory Dataset")


def ordered_statistics(config, train: Dataset, evals: list) -> tuple[Dataset, list, tuple | None]:
    """(the Dataset the trees grow on, the validation sets ((name, Dataset, X) each) with
    their X encoded, (categories, tables) for the model); `train` and `evals` as they are,
    and None, without ordered CTRs or a categorical feature of more than
    `max_onehot_cats` categories."""
    if config.cat_encoding != "ordered_ctr" or not train.categorical_features:
        return train, evals, None
    check_ordered_statistics(config, train)
    # as CatBoost's one_hot_max_size: a feature of few categories keeps its category splits
    features: list[int] = []
    kept: list[int] = []
    for f in train.categorical_features:
        few = n_codes(train.X[:, f], train.categories[f]) <= config.max_onehot_cats
        (kept if few else features).append(f)
    if not features:
        return train, evals, None
    X, tables = fit_statistics(train.X, train.y, features, train.categories, config.ctr_prior_weight, config.seed)
    group = None if train.group_boundaries is None else np.diff(train.group_boundaries)
    encoded = Dataset(X, train.y, train.weights, train.feature_names, kept, group=group,
                      init_score=train.init_score)
    encoded.categories = {f: train.categories[f] for f in kept}  # X holds their codes
    evals = [(name, dataset, None if X_val is None else encode(X_val, tables)) for name, dataset, X_val in evals]
    return encoded, evals, (dict(train.categories), tables)
