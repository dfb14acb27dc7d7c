/* 256-bit unsigned arithmetic (schoolbook, four 64-bit limbs). */
#include "chain/module/u256.h"

#include <stdio.h>
#include <string.h>

/* 2^256 - 1 in decimal: the bound of a canonical amount. */
static const char gd_u256_max_dec[] =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

void gd_u256_from_u64(gd_u256 *out, uint64_t v) {
    out->w[0] = v;
    out->w[1] = out->w[2] = out->w[3] = 0;
}

bool gd_u256_is_zero(const gd_u256 *v) { return (v->w[0] | v->w[1] | v->w[2] | v->w[3]) == 0; }

int gd_u256_cmp(const gd_u256 *a, const gd_u256 *b) {
    for (int i = 3; i >= 0; i--) {
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    }
    return 0;
}

bool gd_u256_add(gd_u256 *out, const gd_u256 *a, const gd_u256 *b) {
    gd_u256 r;
    uint64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t s = a->w[i] + carry;
        uint64_t c1 = s < carry;
        r.w[i] = s + b->w[i];
        carry = c1 + (r.w[i] < s);
    }
    if (carry)
        return false;
    *out = r;
    return true;
}

bool gd_u256_sub(gd_u256 *out, const gd_u256 *a, const gd_u256 *b) {
    if (gd_u256_cmp(a, b) < 0)
        return false;
    gd_u256 r;
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t d = a->w[i] - b->w[i];
        uint64_t b1 = a->w[i] < b->w[i];
        r.w[i] = d - borrow;
        borrow = b1 | (d < borrow);
    }
    *out = r;
    return true;
}

/* 64x64 -> 128-bit product as two halves, portable C. */
static void gd_mul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

bool gd_u256_mul_u64(gd_u256 *out, const gd_u256 *a, uint64_t m) {
    gd_u256 r;
    uint64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t hi, lo;
        gd_mul64(a->w[i], m, &hi, &lo);
        r.w[i] = lo + carry;
        carry = hi + (r.w[i] < lo);
    }
    if (carry)
        return false;
    *out = r;
    return true;
}

/* 128-by-64-bit division through GCC/Clang's unsigned __int128. */
__extension__ typedef unsigned __int128 gd_u128;

uint64_t gd_u256_divmod_u64(gd_u256 *q, const gd_u256 *a, uint64_t d) {
    gd_u256 quot;
    uint64_t rem = 0;
    for (int i = 3; i >= 0; i--) {
        gd_u128 cur = ((gd_u128)rem << 64) | a->w[i];
        quot.w[i] = (uint64_t)(cur / d);
        rem = (uint64_t)(cur % d);
    }
    *q = quot;
    return rem;
}

gd_status gd_u256_parse(gd_u256 *out, const char *dec) {
    size_t len = strlen(dec);
    if (len == 0 || len > GD_U256_DEC_MAX)
        return gd_fail(GD_ERR_PARSE, "amount must have 1 to %d digits", GD_U256_DEC_MAX);
    for (size_t i = 0; i < len; i++)
        if (dec[i] < '0' || dec[i] > '9')
            return gd_fail(GD_ERR_PARSE, "amount '%.80s' is not a whole number", dec);
    if (len > 1 && dec[0] == '0')
        return gd_fail(GD_ERR_PARSE, "amount '%.80s' has leading zeros", dec);
    if (len == GD_U256_DEC_MAX && strcmp(dec, gd_u256_max_dec) > 0)
        return gd_fail(GD_ERR_PARSE, "amount is larger than 2^256 - 1");
    gd_u256 v = {{0, 0, 0, 0}};
    for (size_t i = 0; i < len; i++) {
        gd_u256 digit;
        gd_u256_from_u64(&digit, (uint64_t)(dec[i] - '0'));
        /* Cannot overflow: the bound was checked above. */
        if (!gd_u256_mul_u64(&v, &v, 10) || !gd_u256_add(&v, &v, &digit))
            return gd_fail(GD_ERR_PARSE, "amount is larger than 2^256 - 1");
    }
    *out = v;
    return GD_OK;
}

void gd_u256_format(char out[GD_U256_DEC_MAX + 1], const gd_u256 *v) {
    /* Nineteen digits per division by 10^19 (the largest power of ten in 64 bits). */
    static const uint64_t chunk = 10000000000000000000ull;
    uint64_t parts[5];
    size_t n = 0;
    gd_u256 x = *v;
    do {
        parts[n++] = gd_u256_divmod_u64(&x, &x, chunk);
    } while (!gd_u256_is_zero(&x));
    int o = snprintf(out, GD_U256_DEC_MAX + 1, "%llu", (unsigned long long)parts[n - 1]);
    for (size_t i = n - 1; i-- > 0;)
        o += snprintf(out + o, (size_t)(GD_U256_DEC_MAX + 1 - o), "%019llu",
                      (unsigned long long)parts[i]);
}
