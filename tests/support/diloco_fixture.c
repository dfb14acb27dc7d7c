/* A DiLoCo run in a test chain (see diloco_fixture.h). */
#include "tests/support/diloco_fixture.h"

#include <protobuf-c/protobuf-c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/wire/diloco_spec.h"
#include "common/hash.h"
#include "tests/support/testkit.h"

/* ---- the spec ---------------------------------------------------------------------- */

void df_knobs_default(df_knobs *k) {
    *k = (df_knobs){
        .checks = 2,
        .double_ppm = 500000,
        .rechecks = 3,
        .min_class = 6,
        .avail = 2,
        .suspend = 2,
        .max_members = 16,
        .window = 3,
        .validator_share_ppm = 200000,
        .attest_share_ppm = 100000,
        .cheat_slash = 9000,
        .skip_slash = 200,
        .withhold_slash = 4500,
        .fail_bond = 1000,
        .min_collateral = 10000,
        .reward = 9000,
        .pool = 100000,
    };
}

static json_t *df_coin(uint64_t amount) {
    char text[48];
    snprintf(text, sizeof text, "%llungonka", (unsigned long long)amount);
    return json_string(text);
}

json_t *df_spec_json(const df_knobs *k) {
    json_t *j = json_object();
    int w = (int)k->window;
    json_object_set_new(j, "model", json_string("tiny"));
    json_object_set_new(j, "layout_digest",
                        json_string("1111111111111111111111111111111111111111111111111111111111111111"));
    json_object_set_new(j, "seed", json_integer(1));
    json_object_set_new(j, "data_spec", json_string("synthetic:markov:1"));
    json_object_set_new(j, "initial_state_hash",
                        json_string("2222222222222222222222222222222222222222222222222222222222222222"));
    json_object_set_new(j, "data_digest",
                        json_string("3333333333333333333333333333333333333333333333333333333333333333"));
    json_object_set_new(j, "h_min", json_integer(4));
    json_object_set_new(j, "h_max", json_integer(8));
    json_object_set_new(j, "segment_steps", json_integer(2));
    json_object_set_new(j, "tokens_per_step", json_integer(512));
    json_object_set_new(j, "outer_lr_ppm", json_integer(700000));
    json_object_set_new(j, "outer_momentum_ppm", json_integer(900000));
    json_object_set_new(j, "codec", json_string("int8"));
    json_object_set_new(j, "windows",
                        json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "train", w, "commit", w,
                                  "reveal", w, "verify", w, "open", w, "dispute", w,
                                  "dispute_open", w, "attest", w, "attest_open", w));
    json_object_set_new(j, "reward_per_epoch", df_coin(k->reward));
    json_object_set_new(j, "min_collateral", df_coin(k->min_collateral));
    json_object_set_new(j, "fail_bond", df_coin(k->fail_bond));
    json_object_set_new(j, "checks_per_commit", json_integer(k->checks));
    json_object_set_new(j, "double_check_ppm", json_integer(k->double_ppm));
    json_object_set_new(j, "recheck_validators", json_integer(k->rechecks));
    json_object_set_new(j, "validator_share_ppm", json_integer(k->validator_share_ppm));
    json_object_set_new(j, "inner_lr", json_string("0.003"));
    json_object_set_new(j, "inner_min_lr", json_string("0.0003"));
    json_object_set_new(j, "inner_warmup_steps", json_integer(10));
    json_object_set_new(j, "inner_schedule_steps", json_integer(1000));
    json_object_set_new(j, "adam_beta1", json_string("0.9"));
    json_object_set_new(j, "adam_beta2", json_string("0.95"));
    json_object_set_new(j, "adam_eps", json_string("0.00000001"));
    json_object_set_new(j, "weight_decay", json_string("0.1"));
    json_object_set_new(j, "grad_clip", json_string("1"));
    json_object_set_new(j, "batch", json_integer(8));
    json_object_set_new(j, "seq_len", json_integer(64));
    json_object_set_new(j, "micro_batch", json_integer(4));
    json_object_set_new(j, "clip_factor", json_string("2"));
    json_object_set_new(j, "error_feedback", json_true());
    json_object_set_new(j, "error_feedback_decay", json_string("1"));
    json_object_set_new(j, "chunk_elems", json_integer(1024));
    json_object_set_new(j, "overlap", json_boolean(k->overlap));
    json_object_set_new(j, "hw_classes", json_pack("[s,s]", DF_CPU, DF_GPU));
    json_object_set_new(j, "min_class_members", json_integer(k->min_class));
    json_object_set_new(j, "avail_chunks", json_integer(k->avail));
    json_object_set_new(j, "cheat_slash", df_coin(k->cheat_slash));
    json_object_set_new(j, "skip_slash", df_coin(k->skip_slash));
    json_object_set_new(j, "withhold_slash", df_coin(k->withhold_slash));
    json_object_set_new(j, "suspend_rounds", json_integer(k->suspend));
    json_object_set_new(j, "max_members", json_integer(k->max_members));
    json_object_set_new(j, "attest_share_ppm", json_integer(k->attest_share_ppm));
    return j;
}

bool df_actor_honest(const df_actor *a) {
    if (a->idle || a->cheat || a->withhold_payload || a->withhold_checkpoints || a->serve_late ||
        a->no_reports ||
        a->secret != DF_HONEST || a->verdict != DF_HONEST || a->recheck != DF_HONEST ||
        a->attest != DF_HONEST || a->own != DF_HONEST)
        return false;
    for (int i = 0; i < DF_ACCOUNTS; i++)
        if (a->verdict_on[i] != 0 || a->recheck_on[i] != 0)
            return false;
    return true;
}

/* ---- events --------------------------------------------------------------------------- */

static const char *df_attr(const gd_event *e, const char *key) {
    for (size_t i = 0; i < e->n_attrs; i++)
        if (strcmp(e->attrs[i].key, key) == 0)
            return e->attrs[i].value;
    return "";
}

/* Logs slashes and releases; a slash of an honest member fails the test. */
static void df_scan(df *d, const gd_events *ev) {
    for (size_t i = 0; i < ev->n; i++) {
        const gd_event *e = &ev->items[i];
        bool slash = strcmp(e->type, "diloco_slashed") == 0;
        bool release = strcmp(e->type, "diloco_released") == 0;
        if (!slash && !release)
            continue;
        const char *who = df_attr(e, "address");
        const char *amount = df_attr(e, slash ? "amount" : "collateral");
        const char *reason = df_attr(e, "reason");
        if (d->n_log < DF_LOG_MAX) {
            df_event_rec *x = &d->log[d->n_log++];
            snprintf(x->type, sizeof x->type, "%s", e->type);
            snprintf(x->who, sizeof x->who, "%s", who);
            x->amount = strtoull(amount, NULL, 10);
            snprintf(x->reason, sizeof x->reason, "%s", reason);
            x->height = d->f.height;
        } else {
            CHECK(d->n_log < DF_LOG_MAX);
        }
        int at = df_index(d, who);
        if (getenv("GD_TEST_VERBOSE"))
            fprintf(stderr, "  h%lld %s %d %s %s\n", (long long)d->f.height, e->type, at, amount,
                    reason);
        if (slash && d->watch_honest && at >= 1 && at <= d->n && df_actor_honest(&d->act[at])) {
            fprintf(stderr, "honest member %d slashed %s at height %lld: %s\n", at, amount,
                    (long long)d->f.height, reason);
            gd_test_failures++;
        }
    }
}

uint64_t df_slashed(const df *d, int who, const char *reason, size_t *count) {
    uint64_t sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < d->n_log; i++) {
        const df_event_rec *x = &d->log[i];
        if (strcmp(x->type, "diloco_slashed") != 0 || strcmp(x->who, d->f.addr[who]) != 0 ||
            (reason != NULL && strstr(x->reason, reason) == NULL))
            continue;
        sum += x->amount;
        n++;
    }
    if (count)
        *count = n;
    return sum;
}

bool df_released(const df *d, int who, uint64_t *amount) {
    for (size_t i = 0; i < d->n_log; i++)
        if (strcmp(d->log[i].type, "diloco_released") == 0 &&
            strcmp(d->log[i].who, d->f.addr[who]) == 0) {
            if (amount)
                *amount = d->log[i].amount;
            return true;
        }
    return false;
}

