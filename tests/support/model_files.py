"""The model-file tests' models, reference checker and hypothesis strategies (binary and
JSON encodings both use them)."""

import functools
import io
import json
import os

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import boosters as bst


TREE_ARRAYS = {"split_feature": np.int32, "threshold": np.float64, "threshold_bin": np.int32,
               "default_left": np.uint8, "left_child": np.int32, "right_child": np.int32,
               "value": np.float64, "gain": np.float64, "cover": np.float64, "n_samples": np.int64}

ARRAY_DTYPES = {**TREE_ARRAYS, "base_scores": np.float64, "tree_group": np.int32, "tree_sizes": np.int64}

N_FEATURES = 4

FUZZ = int(os.environ.get("BOOSTERS_FUZZ_EXAMPLES", "0"))


def fuzz_settings(ci_examples: int):
    return settings(max_examples=FUZZ or ci_examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def query_rows() -> np.ndarray:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(64, N_FEATURES))
    X[rng.random(X.shape) < 0.15] = np.nan
    X[0], X[1], X[2] = np.inf, -np.inf, np.nan
    return X


@functools.lru_cache(maxsize=None)
def model_bytes(kind: str) -> bytes:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, N_FEATURES))
    X[rng.random(X.shape) < 0.1] = np.nan
    if kind == "softmax":  # 2 rounds x 3 classes: tree groups matter
        y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5]).astype(float)
        cfg = bst.GBDTConfig(n_estimators=2, max_depth=2, objective=bst.Objective.softmax(3))
    else:
        y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1] * X[:, 2])
        cfg = bst.GBDTConfig(n_estimators=3, max_depth=3)
    return bst.GBDTModel.train(bst.Dataset(X, y, feature_names=list("abcd")), config=cfg).to_bytes()


def decode(data: bytes):
    """The file's header (dict) and arrays, read with NumPy itself."""
    with np.load(io.BytesIO(data)) as z:
        arrays = {name: z[name] for name in z.files}
    return json.loads(arrays.pop("header").tobytes()), arrays


def reference_is_valid(header, arrays) -> bool:
    """The format's rules, checked with plain loops: exact dtypes, one length, trees of
    >= 1 node whose nodes are all reached exactly once from the root with children after
    their parent and leaves (split feature -1) without children; features below
    n_features, groups below n_groups, no NaN threshold, finite values/gains/covers/base
    scores, default_left 0/1, non-negative bins and counts."""
    if set(arrays) != set(ARRAY_DTYPES):
        return False
    if any(a.dtype != ARRAY_DTYPES[name] or a.ndim != 1 for name, a in arrays.items()):
        return False
    n_features, n_groups = header["n_features"], header["n_groups"]
    n = len(arrays["split_feature"])
    if any(len(arrays[name]) != n for name in TREE_ARRAYS):
        return False
    sizes, groups, base = (arrays[k].tolist() for k in ("tree_sizes", "tree_group", "base_scores"))
    if len(groups) != len(sizes) or any(s < 1 for s in sizes) or sum(sizes) != n:
        return False
    if len(base) != n_groups or not all(np.isfinite(base)) or any(not 0 <= g < n_groups for g in groups):
        return False
    a = {name: arrays[name].tolist() for name in TREE_ARRAYS}
    for i in range(n):
        if np.isnan(a["threshold"][i]) or not all(np.isfinite(a[k][i]) for k in ("value", "gain", "cover")):
            return False
        if a["default_left"][i] > 1 or a["threshold_bin"][i] < 0 or a["n_samples"][i] < 0:
            return False
        if not -1 <= a["split_feature"][i] < n_features:
            return False
    start = 0
    for size in sizes:
        seen = [False] * size
        stack = [0]
        while stack:
            node = stack.pop()
            if seen[node]:
                return False
            seen[node] = True
            left, right = a["left_child"][start + node], a["right_child"][start + node]
            if a["split_feature"][start + node] == -1:
                if (left, right) != (-1, -1):
                    return False
                continue
            for child in (left, right):
                if not node < child < size:
                    return False
                stack.append(child)
        if not all(seen):
            return False
        start += size
    return True


def reference_margins(arrays, n_groups, X) -> np.ndarray:
    """(n_rows, n_groups): base scores, then every tree's leaf value in boosting order
    (the kernel's order of additions, so equality is exact). Only for valid arrays."""
    out = np.zeros((len(X), n_groups))
    out += arrays["base_scores"]
    rows = np.arange(len(X))
    start = 0
    for size, group in zip(arrays["tree_sizes"].tolist(), arrays["tree_group"].tolist()):
        node = np.zeros(len(X), dtype=np.int64)
        for _ in range(size):  # a path is shorter than the tree
            at = start + node
            feature = arrays["split_feature"][at]
            inner = feature >= 0
            if not inner.any():
                break
            x = X[rows, np.maximum(feature, 0)]
            left = np.where(np.isnan(x), arrays["default_left"][at] == 1, x <= arrays["threshold"][at])
            child = np.where(left, arrays["left_child"][at], arrays["right_child"][at])
            node = np.where(inner, child, node)
        out[:, group] += arrays["value"][start + node]
        start += size
    return out


def reference_predict(header, arrays, X) -> np.ndarray:
    margins = reference_margins(arrays, header["n_groups"], X)
    name = header["objective"]["name"]
    if name == "squared":
        return margins[:, 0]
    if name == "logistic":
        return 1 / (1 + np.exp(-margins[:, 0]))
    e = np.exp(margins - margins.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def assert_predicts_like_reference(model, header, arrays):
    X = query_rows()
    margins = reference_margins(arrays, header["n_groups"], X)
    raw = model.predict_raw(X)
    np.testing.assert_array_equal(raw if raw.ndim == 2 else raw[:, None], margins)
    np.testing.assert_allclose(model.predict(X), reference_predict(header, arrays, X), rtol=1e-12, atol=1e-300)

SPECIAL_INTS = [-(2**63), -(2**31) - 1, -(2**31), -2, -1, 0, 1, 2, 3, 5, 7, 8, 15, 255, 256, 2**31 - 1, 2**31,
                2**32, 2**62]


values = st.one_of(st.sampled_from(SPECIAL_INTS), st.integers(-20, 40),
                   st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([np.nan, np.inf, -np.inf, 1e308]))


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 2**40), st.floats(allow_nan=True), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=5)
