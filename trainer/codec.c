/* Pseudo-gradient codecs (trainer/codec.h): spec parsing and formatting, and
 * the encoder and validating decoder of each chunk format.
 *
 * The numbers (block quantisation, bfloat16 rounding and their inverses)
 * are the backend's codec ops, whose one rule kernels/cpu/codec_ops.h
 * states; they run here on the CPU backend, a group of whole blocks at a
 * time, and this file lays their codes and scales out as bytes and checks
 * what the format forbids (non-finite values, a scale whose decoded values
 * would overflow, codes outside the range). */
#include "trainer/codec.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/block_copy.h"
#include "kernels/backend.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "codec.c moves little-endian wire values with memcpy");

#define MAX_VALUES ((size_t)1 << 28)
#define ABS_MASK 0x7fffffffu
#define EXP_MASK 0x7f800000u
#define B8 GD_CODEC_INT8_BLOCK
#define B4 GD_CODEC_INT4_BLOCK
/* Values per call of a codec op: whole blocks of both sizes, small enough
 * for the stack. Groups never change a value's arithmetic. */
#define GROUP 4096
_Static_assert(GROUP % B8 == 0 && GROUP % B4 == 0, "groups hold whole blocks");
_Static_assert(B8 == GD_QUANT_BLOCK_INT8 && B4 == GD_QUANT_BLOCK_INT4,
               "the formats' blocks are the quantiser's");
/* Top bit of topk's count field: the indices are a bitmap, not varints. */
#define GD_TOPK_BITMAP_FLAG 0x80000000u

static inline uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline uint32_t load_key(const float *x, size_t i) {
    uint32_t u;
    memcpy(&u, x + i, sizeof u);
    return u & ABS_MASK;
}

/* ---- spec text ---------------------------------------------------------- */

static const char k_accepted[] =
    "expected none, bf16, int8, int4 or topk:FRACTION with 0 < FRACTION <= 1 "
    "(e.g. topk:0.01)";

/* Decimal "D+(.D+)?" in (0, 1] to parts per million, exactly: no strtod, so
 * "0.3" is 300000 ppm and not whatever the nearest double rounds to. */
static bool parse_ppm(const char *s, uint32_t *ppm) {
    uint64_t whole = 0, frac = 0;
    size_t digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (whole > 1)
            return false;
        whole = whole * 10 + (uint64_t)(*s - '0');
    }
    if (digits == 0)
        return false;
    if (*s == '.') {
        s++;
        size_t fd = 0;
        for (; *s >= '0' && *s <= '9'; s++, fd++) {
            if (fd < 6)
                frac = frac * 10 + (uint64_t)(*s - '0');
            else if (*s != '0')
                return false; /* finer than one part per million */
        }
        if (fd == 0)
            return false;
        for (; fd < 6; fd++)
            frac *= 10;
    }
    if (*s != '\0' || whole > 1)
        return false;
    uint64_t v = whole * GD_CODEC_PPM + frac;
    if (v == 0 || v > GD_CODEC_PPM)
        return false;
    *ppm = (uint32_t)v;
    return true;
}

gd_status gd_codec_parse(gd_codec *out, const char *spec) {
    if (out == NULL || spec == NULL)
        return gd_fail(GD_ERR_INVALID, "codec spec missing (%s)", k_accepted);
    static const struct {
        const char *name;
        gd_codec_kind kind;
    } fixed[] = {{"none", GD_CODEC_NONE},
                 {"bf16", GD_CODEC_BF16},
                 {"int8", GD_CODEC_INT8},
                 {"int4", GD_CODEC_INT4}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        if (strcmp(spec, fixed[i].name) == 0) {
            *out = (gd_codec){.kind = fixed[i].kind, .topk_ppm = 0};
            return GD_OK;
        }
    }
    uint32_t ppm;
    if (strncmp(spec, "topk:", 5) == 0) {
        if (!parse_ppm(spec + 5, &ppm))
            return gd_fail(GD_ERR_INVALID,
                           "bad topk fraction '%s': want a decimal in (0, 1] with at most six "
                           "decimals, e.g. topk:0.01",
                           spec + 5);
        *out = (gd_codec){.kind = GD_CODEC_TOPK, .topk_ppm = ppm};
        return GD_OK;
    }
    return gd_fail(GD_ERR_INVALID, "unknown codec '%s' (%s)", spec, k_accepted);
}

