"""The shap package the way users call it: ``shap.TreeExplainer(model.to_shap_trees())``
gives boosters' own exact SHAP values (shap computes them itself from the exported trees),
and ``model.shap_explanation(X)`` feeds shap's plots, categorical features included.

Tolerance: both sides run path-dependent TreeSHAP in float64 on the same float64
thresholds, leaf values and covers, adding the same terms in other orders: 1e-9."""

import ast
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import shap  # noqa: E402

import boosters as bst  # noqa: E402
from boosters.explain.shap_package import MISSING_CATEGORY  # noqa: E402
from boosters.model.ensemble import Ensemble  # noqa: E402
from boosters.model.forest import Forest  # noqa: E402
from boosters.sklearn import GBDTClassifier, GBDTRegressor  # noqa: E402

EXACT = dict(rtol=1e-9, atol=1e-9)


def features(seed=0, n=800, missing=0.15):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    signal = X[:, 0] + 2 * X[:, 1] * X[:, 2] + np.sin(X[:, 3])
    X[rng.random(X.shape) < missing] = np.nan
    return X, signal


def train(X, y, **params):
    cfg = bst.GBDTConfig(**{"n_estimators": 10, "max_depth": 5, "learning_rate": 0.3, **params})
    return bst.GBDTModel.train(bst.Dataset(X, y), cfg, n_threads=1)


LEAFWISE = {"growth_strategy": "leafwise", "n_leaves": 24, "max_depth": None}
GROWTH = pytest.mark.parametrize("growth", [{}, LEAFWISE], ids=["depthwise", "leafwise"])


def rows_on_thresholds(model, X):
    """X's first rows, with a few values set exactly on split thresholds (x == threshold
    goes left in both libraries), and a row with every value missing."""
    rows = X[:60].copy()
    tree = model.trees[0]
    for k, node in enumerate(np.flatnonzero(tree.split_feature >= 0)[:10]):
        rows[k, tree.split_feature[node]] = tree.threshold[node]
    rows[-1] = np.nan
    return rows


def assert_same_as_ours(explainer, model, rows):
    """shap's values and expected value equal our shap_values (groups moved last as shap has them)."""
    ours = model.shap_values(rows)
    ours = ours[:, None] if ours.ndim == 2 else ours  # (rows, groups, features + 1)
    theirs = np.asarray(explainer.shap_values(rows))
    theirs = theirs[..., None] if theirs.ndim == 2 else theirs  # (rows, features, groups)
    np.testing.assert_allclose(theirs, np.moveaxis(ours[:, :, :-1], 1, -1), **EXACT)
    np.testing.assert_allclose(np.ravel(explainer.expected_value), ours[0, :, -1], **EXACT)


# -- shap.TreeExplainer(model.to_shap_trees()) ---------------------------------------------

@GROWTH
def test_regression_with_missing_values_matches_ours(growth):
    X, signal = features()
    model = train(X, signal, **growth)
    defaults = np.concatenate([t.default_left[t.split_feature >= 0] for t in model.trees])
    assert defaults.min() == 0 and defaults.max() == 1  # both missing directions are under test
    rows = rows_on_thresholds(model, X)
    explainer = shap.TreeExplainer(model.to_shap_trees())
    assert_same_as_ours(explainer, model, rows)
    # shap's own traversal of the exported trees is our prediction: split rule, defaults
    np.testing.assert_allclose(explainer.model.predict(rows), model.predict_raw(rows), **EXACT)


def test_expected_value_is_the_base_score_plus_the_trees_mean():
    X, signal = features(seed=1)
    model = train(X, signal + 10.0)
    trees = model.to_shap_trees()
    np.testing.assert_array_equal(trees["base_offset"], model.forest.base_scores)
    explainer = shap.TreeExplainer(trees)
    # the trees' cover-weighted mean, computed here from the leaves
    mean = sum(np.sum(t.value * t.cover * (t.split_feature < 0)) / t.cover[0] for t in model.trees)
    np.testing.assert_allclose(np.ravel(explainer.expected_value), model.forest.base_scores + mean, **EXACT)


