/* Worker and global states, their descriptors and file form (see state.h).
 * Why it is built this way:
 * - A descriptor holds one root per array rather than one root over the
 *   concatenation, so the chunks of each array line up with the payload's
 *   chunks and one chunk of one array can be proved alone.
 * - Decoders check every size against the descriptor and the caller's
 *   expectation before allocating, and a parsed state is rehashed before it
 *   is returned: a state from a peer is either exactly what its descriptor
 *   says or refused. */
#include "trainer/state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/file.h"
#include "common/hash.h"
#include "common/mem.h"
#include "proofs/state_hash.h"

/* --- arrays -------------------------------------------------------------------------- */

static size_t gd_chunk_bytes(uint32_t chunk_elems) { return (size_t)chunk_elems * sizeof(float); }


bool gd_values_chunk_range(size_t n, uint32_t chunk_elems, uint32_t chunk, size_t *lo,
                           size_t *count) {
    if (chunk_elems == 0 || n == 0 || chunk >= gd_values_chunks(n, chunk_elems))
        return false;
    size_t first = (size_t)chunk * chunk_elems;
    *lo = first;
    *count = n - first < chunk_elems ? n - first : chunk_elems;
    return true;
}

static gd_status gd_values_check(size_t n, uint32_t chunk_elems) {
    if (chunk_elems < 1 || chunk_elems > GD_STATE_CHUNK_ELEMS_MAX)
        return gd_fail(GD_ERR_INVALID, "state chunk size %u must be 1..2^28", chunk_elems);
    if (n < 1 || n > GD_STATE_VALUES_MAX)
        return gd_fail(GD_ERR_INVALID, "state of %zu values (must be 1..2^40)", n);
    return GD_OK;
}

gd_status gd_values_root(gd_pool *pool, const float *values, size_t n, uint32_t chunk_elems,
                         uint8_t root[GD_MMR_HASH_LEN]) {
    GD_TRY(gd_values_check(n, chunk_elems));
    gd_bytes_part part = {values, n * sizeof(float)};
    return gd_state_hash(pool, &part, 1, gd_chunk_bytes(chunk_elems), root, NULL);
}

size_t gd_values_window(uint32_t chunk_elems) {
    const size_t about = (size_t)1 << 20;
    if (chunk_elems == 0 || chunk_elems > (about << 2))
        return about;
    return chunk_elems >= about ? chunk_elems : about - about % chunk_elems;
}

size_t gd_values_window_of(uint32_t chunk_elems, size_t n) {
    size_t window = gd_values_window(chunk_elems);
    return window < n ? window : n ? n : 1;
}

bool gd_values_chunk_has_leaf(const float *values, size_t count, uint32_t chunk,
                              const uint8_t leaf[GD_MMR_HASH_LEN]) {
    uint8_t got[GD_MMR_HASH_LEN];
    gd_mmr_hash_leaf(got, chunk, values, count * sizeof(float));
    return memcmp(got, leaf, sizeof got) == 0;
}

size_t gd_values_window_whole(uint32_t chunk_elems, size_t n) {
    size_t window = gd_values_window_of(chunk_elems, n);
    if (window < n && chunk_elems != 0 && window % chunk_elems != 0)
        window = chunk_elems < n ? chunk_elems : n;
    return window;
}

gd_status gd_values_stream_begin(gd_values_stream *s, gd_pool *pool, uint64_t n,
                                 uint32_t chunk_elems) {
    memset(s, 0, sizeof *s);
    s->pool = pool;
    gd_mmr_peaks_init(&s->peaks);
    GD_TRY(gd_values_check((size_t)n, chunk_elems));
    s->n = n;
    s->chunk_elems = chunk_elems;
    return GD_OK;
}