bool df_last_event(const df *d, const char *type, const char *key, const char *value) {
    for (size_t i = 0; i < d->f.events.n; i++) {
        const gd_event *e = &d->f.events.items[i];
        if (strcmp(e->type, type) != 0)
            continue;
        if (key == NULL || strcmp(df_attr(e, key), value) == 0)
            return true;
    }
    return false;
}

/* ---- blocks ------------------------------------------------------------------------------ */

void df_batch_init(df_batch *b) { memset(b, 0, sizeof *b); }

/* The transaction of `from` in the batch (a new one if it has none). */
static size_t df_batch_tx(df_batch *b, int from) {
    size_t t = 0;
    while (t < b->n_tx && b->from[t] != from)
        t++;
    if (t == b->n_tx) {
        CHECK(b->n_tx < DF_ACCOUNTS);
        if (b->n_tx == DF_ACCOUNTS)
            abort();
        b->from[b->n_tx++] = from;
    }
    CHECK(b->n_msgs[t] < FIX_TX_MSGS_MAX);
    if (b->n_msgs[t] == FIX_TX_MSGS_MAX)
        abort();
    return t;
}

void df_batch_add_any(df_batch *b, int from, const gd_any *msg) {
    size_t t = df_batch_tx(b, from);
    gd_any *a = &b->msgs[t][b->n_msgs[t]++];
    snprintf(a->type_url, sizeof a->type_url, "%s", msg->type_url);
    CHECK_OK(gd_buf_append(&a->value, msg->value.data, msg->value.len));
}

void df_batch_add(df_batch *b, int from, const char *url, const void *msg) {
    size_t t = df_batch_tx(b, from);
    gd_any *a = &b->msgs[t][b->n_msgs[t]++];
    snprintf(a->type_url, sizeof a->type_url, "%s", url);
    size_t len = protobuf_c_message_get_packed_size(msg);
    CHECK_OK(gd_buf_reserve(&a->value, len + 1));
    a->value.len = protobuf_c_message_pack(msg, a->value.data);
}

size_t df_batch_run(df *d, df_batch *b, uint32_t *codes) {
    gd_buf txs[DF_ACCOUNTS];
    gd_tx_outcome outs[DF_ACCOUNTS];
    memset(txs, 0, sizeof txs);
    memset(outs, 0, sizeof outs);
    for (size_t i = 0; i < b->n_tx; i++)
        CHECK_OK(fix_anys_tx(&d->f, &txs[i], b->from[i], b->n_msgs[i], b->msgs[i]));
    fix_block(&d->f, txs, b->n_tx, outs);
    df_scan(d, &d->f.events);
    size_t failed = 0;
    for (size_t i = 0; i < b->n_tx; i++) {
        df_scan(d, &outs[i].events);
        uint32_t code = outs[i].err.code;
        if (code != 0 && strcmp(outs[i].err.codespace, "diloco") != 0 &&
            strcmp(outs[i].err.codespace, "sdk") != 0)
            code = 999;
        if (codes)
            codes[i] = code;
        failed += code != 0;
        if (code != 0)
            snprintf(d->last_log, sizeof d->last_log, "%s", outs[i].err.log);
        if (code != 0 && getenv("GD_TEST_VERBOSE"))
            fprintf(stderr, "  h%lld tx of %d: %s %u %s\n", (long long)d->f.height, b->from[i],
                    outs[i].err.codespace, outs[i].err.code, outs[i].err.log);
        gd_tx_outcome_free(&outs[i]);
        gd_buf_free(&txs[i]);
        for (size_t m = 0; m < b->n_msgs[i]; m++)
            gd_any_free(&b->msgs[i][m]);
    }
    b->n_tx = 0;
    memset(b->n_msgs, 0, sizeof b->n_msgs);
    return failed;
}

/* Runs a batch the driver built: every transaction must succeed. */
static void df_batch_ok(df *d, df_batch *b, const char *what) {
    uint32_t codes[DF_ACCOUNTS];
    int from[DF_ACCOUNTS];
    size_t n = b->n_tx;
    memcpy(from, b->from, sizeof from);
    df_batch_run(d, b, codes);
    for (size_t i = 0; i < n; i++)
        if (codes[i] != 0) {
            fprintf(stderr, "round %llu %s: member %d's transaction failed with code %u "
                            "(GD_TEST_VERBOSE=1 shows the log)\n",
                    (unsigned long long)d->round, what, from[i], codes[i]);
            gd_test_failures++;
        }
}

void df_empty_block(df *d) {
    fix_block(&d->f, NULL, 0, NULL);
    df_scan(d, &d->f.events);
}

void df_until(df *d, int64_t height) {
    if (d->f.height + 1 > height) {
        fprintf(stderr, "df_until(%lld): the chain is already at %lld\n", (long long)height,
                (long long)d->f.height);
        gd_test_failures++;
    }
    while (d->f.height + 1 < height)
        df_empty_block(d);
}

uint32_t df_deliver(df *d, int from, const char *url, const void *msg) {
    df_batch b;
    df_batch_init(&b);
    df_batch_add(&b, from, url, msg);
    uint32_t code = 0;
    df_batch_run(d, &b, &code);
    return code;
}

void df_deliver_n(df *d, size_t n, const int *from, const char *const *url,
                  const void *const *msg, uint32_t *codes) {
    df_batch b;
    df_batch_init(&b);
    for (size_t i = 0; i < n; i++)
        df_batch_add(&b, from[i], url[i], msg[i]);
    CHECK(b.n_tx == n); /* distinct signers */
    df_batch_run(d, &b, codes);
}

/* ---- queries ------------------------------------------------------------------------------- */

void *df_query(df *d, const char *path, const void *req, const ProtobufCMessageDescriptor *desc,
               uint32_t *code) {
    uint8_t buf[512];
    size_t n = protobuf_c_message_pack(req, buf);
    gd_buf resp = {0};
    gd_abci_error err;
    memset(&err, 0, sizeof err);
    CHECK_OK(gd_app_query(d->f.app, path, buf, n, &resp, &err));
    void *out = err.code == 0 ? protobuf_c_message_unpack(desc, NULL, resp.len, resp.data) : NULL;
    if (code)
        *code = err.code;
    gd_buf_free(&resp);
    return out;
}

void df_qfree(void *msg) {
    if (msg)
        protobuf_c_message_free_unpacked(msg, NULL);
}

df_qround *df_q_round(df *d, uint64_t round) {
    Gonka__Diloco__V1__QueryRoundRequest req = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
    req.run = 1;
    req.round = round;
    df_qround *r = df_query(d, GD_DILOCO_QUERY_ROUND, &req,
                            &gonka__diloco__v1__query_round_response__descriptor, NULL);
    CHECK(r != NULL && r->round != NULL);
    if (r == NULL || r->round == NULL)
        abort();
    return r;
}

uint32_t df_q_round_code(df *d, uint64_t round) {
    Gonka__Diloco__V1__QueryRoundRequest req = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
    req.run = 1;
    req.round = round;
    uint32_t code = 0;
    df_qfree(df_query(d, GD_DILOCO_QUERY_ROUND, &req,
                      &gonka__diloco__v1__query_round_response__descriptor, &code));
    return code;
}

df_qrun *df_q_run(df *d) {
    Gonka__Diloco__V1__QueryRunRequest req = GONKA__DILOCO__V1__QUERY_RUN_REQUEST__INIT;
    req.run = 1;
    df_qrun *r = df_query(d, GD_DILOCO_QUERY_RUN, &req,
                          &gonka__diloco__v1__query_run_response__descriptor, NULL);
    CHECK(r != NULL && r->run != NULL);
    if (r == NULL || r->run == NULL)
        abort();
    return r;
}

uint64_t df_collateral(df *d, int who) {
    df_qrun *r = df_q_run(d);
    uint64_t out = UINT64_MAX;
    for (size_t i = 0; i < r->n_members; i++)
        if (strcmp(r->members[i]->address, d->f.addr[who]) == 0)
            out = strtoull(r->members[i]->collateral, NULL, 10);
    df_qfree(r);
    return out;
}

uint64_t df_balance(df *d, int who) { return strtoull(fix_balance(&d->f, d->f.addr[who]), NULL, 10); }

