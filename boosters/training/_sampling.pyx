"""Row sampling per boosting round (RFC-0008 RowSamplingParams), without the GIL.

A round's sample is the only set of rows its trees see (the partitioner's root; see
_partition.pyx); the rows outside it still get every tree's value in their margins.
Both kinds draw from a counter-based stream keyed by (seed, round), one draw per row
(`_lib/random.pxd`): the sample depends on neither the thread count nor the blocks
the rounds are grown in. The selection itself is a serial pass over the rows
(Knuth's selection sampling, algorithm S: row i of the n - i left is taken with
probability need / (n - i)), so the sample has exactly the asked size, every subset
of that size equally likely, and comes out in increasing row order.

- uniform (`subsample`): n_sample rows, shared by the round's trees (one per output),
  as LightGBM's bagging with bagging_freq=1.
- queries (`subsample` with a ranking objective): n_sample whole query groups drawn
  uniformly (algorithm S over the queries), so a query's rows stay together; the
  sample's size in rows varies by round. As LightGBM's bagging_by_query.
- GOSS (LightGBM's gradient-based one-side sampling): the top_k rows with the largest
  sum over outputs of |grad * hess| (ties: lower rows first), plus other_k rows drawn
  uniformly from the rest, whose gradients and hessians (every output's) are multiplied
  by `weight` = (1 - a) / b in place. The first `warmup_rounds` rounds use every row.
- Bayesian bootstrap (CatBoost's bootstrap_type="Bayesian", `bagging_temperature` T):
  every row, its gradients and hessians (every output's) multiplied in place by
  w = (-log U)^T, U uniform in (0, 1] drawn by (seed, round, row): an exponential
  weight at T = 1 (mean 1, variance 1), 1 at T = 0. The round's trees see every row.
"""

from cython.parallel cimport prange
from libc.math cimport fabs, log, pow
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

import numpy as np

from boosters.data.groups import kernel_boundaries

from boosters._lib.random cimport stream_key, uniform01
from boosters._lib.stable_split cimport reverse_second_part, store_both_ends
from boosters._lib.types cimport row_t

cdef enum:
    UNIFORM = 1
    GOSS = 2
    QUERIES = 3
    BAYESIAN = 4

KINDS = {"uniform": UNIFORM, "goss": GOSS, "queries": QUERIES, "bayesian": BAYESIAN}
# the streams of the row samples (one per round); the quantizer's streams have their own salt
cdef uint64_t SAMPLING_SALT = 0x3C6EF372FE94F82BULL
cdef uint64_t BAYESIAN_SALT = 0xA54FF53A5F1D36F1ULL  # the Bayesian bootstrap's weights


cdef inline double bayesian_weight(uint64_t key, Py_ssize_t row, double temperature) noexcept nogil:
    """(-log U)^temperature, U = 1 - uniform01 in (0, 1] (pow(x, 0) is 1, even at x = 0;
    pow(x, 1) is x: CatBoost's default temperature skips the pow, ~40 ns a row)."""
    cdef double e = -log(1.0 - uniform01(key, row))
    return e if temperature == 1.0 else pow(e, temperature)


cdef inline size_t takes(uint64_t key, Py_ssize_t i, Py_ssize_t n, Py_ssize_t need) noexcept nogil:
    """Algorithm S's draw: row i of n is taken when `need` rows are still to be taken."""
    return uniform01(key, i) * <double> (n - i) < <double> need


cdef Py_ssize_t uniform_range(uint64_t key, Py_ssize_t n, Py_ssize_t m, Py_ssize_t start, Py_ssize_t stop,
                              Py_ssize_t n_before, row_t* out) noexcept nogil:
    """The part of the sample of m rows from 0..n-1 (algorithm S) that lies in rows
    start..stop-1, given the n_before sampled rows below `start`: out[:k] = those rows
    (as row - start), out[k:stop - start] = the others, both increasing; returns k.
    One branch-free stable split (_lib/stable_split.pxd)."""
    cdef Py_ssize_t i, size = stop - start, n_taken = 0, n_other = 0
    for i in range(start, stop):
        store_both_ends(out, size, <row_t> (i - start), takes(key, i, n, m - n_before - n_taken),
                        &n_taken, &n_other)
    reverse_second_part(out, n_taken, size)
    return n_taken


