/* Known answers for the DiLoCo module's shared rules (proofs/diloco_rules.h):
 * one value of each draw, seal, seed and digest for fixed inputs, computed
 * here from the concatenations the header writes down (with gd_sha256, not
 * the code under test) and pinned as literals computed outside this code
 * base, so that a change to any definition fails. The literals come from
 * Python's hashlib, e.g. for the verdict seal:
 *
 *   import hashlib, struct
 *   H = lambda b: hashlib.sha256(b).digest()
 *   OTHER = b"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc"
 *   body = bytes([2]) + H(b"digest")            # FAIL, then the digest
 *   H(b"gd-diloco-seal-v2" + bytes([1, len(OTHER)]) + OTHER + body
 *     + bytes([0x5a] * 32)).hex()
 *
 * and likewise for the others (each test says what it hashes). The
 * weighted draw is also tested for its edges (zero weights, one member,
 * weights whose sum passes 2^64, the exact boundaries of each member's
 * share) and its distribution. */
#include <string.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "proofs/diloco_rules.h"
#include "tests/support/testkit.h"

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
        if (parts[i].len > 0)
            memcpy(buf + len, parts[i].data, parts[i].len);
        len += parts[i].len;
    }
    gd_sha256(out, buf, len);
}

#define STR(s) {s, sizeof s - 1}

/* --- seals ---------------------------------------------------------------------- */

/* SHA-256("gd-diloco-seal-v2" || kind || signer length || signer || body || salt). */
static void seal_by_hand(uint8_t out[32], uint8_t kind, const void *body, size_t body_len,
                         const uint8_t salt[32]) {
    const uint8_t head[2] = {kind, (uint8_t)strlen(OTHER)};
    part p[] = {STR("gd-diloco-seal-v2"), {head, 2}, STR(OTHER), {body, body_len}, {salt, 32}};
    hash_parts(out, p, 5);
}

static void test_seals(void) {
    uint8_t digest[32], salt[32], state[32], secret[32], body[33], want[32], got[32];
    gd_sha256(digest, "digest", 6);
    memset(salt, 0x5a, 32);
    memset(state, 0xa0, 32);
    memset(secret, 0x11, 32);
    body[0] = GD_VERDICT_FAIL;
    memcpy(body + 1, digest, 32);

    /* A verdict: its body is the verdict byte, then the digest. */
    seal_by_hand(want, GD_SEAL_VERDICT, body, 33, salt);
    CHECK_HEX_EQ(want, 32, "d399579f0b6f382067ed43c533e86b10e53ceb726ce694fb95c1889406c77a92");
    gd_diloco_verdict_seal(got, GD_SEAL_VERDICT, OTHER, GD_VERDICT_FAIL, digest, salt);
    CHECK(memcmp(got, want, 32) == 0);
    gd_diloco_seal(got, GD_SEAL_VERDICT, OTHER, body, 33, salt);
    CHECK(memcmp(got, want, 32) == 0);
    /* A re-check of the same verdict is another kind: another seal. */
    seal_by_hand(want, GD_SEAL_RECHECK, body, 33, salt);
    CHECK_HEX_EQ(want, 32, "79d6ee1c9e56ca1af96746823de2e536cc63b33754681be7c18ff0c4252e29f6");
    gd_diloco_verdict_seal(got, GD_SEAL_RECHECK, OTHER, GD_VERDICT_FAIL, digest, salt);
    CHECK(memcmp(got, want, 32) == 0);
    /* An attestation: the state hash. */
    seal_by_hand(want, GD_SEAL_ATTEST, state, 32, salt);
    CHECK_HEX_EQ(want, 32, "d0edb47a69a4c57865c06f315f6cf88634ec5bb17eedfe99599a1a0973b86c5b");
    gd_diloco_seal(got, GD_SEAL_ATTEST, OTHER, state, 32, salt);
    CHECK(memcmp(got, want, 32) == 0);
    /* Randomness: no body, the secret is the salt. (An empty body, not
     * NULL: the rules memcpy it, which is undefined for NULL.) */
    seal_by_hand(want, GD_SEAL_RANDOMNESS, NULL, 0, secret);
    CHECK_HEX_EQ(want, 32, "1ae4d2cb8c8679fec53cb5e60a666cbd6f662d055140e70863f7ba227efbc69a");
    gd_diloco_seal(got, GD_SEAL_RANDOMNESS, OTHER, body, 0, secret);
    CHECK(memcmp(got, want, 32) == 0);

    /* The salt is what makes equal answers give unrelated seals. */
    uint8_t other_salt[32], a[32], b[32];
    memcpy(other_salt, salt, 32);
    other_salt[31] ^= 1;
    gd_diloco_verdict_seal(a, GD_SEAL_VERDICT, OTHER, GD_VERDICT_PASS, digest, salt);
    gd_diloco_verdict_seal(b, GD_SEAL_VERDICT, OTHER, GD_VERDICT_PASS, digest, other_salt);
    CHECK(memcmp(a, b, 32) != 0);
    /* And every input counts: the signer, the verdict. */
    gd_diloco_verdict_seal(b, GD_SEAL_VERDICT, TARGET, GD_VERDICT_PASS, digest, salt);
    CHECK(memcmp(a, b, 32) != 0);
    gd_diloco_verdict_seal(b, GD_SEAL_VERDICT, OTHER, GD_VERDICT_FAIL, digest, salt);
    CHECK(memcmp(a, b, 32) != 0);
}