void gd_codec_format(const gd_codec *codec, char *out, size_t cap) {
    if (out == NULL || cap == 0)
        return;
    switch (codec->kind) {
    case GD_CODEC_NONE: snprintf(out, cap, "none"); return;
    case GD_CODEC_BF16: snprintf(out, cap, "bf16"); return;
    case GD_CODEC_INT8: snprintf(out, cap, "int8"); return;
    case GD_CODEC_INT4: snprintf(out, cap, "int4"); return;
    case GD_CODEC_TOPK:
        if (codec->topk_ppm >= GD_CODEC_PPM) {
            snprintf(out, cap, "topk:1");
        } else {
            /* Shortest decimal: six fraction digits less trailing zeros. */
            char digits[8];
            snprintf(digits, sizeof digits, "%06u", (unsigned)codec->topk_ppm);
            size_t len = 6;
            while (len > 1 && digits[len - 1] == '0')
                len--;
            digits[len] = '\0';
            snprintf(out, cap, "topk:0.%s", digits);
        }
        return;
    }
    snprintf(out, cap, "invalid");
}

/* ---- sizes -------------------------------------------------------------- */

static size_t topk_count(uint32_t ppm, size_t n) {
    uint64_t k = ((uint64_t)n * ppm + (GD_CODEC_PPM - 1)) / GD_CODEC_PPM;
    return k < 1 ? 1 : (size_t)k;
}

static size_t leb_len(uint64_t v) {
    size_t len = 1;
    for (; v >= 0x80; v >>= 7)
        len++;
    return len;
}

static size_t int8_size(size_t n) { return 4 * ((n + B8 - 1) / B8) + n; }
static size_t int4_size(size_t n) { return 4 * ((n + B4 - 1) / B4) + (n + 1) / 2; }

static bool codec_valid(const gd_codec *c) {
    switch (c->kind) {
    case GD_CODEC_NONE:
    case GD_CODEC_BF16:
    case GD_CODEC_INT8:
    case GD_CODEC_INT4: return true;
    case GD_CODEC_TOPK: return c->topk_ppm >= 1 && c->topk_ppm <= GD_CODEC_PPM;
    }
    return false;
}

size_t gd_codec_chunk_bound(const gd_codec *codec, size_t n) {
    if (codec == NULL || !codec_valid(codec))
        return 0;
    switch (codec->kind) {
    case GD_CODEC_NONE: return 4 * n;
    case GD_CODEC_BF16: return 2 * n;
    case GD_CODEC_INT8: return int8_size(n);
    case GD_CODEC_INT4: return int4_size(n);
    case GD_CODEC_TOPK: {
        if (n == 0)
            return 4;
        /* Every varint (an index or a gap minus one) is below n; the
         * encoder never writes more index bytes than a bitmap's. */
        size_t k = topk_count(codec->topk_ppm, n);
        size_t varints = k * leb_len(n - 1), bitmap = (n + 7) / 8;
        return 4 + int4_size(k) + (varints < bitmap ? varints : bitmap);
    }
    }
    return 0;
}

/* ---- shared pieces ------------------------------------------------------ */

static gd_status fail_nonfinite(const float *x, size_t from, size_t to) {
    size_t i = from;
    while (i < to && load_key(x, i) < EXP_MASK)
        i++;
    return gd_fail(GD_ERR_INVALID,
                   "value %zu is %s; the codecs encode finite values only", i,
                   i < to && load_key(x, i) > EXP_MASK ? "NaN" : "infinite");
}

/* The decoder rejects a scale whose largest product L * scale overflows, so
 * the encoder must not emit one: only m = FLT_MAX with L = 127 gets there. */
static inline bool scale_overflows(float scale, float lim) {
    return (f2u(scale * lim) & ABS_MASK) >= EXP_MASK;
}

static gd_status fail_too_large(const char *codec, size_t from) {
    return gd_fail(GD_ERR_INVALID,
                   "%s block starting at value %zu holds +-FLT_MAX, whose decoded value "
                   "would overflow to infinity",
                   codec, from);
}

