/* The physical ceiling of a histogram build on one core: a plain scatter-add of
 * (gradient, hessian) pairs into per-feature bins that fit in L1/L2, with no gather, no
 * row indices and no quantization: what no histogram kernel can beat.
 *
 *     gcc -O3 -march=native -o /tmp/scatter benchmarks/scatter_add_ceiling.c && /tmp/scatter
 *
 * Three loops over the same uint8 bins (rows x 28 features, 256 bins each):
 *   row-wise f64 pairs:   hist[f][bin] += (g, h), float32 gradients into doubles (the float64 mode),
 *   row-wise i32 packed:  hist[f][bin] += one 32-bit word holding 16-bit g and h (the i16 mode),
 *   column-wise i32:      the same, column by column over a column-major copy of the bins.
 * Rows are visited in order (a root node) and through a random row index (a child node
 * after partitioning: the gathered case). Prints (row, feature) updates per second.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FEATURES 28
#define BINS 256

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

int main(int argc, char** argv) {
    const long n = argc > 1 ? atol(argv[1]) : 1000000;
    const int repeats = 5;
    uint8_t* bins = malloc((size_t)n * FEATURES);
    float* gh32 = malloc((size_t)n * 2 * sizeof(float));
    uint32_t* packed = malloc((size_t)n * sizeof(uint32_t));
    uint32_t* rows = malloc((size_t)n * sizeof(uint32_t));
    uint8_t* columns = malloc((size_t)n * FEATURES);
    static double hist64[FEATURES][BINS][2];
    static int32_t hist32[FEATURES][BINS];
    for (long i = 0; i < n * FEATURES; i++) bins[i] = (uint8_t)(next_random() % BINS);
    for (long i = 0; i < n; i++)
        for (int f = 0; f < FEATURES; f++) columns[(size_t)f * n + i] = bins[i * FEATURES + f];
    for (long i = 0; i < n; i++) {
        gh32[2 * i] = (float)((next_random() % 1000) / 1000.0 - 0.5);
        gh32[2 * i + 1] = 0.25f;
        packed[i] = (uint32_t)(next_random() & 0xffffffffu);
        rows[i] = (uint32_t)i;
    }
    for (long i = n - 1; i > 0; i--) {  /* a random order: a partitioned node's rows */
        long j = (long)(next_random() % (uint64_t)(i + 1));
        uint32_t t = rows[i]; rows[i] = rows[j]; rows[j] = t;
    }
    for (int gathered = 0; gathered < 2; gathered++) {
        double best[3] = {1e30, 1e30, 1e30};
        for (int r = 0; r < repeats; r++) {
            memset(hist64, 0, sizeof hist64);
            double t0 = seconds();
            for (long k = 0; k < n; k++) {
                long i = gathered ? rows[k] : k;
                const uint8_t* line = bins + i * FEATURES;
                double g = gh32[2 * i], h = gh32[2 * i + 1];
                for (int f = 0; f < FEATURES; f++) {
                    hist64[f][line[f]][0] += g;
                    hist64[f][line[f]][1] += h;
                }
            }
            double t1 = seconds();
            memset(hist32, 0, sizeof hist32);
            for (long k = 0; k < n; k++) {
                long i = gathered ? rows[k] : k;
                const uint8_t* line = bins + i * FEATURES;
                uint32_t w = packed[i];
                for (int f = 0; f < FEATURES; f++) hist32[f][line[f]] += (int32_t)w;
            }
            double t2 = seconds();
            /* column by column (the layout boosters' column-wise kernel reads): one column's
               256 bins stay in L1 while all rows pass */
            memset(hist32, 0, sizeof hist32);
            for (int f = 0; f < FEATURES; f++) {
                const uint8_t* column = columns + (size_t)f * n;
                int32_t* h = hist32[f];
                for (long k = 0; k < n; k++) {
                    long i = gathered ? rows[k] : k;
                    h[column[i]] += (int32_t)packed[i];
                }
            }
            double t3 = seconds();
            if (t1 - t0 < best[0]) best[0] = t1 - t0;
            if (t2 - t1 < best[1]) best[1] = t2 - t1;
            if (t3 - t2 < best[2]) best[2] = t3 - t2;
        }
        double check = 0;
        for (int f = 0; f < FEATURES; f++) for (int b = 0; b < BINS; b++) check += hist64[f][b][0] + hist32[f][b];
        printf("%s rows: row-wise f64 pairs %.2f, row-wise i32 packed %.2f, column-wise i32 packed %.2f "
               "G updates/s (checksum %.3g)\n", gathered ? "gathered" : "in-order",
               n * (double)FEATURES / best[0] / 1e9, n * (double)FEATURES / best[1] / 1e9,
               n * (double)FEATURES / best[2] / 1e9, check);
    }
    free(bins); free(gh32); free(packed); free(rows); free(columns);
    return 0;
}
