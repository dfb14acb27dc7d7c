/* Members of a run in one process (plugin/sim/sim_net.h). */
#include "plugin/sim/sim_net.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "chain/client/query.h"
#include "chain/keys/address.h"
#include "chain/module/app.h"
#include "chain/module/auth.h"
#include "chain/wire/diloco_rules.h"
#include "chain/wire/tx.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/secure.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "inference/inference/query.pb-c.h"

#define GD_SIM_CHAIN "gd-sim"
#define GD_SIM_TX_MSGS 32

typedef struct gd_sim_port {
    gd_sim_net *net;
    size_t who; /* account index: 1 + member index (0 is the run's authority) */
} gd_sim_port;

struct gd_sim_net {
    gd_app *app;
    int64_t height;
    size_t n;
    gd_key keys[GD_SIM_NET_MAX + 1];
    char addr[GD_SIM_NET_MAX + 1][GD_ADDRESS_STR_MAX];
    gd_member *members[GD_SIM_NET_MAX];
    gd_sim_port ports[GD_SIM_NET_MAX + 1];
    /* The next block's messages, one transaction per signer. */
    gd_any pending[GD_SIM_NET_MAX + 1][GD_SIM_TX_MSGS];
    size_t n_pending[GD_SIM_NET_MAX + 1];
};

/* --- the chain ---------------------------------------------------------------------------- */

static gd_status gd_sim_query(gd_sim_net *net, const char *path, const ProtobufCMessage *req,
                              gd_buf *resp) {
    uint8_t buf[512];
    size_t len = protobuf_c_message_get_packed_size(req);
    if (len > sizeof buf)
        return gd_fail(GD_ERR_LIMIT, "query request too large");
    protobuf_c_message_pack(req, buf);
    gd_abci_error err;
    memset(&err, 0, sizeof err);
    GD_TRY(gd_app_query(net->app, path, buf, len, resp, &err));
    if (err.code != 0) {
        gd_buf_free(resp);
        return gd_fail(GD_ERR_NOT_FOUND, "%s: code %u %s", path, err.code, err.log);
    }
    return GD_OK;
}

static gd_status gd_sim_unpack(gd_sim_net *net, void **out, const char *path,
                               const ProtobufCMessage *req,
                               const ProtobufCMessageDescriptor *desc) {
    gd_buf resp = {0};
    *out = NULL;
    GD_TRY(gd_sim_query(net, path, req, &resp));
    *out = protobuf_c_message_unpack(desc, NULL, resp.len, resp.data);
    gd_buf_free(&resp);
    return *out ? GD_OK : gd_fail(GD_ERR_PARSE, "%s: answer does not decode", path);
}

static gd_status gd_sim_read(void *ctx, uint64_t run, const char *address, gd_chain_answers *a,
                             int64_t *height, gd_claim_state *claims) {
    gd_sim_port *p = ctx;
    gd_sim_net *net = p->net;
    memset(a, 0, sizeof *a);
    Gonka__Diloco__V1__QueryRunRequest rq = GONKA__DILOCO__V1__QUERY_RUN_REQUEST__INIT;
    rq.run = run;
    gd_status s = gd_sim_unpack(net, (void **)&a->run, GD_DILOCO_QUERY_RUN,
                                &rq.base,
                                &gonka__diloco__v1__query_run_response__descriptor);
    if (s == GD_OK && a->run->current_round != NULL) {
        Gonka__Diloco__V1__QueryRoundRequest rr = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
        rr.run = run;
        rr.round = a->run->current_round->index;
        s = gd_sim_unpack(net, (void **)&a->round, GD_DILOCO_QUERY_ROUND,
                          &rr.base,
                          &gonka__diloco__v1__query_round_response__descriptor);
    }
    Gonka__Diloco__V1__QueryRewardsRequest rw = GONKA__DILOCO__V1__QUERY_REWARDS_REQUEST__INIT;
    rw.address = (char *)address;
    if (s == GD_OK)
        s = gd_sim_unpack(net, (void **)&a->rewards, GD_DILOCO_QUERY_REWARDS,
                          &rw.base,
                          &gonka__diloco__v1__query_rewards_response__descriptor);
    gd_buf resp = {0};
    gd_epoch_info clock;
    Inference__Inference__QueryEpochInfoRequest eq =
        INFERENCE__INFERENCE__QUERY_EPOCH_INFO_REQUEST__INIT;
    if (s == GD_OK)
        s = gd_sim_query(net, GD_PATH_EPOCH_INFO, &eq.base, &resp);
    if (s == GD_OK)
        s = gd_decode_epoch_info(&clock, resp.data, resp.len);
    gd_buf_free(&resp);
    if (s != GD_OK) {
        gd_chain_answers_free(a);
        return s;
    }
    *height = net->height;
    *claims = gd_claims_at(&clock);
    return GD_OK;
}