static gd_status check_scale(const char *codec, float scale, float lim, size_t at) {
    uint32_t u = f2u(scale);
    if (u & 0x80000000u)
        return gd_fail(GD_ERR_PARSE, "%s chunk: negative scale at byte %zu", codec, at);
    if (u >= EXP_MASK)
        return gd_fail(GD_ERR_PARSE, "%s chunk: non-finite scale at byte %zu", codec, at);
    if (scale_overflows(scale, lim))
        return gd_fail(GD_ERR_PARSE, "%s chunk: scale %g at byte %zu overflows when decoded",
                       codec, (double)scale, at);
    return GD_OK;
}

/* ---- none --------------------------------------------------------------- */

/* Fixed-size rounds of an OR so the loop vectorises. */
static bool all_finite(const float *x, size_t n) {
    size_t i = 0;
    uint32_t bad = 0;
    for (; i + B8 <= n; i += B8) {
        uint32_t ub[B8];
        memcpy(ub, x + i, sizeof ub);
        for (size_t j = 0; j < B8; j++)
            bad |= (ub[j] & EXP_MASK) == EXP_MASK;
        if (bad)
            return false;
    }
    for (; i < n; i++)
        bad |= load_key(x, i) >= EXP_MASK;
    return bad == 0;
}

static gd_status encode_none(uint8_t *out, const float *x, size_t n, float *decoded) {
    if (!all_finite(x, n))
        return fail_nonfinite(x, 0, n);
    memcpy(out, x, n * sizeof(float));
    if (decoded != NULL && decoded != x)
        memmove(decoded, x, n * sizeof(float));
    return GD_OK;
}

static gd_status decode_none(const uint8_t *in, float *x, size_t n) {
    memcpy(x, in, n * sizeof(float));
    if (!all_finite(x, n)) {
        size_t i = 0;
        while (load_key(x, i) < EXP_MASK)
            i++;
        return gd_fail(GD_ERR_PARSE, "none chunk: value %zu is not finite", i);
    }
    return GD_OK;
}

/* The CPU backend, on the caller's thread: the payload encoder already
 * runs chunks in parallel. */
static gd_backend host_backend(void) {
    gd_backend cpu;
    gd_backend_cpu_init(&cpu, NULL);
    return cpu;
}

static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* ---- bf16 --------------------------------------------------------------- */

static gd_status encode_bf16(uint8_t *out, const float *x, size_t n, float *decoded) {
    gd_backend cpu = host_backend();
    for (size_t off = 0; off < n; off += GROUP) {
        size_t m = min_size(GROUP, n - off);
        uint16_t h[GROUP];
        gd_backend_bf16_quantize(&cpu, h, decoded != NULL ? decoded + off : NULL, x + off, m);
        /* The op keeps a non-finite value's all-ones exponent (and, in
         * decoded, the value itself). */
        uint32_t bad = 0;
        for (size_t i = 0; i < m; i++)
            bad |= (h[i] & 0x7f80u) == 0x7f80u;
        if (bad)
            return fail_nonfinite(x, off, off + m);
        memcpy(out + 2 * off, h, m * sizeof(uint16_t));
    }
    return GD_OK;
}

static gd_status decode_bf16(const uint8_t *in, float *x, size_t n) {
    gd_backend cpu = host_backend();
    for (size_t off = 0; off < n; off += GROUP) {
        size_t m = min_size(GROUP, n - off);
        uint16_t h[GROUP];
        memcpy(h, in + 2 * off, m * sizeof(uint16_t));
        uint32_t bad = 0;
        for (size_t i = 0; i < m; i++)
            bad |= (h[i] & 0x7f80u) == 0x7f80u;
        if (bad) {
            size_t i = 0;
            while ((h[i] & 0x7f80u) != 0x7f80u)
                i++;
            return gd_fail(GD_ERR_PARSE, "bf16 chunk: value %zu is not finite", off + i);
        }
        gd_backend_bf16_dequantize(&cpu, x + off, h, m);
    }
    return GD_OK;
}

/* ---- int8 and int4 ------------------------------------------------------- */

/* The quantiser over the m values at off (a group of whole blocks but
 * perhaps the chunk's last), then what the format refuses, first block
 * first: a non-finite value (the op's non-finite scale; with decoded == x
 * the op left that block's values as they were, so the message names the
 * value), and a scale whose largest product overflows. */