/* --- the round seed and its purposes ------------------------------------------------ */

static void test_round_seed(void) {
    uint8_t secrets[64], le_run[8], le_round[8], want[32], got[32];
    memset(secrets, 0x11, 32);
    memset(secrets + 32, 0x22, 32);
    gd_put_le64(le_run, 7);
    gd_put_le64(le_round, 11);
    /* SHA-256("gd-diloco-seed-v1" || LE64 run || LE64 round || beacon || secrets). */
    part p[] = {STR("gd-diloco-seed-v1"), {le_run, 8}, {le_round, 8}, {g_rand, 32},
                {secrets, 64}};
    hash_parts(want, p, 5);
    CHECK_HEX_EQ(want, 32, "972e147a19d420d4baaae8ac450159ab1be5776874ea0cc95aeea31d26d94bdb");
    CHECK_OK(gd_diloco_round_seed(got, 7, 11, g_rand, secrets, 2));
    CHECK(memcmp(got, want, 32) == 0);
    /* No secret revealed: the beacon alone. */
    hash_parts(want, p, 4);
    CHECK_HEX_EQ(want, 32, "9350dfb86de75bbe211d7490b271eca2537b4039381ca9ed31cee778e751573f");
    CHECK_OK(gd_diloco_round_seed(got, 7, 11, g_rand, NULL, 0));
    CHECK(memcmp(got, want, 32) == 0);
    /* The secrets' order is the members' address order: it counts. */
    uint8_t swapped[64], again[32];
    memcpy(swapped, secrets + 32, 32);
    memcpy(swapped + 32, secrets, 32);
    CHECK_OK(gd_diloco_round_seed(got, 7, 11, g_rand, secrets, 2));
    CHECK_OK(gd_diloco_round_seed(again, 7, 11, g_rand, swapped, 2));
    CHECK(memcmp(got, again, 32) != 0);
    /* Another round of the same run is another seed. */
    CHECK_OK(gd_diloco_round_seed(again, 7, 12, g_rand, secrets, 2));
    CHECK(memcmp(got, again, 32) != 0);
}

static void test_purpose(void) {
    /* SHA-256("gd-diloco-purpose" || seed || purpose), for the seed of
     * test_round_seed's two secrets. */
    uint8_t seed[32], want[32], got[32], secrets[64];
    memset(secrets, 0x11, 32);
    memset(secrets + 32, 0x22, 32);
    CHECK_OK(gd_diloco_round_seed(seed, 7, 11, g_rand, secrets, 2));
    part pv[] = {STR("gd-diloco-purpose"), {seed, 32}, STR("verify")};
    hash_parts(want, pv, 3);
    CHECK_HEX_EQ(want, 32, "15d781162e80aa64ad9fa993cdb60186a2a6c916a6dfdbd22466b494a11be130");
    gd_diloco_purpose(got, seed, "verify");
    CHECK(memcmp(got, want, 32) == 0);
    part pr[] = {STR("gd-diloco-purpose"), {seed, 32}, STR("recheck")};
    hash_parts(want, pr, 3);
    CHECK_HEX_EQ(want, 32, "88070585a0e2bd16b92f43c36a0412c26781071e24c4ca84951aad7020b9c275");
    gd_diloco_purpose(got, seed, "recheck");
    CHECK(memcmp(got, want, 32) == 0);
}