bool df_settled(df *d, df_settle *out, int who, uint64_t epoch) {
    Gonka__Diloco__V1__QueryRewardsRequest req = GONKA__DILOCO__V1__QUERY_REWARDS_REQUEST__INIT;
    req.address = d->f.addr[who];
    Gonka__Diloco__V1__QueryRewardsResponse *r =
        df_query(d, GD_DILOCO_QUERY_REWARDS, &req,
                 &gonka__diloco__v1__query_rewards_response__descriptor, NULL);
    CHECK(r != NULL);
    bool found = false;
    for (size_t i = 0; r && i < r->n_amounts; i++) {
        const Gonka__Diloco__V1__SettleAmount *a = r->amounts[i];
        if (a->run != 1 || a->epoch != epoch)
            continue;
        found = true;
        if (out)
            *out = (df_settle){strtoull(a->amount, NULL, 10), a->tokens, a->checks,
                               a->attestations, a->claimed, a->forfeited};
    }
    if (!found && out)
        *out = (df_settle){0, 0, 0, 0, false, false};
    df_qfree(r);
    return found;
}

int df_index(const df *d, const char *addr) {
    for (int i = 0; i < d->f.n_accounts; i++)
        if (strcmp(d->f.addr[i], addr) == 0)
            return i;
    return -1;
}

bool df_has_str(char *const *items, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0)
            return true;
    return false;
}

const df_assignment *df_assignment_of(const df_qround *r, int target, uint32_t check,
                                      const df *d) {
    for (size_t i = 0; i < r->n_assignments; i++)
        if (strcmp(r->assignments[i]->target, d->f.addr[target]) == 0 &&
            r->assignments[i]->check == check)
            return r->assignments[i];
    return NULL;
}

const df_verdict *df_verdict_of(const df_qround *r, const char *target, uint32_t check,
                                const char *validator) {
    for (size_t i = 0; i < r->n_verdicts; i++) {
        const df_verdict *v = r->verdicts[i];
        if (strcmp(v->target, target) == 0 && v->check == check &&
            strcmp(v->validator, validator) == 0)
            return v;
    }
    return NULL;
}

const Gonka__Diloco__V1__Commitment *df_commitment_of(const df_qround *r, const char *addr) {
    for (size_t i = 0; i < r->n_commitments; i++)
        if (strcmp(r->commitments[i]->participant, addr) == 0)
            return r->commitments[i];
    return NULL;
}

const Gonka__Diloco__V1__WeightedMember *df_weighted_of(const df_qround *r, const char *addr) {
    for (size_t i = 0; i < r->round->n_members; i++)
        if (strcmp(r->round->members[i]->address, addr) == 0)
            return r->round->members[i];
    return NULL;
}

/* ---- honest answers -------------------------------------------------------------------------- */

void df_honest_digest(uint8_t out[32], uint64_t round, const char *target, uint32_t segment,
                      uint32_t step) {
    uint8_t a[32], b[32];
    char text[200];
    snprintf(text, sizeof text, "%s/%llu/%u/%u", target, (unsigned long long)round,
             (unsigned)segment, (unsigned)step);
    gd_sha256(a, text, strlen(text));
    gd_sha256(b, a, sizeof a);
    gd_diloco_verdict_digest(out, 1, round, target, segment, a, b);
}

void df_truth(uint8_t out[32], uint64_t round) {
    char text[64];
    snprintf(text, sizeof text, "the next state after round %llu", (unsigned long long)round);
    gd_sha256(out, text, strlen(text));
}

void df_salt(const df *d, uint8_t out[32], int kind, int signer, uint64_t round,
             const char *target, uint32_t check) {
    char text[200];
    snprintf(text, sizeof text, "salt/%d/%d/%llu/%s/%u/%u", kind, signer,
             (unsigned long long)round, target ? target : "", (unsigned)check,
             (unsigned)d->variant);
    gd_sha256(out, text, strlen(text));
}

void df_secret(const df *d, uint8_t out[32], int who, uint64_t round) {
    char text[96];
    snprintf(text, sizeof text, "secret/%d/%llu/%u", who, (unsigned long long)round,
             (unsigned)d->variant);
    gd_sha256(out, text, strlen(text));
}

int df_answer(const df *d, int who, bool recheck, const df_assignment *a, uint8_t digest[32]) {
    const df_actor *me = &d->act[who];
    int t = df_index(d, a->target);
    int mode = recheck ? me->recheck : me->verdict;
    int over = t >= 0 ? (recheck ? me->recheck_on[t] : me->verdict_on[t]) : 0;
    if (over != 0)
        mode = over;
    if (me->idle || mode == DF_SKIP)
        return 0;
    uint8_t honest[32];
    df_honest_digest(honest, d->round, a->target, a->segment, a->step);
    switch (mode) {
    case DF_LAZY_PASS: {
        char text[200];
        snprintf(text, sizeof text, "lazy/%d/%s/%u/%d", who, a->target, (unsigned)a->check,
                 (int)recheck);
        gd_sha256(digest, text, strlen(text));
        return V_PASS;
    }
    case DF_UNAVAILABLE: memset(digest, 0, 32); return V_UNAVAILABLE;
    case DF_FAIL: memcpy(digest, honest, 32); return V_FAIL;
    case DF_PASS: memcpy(digest, honest, 32); return V_PASS;
    default: break;
    }
    const df_actor *ta = t >= 0 ? &d->act[t] : NULL;
    if (ta && (ta->withhold_payload || ta->withhold_checkpoints || (ta->serve_late && !recheck))) {
        memset(digest, 0, 32);
        return V_UNAVAILABLE;
    }
    memcpy(digest, honest, 32);
    return ta && ta->cheat ? V_FAIL : V_PASS;
}

int df_own_answer(const df *d, const df_assignment *a, uint8_t digest[32]) {
    int t = df_index(d, a->target);
    if (t < 0 || d->act[t].idle || d->act[t].own == DF_SKIP)
        return 0;
    if (d->act[t].own == DF_LAZY_PASS) {
        char text[200];
        snprintf(text, sizeof text, "own lie/%s/%u", a->target, (unsigned)a->check);
        gd_sha256(digest, text, strlen(text));
    } else {
        df_honest_digest(digest, d->round, a->target, a->segment, a->step);
    }
    return V_PASS;
}

static int df_mode_of(const df *d, int who, bool recheck, const char *target) {
    const df_actor *me = &d->act[who];
    int t = df_index(d, target);
    int over = t >= 0 ? (recheck ? me->recheck_on[t] : me->verdict_on[t]) : 0;
    return over != 0 ? over : recheck ? me->recheck : me->verdict;
}

void df_leaf_hash(uint8_t out[32], int who, uint64_t round, uint32_t leaf) {
    char data[96];
    snprintf(data, sizeof data, "payload of %d, round %llu, leaf %u", who,
             (unsigned long long)round, (unsigned)leaf);
    gd_mmr_hash_leaf(out, leaf, data, strlen(data));
}

/* ---- messages ------------------------------------------------------------------------------------ */

/* The fixture's stand-in states (df_state_sample in the header). */
static void df_state_tree(gd_mmr *mmr, uint8_t root[32]) {
    gd_mmr_init(mmr);
    for (uint32_t l = 0; l < DF_CHUNKS; l++) {
        uint8_t h[32];
        gd_mmr_hash_leaf(h, l, &l, sizeof l);
        CHECK_OK(gd_mmr_append(mmr, h));
    }
    CHECK_OK(gd_mmr_root(mmr, root));
}

static void df_state_desc(const df *d, gd_worker_desc *out, int who, uint32_t segments,
                          uint32_t leaf) {
    gd_mmr mmr;
    uint8_t root[32];
    df_state_tree(&mmr, root);
    gd_mmr_free(&mmr);
    *out = (gd_worker_desc){.tag = {.run = 1, .chunk_elems = 1},
                            .round = d->round,
                            .rank = (uint32_t)who,
                            .stage = leaf <= segments ? GD_STAGE_TRAIN : GD_STAGE_ENCODED,
                            .step = leaf,
                            .n = DF_CHUNKS};
    snprintf(out->address, sizeof out->address, "%s", d->f.addr[who]);
    memcpy(out->params_root, root, 32);
    memcpy(out->exp_avg_root, root, 32);
    memcpy(out->exp_avg_sq_root, root, 32);
    memcpy(out->residual_root, root, 32);
}

