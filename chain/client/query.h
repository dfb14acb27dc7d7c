/* Typed chain queries through abci_query's gRPC router: the request is the
 * protobuf request message, the answer the protobuf response message. The
 * answers' decoders are chain/wire/query_answer.h. */
#ifndef GD_CHAIN_CLIENT_QUERY_H
#define GD_CHAIN_CLIENT_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/client/rpc.h"
#include "chain/wire/query_answer.h"
#include "common/status.h"

/* When a query fails with a non-zero ABCI code, the code is kept here so the
 * caller can print codespace/code/log. */
typedef struct gd_query_error {
    gd_abci_code abci;
} gd_query_error;

/* Runs one abci_query of packed request bytes at path (latest height). A
 * non-zero ABCI code becomes GD_ERR_CHAIN, except the SDK's "not found"
 * codes (22 ErrKeyNotFound, which gRPC NotFound maps to, and 38
 * ErrNotFound), which become GD_ERR_NOT_FOUND; err keeps the code. On
 * GD_OK res->value holds the answer; free res with
 * gd_abci_query_result_free either way. */
gd_status gd_query_abci(gd_rpc *rpc, const char *path, const uint8_t *req, size_t len,
                        gd_abci_query_result *res, gd_query_error *err) GD_MUST_CHECK;

/* Account number and sequence. GD_ERR_NOT_FOUND if the account does not
 * exist (it has never received funds). */
gd_status gd_query_account_info(gd_rpc *rpc, gd_account_info *out, const char *address,
                                gd_query_error *err) GD_MUST_CHECK;

/* Balance of one denom (amount "0" when none). */
gd_status gd_query_balance(gd_rpc *rpc, gd_coin *out, const char *address, const char *denom,
                           gd_query_error *err) GD_MUST_CHECK;

/* Gonka's EpochInfo: block height, latest epoch and epoch parameters. */
gd_status gd_query_epoch_info(gd_rpc *rpc, gd_epoch_info *out,
                              gd_query_error *err) GD_MUST_CHECK;

/* Gas a transaction would use (Simulate with the given TxRaw bytes). */
gd_status gd_query_simulate(gd_rpc *rpc, const uint8_t *tx, size_t len, uint64_t *gas_used,
                            gd_query_error *err) GD_MUST_CHECK;

#endif
