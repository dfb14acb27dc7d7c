/* What the benchmarks' command lines share: counts and the default thread
 * count. */
#ifndef GD_BENCH_ARGS_H
#define GD_BENCH_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* A count option's value: decimal, 1 to 100000. */
bool gd_bench_count(uint32_t *out, const char *text);

/* One thread per online core (1 if unknown, at most 1024). */
uint32_t gd_bench_cores(void);

#endif