/* --- availability chunks -------------------------------------------------------------- */

/* Draw j of a report: LE64(SHA-256("gd-avail-v2" || randomness || target
 * || reporter || LE32 j)[0..8]) mod chunks. */
static uint32_t avail_draw(uint32_t j, uint32_t chunks) {
    uint8_t le_j[4], h[32];
    gd_put_le32(le_j, j);
    part p[] = {STR("gd-avail-v2"), {g_rand, 32}, STR(TARGET), STR(OTHER), {le_j, 4}};
    hash_parts(h, p, 5);
    return (uint32_t)(gd_get_le64(h) % chunks);
}

static bool avail_is(const uint32_t *got, uint32_t n, const uint32_t *want, uint32_t n_want) {
    return n == n_want && memcmp(got, want, n * sizeof *got) == 0;
}

static void test_avail_chunks(void) {
    uint32_t out[GD_DILOCO_AVAIL_CHUNKS_MAX];
    /* 4 of 1000 chunks: the first four draws, all distinct. */
    const uint32_t four[] = {915, 364, 706, 732};
    for (uint32_t j = 0; j < 4; j++)
        CHECK(avail_draw(j, 1000) == four[j]);
    CHECK(avail_is(out, gd_diloco_avail_chunks(out, g_rand, TARGET, OTHER, 1000, 4), four, 4));
    /* Asking for more than the maximum gets the maximum, in draw order. */
    const uint32_t sixteen[] = {915, 364, 706, 732, 553, 123, 703, 496,
                                525, 473, 470, 850, 158, 724, 825, 31};
    CHECK(avail_is(out, gd_diloco_avail_chunks(out, g_rand, TARGET, OTHER, 1000, 99), sixteen,
                   16));
    /* 4 of 7 chunks took six draws: repeats are skipped, not counted. */
    const uint32_t of7[] = {3, 6, 4, 0};
    uint32_t draws[6];
    for (uint32_t j = 0; j < 6; j++)
        draws[j] = avail_draw(j, 7);
    CHECK(draws[0] == 3 && draws[1] == 6 && draws[5] == 0);
    CHECK(avail_is(out, gd_diloco_avail_chunks(out, g_rand, TARGET, OTHER, 7, 4), of7, 4));
    /* A payload with fewer chunks than wanted: every chunk, each once. */
    const uint32_t of3[] = {2, 1, 0};
    CHECK(avail_is(out, gd_diloco_avail_chunks(out, g_rand, TARGET, OTHER, 3, 16), of3, 3));
    /* One chunk (0 counts as one); nothing wanted, nothing drawn. */
    const uint32_t zero[] = {0};
    CHECK(avail_is(out, gd_diloco_avail_chunks(out, g_rand, TARGET, OTHER, 1, 4), zero, 1));
    CHECK(avail_is(out, gd_diloco_avail_chunks(out, g_rand, TARGET, OTHER, 0, 4), zero, 1));
    CHECK(gd_diloco_avail_chunks(out, g_rand, TARGET, OTHER, 1000, 0) == 0);
    /* Reporter and target are not interchangeable. */
    uint32_t swapped[GD_DILOCO_AVAIL_CHUNKS_MAX];
    CHECK(gd_diloco_avail_chunks(swapped, g_rand, OTHER, TARGET, 1000, 4) == 4);
    CHECK(memcmp(swapped, four, sizeof four) != 0);
}

/* --- weighted draws ------------------------------------------------------------------- */

/* h whose LE128 value is hi * 2^64 + lo (the upper 16 bytes unused). */
static void h_of(uint8_t h[32], uint64_t lo, uint64_t hi) {
    memset(h, 0xee, 32);
    gd_put_le64(h, lo);
    gd_put_le64(h + 8, hi);
}

