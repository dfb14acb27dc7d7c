/* The chain port over RPC (plugin/ports/chain_port_rpc.h). */
#include "plugin/ports/chain_port_rpc.h"

#include <stdio.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "chain/client/submit.h"
#include "common/bytes.h"
#include "plugin/ports/chain_reader.h"

gd_status gd_chain_rpc_open(gd_chain_rpc *c, const char *url, const char *chain_id,
                            const char *gas_price) {
    memset(c, 0, sizeof *c);
    c->gas_limit = 400000;
    c->wait_timeout_ms = 30000;
    if (strlen(chain_id) >= sizeof c->chain_id)
        return gd_fail(GD_ERR_INVALID, "chain id is over %zu bytes", sizeof c->chain_id - 1);
    snprintf(c->chain_id, sizeof c->chain_id, "%s", chain_id);
    GD_TRY(gd_gas_price_parse(&c->gas_price, gas_price[0] ? gas_price : GD_GAS_PRICE_DEFAULT));
    c->have_gas_price = true;
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    GD_TRY(gd_rpc_open(&c->rpc, url, &opt));
    /* The head answers a server thread that holds a peer's request: two
     * seconds in all, or the server answers from what it knows. */
    opt.timeout_ms = 1000;
    opt.connect_timeout_ms = 1000;
    opt.max_retries = 0;
    opt.deadline_ms = 2000;
    GD_TRY(gd_rpc_open(&c->head_rpc, url, &opt));
    pthread_mutex_init(&c->head_mu, NULL);
    c->head_open = true;
    return GD_OK;
}

void gd_chain_rpc_close(gd_chain_rpc *c) {
    if (c->rpc)
        gd_rpc_close(c->rpc);
    if (c->head_rpc)
        gd_rpc_close(c->head_rpc);
    if (c->head_open)
        pthread_mutex_destroy(&c->head_mu);
    memset(c, 0, sizeof *c);
}

static gd_status gd_rpc_port_head(void *ctx, int64_t *height) {
    gd_chain_rpc *c = ctx;
    gd_node_status st;
    pthread_mutex_lock(&c->head_mu);
    gd_status s = gd_rpc_status(c->head_rpc, &st);
    pthread_mutex_unlock(&c->head_mu);
    if (s == GD_OK)
        *height = st.latest_block_height;
    return s;
}

static gd_status gd_rpc_port_read(void *ctx, uint64_t run, const char *address,
                                  gd_chain_answers *a, int64_t *height, gd_claim_state *claims) {
    gd_chain_rpc *c = ctx;
    return gd_chain_read_answers(c->rpc, run, address, a, height, claims);
}

static gd_status gd_rpc_port_round(void *ctx, Gonka__Diloco__V1__QueryRoundResponse **out,
                                   uint64_t run, uint64_t round) {
    gd_chain_rpc *c = ctx;
    *out = NULL;
    gd_status s = gd_diloco_query_round(c->rpc, out, run, round, NULL);
    /* The module answers an unknown or pruned round with an error code. */
    return s == GD_ERR_CHAIN ? GD_ERR_NOT_FOUND : s;
}

/* A refusal (GD_ERR_CHAIN) becomes the code and log of the port. */
static gd_status gd_rpc_port_outcome(gd_status s, const gd_submit_result *r, uint32_t *code,
                                     char *log, size_t log_cap) {
    if (s == GD_ERR_CHAIN && r->wrong_chain) {
        /* Not a refusal of this duty: every transaction would be refused
         * the same way, so the member stops rather than pay and log for
         * each one. */
        char detail[512];
        snprintf(detail, sizeof detail, "%s", gd_error_detail());
        return gd_fail(GD_ERR_INVALID, "%s; set chain.chain_id in node.yaml to the node's and "
                                       "restart", detail);
    }
    if (s != GD_ERR_CHAIN)
        return s;
    const gd_abci_code *bad = r->check.code != 0 ? &r->check : &r->deliver;
    *code = bad->code ? bad->code : 1;
    snprintf(log, log_cap, "%s", bad->log);
    return GD_OK;
}

