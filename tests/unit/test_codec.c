/* The pseudo-gradient codecs (trainer/codec.h): spec parsing, every codec's
 * error bound and determinism on random vectors, pinned golden encodings,
 * error feedback over many rounds, and the decoder's rejections. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "tests/support/testkit.h"
#include "trainer/codec.h"

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static gd_codec codec_of(const char *spec) {
    gd_codec c = {GD_CODEC_NONE, 0};
    CHECK_OK(gd_codec_parse(&c, spec));
    return c;
}

/* ---- spec text ---------------------------------------------------------- */

static void test_parse_format(void) {
    static const struct {
        const char *spec, *canonical;
        gd_codec_kind kind;
        uint32_t ppm;
    } good[] = {
        {"none", "none", GD_CODEC_NONE, 0},
        {"bf16", "bf16", GD_CODEC_BF16, 0},
        {"int8", "int8", GD_CODEC_INT8, 0},
        {"int4", "int4", GD_CODEC_INT4, 0},
        {"topk:0.01", "topk:0.01", GD_CODEC_TOPK, 10000},
        {"topk:0.3", "topk:0.3", GD_CODEC_TOPK, 300000},
        {"topk:0.0100", "topk:0.01", GD_CODEC_TOPK, 10000},
        {"topk:0.000001", "topk:0.000001", GD_CODEC_TOPK, 1},
        {"topk:0.123456", "topk:0.123456", GD_CODEC_TOPK, 123456},
        {"topk:0.12345600", "topk:0.123456", GD_CODEC_TOPK, 123456},
        {"topk:1", "topk:1", GD_CODEC_TOPK, 1000000},
        {"topk:1.000", "topk:1", GD_CODEC_TOPK, 1000000},
        {"topk:00.5", "topk:0.5", GD_CODEC_TOPK, 500000},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        gd_codec c;
        CHECK_OK(gd_codec_parse(&c, good[i].spec));
        CHECK(c.kind == good[i].kind);
        CHECK(c.topk_ppm == good[i].ppm);
        char text[32];
        gd_codec_format(&c, text, sizeof text);
        CHECK_STR_EQ(text, good[i].canonical);
        gd_codec again;
        CHECK_OK(gd_codec_parse(&again, text));
        CHECK(again.kind == c.kind && again.topk_ppm == c.topk_ppm);
    }
    /* Every ppm formats to text that parses back to it. */
    for (uint32_t ppm = 1; ppm <= GD_CODEC_PPM; ppm += 7919) {
        gd_codec c = {GD_CODEC_TOPK, ppm}, back;
        char text[32];
        gd_codec_format(&c, text, sizeof text);
        CHECK_OK(gd_codec_parse(&back, text));
        CHECK(back.kind == GD_CODEC_TOPK && back.topk_ppm == ppm);
    }
    static const char *const bad[] = {
        "",          "int9",        "INT8",      "int8 ",       " int8",      "int",
        "topk",      "topk:",       "topk:0",    "topk:0.0",    "topk:1.5",   "topk:x",
        "topk:2",    "topk:10",     "topk:-0.1", "topk:+0.1",   "topk:.5",    "topk:1.",
        "topk:0.01x", "topk:1e-2",  "topk:0.0000001", "topk:0.0000015", "topk: 0.1",
        "topk:1.0000001", "topk:99999999999999999999", "bf16:0.1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gd_codec c;
        CHECK_STATUS(gd_codec_parse(&c, bad[i]), GD_ERR_INVALID);
    }
    /* Formatting truncates to the buffer. */
    gd_codec c = {GD_CODEC_TOPK, 10000};
    char small[6] = "xxxxx";
    gd_codec_format(&c, small, sizeof small);
    CHECK_STR_EQ(small, "topk:");
    gd_codec_format(&c, small, 0);
    CHECK_STR_EQ(small, "topk:");
}

/* ---- random vectors ----------------------------------------------------- */

enum { DIST_NORMAL, DIST_HEAVY, DIST_ZEROS, DIST_TINY, DIST_HUGE, DIST_WIDE, DIST_COUNT };

static void fill(float *x, size_t n, int dist, uint64_t seed) {
    uint32_t ids[4] = {0xc0dec, (uint32_t)dist, (uint32_t)n, 0};
    gd_rng rng;
    gd_rng_init(&rng, seed, ids);
    for (size_t i = 0; i < n; i++) {
        double g = gd_rng_normal12(&rng);
        double u = gd_rng_uniform(&rng);
        double v = 0;
        switch (dist) {
        case DIST_NORMAL: v = 0.01 * g; break;
        case DIST_HEAVY: v = 1e-3 * g / (u * u + 1e-6); break; /* Cauchy-like tails */
        case DIST_ZEROS:
            /* Whole zero blocks, scattered zeros and negative zeros. */
            v = (i / 100) % 3 == 1 || u < 0.5 ? (u < 0.25 ? -0.0 : 0.0) : g;
            break;
        case DIST_TINY:
            /* Blocks of subnormals, of normals below 2^-64 and of larger ones. */
            switch ((i / 40) % 4) {
            case 0: v = g * 0x1p-132; break;
            case 1: v = g * 0x1p-90; break;
            case 2: v = g * 0x1p-147; break;
            default: v = g * (u < 0.1 ? 1e-3 : 0x1p-140); break;
            }
            break;
        case DIST_HUGE: v = g * 5e37; break; /* |v| <= 3e38 < FLT_MAX */
        case DIST_WIDE: {
            /* Magnitudes 2^-149 .. 2^120, both signs. */
            double e = floor(u * 270.0) - 149.0;
            v = (g < 0 ? -1 : 1) * ldexp(1.0 + fmod(fabs(g), 1.0), (int)e);
            break;
        }
        }
        x[i] = (float)v;
    }
}

