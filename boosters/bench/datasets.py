"""Built-in synthetic datasets shaped like common GBDT benchmarks (no download needed).

- `make_covertype`: like UCI Covertype: 10 integer-valued terrain features, 4 one-hot
  wilderness areas and 40 one-hot soil types; 7 forest cover classes driven mostly by
  elevation, soil and area, or the binary "lodgepole pine vs rest" variant.
- `make_higgs`: like HIGGS: 21 low-level kinematic features and 7 derived masses,
  binary signal/background with noisy, non-linear class structure.
- `make_friedman`: the Friedman #1 regression problem with extra noise features.
- `make_categorical`: regression on high-cardinality category codes (10 to 5000 levels)
  and a few numeric features.

Each returns (X, y) as float64 / float64 arrays and is fully determined by `seed`.
"""

from __future__ import annotations

import numpy as np

N_WILDERNESS, N_SOIL = 4, 40
COVERTYPE_CLASSES = 7
# Per class: typical elevation (m) and its spread; class weights calibrated so the class
# shares come out as Covertype's: 36.5%, 48.8%, 6.2%, 0.5%, 1.6%, 3.0%, 3.5%.
_COVER_ELEVATION = np.array([3130, 2920, 2390, 2220, 2790, 2420, 3360], dtype=np.float64)
_COVER_SPREAD = np.array([150, 170, 160, 90, 110, 150, 110], dtype=np.float64)
_COVER_PRIOR = np.array([0.31604, 0.31926, 0.08817, 0.14761, 0.04369, 0.03387, 0.05136])


def _one_hot(index: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((len(index), n))
    out[np.arange(len(index)), index] = 1.0
    return out


def make_covertype(n_rows: int = 100_000, binary: bool = False, seed: int = 0):
    """(X, y): X is (n_rows, 54): 10 terrain columns then 44 one-hot columns.
    y: class 0..6, or with `binary=True` 1 for class 1 (lodgepole pine) else 0."""
    rng = np.random.default_rng(seed)
    elevation = rng.normal(2960, 280, n_rows).clip(1850, 3860)
    aspect = rng.uniform(0, 360, n_rows)
    slope = rng.gamma(3.0, 4.7, n_rows).clip(0, 66)
    hydro_h = rng.exponential(270, n_rows).clip(0, 1400)
    hydro_v = (rng.normal(0.17, 0.2, n_rows) * hydro_h + rng.normal(0, 20, n_rows)).clip(-170, 600)
    road_h = rng.exponential(2350, n_rows).clip(0, 7100)
    shade_9 = (212 - 0.9 * slope * np.cos(np.radians(aspect - 135)) + rng.normal(0, 15, n_rows)).clip(0, 255)
    shade_noon = (223 - 0.5 * slope + rng.normal(0, 12, n_rows)).clip(0, 255)
    shade_3 = (142 + 1.2 * slope * np.cos(np.radians(aspect - 225)) + rng.normal(0, 25, n_rows)).clip(0, 255)
    fire_h = rng.exponential(1980, n_rows).clip(0, 7200)
    terrain = np.column_stack([elevation, aspect, slope, hydro_h, hydro_v, road_h,
                               shade_9, shade_noon, shade_3, fire_h]).round()

    # Areas and soils depend on elevation, as in the real data.
    area_logits = np.outer((elevation - 2960) / 280, [0.8, -0.4, 1.2, -1.6]) + np.log([0.45, 0.05, 0.44, 0.06])
    area = _sample_categorical(rng, area_logits)
    soil_pref = rng.normal(0, 1, N_SOIL)
    soil_logits = (np.outer((elevation - 2960) / 280, soil_pref) + rng.normal(0, 1.2, N_SOIL)
                   + 0.5 * rng.normal(0, 1, (N_WILDERNESS, N_SOIL))[area])
    soil = _sample_categorical(rng, soil_logits)

    # Class logits: an elevation band per class, plus soil, area and terrain effects.
    effects = np.random.default_rng(1234)  # the "nature" of the task is fixed across seeds
    logits = -0.5 * ((elevation[:, None] - _COVER_ELEVATION) / _COVER_SPREAD) ** 2 + np.log(_COVER_PRIOR)
    logits += effects.normal(0, 0.8, (N_SOIL, COVERTYPE_CLASSES))[soil]
    logits += effects.normal(0, 0.6, (N_WILDERNESS, COVERTYPE_CLASSES))[area]
    logits += np.outer(np.tanh((hydro_h - 250) / 200), effects.normal(0, 0.4, COVERTYPE_CLASSES))
    logits += np.outer(np.tanh((road_h - 2000) / 1500), effects.normal(0, 0.4, COVERTYPE_CLASSES))
    logits += np.outer(np.tanh((slope - 14) / 8) * np.tanh((fire_h - 1800) / 1500),
                       effects.normal(0, 0.5, COVERTYPE_CLASSES))
    y = _sample_categorical(rng, 1.6 * logits).astype(np.float64)
    X = np.column_stack([terrain, _one_hot(area, N_WILDERNESS), _one_hot(soil, N_SOIL)])
    if binary:
        y = (y == 1).astype(np.float64)
    return X, y


def _sample_categorical(rng, logits: np.ndarray) -> np.ndarray:
    """One draw per row from softmax(logits) (Gumbel-max)."""
    return np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)


