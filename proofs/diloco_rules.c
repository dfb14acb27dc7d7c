/* The DiLoCo module's draws, seals, seed and address order
 * (proofs/diloco_rules.h). */
#include "proofs/diloco_rules.h"

#include <string.h>

#include "common/bytes.h"
#include "common/hash.h"

/* Addresses are bech32 strings well under this; longer input is cut, which
 * only the caller's own validation could let through. */
#define GD_RULES_BUF 512

typedef struct gd_concat {
    uint8_t bytes[GD_RULES_BUF];
    size_t len;
} gd_concat;

static void put(gd_concat *c, const void *data, size_t len) {
    if (len == 0) /* data may be NULL then (a seal with no body) */
        return;
    size_t room = sizeof c->bytes - c->len;
    len = len < room ? len : room;
    memcpy(c->bytes + c->len, data, len);
    c->len += len;
}

static void put_str(gd_concat *c, const char *s) { put(c, s, strlen(s)); }

static void put_le32(gd_concat *c, uint32_t v) {
    uint8_t b[4];
    gd_put_le32(b, v);
    put(c, b, 4);
}

static void put_le64(gd_concat *c, uint64_t v) {
    uint8_t b[8];
    gd_put_le64(b, v);
    put(c, b, 8);
}

void gd_diloco_seal(uint8_t out[GD_DILOCO_HASH_LEN], gd_diloco_seal_kind kind, const char *signer,
                    const uint8_t *body, size_t body_len, const uint8_t salt[GD_DILOCO_SALT_LEN]) {
    gd_concat c = {.len = 0};
    put_str(&c, "gd-diloco-seal-v2");
    uint8_t k = (uint8_t)kind, n = (uint8_t)(strlen(signer) < 255 ? strlen(signer) : 255);
    put(&c, &k, 1);
    put(&c, &n, 1);
    put(&c, signer, n);
    put(&c, body, body_len);
    put(&c, salt, GD_DILOCO_SALT_LEN);
    gd_sha256(out, c.bytes, c.len);
}

void gd_diloco_verdict_seal(uint8_t out[GD_DILOCO_HASH_LEN], gd_diloco_seal_kind kind,
                            const char *signer, gd_diloco_verdict verdict,
                            const uint8_t digest[GD_DILOCO_HASH_LEN],
                            const uint8_t salt[GD_DILOCO_SALT_LEN]) {
    uint8_t body[1 + GD_DILOCO_HASH_LEN];
    body[0] = (uint8_t)verdict;
    memcpy(body + 1, digest, GD_DILOCO_HASH_LEN);
    gd_diloco_seal(out, kind, signer, body, sizeof body, salt);
}

gd_status gd_diloco_round_seed(uint8_t seed[GD_DILOCO_HASH_LEN], uint64_t run, uint64_t round,
                               const uint8_t beacon[GD_DILOCO_HASH_LEN], const uint8_t *secrets,
                               size_t n_secrets) {
    gd_sha256_ctx *h = NULL;
    GD_TRY(gd_sha256_begin(&h));
    uint8_t le[8];
    gd_sha256_update(h, "gd-diloco-seed-v1", 17);
    gd_put_le64(le, run);
    gd_sha256_update(h, le, 8);
    gd_put_le64(le, round);
    gd_sha256_update(h, le, 8);
    gd_sha256_update(h, beacon, GD_DILOCO_HASH_LEN);
    for (size_t i = 0; i < n_secrets; i++)
        gd_sha256_update(h, secrets + i * GD_DILOCO_SALT_LEN, GD_DILOCO_SALT_LEN);
    gd_sha256_finish(h, seed);
    return GD_OK;
}

void gd_diloco_purpose(uint8_t out[GD_DILOCO_HASH_LEN], const uint8_t seed[GD_DILOCO_HASH_LEN],
                       const char *purpose) {
    gd_concat c = {.len = 0};
    put_str(&c, "gd-diloco-purpose");
    put(&c, seed, GD_DILOCO_HASH_LEN);
    put_str(&c, purpose);
    gd_sha256(out, c.bytes, c.len);
}

uint32_t gd_diloco_avail_chunks(uint32_t out[GD_DILOCO_AVAIL_CHUNKS_MAX],
                                const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                                const char *reporter, uint32_t chunks, uint32_t want) {
    chunks = chunks ? chunks : 1;
    want = want < GD_DILOCO_AVAIL_CHUNKS_MAX ? want : GD_DILOCO_AVAIL_CHUNKS_MAX;
    want = want < chunks ? want : chunks;
    uint32_t n = 0;
    for (uint32_t j = 0; n < want; j++) {
        gd_concat c = {.len = 0};
        put_str(&c, "gd-avail-v2");
        put(&c, randomness, GD_DILOCO_HASH_LEN);
        put_str(&c, target);
        put_str(&c, reporter);
        put_le32(&c, j);
        uint8_t h[GD_DILOCO_HASH_LEN];
        gd_sha256(h, c.bytes, c.len);
        uint32_t chunk = (uint32_t)(gd_get_le64(h) % chunks);
        bool seen = false;
        for (uint32_t i = 0; i < n && !seen; i++)
            seen = out[i] == chunk;
        if (!seen)
            out[n++] = chunk;
    }
    return n;
}

