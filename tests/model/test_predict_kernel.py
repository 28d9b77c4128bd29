"""predict_forest (through Tree / Forest / predict_tree) against a naive traversal."""

import numpy as np
import pytest

from boosters.model._predict import predict_forest
from boosters.model.forest import Forest
from boosters.model import prediction
from boosters.model.prediction import predict_tree
from boosters.model.tree import Tree

from support.naive import naive_predict_forest, naive_predict_tree
from support.random_forests import make_X, make_forest, random_tree


@pytest.fixture(scope="module", params=[np.float32, np.float64], ids=["f32", "f64"])
def setup(request):
    rng = np.random.default_rng(40)
    X = make_X(rng, 1000 + 37, request.param)
    forest = make_forest(rng, X, 25, 3)
    ref = naive_predict_forest(forest.trees, forest.tree_group, forest.base_scores, 3, X)
    return X, forest, ref


def test_random_trees_have_depth_and_missing_values(setup):
    X, forest, _ = setup
    assert max(t.depth() for t in forest.trees) == 6
    assert np.isnan(X).any()
    assert sorted(set(forest.tree_group)) == [0, 1, 2]
    # rows land exactly on thresholds
    tree = forest.trees[0]
    internal = tree.split_feature >= 0
    hits = np.isin(X[:, tree.split_feature[internal]].astype(np.float64), tree.threshold[internal])
    assert hits.any()


def test_forest_matches_naive(setup):
    X, forest, ref = setup
    np.testing.assert_array_equal(forest.predict_margins(X, n_threads=1), ref)


@pytest.mark.parametrize("layout", ["F", "strided", "reversed", "readonly"])
def test_memory_layouts(setup, layout):
    X, forest, ref = setup
    if layout == "F":
        Xl = np.asfortranarray(X)
    elif layout == "strided":
        big = np.full((2 * X.shape[0], 3 * X.shape[1]), -99.0, dtype=X.dtype)
        big[::2, 1::3] = X
        Xl = big[::2, 1::3]
    elif layout == "reversed":  # negative row stride
        np.testing.assert_array_equal(forest.predict_margins(X[::-1], n_threads=2), ref[::-1])
        Xl = X[::-1][::-1]
    else:
        Xl = X.copy()
        Xl.setflags(write=False)
    assert Xl.dtype == X.dtype
    np.testing.assert_array_equal(forest.predict_margins(Xl, n_threads=2), ref)


@pytest.mark.parametrize("n_threads", [2, 3, 4])
def test_thread_counts_identical(setup, n_threads):
    X, forest, _ = setup
    np.testing.assert_array_equal(forest.predict_margins(X, n_threads=n_threads),
                                  forest.predict_margins(X, n_threads=1))


def test_first_k_trees(setup):
    X, forest, _ = setup
    for k in (0, 1, 7, forest.n_trees):
        want = naive_predict_forest(forest.trees[:k], forest.tree_group[:k], forest.base_scores, 3, X)
        np.testing.assert_array_equal(forest.predict_margins(X, n_threads=2, n_trees=k), want)
    no_base = forest.predict_margins(X, n_threads=1, n_trees=7, include_base=False)
    want = naive_predict_forest(forest.trees[:7], forest.tree_group[:7], np.zeros(3), 3, X)
    np.testing.assert_array_equal(no_base, want)


def test_truncate_then_add(setup):
    X, forest, _ = setup
    rng = np.random.default_rng(41)
    f = Forest(3, forest.base_scores)
    for t, g in zip(forest.trees, forest.tree_group):
        f.add(t, g)
    f.predict_margins(X, 1)  # caches the flat arrays
    f.truncate(5)
    extra = random_tree(rng, X, 3)
    f.add(extra, 1)
    want = naive_predict_forest(forest.trees[:5] + [extra], forest.tree_group[:5] + [1], forest.base_scores, 3, X)
    np.testing.assert_array_equal(f.predict_margins(X, 2), want)


def test_empty_forest_returns_base_scores(setup):
    X, _, _ = setup
    base = np.array([0.5, -1.25, 3.0])
    forest = Forest(3, base)
    out = forest.predict_margins(X, n_threads=2)
    assert out.shape == (X.shape[0], 3)
    np.testing.assert_array_equal(out, np.broadcast_to(base, out.shape))
    np.testing.assert_array_equal(forest.predict_margins(X, 1, include_base=False), np.zeros((X.shape[0], 3)))


def test_predict_tree_matches_naive(setup):
    X, forest, _ = setup
    for tree in forest.trees[:5]:
        for n_threads in (1, 2):
            got = predict_tree(tree, X, n_threads)
            assert got.shape == (X.shape[0],)
            np.testing.assert_array_equal(got, naive_predict_tree(tree, X))


