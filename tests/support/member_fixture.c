/* Nodes on a test chain (tests/support/member_fixture.h). */
#include "tests/support/member_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "chain/client/query.h"
#include "chain/wire/diloco_rules.h"
#include "chain/wire/diloco_spec.h"
#include "chain/wire/epoch_codec.h"
#include "common/bytes.h"
#include "common/file.h"
#include "gonka/diloco/v1/tx.pb-c.h"
#include "plugin/member/round_driver.h"
#include "plugin/member/run_config.h"
#include "tests/support/testkit.h"
#include "trainer/data.h"

/* --- the spec -------------------------------------------------------------------------------- */

const unsigned nf_roles[NF_NODES] = {GD_ROLE_WORKER, GD_ROLE_WORKER, GD_ROLE_WORKER,
                                     GD_ROLE_VALIDATOR, GD_ROLE_VALIDATOR};

void nf_knobs(df_knobs *k) {
    df_knobs_default(k);
    k->checks = 2;
    k->double_ppm = 500000;
    k->rechecks = 1;
    k->min_class = 4;
}

json_t *nf_spec(const df_knobs *k) {
    json_t *j = df_spec_json(k);
    gd_model_config mc;
    gd_param_layout layout;
    CHECK_OK(gd_model_config_preset(&mc, "tiny"));
    CHECK_OK(gd_param_layout_build(&layout, &mc));
    char hex[65];
    gd_hex_encode(hex, layout.digest, 32, false);
    gd_param_layout_free(&layout);
    json_object_set_new(j, "layout_digest", json_string(hex));
    gd_data *data = NULL;
    uint8_t digest[32];
    CHECK_OK(gd_data_open(&data, json_string_value(json_object_get(j, "data_spec"))));
    CHECK_OK(gd_data_digest(data, NULL, NULL, digest));
    gd_data_close(data);
    gd_hex_encode(hex, digest, 32, false);
    json_object_set_new(j, "data_digest", json_string(hex));
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, j));
    gd_run_config rc;
    uint8_t g0[32];
    CHECK_OK(gd_run_config_from_spec(&rc, spec, 1, NULL));
    CHECK_OK(gd_run_config_initial_state(&rc, g0, 1));
    gd_diloco_spec_free(spec);
    gd_hex_encode(hex, g0, 32, false);
    json_object_set_new(j, "initial_state_hash", json_string(hex));
    return j;
}

/* --- the chain port ------------------------------------------------------------------------- */

static void nf_step_all(nf_net *net, int except);

/* A block passes while node `who` computes: the others step, then the
 * block (not again from within theirs). */
static void nf_pass_block(nf_net *net, int who) {
    if (net->passing)
        return;
    net->passing = true;
    nf_step_all(net, who);
    nf_make_block(net);
    net->passing = false;
}

static gd_status nf_read(void *ctx, uint64_t run, const char *address, gd_chain_answers *a,
                         int64_t *height, gd_claim_state *claims) {
    nf_port *p = ctx;
    df *d = &p->net->d;
    if (p->net->slow[p->who] && p->net->nodes[p->who] != NULL) {
        json_t *st = gd_member_status_json(p->net->nodes[p->who]);
        json_int_t step = json_integer_value(json_object_get(st, "inner_step"));
        json_decref(st);
        if (step != p->net->trained_to[p->who])
            nf_pass_block(p->net, p->who);
        p->net->trained_to[p->who] = step;
    }
    memset(a, 0, sizeof *a);
    a->run = df_q_run(d);
    if (a->run == NULL || run != 1)
        return gd_fail(GD_ERR_NOT_FOUND, "no run %llu", (unsigned long long)run);
    if (a->run->current_round != NULL)
        a->round = df_q_round(d, a->run->current_round->index);
    Gonka__Diloco__V1__QueryRewardsRequest req = GONKA__DILOCO__V1__QUERY_REWARDS_REQUEST__INIT;
    req.address = (char *)address;
    a->rewards = df_query(d, GD_DILOCO_QUERY_REWARDS, &req,
                          &gonka__diloco__v1__query_rewards_response__descriptor, NULL);
    /* The epoch clock, as the RPC reader decodes it. */
    uint8_t none[1];
    gd_buf resp = {0};
    gd_abci_error err;
    memset(&err, 0, sizeof err);
    gd_epoch_info clock;
    CHECK_OK(gd_app_query(d->f.app, GD_PATH_EPOCH_INFO, none, 0, &resp, &err));
    CHECK_OK(gd_decode_epoch_info(&clock, resp.data, resp.len));
    gd_buf_free(&resp);
    *height = d->f.height;
    *claims = gd_claims_at(&clock);
    return GD_OK;
}

static gd_status nf_query_round(void *ctx, Gonka__Diloco__V1__QueryRoundResponse **out,
                                uint64_t run, uint64_t round) {
    nf_port *p = ctx;
    *out = NULL;
    if (run != 1 || df_q_round_code(&p->net->d, round) != 0)
        return gd_fail(GD_ERR_NOT_FOUND, "no round %llu", (unsigned long long)round);
    *out = df_q_round(&p->net->d, round);
    return GD_OK;
}