void gd_state_sample_draw(gd_state_sample *out, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                          const char *target, const char *reporter, uint32_t segment_count) {
    gd_concat c = {.len = 0};
    put_str(&c, "gd-avail-state-v1");
    put(&c, randomness, GD_DILOCO_HASH_LEN);
    put_str(&c, target);
    put_str(&c, reporter);
    uint8_t h[GD_DILOCO_HASH_LEN];
    gd_sha256(h, c.bytes, c.len);
    out->leaf = (uint32_t)(gd_get_le64(h) % (segment_count ? segment_count : 1));
    out->array = gd_get_le32(h + 8) % GD_STATE_SAMPLE_ARRAYS;
    out->pick = gd_get_le64(h + 16);
}

uint32_t gd_diloco_draw_weighted(const uint8_t h[GD_DILOCO_HASH_LEN], const uint64_t *weights,
                                 uint32_t n) {
    __extension__ typedef unsigned __int128 u128;
    if (n == 0)
        return 0;
    u128 total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += weights[i];
    if (total == 0)
        return (uint32_t)(gd_get_le64(h) % n);
    u128 x = ((u128)gd_get_le64(h + 8) << 64 | gd_get_le64(h)) % total, run = 0;
    for (uint32_t i = 0; i < n; i++) {
        run += weights[i];
        if (x < run)
            return i;
    }
    return n - 1; /* not reached: x < total */
}

/* SHA-256(tag || randomness || target || LE32 check). */
static void check_hash(uint8_t out[GD_DILOCO_HASH_LEN], const char *tag,
                       const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                       uint32_t check) {
    gd_concat c = {.len = 0};
    put_str(&c, tag);
    put(&c, randomness, GD_DILOCO_HASH_LEN);
    put_str(&c, target);
    put_le32(&c, check);
    gd_sha256(out, c.bytes, c.len);
}

void gd_diloco_draw_check(gd_diloco_check_draw *out, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                          const char *target, uint32_t check, uint32_t segments,
                          uint32_t segment_steps, uint32_t chunks, uint32_t double_ppm) {
    uint8_t r[GD_DILOCO_HASH_LEN], c[GD_DILOCO_HASH_LEN];
    check_hash(r, "gd-check", randomness, target, check);
    check_hash(c, "gd-check-chunk", randomness, target, check);
    segments = segments ? segments : 1;
    segment_steps = segment_steps ? segment_steps : 1;
    out->segment = (uint32_t)(gd_get_le64(r) % segments);
    out->step = gd_get_le32(r + 28) % segment_steps;
    out->twice = gd_get_le32(r + 16) % GD_DILOCO_PPM < double_ppm;
    out->chunk = (uint32_t)(gd_get_le64(c) % (chunks ? chunks : 1));
}

uint32_t gd_diloco_draw_member(const char *tag, const uint8_t randomness[GD_DILOCO_HASH_LEN],
                               const char *target, uint32_t check, uint32_t k,
                               const uint64_t *weights, uint32_t n) {
    gd_concat c = {.len = 0};
    put_str(&c, tag);
    put(&c, randomness, GD_DILOCO_HASH_LEN);
    put_str(&c, target);
    put_le32(&c, check);
    put_le32(&c, k);
    uint8_t h[GD_DILOCO_HASH_LEN];
    gd_sha256(h, c.bytes, c.len);
    return gd_diloco_draw_weighted(h, weights, n);
}

void gd_diloco_trace_begin(uint8_t trace[GD_DILOCO_HASH_LEN]) {
    static const char tag[] = "gd-segment-trace-v1";
    gd_sha256(trace, tag, sizeof tag - 1);
}

void gd_diloco_trace_step(uint8_t trace[GD_DILOCO_HASH_LEN], double loss, double grad_norm) {
    gd_concat c = {.len = 0};
    put(&c, trace, GD_DILOCO_HASH_LEN);
    uint64_t bits;
    memcpy(&bits, &loss, sizeof bits);
    put_le64(&c, bits);
    memcpy(&bits, &grad_norm, sizeof bits);
    put_le64(&c, bits);
    gd_sha256(trace, c.bytes, c.len);
}

void gd_diloco_verdict_digest(uint8_t out[GD_DILOCO_HASH_LEN], uint64_t run, uint64_t round,
                              const char *target, uint32_t segment,
                              const uint8_t trace[GD_DILOCO_HASH_LEN],
                              const uint8_t end_state[GD_DILOCO_HASH_LEN]) {
    gd_concat c = {.len = 0};
    put_str(&c, "gd-verdict-v2");
    put_le64(&c, run);
    put_le64(&c, round);
    put_str(&c, target);
    put_le32(&c, segment);
    put(&c, trace, GD_DILOCO_HASH_LEN);
    put(&c, end_state, GD_DILOCO_HASH_LEN);
    gd_sha256(out, c.bytes, c.len);
}

int gd_diloco_address_cmp(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb)
        return la < lb ? -1 : 1;
    return memcmp(a, b, la);
}
