/* The pseudo-gradient payload (see payload.h): header, chunked encoding
 * with error feedback, the MMR commitment, and the file form with its
 * strict reader. Why it is built this way:
 * - One pool task per chunk, with fixed boundaries: the canonical bytes,
 *   leaf hashes and zstd choice of a chunk depend only on that chunk, so
 *   the root does not depend on the thread count.
 * - The reader accepts exactly one layout for given stored chunks: chunk
 *   data follows the table in order, back to back, up to the end of the
 *   file. Nothing unhashed can hide in gaps or overlaps, and parse then
 *   serialize gives back the same bytes.
 * - Every size is checked against the file before anything is allocated:
 *   the table must fit the file, a raw length must not exceed the codec's
 *   bound for that chunk's value count, and a zstd frame must be able to
 *   expand to its claimed size at all. */
#include "trainer/payload.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/file.h"
#include "common/mem.h"

#define GD_PAYLOAD_MAGIC "GDPL"
#define GD_PAYLOAD_MAX_CHUNK_ELEMS ((uint32_t)1 << 28)
#define GD_PAYLOAD_FLAG_ZSTD 1u
/* Transport compression: level 1 is the fastest level that still entropy
 * codes literals (negative levels do not, and save nothing on quantized
 * gradients), and nearly all zstd finds in them is entropy coding; repeats
 * are rare, so higher levels barely help. A 4096-entry match table instead
 * of level 1's default makes int4 chunks compress ~15% faster for the same
 * size (a smaller table stays in L1/L2). */
#define GD_PAYLOAD_ZSTD_LEVEL 1
#define GD_PAYLOAD_ZSTD_HASH_LOG 12
/* A zstd block holds at most 128 KiB and takes at least 4 bytes (header
 * plus one RLE byte), so no frame expands more than 32768-fold: a claim of
 * more is a lie we can refuse before allocating. */
#define GD_PAYLOAD_ZSTD_MAX_RATIO 32768u
/* Files above this are refused before reading (2^40 bytes: far above any
 * model this trainer handles). */
#define GD_PAYLOAD_FILE_MAX ((size_t)1 << 40)

/* ---- header --------------------------------------------------------------- */

void gd_payload_header_encode(const gd_payload_header *h, uint8_t out[GD_PAYLOAD_HEADER_BYTES]) {
    memset(out, 0, GD_PAYLOAD_HEADER_BYTES);
    memcpy(out, GD_PAYLOAD_MAGIC, 4);
    gd_put_le32(out + 4, GD_PAYLOAD_VERSION);
    gd_put_le64(out + 8, h->run);
    gd_put_le64(out + 16, h->round);
    memcpy(out + 24, h->participant, strnlen(h->participant, GD_PAYLOAD_PARTICIPANT_MAX));
    gd_put_le64(out + 88, h->param_count);
    memcpy(out + 96, h->layout_digest, 32);
    memcpy(out + 128, h->spec_digest, 32);
    gd_put_le32(out + 160, (uint32_t)h->codec.kind);
    gd_put_le32(out + 164, h->codec.kind == GD_CODEC_TOPK ? h->codec.topk_ppm : 0);
    gd_put_le32(out + 168, h->chunk_elems);
    gd_put_le32(out + 172, h->chunk_count);
}

/* ceil(param_count / chunk_elems) without overflow (chunk_elems >= 1). */
static uint64_t gd_chunks_for(uint64_t param_count, uint32_t chunk_elems) {
    return param_count / chunk_elems + (param_count % chunk_elems != 0);
}

gd_status gd_payload_header_decode(gd_payload_header *h, const uint8_t *in, size_t len) {
    memset(h, 0, sizeof *h);
    if (in == NULL || len != GD_PAYLOAD_HEADER_BYTES)
        return gd_fail(GD_ERR_PARSE, "payload header is %zu bytes, want %d", in ? len : 0,
                       GD_PAYLOAD_HEADER_BYTES);
    if (memcmp(in, GD_PAYLOAD_MAGIC, 4) != 0)
        return gd_fail(GD_ERR_PARSE, "not a payload: the magic is not \"GDPL\"");
    uint32_t version = gd_get_le32(in + 4);
    if (version != GD_PAYLOAD_VERSION)
        return gd_fail(GD_ERR_PARSE, "payload version %u is not supported (want %d)",
                       (unsigned)version, GD_PAYLOAD_VERSION);
    /* Printable ASCII, then only NUL padding: one spelling per address. */
    const uint8_t *part = in + 24;
    size_t plen = 0;
    while (plen < GD_PAYLOAD_PARTICIPANT_MAX && part[plen] != 0) {
        if (part[plen] < 0x20 || part[plen] > 0x7e)
            return gd_fail(GD_ERR_PARSE, "payload participant byte %zu is not printable ASCII",
                           plen);
        plen++;
    }
    for (size_t i = plen; i < GD_PAYLOAD_PARTICIPANT_MAX; i++)
        if (part[i] != 0)
            return gd_fail(GD_ERR_PARSE, "payload participant has bytes after its NUL padding");
    uint32_t kind = gd_get_le32(in + 160), param = gd_get_le32(in + 164);
    if (kind > GD_CODEC_TOPK)
        return gd_fail(GD_ERR_PARSE, "payload codec kind %u is unknown", (unsigned)kind);
    if (kind == GD_CODEC_TOPK ? (param < 1 || param > GD_CODEC_PPM) : param != 0)
        return gd_fail(GD_ERR_PARSE, "payload codec parameter %u does not fit codec kind %u",
                       (unsigned)param, (unsigned)kind);
    uint64_t param_count = gd_get_le64(in + 88);
    uint32_t chunk_elems = gd_get_le32(in + 168), chunk_count = gd_get_le32(in + 172);
    if (param_count < 1)
        return gd_fail(GD_ERR_PARSE, "payload has no values");
    if (chunk_elems < 1 || chunk_elems > GD_PAYLOAD_MAX_CHUNK_ELEMS)
        return gd_fail(GD_ERR_PARSE, "payload chunk size %u is not 1..2^28", (unsigned)chunk_elems);
    uint64_t want = gd_chunks_for(param_count, chunk_elems);
    if (want != chunk_count)
        return gd_fail(GD_ERR_PARSE, "payload chunk count %u, but %llu values in chunks of %u "
                                     "make %llu",
                       (unsigned)chunk_count, (unsigned long long)param_count,
                       (unsigned)chunk_elems, (unsigned long long)want);
    /* The MMR holds the header leaf too. */
    if (chunk_count >= GD_MMR_MAX_LEAVES)
        return gd_fail(GD_ERR_PARSE, "payload of %u chunks exceeds the MMR's %u leaves",
                       (unsigned)chunk_count, (unsigned)GD_MMR_MAX_LEAVES);
    h->run = gd_get_le64(in + 8);
    h->round = gd_get_le64(in + 16);
    memcpy(h->participant, part, plen);
    h->participant[plen] = '\0';
    h->param_count = param_count;
    memcpy(h->layout_digest, in + 96, 32);
    memcpy(h->spec_digest, in + 128, 32);
    h->codec = (gd_codec){.kind = (gd_codec_kind)kind, .topk_ppm = param};
    h->chunk_elems = chunk_elems;
    h->chunk_count = chunk_count;
    return GD_OK;
}

