/* Benchmark timing. */
#include "bench/timer.h"

#include <stdio.h>
#include <time.h>

#include "common/mem.h"

double gd_bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gd_bench_peak_reset(void) { gd_mem_peak_reset(); }

double gd_bench_peak_mib(void) { return (double)gd_mem_peak_bytes() / (1 << 20); }

double gd_bench_rate(void (*fn)(void *ctx), void *ctx, double min_seconds, uint64_t min_ops) {
    fn(ctx); /* warm up caches and lazy initialisation */
    uint64_t ops = 0;
    double start = gd_bench_now(), elapsed = 0;
    do {
        for (int i = 0; i < 16; i++)
            fn(ctx);
        ops += 16;
        elapsed = gd_bench_now() - start;
    } while (elapsed < min_seconds || ops < min_ops);
    return (double)ops / elapsed;
}