def make_higgs(n_rows: int = 1_000_000, seed: int = 0):
    """(X, y): X is (n_rows, 28): lepton (pT, eta, phi), missing energy (magnitude, phi),
    4 jets (pT, eta, phi, b-tag), then 7 invariant-mass-like features. y: 1 = signal."""
    rng = np.random.default_rng(seed)
    signal = rng.random(n_rows) < 0.53
    s = signal.astype(np.float64)

    def pt(scale_bg, scale_sig):
        return rng.lognormal(0.0, 0.45, n_rows) * np.where(signal, scale_sig, scale_bg)

    def eta():
        return rng.normal(0, 1.0, n_rows).clip(-2.5, 2.5)

    def phi():
        return rng.uniform(-np.pi, np.pi, n_rows)

    lep_pt, lep_eta, lep_phi = pt(0.95, 1.05), eta(), phi()
    met, met_phi = pt(0.9, 1.1), phi()
    jets = []
    for j in range(4):
        jet_pt = pt(1.0 - 0.05 * j, 1.08 - 0.05 * j)
        btag = rng.choice([0.0, 1.1, 2.2], n_rows, p=[0.55, 0.25, 0.2]) * np.where(
            rng.random(n_rows) < 0.25 * s, 1.0, 0.8)
        jets.append((jet_pt, eta(), phi(), btag))
    j_pt = np.array([jet[0] for jet in jets])
    j_eta = np.array([jet[1] for jet in jets])

    def mass(*pts_etas):
        total = 0.0
        for p, e in pts_etas:
            total = total + p * np.cosh(e)
        return np.log1p(total)

    # Signal events cluster around a resonance in the combined masses.
    m_jj = mass((j_pt[0], j_eta[0]), (j_pt[1], j_eta[1])) + 0.3 * s * np.exp(-((j_eta[0] - j_eta[1]) ** 2))
    m_jjj = mass((j_pt[0], j_eta[0]), (j_pt[1], j_eta[1]), (j_pt[2], j_eta[2]))
    m_lv = np.log1p(lep_pt * met * (1 - np.cos(lep_phi - met_phi)) + 0.2 * s)
    m_jlv = m_lv + 0.5 * np.log1p(j_pt[0]) + 0.15 * s * np.cos(lep_phi - jets[0][2])
    m_bb = mass((j_pt[2], j_eta[2]), (j_pt[3], j_eta[3])) + 0.25 * s * (jets[2][3] + jets[3][3] > 2)
    m_wbb = 0.5 * (m_bb + m_jj) + rng.normal(0, 0.1, n_rows)
    m_wwbb = 0.5 * (m_wbb + m_jlv) + 0.1 * s * np.tanh(met - 1) + rng.normal(0, 0.1, n_rows)
    high_level = np.column_stack([m_jj, m_jjj, m_lv, m_jlv, m_bb, m_wbb, m_wwbb])
    high_level += rng.normal(0, 0.35, high_level.shape)  # detector resolution: keeps the task hard
    low_level = [lep_pt, lep_eta, lep_phi, met, met_phi]
    for jet in jets:
        low_level.extend(jet)
    X = np.column_stack(low_level + [high_level])
    return X, s


