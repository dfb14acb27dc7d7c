/* Canonical decimal strings (chain/decimal.h). */
#include "chain/decimal.h"

#include <stddef.h>

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
