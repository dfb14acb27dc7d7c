/* Strict number parsing. */
#include "common/parse.h"

#include <string.h>

gd_status gd_parse_u64(uint64_t *out, const char *text) {
    if (text == NULL || text[0] == '\0')
        return gd_fail(GD_ERR_PARSE, "expected a number, got an empty string");
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return gd_fail(GD_ERR_PARSE, "'%s' is not a non-negative integer", text);
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return gd_fail(GD_ERR_PARSE, "'%s' is out of range for a 64-bit integer", text);
        v = v * 10 + d;
    }
    *out = v;
    return GD_OK;
}

gd_status gd_parse_size(uint64_t *out, const char *text) {
    static const char units[] = "KMGT";
    size_t len = text ? strlen(text) : 0;
    unsigned shift = 0;
    char digits[32];
    const char *unit = len > 0 ? strchr(units, text[len - 1]) : NULL;
    if (unit != NULL && *unit != '\0') {
        shift = 10 * (unsigned)(unit - units + 1);
        len--;
    }
    uint64_t v = 0;
    if (len == 0 || len >= sizeof digits)
        return gd_fail(GD_ERR_PARSE, "'%s' is not a size such as 80G, 512M or a byte count",
                       text ? text : "");
    memcpy(digits, text, len);
    digits[len] = '\0';
    if (gd_parse_u64(&v, digits) != GD_OK || v == 0 || v > (UINT64_MAX >> shift))
        return gd_fail(GD_ERR_PARSE, "'%s' is not a size such as 80G, 512M or a byte count",
                       text);
    *out = v << shift;
    return GD_OK;
}

gd_status gd_parse_i64(int64_t *out, const char *text) {
    if (text == NULL || text[0] == '\0')
        return gd_fail(GD_ERR_PARSE, "expected a number, got an empty string");
    bool negative = text[0] == '-';
    uint64_t mag;
    if (gd_parse_u64(&mag, text + negative) != GD_OK)
        return gd_fail(GD_ERR_PARSE, "'%s' is not an integer", text);
    if (negative) {
        if (mag > (uint64_t)INT64_MAX + 1)
            return gd_fail(GD_ERR_PARSE, "'%s' is out of range for a 64-bit integer", text);
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX)
            return gd_fail(GD_ERR_PARSE, "'%s' is out of range for a 64-bit integer", text);
        *out = (int64_t)mag;
    }
    return GD_OK;
}

gd_status gd_parse_duration_ms(const char *text, int64_t *out_ms) {
    static const struct {
        const char *suffix;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    if (text == NULL || text[0] == '\0')
        return gd_fail(GD_ERR_PARSE, "expected a duration such as 500ms or 2s");
    /* Integer part, optional fraction of up to 3 digits, then a unit. */
    const char *p = text;
    int64_t whole = 0, frac = 0, frac_scale = 1;
    if (*p < '0' || *p > '9')
        return gd_fail(GD_ERR_PARSE, "'%s' is not a duration (e.g. 500ms, 2s, 1m)", text);
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > (INT64_MAX - 9) / 10)
            return gd_fail(GD_ERR_PARSE, "duration '%s' is too large", text);
        whole = whole * 10 + (*p - '0');
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return gd_fail(GD_ERR_PARSE, "'%s' is not a duration (e.g. 500ms, 2s, 1m)", text);
        for (; *p >= '0' && *p <= '9'; p++) {
            if (frac_scale >= 1000)
                return gd_fail(GD_ERR_PARSE, "duration '%s' has more than 3 decimals", text);
            frac = frac * 10 + (*p - '0');
            frac_scale *= 10;
        }
    }
    int64_t unit = 1;
    if (*p != '\0') {
        unit = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcmp(p, units[i].suffix) == 0)
                unit = units[i].ms;
        if (unit == 0)
            return gd_fail(GD_ERR_PARSE, "'%s' has an unknown unit (use ms, s, m or h)", text);
    }
    if (whole > INT64_MAX / unit / 2)
        return gd_fail(GD_ERR_PARSE, "duration '%s' is too large", text);
    *out_ms = whole * unit + frac * unit / frac_scale;
    return GD_OK;
}
