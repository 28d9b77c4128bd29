"""trees_to_dataframe: one row per node, every column read back against the tree arrays."""

import numpy as np
import pandas as pd
import pytest

import boosters as bst
from boosters.explain.tree_table import COLUMNS


@pytest.fixture(scope="module")
def frame_model():
    rng = np.random.default_rng(0)
    n = 600
    colour = rng.choice(["red", "green", "blue", "grey", "pink", "teal"], n)
    X = pd.DataFrame({"size": rng.normal(size=n), "colour": pd.Categorical(colour),
                      "age": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n))})
    y = X["size"] + np.isin(colour, ["red", "teal", "grey"]) * 2.0 + 0.5 * X["age"].fillna(0)
    # every row: a colour's ~100 rows reach min_data_per_group (100), so the root splits colours
    cfg = bst.GBDTConfig(n_estimators=6, max_depth=3, max_onehot_cats=1, subsample=1.0)
    return bst.GBDTModel.train(bst.Dataset(X, y.to_numpy()), cfg), X


def test_one_row_per_node_with_the_tree_arrays(frame_model):
    model, _ = frame_model
    df = model.trees_to_dataframe()
    assert tuple(df.columns) == COLUMNS
    assert len(df) == sum(t.n_nodes for t in model.trees)
    for t, tree in enumerate(model.trees):
        rows = df[df.tree_index == t]
        assert rows.node_index.tolist() == list(range(tree.n_nodes))
        split = tree.split_feature >= 0
        assert rows.split_feature.isna().tolist() == (~split).tolist()
        assert rows.split_feature[split].tolist() == [model.feature_names[f] for f in tree.split_feature[split]]
        np.testing.assert_array_equal(rows.value, tree.value)
        np.testing.assert_array_equal(rows.cover, tree.cover)
        np.testing.assert_array_equal(rows["count"], tree.n_samples)
        np.testing.assert_array_equal(rows.split_gain[split], tree.gain[split])
        assert rows.split_gain[~split].isna().all() and rows.left_child[~split].isna().all()
        np.testing.assert_array_equal(rows.left_child[split].astype(int), tree.left_child[split])
        np.testing.assert_array_equal(rows.right_child[split].astype(int), tree.right_child[split])
        assert rows.missing_direction[split].tolist() == ["left" if d else "right" for d in tree.default_left[split]]
        assert rows.node_depth.max() == tree.depth()


def test_parents_children_and_depths_agree(frame_model):
    model, _ = frame_model
    df = model.trees_to_dataframe().set_index(["tree_index", "node_index"])
    for (t, node), row in df.iterrows():
        if node == 0:
            assert pd.isna(row.parent_index) and row.node_depth == 0
        else:
            parent = df.loc[(t, int(row.parent_index))]
            assert node in (parent.left_child, parent.right_child)
            assert row.node_depth == parent.node_depth + 1
        if row.decision_type is not None and not pd.isna(row.decision_type):
            # children split the node's rows between them
            left, right = df.loc[(t, int(row.left_child))], df.loc[(t, int(row.right_child))]
            assert left["count"] + right["count"] == row["count"]


def test_categorical_splits_list_their_category_values(frame_model):
    model, X = frame_model
    df = model.trees_to_dataframe()
    cat = df[df.decision_type == "in"]
    assert len(cat) > 0 and set(cat.split_feature) == {"colour"}
    assert cat.threshold.isna().all()
    numeric = df[df.decision_type == "<="]
    assert numeric.categories.isna().all() and numeric.threshold.notna().all()
    known = set(X["colour"].cat.categories)
    for values in cat.categories:
        assert values and set(values) <= known
    # the root split of the first tree separates the colours that add 2 from the others
    first = cat[cat.tree_index == 0]
    assert {frozenset(v) for v in first.categories} & {frozenset({"red", "teal", "grey"}),
                                                        frozenset({"green", "blue", "pink"})}


def test_leaf_rows_are_what_predict_leaf_returns(frame_model):
    model, X = frame_model
    df = model.trees_to_dataframe().set_index(["tree_index", "node_index"])
    leaves = model.predict_leaf(X.iloc[:50])
    values = np.array([[df.loc[(t, leaf), "value"] for t, leaf in enumerate(row)] for row in leaves])
    assert df.loc[[(t, leaf) for t, leaf in enumerate(leaves[0])], "split_feature"].isna().all()
    np.testing.assert_allclose(values.sum(axis=1) + model.forest.base_scores[0], model.predict_raw(X.iloc[:50]),
                               rtol=1e-12, atol=1e-12)


def test_model_without_names_and_on_codes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    X[:, 1] = rng.integers(0, 8, 300)
    y = X[:, 0] + (X[:, 1] % 2) * 3
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[1]),
                                bst.GBDTConfig(n_estimators=2, max_depth=2, max_onehot_cats=1))
    df = model.trees_to_dataframe()
    assert set(df.split_feature.dropna()) <= {"f0", "f1"}
    cat = df[df.decision_type == "in"]
    assert len(cat) > 0
    for values in cat.categories:  # integer codes, as trained
        assert all(isinstance(v, int) and 0 <= v < 8 for v in values)
    # the root split keeps odd and even codes apart (y jumps by 3 between them)
    assert cat.node_index.iloc[0] == 0
    root = set(cat.categories.iloc[0])
    assert root <= {0, 2, 4, 6} or root <= {1, 3, 5, 7}
