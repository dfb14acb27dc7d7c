/* `gonka-localnet init`: a home directory with a genesis of N funded
 * accounts, their key files and the validator key. */
#ifndef GD_LOCALNET_INIT_H
#define GD_LOCALNET_INIT_H

#include <jansson.h>
#include <stddef.h>

#include "chain/wire/coin.h"
#include "chain/wire/epoch.h"
#include "common/status.h"

/* The node's own policy in the home (not consensus, like a Cosmos node's
 * app.toml): {"min_gas_price": "0.0025ngonka"}. */
#define GD_LOCALNET_APP_CONFIG "app.json"

typedef struct gd_init_options {
    const char *home;
    const char *chain_id;
    size_t accounts;
    gd_coin balance;               /* per account */
    gd_epoch_params epoch_params;  /* localnet's short epochs by default */
    const char *genesis_time;      /* RFC 3339 (common/rfc3339.h), stored in UTC; NULL: now */
    /* The DiLoCo module: account diloco_authority may create runs; with
     * diloco_run_spec (a RunSpec JSON file, docs/cli.md) genesis also
     * creates run 1 with a reward pool of diloco_pool, held by the
     * module account. */
    size_t diloco_authority;
    const char *diloco_run_spec;
    gd_coin diloco_pool;
    /* Recorded in app.json for start; NULL: GD_GAS_PRICE_DEFAULT. */
    const char *min_gas_price;
} gd_init_options;

/* Creates home (0700) with genesis.json (auth, bank, inference and diloco),
 * app.json (the minimum gas price), keys/account-N.key (0600),
 * keys/accounts.json (0644: [{"index", "address", "key_file"}], key_file
 * relative to home) and priv_validator_key.json. Refuses a home that
 * already has a genesis.json, and a genesis_time that is not a strict RFC
 * 3339 time (GD_ERR_INVALID). accounts_out, if not NULL, gets that list
 * (a new reference). */
gd_status gd_localnet_init(const gd_init_options *opt, json_t **accounts_out) GD_MUST_CHECK;

#endif