static void df_transcript_tree(const df *d, int who, uint32_t segments, gd_mmr *mmr,
                               uint8_t root[32]) {
    gd_mmr_init(mmr);
    for (uint32_t l = 0; l < segments + 2; l++) {
        gd_worker_desc desc;
        uint8_t hash[32], h[32];
        df_state_desc(d, &desc, who, segments, l);
        gd_worker_desc_hash(&desc, hash);
        gd_mmr_hash_leaf(h, l, hash, sizeof hash);
        CHECK_OK(gd_mmr_append(mmr, h));
    }
    CHECK_OK(gd_mmr_root(mmr, root));
}

void df_state_sample_add(df *d, int who, int target, Gonka__Diloco__V1__MsgReportAvailability *m,
                         df_state_sample *s) {
    memset(s, 0, sizeof *s);
    const Gonka__Diloco__V1__Commitment *c = df_commitment_of(d->r, d->f.addr[target]);
    CHECK(c != NULL && d->r->round->verify_randomness.len == 32);
    if (c == NULL || d->r->round->verify_randomness.len != 32)
        return;
    gd_state_sample draw;
    gd_state_sample_draw(&draw, d->r->round->verify_randomness.data, d->f.addr[target],
                         d->f.addr[who], c->segment_count);
    gd_worker_desc desc;
    df_state_desc(d, &desc, target, c->segment_count, draw.leaf);
    gd_worker_desc_encode(&desc, s->descriptor);
    gd_mmr tmmr, smmr;
    uint8_t troot[32], sroot[32];
    df_transcript_tree(d, target, c->segment_count, &tmmr, troot);
    df_state_tree(&smmr, sroot);
    uint32_t chunk = gd_state_sample_chunk(&draw, &desc);
    gd_mmr_proof p;
    CHECK_OK(gd_mmr_prove(&tmmr, &p, draw.leaf));
    CHECK_OK(gd_mmr_proof_encode(&p, &s->descriptor_proof));
    CHECK_OK(gd_mmr_prove(&smmr, &p, chunk));
    CHECK_OK(gd_mmr_proof_encode(&p, &s->chunk_proof));
    gd_mmr_hash_leaf(s->chunk_leaf, chunk, &chunk, sizeof chunk);
    gd_mmr_free(&tmmr);
    gd_mmr_free(&smmr);
    m->state_descriptor = (ProtobufCBinaryData){sizeof s->descriptor, s->descriptor};
    m->state_descriptor_proof =
        (ProtobufCBinaryData){s->descriptor_proof.len, s->descriptor_proof.data};
    m->state_chunk_leaf = (ProtobufCBinaryData){32, s->chunk_leaf};
    m->state_chunk_proof = (ProtobufCBinaryData){s->chunk_proof.len, s->chunk_proof.data};
}

void df_state_sample_free(df_state_sample *s) {
    gd_buf_free(&s->descriptor_proof);
    gd_buf_free(&s->chunk_proof);
}

Gonka__Diloco__V1__MsgCommitRound df_commit_msg(df *d, int who, uint32_t segments) {
    gd_mmr_free(&d->mmr[who]);
    gd_mmr_init(&d->mmr[who]);
    for (uint32_t leaf = 0; leaf <= DF_CHUNKS; leaf++) {
        uint8_t h[32];
        df_leaf_hash(h, who, d->round, leaf);
        CHECK_OK(gd_mmr_append(&d->mmr[who], h));
    }
    CHECK_OK(gd_mmr_root(&d->mmr[who], d->root[who]));
    Gonka__Diloco__V1__MsgCommitRound m = GONKA__DILOCO__V1__MSG_COMMIT_ROUND__INIT;
    m.participant = d->f.addr[who];
    m.run = 1;
    m.round = d->round;
    m.payload_root = (ProtobufCBinaryData){32, d->root[who]};
    m.payload_leaves = DF_CHUNKS + 1;
    m.payload_bytes = 4096;
    gd_mmr tmmr;
    df_transcript_tree(d, who, segments, &tmmr, d->transcript[who]);
    gd_mmr_free(&tmmr);
    m.transcript_root = (ProtobufCBinaryData){32, d->transcript[who]};
    m.segment_count = segments;
    m.loss_first_micro = 2500000;
    m.loss_last_micro = 2100000;
    return m;
}

Gonka__Diloco__V1__MsgReportAvailability df_report_msg(df *d, int who, int target,
                                                       const uint32_t *chunks, uint32_t n,
                                                       gd_buf *proofs,
                                                       ProtobufCBinaryData *proof_fields,
                                                       uint8_t (*leaves)[32],
                                                       ProtobufCBinaryData *leaf_fields) {
    for (uint32_t i = 0; i < n; i++) {
        gd_mmr_proof proof;
        CHECK_OK(gd_mmr_prove(&d->mmr[target], &proof, chunks[i] + 1));
        proofs[i].len = 0;
        CHECK_OK(gd_mmr_proof_encode(&proof, &proofs[i]));
        df_leaf_hash(leaves[i], target, d->round, chunks[i] + 1);
        proof_fields[i] = (ProtobufCBinaryData){proofs[i].len, proofs[i].data};
        leaf_fields[i] = (ProtobufCBinaryData){32, leaves[i]};
    }
    Gonka__Diloco__V1__MsgReportAvailability m = GONKA__DILOCO__V1__MSG_REPORT_AVAILABILITY__INIT;
    m.reporter = d->f.addr[who];
    m.run = 1;
    m.round = d->round;
    m.target = d->f.addr[target];
    m.n_leaf_hashes = n;
    m.leaf_hashes = leaf_fields;
    m.n_proofs = n;
    m.proofs = proof_fields;
    return m;
}

uint32_t df_drawn_chunks(const df *d, uint32_t out[GD_DILOCO_AVAIL_CHUNKS_MAX], int who,
                         int target) {
    CHECK(d->r != NULL && d->r->round->verify_randomness.len == 32);
    if (d->r == NULL || d->r->round->verify_randomness.len != 32)
        return 0;
    return gd_diloco_avail_chunks(out, d->r->round->verify_randomness.data,
                                  d->f.addr[target], d->f.addr[who], DF_CHUNKS, d->k.avail);
}

/* MsgSubmitVerdict and MsgDispute share these fields' names. */
#define DF_ANSWER_FILL(m)                                                                   \
    do {                                                                                    \
        (m).validator = d->f.addr[who];                                                     \
        (m).run = 1;                                                                        \
        (m).round = d->round;                                                               \
        (m).target = (char *)target;                                                        \
        (m).check = check;                                                                  \
        if (seal) {                                                                         \
            (m).seal = (ProtobufCBinaryData){32, (uint8_t *)seal};                          \
        } else {                                                                            \
            (m).verdict = (Gonka__Diloco__V1__Verdict)verdict;                              \
            (m).digest = (ProtobufCBinaryData){32, (uint8_t *)digest};                      \
            (m).salt = (ProtobufCBinaryData){32, (uint8_t *)salt};                          \
        }                                                                                   \
    } while (0)

Gonka__Diloco__V1__MsgSubmitVerdict df_verdict_msg(df *d, int who, const char *target,
                                                   uint32_t check, const uint8_t *seal,
                                                   int verdict, const uint8_t *digest,
                                                   const uint8_t *salt) {
    Gonka__Diloco__V1__MsgSubmitVerdict m = GONKA__DILOCO__V1__MSG_SUBMIT_VERDICT__INIT;
    DF_ANSWER_FILL(m);
    return m;
}

Gonka__Diloco__V1__MsgDispute df_dispute_msg(df *d, int who, const char *target, uint32_t check,
                                             const uint8_t *seal, int verdict,
                                             const uint8_t *digest, const uint8_t *salt) {
    Gonka__Diloco__V1__MsgDispute m = GONKA__DILOCO__V1__MSG_DISPUTE__INIT;
    DF_ANSWER_FILL(m);
    return m;
}
#undef DF_ANSWER_FILL

