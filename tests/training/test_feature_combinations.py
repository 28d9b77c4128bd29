"""Issue 11's features together: categorical splits, sparse input, row sampling, column
sampling and constraints were built side by side; these check the paths where they meet.

- sparse input with sampling / constraints gives the model of the same data dense (the
  sparse storage changes how bins are read, never which split is found);
- categorical splits with row sampling keep every row's margin (rows outside the sample
  replay categorical splits by their category sets);
- categorical splits with column sampling and interaction constraints respect both;
- what cannot be combined is a clear error.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import boosters as bst
from boosters.model.prediction import predict_tree
from boosters.objectives.registry import make_objective
from boosters.training.growth.grower import TreeGrower
from support.constraint_checks import assert_monotone, assert_paths_within_groups

GOSS = dict(goss_top_rate=0.3, goss_other_rate=0.2, learning_rate=0.5)  # 1/lr = 2 warm-up rounds


def sparse_data(n_rows=3000, n_features=40, density=0.1, seed=0):
    """Counts 1..5 at random positions; labels from a linear model of 12 features."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.integers(1, 6, k).astype(np.float64))
    coef = np.where(np.arange(n_features) < 12, rng.normal(size=n_features), 0.0)
    return X, X @ coef + 0.1 * rng.normal(size=n_rows)


SPARSE_CASES = {
    "subsample": dict(subsample=0.5),
    "goss": GOSS,
    "colsample_bytree and bynode": dict(colsample_bytree=0.7, colsample_bynode=0.6),
    "monotone": dict(monotone_constraints={0: 1, 1: -1}),
    "interactions": dict(interaction_constraints=[[0, 1, 2], [3, 4, 5, 6]]),
}


@pytest.mark.parametrize("name", sorted(SPARSE_CASES))
@pytest.mark.parametrize("growth", ["depthwise", "leafwise"])
def test_sparse_model_equals_dense_model_with_sampling_and_constraints(name, growth):
    """i16 histograms are exact integer sums, so the sparse and dense trainings build the
    same histograms and the same trees: the saved bytes are equal."""
    X, y = sparse_data()
    config = bst.GBDTConfig(n_estimators=8, histogram_mode="i16", growth_strategy=growth, max_depth=4,
                            n_leaves=12, **SPARSE_CASES[name])
    sparse_model = bst.GBDTModel.train(bst.Dataset(X, y), config=config, n_threads=1)
    dense_model = bst.GBDTModel.train(bst.Dataset(X.toarray(), y), config=config, n_threads=1)
    assert sparse_model.to_bytes() == dense_model.to_bytes()
    np.testing.assert_array_equal(sparse_model.predict(X), dense_model.predict(X.toarray()))


def categorical_data(n=4000, seed=0):
    """Two categorical codes (6 and 40 levels, 5% missing) with an effect per level, and
    three numeric features."""
    rng = np.random.default_rng(seed)
    small, large = rng.integers(0, 6, n), rng.integers(0, 40, n)
    X = np.column_stack([small, large, rng.normal(size=(n, 3))]).astype(np.float64)
    y = (rng.normal(size=6)[small] + rng.normal(size=40)[large] + X[:, 2] * X[:, 3] + np.sin(2 * X[:, 4])
         + 0.2 * rng.normal(size=n))
    X[rng.random(n) < 0.05, 1] = np.nan
    return X, y


def n_categorical_splits(trees) -> int:
    return sum(int(np.sum(np.asarray(t.category_set) >= 0)) for t in trees)


@pytest.mark.parametrize("sampling", [dict(subsample=0.4), GOSS])
@pytest.mark.parametrize("mode", ["f64", "i16"])
def test_categorical_splits_with_row_sampling_keep_every_rows_margin(sampling, mode):
    """The training margins (sampled rows through the partition, the others by replaying
    each tree's splits, categorical ones by their category sets) equal the trees'
    predictions on every row, up to the order of float64 additions (1e-12)."""
    X, y = categorical_data()
    config = bst.GBDTConfig(n_estimators=6, histogram_mode=mode, growth_strategy="leafwise", max_depth=None,
                            n_leaves=16, min_data_per_group=10, **sampling)
    dataset = bst.Dataset(X, y, categorical_features=[0, 1])
    mapper, binned = dataset.binned(config.max_bins, config.seed, config.enable_bundling, 2)
    objective = make_objective(config.objective)
    base = objective.init_scores(y, None)
    margins = np.repeat(base[:, None], len(y), axis=1)
    kernel = objective.gradient_kernel(margins, y, None, np.empty((1, len(y), 2), np.float32), 2)
    grower = TreeGrower(binned, mapper, config, 2, kernel, margins, mode)
    rounds = []
    while len(rounds) < config.n_estimators:
        rounds += grower.grow_rounds(len(rounds), config.n_estimators - len(rounds))
    trees = [t for r in rounds for t in r]
    assert n_categorical_splits(trees) > 0
    assert any(t.n_samples[0] < len(y) for t in trees)  # some trees saw a sample only
    predicted = base[0] + sum(predict_tree(t, X, 1) for t in trees)
    np.testing.assert_allclose(margins[0], predicted, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["f64", "i16"])
def test_categorical_splits_with_column_sampling_and_interaction_groups(mode):
    groups = [[0, 2, 3], [1, 4]]
    X, y = categorical_data()
    config = bst.GBDTConfig(n_estimators=20, histogram_mode=mode, growth_strategy="leafwise", max_depth=None,
                            n_leaves=16, min_data_per_group=10, colsample_bynode=0.8,
                            interaction_constraints=groups)
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[0, 1]), config=config, n_threads=2)
    assert n_categorical_splits(model.trees) > 0
    assert_paths_within_groups(model, [set(g) for g in groups])
    again = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[0, 1]), config=config, n_threads=1)
    assert again.to_bytes() == model.to_bytes()  # seeded, thread-independent


def test_monotone_feature_with_categorical_splits_and_subsample():
    X, y = categorical_data()
    config = bst.GBDTConfig(n_estimators=20, growth_strategy="leafwise", max_depth=None, n_leaves=16,
                            min_data_per_group=10, subsample=0.7, monotone_constraints={4: 1})
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[0, 1]), config=config, n_threads=1)
    assert n_categorical_splits(model.trees) > 0
    assert_monotone(model, X, 4, +1)


def test_sparse_input_cannot_hold_categorical_features():
    X, y = sparse_data(n_rows=200)
    with pytest.raises(ValueError, match="categorical_features: sparse X holds numeric features only"):
        bst.Dataset(X, y, categorical_features=[0])


def test_model_with_categorical_splits_rejects_sparse_input_at_prediction():
    X, y = categorical_data(n=1500)
    model = bst.GBDTModel.train(bst.Dataset(X, y, categorical_features=[0, 1]),
                                config=bst.GBDTConfig(n_estimators=3, min_data_per_group=10), n_threads=1)
    assert n_categorical_splits(model.trees) > 0
    with pytest.raises(ValueError, match="categorical splits predicts dense input"):
        model.predict(sp.csr_matrix(np.nan_to_num(X)))
