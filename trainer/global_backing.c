/* G's arrays kept in a file rather than in memory (trainer/state.h,
 * gd_global_state_open_file): a 32B model's G is 256 GB, which a host holds
 * on disk but not in RAM.
 *
 * The file is read whole once when opened, a window at a time, and each
 * array's chunk leaves are recorded (32 bytes a chunk) while its root is
 * checked against the one the caller trusts (the chain's); unless the
 * caller wrote the file and kept its leaves as it hashed them: then an
 * array left in the file is not read at all. After that a
 * read hashes the chunks it touches again and compares them with their
 * leaves, so a value the disk changed later is a local failure, caught
 * before it can make a G' or a verdict with other bits. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "common/mem.h"
#include "proofs/mmr.h"
#include "trainer/state.h"

enum { GD_GLOBAL_PARAMS, GD_GLOBAL_MOMENTUM, GD_GLOBAL_ARRAYS };

struct gd_global_backing {
    int fd;
    char path[256];
    uint32_t chunk_elems;
    uint32_t chunks;
    uint64_t at[GD_GLOBAL_ARRAYS];
    uint8_t root[GD_GLOBAL_ARRAYS][GD_MMR_HASH_LEN];
    uint8_t *leaves[GD_GLOBAL_ARRAYS]; /* chunks * 32 bytes, or NULL: in memory */
};

static void gd_backing_free(gd_global_backing *b) {
    if (b == NULL)
        return;
    if (b->fd >= 0)
        close(b->fd);
    for (int a = 0; a < GD_GLOBAL_ARRAYS; a++)
        free(b->leaves[a]);
    free(b);
}

void gd_global_backing_free(gd_global_backing *b) { gd_backing_free(b); }

/* The leaves of one window's whole chunks, hashed on the pool. */
typedef struct {
    const float *values;
    size_t n, lo;
    uint32_t chunk_elems, first;
    uint8_t *leaves;
} gd_leaf_job;

static void gd_leaf_task(void *ctx, size_t task) {
    gd_leaf_job *j = ctx;
    size_t lo = 0, count = 0;
    uint32_t chunk = j->first + (uint32_t)task;
    (void)gd_values_chunk_range(j->n, j->chunk_elems, chunk, &lo, &count);
    gd_mmr_hash_leaf(j->leaves + (size_t)chunk * GD_MMR_HASH_LEN, chunk,
                     j->values + (lo - j->lo), count * sizeof(float));
}

/* The window's leaves hashed on the pool and appended to peaks: the
 * window holds whole chunks (the last may end the array). */
static gd_status gd_backing_leaves(gd_global_backing *b, gd_pool *pool, int a, size_t n,
                                   const float *window, size_t lo, size_t count,
                                   gd_mmr_peaks *peaks) {
    uint32_t first = (uint32_t)(lo / b->chunk_elems);
    uint32_t last = (uint32_t)((lo + count - 1) / b->chunk_elems);
    gd_leaf_job job = {window, n, lo, b->chunk_elems, first, b->leaves[a]};
    gd_pool_run(pool, (size_t)(last - first) + 1, gd_leaf_task, &job);
    for (uint32_t c = first; c <= last; c++)
        GD_TRY(gd_mmr_peaks_append(peaks, b->leaves[a] + (size_t)c * GD_MMR_HASH_LEN));
    return GD_OK;
}

/* One array's leaves as its writer hashed them: they must make its root. */
static gd_status gd_backing_known(gd_global_backing *b, int a, const uint8_t *leaves) {
    memcpy(b->leaves[a], leaves, (size_t)b->chunks * GD_MMR_HASH_LEN);
    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    for (uint32_t c = 0; c < b->chunks; c++)
        GD_TRY(gd_mmr_peaks_append(&peaks, b->leaves[a] + (size_t)c * GD_MMR_HASH_LEN));
    uint8_t root[GD_MMR_HASH_LEN];
    GD_TRY(gd_mmr_peaks_root(&peaks, root));
    if (memcmp(root, b->root[a], sizeof root) != 0)
        return gd_fail(GD_ERR_INVALID, "%s: the %s leaves known are not the state expected",
                       b->path, a == GD_GLOBAL_PARAMS ? "params" : "momentum");
    return GD_OK;
}