/* Allocated encoding; checks the size against the bound. */
static uint8_t *encode(const gd_codec *c, const float *x, size_t n, size_t *len, float *decoded) {
    size_t bound = gd_codec_chunk_bound(c, n);
    uint8_t *out = malloc(bound + 1);
    *len = 0;
    CHECK_OK(gd_codec_encode_chunk(c, out, bound, x, n, len, decoded));
    CHECK(*len <= bound);
    if (c->kind != GD_CODEC_TOPK)
        CHECK(*len == bound);
    return out;
}

/* Unsigned LEB128, trusting the input (it decoded already). */
static uint32_t get_leb(const uint8_t *p, size_t *pos) {
    uint32_t v = 0;
    for (unsigned s = 0;; s += 7) {
        uint8_t b = p[(*pos)++];
        v |= (uint32_t)(b & 0x7f) << s;
        if (!(b & 0x80))
            return v;
    }
}

typedef struct key_index {
    uint32_t key, index;
} key_index;

static int by_key_desc(const void *a, const void *b) {
    const key_index *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Reference quantiser for blocks with m >= 2^-64 (where the codec's
 * unbounded-exponent rule is plain float arithmetic): roundf is exactly
 * rounding half away from zero. */
static int32_t ref_q(float x, float m, float lim) {
    volatile float inv = lim / m;
    volatile float t = x * inv;
    float r = roundf(t);
    return r > lim ? (int32_t)lim : r < -lim ? -(int32_t)lim : (int32_t)r;
}

static int32_t int8_at(const uint8_t *p) { return (int8_t)p[0]; }

static int32_t int4_at(const uint8_t *packed, size_t j) {
    int v = j % 2 ? packed[j / 2] >> 4 : packed[j / 2] & 15;
    return (v ^ 8) - 8;
}

/* Checks the documented bound for one block (int8 / int4): y against x, q
 * against the reference quantiser. */
static void check_block(const float *x, const float *y, size_t m, const uint8_t *blk, float lim,
                        int int4) {
    float amax = 0;
    for (size_t i = 0; i < m; i++)
        amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
    float scale;
    memcpy(&scale, blk, 4);
    CHECK(f2u(scale) == f2u(amax / lim));
    double s = (double)amax / lim;
    for (size_t i = 0; i < m; i++) {
        double err = fabs((double)y[i] - (double)x[i]);
        if (!(err <= s * 0.5 * (1 + 0x1p-10) + 0x1p-140)) {
            fprintf(stderr, "  value %zu: x %a y %a scale %a\n", i, (double)x[i], (double)y[i],
                    (double)scale);
            CHECK(err <= s * 0.5 * (1 + 0x1p-10) + 0x1p-140);
            return;
        }
        int32_t q = int4 ? int4_at(blk + 4, i) : int8_at(blk + 4 + i);
        if (amax == 0)
            CHECK(q == 0);
        else if (amax >= 0x1p-64f)
            CHECK(q == ref_q(x[i], amax, lim));
        CHECK(f2u(y[i]) == f2u((float)q * scale));
    }
}

static void check_bounds(const gd_codec *c, const float *x, size_t n, const uint8_t *bytes,
                         size_t len, const float *y) {
    switch (c->kind) {
    case GD_CODEC_NONE: CHECK(memcmp(x, y, n * sizeof(float)) == 0); break;
    case GD_CODEC_BF16:
        for (size_t i = 0; i < n; i++) {
            double err = fabs((double)y[i] - (double)x[i]);
            /* Half a bf16 ulp; below 2^-126 the bf16 grid is 2^-133. */
            CHECK(err <= fmax(0x1p-8 * fabs((double)x[i]), 0x1p-134));
            CHECK((f2u(y[i]) & 0xffff) == 0);
        }
        break;
    case GD_CODEC_INT8:
        for (size_t off = 0, at = 0; off < n; off += 64) {
            size_t m = n - off < 64 ? n - off : 64;
            check_block(x + off, y + off, m, bytes + at, 127.0f, 0);
            at += 4 + m;
        }
        break;
    case GD_CODEC_INT4:
        for (size_t off = 0, at = 0; off < n; off += 32) {
            size_t m = n - off < 32 ? n - off : 32;
            check_block(x + off, y + off, m, bytes + at, 7.0f, 1);
            at += 4 + (m + 1) / 2;
        }
        break;
    case GD_CODEC_TOPK: {
        size_t k = ((uint64_t)n * c->topk_ppm + 999999) / 1000000;
        k = k < 1 ? 1 : k;
        uint32_t k_got;
        memcpy(&k_got, bytes, 4);
        bool bitmap = (k_got & 0x80000000u) != 0;
        k_got &= 0x7fffffffu;
        CHECK(k_got == k);
        if (k_got != k)
            return;
        /* The index form is whichever is shorter (a bitmap only when
         * strictly shorter than the varints). */
        size_t vbytes = 4 * ((k + 31) / 32) + (k + 1) / 2, bitmap_bytes = (n + 7) / 8;
        size_t ibytes = len - 4 - vbytes;
        CHECK(len > 4 + vbytes);
        CHECK(bitmap ? ibytes == bitmap_bytes : ibytes <= bitmap_bytes);
        /* The kept set must be exactly the k largest |x|, lower index first
         * among equals. */
        key_index *ref = malloc(n * sizeof *ref);
        char *kept = calloc(n, 1);
        for (size_t i = 0; i < n; i++)
            ref[i] = (key_index){f2u(x[i]) & 0x7fffffff, (uint32_t)i};
        qsort(ref, n, sizeof *ref, by_key_desc);
        for (size_t j = 0; j < k; j++)
            kept[ref[j].index] = 1;
        float kmin = u2f(ref[k - 1].key);
        /* The indices name the kept set in increasing order... */
        size_t pos = 4 + vbytes, idx = 0;
        float *kx = malloc(k * sizeof *kx), *ky = malloc(k * sizeof *ky);
        for (size_t j = 0; j < k; j++) {
            if (bitmap) {
                size_t from = j == 0 ? 0 : idx + 1;
                for (idx = from; idx < n && !(bytes[pos + idx / 8] >> (idx % 8) & 1u); idx++)
                    ;
            } else {
                idx = (j == 0 ? 0 : idx + 1) + get_leb(bytes, &pos);
            }
            CHECK(idx < n && kept[idx] == 1);
            if (idx >= n)
                break;
            kept[idx] = 2;
            kx[j] = x[idx];
            ky[j] = y[idx];
        }
        CHECK(bitmap ? pos + bitmap_bytes == len : pos == len);
        /* ... their values are int4 blocks of 32 kept values ... */
        for (size_t off = 0, at = 4; off < k; off += 32) {
            size_t m = k - off < 32 ? k - off : 32;
            check_block(kx + off, ky + off, m, bytes + at, 7.0f, 1);
            at += 4 + (m + 1) / 2;
        }
        /* ... and everything else decodes to 0. */
        for (size_t i = 0; i < n; i++) {
            if (kept[i] != 2) {
                CHECK(f2u(y[i]) == 0);
                CHECK(fabsf(x[i]) <= kmin);
            }
        }
        free(kx);
        free(ky);
        free(ref);
        free(kept);
        break;
    }
    }
}

static const char *const k_specs[] = {"none", "bf16", "int8", "int4", "topk:0.01", "topk:0.3",
                                      "topk:1"};

static void round_trip(const gd_codec *c, const float *x, size_t n) {
    float *dec = malloc(n * sizeof *dec), *y = malloc(n * sizeof *y);
    size_t len, len2;
    uint8_t *bytes = encode(c, x, n, &len, dec);
    CHECK_OK(gd_codec_decode_chunk(c, bytes, len, y, n));
    CHECK(memcmp(dec, y, n * sizeof *y) == 0);
    check_bounds(c, x, n, bytes, len, y);
    /* Deterministic: again, and without decoded. */
    uint8_t *again = encode(c, x, n, &len2, NULL);
    CHECK(len2 == len && memcmp(bytes, again, len) == 0);
    free(again);
    /* In place: decoded may be x itself. */
    float *z = malloc(n * sizeof *z);
    memcpy(z, x, n * sizeof *z);
    again = encode(c, z, n, &len2, z);
    CHECK(len2 == len && memcmp(bytes, again, len) == 0);
    CHECK(memcmp(z, y, n * sizeof *y) == 0);
    free(again);
    free(z);
    free(bytes);
    free(dec);
    free(y);
}

static void test_random_vectors(void) {
    static const size_t sizes[] = {1, 2, 7, 31, 32, 33, 63, 64, 65, 100, 1000, 4099, 100003};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        float *x = malloc(n * sizeof *x);
        for (int dist = 0; dist < DIST_COUNT; dist++) {
            fill(x, n, dist, 1000 + si);
            for (size_t ci = 0; ci < sizeof k_specs / sizeof k_specs[0]; ci++) {
                gd_codec c = codec_of(k_specs[ci]);
                /* The O(n log n) reference selection is the slow part. */
                if (n == 100003 && c.kind == GD_CODEC_TOPK && dist != DIST_NORMAL &&
                    dist != DIST_ZEROS)
                    continue;
                round_trip(&c, x, n);
            }
        }
        free(x);
    }
}

