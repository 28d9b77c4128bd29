"""boosters.plotting: each plot rendered to PNG with Agg, and its drawn elements (bars,
tick labels, lines, boxes, points) checked against the model they show."""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402
import pyarrow as pa  # noqa: E402
import pytest  # noqa: E402

import boosters as bst  # noqa: E402
from boosters.plotting import plot_importance, plot_metric, plot_shap_summary, plot_tree, to_graphviz  # noqa: E402
from boosters.sklearn import GBDTRegressor  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def render(ax, tmp_path) -> None:
    """Draw the figure to a PNG file, as a user saving it would."""
    path = tmp_path / "plot.png"
    ax.figure.savefig(path, dpi=50)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def frame_model():
    rng = np.random.default_rng(0)
    n = 800
    colour = rng.choice(["red", "green", "blue", "grey", "pink", "teal"], n)
    X = pd.DataFrame({"size": rng.normal(size=n), "colour": pd.Categorical(colour),
                      "age": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n)),
                      "constant": np.ones(n)})
    y = (X["size"] + np.isin(colour, ["red", "teal", "grey"]) * 2.0 + 0.5 * X["age"].fillna(0)).to_numpy()
    cfg = bst.GBDTConfig(n_estimators=30, max_depth=3, learning_rate=0.2, max_onehot_cats=1,
                         early_stopping_rounds=5)
    model = bst.GBDTModel.train(bst.Dataset(X[:600], y[:600]), cfg, val_set=bst.Dataset(X[600:], y[600:]))
    return model, X


# -- plot_importance ----------------------------------------------------------------------

def tick_labels(ax, axis="y"):
    return [t.get_text() for t in (ax.get_yticklabels() if axis == "y" else ax.get_xticklabels())]


@pytest.mark.parametrize("kind", ["split", "gain", "cover", "average_gain", "average_cover"])
def test_importance_bars_are_the_importances_sorted(frame_model, kind, tmp_path):
    model, X = frame_model
    ax = plot_importance(model, kind)
    render(ax, tmp_path)
    importance = model.feature_importance(kind)
    used = np.flatnonzero(importance > 0)
    assert len(used) == 3  # the constant feature is never split on, so it is left out
    bars = ax.patches
    assert len(bars) == 3
    widths = [bar.get_width() for bar in bars]
    assert widths == sorted(widths)  # bottom to top: the largest at the top
    names = tick_labels(ax)
    np.testing.assert_allclose(widths, [importance[list(X.columns).index(n)] for n in names], rtol=1e-12)
    assert ax.get_xlabel() == f"Importance ({kind})"
    assert len(ax.texts) == 3  # the value beside each bar


def test_importance_limits_and_zero_features(frame_model):
    model, X = frame_model
    top = plot_importance(model, "gain", max_num_features=2)
    gain = model.feature_importance("gain")
    assert tick_labels(top) == [X.columns[f] for f in np.argsort(-gain)[:2][::-1]]
    every = plot_importance(model, bst.ImportanceType.Split, ignore_zero=False)
    assert len(every.patches) == 4 and tick_labels(every)[0] == "constant"  # zero: at the bottom
    assert every.patches[0].get_width() == 0


def test_importance_of_an_estimator_and_a_given_axes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    est = GBDTRegressor(n_estimators=5, max_depth=2).fit(X, X[:, 1])
    fig, ax = plt.subplots()
    assert plot_importance(est, "split", ax=ax) is ax
    assert tick_labels(ax)[-1] == "f1"  # no names: f<index>; the only informative feature on top
    assert len(fig.axes) == 1


def test_importance_errors(frame_model):
    model, _ = frame_model
    with pytest.raises(TypeError, match="model must be a boosters GBDTModel"):
        plot_importance(np.zeros(3))
    with pytest.raises(ValueError, match="importance_type"):
        plot_importance(model, "weight")
    with pytest.raises(ValueError, match="max_num_features"):
        plot_importance(model, max_num_features=0)


