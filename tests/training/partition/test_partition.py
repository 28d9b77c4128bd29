"""RowPartitioner against a naive NumPy stable partition."""

import numpy as np
import pytest

from boosters._testing.kernels import node_count, node_rows, split, split_many
from boosters.training.partition._partition import RowPartitioner

from support.naive import binned_from_dense, dense_bins, naive_partition

N_BINS = [256, 3, 17, 300, 2, 1000, 65536]  # uint8 and uint16 features mixed
MISSING = [0.1, 0.3, 0.0, 0.2, 0.5, 0.05, 0.1]
U8_FEATURES = [0, 1, 2, 4]
U16_FEATURES = [3, 5, 6]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(10)
    dense = dense_bins(rng, 6000, N_BINS, MISSING)
    binned = binned_from_dense(dense, N_BINS)
    assert list(np.flatnonzero(binned.feature_kind == 0)) == U8_FEATURES
    return binned, dense


def check_node(part, node, expected):
    got = node_rows(part, node)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, np.asarray(expected, dtype=np.uint32))
    assert node_count(part, node) == len(expected)


def random_threshold(rng, dense, rows, feature, n_bins):
    """A threshold bin between the node's observed value bins (or any bin if empty)."""
    vals = dense[rows, feature]
    vals = vals[vals > 0]
    if len(vals) == 0:
        return int(rng.integers(0, n_bins))
    return int(rng.integers(vals.min(), vals.max() + 1))


def grow_random_tree(rng, part, dense, n_bins, depth, batched=False, min_rows=0):
    """Split every node of each level (by `split` or one `split_many` per level),
    checking the partition against the naive one; returns {leaf node: rows}."""
    part.reset()
    expected = {0: np.arange(dense.shape[0])}
    check_node(part, 0, expected[0])
    level, next_id = [0], 1
    for _ in range(depth):
        batch = []
        for node in level:
            rows = expected[node]
            if len(rows) < min_rows:
                continue
            f = int(rng.integers(0, dense.shape[1]))
            thr = random_threshold(rng, dense, rows, f, n_bins[f])
            dl = bool(rng.integers(0, 2))
            batch.append((node, f, thr, dl, next_id, next_id + 1))
            next_id += 2
        if not batch:
            break
        if batched:
            cols = list(zip(*batch))
            n_left = split_many(part, *cols)
        else:
            n_left = [split(part, *b) for b in batch]
        level = []
        for (node, f, thr, dl, left, right), nl in zip(batch, n_left):
            lrows, rrows = naive_partition(dense[:, f], expected.pop(node), thr, dl)
            assert nl == len(lrows)
            check_node(part, left, lrows)
            check_node(part, right, rrows)
            expected[left], expected[right] = lrows, rrows
            level += [left, right]
    for node, rows in expected.items():  # every leaf still intact after all the splits
        check_node(part, node, rows)
    return expected


def test_root_holds_every_row_in_order(data):
    binned, _ = data
    part = RowPartitioner(binned, 4)
    check_node(part, 0, np.arange(binned.n_rows))
    assert part.n_rows == binned.n_rows and part.max_nodes == 4


@pytest.mark.parametrize("feature", range(len(N_BINS)))
@pytest.mark.parametrize("default_left", [False, True])
def test_single_split_matches_naive(data, feature, default_left):
    binned, dense = data
    part = RowPartitioner(binned, 3)
    thr = N_BINS[feature] // 2
    n_left = split(part, 0, feature, thr, default_left, 1, 2)
    lrows, rrows = naive_partition(dense[:, feature], np.arange(binned.n_rows), thr, default_left)
    assert n_left == len(lrows)
    check_node(part, 1, lrows)
    check_node(part, 2, rrows)


