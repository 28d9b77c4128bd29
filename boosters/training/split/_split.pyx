"""Split finding (RFC-0008): best (feature, bin, missing direction) of a node from its
histogram, in parallel over features, then a deterministic argmax.

The gain formula is _gain.pxd's. A split is valid when gain > 0, both children have
hessian >= min_child_weight and rows >= min_samples_leaf. Child row counts are estimated
from hessians (round(count * H_child / H_parent); LightGBM rounds per bin instead, so the
two can differ by a row at the boundary); they are exact for constant
hessians.

Bin 0 of a feature holds the rows with a missing value. When the node has such rows,
every threshold is tried with them on the right and on the left, and the split learns
that default direction; value bins 1..b go left, b+1..n right. Ties keep the lowest
feature, then the lowest bin, then missing-right.

A categorical feature (the finder's per-feature flag, tested once per node and
feature) is scanned by scan_categorical instead: its split is a set of bins going left
(LightGBM's one-vs-rest or sorted partition), written as a bitset into the finder's
scratch, which the Candidate points at (cat_bits; NULL for a numeric split).

Float64 or quantized histograms are chosen once, when the grower is set up, by the
finder's class (FloatSplitFinder, QuantizedSplitFinder); the scan itself is one kernel
fused over the bin type (hist_t), reading packed bins of any width in place.

Column sampling and constraints (`constrain`, filled per batch by training/_constraints.pyx)
act per (node, feature) work item: a feature the node may not use is skipped; a
monotone feature, or any feature of a node with finite weight bounds, is scanned with
`NodeBounds` (children's weights clamped, scored at the clamped weights, the order
checked): one branch per chunk of candidates picks that gain pass, so unconstrained
scans run the same passes as before.
"""

import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, floor
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memset

from boosters._lib.types cimport hist_t, values_per_bin, word_grad, word_hess
from boosters.training.split._gain cimport (children_score, children_score_no_l1, clamp, leaf_score, leaf_weight,
                                      score_given_weight, split_gain)
from boosters.training.split._noise cimport noise_node_key, noise_tree_key, noisy_key

cdef enum:
    MIN_BINS_PARALLEL = 2048  # histogram bins (all nodes of a call) below which the scan is serial
    SCAN_CHUNK = 256          # candidates per pass (stack arrays); features with more bins loop
    MAX_BUNDLED_BINS = 256    # bins of a bundled feature at most (materialized on the stack)


cdef inline void scan_direction(
    const hist_t* bins,         # IN: the feature's value bins 1.. (float64 pairs or packed words)
    Py_ssize_t n_candidates,
    double gl,                  # the left side's sums before bin 1 (the missing bin, or nothing)
    double hl,
    double g,                   # the node's totals and rows
    double h,
    double cnt_factor,          # rows per unit of hessian
    double count,
    double parent_score,
    const SplitParams* p,       # IN
    int32_t feature,
    uint8_t default_left,
    Candidate* best,            # IN and OUT: replaced by a candidate of a higher score
    double inv_g,               # quantized: value of one unit of grad / hess
    double inv_h,
    const NodeBounds* bounds,   # IN: monotone constraints (NULL: none)
    double* acc,                # IN and OUT: a level's sums per candidate (NULL: find the best)
    double* acc_twin,           # IN and OUT: a second such sum (NULL: none)
    Py_ssize_t at,              # acc NULL: report candidate `at` (0-based) in best, valid or not (-1: the best)
) noexcept nogil:
    """Candidates "value bins 1..b go left", b = 1..n_candidates, with the left side
    starting from (gl, hl). Three passes per chunk: running sums (exact integers for
    packed bins, scaled by inv_g / inv_h), then every candidate's gain without branches
    (invalid ones get -inf; the loop vectorises), then the first maximum. Equal gains
    keep the lowest bin, as the strict > of the last pass does. With `bounds`, the
    children's weights are clamped to the node's bounds, scored at those weights, and
    a candidate whose clamped weights break the feature's direction is invalid. Under
    random_strength (p.noise_sd > 0) the last pass compares the valid candidates' gain +
    noise (_noise.pxd), and the winner keeps its gain.

    An oblivious level's scan (SplitFinder.find_level_best) changes the last pass only:
    each candidate's gain (0 where invalid) is added to acc[b - 1] (and acc_twin), or
    candidate `at` alone is reported (best.feature -1 where invalid), so the level's
    gains are those of the one formula and the same arithmetic."""
    cdef double left_g[SCAN_CHUNK]
    cdef double left_h[SCAN_CHUNK]
    cdef double gains[SCAN_CHUNK]
    cdef double noisy[SCAN_CHUNK]
    cdef double* keys = &gains[0]  # what the argmax compares: the gains, or under noise their noisy keys
    cdef Py_ssize_t start, j, m
    cdef double hlj, hr, rows_left, gain, reach, top, lowest
    cdef bint valid
    cdef double min_h = p.min_child_weight, min_rows = p.min_samples_leaf, l1 = p.l1, l2 = p.l2
    cdef double min_gain = p.min_gain
    # Without L1, and with every valid side's hessian + l2 > 0, children_score's
    # thresholding and guards are identities (children_score_no_l1).
    cdef bint plain = l1 == 0.0 and min_h + l2 > 0.0
    cdef double max_rows_left = count - min_rows + 1.0  # floor(r) <= count - min_rows
    cdef double inf = INFINITY
    cdef double wl, wr
    cdef int64_t packed_g = 0, packed_h = 0, v
    cdef int bits = 4 * sizeof(hist_t)
    if p.noise_sd > 0.0:
        keys = &noisy[0]
    start = 0
    while start < n_candidates:
        m = min(<Py_ssize_t> SCAN_CHUNK, n_candidates - start)
        if hist_t is double:
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
        if bounds != NULL:
            for j in range(m):
                hlj = left_h[j]
                hr = h - hlj
                rows_left = hlj * cnt_factor + 0.5
                wl = clamp(leaf_weight(left_g[j], hlj, l1, l2), bounds.lower, bounds.upper)
                wr = clamp(leaf_weight(g - left_g[j], hr, l1, l2), bounds.lower, bounds.upper)
                gain = split_gain(score_given_weight(left_g[j], hlj, wl, l1, l2)
                                  + score_given_weight(g - left_g[j], hr, wr, l1, l2), parent_score, min_gain)
                valid = ((hlj >= min_h) & (hr >= min_h) & (rows_left >= min_rows) & (rows_left < max_rows_left)
                         & (bounds.direction * (wr - wl) >= 0.0))
                gains[j] = gain if valid else -inf
        elif plain:
            for j in range(m):  # the same arithmetic as below with l1 = 0 and x, y > 0
                hlj = left_h[j]
                hr = h - hlj
                rows_left = hlj * cnt_factor + 0.5
                gain = split_gain(children_score_no_l1(left_g[j], hlj, g - left_g[j], hr, l2), parent_score,
                                  min_gain)
                valid = (hlj >= min_h) & (hr >= min_h) & (rows_left >= min_rows) & (rows_left < max_rows_left)
                gains[j] = gain if valid else -inf
        else:
            for j in range(m):
                hlj = left_h[j]
                hr = h - hlj
                rows_left = hlj * cnt_factor + 0.5  # rows on the left are floor(rows_left), from hessians
                gain = split_gain(children_score(left_g[j], hlj, g - left_g[j], hr, l1, l2), parent_score,
                                  min_gain)
                valid = (hlj >= min_h) & (hr >= min_h) & (rows_left >= min_rows) & (rows_left < max_rows_left)
                gains[j] = gain if valid else -inf  # & not "and": no short-circuit branches
        if acc != NULL:  # an oblivious level's sums (its noise, if any, is drawn on the sums)
            for j in range(m):
                gain = gains[j] if gains[j] > -inf else 0.0
                acc[start + j] += gain
                if acc_twin != NULL:
                    acc_twin[start + j] += gain
            start += m
            continue
        if at >= 0:  # an oblivious level's chosen candidate, reported for this node
            j = at - start
            if 0 <= j < m and gains[j] > -inf:
                best.score = gains[j]
                best.gain = gains[j]
                best.feature = feature
                best.bin = <int32_t> (at + 1)
                best.default_left = default_left
                best.left_g = left_g[j]
                best.left_h = left_h[j]
            start += m
            continue
        if p.noise_sd > 0.0:
            # |z| < 8.58 (Box-Muller's u1 >= 2^-53), so a key is within `reach` of its gain: a
            # candidate whose gain + reach is below a key this scan reaches anyway (its best so
            # far, or the chunk's largest gain - reach) cannot win and draws no noise (exact,
            # rounding included: fl is monotone); most draws are skipped once the noise fades
            reach = 9.0 * p.noise_sd
            top = -inf
            for j in range(m):
                top = gains[j] if gains[j] > top else top
            lowest = top - reach if top - reach > best.score else best.score
            for j in range(m):
                noisy[j] = (noisy_key(gains[j], p.noise_sd, p.noise_key, feature,
                                      2 * <uint64_t> (start + j + 1) + default_left)
                            if gains[j] + reach >= lowest else -inf)
        for j in range(m):
            if keys[j] > best.score:
                best.score = keys[j]
                best.gain = gains[j]
                best.feature = feature
                best.bin = <int32_t> (start + j + 1)
                best.default_left = default_left
                best.left_g = left_g[j]
                best.left_h = left_h[j]
        start += m