# -- plot_metric --------------------------------------------------------------------------

def test_metric_of_a_model_is_its_validation_history(frame_model, tmp_path):
    model, _ = frame_model
    ax = plot_metric(model)
    render(ax, tmp_path)
    lines = [line for line in ax.get_lines() if line.get_label() == "valid"]
    assert len(lines) == 1
    history = np.asarray(model.eval_history)
    np.testing.assert_array_equal(lines[0].get_ydata(), history)
    np.testing.assert_array_equal(lines[0].get_xdata(), np.arange(1, len(history) + 1))
    assert ax.get_ylabel() == "rmse" and ax.get_xlabel() == "Iterations"
    best = [line for line in ax.get_lines() if line.get_label() == "_best iteration"]
    assert len(best) == 1 and best[0].get_xdata()[0] == model.best_iteration + 1
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["valid"]


def test_metric_of_an_evals_result_dict():
    evals = {"train": {"rmse": [3.0, 2.0, 1.5], "mae": [2.0, 1.0, 0.9]},
             "valid": {"rmse": [3.5, 2.5, 2.4], "mae": [2.5, 1.5, 1.4]}}
    ax = plot_metric(evals)
    assert [line.get_label() for line in ax.get_lines()] == ["train", "valid"]
    assert ax.get_ylabel() == "rmse"
    mae = plot_metric(evals, metric="mae", dataset_names=["valid"])
    assert len(mae.get_lines()) == 1
    np.testing.assert_array_equal(mae.get_lines()[0].get_ydata(), [2.5, 1.5, 1.4])


def test_metric_of_an_estimator_fitted_with_an_eval_set():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    est = GBDTRegressor(n_estimators=8, max_depth=2).fit(X[:200], X[:200, 0], eval_set=[(X[200:], X[200:, 0])])
    ax = plot_metric(est)
    (name, scores), = ((n, s) for n, d in est.evals_result_.items() for s in d.values())
    lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in lines] == [name]
    np.testing.assert_array_equal(lines[0].get_ydata(), scores)


def test_metric_errors():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 2))
    no_history = bst.GBDTModel.train(bst.Dataset(X, X[:, 0]), bst.GBDTConfig(n_estimators=2))
    with pytest.raises(ValueError, match="no evaluation results: train with a val_set"):
        plot_metric(no_history)
    with pytest.raises(ValueError, match="metric 'auc' was not recorded"):
        plot_metric({"valid": {"rmse": [1.0]}}, metric="auc")
    with pytest.raises(ValueError, match="dataset_names"):
        plot_metric({"valid": {"rmse": [1.0]}}, dataset_names=["test"])
    with pytest.raises(TypeError, match="model_or_evals_result"):
        plot_metric({"valid": [1.0]})
    with pytest.raises(TypeError, match="model_or_evals_result must be a boosters GBDTModel"):
        plot_metric([1.0, 2.0])


# -- plot_tree ----------------------------------------------------------------------------

def texts(ax, gid):
    return [t for t in ax.texts if t.get_gid() == gid]


@pytest.mark.parametrize("tree_index", [0, 7, -1])
def test_tree_has_a_box_per_node_and_a_line_per_edge(frame_model, tree_index, tmp_path):
    model, _ = frame_model
    tree = model.trees[tree_index]
    ax = plot_tree(model, tree_index, show_info=("count",))
    render(ax, tmp_path)
    boxes = texts(ax, "node")
    n_splits = int(np.sum(tree.split_feature >= 0))
    assert len(boxes) == tree.n_nodes
    assert all(box.get_bbox_patch() is not None for box in boxes)
    assert len(ax.get_lines()) == tree.n_nodes - 1
    edges = [t.get_text() for t in texts(ax, "edge")]
    assert sorted(e.split(",")[0] for e in edges) == ["no"] * n_splits + ["yes"] * n_splits
    assert sum("missing" in e for e in edges) == n_splits  # one of each split's two edges
    for node, box in enumerate(boxes):
        lines = box.get_text().split("\n")
        assert lines[-1] == f"count: {tree.n_samples[node]}"
        if tree.split_feature[node] < 0:
            assert lines[0] == f"leaf {node}: {tree.value[node]:.3g}"
        x, y = box.get_position()
        if tree.split_feature[node] >= 0:  # children one level down, left child to the left
            left, right = boxes[tree.left_child[node]].get_position(), boxes[tree.right_child[node]].get_position()
            assert left[1] == right[1] == y - 1 and left[0] < x < right[0]


