"""The training's column sampling and constraints, resolved against its data: feature
names to indices, checked once, then a `NodeConstraints` for the growth loop (None when
the config asks for none, so the plain path runs as before)."""

from __future__ import annotations

import numpy as np

from boosters.config import GBDTConfig
from boosters.training.split._constraints import NodeConstraints


def feature_index(name: str, key, n_features: int, feature_names) -> int:
    """A feature key of parameter `name` (index or name) as an index into the data."""
    if isinstance(key, str):
        if feature_names is None or key not in feature_names:
            known = "the data has no feature names" if feature_names is None else "not among the feature names"
            raise ValueError(f"{name}: unknown feature {key!r} ({known})")
        return feature_names.index(key)
    if not 0 <= key < n_features:
        raise ValueError(f"{name}: feature index {key} is out of range for {n_features} features")
    return key


def monotone_directions(config: GBDTConfig, n_features: int, feature_names) -> np.ndarray | None:
    """-1 / 0 / +1 per feature, or None without any constraint."""
    spec = config.monotone_constraints
    if spec is None:
        return None
    out = np.zeros(n_features, dtype=np.int8)
    if isinstance(spec, dict):
        seen: dict[int, object] = {}
        for key, direction in spec.items():
            f = feature_index("monotone_constraints", key, n_features, feature_names)
            if f in seen:
                raise ValueError(f"monotone_constraints: {seen[f]!r} and {key!r} are the same feature")
            seen[f] = key
            out[f] = direction
    else:
        if len(spec) != n_features:
            raise ValueError(f"monotone_constraints has {len(spec)} directions but the data has {n_features} features")
        out[:] = spec
    return out if np.any(out != 0) else None


def interaction_groups(config: GBDTConfig, n_features: int, feature_names) -> list[np.ndarray] | None:
    """Each group's feature indices (sorted, unique), or None without constraints."""
    spec = config.interaction_constraints
    if spec is None:
        return None
    return [np.unique([feature_index("interaction_constraints", key, n_features, feature_names) for key in group])
            .astype(np.int32) for group in spec]


def make_node_constraints(config: GBDTConfig, features: np.ndarray, n_features: int, feature_names,
                          max_nodes: int, max_batch: int, categorical=None) -> NodeConstraints | None:
    """The growth loop's constraints over the split finder's `features`, or None.
    `categorical`: per feature, whether it is categorical (categories have no order to
    constrain)."""
    monotone = monotone_directions(config, n_features, feature_names)
    if monotone is not None and categorical is not None and np.any((monotone != 0) & categorical):
        f = int(np.flatnonzero((monotone != 0) & categorical)[0])
        name = f"{feature_names[f]!r}" if feature_names is not None else str(f)
        raise ValueError(f"monotone_constraints: feature {name} is categorical; its categories have no order to "
                         "constrain")
    groups = interaction_groups(config, n_features, feature_names)
    fractions = (config.colsample_bytree, config.colsample_bylevel, config.colsample_bynode)
    if monotone is None and groups is None and min(fractions) == 1.0:
        return None
    return NodeConstraints(features, n_features, max_nodes, max_batch, seed=config.seed, l1=config.l1,
                           l2=config.l2, colsample_bytree=fractions[0], colsample_bylevel=fractions[1],
                           colsample_bynode=fractions[2], interaction_groups=groups, monotone=monotone)
