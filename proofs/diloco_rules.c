/* The DiLoCo module's draws, seals and address order
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

void gd_diloco_seal(uint8_t out[GD_DILOCO_HASH_LEN], const char *validator,
                    gd_diloco_verdict verdict, const uint8_t digest[GD_DILOCO_HASH_LEN]) {
    gd_concat c = {.len = 0};
    put_str(&c, "gd-verdict-seal");
    put_str(&c, validator);
    uint8_t v = (uint8_t)verdict;
    put(&c, &v, 1);
    put(&c, digest, GD_DILOCO_HASH_LEN);
    gd_sha256(out, c.bytes, c.len);
}

uint32_t gd_diloco_avail_chunk(const uint8_t beacon[GD_DILOCO_HASH_LEN], const char *target,
                               const char *reporter, uint32_t chunks) {
    gd_concat c = {.len = 0};
    put_str(&c, "gd-avail");
    put(&c, beacon, GD_DILOCO_HASH_LEN);
    put_str(&c, target);
    put_str(&c, reporter);
    uint8_t h[GD_DILOCO_HASH_LEN];
    gd_sha256(h, c.bytes, c.len);
    return (uint32_t)(gd_get_le64(h) % (chunks ? chunks : 1));
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
                          uint32_t segment_steps, uint32_t chunks, uint32_t n_eligible,
                          uint32_t double_ppm) {
    uint8_t r[GD_DILOCO_HASH_LEN], c[GD_DILOCO_HASH_LEN];
    check_hash(r, "gd-check", randomness, target, check);
    check_hash(c, "gd-check-chunk", randomness, target, check);
    segments = segments ? segments : 1;
    segment_steps = segment_steps ? segment_steps : 1;
    n_eligible = n_eligible ? n_eligible : 1;
    out->segment = (uint32_t)(gd_get_le64(r) % segments);
    out->step = gd_get_le32(r + 28) % segment_steps;
    out->first = (uint32_t)(gd_get_le64(r + 8) % n_eligible);
    out->twice = n_eligible >= 2 && gd_get_le32(r + 16) % GD_DILOCO_PPM < double_ppm;
    out->second = out->twice
                      ? (uint32_t)((out->first + 1 + gd_get_le64(r + 20) % (n_eligible - 1)) %
                                   n_eligible)
                      : out->first;
    out->chunk = (uint32_t)(gd_get_le64(c) % (chunks ? chunks : 1));
}

uint32_t gd_diloco_draw_rechecker(const uint8_t randomness[GD_DILOCO_HASH_LEN], const char *target,
                                  uint32_t check, uint32_t k, uint32_t n) {
    gd_concat c = {.len = 0};
    put_str(&c, "gd-recheck");
    put(&c, randomness, GD_DILOCO_HASH_LEN);
    put_str(&c, target);
    put_le32(&c, check);
    put_le32(&c, k);
    uint8_t h[GD_DILOCO_HASH_LEN];
    gd_sha256(h, c.bytes, c.len);
    return (uint32_t)(gd_get_le64(h) % (n ? n : 1));
}

void gd_diloco_verdict_digest(uint8_t out[GD_DILOCO_HASH_LEN], uint64_t run, uint64_t round,
                              const char *target, uint32_t segment,
                              const uint8_t step_state[GD_DILOCO_HASH_LEN],
                              const uint8_t end_state[GD_DILOCO_HASH_LEN]) {
    gd_concat c = {.len = 0};
    put_str(&c, "gd-verdict-v1");
    put_le64(&c, run);
    put_le64(&c, round);
    put_str(&c, target);
    put_le32(&c, segment);
    put(&c, step_state, GD_DILOCO_HASH_LEN);
    put(&c, end_state, GD_DILOCO_HASH_LEN);
    gd_sha256(out, c.bytes, c.len);
}

int gd_diloco_address_cmp(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb)
        return la < lb ? -1 : 1;
    return memcmp(a, b, la);
}
