/* Coin amounts as the Cosmos CLI takes them: "1000ngonka" or a comma list
 * "10ngonka,5stake". Amounts are non-negative decimal integers no larger than
 * 2^256 - 1 (cosmos math.Int's limit); denoms follow the SDK's rule
 * [a-zA-Z][a-zA-Z0-9/:._-]{2,127}. */
#ifndef GD_CHAIN_WIRE_COIN_H
#define GD_CHAIN_WIRE_COIN_H

#include <stddef.h>

#include "common/status.h"

#define GD_DENOM_MAX 128
#define GD_AMOUNT_DIGITS_MAX 78 /* 2^256 - 1 has 78 digits */
#define GD_COINS_MAX 16
#define GD_DENOM_DEFAULT "ngonka"

typedef struct gd_coin {
    char denom[GD_DENOM_MAX + 1];
    char amount[GD_AMOUNT_DIGITS_MAX + 1]; /* canonical: no leading zeros */
} gd_coin;

/* Parses one coin such as "1000ngonka". Leading zeros are dropped. */
gd_status gd_coin_parse(gd_coin *coin, const char *text) GD_MUST_CHECK;

/* Parses a comma-separated list into coins sorted by denom, as the SDK
 * requires (sdk.Coins). Duplicate denoms are refused; zero amounts are
 * refused when require_positive (MsgSend amounts), and dropped otherwise
 * (fees), as sdk.NewCoins does. An empty string gives zero coins. */
gd_status gd_coins_parse(gd_coin *coins, size_t cap, size_t *count, const char *text,
                         int require_positive) GD_MUST_CHECK;

/* Validates a denom against the SDK's regular expression. */
gd_status gd_denom_check(const char *denom) GD_MUST_CHECK;

/* Validates an amount string (canonical decimal, at most 2^256 - 1). */
gd_status gd_amount_check(const char *amount) GD_MUST_CHECK;
/* Orders two canonical amounts (decimal digits, no leading zeros): <0, 0, >0. */
int gd_amount_cmp(const char *a, const char *b);

#endif