Gonka__Diloco__V1__MsgAttestRound df_attest_msg(df *d, int who, const uint8_t *seal,
                                                const uint8_t *hash, const uint8_t *salt) {
    Gonka__Diloco__V1__MsgAttestRound m = GONKA__DILOCO__V1__MSG_ATTEST_ROUND__INIT;
    m.attester = d->f.addr[who];
    m.run = 1;
    m.round = d->round;
    if (seal) {
        m.seal = (ProtobufCBinaryData){32, (uint8_t *)seal};
    } else {
        m.next_state_hash = (ProtobufCBinaryData){32, (uint8_t *)hash};
        m.salt = (ProtobufCBinaryData){32, (uint8_t *)salt};
    }
    return m;
}

Gonka__Diloco__V1__MsgRandomness df_randomness_msg(df *d, int who, uint64_t round,
                                                   const uint8_t *seal, const uint8_t *secret) {
    Gonka__Diloco__V1__MsgRandomness m = GONKA__DILOCO__V1__MSG_RANDOMNESS__INIT;
    m.member = d->f.addr[who];
    m.run = 1;
    m.round = round;
    if (seal)
        m.seal = (ProtobufCBinaryData){32, (uint8_t *)seal};
    else
        m.secret = (ProtobufCBinaryData){32, (uint8_t *)secret};
    return m;
}

Gonka__Diloco__V1__MsgJoinRun df_join_msg(df *d, int who, const char *hw_class,
                                          Cosmos__Base__V1beta1__Coin *coin, char *amount_buf,
                                          uint64_t amount) {
    cosmos__base__v1beta1__coin__init(coin);
    coin->denom = "ngonka";
    sprintf(amount_buf, "%llu", (unsigned long long)amount);
    coin->amount = amount_buf;
    Gonka__Diloco__V1__MsgJoinRun j = GONKA__DILOCO__V1__MSG_JOIN_RUN__INIT;
    j.participant = d->f.addr[who];
    j.run = 1;
    j.artifact_url = "http://127.0.0.1:8080";
    j.hw_class = (char *)hw_class;
    j.collateral = coin;
    return j;
}

Gonka__Diloco__V1__MsgClaimRewards df_claim_msg(df *d, int who, uint64_t epoch) {
    Gonka__Diloco__V1__MsgClaimRewards m = GONKA__DILOCO__V1__MSG_CLAIM_REWARDS__INIT;
    m.claimer = d->f.addr[who];
    m.run = 1;
    m.epoch = epoch;
    return m;
}

/* ---- setup ------------------------------------------------------------------------------------------- */

/* Seals of every member's secret for round `round` (the run's next), in one block. */
static void df_seal_secrets(df *d, uint64_t round) {
    df_batch b;
    df_batch_init(&b);
    uint8_t seals[DF_ACCOUNTS][32];
    for (int i = 1; i <= d->n; i++) {
        if (!d->member[i] || d->act[i].idle || d->act[i].secret == DF_SKIP || round >= 64)
            continue;
        uint8_t secret[32];
        df_secret(d, secret, i, round);
        gd_diloco_seal(seals[i], GD_SEAL_RANDOMNESS, d->f.addr[i], NULL, 0, secret);
        Gonka__Diloco__V1__MsgRandomness m = df_randomness_msg(d, i, round, seals[i], NULL);
        df_batch_add(&b, i, GD_DILOCO_MSG_RANDOMNESS, &m);
        d->sealed[i] |= (uint64_t)1 << round;
    }
    if (b.n_tx > 0)
        df_batch_ok(d, &b, "secret seals");
}

void df_restart_from_export(df *d, json_t *exported) {
    char initial[24];
    snprintf(initial, sizeof initial, "%lld", (long long)(d->f.height + 1));
    json_t *genesis = json_pack("{s:s,s:s,s:O}", "chain_id", FIX_CHAIN, "initial_height", initial,
                                "app_state", exported);
    gd_app *again = NULL;
    CHECK_OK(gd_app_new(&again, NULL));
    CHECK_OK(gd_app_register_standard(again));
    CHECK_OK(gd_app_init_chain(again, genesis));
    uint8_t h1[32], h2[32];
    gd_app_hash(again, h1);
    gd_app_hash(d->f.app, h2);
    CHECK(memcmp(h1, h2, 32) == 0);
    CHECK_OK(gd_app_check_invariants(again));
    json_t *exported2 = gd_app_export(again);
    CHECK(json_equal(exported, exported2));
    json_decref(exported2);
    gd_app_free(d->f.app);
    d->f.app = again;
    json_decref(genesis);
}

void df_seal_secret(df *d, int who, uint64_t round) {
    uint8_t secret[32], seal[32];
    df_secret(d, secret, who, round);
    gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, d->f.addr[who], NULL, 0, secret);
    Gonka__Diloco__V1__MsgRandomness m = df_randomness_msg(d, who, round, seal, NULL);
    CHECK(df_deliver(d, who, GD_DILOCO_MSG_RANDOMNESS, &m) == 0);
    d->sealed[who] |= (uint64_t)1 << round;
}

void df_setup(df *d, const df_knobs *k, int n, const char *const *classes,
              const uint64_t *collateral) {
    memset(d, 0, sizeof *d);
    d->k = *k;
    d->n = n;
    d->watch_honest = true;
    CHECK(n >= 0 && n < DF_ACCOUNTS); /* 0: members join later, by themselves */
    fix_init_accounts(&d->f, DF_ACCOUNTS, NULL); /* for the addresses */
    json_t *state = json_pack("{s:{s:s}}", "params", "authority", d->f.addr[0]);
    fix_free(&d->f);
    fix_init_accounts(&d->f, DF_ACCOUNTS, state);
    json_decref(state);
    for (int i = 0; i < DF_ACCOUNTS; i++)
        gd_mmr_init(&d->mmr[i]);

    json_t *sj = k->spec ? json_deep_copy(k->spec) : df_spec_json(k);
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, sj));
    json_decref(sj);
    if (spec == NULL)
        abort();
    Gonka__Diloco__V1__MsgCreateRun create = GONKA__DILOCO__V1__MSG_CREATE_RUN__INIT;
    Cosmos__Base__V1beta1__Coin pool = COSMOS__BASE__V1BETA1__COIN__INIT;
    char pool_text[24];
    snprintf(pool_text, sizeof pool_text, "%llu", (unsigned long long)k->pool);
    pool.denom = "ngonka";
    pool.amount = pool_text;
    create.authority = d->f.addr[0];
    create.spec = spec;
    create.pool = &pool;
    CHECK(df_deliver(d, 0, GD_DILOCO_MSG_CREATE_RUN, &create) == 0);
    gd_diloco_spec_free(spec);

    df_batch b;
    df_batch_init(&b);
    for (int i = 1; i <= n; i++) {
        Cosmos__Base__V1beta1__Coin coin;
        char amount[24];
        snprintf(d->cls[i], sizeof d->cls[i], "%s", classes ? classes[i - 1] : DF_CPU);
        Gonka__Diloco__V1__MsgJoinRun j =
            df_join_msg(d, i, d->cls[i], &coin, amount, collateral ? collateral[i - 1] : DF_COLLATERAL);
        df_batch_add(&b, i, GD_DILOCO_MSG_JOIN_RUN, &j);
        d->member[i] = true;
    }
    df_batch_ok(d, &b, "joins");
    df_seal_secrets(d, 0);
}

void df_free(df *d) {
    df_qfree(d->r);
    d->r = NULL;
    for (int i = 0; i < DF_ACCOUNTS; i++)
        gd_mmr_free(&d->mmr[i]);
    fix_free(&d->f);
}

/* ---- the driver ---------------------------------------------------------------------------------------- */

void df_refresh(df *d) {
    df_qfree(d->r);
    d->r = df_q_round(d, d->round);
    const Gonka__Diloco__V1__Round *r = d->r->round;
    bool at_verify = d->r->height == r->windows->verify_start;
    bool at_dispute = d->r->height == r->windows->dispute_start;
    if (!at_verify && !at_dispute)
        return;
    bool *into = at_verify ? d->active_v : d->active_r;
    memset(into, 0, DF_ACCOUNTS * sizeof *into);
    for (size_t i = 0; i < r->n_members; i++) {
        int at = df_index(d, r->members[i]->address);
        if (at >= 0)
            into[at] = r->members[i]->active;
    }
    if (at_verify)
        d->active_v_round = r->index + 1;
    else
        d->active_r_round = r->index + 1;
}

