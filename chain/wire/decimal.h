/* Canonical decimal strings: the real numbers of a run spec (learning
 * rates, betas, clip factors), which the chain stores and hashes but never
 * computes with. One spelling per value, so that equal specs have equal
 * bytes and one digest:
 *
 *   ("0" | [1-9][0-9]{0,11}) ("." [0-9]{0,17}[1-9])?
 *
 * "0.003", "1", "0.95" and "0.00000001" are canonical; "3e-3", ".5",
 * "0.50", "00.1", "1.", "-1", "+1" and "" are not. The exact value is an
 * integer part below 10^12 and a fraction in units of 10^-18, so the
 * chain compares values in integers (consensus code has no floats). */
#ifndef GD_CHAIN_WIRE_DECIMAL_H
#define GD_CHAIN_WIRE_DECIMAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"

#define GD_DECIMAL_INT_DIGITS 12
#define GD_DECIMAL_FRAC_DIGITS 18
#define GD_DECIMAL_TEXT_MAX (GD_DECIMAL_INT_DIGITS + 1 + GD_DECIMAL_FRAC_DIGITS)
/* 10^18: one in fraction units. */
#define GD_DECIMAL_ONE 1000000000000000000ull

/* The exact value integer + fraction / 10^18. */
typedef struct gd_decimal {
    uint64_t integer;  /* below 10^12 */
    uint64_t fraction; /* below 10^18 */
} gd_decimal;

/* Parses a canonical decimal. GD_ERR_INVALID (text quoted in the detail)
 * for anything the grammar above does not produce, NULL included. */
gd_status gd_decimal_parse(gd_decimal *out, const char *text) GD_MUST_CHECK;

/* -1, 0 or 1 as a is below, equal to or above b. */
int gd_decimal_cmp(const gd_decimal *a, const gd_decimal *b);

bool gd_decimal_is_zero(const gd_decimal *d);

/* Reads a decimal a person wrote ("3e-3", "0.50", "+1", ".5", "1E2"): an
 * optional '+', digits with at most one '.', an optional exponent. The value
 * must be exactly representable (below 10^12, at most 18 decimals after
 * the point). GD_ERR_INVALID otherwise, quoting the text. */
gd_status gd_decimal_read(gd_decimal *out, const char *text) GD_MUST_CHECK;

/* The canonical spelling (NUL-terminated, at most GD_DECIMAL_TEXT_MAX). */
void gd_decimal_format(const gd_decimal *d, char out[GD_DECIMAL_TEXT_MAX + 1]);

/* d / 10^k if that is exact in 18 decimals; GD_ERR_INVALID otherwise. */
gd_status gd_decimal_div_pow10(gd_decimal *d, unsigned k) GD_MUST_CHECK;

#endif