cdef inline bint has_missing_rows(double gm, double hm, double tol) noexcept nogil:
    """Whether a float64 missing bin holds rows: its hessian exceeds `tol`, the rounding
    residue that parent - sibling subtraction can leave in an empty bin (SplitFinder.
    begin_tree); before the first tree (tol 0) any non-zero sum."""
    if tol == 0.0:
        return gm != 0.0 or hm != 0.0
    return hm > tol


cdef void scan_feature(
    const hist_t* hist,         # IN: the feature's bins from bin 0 (the missing bin)
    Py_ssize_t n_bins,
    int32_t feature,
    double g,                   # the node's totals and rows
    double h,
    double count,
    double parent_score,
    const SplitParams* p,       # IN
    Candidate* best,            # OUT: the feature's best split (feature -1: none)
    double inv_g,               # quantized: value of one unit of grad / hess
    double inv_h,
    const NodeBounds* bounds,   # IN: monotone constraints (NULL: none)
    const LevelScan* level,     # IN: an oblivious level's scan (NULL: the feature's best split)
) noexcept nogil:
    """Best split of one feature; or, with `level`, this node's part of a level's scan:
    its gains added to level.gains (missing right: candidates 1..n-1, then missing left;
    a node without missing values adds its gains to both), or its split at level.bin
    and level.default_left (best.feature -1 where that split is invalid here)."""
    cdef double gm, hm
    cdef int bits = 4 * sizeof(hist_t)
    if hist_t is double:
        gm, hm = hist[0], hist[1]
    else:
        gm, hm = word_grad(hist[0], bits) * inv_g, word_hess(hist[0], bits) * inv_h
    cdef bint has_missing
    if hist_t is double:  # float64 sums, or a bundle's bins with its default bin derived
        has_missing = has_missing_rows(gm, hm, p.missing_hess_tol)
    else:                 # exact integer sums
        has_missing = gm != 0.0 or hm != 0.0
    cdef double cnt_factor = count / h
    cdef Py_ssize_t n_value_bins = n_bins - 1
    cdef Candidate left
    cdef bint left_missing
    best.gain = 0.0
    best.score = -INFINITY if p.noise_sd > 0.0 else 0.0  # noise: validity is gain > 0, not the noisy key
    best.feature = -1
    left.cat_bits = NULL
    # missing values right; "every value left" is a split only when some are missing
    cdef const hist_t* values = hist + values_per_bin(hist)
    best.has_missing = has_missing
    if level != NULL and level.gains == NULL:  # the level's split, from the same scan up to its bin
        left_missing = level.default_left and has_missing
        scan_direction(values, level.bin, gm if left_missing else 0.0, hm if left_missing else 0.0, g, h,
                       cnt_factor, count, parent_score, p, feature, level.default_left, best, inv_g, inv_h,
                       bounds, NULL, NULL, level.bin - 1)
        return
    if level != NULL:
        scan_direction(values, n_value_bins if has_missing else n_value_bins - 1, 0.0, 0.0, g, h,
                       cnt_factor, count, parent_score, p, feature, 0, best, inv_g, inv_h, bounds,
                       level.gains, NULL if has_missing else level.gains + n_value_bins, -1)
        if has_missing:
            scan_direction(values, n_value_bins - 1, gm, hm, g, h, cnt_factor, count, parent_score, p,
                           feature, 1, best, inv_g, inv_h, bounds, level.gains + n_value_bins, NULL, -1)
        return
    scan_direction(values, n_value_bins if has_missing else n_value_bins - 1, 0.0, 0.0, g, h,
                   cnt_factor, count, parent_score, p, feature, 0, best, inv_g, inv_h, bounds, NULL, NULL, -1)
    if has_missing:  # missing values left
        left.gain = 0.0
        left.score = -INFINITY if p.noise_sd > 0.0 else 0.0
        left.feature = -1
        scan_direction(values, n_value_bins - 1, gm, hm, g, h, cnt_factor, count, parent_score,
                       p, feature, 1, &left, inv_g, inv_h, bounds, NULL, NULL, -1)
        # ties: the lower bin, then missing-right
        if left.feature >= 0 and (left.score > best.score or (left.score == best.score and left.bin < best.bin)):
            best[0] = left
            best.has_missing = has_missing


