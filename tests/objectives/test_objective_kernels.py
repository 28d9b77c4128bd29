"""Objective gradient kernels and objectives.py against the documented NumPy formulas."""

import numpy as np
import pytest
from scipy.special import expit, softmax as scipy_softmax

from boosters.config import Objective
from boosters.objectives import _gradients
from boosters.objectives.registry import make_objective

MIN_HESSIAN = 1e-16
N = 10_001  # not a multiple of any chunk size


def kernel_of(objective):
    """The objective's gradient kernel as a function (margins, y, w, out, n_threads)."""
    def gradients(margins, y, w, out, n_threads=1):
        _gradients.GradientKernel(objective, margins, y, w, out, n_threads).run()
    return gradients


SQUARED_ERROR, LOGISTIC, SOFTMAX = kernel_of("squared"), kernel_of("logistic"), kernel_of("softmax")


def run(kernel, margins, y, w=None, n_threads=1):
    margins = np.ascontiguousarray(margins, dtype=np.float64)
    out = np.full((margins.shape[0], margins.shape[1], 2), np.nan, dtype=np.float32)
    kernel(margins, np.ascontiguousarray(y, dtype=np.float64),
           np.empty(0) if w is None else np.ascontiguousarray(w, dtype=np.float64), out, n_threads)
    return out


def ref_squared(margins, y, w):
    w = np.ones_like(y) if w is None else w
    return np.stack([w * (margins[0] - y), w], axis=-1)[None]


def ref_logistic(margins, y, w):
    w = np.ones_like(y) if w is None else w
    p = expit(margins[0])
    return np.stack([w * (p - y), w * np.maximum(p * (1 - p), MIN_HESSIAN)], axis=-1)[None]


def ref_softmax(margins, y, w):
    k = margins.shape[0]
    w = np.ones_like(y) if w is None else w
    p = scipy_softmax(margins, axis=0)
    onehot = (np.arange(k)[:, None] == y[None, :].astype(np.int64)).astype(np.float64)
    g = w * (p - onehot)
    h = w * np.maximum(k / (k - 1) * p * (1 - p), MIN_HESSIAN)
    return np.stack([g, h], axis=-1)


def assert_gradients_close(got, want):
    assert got.dtype == np.float32
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got[..., 0], want[..., 0], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(got[..., 1], want[..., 1], rtol=1e-6, atol=0)