gd_status gd_sim_net_round(gd_sim_net *net, Gonka__Diloco__V1__QueryRoundResponse **out,
                           uint64_t round) {
    Gonka__Diloco__V1__QueryRoundRequest rr = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
    rr.run = 1;
    rr.round = round;
    return gd_sim_unpack(net, (void **)out, GD_DILOCO_QUERY_ROUND,
                         &rr.base, &gonka__diloco__v1__query_round_response__descriptor);
}

static gd_status gd_sim_query_round(void *ctx, Gonka__Diloco__V1__QueryRoundResponse **out,
                                    uint64_t run, uint64_t round) {
    gd_sim_port *p = ctx;
    *out = NULL;
    if (run != 1)
        return gd_fail(GD_ERR_NOT_FOUND, "no run %" PRIu64, run);
    return gd_sim_net_round(p->net, out, round);
}

static gd_status gd_sim_submit(void *ctx, const gd_key *key, const gd_any *msgs, size_t n,
                               uint32_t *code, char *log, size_t log_cap) {
    gd_sim_port *p = ctx;
    gd_sim_net *net = p->net;
    (void)key; /* the port's account signs: the member holds the same key */
    *code = 0;
    if (log_cap)
        log[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t *k = &net->n_pending[p->who];
        if (*k == GD_SIM_TX_MSGS)
            return gd_fail(GD_ERR_LIMIT, "more than %d messages in a block", GD_SIM_TX_MSGS);
        gd_any *a = &net->pending[p->who][(*k)++];
        memset(a, 0, sizeof *a);
        snprintf(a->type_url, sizeof a->type_url, "%s", msgs[i].type_url);
        GD_TRY(gd_buf_append(&a->value, msgs[i].value.data, msgs[i].value.len));
    }
    return GD_OK; /* its outcome is the next block's */
}

static const gd_chain_port_iface gd_sim_chain_iface = {gd_sim_read, gd_sim_query_round,
                                                       gd_sim_submit};

/* --- the peers ------------------------------------------------------------------------------- */

static gd_status gd_sim_fetch(void *ctx, gd_artifact_answer *out, const char *url,
                              const gd_artifact_req *req, size_t max_len) {
    gd_sim_net *net = ctx;
    memset(out, 0, sizeof *out);
    unsigned who = 0;
    if (sscanf(url, "sim://%u", &who) != 1 || who >= net->n || net->members[who] == NULL)
        return gd_fail(GD_ERR_NETWORK, "%.100s: no such member", url);
    return gd_member_serve_local(net->members[who], req, out, max_len);
}

static const gd_peer_port_iface gd_sim_peer_iface = {gd_sim_fetch};

/* --- genesis and blocks ------------------------------------------------------------------------ */

static json_t *gd_sim_coins(const char *denom, const char *amount) {
    return json_pack("[{s:s,s:s}]", "denom", denom, "amount", amount);
}

/* Every account funded, run 1 from the spec with a pool of 100 epochs'
 * rewards in the module account. */
