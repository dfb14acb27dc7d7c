/* The peer figure for the trainer's benchmark: what OpenBLAS's own sgemm
 * reaches on this machine with a given number of threads. */
#ifndef GD_KERNELS_CPU_BLAS_BENCH_H
#define GD_KERNELS_CPU_BLAS_BENCH_H

#include <stddef.h>

/* GFLOP/s of cblas_sgemm C(m, n) = A(m, k) B(k, n)^T, using OpenBLAS's
 * threading with `threads` threads, repeated for at least min_seconds.
 * Restores single-threaded OpenBLAS (what the kernels use) afterwards.
 * Returns 0 if the buffers cannot be allocated. */
double gd_cpu_sgemm_gflops(int threads, size_t m, size_t n, size_t k, double min_seconds);

#endif