cdef inline void materialize(
    SplitFinder finder,
    const hist_t* slot,     # IN: a node's histogram
    int32_t f,              # a bundled feature
    double g,               # the node's totals
    double h,
    double inv_g,           # quantized: value of one unit of grad / hess
    double inv_h,
    double* out,            # OUT: (n_bins[f], 2) float64 bins of feature f
) noexcept nogil:
    """A bundled feature's (grad, hess) bins as float64 (dequantized): gathered from its
    part of the bundle column, its default bin (which the bundle does not store) the
    node total minus the rest."""
    cdef Py_ssize_t j, b, nb = finder.n_bins[f], d = finder.default_bin[f]
    cdef Py_ssize_t start = finder.offsets[f] + finder.value_offset[f]
    cdef double rest_g = 0.0, rest_h = 0.0, bg, bh
    cdef int bits = 4 * sizeof(hist_t)
    for j in range(nb - 1):
        b = j if j < d else j + 1
        if hist_t is double:
            bg = slot[2 * (start + j)]
            bh = slot[2 * (start + j) + 1]
        else:
            bg = word_grad(slot[start + j], bits) * inv_g
            bh = word_hess(slot[start + j], bits) * inv_h
        out[2 * b] = bg
        out[2 * b + 1] = bh
        rest_g += bg
        rest_h += bh
    out[2 * d] = g - rest_g
    out[2 * d + 1] = h - rest_h


cdef void scan_slot_feature(
    SplitFinder finder,
    const hist_t* slot,     # IN: a node's histogram
    int32_t f,
    double g,               # the node's totals and rows
    double h,
    double count,
    double parent_score,
    Candidate* out,         # OUT: the feature's best split (feature -1: none)
    double inv_g,           # quantized: value of one unit of grad / hess
    double inv_h,
    const NodeBounds* bounds,   # IN: monotone constraints (NULL: none)
    const SplitParams* p,       # IN: the finder's parameters, with the node's noise key
    const LevelScan* level,     # IN: an oblivious level's scan (NULL: none)
) noexcept nogil:
    """Feature f of a node: a feature stored alone is scanned in its column's bins, in
    place; a bundled one from its materialized float64 bins."""
    cdef double bundled[2 * MAX_BUNDLED_BINS]
    if finder.categorical[f]:  # never bundled
        scan_categorical(finder.cat_sort + boosters_thread_num() * finder.max_cat_bins,
                         slot + values_per_bin(slot) * finder.offsets[f], finder.n_bins[f], f, g, h, count,
                         parent_score, p, out, inv_g, inv_h, bounds, level)
    elif finder.default_bin[f] < 0:
        scan_feature(slot + values_per_bin(slot) * finder.offsets[f], finder.n_bins[f], f, g, h, count,
                     parent_score, p, out, inv_g, inv_h, bounds, level)
    else:
        materialize(finder, slot, f, g, h, inv_g, inv_h, bundled)
        scan_feature(bundled, finder.n_bins[f], f, g, h, count, parent_score, p, out, 1.0, 1.0,
                     bounds, level)


