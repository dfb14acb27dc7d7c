/* RFC 3339 date-times (common/rfc3339.h). Calendar arithmetic is done on
 * day numbers (proleptic Gregorian, H. Hinnant's civil-from-days), not with
 * timegm/gmtime, so the answer does not depend on the C library's time_t
 * range or its leniency (strptime takes "2026-02-30"). */
#include "common/rfc3339.h"

#include <stdio.h>
#include <string.h>

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds. */
#define GD_RFC3339_MIN_S (-62135596800LL)
#define GD_RFC3339_MAX_S 253402300799LL

static int64_t gd_days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void gd_civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int gd_month_days(int64_t y, int m) {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* n decimal digits at *p into *v, advancing *p. */
static bool gd_digits(const char **p, int n, int *v) {
    *v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        *v = *v * 10 + (c - '0');
    }
    *p += n;
    return true;
}

static bool gd_expect(const char **p, char c) {
    if (**p != c)
        return false;
    (*p)++;
    return true;
}

static gd_status gd_rfc3339_bad(const char *text, const char *why) {
    return gd_fail(GD_ERR_INVALID, "'%.60s' is not an RFC 3339 time such as "
                   "2026-01-31T12:00:00Z: %s", text, why);
}

gd_status gd_rfc3339_parse(gd_time *out, const char *text) {
    const char *p = text ? text : "";
    int y, mo, d, h, mi, s, oh = 0, om = 0;
    if (!gd_digits(&p, 4, &y) || !gd_expect(&p, '-') || !gd_digits(&p, 2, &mo) ||
        !gd_expect(&p, '-') || !gd_digits(&p, 2, &d))
        return gd_rfc3339_bad(text, strspn(text ? text : "", "0123456789") > 4
                                        ? "the year must be 0001 to 9999"
                                        : "it wants the date as YYYY-MM-DD");
    if (!gd_expect(&p, 'T') || !gd_digits(&p, 2, &h) || !gd_expect(&p, ':') ||
        !gd_digits(&p, 2, &mi) || !gd_expect(&p, ':') || !gd_digits(&p, 2, &s))
        return gd_rfc3339_bad(text, "it wants THH:MM:SS after the date");
    if (y < 1)
        return gd_rfc3339_bad(text, "the year must be 0001 to 9999");
    if (mo < 1 || mo > 12 || d < 1 || d > gd_month_days(y, mo))
        return gd_rfc3339_bad(text, "no such day");
    if (h > 23 || mi > 59 || s > 59)
        return gd_rfc3339_bad(text, "hours must be 00-23, minutes and seconds 00-59");
    int32_t nanos = 0;
    if (*p == '.') {
        p++;
        int n = 0;
        for (; *p >= '0' && *p <= '9'; p++, n++) {
            if (n == 9)
                return gd_rfc3339_bad(text, "at most 9 fraction digits");
            nanos = nanos * 10 + (*p - '0');
        }
        if (n == 0)
            return gd_rfc3339_bad(text, "no digits after the '.'");
        for (; n < 9; n++)
            nanos *= 10;
    }
    int sign = 0;
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p == '+' ? 1 : -1;
        p++;
        if (!gd_digits(&p, 2, &oh) || !gd_expect(&p, ':') || !gd_digits(&p, 2, &om) || oh > 23 ||
            om > 59)
            return gd_rfc3339_bad(text, "the offset must be +HH:MM or -HH:MM");
    } else {
        return gd_rfc3339_bad(text, "it must end in Z or an offset such as +02:00");
    }
    if (*p != '\0')
        return gd_rfc3339_bad(text, "unexpected text after the time");
    int64_t secs = gd_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s -
                   sign * (oh * 3600 + om * 60);
    if (secs < GD_RFC3339_MIN_S || secs > GD_RFC3339_MAX_S)
        return gd_rfc3339_bad(text, "in UTC it falls outside the years 0001 to 9999");
    out->unix_s = secs;
    out->nanos = nanos;
    return GD_OK;
}

gd_status gd_rfc3339_format(char *out, size_t cap, gd_time t, bool nanos9) {
    if (cap < GD_RFC3339_MAX || t.unix_s < GD_RFC3339_MIN_S || t.unix_s > GD_RFC3339_MAX_S ||
        t.nanos < 0 || t.nanos > 999999999)
        return gd_fail(GD_ERR_INVALID, "time %lld s is outside the years 0001 to 9999",
                       (long long)t.unix_s);
    int64_t days = t.unix_s >= 0 ? t.unix_s / 86400 : -((-t.unix_s + 86399) / 86400);
    int64_t rem = t.unix_s - days * 86400, y;
    int m, d;
    gd_civil_from_days(days, &y, &m, &d);
    int n = snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, m, d, (int)(rem / 3600),
                     (int)(rem / 60 % 60), (int)(rem % 60));
    if (nanos9) {
        snprintf(out + n, cap - (size_t)n, ".%09dZ", (int)t.nanos);
    } else if (t.nanos) {
        char frac[11];
        snprintf(frac, sizeof frac, ".%09d", (int)t.nanos);
        size_t len = strlen(frac);
        while (len > 2 && frac[len - 1] == '0') /* nanos != 0: a digit stays */
            frac[--len] = '\0';
        snprintf(out + n, cap - (size_t)n, "%sZ", frac);
    } else {
        snprintf(out + n, cap - (size_t)n, "Z");
    }
    return GD_OK;
}

int gd_time_cmp(gd_time a, gd_time b) {
    if (a.unix_s != b.unix_s)
        return a.unix_s < b.unix_s ? -1 : 1;
    return a.nanos < b.nanos ? -1 : a.nanos > b.nanos;
}

gd_time gd_time_add_ms(gd_time t, int64_t ms) {
    t.unix_s += ms / 1000;
    t.nanos += (int32_t)(ms % 1000) * 1000000;
    if (t.nanos >= 1000000000) {
        t.nanos -= 1000000000;
        t.unix_s++;
    }
    return t;
}
