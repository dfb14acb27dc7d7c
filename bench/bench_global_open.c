/* Opening a G this node has just written (G_0 from the seed, a state
 * sync's G, an aggregate's G'), with its arrays left in the file as a
 * memory budget leaves them: the way before this change read the file
 * whole once more to hash every chunk's leaf and check both roots; now the
 * leaves the writer hashed as it wrote stand in for that pass
 * (plugin/member/global_file.h, gd_global_leaves). Prints both openings'
 * times, the write for scale, and their ratio. The file was just written,
 * so the pass reads the page cache: what it costs here is hashing, a
 * lower bound for a G larger than the page cache (a 32B G is 256 GB).
 * Usage: gd-bench-global-open [--values N] [--chunk-elems N] [--threads T] [--json]
 * (default: the `base` model's 123,587,328 values in chunks of 2^20, two
 * threads) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/timer.h"
#include "common/pool.h"
#include "plugin/member/global_file.h"

#define BENCH_RUN 1
#define BENCH_ROUND 3

/* G's windows made up as they are asked for: no whole G in memory. */
static gd_status bench_values(void *ctx, float *params, float *momentum, size_t lo,
                              size_t count) {
    (void)ctx;
    for (size_t i = 0; i < count; i++) {
        uint64_t k = lo + i;
        params[i] = (float)((k * 2654435761u) % 1000) * 1e-3f;
        momentum[i] = (float)((k * 40503u) % 1000) * 1e-4f;
    }
    return GD_OK;
}

/* One opening of G_BENCH_ROUND, both arrays left in the file; seconds. */
static gd_status bench_open(const gd_artifact_store *store, gd_pool *pool, size_t n,
                            uint32_t ce, const gd_global_leaves *known, double *seconds) {
    gd_global_state g;
    gd_global_desc d;
    double t0 = gd_bench_now();
    GD_TRY(gd_global_file_get(store, pool, BENCH_RUN, BENCH_ROUND, n, ce, false, false, known,
                              &g, &d));
    *seconds = gd_bench_now() - t0;
    gd_global_state_free(&g);
    return GD_OK;
}

int main(int argc, char **argv) {
    size_t n = 123587328;
    uint32_t ce = 1u << 20;
    int threads = 2;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (i + 1 < argc && strcmp(argv[i], "--values") == 0) {
            n = strtoull(argv[++i], NULL, 10);
        } else if (i + 1 < argc && strcmp(argv[i], "--chunk-elems") == 0) {
            ce = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0) {
            threads = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: gd-bench-global-open [--values N] [--chunk-elems N] "
                            "[--threads T] [--json]\n");
            return 2;
        }
    }
    if (n < 1 || n > ((size_t)1 << 34) || ce < 1 || ce > (1u << 28) || threads < 1 ||
        threads > 256) {
        fprintf(stderr, "error: --values 1..2^34, --chunk-elems 1..2^28, --threads 1..256\n");
        return 2;
    }
    char dir[] = "/tmp/gd-bench-global-open-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    gd_pool *pool = NULL;
    gd_artifact_store store;
    gd_global_leaves known = {0};
    uint8_t layout[32] = {1}, hash[32];
    double write_s = 0, pass_s = 0, known_s = 0;
    gd_status s = gd_pool_new(&pool, threads);
    if (s == GD_OK)
        s = gd_artifact_store_open(&store, dir);
    if (s == GD_OK) {
        gd_global_io from = {.n = n, .read = bench_values};
        double t0 = gd_bench_now();
        s = gd_global_file_put_from(&store, pool, BENCH_RUN, BENCH_ROUND, 0, layout, ce, &from,
                                    hash, &known);
        write_s = gd_bench_now() - t0;
    }
    if (s == GD_OK)
        s = bench_open(&store, pool, n, ce, NULL, &pass_s);
    if (s == GD_OK)
        s = bench_open(&store, pool, n, ce, &known, &known_s);
    gd_global_leaves_free(&known);
    gd_pool_free(pool);
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
    if (s != GD_OK) {
        fprintf(stderr, "error: %s\n", gd_error_detail());
        return 1;
    }
    double mb = 8.0 * (double)n / 1e6;
    if (json) {
        printf("{\"values\":%zu,\"chunk_elems\":%u,\"threads\":%d,\"g_mb\":%.1f,"
               "\"write_s\":%.4f,\"open_with_pass_s\":%.4f,\"open_known_s\":%.6f,"
               "\"ratio\":%.1f}\n",
               n, ce, threads, mb, write_s, pass_s, known_s, known_s > 0 ? pass_s / known_s : 0);
    } else {
        printf("G of %zu values (%.1f MB) in chunks of %u, %d thread%s, in the page cache\n", n,
               mb, ce, threads, threads == 1 ? "" : "s");
        printf("write (hashed as written)  %.3f s\n", write_s);
        printf("open, a pass over it       %.3f s  (before)\n", pass_s);
        printf("open, the writer's leaves  %.4f s  (now)  %.0fx faster\n", known_s,
               known_s > 0 ? pass_s / known_s : 0);
    }
    return 0;
}