/* One array read from the file a window at a time: its leaves recorded,
 * its root checked, and its values copied to keep (or NULL). */
static gd_status gd_backing_load(gd_global_backing *b, gd_pool *pool, int a, size_t n,
                                 float *window, size_t window_n, float *keep) {
    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    for (size_t lo = 0; lo < n; lo += window_n) {
        size_t count = n - lo < window_n ? n - lo : window_n;
        float *into = keep != NULL ? keep + lo : window;
        GD_TRY(gd_file_read_at(b->fd, into, count * sizeof(float), b->at[a] + 4 * (uint64_t)lo,
                               b->path));
        GD_TRY(gd_backing_leaves(b, pool, a, n, into, lo, count, &peaks));
    }
    uint8_t root[GD_MMR_HASH_LEN];
    GD_TRY(gd_mmr_peaks_root(&peaks, root));
    if (memcmp(root, b->root[a], sizeof root) != 0)
        return gd_fail(GD_ERR_INVALID, "%s: G's %s are not the state expected", b->path,
                       a == GD_GLOBAL_PARAMS ? "params" : "momentum");
    if (keep != NULL) { /* in memory from now on: no leaves to check */
        free(b->leaves[a]);
        b->leaves[a] = NULL;
    }
    return GD_OK;
}

gd_status gd_global_state_open_file(gd_global_state *g, gd_pool *pool, int fd, const char *path,
                                    size_t n, uint32_t chunk_elems, uint64_t params_at,
                                    uint64_t momentum_at, const uint8_t params_root[32],
                                    const uint8_t momentum_root[32], bool keep_params,
                                    bool keep_momentum, const uint8_t *const leaves[2]) {
    memset(g, 0, sizeof *g);
    g->n = n;
    gd_global_backing *b = calloc(1, sizeof *b);
    if (b == NULL) {
        close(fd);
        return gd_fail(GD_ERR_NOMEM, "out of memory for G's file");
    }
    b->fd = fd;
    g->file = b;
    snprintf(b->path, sizeof b->path, "%s", path);
    gd_status s = GD_OK;
    size_t chunks = n / (chunk_elems ? chunk_elems : 1) + 1;
    if (chunk_elems == 0 || n == 0 || n > GD_STATE_VALUES_MAX || chunks > GD_MMR_MAX_LEAVES)
        s = gd_fail(GD_ERR_INVALID, "a G of %zu values in chunks of %u", n, chunk_elems);
    b->chunk_elems = chunk_elems;
    b->chunks = (uint32_t)((n + chunk_elems - 1) / (chunk_elems ? chunk_elems : 1));
    b->at[GD_GLOBAL_PARAMS] = params_at;
    b->at[GD_GLOBAL_MOMENTUM] = momentum_at;
    memcpy(b->root[GD_GLOBAL_PARAMS], params_root, GD_MMR_HASH_LEN);
    memcpy(b->root[GD_GLOBAL_MOMENTUM], momentum_root, GD_MMR_HASH_LEN);
    bool keep[GD_GLOBAL_ARRAYS] = {keep_params, keep_momentum};
    float **arrays[GD_GLOBAL_ARRAYS] = {&g->params, &g->momentum};
    size_t window_n = gd_values_window_whole(chunk_elems, n);
    float *window = NULL;
    for (int a = 0; s == GD_OK && a < GD_GLOBAL_ARRAYS; a++) {
        b->leaves[a] = malloc((size_t)b->chunks * GD_MMR_HASH_LEN);
        if (!keep[a] && leaves != NULL && leaves[a] != NULL) { /* no pass over the file */
            s = b->leaves[a] != NULL ? gd_backing_known(b, a, leaves[a])
                                     : gd_fail(GD_ERR_NOMEM, "out of memory for G's file");
            continue;
        }
        if (keep[a])
            *arrays[a] = gd_calloc_large(n, sizeof(float));
        else if (window == NULL)
            window = gd_calloc_large(window_n, sizeof(float));
        if (b->leaves[a] == NULL || (keep[a] ? *arrays[a] == NULL : window == NULL))
            s = gd_fail(GD_ERR_NOMEM, "out of memory for G's file");
        if (s == GD_OK)
            s = gd_backing_load(b, pool, a, n, window, window_n, keep[a] ? *arrays[a] : NULL);
    }
    free(window);
    if (s == GD_OK && keep_params && keep_momentum) { /* nothing left in the file */
        gd_backing_free(b);
        g->file = NULL;
    }
    if (s != GD_OK)
        gd_global_state_free(g);
    return s;
}