gd_status gd_values_stream_add(gd_values_stream *s, const float *values, size_t count) {
    if (count > s->n - s->fed)
        return gd_fail(GD_ERR_INVALID, "%zu values past the %llu of the array", count,
                       (unsigned long long)(s->n - s->fed));
    while (count > 0) {
        /* Whole chunks (or all that is left of the array) at a chunk's
         * start: their leaves on the pool. */
        size_t whole = count == s->n - s->fed ? count : count - count % s->chunk_elems;
        if (s->in_chunk == 0 && whole > 0) {
            GD_TRY(gd_state_peaks_append(s->pool, &s->peaks, values, whole * sizeof(float),
                                         gd_chunk_bytes(s->chunk_elems), s->leaves));
            s->chunk += (uint32_t)((whole + s->chunk_elems - 1) / s->chunk_elems);
            s->fed += whole;
            values += whole;
            count -= whole;
            continue;
        }
        if (s->leaf == NULL)
            GD_TRY(gd_mmr_leaf_begin(&s->leaf, s->chunk));
        size_t lo = 0, chunk_count = 0;
        (void)gd_values_chunk_range((size_t)s->n, s->chunk_elems, s->chunk, &lo, &chunk_count);
        size_t take = chunk_count - s->in_chunk < count ? chunk_count - s->in_chunk : count;
        /* Little-endian floats: the in-memory bytes on every supported host. */
        gd_sha256_update(s->leaf, values, take * sizeof(float));
        values += take;
        count -= take;
        s->fed += take;
        s->in_chunk += take;
        if (s->in_chunk == chunk_count) {
            uint8_t leaf[GD_MMR_HASH_LEN];
            gd_sha256_finish(s->leaf, leaf);
            if (s->leaves != NULL)
                memcpy(s->leaves + (size_t)s->chunk * GD_MMR_HASH_LEN, leaf, sizeof leaf);
            s->leaf = NULL;
            s->in_chunk = 0;
            s->chunk++;
            GD_TRY(gd_mmr_peaks_append(&s->peaks, leaf));
        }
    }
    return GD_OK;
}

gd_status gd_values_stream_root(const gd_values_stream *s, uint8_t root[GD_MMR_HASH_LEN]) {
    if (s->n == 0 || s->fed != s->n)
        return gd_fail(GD_ERR_INVALID, "the array has %llu of its %llu values",
                       (unsigned long long)s->fed, (unsigned long long)s->n);
    return gd_mmr_peaks_root(&s->peaks, root);
}

gd_status gd_values_stream_keep_leaves(gd_values_stream *s) {
    if (s->fed != 0 || s->leaves != NULL)
        return gd_fail(GD_ERR_INVALID, "leaves are kept from an array's first value");
    size_t chunks = (size_t)((s->n + s->chunk_elems - 1) / s->chunk_elems);
    s->leaves = malloc(chunks * GD_MMR_HASH_LEN);
    if (s->leaves == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu chunk leaves", chunks);
    return GD_OK;
}

uint8_t *gd_values_stream_take_leaves(gd_values_stream *s) {
    if (s->n == 0 || s->fed != s->n)
        return NULL;
    uint8_t *leaves = s->leaves;
    s->leaves = NULL;
    return leaves;
}

void gd_values_stream_end(gd_values_stream *s) {
    free(s->leaves);
    if (s->leaf != NULL) {
        uint8_t unused[GD_MMR_HASH_LEN];
        gd_sha256_finish(s->leaf, unused); /* frees the context */
    }
    memset(s, 0, sizeof *s);
}

gd_status gd_zero_values_root(gd_pool *pool, size_t n, uint32_t chunk_elems,
                              uint8_t root[GD_MMR_HASH_LEN]) {
    GD_TRY(gd_values_check(n, chunk_elems));
    /* One zero chunk, listed once per chunk: no n-value allocation. */
    size_t chunk = (size_t)chunk_elems < n ? chunk_elems : n;
    uint32_t chunks = gd_values_chunks(n, chunk_elems);
    float *zeros = calloc(chunk, sizeof(float));
    gd_bytes_part *parts = calloc(chunks, sizeof *parts);
    gd_status s = zeros && parts ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; s == GD_OK && i < chunks; i++) {
        size_t lo = 0, count = 0;
        (void)gd_values_chunk_range(n, chunk_elems, i, &lo, &count);
        parts[i] = (gd_bytes_part){zeros, count * sizeof(float)};
    }
    if (s == GD_OK)
        s = gd_state_hash(pool, parts, chunks, gd_chunk_bytes(chunk_elems), root, NULL);
    free(parts);
    free(zeros);
    return s;
}

