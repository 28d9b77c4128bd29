"""The packed prediction kernel (`PackedForest`: numeric forests on dense rows) against a
naive walk and against the general kernel, exactly: every path of it (rows walked 8 at a
time, the last rows of a block walked 8 trees at a time, blocks with and without NaN,
float32 rows compared with float32 thresholds, single-leaf trees, a prefix of the trees,
leaves as output)."""

import numpy as np
import pytest

from boosters.model._predict import PackedForest, float32_thresholds, predict_forest, predict_leaves
from boosters.model.forest import Forest
from boosters.model.tree import Tree

from support.naive import naive_predict_forest
from support.random_forests import make_X, make_forest, random_tree
from support.naive import naive_leaf


def packed(forest: Forest) -> PackedForest:
    flat = forest.flat()
    assert flat.packed is not None  # numeric forests are packed
    return flat.packed


def general_margins(forest: Forest, X: np.ndarray) -> np.ndarray:
    """The general kernel (the one categorical forests and CSR rows take)."""
    flat = forest.flat()
    a = flat.arrays
    out = np.zeros((X.shape[0], forest.n_groups))
    out += forest.base_scores
    predict_forest(X, a["split_feature"], a["threshold"], a["default_left"], a["left_child"], a["right_child"],
                   a["value"], flat.tree_offsets, flat.tree_group, out, 1)
    return out