/* Equal magnitudes: the lowest indices win, whatever the signs. */
static void test_topk_ties(void) {
    float x[40];
    for (int i = 0; i < 40; i++)
        x[i] = i % 2 ? -0.25f : 0.25f;
    x[30] = 0.5f;
    x[35] = -0.5f;
    gd_codec c = {GD_CODEC_TOPK, 100000}; /* k = 4 */
    size_t len;
    float y[40];
    uint8_t *bytes = encode(&c, x, 40, &len, y);
    /* 04000000, then the values 0.25 -0.25 0.5 -0.5 as one int4 block:
     * scale 0.5 / 7, q 4 -4 7 -7 (0.25 * 14 = 3.5 -> 4), nibbles 4 c 7 9;
     * then the indices 0, 1 (gap 0), 30 (gap 28), 35 (gap 4): four varint
     * bytes beat a five-byte bitmap. */
    float scale = 0.5f / 7.0f;
    uint8_t head[8] = {4, 0, 0, 0};
    memcpy(head + 4, &scale, 4);
    CHECK(len == 14 && memcmp(bytes, head, 8) == 0);
    CHECK_HEX_EQ(bytes + 8, len - 8, "c49700001c04");
    for (int i = 0; i < 40; i++)
        CHECK((y[i] != 0) == (i == 0 || i == 1 || i == 30 || i == 35));
    check_bounds(&c, x, 40, bytes, len, y);
    free(bytes);
    /* All zero: scale 0, the first k indices. */
    memset(x, 0, sizeof x);
    bytes = encode(&c, x, 40, &len, y);
    CHECK_HEX_EQ(bytes, len, "0400000000000000000000000000");
    for (int i = 0; i < 40; i++)
        CHECK(f2u(y[i]) == 0);
    free(bytes);
}

