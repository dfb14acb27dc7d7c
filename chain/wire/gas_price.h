/* Gas prices as the Cosmos SDK writes them: a decimal amount of one denom
 * per unit of gas, "0.0025ngonka". A node's minimum gas price makes it
 * refuse, in CheckTx, a transaction whose fee in that denom is below
 * ceil(gas_limit x price) (code 13, insufficient fee); a client given a
 * gas price instead of explicit fees pays exactly that amount. Both sides
 * compute it here, so what the client pays is what the node requires.
 *
 * GD_GAS_PRICE_DEFAULT is the one home of the default: gonka-localnet's
 * minimum gas price and gonka-diloco's gas price when no --fees or
 * --gas-prices is given. 0.0025ngonka per unit of gas is 500ngonka for the
 * default 200000 gas (a MsgSend), 7500ngonka for a 3000000-gas DiLoCo
 * message: every transaction pays in proportion to the gas it may use, so
 * filling blocks costs something, while a localnet account's default
 * balance (1000000000000ngonka) still pays for two billion default
 * transactions. The fraction also means any transaction pays at least
 * 1ngonka (the ceiling). */
#ifndef GD_CHAIN_WIRE_GAS_PRICE_H
#define GD_CHAIN_WIRE_GAS_PRICE_H

#include <stdbool.h>
#include <stdint.h>

#include "chain/wire/coin.h"
#include "common/status.h"

#define GD_GAS_PRICE_DEFAULT "0.0025ngonka"
#define GD_GAS_PRICE_TEXT_MAX 160 /* 12 + 1 + 18 digits and a denom */

/* integer + fraction / 10^18 of denom per unit of gas. */
typedef struct gd_gas_price {
    uint64_t integer;  /* below 10^12 */
    uint64_t fraction; /* below 10^18 */
    char denom[GD_DENOM_MAX + 1]; /* "" only for a zero price written "0" */
} gd_gas_price;

/* Parses DIGITS[.DIGITS]DENOM ("0.0025ngonka", "1ngonka"): at most 12
 * digits before the point (after leading zeros) and 18 after it. A zero
 * price may leave out the denom ("0"): it asks for no fee. GD_ERR_INVALID,
 * quoting the text, otherwise. */
gd_status gd_gas_price_parse(gd_gas_price *out, const char *text) GD_MUST_CHECK;

bool gd_gas_price_is_zero(const gd_gas_price *p);

/* The fee this price asks for gas_limit: ceil(gas_limit x price) of
 * p->denom, canonical ("0" for a zero price). Exact, never overflows. */
void gd_gas_price_fee(const gd_gas_price *p, uint64_t gas_limit,
                      char amount[GD_AMOUNT_DIGITS_MAX + 1]);

/* The canonical spelling ("0.0025ngonka", "0" for a zero price). */
void gd_gas_price_format(const gd_gas_price *p, char out[GD_GAS_PRICE_TEXT_MAX + 1]);

#endif