@pytest.mark.parametrize("default_left", [False, True])
def test_missing_rows_follow_default_direction(data, default_left):
    binned, dense = data
    f = 4  # 2 bins: missing (half the rows) or value bin 1
    part = RowPartitioner(binned, 3)
    split(part, 0, f, 1, default_left, 1, 2)
    missing = np.flatnonzero(dense[:, f] == 0)
    present = np.flatnonzero(dense[:, f] == 1)
    assert len(missing) > 1000 and len(present) > 1000
    check_node(part, 1, np.sort(np.r_[present, missing]) if default_left else present)
    check_node(part, 2, np.array([], dtype=np.int64) if default_left else missing)
    # threshold 0: no value bin goes left, only the missing rows when default_left
    part.reset()
    split(part, 0, f, 0, default_left, 1, 2)
    check_node(part, 1, missing if default_left else [])
    check_node(part, 2, present if default_left else np.arange(binned.n_rows))


@pytest.mark.parametrize("feature", [3, 6])  # uint16 features
def test_uint16_bins_above_255(data, feature):
    binned, dense = data
    part = RowPartitioner(binned, 3)
    for thr in (255, 256, 257, N_BINS[feature] - 2):
        part.reset()
        split(part, 0, feature, thr, False, 1, 2)
        lrows, rrows = naive_partition(dense[:, feature], np.arange(binned.n_rows), thr, False)
        check_node(part, 1, lrows)
        check_node(part, 2, rrows)


@pytest.mark.parametrize("seed", range(4))
def test_recursive_splits_match_naive(data, seed):
    """Six levels deep: nodes alternate between the two buffers."""
    binned, dense = data
    rng = np.random.default_rng(seed)
    part = RowPartitioner(binned, 2**7 - 1)
    leaves = grow_random_tree(rng, part, dense, N_BINS, depth=6)
    all_rows = np.concatenate(list(leaves.values()))
    np.testing.assert_array_equal(np.sort(all_rows), np.arange(binned.n_rows))


@pytest.mark.parametrize("seed", range(3))
def test_split_many_equals_split_one_by_one(data, seed):
    binned, dense = data
    part_many = RowPartitioner(binned, 2**6 - 1)
    part_one = RowPartitioner(binned, 2**6 - 1)
    leaves_many = grow_random_tree(np.random.default_rng(seed), part_many, dense, N_BINS, 5, batched=True)
    leaves_one = grow_random_tree(np.random.default_rng(seed), part_one, dense, N_BINS, 5, batched=False)
    assert leaves_many.keys() == leaves_one.keys()
    for node in leaves_many:
        np.testing.assert_array_equal(node_rows(part_many, node), node_rows(part_one, node))


def test_split_many_returns_left_counts(data):
    binned, dense = data
    part = RowPartitioner(binned, 7)
    split(part, 0, 0, 128, True, 1, 2)
    rows_1, rows_2 = node_rows(part, 1), node_rows(part, 2)
    counts = split_many(part, [1, 2], [2, 5], [8, 500], [False, True], [3, 5], [4, 6])
    assert counts.dtype == np.int64
    l1, _ = naive_partition(dense[:, 2], rows_1, 8, False)
    l2, _ = naive_partition(dense[:, 5], rows_2, 500, True)
    np.testing.assert_array_equal(counts, [len(l1), len(l2)])
    check_node(part, 3, l1)
    check_node(part, 5, l2)
    assert len(split_many(part, [], [], [], [], [], [])) == 0


def test_reset_starts_a_new_tree(data):
    binned, dense = data
    part = RowPartitioner(binned, 7)
    split(part, 0, 0, 10, False, 1, 2)
    split(part, 1, 1, 1, True, 3, 4)
    part.reset()
    check_node(part, 0, np.arange(binned.n_rows))
    split(part, 0, 2, 5, True, 1, 2)
    lrows, rrows = naive_partition(dense[:, 2], np.arange(binned.n_rows), 5, True)
    check_node(part, 1, lrows)
    check_node(part, 2, rrows)