static gd_status gd_sim_genesis(gd_sim_net *net, json_t **out, const json_t *spec) {
    *out = NULL;
    gd_coin reward;
    const char *reward_text = json_string_value(json_object_get(spec, "reward_per_epoch"));
    if (reward_text == NULL || gd_coin_parse(&reward, reward_text) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "run spec: reward_per_epoch is not a coin");
    char pool[64], number[24];
    snprintf(pool, sizeof pool, "%s00", reward.amount);
    char module[GD_ADDRESS_STR_MAX];
    GD_TRY(gd_auth_module_address(module, sizeof module, "diloco"));
    json_t *accounts = json_array(), *balances = json_array();
    for (size_t i = 0; i <= net->n; i++) {
        snprintf(number, sizeof number, "%zu", i);
        json_array_append_new(accounts, json_pack("{s:s,s:s,s:s,s:s}", "@type",
                                                  "/cosmos.auth.v1beta1.BaseAccount", "address",
                                                  net->addr[i], "account_number", number,
                                                  "sequence", "0"));
        json_array_append_new(balances, json_pack("{s:s,s:o}", "address", net->addr[i], "coins",
                                                  gd_sim_coins(reward.denom,
                                                               "1000000000000000000")));
    }
    snprintf(number, sizeof number, "%zu", net->n + 1);
    json_array_append_new(accounts,
                          json_pack("{s:s,s:{s:s,s:s,s:s},s:s,s:[]}", "@type",
                                    "/cosmos.auth.v1beta1.ModuleAccount", "base_account",
                                    "address", module, "account_number", number, "sequence", "0",
                                    "name", "diloco", "permissions"));
    json_array_append_new(balances, json_pack("{s:s,s:o}", "address", module, "coins",
                                              gd_sim_coins(reward.denom, pool)));
    json_t *diloco = json_pack("{s:{s:s},s:[{s:O,s:s}]}", "params", "authority", net->addr[0],
                               "runs", "spec", spec, "pool", pool);
    *out = json_pack("{s:s,s:s,s:s,s:{s:{s:o},s:{s:o},s:{},s:o}}", "chain_id", GD_SIM_CHAIN,
                     "initial_height", "1", "genesis_time", "2026-01-01T00:00:00Z", "app_state",
                     "auth", "accounts", accounts, "bank", "balances", balances, "inference",
                     "diloco", diloco);
    return *out ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}

static gd_status gd_sim_sequence(gd_sim_net *net, size_t who, uint64_t *number,
                                 uint64_t *sequence) {
    Cosmos__Auth__V1beta1__QueryAccountInfoRequest req =
        COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_INFO_REQUEST__INIT;
    req.address = net->addr[who];
    gd_buf resp = {0};
    gd_account_info info;
    memset(&info, 0, sizeof info);
    GD_TRY(gd_sim_query(net, "/cosmos.auth.v1beta1.Query/AccountInfo", &req.base, &resp));
    gd_status s = gd_decode_account_info(&info, resp.data, resp.len);
    gd_buf_free(&resp);
    *number = info.account_number;
    *sequence = info.sequence;
    return s;
}

gd_status gd_sim_net_block(gd_sim_net *net, size_t *refused) {
    *refused = 0;
    for (size_t i = 0; i < net->n; i++)
        GD_TRY(gd_member_observe(net->members[i]));
    for (size_t i = 0; i < net->n; i++) {
        size_t done = 0;
        GD_TRY(gd_member_step(net->members[i], &done));
    }
    gd_buf txs[GD_SIM_NET_MAX + 1];
    size_t n_tx = 0;
    gd_status s = GD_OK;
    for (size_t who = 0; s == GD_OK && who <= net->n; who++) {
        if (net->n_pending[who] == 0)
            continue;
        uint64_t number = 0, sequence = 0;
        s = gd_sim_sequence(net, who, &number, &sequence);
        gd_tx_request req = {.msgs = net->pending[who], .n_msgs = net->n_pending[who],
                             .gas_limit = 20000000, .chain_id = GD_SIM_CHAIN,
                             .account_number = number, .sequence = sequence};
        gd_signed_tx tx;
        memset(&tx, 0, sizeof tx);
        if (s == GD_OK)
            s = gd_tx_sign(&tx, &net->keys[who], &req);
        if (s == GD_OK)
            txs[n_tx++] = tx.raw;
        for (size_t k = 0; k < net->n_pending[who]; k++)
            gd_any_free(&net->pending[who][k]);
        net->n_pending[who] = 0;
    }
    int64_t h = net->height + 1;
    uint8_t block_hash[32], app_hash[32];
    gd_sha256(block_hash, &h, sizeof h);
    gd_events events;
    memset(&events, 0, sizeof events);
    if (s == GD_OK)
        s = gd_app_begin_block(net->app, h, block_hash, &events);
    for (size_t i = 0; s == GD_OK && i < n_tx; i++) {
        gd_tx_outcome o;
        memset(&o, 0, sizeof o);
        s = gd_app_deliver_tx(net->app, &o, txs[i].data, txs[i].len);
        *refused += s == GD_OK && o.err.code != 0;
        gd_tx_outcome_free(&o);
    }
    if (s == GD_OK)
        s = gd_app_end_block(net->app, &events);
    if (s == GD_OK)
        s = gd_app_commit(net->app, app_hash);
    gd_events_free(&events);
    for (size_t i = 0; i < n_tx; i++)
        gd_buf_free(&txs[i]);
    if (s == GD_OK)
        net->height = h;
    return s;
}

