/* The application: the chain's state machine as a chain node drives it
 * (gonka-localnet, localnet/node.c; in one process plugin/sim/sim_net.c and
 * the tests' fixtures), in the shape of ABCI 2.0 (CometBFT 0.38): InitChain
 * (gd_app_init_chain), CheckTx (gd_app_check_tx), FinalizeBlock
 * (gd_app_begin_block, gd_app_deliver_tx for each transaction,
 * gd_app_end_block), Commit (gd_app_commit), Query (gd_app_query), and the
 * SDK's Simulate (gd_app_simulate).
 *
 * Modules (auth, bank, Gonka's epoch module and the DiLoCo training module,
 * which gd_app_register_standard registers in that order) register message
 * handlers by type URL, query handlers by gRPC path, block hooks, genesis
 * import/export and invariants. Everything here is deterministic and does
 * no I/O: the same genesis and the same transactions give the same app hash
 * on any machine. Persistence is the node's: it feeds the committed state
 * back through gd_app_store and gd_app_restored. */
#ifndef GD_CHAIN_MODULE_APP_H
#define GD_CHAIN_MODULE_APP_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/module/context.h"
#include "chain/module/store.h"
#include "chain/wire/gas_price.h"
#include "common/bytes.h"
#include "common/status.h"

typedef struct gd_app gd_app;

/* How the router decodes a message type's bytes (gd_msg_route_decode). */
typedef enum gd_msg_decoding {
    /* As the Cosmos SDK does: unknown fields are refused (code 2, naming
     * the offending tag), and bytes that do not decode are "<full name>
     * does not decode" (code 2). */
    GD_MSG_DECODE_STRICT = 0,
    /* protobuf's plain rule, unknown fields skipped; bytes that do not
     * decode are "<short name> does not decode" (code 2). Bank's MsgSend
     * has always been decoded so: refusing its unknown fields would change
     * which transactions pass, a chain upgrade's decision. */
    GD_MSG_DECODE_PLAIN,
} gd_msg_decoding;

/* A message type a module executes. The router decodes each message once
 * (gd_msg_route_decode), hands the decoded message to validate and then to
 * execute, and frees it after; a handler casts it to its concrete type. */
typedef struct gd_msg_route {
    const char *type_url;
    const ProtobufCMessageDescriptor *type;
    /* Stateless checks (ValidateBasic): on failure records an ABCI error in
     * ctx (gd_ctx_fail); on success writes the one signer's bech32 address. */
    gd_status (*validate)(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer,
                          size_t signer_cap);
    /* Executes the message; response receives the serialized response
     * message (its type URL is type_url + "Response"). */
    gd_status (*execute)(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                         gd_buf *response);
    gd_msg_decoding decoding; /* GD_MSG_DECODE_STRICT unless said */
} gd_msg_route;

/* Decodes a message's bytes as route's type by route's decoding: the one
 * place the chain decodes a message (the ante checks and execution share
 * what it gives; harnesses that call a route directly use it too). On
 * failure records the ABCI error in ctx and returns GD_ERR_CHAIN; free *out
 * with protobuf_c_message_free_unpacked(*out, NULL). */
gd_status gd_msg_route_decode(const gd_msg_route *route, gd_ctx *ctx, ProtobufCMessage **out,
                              const uint8_t *data, size_t len) GD_MUST_CHECK;

/* A gRPC query path a module answers (request and response protobuf). */
typedef struct gd_query_route {
    const char *path;
    gd_status (*handle)(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                        gd_buf *response);
} gd_query_route;

typedef struct gd_module {
    const char *name; /* the genesis app_state key */
    const gd_msg_route *msgs;
    size_t n_msgs;
    const gd_query_route *queries;
    size_t n_queries;
    gd_status (*init_genesis)(gd_app *app, gd_ctx *ctx, const json_t *state);
    /* Returns a new reference, or NULL with the detail set. */
    json_t *(*export_genesis)(gd_app *app, gd_ctx *ctx);
    gd_status (*begin_block)(gd_app *app, gd_ctx *ctx);
    gd_status (*end_block)(gd_app *app, gd_ctx *ctx);
    /* Checks the module's invariants on a state view; GD_ERR_STATE-like
     * failures carry a detail naming the broken invariant. */
    gd_status (*check_invariants)(gd_app *app, gd_kv *kv);
} gd_module;