def test_empty_children(data):
    binned, dense = data
    part = RowPartitioner(binned, 9)
    f = 2  # no missing values
    assert split(part, 0, f, N_BINS[f] - 1, False, 1, 2) == binned.n_rows  # everything left
    check_node(part, 1, np.arange(binned.n_rows))
    check_node(part, 2, [])
    assert split(part, 2, 0, 100, True, 3, 4) == 0  # splitting an empty node
    check_node(part, 3, [])
    check_node(part, 4, [])
    assert split(part, 1, f, 0, False, 5, 6) == 0  # nothing left
    check_node(part, 5, [])
    check_node(part, 6, np.arange(binned.n_rows))
    lrows, rrows = naive_partition(dense[:, 1], np.arange(binned.n_rows), 1, True)
    assert split(part, 6, 1, 1, True, 7, 8) == len(lrows)
    check_node(part, 7, lrows)
    check_node(part, 8, rrows)
    # the empty nodes still work as leaves
    pred = np.zeros(binned.n_rows)
    part.add_leaf_values([3, 4, 5, 7, 8], [1.0, 2.0, 3.0, 4.0, 5.0], pred)
    expected = np.zeros(binned.n_rows)
    expected[lrows] += 4.0
    expected[rrows] += 5.0
    np.testing.assert_array_equal(pred, expected)


def test_single_row_dataset():
    binned = binned_from_dense(np.array([[3, 0]]), [5, 300])
    part = RowPartitioner(binned, 5)
    assert split(part, 0, 0, 3, False, 1, 2) == 1
    check_node(part, 1, [0])
    check_node(part, 2, [])
    assert split(part, 1, 1, 100, False, 3, 4) == 0
    check_node(part, 4, [0])


# -- the parallel path (nodes above 32768 rows per thread) -------------------------------

PAR_BINS = [256, 40, 2, 700]


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(11)
    n = 150_000  # > 4 * 32768: four chunks at the root
    dense = dense_bins(rng, n, PAR_BINS, [0.1, 0.0, 0.3, 0.05])
    return binned_from_dense(dense, PAR_BINS), dense


@pytest.mark.parametrize("n_threads", [2, 4])
def test_parallel_split_equals_serial_and_naive(big, n_threads):
    binned, dense = big
    n = binned.n_rows
    parts = [RowPartitioner(binned, 31, n_threads=1), RowPartitioner(binned, 31, n_threads=n_threads)]
    # Unbalanced splits keep big children, so the parallel path also reads from both buffers.
    plan = [
        (0, 0, 230, True, 1, 2),     # ~90% left (src: root, in order)
        (1, 1, 35, False, 3, 4),     # ~87% of that left (src: buffer 0)
        (3, 3, 600, True, 5, 6),     # src: buffer 1
        (5, 2, 1, False, 7, 8),      # the 2-bin feature, missing right
        (7, 0, 100, False, 9, 10),
        (2, 3, 350, False, 11, 12),  # small nodes: the serial path
    ]
    expected, sizes = {0: np.arange(n)}, {}
    for node, f, thr, dl, left, right in plan:
        sizes[node] = len(expected[node])
        lrows, rrows = naive_partition(dense[:, f], expected.pop(node), thr, dl)
        expected[left], expected[right] = lrows, rrows
        counts = [split(p, node, f, thr, dl, left, right) for p in parts]
        assert counts == [len(lrows), len(lrows)]
        for p in parts:
            check_node(p, left, lrows)
            check_node(p, right, rrows)
    assert sizes[1] > 4 * 32768 and sizes[3] > 3 * 32768 and sizes[5] > 2 * 32768 and sizes[7] > 2 * 32768
    for node, rows in expected.items():
        for p in parts:
            check_node(p, node, rows)
    preds = []
    leaves = sorted(expected)
    values = np.linspace(-1.0, 1.0, len(leaves))
    for p in parts:
        pred = np.full(n, 0.5)
        p.add_leaf_values(leaves, values, pred)
        preds.append(pred)
    np.testing.assert_array_equal(preds[0], preds[1])


@pytest.mark.parametrize("n_threads", [2, 4])
def test_parallel_split_many_equals_serial(big, n_threads):
    LEAVES = (5, 7, 8, 9, 10, 11, 12)  # nodes 0-4 and 6 were split: their rows are their children's
    binned, dense = big
    results = []
    for t in (1, n_threads):
        part = RowPartitioner(binned, 15, n_threads=t)
        counts = [split_many(part, [0], [3], [690], [True], [1], [2])]
        counts.append(split_many(part, [1, 2], [0, 1], [200, 20], [False, True], [3, 5], [4, 6]))
        counts.append(split_many(part, [3, 4, 6], [1, 2, 3], [38, 1, 300], [True, False, True], [7, 9, 11], [8, 10, 12]))
        results.append((np.concatenate(counts), {k: node_rows(part, k) for k in LEAVES}))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    for k in LEAVES:
        np.testing.assert_array_equal(results[0][1][k], results[1][1][k])
    # and the naive partition
    rows = np.arange(binned.n_rows)
    l1, r1 = naive_partition(dense[:, 3], rows, 690, True)
    l3, r3 = naive_partition(dense[:, 0], l1, 200, False)
    l7, r7 = naive_partition(dense[:, 1], l3, 38, True)
    np.testing.assert_array_equal(results[1][1][7], l7)
    np.testing.assert_array_equal(results[1][1][8], r7)


