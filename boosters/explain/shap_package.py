"""The bridge to the `shap` package (an optional dependency, imported only here, lazily).

Two routes, both from the same trees:

- `shap_tree_model`: the forest in shap's own documented tree-ensemble form (a dict with
  ``"trees"``, each a dict of ``children_left``, ``children_right``, ``children_default``,
  ``features``, ``thresholds``, ``values``, ``node_sample_weight``), which
  ``shap.TreeExplainer`` accepts as it is. shap detects the libraries it supports by their
  class names (``safe_isinstance``), with no hook for others; a dict with ``"trees"`` is the
  form it reads from anyone. Its rule at a split is ours: ``x <= threshold`` goes left, a
  missing value to ``children_default``. Its trees have numeric splits only, so a model
  with categorical features is refused there.
- `explanation`: boosters' own exact TreeSHAP values (`explain.shap`) as a
  ``shap.Explanation``, for shap's plots; categorical features included (their codes as
  ``data``, their categories as ``display_data``).
"""

from __future__ import annotations

import numpy as np

from boosters.explain.shap import checked_covers, refuse_linear_leaves, shap_interaction_values, shap_values
from boosters.explain.tree_table import feature_label
from boosters.model.ensemble import Ensemble

__all__ = ["shap_tree_model", "explanation"]

# what shap reads from the dict to explain outputs other than the raw margin
# (model_output="probability" / "log_loss" with background data); its own names
_SHAP_OUTPUTS = {"squared": ("raw_value", "squared_error"), "logistic": ("log_odds", "binary_crossentropy")}


def import_shap():
    """The shap package, or an ImportError that names the extra to install."""
    try:
        import shap
    except ImportError as exc:
        raise ImportError("this needs the shap package: pip install 'boosters[shap]'") from exc
    return shap


def shap_tree_model(ensemble: Ensemble) -> dict:
    """The ensemble in shap's tree-ensemble form, for ``shap.TreeExplainer``;
    `GBDTModel.to_shap_trees` is the user-facing form.

    Parameters
    ----------
    ensemble : Ensemble
        The model's trees and what gives them meaning (``model.ensemble``).

    Returns
    -------
    dict
        ``"trees"``: one dict per tree, with ``values`` of shape (n_nodes, n_outputs): a
        tree's leaf values in its output's column, 0 in the others; ``"base_offset"``: the
        base scores; ``"tree_output"`` and ``"objective"`` where shap knows the objective
        (squared error, logistic).

    Raises
    ------
    ValueError
        For linear leaves, categorical features, or a cover TreeSHAP cannot weigh with.

    Examples
    --------
    >>> import numpy as np, boosters as bst
    >>> from boosters.explain.shap_package import shap_tree_model
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=3, max_depth=2))
    >>> trees = shap_tree_model(model.ensemble)
    >>> len(trees["trees"]), trees["trees"][0]["values"].shape
    (3, (7, 1))
    """
    forest = ensemble.forest
    refuse_linear_leaves(forest)
    flat = forest.flat()
    categorical = sorted(ensemble.categories)
    if categorical or (flat.categories is not None and np.any(flat.arrays["category_set"] >= 0)):
        names = [feature_label(j, ensemble.feature_names) for j in categorical] or "(codes)"
        raise ValueError(f"shap's tree format has numeric splits only (x <= threshold), and this model has "
                         f"categorical features {names}: use model.shap_explanation(X) for its exact SHAP values "
                         f"as a shap.Explanation (shap's plots take it)")
    a = flat.arrays
    cover = checked_covers(flat)
    trees = [_tree(a, cover, lo, hi, group, forest.n_groups)
             for lo, hi, group in zip(flat.tree_offsets[:-1], flat.tree_offsets[1:], flat.tree_group)]
    if not trees:  # shap needs a tree: a leaf of 0 adds nothing
        trees = [_leaf_only(forest.n_groups)]
    model = {"trees": trees, "base_offset": np.array(forest.base_scores, dtype=np.float64).reshape(-1),
             "internal_dtype": np.float64, "input_dtype": np.float64}
    if ensemble.objective.name in _SHAP_OUTPUTS and forest.n_groups == 1:
        model["tree_output"], model["objective"] = _SHAP_OUTPUTS[ensemble.objective.name]
    return model


