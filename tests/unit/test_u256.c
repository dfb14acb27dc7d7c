/* 256-bit amounts: parsing, formatting and exact, overflow-reporting arithmetic. */
#include "chain/module/u256.h"
#include "tests/support/testkit.h"

#define MAX_DEC "115792089237316195423570985008687907853269984665640564039457584007913129639935"
#define P64_DEC "18446744073709551616"
#define P128_DEC "340282366920938463463374607431768211456"
#define P192_DEC "6277101735386680763835789423207666416102355444464034512896"

static gd_u256 u(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3) {
    gd_u256 v = {{w0, w1, w2, w3}};
    return v;
}

static const gd_u256 sentinel = {{0x1111, 0x2222, 0x3333, 0x4444}};

static int eq(const gd_u256 *a, const gd_u256 *b) { return gd_u256_cmp(a, b) == 0; }

static int formats_as(const gd_u256 *v, const char *dec) {
    char buf[GD_U256_DEC_MAX + 1];
    gd_u256_format(buf, v);
    if (strcmp(buf, dec) != 0) {
        fprintf(stderr, "  formatted %s, expected %s\n", buf, dec);
        return 0;
    }
    return 1;
}

static int parses_as(const char *dec, gd_u256 want) {
    gd_u256 v = sentinel;
    if (gd_u256_parse(&v, dec) != GD_OK) {
        fprintf(stderr, "  '%s' did not parse: %s\n", dec, gd_error_detail());
        return 0;
    }
    return eq(&v, &want);
}

static void test_parse_known(void) {
    const uint64_t M = UINT64_MAX;
    CHECK(parses_as("0", u(0, 0, 0, 0)));
    CHECK(parses_as("1", u(1, 0, 0, 0)));
    CHECK(parses_as("10", u(10, 0, 0, 0)));
    CHECK(parses_as("18446744073709551615", u(M, 0, 0, 0)));
    CHECK(parses_as(P64_DEC, u(0, 1, 0, 0)));
    CHECK(parses_as("18446744073709551617", u(1, 1, 0, 0)));
    CHECK(parses_as("340282366920938463463374607431768211455", u(M, M, 0, 0)));
    CHECK(parses_as(P128_DEC, u(0, 0, 1, 0)));
    CHECK(parses_as(P192_DEC, u(0, 0, 0, 1)));
    CHECK(parses_as(MAX_DEC, u(M, M, M, M)));
    /* 2^255 */
    CHECK(parses_as("57896044618658097711785492504343953926634992332820282019728792003956564819968",
                    u(0, 0, 0, (uint64_t)1 << 63)));
    /* 78 digits below the bound, and 10^77. */
    CHECK(parses_as("99999999999999999999999999999999999999999999999999999999999999999999999999999",
                    u(0xffffffffffffffffu, 0xaa987b6e6fd29fffu, 0x49ef0eb713f39ebeu,
                      0xdd15fe86affad912u)));
}

static void test_parse_rejects(void) {
    const char *bad[] = {
        "",
        "00",
        "01",
        "007",
        "-1",
        "+1",
        " 1",
        "1 ",
        "1.0",
        "1e3",
        "0x10",
        "12a",
        /* 2^256, one above the bound */
        "115792089237316195423570985008687907853269984665640564039457584007913129639936",
        /* same length, far above */
        "999999999999999999999999999999999999999999999999999999999999999999999999999999",
        "200000000000000000000000000000000000000000000000000000000000000000000000000000",
        /* 79 digits */
        "1000000000000000000000000000000000000000000000000000000000000000000000000000000",
        /* the bound with a leading zero (79 characters) */
        ("0" MAX_DEC),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gd_u256 v = sentinel;
        gd_status st = gd_u256_parse(&v, bad[i]);
        if (st != GD_ERR_PARSE)
            fprintf(stderr, "  '%s' gave %s\n", bad[i], gd_status_name(st));
        CHECK(st == GD_ERR_PARSE);
        CHECK(eq(&v, &sentinel));
    }
}

