/* G's file written a window at a time (plugin/member/global_file.h). */
#include "plugin/member/global_file.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/mem.h"

static gd_status gd_global_file_open(gd_global_file *f, const gd_artifact_store *s,
                                     uint64_t run, uint64_t round, uint64_t g_round,
                                     const uint8_t layout_digest[32], uint32_t chunk_elems,
                                     uint64_t n) {
    memset(f, 0, sizeof *f);
    f->file.fd = -1;
    f->round = round;
    memcpy(f->desc.layout_digest, layout_digest, 32);
    f->desc.round = g_round;
    f->desc.n = n;
    f->desc.chunk_elems = chunk_elems;
    GD_TRY(gd_artifact_begin(s, &f->file, GD_ARTIFACT_GLOBAL, run, round, 0));
    /* The descriptor's place, written at commit: a file cut short by a
     * crash is never renamed into place anyway. */
    uint8_t zeros[GD_GLOBAL_DESC_BYTES] = {0};
    gd_status st = gd_file_atomic_append(&f->file, zeros, sizeof zeros);
    if (st != GD_OK)
        gd_file_atomic_abort(&f->file);
    return st;
}

gd_status gd_global_file_begin(gd_global_file *f, gd_pool *pool, const gd_artifact_store *s,
                               uint64_t run,
                               uint64_t round, uint64_t g_round, const uint8_t layout_digest[32],
                               uint32_t chunk_elems, uint64_t n, gd_global_state *copy) {
    if (copy != NULL && copy->n != n)
        return gd_fail(GD_ERR_INVALID, "a copy of %zu values for a G of %llu", copy->n,
                       (unsigned long long)n);
    GD_TRY(gd_global_file_open(f, s, run, round, g_round, layout_digest, chunk_elems, n));
    gd_status st = gd_values_stream_begin(&f->params, pool, n, chunk_elems);
    if (st == GD_OK)
        st = gd_values_stream_begin(&f->momentum, pool, n, chunk_elems);
    if (st == GD_OK)
        st = gd_values_stream_keep_leaves(&f->params);
    if (st == GD_OK)
        st = gd_values_stream_keep_leaves(&f->momentum);
    if (st != GD_OK) {
        gd_global_file_abort(f);
        return st;
    }
    f->hashing = true;
    f->copy = copy;
    if (copy != NULL)
        copy->round = g_round;
    return GD_OK;
}

gd_status gd_global_file_write(gd_global_file *f, const float *params, const float *momentum,
                               size_t lo, size_t count) {
    uint64_t n = f->desc.n;
    if (lo != f->next || count > n - lo)
        return gd_fail(GD_ERR_INVALID, "G's values [%zu, +%zu) out of order (next %llu of %llu)",
                       lo, count, (unsigned long long)f->next, (unsigned long long)n);
    /* Little-endian floats: the in-memory bytes on every supported host. */
    uint64_t at = GD_GLOBAL_DESC_BYTES + 4 * (uint64_t)lo;
    GD_TRY(gd_file_write_at(f->file.fd, params, count * sizeof(float), at, f->file.path));
    GD_TRY(gd_file_write_at(f->file.fd, momentum, count * sizeof(float), at + 4 * n,
                            f->file.path));
    if (f->hashing) {
        GD_TRY(gd_values_stream_add(&f->params, params, count));
        GD_TRY(gd_values_stream_add(&f->momentum, momentum, count));
    }
    if (f->copy != NULL) {
        memcpy(f->copy->params + lo, params, count * sizeof(float));
        memcpy(f->copy->momentum + lo, momentum, count * sizeof(float));
    }
    f->next = lo + count;
    return GD_OK;
}

static gd_status gd_global_file_io_read(void *ctx, float *params, float *momentum, size_t lo,
                                        size_t count) {
    gd_global_file_io *x = ctx;
    return gd_global_arrays_read(&x->from, params, momentum, lo, count);
}