def _tree(a: dict, cover: np.ndarray, lo: int, hi: int, group: int, n_groups: int) -> dict:
    """One tree in shap's form: -1 children at leaves; the missing values' child by index.
    shap overwrites an internal node's value with the cover-weighted mean of its children's."""
    split = a["split_feature"][lo:hi] >= 0
    left = np.where(split, a["left_child"][lo:hi], -1).astype(np.int32)
    right = np.where(split, a["right_child"][lo:hi], -1).astype(np.int32)
    values = np.zeros((hi - lo, n_groups), dtype=np.float64)
    values[:, group] = a["value"][lo:hi]
    return {"children_left": left, "children_right": right,
            "children_default": np.where(a["default_left"][lo:hi].astype(bool), left, right).astype(np.int32),
            "features": a["split_feature"][lo:hi].astype(np.int32),
            "thresholds": np.where(split, a["threshold"][lo:hi], 0.0).astype(np.float64),
            "values": values, "node_sample_weight": np.array(cover[lo:hi], dtype=np.float64)}


def _leaf_only(n_groups: int) -> dict:
    minus_one = np.full(1, -1, dtype=np.int32)
    return {"children_left": minus_one, "children_right": minus_one, "children_default": minus_one,
            "features": minus_one, "thresholds": np.zeros(1), "values": np.zeros((1, n_groups)),
            "node_sample_weight": np.ones(1)}


def explanation(ensemble: Ensemble, X, n_threads: int, interactions: bool = False):
    """Boosters' exact SHAP values (or interaction values) of X as a ``shap.Explanation``;
    `GBDTModel.shap_explanation` is the user-facing form.

    Parameters
    ----------
    ensemble : Ensemble
        The model's trees and features (``model.ensemble``).
    X : numpy.ndarray or scipy.sparse matrix
        The rows, already coded as the model's `_features` does (categories as codes).
    n_threads : int
        Threads to use, >= 1.
    interactions : bool, default False
        SHAP interaction values instead of SHAP values.

    Returns
    -------
    shap.Explanation
        ``values`` (n_rows, n_features), or (n_rows, n_features, n_features) for
        interactions, with a last axis of the outputs for several (classes, targets);
        ``base_values`` the expected margin (n_rows,) or (n_rows, n_outputs); ``data``
        the feature values (categorical: codes); ``display_data`` the categories'
        values (models with categorical features only); ``feature_names``.

    Examples
    --------
    >>> import numpy as np, boosters as bst
    >>> from boosters.explain.shap_package import explanation
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=3))
    >>> explanation(model.ensemble, X[:5], n_threads=1).values.shape
    (5, 2)
    """
    shap = import_shap()  # before the work: a missing package fails at once
    n_features = X.shape[1]
    if interactions:
        raw = shap_interaction_values(ensemble.forest, X, n_threads)  # (rows, groups, f + 1, f + 1)
        values, base = raw[:, :, :n_features, :n_features], raw[:, :, n_features, n_features]
    else:
        raw = shap_values(ensemble.forest, X, n_threads)  # (rows, groups, f + 1)
        values, base = raw[:, :, :n_features], raw[:, :, n_features]
    values = np.ascontiguousarray(np.moveaxis(values, 1, -1))  # shap puts the outputs last
    if ensemble.forest.n_groups == 1:
        values, base = values[..., 0], base[:, 0]
    data = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    return shap.Explanation(values, base_values=base, data=data, display_data=_display_data(ensemble, data),
                            feature_names=[feature_label(j, ensemble.feature_names) for j in range(n_features)])


MISSING_CATEGORY = "(missing)"  # what shap's plots show for a missing or unseen category


def _display_data(ensemble: Ensemble, data: np.ndarray) -> np.ndarray | None:
    """The rows with each categorical code replaced by its category (as prediction reads
    a code: truncated toward zero; missing or unseen: MISSING_CATEGORY, a string: shap's
    scatter labels a feature's axis with its categories only when the first row it draws,
    a random one, holds a string), for shap's plots to label; None for a model without
    categories to show. A feature coded by its target statistic (cat_encoding="ordered_ctr")
    shows the statistic, the number its splits read."""
    known = {j: cats for j, cats in ensemble.categories.items()
             if cats is not None and j not in ensemble.target_statistics}
    if not known:
        return None
    display = data.astype(object)
    for j, cats in known.items():
        codes = data[:, j]
        valid = (codes > -1) & (codes < len(cats))  # NaN fails both
        column = np.full(len(codes), MISSING_CATEGORY, dtype=object)
        column[valid] = np.asarray(cats, dtype=object)[codes[valid].astype(np.int64)]
        display[:, j] = column
    return display
