/* The localnet's RPC methods: each parsed call becomes a JSON-RPC response
 * built from the node's answers. */
#include <stdio.h>
#include <string.h>

#include "localnet/cometbft_json.h"
#include "localnet/rpc_server.h"

static json_t *gd_error_response(const gd_incoming_call *call, int code, const char *message,
                                 const char *data) {
    return json_pack("{s:s,s:O,s:{s:i,s:s,s:s}}", "jsonrpc", "2.0", "id",
                     call->id ? call->id : json_null(), "error", "code", code, "message", message,
                     "data", data);
}

static json_t *gd_result_response(const gd_incoming_call *call, json_t *result) {
    return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", call->id ? call->id : json_null(),
                     "result", result);
}

/* An internal error as CometBFT reports Go errors: -32603 with the text. */
static json_t *gd_internal_error(const gd_incoming_call *call) {
    return gd_error_response(call, GD_RPC_ERR_INTERNAL, "Internal error", gd_error_detail());
}

static const gd_rpc_param_value *gd_param(const gd_incoming_call *call, const char *name) {
    int i = gd_rpc_param_index(call->method, name);
    return i >= 0 && call->params[i].present ? &call->params[i] : NULL;
}

static int64_t gd_param_i64(const gd_incoming_call *call, const char *name, int64_t dflt) {
    const gd_rpc_param_value *p = gd_param(call, name);
    return p ? p->i64 : dflt;
}

static json_t *gd_broadcast(gd_node *node, const gd_incoming_call *call, bool sync) {
    const gd_rpc_param_value *tx = gd_param(call, "tx");
    if (tx == NULL || tx->len == 0)
        return gd_error_response(call, GD_RPC_ERR_INVALID_PARAMS, "Invalid params",
                                 "tx: missing transaction bytes");
    gd_tx_outcome o;
    char hash[65];
    gd_status s = gd_node_broadcast(node, &o, tx->bytes, tx->len, hash);
    if (s != GD_OK) {
        gd_tx_outcome_free(&o);
        return gd_internal_error(call);
    }
    /* broadcast_tx_async answers before CheckTx on CometBFT: code 0 always. */
    json_t *r = json_pack("{s:i,s:s,s:s,s:s,s:s}", "code", sync ? (int)o.err.code : 0, "data", "",
                         "log", sync ? o.err.log : "", "codespace",
                         sync ? o.err.codespace : "", "hash", hash);
    gd_tx_outcome_free(&o);
    return r ? gd_result_response(call, r) : NULL;
}

json_t *gd_rpc_answer(gd_node *node, const char *rpc_address, const gd_incoming_call *call) {
    if (call->error_code != 0)
        return gd_error_response(call, call->error_code, call->error_message, call->error_data);
    const char *m = call->method->name;
    json_t *result = NULL;
    gd_status s = GD_OK;
    if (strcmp(m, "health") == 0) {
        result = json_object();
    } else if (strcmp(m, "status") == 0) {
        s = gd_node_status_json(node, &result, rpc_address);
    } else if (strcmp(m, "abci_info") == 0) {
        s = gd_node_abci_info_json(node, &result);
    } else if (strcmp(m, "abci_query") == 0) {
        const gd_rpc_param_value *path = gd_param(call, "path");
        const gd_rpc_param_value *data = gd_param(call, "data");
        s = gd_node_abci_query_json(node, &result, path ? path->str : "", data ? data->bytes : NULL,
                                    data ? data->len : 0, gd_param_i64(call, "height", 0));
    } else if (strcmp(m, "broadcast_tx_sync") == 0) {
        return gd_broadcast(node, call, true);
    } else if (strcmp(m, "broadcast_tx_async") == 0) {
        return gd_broadcast(node, call, false);
    } else if (strcmp(m, "tx") == 0) {
        const gd_rpc_param_value *hash = gd_param(call, "hash");
        if (hash == NULL)
            return gd_error_response(call, GD_RPC_ERR_INVALID_PARAMS, "Invalid params",
                                     "hash: missing");
        s = gd_node_tx_json(node, &result, hash->bytes, hash->len);
    } else if (strcmp(m, "tx_search") == 0) {
        const gd_rpc_param_value *q = gd_param(call, "query");
        const gd_rpc_param_value *order = gd_param(call, "order_by");
        if (q == NULL || q->str[0] == '\0')
            return gd_error_response(call, GD_RPC_ERR_INVALID_PARAMS, "Invalid params",
                                     "query: missing");
        bool desc = order && strcmp(order->str, "desc") == 0;
        if (order && order->str[0] && !desc && strcmp(order->str, "asc") != 0)
            return gd_error_response(call, GD_RPC_ERR_INTERNAL, "Internal error",
                                     "expected order_by to be either `asc` or `desc` or empty");
        s = gd_node_tx_search_json(node, &result, q->str, desc, gd_param_i64(call, "page", 1),
                                   gd_param_i64(call, "per_page", 30));
    } else if (strcmp(m, "block") == 0) {
        s = gd_node_block_json(node, &result, gd_param_i64(call, "height", 0));
    } else if (strcmp(m, "block_results") == 0) {
        s = gd_node_block_results_json(node, &result, gd_param_i64(call, "height", 0));
    } else if (strcmp(m, "genesis") == 0) {
        s = gd_node_genesis_json(node, &result);
    } else if (strcmp(m, "num_unconfirmed_txs") == 0) {
        s = gd_node_unconfirmed_json(node, &result);
    } else {
        return gd_error_response(call, GD_RPC_ERR_METHOD_NOT_FOUND, "Method not found", m);
    }
    if (s != GD_OK)
        return gd_internal_error(call);
    return result ? gd_result_response(call, result) : NULL;
}