static gd_status gd_global_file_io_write(void *ctx, const float *params, const float *momentum,
                                         size_t lo, size_t count) {
    gd_global_file_io *x = ctx;
    return gd_global_file_write(x->to, params, momentum, lo, count);
}

gd_global_io gd_global_file_io_of(gd_global_file_io *x) {
    return (gd_global_io){.n = x->from.from->n, .read = gd_global_file_io_read,
                          .write = gd_global_file_io_write, .ctx = x};
}

void gd_global_leaves_free(gd_global_leaves *l) {
    if (l == NULL)
        return;
    free(l->params);
    free(l->momentum);
    memset(l, 0, sizeof *l);
}

gd_status gd_global_file_commit(gd_global_file *f, uint8_t hash[32], gd_global_leaves *leaves) {
    gd_global_leaves_free(leaves);
    gd_status st = f->next == f->desc.n
                       ? GD_OK
                       : gd_fail(GD_ERR_INVALID, "G has %llu of its %llu values",
                                 (unsigned long long)f->next, (unsigned long long)f->desc.n);
    if (st == GD_OK && f->hashing)
        st = gd_values_stream_root(&f->params, f->desc.params_root);
    if (st == GD_OK && f->hashing)
        st = gd_values_stream_root(&f->momentum, f->desc.momentum_root);
    uint8_t desc[GD_GLOBAL_DESC_BYTES];
    gd_global_desc_encode(&f->desc, desc);
    if (st == GD_OK)
        st = gd_file_write_at(f->file.fd, desc, sizeof desc, 0, f->file.path);
    if (st == GD_OK)
        st = gd_file_atomic_commit(&f->file);
    if (st == GD_OK && hash != NULL)
        gd_global_desc_hash(&f->desc, hash);
    if (st == GD_OK && leaves != NULL && f->hashing) {
        leaves->round = f->round;
        gd_global_desc_hash(&f->desc, leaves->hash);
        leaves->params = gd_values_stream_take_leaves(&f->params);
        leaves->momentum = gd_values_stream_take_leaves(&f->momentum);
    }
    gd_global_file_abort(f);
    return st;
}

void gd_global_file_abort(gd_global_file *f) {
    gd_file_atomic_abort(&f->file);
    gd_values_stream_end(&f->params);
    gd_values_stream_end(&f->momentum);
    f->hashing = false;
    f->copy = NULL;
}

gd_status gd_global_file_put_from(const gd_artifact_store *s, gd_pool *pool, uint64_t run,
                                  uint64_t round, uint64_t g_round,
                                  const uint8_t layout_digest[32], uint32_t chunk_elems,
                                  const gd_global_io *from, uint8_t hash[32],
                                  gd_global_leaves *leaves) {
    gd_global_file f;
    GD_TRY(gd_global_file_begin(&f, pool, s, run, round, g_round, layout_digest, chunk_elems,
                                from->n, NULL));
    size_t n = from->n, window = gd_values_window_of(chunk_elems, n);
    float *params = gd_calloc_large(window, sizeof(float));
    float *momentum = gd_calloc_large(window, sizeof(float));
    gd_status st = params && momentum ? GD_OK
                                      : gd_fail(GD_ERR_NOMEM, "out of memory for a window of G");
    for (size_t lo = 0; st == GD_OK && lo < n; lo += window) {
        size_t count = n - lo < window ? n - lo : window;
        st = from->read(from->ctx, params, momentum, lo, count);
        if (st == GD_OK)
            st = gd_global_file_write(&f, params, momentum, lo, count);
    }
    free(params);
    free(momentum);
    if (st == GD_OK)
        return gd_global_file_commit(&f, hash, leaves);
    gd_global_file_abort(&f);
    return st;
}

gd_status gd_global_file_put(const gd_artifact_store *s, gd_pool *pool, uint64_t run,
                             uint64_t round, const uint8_t layout_digest[32],
                             uint32_t chunk_elems, const gd_global_state *g) {
    /* A window at a time: G's arrays may lie in a file (trainer/state.h). */
    gd_global_arrays arrays = {.from = g};
    gd_global_io from = gd_global_io_arrays(&arrays);
    return gd_global_file_put_from(s, pool, run, round, g->round, layout_digest, chunk_elems,
                                   &from, NULL, NULL);
}