def test_tree_shows_numeric_thresholds_and_categorical_sets(frame_model):
    model, X = frame_model
    tree = model.trees[0]
    boxes = texts(plot_tree(model, 0, show_info=("gain", "cover"), max_categories=10), "node")
    seen_categorical = False
    for node in np.flatnonzero(tree.split_feature >= 0):
        first, gain, cover = boxes[node].get_text().split("\n")
        name = X.columns[tree.split_feature[node]]
        assert gain == f"gain: {tree.gain[node]:.3g}" and cover == f"cover: {tree.cover[node]:.3g}"
        if tree.category_set[node] >= 0:
            seen_categorical = True
            values = first.removeprefix(f"{name} in {{").removesuffix("}").split(", ")
            expected = [X["colour"].cat.categories[c] for c in tree.category_codes(node) if c < 6]
            assert values == expected
        else:
            assert first == f"{name} <= {tree.threshold[node]:.3g}"
    assert seen_categorical  # the colour effect is the strongest: the first tree splits on it


def test_tree_truncates_long_category_sets(frame_model):
    model, _ = frame_model
    tree = model.trees[0]
    node = int(np.flatnonzero(tree.category_set >= 0)[0])
    n_categories = len(model.categories[int(tree.split_feature[node])])
    n = int(np.sum(tree.category_codes(node) < n_categories))  # past them: the default direction's bits
    label = texts(plot_tree(model, 0, max_categories=1), "node")[node].get_text()
    assert label.split("\n")[0].endswith(f", ... (+{n - 1})}}")


def test_graphviz_graph_has_the_nodes_and_edges_of_plot_tree(frame_model):
    model, _ = frame_model
    tree = model.trees[3]
    graph = to_graphviz(model, 3, show_info=("gain",))
    boxes = [t.get_text() for t in texts(plot_tree(model, 3, show_info=("gain",)), "node")]
    nodes = [line for line in graph.body if "->" not in line]
    edges = [line.strip() for line in graph.body if "->" in line]
    assert len(nodes) == tree.n_nodes and len(edges) == tree.n_nodes - 1
    for node, line in enumerate(nodes):  # the same labels as the matplotlib drawing
        assert line.strip().startswith(f"{node} [label=\"{boxes[node]}\"")
    for node in np.flatnonzero(tree.split_feature >= 0):
        left = next(e for e in edges if e.startswith(f"{node} -> {tree.left_child[node]} "))
        right = next(e for e in edges if e.startswith(f"{node} -> {tree.right_child[node]} "))
        assert ("yes" in left) and ("no" in right)
        assert ("missing" in left) == bool(tree.default_left[node]) != ("missing" in right)


def test_tree_errors(frame_model):
    model, _ = frame_model
    with pytest.raises(ValueError, match="tree_index must be an int in"):
        plot_tree(model, model.n_trees)
    with pytest.raises(ValueError, match="show_info"):
        plot_tree(model, 0, show_info=("depth",))
    with pytest.raises(ValueError, match="tree_index must be an int in"):
        to_graphviz(model, 1.5)
    for index in (-model.n_trees - 1, True, np.bool_(False)):  # out of [-n, n), or a bool
        with pytest.raises(ValueError, match=rf"tree_index must be an int in \[-{model.n_trees}, {model.n_trees}\)"):
            plot_tree(model, index)
        with pytest.raises(ValueError, match=r"tree_index must be an int in"):
            to_graphviz(model, index)
    last = model.n_trees - 1  # a negative index counts from the last tree, as model.trees[-1]
    assert plot_tree(model, -1).get_title() == plot_tree(model, np.int64(last)).get_title() == f"Tree {last}"
    assert to_graphviz(model, -1).name == f"tree {last}"