static gd_status nf_submit(void *ctx, const gd_key *key, const gd_any *msgs, size_t n,
                           uint32_t *code, char *log, size_t log_cap) {
    nf_port *p = ctx;
    CHECK(memcmp(key->pubkey, p->net->d.f.keys[p->who].pubkey, GD_PUBKEY_LEN) == 0);
    for (size_t i = 0; p->net->refuse[p->who] && i < n; i++)
        if (p->net->refuse[p->who](p->net, &msgs[i])) {
            *code = 10;
            p->net->refused_at_once++;
            snprintf(log, log_cap, "message index: %zu: refused by the test", i);
            return GD_OK;
        }
    for (size_t i = 0; i < n; i++) {
        uint64_t claim = p->net->claim_payload_bytes[p->who];
        if (claim != 0 && strcmp(msgs[i].type_url, GD_DILOCO_MSG_COMMIT_ROUND) == 0) {
            Gonka__Diloco__V1__MsgCommitRound *m = gonka__diloco__v1__msg_commit_round__unpack(
                NULL, msgs[i].value.len, msgs[i].value.data);
            CHECK(m != NULL);
            m->payload_bytes = claim;
            gd_any tampered = {{0}, {0}};
            snprintf(tampered.type_url, sizeof tampered.type_url, "%s", msgs[i].type_url);
            CHECK_OK(gd_buf_reserve(&tampered.value,
                                    gonka__diloco__v1__msg_commit_round__get_packed_size(m)));
            tampered.value.len =
                gonka__diloco__v1__msg_commit_round__pack(m, tampered.value.data);
            gonka__diloco__v1__msg_commit_round__free_unpacked(m, NULL);
            df_batch_add_any(&p->net->pending, p->who, &tampered);
            gd_any_free(&tampered);
            continue;
        }
        df_batch_add_any(&p->net->pending, p->who, &msgs[i]);
    }
    *code = 0; /* its outcome is the next block's */
    log[0] = '\0';
    return GD_OK;
}

/* The chain's height now, as a node's server asks it while its step is
 * held (the fixture runs one thread: it is read as it stands). */
static gd_status nf_head(void *ctx, int64_t *height) {
    nf_port *p = ctx;
    *height = p->net->d.f.height;
    return GD_OK;
}

static const gd_chain_port_iface nf_chain_iface = {nf_read, nf_query_round, nf_submit, NULL,
                                                   NULL, nf_head};

/* --- the peers ---------------------------------------------------------------------------------- */

static gd_status nf_fetch(void *ctx, gd_artifact_answer *out, const char *url,
                          const gd_artifact_req *req, size_t max_len) {
    nf_port *p = ctx; /* the node that fetches */
    nf_net *net = p->net;
    memset(out, 0, sizeof *out);
    int who = 0;
    if (sscanf(url, "mem://%d", &who) != 1 || who < 1 || who > net->n || net->nodes[who] == NULL)
        return gd_fail(GD_ERR_NETWORK, "%s: no such peer", url);
    if (net->down[who])
        return gd_fail(GD_ERR_NETWORK, "%s: connection refused", url);
    if (net->refuses_payload[who][p->who] &&
        (req->kind == GD_REQ_PAYLOAD || req->kind == GD_REQ_PAYLOAD_CHUNK))
        return gd_fail(GD_ERR_NETWORK, "%s: connection refused", url);
    if (req->kind == GD_REQ_PAYLOAD)
        net->payload_fetches[who]++;
    return gd_member_serve_local(net->nodes[who], req, out, max_len);
}

/* Counts the bodies a node gives back for its next fetches, and frees them. */
static void nf_recycle(void *ctx, gd_buf *b) {
    nf_net *net = ((nf_port *)ctx)->net;
    if (b->data != NULL)
        net->recycled++;
    gd_buf_free(b);
}

static const gd_peer_port_iface nf_peer_iface = {nf_fetch, nf_recycle};

/* --- the network ----------------------------------------------------------------------------- */

static void nf_open(nf_net *net, int who) {
    char url[32];
    snprintf(url, sizeof url, "mem://%d", who);
    gd_member_options o = {.run = 1, .roles = net->roles[who], .join = !net->no_join[who], .artifact_url = url,
                         .hw_class = DF_CPU, .state_dir = net->dirs[who], .threads = 1,
                         .data_paths = net->data_paths[who],
                         .n_data_paths = net->data_paths[who][0] != NULL,
                         .train = net->train[who], .check = net->check[who],
                         .withhold = net->withhold[who], .duty = net->duty[who],
                         .ahead_read_ms = net->slow[who] ? 1 : 0,
                         .disk_free = net->disk_free[who], .retention = net->retention[who]};
    CHECK_OK(gd_coin_parse(&o.collateral, "20000ngonka"));
    net->ports[who] = (nf_port){net, who};
    gd_chain_port chain = {&nf_chain_iface, &net->ports[who]};
    gd_peer_port peers = {&nf_peer_iface, &net->ports[who]};
    CHECK_OK(gd_member_open(&net->nodes[who], &o, &net->d.f.keys[who], chain, peers));
}