static void test_format(void) {
    const uint64_t M = UINT64_MAX;
    gd_u256 v = u(0, 0, 0, 0);
    CHECK(formats_as(&v, "0"));
    v = u(7, 0, 0, 0);
    CHECK(formats_as(&v, "7"));
    v = u(0, 1, 0, 0);
    CHECK(formats_as(&v, P64_DEC));
    v = u(0, 0, 1, 0);
    CHECK(formats_as(&v, P128_DEC));
    v = u(0, 0, 0, 1);
    CHECK(formats_as(&v, P192_DEC));
    v = u(M, M, M, M);
    CHECK(formats_as(&v, MAX_DEC));
    CHECK(strlen(MAX_DEC) == GD_U256_DEC_MAX);
    gd_u256_from_u64(&v, M);
    CHECK(formats_as(&v, "18446744073709551615"));
    /* Powers of ten keep their zeros. */
    char dec[GD_U256_DEC_MAX + 2] = "1";
    gd_u256_from_u64(&v, 1);
    for (int i = 1; i < GD_U256_DEC_MAX; i++) {
        CHECK(gd_u256_mul_u64(&v, &v, 10));
        strcat(dec, "0");
        CHECK(formats_as(&v, dec));
        CHECK(parses_as(dec, v));
    }
    CHECK(!gd_u256_mul_u64(&v, &v, 10)); /* 10^78 > 2^256 */
}

/* A small deterministic generator: splitmix64. */
static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Random values with a mix of magnitudes, so carries cross every limb. */
static gd_u256 rnd(uint64_t *s) {
    gd_u256 v = u(rng_next(s), rng_next(s), rng_next(s), rng_next(s));
    int limbs = (int)(rng_next(s) % 5);
    for (int i = limbs; i < 4; i++)
        v.w[i] = 0;
    if (rng_next(s) % 4 == 0)
        v.w[rng_next(s) % 4] = UINT64_MAX;
    return v;
}

static void test_round_trip(void) {
    uint64_t s = 42;
    for (int i = 0; i < 2000; i++) {
        gd_u256 v = rnd(&s), back = sentinel;
        char buf[GD_U256_DEC_MAX + 1];
        gd_u256_format(buf, &v);
        CHECK_OK(gd_u256_parse(&back, buf));
        CHECK(eq(&v, &back));
    }
}

static void test_add(void) {
    const uint64_t M = UINT64_MAX;
    gd_u256 max = u(M, M, M, M), one = u(1, 0, 0, 0), zero = u(0, 0, 0, 0), r = sentinel;
    CHECK(gd_u256_add(&r, &max, &zero) && eq(&r, &max));
    r = sentinel;
    CHECK(!gd_u256_add(&r, &max, &one));
    CHECK(eq(&r, &sentinel));
    CHECK(!gd_u256_add(&r, &one, &max));
    CHECK(!gd_u256_add(&r, &max, &max));
    CHECK(eq(&r, &sentinel));
    gd_u256 a = u(M, 0, 0, 0);
    CHECK(gd_u256_add(&r, &a, &one) && eq(&r, &(gd_u256){{0, 1, 0, 0}}));
    a = u(M, M, M, 0);
    CHECK(gd_u256_add(&r, &a, &one) && eq(&r, &(gd_u256){{0, 0, 0, 1}}));
    /* A carry into a limb that then overflows only with the carry. */
    a = u(M, M - 1, 0, 0);
    gd_u256 b = u(1, 1, 0, 0);
    CHECK(gd_u256_add(&r, &a, &b) && eq(&r, &(gd_u256){{0, 0, 1, 0}}));
    a = u(M - 1, M, M, M);
    CHECK(gd_u256_add(&r, &a, &one) && eq(&r, &max));
    a = u(M, M, M, M - 1);
    CHECK(gd_u256_add(&r, &a, &one) && eq(&r, &(gd_u256){{0, 0, 0, M}}));
    /* 2^255 + 2^255 overflows. */
    a = u(0, 0, 0, (uint64_t)1 << 63);
    r = sentinel;
    CHECK(!gd_u256_add(&r, &a, &a) && eq(&r, &sentinel));
    /* Aliasing: out is a, out is b, all three the same. */
    a = u(5, 0, 0, 0);
    b = u(M, 2, 0, 0);
    CHECK(gd_u256_add(&a, &a, &b) && eq(&a, &(gd_u256){{4, 3, 0, 0}}));
    a = u(5, 0, 0, 0);
    CHECK(gd_u256_add(&b, &a, &b) && eq(&b, &(gd_u256){{4, 3, 0, 0}}));
    a = u(M, M, 0, 7);
    CHECK(gd_u256_add(&a, &a, &a) && eq(&a, &(gd_u256){{M - 1, M, 1, 14}}));
    a = max;
    CHECK(!gd_u256_add(&a, &a, &a) && eq(&a, &max));
}

