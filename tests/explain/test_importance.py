"""feature_importance: every ImportanceType against a per-node loop over the trees."""

import numpy as np
import pytest

import boosters as bst
from boosters.explain.importance import feature_importance


def naive_importance(model, kind: str) -> np.ndarray:
    """Sum (or average) over every split node of the trees, one node at a time."""
    n = model.n_features
    counts, gains, covers = np.zeros(n), np.zeros(n), np.zeros(n)
    for tree in model.trees:
        for node in range(tree.n_nodes):
            f = tree.split_feature[node]
            if f >= 0:
                counts[f] += 1
                gains[f] += tree.gain[node]
                covers[f] += tree.cover[node]
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"split": counts, "gain": gains, "cover": covers,
                "average_gain": np.where(counts > 0, gains / counts, 0.0),
                "average_cover": np.where(counts > 0, covers / counts, 0.0)}[kind]


@pytest.fixture(scope="module", params=["logistic", "softmax"])
def model(request):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    if request.param == "logistic":
        y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=600) > 0).astype(float)
        objective = bst.Objective.logistic()
    else:
        y = np.digitize(X[:, 0] + X[:, 2], [-0.5, 0.5]).astype(float)
        objective = bst.Objective.softmax(3)
    # feature 5 is constant: never split on
    X[:, 5] = 1.0
    cfg = bst.GBDTConfig(n_estimators=12, max_depth=3, objective=objective)
    return bst.GBDTModel.train(bst.Dataset(X, y), cfg)


KINDS = ["split", "gain", "cover", "average_gain", "average_cover"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_matches_a_loop_over_the_nodes(model, kind):
    expected = naive_importance(model, kind)
    # sums in another order than the loop: equal to rounding (1e-12 relative)
    np.testing.assert_allclose(model.feature_importance(kind), expected, rtol=1e-12)
    np.testing.assert_allclose(model.feature_importance(bst.ImportanceType(kind)), expected, rtol=1e-12)
    assert model.feature_importance(kind)[5] == 0.0  # the constant feature
    assert expected[0] > 0  # the informative feature is used: the comparison is not 0 == 0


def test_averages_are_totals_per_split(model):
    split = model.feature_importance(bst.ImportanceType.Split)
    used = split > 0
    for total, average in (("gain", "average_gain"), ("cover", "average_cover")):
        np.testing.assert_allclose(model.feature_importance(average)[used],
                                   model.feature_importance(total)[used] / split[used], rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_normalized_importance_sums_to_one(model, kind):
    raw = model.feature_importance(kind)
    normalized = model.feature_importance(kind, normalize=True)
    assert normalized.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(normalized, raw / raw.sum(), rtol=1e-12)


def test_cover_of_squared_error_is_the_row_count():
    # squared error: every row's hessian is 1, so a node's cover is its number of training rows
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    model = bst.GBDTModel.train(bst.Dataset(X, X[:, 0] * 2 + X[:, 1]), bst.GBDTConfig(n_estimators=4, max_depth=3))
    rows = np.zeros(3)
    for tree in model.trees:
        internal = tree.split_feature >= 0
        np.add.at(rows, tree.split_feature[internal], tree.n_samples[internal])
    np.testing.assert_allclose(model.feature_importance("cover"), rows, rtol=1e-12)


def test_a_forest_without_splits_has_zero_importance():
    X = np.ones((50, 2))
    model = bst.GBDTModel.train(bst.Dataset(X, np.arange(50.0)), bst.GBDTConfig(n_estimators=2))
    for kind in KINDS:
        assert np.array_equal(model.feature_importance(kind, normalize=True), np.zeros(2))


def test_importance_type_names():
    assert [k.value for k in bst.ImportanceType] == KINDS
    assert bst.ImportanceType.AverageGain == "average_gain"
    assert str(bst.ImportanceType.Cover) == "cover"


@pytest.mark.parametrize("bad", ["weight", "Gain", "total_gain", 1, None])
def test_unknown_kind_is_a_value_error_naming_the_argument(model, bad):
    with pytest.raises(ValueError, match="importance_type must be one of 'split', 'gain'"):
        model.feature_importance(bad)
    with pytest.raises(ValueError, match="importance_type"):
        feature_importance(model.forest, model.n_features, bad)
