/* Known answers for the DiLoCo module's shared rules (proofs/diloco_rules.h):
 * one value of each draw, seal and digest for fixed inputs, computed here
 * from the concatenations docs/protocol.md section 7 writes down (with
 * gd_sha256, not the code under test) and pinned as literals computed
 * outside this code base, so that a change to any definition fails. */
#include <string.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "proofs/diloco_rules.h"
#include "tests/testkit.h"

#define TARGET "gonka10ht9tyks4vh7p5p904t340cr9nvahy7uhvqtp8"
#define OTHER "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc"

static uint8_t g_rand[32]; /* 0x00, 0x01, ..., 0x1f */

/* SHA-256 of the concatenation of parts: (pointer, length) pairs. */
typedef struct part {
    const void *data;
    size_t len;
} part;

static void hash_parts(uint8_t out[32], const part *parts, size_t n) {
    uint8_t buf[512];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(buf + len, parts[i].data, parts[i].len);
        len += parts[i].len;
    }
    gd_sha256(out, buf, len);
}

#define STR(s) {s, sizeof s - 1}

static void test_avail_chunk(void) {
    uint8_t h[32];
    part p[] = {STR("gd-avail"), {g_rand, 32}, STR(TARGET), STR(OTHER)};
    hash_parts(h, p, 4);
    uint32_t want = (uint32_t)(gd_get_le64(h) % 1000);
    CHECK(want == 434);
    CHECK(gd_diloco_avail_chunk(g_rand, TARGET, OTHER, 1000) == want);
    CHECK(gd_diloco_avail_chunk(g_rand, TARGET, OTHER, 1) == 0);
    CHECK(gd_diloco_avail_chunk(g_rand, TARGET, OTHER, 0) == 0); /* 0 counts as 1 */
}

static void test_check_draw(void) {
    uint8_t le_check[4], r[32], c[32];
    gd_put_le32(le_check, 3);
    part pr[] = {STR("gd-check"), {g_rand, 32}, STR(TARGET), {le_check, 4}};
    part pc[] = {STR("gd-check-chunk"), {g_rand, 32}, STR(TARGET), {le_check, 4}};
    hash_parts(r, pr, 4);
    hash_parts(c, pc, 4);
    /* Check 3 of TARGET: 7 segments of 10 steps, a payload of 1000
     * chunks, 5 eligible validators. */
    uint32_t segment = (uint32_t)(gd_get_le64(r) % 7), step = gd_get_le32(r + 28) % 10;
    uint32_t first = (uint32_t)(gd_get_le64(r + 8) % 5);
    uint32_t second = (uint32_t)((first + 1 + gd_get_le64(r + 20) % 4) % 5);
    uint32_t coin = gd_get_le32(r + 16) % GD_DILOCO_PPM;
    uint32_t chunk = (uint32_t)(gd_get_le64(c) % 1000);
    CHECK(segment == 1 && step == 8 && first == 0 && second == 2 && coin == 693206);
    CHECK(chunk == 632);

    gd_diloco_check_draw d;
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 7, 10, 1000, 5, 693207);
    CHECK(d.segment == segment && d.step == step && d.first == first && d.chunk == chunk);
    CHECK(d.twice && d.second == second);
    /* The double check is drawn with probability double_ppm: strictly below. */
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 7, 10, 1000, 5, 693206);
    CHECK(!d.twice && d.second == d.first && d.chunk == chunk);
    /* One eligible validator: never twice. Zero counts leave every value 0. */
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 7, 10, 1000, 1, GD_DILOCO_PPM);
    CHECK(!d.twice && d.first == 0 && d.second == 0);
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 0, 0, 0, 0, 0);
    CHECK(d.segment == 0 && d.step == 0 && d.chunk == 0 && d.first == 0 && !d.twice);
    /* Another check index is another draw. */
    gd_diloco_check_draw e;
    gd_diloco_draw_check(&e, g_rand, TARGET, 4, 7, 10, 1000, 5, 0);
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 7, 10, 1000, 5, 0);
    CHECK(d.segment != e.segment || d.step != e.step || d.first != e.first ||
          d.chunk != e.chunk);
}

static void test_rechecker(void) {
    uint8_t le_check[4], le_k[4], h[32];
    gd_put_le32(le_check, 3);
    gd_put_le32(le_k, 2);
    part p[] = {STR("gd-recheck"), {g_rand, 32}, STR(TARGET), {le_check, 4}, {le_k, 4}};
    hash_parts(h, p, 5);
    uint32_t want = (uint32_t)(gd_get_le64(h) % 9);
    CHECK(want == 7);
    CHECK(gd_diloco_draw_rechecker(g_rand, TARGET, 3, 2, 9) == want);
    CHECK(gd_diloco_draw_rechecker(g_rand, TARGET, 3, 2, 0) == 0);
}

static void test_seal_and_digest(void) {
    uint8_t digest[32], want[32], got[32];
    gd_sha256(digest, "digest", 6);
    const uint8_t fail = GD_VERDICT_FAIL;
    part ps[] = {STR("gd-verdict-seal"), STR(OTHER), {&fail, 1}, {digest, 32}};
    hash_parts(want, ps, 4);
    CHECK_HEX_EQ(want, 32, "09b10bb4cdd58bf051328183b01d10f57d25d4e94be3b5e2617daef66e9e76d7");
    gd_diloco_seal(got, OTHER, GD_VERDICT_FAIL, digest);
    CHECK(memcmp(got, want, 32) == 0);

    uint8_t step_state[32], end_state[32], le_run[8], le_round[8], le_segment[4];
    memset(step_state, 0xa0, 32);
    memset(end_state, 0xb0, 32);
    gd_put_le64(le_run, 7);
    gd_put_le64(le_round, 11);
    gd_put_le32(le_segment, 4);
    part pd[] = {STR("gd-verdict-v1"), {le_run, 8},        {le_round, 8},   STR(TARGET),
                 {le_segment, 4},      {step_state, 32}, {end_state, 32}};
    hash_parts(want, pd, 7);
    CHECK_HEX_EQ(want, 32, "d735e69380de7d36040ae840355b7767b63a170837c5181f86ef00fbf0ee7e78");
    gd_diloco_verdict_digest(got, 7, 11, TARGET, 4, step_state, end_state);
    CHECK(memcmp(got, want, 32) == 0);
}

static void test_address_order(void) {
    /* By length first, then bytewise. */
    CHECK(gd_diloco_address_cmp("gonka1b", "gonka1aa") < 0);
    CHECK(gd_diloco_address_cmp("gonka1aa", "gonka1b") > 0);
    CHECK(gd_diloco_address_cmp(OTHER, TARGET) > 0); /* 'p' > '0' at byte 6 */
    CHECK(gd_diloco_address_cmp(TARGET, OTHER) < 0);
    CHECK(gd_diloco_address_cmp(TARGET, TARGET) == 0);
    CHECK(gd_diloco_address_cmp("a\xff", "a\x01") > 0); /* bytes are unsigned */
    CHECK(gd_diloco_address_cmp("", "a") < 0);
}

int main(void) {
    for (int i = 0; i < 32; i++)
        g_rand[i] = (uint8_t)i;
    RUN_TEST(test_avail_chunk);
    RUN_TEST(test_check_draw);
    RUN_TEST(test_rechecker);
    RUN_TEST(test_seal_and_digest);
    RUN_TEST(test_address_order);
    return gd_test_finish();
}