static void test_sub(void) {
    const uint64_t M = UINT64_MAX;
    gd_u256 max = u(M, M, M, M), one = u(1, 0, 0, 0), zero = u(0, 0, 0, 0), r = sentinel;
    CHECK(!gd_u256_sub(&r, &zero, &one) && eq(&r, &sentinel));
    CHECK(!gd_u256_sub(&r, &one, &max) && eq(&r, &sentinel));
    gd_u256 a = u(0, 0, 0, 1), b = u(1, 0, 0, 1);
    CHECK(!gd_u256_sub(&r, &a, &b) && eq(&r, &sentinel)); /* differs only in a low limb */
    CHECK(gd_u256_sub(&r, &max, &max) && gd_u256_is_zero(&r));
    CHECK(gd_u256_sub(&r, &one, &one) && gd_u256_is_zero(&r));
    CHECK(gd_u256_sub(&r, &max, &zero) && eq(&r, &max));
    a = u(0, 1, 0, 0); /* 2^64 - 1 borrows across one limb */
    CHECK(gd_u256_sub(&r, &a, &one) && eq(&r, &(gd_u256){{M, 0, 0, 0}}));
    a = u(0, 0, 0, 1); /* 2^192 - 1 borrows across three */
    CHECK(gd_u256_sub(&r, &a, &one) && eq(&r, &(gd_u256){{M, M, M, 0}}));
    a = u(0, 0, 1, 0);
    b = u(M, M, 0, 0);
    CHECK(gd_u256_sub(&r, &a, &b) && eq(&r, &one));
    /* A borrow that meets an equal limb: (2^64 + 5) - (2^64 + 6) is negative,
     * (2^128 + 5) - (2^64 + 6) is not. */
    a = u(5, 1, 0, 0);
    b = u(6, 1, 0, 0);
    r = sentinel;
    CHECK(!gd_u256_sub(&r, &a, &b) && eq(&r, &sentinel));
    a = u(5, 0, 1, 0);
    CHECK(gd_u256_sub(&r, &a, &b) && eq(&r, &(gd_u256){{M, M - 1, 0, 0}}));
    /* Aliasing. */
    a = u(10, 1, 0, 0);
    b = u(11, 0, 0, 0);
    CHECK(gd_u256_sub(&a, &a, &b) && eq(&a, &(gd_u256){{M, 0, 0, 0}}));
    a = u(10, 1, 0, 0);
    CHECK(gd_u256_sub(&b, &a, &b) && eq(&b, &(gd_u256){{M, 0, 0, 0}}));
    a = u(3, 4, 5, 6);
    CHECK(gd_u256_sub(&a, &a, &a) && gd_u256_is_zero(&a));
    a = u(3, 0, 0, 0);
    b = u(4, 0, 0, 0);
    CHECK(!gd_u256_sub(&a, &a, &b) && eq(&a, &(gd_u256){{3, 0, 0, 0}}));
}