static gd_status quantize_group(const gd_backend *cpu, const float *x, size_t off, size_t m,
                                size_t block, float lim, const char *codec, int8_t *q,
                                float *scales, float *decoded) {
    gd_backend_quantize_blocks(cpu, q, scales, decoded != NULL ? decoded + off : NULL, x + off,
                               m, block, lim);
    for (size_t b = 0, at = 0; at < m; b++, at += block) {
        if (f2u(scales[b]) >= EXP_MASK)
            return fail_nonfinite(x, off + at, off + at + min_size(block, m - at));
        if (scale_overflows(scales[b], lim))
            return fail_too_large(codec, off + at);
    }
    return GD_OK;
}

static gd_status encode_int8(uint8_t *out, const float *x, size_t n, float *decoded) {
    gd_backend cpu = host_backend();
    uint8_t *p = out;
    for (size_t off = 0; off < n; off += GROUP) {
        size_t m = min_size(GROUP, n - off);
        int8_t q[GROUP];
        float scales[GROUP / B8];
        GD_TRY(quantize_group(&cpu, x, off, m, B8, 127.0f, "int8", q, scales, decoded));
        for (size_t b = 0, at = 0; at < m; b++, at += B8) {
            size_t len = min_size(B8, m - at);
            memcpy(p, &scales[b], 4);
            gd_block_store(p + 4, q + at, B8, len);
            p += 4 + len;
        }
    }
    return GD_OK;
}

static gd_status decode_int8(const uint8_t *in, float *x, size_t n) {
    gd_backend cpu = host_backend();
    const uint8_t *p = in;
    for (size_t off = 0; off < n; off += GROUP) {
        size_t m = min_size(GROUP, n - off);
        int8_t q[GROUP];
        float scales[GROUP / B8];
        for (size_t b = 0, at = 0; at < m; b++, at += B8) {
            size_t len = min_size(B8, m - at);
            memcpy(&scales[b], p, 4);
            GD_TRY(check_scale("int8", scales[b], 127.0f, (size_t)(p - in)));
            gd_block_load(q + at, p + 4, B8, len);
            uint32_t bad = 0;
            for (size_t i = 0; i < B8; i++)
                bad |= q[at + i] == -128;
            if (bad)
                return gd_fail(GD_ERR_PARSE, "int8 chunk: value -128 in the block at byte %zu",
                               (size_t)(p - in));
            p += 4 + len;
        }
        gd_backend_dequantize_blocks(&cpu, x + off, q, scales, m, B8);
    }
    return GD_OK;
}

static gd_status encode_int4(uint8_t *out, const float *x, size_t n, float *decoded) {
    gd_backend cpu = host_backend();
    uint8_t *p = out;
    for (size_t off = 0; off < n; off += GROUP) {
        size_t m = min_size(GROUP, n - off);
        int8_t q[GROUP];
        float scales[GROUP / B4];
        /* (int4 never overflows: 7 * (FLT_MAX / 7) fits.) */
        GD_TRY(quantize_group(&cpu, x, off, m, B4, 7.0f, "int4", q, scales, decoded));
        for (size_t b = 0, at = 0; at < m; b++, at += B4) {
            size_t len = min_size(B4, m - at);
            int8_t qb[B4];
            uint8_t packed[B4 / 2];
            /* Two's-complement nibbles, the even index low; a short tail's
             * padding nibble is 0 because its (zero-filled) q is. */
            gd_block_load(qb, q + at, B4, len);
            for (size_t j = 0; j < B4 / 2; j++)
                packed[j] =
                    (uint8_t)(((uint8_t)qb[2 * j] & 0x0fu) | ((uint8_t)qb[2 * j + 1] << 4));
            memcpy(p, &scales[b], 4);
            gd_block_store(p + 4, packed, sizeof packed, (len + 1) / 2);
            p += 4 + (len + 1) / 2;
        }
    }
    return GD_OK;
}