static void test_draw_weighted(void) {
    uint8_t h[32];
    gd_sha256(h, "gd-test-weighted", 16);
    /* x = LE128(h[0..16]) mod 16 = 12: past 5 (member 0) and 5 + 0, below
     * 5 + 0 + 10: member 2. */
    const uint64_t w[] = {5, 0, 10, 1};
    CHECK(h[0] % 16 == 12); /* LE128 mod 16 is the low byte's mod 16 */
    CHECK(gd_diloco_draw_weighted(h, w, 4) == 2);

    /* The boundaries: member i owns x in [sum of the weights before it,
     * that sum + its weight); a zero weight owns nothing. */
    const uint64_t edges[] = {3, 0, 5};
    const struct {
        uint64_t x;
        uint32_t want;
    } at[] = {{0, 0}, {2, 0}, {3, 2}, {7, 2}, {8, 0}, {10, 0}, {11, 2}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        h_of(h, at[i].x, 0);
        CHECK(gd_diloco_draw_weighted(h, edges, 3) == at[i].want);
    }
    /* The upper 64 bits count: with weights {1, 2}, x = 2^64 mod 3 = 1 is
     * member 1 (the low bits alone, 0, would be member 0). */
    const uint64_t thirds[] = {1, 2};
    h_of(h, 0, 1);
    CHECK(gd_diloco_draw_weighted(h, thirds, 2) == 1);

    /* Every weight 0: uniform, LE64(h[0..8]) mod n. */
    const uint64_t zeros[7] = {0};
    h_of(h, 40, 99);
    CHECK(gd_diloco_draw_weighted(h, zeros, 7) == 5);
    gd_sha256(h, "gd-test-weighted", 16);
    CHECK(gd_get_le64(h) % 7 == 5);
    CHECK(gd_diloco_draw_weighted(h, zeros, 7) == 5);

    /* One member is always the pick, whatever its weight. */
    const uint64_t one = 5, none = 0;
    for (uint64_t x = 0; x < 8; x++) {
        h_of(h, x * 0x9e3779b97f4a7c15u, x);
        CHECK(gd_diloco_draw_weighted(h, &one, 1) == 0);
        CHECK(gd_diloco_draw_weighted(h, &none, 1) == 0);
    }

    /* Weights near 2^64, summing past it: the sum is exact in 128 bits. */
    const uint64_t m = UINT64_MAX;
    const uint64_t huge[] = {m, m, 1};
    h_of(h, m - 1, 0); /* x = 2^64 - 2: member 0's last value */
    CHECK(gd_diloco_draw_weighted(h, huge, 3) == 0);
    h_of(h, m, 0); /* x = 2^64 - 1: member 1's first */
    CHECK(gd_diloco_draw_weighted(h, huge, 3) == 1);
    h_of(h, m - 1, 1); /* x = 2^65 - 2: the weight-1 member's one value */
    CHECK(gd_diloco_draw_weighted(h, huge, 3) == 2);
    h_of(h, m, 1); /* x = 2^65 - 1 = the sum: wraps to 0 */
    CHECK(gd_diloco_draw_weighted(h, huge, 3) == 0);
    /* Pinned: x = 27911110150485811479 (Python: int.from_bytes(h[:16],
     * "little") % (2 * (2**64 - 1) + 1)), member 1 of {m, m, 1} and member
     * 2 of {m, 1, m}. */
    gd_sha256(h, "gd-test-weighted", 16);
    CHECK(gd_diloco_draw_weighted(h, huge, 3) == 1);
    const uint64_t huge2[] = {m, 1, m};
    CHECK(gd_diloco_draw_weighted(h, huge2, 3) == 2);
}

/* Draws with h = SHA-256("gd-test-draw" || LE32 i), i < n, counted per member. */
static void count_draws(const uint64_t *w, uint32_t members, uint32_t n, uint32_t *counts) {
    memset(counts, 0, members * sizeof *counts);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t le_i[4], h[32];
        gd_put_le32(le_i, i);
        part p[] = {STR("gd-test-draw"), {le_i, 4}};
        hash_parts(h, p, 2);
        uint32_t k = gd_diloco_draw_weighted(h, w, members);
        CHECK(k < members);
        if (k < members)
            counts[k]++;
    }
}