def make_friedman(n_rows: int = 50_000, n_features: int = 10, noise: float = 1.0, seed: int = 0):
    """(X, y): y = 10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4 + noise; the other
    features are uniform noise."""
    if n_features < 5:
        raise ValueError(f"n_features must be >= 5, got {n_features}")
    rng = np.random.default_rng(seed)
    X = rng.random((n_rows, n_features))
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
         + noise * rng.normal(size=n_rows))
    return X, y


CATEGORICAL_LEVELS = (10, 100, 1000, 5000)


def make_categorical(n_rows: int = 50_000, levels=CATEGORICAL_LEVELS, n_numeric: int = 4, seed: int = 0):
    """Columns 0..len(levels)-1: category codes (floats; 2% NaN) of Zipf-like frequencies,
    each level with its own effect on the target; then `n_numeric` normal features
    (linear effects and a sine)."""
    rng = np.random.default_rng(seed)
    columns, y = [], np.zeros(n_rows)
    for k in levels:
        p = 1.0 / np.arange(1, k + 1) ** 0.7  # a few frequent levels, a long tail
        codes = rng.choice(k, n_rows, p=p / p.sum()).astype(np.float64)
        y += rng.normal(size=k)[codes.astype(int)]
        codes[rng.random(n_rows) < 0.02] = np.nan
        columns.append(codes)
    numeric = rng.normal(size=(n_rows, n_numeric))
    y += numeric @ rng.normal(size=n_numeric) + np.sin(2 * numeric[:, 0])
    y += 0.5 * rng.normal(size=n_rows)
    return np.column_stack(columns + [numeric]), y


def make_bag_of_words(n_rows: int = 100_000, n_features: int = 5_000, density: float = 0.002, seed: int = 0):
    """Sparse input (issue 11): a canonical scipy CSR matrix of counts 1..5 at random
    columns (~density * n_features per row, a column drawn twice adds up), and binary labels
    from a sparse linear model (10% of the features matter, the same model for any seed)
    plus noise. Needs scipy."""
    import scipy.sparse as sp

    coef_rng = np.random.default_rng(12345)
    coef = np.where(coef_rng.random(n_features) < 0.1, coef_rng.normal(size=n_features), 0.0)
    rng = np.random.default_rng(seed)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(rng.binomial(n_features, density, n_rows), out=indptr[1:])
    index_dtype = np.int32 if indptr[-1] < 2**31 else np.int64
    indices = rng.integers(0, n_features, int(indptr[-1]), dtype=index_dtype)
    data = rng.integers(1, 6, int(indptr[-1])).astype(np.float64)
    X = sp.csr_matrix((data, indices, indptr.astype(index_dtype)), shape=(n_rows, n_features))
    X.sum_duplicates()  # sorted indices, no duplicates
    margin = X @ coef
    noise = rng.normal(scale=0.5 * margin.std() + 1e-12, size=n_rows)
    return X, (margin + noise > np.median(margin)).astype(np.float64)


def train_test_split(X, y, test_fraction: float = 0.2, seed: int = 0):
    """A seeded random split: (X_train, X_test, y_train, y_test)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    n_test = int(round(len(y) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return X[train], X[test], y[train], y[test]