gd_status gd_sim_net_open(gd_sim_net **out, const json_t *spec, size_t n, const unsigned *roles,
                          const char *collateral, const char *state_dir, int threads) {
    *out = NULL;
    if (n == 0 || n > GD_SIM_NET_MAX)
        return gd_fail(GD_ERR_INVALID, "1 to %d members", GD_SIM_NET_MAX);
    gd_sim_net *net = calloc(1, sizeof *net);
    if (net == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    net->n = n;
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i <= n; i++) {
        /* Fixed keys: a simulation is reproducible, and holds no money. */
        char text[40];
        uint8_t secret[32];
        snprintf(text, sizeof text, "gd-sim account %zu", i);
        gd_sha256(secret, text, strlen(text));
        s = gd_key_from_secret(&net->keys[i], secret);
        gd_wipe(secret, sizeof secret);
        if (s == GD_OK)
            s = gd_address_from_pubkey(net->addr[i], sizeof net->addr[i], GD_ADDRESS_PREFIX,
                                       net->keys[i].pubkey);
    }
    json_t *genesis = NULL;
    gd_app_config cfg;
    memset(&cfg, 0, sizeof cfg);
    if (s == GD_OK)
        s = gd_sim_genesis(net, &genesis, spec);
    if (s == GD_OK)
        s = gd_app_new(&net->app, &cfg);
    if (s == GD_OK)
        s = gd_app_register_standard(net->app);
    if (s == GD_OK)
        s = gd_app_init_chain(net->app, genesis);
    json_decref(genesis);
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        char url[32], dir[4096];
        snprintf(url, sizeof url, "sim://%zu", i);
        if (snprintf(dir, sizeof dir, "%s/member-%zu", state_dir, i) >= (int)sizeof dir) {
            s = gd_fail(GD_ERR_LIMIT, "state directory path too long");
            break;
        }
        gd_member_options o = {.run = 1, .roles = roles[i], .join = true, .artifact_url = url,
                               .hw_class = "sim", .state_dir = dir, .threads = threads};
        s = gd_coin_parse(&o.collateral, collateral);
        net->ports[i + 1] = (gd_sim_port){net, i + 1};
        gd_chain_port chain = {&gd_sim_chain_iface, &net->ports[i + 1]};
        gd_peer_port peers = {&gd_sim_peer_iface, net};
        if (s == GD_OK)
            s = gd_member_open(&net->members[i], &o, &net->keys[i + 1], chain, peers);
    }
    if (s != GD_OK) {
        gd_sim_net_close(net);
        return s;
    }
    *out = net;
    return GD_OK;
}

void gd_sim_net_close(gd_sim_net *net) {
    if (net == NULL)
        return;
    for (size_t i = 0; i < net->n; i++)
        gd_member_close(net->members[i]);
    for (size_t who = 0; who <= net->n; who++) {
        for (size_t k = 0; k < net->n_pending[who]; k++)
            gd_any_free(&net->pending[who][k]);
        gd_key_wipe(&net->keys[who]);
    }
    if (net->app)
        gd_app_free(net->app);
    free(net);
}

int64_t gd_sim_net_height(const gd_sim_net *net) { return net->height; }
gd_member *gd_sim_net_member(gd_sim_net *net, size_t i) {
    return i < net->n ? net->members[i] : NULL;
}

bool gd_sim_net_current_round(gd_sim_net *net, uint64_t *round) {
    Gonka__Diloco__V1__QueryRunRequest rq = GONKA__DILOCO__V1__QUERY_RUN_REQUEST__INIT;
    rq.run = 1;
    Gonka__Diloco__V1__QueryRunResponse *r = NULL;
    if (gd_sim_unpack(net, (void **)&r, GD_DILOCO_QUERY_RUN,
                      &rq.base, &gonka__diloco__v1__query_run_response__descriptor) != GD_OK)
        return false;
    bool have = r->current_round != NULL;
    if (have)
        *round = r->current_round->index;
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return have;
}
