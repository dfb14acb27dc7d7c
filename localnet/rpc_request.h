/* Parsing of requests to the localnet's CometBFT-compatible RPC, in both
 * forms a CometBFT 0.38 node accepts (rpc/jsonrpc/server):
 *
 *  - JSON-RPC 2.0 POST to "/": one request object or a batch array. params
 *    is an object of named arguments or an array of positional ones.
 *    64-bit integers arrive as JSON strings (numbers are accepted too),
 *    []byte arguments as base64 strings, HexBytes arguments as plain hex.
 *  - URI GET "/<method>?name=value&...": integers bare ("height=5"),
 *    strings quoted ("path=\"/a.b.Query/C\""), byte arguments as 0x-hex
 *    ("tx=0x0a12...") or as a quoted string taken as its raw bytes.
 *
 * Pure functions: bytes in, typed calls out; nothing here touches the node.
 * Every malformed request becomes a call carrying a JSON-RPC error code
 * (-32700 parse error, -32600 invalid request, -32601 method not found,
 * -32602 invalid params) and a one-line reason, never a crash. */
#ifndef GD_LOCALNET_RPC_REQUEST_H
#define GD_LOCALNET_RPC_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_RPC_MAX_BODY 1000000 /* CometBFT's default max_body_bytes */
#define GD_RPC_MAX_BATCH 100
#define GD_RPC_MAX_PARAMS 6

#define GD_RPC_ERR_PARSE (-32700)
#define GD_RPC_ERR_INVALID_REQUEST (-32600)
#define GD_RPC_ERR_METHOD_NOT_FOUND (-32601)
#define GD_RPC_ERR_INVALID_PARAMS (-32602)
#define GD_RPC_ERR_INTERNAL (-32603)

typedef enum gd_rpc_param_type {
    GD_RPC_PARAM_INT64,
    GD_RPC_PARAM_BOOL,
    GD_RPC_PARAM_STRING,
    GD_RPC_PARAM_BYTES,     /* []byte: base64 in JSON, 0x-hex or "raw" in URIs */
    GD_RPC_PARAM_HEX_BYTES, /* HexBytes: hex in JSON, 0x-hex or "raw" in URIs */
} gd_rpc_param_type;

typedef struct gd_rpc_param_spec {
    const char *name;
    gd_rpc_param_type type;
} gd_rpc_param_spec;

/* A method the localnet serves, with its parameters in CometBFT's order
 * (the order positional JSON-RPC params map to). */
typedef struct gd_rpc_method {
    const char *name;
    gd_rpc_param_spec params[GD_RPC_MAX_PARAMS];
    int n_params;
} gd_rpc_method;

typedef struct gd_rpc_param_value {
    bool present;
    int64_t i64;    /* INT64 */
    bool b;         /* BOOL */
    char *str;      /* STRING: owned, NUL-terminated, no embedded NUL */
    uint8_t *bytes; /* BYTES, HEX_BYTES: owned (may be NULL when len is 0) */
    size_t len;
} gd_rpc_param_value;

typedef struct gd_incoming_call {
    json_t *id;                  /* request id (owned ref); JSON null if absent */
    const gd_rpc_method *method; /* NULL when error_code is set for it */
    gd_rpc_param_value params[GD_RPC_MAX_PARAMS]; /* indexed as method->params */
    int error_code;              /* 0, or the JSON-RPC error for this call */
    char error_message[64];      /* "Parse error", "Invalid params", ... */
    char error_data[256];        /* the reason, one line */
} gd_incoming_call;

typedef struct gd_rpc_request {
    gd_incoming_call *calls;
    size_t n_calls;
    bool batch; /* the body was an array: answer with an array */
} gd_rpc_request;

/* The methods served: health, status, abci_info, abci_query(path, data,
 * height, prove), broadcast_tx_sync(tx), broadcast_tx_async(tx),
 * tx(hash, prove), tx_search(query, prove, page, per_page, order_by),
 * block(height), block_results(height), genesis, num_unconfirmed_txs. */
const gd_rpc_method *gd_rpc_method_find(const char *name);

/* Parses a POST body. Always fills out with at least one call (a body that
 * is not JSON gives one call with -32700); GD_ERR_NOMEM is the only failure. */
gd_status gd_rpc_request_parse_body(gd_rpc_request *out, const char *body,
                                    size_t len) GD_MUST_CHECK;

/* Parses a URI GET: path is the URL path ("/status"), query the raw query
 * string after '?' (percent-encoded; NULL or "" for none). One call, id
 * null (the server answers URI calls with id -1, as CometBFT does). */
gd_status gd_rpc_request_parse_uri(gd_rpc_request *out, const char *path,
                                   const char *query) GD_MUST_CHECK;

/* Index of a parameter of the call's method by name, or -1. */
int gd_rpc_param_index(const gd_rpc_method *method, const char *name);

void gd_rpc_request_free(gd_rpc_request *req);

#endif
