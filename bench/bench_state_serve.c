/* Serving G for a peer's state sync: a joining member fetches every chunk
 * of G (params and momentum) with its proofs. The member indexes the stored
 * file once (plugin/member/state_index.h) and answers each chunk with a proof from
 * the index and one read; the way it served before proved every chunk by
 * rehashing both whole arrays, which this prints as the baseline (timed on
 * a few chunks and scaled to all of them). One core (no pool), as the HTTP
 * threads serve.
 * Usage: gd-bench-state-serve [--values N] [--chunk-elems N] [--json]
 * (default: the `small` model's 9,540,480 values in chunks of 4096) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/timer.h"
#include "common/bytes.h"
#include "common/file.h"
#include "plugin/member/state_index.h"
#include "trainer/state.h"

#define BASELINE_CHUNKS 3

static gd_status write_global(const char *path, const gd_global_state *g, uint32_t ce) {
    gd_global_desc d;
    uint8_t layout[32] = {1};
    GD_TRY(gd_global_state_describe(NULL, &d, layout, ce, g));
    size_t len = GD_GLOBAL_DESC_BYTES + 8 * g->n;
    uint8_t *bytes = malloc(len);
    if (bytes == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_global_desc_encode(&d, bytes);
    for (size_t i = 0; i < g->n; i++) {
        uint32_t p, m;
        memcpy(&p, &g->params[i], 4);
        memcpy(&m, &g->momentum[i], 4);
        gd_put_le32(bytes + GD_GLOBAL_DESC_BYTES + 4 * i, p);
        gd_put_le32(bytes + GD_GLOBAL_DESC_BYTES + 4 * (g->n + i), m);
    }
    gd_status s = gd_file_write_atomic(path, &(gd_bytes_part){bytes, len}, 1, 0600);
    free(bytes);
    return s;
}

int main(int argc, char **argv) {
    size_t n = 9540480;
    uint32_t ce = 4096;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (i + 1 < argc && strcmp(argv[i], "--values") == 0) {
            n = strtoull(argv[++i], NULL, 10);
        } else if (i + 1 < argc && strcmp(argv[i], "--chunk-elems") == 0) {
            ce = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: gd-bench-state-serve [--values N] [--chunk-elems N] [--json]\n");
            return 2;
        }
    }
    if (n < 1 || n > ((size_t)1 << 32) || ce < 1 || ce > (1u << 28)) {
        fprintf(stderr, "error: --values 1..2^32 and --chunk-elems 1..2^28\n");
        return 2;
    }
    gd_global_state g;
    if (gd_global_state_init(&g, n) != GD_OK) {
        fprintf(stderr, "error: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        g.params[i] = (float)((i * 2654435761u) % 1000) * 1e-3f;
        g.momentum[i] = (float)((i * 40503u) % 1000) * 1e-4f;
    }
    char path[] = "/tmp/gd-bench-state-serve-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return 1;
    }
    close(fd);
    gd_status s = write_global(path, &g, ce);
    uint32_t chunks = gd_values_chunks(n, ce);
    gd_state_index x;
    gd_state_index_init(&x);
    double t0 = gd_bench_now(), index_s = 0, serve_s = 0, baseline_s = 0;
    if (s == GD_OK)
        s = gd_state_index_load(&x, path, true, n, ce);
    index_s = gd_bench_now() - t0;
    uint64_t bytes = 0;
    t0 = gd_bench_now();
    for (uint32_t c = 0; s == GD_OK && c < chunks; c++) {
        gd_buf body = {0}, proof = {0};
        s = gd_state_index_load(&x, path, true, n, ce); /* what each request does */
        if (s == GD_OK)
            s = gd_state_index_chunk(&x, c, &body, &proof);
        bytes += body.len + proof.len;
        gd_buf_free(&body);
        gd_buf_free(&proof);
    }
    serve_s = gd_bench_now() - t0;
    uint32_t timed = chunks < BASELINE_CHUNKS ? chunks : BASELINE_CHUNKS;
    t0 = gd_bench_now();
    for (uint32_t c = 0; s == GD_OK && c < timed; c++) {
        gd_mmr_proof pp, mp;
        s = gd_values_prove(NULL, g.params, n, ce, c, &pp);
        if (s == GD_OK)
            s = gd_values_prove(NULL, g.momentum, n, ce, c, &mp);
    }
    baseline_s = (gd_bench_now() - t0) / timed * chunks;
    gd_state_index_free(&x);
    gd_global_state_free(&g);
    unlink(path);
    if (s != GD_OK) {
        fprintf(stderr, "error: %s\n", gd_error_detail());
        return 1;
    }
    double total = index_s + serve_s, mb = 8.0 * (double)n / 1e6;
    if (json) {
        printf("{\"values\":%zu,\"chunk_elems\":%u,\"chunks\":%u,\"state_mb\":%.2f,"
               "\"index_s\":%.6f,\"serve_all_s\":%.6f,\"sync_mb_s\":%.1f,"
               "\"baseline_s\":%.3f,\"speedup\":%.1f}\n",
               n, ce, chunks, mb, index_s, serve_s, total > 0 ? mb / total : 0, baseline_s,
               total > 0 ? baseline_s / total : 0);
    } else {
        printf("G of %zu values (%.1f MB) in %u chunks of %u, one core\n", n, mb, chunks, ce);
        printf("index once            %.3f s\n", index_s);
        printf("serve every chunk     %.3f s  (%" PRIu64 " bytes with proofs)\n", serve_s, bytes);
        printf("state sync served     %.3f s  %.0f MB/s\n", total, total > 0 ? mb / total : 0);
        printf("before (rehash per chunk, from %u chunks) %.1f s: %.0fx slower\n", timed,
               baseline_s, total > 0 ? baseline_s / total : 0);
    }
    return 0;
}
