"""boosters models out, as XGBoost JSON (`xgboost.Booster(model_file=bytearray(data))`
loads it; so do serving stacks that read XGBoost models).

XGBoost holds thresholds, leaf values and base scores in float32 and sums in float32:
its predictions equal ours within float32 rounding, for float32 inputs. The rules
mapped (the inverse of `convert/xgboost.py`):

- Numeric split: ours ``x <= T`` (double) is, for float32 x, ``x <= a`` with a the
  largest float32 <= T, that is ``x < t`` with t the float32 after a (XGBoost's rule);
  t is +inf for T past float32's largest value (every float32 but +inf goes left in
  both). T = +inf (a "missing or present" split: NaN by default_left, every other value
  left, +-inf included) is XGBoost's ``x < -inf``, which sends every present value right:
  written with the children swapped and default_left flipped. JSON has no infinities:
  they are written -Infinity / Infinity, as XGBoost writes them.
- Categorical split: ours sends set S left, every other code and NaN by default_left
  (negative and past the set's words: the default). XGBoost sends its listed codes right
  and every other code left. Missing right: XGBoost lists S with the children swapped
  (its default then left, our right child); missing left: XGBoost lists the complement of
  S within S's words (same children, default left). Every integer code then goes the same
  way, and so does a non-integer one (both truncate it), but for one in (-1, 0): code 0
  here, negative in XGBoost.
- XGBoost's predictor takes left + 1 as the right child: trees are written breadth-first.
- The base scores: XGBoost stores base_score before its link (a probability for
  logistic, a mean for log links); we write the float32 whose margin, computed as
  XGBoost computes it, is nearest ours.
"""

from __future__ import annotations

import json
from typing import Callable, NoReturn

import numpy as np

from boosters.convert.xgboost import _log32, _logit32
from boosters.gbdt_model import GBDTModel

__all__ = ["to_xgboost_json"]

WRITTEN_VERSION = [3, 1, 0]  # per-output base scores ("[a,b]") are read from XGBoost 3.1 on
_REG_LOSS = {"reg_loss_param": {"scale_pos_weight": "1"}}
_RANK_PARAM = {"lambdarank_param": {"lambdarank_bias_norm": "1", "lambdarank_normalization": "1",
                                    "lambdarank_num_pair_per_sample": "4294967295",
                                    "lambdarank_pair_method": "topk", "lambdarank_score_normalization": "1",
                                    "lambdarank_unbiased": "0", "ndcg_exp_gain": "1"}}


def _refuse(what: str) -> NoReturn:
    raise ValueError(f"cannot export to XGBoost: {what}")


def _float(value) -> float:
    """A float32 as the Python float equal to it (its repr parses back to the same float32)."""
    return float(np.float32(value))


def _objective(objective) -> tuple[dict, int, int, Callable]:
    """(XGBoost's objective object, num_class, num_target, its margin link float32 -> float32)."""
    name = objective.name
    identity = lambda p: p  # noqa: E731
    targets = objective.n_targets or 1
    if name == "squared":
        return {"name": "reg:squarederror", **_REG_LOSS}, 0, targets, identity
    if name == "absolute":
        return {"name": "reg:absoluteerror"}, 0, targets, identity
    if name == "pinball":
        if isinstance(objective.alpha, tuple):
            _refuse("pinball with several alpha levels (boosters sorts their predictions per row, XGBoost does not)")
        return {"name": "reg:quantileerror", "quantile_loss_param": {"quantile_alpha": f"[{objective.alpha!r}]"}}, \
            0, 1, identity
    if name == "logistic":
        return {"name": "binary:logistic", **_REG_LOSS}, 0, 1, _logit32
    if name == "one_vs_rest":  # one sigmoid per class: XGBoost's multi-target binary:logistic
        return {"name": "binary:logistic", **_REG_LOSS}, 0, objective.n_classes, _logit32
    if name == "hinge":
        return {"name": "binary:hinge"}, 0, 1, identity
    if name == "softmax":
        return {"name": "multi:softprob", "softmax_multiclass_param": {"num_class": str(objective.n_classes)}}, \
            objective.n_classes, 1, identity
    if name == "poisson":
        return {"name": "count:poisson", "poisson_regression_param": {"max_delta_step": "0.699999988"}}, 0, 1, _log32
    if name == "gamma":
        return {"name": "reg:gamma", **_REG_LOSS}, 0, 1, _log32
    if name == "tweedie":
        return {"name": "reg:tweedie",
                "tweedie_regression_param": {"tweedie_variance_power": repr(objective.variance_power)}}, 0, 1, _log32
    if name == "lambdarank":
        return {"name": "rank:ndcg", **_RANK_PARAM}, 0, 1, identity
    if name == "pairwise":
        return {"name": "rank:pairwise", **_RANK_PARAM}, 0, 1, identity
    _refuse(f"objective {objective!r} has no XGBoost equivalent")