def mixed_forest(rng, X, n_trees: int, n_groups: int = 2) -> Forest:
    """Random trees of depth 0 (a single leaf) to 7, unbalanced (p_split 0.6)."""
    forest = Forest(n_groups, rng.normal(size=n_groups))
    for t in range(n_trees):
        tree = Tree.leaf(float(rng.normal()), 1.0, 1) if t % 5 == 3 else random_tree(rng, X, 1 + t % 7, p_split=0.6)
        forest.add(tree, int(rng.integers(0, n_groups)))
    return forest


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nan_frac", [0.0, 0.1], ids=["no-nan", "nan"])
@pytest.mark.parametrize("n_rows", [1, 7, 8, 9, 64, 71, 200])
def test_margins_equal_the_naive_walk(dtype, nan_frac, n_rows):
    """Exact equality: the same comparisons, each row's values summed in tree order. 19
    trees: two groups of 8 trees side by side and 3 alone for the last rows of a block."""
    rng = np.random.default_rng(n_rows)
    X = make_X(rng, n_rows, dtype, nan_frac)
    if nan_frac == 0.0:
        X[:, 5] = rng.normal(size=n_rows)  # make_X leaves column 5 all NaN
        assert not np.isnan(X).any()  # the path without NaN handling
    forest = mixed_forest(rng, make_X(rng, 300, dtype), 19)
    want = naive_predict_forest(forest.trees, forest.tree_group, forest.base_scores, 2, X)
    for n_threads in (1, 2):
        np.testing.assert_array_equal(forest.predict_margins(X, n_threads), want)
    np.testing.assert_array_equal(general_margins(forest, X), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_leaves_equal_the_naive_walk(dtype):
    rng = np.random.default_rng(5)
    X = make_X(rng, 131, dtype)
    forest = mixed_forest(rng, X, 21)
    want = np.array([[naive_leaf(tree, x) for tree in forest.trees] for x in X], dtype=np.int32)
    np.testing.assert_array_equal(forest.predict_leaves(X, 2), want)
    flat = forest.flat()
    a = flat.arrays
    general = np.zeros_like(want)
    predict_leaves(X, a["split_feature"], a["threshold"], a["default_left"], a["left_child"], a["right_child"],
                   flat.tree_offsets, general, 1)
    np.testing.assert_array_equal(general, want)


def test_a_prefix_of_the_trees():
    rng = np.random.default_rng(6)
    X = make_X(rng, 77, np.float32)
    forest = mixed_forest(rng, X, 20)
    for k in (0, 1, 8, 9, 17, 20):
        want = naive_predict_forest(forest.trees[:k], forest.tree_group[:k], forest.base_scores, 2, X)
        np.testing.assert_array_equal(forest.predict_margins(X, 1, n_trees=k), want)


def test_float32_thresholds_are_the_largest_float32_at_most_the_threshold():
    rng = np.random.default_rng(7)
    t = np.concatenate([rng.normal(size=1000), rng.normal(size=100) * 1e-40, [0.0, -0.0, 3.4e38, 3.5e38, -3.5e38,
                                                                               1e300, -1e300, np.inf, -np.inf]])
    t32 = float32_thresholds(t)
    assert t32.dtype == np.float32
    assert np.all(t32.astype(np.float64) <= t)
    with np.errstate(over="ignore"):  # the float32 after FLT_MAX is inf
        above = np.nextafter(t32, np.float32(np.inf)).astype(np.float64)
    assert np.all((above > t) | (t32 == np.inf))
    exact = rng.normal(size=100).astype(np.float32)
    np.testing.assert_array_equal(float32_thresholds(exact.astype(np.float64)), exact)


def test_float32_rows_at_thresholds_between_float32_values():
    """Thresholds just above, at and just below float32 values (and past the float32
    range): float32 rows near them go the way a float64 comparison sends them."""
    rng = np.random.default_rng(8)
    values = rng.normal(size=40).astype(np.float32)
    thresholds = []
    for v in values.astype(np.float64):
        gap = float(np.spacing(np.float32(v)))
        thresholds += [v, v + gap / 3, v - gap / 3, np.nextafter(v, np.inf), np.nextafter(v, -np.inf)]
    thresholds += [3.5e38, -3.5e38, np.inf, -np.inf]
    n = len(thresholds)
    # one stump per threshold on feature 0: left -1, right +1
    forest = Forest(1, np.zeros(1))
    for t in thresholds:
        forest.add(Tree([0, -1, -1], [t, 0, 0], [0, 0, 0], [1, 0, 0], [1, -1, -1], [2, -1, -1], [0.0, -1.0, 1.0],
                        [0, 0, 0], [0, 0, 0], [0, 0, 0]), 0)
    near = np.concatenate([values, np.nextafter(values, np.float32(np.inf)), np.nextafter(values, np.float32(-np.inf)),
                           np.array([3.4e38, -3.4e38, np.inf, -np.inf], np.float32)])
    X = near.reshape(-1, 1).astype(np.float32)
    leaves = forest.predict_leaves(X, 1)
    want = np.where(X.astype(np.float64) <= np.array(thresholds), 1, 2)
    np.testing.assert_array_equal(leaves, want)
    assert (want == 1).any() and (want == 2).any() and n == leaves.shape[1]


def test_input_layouts_are_read_alike():
    rng = np.random.default_rng(9)
    X = make_X(rng, 90, np.float64)
    forest = make_forest(rng, X, 12, 2)
    want = naive_predict_forest(forest.trees, forest.tree_group, forest.base_scores, 2, X)
    for layout in (np.asfortranarray(X), X[::-1][::-1], np.repeat(X, 2, axis=1)[:, ::2]):
        np.testing.assert_array_equal(forest.predict_margins(layout, 2), want)


def test_wider_rows_than_the_trees_read():
    """Extra columns past the last split feature are never read."""
    rng = np.random.default_rng(10)
    X = make_X(rng, 40, np.float32)
    forest = make_forest(rng, X, 9, 1)
    wide = np.concatenate([X, np.full((40, 3), np.nan, np.float32)], axis=1)
    np.testing.assert_array_equal(forest.predict_margins(wide, 1), forest.predict_margins(X, 1))


def test_a_forest_of_single_leaves():
    forest = Forest(1, np.array([0.5]))
    for v in (1.0, 2.0, 4.0) * 4:
        forest.add(Tree.leaf(v, 1.0, 1), 0)
    X = np.zeros((10, 1), np.float32)
    np.testing.assert_array_equal(forest.predict_margins(X, 1), np.full((10, 1), 28.5))
    np.testing.assert_array_equal(forest.predict_leaves(X, 2), np.zeros((10, 12), np.int32))


def test_packed_arguments_are_checked():
    rng = np.random.default_rng(11)
    X = make_X(rng, 20, np.float32)
    forest = make_forest(rng, X, 3, 1)
    p = packed(forest)
    with pytest.raises(ValueError, match="one row per row"):
        p.predict(X, np.zeros((19, 1)), 3, 1)
    with pytest.raises(ValueError, match="n_trees"):
        p.predict(X, np.zeros((20, 1)), 4, 1)
    with pytest.raises(ValueError, match="one column per tree"):
        p.predict(X, np.zeros((20, 2), np.int32), 3, 1)


def test_features_past_the_packed_range_take_the_general_walk():
    """A split feature whose byte offset in a float64 row would not fit the node's int32 is
    never packed (the forest predicts with the general walk)."""
    from boosters.model._predict import MAX_PACKED_FEATURES
    far = Tree([MAX_PACKED_FEATURES, -1, -1], [0.0, 0, 0], [0, 0, 0], [1, 0, 0], [1, -1, -1], [2, -1, -1],
               [0.0, -1.0, 1.0], [0, 0, 0], [0, 0, 0], [0, 0, 0])
    forest = Forest(1, np.zeros(1))
    forest.add(far, 0)
    assert forest.flat().packed is None
    a = forest.flat().arrays
    with pytest.raises(ValueError, match="features below"):
        PackedForest(a["split_feature"], a["threshold"], a["default_left"], a["left_child"], a["right_child"],
                     a["value"], forest.flat().tree_offsets, forest.flat().tree_group)


def test_blocks_mixing_rows_with_and_without_nan():
    """make_X puts a NaN in every row, so the tests above see only blocks whose rows all
    have NaN, or none. The kernel decides per 64-row block whether to handle NaN, and
    walks 8 rows (lanes) side by side: here each block has its own mix. Block 0: no NaN;
    1: one NaN, in its first row; 2: one, in its last row (lane 7 of the last group of
    8); 3: one in lane k of its k-th group of 8 rows, in feature k % 6; 4: NaN-free rows
    beside rows with 1-3 NaNs; 5 (13 rows): one NaN, in the rows past the last group of
    8 (walked 8 trees at a time). Each planted NaN is in a feature where the row's margin
    depends on the NaN taking its nodes' default direction (with the NaN read as -inf,
    which goes left as a NaN does in a walk without NaN handling, the naive margin
    differs). Exact equality (the same comparisons, sums in tree order) with the naive
    walk and the general kernel: margins and leaves, float32 and float64 rows, 1 and 2
    threads."""
    rng = np.random.default_rng(12)
    n_features, block = 6, 64
    forest = mixed_forest(rng, make_X(rng, 300, np.float32, nan_frac=0.0), 19)  # float32 thresholds: exact ties
    X = rng.normal(size=(5 * block + 13, n_features)).astype(np.float32).astype(np.float64)
    X[:, 2] = np.round(X[:, 2])

    def margins(rows):
        return naive_predict_forest(forest.trees, forest.tree_group, forest.base_scores, 2, rows)

    def needs_default(x):
        return bool((margins(x[None]) != margins(np.where(np.isnan(x), -np.inf, x)[None])).any())

    def plant(r, first_choice):
        for f in [first_choice] + [f for f in range(n_features) if f != first_choice]:
            x = X[r].copy()
            x[f] = np.nan
            if needs_default(x):
                X[r, f] = np.nan
                return
        raise AssertionError(f"no feature of row {r} needs the default direction")

    plant(block, 0)                     # block 1: its first row
    plant(3 * block - 1, 5)             # block 2: its last row, the last column first
    for k in range(8):                  # block 3: lane k of the k-th group of 8
        plant(3 * block + 8 * k + k, k % n_features)
    plant(5 * block + 10, 3)            # block 5: past its last group of 8
    mixed = 4 * block + np.flatnonzero(rng.random(block) < 0.4)
    for r in mixed:                     # block 4: random NaNs in some rows
        X[r, rng.choice(n_features, rng.integers(1, 4), replace=False)] = np.nan
    per_block = [np.isnan(X[b * block:(b + 1) * block]).any(axis=1).sum() for b in range(6)]
    assert per_block == [0, 1, 1, 8, len(mixed), 1] and 0 < len(mixed) < block
    assert sum(needs_default(X[r]) for r in mixed) >= 5
    for dtype in (np.float32, np.float64):
        Xd = X.astype(dtype)
        want = margins(Xd)
        for n_threads in (1, 2):
            np.testing.assert_array_equal(forest.predict_margins(Xd, n_threads), want)
        np.testing.assert_array_equal(general_margins(forest, Xd), want)
        leaves = np.array([[naive_leaf(tree, x) for tree in forest.trees] for x in Xd], dtype=np.int32)
        np.testing.assert_array_equal(forest.predict_leaves(Xd, 2), leaves)