static void test_mul(void) {
    const uint64_t M = UINT64_MAX;
    gd_u256 max = u(M, M, M, M), r = sentinel, a;
    CHECK(gd_u256_mul_u64(&r, &max, 1) && eq(&r, &max));
    CHECK(gd_u256_mul_u64(&r, &max, 0) && gd_u256_is_zero(&r));
    r = sentinel;
    CHECK(!gd_u256_mul_u64(&r, &max, 2) && eq(&r, &sentinel));
    /* (2^64 - 1)^2 = 2^128 - 2^65 + 1 */
    a = u(M, 0, 0, 0);
    CHECK(gd_u256_mul_u64(&r, &a, M) && eq(&r, &(gd_u256){{1, M - 1, 0, 0}}));
    CHECK(formats_as(&r, "340282366920938463426481119284349108225"));
    /* 2^192 * 2^63 = 2^255 fits; * 2^64 does not; a high partial product
     * that overflows only through a carry. */
    a = u(0, 0, 0, 1);
    CHECK(gd_u256_mul_u64(&r, &a, (uint64_t)1 << 63) && eq(&r, &(gd_u256){{0, 0, 0, (uint64_t)1 << 63}}));
    r = sentinel;
    a = u(0, 0, M, 0);
    CHECK(gd_u256_mul_u64(&r, &a, M) && eq(&r, &(gd_u256){{0, 0, 1, M - 1}}));
    a = u(0, 0, M, 1);
    r = sentinel;
    CHECK(!gd_u256_mul_u64(&r, &a, M) && eq(&r, &sentinel));
    a = u(M, M, M, 0); /* (2^192 - 1) * (2^64 - 1) = 2^256 - 2^192 - 2^64 + 1 */
    CHECK(gd_u256_mul_u64(&r, &a, M) && eq(&r, &(gd_u256){{1, M, M, M - 1}}));
    /* Aliasing out with a. */
    a = u(3, 0, 0, 0);
    CHECK(gd_u256_mul_u64(&a, &a, (uint64_t)1 << 63) && eq(&a, &(gd_u256){{(uint64_t)1 << 63, 1, 0, 0}}));
    a = max;
    CHECK(!gd_u256_mul_u64(&a, &a, 3) && eq(&a, &max));
}

static void test_divmod(void) {
    const uint64_t M = UINT64_MAX;
    gd_u256 max = u(M, M, M, M), q = sentinel, a;
    CHECK(gd_u256_divmod_u64(&q, &max, 10) == 5);
    CHECK(formats_as(&q, "11579208923731619542357098500868790785326998466564056403945758400791312963993"));
    /* 2^256 - 1 = (2^64 - 1)(2^192 + 2^128 + 2^64 + 1) */
    CHECK(gd_u256_divmod_u64(&q, &max, M) == 0 && eq(&q, &(gd_u256){{1, 1, 1, 1}}));
    CHECK(gd_u256_divmod_u64(&q, &max, 1) == 0 && eq(&q, &max));
    CHECK(gd_u256_divmod_u64(&q, &max, 2) == 1 && eq(&q, &(gd_u256){{M, M, M, M >> 1}}));
    CHECK(gd_u256_divmod_u64(&q, &max, (uint64_t)1 << 63) == M >> 1);
    CHECK(eq(&q, &(gd_u256){{M, M, M, 1}}));
    a = u(0, 1, 0, 0); /* 2^64 / (2^64 - 1) = 1 rem 1 */
    CHECK(gd_u256_divmod_u64(&q, &a, M) == 1 && eq(&q, &(gd_u256){{1, 0, 0, 0}}));
    a = u(0, 0, 1, 0); /* 2^128 / 10 */
    CHECK(gd_u256_divmod_u64(&q, &a, 10) == 6);
    CHECK(formats_as(&q, "34028236692093846346337460743176821145"));
    a = u(7, 0, 0, 0); /* divisor above the dividend */
    CHECK(gd_u256_divmod_u64(&q, &a, 9) == 7 && gd_u256_is_zero(&q));
    a = u(0, 0, 0, 0);
    CHECK(gd_u256_divmod_u64(&q, &a, 3) == 0 && gd_u256_is_zero(&q));
    /* q may alias a. */
    a = max;
    CHECK(gd_u256_divmod_u64(&a, &a, 1000000007u) == 792845265u);
    gd_u256 back;
    CHECK(gd_u256_mul_u64(&back, &a, 1000000007u));
    gd_u256 rem = u(792845265u, 0, 0, 0);
    CHECK(gd_u256_add(&back, &back, &rem) && eq(&back, &max));
}