static gd_status decode_int4(const uint8_t *in, float *x, size_t n) {
    gd_backend cpu = host_backend();
    const uint8_t *p = in;
    for (size_t off = 0; off < n; off += GROUP) {
        size_t m = min_size(GROUP, n - off);
        int8_t q[GROUP];
        float scales[GROUP / B4];
        for (size_t b = 0, at = 0; at < m; b++, at += B4) {
            size_t len = min_size(B4, m - at), bytes = (len + 1) / 2;
            uint8_t packed[B4 / 2];
            memcpy(&scales[b], p, 4);
            GD_TRY(check_scale("int4", scales[b], 7.0f, (size_t)(p - in)));
            gd_block_load(packed, p + 4, sizeof packed, bytes);
            if ((len & 1) && (packed[bytes - 1] >> 4) != 0)
                return gd_fail(GD_ERR_PARSE, "int4 chunk: nonzero padding nibble at byte %zu",
                               (size_t)(p - in) + 4 + bytes - 1);
            uint32_t bad = 0;
            for (size_t j = 0; j < B4 / 2; j++) {
                /* (v ^ 8) - 8 sign-extends a 4-bit two's-complement value. */
                int32_t lo = (int32_t)((packed[j] & 0x0fu) ^ 8u) - 8;
                int32_t hi = (int32_t)((packed[j] >> 4) ^ 8u) - 8;
                bad |= (lo == -8) | (hi == -8);
                q[at + 2 * j] = (int8_t)lo;
                q[at + 2 * j + 1] = (int8_t)hi;
            }
            if (bad)
                return gd_fail(GD_ERR_PARSE, "int4 chunk: value -8 in the block at byte %zu",
                               (size_t)(p - in));
            p += 4 + bytes;
        }
        gd_backend_dequantize_blocks(&cpu, x + off, q, scales, m, B4);
    }
    return GD_OK;
}

/* ---- topk --------------------------------------------------------------- */

/* Selection is an exact order statistic on the magnitudes' float bits (for
 * finite values, |x| orders as its 31-bit pattern does as an unsigned
 * integer): a radix select over 11 + 10 + 10 bits finds the k-th largest key
 * T with histograms small enough for L1. Only two passes read all n values:
 * one histograms the top 11 bits, the other gathers the candidates (keys in
 * T's bin or above); T's low 20 bits are selected among those, and the
 * chunk keeps every key > T and the lowest-index keys == T. */
#define TOPK_D1 2048u /* bins of key >> 20 */
#define TOPK_D2 1024u /* bins of the next 10 bits, then of the last 10 */

/* Walks bins from the top; returns the bin holding the need-th largest key
 * and lowers need by the counts of the bins above it. */
static uint32_t topk_walk(const uint32_t *hist, uint32_t bins, size_t *need) {
    uint32_t b = bins - 1;
    for (;; b--) {
        if (hist[b] >= *need || b == 0)
            return b;
        *need -= hist[b];
    }
}

