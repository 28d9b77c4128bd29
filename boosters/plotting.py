"""Plots of a trained model (matplotlib, an optional dependency: ``pip install 'boosters[plot]'``).

`plot_importance` (feature importance bars), `plot_metric` (validation scores per round),
`plot_tree` (one tree with its split conditions and leaf values) and `plot_shap_summary`
(a beeswarm of SHAP values). Each draws on `ax` (a new figure's axes when None) and
returns the axes. `to_graphviz` gives a tree as a graphviz graph instead.
"""

from __future__ import annotations

import numpy as np

from boosters.data.frames import as_frame
from boosters.data.sparse import is_sparse
from boosters.explain.importance import ImportanceType, feature_importance
from boosters.explain.tree_table import feature_label, split_categories
from boosters.gbdt_model import GBDTModel

__all__ = ["plot_importance", "plot_metric", "plot_shap_summary", "plot_tree", "to_graphviz"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("boosters.plotting needs matplotlib: pip install 'boosters[plot]'") from exc
    return plt


def _axes(ax, figsize):
    """`ax`, or the axes of a new figure of `figsize` inches."""
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def _model(model, name: str = "model") -> GBDTModel:
    """A GBDTModel, or the booster of a fitted boosters scikit-learn estimator."""
    booster = getattr(model, "booster_", model)
    if not isinstance(booster, GBDTModel):
        raise TypeError(f"{name} must be a boosters GBDTModel or a fitted boosters estimator, "
                        f"got {type(model).__name__}")
    return booster


def _feature_names(model: GBDTModel) -> list[str]:
    return [feature_label(f, model.feature_names) for f in range(model.n_features)]


# -- importance ----------------------------------------------------------------------------

def plot_importance(model, importance_type: ImportanceType | str = "gain", max_num_features: int | None = None,
                    ignore_zero: bool = True, precision: int = 3, title: str | None = None, ax=None):
    """Horizontal bars of the features' importance, the most important at the top.

    Parameters
    ----------
    model : GBDTModel or fitted boosters estimator
        The model to plot.
    importance_type : ImportanceType or str, default "gain"
        What to measure (see `ImportanceType`).
    max_num_features : int, optional
        Show only this many of the most important features (all when None).
    ignore_zero : bool, default True
        Leave out features with zero importance.
    precision : int, default 3
        Decimals of the value written beside each bar.
    title : str, optional
        The axes' title (default: "Feature importance (<type>)").
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np, boosters as bst
    >>> from boosters.plotting import plot_importance
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = 2 * X[:, 0] + X[:, 1]
    >>> model = bst.GBDTModel.train(bst.Dataset(X, y, feature_names=["a", "b", "c"]),
    ...                             bst.GBDTConfig(n_estimators=5, max_depth=2))
    >>> ax = plot_importance(model, "split")
    >>> [t.get_text() for t in ax.get_yticklabels()], len(ax.patches)
    (['b', 'a'], 2)
    """
    model = _model(model)
    kind = ImportanceType.parse(importance_type)
    if max_num_features is not None and (not isinstance(max_num_features, (int, np.integer))
                                         or max_num_features < 1):
        raise ValueError(f"max_num_features must be a positive int or None, got {max_num_features!r}")
    importance = feature_importance(model.forest, model.n_features, kind)
    order = np.argsort(-importance, kind="stable")
    if ignore_zero:
        order = order[importance[order] > 0]
    if max_num_features is not None:
        order = order[:max_num_features]
    order = order[::-1]  # barh draws bottom-up: the largest last, at the top
    names = _feature_names(model)
    ax = _axes(ax, (6.4, max(2.0, 0.35 * len(order) + 1.2)))
    y = np.arange(len(order))
    ax.barh(y, importance[order], height=0.6, color="#4c72b0")
    ax.set_yticks(y, [names[f] for f in order])
    for position, value in zip(y, importance[order]):
        ax.text(value, position, f" {round(float(value), precision):g}", va="center", fontsize="small")
    if len(order):
        ax.set_xlim(0, importance[order].max() * 1.15)
    ax.set_xlabel(f"Importance ({kind.value})")
    ax.set_ylabel("Features")
    ax.set_title(title if title is not None else f"Feature importance ({kind.value})")
    return ax


# -- metric history -----------------------------------------------------------------------

def _evals_result(source) -> tuple[dict, int | None]:
    """({dataset: {metric: scores}}, best 0-based round or None) of a model, a fitted
    estimator (its evals_result_) or an evals_result dict."""
    if isinstance(source, dict):
        return source, None
    if hasattr(source, "evals_result_"):
        return source.evals_result_, getattr(source, "best_iteration_", None)
    model = _model(source, "model_or_evals_result")
    if not model.eval_history:
        return {}, None
    metric = None if model.config is None else model.config.resolved_metric
    name = getattr(metric, "name", "metric")  # a custom metric (a callable) names itself only when called
    return {"valid": {name: list(model.eval_history)}}, model.best_iteration


def plot_metric(model_or_evals_result, metric: str | None = None, dataset_names: list[str] | None = None,
                title: str | None = None, ax=None):
    """A metric's score per boosting round, one line per evaluated dataset.

    Parameters
    ----------
    model_or_evals_result : GBDTModel, fitted boosters estimator or dict
        A model trained with a ``val_set`` (its recorded validation scores), an
        estimator fitted with ``eval_set`` (its ``evals_result_``), or such a dict:
        ``{dataset_name: {metric_name: [score per round]}}``.
    metric : str, optional
        The metric to plot; the first one recorded when None.
    dataset_names : list of str, optional
        The datasets to plot (all when None).
    title : str, optional
        The axes' title (default: "Metric during training").
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from boosters.plotting import plot_metric
    >>> history = {"train": {"rmse": [1.0, 0.7, 0.5]}, "valid": {"rmse": [1.1, 0.8, 0.75]}}
    >>> ax = plot_metric(history)
    >>> [line.get_label() for line in ax.get_lines()], ax.get_ylabel()
    (['train', 'valid'], 'rmse')
    """
    evals, best = _evals_result(model_or_evals_result)
    if not isinstance(evals, dict) or not all(isinstance(v, dict) for v in evals.values()):
        raise TypeError("model_or_evals_result: a dict must map dataset names to {metric name: scores}")
    names = list(evals) if dataset_names is None else list(dataset_names)
    missing = [n for n in names if n not in evals]
    if missing:
        raise ValueError(f"dataset_names: {missing} not among the recorded datasets {list(evals)}")
    if not names or not any(evals[n] for n in names):
        raise ValueError("model_or_evals_result has no evaluation results: train with a val_set "
                         "(or fit with eval_set)")
    recorded = [m for n in names for m in evals[n]]
    metric = recorded[0] if metric is None else metric
    if metric not in recorded:
        raise ValueError(f"metric {metric!r} was not recorded; recorded: {sorted(set(recorded))}")
    ax = _axes(ax, (6.4, 4.0))
    for name in names:
        if metric in evals[name]:
            scores = np.asarray(evals[name][metric], dtype=np.float64)
            ax.plot(np.arange(1, len(scores) + 1), scores, label=name)
    if best is not None:
        ax.axvline(best + 1, color="grey", linestyle="--", linewidth=1, label="_best iteration")
    ax.set_xlabel("Iterations")
    ax.set_ylabel(metric)
    ax.set_title(title if title is not None else "Metric during training")
    ax.legend()
    ax.grid(True, alpha=0.3)
    return ax


# -- one tree -----------------------------------------------------------------------------

def _tree_layout(tree) -> tuple[np.ndarray, np.ndarray]:
    """x, y of every node: leaves one unit apart, left to right; a split centred over its
    children; y = -depth."""
    x = np.zeros(tree.n_nodes)
    y = np.zeros(tree.n_nodes)
    order, stack = [], [0]
    while stack:  # pre-order, left first
        node = stack.pop()
        order.append(node)
        if tree.split_feature[node] >= 0:
            y[tree.left_child[node]] = y[tree.right_child[node]] = y[node] - 1
            stack += [tree.right_child[node], tree.left_child[node]]
    next_leaf = 0
    for node in order:
        if tree.split_feature[node] < 0:
            x[node] = next_leaf
            next_leaf += 1
    for node in reversed(order):  # children before parents
        if tree.split_feature[node] >= 0:
            x[node] = (x[tree.left_child[node]] + x[tree.right_child[node]]) / 2
    return x, y


def _node_label(model: GBDTModel, tree, node: int, precision: int, show_info: tuple, max_categories: int) -> str:
    feature = tree.split_feature[node]
    if feature < 0:
        lines = [f"leaf {node}: {tree.value[node]:.{precision}g}"]
    else:
        name = feature_label(feature, model.feature_names)
        if tree.category_set[node] >= 0:
            values = split_categories(tree, node, model.categories.get(int(feature)))
            shown = ", ".join(str(v) for v in values[:max_categories])
            more = f", ... (+{len(values) - max_categories})" if len(values) > max_categories else ""
            lines = [f"{name} in {{{shown}{more}}}"]
        else:
            lines = [f"{name} <= {tree.threshold[node]:.{precision}g}"]
        if "gain" in show_info:
            lines.append(f"gain: {tree.gain[node]:.{precision}g}")
    if "cover" in show_info:
        lines.append(f"cover: {tree.cover[node]:.{precision}g}")
    if "count" in show_info:
        lines.append(f"count: {tree.n_samples[node]}")
    return "\n".join(lines)


TREE_INFO = ("gain", "cover", "count")


def plot_tree(model, tree_index: int = 0, show_info=("count",), precision: int = 3, max_categories: int = 8,
              ax=None):
    """Draw one tree: split conditions in the inner boxes, values in the leaves.

    A row goes to the "yes" child when the condition holds (``x <= threshold``, or
    ``x in {categories}`` for a categorical split); the edge marked "missing" is where
    a missing value goes. The node boxes are texts with gid "node" (in node order), the
    edge labels texts with gid "edge".

    Parameters
    ----------
    model : GBDTModel or fitted boosters estimator
        The model whose tree to draw.
    tree_index : int, default 0
        The tree, in boosting order (``model.trees[tree_index]``; -1: the last).
    show_info : sequence of str, default ("count",)
        Extra lines per box among "gain" (splits only), "cover" and "count".
    precision : int, default 3
        Significant digits of thresholds, values and the extra lines.
    max_categories : int, default 8
        A categorical split lists at most this many categories, then "... (+n)".
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure sized to the tree when None.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np, boosters as bst
    >>> from boosters.plotting import plot_tree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = 2 * X[:, 0] + X[:, 1]
    >>> model = bst.GBDTModel.train(bst.Dataset(X, y, feature_names=["a", "b"]),
    ...                             bst.GBDTConfig(n_estimators=1, max_depth=2))
    >>> ax = plot_tree(model, show_info=())
    >>> boxes = [t.get_text() for t in ax.texts if t.get_gid() == "node"]  # one per node, root first
    >>> len(boxes), boxes[0]
    (7, 'a <= -0.0765')
    """
    model = _model(model)
    tree_index = _check_tree_args(model, tree_index, show_info)
    tree = model.trees[tree_index]
    x, y = _tree_layout(tree)
    n_leaves, depth = int(x.max()) + 1, int(-y.min())
    ax = _axes(ax, (min(2.0 + 1.6 * n_leaves, 40.0), 1.2 + 1.3 * (depth + 1)))
    for node in np.flatnonzero(tree.split_feature >= 0).tolist():
        for child, answer, missing in ((tree.left_child[node], "yes", tree.default_left[node]),
                                       (tree.right_child[node], "no", not tree.default_left[node])):
            ax.plot([x[node], x[child]], [y[node], y[child]], color="grey", linewidth=1, zorder=1)
            ax.text((x[node] + x[child]) / 2, (y[node] + y[child]) / 2, answer + (", missing" if missing else ""),
                    ha="center", va="center", fontsize="x-small", color="dimgrey", zorder=2,
                    backgroundcolor="white", gid="edge")
    for node in range(tree.n_nodes):
        leaf = tree.split_feature[node] < 0
        ax.text(x[node], y[node], _node_label(model, tree, node, precision, tuple(show_info), max_categories),
                ha="center", va="center", fontsize="small", zorder=3, gid="node",
                bbox=dict(boxstyle="round,pad=0.4", facecolor="#dff0d8" if leaf else "#e8eef7",
                          edgecolor="#5b8f4b" if leaf else "#4c72b0"))
    ax.set_xlim(-0.7, n_leaves - 0.3)
    ax.set_ylim(-depth - 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(f"Tree {tree_index}")
    return ax


def _check_tree_args(model: GBDTModel, tree_index, show_info) -> int:
    """The tree's index in [0, n_trees) (a negative one counts from the last tree, as in
    ``model.trees[-1]``), after checking both arguments."""
    n = model.n_trees
    if isinstance(tree_index, bool) or not isinstance(tree_index, (int, np.integer)) or not -n <= tree_index < n:
        raise ValueError(f"tree_index must be an int in [-{n}, {n}) (negative: counted from the last tree), "
                         f"got {tree_index!r}")
    unknown = [s for s in show_info if s not in TREE_INFO]
    if unknown:
        raise ValueError(f"show_info: unknown {unknown}; choose among {list(TREE_INFO)}")
    return int(tree_index) % n


def to_graphviz(model, tree_index: int = 0, show_info=("count",), precision: int = 3, max_categories: int = 8):
    """One tree as a graphviz graph (the labels of `plot_tree`), for rendering with
    graphviz's ``dot`` (``graph.render(...)``, or shown inline in a notebook).

    Parameters
    ----------
    model : GBDTModel or fitted boosters estimator
        The model whose tree to draw.
    tree_index : int, default 0
        The tree, in boosting order (``model.trees[tree_index]``; -1: the last).
    show_info : sequence of str, default ("count",)
        Extra lines per node among "gain", "cover" and "count".
    precision : int, default 3
        Significant digits of thresholds, values and the extra lines.
    max_categories : int, default 8
        A categorical split lists at most this many categories.

    Returns
    -------
    graphviz.Digraph
        Nodes named by their index in the tree; edges labelled "yes" / "no" (and
        "missing" where a missing value goes).

    Examples
    --------
    >>> import numpy as np, boosters as bst
    >>> from boosters.plotting import to_graphviz
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = 2 * X[:, 0] + X[:, 1]
    >>> model = bst.GBDTModel.train(bst.Dataset(X, y), bst.GBDTConfig(n_estimators=1, max_depth=1))
    >>> graph = to_graphviz(model, show_info=())
    >>> [line.strip() for line in graph.body]  # doctest: +NORMALIZE_WHITESPACE
    ['0 [label="f0 <= -0.0765" shape=box style=rounded]',
     '1 [label="leaf 1: -0.0793" fillcolor="#dff0d8" shape=box style="rounded,filled"]',
     '2 [label="leaf 2: 0.0842" fillcolor="#dff0d8" shape=box style="rounded,filled"]',
     '0 -> 1 [label=yes]', '0 -> 2 [label="no, missing"]']
    """
    try:
        import graphviz
    except ImportError as exc:
        raise ImportError("to_graphviz needs the graphviz package: pip install 'boosters[plot]'") from exc
    model = _model(model)
    tree_index = _check_tree_args(model, tree_index, show_info)
    tree = model.trees[tree_index]
    graph = graphviz.Digraph(name=f"tree {tree_index}")
    for node in range(tree.n_nodes):
        label = _node_label(model, tree, node, precision, tuple(show_info), max_categories)
        if tree.split_feature[node] < 0:
            graph.node(str(node), label, shape="box", style="rounded,filled", fillcolor="#dff0d8")
        else:
            graph.node(str(node), label, shape="box", style="rounded")
    for node in np.flatnonzero(tree.split_feature >= 0).tolist():
        left_missing = bool(tree.default_left[node])
        graph.edge(str(node), str(tree.left_child[node]), "yes, missing" if left_missing else "yes")
        graph.edge(str(node), str(tree.right_child[node]), "no" if left_missing else "no, missing")
    return graph


# -- SHAP summary -------------------------------------------------------------------------

def _colour_values(X) -> tuple[np.ndarray, list[str] | None]:
    """X as float columns for the colours and its column names when it is a frame
    (pandas, polars, pyarrow: read through `boosters.data.frames`, as training reads them)."""
    frame = as_frame(X)
    if frame is None:
        if is_sparse(X):
            X = X.toarray()
        return np.asarray(X, dtype=np.float64), None
    columns = [_colour_column(frame.column(j), frame.shape[0]) for j in range(frame.shape[1])]
    values = np.column_stack(columns) if columns else np.zeros((frame.shape[0], 0))
    return values, frame.names


def _colour_column(column, n_rows: int) -> np.ndarray:
    """A numeric column's values (missing = NaN), a categorical column's category ranks
    (missing = NaN), NaN (grey) for anything else (text)."""
    if column.numeric:
        return column.floats(np.float64)
    if not column.categorical:
        return np.full(n_rows, np.nan)
    codes, categories, declared = column.encoded()
    if not declared and len(categories):
        # an arbitrary order (polars Categorical, Arrow dictionaries: first seen or hashed)
        # would change the colours from run to run: rank the categories by value instead
        try:
            codes = np.where(codes < 0, -1, np.argsort(np.argsort(categories, kind="stable"))[codes])
        except TypeError:  # values that do not sort (mixed types): keep the frame's order
            pass
    return np.where(codes < 0, np.nan, codes.astype(np.float64))


def _beeswarm_offsets(values: np.ndarray, n_bins: int = 100, width: float = 0.4) -> np.ndarray:
    """Vertical offsets that spread points of similar value apart: within each of
    `n_bins` value bins, points alternate above and below the line, the widest bin
    reaching +-width."""
    if len(values) == 0:
        return np.zeros(0)
    lo, hi = values.min(), values.max()
    bins = np.zeros(len(values), dtype=np.int64) if hi == lo else np.round((values - lo) / (hi - lo) * n_bins).astype(np.int64)
    order = np.argsort(bins, kind="stable")
    sorted_bins = bins[order]
    first = np.searchsorted(sorted_bins, sorted_bins, side="left")
    rank = np.arange(len(values)) - first  # position within its bin
    offset = np.ceil(rank / 2) * np.where(rank % 2 == 1, 1.0, -1.0)
    out = np.empty(len(values))
    out[order] = offset
    peak = np.abs(out).max()
    return out * (width / peak) if peak > 0 else out


def plot_shap_summary(shap_values, X, feature_names: list[str] | None = None, max_display: int = 20,
                      cmap: str = "coolwarm", ax=None):
    """A beeswarm summary of SHAP values: one row per feature (most important, by mean
    absolute SHAP value, at the top), one point per data row at its SHAP value, coloured
    by the feature's value (missing or non-numeric values in grey).

    Parameters
    ----------
    shap_values : array of shape (n_rows, n_features) or (n_rows, n_features + 1)
        One output's SHAP values; a last bias column (``model.shap_values(X)``) is
        dropped. For softmax, pass one class: ``shap_values[:, k]``.
    X : array-like, scipy.sparse matrix or frame of shape (n_rows, n_features)
        The rows the SHAP values explain, for the colours (and the names of a frame: a
        pandas or polars DataFrame, a pyarrow Table). Numeric columns colour by value,
        categorical ones by category (declared order, else sorted), text columns grey.
    feature_names : list of str, optional
        Names of the features (default: X's column names, else "f0", "f1", ...).
    max_display : int, default 20
        Show the most important features only.
    cmap : str, default "coolwarm"
        Colour map from low (first colour) to high feature values.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from boosters.plotting import plot_shap_summary
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> shap_values = np.column_stack([2 * X[:, 0], 0.1 * X[:, 1], -X[:, 2]])
    >>> ax = plot_shap_summary(shap_values, X, feature_names=["a", "b", "c"])
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['b', 'c', 'a']
    """
    shap_values = np.asarray(shap_values, dtype=np.float64)
    if shap_values.ndim != 2:
        raise ValueError(f"shap_values must be 2-D (n_rows, n_features[+1]), got shape {shap_values.shape}; "
                         "for softmax pass one class's values, shap_values[:, k]")
    if not np.all(np.isfinite(shap_values)):
        raise ValueError("shap_values must be finite (SHAP values of a model are)")
    n_rows = shap_values.shape[0]
    values, names = _colour_values(X)
    if values.ndim != 2 or values.shape[0] != n_rows:
        raise ValueError(f"X must be 2-D with one row per row of shap_values ({n_rows}), got shape {values.shape}")
    if shap_values.shape[1] == values.shape[1] + 1:
        shap_values = shap_values[:, :-1]  # the bias column
    if values.shape[1] != shap_values.shape[1]:
        raise ValueError(f"X must be 2-D with {shap_values.shape[1]} columns (one per SHAP value), "
                         f"got shape {values.shape}")
    names = feature_names if feature_names is not None else names
    names = [f"f{i}" for i in range(values.shape[1])] if names is None else list(names)
    if len(names) != values.shape[1]:
        raise ValueError(f"feature_names must have {values.shape[1]} names, got {len(names)}")
    if not isinstance(max_display, (int, np.integer)) or max_display < 1:
        raise ValueError(f"max_display must be a positive int, got {max_display!r}")
    plt = _pyplot()
    colours = plt.get_cmap(cmap)
    order = np.argsort(-np.abs(shap_values).mean(axis=0), kind="stable")[:max_display][::-1]
    ax = _axes(ax, (7.0, 0.45 * len(order) + 1.5))
    for row, f in enumerate(order):
        v = values[:, f]
        finite = np.isfinite(v)
        lo, hi = (np.nanpercentile(v[finite], [5, 95]) if finite.any() else (0.0, 1.0))
        scaled = np.clip((v - lo) / (hi - lo), 0, 1) if hi > lo else np.full(n_rows, 0.5)
        rgba = colours(np.where(finite, scaled, 0.5))
        rgba[~finite] = (0.6, 0.6, 0.6, 1.0)
        ax.scatter(shap_values[:, f], row + _beeswarm_offsets(shap_values[:, f]), c=rgba, s=10,
                   linewidths=0, alpha=0.8, rasterized=n_rows > 2000)
    ax.axvline(0, color="grey", linewidth=0.8, zorder=0)
    ax.set_yticks(np.arange(len(order)), [names[f] for f in order])
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.set_xlabel("SHAP value (impact on the model output)")
    mappable = plt.cm.ScalarMappable(cmap=colours)
    bar = ax.figure.colorbar(mappable, ax=ax, ticks=[0, 1], aspect=40, pad=0.02)
    bar.ax.set_yticklabels(["Low", "High"])
    bar.set_label("Feature value")
    return ax