void df_open(df *d) {
    for (int i = 0; i < 400; i++) {
        df_qrun *run = df_q_run(d);
        bool open = run->current_round != NULL && run->current_round->index == d->round;
        if (open) {
            d->w = *run->current_round->windows;
            for (int m = 0; m < DF_ACCOUNTS; m++) {
                d->in_round[m] = false;
                d->member[m] = false;
                d->committed[m] = false;
            }
            for (size_t m = 0; m < run->current_round->n_members; m++) {
                int at = df_index(d, run->current_round->members[m]->address);
                if (at >= 0)
                    d->in_round[at] = true;
            }
            for (size_t m = 0; m < run->n_members; m++) {
                int at = df_index(d, run->members[m]->address);
                if (at >= 0 && !run->members[m]->leaving)
                    d->member[at] = true;
            }
        }
        df_qfree(run);
        if (open) {
            df_refresh(d);
            return;
        }
        df_empty_block(d);
    }
    fprintf(stderr, "round %llu never opened\n", (unsigned long long)d->round);
    gd_test_failures++;
    abort();
}

/* Empty blocks until the next block is at least start; it must be before
 * end (the step's window). */
static void df_reach(df *d, int64_t start, int64_t end, const char *what) {
    if (d->f.height + 1 < start)
        df_until(d, start);
    if (d->f.height + 1 >= end) {
        fprintf(stderr, "round %llu %s: the chain is at %lld, past the window's end %lld\n",
                (unsigned long long)d->round, what, (long long)d->f.height, (long long)end);
        gd_test_failures++;
    }
}

void df_commit(df *d) {
    df_reach(d, d->w.commit_start, d->w.reveal_start, "commit");
    df_batch b;
    df_batch_init(&b);
    uint8_t seals[DF_ACCOUNTS][32];
    for (int i = 1; i <= d->n; i++) {
        const df_actor *a = &d->act[i];
        if (a->idle)
            continue;
        if (d->in_round[i] && !a->no_commit) {
            Gonka__Diloco__V1__MsgCommitRound m = df_commit_msg(d, i, DF_SEGMENTS);
            df_batch_add(&b, i, GD_DILOCO_MSG_COMMIT_ROUND, &m);
            d->committed[i] = true;
        }
        uint64_t next = d->round + 1;
        if (d->member[i] && a->secret != DF_SKIP && next < 64 && !(d->sealed[i] >> next & 1)) {
            uint8_t secret[32];
            df_secret(d, secret, i, next);
            gd_diloco_seal(seals[i], GD_SEAL_RANDOMNESS, d->f.addr[i], NULL, 0, secret);
            Gonka__Diloco__V1__MsgRandomness m = df_randomness_msg(d, i, next, seals[i], NULL);
            df_batch_add(&b, i, GD_DILOCO_MSG_RANDOMNESS, &m);
            d->sealed[i] |= (uint64_t)1 << next;
        }
    }
    df_batch_ok(d, &b, "commits");
}

void df_reveal(df *d) {
    df_reach(d, d->w.reveal_start, d->w.verify_start, "reveal");
    df_batch b;
    df_batch_init(&b);
    uint8_t secrets[DF_ACCOUNTS][32];
    for (int i = 1; i <= d->n; i++) {
        const df_actor *a = &d->act[i];
        if (a->idle || a->secret != DF_HONEST || d->round >= 64 ||
            !(d->sealed[i] >> d->round & 1))
            continue;
        df_secret(d, secrets[i], i, d->round);
        Gonka__Diloco__V1__MsgRandomness m = df_randomness_msg(d, i, d->round, NULL, secrets[i]);
        df_batch_add(&b, i, GD_DILOCO_MSG_RANDOMNESS, &m);
    }
    if (b.n_tx > 0)
        df_batch_ok(d, &b, "secret reveals");
    else
        df_empty_block(d);
}

void df_verify(df *d) {
    df_reach(d, d->w.verify_start + 1, d->w.open_start, "verify");
    df_refresh(d);
    CHECK(d->r->round->phase == PH(VERIFY));
    df_check_draws(d, d->r);
    df_batch b;
    df_batch_init(&b);
    /* Everything the messages point to lives until the batch has packed it. */
    for (int i = 1; i <= d->n; i++) {
        const df_actor *a = &d->act[i];
        if (a->idle || !d->in_round[i])
            continue;
        for (int t = 1; t <= d->n && !a->no_reports; t++) {
            if (t == i || df_commitment_of(d->r, d->f.addr[t]) == NULL || !d->committed[t] ||
                d->act[t].withhold_payload || a->skip_report[t])
                continue;
            uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
            uint32_t nc = df_drawn_chunks(d, chunks, i, t);
            gd_buf proofs[GD_DILOCO_AVAIL_CHUNKS_MAX];
            ProtobufCBinaryData pf[GD_DILOCO_AVAIL_CHUNKS_MAX], lf[GD_DILOCO_AVAIL_CHUNKS_MAX];
            uint8_t leaves[GD_DILOCO_AVAIL_CHUNKS_MAX][32];
            memset(proofs, 0, sizeof proofs);
            Gonka__Diloco__V1__MsgReportAvailability m =
                df_report_msg(d, i, t, chunks, nc, proofs, pf, leaves, lf);
            /* A target that serves its states in the verify window gets
             * its sample in every report. */
            df_state_sample sample = {0};
            if (!d->act[t].withhold_checkpoints && !d->act[t].serve_late)
                df_state_sample_add(d, i, t, &m, &sample);
            df_batch_add(&b, i, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m);
            df_state_sample_free(&sample);
            for (uint32_t c = 0; c < nc; c++)
                gd_buf_free(&proofs[c]);
        }
        for (size_t x = 0; x < d->r->n_assignments; x++) {
            const df_assignment *as = d->r->assignments[x];
            uint8_t own[32], own_salt[32], own_seal[32];
            if (df_index(d, as->target) == i && df_own_answer(d, as, own) != 0) {
                df_salt(d, own_salt, GD_SEAL_OWN, i, d->round, as->target, as->check);
                gd_diloco_verdict_seal(own_seal, GD_SEAL_OWN, d->f.addr[i], GD_VERDICT_PASS,
                                       own, own_salt);
                Gonka__Diloco__V1__MsgSubmitVerdict m =
                    df_verdict_msg(d, i, as->target, as->check, own_seal, 0, NULL, NULL);
                df_batch_add(&b, i, GD_DILOCO_MSG_SUBMIT_VERDICT, &m);
            }
            for (size_t v = 0; v < as->n_validators; v++) {
                if (df_index(d, as->validators[v]) != i)
                    continue;
                uint8_t digest[32], salt[32], seal[32];
                int ans = df_answer(d, i, false, as, digest);
                if (ans == 0)
                    continue;
                df_salt(d, salt, GD_SEAL_VERDICT, i, d->round, as->target, as->check);
                gd_diloco_verdict_seal(seal, GD_SEAL_VERDICT, d->f.addr[i],
                                       (gd_diloco_verdict)ans, digest, salt);
                Gonka__Diloco__V1__MsgSubmitVerdict m =
                    df_verdict_msg(d, i, as->target, as->check, seal, 0, NULL, NULL);
                df_batch_add(&b, i, GD_DILOCO_MSG_SUBMIT_VERDICT, &m);
            }
        }
    }
    if (b.n_tx > 0)
        df_batch_ok(d, &b, "reports and sealed verdicts");
    else
        df_empty_block(d);
}