# -- categorical features -------------------------------------------------------------

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int boosters_thread_num(void) { return omp_get_thread_num(); }
    static int boosters_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int boosters_thread_num(void) { return 0; }
    static int boosters_max_threads(void) { return 1; }
    #endif
    """
    int boosters_thread_num() nogil
    int boosters_max_threads() nogil


cdef int by_key_then_bin(const void* a, const void* b) noexcept nogil:
    """Ascending key; ties keep the bin order (a stable sort, as LightGBM's)."""
    cdef const CategoryBin* x = <const CategoryBin*> a
    cdef const CategoryBin* y = <const CategoryBin*> b
    if x.key != y.key:
        return -1 if x.key < y.key else 1
    return (x.bin > y.bin) - (x.bin < y.bin)


cdef inline double category_gain(double gl, double hl, double g, double h, double l2, double parent_score,
                                 const SplitParams* p, const NodeBounds* bounds) noexcept nogil:
    """A category set's gain; below a monotone split (bounds not NULL) the children are
    scored at their weights clamped to the node's bounds, as in the numeric scan (a
    categorical feature has no direction of its own)."""
    cdef double wl, wr
    if bounds == NULL:
        return split_gain(children_score(gl, hl, g - gl, h - hl, p.l1, l2), parent_score, p.min_gain)
    wl = clamp(leaf_weight(gl, hl, p.l1, l2), bounds.lower, bounds.upper)
    wr = clamp(leaf_weight(g - gl, h - hl, p.l1, l2), bounds.lower, bounds.upper)
    return split_gain(score_given_weight(gl, hl, wl, p.l1, l2) + score_given_weight(g - gl, h - hl, wr, p.l1, l2),
                      parent_score, p.min_gain)


cdef inline double best_missing_hess(const hist_t* hist, double inv_h) noexcept nogil:
    """The hessian of the missing bin (bin 0)."""
    if hist_t is double:
        return hist[1]
    return word_hess(hist[0], 4 * sizeof(hist_t)) * inv_h


cdef void scan_categorical(
    CategoryBin* cats,          # scratch: n_bins entries
    const hist_t* hist,         # IN: the feature's bins from bin 0 (missing); bin c + 1 is code c
    Py_ssize_t n_bins,
    int32_t feature,
    double g,                   # the node's totals and rows
    double h,
    double count,
    double parent_score,
    const SplitParams* p,       # IN
    Candidate* best,            # OUT: the best split; best.cat_bits (IN): where its left bins go, a bitset
    double inv_g,               # quantized: value of one unit of grad / hess
    double inv_h,
    const NodeBounds* bounds,   # IN: the node's weight bounds (NULL: none)
    const LevelScan* level,     # IN: an oblivious level's scan (NULL: the feature's best split)
) noexcept nogil:
    """Best category set going left (LightGBM's FindBestThresholdCategoricalInner).

    Missing values (bin 0) are one more category, so their side is learned like any
    category's (LightGBM always sends them right). Row counts are estimated per bin from
    hessians (round(H_bin * count / H), LightGBM's cnt); a bin with no rows is skipped.
    - at most max_onehot_cats categories: each category alone left, the rest right;
    - otherwise the bins of at least cat_smooth rows, ordered by G / (H + cat_smooth),
      scanned from each end: the first i + 1 go left, i < max_cat_threshold and
      i < (used + 1) / 2; l2 + cat_l2 in the children's scores (the parent's keeps l2);
      a candidate needs min_data_per_group rows at least on the right and in the
      categories added since the last candidate.
    Both need min_samples_leaf rows and min_child_weight hessian on each side, and a
    gain > 0; under random_strength the valid candidates compete by gain + noise.

    An oblivious level (`level`) splits one category (bin b) from the rest, whatever
    max_onehot_cats: the node's gain of each valid b is added to level.gains[b], or
    (gains NULL) its split at b = level.bin is reported, valid or not (feature -1)."""
    cdef uint32_t* bits = best.cat_bits
    cdef Py_ssize_t b, i, t, n_used = 0, best_first = 0, best_n = 0, best_dir = 1, n_scan, dir_k
    cdef int step
    cdef int bits_width = 4 * sizeof(hist_t)
    cdef double cnt_factor = count / h, gb, hb, rows, gl, hl, left_rows, group_rows, gain, key
    cdef bint noise = p.noise_sd > 0.0
    cdef double min_h = p.min_child_weight, min_rows = p.min_samples_leaf
    cdef double l2_cat = p.l2 + p.cat_l2
    cdef bint onehot = level != NULL or n_bins - 1 <= p.max_onehot_cats
    cdef bint valid
    best.gain = 0.0
    best.score = -INFINITY if noise else 0.0
    best.feature = -1
    for b in range(n_bins):
        if hist_t is double:
            gb, hb = hist[2 * b], hist[2 * b + 1]
        else:
            gb, hb = word_grad(hist[b], bits_width) * inv_g, word_hess(hist[b], bits_width) * inv_h
        rows = floor(hb * cnt_factor + 0.5)
        if rows < 1.0 or (not onehot and rows < p.cat_smooth):
            continue
        cats[n_used].key = gb / (hb + p.cat_smooth)
        cats[n_used].g, cats[n_used].h, cats[n_used].rows, cats[n_used].bin = gb, hb, rows, <int32_t> b
        n_used += 1
    if level != NULL:
        for i in range(n_used):
            gb, hb, rows = cats[i].g, cats[i].h, cats[i].rows
            valid = not (rows < min_rows or hb < min_h or count - rows < min_rows or h - hb < min_h)
            if not valid or (level.gains == NULL and cats[i].bin != level.bin):
                continue
            gain = category_gain(gb, hb, g, h, p.l2, parent_score, p, bounds)
            if level.gains != NULL:
                level.gains[cats[i].bin] += gain
            else:
                best.score, best.gain, best.left_g, best.left_h = gain, gain, gb, hb
                best_first, best_n, best_dir = i, 1, 1
    elif onehot:
        for i in range(n_used):
            gb, hb, rows = cats[i].g, cats[i].h, cats[i].rows
            if rows < min_rows or hb < min_h or count - rows < min_rows or h - hb < min_h:
                continue
            gain = category_gain(gb, hb, g, h, p.l2, parent_score, p, bounds)
            key = noisy_key(gain, p.noise_sd, p.noise_key, feature, 2 * <uint64_t> i) if noise else gain
            if key > best.score:
                best.score, best.gain, best.left_g, best.left_h = key, gain, gb, hb
                best_first, best_n, best_dir = i, 1, 1
    elif n_used > 1:
        qsort(cats, n_used, sizeof(CategoryBin), by_key_then_bin)
        n_scan = min(<Py_ssize_t> p.max_cat_threshold, (n_used + 1) // 2)
        for dir_k in range(2):
            step = 1 if dir_k == 0 else -1
            gl = hl = left_rows = group_rows = 0.0
            for i in range(n_scan):
                t = i if step == 1 else n_used - 1 - i
                gl += cats[t].g
                hl += cats[t].h
                left_rows += cats[t].rows
                group_rows += cats[t].rows
                if left_rows < min_rows or hl < min_h:
                    continue
                if count - left_rows < min_rows or count - left_rows < p.min_data_per_group or h - hl < min_h:
                    break
                if group_rows < p.min_data_per_group:
                    continue
                group_rows = 0.0
                gain = category_gain(gl, hl, g, h, l2_cat, parent_score, p, bounds)
                key = noisy_key(gain, p.noise_sd, p.noise_key, feature, 2 * <uint64_t> i + dir_k) if noise else gain
                if key > best.score:
                    best.score, best.gain, best.left_g, best.left_h = key, gain, gl, hl
                    best_first, best_n, best_dir = t, i + 1, step
    if best_n > 0:
        best.feature = feature
        best.bin = <int32_t> best_n  # categories going left
        memset(bits, 0, ((n_bins + 31) // 32) * sizeof(uint32_t))
        t = best_first
        for i in range(best_n):  # best_first is the last one added; walk back to the start
            b = cats[t].bin
            bits[b >> 5] |= (<uint32_t> 1) << (b & 31)
            t -= best_dir
        best.default_left = (bits[0] & 1) != 0
        best.has_missing = floor(best_missing_hess(hist, inv_h) * cnt_factor + 0.5) >= 1.0


cdef inline void column_totals(
    const hist_t* slot,     # IN: a node's histogram
    Py_ssize_t start,       # bins [start, stop): one column
    Py_ssize_t stop,
    double inv_g,           # quantized: value of one unit of grad / hess
    double inv_h,
    double* g,              # OUT: the column's (grad, hess) sums
    double* h,
) noexcept nogil:
    """(G, H) of a column; quantized sums are exact integers before the scale is applied."""
    cdef Py_ssize_t b
    cdef double sg = 0.0, sh = 0.0
    cdef int64_t total_g = 0, total_h = 0
    cdef int bits = 4 * sizeof(hist_t)
    if hist_t is double:
        for b in range(start, stop):
            sg += slot[2 * b]
            sh += slot[2 * b + 1]
        g[0] = sg
        h[0] = sh
    else:
        for b in range(start, stop):
            total_g += word_grad(slot[b], bits)
            total_h += word_hess(slot[b], bits)
        g[0] = total_g * inv_g
        h[0] = total_h * inv_h


cdef class SplitFinder:
    """Finds the best split of nodes whose histograms sit in the pool's slots (the shared
    part of the float64 and quantized finders).

    Features are views into column histograms: a feature stored alone is its column; a
    bundled feature's bins are read from its part of the bundle column, and its default
    (most frequent) bin, which the bundle does not store, is the node total minus the rest.
    """
    def __init__(self, Py_ssize_t n_slots, Py_ssize_t total_bins, feature_offsets, n_bins, features, *, double l1, double l2,
                 double min_child_weight, double min_gain_to_split, Py_ssize_t min_samples_leaf,
                 int n_threads=1, default_bin=None, value_offset=None):
        """feature_offsets[f]: where feature f's column starts in a histogram slot. For a
        bundled feature, default_bin[f] >= 0 and value_offset[f] locate it in the bundle."""
        self.n_slots = n_slots
        self.total_bins = total_bins
        self.offsets = np.ascontiguousarray(feature_offsets, dtype=np.int64)
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        n_features = self.n_bins.shape[0]
        self.default_bin = np.ascontiguousarray(
            np.full(n_features, -1) if default_bin is None else default_bin, dtype=np.int32)
        self.value_offset = np.ascontiguousarray(
            np.zeros(n_features) if value_offset is None else value_offset, dtype=np.int32)
        self.features = np.ascontiguousarray(features, dtype=np.int32)
        if n_features > 0 and np.any(np.asarray(self.n_bins)[np.asarray(self.default_bin) >= 0] > MAX_BUNDLED_BINS):
            raise ValueError(f"a bundled feature has at most {MAX_BUNDLED_BINS} bins")
        self.params.l1 = l1
        self.params.l2 = l2
        self.params.min_child_weight = min_child_weight
        self.params.min_gain = min_gain_to_split
        self.params.min_samples_leaf = min_samples_leaf
        self.params.missing_hess_tol = 0.0
        self.params.noise_sd = 0.0
        self.params.noise_key = 0
        self.n_threads = n_threads
        self.scan_bins = int(np.sum(np.asarray(self.n_bins)[np.asarray(self.features)])) if len(self.features) else 0
        self.max_batch = 2 * n_slots + 2
        self.use_categorical(np.zeros(n_features, dtype=bool))
        self.per_feature = <Candidate*> malloc(max(self.max_batch * len(self.features), 1) * sizeof(Candidate))
        self.parent_scores = <double*> malloc(self.max_batch * sizeof(double))
        # an oblivious level's gains: per listed feature, 2 per bin (numeric: missing right, left
        # per value bin; categorical: one per bin)
        sizes = 2 * np.asarray(self.n_bins)[np.asarray(self.features)].astype(np.int64)
        self.level_offset = (np.cumsum(sizes) - sizes).astype(np.int64)
        self.level_gains = <double*> malloc(max(1, int(sizes.sum())) * sizeof(double))
        if self.per_feature == NULL or self.parent_scores == NULL or self.level_gains == NULL:
            raise MemoryError()

    def use_categorical(self, is_categorical, *, int max_onehot_cats=4, double cat_smooth=10.0, double cat_l2=10.0,
                        int max_cat_threshold=32, double min_data_per_group=100):
        """Which features are categorical (scanned by scan_categorical), with LightGBM's
        parameters of the scan; sets up the scans' bitset scratch."""
        categorical = np.ascontiguousarray(is_categorical, dtype=np.uint8)
        if categorical.shape != (self.n_bins.shape[0],):
            raise ValueError("is_categorical must have one entry per feature")
        if np.any(categorical.astype(bool) & (np.asarray(self.default_bin) >= 0)):
            raise ValueError("a categorical feature cannot be bundled")
        self.categorical = categorical
        self.params.max_onehot_cats = max_onehot_cats
        self.params.cat_smooth = cat_smooth
        self.params.cat_l2 = cat_l2
        self.params.max_cat_threshold = max_cat_threshold
        self.params.min_data_per_group = min_data_per_group
        listed = np.asarray(self.features, dtype=np.int64)
        words = np.where(categorical[listed] != 0, (np.asarray(self.n_bins)[listed] + 31) // 32, 0)
        self.cat_offset = np.where(words > 0, np.cumsum(words) - words, -1).astype(np.int64)
        self.cat_node_words = int(words.sum())
        self.cat_scratch = np.zeros(max(1, self.max_batch * self.cat_node_words), dtype=np.uint32)
        cat_bins = np.asarray(self.n_bins)[categorical != 0]
        self.max_cat_bins = int(cat_bins.max()) if cat_bins.size else 0
        # a scan's categories: one scratch per thread (find_best runs at most cat_threads)
        self.cat_threads = max(1, self.n_threads, boosters_max_threads())
        free(self.cat_sort)
        self.cat_sort = <CategoryBin*> malloc(max(1, self.cat_threads * self.max_cat_bins) * sizeof(CategoryBin))
        if self.cat_sort == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.cat_sort)
        free(self.per_feature)
        free(self.parent_scores)
        free(self.level_gains)

    @classmethod
    def for_binned(cls, pool_data, binned, features, **params):
        """A finder over the features of a BinnedMatrix (bundles included)."""
        if pool_data.shape[1] != binned.total_bins:
            raise ValueError("pool slots do not match the histogram layout")
        return cls(pool_data, binned.column_offsets[binned.feature_column], binned.n_bins, features,
                   default_bin=binned.feature_default_bin, value_offset=binned.feature_offset, **params)

    cdef void find_best(
        self,
        const int64_t* slots,       # IN: the nodes' pool slots
        const double* sum_g,        # IN: the nodes' (grad, hess) totals and row counts
        const double* sum_h,        # IN
        const double* counts,       # IN
        Py_ssize_t n_nodes,
        Candidate* out,             # OUT: the nodes' best splits
        const int64_t* nodes,       # IN: the nodes' ids in their tree (random_strength's draws), or NULL
    ) noexcept nogil:
        """out[i]: the best split of node i (feature -1 if none is valid); n_nodes <= max_batch.
        Parallel over (node, feature) pairs, then an argmax per node in feature order (of
        the score: the gain, plus noise under random_strength; NULL nodes: node i is id i)."""
        cdef Py_ssize_t i, j, k, n_feat = self.features.shape[0], n_work = n_nodes * n_feat
        cdef Candidate* per_feature = self.per_feature
        cdef Candidate* best
        cdef int t = self.n_threads if n_nodes * self.scan_bins >= MIN_BINS_PARALLEL else 1
        t = min(t, self.cat_threads)  # the categorical scans' scratch
        for i in range(n_nodes):
            self.parent_scores[i] = self._parent_score(i, sum_g[i], sum_h[i])
        if t > 1:
            for k in prange(n_work, schedule="static", num_threads=t):
                self._scan_pair(k, n_feat, slots, sum_g, sum_h, counts, nodes, &per_feature[k])
        else:
            for k in range(n_work):
                self._scan_pair(k, n_feat, slots, sum_g, sum_h, counts, nodes, &per_feature[k])
        for i in range(n_nodes):
            best = NULL
            for j in range(n_feat):  # features in order, strict >: ties keep the lowest
                k = i * n_feat + j
                if per_feature[k].feature >= 0 and (best == NULL or per_feature[k].score > best.score):
                    best = &per_feature[k]
            if best == NULL:
                out[i].feature = -1
                out[i].gain = 0.0
                out[i].score = 0.0
            else:
                out[i] = best[0]

    cdef void _scan_pair(
        self,
        Py_ssize_t k,
        Py_ssize_t n_feat,
        const int64_t* slots,       # IN: as find_best
        const double* sum_g,        # IN
        const double* sum_h,        # IN
        const double* counts,       # IN
        const int64_t* nodes,       # IN: as find_best
        Candidate* out,             # OUT: the pair's best split
    ) noexcept nogil:
        """Work item k of find_best: node k // n_feat, its (k % n_feat)-th feature."""
        cdef Py_ssize_t i = k // n_feat, j = k - i * n_feat
        cdef int32_t feature = self.features[j]
        cdef NodeBounds bounds
        cdef SplitParams noisy_params  # random_strength: the parameters with this node's key
        cdef const SplitParams* p = &self.params
        if self.params.noise_sd > 0.0:
            noisy_params = self.params
            noisy_params.noise_key = noise_node_key(self.noise_tree, nodes[i] if nodes != NULL else i)
            p = &noisy_params
        cdef int64_t words = self.cat_offset[j]
        out.feature = -1
        out.cat_bits = &self.cat_scratch[i * self.cat_node_words + words] if words >= 0 else NULL
        if sum_h[i] <= 0.0 or (self.use_allowed and not self.allowed[i, j]):
            return
        if self.use_bounds and self._bounded(i, feature, &bounds):
            self._scan(slots[i], feature, sum_g[i], sum_h[i], counts[i], self.parent_scores[i], &bounds, p, out,
                       NULL)
        else:
            self._scan(slots[i], feature, sum_g[i], sum_h[i], counts[i], self.parent_scores[i], NULL, p, out, NULL)

    cdef void find_level_best(
        self,
        const int64_t* slots,       # IN: as find_best: a level's nodes
        const double* sum_g,        # IN
        const double* sum_h,        # IN
        const double* counts,       # IN
        Py_ssize_t n_nodes,
        Candidate* out,             # OUT: each node's part of the level's split (feature -1: none)
        const int64_t* nodes,       # IN: as find_best (the first one keys the level's noise)
    ) noexcept nogil:
        """An oblivious (symmetric) level's split: the (feature, bin, missing side) of the
        largest gain summed over the nodes, each node's gain the one formula's where the
        split is valid there (min_child_weight, min_samples_leaf, constraints), else 0;
        ties keep the lowest feature, bin, then missing-right (a categorical feature's
        candidates are its categories alone, see scan_categorical). out[i] is node i's split
        (its children's sums, its gain), or feature -1 where the split is invalid or the
        summed gain is not positive: that node stays a leaf (the level's split, with
        children at its value, would predict the same). out[i].has_missing: any node the
        split applies to has missing values of the feature. Parallel over features; each
        feature's sums add the nodes in order, so the split is the same at any thread
        count. Under random_strength the candidates of a positive sum compete by sum +
        noise, one draw per (feature, threshold) and level, keyed by the level's first
        node and counted as find_best's missing-right candidates (a one-node level draws
        find_best's noise)."""
        cdef Py_ssize_t i, j, b, nvb, n_feat = self.features.shape[0], best_j = -1, best_bin = 0
        cdef int t = self.n_threads if n_nodes * self.scan_bins >= MIN_BINS_PARALLEL else 1
        t = min(t, self.cat_threads)  # the categorical scans' scratch
        cdef double best_key = 0.0, key  # the sums, or under random_strength sum + noise
        cdef uint64_t level_key = 0
        cdef double* acc
        cdef uint8_t best_left = 0
        cdef bint missing = False
        cdef LevelScan split
        for i in range(n_nodes):
            self.parent_scores[i] = self._parent_score(i, sum_g[i], sum_h[i])
        if t > 1:
            for j in prange(n_feat, schedule="static", num_threads=t):
                self._level_sums(j, slots, sum_g, sum_h, counts, n_nodes)
        else:
            for j in range(n_feat):
                self._level_sums(j, slots, sum_g, sum_h, counts, n_nodes)
        if self.params.noise_sd > 0.0:
            level_key = noise_node_key(self.noise_tree, nodes[0] if nodes != NULL else 0)
            best_key = -INFINITY
        for j in range(n_feat):  # features, bins, then missing-right first; strict >: ties keep the first
            acc = self.level_gains + self.level_offset[j]
            nvb = self.n_bins[self.features[j]] - 1
            if self.cat_offset[j] >= 0:  # categorical: bin b alone goes left
                for b in range(nvb + 1):
                    key = self._level_key(acc[b], level_key, j, 2 * <uint64_t> b)
                    if key > best_key:
                        best_key, best_j, best_bin, best_left = key, j, b, 0
                continue
            for b in range(nvb):
                key = self._level_key(acc[b], level_key, j, 2 * <uint64_t> (b + 1))
                if key > best_key:
                    best_key, best_j, best_bin, best_left = key, j, b + 1, 0
                if b < nvb - 1:  # the same draw as missing-right: noise picks thresholds, gains the side
                    key = self._level_key(acc[nvb + b], level_key, j, 2 * <uint64_t> (b + 1))
                    if key > best_key:
                        best_key, best_j, best_bin, best_left = key, j, b + 1, 1
        split.gains = NULL
        split.bin = best_bin
        split.default_left = best_left
        for i in range(n_nodes):
            out[i].feature = -1
            out[i].gain = 0.0
            out[i].score = 0.0
            out[i].cat_bits = NULL
            if best_j >= 0 and self.cat_offset[best_j] >= 0:
                out[i].cat_bits = &self.cat_scratch[i * self.cat_node_words + self.cat_offset[best_j]]
            if best_j < 0 or sum_h[i] <= 0.0 or (self.use_allowed and not self.allowed[i, best_j]):
                continue
            self._scan_node(i, best_j, slots, sum_g, sum_h, counts, &out[i], &split)
            missing = missing or (out[i].feature >= 0 and out[i].has_missing)
        for i in range(n_nodes):
            out[i].has_missing = missing

    cdef void _level_sums(self, Py_ssize_t j, const int64_t* slots, const double* sum_g, const double* sum_h,
                          const double* counts, Py_ssize_t n_nodes) noexcept nogil:
        """find_level_best's sums of listed feature j over the level's nodes, in node order."""
        cdef Py_ssize_t i
        cdef LevelScan sums
        cdef Candidate ignored
        ignored.cat_bits = NULL
        sums.gains = self.level_gains + self.level_offset[j]
        for i in range(2 * self.n_bins[self.features[j]]):
            sums.gains[i] = 0.0
        for i in range(n_nodes):
            if sum_h[i] > 0.0 and not (self.use_allowed and not self.allowed[i, j]):
                self._scan_node(i, j, slots, sum_g, sum_h, counts, &ignored, &sums)

    cdef void _scan_node(self, Py_ssize_t i, Py_ssize_t j, const int64_t* slots, const double* sum_g,
                         const double* sum_h, const double* counts, Candidate* out,
                         const LevelScan* level) noexcept nogil:  # level: IN, out: OUT
        """Node i's scan of listed feature j, within its bounds when it has any."""
        cdef NodeBounds bounds
        cdef int32_t feature = self.features[j]
        if self.use_bounds and self._bounded(i, feature, &bounds):
            self._scan(slots[i], feature, sum_g[i], sum_h[i], counts[i], self.parent_scores[i], &bounds,
                       &self.params, out, level)
        else:
            self._scan(slots[i], feature, sum_g[i], sum_h[i], counts[i], self.parent_scores[i], NULL,
                       &self.params, out, level)

    cdef double _level_key(self, double total, uint64_t level_key, Py_ssize_t j,
                                  uint64_t counter) noexcept nogil:
        """find_level_best's selection key of a candidate's summed gain: the sum, or under
        random_strength a positive sum + its noise (-inf otherwise)."""
        if self.params.noise_sd > 0.0:
            return noisy_key(total, self.params.noise_sd, level_key, self.features[j], counter)
        return total

    cdef bint _bounded(self, Py_ssize_t i, int32_t feature, NodeBounds* out) noexcept nogil:  # out: OUT
        """Whether node i's scan of `feature` is constrained (a monotone feature, or a
        node with finite bounds), and how."""
        out.lower = self.bounds[i, 0]
        out.upper = self.bounds[i, 1]
        out.direction = self.direction[feature]
        return out.direction != 0 or out.lower > -INFINITY or out.upper < INFINITY

    cdef double _parent_score(self, Py_ssize_t i, double g, double h) noexcept nogil:
        """Node i's own score, at its weight clamped to its bounds when it has any."""
        cdef double l1 = self.params.l1, l2 = self.params.l2
        if self.use_bounds and (self.bounds[i, 0] > -INFINITY or self.bounds[i, 1] < INFINITY):
            return score_given_weight(g, h, clamp(leaf_weight(g, h, l1, l2), self.bounds[i, 0], self.bounds[i, 1]),
                                      l1, l2)
        return leaf_score(g, h, l1, l2)

    def constrain(self, allowed=None, bounds=None, direction=None):
        """Per-node constraints for the next find_best calls: `allowed` (max_batch,
        features) uint8, node i of a batch may split on features[j] where allowed[i, j];
        `bounds` (max_batch, 2) float64, node i's weight bounds, with `direction` (a
        monotone direction per feature id, int8). The arrays are read at each call, so
        their owner (training/_constraints.pyx) refills them per batch. None: off."""
        n_feat = self.features.shape[0]
        if allowed is not None and (allowed.dtype != np.uint8 or allowed.shape != (self.max_batch, n_feat)):
            raise ValueError(f"allowed must be a ({self.max_batch}, {n_feat}) uint8 array")
        if bounds is not None:
            if bounds.dtype != np.float64 or bounds.shape != (self.max_batch, 2):
                raise ValueError(f"bounds must be a ({self.max_batch}, 2) float64 array")
            if direction is None or direction.dtype != np.int8 or direction.shape != (self.n_bins.shape[0],):
                raise ValueError(f"direction must be an int8 array of {self.n_bins.shape[0]} features")
        self.use_allowed = allowed is not None
        self.use_bounds = bounds is not None
        if self.use_allowed:
            self.allowed = allowed
        if self.use_bounds:
            self.bounds = bounds
            self.direction = direction

    cdef void set_noise(self, uint64_t seed, uint64_t tree_index, double sd) noexcept nogil:
        """random_strength: the next searches add sd * N(0, 1) to each valid candidate's gain
        when choosing, drawn by (seed, tree_index, node, feature, candidate); sd 0: none."""
        self.params.noise_sd = sd
        self.noise_tree = noise_tree_key(seed, tree_index)

    def use_noise(self, uint64_t seed, uint64_t tree_index, double sd):
        """set_noise from Python (the tests' split searches)."""
        if not sd >= 0.0:
            raise ValueError(f"sd must be >= 0, got {sd}")
        self.set_noise(seed, tree_index, sd)

    cdef void begin_tree(self, double root_hess) noexcept nogil:
        """A new tree whose root has hessian sum `root_hess`. Float64 bins (the float
        finder's, and any finder's bundled features, whose default bin is the node total
        minus the rest) carry rounding: every sum of this tree is at most root_hess and
        carries a few dozen roundings of that size at most (subtraction chains), so 64
        ulps of the root bound the residue an empty missing bin can hold. A heuristic
        bound, not a proof: real missing rows below it (hessians ~1e-14 of the root's)
        count as absent and go to the larger child."""
        self.params.missing_hess_tol = 64.0 * DBL_EPSILON * root_hess

    cdef void totals(self, Py_ssize_t slot, Py_ssize_t start, Py_ssize_t stop,
                     double* g, double* h) noexcept nogil:  # g, h: OUT
        """(G, H) summed over bins [start, stop) of a slot: a node's totals, from any one of
        its columns."""
        pass

    cdef void _scan(self, Py_ssize_t slot, int32_t feature, double g, double h, double count, double parent_score,
                    const NodeBounds* bounds, const SplitParams* p, Candidate* out,
                    const LevelScan* level) noexcept nogil:  # bounds, level: IN (or NULL), p: IN, out: OUT
        """The best split of one feature of the node in `slot` (its totals g, h, count)."""
        pass


cdef class FloatSplitFinder(SplitFinder):
    """Float64 histograms: pool (slots, bins, 2)."""

    def __init__(self, pool_data, feature_offsets, n_bins, features, **params):
        if pool_data.dtype != np.float64 or pool_data.ndim != 3 or pool_data.shape[2] != 2:
            raise ValueError("pool_data must be a (slots, total_bins, 2) float64 array")
        super().__init__(pool_data.shape[0], pool_data.shape[1], feature_offsets, n_bins, features, **params)
        self.pool = pool_data

    cdef void totals(self, Py_ssize_t slot, Py_ssize_t start, Py_ssize_t stop,
                     double* g, double* h) noexcept nogil:  # g, h: OUT
        column_totals(&self.pool[slot, 0, 0], start, stop, 1.0, 1.0, g, h)

    cdef void _scan(self, Py_ssize_t slot, int32_t feature, double g, double h, double count, double parent_score,
                    const NodeBounds* bounds, const SplitParams* p, Candidate* out,
                    const LevelScan* level) noexcept nogil:  # bounds, level: IN (or NULL), p: IN, out: OUT
        scan_slot_feature(self, &self.pool[slot, 0, 0], feature, g, h, count, parent_score, out, 1.0, 1.0,
                          bounds, p, level)


cdef inline double unit_value(double scale) noexcept nogil:
    """What one stored unit of a quantized value is worth (0 for a zero scale)."""
    return 1.0 / scale if scale > 0 else 0.0


cdef class QuantizedSplitFinder(SplitFinder):
    """Quantized histograms: int64 pool (slots, bins), each slot as words of sum_bits[slot]
    bits per sum (the builder's array; None: 64-bit words everywhere), dequantized with
    the tree's scales (the builder's `scales` array, which its quantizer fills per tree;
    None: an array of the finder's own, see set_scales)."""

    def __init__(self, pool_data, feature_offsets, n_bins, features, *, sum_bits=None, scales=None, **params):
        if pool_data.dtype != np.int64 or pool_data.ndim != 2:
            raise ValueError("pool_data must be a (slots, total_bins) int64 array")
        super().__init__(pool_data.shape[0], pool_data.shape[1], feature_offsets, n_bins, features, **params)
        self.pool = pool_data
        if sum_bits is None:
            sum_bits = np.full(pool_data.shape[0], 32, dtype=np.uint8)
        if sum_bits.dtype != np.uint8 or sum_bits.shape != (pool_data.shape[0],) or \
                not np.isin(sum_bits, (8, 16, 32)).all():
            raise ValueError("sum_bits must be a uint8 array of 8, 16 or 32 per pool slot")
        self.slot_bits = sum_bits
        if scales is None:
            scales = np.ones(2)
        if scales.dtype != np.float64 or scales.shape != (2,):
            raise ValueError("scales must be a float64 array of 2 values")
        self.scales = scales

    def set_scales(self, double scale_g, double scale_h):
        """A stored unit of grad is worth 1 / scale_g (0 if scale_g is 0)."""
        self.scales[0] = scale_g
        self.scales[1] = scale_h

    cdef void totals(self, Py_ssize_t slot, Py_ssize_t start, Py_ssize_t stop,
                     double* g, double* h) noexcept nogil:  # g, h: OUT
        # the width dispatch of the totals
        cdef const void* words = &self.pool[slot, 0]
        cdef int bits = self.slot_bits[slot]
        cdef double inv_g = unit_value(self.scales[0]), inv_h = unit_value(self.scales[1])
        if bits == 32:
            column_totals(<const int64_t*> words, start, stop, inv_g, inv_h, g, h)
        elif bits == 16:
            column_totals(<const int32_t*> words, start, stop, inv_g, inv_h, g, h)
        else:
            column_totals(<const int16_t*> words, start, stop, inv_g, inv_h, g, h)

    cdef void _scan(self, Py_ssize_t slot, int32_t feature, double g, double h, double count, double parent_score,
                    const NodeBounds* bounds, const SplitParams* p, Candidate* out,
                    const LevelScan* level) noexcept nogil:  # bounds, level: IN (or NULL), p: IN, out: OUT
        # the width dispatch of the scan
        cdef const void* words = &self.pool[slot, 0]
        cdef int bits = self.slot_bits[slot]
        cdef double inv_g = unit_value(self.scales[0]), inv_h = unit_value(self.scales[1])
        if bits == 32:
            scan_slot_feature(self, <const int64_t*> words, feature, g, h, count, parent_score, out, inv_g, inv_h,
                              bounds, p, level)
        elif bits == 16:
            scan_slot_feature(self, <const int32_t*> words, feature, g, h, count, parent_score, out, inv_g, inv_h,
                              bounds, p, level)
        else:
            scan_slot_feature(self, <const int16_t*> words, feature, g, h, count, parent_score, out, inv_g, inv_h,
                              bounds, p, level)
