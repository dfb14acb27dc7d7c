/* Wall-clock timing for benchmarks: run a body until a time budget is
 * spent and report operations per second. */
#ifndef GD_BENCH_TIMER_H
#define GD_BENCH_TIMER_H

#include <stdint.h>

/* Monotonic time in seconds. */
double gd_bench_now(void);

/* The process's peak resident memory: gd_bench_peak_reset starts a new
 * high-water mark at the current resident size (Linux: clear_refs 5), and
 * gd_bench_peak_mib reads it (VmHWM) in MiB; 0 where the kernel does not
 * say. Between the two: a phase's peak. */
void gd_bench_peak_reset(void);
double gd_bench_peak_mib(void);

/* Calls fn(ctx) repeatedly for at least min_seconds (and at least min_ops
 * times); returns the number of calls per second. */
double gd_bench_rate(void (*fn)(void *ctx), void *ctx, double min_seconds, uint64_t min_ops);

#endif