def test_single_leaf_tree():
    X = np.random.default_rng(42).normal(size=(100, 3))
    tree = Tree.leaf(2.5, 10.0, 100)
    np.testing.assert_array_equal(predict_tree(tree, X, 2), np.full(100, 2.5))
    forest = Forest(1, [1.0])
    forest.add(tree, 0)
    forest.add(Tree.leaf(-0.5, 1.0, 1), 0)
    np.testing.assert_array_equal(forest.predict_margins(X, 1), np.full((100, 1), 3.0))


def test_threshold_boundary_and_nan_directions():
    """x == threshold goes left, x > threshold right, NaN by default_left; the float32
    value is compared as float64."""
    t32 = np.float32(0.1)
    tree = Tree([0, -1, -1], [float(t32), 0, 0], [0, 0, 0], [1, 0, 0], [1, -1, -1], [2, -1, -1],
                [0.0, -1.0, 1.0], [0, 0, 0], [0, 0, 0], [0, 0, 0])
    X = np.array([[t32], [np.nextafter(t32, np.float32(1))], [np.nextafter(t32, np.float32(0))], [np.nan]],
                 dtype=np.float32)
    np.testing.assert_array_equal(predict_tree(tree, X, 1), [-1.0, 1.0, -1.0, -1.0])
    # float64 0.1 is below float32(0.1): it goes left, as does float32(0.1) itself
    np.testing.assert_array_equal(predict_tree(tree, np.array([[0.1], [float(t32)]]), 1), [-1.0, -1.0])
    tree.threshold[0] = 0.1
    np.testing.assert_array_equal(predict_tree(tree, X[:1], 1), [1.0])  # float32(0.1) > 0.1
    tree.default_left[0] = 0
    np.testing.assert_array_equal(predict_tree(tree, np.array([[np.nan], [np.inf], [-np.inf]]), 1), [1.0, 1.0, -1.0])


def test_trees_with_non_breadth_first_node_order():
    """Any order with children after their parent: depth-first here."""
    # node 0: x0 <= 0 ? 1 : 4 ; node 1: x1 <= 0 ? 2 : 3 ; node 4: x1 <= 1 ? 5 : 6
    tree = Tree([0, 1, -1, -1, 1, -1, -1], [0, 0, 0, 0, 1, 0, 0], np.zeros(7), [0, 1, 0, 0, 0, 0, 0],
                [1, 2, -1, -1, 5, -1, -1], [4, 3, -1, -1, 6, -1, -1], [0, 0, 10, 20, 0, 30, 40],
                np.zeros(7), np.zeros(7), np.zeros(7))
    X = np.array([[-1, -1], [-1, 1], [1, 0.5], [1, 2], [np.nan, np.nan], [-1, np.nan], [1, np.nan]])
    np.testing.assert_array_equal(predict_tree(tree, X, 1), [10, 20, 30, 40, 40, 10, 40])
    np.testing.assert_array_equal(naive_predict_tree(tree, X), [10, 20, 30, 40, 40, 10, 40])


@pytest.mark.parametrize("n_rows", [0, 1, 63, 64, 65, 129])
def test_row_counts_around_the_block_size(n_rows):
    rng = np.random.default_rng(43)
    X = make_X(rng, max(n_rows, 1), np.float64)[:n_rows]
    forest = make_forest(rng, make_X(rng, 50, np.float64), 6, 2, max_depth=4)
    want = naive_predict_forest(forest.trees, forest.tree_group, forest.base_scores, 2, X)
    for n_threads in (1, 2):
        np.testing.assert_array_equal(forest.predict_margins(X, n_threads), want)


def test_kernel_rejects_bad_shapes():
    X = np.zeros((5, 2))
    tree = Tree.leaf(1.0, 1.0, 1)
    args = [tree.split_feature, tree.threshold, tree.default_left, tree.left_child, tree.right_child, tree.value]
    with pytest.raises(ValueError):
        predict_forest(X, *args, np.array([0, 1], dtype=np.int64), np.zeros(1, np.int32), np.zeros((4, 1)), 1)
    with pytest.raises(ValueError):
        predict_forest(X, *args, np.array([0, 1, 1], dtype=np.int64), np.zeros(1, np.int32), np.zeros((5, 1)), 1)


def test_a_small_prediction_runs_on_the_callers_thread(monkeypatch):
    # one row (or a few) through the trees is microseconds of work: a thread team would cost
    # more than the walk (milliseconds when the cores are shared), so the count follows the work
    monkeypatch.setattr(prediction, "VISITS_PER_THREAD", 1 << 16)
    assert prediction.threads_for_visits(8, n_rows=1, n_trees=100) == 1
    assert prediction.threads_for_visits(8, n_rows=600, n_trees=100) == 1
    assert prediction.threads_for_visits(8, n_rows=1400, n_trees=100) == 2
    assert prediction.threads_for_visits(8, n_rows=100_000, n_trees=100) == 8
    assert prediction.threads_for_visits(1, n_rows=100_000, n_trees=100) == 1
    assert prediction.threads_for_visits(4, n_rows=10, n_trees=0) == 1
