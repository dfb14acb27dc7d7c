/* Served state files, indexed once (plugin/member/state_index.h). */
#include "plugin/member/state_index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file.h"
#include "proofs/state_hash.h"

void gd_state_index_init(gd_state_index *x) {
    memset(x, 0, sizeof *x);
    x->fd = -1;
}

void gd_state_index_free(gd_state_index *x) {
    for (int i = 0; i < x->n_arrays; i++)
        gd_mmr_free(&x->mmr[i]);
    if (x->fd >= 0)
        close(x->fd);
    gd_state_index_init(x);
}

static bool gd_same_file(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Takes the file's descriptor into x->header after checking that it
 * describes what x expects and that the file holds exactly its arrays;
 * roots receives the root it names for each array, in file order. */
static gd_status gd_index_header(gd_state_index *x, const uint8_t *bytes, size_t len,
                                 uint8_t roots[GD_STATE_INDEX_ARRAYS][GD_MMR_HASH_LEN]) {
    uint64_t n = 0;
    uint32_t chunk_elems = 0;
    if (x->global) {
        gd_global_desc d;
        x->header_len = GD_GLOBAL_DESC_BYTES;
        x->n_arrays = 2;
        if (len < x->header_len || gd_global_desc_decode(&d, bytes, x->header_len) != GD_OK)
            return gd_fail(GD_ERR_IO, "its descriptor does not decode");
        n = d.n;
        chunk_elems = d.chunk_elems;
        memcpy(roots[0], d.params_root, GD_MMR_HASH_LEN);
        memcpy(roots[1], d.momentum_root, GD_MMR_HASH_LEN);
    } else {
        gd_worker_desc d;
        x->header_len = GD_WORKER_DESC_BYTES;
        x->n_arrays = 4;
        if (len < x->header_len || gd_worker_desc_decode(&d, bytes, x->header_len) != GD_OK)
            return gd_fail(GD_ERR_IO, "its descriptor does not decode");
        n = d.n;
        chunk_elems = d.tag.chunk_elems;
        memcpy(roots[0], d.params_root, GD_MMR_HASH_LEN);
        memcpy(roots[1], d.exp_avg_root, GD_MMR_HASH_LEN);
        memcpy(roots[2], d.exp_avg_sq_root, GD_MMR_HASH_LEN);
        memcpy(roots[3], d.residual_root, GD_MMR_HASH_LEN);
    }
    if (n != x->n || chunk_elems != x->chunk_elems)
        return gd_fail(GD_ERR_IO, "its descriptor is of %llu values in chunks of %u",
                       (unsigned long long)n, chunk_elems);
    size_t want = x->header_len + (size_t)x->n_arrays * 4 * x->n;
    if (len != want)
        return gd_fail(GD_ERR_IO, "it is %zu bytes, not %zu", len, want);
    memcpy(x->header, bytes, x->header_len);
    return GD_OK;
}

/* Each array's MMR from the file at fd (len bytes), read a window of whole
 * chunks at a time with pread, checked against the root its descriptor
 * names. Not mapped: a mapped 2 GB state would count in full in the
 * process's resident memory while it is hashed. */
static gd_status gd_index_build(gd_state_index *x, int fd, size_t len, const char *path) {
    uint8_t head[GD_WORKER_DESC_BYTES];
    size_t head_len = len < sizeof head ? len : sizeof head;
    uint8_t want[GD_STATE_INDEX_ARRAYS][GD_MMR_HASH_LEN];
    GD_TRY(gd_file_read_at(fd, head, head_len, 0, path));
    GD_TRY(gd_index_header(x, head, len, want));
    size_t chunk_bytes = (size_t)x->chunk_elems * 4, array_bytes = 4 * x->n;
    size_t window = chunk_bytes >= ((size_t)4 << 20) ? chunk_bytes
                                                    : ((size_t)4 << 20) / chunk_bytes * chunk_bytes;
    uint8_t *buf = malloc(window);
    gd_status s = buf ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for a window of a state");
    int built = 0;
    for (int i = 0; s == GD_OK && i < x->n_arrays; i++) {
        gd_mmr_init(&x->mmr[i]);
        built = i + 1;
        uint64_t base = x->header_len + (uint64_t)i * array_bytes;
        uint32_t leaf = 0;
        for (size_t at = 0; s == GD_OK && at < array_bytes; at += window) {
            size_t take = array_bytes - at < window ? array_bytes - at : window;
            s = gd_file_read_at(fd, buf, take, base + at, path);
            for (size_t c = 0; s == GD_OK && c < take; c += chunk_bytes, leaf++) {
                uint8_t h[GD_MMR_HASH_LEN];
                gd_mmr_hash_leaf(h, leaf, buf + c, take - c < chunk_bytes ? take - c : chunk_bytes);
                s = gd_mmr_append(&x->mmr[i], h);
            }
        }
        uint8_t got[GD_MMR_HASH_LEN];
        if (s == GD_OK)
            s = gd_mmr_root(&x->mmr[i], got);
        if (s == GD_OK && memcmp(got, want[i], GD_MMR_HASH_LEN) != 0)
            s = gd_fail(GD_ERR_IO, "array %d does not hash to its descriptor's root", i);
    }
    free(buf);
    if (s != GD_OK) {
        for (int i = 0; i < built; i++)
            gd_mmr_free(&x->mmr[i]);
        x->n_arrays = 0;
    }
    return s;
}

gd_status gd_state_index_load(gd_state_index *x, const char *path, bool global, size_t n,
                              uint32_t chunk_elems) {
    struct stat st;
    /* The file indexed last, unchanged: a stat, not an open, per request. */
    if (x->loaded && x->global == global && x->n == n && x->chunk_elems == chunk_elems &&
        strcmp(x->path, path) == 0 && stat(path, &st) == 0 && gd_same_file(&x->st, &st))
        return GD_OK;
    int fd = -1;
    GD_TRY(gd_file_open_regular(path, 0, &fd, &st));
    gd_state_index_free(x);
    if (strlen(path) >= sizeof x->path) {
        close(fd);
        return gd_fail(GD_ERR_LIMIT, "state path %s is too long", path);
    }
    x->global = global;
    x->n = n;
    x->chunk_elems = chunk_elems;
    size_t len = (size_t)st.st_size;
    gd_status s = gd_index_build(x, fd, len, path);
    if (s != GD_OK && s != GD_ERR_NOMEM)
        s = gd_fail_context(GD_ERR_IO, "the stored state %s", path);
    if (s != GD_OK) {
        close(fd);
        gd_state_index_init(x);
        return s;
    }
    snprintf(x->path, sizeof x->path, "%s", path);
    x->fd = fd; /* chunks are read from the file as it was indexed */
    x->st = st;
    x->loaded = true;
    return GD_OK;
}

void gd_state_index_cache_init(gd_state_index_cache *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < GD_STATE_INDEX_CACHE_SLOTS; i++)
        gd_state_index_init(&c->slot[i]);
}