def _base_score(margin: float, link) -> float:
    """The float32 p whose XGBoost margin link(p) is nearest `margin`."""
    inverses: dict[Callable, Callable] = {_logit32: lambda m: 1 / (1 + np.exp(-m)), _log32: np.exp}
    inverse = inverses.get(link, lambda m: m)
    with np.errstate(all="ignore"):
        start = np.float32(inverse(margin))
        steps = [start]
        for direction in (np.inf, -np.inf):
            p = start
            for _ in range(16):  # a few float32 steps each way
                p = np.nextafter(p, np.float32(direction))
                steps.append(p)
        candidates = np.array(steps, dtype=np.float32)
        # in XGBoost's domain of base_score: > 0 for a log link, in (0, 1) for logistic
        candidates = candidates[np.isfinite(candidates) & ((link is not _log32) | (candidates > 0))
                                & ((link is not _logit32) | ((candidates > 0) & (candidates < 1)))]
        errors = np.abs(link(candidates).astype(np.float64) - margin)
    best = int(np.argmin(errors)) if len(candidates) else None
    if best is None or not errors[best] <= 1e-4 * max(1.0, abs(margin)):
        _refuse(f"base score margin {margin!r} cannot be written as XGBoost's base_score")
    return _float(candidates[best])


def xgboost_threshold_from_ours(T: float) -> float:
    """The float32 t with ``x < t`` <=> ``x <= T`` for every float32 x."""
    with np.errstate(over="ignore"):  # past +-FLT_MAX: +-inf
        a = np.float32(T)
        if a > T:  # rounded up: step down to the largest float32 <= T
            a = np.nextafter(a, np.float32(-np.inf))
        return _float(np.nextafter(a, np.float32(np.inf)))


def _tree_json(tree, t: int, n_features: int) -> dict:
    """One of our trees as XGBoost's tree object, breadth-first."""
    for name in ("value", "gain", "cover"):
        if not np.all(np.isfinite(np.asarray(getattr(tree, name), dtype=np.float32))):
            _refuse(f"tree {t}: a {name} is beyond float32")
    order, xgb_children = [0], {}  # our nodes in XGBoost's order; our node -> (XGBoost left, right) as ours
    split_type, categories, default_left, conditions_of = {}, {}, {}, {}
    head = 0
    while head < len(order):
        node = order[head]
        head += 1
        if tree.split_feature[node] < 0:
            continue
        left, right, dl = int(tree.left_child[node]), int(tree.right_child[node]), bool(tree.default_left[node])
        if tree.category_set[node] >= 0:
            codes = tree.category_codes(node)
            n_words = tree.cat_boundaries[tree.category_set[node] + 1] - tree.cat_boundaries[tree.category_set[node]]
            if dl:  # XGBoost lists what goes right: the complement within the words
                listed = np.setdiff1d(np.arange(32 * n_words), codes)
            else:  # our set goes right in XGBoost, our right child becomes its left (and default)
                listed, left, right, dl = codes, right, left, True
            if not len(listed):
                _refuse(f"tree {t}, node {node}: a category split that sends every code one way")
            split_type[node], categories[node] = 1, listed
        elif tree.threshold[node] == np.inf:  # every present value left (+-inf too), NaN by default_left:
            # XGBoost's x < -inf sends every present value right, so our left child is its right one
            conditions_of[node], left, right, dl = -np.inf, right, left, not dl
        else:
            conditions_of[node] = xgboost_threshold_from_ours(tree.threshold[node])  # +inf past float32
        default_left[node] = dl
        xgb_children[node] = (left, right)
        order += [left, right]
    xgb_id = {node: i for i, node in enumerate(order)}
    n = len(order)
    parents = [2147483647] * n
    lefts, rights = [-1] * n, [-1] * n
    for node, (left, right) in xgb_children.items():
        i = xgb_id[node]
        lefts[i], rights[i] = xgb_id[left], xgb_id[right]
        parents[lefts[i]] = parents[rights[i]] = i
    conditions, features, cat_nodes, cat_lists = [], [], [], []
    for i, node in enumerate(order):
        if node not in xgb_children:
            conditions.append(_float(tree.value[node]))
            features.append(0)
        elif node in categories:
            conditions.append(0.0)
            features.append(int(tree.split_feature[node]))
            cat_nodes.append(i)
            cat_lists.append([int(c) for c in categories[node]])
        else:
            conditions.append(conditions_of[node])
            features.append(int(tree.split_feature[node]))
    sizes = [len(c) for c in cat_lists]
    return {
        "base_weights": [_float(tree.value[node]) for node in order],
        "categories": [c for listed in cat_lists for c in listed],
        "categories_nodes": cat_nodes,
        "categories_segments": [int(s) for s in np.cumsum([0] + sizes[:-1])] if sizes else [],
        "categories_sizes": sizes,
        "default_left": [int(default_left.get(node, False)) for node in order],
        "id": t,
        "left_children": lefts,
        "loss_changes": [_float(tree.gain[node]) for node in order],
        "parents": parents,
        "right_children": rights,
        "split_conditions": conditions,
        "split_indices": features,
        "split_type": [split_type.get(node, 0) for node in order],
        "sum_hessian": [_float(tree.cover[node]) for node in order],
        "tree_param": {"num_deleted": "0", "num_feature": str(n_features), "num_nodes": str(n),
                       "size_leaf_vector": "1"},
    }