@GROWTH
def test_binary_raw_margins_match_ours(growth):
    X, signal = features(seed=2)
    model = train(X, (signal > 0).astype(float), objective=bst.Objective.logistic(), **growth)
    rows = rows_on_thresholds(model, X)
    explainer = shap.TreeExplainer(model.to_shap_trees())
    assert_same_as_ours(explainer, model, rows)
    explanation = explainer(rows)  # shap's own Explanation: margins
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values, model.predict_raw(rows),
                               **EXACT)


def test_binary_probability_output_with_background_data():
    """The logistic objective is told to shap: model_output="probability" (interventional,
    shap's own algorithm) sums to our probabilities."""
    X, signal = features(seed=3, missing=0.0)
    model = train(X, (signal > 0).astype(float), objective=bst.Objective.logistic(), n_estimators=5, max_depth=3)
    explainer = shap.TreeExplainer(model.to_shap_trees(), data=X[:100], model_output="probability")
    values = explainer.shap_values(X[:20])
    # shap gives nodes the background misses a weight of 1e-6 (shap 0.51): not exact, but
    # probabilities and margins differ by ~0.1 here
    np.testing.assert_allclose(values.sum(axis=1) + explainer.expected_value, model.predict(X[:20]), atol=1e-6)


@GROWTH
def test_multiclass_matches_ours_per_class(growth):
    X, signal = features(seed=4)
    y = np.digitize(signal, [-1.0, 1.0]).astype(float)
    model = train(X, y, objective=bst.Objective.softmax(3), n_estimators=6, **growth)
    rows = rows_on_thresholds(model, X)
    explainer = shap.TreeExplainer(model.to_shap_trees())
    assert np.asarray(explainer.shap_values(rows)).shape == (len(rows), 4, 3)
    assert_same_as_ours(explainer, model, rows)


def test_interaction_values_match_ours():
    X, signal = features(seed=5, n=500)
    model = train(X, signal, n_estimators=6)
    rows = rows_on_thresholds(model, X)[:25]
    theirs = shap.TreeExplainer(model.to_shap_trees()).shap_interaction_values(rows)
    np.testing.assert_allclose(theirs, model.shap_interaction_values(rows)[:, :-1, :-1], **EXACT)


def test_multiclass_interaction_values_match_ours():
    X, signal = features(seed=6, n=500)
    model = train(X, np.digitize(signal, [-0.5, 0.5]).astype(float), n_estimators=4, objective=bst.Objective.softmax(3))
    theirs = shap.TreeExplainer(model.to_shap_trees()).shap_interaction_values(X[:15])  # (rows, f, f, classes)
    ours = model.shap_interaction_values(X[:15])  # (rows, classes, f + 1, f + 1)
    np.testing.assert_allclose(theirs, np.moveaxis(ours[:, :, :-1, :-1], 1, -1), **EXACT)


def test_a_forest_without_trees_explains_as_its_base_score():
    model = bst.GBDTModel(Ensemble(Forest(1, np.array([0.25])), bst.Objective.squared(), n_features=3))
    explainer = shap.TreeExplainer(model.to_shap_trees())
    np.testing.assert_array_equal(explainer.shap_values(np.ones((2, 3))), 0.0)
    np.testing.assert_allclose(np.ravel(explainer.expected_value), [0.25])


# -- the estimators ----------------------------------------------------------------------