@pytest.fixture(scope="module")
def rng_data():
    rng = np.random.default_rng(30)
    return dict(
        margins=rng.normal(0, 3, size=(5, N)),
        y_reg=rng.normal(0, 10, size=N),
        y_bin=rng.integers(0, 2, size=N).astype(np.float64),
        y_cls=rng.integers(0, 5, size=N).astype(np.float64),
        w=rng.uniform(0.0, 5.0, size=N),
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_squared_error(rng_data, weighted):
    m, y = rng_data["margins"][:1], rng_data["y_reg"]
    w = rng_data["w"] if weighted else None
    got = run(SQUARED_ERROR, m, y, w)
    np.testing.assert_array_equal(got, ref_squared(m, y, w).astype(np.float32))


@pytest.mark.parametrize("weighted", [False, True])
def test_logistic(rng_data, weighted):
    m, y = rng_data["margins"][:1], rng_data["y_bin"]
    w = rng_data["w"] if weighted else None
    assert_gradients_close(run(LOGISTIC, m, y, w), ref_logistic(m, y, w))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_softmax(rng_data, weighted, k):
    m = rng_data["margins"][:k]
    y = rng_data["y_cls"] % k
    w = rng_data["w"] if weighted else None
    got = run(SOFTMAX, m, y, w)
    assert_gradients_close(got, ref_softmax(m, y, w))
    # the gradients of one row sum to zero (probabilities sum to one)
    ww = np.ones(N) if w is None else w
    assert np.all(np.abs(got[..., 0].astype(np.float64).sum(axis=0)) <= 1e-6 * (1 + ww))


def test_zero_weights_give_zero_gradients(rng_data):
    w = np.zeros(N)
    for kernel, m, y in ((SQUARED_ERROR, rng_data["margins"][:1], rng_data["y_reg"]),
                         (LOGISTIC, rng_data["margins"][:1], rng_data["y_bin"]),
                         (SOFTMAX, rng_data["margins"][:3], rng_data["y_cls"] % 3)):
        assert np.all(run(kernel, m, y, w) == 0.0)


EXTREME = np.array([-1e3, -745.0, -50.0, -40.0, -20.0, 0.0, 20.0, 40.0, 50.0, 745.0, 1e3])


@pytest.mark.parametrize("weighted", [False, True])
def test_logistic_extreme_margins(weighted):
    m = np.tile(EXTREME, 2)[None]
    y = np.repeat([0.0, 1.0], len(EXTREME))
    w = np.linspace(0.5, 3.0, len(y)) if weighted else None
    ww = np.ones_like(y) if w is None else w
    got = run(LOGISTIC, m, y, w)
    assert np.all(np.isfinite(got))
    assert_gradients_close(got, ref_logistic(m, y, w))
    saturated = np.abs(m[0]) >= 40  # p (1 - p) < 1e-16: the floor
    np.testing.assert_array_equal(got[0, saturated, 1], (ww[saturated] * MIN_HESSIAN).astype(np.float32))
    assert np.all(got[0, :, 1] >= (ww * MIN_HESSIAN).astype(np.float32))
    # gradient: w (p - y) with p exactly 0 or 1 at the far ends
    far = np.abs(m[0]) >= 745
    np.testing.assert_array_equal(got[0, far, 0], (ww * ((m[0] > 0) - y))[far].astype(np.float32))


@pytest.mark.parametrize("k", [2, 4])
def test_softmax_extreme_margins(k):
    rng = np.random.default_rng(31)
    n = 500
    m = rng.choice([-1e3, -745.0, -40.0, 0.0, 40.0, 745.0, 1e3], size=(k, n))
    m[:, :10] = 1e3  # all equal and huge: uniform probabilities
    m[:, 10:20] = -1e3
    y = rng.integers(0, k, size=n).astype(np.float64)
    w = rng.uniform(0.5, 2.0, size=n)
    got = run(SOFTMAX, m, y, w)
    assert np.all(np.isfinite(got))
    assert_gradients_close(got, ref_softmax(m, y, w))
    assert np.all(got[..., 1] >= (w * MIN_HESSIAN).astype(np.float32))
    np.testing.assert_allclose(got[:, :20, 0], (w[:20] * (1 / k - (np.arange(k)[:, None] == y[:20])))
                               .astype(np.float32), rtol=1e-6)
    # a class whose probability is 0 or 1 gets exactly the floor
    p = scipy_softmax(m, axis=0)
    sat = (p == 0.0) | (p == 1.0)
    assert sat.any()
    np.testing.assert_array_equal(got[..., 1][sat], np.broadcast_to(w * MIN_HESSIAN, p.shape)[sat].astype(np.float32))


@pytest.mark.parametrize("n_threads", [2, 3, 4])
def test_threads_give_identical_gradients(rng_data, n_threads):
    d = rng_data
    cases = [(SQUARED_ERROR, d["margins"][:1], d["y_reg"]),
             (LOGISTIC, d["margins"][:1], d["y_bin"]),
             (SOFTMAX, d["margins"], d["y_cls"])]
    for kernel, m, y in cases:
        for w in (None, d["w"]):
            np.testing.assert_array_equal(run(kernel, m, y, w, n_threads), run(kernel, m, y, w, 1))


def test_bad_shapes_are_rejected(rng_data):
    m, y = rng_data["margins"], rng_data["y_bin"]
    out1 = np.zeros((1, N, 2), dtype=np.float32)
    with pytest.raises(ValueError):
        LOGISTIC(np.ascontiguousarray(m[:2]), y, np.empty(0), out1, 1)  # two outputs
    with pytest.raises(ValueError):
        SQUARED_ERROR(np.ascontiguousarray(m[:1, :-1]), y, np.empty(0), out1, 1)
    with pytest.raises(ValueError):
        SQUARED_ERROR(np.ascontiguousarray(m[:1]), y, np.empty(0), np.zeros((1, N - 1, 2), np.float32), 1)
    with pytest.raises(ValueError):
        SQUARED_ERROR(np.ascontiguousarray(m[:1]), y, np.ones(N - 1), out1, 1)
    with pytest.raises(ValueError):
        SOFTMAX(np.ascontiguousarray(m[:3]), y, np.empty(0), np.zeros((2, N, 2), np.float32), 1)
    with pytest.raises(ValueError):
        SOFTMAX(np.ascontiguousarray(m[:1]), y, np.empty(0), out1, 1)  # one class


def test_a_gradient_kernel_reads_its_margins_at_each_run(rng_data):
    """The boosting rounds bind one kernel to the training's buffers and run it each round
    (without the GIL): it must read the margins as they are then, not as they were bound."""
    d = rng_data
    for name, k, y, ref in (("squared", 1, d["y_reg"], ref_squared), ("logistic", 1, d["y_bin"], ref_logistic),
                            ("softmax", 4, d["y_cls"] % 4, ref_softmax)):
        margins = np.ascontiguousarray(d["margins"][:k])
        out = np.full((k, N, 2), np.nan, dtype=np.float32)
        kernel = _gradients.GradientKernel(name, margins, y, d["w"], out, 2)
        kernel.run()
        assert_gradients_close(out, ref(margins, y, d["w"]))
        margins += np.linspace(-1.0, 1.0, N)  # in place, as the rounds update them
        kernel.run()
        assert_gradients_close(out, ref(margins, y, d["w"]))


def test_gradient_kernel_rejects_an_unknown_objective(rng_data):
    out = np.zeros((1, N, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="objective must be one of"):
        _gradients.GradientKernel("cox", np.zeros((1, N)), rng_data["y_reg"], np.empty(0), out)


# -- objectives.py ----------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True])
def test_gradients_wrapper_passes_weights(rng_data, weighted):
    d = rng_data
    w = d["w"] if weighted else None
    for spec, m, y, ref in ((Objective.squared(), d["margins"][:1], d["y_reg"], ref_squared),
                            (Objective.logistic(), d["margins"][:1], d["y_bin"], ref_logistic),
                            (Objective.softmax(5), d["margins"], d["y_cls"], ref_softmax)):
        obj = make_objective(spec)
        assert obj.n_outputs == m.shape[0]
        out = np.empty((m.shape[0], N, 2), dtype=np.float32)
        obj.gradients(np.ascontiguousarray(m), y, w, out, 2)
        assert_gradients_close(out, ref(m, y, w))


@pytest.mark.parametrize("weighted", [False, True])
def test_init_scores(rng_data, weighted):
    d = rng_data
    w = d["w"] if weighted else None
    ww = np.ones(N) if w is None else w
    sq = make_objective(Objective.squared()).init_scores(d["y_reg"], w)
    np.testing.assert_allclose(sq, [np.sum(ww * d["y_reg"]) / np.sum(ww)], rtol=1e-12)
    lg = make_objective(Objective.logistic()).init_scores(d["y_bin"], w)
    pos, neg = np.sum(ww * d["y_bin"]), np.sum(ww * (1 - d["y_bin"]))
    np.testing.assert_allclose(lg, [np.log(pos / neg)], rtol=1e-10)
    sm = make_objective(Objective.softmax(5)).init_scores(d["y_cls"], w)
    priors = np.array([ww[d["y_cls"] == c].sum() for c in range(5)]) / ww.sum()
    np.testing.assert_allclose(sm, np.log(priors), rtol=1e-10)
    assert sq.shape == lg.shape == (1,) and sm.shape == (5,)


@pytest.mark.parametrize("weighted", [False, True])
def test_init_scores_zero_the_total_gradient(rng_data, weighted):
    """The optimal constant: at the init scores the (weighted) gradients sum to zero."""
    d = rng_data
    w = d["w"] if weighted else None
    for spec, y, kernel in ((Objective.squared(), d["y_reg"], SQUARED_ERROR),
                            (Objective.logistic(), d["y_bin"], LOGISTIC),
                            (Objective.softmax(5), d["y_cls"], SOFTMAX)):
        init = make_objective(spec).init_scores(y, w)
        m = np.repeat(init[:, None], N, axis=1)
        g = run(kernel, m, y, w)[..., 0].astype(np.float64)
        np.testing.assert_allclose(g.sum(axis=1), 0.0, atol=1e-6 * N)


def test_init_scores_edge_cases():
    y1 = np.ones(50)
    lg = make_objective(Objective.logistic())
    assert np.isfinite(lg.init_scores(y1, None)).all() and lg.init_scores(y1, None)[0] > 30
    assert np.isfinite(lg.init_scores(0 * y1, None)).all() and lg.init_scores(0 * y1, None)[0] < -30
    # a zero weight removes a row from the mean
    y = np.array([0.0, 1.0, 1.0, 0.0])
    w = np.array([1.0, 3.0, 0.0, 0.0])
    np.testing.assert_allclose(lg.init_scores(y, w), [np.log(3.0)], rtol=1e-12)
    np.testing.assert_allclose(make_objective(Objective.squared()).init_scores(np.array([1.0, 5.0]), np.array([3.0, 1.0])),
                               [2.0], rtol=1e-15)
    # a class never seen: log of the floor, finite
    sm = make_objective(Objective.softmax(4))
    scores = sm.init_scores(np.array([0.0, 0.0, 1.0, 3.0]), None)
    np.testing.assert_allclose(scores, [np.log(0.5), np.log(0.25), np.log(1e-15), np.log(0.25)], rtol=1e-12)


def test_check_labels():
    lg = make_objective(Objective.logistic())
    lg.check_labels(np.array([0.0, 1.0, 1.0, 0.5]))  # probability labels too
    for bad in (1.5, 2.0, -1.0, np.nan):
        with pytest.raises(ValueError):
            lg.check_labels(np.array([0.0, bad, 1.0]))
    sm = make_objective(Objective.softmax(3))
    sm.check_labels(np.array([0.0, 1.0, 2.0, 2.0]))
    for bad in (3.0, -1.0, 1.5, np.nan):
        with pytest.raises(ValueError):
            sm.check_labels(np.array([0.0, bad]))
    make_objective(Objective.squared()).check_labels(np.array([-3.5, 1e9]))


def test_transform(rng_data):
    m = rng_data["margins"].T.copy()  # (n_rows, n_outputs)
    np.testing.assert_array_equal(make_objective(Objective.squared()).transform(m[:, :1]), m[:, 0])
    np.testing.assert_allclose(make_objective(Objective.logistic()).transform(m[:, :1]), expit(m[:, 0]), rtol=1e-14)
    np.testing.assert_allclose(make_objective(Objective.softmax(5)).transform(m), scipy_softmax(m, axis=1), rtol=1e-12)
    extreme = np.array([[1e3, -1e3, 0.0], [1e3, 1e3, 1e3], [-1e3, -1e3, -1e3]])
    p = make_objective(Objective.softmax(3)).transform(extreme)
    np.testing.assert_allclose(p, [[1, 0, 0], [1 / 3] * 3, [1 / 3] * 3], rtol=1e-12, atol=1e-300)
    with np.errstate(over="ignore"):  # exp(1e3) may overflow to inf: 1 / (1 + inf) is still 0
        got = make_objective(Objective.logistic()).transform(EXTREME[:, None])
    np.testing.assert_allclose(got, expit(EXTREME), rtol=1e-14, atol=0)
    assert got[0] == 0.0 and got[-1] == 1.0


# -- the shared pointwise loop: several outputs, label rows, one parameter per output ------

def test_pointwise_outputs_read_their_label_row_and_parameter(rng_data):
    """Three outputs: with three label rows each output reads its own (several targets),
    with one every output reads it; each output's Tweedie power is its own parameter.
    Tolerance: float32 output, rtol 1e-6 (assert_gradients_close)."""
    d = rng_data
    margins = np.ascontiguousarray(d["margins"][:3] / 3)  # log-means of moderate size
    labels = np.ascontiguousarray(np.abs(d["margins"][2:5]))
    powers = np.array([1.2, 1.5, 1.8])
    for label_rows in (labels, labels[:1]):
        out = np.full((3, N, 2), np.nan, dtype=np.float32)
        _gradients.GradientKernel("tweedie", margins, label_rows, d["w"], out, 2, parameters=powers).run()
        y = np.broadcast_to(label_rows, (3, N))
        p = powers[:, None]
        a, b = np.exp((2 - p) * margins), y * np.exp((1 - p) * margins)
        want = np.stack([d["w"] * (a - b), d["w"] * ((2 - p) * a - (1 - p) * b)], axis=-1)
        assert_gradients_close(out, want)
        out2 = np.full((3, N, 2), np.nan, dtype=np.float32)
        _gradients.GradientKernel("squared", margins, label_rows, d["w"], out2, 1).run()
        assert_gradients_close(out2, np.stack([d["w"] * (margins - y), np.broadcast_to(d["w"], (3, N))], axis=-1))


def test_gradient_kernel_checks_label_rows_and_parameters(rng_data):
    margins, out = np.zeros((2, N)), np.zeros((2, N, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="labels must have 1 or n_outputs"):
        _gradients.GradientKernel("squared", margins, np.zeros((3, N)), np.empty(0), out)
    with pytest.raises(ValueError, match="parameters must be one number or one per output"):
        _gradients.GradientKernel("tweedie", margins, np.ones(N), np.empty(0), out, parameters=[1.5, 1.5, 1.5])
    with pytest.raises(ValueError, match="labels must have 1"):  # softmax reads one row of class labels
        _gradients.GradientKernel("softmax", margins, np.zeros((2, N)), np.empty(0), out)
    with pytest.raises(ValueError, match="one output"):
        _gradients.GradientKernel("pairwise", margins, np.zeros(N), np.empty(0), out, groups=np.array([0, N]))


# -- gradients are the loss's derivatives -------------------------------------------------------

def _tweedie_loss(f, y, p=1.5):
    return np.exp((2 - p) * f) / (2 - p) - y * np.exp((1 - p) * f) / (1 - p)


# name -> (loss(f, y), labels(rng, n), kernel parameters, whether the kernel's hessian is the
# loss's: Poisson's is taken max_delta_step above the margin on purpose)
POINTWISE_LOSSES = {
    "squared": (lambda f, y: 0.5 * (f - y) ** 2, lambda rng, n: rng.normal(size=n), 0.0, True),
    "logistic": (lambda f, y: np.logaddexp(0, f) - y * f, lambda rng, n: (rng.random(n) < 0.5) * 1.0, 0.0, True),
    "poisson": (lambda f, y: np.exp(f) - y * f, lambda rng, n: rng.poisson(2.0, n) * 1.0, 0.7, False),
    "gamma": (lambda f, y: y * np.exp(-f) + f, lambda rng, n: rng.gamma(2.0, 1.0, n), 0.0, True),
    "tweedie": (_tweedie_loss, lambda rng, n: rng.gamma(2.0, 1.0, n) * (rng.random(n) < 0.7), 1.5, True),
}


@pytest.mark.parametrize("name", sorted(POINTWISE_LOSSES))
def test_pointwise_gradients_are_finite_differences_of_the_loss(name):
    """Central differences of the loss (step 1e-4, float64): the kernel's gradient within
    1e-4 relative (float32 output and the O(step^2) difference error), its hessian within
    1e-3 (a second difference loses more digits)."""
    loss, labels, parameter, exact_hessian = POINTWISE_LOSSES[name]
    rng = np.random.default_rng(7)
    n, step = 2000, 1e-4
    f, y = rng.normal(0, 1, size=n), labels(rng, n)
    out = np.empty((1, n, 2), dtype=np.float32)
    _gradients.GradientKernel(name, f[None].copy(), y, np.empty(0), out, 1, parameters=parameter).run()
    gradient = (loss(f + step, y) - loss(f - step, y)) / (2 * step)
    np.testing.assert_allclose(out[0, :, 0], gradient, rtol=1e-4, atol=1e-6)
    hessian = (loss(f + step, y) - 2 * loss(f, y) + loss(f - step, y)) / step ** 2
    if not exact_hessian:  # Poisson: exp(f + max_delta_step), the loss's exp(f) inflated
        hessian = hessian * np.exp(parameter)
    np.testing.assert_allclose(out[0, :, 1], hessian, rtol=1e-3, atol=1e-4)