/* G_round's file opened, its size and descriptor checked against n. */
static gd_status gd_global_file_open_read(const gd_artifact_store *s, uint64_t run,
                                          uint64_t round, uint64_t n, char path[GD_ARTIFACT_PATH_MAX],
                                          int *fd_out, gd_global_desc *desc) {
    GD_TRY(gd_artifact_path(s, path, GD_ARTIFACT_PATH_MAX, GD_ARTIFACT_GLOBAL, run, round, 0));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gd_fail(errno == ENOENT ? GD_ERR_NOT_FOUND : GD_ERR_IO, "cannot open %s: %s",
                       path, strerror(errno));
    uint64_t want = GD_GLOBAL_DESC_BYTES + 8 * n;
    struct stat st;
    uint8_t head[GD_GLOBAL_DESC_BYTES];
    gd_status r = fstat(fd, &st) == 0 ? GD_OK
                                      : gd_fail(GD_ERR_IO, "cannot stat %s: %s", path,
                                                strerror(errno));
    if (r == GD_OK && (uint64_t)st.st_size != want)
        r = gd_fail(GD_ERR_PARSE, "%s: a G of %llu values is %llu bytes, not %llu", path,
                    (unsigned long long)n, (unsigned long long)want,
                    (unsigned long long)st.st_size);
    if (r == GD_OK)
        r = gd_file_read_at(fd, head, sizeof head, 0, path);
    if (r == GD_OK)
        r = gd_global_desc_decode(desc, head, sizeof head);
    if (r == GD_OK && desc->n != n)
        r = gd_fail(GD_ERR_PARSE, "%s describes %llu values, not %llu", path,
                    (unsigned long long)desc->n, (unsigned long long)n);
    if (r != GD_OK) {
        close(fd);
        return r;
    }
    *fd_out = fd;
    return GD_OK;
}

gd_status gd_global_file_desc(const gd_artifact_store *s, uint64_t run, uint64_t round,
                              uint64_t n, gd_global_desc *desc) {
    char path[GD_ARTIFACT_PATH_MAX];
    int fd = -1;
    GD_TRY(gd_global_file_open_read(s, run, round, n, path, &fd, desc));
    close(fd);
    return GD_OK;
}

gd_status gd_global_file_get(const gd_artifact_store *s, gd_pool *pool, uint64_t run,
                             uint64_t round, uint64_t n, uint32_t chunk_elems, bool keep_params,
                             bool keep_momentum, const gd_global_leaves *known,
                             gd_global_state *g, gd_global_desc *desc) {
    memset(g, 0, sizeof *g);
    char path[GD_ARTIFACT_PATH_MAX];
    int fd = -1;
    GD_TRY(gd_global_file_open_read(s, run, round, n, path, &fd, desc));
    if (desc->chunk_elems != chunk_elems) {
        close(fd);
        return gd_fail(GD_ERR_PARSE, "%s is in chunks of %u values, not %u", path,
                       desc->chunk_elems, chunk_elems);
    }
    /* What this node learned writing the file, if it is this file. */
    const uint8_t *leaves[2] = {NULL, NULL};
    uint8_t hash[32];
    gd_global_desc_hash(desc, hash);
    if (known != NULL && known->round == round && memcmp(known->hash, hash, 32) == 0) {
        leaves[0] = known->params;
        leaves[1] = known->momentum;
    }
    GD_TRY(gd_global_state_open_file(g, pool, fd, path, (size_t)n, chunk_elems,
                                     GD_GLOBAL_DESC_BYTES, GD_GLOBAL_DESC_BYTES + 4 * n,
                                     desc->params_root, desc->momentum_root, keep_params,
                                     keep_momentum, leaves));
    g->round = desc->round;
    return GD_OK;
}
