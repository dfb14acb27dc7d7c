/* The localnet's CometBFT-compatible RPC endpoint over libmicrohttpd: JSON-RPC
 * POST (single and batch) and URI GET, bodies up to 1 MB, answers in
 * CometBFT 0.38's shapes. Malformed requests get JSON-RPC errors; nothing a
 * client sends stops block production. */
#ifndef GD_LOCALNET_RPC_SERVER_H
#define GD_LOCALNET_RPC_SERVER_H

#include <jansson.h>
#include <stddef.h>

#include "common/status.h"
#include "localnet/node.h"
#include "localnet/rpc_request.h"

typedef struct gd_rpc_server gd_rpc_server;

/* Listens on listen ("127.0.0.1:26657"; port 0 picks a free one) and
 * writes the bound "host:port" into bound. */
gd_status gd_rpc_server_start(gd_rpc_server **out, gd_node *node, const char *listen,
                              char *bound, size_t bound_cap) GD_MUST_CHECK;
void gd_rpc_server_stop(gd_rpc_server *server);

/* Answers one parsed call: a full JSON-RPC response object. */
json_t *gd_rpc_answer(gd_node *node, const char *rpc_address, const gd_incoming_call *call);

#endif
