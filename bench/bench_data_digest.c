/* Opening a run's data: the node digests every data file to check it is
 * the run's (trainer/data.h gd_data_digest). This writes token shards to a
 * temporary directory and digests them three times as three starts of a
 * node would: with no memo (every file read and hashed on the pool's
 * threads, one file per task), then with the memo the first start left in
 * the state directory (plugin/member/data_memo.h: no file read). The files were
 * just written, so they are in the page cache: the first figure is the
 * hashing, not the disk.
 * Usage: gd-bench-data-digest [--files N] [--mtokens M] [--threads T] [--json]
 * (default: 4 files of 100 M uint16 tokens, 800 MB, 2 threads) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/timer.h"
#include "plugin/member/data_memo.h"

/* One start: the memo loaded (its files counted as settled, as on a host
 * whose data was written long before), the data opened and digested, the
 * memo saved. */
static gd_status one_start(const char *dir, const char *spec, gd_pool *pool, double *seconds,
                           uint8_t digest[32]) {
    gd_data_memo memo;
    bool ignored = false;
    GD_TRY(gd_data_memo_load(&memo, dir, &ignored));
    memo.began += 2 * GD_DATA_MEMO_SETTLE_SEC + 1;
    gd_data_hash_memo hooks = gd_data_memo_hooks(&memo);
    gd_data *d = NULL;
    gd_status s = gd_data_open(&d, spec);
    double t0 = gd_bench_now();
    if (s == GD_OK)
        s = gd_data_digest(d, pool, &hooks, digest);
    *seconds = gd_bench_now() - t0;
    if (s == GD_OK)
        s = gd_data_memo_save(&memo);
    gd_data_close(d);
    gd_data_memo_free(&memo);
    return s;
}

static void remove_dir(const char *dir) {
    DIR *dp = opendir(dir);
    struct dirent *e;
    char path[600];
    while (dp != NULL && (e = readdir(dp)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (dp != NULL)
        closedir(dp);
    rmdir(dir);
}

int main(int argc, char **argv) {
    long files = 4, mtokens = 100, threads = 2;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (i + 1 < argc && strcmp(argv[i], "--files") == 0)
            files = strtol(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(argv[i], "--mtokens") == 0)
            mtokens = strtol(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
            threads = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: gd-bench-data-digest [--files N] [--mtokens M] "
                            "[--threads T] [--json]\n");
            return 2;
        }
    }
    if (files < 1 || files > 1000 || mtokens < 1 || mtokens > 1000 || threads < 1 ||
        threads > 1024) {
        fprintf(stderr, "error: --files 1..1000, --mtokens 1..1000, --threads 1..1024\n");
        return 2;
    }
    size_t count = (size_t)mtokens * 1000000;
    uint32_t *tokens = malloc(count * sizeof *tokens);
    char dir[] = "/tmp/gd-bench-data-digest-XXXXXX";
    if (tokens == NULL || mkdtemp(dir) == NULL) {
        fprintf(stderr, "error: out of memory or no temporary directory\n");
        return 1;
    }
    gd_status s = GD_OK;
    for (long f = 0; s == GD_OK && f < files; f++) {
        for (size_t i = 0; i < count; i++)
            tokens[i] = ((uint32_t)(i + (size_t)f) * 2654435761u) >> 16;
        char path[600];
        snprintf(path, sizeof path, "%s/shard-%04ld.bin", dir, f);
        s = gd_shard_write(path, tokens, count, 2);
    }
    free(tokens);
    char spec[600];
    snprintf(spec, sizeof spec, "%s/shard-*.bin", dir);
    gd_pool *pool = NULL;
    if (s == GD_OK)
        s = gd_pool_new(&pool, (int)threads);
    double seconds[3] = {0};
    uint8_t digests[3][32];
    for (int start = 0; s == GD_OK && start < 3; start++)
        s = one_start(dir, spec, pool, &seconds[start], digests[start]);
    if (s == GD_OK && (memcmp(digests[0], digests[1], 32) != 0 ||
                       memcmp(digests[0], digests[2], 32) != 0))
        s = gd_fail(GD_ERR_INVALID, "the digest changed between starts");
    gd_pool_free(pool);
    remove_dir(dir);
    if (s != GD_OK) {
        fprintf(stderr, "error: %s\n", gd_error_detail());
        return 1;
    }
    double mb = 2.0 * (double)count * (double)files / 1e6;
    if (json) {
        printf("{\"files\":%ld,\"mb\":%.1f,\"threads\":%ld,\"first_start_s\":%.6f,"
               "\"first_mb_s\":%.1f,\"restart_s\":%.6f}\n",
               files, mb, threads, seconds[0], seconds[0] > 0 ? mb / seconds[0] : 0,
               seconds[1] > seconds[2] ? seconds[1] : seconds[2]);
    } else {
        printf("%ld token shards, %.1f MB, %ld threads\n", files, mb, threads);
        printf("first start (every file hashed)   %.4f s  %.0f MB/s\n", seconds[0],
               seconds[0] > 0 ? mb / seconds[0] : 0);
        printf("restart (known files not read)    %.6f s\n", seconds[1]);
        printf("restart again                     %.6f s\n", seconds[2]);
    }
    return 0;
}
