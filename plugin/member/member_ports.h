/* The two ports a node (plugin/member/member.h) talks through, each an interface
 * table plus its context (ggml's {iface, ctx}), so the daemon, tests and
 * the benchmark drive the same node over different transports:
 *
 *   chain  what the chain shows (the run, its current round, any round by
 *          index, the node's settle amounts, the epoch clock) and "submit
 *          this transaction"; over RPC (plugin/ports/chain_port_rpc.c) or an
 *          in-process app in tests;
 *   peers  another member's artifacts, by its artifact URL; over HTTP
 *          (plugin/ports/peer_http.c) or in-process. */
#ifndef GD_PLUGIN_MEMBER_MEMBER_PORTS_H
#define GD_PLUGIN_MEMBER_MEMBER_PORTS_H

#include <stddef.h>
#include <stdint.h>

#include "chain/keys/keys.h"
#include "chain/wire/msg.h"
#include "common/status.h"
#include "plugin/member/artifact_request.h"
#include "plugin/member/chain_view.h"

typedef struct gd_chain_port_iface {
    /* The run, its current round, the address's settle amounts (into a),
     * the height they were read at and the claim state there. */
    gd_status (*read)(void *ctx, uint64_t run, const char *address, gd_chain_answers *a,
                      int64_t *height, gd_claim_state *claims);
    /* Query/Round of round `round` (GD_ERR_NOT_FOUND if none; free with
     * protobuf_c_message_free_unpacked). */
    gd_status (*query_round)(void *ctx, Gonka__Diloco__V1__QueryRoundResponse **out,
                             uint64_t run, uint64_t round);
    /* One transaction of n messages signed by key. GD_OK once the chain
     * took it: *code is its result (0 accepted; another code refused, with
     * log). A transport failure is GD_ERR_NETWORK / GD_ERR_TIMEOUT. */
    gd_status (*submit)(void *ctx, const gd_key *key, const gd_any *msgs, size_t n,
                        uint32_t *code, char *log, size_t log_cap);
    /* Optional, both or neither (NULL: submit is used): submit in two
     * halves, so a node computes its next duty while a transaction waits
     * for its block. send returns once the chain's node admitted it or
     * not: *code 0 admitted, with *ticket to settle it by; another code
     * refused (log says why; nothing to settle). settle waits for its block:
     * *code its result there, as submit's. Every admitted transaction is
     * settled, in the order sent, before the node reads the chain again. */
    gd_status (*send)(void *ctx, const gd_key *key, const gd_any *msgs, size_t n,
                      uint32_t *ticket, uint32_t *code, char *log, size_t log_cap);
    gd_status (*settle)(void *ctx, uint32_t ticket, uint32_t *code, char *log, size_t log_cap);
    /* Optional (NULL: none): the chain's latest height now, callable from
     * any thread while the others run, answering within about two
     * seconds. The server's clock takes it when the step's own read is
     * stale (a long check or training holds the step), so that a member
     * busy at the start of a window still serves what the window opens. */
    gd_status (*head)(void *ctx, int64_t *height);
} gd_chain_port_iface;

typedef struct gd_chain_port {
    const gd_chain_port_iface *iface;
    void *ctx;
} gd_chain_port;

/* One request of a batch (gd_peer_port_iface.fetch_all): what to fetch, and
 * what came back. */
typedef struct gd_peer_fetch_item {
    const char *url;           /* in: the member's artifact URL */
    gd_artifact_req req;       /* in */
    size_t max_len;            /* in: at most this many body bytes */
    gd_status status;          /* out: as fetch returns it */
    gd_artifact_answer answer; /* out: on GD_OK */
    char why[256];             /* out: the failure's detail */
} gd_peer_fetch_item;

struct gd_peer_port;

typedef struct gd_peer_port_iface {
    /* The answer of the member at url to req, at most max_len body bytes.
     * GD_ERR_NOT_FOUND if it has none (or not yet), GD_ERR_NETWORK /
     * GD_ERR_TIMEOUT if it cannot be reached, GD_ERR_LIMIT if larger. */
    gd_status (*fetch)(void *ctx, gd_artifact_answer *out, const char *url,
                       const gd_artifact_req *req, size_t max_len);
    /* Optional (may be NULL: the caller frees): takes a fetched body back,
     * to fetch into again (common/buf_spares.h); b is left empty. */
    void (*recycle)(void *ctx, gd_buf *b);
    /* Optional (NULL: the caller fetches one at a time): every item at
     * once, transfers in parallel, so a round's payloads take about the
     * slowest peer's time rather than the sum of all. Each item gets its
     * own status and detail; the call itself fails only locally (no
     * memory). */
    gd_status (*fetch_all)(void *ctx, gd_peer_fetch_item *items, size_t n);
    /* Optional, both or neither (NULL: the port serves one thread, and a
     * member fetches on its step): another port to the same peers, for
     * another thread, and its close. A member that has them fetches on
     * threads of its own (plugin/member/fetch_pool.h), so no peer holds its step. */
    gd_status (*open_another)(void *ctx, struct gd_peer_port *out);
    void (*close)(void *ctx);
} gd_peer_port_iface;

typedef struct gd_peer_port {
    const gd_peer_port_iface *iface;
    void *ctx;
} gd_peer_port;

#endif
