/* What every transaction command shares with 'tx send': the common flags
 * (chain id, gas, fees, memo, offline signing, waiting), the signer's key,
 * and signing then printing (--offline) or submitting and printing the
 * outcome. A command parses its own flags and the common ones, loads the
 * key, builds its message(s) for the signer and hands them to
 * gd_cli_tx_send. */
#ifndef GD_PLUGIN_CLI_CLI_SUBMIT_H
#define GD_PLUGIN_CLI_CLI_SUBMIT_H

#include <stdbool.h>

#include "chain/client/rpc.h"
#include "chain/client/submit.h"
#include "chain/keys/address.h"
#include "chain/keys/keys.h"
#include "chain/wire/coin.h"
#include "chain/wire/gas_price.h"
#include "chain/wire/msg.h"
#include "plugin/cli/cli_util.h"

/* The common options, after a command's own (which start with --key). */
#define GD_TX_OPTS                                                                            \
    {"chain-id", "ID", "chain id, e.g. gonka-mainnet (online default: the node's)"},          \
        {"memo", "TEXT", "transaction memo"},                                                 \
        {"gas", "N|auto", "gas limit (default 200000); auto simulates first"},                \
        {"gas-adjustment", "X", "factor on simulated gas with --gas auto (default 1.0)"},     \
        {"fees", "COINS", "fee, e.g. 500ngonka (default: gas x --gas-prices)"},               \
        {"gas-prices", "PRICE", "fee per unit of gas (default " GD_GAS_PRICE_DEFAULT             \
                                "; 0 for no fee)"},                                           \
        {"timeout-height", "H", "reject the transaction after block H"},                      \
        {"offline", NULL, "sign only: print the transaction, contact no node"},               \
        {"account-number", "N", "signer's account number (required with --offline)"},         \
        {"sequence", "S", "signer's sequence (required with --offline)"},                     \
        {"no-wait", NULL, "return once the node accepts it, without waiting for a block"},    \
        {"wait-timeout", "DURATION", "how long to wait for a block (default 30s)"},           \
        GD_RPC_OPTS, {"json", NULL, "print the result as JSON"}

typedef struct gd_cli_tx {
    gd_tx_request req;
    gd_submit_options opt;
    bool offline;
    gd_coin fees[GD_COINS_MAX];
    gd_gas_price gas_price; /* req.gas_price points here unless --fees */
    gd_key key;
    char signer[GD_ADDRESS_STR_MAX]; /* the key's address, once loaded */
    gd_rpc *rpc;                     /* opened on first use */
    /* What the command adds to the output (string values only): a salt or
     * a secret the signer needs later. Owned here; gd_cli_tx_end frees it. */
    json_t *extra;
    /* A message for one round of a run: a delivery refused for a round
     * that is not (yet) current says when it can be (cli_round_hint.h). */
    bool for_round;
    uint64_t run, round;
} gd_cli_tx;

/* Parses the common flags into tx (zeroed here). Returns GD_CLI_CONTINUE to go on, or an
 * exit code after printing the error. Always pair with gd_cli_tx_end. */
int gd_cli_tx_parse(gd_cli *cli, gd_args *args, gd_cli_tx *tx);

/* Reads --key and the signer's address. GD_CLI_CONTINUE or an exit code. */
int gd_cli_tx_load_key(gd_cli *cli, gd_args *args, gd_cli_tx *tx);

/* The node connection (opened once), for commands that query before they
 * sign; refused with --offline. GD_CLI_CONTINUE or an exit code. */
int gd_cli_tx_rpc(gd_cli *cli, gd_args *args, gd_cli_tx *tx);

/* Signs msgs with the loaded key; with --offline prints the signed bytes
 * and hash, else submits (chain id from the node unless given) and prints
 * the outcome. tx->extra's keys come first as text, before anything is
 * sent (so that a salt is on the screen even when the submission then
 * fails), and join the JSON object printed with --json. Returns the exit
 * code. */
int gd_cli_tx_send(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_any *msgs, size_t n_msgs);

/* Wipes the key, closes the connection, frees extra. */
void gd_cli_tx_end(gd_cli_tx *tx);

/* The outcome of an online submission or broadcast, as text or --json. */
int gd_cli_print_submit(gd_cli *cli, gd_args *args, const gd_submit_result *r);
/* After a failed submission: what is known (hash, code) with --json, then
 * the error line. */
int gd_cli_submit_failed(gd_cli *cli, gd_args *args, const gd_submit_result *r, gd_status s);

#endif