# -- plot_shap_summary --------------------------------------------------------------------

def test_shap_summary_rows_points_and_colours(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    X[:10, 2] = np.nan
    shap_values = np.column_stack([0.1 * X[:, 0], 3 * X[:, 1], 2 * np.nan_to_num(X[:, 2]), -X[:, 3], np.full(150, 0.5)])
    ax = plot_shap_summary(shap_values, X, feature_names=["a", "b", "c", "d"], max_display=3)
    render(ax, tmp_path)
    # top 3 by mean |SHAP| (b 2.4, c 1.5, d 0.8, a 0.08; the bias column dropped), most important at the top
    assert tick_labels(ax) == ["d", "c", "b"]
    points = ax.collections
    assert len(points) == 3
    for row, (collection, f) in enumerate(zip(points, [3, 2, 1])):
        offsets = collection.get_offsets()
        np.testing.assert_array_equal(offsets[:, 0], shap_values[:, f])  # x: the SHAP values
        assert np.all(np.abs(offsets[:, 1] - row) <= 0.4 + 1e-12)       # y: jittered around its row
        assert np.ptp(offsets[:, 1]) > 0.1                                # ... and spread out
        colours = collection.get_facecolors()
        assert len(colours) == 150
    grey = points[1].get_facecolors()  # feature c: its missing values grey, the others not
    assert np.allclose(grey[:10, :3], 0.6) and not np.any(np.all(np.isclose(grey[10:, :3], 0.6), axis=1))
    # colour follows the value: the colour map at the value scaled from its 5th (0) to 95th (1) percentile
    lo, hi = np.percentile(X[:, 1], [5, 95])
    expected = matplotlib.colormaps["coolwarm"](np.clip((X[:, 1] - lo) / (hi - lo), 0, 1))
    np.testing.assert_allclose(points[2].get_facecolors()[:, :3], expected[:, :3], atol=1e-12)
    colourbar = ax.figure.axes[1]
    assert colourbar.get_ylabel() == "Feature value"
    assert [t.get_text() for t in colourbar.get_yticklabels()] == ["Low", "High"]


def test_shap_summary_of_a_frame_uses_its_names_and_category_codes():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"x": rng.normal(size=60), "c": pd.Categorical(rng.choice(["u", "v"], 60)),
                      "s": ["text"] * 60})
    shap_values = np.column_stack([X["x"], (X["c"] == "v") * 1.0, np.zeros(60)])
    ax = plot_shap_summary(shap_values, X)
    assert tick_labels(ax) == ["s", "c", "x"]
    text_colours = ax.collections[0].get_facecolors()
    assert np.allclose(text_colours[:, :3], 0.6)  # non-numeric values: grey


def _columns_frame(library: str, size, colour, text):
    """A frame of `library` with a numeric column (missing where size is NaN), a
    categorical one and a text one."""
    size_or_null = [None if np.isnan(v) else float(v) for v in size]
    if library == "pandas":
        return pd.DataFrame({"size": size, "colour": pd.Categorical(colour), "text": text})
    if library == "polars":
        return pl.DataFrame({"size": pl.Series(size_or_null, dtype=pl.Float64),
                             "colour": pl.Series(colour, dtype=pl.Categorical), "text": text})
    return pa.table({"size": pa.array(size_or_null, pa.float64()),
                     "colour": pa.array(colour).dictionary_encode(), "text": text})


