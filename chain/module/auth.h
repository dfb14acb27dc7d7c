/* The auth module: accounts with their number, sequence and public key
 * (cosmos-sdk x/auth). Keys under store prefix 0x01:
 *   0x01 0x00              next account number (BE64)
 *   0x01 0x01 <raw addr>   account: kind byte (1 base, 2 module) + protobuf
 *                          BaseAccount or ModuleAccount, canonical */
#ifndef GD_CHAIN_MODULE_AUTH_H
#define GD_CHAIN_MODULE_AUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "chain/keys/address.h"
#include "chain/keys/keys.h"
#include "chain/module/app.h"

#define GD_AUTH_MODULE_NAME_MAX 64
#define GD_FEE_COLLECTOR "fee_collector"

/* Auth parameters with the SDK's defaults. */
#define GD_AUTH_MAX_MEMO_CHARACTERS 256
#define GD_AUTH_TX_SIG_LIMIT 7
#define GD_AUTH_TX_SIZE_COST_PER_BYTE 10
#define GD_AUTH_SIG_VERIFY_COST_SECP256K1 1000

typedef struct gd_account {
    char address[GD_ADDRESS_STR_MAX];
    uint64_t number;
    uint64_t sequence;
    bool has_pubkey;
    uint8_t pubkey[GD_PUBKEY_LEN];
    bool is_module;
    char module_name[GD_AUTH_MODULE_NAME_MAX]; /* module accounts only */
} gd_account;

extern const gd_module gd_auth_module;

/* GD_ERR_NOT_FOUND if the account does not exist. */
gd_status gd_auth_get(gd_ctx *ctx, gd_account *out, const char *address) GD_MUST_CHECK;
gd_status gd_auth_set(gd_ctx *ctx, const gd_account *account) GD_MUST_CHECK;
/* Creates a plain account with the next account number. */
gd_status gd_auth_create(gd_ctx *ctx, gd_account *out, const char *address) GD_MUST_CHECK;
/* The address of a module account: bech32("gonka", SHA256(name)[:20]), as
 * the SDK's authtypes.NewModuleAddress. */
gd_status gd_auth_module_address(char *out, size_t cap, const char *name) GD_MUST_CHECK;
/* Gets the named module account, creating it if missing. */
gd_status gd_auth_module_account(gd_ctx *ctx, gd_account *out, const char *name) GD_MUST_CHECK;

#endif