/* Reveals of assigned verdicts (recheck false) or re-checks (true). */
static void df_reveal_answers(df *d, bool recheck) {
    df_batch b;
    df_batch_init(&b);
    for (size_t x = 0; x < d->r->n_assignments; x++) {
        const df_assignment *as = d->r->assignments[x];
        int t = df_index(d, as->target);
        uint8_t own[32], own_salt[32];
        if (!recheck && t > 0 && d->act[t].own != DF_SEAL_ONLY && df_own_answer(d, as, own)) {
            df_salt(d, own_salt, GD_SEAL_OWN, t, d->round, as->target, as->check);
            Gonka__Diloco__V1__MsgSubmitVerdict m =
                df_verdict_msg(d, t, as->target, as->check, NULL, V_PASS, own, own_salt);
            df_batch_add(&b, t, GD_DILOCO_MSG_SUBMIT_VERDICT, &m);
        }
        size_t n = recheck ? as->n_recheckers : as->n_validators;
        for (size_t v = 0; v < n; v++) {
            int i = df_index(d, recheck ? as->recheckers[v] : as->validators[v]);
            uint8_t digest[32], salt[32];
            int ans = i > 0 ? df_answer(d, i, recheck, as, digest) : 0;
            if (ans == 0 || df_mode_of(d, i, recheck, as->target) == DF_SEAL_ONLY)
                continue;
            int kind = recheck ? GD_SEAL_RECHECK : GD_SEAL_VERDICT;
            df_salt(d, salt, kind, i, d->round, as->target, as->check);
            if (recheck) {
                Gonka__Diloco__V1__MsgDispute m =
                    df_dispute_msg(d, i, as->target, as->check, NULL, ans, digest, salt);
                df_batch_add(&b, i, GD_DILOCO_MSG_DISPUTE, &m);
            } else {
                Gonka__Diloco__V1__MsgSubmitVerdict m =
                    df_verdict_msg(d, i, as->target, as->check, NULL, ans, digest, salt);
                df_batch_add(&b, i, GD_DILOCO_MSG_SUBMIT_VERDICT, &m);
            }
        }
    }
    if (b.n_tx > 0)
        df_batch_ok(d, &b, recheck ? "revealed re-checks" : "revealed verdicts");
    else
        df_empty_block(d);
}

void df_open_verdicts(df *d) {
    df_reach(d, d->w.open_start, d->w.dispute_start, "open");
    df_reveal_answers(d, false);
}

void df_dispute(df *d) {
    df_reach(d, d->w.dispute_start + 1, d->w.dispute_open_start, "dispute");
    df_refresh(d);
    CHECK(d->r->round->phase == PH(DISPUTE));
    df_check_draws(d, d->r);
    df_batch b;
    df_batch_init(&b);
    for (size_t x = 0; x < d->r->n_assignments; x++) {
        const df_assignment *as = d->r->assignments[x];
        for (size_t v = 0; v < as->n_recheckers; v++) {
            int i = df_index(d, as->recheckers[v]);
            uint8_t digest[32], salt[32], seal[32];
            int ans = i > 0 ? df_answer(d, i, true, as, digest) : 0;
            if (ans == 0)
                continue;
            df_salt(d, salt, GD_SEAL_RECHECK, i, d->round, as->target, as->check);
            gd_diloco_verdict_seal(seal, GD_SEAL_RECHECK, d->f.addr[i], (gd_diloco_verdict)ans,
                                   digest, salt);
            Gonka__Diloco__V1__MsgDispute m =
                df_dispute_msg(d, i, as->target, as->check, seal, 0, NULL, NULL);
            df_batch_add(&b, i, GD_DILOCO_MSG_DISPUTE, &m);
        }
    }
    if (b.n_tx > 0)
        df_batch_ok(d, &b, "sealed re-checks");
    else
        df_empty_block(d);
}

void df_dispute_open(df *d) {
    df_reach(d, d->w.dispute_open_start, d->w.attest_start, "dispute_open");
    df_reveal_answers(d, true);
}

/* The hash member i attests under its actor. */
static void df_attested_hash(const df *d, uint8_t out[32], int i) {
    df_truth(out, d->round);
    if (d->act[i].attest == DF_MINORITY)
        out[0] ^= 0xff;
}

void df_attest(df *d) {
    df_reach(d, d->w.attest_start, d->w.attest_open_start, "attest");
    df_batch b;
    df_batch_init(&b);
    for (int i = 1; i <= d->n; i++) {
        const df_actor *a = &d->act[i];
        if (a->idle || !d->in_round[i] || a->attest == DF_SKIP)
            continue;
        uint8_t hash[32], salt[32], seal[32];
        df_attested_hash(d, hash, i);
        df_salt(d, salt, GD_SEAL_ATTEST, i, d->round, NULL, 0);
        gd_diloco_seal(seal, GD_SEAL_ATTEST, d->f.addr[i], hash, 32, salt);
        Gonka__Diloco__V1__MsgAttestRound m = df_attest_msg(d, i, seal, NULL, NULL);
        df_batch_add(&b, i, GD_DILOCO_MSG_ATTEST_ROUND, &m);
    }
    if (b.n_tx > 0)
        df_batch_ok(d, &b, "sealed attestations");
    else
        df_empty_block(d);
}

void df_attest_open(df *d) {
    df_reach(d, d->w.attest_open_start, d->w.end, "attest_open");
    df_batch b;
    df_batch_init(&b);
    for (int i = 1; i <= d->n; i++) {
        const df_actor *a = &d->act[i];
        if (a->idle || !d->in_round[i] || a->attest == DF_SKIP || a->attest == DF_SEAL_ONLY)
            continue;
        uint8_t hash[32], salt[32];
        df_attested_hash(d, hash, i);
        df_salt(d, salt, GD_SEAL_ATTEST, i, d->round, NULL, 0);
        Gonka__Diloco__V1__MsgAttestRound m = df_attest_msg(d, i, NULL, hash, salt);
        df_batch_add(&b, i, GD_DILOCO_MSG_ATTEST_ROUND, &m);
    }
    if (b.n_tx > 0)
        df_batch_ok(d, &b, "revealed attestations");
    else
        df_empty_block(d);
}

void df_finish(df *d) {
    if (d->f.height < d->w.end)
        df_until(d, d->w.end + 1);
    df_refresh(d);
    CHECK(d->r->round->phase == PH(DONE) || d->r->round->phase == PH(VOID));
    d->round++;
}

void df_play_round(df *d) {
    df_open(d);
    df_commit(d);
    df_reveal(d);
    df_verify(d);
    df_open_verdicts(d);
    df_dispute(d);
    df_dispute_open(d);
    df_attest(d);
    df_attest_open(d);
    df_finish(d);
}

void df_to_draws(df *d) {
    df_open(d);
    df_commit(d);
    df_reveal(d);
    df_until(d, d->w.verify_start + 1);
    df_refresh(d);
}

void df_to_juries(df *d) {
    df_verify(d);
    df_open_verdicts(d);
    df_until(d, d->w.dispute_start + 1);
    df_refresh(d);
}

void df_rest_of_round(df *d) {
    df_dispute(d);
    df_dispute_open(d);
    df_attest(d);
    df_attest_open(d);
    df_finish(d);
}

__extension__ typedef unsigned __int128 df_u128;

static uint64_t df_share(uint64_t part, uint64_t x, df_u128 total) {
    return total ? (uint64_t)(part * (df_u128)x / total) : 0;
}

/* The weight behind each member's winning attestations in the epoch's DONE
 * rounds (from the rounds' own snapshots). */
static void df_attest_weights(df *d, df_u128 *out, uint64_t epoch) {
    memset(out, 0, DF_ACCOUNTS * sizeof *out);
    for (uint64_t round = 0; round < d->round; round++) {
        if (df_q_round_code(d, round) != 0)
            continue; /* pruned */
        df_qround *q = df_q_round(d, round);
        const Gonka__Diloco__V1__Round *r = q->round;
        if (r->epoch == epoch && r->phase == PH(DONE) && r->next_state_hash.len == 32)
            for (size_t i = 0; i < q->n_attestations; i++) {
                const Gonka__Diloco__V1__Attestation *a = q->attestations[i];
                int at = df_index(d, a->attester);
                const Gonka__Diloco__V1__WeightedMember *m = df_weighted_of(q, a->attester);
                if (at >= 0 && m != NULL && a->next_state_hash.len == 32 &&
                    memcmp(a->next_state_hash.data, r->next_state_hash.data, 32) == 0)
                    out[at] += strtoull(m->weight, NULL, 10);
            }
        df_qfree(q);
    }
}

/* floor(part * x / total), as the module's dl_muldiv_wide. */
static uint64_t df_share_wide(uint64_t part, df_u128 x, df_u128 total) {
    while (total > UINT64_MAX) {
        x >>= 1;
        total >>= 1;
    }
    return total ? (uint64_t)(part * x / total) : 0;
}