/* Chunk c of array a read from the file into out (its chunk's values),
 * checked against its leaf. */
static gd_status gd_backing_chunk(const gd_global_backing *b, float *out, int a, size_t n,
                                  uint32_t c) {
    size_t lo = 0, count = 0;
    (void)gd_values_chunk_range(n, b->chunk_elems, c, &lo, &count);
    GD_TRY(gd_file_read_at(b->fd, out, count * sizeof(float), b->at[a] + 4 * (uint64_t)lo,
                           b->path));
    if (!gd_values_chunk_has_leaf(out, count, c, b->leaves[a] + (size_t)c * GD_MMR_HASH_LEN))
        return gd_fail(GD_ERR_IO, "%s: chunk %u of the %s changed on disk", b->path, c,
                       a == GD_GLOBAL_PARAMS ? "params" : "momentum");
    return GD_OK;
}

/* [lo, lo + count) of array a from the file: whole chunks straight into
 * out, a chunk the range cuts through into scratch first. */
static gd_status gd_backing_read(const gd_global_backing *b, float *out, int a, size_t n,
                                 size_t lo, size_t count) {
    float *scratch = NULL;
    gd_status s = GD_OK;
    size_t end = lo + count;
    for (size_t at = lo; s == GD_OK && at < end;) {
        uint32_t c = (uint32_t)(at / b->chunk_elems);
        size_t c_lo = 0, c_count = 0;
        (void)gd_values_chunk_range(n, b->chunk_elems, c, &c_lo, &c_count);
        size_t take = c_lo + c_count < end ? c_lo + c_count - at : end - at;
        if (at == c_lo && take == c_count) {
            s = gd_backing_chunk(b, out + (at - lo), a, n, c);
        } else {
            if (scratch == NULL && (scratch = malloc(b->chunk_elems * sizeof(float))) == NULL)
                s = gd_fail(GD_ERR_NOMEM, "out of memory for a chunk of G");
            if (s == GD_OK)
                s = gd_backing_chunk(b, scratch, a, n, c);
            if (s == GD_OK)
                memcpy(out + (at - lo), scratch + (at - c_lo), take * sizeof(float));
        }
        at += take;
    }
    free(scratch);
    return s;
}

gd_status gd_global_state_read(const gd_global_state *g, float *params, float *momentum,
                               size_t lo, size_t count) {
    if (lo > g->n || count > g->n - lo)
        return gd_fail(GD_ERR_INVALID, "G's values [%zu, +%zu) past its %zu", lo, count, g->n);
    float *out[GD_GLOBAL_ARRAYS] = {params, momentum};
    const float *held[GD_GLOBAL_ARRAYS] = {g->params, g->momentum};
    for (int a = 0; a < GD_GLOBAL_ARRAYS; a++) {
        if (out[a] == NULL || count == 0)
            continue;
        if (held[a] != NULL)
            memcpy(out[a], held[a] + lo, count * sizeof(float));
        else if (g->file != NULL && g->file->leaves[a] != NULL)
            GD_TRY(gd_backing_read(g->file, out[a], a, g->n, lo, count));
        else if (a == GD_GLOBAL_MOMENTUM)
            memset(out[a], 0, count * sizeof(float)); /* a round's start: none */
        else
            return gd_fail(GD_ERR_INVALID, "G has no params");
    }
    return GD_OK;
}