/* ---- golden vectors ----------------------------------------------------- */

/* Derived by hand from the formulas in trainer/codec.h and codec.c:
 *
 * A = {127, -2.5, 2.5, 0.5, -0.5, 1 + 2^-8, -(1 + 3 * 2^-8), -126.5, -0.0,
 *      100.5 - 2^-17 (the float just below 100.5)}.
 *
 * int8: one short block; m = 127, so scale = 127 / 127 = 1 (0000803f) and
 *   127 / m = 1 exactly, so q = x rounded half away from zero: 127, -3, 3,
 *   1, -1, 1, -1, -127, 0, 100 = 7f fd 03 01 ff 01 ff 81 00 64.
 * bf16: the top 16 bits rounded to nearest even, little-endian: 127 = 42fe,
 *   -2.5 = c020, 2.5 = 4020, 0.5 = 3f00, -0.5 = bf00; 1 + 2^-8 = 3f808000
 *   ties to the even 3f80; -(1 + 3 * 2^-8) = bf818000 ties to the even bf82;
 *   -126.5 = c2fd; -0.0 = 8000; 42c8ffff rounds up to 42c9.
 * topk:0.3: k = (10 * 300000 + 999999) / 10^6 = 3: |x| 127 (index 0), 126.5
 *   (7) and 100.49999 (9). Their int4 block: scale 127 / 7 = 18.142857
 *   (92249141), q = rha(x * (7 / 127)) = 7, -7 (-6.97), 6 (5.54), nibbles
 *   7 9 6 = 97 06. The varints 0, 6, 1 would take 3 bytes, a bitmap of 10
 *   values 2, so the bitmap: bits 0 and 7 (81) and 9 (02), and the count's
 *   top bit set: LE32 0x80000003.
 *
 * B = {7, -2.5, 2.5, 0.5, -0.5, 1.5 - 2^-23, -6.5, -0.0, 3.5, -7}.
 * int4: m = 7, scale 1 (0000803f), 7 / m = 1, q = 7 -3 3 1 -1 1 -7 0 4 -7,
 *   nibbles 7 d 3 1 f 1 9 0 4 9, even index low: d7 13 1f 09 94. */
static void test_golden(void) {
    const float a[10] = {127.0f, -2.5f, 2.5f, 0.5f, -0.5f, 1.00390625f, -1.01171875f,
                         -126.5f, -0.0f, 100.49999237060546875f};
    const float b[10] = {7.0f, -2.5f, 2.5f, 0.5f, -0.5f, 1.49999988079071044921875f, -6.5f,
                         -0.0f, 3.5f, -7.0f};
    CHECK(f2u(a[9]) == 0x42c8ffff && f2u(b[5]) == 0x3fbfffff);
    static const struct {
        const char *spec;
        int input_b;
        const char *hex;
    } golden[] = {
        {"int8", 0, "0000803f7ffd0301ff01ff810064"},
        {"bf16", 0, "fe4220c02040003f00bf803f82bffdc20080c942"},
        {"topk:0.3", 0, "03000080922491419706" "8102"},
        {"int4", 1, "0000803fd7131f0994"},
        {"none", 1, "0000e040000020c0000020400000003f000000bfffffbf3f0000d0c000000080"
                    "000060400000e0c0"},
    };
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        gd_codec c = codec_of(golden[i].spec);
        const float *x = golden[i].input_b ? b : a;
        size_t len;
        float y[10], z[10];
        uint8_t *bytes = encode(&c, x, 10, &len, y);
        CHECK_HEX_EQ(bytes, len, golden[i].hex);
        /* And the pinned bytes decode to what the encoder said. */
        uint8_t pinned[64];
        size_t plen = gd_test_unhex(pinned, sizeof pinned, golden[i].hex);
        CHECK_OK(gd_codec_decode_chunk(&c, pinned, plen, z, 10));
        CHECK(memcmp(y, z, sizeof y) == 0);
        free(bytes);
    }
}