/* Identities on random values: q*d + r == a, (a+b)-b == a, (a*m)/m == a. */
static void test_random_identities(void) {
    uint64_t s = 7;
    for (int i = 0; i < 3000; i++) {
        gd_u256 a = rnd(&s), b = rnd(&s), r, back;
        uint64_t d = rng_next(&s) >> (rng_next(&s) % 64);
        if (d == 0)
            d = 1;
        gd_u256 q;
        uint64_t rem = gd_u256_divmod_u64(&q, &a, d);
        CHECK(rem < d);
        CHECK(gd_u256_mul_u64(&back, &q, d));
        gd_u256 rv = u(rem, 0, 0, 0);
        CHECK(gd_u256_add(&back, &back, &rv) && eq(&back, &a));

        if (gd_u256_add(&r, &a, &b)) {
            CHECK(gd_u256_cmp(&r, &a) >= 0 && gd_u256_cmp(&r, &b) >= 0);
            CHECK(gd_u256_sub(&back, &r, &b) && eq(&back, &a));
            CHECK(gd_u256_sub(&back, &r, &a) && eq(&back, &b));
        } else {
            /* Overflow exactly when b > max - a. */
            gd_u256 max = u(UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX), room;
            CHECK(gd_u256_sub(&room, &max, &a) && gd_u256_cmp(&b, &room) > 0);
        }
        int c = gd_u256_cmp(&a, &b);
        CHECK(gd_u256_cmp(&b, &a) == -c);
        CHECK(gd_u256_sub(&r, &a, &b) == (c >= 0));

        if (gd_u256_mul_u64(&r, &a, d)) {
            CHECK(gd_u256_divmod_u64(&back, &r, d) == 0 && eq(&back, &a));
        } else {
            /* Overflow exactly when a > max / d. */
            gd_u256 max = u(UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX), lim;
            (void)gd_u256_divmod_u64(&lim, &max, d);
            CHECK(gd_u256_cmp(&a, &lim) > 0);
        }
    }
}

static void test_small(void) {
    gd_u256 a, b;
    gd_u256_from_u64(&a, 0);
    CHECK(gd_u256_is_zero(&a));
    a = u(0, 0, 0, 1);
    CHECK(!gd_u256_is_zero(&a));
    a = u(0, 0, 0, 1);
    b = u(UINT64_MAX, UINT64_MAX, UINT64_MAX, 0);
    CHECK(gd_u256_cmp(&a, &b) == 1 && gd_u256_cmp(&b, &a) == -1 && gd_u256_cmp(&a, &a) == 0);
    a = sentinel;
    gd_u256_from_u64(&a, 9);
    CHECK(eq(&a, &(gd_u256){{9, 0, 0, 0}}));
}

int main(void) {
    RUN_TEST(test_parse_known);
    RUN_TEST(test_parse_rejects);
    RUN_TEST(test_format);
    RUN_TEST(test_round_trip);
    RUN_TEST(test_add);
    RUN_TEST(test_sub);
    RUN_TEST(test_mul);
    RUN_TEST(test_divmod);
    RUN_TEST(test_random_identities);
    RUN_TEST(test_small);
    return gd_test_finish();
}