static void test_draw_distribution(void) {
    /* 40000 draws of weights 1:2:3:4 land in proportion: each count
     * within 5 standard deviations of n p (at most 5 * 98 = 490 off).
     * The inputs are fixed, so the counts are too (Python gives 4078,
     * 8012, 11873, 16037); the bound says why they are right. */
    const uint32_t n = 40000;
    const uint64_t w[] = {1, 2, 3, 4};
    uint32_t c[5];
    count_draws(w, 4, n, c);
    CHECK(c[0] == 4078 && c[1] == 8012 && c[2] == 11873 && c[3] == 16037);
    for (int i = 0; i < 4; i++) {
        int64_t expect = (int64_t)n * (int64_t)w[i] / 10, off = (int64_t)c[i] - expect;
        CHECK(off > -490 && off < 490);
    }
    /* A zero weight is never drawn while another weight is positive. */
    const uint64_t gaps[] = {0, 7, 0, 0, 1, 0};
    uint32_t g[6];
    count_draws(gaps, 6, 8000, g);
    CHECK(g[0] == 0 && g[2] == 0 && g[3] == 0 && g[5] == 0 && g[1] + g[4] == 8000);
    CHECK(g[4] > 700 && g[4] < 1300); /* 1/8 of 8000 = 1000 */
    /* Two members of 2^64 - 1 and one of 1: the halves, and the 1 in
     * 2^65 essentially never (Python: 20088 and 19912). */
    const uint64_t huge[] = {UINT64_MAX, UINT64_MAX, 1};
    count_draws(huge, 3, n, c);
    CHECK(c[0] == 20088 && c[1] == 19912 && c[2] == 0);
    /* Every weight zero: uniform over the members. */
    const uint64_t zeros[5] = {0};
    count_draws(zeros, 5, n, c);
    for (int i = 0; i < 5; i++)
        CHECK(c[i] > 8000 - 450 && c[i] < 8000 + 450);
}

static void test_draw_member(void) {
    /* h = SHA-256(tag || randomness || target || LE32 check || LE32 k), then
     * gd_diloco_draw_weighted: validator 1 of check 3 is member 2, re-checker
     * 1 member 4 (Python, weights {100, 0, 300, 50, 7}). */
    const uint64_t w[] = {100, 0, 300, 50, 7};
    uint8_t le_check[4], le_k[4], h[32];
    gd_put_le32(le_check, 3);
    gd_put_le32(le_k, 1);
    part pv[] = {STR("gd-validator"), {g_rand, 32}, STR(TARGET), {le_check, 4}, {le_k, 4}};
    hash_parts(h, pv, 5);
    CHECK(gd_diloco_draw_weighted(h, w, 5) == 2);
    CHECK(gd_diloco_draw_member("gd-validator", g_rand, TARGET, 3, 1, w, 5) == 2);
    part pr[] = {STR("gd-recheck"), {g_rand, 32}, STR(TARGET), {le_check, 4}, {le_k, 4}};
    hash_parts(h, pr, 5);
    CHECK(gd_diloco_draw_weighted(h, w, 5) == 4);
    CHECK(gd_diloco_draw_member("gd-recheck", g_rand, TARGET, 3, 1, w, 5) == 4);
    /* Re-checkers k = 0, 2 (Python: members 0 and 3); one eligible member
     * is always the pick. */
    CHECK(gd_diloco_draw_member("gd-recheck", g_rand, TARGET, 3, 0, w, 5) == 0);
    CHECK(gd_diloco_draw_member("gd-recheck", g_rand, TARGET, 3, 2, w, 5) == 3);
    CHECK(gd_diloco_draw_member("gd-recheck", g_rand, TARGET, 3, 2, w + 2, 1) == 0);
}

/* --- checks, digests, order ------------------------------------------------------------ */

