/* (grad, hess) float64 pairs of the full-precision histogram kernels: one 16-byte SIMD
 * add per bin instead of two scalar adds (the same IEEE sums, lane by lane). */
#ifndef BOOSTERS_PAIRS_H
#define BOOSTERS_PAIRS_H

#if defined(__SSE2__)
#include <emmintrin.h>

typedef __m128d boosters_pair;

/* a row's float32 (grad, hess), widened to float64 */
static inline boosters_pair boosters_pair_from_f32(const float *gh) {
    return _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)gh)));
}

/* bin[0] += v.grad, bin[1] += v.hess */
static inline void boosters_pair_add(double *bin, boosters_pair v) {
    _mm_storeu_pd(bin, _mm_add_pd(_mm_loadu_pd(bin), v));
}

#else

typedef struct { double g, h; } boosters_pair;

static inline boosters_pair boosters_pair_from_f32(const float *gh) {
    boosters_pair v = {(double)gh[0], (double)gh[1]};
    return v;
}

static inline void boosters_pair_add(double *bin, boosters_pair v) {
    bin[0] += v.g;
    bin[1] += v.h;
}

#endif
#endif