void gd_state_index_cache_free(gd_state_index_cache *c) {
    for (int i = 0; i < GD_STATE_INDEX_CACHE_SLOTS; i++)
        gd_state_index_free(&c->slot[i]);
    gd_state_index_cache_init(c);
}

gd_status gd_state_index_cache_get(gd_state_index_cache *c, gd_state_index **out, const char *path,
                                   bool global, size_t n, uint32_t chunk_elems) {
    *out = NULL;
    int pick = 0;
    for (int i = 0; i < GD_STATE_INDEX_CACHE_SLOTS; i++) {
        if (c->slot[i].loaded && strcmp(c->slot[i].path, path) == 0) {
            pick = i;
            break;
        }
        if (c->last_use[i] < c->last_use[pick])
            pick = i;
    }
    c->last_use[pick] = ++c->uses;
    GD_TRY(gd_state_index_load(&c->slot[pick], path, global, n, chunk_elems));
    *out = &c->slot[pick];
    return GD_OK;
}

gd_status gd_state_index_cache_chunk(gd_state_index_cache *c, const char *path, bool global,
                                     size_t n, uint32_t chunk_elems, uint32_t chunk,
                                     gd_buf *body, gd_buf *proof) {
    gd_state_index *x = NULL;
    GD_TRY(gd_state_index_cache_get(c, &x, path, global, n, chunk_elems));
    return gd_state_index_chunk(x, chunk, body, proof);
}

gd_status gd_state_chunk_proof_next(gd_mmr_proof *out, const uint8_t **p, size_t *left) {
    if (*left < 4)
        return gd_fail(GD_ERR_PARSE, "a state chunk proof is short");
    uint32_t len = gd_get_le32(*p);
    if (len > *left - 4)
        return gd_fail(GD_ERR_PARSE, "a state chunk proof is short");
    GD_TRY(gd_mmr_proof_decode(out, *p + 4, len));
    *p += 4 + len;
    *left -= 4 + len;
    return GD_OK;
}

gd_status gd_state_index_chunk(const gd_state_index *x, uint32_t chunk, gd_buf *body,
                               gd_buf *proof) {
    size_t lo = 0, count = 0;
    if (!x->loaded || !gd_values_chunk_range(x->n, x->chunk_elems, chunk, &lo, &count))
        return gd_fail(GD_ERR_NOT_FOUND, "no chunk %u", chunk);
    if (x->global)
        GD_TRY(gd_buf_append(proof, x->header, x->header_len));
    gd_status s = GD_OK;
    for (int i = 0; s == GD_OK && i < x->n_arrays; i++) {
        gd_mmr_proof p;
        gd_buf w = {0};
        s = gd_mmr_prove(&x->mmr[i], &p, chunk);
        if (s == GD_OK)
            s = gd_mmr_proof_encode(&p, &w);
        uint8_t len[4];
        gd_put_le32(len, (uint32_t)w.len);
        if (s == GD_OK)
            s = gd_buf_append(proof, len, 4);
        if (s == GD_OK)
            s = gd_buf_append(proof, w.data, w.len);
        gd_buf_free(&w);
        size_t bytes = 4 * count;
        off_t at = (off_t)(x->header_len + (size_t)i * 4 * x->n + 4 * lo);
        if (s == GD_OK)
            s = gd_buf_reserve(body, bytes);
        if (s == GD_OK) {
            ssize_t got = pread(x->fd, body->data + body->len, bytes, at);
            if (got != (ssize_t)bytes)
                s = gd_fail(GD_ERR_IO, "reading %s: %s", x->path,
                            got < 0 ? strerror(errno) : "short read");
            else
                body->len += bytes;
        }
    }
    return s;
}