/* Power-of-two invariance: a block of subnormals (the 2^64 pre-scaling
 * path) quantises to the same q as the same block times 2^100 (plain
 * arithmetic), as the unbounded-exponent rule says. */
static void test_tiny_blocks(void) {
    gd_rng rng;
    uint32_t ids[4] = {7, 7, 7, 7};
    gd_rng_init(&rng, 99, ids);
    gd_codec c8 = {GD_CODEC_INT8, 0}, c4 = {GD_CODEC_INT4, 0}, ck = {GD_CODEC_TOPK, 500000};
    for (int round = 0; round < 50; round++) {
        float x[64], big[64];
        int bits = 1 + round % 23; /* subnormals of 1..23 significant bits */
        for (int i = 0; i < 64; i++) {
            int64_t half = (int64_t)1 << (bits - 1);
            int64_t v = (int64_t)gd_rng_below(&rng, (uint64_t)1 << bits) - half;
            x[i] = (float)v * 0x1p-149f;
            big[i] = (float)v * 0x1p-49f;
            CHECK(x[i] * 0x1p100f == big[i]);
        }
        const gd_codec *codecs[3] = {&c8, &c4, &ck};
        for (int ci = 0; ci < 3; ci++) {
            size_t la, lb;
            float ya[64], yb[64];
            uint8_t *ea = encode(codecs[ci], x, 64, &la, ya);
            uint8_t *eb = encode(codecs[ci], big, 64, &lb, yb);
            CHECK(la == lb);
            size_t head = ci == 2 ? 8 : 4;
            if (ci == 1) { /* two int4 blocks */
                CHECK(memcmp(ea + 4, eb + 4, 16) == 0 && memcmp(ea + 24, eb + 24, 16) == 0);
            } else {
                CHECK(memcmp(ea + head, eb + head, la - head) == 0);
            }
            check_bounds(codecs[ci], x, 64, ea, la, ya);
            free(ea);
            free(eb);
        }
    }
}

/* ---- error feedback ----------------------------------------------------- */

static double norm(const float *v, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)v[i] * v[i];
    return sqrt(s);
}

static void error_feedback(const char *spec, double max_ratio) {
    enum { N = 1000, ROUNDS = 200 };
    gd_codec c = codec_of(spec);
    float *x = malloc(N * sizeof *x), *e = calloc(N, sizeof *e), *v = malloc(N * sizeof *v);
    float *y = malloc(N * sizeof *y);
    double *sum_x = calloc(N, sizeof *sum_x), *sum_y = calloc(N, sizeof *sum_y);
    size_t bound = gd_codec_chunk_bound(&c, N);
    uint8_t *buf = malloc(bound);
    gd_rng rng;
    uint32_t ids[4] = {0xfeed, 0, 0, 0};
    gd_rng_init(&rng, 5, ids);
    double x_norm = 0, worst = 0, worst_early = 0, worst_late = 0;
    for (int t = 0; t < ROUNDS; t++) {
        for (size_t i = 0; i < N; i++)
            x[i] = (float)(0.01 * gd_rng_normal12(&rng));
        for (size_t i = 0; i < N; i++)
            v[i] = x[i] + e[i];
        size_t len;
        CHECK_OK(gd_codec_encode_chunk(&c, buf, bound, v, N, &len, NULL));
        CHECK_OK(gd_codec_decode_chunk(&c, buf, len, y, N));
        for (size_t i = 0; i < N; i++) {
            e[i] = v[i] - y[i];
            sum_x[i] += x[i];
            sum_y[i] += y[i];
        }
        x_norm = norm(x, N);
        double r = norm(e, N) / x_norm;
        worst = r > worst ? r : worst;
        if (t >= 50 && t < 100)
            worst_early = r > worst_early ? r : worst_early;
        if (t >= 150)
            worst_late = r > worst_late ? r : worst_late;
    }
    /* Bounded, and not growing like a random walk (which would be sqrt(3)
     * times larger at the end than in the early window). */
    if (!(worst <= max_ratio && worst_late <= 1.25 * worst_early))
        fprintf(stderr, "  %s: residual/input norm max %.4f, rounds 50-99 %.4f, 150-199 %.4f\n",
                spec, worst, worst_early, worst_late);
    CHECK(worst <= max_ratio);
    CHECK(worst_late <= 1.25 * worst_early);
    /* Nothing is lost: sum_t Q = sum_t x - e_T, up to float rounding in
     * x + e (v - y itself is exact). */
    double max_dev = 0;
    for (size_t i = 0; i < N; i++) {
        double dev = fabs(sum_y[i] - (sum_x[i] - e[i]));
        max_dev = dev > max_dev ? dev : max_dev;
    }
    CHECK(max_dev <= 1e-6);
    free(x);
    free(e);
    free(v);
    free(y);
    free(sum_x);
    free(sum_y);
    free(buf);
}