static size_t put_leb(uint8_t *p, uint32_t v) {
    size_t len = 0;
    while (v >= 0x80) {
        p[len++] = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    p[len++] = (uint8_t)v;
    return len;
}


static gd_status encode_topk(uint8_t *out, uint32_t ppm, const float *x, size_t n,
                             size_t *written, float *decoded) {
    size_t k = topk_count(ppm, n);

    /* Pass 1: top 11 bits, into four histograms so that runs of equal bins
     * do not serialise on one counter; and the max, to refuse non-finite
     * input before selecting. */
    uint32_t h1[4][TOPK_D1];
    memset(h1, 0, sizeof h1);
    uint32_t maxk = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t k0 = load_key(x, i), k1 = load_key(x, i + 1);
        uint32_t k2 = load_key(x, i + 2), k3 = load_key(x, i + 3);
        h1[0][k0 >> 20]++;
        h1[1][k1 >> 20]++;
        h1[2][k2 >> 20]++;
        h1[3][k3 >> 20]++;
        uint32_t a = k0 > k1 ? k0 : k1, b = k2 > k3 ? k2 : k3;
        a = a > b ? a : b;
        maxk = a > maxk ? a : maxk;
    }
    for (; i < n; i++) {
        uint32_t key = load_key(x, i);
        h1[0][key >> 20]++;
        maxk = key > maxk ? key : maxk;
    }
    if (maxk >= EXP_MASK)
        return fail_nonfinite(x, 0, n);
    for (uint32_t b = 0; b < TOPK_D1; b++)
        h1[0][b] += h1[1][b] + h1[2][b] + h1[3][b];
    size_t need = k;
    uint32_t prefix = topk_walk(h1[0], TOPK_D1, &need);

    /* Pass 2 gathers, in index order, every value in that bin or above:
     * the k kept plus the rest of the bin, typically a few percent of n.
     * The remaining work touches these candidates only. */
    size_t cand_cap = (k - need) + h1[0][prefix] + 1; /* + 1: the branchless store */
    uint32_t *cbits = malloc(cand_cap * 2 * sizeof *cbits);
    if (cbits == NULL)
        return gd_fail(GD_ERR_NOMEM, "topk: no memory for %zu candidates", cand_cap);
    uint32_t *cidx = cbits + cand_cap;
    uint32_t lowest = prefix << 20;
    size_t nc = 0;
    for (i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, x + i, sizeof bits);
        cbits[nc] = bits;
        cidx[nc] = (uint32_t)i;
        nc += (bits & ABS_MASK) >= lowest;
    }

    /* The bin's last 20 bits, 10 at a time. */
    uint32_t h2[TOPK_D2];
    for (int shift = 10; shift >= 0; shift -= 10) {
        memset(h2, 0, sizeof h2);
        unsigned sh = (unsigned)shift;
        for (size_t c = 0; c < nc; c++) {
            uint32_t key = cbits[c] & ABS_MASK;
            if ((key >> (sh + 10)) == prefix)
                h2[(key >> sh) & (TOPK_D2 - 1)]++;
        }
        prefix = (prefix << 10) | topk_walk(h2, TOPK_D2, &need);
    }
    uint32_t t = prefix; /* the k-th largest key; need = how many == t to keep */

    /* Keep in increasing index order: the kept values and indices are
     * compacted into the front of cbits and cidx (c >= kept, so nothing is
     * lost). */
    size_t kept = 0, varint_bytes = 0;
    uint32_t next = 0;
    for (size_t c = 0; c < nc && kept < k; c++) {
        uint32_t key = cbits[c] & ABS_MASK;
        if (key < t || (key == t && need == 0))
            continue;
        if (key == t)
            need--;
        varint_bytes += leb_len(cidx[c] - next);
        next = cidx[c] + 1;
        cbits[kept] = cbits[c];
        cidx[kept++] = cidx[c];
    }
    /* The kept values as int4 blocks (scales per 32 kept values track the
     * magnitudes along the selection better than one scale would). Their
     * decoded values overwrite the kept bits in place: encode_int4 writes
     * decoded[i] only after reading block i, and the indices in cidx say
     * where each goes. */
    size_t pos = 4;
    float *kvals = (float *)(void *)cbits;
    gd_status st = encode_int4(out + pos, kvals, k, decoded != NULL ? kvals : NULL);
    pos += int4_size(k);
    /* The indices: varint gaps, or a bitmap when that is strictly smaller
     * (dense selections); the choice is a function of the selection, so
     * the encoding stays canonical. */
    size_t bitmap_bytes = (n + 7) / 8;
    bool bitmap = bitmap_bytes < varint_bytes;
    if (bitmap) {
        memset(out + pos, 0, bitmap_bytes);
        for (size_t j = 0; j < kept; j++)
            out[pos + cidx[j] / 8] |= (uint8_t)(1u << (cidx[j] % 8));
        pos += bitmap_bytes;
    } else {
        next = 0;
        for (size_t j = 0; j < kept; j++) {
            pos += put_leb(out + pos, cidx[j] - next);
            next = cidx[j] + 1;
        }
    }
    /* decoded: zero but the kept indices, which get the int4 decoding of
     * their values, exactly what decode_topk computes from these bytes
     * (the tests check the two agree bit for bit). */
    if (st == GD_OK && decoded != NULL) {
        memset(decoded, 0, n * sizeof(float));
        for (size_t j = 0; j < kept; j++)
            decoded[cidx[j]] = kvals[j];
    }
    free(cbits);
    GD_TRY(st);
    uint32_t k32 = (uint32_t)k | (bitmap ? GD_TOPK_BITMAP_FLAG : 0);
    memcpy(out, &k32, 4);
    *written = pos;
    return GD_OK;
}

/* The bitmap form: exactly ceil(n / 8) bytes, bit i (LSB first) set for a
 * kept index, exactly k bits set, no bit at or past n, and (canonical) only
 * used where it is strictly shorter than the varint form. */
