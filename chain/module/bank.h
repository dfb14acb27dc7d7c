/* The bank module: balances and total supply (cosmos-sdk x/bank), MsgSend
 * and the Balance query. Keys under store prefix 0x02:
 *   0x02 0x00 <denom>                     total supply (decimal)
 *   0x02 0x01 <len> <raw addr> <denom>    balance (decimal; zero is not stored)
 * Module accounts cannot receive through MsgSend (the SDK's blocked
 * addresses). */
#ifndef GD_CHAIN_MODULE_BANK_H
#define GD_CHAIN_MODULE_BANK_H

#include <stddef.h>

#include "chain/module/app.h"
#include "chain/module/u256.h"
#include "chain/wire/coin.h"

extern const gd_module gd_bank_module;

/* Balance of one denom (zero when none). */
gd_status gd_bank_balance(gd_ctx *ctx, gd_u256 *out, const char *address,
                          const char *denom) GD_MUST_CHECK;
/* Moves coins, emitting coin_spent, coin_received, transfer and message
 * events; SDK code 5 when the sender lacks funds. Creates the recipient's
 * account if needed. */
gd_status gd_bank_send(gd_ctx *ctx, const char *from, const char *to, const gd_coin *coins,
                       size_t n) GD_MUST_CHECK;
/* Creates coins in an account and the supply (genesis and module use). */
gd_status gd_bank_mint(gd_ctx *ctx, const char *to, const gd_coin *coins,
                       size_t n) GD_MUST_CHECK;
/* Destroys coins from an account and the supply. */
gd_status gd_bank_burn(gd_ctx *ctx, const char *from, const gd_coin *coins,
                       size_t n) GD_MUST_CHECK;
/* Formats coins as the SDK's Coins.String(): "10ngonka,5stake". */
void gd_coins_string(char *out, size_t cap, const gd_coin *coins, size_t n);

#endif
