/* OpenBLAS sgemm throughput (see kernels/cpu/blas_bench.h). */
#include "kernels/cpu/blas_bench.h"

#include <cblas.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"
#include "kernels/cpu/ops.h"

double gd_cpu_sgemm_gflops(int threads, size_t m, size_t n, size_t k, double min_seconds) {
    float *a = malloc(m * k * sizeof(float)), *b = malloc(n * k * sizeof(float));
    float *c = malloc(m * n * sizeof(float));
    double gflops = 0;
    if (a && b && c) {
        for (size_t i = 0; i < m * k; i++)
            a[i] = (float)((i * 7919) % 1000) * 1e-3f;
        for (size_t i = 0; i < n * k; i++)
            b[i] = (float)((i * 104729) % 1000) * 1e-3f;
        gd_cpu_ops_init();
        openblas_set_num_threads(threads);
        /* One untimed call: thread start-up and buffer allocation. */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f, a,
                    (int)k, b, (int)k, 0.0f, c, (int)n);
        double t0 = gd_clock_seconds(), t = 0;
        size_t reps = 0;
        do {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f,
                        a, (int)k, b, (int)k, 0.0f, c, (int)n);
            reps++;
            t = gd_clock_seconds() - t0;
        } while (t < min_seconds);
        gflops = 2.0 * (double)m * (double)n * (double)k * (double)reps / t * 1e-9;
        openblas_set_num_threads(1);
    }
    free(a);
    free(b);
    free(c);
    return gflops;
}
