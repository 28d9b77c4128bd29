"""The trees as one table, one row per node (pandas), as LightGBM's trees_to_dataframe."""

from __future__ import annotations

import numpy as np

from boosters.model.tree import Tree

COLUMNS = ("tree_index", "node_index", "node_depth", "parent_index", "left_child", "right_child",
           "split_feature", "split_gain", "threshold", "decision_type", "categories", "missing_direction",
           "value", "cover", "count")
LINEAR_COLUMNS = ("linear_const", "linear_terms")  # models with linear leaves only


def feature_label(feature: int, feature_names: list[str] | None) -> str:
    """A feature's name, or ``"f<index>"`` for a model trained without names."""
    return f"f{feature}" if feature_names is None else str(feature_names[feature])


def split_categories(tree: Tree, node: int, categories: np.ndarray | None) -> list:
    """The categories a categorical split sends left: the raw values when the model
    knows them (codes past them are unseen categories, which follow the default
    direction), else the integer codes."""
    codes = tree.category_codes(node)
    if categories is None:
        return [int(c) for c in codes]
    return [categories[c].item() if hasattr(categories[c], "item") else categories[c]
            for c in codes[codes < len(categories)]]


def node_depths(tree: Tree) -> np.ndarray:
    """Each node's depth (the root's is 0); children come after their parent."""
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    for node in np.flatnonzero(tree.split_feature >= 0):
        depth[tree.left_child[node]] = depth[tree.right_child[node]] = depth[node] + 1
    return depth


def tree_rows(tree: Tree, tree_index: int, feature_names, categories: dict, linear: bool = False) -> dict:
    """The columns of one tree's rows (lists, one entry per node); `linear`: with LINEAR_COLUMNS."""
    split = tree.split_feature >= 0
    parent = np.full(tree.n_nodes, -1, dtype=np.int64)
    parent[tree.left_child[split]] = parent[tree.right_child[split]] = np.flatnonzero(split)
    categorical = split & (tree.category_set >= 0)
    rows = {
        "tree_index": [tree_index] * tree.n_nodes,
        "node_index": list(range(tree.n_nodes)),
        "node_depth": node_depths(tree).tolist(),
        "parent_index": [None if p < 0 else int(p) for p in parent],
        "left_child": [int(c) if s else None for c, s in zip(tree.left_child, split)],
        "right_child": [int(c) if s else None for c, s in zip(tree.right_child, split)],
        "split_feature": [feature_label(f, feature_names) if f >= 0 else None for f in tree.split_feature],
        "split_gain": np.where(split, tree.gain, np.nan).tolist(),
        "threshold": np.where(split & ~categorical, tree.threshold, np.nan).tolist(),
        "decision_type": [("in" if c else "<=") if s else None for s, c in zip(split, categorical)],
        "categories": [split_categories(tree, n, categories.get(int(tree.split_feature[n])))
                       if categorical[n] else None for n in range(tree.n_nodes)],
        "missing_direction": [("left" if d else "right") if s else None for s, d in zip(split, tree.default_left)],
        "value": tree.value.tolist(),
        "cover": tree.cover.tolist(),
        "count": tree.n_samples.tolist(),
    }
    if linear:  # a linear leaf outputs linear_const + sum of coefficient * feature ("value" on NaN)
        a = tree.linear_arrays()
        offsets = np.concatenate([[0], np.cumsum(a["linear_n_terms"])])
        rows["linear_const"] = np.where(split, np.nan, a["linear_const"]).tolist()
        rows["linear_terms"] = [None if s else {feature_label(f, feature_names): float(c) for f, c in zip(
            a["linear_features"][lo:hi], a["linear_coefs"][lo:hi])} for s, lo, hi in zip(split, offsets, offsets[1:])]
    return rows


def trees_to_dataframe(trees: list[Tree], feature_names: list[str] | None, categories: dict):
    """One row per node of every tree (columns `COLUMNS`); see GBDTModel.trees_to_dataframe."""
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError("trees_to_dataframe needs pandas: pip install 'boosters[pandas]'") from exc
    linear = any(t.is_linear for t in trees)
    columns: dict[str, list] = {name: [] for name in COLUMNS + (LINEAR_COLUMNS if linear else ())}
    for t, tree in enumerate(trees):
        for name, values in tree_rows(tree, t, feature_names, categories, linear).items():
            columns[name].extend(values)
    frame = pd.DataFrame(columns)
    for name in ("parent_index", "left_child", "right_child"):
        frame[name] = frame[name].astype("Int64")  # missing at the root / at leaves
    return frame