gd_status gd_payload_header_matches(const gd_payload_header *got,
                                    const gd_payload_header *want) {
    const char *field = NULL;
    if (got->run != want->run)
        field = "run";
    else if (got->round != want->round)
        field = "round";
    else if (strcmp(got->participant, want->participant) != 0)
        field = "participant";
    else if (got->param_count != want->param_count)
        field = "param count";
    else if (memcmp(got->layout_digest, want->layout_digest, 32) != 0)
        field = "layout digest";
    else if (memcmp(got->spec_digest, want->spec_digest, 32) != 0)
        field = "run spec digest";
    else if (got->codec.kind != want->codec.kind || got->codec.topk_ppm != want->codec.topk_ppm)
        field = "codec";
    else if (got->chunk_elems != want->chunk_elems)
        field = "chunk size";
    if (field == NULL)
        return GD_OK;
    return gd_fail(GD_ERR_INVALID, "payload of '%s': its %s is not the one expected",
                   got->participant, field);
}

/* Values in chunk i (the last may be short). */
static size_t gd_chunk_values(const gd_payload_header *h, size_t i) {
    uint64_t off = (uint64_t)i * h->chunk_elems;
    uint64_t left = h->param_count - off;
    return (size_t)(left < h->chunk_elems ? left : h->chunk_elems);
}

/* ---- parallel tasks and their errors -------------------------------------- */

/* The failure of the lowest-numbered chunk, with its detail copied out of
 * the worker thread (gd_fail's detail is thread-local): which chunk is
 * reported does not depend on scheduling. */
typedef struct gd_task_error {
    pthread_mutex_t mu;
    size_t index;
    gd_status status;
    char detail[256];
} gd_task_error;

static void gd_task_error_init(gd_task_error *e) {
    pthread_mutex_init(&e->mu, NULL);
    e->index = SIZE_MAX;
    e->status = GD_OK;
    e->detail[0] = '\0';
}

static void gd_task_error_record(gd_task_error *e, size_t index, gd_status status) {
    pthread_mutex_lock(&e->mu);
    if (index < e->index) {
        e->index = index;
        e->status = status;
        snprintf(e->detail, sizeof e->detail, "%s", gd_error_detail());
    }
    pthread_mutex_unlock(&e->mu);
}

/* Re-raises the recorded failure on the caller's thread. */
static gd_status gd_task_error_finish(gd_task_error *e, const char *what) {
    pthread_mutex_destroy(&e->mu);
    if (e->status == GD_OK)
        return GD_OK;
    return gd_fail(e->status, "%schunk %zu: %s", what, e->index, e->detail);
}

/* Scratch reused across the chunks of one call: one slot per pool thread,
 * taken by a task for its duration, so a call sets up its 8 bytes per value
 * of float scratch, zstd contexts (about 1 MiB each, with tables to reset)
 * and frame buffer once per thread rather than once per chunk, whatever the
 * allocator does with large blocks. Which slot a task gets never affects
 * its result. */
typedef struct gd_slot {
    float *x; /* values + residual, then the decoded values */
    size_t x_cap;
    uint8_t *frame;
    size_t frame_cap;
    uint8_t *src; /* a chunk's stored bytes read from a payload file */
    size_t src_cap;
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    bool busy;
} gd_slot;

typedef struct gd_slots {
    pthread_mutex_t mu;
    gd_slot *slot;
    size_t n;
} gd_slots;

static gd_status gd_slots_init(gd_slots *s, gd_pool *pool) {
    /* Tasks run on at most the pool's threads (the caller among them). */
    s->n = pool ? (size_t)gd_pool_threads(pool) : 1;
    s->slot = calloc(s->n, sizeof *s->slot);
    if (s->slot == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    return GD_OK;
}

static void gd_slot_release(gd_slot *t) {
    free(t->x);
    free(t->frame);
    free(t->src);
    ZSTD_freeCCtx(t->cctx);
    ZSTD_freeDCtx(t->dctx);
    memset(t, 0, sizeof *t);
}

static void gd_slots_free(gd_slots *s) {
    for (size_t i = 0; i < s->n; i++)
        gd_slot_release(&s->slot[i]);
    free(s->slot);
    pthread_mutex_destroy(&s->mu);
}

/* A free slot, or NULL if (against the pool's contract) all are taken:
 * the caller then uses a temporary one. */
static gd_slot *gd_slot_take(gd_slots *s) {
    gd_slot *got = NULL;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n && got == NULL; i++)
        if (!s->slot[i].busy)
            got = &s->slot[i];
    if (got != NULL)
        got->busy = true;
    pthread_mutex_unlock(&s->mu);
    return got;
}

static void gd_slot_give(gd_slots *s, gd_slot *t) {
    pthread_mutex_lock(&s->mu);
    t->busy = false;
    pthread_mutex_unlock(&s->mu);
}

static gd_status gd_slot_floats(gd_slot *t, size_t n) {
    if (t->x_cap >= n)
        return GD_OK;
    free(t->x);
    t->x = malloc(n * sizeof(float));
    t->x_cap = t->x ? n : 0;
    return t->x ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for %zu values", n);
}

/* The slot's byte buffer of at least cap bytes. */
static gd_status gd_slot_buffer(gd_slot *t, size_t cap) {
    if (t->frame_cap >= cap)
        return GD_OK;
    free(t->frame);
    t->frame = malloc(cap);
    t->frame_cap = t->frame ? cap : 0;
    return t->frame ? GD_OK
                    : gd_fail(GD_ERR_NOMEM, "out of memory for a zstd frame of %zu bytes", cap);
}

/* The buffer as a zstd frame's room, with the compression context. */
static gd_status gd_slot_frame(gd_slot *t, size_t cap) {
    if (t->cctx == NULL) {
        t->cctx = ZSTD_createCCtx();
        if (t->cctx == NULL ||
            ZSTD_isError(ZSTD_CCtx_setParameter(t->cctx, ZSTD_c_compressionLevel,
                                                GD_PAYLOAD_ZSTD_LEVEL)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(t->cctx, ZSTD_c_hashLog,
                                                GD_PAYLOAD_ZSTD_HASH_LOG)))
            return gd_fail(GD_ERR_NOMEM, "cannot set up a zstd context");
    }
    return gd_slot_buffer(t, cap);
}

/* The chunk's bytes let go; its sizes and flag stay. */
static void gd_chunk_drop_bytes(gd_payload_chunk *c) {
    if (c->stored != c->raw)
        free(c->stored);
    free(c->raw);
    c->raw = c->stored = NULL;
}

static void gd_chunk_free(gd_payload_chunk *c) {
    gd_chunk_drop_bytes(c);
    memset(c, 0, sizeof *c);
}

void gd_payload_free(gd_payload *p) {
    if (p == NULL)
        return;
    if (p->chunks != NULL)
        for (uint32_t i = 0; i < p->header.chunk_count; i++)
            gd_chunk_free(&p->chunks[i]);
    free(p->chunks);
    gd_mmr_free(&p->mmr);
    memset(p, 0, sizeof *p);
    gd_mmr_init(&p->mmr);
}

/* Appends the header leaf and the chunk leaves, in order. */
static gd_status gd_build_mmr(gd_payload *p, const uint8_t header[GD_PAYLOAD_HEADER_BYTES],
                              const uint8_t (*leaves)[GD_MMR_HASH_LEN]) {
    uint8_t leaf[GD_MMR_HASH_LEN];
    gd_mmr_hash_leaf(leaf, 0, header, GD_PAYLOAD_HEADER_BYTES);
    GD_TRY(gd_mmr_append(&p->mmr, leaf));
    for (uint32_t i = 0; i < p->header.chunk_count; i++)
        GD_TRY(gd_mmr_append(&p->mmr, leaves[i]));
    return GD_OK;
}

