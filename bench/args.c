/* The benchmarks' shared option parsing (bench/args.h). */
#include "bench/args.h"

#include <stdlib.h>
#include <unistd.h>

bool gd_bench_count(uint32_t *out, const char *text) {
    char *end = NULL;
    unsigned long x = strtoul(text, &end, 10);
    if (end == text || *end != '\0' || text[0] == '-' || x < 1 || x > 100000)
        return false;
    *out = (uint32_t)x;
    return true;
}

uint32_t gd_bench_cores(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 && cores <= 1024 ? (uint32_t)cores : 1;
}