static gd_status decode_topk_bitmap(const float *vals, uint32_t k, const uint8_t *map,
                                    size_t len, float *x, size_t n) {
    size_t bytes = (n + 7) / 8;
    if (len != bytes)
        return gd_fail(GD_ERR_PARSE, "topk chunk: a bitmap of %zu values is %zu bytes, not %zu",
                       n, bytes, len);
    if (n % 8 != 0 && (map[bytes - 1] >> (n % 8)) != 0)
        return gd_fail(GD_ERR_PARSE, "topk chunk: bitmap bits set past the last value");
    uint32_t j = 0;
    size_t varint_bytes = 0, next = 0;
    /* A word at a time, one iteration per set bit: a dense map costs no
     * branch mispredictions per value. */
    for (size_t at = 0; at < bytes; at += 8) {
        uint64_t word = 0;
        for (size_t b = 0; b < 8 && at + b < bytes; b++)
            word |= (uint64_t)map[at + b] << (8 * b);
        for (; word != 0; word &= word - 1) {
            size_t i = at * 8 + (size_t)__builtin_ctzll(word);
            if (j == k)
                return gd_fail(GD_ERR_PARSE, "topk chunk: bitmap has more than %u bits set",
                               (unsigned)k);
            x[i] = vals[j++];
            varint_bytes += leb_len(i - next);
            next = i + 1;
        }
    }
    if (j != k)
        return gd_fail(GD_ERR_PARSE, "topk chunk: bitmap has %u bits set, not %u", (unsigned)j,
                       (unsigned)k);
    if (bytes >= varint_bytes)
        return gd_fail(GD_ERR_PARSE, "topk chunk: a bitmap where varints are no longer "
                                     "(not canonical)");
    return GD_OK;
}

static gd_status decode_topk_varints(const float *vals, uint32_t k, const uint8_t *in,
                                     size_t len, float *x, size_t n) {
    size_t pos = 0;
    uint64_t next = 0;
    for (uint32_t j = 0; j < k; j++) {
        uint32_t v = 0;
        for (unsigned s = 0;; s++) {
            if (pos >= len)
                return gd_fail(GD_ERR_PARSE, "topk chunk: truncated in index %u", (unsigned)j);
            uint8_t byte = in[pos++];
            if (s == 4 && byte > 0x0f)
                return gd_fail(GD_ERR_PARSE,
                               "topk chunk: index %u's varint is longer than 5 bytes or "
                               "exceeds 32 bits",
                               (unsigned)j);
            v |= (uint32_t)(byte & 0x7fu) << (7 * s);
            if (!(byte & 0x80u)) {
                if (byte == 0 && s > 0)
                    return gd_fail(GD_ERR_PARSE, "topk chunk: index %u's varint is not minimal",
                                   (unsigned)j);
                break;
            }
        }
        uint64_t idx = next + v;
        if (idx >= n)
            return gd_fail(GD_ERR_PARSE,
                           "topk chunk: index %u is %llu, out of range for %zu values",
                           (unsigned)j, (unsigned long long)idx, n);
        x[idx] = vals[j];
        next = idx + 1;
    }
    if (pos != len)
        return gd_fail(GD_ERR_PARSE, "topk chunk: %zu bytes after the last index", len - pos);
    if (len > (n + 7) / 8)
        return gd_fail(GD_ERR_PARSE, "topk chunk: varint indices where a bitmap is shorter "
                                     "(not canonical)");
    return GD_OK;
}

/* Layout: LE32 k (top bit: bitmap form), the k kept values as an int4
 * chunk of k values, then the indices. */