/* Limits about twice the observed plateaus (0.0065, 0.106 and 4.3 times one
 * round's norm): topk's residual holds what waits for its turn, about
 * 100 rounds of a coordinate's drift, yet stays flat after that. */
static void test_error_feedback(void) {
    error_feedback("int8", 0.015);
    error_feedback("int4", 0.2);
    error_feedback("topk:0.01", 8.0);
}

/* ---- rejections --------------------------------------------------------- */

static void expect_parse_error(const gd_codec *c, const uint8_t *bytes, size_t len, size_t n) {
    float *y = malloc(n * sizeof *y);
    CHECK_STATUS(gd_codec_decode_chunk(c, len ? bytes : NULL, len, y, n), GD_ERR_PARSE);
    free(y);
}

static void test_decode_rejects_lengths(void) {
    enum { N = 77 };
    float x[N];
    fill(x, N, DIST_NORMAL, 3);
    for (size_t ci = 0; ci < sizeof k_specs / sizeof k_specs[0]; ci++) {
        gd_codec c = codec_of(k_specs[ci]);
        size_t len;
        uint8_t *bytes = encode(&c, x, N, &len, NULL);
        uint8_t *copy = malloc(len + 1);
        /* Every truncation, into an exactly sized heap copy so ASan sees any
         * read past the end. */
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *t = malloc(cut ? cut : 1);
            memcpy(t, bytes, cut);
            expect_parse_error(&c, t, cut, N);
            free(t);
        }
        memcpy(copy, bytes, len);
        copy[len] = 0;
        expect_parse_error(&c, copy, len + 1, N);
        /* The right bytes for another count (topk bytes can be valid for
         * several counts). */
        if (c.kind != GD_CODEC_TOPK) {
            float y[N + 1];
            /* int4's odd-count padding nibble makes N + 1 the same length. */
            if (c.kind != GD_CODEC_INT4)
                CHECK(gd_codec_decode_chunk(&c, bytes, len, y, N + 1) != GD_OK);
            CHECK(gd_codec_decode_chunk(&c, bytes, len, y, N - 1) != GD_OK);
        }
        free(copy);
        free(bytes);
    }
}

static void put_f32(uint8_t *p, float f) { memcpy(p, &f, 4); }

static void test_decode_rejects_values(void) {
    float y[70];
    gd_codec none = {GD_CODEC_NONE, 0}, bf16 = {GD_CODEC_BF16, 0};
    gd_codec int8 = {GD_CODEC_INT8, 0}, int4 = {GD_CODEC_INT4, 0};
    uint8_t buf[512];

    /* none / bf16: non-finite values. */
    memset(buf, 0, sizeof buf);
    put_f32(buf + 4 * 66, NAN);
    expect_parse_error(&none, buf, 4 * 70, 70);
    put_f32(buf + 4 * 66, -INFINITY);
    expect_parse_error(&none, buf, 4 * 70, 70);
    put_f32(buf + 4 * 66, 1.0f);
    CHECK_OK(gd_codec_decode_chunk(&none, buf, 4 * 70, y, 70));
    memset(buf, 0, sizeof buf);
    buf[2 * 65] = 0x80, buf[2 * 65 + 1] = 0x7f; /* +Inf */
    expect_parse_error(&bf16, buf, 2 * 70, 70);
    buf[2 * 65] = 0xc0, buf[2 * 65 + 1] = 0xff; /* NaN */
    expect_parse_error(&bf16, buf, 2 * 70, 70);
    buf[2 * 65] = 0x7f, buf[2 * 65 + 1] = 0x7f; /* bf16 max: fine */
    CHECK_OK(gd_codec_decode_chunk(&bf16, buf, 2 * 70, y, 70));
    CHECK(f2u(y[65]) == 0x7f7f0000);

    /* int8 / int4: bad scales in the second block, -128 / -8 values, and
     * int4's padding nibble. */
    static const float bad_scales[] = {NAN, INFINITY, -1.0f, -0.0f, 3.0e38f, FLT_MAX / 100};
    for (size_t i = 0; i < sizeof bad_scales / sizeof bad_scales[0]; i++) {
        memset(buf, 0, sizeof buf);
        put_f32(buf + 68, bad_scales[i]);
        expect_parse_error(&int8, buf, 4 + 64 + 4 + 6, 70);
        memset(buf, 0, sizeof buf);
        put_f32(buf + 20, bad_scales[i]);
        if (bad_scales[i] != FLT_MAX / 100) /* 7 * FLT_MAX / 100 is finite */
            expect_parse_error(&int4, buf, 20 + 4 + 3, 37);
    }
    memset(buf, 0, sizeof buf);
    put_f32(buf, 1.0f);
    put_f32(buf + 68, 1.0f);
    CHECK_OK(gd_codec_decode_chunk(&int8, buf, 78, y, 70));
    buf[68 + 4 + 5] = 0x80;
    expect_parse_error(&int8, buf, 78, 70);
    buf[68 + 4 + 5] = 0x81;
    CHECK_OK(gd_codec_decode_chunk(&int8, buf, 78, y, 70));
    CHECK(y[69] == -127.0f);

    memset(buf, 0, sizeof buf);
    put_f32(buf, 1.0f);
    put_f32(buf + 20, 1.0f);
    CHECK_OK(gd_codec_decode_chunk(&int4, buf, 27, y, 37));
    buf[26] = 0x10; /* value 37 would be the padding nibble */
    expect_parse_error(&int4, buf, 27, 37);
    buf[26] = 0x08; /* value 36 = -8 */
    expect_parse_error(&int4, buf, 27, 37);
    buf[26] = 0x09;
    CHECK_OK(gd_codec_decode_chunk(&int4, buf, 27, y, 37));
    CHECK(y[36] == -7.0f);
    buf[26] = 0;
    buf[4 + 3] = 0x80; /* value 7 = -8 */
    expect_parse_error(&int4, buf, 27, 37);
}