void df_check_settlement(df *d, uint64_t epoch) {
    df_settle s[DF_ACCOUNTS];
    bool has[DF_ACCOUNTS];
    df_u128 tokens = 0, checks = 0, atts = 0, weight[DF_ACCOUNTS];
    df_attest_weights(d, weight, epoch);
    for (int i = 1; i < DF_ACCOUNTS; i++) {
        has[i] = df_settled(d, &s[i], i, epoch);
        tokens += s[i].tokens;
        checks += s[i].checks;
        atts += weight[i];
    }
    uint64_t budget = d->k.reward;
    uint64_t validators = budget * d->k.validator_share_ppm / 1000000;
    uint64_t attesters = budget * d->k.attest_share_ppm / 1000000;
    uint64_t workers = budget - validators - attesters;
    for (int i = 1; i < DF_ACCOUNTS; i++) {
        /* A member with a cheat slash in the epoch forfeits it: its shares
         * count in the totals, and its record says so with amount 0. */
        uint64_t want = s[i].forfeited ? 0
                                       : df_share(workers, s[i].tokens, tokens) +
                                             df_share(validators, s[i].checks, checks) +
                                             df_share_wide(attesters, weight[i], atts);
        if (has[i] != (want > 0 || s[i].forfeited) || s[i].amount != want) {
            fprintf(stderr, "epoch %llu: account %d settled %llu (%llu tokens, %u checks, %u "
                            "attestations), the rule gives %llu\n",
                    (unsigned long long)epoch, i, (unsigned long long)s[i].amount,
                    (unsigned long long)s[i].tokens, s[i].checks, s[i].attestations,
                    (unsigned long long)want);
            gd_test_failures++;
        }
    }
}

uint32_t df_jury_size(const df_qround *q, const df_assignment *a) {
    const Gonka__Diloco__V1__WeightedMember *t = df_weighted_of(q, a->target);
    uint32_t n = 0;
    for (size_t i = 0; t != NULL && i < q->round->n_members; i++) {
        const Gonka__Diloco__V1__WeightedMember *m = q->round->members[i];
        n += m->active && strcmp(m->hw_class, t->hw_class) == 0 &&
             strcmp(m->address, a->target) != 0 &&
             !df_has_str(a->validators, a->n_validators, m->address);
    }
    return n;
}

/* ---- the rules, recomputed ---------------------------------------------------------------------- */

typedef struct df_pool {
    const char *addr[DF_ACCOUNTS + 8];
    uint64_t weight[DF_ACCOUNTS + 8];
    uint32_t n;
} df_pool;

/* The eligible members: of the class, active when the draw was made
 * (active: by account, or NULL for the round's flags as queried), less the
 * target and the excluded. */
static void df_pool_fill(df_pool *p, const df *d, const Gonka__Diloco__V1__Round *r,
                         const bool *active, const char *cls, const char *target,
                         char *const *exclude, size_t n_exclude) {
    p->n = 0;
    for (size_t i = 0; i < r->n_members && p->n < DF_ACCOUNTS + 8; i++) {
        const Gonka__Diloco__V1__WeightedMember *m = r->members[i];
        int at = df_index(d, m->address);
        bool was_active = active != NULL && at >= 0 ? active[at] : m->active;
        if (!was_active || strcmp(m->hw_class, cls) != 0 || strcmp(m->address, target) == 0 ||
            df_has_str(exclude, n_exclude, m->address))
            continue;
        p->addr[p->n] = m->address;
        p->weight[p->n++] = strtoull(m->weight, NULL, 10);
    }
}

static void df_pool_take(df_pool *p, uint32_t i) {
    for (uint32_t j = i; j + 1 < p->n; j++) {
        p->addr[j] = p->addr[j + 1];
        p->weight[j] = p->weight[j + 1];
    }
    p->n--;
}

void df_check_draws(const df *d, const df_qround *q) {
    const Gonka__Diloco__V1__Round *r = q->round;
    CHECK(r->seed.len == 32 && r->verify_randomness.len == 32 && r->beacon.len == 32);
    if (r->seed.len != 32 || r->verify_randomness.len != 32 || r->beacon.len != 32)
        return;
    /* The seed: the beacon and the revealed secrets in address order. */
    uint8_t secrets[DF_ACCOUNTS * 2][32];
    size_t n = 0;
    for (size_t i = 0; i < q->n_randomness && n < DF_ACCOUNTS * 2; i++) {
        if (i > 0)
            CHECK(gd_diloco_address_cmp(q->randomness[i - 1]->member,
                                        q->randomness[i]->member) < 0);
        if (q->randomness[i]->secret.len == 32)
            memcpy(secrets[n++], q->randomness[i]->secret.data, 32);
    }
    uint8_t seed[32], rnd[32];
    CHECK_OK(gd_diloco_round_seed(seed, r->run, r->index, r->beacon.data, &secrets[0][0], n));
    CHECK(memcmp(seed, r->seed.data, 32) == 0);
    gd_diloco_purpose(rnd, seed, "verify");
    CHECK(memcmp(rnd, r->verify_randomness.data, 32) == 0);
    CHECK(r->recheck_randomness.len == 0); /* juries are drawn by nobody */
    size_t expected = 0;
    for (size_t i = 0; i < q->n_commitments; i++) {
        const Gonka__Diloco__V1__Commitment *c = q->commitments[i];
        const Gonka__Diloco__V1__WeightedMember *tm = df_weighted_of(q, c->participant);
        CHECK(tm != NULL);
        if (tm == NULL)
            continue;
        /* The class's members active at verify_start. */
        const bool *av = d->active_v_round == r->index + 1 ? d->active_v : NULL;
        uint32_t class_size = 0;
        for (size_t m = 0; m < r->n_members; m++) {
            int at = df_index(d, r->members[m]->address);
            bool was_active = av != NULL && at >= 0 ? av[at] : r->members[m]->active;
            class_size += was_active && strcmp(r->members[m]->hw_class, tm->hw_class) == 0;
        }
        if (class_size < d->k.min_class) {
            for (size_t x = 0; x < q->n_assignments; x++)
                CHECK(strcmp(q->assignments[x]->target, c->participant) != 0);
            continue;
        }
        for (uint32_t j = 0; j < d->k.checks; j++) {
            const df_assignment *a = NULL;
            for (size_t x = 0; x < q->n_assignments; x++)
                if (strcmp(q->assignments[x]->target, c->participant) == 0 &&
                    q->assignments[x]->check == j)
                    a = q->assignments[x];
            CHECK(a != NULL);
            if (a == NULL)
                continue;
            expected++;
            gd_diloco_check_draw dr;
            gd_diloco_draw_check(&dr, rnd, c->participant, j, c->segment_count, 2,
                                 c->payload_leaves - 1, d->k.double_ppm);
            CHECK(a->segment == dr.segment && a->step == dr.step && a->chunk == dr.chunk);
            df_pool pool;
            df_pool_fill(&pool, d, r, av, tm->hw_class, c->participant, NULL, 0);
            uint32_t want = dr.twice ? 2 : 1;
            size_t got = 0;
            for (uint32_t v = 0; v < want && pool.n > 0; v++, got++) {
                uint32_t at = gd_diloco_draw_member("gd-validator", rnd, c->participant, j, v,
                                                    pool.weight, pool.n);
                CHECK(v < a->n_validators && strcmp(a->validators[v], pool.addr[at]) == 0);
                df_pool_take(&pool, at);
            }
            CHECK(a->n_validators == got);
            if (a->n_recheckers == 0)
                continue;
            /* The jury: every member of the class active at dispute_start,
             * less the target and the validators, in address order. */
            const bool *ar = d->active_r_round == r->index + 1 ? d->active_r : NULL;
            df_pool_fill(&pool, d, r, ar, tm->hw_class, c->participant, a->validators,
                         a->n_validators);
            CHECK(a->n_recheckers == pool.n && pool.n >= d->k.rechecks);
            for (uint32_t k = 0; k < a->n_recheckers && k < pool.n; k++)
                CHECK(strcmp(a->recheckers[k], pool.addr[k]) == 0);
        }
    }
    CHECK(q->n_assignments == expected);
}