bool gd_global_backing_root(const gd_global_state *g, bool momentum,
                            uint8_t root[GD_MMR_HASH_LEN]) {
    int a = momentum ? GD_GLOBAL_MOMENTUM : GD_GLOBAL_PARAMS;
    if (g->file == NULL || g->file->leaves[a] == NULL)
        return false;
    memcpy(root, g->file->root[a], GD_MMR_HASH_LEN);
    return true;
}

static gd_status gd_global_params_read(const void *ctx, float *out, size_t lo, size_t count) {
    return gd_global_state_read(ctx, out, NULL, lo, count);
}

gd_values_reader gd_global_params_reader(const gd_global_state *g) {
    return (gd_values_reader){.read = gd_global_params_read, .ctx = g};
}

gd_status gd_global_state_make_file(gd_global_state *g, gd_pool *pool, const char *dir,
                                    size_t n, uint32_t chunk_elems,
                                    const gd_values_reader *from) {
    memset(g, 0, sizeof *g);
    g->n = n;
    size_t chunks = n / (chunk_elems ? chunk_elems : 1) + 1;
    if (chunk_elems == 0 || n == 0 || n > GD_STATE_VALUES_MAX || chunks > GD_MMR_MAX_LEAVES)
        return gd_fail(GD_ERR_INVALID, "a start of %zu values in chunks of %u", n, chunk_elems);
    gd_global_backing *b = calloc(1, sizeof *b);
    if (b == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a round's start file");
    b->fd = -1;
    g->file = b;
    b->chunk_elems = chunk_elems;
    b->chunks = (uint32_t)((n + chunk_elems - 1) / chunk_elems);
    /* No name on disk once made: nothing to clean up after a crash, and
     * nobody else's to open. */
    int len = snprintf(b->path, sizeof b->path, "%s/start.tmp-XXXXXX", dir);
    gd_status s = len > 0 && (size_t)len < sizeof b->path
                      ? GD_OK
                      : gd_fail(GD_ERR_LIMIT, "a start file in %s: the path is too long", dir);
    if (s == GD_OK && (b->fd = mkostemp(b->path, O_CLOEXEC)) < 0)
        s = gd_fail(GD_ERR_IO, "cannot create a start file in %s: %s", dir, strerror(errno));
    if (s == GD_OK && unlink(b->path) != 0)
        s = gd_fail(GD_ERR_IO, "cannot unlink %s: %s", b->path, strerror(errno));
    size_t window_n = gd_values_window_whole(chunk_elems, n);
    float *window = s == GD_OK ? gd_calloc_large(window_n, sizeof(float)) : NULL;
    b->leaves[GD_GLOBAL_PARAMS] = malloc((size_t)b->chunks * GD_MMR_HASH_LEN);
    if (s == GD_OK && (window == NULL || b->leaves[GD_GLOBAL_PARAMS] == NULL))
        s = gd_fail(GD_ERR_NOMEM, "out of memory for a round's start file");
    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    for (size_t lo = 0; s == GD_OK && lo < n; lo += window_n) {
        size_t count = n - lo < window_n ? n - lo : window_n;
        s = from->read(from->ctx, window, lo, count);
        if (s == GD_OK)
            s = gd_backing_leaves(b, pool, GD_GLOBAL_PARAMS, n, window, lo, count, &peaks);
        if (s == GD_OK)
            s = gd_file_write_at(b->fd, window, count * sizeof(float), 4 * (uint64_t)lo,
                                 b->path);
    }
    if (s == GD_OK)
        s = gd_mmr_peaks_root(&peaks, b->root[GD_GLOBAL_PARAMS]);
    free(window);
    if (s != GD_OK)
        gd_global_state_free(g);
    return s;
}