/* A topk chunk from parts: the count field, then the int4 values and the
 * indices as hex. */
static size_t topk_chunk(uint8_t *out, uint32_t k, const char *tail_hex) {
    memcpy(out, &k, 4);
    return 4 + gd_test_unhex(out + 4, 64, tail_hex);
}

static void expect_topk_error(const gd_codec *c, uint32_t k, const char *tail, size_t n) {
    uint8_t buf[128];
    size_t len = topk_chunk(buf, k, tail);
    uint8_t *exact = malloc(len); /* exact size: any over-read shows under ASan */
    memcpy(exact, buf, len);
    expect_parse_error(c, exact, len, n);
    free(exact);
}

#define TOPK_BITMAP 0x80000000u
/* Three int4 values under scale 1: 7, -7, 5. */
#define V3 "0000803f" "9705"

static void test_decode_rejects_topk(void) {
    /* n = 10, k = 3: the bitmap form (2 bytes) is the canonical one. */
    gd_codec c = codec_of("topk:0.3");
    uint8_t buf[128];
    float y[10];
    size_t len = topk_chunk(buf, 3 | TOPK_BITMAP, V3 "8102");
    CHECK_OK(gd_codec_decode_chunk(&c, buf, len, y, 10));
    CHECK(y[0] == 7 && y[7] == -7 && y[9] == 5 && y[8] == 0);
    expect_topk_error(&c, 3, V3 "000601", 10); /* varints where a bitmap is shorter */
    /* Counts: 0, above n, or not ceil(F n). */
    expect_topk_error(&c, 0 | TOPK_BITMAP, "", 10);
    expect_topk_error(&c, 11 | TOPK_BITMAP, "0000803f77777777777fff07", 10);
    expect_topk_error(&c, 2 | TOPK_BITMAP, "0000803f978100", 10);
    /* The values: bad scales (NaN, +-Inf, negative, -0, one whose 7 * scale
     * overflows), a -8, a nonzero padding nibble, too short to hold them. */
    static const char *const bad_values[] = {
        "0000c07f97058102", "0000807f97058102", "000080ff97058102", "000080bf97058102",
        "0000008097058102", "e6b1617f97058102", "0000803f97088102", "0000803f97158102",
        "0000803f97", "0000803f", "",
    };
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++)
        expect_topk_error(&c, 3 | TOPK_BITMAP, bad_values[i], 10);
    /* Bitmaps: bits past n, too few or too many bits, the wrong length. */
    static const char *const bad_maps[] = {V3 "8106", V3 "8100", V3 "8302", V3 "81",
                                           V3 "810200"};
    for (size_t i = 0; i < sizeof bad_maps / sizeof bad_maps[0]; i++)
        expect_topk_error(&c, 3 | TOPK_BITMAP, bad_maps[i], 10);

    /* n = 100, k = 3 (topk:0.03): varints (3 bytes) beat a 13-byte bitmap. */
    gd_codec v = codec_of("topk:0.03");
    float z[100];
    len = topk_chunk(buf, 3, V3 "000601");
    CHECK_OK(gd_codec_decode_chunk(&v, buf, len, z, 100));
    CHECK(z[0] == 7 && z[7] == -7 && z[9] == 5 && z[8] == 0);
    expect_topk_error(&v, 3 | TOPK_BITMAP, V3 "8102000000000000000000000000", 100);
    expect_topk_error(&v, 3, "0000803f9708000601", 100); /* value -8 */
    /* Indices: out of range (first 100; gaps reaching 100), the last varint
     * missing, trailing bytes. Non-increasing indices cannot be written at
     * all: gaps are coded minus one. */
    static const char *const bad_tails[] = {
        V3 "640000",         /* first index 100 */
        V3 "07015a",         /* 7, 9, 100 */
        V3 "00065c",         /* 0, 7, 100 */
        V3 "0006",           /* two indices */
        V3 "00060100",       /* trailing byte */
        V3 "0006808080808000", /* overlong: six bytes */
        V3 "0006ffffffff0f", /* 2^32 - 1: minimal, but out of range */
        V3 "0006ffffffff1f", /* fifth byte above 0x0f: over 32 bits */
        V3 "000680808080",   /* continuation past the end */
        V3 "00068000",       /* non-minimal: 0 in two bytes */
        V3 "00068100",       /* non-minimal: 1 in two bytes */
    };
    for (size_t i = 0; i < sizeof bad_tails / sizeof bad_tails[0]; i++)
        expect_topk_error(&v, 3, bad_tails[i], 100);
    /* A well-formed multi-byte varint. */
    gd_codec c1 = {GD_CODEC_TOPK, 1}; /* k = 1 for n <= 10^6 */
    float *big = malloc(1000 * sizeof *big);
    len = topk_chunk(buf, 1, "0000803f07" "e707"); /* index 999 */
    CHECK_OK(gd_codec_decode_chunk(&c1, buf, len, big, 1000));
    CHECK(big[999] == 7 && big[998] == 0);
    len = topk_chunk(buf, 1, "0000803f07" "e807"); /* index 1000 */
    expect_parse_error(&c1, buf, len, 1000);
    free(big);
}