def _category_container(model: GBDTModel) -> dict | None:
    """XGBoost's "cats" (3.1+): each feature's categories in code order, so that XGBoost
    codes a DataFrame by value as we do; None when no feature has category values."""
    categories = model.categories
    if all(values is None for values in categories.values()):
        return None
    encodings: list[dict] = []
    segments, sorted_index = [0], []
    for f in range(model.n_features):
        values = categories.get(f)
        if values is None:  # numeric, or trained on codes
            encodings.append({"offsets": [], "values": []})
        elif values.dtype == object:  # strings: their UTF-8 bytes cut by offsets
            raw = [str(v).encode("utf-8") for v in values]
            encodings.append({"offsets": [int(o) for o in np.cumsum([0] + [len(r) for r in raw])],
                              "values": [b for r in raw for b in r]})
            sorted_index += sorted(range(len(raw)), key=raw.__getitem__)
        else:
            encodings.append({"type": 15, "values": [int(v) for v in values]})  # 15: XGBoost's int64 array
            sorted_index += [int(i) for i in np.argsort(values, kind="stable")]
        segments.append(segments[-1] + (0 if values is None else len(values)))
    return {"enc": encodings, "feature_segments": segments, "sorted_idx": sorted_index}


def to_xgboost_json(model: GBDTModel) -> bytes:
    """The model as an XGBoost JSON model (UTF-8 bytes).

    ``xgboost.Booster(model_file=bytearray(data))`` loads it (XGBoost 3.1 or later when
    the output groups have different base scores), and its predictions equal the model's
    within float32 rounding for float32 inputs (XGBoost holds thresholds, leaves and sums
    in float32). What XGBoost cannot represent raises ValueError naming it: linear
    leaves, ordered target statistics (``cat_encoding="ordered_ctr"``), objectives it lacks (huber, several pinball levels, custom), leaf values
    beyond float32. Feature names, which features are categorical and their categories
    (XGBoost 3.1+ then codes a DataFrame by category value, as boosters does) are
    written.

    Parameters
    ----------
    model : GBDTModel
        The model to export.

    Returns
    -------
    bytes
        The JSON document.

    Examples
    --------
    >>> import xgboost as xgb
    >>> from boosters.convert import to_xgboost_json
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)).astype(np.float32)
    >>> model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0] > 0),
    ...                             bst.GBDTConfig(n_estimators=10, objective=bst.Objective.logistic()))
    >>> booster = xgb.Booster(model_file=bytearray(to_xgboost_json(model)))
    >>> bool(np.allclose(booster.predict(xgb.DMatrix(X)), model.predict(X), rtol=1e-5, atol=1e-6))
    True
    """
    if not isinstance(model, GBDTModel):
        raise TypeError(f"model must be a GBDTModel, got {type(model).__name__}")
    forest = model.forest
    if forest.is_linear:
        _refuse("linear leaves (XGBoost's leaves are constants)")
    if model.ensemble.target_statistics:
        _refuse("cat_encoding='ordered_ctr' (XGBoost has no table of target statistics to code the categorical "
                "features with); train with cat_encoding='splits' to export")
    objective, n_classes, n_targets, link = _objective(model.objective)
    n_groups = forest.n_groups
    groups = np.asarray(forest.tree_group)
    n_rounds = forest.n_trees // n_groups
    if forest.n_trees % n_groups or not np.array_equal(groups, np.tile(np.arange(n_groups), n_rounds)):
        _refuse("the trees are not in rounds of one tree per output")
    scores = [_base_score(float(b), link) for b in forest.base_scores]
    base_score = (repr(scores[0]) if len(set(scores)) == 1
                  else "[" + ",".join(repr(s) for s in scores) + "]")
    n_features = model.n_features
    cats = _category_container(model)
    categorical = set(model.categorical_features)
    names = list(model.feature_names) if model.feature_names is not None else []
    types = ["c" if f in categorical else "float" for f in range(n_features)] if categorical or names else []
    document = {
        "learner": {
            "attributes": {},
            "feature_names": names,
            "feature_types": types,
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(forest.n_trees)},
                    "iteration_indptr": [r * n_groups for r in range(n_rounds + 1)],
                    "tree_info": [int(g) for g in groups],
                    "trees": [_tree_json(tree, t, n_features) for t, tree in enumerate(forest.trees)],
                    **({} if cats is None else {"cats": cats}),
                },
                "name": "gbtree",
            },
            "learner_model_param": {"base_score": base_score, "boost_from_average": "1",
                                    "num_class": str(n_classes), "num_feature": str(n_features),
                                    "num_target": str(n_targets)},
            "objective": objective,
        },
        "version": WRITTEN_VERSION,
    }
    # split conditions may be +-inf, written -Infinity / Infinity as XGBoost writes them (every
    # other float was checked finite)
    return json.dumps(document).encode("utf-8")
