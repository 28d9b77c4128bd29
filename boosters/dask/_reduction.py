"""The fixed order of every sum over the partitions (`reduction_tree`), and the helpers
that split such a sum into the parts one worker holds and add the parts together again.
The driver's tasks and actor calls (`_driver.Partitions`) and the engines' worker-to-worker
exchange (`_engine.WorkerEngine`) all add in this order, so their models are the same bits.

- float sums: a binary tree over the partitions fixed by their number alone (neighbours
  paired level by level), so their order of addition (and every float64 bit) depends on
  the partitioning only, never on the number of workers or on which worker holds which
  partition;
- integer sums and maxima, and keyed results (`in_order`): exact in any order, so each
  worker first sums all the partitions it holds, and the workers' sums are added next.
"""

from __future__ import annotations

from boosters.dask import _partition_state as tasks


def pairwise_levels(items: list, combine, keep: int = 1) -> list:
    """Neighbours combined pairwise, level by level (an order fixed by their number alone),
    until at most `keep` items are left."""
    while len(items) > keep:
        pairs = [combine(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = pairs + items[len(items) - len(items) % 2:]
    return items


def reduction_tree(workers: list, any_order: bool, keep: int = 1) -> list:
    """The order in which a sum over the partitions (partition i held by workers[i]) adds
    them: nested pairs (a, b) of partition indices, `pairwise_levels` of them until at most
    `keep` are left (the driver adds those). Float sums (`any_order` False): neighbours
    paired level by level over all the partitions, an order fixed by their number alone.
    Exact sums (`any_order`): each worker's partitions paired first, then the workers'
    sums (workers sorted), so that a worker holds all of its sum's partitions."""
    def pair(a, b):
        return a, b

    if not any_order:
        return pairwise_levels(list(range(len(workers))), pair, keep)
    mine: dict = {}
    for i, worker in enumerate(workers):
        mine.setdefault(worker, []).append(i)
    return pairwise_levels([pairwise_levels(mine[w], pair)[0] for w in sorted(mine)], pair, keep)


def in_order(keyed: list, op=tasks.add):
    """The sum of keyed results [(key, value)] (tasks.keyed) in the order of their keys:
    pairwise_levels over the partitions, the fixed order of float sums."""
    return pairwise_levels([value for _, value in sorted(keyed, key=lambda kv: kv[0])], op)[0]


def holder(tree, workers: list):
    """The worker holding every partition of `tree` (a partition index or a pair of
    trees), None when they are on several."""
    if isinstance(tree, int):
        return workers[tree]
    left, right = holder(tree[0], workers), holder(tree[1], workers)
    return left if left == right else None


def held_parts(tree, workers: list, out: dict) -> None:
    """The largest parts of `tree` that one worker holds all the partitions of, appended
    to out[worker] (in the tree's order)."""
    worker = holder(tree, workers)
    if worker is not None:
        out.setdefault(worker, []).append(tree)
    else:
        held_parts(tree[0], workers, out)
        held_parts(tree[1], workers, out)


def parts_by_worker(trees: list, workers: list) -> dict:
    """worker -> the largest parts of `trees` that it holds all the partitions of (held_parts)."""
    parts: dict = {}
    for tree in trees:
        held_parts(tree, workers, parts)
    return parts


def localized(trees: list) -> tuple[list, list]:
    """The partition indices of `trees` in order, and the trees with each index replaced by
    its position in that list (what `fold` takes)."""
    indices = []

    def local(tree):
        if isinstance(tree, int):
            indices.append(tree)
            return len(indices) - 1
        return local(tree[0]), local(tree[1])

    return indices, [local(tree) for tree in trees]


def summed_parts(trees: list, parts: dict, op):
    """The sum of `trees` in their order, from `parts` (held part -> its value, see
    parts_by_worker): each tree's parts added as the tree pairs them, then the trees'
    values pairwise level by level."""
    def value(tree):
        return parts[tree] if tree in parts else op(value(tree[0]), value(tree[1]))

    return pairwise_levels([value(tree) for tree in trees], op)[0]