gd_status gd_values_prove(gd_pool *pool, const float *values, size_t n, uint32_t chunk_elems,
                          uint32_t chunk, gd_mmr_proof *proof) {
    GD_TRY(gd_values_check(n, chunk_elems));
    gd_bytes_part part = {values, n * sizeof(float)};
    return gd_state_prove(pool, &part, 1, gd_chunk_bytes(chunk_elems), chunk, proof);
}

bool gd_values_verify_chunk(const uint8_t root[GD_MMR_HASH_LEN], size_t n, uint32_t chunk_elems,
                            uint32_t chunk, const float *values, size_t count,
                            const gd_mmr_proof *proof) {
    if (gd_values_check(n, chunk_elems) != GD_OK || count > SIZE_MAX / sizeof(float))
        return false;
    return gd_state_verify_chunk(root, (uint64_t)n * sizeof(float), gd_chunk_bytes(chunk_elems),
                                 chunk, values, count * sizeof(float), proof);
}

/* --- worker states -------------------------------------------------------------------- */

gd_status gd_worker_state_init(gd_worker_state *w, uint32_t rank, size_t n) {
    memset(w, 0, sizeof *w);
    w->rank = rank;
    w->n = n;
    snprintf(w->address, sizeof w->address, "worker-%05u", rank);
    w->params = gd_calloc_large(n, sizeof(float));
    w->exp_avg = gd_calloc_large(n, sizeof(float));
    w->exp_avg_sq = gd_calloc_large(n, sizeof(float));
    w->residual = gd_calloc_large(n, sizeof(float));
    if (!w->params || !w->exp_avg || !w->exp_avg_sq || !w->residual) {
        gd_worker_state_free(w);
        return gd_fail(GD_ERR_NOMEM, "out of memory for a worker state of %zu parameters", n);
    }
    return GD_OK;
}

gd_status gd_worker_state_copy(gd_worker_state *dst, const gd_worker_state *src) {
    GD_TRY(gd_worker_state_init(dst, src->rank, src->n));
    size_t bytes = src->n * sizeof(float);
    memcpy(dst->address, src->address, sizeof dst->address);
    memcpy(dst->params, src->params, bytes);
    memcpy(dst->exp_avg, src->exp_avg, bytes);
    memcpy(dst->exp_avg_sq, src->exp_avg_sq, bytes);
    if (src->residual != NULL) {
        memcpy(dst->residual, src->residual, bytes);
    } else {
        free(dst->residual);
        dst->residual = NULL;
    }
    dst->step = src->step;
    return GD_OK;
}

gd_status gd_worker_state_put_window(gd_worker_state *w, const float *params,
                                     const float *exp_avg, const float *exp_avg_sq,
                                     const float *residual, size_t lo, size_t count) {
    if (lo > w->n || count > w->n - lo || w->residual == NULL)
        return gd_fail(GD_ERR_INVALID, "values [%zu, +%zu) of a state of %zu", lo, count, w->n);
    size_t bytes = count * sizeof(float);
    memcpy(w->params + lo, params, bytes);
    memcpy(w->exp_avg + lo, exp_avg, bytes);
    memcpy(w->exp_avg_sq + lo, exp_avg_sq, bytes);
    memcpy(w->residual + lo, residual, bytes);
    return GD_OK;
}

void gd_worker_state_free(gd_worker_state *w) {
    if (!w->borrowed) {
        free(w->params);
        free(w->exp_avg);
        free(w->exp_avg_sq);
        free(w->residual);
    }
    w->borrowed = false;
    w->params = w->exp_avg = w->exp_avg_sq = w->residual = NULL;
}

gd_status gd_worker_state_describe(gd_pool *pool, const gd_state_tag *tag, gd_worker_desc *out,
                                   uint64_t round, gd_state_stage stage,
                                   const gd_worker_state *w) {
    return gd_worker_state_describe_with(pool, tag, out, round, stage, w, NULL);
}

