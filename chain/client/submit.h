/* Submitting a signed transaction the way a Gonka host's software does:
 * read account number and sequence, sign, broadcast_tx_sync, and on code 32
 * (account sequence mismatch) take the sequence the chain expects and sign
 * again; then poll /tx until the transaction is in a block. */
#ifndef GD_CHAIN_CLIENT_SUBMIT_H
#define GD_CHAIN_CLIENT_SUBMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "chain/client/rpc.h"
#include "chain/keys/keys.h"
#include "chain/wire/tx.h"
#include "common/status.h"

typedef struct gd_submit_options {
    bool have_account;        /* req->account_number/sequence are given: skip the query */
    bool gas_auto;            /* simulate and set gas = used * gas_adjustment */
    double gas_adjustment;    /* default 1.0, as the Cosmos CLI */
    bool wait;                /* poll until included; default true */
    long wait_timeout_ms;     /* default 30000 */
    long poll_interval_ms;    /* longest pause between polls; default 300 */
    int max_sequence_retries; /* re-signs after code 32; default 3 */
} gd_submit_options;

typedef struct gd_submit_result {
    char txhash[GD_TXHASH_HEX_LEN + 1];
    uint64_t account_number;
    uint64_t sequence;    /* the sequence the accepted transaction used */
    uint64_t gas_limit;
    char fee[512];        /* the fee it paid, "500ngonka" ("" for none) */
    gd_abci_code check;   /* CheckTx outcome */
    bool included;        /* found in a block (when waiting) */
    int64_t height;
    gd_abci_code deliver; /* outcome in the block */
    int64_t gas_wanted;
    int64_t gas_used;
    bool wrong_chain;     /* refused for its signature, and the node is on another chain
                           * than req->chain_id: no later transaction can pass either */
} gd_submit_result;

void gd_submit_options_default(gd_submit_options *opt);

/* Signs req with key and submits it. req->account_number and ->sequence
 * are filled in from the chain unless opt->have_account. Returns
 * GD_ERR_CHAIN when CheckTx or the block rejects it (out has the code),
 * GD_ERR_TIMEOUT when it was accepted but not seen in a block in time. */
gd_status gd_tx_submit(gd_rpc *rpc, const gd_key *key, gd_tx_request *req,
                       const gd_submit_options *opt, gd_submit_result *out) GD_MUST_CHECK;

/* Waits for the transaction with this hash (SHA-256 of its bytes) to be in
 * a block, as gd_tx_submit does with opt->wait (the same pauses and
 * timeout): GD_ERR_CHAIN when it failed there (out->deliver has the code),
 * GD_ERR_TIMEOUT when it was not seen in time. */
gd_status gd_tx_await(gd_rpc *rpc, gd_submit_result *out, const uint8_t hash[32],
                      const gd_submit_options *opt) GD_MUST_CHECK;

/* Broadcasts an already signed transaction and, if opt->wait, waits for its
 * block. No re-signing is possible here, so code 32 is simply an error. */
gd_status gd_tx_broadcast_signed(gd_rpc *rpc, const gd_signed_tx *tx,
                                 const gd_submit_options *opt,
                                 gd_submit_result *out) GD_MUST_CHECK;

/* Parses "account sequence mismatch, expected N, got M" (the SDK's
 * ErrWrongSequence log) for N. */
gd_status gd_parse_expected_sequence(const char *log, uint64_t *expected) GD_MUST_CHECK;

#endif