/* ---- encode -------------------------------------------------------------- */

typedef struct gd_encode_job {
    const gd_payload_header *h;
    const float *values; /* from chunk `first`'s first value */
    float *residual;
    uint32_t first;
    gd_payload_chunk *chunks;
    uint8_t (*leaves)[GD_MMR_HASH_LEN];
    gd_slots slots;
    gd_task_error err;
} gd_encode_job;

/* Two 32 KiB probes (the chunk's start and middle) decide whether a large
 * chunk is worth a full zstd attempt: chunks are homogeneous (one codec
 * over a run of neighbouring parameters), the probes' savings track the
 * whole chunk's to a few tenths of a percent, and int8 chunks typically
 * save 3-4%, short of 5%, so the full attempt would be a quarter of int8's
 * encode time wasted.
 * A probe saving under 4% skips the attempt; that only ever costs a few
 * percent of transfer, never correctness. */
#define GD_PAYLOAD_ZSTD_PROBE ((size_t)32 << 10)
#define GD_PAYLOAD_ZSTD_PROBE_PERCENT 4

static bool gd_probe_saves(gd_slot *t, const uint8_t *src) {
    size_t n = ZSTD_compress2(t->cctx, t->frame, t->frame_cap, src, GD_PAYLOAD_ZSTD_PROBE);
    return !ZSTD_isError(n) &&
           n * 100 <= GD_PAYLOAD_ZSTD_PROBE * (100 - GD_PAYLOAD_ZSTD_PROBE_PERCENT);
}

/* Keeps a zstd frame of the chunk as its stored form if that saves >= 5%. */
static gd_status gd_try_zstd(gd_payload_chunk *c, gd_slot *t) {
    GD_TRY(gd_slot_frame(t, ZSTD_compressBound(c->raw_len)));
    bool worth = c->raw_len < 8 * GD_PAYLOAD_ZSTD_PROBE || gd_probe_saves(t, c->raw) ||
                 gd_probe_saves(t, c->raw + c->raw_len / 2);
    if (!worth)
        return GD_OK;
    size_t n = ZSTD_compress2(t->cctx, t->frame, t->frame_cap, c->raw, c->raw_len);
    if (ZSTD_isError(n) || n * 20 > c->raw_len * 19)
        return GD_OK; /* not worth it (or zstd refused): the chunk travels raw */
    uint8_t *stored = malloc(n);
    if (stored == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a zstd frame of %zu bytes", n);
    memcpy(stored, t->frame, n);
    c->stored = stored;
    c->stored_len = n;
    c->zstd = true;
    return GD_OK;
}

/* out = a + b and out = a - b, elementwise in float. Eight at a time with
 * restrict so that -O2 (whose vectorizer handles only such fixed-width
 * straight-line code) emits SIMD: the scalar loops took a third of topk's
 * encode time. The operations and their order per element are unchanged,
 * so the bits are too. */
static void gd_add(float *restrict out, const float *restrict a, const float *restrict b,
                   size_t n) {
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        out[j] = a[j] + b[j];
        out[j + 1] = a[j + 1] + b[j + 1];
        out[j + 2] = a[j + 2] + b[j + 2];
        out[j + 3] = a[j + 3] + b[j + 3];
        out[j + 4] = a[j + 4] + b[j + 4];
        out[j + 5] = a[j + 5] + b[j + 5];
        out[j + 6] = a[j + 6] + b[j + 6];
        out[j + 7] = a[j + 7] + b[j + 7];
    }
    for (; j < n; j++)
        out[j] = a[j] + b[j];
}

static void gd_sub(float *restrict out, const float *restrict a, const float *restrict b,
                   size_t n) {
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        out[j] = a[j] - b[j];
        out[j + 1] = a[j + 1] - b[j + 1];
        out[j + 2] = a[j + 2] - b[j + 2];
        out[j + 3] = a[j + 3] - b[j + 3];
        out[j + 4] = a[j + 4] - b[j + 4];
        out[j + 5] = a[j + 5] - b[j + 5];
        out[j + 6] = a[j + 6] - b[j + 6];
        out[j + 7] = a[j + 7] - b[j + 7];
    }
    for (; j < n; j++)
        out[j] = a[j] - b[j];
}

/* One chunk's canonical bytes from its values; with a residual (error
 * feedback) x = values + residual is coded and residual becomes x - decoded,
 * written only once the chunk encoded. scratch holds 2 n floats when
 * residual is set. */
static gd_status gd_encode_values(const gd_codec *codec, uint8_t *out, size_t cap,
                                  const float *values, float *residual, size_t n, float *scratch,
                                  size_t *written) {
    if (residual == NULL)
        return gd_codec_encode_chunk(codec, out, cap, values, n, written, NULL);
    float *x = scratch, *dec = scratch + n;
    gd_add(x, values, residual, n);
    GD_TRY(gd_codec_encode_chunk(codec, out, cap, x, n, written, dec));
    gd_sub(residual, x, dec, n);
    return GD_OK;
}

