/* The localnet's CometBFT-compatible RPC endpoint over libmicrohttpd: JSON-RPC
 * POST (single and batch) and URI GET, bodies up to 1 MB, answers in
 * CometBFT 0.38's shapes. Malformed requests get JSON-RPC errors; nothing a
 * client sends stops block production, and what clients can hold is
 * bounded by gd_rpc_limits. */
#ifndef GD_LOCALNET_RPC_SERVER_H
#define GD_LOCALNET_RPC_SERVER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "localnet/node.h"
#include "localnet/rpc_request.h"

typedef struct gd_rpc_server gd_rpc_server;

/* What clients can hold. A connection over either limit is closed as soon
 * as it is accepted (the client sees the connection closed, never a wait);
 * one silent for idle_timeout_s, idle between requests or stalled in one,
 * is closed. */
typedef struct gd_rpc_limits {
    uint32_t max_connections;        /* all clients together; default 256 */
    uint32_t max_connections_per_ip; /* one client address; default 32 */
    uint32_t idle_timeout_s;         /* default 10 */
} gd_rpc_limits;

/* The defaults above. */
gd_rpc_limits gd_rpc_limits_default(void);

/* GD_ERR_INVALID unless 1 <= max_connections_per_ip <= max_connections
 * <= 100000 and 1 <= idle_timeout_s <= 3600. */
gd_status gd_rpc_limits_check(const gd_rpc_limits *limits) GD_MUST_CHECK;

/* Listens on listen ("127.0.0.1:26657", "tcp://0.0.0.0:26657", "[::1]:0";
 * port 0 picks a free one) and writes the bound "host:port" into bound.
 * limits NULL means gd_rpc_limits_default(). Warns (common/log.h) when the
 * host is not a loopback address. GD_ERR_INVALID for a bad address or
 * limits, GD_ERR_NETWORK with the system's reason (strerror) when it
 * cannot be bound. */
gd_status gd_rpc_server_start(gd_rpc_server **out, gd_node *node, const char *listen,
                              const gd_rpc_limits *limits, char *bound,
                              size_t bound_cap) GD_MUST_CHECK;
void gd_rpc_server_stop(gd_rpc_server *server);

/* Answers one parsed call: a full JSON-RPC response object. */
json_t *gd_rpc_answer(gd_node *node, const char *rpc_address, const gd_incoming_call *call);

#endif