def test_parallel_random_trees_equal_serial(big):
    binned, dense = big
    serial = RowPartitioner(binned, 2**5 - 1, n_threads=1)
    parallel = RowPartitioner(binned, 2**5 - 1, n_threads=4)
    leaves_s = grow_random_tree(np.random.default_rng(5), serial, dense, PAR_BINS, 4, batched=True)
    leaves_p = grow_random_tree(np.random.default_rng(5), parallel, dense, PAR_BINS, 4, batched=True)
    for node in leaves_s:
        np.testing.assert_array_equal(node_rows(serial, node), node_rows(parallel, node))
    np.testing.assert_array_equal(np.sort(np.concatenate(list(leaves_p.values()))), np.arange(binned.n_rows))


def test_more_than_64_chunks_are_capped():
    """70 threads on a node of 70 * 32768 rows: at most 64 chunks, still the serial result."""
    rng = np.random.default_rng(12)
    n = 70 * 32768 + 5
    dense = dense_bins(rng, n, [256, 3], [0.1, 0.2])
    binned = binned_from_dense(dense, [256, 3])
    part = RowPartitioner(binned, 5, n_threads=70)
    lrows, rrows = naive_partition(dense[:, 0], np.arange(n), 200, True)
    assert split(part, 0, 0, 200, True, 1, 2) == len(lrows)
    check_node(part, 1, lrows)
    check_node(part, 2, rrows)
    l2, r2 = naive_partition(dense[:, 1], lrows, 1, False)
    assert split(part, 1, 1, 1, False, 3, 4) == len(l2)
    check_node(part, 3, l2)
    check_node(part, 4, r2)

# -- add_leaf_values ---------------------------------------------------------------------


@pytest.mark.parametrize("n_threads", [1, 2])
def test_add_leaf_values_matches_naive(data, n_threads):
    binned, dense = data
    rng = np.random.default_rng(3)
    part = RowPartitioner(binned, 2**6 - 1, n_threads=n_threads)
    leaves = grow_random_tree(rng, part, dense, N_BINS, 5)
    nodes = np.array(sorted(leaves), dtype=np.int64)
    values = rng.normal(size=len(nodes))
    start = rng.normal(size=binned.n_rows)
    pred = start.copy()
    part.add_leaf_values(nodes, values, pred)
    expected = start.copy()
    for node, v in zip(nodes, values):
        expected[leaves[node]] += v
    np.testing.assert_array_equal(pred, expected)
    # a subset of the leaves (as lists): the other rows are untouched
    pred = start.copy()
    part.add_leaf_values(nodes[::3].tolist(), values[::3].tolist(), pred)
    expected = start.copy()
    for node, v in zip(nodes[::3], values[::3]):
        expected[leaves[node]] += v
    np.testing.assert_array_equal(pred, expected)


def test_add_leaf_values_accepts_strided_arrays(data):
    """leaf_nodes / values are array-likes (lists work): a strided int64 / float64 view
    of an array must work too, like its list or copy."""
    binned, dense = data
    rng = np.random.default_rng(4)
    part = RowPartitioner(binned, 2**4 - 1)
    leaves = grow_random_tree(rng, part, dense, N_BINS, 3)
    nodes = np.repeat(np.array(sorted(leaves), dtype=np.int64), 2)  # nodes[::2]: each leaf once
    values = np.repeat(rng.normal(size=len(leaves)), 2)
    expected = np.zeros(binned.n_rows)
    part.add_leaf_values(nodes[::2].copy(), values[::2].copy(), expected)
    pred = np.zeros(binned.n_rows)
    part.add_leaf_values(nodes[::2], values[::2], pred)
    np.testing.assert_array_equal(pred, expected)