def test_regressor_routes_match_its_booster():
    X, signal = features(seed=7)
    est = GBDTRegressor(n_estimators=8, max_depth=4, n_threads=1).fit(X, signal)
    theirs = shap.TreeExplainer(est.to_shap_trees()).shap_values(X[:30])
    ours = est.booster_.shap_values(X[:30])
    np.testing.assert_allclose(theirs, ours[:, :-1], **EXACT)
    explanation = est.shap_explanation(X[:30])
    np.testing.assert_allclose(explanation.values, ours[:, :-1], **EXACT)
    np.testing.assert_allclose(explanation.base_values, ours[:, -1], **EXACT)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_routes_match_its_decision_function(n_classes):
    X, signal = features(seed=8)
    labels = np.array(["low", "mid", "high"])[:n_classes]
    y = labels[np.digitize(signal, [-1.0, 1.0][: n_classes - 1])]
    est = GBDTClassifier(n_estimators=6, max_depth=4, n_threads=1).fit(X, y)
    margins = est.decision_function(X[:30])
    explainer = shap.TreeExplainer(est.to_shap_trees())
    explained = explainer(X[:30])
    np.testing.assert_allclose(explained.values.sum(axis=1) + explained.base_values, margins, **EXACT)
    ours = est.shap_explanation(X[:30])
    np.testing.assert_allclose(ours.values, explained.values, **EXACT)
    np.testing.assert_allclose(ours.values.sum(axis=1) + ours.base_values, margins, **EXACT)


# -- model.shap_explanation(X): shap's plots from our values -------------------------------

def categorical_frame(seed=0, n=600):
    rng = np.random.default_rng(seed)
    colors = np.array(["red", "green", "blue", "amber", "violet"])
    color = colors[rng.integers(0, len(colors), n)]
    x, z = rng.normal(size=n), rng.normal(size=n)
    y = np.select([color == "red", color == "blue"], [2.0, -1.0], 0.5) + x * z
    frame = pd.DataFrame({"color": pd.Categorical(color), "x": x, "z": z})
    frame.loc[rng.random(n) < 0.05, "color"] = np.nan
    return frame, y


def categorical_model():
    frame, y = categorical_frame()
    model = bst.GBDTModel.train(bst.Dataset(frame, y), bst.GBDTConfig(n_estimators=8, max_depth=4), n_threads=1)
    assert model.categorical_features == [0] and any(np.any(t.category_set >= 0) for t in model.trees)
    return model, frame


def test_explanation_of_a_categorical_model_is_our_values_with_categories_to_show():
    model, frame = categorical_model()
    rows = frame.iloc[:40]
    explanation = model.shap_explanation(rows)
    ours = model.shap_values(rows)
    np.testing.assert_array_equal(explanation.values, ours[:, :-1])
    np.testing.assert_array_equal(explanation.base_values, ours[:, -1])
    assert explanation.feature_names == ["color", "x", "z"]
    codes = explanation.data[:, 0]  # what the trees read
    categories = list(model.categories[0])
    shown = [categories[int(c)] if c == c else None for c in codes]
    expected = [None if pd.isna(c) else c for c in rows["color"]]
    assert shown == expected
    display = [None if v == MISSING_CATEGORY else v for v in explanation.display_data[:, 0]]
    assert display == expected
    np.testing.assert_array_equal(explanation.data[:, 1:], rows[["x", "z"]].to_numpy())


def test_explanation_of_a_numeric_model_has_no_display_data_and_default_names():
    X, signal = features(seed=9)
    model = train(X, signal)
    explanation = model.shap_explanation(X[:10])
    assert explanation.display_data is None
    assert explanation.feature_names == ["f0", "f1", "f2", "f3"]
    np.testing.assert_array_equal(explanation.data, X[:10])


def test_plots_take_the_explanation_of_a_categorical_model():
    model, frame = categorical_model()
    explanation = model.shap_explanation(frame.iloc[:200])
    try:
        shap.plots.beeswarm(explanation, show=False)
        assert [t.get_text() for t in plt.gca().get_yticklabels()][-1] in {"color", "x", "z"}
        plt.close("all")
        shap.plots.waterfall(explanation[0], show=False)
        plt.close("all")
        # the categorical feature's axis is labelled with its categories (display_data), whichever
        # row shap draws first (it shuffles them with numpy's global generator): a row whose
        # category is missing too (half of these rows)
        missing = frame["color"].isna().to_numpy()
        rows = frame.iloc[np.r_[np.flatnonzero(missing)[:30], np.flatnonzero(~missing)[:30]]]
        half_missing = model.shap_explanation(rows)
        for seed in range(10):
            np.random.seed(seed)
            shap.plots.scatter(half_missing[:, "color"], show=False)
            labels = {t.get_text() for t in plt.gca().get_xticklabels()}
            # the missing rows' tick sits at code NaN, which matplotlib labels "" or drops
            assert set(model.categories[0]) <= labels <= set(model.categories[0]) | {MISSING_CATEGORY, ""}
            plt.close("all")
        plt.close("all")
        shap.plots.scatter(explanation[:, "x"], color=explanation[:, "z"], show=False)
    finally:
        plt.close("all")


