"""Split finding (RFC-0008): best (feature, bin, missing direction) of a node from its
histogram, in parallel over features, then a deterministic argmax.

Gain of a split, with T(G) = sign(G) * max(|G| - l1, 0) and score(G, H) = T(G)^2 / (H + l2):
    gain = 1/2 * [score(G_L, H_L) + score(G_R, H_R) - score(G_P, H_P)] - min_gain_to_split
A split is valid when gain > 0, both children have hessian >= min_child_weight and
rows >= min_samples_leaf. Child row counts are estimated from hessians
(count * H_child / H_parent, as LightGBM does); they are exact for constant hessians.

Bin 0 of a feature holds the rows with a missing value. When the node has such rows,
every threshold is tried with them on the right and on the left, and the split learns
that default direction; value bins 1..b go left, b+1..n right. Ties keep the lowest
feature, then the lowest bin, then missing-right.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t
from libc.math cimport INFINITY, copysign, fabs

from libc.stdlib cimport malloc, free

from boosters._lib.sequences cimport fill
from boosters._lib.types cimport load_word, word_grad, word_hess

cdef enum:
    MIN_BINS_PARALLEL = 2048  # histogram bins (all nodes of a call) below which the scan is serial


cdef inline double threshold_l1(double g, double l1) noexcept nogil:
    """sign(g) max(|g| - l1, 0), branch-free (the sign of a running sum is unpredictable);
    the ternary compiles to maxsd, where fmax() would be a library call."""
    cdef double shrunk = fabs(g) - l1
    return copysign(shrunk if shrunk > 0.0 else 0.0, g)


cdef inline double leaf_score(double g, double h, const SplitParams* p) noexcept nogil:
    cdef double t = threshold_l1(g, p.l1), denom = h + p.l2
    if denom <= 0.0:
        return 0.0
    return t * t / denom


cdef inline double children_score(double gl, double hl, double gr, double hr, const SplitParams* p) noexcept nogil:
    """score(left) + score(right) with one division: a^2/x + b^2/y = (a^2 y + b^2 x) / (x y)."""
    cdef double a = threshold_l1(gl, p.l1), b = threshold_l1(gr, p.l1)
    cdef double x = hl + p.l2, y = hr + p.l2
    if x <= 0.0 or y <= 0.0:
        return leaf_score(gl, hl, p) + leaf_score(gr, hr, p)
    return (a * a * y + b * b * x) / (x * y)


cdef enum:
    SCAN_CHUNK = 256  # candidates per pass (stack arrays); features with more bins loop


ctypedef fused bins_t:
    double      # (grad, hess) float64 pairs
    int64_t     # quantized: one packed word per bin, grad * 2**bits + hess, bits = 32,
    int32_t     # 16
    int16_t     # or 8 (see types.pxd)


cdef inline void scan_direction(const bins_t* bins, Py_ssize_t n_candidates, double gl, double hl,
                                double g, double h, double cnt_factor, double count, double parent_score,
                                const SplitParams* p, int32_t feature, uint8_t default_left,
                                Candidate* best, double inv_g, double inv_h) noexcept nogil:
    """Candidates "value bins 1..b go left", b = 1..n_candidates, with the left side
    starting from (gl, hl). Three passes per chunk: running sums (exact integers for
    packed bins, scaled by inv_g / inv_h), then every candidate's gain without branches
    (invalid ones get -inf; the loop vectorises), then the first maximum. Equal gains
    keep the lowest bin, as the strict > of the last pass does."""
    cdef double left_g[SCAN_CHUNK]
    cdef double left_h[SCAN_CHUNK]
    cdef double gains[SCAN_CHUNK]
    cdef Py_ssize_t start, j, m
    cdef double hlj, hr, rows_left, a, b, x, y, a2, b2, gain
    cdef bint valid
    cdef double min_h = p.min_child_weight, min_rows = p.min_samples_leaf, l1 = p.l1, l2 = p.l2
    cdef double min_gain = p.min_gain
    # Without L1, and with every valid side's hessian + l2 > 0, the general loop's
    # thresholding and guards are identities: a loop without them is a third as long.
    cdef bint plain = l1 == 0.0 and min_h + l2 > 0.0
    cdef double max_rows_left = count - min_rows + 1.0  # floor(r) <= count - min_rows
    cdef double inf = INFINITY
    cdef int64_t packed_g = 0, packed_h = 0, v
    cdef int bits = 4 * sizeof(bins_t)
    start = 0
    while start < n_candidates:
        m = min(<Py_ssize_t> SCAN_CHUNK, n_candidates - start)
        if bins_t is double:
            for j in range(m):
                gl += bins[2 * (start + j)]
                hl += bins[2 * (start + j) + 1]
                left_g[j] = gl
                left_h[j] = hl
        else:
            for j in range(m):
                v = bins[start + j]
                packed_g += word_grad(v, bits)
                packed_h += word_hess(v, bits)
                left_g[j] = gl + packed_g * inv_g
                left_h[j] = hl + packed_h * inv_h
        if plain:
            for j in range(m):  # the same arithmetic as below with l1 = 0 and x, y > 0
                hlj = left_h[j]
                hr = h - hlj
                rows_left = hlj * cnt_factor + 0.5
                a = left_g[j]
                b = g - a
                x = hlj + l2
                y = hr + l2
                gain = 0.5 * ((a * a * y + b * b * x) / (x * y) - parent_score) - min_gain
                valid = (hlj >= min_h) & (hr >= min_h) & (rows_left >= min_rows) & (rows_left < max_rows_left)
                gains[j] = gain if valid else -inf
        else:
            for j in range(m):
                hlj = left_h[j]
                hr = h - hlj
                rows_left = hlj * cnt_factor + 0.5  # rows on the left are floor(rows_left), from hessians
                a = copysign(fabs(left_g[j]) - l1 if fabs(left_g[j]) > l1 else 0.0, left_g[j])
                b = copysign(fabs(g - left_g[j]) - l1 if fabs(g - left_g[j]) > l1 else 0.0, g - left_g[j])
                x = hlj + l2
                y = hr + l2
                a2 = a * a if x > 0.0 else 0.0
                b2 = b * b if y > 0.0 else 0.0
                x = x if x > 0.0 else 1.0
                y = y if y > 0.0 else 1.0
                gain = 0.5 * ((a2 * y + b2 * x) / (x * y) - parent_score) - min_gain
                valid = (hlj >= min_h) & (hr >= min_h) & (rows_left >= min_rows) & (rows_left < max_rows_left)
                gains[j] = gain if valid else -inf  # & not "and": no short-circuit branches
        for j in range(m):
            if gains[j] > best.gain:
                best.gain = gains[j]
                best.feature = feature
                best.bin = <int32_t> (start + j + 1)
                best.default_left = default_left
                best.left_g = left_g[j]
                best.left_h = left_h[j]
        start += m


cdef void scan_feature(const bins_t* hist, Py_ssize_t n_bins, int32_t feature,
                       double g, double h, double count, double parent_score,
                       const SplitParams* p, Candidate* best, double inv_g, double inv_h) noexcept nogil:
    """Best split of one feature; hist points at its bin 0 (the missing bin)."""
    cdef double gm, hm
    cdef int bits = 4 * sizeof(bins_t)
    if bins_t is double:
        gm, hm = hist[0], hist[1]
    else:
        gm, hm = word_grad(hist[0], bits) * inv_g, word_hess(hist[0], bits) * inv_h
    cdef bint has_missing = hm != 0.0 or gm != 0.0
    cdef double cnt_factor = count / h
    cdef Py_ssize_t n_value_bins = n_bins - 1
    cdef Candidate left
    best.gain = 0.0
    best.feature = -1
    # missing values right; "every value left" is a split only when some are missing
    cdef const bins_t* values = hist + (2 if bins_t is double else 1)
    scan_direction(values, n_value_bins if has_missing else n_value_bins - 1, 0.0, 0.0, g, h,
                   cnt_factor, count, parent_score, p, feature, 0, best, inv_g, inv_h)
    if has_missing:  # missing values left
        left.gain = 0.0
        left.feature = -1
        scan_direction(values, n_value_bins - 1, gm, hm, g, h, cnt_factor, count, parent_score,
                       p, feature, 1, &left, inv_g, inv_h)
        # ties: the lower bin, then missing-right
        if left.feature >= 0 and (left.gain > best.gain or (left.gain == best.gain and left.bin < best.bin)):
            best[0] = left
    best.has_missing = has_missing


cdef class SplitFinder:
    """Finds the best split of nodes whose histograms sit in the pool's slots.

    Features are views into column histograms: a feature stored alone is its column; a
    bundled feature's bins are read from its part of the bundle column, and its default
    (most frequent) bin, which the bundle does not store, is the node total minus the rest.
    """
    def __init__(self, pool_data, feature_offsets, n_bins, features, *, double l1, double l2,
                 double min_child_weight, double min_gain_to_split, Py_ssize_t min_samples_leaf,
                 int n_threads=1, default_bin=None, value_offset=None, sum_bits=None):
        """feature_offsets[f]: where feature f's column starts in a histogram slot. For a
        bundled feature, default_bin[f] >= 0 and value_offset[f] locate it in the bundle.
        An int64 pool holds quantized histograms (see set_scales), each slot as words of
        sum_bits[slot] bits per sum (the builder's array; None: 64-bit words everywhere)."""
        self.quantized = pool_data.dtype == np.int64
        if self.quantized:
            self.pool_packed = pool_data
        else:
            self.pool = pool_data
        if sum_bits is None:
            sum_bits = np.full(pool_data.shape[0], 32, dtype=np.uint8)
        if sum_bits.dtype != np.uint8 or sum_bits.shape != (pool_data.shape[0],) or \
                not np.isin(sum_bits, (8, 16, 32)).all():
            raise ValueError("sum_bits must be a uint8 array of 8, 16 or 32 per pool slot")
        self.slot_bits = sum_bits
        self.inv_scale_g = self.inv_scale_h = 1.0
        self.offsets = np.ascontiguousarray(feature_offsets, dtype=np.int64)
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        n_features = self.n_bins.shape[0]
        self.default_bin = np.ascontiguousarray(
            np.full(n_features, -1) if default_bin is None else default_bin, dtype=np.int32)
        self.value_offset = np.ascontiguousarray(
            np.zeros(n_features) if value_offset is None else value_offset, dtype=np.int32)
        self.features = np.ascontiguousarray(features, dtype=np.int32)
        if self.n_bins.shape[0] > 0 and np.any(np.asarray(self.n_bins)[np.asarray(self.default_bin) >= 0] > 256):
            raise ValueError("a bundled feature has at most 256 bins")
        self.params.l1 = l1
        self.params.l2 = l2
        self.params.min_child_weight = min_child_weight
        self.params.min_gain = min_gain_to_split
        self.params.min_samples_leaf = min_samples_leaf
        self.n_threads = n_threads
        self.scan_bins = int(np.sum(np.asarray(self.n_bins)[np.asarray(self.features)])) if len(self.features) else 0
        self.max_batch = 2 * pool_data.shape[0] + 2
        self.slot_buf = np.zeros(self.max_batch, dtype=np.int64)
        self.sums_buf = np.zeros((3, self.max_batch), dtype=np.float64)
        self.per_feature = <Candidate*> malloc(max(self.max_batch * len(self.features), 1) * sizeof(Candidate))
        self.parent_scores = <double*> malloc(self.max_batch * sizeof(double))
        if self.per_feature == NULL or self.parent_scores == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.per_feature)
        free(self.parent_scores)

    def set_scales(self, double scale_g, double scale_h):
        """Quantized mode: a stored unit of grad is worth 1 / scale_g (0 if scale_g is 0)."""
        self.inv_scale_g = 1.0 / scale_g if scale_g > 0 else 0.0
        self.inv_scale_h = 1.0 / scale_h if scale_h > 0 else 0.0

    def column_totals(self, Py_ssize_t slot, Py_ssize_t start, Py_ssize_t stop):
        """(G, H) summed over bins [start, stop) of a slot: a node's totals, from any one
        of its columns. Quantized sums are exact integers before the scale is applied."""
        cdef Py_ssize_t n_slots = self.pool_packed.shape[0] if self.quantized else self.pool.shape[0]
        cdef Py_ssize_t n_bins = self.pool_packed.shape[1] if self.quantized else self.pool.shape[1]
        if not (0 <= slot < n_slots and 0 <= start <= stop <= n_bins):
            raise ValueError("slot or bin range out of range")
        cdef double g, h
        self.totals(slot, start, stop, &g, &h)
        return g, h

    cdef void totals(self, Py_ssize_t slot, Py_ssize_t start, Py_ssize_t stop, double* g, double* h) noexcept nogil:
        cdef Py_ssize_t b
        cdef double sg = 0.0, sh = 0.0
        cdef int64_t total_g = 0, total_h = 0, v
        cdef int bits
        if self.quantized:
            bits = self.slot_bits[slot]
            for b in range(start, stop):
                v = load_word(&self.pool_packed[slot, 0], bits, b)
                total_g += word_grad(v, bits)
                total_h += word_hess(v, bits)
            g[0] = total_g * self.inv_scale_g
            h[0] = total_h * self.inv_scale_h
            return
        for b in range(start, stop):
            sg += self.pool[slot, b, 0]
            sh += self.pool[slot, b, 1]
        g[0] = sg
        h[0] = sh

    @classmethod
    def for_binned(cls, pool_data, binned, features, **params):
        """A finder over the features of a BinnedMatrix (bundles included)."""
        if pool_data.shape[1] != binned.total_bins:
            raise ValueError("pool slots do not match the histogram layout")
        return cls(pool_data, binned.column_offsets[binned.feature_column], binned.n_bins, features,
                   default_bin=binned.feature_default_bin, value_offset=binned.feature_offset, **params)

    def find_best_many(self, slots, sum_grads, sum_hess, counts):
        """Best split of each node (slot, G, H, rows) of a batch, or None where no split
        is valid: a list of (gain, feature, bin, default_left, has_missing, left_g, left_h)."""
        cdef Py_ssize_t i, n_nodes = fill(slots, self.slot_buf, "slots")
        if (fill(sum_grads, self.sums_buf[0], "sum_grads") != n_nodes
                or fill(sum_hess, self.sums_buf[1], "sum_hess") != n_nodes
                or fill(counts, self.sums_buf[2], "counts") != n_nodes):
            raise ValueError("one sum_grad, sum_hess and count per slot")
        cdef Py_ssize_t n_slots = self.pool_packed.shape[0] if self.quantized else self.pool.shape[0]
        for i in range(n_nodes):
            if not 0 <= self.slot_buf[i] < n_slots:
                raise ValueError(f"slot {self.slot_buf[i]} out of range")
        if n_nodes == 0:
            return []
        cdef Candidate* out = <Candidate*> malloc(n_nodes * sizeof(Candidate))
        if out == NULL:
            raise MemoryError()
        try:
            with nogil:
                self.find_best(&self.slot_buf[0], &self.sums_buf[0, 0], &self.sums_buf[1, 0],
                               &self.sums_buf[2, 0], n_nodes, out)
            return [None if out[i].feature < 0 else
                    (out[i].gain, out[i].feature, out[i].bin, bool(out[i].default_left),
                     bool(out[i].has_missing), out[i].left_g, out[i].left_h) for i in range(n_nodes)]
        finally:
            free(out)

    cdef void find_best(self, const int64_t* slots, const double* sum_g, const double* sum_h,
                        const double* counts, Py_ssize_t n_nodes, Candidate* out) noexcept nogil:
        """out[i]: the best split of node i (feature -1 if none is valid); n_nodes <= max_batch.
        Parallel over (node, feature) pairs, then an argmax per node in feature order."""
        cdef Py_ssize_t i, j, k, n_feat = self.features.shape[0], n_work = n_nodes * n_feat
        cdef Candidate* per_feature = self.per_feature
        cdef Candidate* best
        cdef int t = self.n_threads if n_nodes * self.scan_bins >= MIN_BINS_PARALLEL else 1
        for i in range(n_nodes):
            self.parent_scores[i] = leaf_score(sum_g[i], sum_h[i], &self.params)
        if t > 1:
            for k in prange(n_work, schedule="static", num_threads=t):
                self._scan(k, n_feat, slots, sum_g, sum_h, counts, self.parent_scores, &per_feature[k])
        else:
            for k in range(n_work):
                self._scan(k, n_feat, slots, sum_g, sum_h, counts, self.parent_scores, &per_feature[k])
        for i in range(n_nodes):
            best = NULL
            for j in range(n_feat):  # features in order, strict >: ties keep the lowest
                k = i * n_feat + j
                if per_feature[k].feature >= 0 and (best == NULL or per_feature[k].gain > best.gain):
                    best = &per_feature[k]
            if best == NULL:
                out[i].feature = -1
                out[i].gain = 0.0
            else:
                out[i] = best[0]

    cdef void _scan(self, Py_ssize_t k, Py_ssize_t n_feat, const int64_t* slot_v, const double* g_v,
                           const double* h_v, const double* c_v, const double* parent_scores,
                           Candidate* out) noexcept nogil:
        cdef Py_ssize_t i = k // n_feat
        cdef int32_t f = self.features[k - i * n_feat]
        cdef Py_ssize_t nb = self.n_bins[f]
        cdef double on_stack[2 * 256]
        cdef double* feature_hist = on_stack
        cdef const double* hist
        out.feature = -1
        if h_v[i] <= 0.0:
            return
        cdef int bits
        cdef const void* words
        if self.default_bin[f] < 0 and self.quantized:  # packed bins, read in place
            bits = self.slot_bits[slot_v[i]]
            words = &self.pool_packed[slot_v[i], 0]
            if bits == 32:
                scan_feature(<const int64_t*> words + self.offsets[f], nb, f, g_v[i], h_v[i], c_v[i],
                             parent_scores[i], &self.params, out, self.inv_scale_g, self.inv_scale_h)
            elif bits == 16:
                scan_feature(<const int32_t*> words + self.offsets[f], nb, f, g_v[i], h_v[i], c_v[i],
                             parent_scores[i], &self.params, out, self.inv_scale_g, self.inv_scale_h)
            else:
                scan_feature(<const int16_t*> words + self.offsets[f], nb, f, g_v[i], h_v[i], c_v[i],
                             parent_scores[i], &self.params, out, self.inv_scale_g, self.inv_scale_h)
            return
        if self.default_bin[f] < 0:  # float64 bins, read in place
            hist = &self.pool[slot_v[i], 0, 0] + 2 * self.offsets[f]
        else:
            if nb > 256:
                feature_hist = <double*> malloc(2 * nb * sizeof(double))
                if feature_hist == NULL:
                    return
            self._materialize(slot_v[i], f, g_v[i], h_v[i], feature_hist)
            hist = feature_hist
        scan_feature(hist, nb, f, g_v[i], h_v[i], c_v[i], parent_scores[i], &self.params, out, 1.0, 1.0)
        if feature_hist != on_stack:
            free(feature_hist)

    cdef void _materialize(self, Py_ssize_t slot, int32_t f, double g, double h, double* out) noexcept nogil:
        """Feature f's (grad, hess) bins as float64: dequantized, and for a bundled feature
        gathered from its bundle with the default bin as node total minus the rest."""
        cdef Py_ssize_t j, b, nb = self.n_bins[f], d = self.default_bin[f]
        cdef Py_ssize_t start = self.offsets[f] + (self.value_offset[f] if d >= 0 else 0)
        cdef double rest_g = 0.0, rest_h = 0.0, bg, bh
        cdef int64_t v
        cdef int bits = self.slot_bits[slot]
        for j in range(nb if d < 0 else nb - 1):
            b = j if (d < 0 or j < d) else j + 1
            if self.quantized:
                v = load_word(&self.pool_packed[slot, 0], bits, start + j)
                bg = word_grad(v, bits) * self.inv_scale_g
                bh = word_hess(v, bits) * self.inv_scale_h
            else:
                bg = self.pool[slot, start + j, 0]
                bh = self.pool[slot, start + j, 1]
            out[2 * b] = bg
            out[2 * b + 1] = bh
            rest_g += bg
            rest_h += bh
        if d >= 0:
            out[2 * d] = g - rest_g
            out[2 * d + 1] = h - rest_h


def leaf_weight(double sum_grad, double sum_hess, double l1, double l2):
    """Newton step with L1 soft-thresholding: -T(G) / (H + l2); 0 for an empty hessian."""
    cdef double denom = sum_hess + l2
    if denom <= 0.0:
        return 0.0
    return -threshold_l1(sum_grad, l1) / denom