static void test_encode_rejects(void) {
    float x[100];
    fill(x, 100, DIST_NORMAL, 11);
    uint8_t out[1024];
    size_t len;
    static const float bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t ci = 0; ci < sizeof k_specs / sizeof k_specs[0]; ci++) {
        gd_codec c = codec_of(k_specs[ci]);
        for (size_t b = 0; b < 3; b++) {
            for (size_t at = 0; at < 100; at += 33) {
                float save = x[at];
                x[at] = bad[b];
                CHECK_STATUS(gd_codec_encode_chunk(&c, out, sizeof out, x, 100, &len, NULL),
                             GD_ERR_INVALID);
                x[at] = save;
            }
        }
        /* Arguments. */
        CHECK_STATUS(gd_codec_encode_chunk(&c, out, sizeof out, x, 0, &len, NULL),
                     GD_ERR_INVALID);
        CHECK_STATUS(gd_codec_encode_chunk(&c, out, gd_codec_chunk_bound(&c, 100) - 1, x, 100,
                                           &len, NULL),
                     GD_ERR_INVALID);
        CHECK_STATUS(gd_codec_decode_chunk(&c, out, 0, x, 0), GD_ERR_INVALID);
    }
    gd_codec bogus = {(gd_codec_kind)9, 0}, zero_ppm = {GD_CODEC_TOPK, 0};
    gd_codec big_ppm = {GD_CODEC_TOPK, 1000001};
    CHECK_STATUS(gd_codec_encode_chunk(&bogus, out, sizeof out, x, 100, &len, NULL),
                 GD_ERR_INVALID);
    CHECK_STATUS(gd_codec_encode_chunk(&zero_ppm, out, sizeof out, x, 100, &len, NULL),
                 GD_ERR_INVALID);
    CHECK_STATUS(gd_codec_decode_chunk(&big_ppm, out, 8, x, 100), GD_ERR_INVALID);
    CHECK(gd_codec_chunk_bound(&bogus, 100) == 0);

    /* +-FLT_MAX: int8 would decode 127 * (FLT_MAX / 127) = Inf, so it
     * refuses it; int4, topk (int4 values) and none keep it; bf16 saturates
     * to its max. */
    x[5] = -FLT_MAX;
    gd_codec c8 = codec_of("int8"), ck = codec_of("topk:0.01");
    CHECK_STATUS(gd_codec_encode_chunk(&c8, out, sizeof out, x, 100, &len, NULL),
                 GD_ERR_INVALID);
    {
        float yk[100];
        CHECK_OK(gd_codec_encode_chunk(&ck, out, sizeof out, x, 100, &len, yk));
        CHECK(isfinite(yk[5]) && yk[5] < 0);
        check_bounds(&ck, x, 100, out, len, yk);
    }
    x[5] = nextafterf(FLT_MAX, 0);
    float y[100];
    CHECK_OK(gd_codec_encode_chunk(&c8, out, sizeof out, x, 100, &len, y));
    CHECK(isfinite(y[5]));
    x[5] = FLT_MAX;
    gd_codec c4 = codec_of("int4"), cb = codec_of("bf16");
    CHECK_OK(gd_codec_encode_chunk(&c4, out, sizeof out, x, 100, &len, y));
    CHECK(isfinite(y[5]));
    x[6] = u2f(0xff7f8000); /* a tie between bf16 max and Inf: saturates too */
    CHECK_OK(gd_codec_encode_chunk(&cb, out, sizeof out, x, 100, &len, y));
    CHECK(f2u(y[5]) == 0x7f7f0000 && f2u(y[6]) == 0xff7f0000);
    check_bounds(&cb, x, 100, out, len, y);
}

int main(void) {
    RUN_TEST(test_parse_format);
    RUN_TEST(test_random_vectors);
    RUN_TEST(test_topk_ties);
    RUN_TEST(test_golden);
    RUN_TEST(test_tiny_blocks);
    RUN_TEST(test_error_feedback);
    RUN_TEST(test_decode_rejects_lengths);
    RUN_TEST(test_decode_rejects_values);
    RUN_TEST(test_decode_rejects_topk);
    RUN_TEST(test_encode_rejects);
    return gd_test_finish();
}