cdef Py_ssize_t uniform_rows(uint64_t key, Py_ssize_t n, Py_ssize_t m, row_t* out) noexcept nogil:
    """out[:m] = m rows drawn from 0..n-1 (algorithm S), out[m:n] = the others, both
    increasing; returns m."""
    return uniform_range(key, n, m, 0, n, 0, out)


cdef enum:
    DIGIT_BITS = 11                 # radix select: 2048 counters, 6 passes at most


cdef double kth_largest(uint64_t* keys, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The k-th largest (1 <= k <= n) of n non-negative finite doubles given as their bit
    patterns (which order them as unsigned integers); keys is overwritten. Radix select
    from the top digit: per pass, count the candidates' digits, keep those of the digit
    holding the k-th largest (compacted, branch-free). Deterministic, O(n) per pass, and
    usually one or two passes over many rows."""
    cdef Py_ssize_t counts[1 << DIGIT_BITS]
    cdef Py_ssize_t j, m = n, above, w
    cdef int shift = 64 - DIGIT_BITS, d
    cdef uint64_t mask = (1 << DIGIT_BITS) - 1
    cdef double value
    while True:
        memset(counts, 0, sizeof(counts))
        for j in range(m):
            counts[(keys[j] >> shift) & mask] += 1
        above = 0
        d = <int> mask
        while above + counts[d] < k:  # the digit of the k-th largest, from the top
            above += counts[d]
            d -= 1
        k -= above
        if counts[d] != m:  # keep the candidates of that digit
            w = 0
            for j in range(m):
                keys[w] = keys[j]
                w += ((keys[j] >> shift) & mask) == <uint64_t> d
            m = w
        if shift == 0:
            break
        shift = shift - DIGIT_BITS if shift > DIGIT_BITS else 0
    memcpy(&value, &keys[0], sizeof(double))
    return value


cdef struct GossDraw:  # where GOSS's selection pass over the rows stands
    double threshold        # the top_k-th largest score
    Py_ssize_t ties_left    # rows scoring the threshold still to take into the top set
    Py_ssize_t rest_left    # rows outside the top set not passed yet
    Py_ssize_t need         # of them, rows still to draw


cdef Py_ssize_t goss_select(
    uint64_t key,
    const double* scores,   # IN: n rows' scores
    float* gh,              # IN and OUT: (n_outputs, n_gh, 2); rows 0..n-1 here are rows first_row.. of the training
    Py_ssize_t n_gh,
    Py_ssize_t n_outputs,
    Py_ssize_t first_row,
    Py_ssize_t n,
    float w,
    GossDraw* at,           # IN and OUT: where the pass stands before these rows, then after them
    row_t* out,             # OUT: n entries: the rows taken (0..n-1), then the others, both increasing
) noexcept nogil:
    """GOSS's selection over n consecutive rows of the training: the top rows (score
    above the threshold, or at it while ties are left: the first ones), and among the
    others algorithm S's draws (each row's draw seeded by its training row index), whose
    gradients and hessians (every output's) are multiplied by w. Returns the rows taken."""
    cdef Py_ssize_t i, k, n_taken = 0, n_other = 0
    cdef double s
    cdef size_t take
    for i in range(n):
        s = scores[i]
        if s > at.threshold or (s == at.threshold and at.ties_left > 0):
            at.ties_left -= s == at.threshold
            take = 1
        else:
            take = uniform01(key, first_row + i) * <double> at.rest_left < <double> at.need
            if take:
                at.need -= 1
                for k in range(n_outputs):
                    gh[2 * (k * n_gh + i)] *= w
                    gh[2 * (k * n_gh + i) + 1] *= w
            at.rest_left -= 1
        store_both_ends(out, n, <row_t> i, take, &n_taken, &n_other)
    reverse_second_part(out, n_taken, n)
    return n_taken


cdef inline double goss_score(const float* gh, Py_ssize_t n_rows, Py_ssize_t n_outputs, Py_ssize_t row) noexcept nogil:
    """sum over outputs of |grad * hess| (exact products of float32 values)."""
    cdef Py_ssize_t k
    cdef double s = 0.0
    for k in range(n_outputs):
        s += fabs(<double> gh[2 * (k * n_rows + row)] * <double> gh[2 * (k * n_rows + row) + 1])
    return s


cdef class RowSampler:
    """Draws each round's row sample; see the module's docstring. Made by
    `training.sampling.make_row_sampler` from a config."""

    def __init__(self, str kind, Py_ssize_t n_rows, Py_ssize_t n_outputs, uint64_t seed, int n_threads=1, *,
                 Py_ssize_t n_sample=0, Py_ssize_t top_k=0, Py_ssize_t other_k=0, double weight=1.0,
                 Py_ssize_t warmup_rounds=0, groups=None, double temperature=1.0):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        self.kind = KINDS[kind]
        if self.kind == QUERIES:  # n_sample counts queries
            bounds = kernel_boundaries(groups, n_rows, "queries sampling")  # O(1) checks: data.groups validated them
            if not 0 <= n_sample <= bounds.shape[0] - 1:
                raise ValueError(f"n_sample must be in [0, {bounds.shape[0] - 1}] queries, got {n_sample}")
            self.groups = bounds
            self.query_order = np.empty(bounds.shape[0] - 1, dtype=np.uint32)
        elif self.kind == GOSS:
            if not (1 <= top_k <= n_rows and 0 <= other_k <= n_rows - top_k) or not weight > 0:
                raise ValueError(f"GOSS needs 1 <= top_k <= {n_rows}, 0 <= other_k <= n_rows - top_k, "
                                 f"weight > 0; got {top_k}, {other_k}, {weight}")
            n_sample = top_k + other_k
            self.scores = np.empty(n_rows)
            self.keys = np.empty(n_rows, dtype=np.uint64)
        elif self.kind == BAYESIAN:
            if not 0.0 <= temperature < float("inf"):
                raise ValueError(f"temperature must be finite and >= 0, got {temperature}")
            n_sample = n_rows
        elif not 0 <= n_sample <= n_rows:
            raise ValueError(f"n_sample must be in [0, {n_rows}], got {n_sample}")
        self.n_rows, self.n_outputs, self.seed, self.n_threads = n_rows, n_outputs, seed, n_threads
        self.n_sample, self.top_k, self.other_k, self.weight = n_sample, top_k, other_k, weight
        self.warmup_rounds = warmup_rounds
        self.temperature = temperature

    def taken_below(self, uint64_t round_, bounds):
        """Uniform sampling: for each row bound (increasing), how many rows of round
        `round_`'s sample lie below it: what a range of rows needs to draw its part of
        the sample alone (`draw_range`), without the others. One pass over the rows,
        O(1) memory (the data-parallel training's driver: boosters.dask)."""
        cdef const int64_t[::1] b = np.ascontiguousarray(bounds, dtype=np.int64)
        out = np.empty(b.shape[0], dtype=np.int64)
        cdef int64_t[::1] out_v = out
        cdef Py_ssize_t i, j = 0, n_taken = 0, n = self.n_rows
        cdef uint64_t key = stream_key(self.seed, round_, SAMPLING_SALT)
        if self.kind != UNIFORM:
            raise ValueError("taken_below: uniform sampling only")
        if b.shape[0] and (np.any(np.diff(b) < 0) or b[0] < 0 or b[b.shape[0] - 1] > n):
            raise ValueError(f"bounds must increase within [0, {n}]")
        with nogil:
            for i in range(n):
                while j < b.shape[0] and b[j] == i:
                    out_v[j] = n_taken
                    j += 1
                n_taken += takes(key, i, n, self.n_sample - n_taken)
            while j < b.shape[0]:
                out_v[j] = n_taken
                j += 1
        return out

    def draw_range(self, uint64_t round_, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t n_before,
                   row_t[::1] out):  # out: OUT
        """Uniform sampling: the part of round `round_`'s sample in rows start..stop-1,
        given the n_before sampled rows below start (`taken_below`): out[:k] those rows
        minus start, out[k:stop - start] the others, both increasing; returns k. The
        rows the whole sample takes there, draw for draw."""
        if self.kind != UNIFORM:
            raise ValueError("draw_range: uniform sampling only")
        if not (0 <= start <= stop <= self.n_rows and 0 <= n_before <= self.n_sample):
            raise ValueError(f"need 0 <= start <= stop <= {self.n_rows} and 0 <= n_before <= {self.n_sample}")
        if out.shape[0] < stop - start:
            raise ValueError(f"out must hold {stop - start} rows")
        if stop == start:
            return 0
        cdef uint64_t key = stream_key(self.seed, round_, SAMPLING_SALT)
        cdef Py_ssize_t k
        with nogil:
            k = uniform_range(key, self.n_rows, self.n_sample, start, stop, n_before, &out[0])
        return k

    cdef Py_ssize_t sample(
        self,
        uint64_t round_,
        float* gh,                  # IN and OUT: (n_outputs, n_rows, 2) the round's gradients
        row_t* out,                 # OUT: n_rows entries: the sample, then the other rows
    ) noexcept nogil:
        """The round's sample in out[:m], the other rows in out[m:n_rows]; returns m, or -1
        in a warm-up round or under the Bayesian bootstrap (no sample: every row)."""
        cdef uint64_t key = stream_key(self.seed, round_, SAMPLING_SALT)
        if round_ < <uint64_t> self.warmup_rounds or self.n_rows == 0:
            return -1
        if self.kind == BAYESIAN:
            self._bayesian(stream_key(self.seed, round_, BAYESIAN_SALT), gh)
            return -1
        if self.kind == UNIFORM:
            return uniform_rows(key, self.n_rows, self.n_sample, out)
        if self.kind == QUERIES:
            return self._queries(key, out)
        return self._goss(key, gh, out)

    cdef Py_ssize_t _queries(self, uint64_t key, row_t* out) noexcept nogil:
        """n_sample queries drawn uniformly; their rows, then the other queries' rows
        (both increasing, as the queries' rows are contiguous and in order)."""
        cdef Py_ssize_t n_queries = self.groups.shape[0] - 1, t, n_out = 0, n_taken = 0
        cdef int64_t row, q
        uniform_rows(key, n_queries, self.n_sample, <row_t*> &self.query_order[0])
        for t in range(n_queries):
            q = self.query_order[t]
            for row in range(self.groups[q], self.groups[q + 1]):
                out[n_out] = <row_t> row
                n_out += 1
            if t == self.n_sample - 1:
                n_taken = n_out
        return n_taken

    cdef void _bayesian(self, uint64_t key, float* gh) noexcept nogil:  # gh: IN and OUT
        """Every row's gradients and hessians (every output's) times its weight."""
        cdef Py_ssize_t i, k, n = self.n_rows
        cdef double w
        for i in prange(n, schedule="static", num_threads=self.n_threads):
            w = bayesian_weight(key, i, self.temperature)
            for k in range(self.n_outputs):
                gh[2 * (k * n + i)] = <float> (gh[2 * (k * n + i)] * w)
                gh[2 * (k * n + i) + 1] = <float> (gh[2 * (k * n + i) + 1] * w)

    cdef Py_ssize_t _goss(self, uint64_t key, float* gh, row_t* out) noexcept nogil:
        cdef Py_ssize_t i, n = self.n_rows, n_top_above = 0
        cdef GossDraw at
        for i in prange(n, schedule="static", num_threads=self.n_threads):
            self.scores[i] = goss_score(gh, n, self.n_outputs, i)
            memcpy(&self.keys[i], &self.scores[i], sizeof(double))
        at.threshold = kth_largest(&self.keys[0], n, self.top_k)
        for i in range(n):
            n_top_above += self.scores[i] > at.threshold
        at.ties_left = self.top_k - n_top_above  # rows scoring the threshold itself: the first ones
        at.rest_left = n - self.top_k
        at.need = self.other_k
        return goss_select(key, &self.scores[0], gh, n, self.n_outputs, 0, n, <float> self.weight, &at, out)


def goss_scores(const float[:, :, ::1] gh):
    """GOSS's score of each row of the (n_outputs, n_rows, 2) gradients: the sum over
    outputs of |grad * hess| (what a part of the rows contributes to the round's top
    set, for a data-parallel training: boosters.dask)."""
    cdef Py_ssize_t i, n = gh.shape[1]
    scores = np.empty(n)
    cdef double[::1] s = scores
    if gh.shape[2] != 2:
        raise ValueError("gh must be (n_outputs, n_rows, 2)")
    if n and gh.shape[0]:
        with nogil:
            for i in range(n):
                s[i] = goss_score(&gh[0, 0, 0], n, gh.shape[0], i)
    else:
        scores[:] = 0.0
    return scores


def goss_draw_range(uint64_t seed, uint64_t round_, double weight, const double[::1] scores,
                    float[:, :, ::1] gh, Py_ssize_t first_row, tuple at, row_t[::1] out):  # gh: IN and OUT
    """GOSS's selection (of round `round_` of a training seeded `seed`) over rows
    first_row.. of the training, whose scores (goss_scores) and gradients (re-weighted
    by `weight` where drawn) these are: `at` = (threshold, ties left, rest left, need)
    where the round's pass over all rows stands at first_row. out[:k] = the rows taken
    (0..n-1), out[k:n] the others; returns (k, where the pass stands after them): the
    round's sample on one machine, draw for draw."""
    cdef Py_ssize_t n = scores.shape[0], k
    cdef GossDraw state
    cdef uint64_t key = stream_key(seed, round_, SAMPLING_SALT)
    if gh.shape[1] != n or gh.shape[2] != 2 or out.shape[0] < n:
        raise ValueError(f"gh must be (n_outputs, {n}, 2) and out hold {n} rows")
    state.threshold, state.ties_left, state.rest_left, state.need = at
    if n == 0:
        return 0, at
    with nogil:
        k = goss_select(key, &scores[0], &gh[0, 0, 0], n, gh.shape[0], first_row, n, <float> weight, &state, &out[0])
    return k, (state.threshold, state.ties_left, state.rest_left, state.need)


def bayesian_weights(uint64_t seed, uint64_t round_, Py_ssize_t first_row, Py_ssize_t n, double temperature):
    """The Bayesian bootstrap's weights of rows first_row..first_row + n - 1 in round
    `round_` of a training seeded `seed` (what the sampler multiplies their gradients by)."""
    if n < 0 or first_row < 0 or not 0.0 <= temperature < float("inf"):
        raise ValueError(f"need n >= 0, first_row >= 0 and a finite temperature >= 0; got {n}, {first_row}, "
                         f"{temperature}")
    out = np.empty(n)
    cdef double[::1] w = out
    cdef uint64_t key = stream_key(seed, round_, BAYESIAN_SALT)
    cdef Py_ssize_t i
    with nogil:
        for i in range(n):
            w[i] = bayesian_weight(key, first_row + i, temperature)
    return out