static gd_status decode_topk(uint32_t ppm, const uint8_t *in, size_t len, float *x, size_t n) {
    if (len < 4)
        return gd_fail(GD_ERR_PARSE, "topk chunk: %zu bytes, shorter than its 4-byte count", len);
    uint32_t k;
    memcpy(&k, in, 4);
    bool bitmap = (k & GD_TOPK_BITMAP_FLAG) != 0;
    k &= ~GD_TOPK_BITMAP_FLAG;
    if (k == 0 || k > n)
        return gd_fail(GD_ERR_PARSE, "topk chunk: count %u outside 1..%zu", (unsigned)k, n);
    size_t want = topk_count(ppm, n);
    if (k != want)
        return gd_fail(GD_ERR_PARSE, "topk chunk: count %u, but topk of %zu values keeps %zu",
                       (unsigned)k, n, want);
    size_t vbytes = int4_size(k);
    if (len - 4 < vbytes)
        return gd_fail(GD_ERR_PARSE, "topk chunk: %zu bytes cannot hold %u int4 values", len,
                       (unsigned)k);
    float *vals = malloc((size_t)k * sizeof *vals);
    if (vals == NULL)
        return gd_fail(GD_ERR_NOMEM, "topk: no memory for %u values", (unsigned)k);
    gd_status st = decode_int4(in + 4, vals, k);
    if (st == GD_OK) {
        memset(x, 0, n * sizeof(float));
        size_t pos = 4 + vbytes;
        st = bitmap ? decode_topk_bitmap(vals, k, in + pos, len - pos, x, n)
                    : decode_topk_varints(vals, k, in + pos, len - pos, x, n);
    }
    free(vals);
    return st;
}

/* ---- entry points ------------------------------------------------------- */

gd_status gd_codec_encode_chunk(const gd_codec *codec, uint8_t *out, size_t cap, const float *x,
                                size_t n, size_t *written, float *decoded) {
    if (codec == NULL || x == NULL || out == NULL || written == NULL)
        return gd_fail(GD_ERR_INVALID, "codec encode: missing argument");
    if (!codec_valid(codec))
        return gd_fail(GD_ERR_INVALID, "codec encode: invalid codec (kind %d, topk ppm %u)",
                       (int)codec->kind, (unsigned)codec->topk_ppm);
    if (n == 0 || n > MAX_VALUES)
        return gd_fail(GD_ERR_INVALID, "codec encode: %zu values, want 1..%zu per chunk", n,
                       MAX_VALUES);
    size_t bound = gd_codec_chunk_bound(codec, n);
    if (cap < bound)
        return gd_fail(GD_ERR_INVALID, "codec encode: output of %zu bytes, %zu needed", cap,
                       bound);
    switch (codec->kind) {
    case GD_CODEC_NONE:
        *written = bound;
        return encode_none(out, x, n, decoded);
    case GD_CODEC_BF16:
        *written = bound;
        return encode_bf16(out, x, n, decoded);
    case GD_CODEC_INT8:
        *written = bound;
        return encode_int8(out, x, n, decoded);
    case GD_CODEC_INT4:
        *written = bound;
        return encode_int4(out, x, n, decoded);
    case GD_CODEC_TOPK: return encode_topk(out, codec->topk_ppm, x, n, written, decoded);
    }
    return gd_fail(GD_ERR_INVALID, "codec encode: invalid codec");
}

gd_status gd_codec_decode_chunk(const gd_codec *codec, const uint8_t *in, size_t len, float *x,
                                size_t n) {
    if (codec == NULL || (in == NULL && len > 0) || x == NULL)
        return gd_fail(GD_ERR_INVALID, "codec decode: missing argument");
    if (!codec_valid(codec))
        return gd_fail(GD_ERR_INVALID, "codec decode: invalid codec (kind %d, topk ppm %u)",
                       (int)codec->kind, (unsigned)codec->topk_ppm);
    if (n == 0 || n > MAX_VALUES)
        return gd_fail(GD_ERR_INVALID, "codec decode: %zu values, want 1..%zu per chunk", n,
                       MAX_VALUES);
    if (codec->kind == GD_CODEC_TOPK)
        return decode_topk(codec->topk_ppm, in, len, x, n);
    static const char *const names[] = {"none", "bf16", "int8", "int4"};
    size_t want = gd_codec_chunk_bound(codec, n);
    if (len != want)
        return gd_fail(GD_ERR_PARSE, "%s chunk of %zu values must be %zu bytes, got %zu",
                       names[codec->kind], n, want, len);
    switch (codec->kind) {
    case GD_CODEC_NONE: return decode_none(in, x, n);
    case GD_CODEC_BF16: return decode_bf16(in, x, n);
    case GD_CODEC_INT8: return decode_int8(in, x, n);
    case GD_CODEC_INT4: return decode_int4(in, x, n);
    case GD_CODEC_TOPK: break;
    }
    return gd_fail(GD_ERR_INVALID, "codec decode: invalid codec");
}