def test_interaction_explanation_feeds_shap_interaction_plots():
    model, frame = categorical_model()
    rows = frame.iloc[:60]
    explanation = model.shap_explanation(rows, interactions=True)
    assert explanation.values.shape == (60, 3, 3)
    np.testing.assert_array_equal(explanation.values, model.shap_interaction_values(rows)[:, :-1, :-1])
    np.testing.assert_allclose(explanation.values.sum(axis=2), model.shap_values(rows)[:, :-1], **EXACT)
    try:
        shap.summary_plot(explanation.values, explanation.data, feature_names=explanation.feature_names, show=False)
        plt.close("all")
        shap.dependence_plot(("x", "z"), explanation.values, explanation.data,
                             feature_names=explanation.feature_names, show=False)
        assert plt.gca().get_xlabel() == "x"
    finally:
        plt.close("all")


def test_multiclass_explanation_has_the_classes_last():
    X, signal = features(seed=10)
    model = train(X, np.digitize(signal, [-1.0, 1.0]).astype(float), objective=bst.Objective.softmax(3),
                  n_estimators=4)
    explanation = model.shap_explanation(X[:20])
    assert explanation.values.shape == (20, 4, 3) and explanation.base_values.shape == (20, 3)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values, model.predict_raw(X[:20]),
                               **EXACT)
    try:
        shap.plots.beeswarm(explanation[:, :, 1], show=False)
    finally:
        plt.close("all")
    interactions = model.shap_explanation(X[:5], interactions=True)
    assert interactions.values.shape == (5, 4, 4, 3) and interactions.base_values.shape == (5, 3)


# -- refused -------------------------------------------------------------------------------

def test_a_categorical_model_is_refused_by_the_tree_route_with_the_way_out():
    model, _ = categorical_model()
    with pytest.raises(ValueError, match=r"categorical features \['color'\].*shap_explanation"):
        model.to_shap_trees()


def test_a_model_with_linear_leaves_is_refused_by_both_routes():
    X, signal = features(seed=11, missing=0.0)
    model = train(X, signal, linear_leaves=True, n_estimators=3)
    with pytest.raises(ValueError, match="linear leaves"):
        model.to_shap_trees()
    with pytest.raises(ValueError, match="linear leaves"):
        model.shap_explanation(X[:5])


def test_without_shap_the_explanation_names_the_extra(monkeypatch):
    X, signal = features(seed=12)
    model = train(X, signal, n_estimators=2)
    monkeypatch.setitem(sys.modules, "shap", None)  # import shap raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'boosters\[shap\]'"):
        model.shap_explanation(X[:5])
    assert model.to_shap_trees()["trees"]  # plain NumPy data: no shap needed to build it


def shap_imports_outside_functions(source: str) -> list[int]:
    """Line numbers of the imports of shap that run when the module is imported."""
    lines = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            names = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and not child.level:
                names = [child.module or ""]
            if not in_function and any(n == "shap" or n.startswith("shap.") for n in names):
                lines.append(child.lineno)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), False)
    return lines


def test_shap_is_imported_only_inside_the_functions_that_need_it():
    assert shap_imports_outside_functions("import shap\ndef f():\n    import shap\n") == [1]  # the check can fail
    package = Path(bst.__file__).parent
    found = {str(path.relative_to(package)): lines for path in sorted(package.rglob("*.py"))
             if (lines := shap_imports_outside_functions(path.read_text()))}
    assert found == {}
    assert "import shap" in (package / "explain" / "shap_package.py").read_text()  # the lazy import is there
