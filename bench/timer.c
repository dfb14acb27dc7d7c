/* Benchmark timing. */
#include "bench/timer.h"

#include <stdio.h>
#include <time.h>

double gd_bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gd_bench_peak_reset(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL)
        return;
    fputs("5", f);
    fclose(f);
}

double gd_bench_peak_mib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return 0;
    char line[256];
    unsigned long kib = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %lu kB", &kib) == 1)
            break;
    fclose(f);
    return (double)kib / 1024.0;
}

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