void nf_setup(nf_net *net, df_knobs *k, int n, const unsigned *roles) {
    memset(net, 0, sizeof *net);
    for (int who = 0; who < DF_ACCOUNTS; who++)
        net->stepped_at[who] = -1;
    const json_t *given = k->spec;
    json_t *made = given ? NULL : nf_spec(k);
    if (made)
        k->spec = made;
    df_setup(&net->d, k, 0, NULL, NULL);
    k->spec = given;
    json_decref(made);
    net->n = n;
    net->d.n = n; /* the fixture's settlement check and slash watch cover the nodes */
    df_batch_init(&net->pending);
    static int setups; /* each network its own state directories */
    setups++;
    for (int who = 1; who <= n; who++) {
        net->roles[who] = roles[who - 1];
        snprintf(net->dirs[who], sizeof net->dirs[who], "%s/net%d-node%d", gd_test_tmpdir(),
                 setups, who);
        snprintf(net->d.cls[who], sizeof net->d.cls[who], "%s", DF_CPU);
        net->d.member[who] = true; /* for the fixture's bookkeeping of slashes */
        nf_open(net, who);
    }
}

void nf_restart(nf_net *net, int who) {
    gd_member_close(net->nodes[who]);
    net->nodes[who] = NULL;
    nf_open(net, who);
}

void nf_free(nf_net *net) {
    for (int who = 1; who <= net->n; who++)
        gd_member_close(net->nodes[who]);
    /* Messages sent after the last block (a test that steps nodes itself). */
    for (size_t t = 0; t < net->pending.n_tx; t++)
        for (size_t i = 0; i < net->pending.n_msgs[t]; i++)
            gd_any_free(&net->pending.msgs[t][i]);
    df_free(&net->d);
}

static void nf_step(nf_net *net, int who) {
    if (net->off[who])
        return;
    size_t done = 0;
    net->stepped_at[who] = net->d.f.height;
    gd_status s = gd_member_step(net->nodes[who], &done);
    if (net->local_fault[who] && s == GD_ERR_IO)
        net->step_errors[who]++; /* as the daemon: retried at the next block */
    else
        CHECK_OK(s);
    net->duties += done;
}

/* Every node (but except) that has not stepped at this height steps. */
static void nf_step_all(nf_net *net, int except) {
    for (int who = 1; who <= net->n; who++)
        if (who != except && net->stepped_at[who] != net->d.f.height)
            nf_step(net, who);
}

void nf_block(nf_net *net) {
    /* Until every node has seen the newest height: a slow node's step may
     * have let blocks pass. */
    int64_t h;
    do {
        h = net->d.f.height;
        nf_step_all(net, 0);
    } while (net->d.f.height != h);
    nf_make_block(net);
}

void nf_make_block(nf_net *net) {
    if (net->censor) {
        for (size_t i = 0; i < net->pending.n_tx; i++)
            for (size_t m = 0; m < net->pending.n_msgs[i]; m++)
                gd_any_free(&net->pending.msgs[i][m]);
        df_batch_init(&net->pending);
    }
    uint32_t codes[DF_ACCOUNTS];
    int from[DF_ACCOUNTS];
    size_t n_tx = net->pending.n_tx;
    memcpy(from, net->pending.from, sizeof from);
    if (df_batch_run(&net->d, &net->pending, codes) != 0)
        for (size_t i = 0; i < n_tx; i++)
            if (codes[i] != 0) {
                fprintf(stderr, "height %lld: node %d's transaction failed with code %u: %s\n",
                        (long long)net->d.f.height, from[i], codes[i], net->d.last_log);
                net->refused++;
            }
    df_batch_init(&net->pending);
    /* The fixture's round counter (its settlement check reads rounds below it). */
    df_qrun *run = df_q_run(&net->d);
    if (run->current_round)
        net->d.round = run->current_round->index + 1;
    df_qfree(run);
}

void nf_until(nf_net *net, int64_t height) {
    while (net->d.f.height < height)
        nf_block(net);
}

uint64_t nf_current_round(nf_net *net) {
    df_qrun *run = df_q_run(&net->d);
    uint64_t r = run->current_round ? run->current_round->index : 0;
    df_qfree(run);
    return r;
}

gd_round_windows nf_until_round_windows(nf_net *net, uint64_t round) {
    df_qrun *run = nf_until_round(net, round);
    const Gonka__Diloco__V1__RoundWindows *w = run->current_round->windows;
    gd_round_windows out = {w->train_start,      w->commit_start, w->reveal_start,
                            w->verify_start,     w->open_start,   w->dispute_start,
                            w->dispute_open_start, w->attest_start, w->attest_open_start,
                            w->end};
    df_qfree(run);
    return out;
}

df_qrun *nf_until_round(nf_net *net, uint64_t round) {
    df_qrun *run = NULL;
    for (;;) {
        nf_block(net);
        df_qfree(run);
        run = df_q_run(&net->d);
        if (run->current_round && run->current_round->index == round)
            return run;
    }
}
