/* Canonical decimal strings (chain/wire/decimal.h). */
#include "chain/wire/decimal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static bool gd_is_digit(char c) { return c >= '0' && c <= '9'; }

static gd_status gd_decimal_bad(const char *text, const char *why) {
    return gd_fail(GD_ERR_INVALID,
                   "'%.40s' is not a canonical decimal (%s; write e.g. \"0.003\" or \"1\")",
                   text, why);
}

gd_status gd_decimal_parse(gd_decimal *out, const char *text) {
    if (text == NULL || text[0] == '\0')
        return gd_decimal_bad(text ? text : "", "it is empty");
    const char *p = text;
    uint64_t integer = 0;
    size_t digits = 0;
    if (!gd_is_digit(*p))
        return gd_decimal_bad(text, "it must start with a digit");
    if (*p == '0' && gd_is_digit(p[1]))
        return gd_decimal_bad(text, "the integer part has a leading zero");
    for (; gd_is_digit(*p); p++) {
        if (++digits > GD_DECIMAL_INT_DIGITS)
            return gd_decimal_bad(text, "the integer part has more than 12 digits");
        integer = integer * 10 + (uint64_t)(*p - '0');
    }
    uint64_t fraction = 0, scale = GD_DECIMAL_ONE;
    if (*p == '.') {
        p++;
        digits = 0;
        for (; gd_is_digit(*p); p++) {
            if (++digits > GD_DECIMAL_FRAC_DIGITS)
                return gd_decimal_bad(text, "more than 18 digits after the point");
            scale /= 10;
            fraction += (uint64_t)(*p - '0') * scale;
        }
        if (digits == 0)
            return gd_decimal_bad(text, "no digits after the point");
        if (p[-1] == '0')
            return gd_decimal_bad(text, "the fraction ends in 0");
    }
    if (*p != '\0')
        return gd_decimal_bad(text, "only digits and one '.' are allowed");
    out->integer = integer;
    out->fraction = fraction;
    return GD_OK;
}

int gd_decimal_cmp(const gd_decimal *a, const gd_decimal *b) {
    if (a->integer != b->integer)
        return a->integer < b->integer ? -1 : 1;
    if (a->fraction != b->fraction)
        return a->fraction < b->fraction ? -1 : 1;
    return 0;
}

bool gd_decimal_is_zero(const gd_decimal *d) { return d->integer == 0 && d->fraction == 0; }

/* Up to this many significant digits are read (more cannot be exact in 12 +
 * 18 digits). */
#define GD_DECIMAL_READ_DIGITS (GD_DECIMAL_INT_DIGITS + GD_DECIMAL_FRAC_DIGITS)

gd_status gd_decimal_read(gd_decimal *out, const char *text) {
    if (text == NULL || text[0] == '\0')
        return gd_fail(GD_ERR_INVALID, "'' is not a number");
    const char *p = text;
    if (*p == '+')
        p++;
    /* The digits without leading zeros, and the power of ten of the last. */
    char digits[GD_DECIMAL_READ_DIGITS + 1];
    size_t n = 0, seen = 0;
    long exp10 = 0;
    bool point = false;
    for (;; p++) {
        if (*p == '.' && !point) {
            point = true;
            continue;
        }
        if (!gd_is_digit(*p))
            break;
        seen++;
        if (n == 0 && *p == '0') {
            if (point)
                exp10--;
            continue;
        }
        if (n == GD_DECIMAL_READ_DIGITS)
            return gd_fail(GD_ERR_INVALID, "'%.40s' has more digits than 12 + 18 hold exactly",
                           text);
        digits[n++] = *p;
        if (point)
            exp10--;
    }
    if (seen == 0)
        return gd_fail(GD_ERR_INVALID, "'%.40s' is not a non-negative number", text);
    if (*p == 'e' || *p == 'E') {
        p++;
        int sign = 1;
        if (*p == '+' || *p == '-')
            sign = *p++ == '-' ? -1 : 1;
        long e = 0;
        size_t e_digits = 0;
        for (; gd_is_digit(*p); p++, e_digits++)
            if (e < 1000)
                e = e * 10 + (*p - '0');
        if (e_digits == 0)
            return gd_fail(GD_ERR_INVALID, "'%.40s' has an exponent without digits", text);
        exp10 += sign * e;
    }
    if (*p != '\0')
        return gd_fail(GD_ERR_INVALID, "'%.40s' is not a non-negative number", text);
    /* Drop trailing zeros into the exponent. */
    while (n > 0 && digits[n - 1] == '0') {
        n--;
        exp10++;
    }
    gd_decimal d = {0, 0};
    if (n > 0) {
        /* The last digit sits at 10^exp10; the first at 10^(exp10 + n - 1). */
        if (exp10 < -GD_DECIMAL_FRAC_DIGITS || exp10 + (long)n > GD_DECIMAL_INT_DIGITS)
            return gd_fail(GD_ERR_INVALID, "'%.40s' is not exact in 12 digits before and 18 "
                                           "after the point",
                           text);
        for (size_t i = 0; i < n; i++) {
            long at = exp10 + (long)(n - 1 - i); /* this digit's power of ten */
            uint64_t v = (uint64_t)(digits[i] - '0');
            if (at >= 0) {
                uint64_t scale = 1;
                for (long k = 0; k < at; k++)
                    scale *= 10;
                d.integer += v * scale;
            } else {
                uint64_t scale = GD_DECIMAL_ONE;
                for (long k = 0; k < -at; k++)
                    scale /= 10;
                d.fraction += v * scale;
            }
        }
    }
    *out = d;
    return GD_OK;
}

void gd_decimal_format(const gd_decimal *d, char out[GD_DECIMAL_TEXT_MAX + 1]) {
    int len = snprintf(out, GD_DECIMAL_TEXT_MAX + 1, "%llu", (unsigned long long)d->integer);
    if (d->fraction == 0 || len < 0)
        return;
    char frac[GD_DECIMAL_FRAC_DIGITS + 1];
    snprintf(frac, sizeof frac, "%018llu", (unsigned long long)d->fraction);
    size_t keep = GD_DECIMAL_FRAC_DIGITS;
    while (keep > 0 && frac[keep - 1] == '0')
        keep--;
    frac[keep] = '\0';
    snprintf(out + len, GD_DECIMAL_TEXT_MAX + 1 - (size_t)len, ".%s", frac);
}

gd_status gd_decimal_div_pow10(gd_decimal *d, unsigned k) {
    for (unsigned i = 0; i < k; i++) {
        if (d->fraction % 10 != 0)
            return gd_fail(GD_ERR_INVALID, "a tenth of this value needs more than 18 decimals");
        d->fraction = d->fraction / 10 + (d->integer % 10) * (GD_DECIMAL_ONE / 10);
        d->integer /= 10;
    }
    return GD_OK;
}
