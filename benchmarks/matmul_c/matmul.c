/* Blocked matrix multiply C = A * B of N x N doubles, tuned through macros.
 *
 * TILE_I, TILE_J, TILE_K block the i, j and k loops; UNROLL asks the compiler
 * to unroll the k loop inside a tile that many times. The inputs are small
 * integers, so every sum is exact in double precision and the result does not
 * depend on the summation order: any configuration must give the reference
 * output bit for bit. The program prints the time of the multiply
 * ("time_ms=...") and writes one weighted checksum per row of C to c.txt.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if !defined(N) || !defined(TILE_I) || !defined(TILE_J) || !defined(TILE_K) || !defined(UNROLL)
#error "compile with -DN=... -DTILE_I=... -DTILE_J=... -DTILE_K=... -DUNROLL=..."
#endif

_Static_assert(N % TILE_I == 0, "TILE_I must divide N");
_Static_assert(N % TILE_J == 0, "TILE_J must divide N");
_Static_assert(N % TILE_K == 0, "TILE_K must divide N");
_Static_assert(TILE_K % UNROLL == 0, "UNROLL must divide TILE_K");

#define PRAGMA(x) _Pragma(#x)
#define UNROLL_LOOP(n) PRAGMA(GCC unroll n)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void multiply(const double *a, const double *b, double *c) {
    for (int ii = 0; ii < N; ii += TILE_I)
        for (int kk = 0; kk < N; kk += TILE_K)
            for (int jj = 0; jj < N; jj += TILE_J)
                for (int i = ii; i < ii + TILE_I; i++) {
                    UNROLL_LOOP(UNROLL)
                    for (int k = kk; k < kk + TILE_K; k++) {
                        const double aik = a[i * N + k];
                        for (int j = jj; j < jj + TILE_J; j++)
                            c[i * N + j] += aik * b[k * N + j];
                    }
                }
}

int main(void) {
    double *a = malloc(sizeof(double) * N * N);
    double *b = malloc(sizeof(double) * N * N);
    double *c = calloc((size_t)N * N, sizeof(double));
    if (!a || !b || !c) {
        fprintf(stderr, "out of memory for N=%d\n", N);
        return 1;
    }
    for (int i = 0; i < N; i++)
        for (int k = 0; k < N; k++) {
            a[i * N + k] = (double)((i * 7 + k * 3) % 11 - 5);
            b[i * N + k] = (double)((i * 5 + k * 2) % 13 - 6);
        }
    const double start = now_ms();
    multiply(a, b, c);
    const double elapsed = now_ms() - start;

    FILE *out = fopen("c.txt", "w");
    if (!out) {
        perror("c.txt");
        return 1;
    }
    for (int i = 0; i < N; i++) {
        double row = 0.0;
        for (int j = 0; j < N; j++)
            row += c[i * N + j] * (double)(j % 7 + 1);
        fprintf(out, "%.0f\n", row);
    }
    fclose(out);
    printf("time_ms=%.6f\n", elapsed);
    free(a);
    free(b);
    free(c);
    return 0;
}
