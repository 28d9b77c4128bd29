# The gain and leaf-weight formulas (RFC-0008), in one place: the split finder, the
# grower's leaf values and the tests' references (through boosters._testing) use these.
#
#   T(G) = sign(G) max(|G| - l1, 0)                  L1 soft-thresholding
#   score(G, H) = T(G)^2 / (H + l2)                  0 where H + l2 <= 0
#   gain = 1/2 [score(G_L, H_L) + score(G_R, H_R) - score(G, H)] - min_gain_to_split
#   leaf weight = -T(G) / (H + l2)                   0 where H + l2 <= 0
from libc.math cimport copysign, fabs


cdef inline double threshold_l1(double g, double l1) noexcept nogil:
    """T(g), branch-free (the sign of a running sum is unpredictable); the ternary
    compiles to maxsd, where fmax() would be a library call."""
    cdef double shrunk = fabs(g) - l1
    return copysign(shrunk if shrunk > 0.0 else 0.0, g)


cdef inline double leaf_score(double g, double h, double l1, double l2) noexcept nogil:
    cdef double t = threshold_l1(g, l1), denom = h + l2
    if denom <= 0.0:
        return 0.0
    return t * t / denom


cdef inline double children_score(double gl, double hl, double gr, double hr, double l1,
                                  double l2) noexcept nogil:
    """score(left) + score(right) with one division, a^2/x + b^2/y = (a^2 y + b^2 x) / (x y),
    and no branch (the split scan's loop over candidates vectorises)."""
    cdef double a = threshold_l1(gl, l1), b = threshold_l1(gr, l1)
    cdef double x = hl + l2, y = hr + l2
    cdef double a2 = a * a if x > 0.0 else 0.0
    cdef double b2 = b * b if y > 0.0 else 0.0
    x = x if x > 0.0 else 1.0
    y = y if y > 0.0 else 1.0
    return (a2 * y + b2 * x) / (x * y)


cdef inline double children_score_no_l1(double gl, double hl, double gr, double hr, double l2) noexcept nogil:
    """children_score for l1 = 0 and both H + l2 > 0, where thresholding and guards are
    identities (the same result; a loop of these is a third as long)."""
    cdef double x = hl + l2, y = hr + l2
    return (gl * gl * y + gr * gr * x) / (x * y)


cdef inline double split_gain(double children, double parent, double min_gain) noexcept nogil:
    return 0.5 * (children - parent) - min_gain


cdef inline double leaf_weight(double g, double h, double l1, double l2) noexcept nogil:
    """Newton step with L1 soft-thresholding."""
    cdef double denom = h + l2
    if denom > 0.0:
        return -threshold_l1(g, l1) / denom
    return 0.0


# Monotone constraints bound a node's weight to [lower, upper]; a split's children are
# then scored at their clamped weights w (LightGBM's GetLeafGainGivenOutput; XGBoost's
# CalcGainGivenWeight is the same without the L1 threshold):
#   score(G, H, w) = -(2 T(G) w + (H + l2) w^2)      = T(G)^2 / (H + l2) at w = leaf weight
cdef inline double clamp(double w, double lower, double upper) noexcept nogil:
    w = lower if w < lower else w
    return upper if w > upper else w


cdef inline double score_given_weight(double g, double h, double w, double l1, double l2) noexcept nogil:
    return -(2.0 * threshold_l1(g, l1) * w + (h + l2) * w * w)