gd_status gd_payload_encode_values(const gd_codec *codec, uint8_t *out, size_t cap,
                                   const float *values, float *residual, size_t n,
                                   size_t *written) {
    if (n < 1 || n > GD_PAYLOAD_MAX_CHUNK_ELEMS)
        return gd_fail(GD_ERR_INVALID, "a payload chunk holds 1..2^28 values, not %zu", n);
    float *scratch = residual ? malloc(2 * n * sizeof(float)) : NULL;
    gd_mem_prefer_huge(scratch, 2 * n * sizeof(float));
    if (residual && scratch == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu values", n);
    gd_status s = gd_encode_values(codec, out, cap, values, residual, n, scratch, written);
    free(scratch);
    return s;
}

static gd_status gd_encode_one(gd_encode_job *job, size_t i, gd_slot *t) {
    const gd_payload_header *h = job->h;
    size_t n = gd_chunk_values(h, i);
    size_t off = (i - job->first) * (size_t)h->chunk_elems;
    gd_payload_chunk *c = &job->chunks[i];
    size_t bound = gd_codec_chunk_bound(&h->codec, n);
    c->raw = malloc(bound);
    if (c->raw == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %zu encoded bytes", bound);
    if (job->residual != NULL)
        GD_TRY(gd_slot_floats(t, 2 * n));
    GD_TRY(gd_encode_values(&h->codec, c->raw, bound, job->values + off,
                            job->residual ? job->residual + off : NULL, n, t->x, &c->raw_len));
    if (c->raw_len < bound) { /* topk: give back the unused tail */
        uint8_t *shrunk = realloc(c->raw, c->raw_len);
        if (shrunk != NULL)
            c->raw = shrunk;
    }
    gd_mmr_hash_leaf(job->leaves[i], (uint32_t)(i + 1), c->raw, c->raw_len);
    c->stored = c->raw;
    c->stored_len = c->raw_len;
    return gd_try_zstd(c, t);
}

static void gd_encode_task(void *ctx, size_t i) {
    gd_encode_job *job = ctx;
    i += job->first;
    gd_slot temp = {0}, *t = gd_slot_take(&job->slots);
    gd_status s = gd_encode_one(job, i, t ? t : &temp);
    if (t != NULL)
        gd_slot_give(&job->slots, t);
    gd_slot_release(&temp);
    if (s != GD_OK)
        gd_task_error_record(&job->err, i, s);
}

gd_status gd_payload_encoder_begin(gd_payload_encoder *e, gd_payload *out,
                                   const gd_payload_header *h) {
    memset(e, 0, sizeof *e);
    if (out == NULL)
        return gd_fail(GD_ERR_INVALID, "payload encode: no output");
    memset(out, 0, sizeof *out);
    gd_mmr_init(&out->mmr);
    if (h == NULL)
        return gd_fail(GD_ERR_INVALID, "payload encode: missing header");
    if (h->chunk_elems < 1 || h->chunk_elems > GD_PAYLOAD_MAX_CHUNK_ELEMS)
        return gd_fail(GD_ERR_INVALID, "payload chunk size %u must be 1..2^28",
                       (unsigned)h->chunk_elems);
    if (h->participant[GD_PAYLOAD_PARTICIPANT_MAX] != '\0')
        return gd_fail(GD_ERR_INVALID, "payload participant is longer than %d bytes",
                       GD_PAYLOAD_PARTICIPANT_MAX);
    if (h->codec.kind != GD_CODEC_TOPK && h->codec.topk_ppm != 0)
        return gd_fail(GD_ERR_INVALID, "payload codec: a topk fraction on a non-topk codec");
    gd_payload_header hdr = *h;
    uint64_t chunks = h->param_count ? gd_chunks_for(h->param_count, h->chunk_elems) : 0;
    hdr.chunk_count = chunks > UINT32_MAX ? UINT32_MAX : (uint32_t)chunks;
    /* The header must be one the strict reader accepts. */
    gd_payload_header_encode(&hdr, e->header_bytes);
    if (gd_payload_header_decode(&out->header, e->header_bytes, sizeof e->header_bytes) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "payload encode");
    uint32_t count = out->header.chunk_count;
    out->chunks = calloc(count, sizeof *out->chunks);
    e->leaves = malloc((size_t)count * GD_MMR_HASH_LEN);
    if (out->chunks == NULL || e->leaves == NULL) {
        gd_payload_encoder_abort(e);
        gd_payload_free(out);
        return gd_fail(GD_ERR_NOMEM, "out of memory for %u payload chunks", (unsigned)count);
    }
    e->out = out;
    return GD_OK;
}

static size_t gd_table_end(uint32_t chunk_count);
static void gd_write_prefix(const gd_payload *p, uint8_t *out);

gd_status gd_payload_encoder_to_file(gd_payload_encoder *e, gd_file_atomic *f) {
    if (e->out == NULL || e->next != 0 || e->file != NULL || f == NULL || f->size != 0)
        return gd_fail(GD_ERR_INVALID, "payload encode: a file is given before any value, once");
    /* The header and table's place: their bytes are known at the end. */
    size_t prefix = gd_table_end(e->out->header.chunk_count);
    uint8_t *zeros = calloc(1, prefix);
    if (zeros == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a payload's chunk table");
    gd_status s = gd_file_atomic_append(f, zeros, prefix);
    free(zeros);
    if (s == GD_OK)
        e->file = f;
    return s;
}

/* Chunks [first, end) appended to the encoder's file in order, their bytes
 * let go as each is written. */
static gd_status gd_encoder_spill(gd_payload_encoder *e, uint32_t first, uint32_t end) {
    for (uint32_t i = first; i < end; i++) {
        gd_payload_chunk *c = &e->out->chunks[i];
        GD_TRY(gd_file_atomic_append(e->file, c->stored, c->stored_len));
        gd_chunk_drop_bytes(c);
    }
    return GD_OK;
}

gd_status gd_payload_encoder_add(gd_payload_encoder *e, const float *values, float *residual,
                                 size_t lo, size_t count, gd_pool *pool) {
    const gd_payload_header *h = &e->out->header;
    uint64_t n = h->param_count;
    if (values == NULL || lo != e->next || count > n - lo ||
        (lo + count < n && count % h->chunk_elems != 0) || (count == 0 && lo < n))
        return gd_fail(GD_ERR_INVALID, "payload encode: values [%zu, +%zu) are not the next "
                                       "whole chunks (next %llu of %llu)",
                       lo, count, (unsigned long long)e->next, (unsigned long long)n);
    gd_encode_job job = {.h = h, .values = values, .residual = residual,
                         .first = (uint32_t)(lo / h->chunk_elems), .chunks = e->out->chunks,
                         .leaves = e->leaves};
    if (gd_slots_init(&job.slots, pool) != GD_OK)
        return gd_fail(GD_ERR_NOMEM, "out of memory for payload encoding");
    size_t chunks = count ? gd_chunks_for(count, h->chunk_elems) : 0;
    gd_task_error_init(&job.err);
    gd_pool_run(pool, chunks, gd_encode_task, &job);
    gd_slots_free(&job.slots);
    GD_TRY(gd_task_error_finish(&job.err, "payload encode: "));
    if (e->file != NULL)
        GD_TRY(gd_encoder_spill(e, job.first, job.first + (uint32_t)chunks));
    e->next = lo + count;
    return GD_OK;
}

gd_status gd_payload_encoder_end(gd_payload_encoder *e) {
    gd_payload *out = e->out;
    gd_status s = out != NULL && e->next == out->header.param_count
                      ? GD_OK
                      : gd_fail(GD_ERR_INVALID, "payload encode: %llu of the values given",
                                (unsigned long long)e->next);
    if (s == GD_OK)
        s = gd_build_mmr(out, e->header_bytes, (const uint8_t (*)[GD_MMR_HASH_LEN])e->leaves);
    if (s == GD_OK && e->file != NULL) {
        size_t prefix = gd_table_end(out->header.chunk_count);
        uint8_t *bytes = malloc(prefix);
        s = bytes ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for a payload's chunk table");
        if (s == GD_OK) {
            gd_write_prefix(out, bytes);
            s = gd_file_write_at(e->file->fd, bytes, prefix, 0, e->file->path);
        }
        free(bytes);
        out->in_file = true;
    }
    if (s != GD_OK && out != NULL)
        gd_payload_free(out);
    gd_payload_encoder_abort(e);
    return s;
}

void gd_payload_encoder_abort(gd_payload_encoder *e) {
    free(e->leaves);
    memset(e, 0, sizeof *e);
}

gd_status gd_payload_encode(gd_payload *out, const gd_payload_header *h, const float *values,
                            float *residual, gd_pool *pool) {
    if (values == NULL && out != NULL) {
        memset(out, 0, sizeof *out);
        return gd_fail(GD_ERR_INVALID, "payload encode: missing header or values");
    }
    gd_payload_encoder e;
    GD_TRY(gd_payload_encoder_begin(&e, out, h));
    gd_status s = gd_payload_encoder_add(&e, values, residual, 0, out->header.param_count, pool);
    if (s == GD_OK)
        return gd_payload_encoder_end(&e);
    gd_payload_encoder_abort(&e);
    gd_payload_free(out);
    return s;
}

/* ---- commitment and file form --------------------------------------------- */

gd_status gd_payload_root(const gd_payload *p, uint8_t root[GD_MMR_HASH_LEN],
                          uint32_t *leaf_count) {
    if (p == NULL || p->mmr.n_leaves == 0)
        return gd_fail(GD_ERR_INVALID, "payload root: empty payload");
    GD_TRY(gd_mmr_root(&p->mmr, root));
    if (leaf_count != NULL)
        *leaf_count = p->mmr.n_leaves;
    return GD_OK;
}

static size_t gd_table_end(uint32_t chunk_count) {
    return GD_PAYLOAD_HEADER_BYTES + (size_t)chunk_count * GD_PAYLOAD_TABLE_ENTRY_BYTES;
}

size_t gd_payload_wire_bytes(const gd_payload *p) {
    if (p == NULL || p->chunks == NULL)
        return 0;
    size_t total = gd_table_end(p->header.chunk_count);
    for (uint32_t i = 0; i < p->header.chunk_count; i++)
        total += p->chunks[i].stored_len;
    return total;
}

/* Header and chunk table, into out (gd_table_end bytes). */
static void gd_write_prefix(const gd_payload *p, uint8_t *out) {
    gd_payload_header_encode(&p->header, out);
    uint64_t off = gd_table_end(p->header.chunk_count);
    for (uint32_t i = 0; i < p->header.chunk_count; i++) {
        const gd_payload_chunk *c = &p->chunks[i];
        uint8_t *e = out + GD_PAYLOAD_HEADER_BYTES + (size_t)i * GD_PAYLOAD_TABLE_ENTRY_BYTES;
        gd_put_le64(e, off);
        gd_put_le32(e + 8, (uint32_t)c->stored_len);
        gd_put_le32(e + 12, (uint32_t)c->raw_len);
        gd_put_le32(e + 16, c->zstd ? GD_PAYLOAD_FLAG_ZSTD : 0);
        gd_put_le32(e + 20, 0);
        off += c->stored_len;
    }
}

static gd_status gd_check_encoded(const gd_payload *p) {
    if (p == NULL || p->chunks == NULL || p->mmr.n_leaves != p->header.chunk_count + 1)
        return gd_fail(GD_ERR_INVALID, "payload: nothing encoded or parsed");
    return GD_OK;
}

/* Encoded, with its chunks' bytes in memory. */
static gd_status gd_check_writable(const gd_payload *p) {
    GD_TRY(gd_check_encoded(p));
    if (p->in_file)
        return gd_fail(GD_ERR_INVALID, "payload: its chunks are in its file, not in memory");
    return GD_OK;
}

gd_status gd_payload_serialize(const gd_payload *p, gd_buf *out) {
    GD_TRY(gd_check_writable(p));
    size_t total = gd_payload_wire_bytes(p);
    GD_TRY(gd_buf_reserve(out, total));
    uint8_t *dst = out->data + out->len;
    gd_write_prefix(p, dst);
    size_t pos = gd_table_end(p->header.chunk_count);
    for (uint32_t i = 0; i < p->header.chunk_count; i++) {
        memcpy(dst + pos, p->chunks[i].stored, p->chunks[i].stored_len);
        pos += p->chunks[i].stored_len;
    }
    out->len += total;
    return GD_OK;
}

gd_status gd_payload_file_parts(const gd_payload *p, gd_payload_parts *out) {
    memset(out, 0, sizeof *out);
    GD_TRY(gd_check_writable(p));
    size_t prefix_len = gd_table_end(p->header.chunk_count);
    out->prefix = malloc(prefix_len);
    out->parts = calloc((size_t)p->header.chunk_count + 1, sizeof *out->parts);
    if (out->prefix == NULL || out->parts == NULL) {
        gd_payload_parts_free(out);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    gd_write_prefix(p, out->prefix);
    out->parts[0] = (gd_bytes_part){out->prefix, prefix_len};
    for (uint32_t i = 0; i < p->header.chunk_count; i++)
        out->parts[i + 1] = (gd_bytes_part){p->chunks[i].stored, p->chunks[i].stored_len};
    out->count = (size_t)p->header.chunk_count + 1;
    return GD_OK;
}

void gd_payload_parts_free(gd_payload_parts *parts) {
    free(parts->prefix);
    free(parts->parts);
    memset(parts, 0, sizeof *parts);
}

gd_status gd_payload_write(const gd_payload *p, const char *path) {
    if (path == NULL || path[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "payload path is empty");
    gd_payload_parts parts;
    GD_TRY(gd_payload_file_parts(p, &parts));
    /* Durable before the commitment is sent; public data, served to peers. */
    gd_status s = gd_file_write_atomic(path, parts.parts, parts.count, 0644);
    gd_payload_parts_free(&parts);
    return s;
}

/* ---- the file form read in place, and parse --------------------------------- */

/* *buf holding at least need bytes. */
static gd_status gd_grow(uint8_t **buf, size_t *cap, size_t need) {
    if (*cap >= need)
        return GD_OK;
    free(*buf);
    *buf = malloc(need);
    *cap = *buf ? need : 0;
    return *buf ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory for %zu bytes", need);
}

/* Chunk i's canonical bytes from the view: a stored chunk is its raw bytes
 * where they lie (*raw points into the view's bytes, or into *src read
 * from its file), a zstd chunk is checked and decompressed into buf
 * (raw_len bytes). */
static gd_status gd_view_raw(const gd_payload_view *v, uint32_t i, uint8_t *buf,
                             ZSTD_DCtx **dctx, uint8_t **src_buf, size_t *src_cap,
                             const uint8_t **raw) {
    const gd_payload_view_chunk *c = &v->chunks[i];
    const uint8_t *src = v->bytes + c->offset;
    if (v->fd >= 0) {
        GD_TRY(gd_grow(src_buf, src_cap, c->stored_len));
        GD_TRY(gd_file_read_at(v->fd, *src_buf, c->stored_len, c->offset, "a payload file"));
        src = *src_buf;
    }
    if (!c->zstd) {
        *raw = src;
        return GD_OK;
    }
    /* Exactly one complete frame of today's format (not a skippable or
     * legacy frame, whose old decoders are needless attack surface) that
     * declares exactly raw_len bytes. */
    if (c->stored_len < 4 || gd_get_le32(src) != ZSTD_MAGICNUMBER)
        return gd_fail(GD_ERR_PARSE, "stored bytes are not a zstd frame");
    size_t frame = ZSTD_findFrameCompressedSize(src, c->stored_len);
    if (ZSTD_isError(frame) || frame != c->stored_len)
        return gd_fail(GD_ERR_PARSE, "stored bytes are not one complete zstd frame");
    unsigned long long declared = ZSTD_getFrameContentSize(src, c->stored_len);
    if (declared != (unsigned long long)c->raw_len)
        return gd_fail(GD_ERR_PARSE, "zstd frame does not declare the table's %u bytes",
                       (unsigned)c->raw_len);
    if (*dctx == NULL && (*dctx = ZSTD_createDCtx()) == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a zstd context");
    size_t n = ZSTD_decompressDCtx(*dctx, buf, c->raw_len, src, c->stored_len);
    if (ZSTD_isError(n) || n != c->raw_len)
        return gd_fail(GD_ERR_PARSE, "zstd frame does not decompress to %u bytes (%s)",
                       (unsigned)c->raw_len, ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short");
    *raw = buf;
    return GD_OK;
}

/* Checks the table against the file; fills the view's chunks. */
static gd_status gd_parse_table(gd_payload_view *v) {
    const gd_payload_header *h = &v->header;
    size_t next = gd_table_end(h->chunk_count), len = v->len;
    for (uint32_t i = 0; i < h->chunk_count; i++) {
        const uint8_t *e =
            v->bytes + GD_PAYLOAD_HEADER_BYTES + (size_t)i * GD_PAYLOAD_TABLE_ENTRY_BYTES;
        uint64_t off = gd_get_le64(e);
        uint32_t stored = gd_get_le32(e + 8), raw = gd_get_le32(e + 12);
        uint32_t flags = gd_get_le32(e + 16), reserved = gd_get_le32(e + 20);
        if (off != next)
            return gd_fail(GD_ERR_PARSE, "chunk %u starts at byte %llu, want %zu (chunk data "
                                         "follows the table in order, without gaps)",
                           (unsigned)i, (unsigned long long)off, next);
        if (stored == 0 || stored > len - next)
            return gd_fail(GD_ERR_PARSE, "chunk %u: %u stored bytes at %zu do not fit the "
                                         "%zu-byte file",
                           (unsigned)i, (unsigned)stored, next, len);
        if ((flags & ~GD_PAYLOAD_FLAG_ZSTD) != 0 || reserved != 0)
            return gd_fail(GD_ERR_PARSE, "chunk %u: unknown flags %#x or reserved field %#x",
                           (unsigned)i, (unsigned)flags, (unsigned)reserved);
        size_t n = gd_chunk_values(h, i);
        size_t bound = gd_codec_chunk_bound(&h->codec, n);
        /* Fixed-size codecs have exactly their bound; topk at most it. */
        if (raw == 0 || raw > bound || (h->codec.kind != GD_CODEC_TOPK && raw != bound))
            return gd_fail(GD_ERR_PARSE, "chunk %u: %u raw bytes is impossible for %zu values "
                                         "(codec bound %zu)",
                           (unsigned)i, (unsigned)raw, n, bound);
        bool zstd = (flags & GD_PAYLOAD_FLAG_ZSTD) != 0;
        if (!zstd && stored != raw)
            return gd_fail(GD_ERR_PARSE, "chunk %u: uncompressed but %u stored and %u raw bytes",
                           (unsigned)i, (unsigned)stored, (unsigned)raw);
        if (zstd && (uint64_t)raw > (uint64_t)stored * GD_PAYLOAD_ZSTD_MAX_RATIO)
            return gd_fail(GD_ERR_PARSE, "chunk %u: %u zstd bytes cannot expand to %u",
                           (unsigned)i, (unsigned)stored, (unsigned)raw);
        v->chunks[i] = (gd_payload_view_chunk){.offset = off, .stored_len = stored,
                                               .raw_len = raw, .zstd = zstd};
        next += stored;
    }
    if (next != len)
        return gd_fail(GD_ERR_PARSE, "%zu bytes after the last chunk", len - next);
    return GD_OK;
}

gd_status gd_payload_view_open(gd_payload_view *out, const uint8_t *bytes, size_t len) {
    if (out == NULL)
        return gd_fail(GD_ERR_INVALID, "payload view: no output");
    memset(out, 0, sizeof *out);
    out->fd = -1;
    if (bytes == NULL || len < GD_PAYLOAD_HEADER_BYTES)
        return gd_fail(GD_ERR_PARSE, "payload of %zu bytes is shorter than its %d-byte header",
                       bytes ? len : 0, GD_PAYLOAD_HEADER_BYTES);
    gd_payload_header h;
    GD_TRY(gd_payload_header_decode(&h, bytes, GD_PAYLOAD_HEADER_BYTES));
    /* Before allocating: the table, and one byte per chunk, must fit. */
    size_t room = len - GD_PAYLOAD_HEADER_BYTES;
    if (h.chunk_count > room / (GD_PAYLOAD_TABLE_ENTRY_BYTES + 1))
        return gd_fail(GD_ERR_PARSE, "a payload of %u chunks cannot fit %zu bytes",
                       (unsigned)h.chunk_count, len);
    out->chunks = calloc(h.chunk_count, sizeof *out->chunks);
    if (out->chunks == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %u payload chunks",
                       (unsigned)h.chunk_count);
    out->header = h;
    out->bytes = bytes;
    out->len = len;
    out->fd = -1;
    gd_status s = gd_parse_table(out);
    if (s != GD_OK)
        gd_payload_view_close(out);
    return s;
}

gd_status gd_payload_view_open_file(gd_payload_view *out, int fd, uint64_t len) {
    if (out == NULL)
        return gd_fail(GD_ERR_INVALID, "payload view: no output");
    memset(out, 0, sizeof *out);
    out->fd = -1;
    if (len < GD_PAYLOAD_HEADER_BYTES || len > GD_PAYLOAD_FILE_MAX)
        return gd_fail(GD_ERR_PARSE, "a payload file of %llu bytes (its header is %d, at most "
                                     "2^40)", (unsigned long long)len, GD_PAYLOAD_HEADER_BYTES);
    uint8_t head[GD_PAYLOAD_HEADER_BYTES];
    GD_TRY(gd_file_read_at(fd, head, sizeof head, 0, "a payload file"));
    gd_payload_header h;
    GD_TRY(gd_payload_header_decode(&h, head, sizeof head));
    /* Before reading the table: it, and one byte per chunk, must fit. */
    if (h.chunk_count > (len - GD_PAYLOAD_HEADER_BYTES) / (GD_PAYLOAD_TABLE_ENTRY_BYTES + 1))
        return gd_fail(GD_ERR_PARSE, "a payload of %u chunks cannot fit %llu bytes",
                       (unsigned)h.chunk_count, (unsigned long long)len);
    size_t prefix = gd_table_end(h.chunk_count);
    out->prefix = malloc(prefix);
    out->chunks = calloc(h.chunk_count, sizeof *out->chunks);
    gd_status s = out->prefix && out->chunks
                      ? gd_file_read_at(fd, out->prefix, prefix, 0, "a payload file")
                      : gd_fail(GD_ERR_NOMEM, "out of memory for %u payload chunks",
                                (unsigned)h.chunk_count);
    out->header = h;
    out->bytes = out->prefix; /* the header and table; chunks are read from fd */
    out->len = (size_t)len;
    if (s == GD_OK)
        s = gd_parse_table(out);
    out->fd = fd;
    if (s != GD_OK)
        gd_payload_view_close(out);
    return s;
}

gd_status gd_payload_view_open_path(gd_payload_view *out, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        memset(out, 0, sizeof *out);
        out->fd = -1;
        return gd_fail(errno == ENOENT ? GD_ERR_NOT_FOUND : GD_ERR_IO, "cannot open %s: %s",
                       path, strerror(errno));
    }
    struct stat st;
    gd_status s = fstat(fd, &st) == 0 ? GD_OK
                                      : gd_fail(GD_ERR_IO, "cannot stat %s: %s", path,
                                                strerror(errno));
    if (s == GD_OK)
        s = gd_payload_view_open_file(out, fd, (uint64_t)st.st_size);
    if (s != GD_OK) {
        close(fd);
        return gd_fail_context(s, "payload %s", path);
    }
    out->owns_fd = true;
    return GD_OK;
}

void gd_payload_view_close(gd_payload_view *v) {
    if (v == NULL)
        return;
    if (v->owns_fd && v->fd >= 0)
        close(v->fd);
    free(v->chunks);
    free(v->raw);
    free(v->src);
    free(v->prefix);
    free(v->leaves);
    ZSTD_freeDCtx(v->dctx);
    memset(v, 0, sizeof *v);
    v->fd = -1;
}

size_t gd_payload_view_chunk_values(const gd_payload_view *v, uint32_t chunk) {
    return chunk < v->header.chunk_count ? gd_chunk_values(&v->header, chunk) : 0;
}

gd_status gd_payload_view_decode(gd_payload_view *v, uint32_t chunk, float *values,
                                 size_t count) {
    if (v->chunks == NULL || chunk >= v->header.chunk_count)
        return gd_fail(GD_ERR_INVALID, "payload has no chunk %u", (unsigned)chunk);
    size_t n = gd_chunk_values(&v->header, chunk);
    if (count != n)
        return gd_fail(GD_ERR_INVALID, "payload chunk %u has %zu values, not %zu",
                       (unsigned)chunk, n, count);
    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    gd_status s = gd_payload_view_raw(v, chunk, &raw, &raw_len);
    if (s == GD_OK)
        s = gd_codec_decode_chunk(&v->header.codec, raw, raw_len, values, n);
    return s == GD_OK ? GD_OK : gd_fail_context(s, "payload chunk %u", (unsigned)chunk);
}

/* What a parse or a view's root does with each chunk, on the pool. */
typedef struct gd_parse_job {
    const gd_payload_view *v;
    gd_payload_chunk *chunks; /* parse: copies; NULL for a view's root */
    const gd_payload_visitor *visit; /* or NULL */
    uint8_t (*leaves)[GD_MMR_HASH_LEN];
    gd_slots slots;
    gd_task_error err;
} gd_parse_job;

static gd_status gd_parse_one(gd_parse_job *job, size_t i, gd_slot *t) {
    const gd_payload_view_chunk *vc = &job->v->chunks[i];
    const uint8_t *raw = NULL;
    uint8_t *copy = NULL;
    if (job->chunks != NULL || vc->zstd) {
        copy = job->chunks != NULL ? malloc(vc->raw_len) : NULL;
        if (copy == NULL && job->chunks == NULL) {
            GD_TRY(gd_slot_buffer(t, vc->raw_len));
            copy = t->frame;
        }
        if (copy == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for %u bytes", (unsigned)vc->raw_len);
    }
    gd_payload_chunk *c = job->chunks != NULL ? &job->chunks[i] : NULL;
    if (c != NULL) {
        c->raw = copy;
        c->raw_len = vc->raw_len;
        c->stored_len = vc->stored_len;
        c->zstd = vc->zstd;
    }
    GD_TRY(gd_view_raw(job->v, (uint32_t)i, copy, &t->dctx, &t->src, &t->src_cap, &raw));
    if (c != NULL) {
        const uint8_t *src = job->v->bytes + vc->offset;
        if (!vc->zstd) {
            memcpy(c->raw, src, vc->raw_len);
            c->stored = c->raw;
        } else if ((c->stored = malloc(vc->stored_len)) == NULL) {
            return gd_fail(GD_ERR_NOMEM, "out of memory for %u bytes", (unsigned)vc->stored_len);
        } else {
            memcpy(c->stored, src, vc->stored_len);
        }
    }
    gd_mmr_hash_leaf(job->leaves[i], (uint32_t)(i + 1), raw, vc->raw_len);
    if (job->visit != NULL)
        return job->visit->chunk(job->visit->ctx, (uint32_t)i, raw, vc->raw_len);
    return GD_OK;
}

static void gd_parse_task(void *ctx, size_t i) {
    gd_parse_job *job = ctx;
    gd_slot temp = {0}, *t = gd_slot_take(&job->slots);
    gd_status s = gd_parse_one(job, i, t ? t : &temp);
    if (t != NULL)
        gd_slot_give(&job->slots, t);
    gd_slot_release(&temp);
    if (s != GD_OK)
        gd_task_error_record(&job->err, i, s);
}

/* Every chunk's leaf, in parallel (copied into chunks when not NULL). */
static gd_status gd_parse_leaves(const gd_payload_view *v, gd_payload_chunk *chunks,
                                 const gd_payload_visitor *visit,
                                 uint8_t (*leaves)[GD_MMR_HASH_LEN], gd_pool *pool) {
    gd_parse_job job = {.v = v, .chunks = chunks, .visit = visit, .leaves = leaves};
    GD_TRY(gd_slots_init(&job.slots, pool));
    gd_task_error_init(&job.err);
    gd_pool_run(pool, v->header.chunk_count, gd_parse_task, &job);
    gd_slots_free(&job.slots);
    return gd_task_error_finish(&job.err, "");
}

/* The commitment's leaves: the header's, then every chunk's (chunk_count +
 * 1 of them, malloc'd); a view read from a file keeps the chunks'. */
static gd_status gd_view_leaves(gd_payload_view *v, const gd_payload_visitor *visit,
                                gd_pool *pool, uint8_t (**out)[GD_MMR_HASH_LEN]) {
    if (v->chunks == NULL)
        return gd_fail(GD_ERR_INVALID, "payload view: not open");
    uint32_t count = v->header.chunk_count;
    uint8_t (*leaves)[GD_MMR_HASH_LEN] = malloc(((size_t)count + 1) * GD_MMR_HASH_LEN);
    if (leaves == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %u leaves", (unsigned)count + 1);
    gd_mmr_hash_leaf(leaves[0], 0, v->bytes, GD_PAYLOAD_HEADER_BYTES);
    gd_status s = gd_parse_leaves(v, NULL, visit, leaves + 1, pool);
    if (s == GD_OK && v->fd >= 0) {
        free(v->leaves);
        v->leaves = malloc((size_t)count * GD_MMR_HASH_LEN);
        v->leaves_known = v->leaves != NULL ? count : 0;
        if (v->leaves == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory for %u leaves", (unsigned)count);
        else
            memcpy(v->leaves, leaves + 1, (size_t)count * GD_MMR_HASH_LEN);
    }
    if (s != GD_OK) {
        free(leaves);
        return s;
    }
    *out = leaves;
    return GD_OK;
}

gd_status gd_payload_view_root(gd_payload_view *v, uint8_t root[GD_MMR_HASH_LEN],
                               uint32_t *leaf_count, gd_pool *pool) {
    return gd_payload_view_root_visit(v, root, leaf_count, NULL, pool);
}

gd_status gd_payload_view_root_visit(gd_payload_view *v, uint8_t root[GD_MMR_HASH_LEN],
                                     uint32_t *leaf_count, const gd_payload_visitor *visit,
                                     gd_pool *pool) {
    uint8_t (*leaves)[GD_MMR_HASH_LEN] = NULL;
    GD_TRY(gd_view_leaves(v, visit, pool, &leaves));
    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    gd_status s = GD_OK;
    for (uint32_t i = 0; s == GD_OK && i <= v->header.chunk_count; i++)
        s = gd_mmr_peaks_append(&peaks, leaves[i]);
    if (s == GD_OK)
        s = gd_mmr_peaks_root(&peaks, root);
    free(leaves);
    if (s == GD_OK)
        *leaf_count = v->header.chunk_count + 1;
    return s;
}

gd_status gd_payload_view_mmr(gd_payload_view *v, gd_mmr *out, gd_pool *pool) {
    return gd_payload_view_mmr_visit(v, out, NULL, pool);
}

gd_status gd_payload_view_mmr_visit(gd_payload_view *v, gd_mmr *out,
                                    const gd_payload_visitor *visit, gd_pool *pool) {
    gd_mmr_init(out);
    uint8_t (*leaves)[GD_MMR_HASH_LEN] = NULL;
    GD_TRY(gd_view_leaves(v, visit, pool, &leaves));
    gd_status s = GD_OK;
    for (uint32_t i = 0; s == GD_OK && i <= v->header.chunk_count; i++)
        s = gd_mmr_append(out, leaves[i]);
    free(leaves);
    if (s != GD_OK)
        gd_mmr_free(out);
    return s;
}

gd_status gd_payload_view_raw(gd_payload_view *v, uint32_t chunk, const uint8_t **raw,
                              size_t *raw_len) {
    if (v->chunks == NULL || chunk >= v->header.chunk_count)
        return gd_fail(GD_ERR_INVALID, "payload has no chunk %u", (unsigned)chunk);
    const gd_payload_view_chunk *c = &v->chunks[chunk];
    if (c->zstd)
        GD_TRY(gd_grow(&v->raw, &v->raw_cap, c->raw_len));
    gd_status s = gd_view_raw(v, chunk, v->raw, &v->dctx, &v->src, &v->src_cap, raw);
    *raw_len = c->raw_len;
    if (v->leaves == NULL || s == GD_ERR_NOMEM || s == GD_ERR_IO)
        return s;
    if (chunk >= v->leaves_known) { /* learning: the chunk's first read */
        if (chunk != v->leaves_known)
            return gd_fail(GD_ERR_INVALID, "payload chunk %u read before chunk %u",
                           (unsigned)chunk, (unsigned)v->leaves_known);
        if (s == GD_OK) {
            gd_mmr_hash_leaf(v->leaves[chunk], chunk + 1, *raw, c->raw_len);
            v->leaves_known++;
        }
        return s;
    }
    /* Checked once: bytes that no longer read, or hash to another leaf,
     * were changed on this host's disk since. */
    uint8_t leaf[GD_MMR_HASH_LEN];
    if (s == GD_OK)
        gd_mmr_hash_leaf(leaf, chunk + 1, *raw, c->raw_len);
    if (s != GD_OK || memcmp(leaf, v->leaves[chunk], sizeof leaf) != 0)
        return gd_fail(GD_ERR_IO, "payload chunk %u changed on disk after it was checked",
                       (unsigned)chunk);
    return GD_OK;
}

gd_status gd_payload_view_learn(gd_payload_view *v) {
    if (v->chunks == NULL)
        return gd_fail(GD_ERR_INVALID, "payload view: not open");
    free(v->leaves);
    v->leaves_known = 0;
    v->leaves = malloc(((size_t)v->header.chunk_count + 1) * GD_MMR_HASH_LEN);
    if (v->leaves == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for %u leaves",
                       (unsigned)v->header.chunk_count);
    return GD_OK;
}

gd_status gd_payload_view_learned_root(const gd_payload_view *v, uint8_t root[GD_MMR_HASH_LEN],
                                       uint32_t *leaf_count) {
    uint32_t count = v->header.chunk_count;
    if (v->leaves == NULL || v->leaves_known != count)
        return gd_fail(GD_ERR_INVALID, "payload: %u of its %u chunks read",
                       (unsigned)(v->leaves ? v->leaves_known : 0), (unsigned)count);
    uint8_t leaf[GD_MMR_HASH_LEN];
    gd_mmr_hash_leaf(leaf, 0, v->bytes, GD_PAYLOAD_HEADER_BYTES);
    gd_mmr_peaks peaks;
    gd_mmr_peaks_init(&peaks);
    gd_status s = gd_mmr_peaks_append(&peaks, leaf);
    for (uint32_t i = 0; s == GD_OK && i < count; i++)
        s = gd_mmr_peaks_append(&peaks, v->leaves[i]);
    if (s == GD_OK)
        s = gd_mmr_peaks_root(&peaks, root);
    if (s == GD_OK)
        *leaf_count = count + 1;
    return s;
}

gd_status gd_payload_parse(gd_payload *out, const uint8_t *bytes, size_t len, gd_pool *pool) {
    if (out == NULL)
        return gd_fail(GD_ERR_INVALID, "payload parse: no output");
    memset(out, 0, sizeof *out);
    gd_mmr_init(&out->mmr);
    gd_payload_view v;
    GD_TRY(gd_payload_view_open(&v, bytes, len));
    uint32_t count = v.header.chunk_count;
    out->header = v.header;
    out->chunks = calloc(count, sizeof *out->chunks);
    uint8_t (*leaves)[GD_MMR_HASH_LEN] = malloc((size_t)count * GD_MMR_HASH_LEN);
    gd_status s = out->chunks && leaves ? GD_OK
                                        : gd_fail(GD_ERR_NOMEM, "out of memory for %u payload "
                                                                "chunks", (unsigned)count);
    if (s == GD_OK)
        s = gd_parse_leaves(&v, out->chunks, NULL, leaves, pool);
    if (s == GD_OK)
        s = gd_build_mmr(out, bytes, (const uint8_t (*)[GD_MMR_HASH_LEN])leaves);
    free(leaves);
    gd_payload_view_close(&v);
    if (s != GD_OK)
        gd_payload_free(out);
    return s;
}

gd_status gd_payload_read(gd_payload *out, const char *path, gd_pool *pool) {
    if (out != NULL) {
        memset(out, 0, sizeof *out);
        gd_mmr_init(&out->mmr);
    }
    gd_buf buf = {0};
    gd_status s = gd_file_read(&buf, path, GD_PAYLOAD_FILE_MAX);
    if (s == GD_OK)
        s = gd_payload_parse(out, buf.data, buf.len, pool);
    gd_buf_free(&buf);
    if (s != GD_OK)
        return gd_fail_context(s, "payload %s", path);
    return GD_OK;
}

/* ---- decode and proofs ---------------------------------------------------- */

typedef struct gd_decode_job {
    const gd_payload *p;
    float *values;
    gd_task_error err;
} gd_decode_job;

static void gd_decode_task(void *ctx, size_t i) {
    gd_decode_job *job = ctx;
    const gd_payload_header *h = &job->p->header;
    const gd_payload_chunk *c = &job->p->chunks[i];
    gd_status s = gd_codec_decode_chunk(&h->codec, c->raw, c->raw_len,
                                        job->values + i * (size_t)h->chunk_elems,
                                        gd_chunk_values(h, i));
    if (s != GD_OK)
        gd_task_error_record(&job->err, i, s);
}

gd_status gd_payload_decode(const gd_payload *p, float *values, gd_pool *pool) {
    GD_TRY(gd_check_writable(p));
    if (values == NULL)
        return gd_fail(GD_ERR_INVALID, "payload decode: no output");
    gd_decode_job job = {.p = p, .values = values};
    gd_task_error_init(&job.err);
    gd_pool_run(pool, p->header.chunk_count, gd_decode_task, &job);
    return gd_task_error_finish(&job.err, "");
}

gd_status gd_payload_prove_chunk(const gd_payload *p, gd_mmr_proof *out, uint32_t chunk) {
    GD_TRY(gd_check_encoded(p));
    if (chunk >= p->header.chunk_count)
        return gd_fail(GD_ERR_INVALID, "payload has no chunk %u (%u chunks)", (unsigned)chunk,
                       (unsigned)p->header.chunk_count);
    return gd_mmr_prove(&p->mmr, out, chunk + 1);
}

/* The caller must also compare proof->leaf_count with the published leaf
 * count (the root alone does not bind it; see mmr.h). */
bool gd_payload_verify_chunk(const uint8_t root[GD_MMR_HASH_LEN], uint32_t chunk,
                             const uint8_t *raw, size_t raw_len, const gd_mmr_proof *proof) {
    if (root == NULL || proof == NULL || (raw == NULL && raw_len > 0) ||
        chunk >= GD_MMR_MAX_LEAVES - 1 || proof->leaf_index != chunk + 1)
        return false;
    uint8_t leaf[GD_MMR_HASH_LEN];
    gd_mmr_hash_leaf(leaf, chunk + 1, raw, raw_len);
    return gd_mmr_verify(root, proof, leaf);
}