gd_status gd_worker_state_describe_with(gd_pool *pool, const gd_state_tag *tag, gd_worker_desc *out,
                                        uint64_t round, gd_state_stage stage,
                                        const gd_worker_state *w,
                                        const uint8_t residual_root[GD_MMR_HASH_LEN]) {
    memset(out, 0, sizeof *out);
    if (residual_root == NULL && w->residual == NULL)
        return gd_fail(GD_ERR_INVALID, "a worker state without its residual needs the "
                                       "residual's root");
    if (strnlen(w->address, sizeof w->address) > GD_STATE_ADDRESS_MAX || w->address[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "worker address must be 1..%d bytes",
                       GD_STATE_ADDRESS_MAX);
    out->tag = *tag;
    out->round = round;
    snprintf(out->address, sizeof out->address, "%s", w->address);
    out->rank = w->rank;
    out->stage = stage;
    out->step = w->step;
    out->n = w->n;
    GD_TRY(gd_values_root(pool, w->params, w->n, tag->chunk_elems, out->params_root));
    GD_TRY(gd_values_root(pool, w->exp_avg, w->n, tag->chunk_elems, out->exp_avg_root));
    GD_TRY(gd_values_root(pool, w->exp_avg_sq, w->n, tag->chunk_elems, out->exp_avg_sq_root));
    if (residual_root != NULL) {
        memcpy(out->residual_root, residual_root, GD_MMR_HASH_LEN);
        return GD_OK;
    }
    return gd_values_root(pool, w->residual, w->n, tag->chunk_elems, out->residual_root);
}

gd_status gd_worker_state_hash(gd_pool *pool, const gd_state_tag *tag, uint8_t out[GD_MMR_HASH_LEN],
                               uint64_t round, gd_state_stage stage,
                               const gd_worker_state *w) {
    gd_worker_desc d;
    GD_TRY(gd_worker_state_describe(pool, tag, &d, round, stage, w));
    gd_worker_desc_hash(&d, out);
    return GD_OK;
}

gd_status gd_worker_state_file_parts(gd_bytes_part parts[GD_WORKER_STATE_FILE_PARTS],
                                     uint8_t header[GD_WORKER_DESC_BYTES],
                                     const gd_worker_desc *desc, const gd_worker_state *w) {
    if (w->residual == NULL)
        return gd_fail(GD_ERR_INVALID, "a worker state file holds the residual");
    if (desc->n != w->n)
        return gd_fail(GD_ERR_INVALID, "a descriptor of %llu values for a state of %zu",
                       (unsigned long long)desc->n, w->n);
    gd_worker_desc_encode(desc, header);
    size_t bytes = w->n * sizeof(float);
    parts[0] = (gd_bytes_part){header, GD_WORKER_DESC_BYTES};
    const float *arrays[4] = {w->params, w->exp_avg, w->exp_avg_sq, w->residual};
    for (int i = 0; i < 4; i++)
        parts[i + 1] = (gd_bytes_part){arrays[i], bytes};
    return GD_OK;
}

gd_status gd_worker_state_serialize(gd_pool *pool, const gd_state_tag *tag, gd_buf *out,
                                    uint64_t round, gd_state_stage stage,
                                    const gd_worker_state *w) {
    if (w->residual == NULL)
        return gd_fail(GD_ERR_INVALID, "a worker state file holds the residual");
    gd_worker_desc d;
    GD_TRY(gd_worker_state_describe(pool, tag, &d, round, stage, w));
    uint8_t header[GD_WORKER_DESC_BYTES];
    gd_bytes_part parts[GD_WORKER_STATE_FILE_PARTS];
    GD_TRY(gd_worker_state_file_parts(parts, header, &d, w));
    size_t total = 0;
    for (int i = 0; i < GD_WORKER_STATE_FILE_PARTS; i++)
        total += parts[i].len;
    uint8_t *buf = malloc(total);
    if (buf == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a worker state file");
    gd_mem_prefer_huge(buf, total);
    uint8_t *p = buf;
    for (int i = 0; i < GD_WORKER_STATE_FILE_PARTS; p += parts[i].len, i++)
        memcpy(p, parts[i].data, parts[i].len);
    out->data = buf;
    out->len = total;
    return GD_OK;
}

/* The first tag field that differs, or NULL. */
static const char *gd_tag_mismatch(const gd_state_tag *got, const gd_state_tag *want) {
    if (got->run != want->run)
        return "run";
    if (memcmp(got->spec_digest, want->spec_digest, 32) != 0)
        return "run spec digest";
    if (memcmp(got->layout_digest, want->layout_digest, 32) != 0)
        return "layout digest";
    if (got->chunk_elems != want->chunk_elems)
        return "chunk size";
    return NULL;
}

/* The checks of a peer's state file that need only its descriptor (the
 * file's first GD_WORKER_DESC_BYTES bytes, `header`) and its length:
 * *arrays is 4 with the residual, 3 without. */
static gd_status gd_worker_file_check(gd_worker_desc *desc, int *arrays, const uint8_t *header,
                                      uint64_t len, const gd_state_tag *expect, size_t expect_n) {
    if (header == NULL || len < GD_WORKER_DESC_BYTES)
        return gd_fail(GD_ERR_PARSE, "worker state file of %llu bytes is shorter than its "
                                     "%d-byte descriptor",
                       header ? (unsigned long long)len : 0ULL, GD_WORKER_DESC_BYTES);
    GD_TRY(gd_worker_desc_decode(desc, header, GD_WORKER_DESC_BYTES));
    const char *field = gd_tag_mismatch(&desc->tag, expect);
    if (field != NULL)
        return gd_fail(GD_ERR_INVALID, "worker state of '%s': its %s is not the run's",
                       desc->address, field);
    if (desc->n != expect_n)
        return gd_fail(GD_ERR_INVALID, "worker state of '%s' has %llu values; the model has %zu",
                       desc->address, (unsigned long long)desc->n, expect_n);
    /* desc->n <= 2^40, so 16 n cannot overflow. Without the residual (its
     * root is in the descriptor) the file is 4 n bytes shorter. */
    uint64_t full = GD_WORKER_DESC_BYTES + 16 * desc->n, partial = full - 4 * desc->n;
    if (len != full && len != partial)
        return gd_fail(GD_ERR_PARSE, "worker state file is %llu bytes; %llu values need %llu "
                                     "(or %llu without the residual)",
                       (unsigned long long)len, (unsigned long long)desc->n,
                       (unsigned long long)full, (unsigned long long)partial);
    *arrays = len == full ? 4 : 3;
    return GD_OK;
}

/* The checks of a peer's state file, its arrays either copied (copy) or
 * pointed into bytes. */
static gd_status gd_worker_state_read(gd_pool *pool, gd_worker_state *w, gd_worker_desc *desc,
                                      const uint8_t *bytes, size_t len,
                                      const gd_state_tag *expect, size_t expect_n, bool copy) {
    memset(w, 0, sizeof *w);
    int n_arrays = 0;
    GD_TRY(gd_worker_file_check(desc, &n_arrays, bytes, len, expect, expect_n));
    size_t n_bytes = (size_t)desc->n * sizeof(float);
    const uint8_t *p = bytes + GD_WORKER_DESC_BYTES;
    if (copy) {
        GD_TRY(gd_worker_state_init(w, desc->rank, (size_t)desc->n));
        if (n_arrays == 3) {
            free(w->residual);
            w->residual = NULL;
        }
        float *arrays[4] = {w->params, w->exp_avg, w->exp_avg_sq, w->residual};
        for (int i = 0; i < n_arrays; i++)
            memcpy(arrays[i], p + i * n_bytes, n_bytes);
    } else {
        /* The file's floats are little-endian, as this host's (gd_worker_state_serialize). */
        w->rank = desc->rank;
        w->n = (size_t)desc->n;
        w->borrowed = true;
        w->params = (float *)(uintptr_t)p;
        w->exp_avg = (float *)(uintptr_t)(p + n_bytes);
        w->exp_avg_sq = (float *)(uintptr_t)(p + 2 * n_bytes);
        w->residual = n_arrays == 4 ? (float *)(uintptr_t)(p + 3 * n_bytes) : NULL;
    }
    snprintf(w->address, sizeof w->address, "%s", desc->address);
    w->step = desc->step;
    gd_worker_desc again;
    gd_status s = gd_worker_state_describe_with(pool, &desc->tag, &again, desc->round, desc->stage,
                                                w,
                                                n_arrays == 3 ? desc->residual_root : NULL);
    if (s == GD_OK) {
        uint8_t a[GD_MMR_HASH_LEN], b[GD_MMR_HASH_LEN];
        gd_worker_desc_hash(desc, a);
        gd_worker_desc_hash(&again, b);
        if (memcmp(a, b, sizeof a) != 0)
            s = gd_fail(GD_ERR_INVALID, "worker state of '%s': its arrays do not hash to the "
                                        "roots its descriptor names",
                        desc->address);
    }
    if (s != GD_OK)
        gd_worker_state_free(w);
    return s;
}

gd_status gd_worker_state_parse(gd_pool *pool, gd_worker_state *w, gd_worker_desc *desc,
                                const uint8_t *bytes, size_t len, const gd_state_tag *expect,
                                size_t expect_n) {
    return gd_worker_state_read(pool, w, desc, bytes, len, expect, expect_n, true);
}

gd_status gd_worker_state_view(gd_pool *pool, gd_worker_state *w, gd_worker_desc *desc,
                               const uint8_t *bytes, size_t len, const gd_state_tag *expect,
                               size_t expect_n) {
    bool aligned = bytes != NULL &&
                   ((uintptr_t)(bytes + GD_WORKER_DESC_BYTES) % _Alignof(float)) == 0;
    return gd_worker_state_read(pool, w, desc, bytes, len, expect, expect_n, !aligned);
}

/* --- a state read a window at a time ------------------------------------------------------- */

static gd_status gd_arrays_read(const void *ctx, float *params, float *exp_avg, float *exp_avg_sq,
                                size_t lo, size_t count) {
    const gd_worker_state *w = ctx;
    if (lo > w->n || count > w->n - lo)
        return gd_fail(GD_ERR_INVALID, "values [%zu, +%zu) of a state of %zu", lo, count, w->n);
    size_t bytes = count * sizeof(float);
    if (params != NULL)
        memcpy(params, w->params + lo, bytes);
    if (exp_avg != NULL)
        memcpy(exp_avg, w->exp_avg + lo, bytes);
    if (exp_avg_sq != NULL)
        memcpy(exp_avg_sq, w->exp_avg_sq + lo, bytes);
    return GD_OK;
}

gd_worker_state_source gd_worker_state_source_of(const gd_worker_state *w) {
    if (w == NULL || w->params == NULL || w->exp_avg == NULL || w->exp_avg_sq == NULL)
        return (gd_worker_state_source){.address = ""};
    return (gd_worker_state_source){.address = w->address, .rank = w->rank, .step = w->step,
                                    .n = w->n, .read = gd_arrays_read, .ctx = w};
}

gd_status gd_state_file_view_open(gd_state_file_view *v, const uint8_t *bytes, size_t len,
                                  const gd_state_tag *expect, size_t expect_n) {
    memset(v, 0, sizeof *v);
    v->fd = -1;
    GD_TRY(gd_worker_file_check(&v->desc, &v->arrays, bytes, len, expect, expect_n));
    v->bytes = bytes;
    return GD_OK;
}

gd_status gd_state_file_view_open_file(gd_state_file_view *v, int fd, uint64_t len,
                                       const gd_state_tag *expect, size_t expect_n) {
    memset(v, 0, sizeof *v);
    v->fd = -1;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return gd_fail(GD_ERR_IO, "cannot stat a state file: %s", strerror(errno));
    if ((uint64_t)st.st_size != len)
        return gd_fail(GD_ERR_INVALID, "a state file of %llu bytes read as %llu",
                       (unsigned long long)st.st_size, (unsigned long long)len);
    uint8_t header[GD_WORKER_DESC_BYTES];
    if (len >= sizeof header)
        GD_TRY(gd_file_read_at(fd, header, sizeof header, 0, "a state file"));
    GD_TRY(gd_worker_file_check(&v->desc, &v->arrays, header, len, expect, expect_n));
    v->fd = fd;
    return GD_OK;
}

/* Values [lo, lo + count) of array a (0 params .. 3 residual) into out. */
static gd_status gd_state_file_array(const gd_state_file_view *v, float *out, int a, size_t lo,
                                     size_t count) {
    size_t n = (size_t)v->desc.n;
    if (lo > n || count > n - lo || a >= v->arrays)
        return gd_fail(GD_ERR_INVALID, "values [%zu, +%zu) of array %d of a state of %zu", lo,
                       count, a, n);
    uint64_t at = GD_WORKER_DESC_BYTES + ((uint64_t)a * n + lo) * sizeof(float);
    if (v->bytes != NULL) {
        memcpy(out, v->bytes + at, count * sizeof(float));
        return GD_OK;
    }
    return gd_file_read_at(v->fd, out, count * sizeof(float), at, "a state file");
}

static gd_status gd_state_file_read(const void *ctx, float *params, float *exp_avg,
                                    float *exp_avg_sq, size_t lo, size_t count) {
    const gd_state_file_view *v = ctx;
    float *into[3] = {params, exp_avg, exp_avg_sq};
    for (int a = 0; a < 3; a++)
        if (into[a] != NULL)
            GD_TRY(gd_state_file_array(v, into[a], a, lo, count));
    return GD_OK;
}

static gd_status gd_state_file_residual_read(const void *ctx, float *out, size_t lo,
                                             size_t count) {
    const gd_state_file_view *v = ctx;
    if (v->arrays != 4)
        return gd_fail(GD_ERR_INVALID, "a state file without its residual");
    return gd_state_file_array(v, out, 3, lo, count);
}

gd_values_reader gd_state_file_view_residual(const gd_state_file_view *v) {
    return (gd_values_reader){.read = gd_state_file_residual_read, .ctx = v};
}

static gd_status gd_memory_values_read(const void *ctx, float *out, size_t lo, size_t count) {
    if (ctx == NULL)
        memset(out, 0, count * sizeof(float));
    else
        memcpy(out, (const float *)ctx + lo, count * sizeof(float));
    return GD_OK;
}

gd_values_reader gd_values_reader_of(const float *values) {
    return (gd_values_reader){.read = gd_memory_values_read, .ctx = values};
}

gd_worker_state_source gd_state_file_view_source(const gd_state_file_view *v) {
    return (gd_worker_state_source){.address = v->desc.address, .rank = v->desc.rank,
                                    .step = v->desc.step, .n = (size_t)v->desc.n,
                                    .read = gd_state_file_read, .ctx = v};
}

/* --- the global state ---------------------------------------------------------------- */

gd_status gd_global_state_init(gd_global_state *g, size_t n) {
    memset(g, 0, sizeof *g);
    g->n = n;
    g->params = gd_calloc_large(n, sizeof(float));
    g->momentum = gd_calloc_large(n, sizeof(float));
    if (!g->params || !g->momentum) {
        gd_global_state_free(g);
        return gd_fail(GD_ERR_NOMEM, "out of memory for the global state");
    }
    return GD_OK;
}

gd_status gd_global_state_copy(gd_global_state *dst, const gd_global_state *src) {
    GD_TRY(gd_global_state_init(dst, src->n));
    /* From memory or src's file; a round's start has no momentum: the
     * copy's is zero. */
    gd_status s = gd_global_state_read(src, dst->params, dst->momentum, 0, src->n);
    if (s != GD_OK) {
        gd_global_state_free(dst);
        return s;
    }
    dst->round = src->round;
    return GD_OK;
}

void gd_global_state_free(gd_global_state *g) {
    free(g->params);
    free(g->momentum);
    gd_global_backing_free(g->file);
    g->params = g->momentum = NULL;
    g->file = NULL;
}

gd_status gd_global_state_describe(gd_pool *pool, gd_global_desc *out,
                                   const uint8_t layout_digest[32], uint32_t chunk_elems,
                                   const gd_global_state *g) {
    memset(out, 0, sizeof *out);
    memcpy(out->layout_digest, layout_digest, 32);
    out->round = g->round;
    out->n = g->n;
    out->chunk_elems = chunk_elems;
    /* An array in G's file has the root it was checked against when opened
     * (its chunks are checked again whenever read). */
    if (!gd_global_backing_root(g, false, out->params_root))
        GD_TRY(gd_values_root(pool, g->params, g->n, chunk_elems, out->params_root));
    if (gd_global_backing_root(g, true, out->momentum_root))
        return GD_OK;
    return gd_values_root(pool, g->momentum, g->n, chunk_elems, out->momentum_root);
}

gd_status gd_global_state_hash(gd_pool *pool, uint8_t out[GD_MMR_HASH_LEN],
                               const uint8_t layout_digest[32], uint32_t chunk_elems,
                               const gd_global_state *g) {
    gd_global_desc d;
    GD_TRY(gd_global_state_describe(pool, &d, layout_digest, chunk_elems, g));
    gd_global_desc_hash(&d, out);
    return GD_OK;
}
