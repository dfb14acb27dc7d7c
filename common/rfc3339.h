/* RFC 3339 date-times as CometBFT (Go's time.RFC3339Nano) writes them in
 * genesis files and block headers: strict parsing, and formatting in UTC. */
#ifndef GD_COMMON_RFC3339_H
#define GD_COMMON_RFC3339_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* Longest text gd_rfc3339_format writes, with its terminator. */
#define GD_RFC3339_MAX 31

/* An instant: seconds since 1970-01-01T00:00:00Z (negative before it) and
 * nanoseconds into that second. */
typedef struct gd_time {
    int64_t unix_s;
    int32_t nanos; /* 0..999999999 */
} gd_time;

/* Parses "YYYY-MM-DDTHH:MM:SS[.F]Z" or with "+HH:MM"/"-HH:MM" for Z: upper
 * case T and Z, 1 to 9 fraction digits, a day the month has (leap years
 * counted), hours 00-23, minutes and seconds 00-59 (no leap second, as Go),
 * offsets up to 23:59, and an instant, in UTC, from year 0001 to 9999.
 * Anything else, trailing text included, is GD_ERR_INVALID with the reason. */
gd_status gd_rfc3339_parse(gd_time *out, const char *text) GD_MUST_CHECK;

/* Writes t in UTC: "YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ" (nine digits, as
 * CometBFT prints block times) when nanos9, else Go's RFC3339Nano form with
 * the fraction's trailing zeros, and a zero fraction, left out. Fails with
 * GD_ERR_INVALID outside years 0001 to 9999 or with cap below
 * GD_RFC3339_MAX. */
gd_status gd_rfc3339_format(char *out, size_t cap, gd_time t, bool nanos9) GD_MUST_CHECK;

/* -1, 0 or 1 as a is before, the same as or after b. */
int gd_time_cmp(gd_time a, gd_time b);

/* t plus ms milliseconds (ms >= 0). */
gd_time gd_time_add_ms(gd_time t, int64_t ms);

#endif