static void test_check_draw(void) {
    uint8_t le_check[4], r[32], c[32];
    gd_put_le32(le_check, 3);
    part pr[] = {STR("gd-check"), {g_rand, 32}, STR(TARGET), {le_check, 4}};
    part pc[] = {STR("gd-check-chunk"), {g_rand, 32}, STR(TARGET), {le_check, 4}};
    hash_parts(r, pr, 4);
    hash_parts(c, pc, 4);
    /* Check 3 of TARGET: 7 segments of 10 steps, a payload of 1000 chunks. */
    uint32_t segment = (uint32_t)(gd_get_le64(r) % 7), step = gd_get_le32(r + 28) % 10;
    uint32_t coin = gd_get_le32(r + 16) % GD_DILOCO_PPM;
    uint32_t chunk = (uint32_t)(gd_get_le64(c) % 1000);
    CHECK(segment == 1 && step == 8 && coin == 693206 && chunk == 632);

    gd_diloco_check_draw d;
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 7, 10, 1000, 693207);
    CHECK(d.segment == segment && d.step == step && d.chunk == chunk && d.twice);
    /* The double check is drawn with probability double_ppm: strictly below. */
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 7, 10, 1000, 693206);
    CHECK(!d.twice && d.chunk == chunk);
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 7, 10, 1000, GD_DILOCO_PPM);
    CHECK(d.twice);
    /* Zero counts leave every value 0. */
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 0, 0, 0, 0);
    CHECK(d.segment == 0 && d.step == 0 && d.chunk == 0 && !d.twice);
    /* Another check index is another draw. */
    gd_diloco_check_draw e;
    gd_diloco_draw_check(&e, g_rand, TARGET, 4, 7, 10, 1000, 0);
    gd_diloco_draw_check(&d, g_rand, TARGET, 3, 7, 10, 1000, 0);
    CHECK(d.segment != e.segment || d.step != e.step || d.chunk != e.chunk);
}

static void test_verdict_digest(void) {
    uint8_t trace[32], end_state[32], le_run[8], le_round[8], le_segment[4], want[32], got[32];
    memset(trace, 0xa0, 32);
    memset(end_state, 0xb0, 32);
    gd_put_le64(le_run, 7);
    gd_put_le64(le_round, 11);
    gd_put_le32(le_segment, 4);
    part pd[] = {STR("gd-verdict-v2"), {le_run, 8}, {le_round, 8},    STR(TARGET),
                 {le_segment, 4},      {trace, 32}, {end_state, 32}};
    hash_parts(want, pd, 7);
    /* Pinned too (Python's hashlib gives the same), so that the two sides
     * cannot drift together. */
    CHECK_HEX_EQ(want, 32, "4b6cbfb8e64ea865895d7d697f555eaf5a190356c442f65bac43981c28bd6225");
    gd_diloco_verdict_digest(got, 7, 11, TARGET, 4, trace, end_state);
    CHECK(memcmp(got, want, 32) == 0);
}

/* The segment trace: a chain of SHA-256 over each step's loss and gradient
 * norm as IEEE-754 binary64 bits, little-endian; recomputed here from its
 * definition, for two steps. */
static void test_segment_trace(void) {
    uint8_t want[32], got[32];
    part p0[] = {STR("gd-segment-trace-v1")};
    hash_parts(want, p0, 1);
    gd_diloco_trace_begin(got);
    CHECK(memcmp(got, want, 32) == 0);
    const double loss[2] = {5.25, 4.0078125}, norm[2] = {1.5, 0.375};
    for (int k = 0; k < 2; k++) {
        uint8_t lb[8], nb[8];
        uint64_t bits;
        memcpy(&bits, &loss[k], 8);
        gd_put_le64(lb, bits);
        memcpy(&bits, &norm[k], 8);
        gd_put_le64(nb, bits);
        part pk[] = {{want, 32}, {lb, 8}, {nb, 8}};
        hash_parts(want, pk, 3);
        gd_diloco_trace_step(got, loss[k], norm[k]);
        CHECK(memcmp(got, want, 32) == 0);
    }
    CHECK_HEX_EQ(got, 32, "3d8f21f55c7749be1e1241a03c04704018321c5710f27ad7f40d586c88358d27");
    /* One bit of one step changes it. */
    uint8_t other[32];
    uint64_t bits;
    double flipped;
    memcpy(&bits, &loss[1], 8);
    bits ^= 1;
    memcpy(&flipped, &bits, 8);
    gd_diloco_trace_begin(other);
    gd_diloco_trace_step(other, loss[0], norm[0]);
    gd_diloco_trace_step(other, flipped, norm[1]);
    CHECK(memcmp(other, got, 32) != 0);
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
    RUN_TEST(test_seals);
    RUN_TEST(test_round_seed);
    RUN_TEST(test_purpose);
    RUN_TEST(test_avail_chunks);
    RUN_TEST(test_draw_weighted);
    RUN_TEST(test_draw_distribution);
    RUN_TEST(test_draw_member);
    RUN_TEST(test_check_draw);
    RUN_TEST(test_verdict_digest);
    RUN_TEST(test_segment_trace);
    RUN_TEST(test_address_order);
    return gd_test_finish();
}
