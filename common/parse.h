/* Strict parsers for numbers and durations given as text (command line,
 * config, and the int64-as-string values of CometBFT JSON). */
#ifndef GD_COMMON_PARSE_H
#define GD_COMMON_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"

/* Decimal digits only (no sign, no spaces), value <= UINT64_MAX. */
gd_status gd_parse_u64(uint64_t *out, const char *text) GD_MUST_CHECK;

/* Optional leading '-', then decimal digits, within int64 range. */
gd_status gd_parse_i64(int64_t *out, const char *text) GD_MUST_CHECK;

/* A size in bytes such as "80G", "512M", "64K", "2T" (binary units: G is
 * 2^30) or a bare byte count; at least 1, within 64 bits. */
gd_status gd_parse_size(uint64_t *out, const char *text) GD_MUST_CHECK;

/* A duration such as "500ms", "2s", "1.5s", "3m" or "1h" in milliseconds.
 * A bare number is taken as milliseconds. */
gd_status gd_parse_duration_ms(const char *text, int64_t *out_ms) GD_MUST_CHECK;

#endif