/* Signs and broadcasts; waits for the block if wait. */
static gd_status gd_rpc_port_broadcast(gd_chain_rpc *c, const gd_key *key, const gd_any *msgs,
                                       size_t n, bool wait, gd_submit_result *r) {
    memset(r, 0, sizeof *r);
    if (c->chain_id[0] == '\0') {
        gd_node_status st;
        GD_TRY(gd_rpc_status(c->rpc, &st));
        snprintf(c->chain_id, sizeof c->chain_id, "%s", st.network);
    }
    gd_tx_request req = {.msgs = msgs, .n_msgs = n, .gas_limit = c->gas_limit,
                         .gas_price = c->have_gas_price ? &c->gas_price : NULL,
                         .chain_id = c->chain_id};
    gd_submit_options opt;
    gd_submit_options_default(&opt);
    opt.wait = wait;
    opt.wait_timeout_ms = c->wait_timeout_ms;
    /* Behind transactions still waiting for their block, the node's
     * mempool expects the sequence after theirs, which the chain's state
     * does not show yet. (A stale guess is answered with code 32 and the
     * expected sequence, and signed again.) */
    if (c->n_waiting > 0 && c->have_sequence) {
        opt.have_account = true;
        req.account_number = c->account_number;
        req.sequence = c->next_sequence;
    }
    gd_status s = gd_tx_submit(c->rpc, key, &req, &opt, r);
    if (r->check.code == 0 && r->txhash[0] != '\0' && (s == GD_OK || r->included)) {
        c->have_sequence = true; /* admitted: its sequence is spent */
        c->account_number = r->account_number;
        c->next_sequence = r->sequence + 1;
    }
    return s;
}

static gd_status gd_rpc_port_submit(void *ctx, const gd_key *key, const gd_any *msgs, size_t n,
                                    uint32_t *code, char *log, size_t log_cap) {
    gd_chain_rpc *c = ctx;
    *code = 0;
    log[0] = '\0';
    gd_submit_result r;
    return gd_rpc_port_outcome(gd_rpc_port_broadcast(c, key, msgs, n, true, &r), &r, code, log,
                               log_cap);
}

static gd_status gd_rpc_port_send(void *ctx, const gd_key *key, const gd_any *msgs, size_t n,
                                  uint32_t *ticket, uint32_t *code, char *log, size_t log_cap) {
    gd_chain_rpc *c = ctx;
    *code = 0;
    log[0] = '\0';
    uint32_t slot = 0;
    while (slot < GD_CHAIN_RPC_WAITING && c->waiting[slot].used)
        slot++;
    if (slot == GD_CHAIN_RPC_WAITING)
        return gd_fail(GD_ERR_LIMIT, "%d transactions already wait for their blocks",
                       GD_CHAIN_RPC_WAITING);
    gd_submit_result r;
    gd_status s = gd_rpc_port_broadcast(c, key, msgs, n, false, &r);
    if (s != GD_OK)
        return gd_rpc_port_outcome(s, &r, code, log, log_cap);
    size_t len = 0;
    GD_TRY(gd_hex_decode(c->waiting[slot].hash, sizeof c->waiting[slot].hash, &len, r.txhash,
                         strlen(r.txhash)));
    c->waiting[slot].used = true;
    c->n_waiting++;
    *ticket = slot;
    return GD_OK;
}

static gd_status gd_rpc_port_settle(void *ctx, uint32_t ticket, uint32_t *code, char *log,
                                    size_t log_cap) {
    gd_chain_rpc *c = ctx;
    *code = 0;
    log[0] = '\0';
    if (ticket >= GD_CHAIN_RPC_WAITING || !c->waiting[ticket].used)
        return gd_fail(GD_ERR_INVALID, "no transaction waits under ticket %u", ticket);
    gd_submit_options opt;
    gd_submit_options_default(&opt);
    opt.wait_timeout_ms = c->wait_timeout_ms;
    gd_submit_result r;
    memset(&r, 0, sizeof r);
    gd_status s = gd_tx_await(c->rpc, &r, c->waiting[ticket].hash, &opt);
    if (s == GD_ERR_CANCELLED)
        return s; /* still waiting: the node stops */
    c->waiting[ticket].used = false;
    if (--c->n_waiting == 0)
        c->have_sequence = false; /* ask the chain again: another client may sign too */
    return gd_rpc_port_outcome(s, &r, code, log, log_cap);
}

static const gd_chain_port_iface gd_rpc_port_iface = {
    gd_rpc_port_read, gd_rpc_port_round, gd_rpc_port_submit, gd_rpc_port_send,
    gd_rpc_port_settle, gd_rpc_port_head};

gd_chain_port gd_chain_rpc_port(gd_chain_rpc *c) { return (gd_chain_port){&gd_rpc_port_iface, c}; }