@pytest.mark.parametrize("library", ["pandas", "polars", "pyarrow"])
def test_shap_summary_of_any_frame_colours_by_value_code_or_grey(library):
    rng = np.random.default_rng(2)
    size = rng.normal(size=40)
    size[:4] = np.nan
    colour = ["v"] + list(rng.choice(["u", "v"], 39))  # "v" seen first; undeclared order: sorted, u low
    X = _columns_frame(library, size, colour, ["text"] * 40)
    shap_values = np.column_stack([3 * np.nan_to_num(size), np.where(np.array(colour) == "v", 2.0, -2.0),
                                   np.full(40, 0.1), np.zeros(40)])  # with the bias column
    ax = plot_shap_summary(shap_values, X)
    assert tick_labels(ax) == ["text", "size", "colour"]  # the frame's names, by mean |SHAP|
    text, numeric, categorical = (c.get_facecolors()[:, :3] for c in ax.collections)
    cmap = matplotlib.colormaps["coolwarm"]
    assert np.allclose(text, 0.6)  # text: grey
    assert np.allclose(numeric[:4], 0.6) and not np.any(np.all(np.isclose(numeric[4:], 0.6), axis=1))
    lo, hi = np.percentile(size[4:], [5, 95])
    np.testing.assert_allclose(numeric[4:], cmap(np.clip((size[4:] - lo) / (hi - lo), 0, 1))[:, :3], atol=1e-12)
    codes = (np.array(colour) == "v").astype(float)  # the categories' ranks, u = 0 (low), v = 1 (high)
    np.testing.assert_allclose(categorical, cmap(codes)[:, :3], atol=1e-12)


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_shap_summary_colours_categories_in_their_declared_order(library):
    # declared order w, v, u: w low (code 0, the 5th percentile), u high (code 2, the 95th)
    colour = ["u", "v", "u", "w", None, "v"] * 10
    X = (pd.DataFrame({"c": pd.Categorical(colour, categories=["w", "v", "u"])}) if library == "pandas"
         else pl.DataFrame({"c": pl.Series(colour, dtype=pl.Enum(["w", "v", "u"]))}))
    ax = plot_shap_summary(np.arange(60.0).reshape(60, 1), X)
    expected = matplotlib.colormaps["coolwarm"](np.tile([1.0, 0.5, 1.0, 0.0, 0.0, 0.5], 10))[:, :3]
    expected[4::6] = 0.6  # missing: grey
    np.testing.assert_allclose(ax.collections[0].get_facecolors()[:, :3], expected, atol=1e-12)


def test_shap_summary_errors():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="shap_values must be 2-D"):
        plot_shap_summary(np.zeros((5, 3, 3)), X)
    with pytest.raises(ValueError, match="one row per row of shap_values"):
        plot_shap_summary(np.zeros((4, 3)), X)
    with pytest.raises(ValueError, match="X must be 2-D with 4 columns"):
        plot_shap_summary(np.zeros((5, 4)), X)
    with pytest.raises(ValueError, match="finite"):
        plot_shap_summary(np.full((5, 2), np.nan), X)
    with pytest.raises(ValueError, match="feature_names must have 2 names"):
        plot_shap_summary(np.zeros((5, 2)), X, feature_names=["a"])
    with pytest.raises(ValueError, match="max_display"):
        plot_shap_summary(np.zeros((5, 2)), X, max_display=0)


def test_every_extra_an_import_error_names_exists():
    """`pip install 'boosters[name]'` in an ImportError (plotting's, trees_to_dataframe's
    pandas, ...) must name an extra of pyproject.toml, or pip installs nothing."""
    root = Path(__file__).resolve().parents[1]
    pyproject = (root / "pyproject.toml").read_text()
    section = pyproject.split("[project.optional-dependencies]")[1].split("\n[")[0]
    extras = set(re.findall(r"^([\w-]+)\s*=", section, flags=re.M))
    named = {m for path in (root / "boosters").rglob("*.py") for m in re.findall(r"boosters\[(\w+)\]", path.read_text())}
    assert {"plot", "pandas"} <= named
    assert named <= extras, f"extras named but not defined: {sorted(named - extras)}"
