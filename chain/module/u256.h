/* Unsigned 256-bit integers for coin amounts (cosmos math.Int holds up to
 * 2^256 - 1). Four little-endian 64-bit limbs; every operation is exact and
 * reports overflow instead of wrapping. No floating point anywhere. */
#ifndef GD_CHAIN_MODULE_U256_H
#define GD_CHAIN_MODULE_U256_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"

#define GD_U256_DEC_MAX 78 /* digits of 2^256 - 1 */

typedef struct gd_u256 {
    uint64_t w[4]; /* w[0] least significant */
} gd_u256;

/* Parses a canonical decimal string ("0", or digits without a leading zero)
 * no larger than 2^256 - 1. GD_ERR_PARSE otherwise; *out untouched then. */
gd_status gd_u256_parse(gd_u256 *out, const char *dec) GD_MUST_CHECK;

/* Writes the canonical decimal form and a NUL (out holds 79 bytes). */
void gd_u256_format(char out[GD_U256_DEC_MAX + 1], const gd_u256 *v);

void gd_u256_from_u64(gd_u256 *out, uint64_t v);
bool gd_u256_is_zero(const gd_u256 *v);
/* -1, 0 or 1. */
int gd_u256_cmp(const gd_u256 *a, const gd_u256 *b);

/* out = a + b; false (out untouched) on overflow. out may alias a or b. */
bool gd_u256_add(gd_u256 *out, const gd_u256 *a, const gd_u256 *b) GD_MUST_CHECK;
/* out = a - b; false (out untouched) if b > a. out may alias a or b. */
bool gd_u256_sub(gd_u256 *out, const gd_u256 *a, const gd_u256 *b) GD_MUST_CHECK;
/* out = a * m; false (out untouched) on overflow. out may alias a. */
bool gd_u256_mul_u64(gd_u256 *out, const gd_u256 *a, uint64_t m) GD_MUST_CHECK;
/* q = a / d, returns a % d; d must not be 0. q may alias a. */
uint64_t gd_u256_divmod_u64(gd_u256 *q, const gd_u256 *a, uint64_t d);

#endif