def test_split_many_accepts_strided_arrays(data):
    binned, dense = data
    args = [np.array([0, 0, 1, 1]), np.array([2, 2, 3, 3]), np.array([8, 8, 150, 150]),
            np.array([True, True, False, False]), np.array([1, 1, 3, 3]), np.array([2, 2, 4, 4])]
    args = [a.astype(np.int64) if a.dtype != bool else a for a in args]
    ref = RowPartitioner(binned, 5)
    split_many(ref, *[a[::2].copy() for a in args])
    part = RowPartitioner(binned, 5)
    split_many(part, *[a[::2] for a in args])
    for node in (2, 3, 4):
        np.testing.assert_array_equal(node_rows(part, node), node_rows(ref, node))


def test_add_leaf_values_on_the_root(data):
    binned, _ = data
    part = RowPartitioner(binned, 3, n_threads=2)
    pred = np.arange(binned.n_rows, dtype=np.float64)
    part.add_leaf_values([0], [0.25], pred)
    np.testing.assert_array_equal(pred, np.arange(binned.n_rows) + 0.25)


def test_add_leaf_values_rejects_bad_input(data):
    binned, _ = data
    part = RowPartitioner(binned, 3)
    with pytest.raises(ValueError):
        part.add_leaf_values([0], [1.0], np.zeros(binned.n_rows - 1))
    with pytest.raises(ValueError):
        part.add_leaf_values([0], [1.0, 2.0], np.zeros(binned.n_rows))
    with pytest.raises(ValueError):
        part.add_leaf_values([3], [1.0], np.zeros(binned.n_rows))
    with pytest.raises(ValueError):
        part.add_leaf_values([-1], [1.0], np.zeros(binned.n_rows))


# -- bad node ids ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    (0, 0, 5, False, 1, 7),    # right >= max_nodes
    (0, 0, 5, False, 7, 1),    # left >= max_nodes
    (7, 0, 5, False, 1, 2),    # node >= max_nodes
    (-1, 0, 5, False, 1, 2),
    (0, 0, 5, False, -1, 2),
    (0, 0, 5, False, 1, -2),
    (0, 0, 5, False, 1, 1),    # left == right
    (0, 0, 5, False, 0, 1),    # left == node
    (0, 0, 5, False, 1, 0),    # right == node
    (0, 7, 5, False, 1, 2),    # feature out of range
    (0, -1, 5, False, 1, 2),
])
def test_bad_split_arguments_raise(data, args):
    binned, _ = data
    part = RowPartitioner(binned, 7)
    with pytest.raises(ValueError):
        split(part, *args)
    with pytest.raises(ValueError):
        split_many(part, *[[a] for a in args])
    check_node(part, 0, np.arange(binned.n_rows))  # nothing was split



@pytest.mark.parametrize("n_threads", [1, 2])
def test_a_split_node_has_no_rows_and_cannot_be_split_again(big, n_threads):
    binned, _ = big  # big enough for a parallel split with 2 threads
    part = RowPartitioner(binned, 7, n_threads=n_threads)
    split(part, 0, 0, 100, False, 1, 2)
    split(part, 1, 1, 200, False, 3, 4)
    assert node_count(part, 1) == node_count(part, 3) + node_count(part, 4)  # its range is still known
    with pytest.raises(ValueError, match="node 1 was split"):
        node_rows(part, 1)
    with pytest.raises(ValueError, match="node 1 was split"):
        split(part, 1, 1, 10, False, 5, 6)
    with pytest.raises(ValueError, match="node 1 was split"):
        part.add_leaf_values([1], [1.0], np.zeros(binned.n_rows))
    with pytest.raises(ValueError, match="split once"):
        split_many(part, [2, 2], [0, 1], [3, 4], [False, False], [5, 5], [6, 6])
    # the root's rows are implicit (every row, in order): still readable after its split
    np.testing.assert_array_equal(node_rows(part, 0), np.arange(binned.n_rows))
