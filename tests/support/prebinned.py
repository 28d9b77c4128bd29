"""Pre-binned data for exact tree comparisons: small integer features (NaN = missing).

Each feature has fewer distinct values than any library's bin limit, so boosters,
LightGBM, XGBoost and naive_grower.py all give every value its own bin and can find the
same splits. Labels and weights are float32 values (LightGBM and XGBoost store them in
float32), so every library computes the same float32 gradients from them.
"""

import numpy as np

FEATURE_SIZES = (2, 3, 8, 20, 40, 60)  # distinct values per feature
FEATURES_WITH_NAN = (1, 2, 4)


def as_float32_values(a):
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def prebinned_data(n=3000, seed=0, objective="squared", n_classes=3, nan_share=0.08):
    """(X, y): six integer features, NaN in three of them, a signal over all six."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, k, size=n) for k in FEATURE_SIZES]).astype(np.float64)
    signal = (X[:, 0] - 0.5 + np.sin(X[:, 3] / 3) + (X[:, 4] > 25) - 0.03 * X[:, 5]
              + 0.5 * (X[:, 2] % 3 == 1) * X[:, 1])
    for f in FEATURES_WITH_NAN:
        X[rng.uniform(size=n) < nan_share, f] = np.nan
    # rows with feature 4 missing behave like small values: the learned direction matters
    signal[np.isnan(X[:, 4])] -= 1.0
    if objective == "squared":
        y = signal + 0.5 * rng.normal(size=n)
    elif objective == "logistic":
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-1.5 * (signal - signal.mean())))).astype(np.float64)
    else:
        y = np.digitize(signal + 0.5 * rng.normal(size=n),
                        np.quantile(signal, np.arange(1, n_classes) / n_classes)).astype(np.float64)
    return X, as_float32_values(y)


def positive_weights(n, seed=0):
    return as_float32_values(np.random.default_rng(seed).uniform(0.2, 3.0, size=n))