/* Node-local policy (not consensus): like a node's app.toml. */
typedef struct gd_app_config {
    /* Minimum gas price a transaction's fee must pay in CheckTx, as a
     * decimal with up to 18 fractional digits and a denom, e.g.
     * "0.0025ngonka" (chain/wire/gas_price.h); "", "0" or "0ngonka" accepts zero
     * fees. gonka-localnet sets GD_GAS_PRICE_DEFAULT unless told otherwise. */
    char min_gas_price[GD_GAS_PRICE_TEXT_MAX + 1];
} gd_app_config;

/* The result of one transaction, as ExecTxResult / ResponseCheckTx. */
typedef struct gd_tx_outcome {
    gd_abci_error err; /* code 0 on success */
    uint64_t gas_wanted;
    uint64_t gas_used;
    gd_buf data;       /* TxMsgData on success */
    gd_events events;
} gd_tx_outcome;

void gd_tx_outcome_free(gd_tx_outcome *o);

gd_status gd_app_new(gd_app **out, const gd_app_config *config) GD_MUST_CHECK;
void gd_app_free(gd_app *app);

/* Registers a module; call before gd_app_init_chain/gd_app_load. The order
 * of registration is the order of genesis, hooks and export. */
gd_status gd_app_register(gd_app *app, const gd_module *module) GD_MUST_CHECK;
/* Registers auth, bank, the epoch module (inference) and the DiLoCo
 * training module (diloco). */
gd_status gd_app_register_standard(gd_app *app) GD_MUST_CHECK;

/* Imports a genesis document's app_state. Fails (nothing committed) on any
 * invalid entry. chain_id and initial_height come from the document. */
gd_status gd_app_init_chain(gd_app *app, const json_t *genesis) GD_MUST_CHECK;

/* Restores committed state: feed every persisted key with gd_app_store(),
 * then call gd_app_restored(height, app_hash), which checks the hash. */
gd_store *gd_app_store(gd_app *app);
gd_status gd_app_restored(gd_app *app, const char *chain_id, int64_t height,
                          const uint8_t app_hash[32]) GD_MUST_CHECK;

/* Mempool admission against the check state (ante checks only, like the
 * SDK's CheckTx); a passing transaction's sequence counts for the next. */
gd_status gd_app_check_tx(gd_app *app, gd_tx_outcome *out, const uint8_t *tx,
                          size_t len) GD_MUST_CHECK;

/* Block execution: begin (height and the block hash, which hooks may use as
 * randomness), each transaction, end. block_events receive the begin/end
 * events. */
gd_status gd_app_begin_block(gd_app *app, int64_t height, const uint8_t block_hash[32],
                             gd_events *block_events) GD_MUST_CHECK;
gd_status gd_app_deliver_tx(gd_app *app, gd_tx_outcome *out, const uint8_t *tx,
                            size_t len) GD_MUST_CHECK;
gd_status gd_app_end_block(gd_app *app, gd_events *block_events) GD_MUST_CHECK;

/* Writes the block's state into the base store, computes the app hash and
 * resets the check state (the node then re-checks its mempool). */
gd_status gd_app_commit(gd_app *app, uint8_t app_hash[32]) GD_MUST_CHECK;

/* Runs a transaction without a signature check on a throw-away copy of the
 * committed state: its gas and result (cosmos.tx.v1beta1.Service/Simulate). */
gd_status gd_app_simulate(gd_app *app, gd_tx_outcome *out, const uint8_t *tx,
                          size_t len) GD_MUST_CHECK;

/* Answers an abci_query gRPC path against the committed state. A module
 * error comes back in err with GD_OK; GD_ERR_* only for internal failures. */
gd_status gd_app_query(gd_app *app, const char *path, const uint8_t *data, size_t len,
                       gd_buf *response, gd_abci_error *err) GD_MUST_CHECK;

/* The app_state of a genesis document for the committed state. */
json_t *gd_app_export(gd_app *app);

/* Checks every module's invariants on the committed state. */
gd_status gd_app_check_invariants(gd_app *app) GD_MUST_CHECK;

int64_t gd_app_height(const gd_app *app);
const char *gd_app_chain_id(const gd_app *app);
void gd_app_hash(const gd_app *app, uint8_t out[32]);

/* A module's view of the app: another module's keeper functions take it. */
const gd_app_config *gd_app_get_config(const gd_app *app);

#endif
