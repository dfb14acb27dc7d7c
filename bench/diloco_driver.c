/* The in-process DiLoCo chain and round player of the benchmarks
 * (bench/diloco_driver.h). */
#include "bench/diloco_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timer.h"
#include "chain/keys/keys.h"
#include "chain/module/auth.h"
#include "chain/module/diloco.h"
#include "chain/wire/diloco_rules.h"
#include "common/bytes.h"
#include "common/hash.h"
#include "gonka/diloco/v1/tx.pb-c.h"
#include "proofs/state_desc.h"
#include "proofs/state_sample.h"

#define VERDICT(x) GONKA__DILOCO__V1__VERDICT__VERDICT_##x

const char *const gd_dd_role_names[GD_DD_ROLES] = {
    "honest", "faker",      "withholder",  "lazy validator", "colluder", "idle",
    "framer", "lazy-single", "pass-early", "late-server",    "skipper", "grinder", "dripper"};

static void die(const char *what, const char *detail) {
    fprintf(stderr, "diloco driver: %s: %s\n", what, detail);
    exit(1);
}

static void leaf(uint8_t out[32], int member, uint32_t index) {
    char text[64];
    snprintf(text, sizeof text, "member %d chunk %u", member, (unsigned)index);
    gd_mmr_hash_leaf(out, index, text, strlen(text));
}

/* SHA-256 of a label and up to four numbers: the players' deterministic
 * secrets, salts, digests and coin flips. */
static void tag_hash(uint8_t out[32], const char *label, uint64_t a, uint64_t b, uint64_t c,
                     uint64_t e) {
    uint8_t buf[64 + 32];
    size_t n = strlen(label) < 64 ? strlen(label) : 64;
    memcpy(buf, label, n);
    gd_put_le64(buf + n, a);
    gd_put_le64(buf + n + 8, b);
    gd_put_le64(buf + n + 16, c);
    gd_put_le64(buf + n + 24, e);
    gd_sha256(out, buf, n + 32);
}

/* The states the players commit to: every array of every state is the
 * same GD_DD_CHUNKS chunks of one value (chunk_elems 1), so a descriptor's
 * roots are one MMR's; what differs between states is their descriptors,
 * which the transcript commits to, as a worker's. The module checks a
 * report's state sample against these, as against a real worker's. */
static void state_tree(gd_mmr *mmr, uint8_t root[32]) {
    gd_mmr_init(mmr);
    for (uint32_t l = 0; l < GD_DD_CHUNKS; l++) {
        uint8_t h[32];
        gd_mmr_hash_leaf(h, l, &l, sizeof l);
        if (gd_mmr_append(mmr, h) != GD_OK)
            die("state mmr", gd_error_detail());
    }
    if (gd_mmr_root(mmr, root) != GD_OK)
        die("state mmr root", gd_error_detail());
}

static void state_desc(const gd_dd *d, gd_worker_desc *out, int t, uint64_t round,
                       uint32_t leaf) {
    gd_mmr mmr;
    uint8_t root[32];
    state_tree(&mmr, root);
    gd_mmr_free(&mmr);
    *out = (gd_worker_desc){.tag = {.run = 1, .chunk_elems = 1},
                            .round = round,
                            .rank = (uint32_t)t,
                            .stage = leaf <= d->segments ? GD_STAGE_TRAIN : GD_STAGE_ENCODED,
                            .step = leaf,
                            .n = GD_DD_CHUNKS};
    snprintf(out->address, sizeof out->address, "%s", d->addr[t]);
    memcpy(out->params_root, root, 32);
    memcpy(out->exp_avg_root, root, 32);
    memcpy(out->exp_avg_sq_root, root, 32);
    memcpy(out->residual_root, root, 32);
}

/* Member t's transcript of a round: S + 2 descriptors' hashes. */
static void transcript_of(const gd_dd *d, int t, uint64_t round, gd_mmr *mmr, uint8_t root[32]) {
    gd_mmr_init(mmr);
    for (uint32_t l = 0; l < d->segments + 2; l++) {
        gd_worker_desc desc;
        uint8_t hash[32], h[32];
        state_desc(d, &desc, t, round, l);
        gd_worker_desc_hash(&desc, hash);
        gd_mmr_hash_leaf(h, l, hash, sizeof hash);
        if (gd_mmr_append(mmr, h) != GD_OK)
            die("transcript", gd_error_detail());
    }
    if (gd_mmr_root(mmr, root) != GD_OK)
        die("transcript root", gd_error_detail());
}

json_t *gd_dd_spec(uint32_t segments) {
    return json_pack(
        "{s:s,s:s,s:i,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s,"
        "s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i},s:s,s:s,s:s,"
        "s:s,s:s,s:i,s:i,s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:b,s:s,s:i,s:b,"
        "s:[s],s:s,s:s,s:i,s:s,s:s}",
        "model", "tiny", "layout_digest",
        "1111111111111111111111111111111111111111111111111111111111111111", "seed", 1,
        "data_spec", "synthetic:markov:1", "initial_state_hash",
        "2222222222222222222222222222222222222222222222222222222222222222", "h_min",
        (int)(2 * segments), "h_max", (int)(2 * segments), "segment_steps", 2, "tokens_per_step",
        512, "outer_lr_ppm", 700000, "outer_momentum_ppm", 900000, "codec", "int8", "windows",
        "train", 1, "commit", 1, "reveal", 1, "verify", 2, "open", 1, "dispute", 2,
        "dispute_open", 1, "attest", 2, "attest_open", 1, "reward_per_epoch", "1000000ngonka",
        "min_collateral", "4000000ngonka", "fail_bond", "100000ngonka", "inner_lr", "0.003",
        "inner_min_lr", "0.0003", "inner_warmup_steps", 10, "inner_schedule_steps", 1000,
        "adam_beta1", "0.9", "adam_beta2", "0.95", "adam_eps", "0.00000001", "weight_decay",
        "0.1", "grad_clip", "1", "batch", 8, "seq_len", 64, "micro_batch", 8, "clip_factor", "2",
        "error_feedback", 1, "error_feedback_decay", "1", "chunk_elems", 1048576, "overlap", 0,
        "hw_classes", "cpu", "cheat_slash", "1000000ngonka", "skip_slash", "10000ngonka",
        "max_members", 1024, "data_digest",
        "3333333333333333333333333333333333333333333333333333333333333333", "withhold_slash",
        "500000ngonka");
}

void gd_dd_open(gd_dd *d, int members, json_t *spec, const char *const *classes,
                uint64_t collateral, int64_t epoch_length) {
    d->w = members;
    d->addr = calloc((size_t)members, sizeof *d->addr);
    d->mmr = calloc((size_t)members, sizeof *d->mmr);
    d->root = calloc((size_t)members, sizeof *d->root);
    d->slashed = calloc((size_t)members, sizeof *d->slashed);
    if (!d->addr || !d->mmr || !d->root || !d->slashed)
        die("open", "out of memory");
    char module[GD_ADDRESS_STR_MAX];
    if (gd_auth_module_address(module, sizeof module, "diloco") != GD_OK)
        die("module address", gd_error_detail());
    json_t *accounts = json_array(), *balances = json_array(), *list = json_array();
    char coll[24];
    snprintf(coll, sizeof coll, "%llu", (unsigned long long)collateral);
    for (int i = 0; i < members; i++) {
        uint8_t secret[32];
        gd_sha256(secret, &i, sizeof i);
        gd_key key;
        if (gd_key_from_secret(&key, secret) != GD_OK ||
            gd_address_from_pubkey(d->addr[i], sizeof d->addr[i], "gonka", key.pubkey) != GD_OK)
            die("key", gd_error_detail());
        gd_key_wipe(&key);
        json_array_append_new(accounts, json_pack("{s:s,s:s,s:i}", "@type",
                                                  "/cosmos.auth.v1beta1.BaseAccount", "address",
                                                  d->addr[i], "account_number", i));
        json_array_append_new(balances,
                              json_pack("{s:s,s:[{s:s,s:s}]}", "address", d->addr[i], "coins",
                                        "denom", "ngonka", "amount", "1000000000000"));
        json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "run", "1", "address",
                                              d->addr[i], "artifact_url", "http://h", "hw_class",
                                              classes[i], "collateral", coll, "rank", i));
        gd_mmr_init(&d->mmr[i]);
        for (uint32_t l = 0; l <= GD_DD_CHUNKS; l++) {
            uint8_t h[32];
            leaf(h, i, l);
            if (gd_mmr_append(&d->mmr[i], h) != GD_OK)
                die("mmr", gd_error_detail());
        }
        if (gd_mmr_root(&d->mmr[i], d->root[i]) != GD_OK)
            die("mmr root", gd_error_detail());
    }
    json_array_append_new(accounts, json_pack("{s:s,s:{s:s,s:i},s:s}", "@type",
                                              "/cosmos.auth.v1beta1.ModuleAccount",
                                              "base_account", "address", module,
                                              "account_number", members, "name", "diloco"));
    const unsigned long long pool = 1000000000000ull;
    char held[40];
    snprintf(held, sizeof held, "%llu", pool + collateral * (unsigned long long)members);
    json_array_append_new(balances, json_pack("{s:s,s:[{s:s,s:s}]}", "address", module, "coins",
                                              "denom", "ngonka", "amount", held));
    char pool_text[24];
    snprintf(pool_text, sizeof pool_text, "%llu", pool);
    json_t *genesis = json_pack(
        "{s:s,s:{s:{s:o},s:{s:o},s:{s:{s:s},s:[{s:o,s:s,s:i}],s:o}}}", "chain_id", "prod-sim",
        "app_state", "auth", "accounts", accounts, "bank", "balances", balances, "diloco",
        "params", "authority", d->addr[0], "runs", "spec", spec, "pool", pool_text,
        "next_rank", members, "members", list);
    if (genesis != NULL && epoch_length > 0)
        json_object_set_new(json_object_get(genesis, "app_state"), "inference",
                            json_pack("{s:{s:{s:I}}}", "params", "epoch_params", "epoch_length",
                                      (json_int_t)epoch_length));
    if (genesis == NULL || gd_app_new(&d->app, NULL) != GD_OK ||
        gd_app_register_standard(d->app) != GD_OK || gd_app_init_chain(d->app, genesis) != GD_OK)
        die("genesis", gd_error_detail());
    json_decref(genesis);
}

void gd_dd_close(gd_dd *d) {
    for (int i = 0; i < d->w; i++)
        gd_mmr_free(&d->mmr[i]);
    free(d->addr);
    free(d->mmr);
    free(d->root);
    free(d->slashed);
    gd_app_free(d->app);
}

static int member_of(const gd_dd *d, const char *addr) {
    for (int i = 0; i < d->w; i++)
        if (strcmp(d->addr[i], addr) == 0)
            return i;
    return -1;
}

static void tally_slashes(gd_dd *d, const gd_events *ev) {
    for (size_t i = 0; i < ev->n; i++) {
        if (strcmp(ev->items[i].type, "diloco_slashed") != 0)
            continue;
        const char *addr = NULL, *amount = NULL;
        for (size_t j = 0; j < ev->items[i].n_attrs; j++) {
            if (strcmp(ev->items[i].attrs[j].key, "address") == 0)
                addr = ev->items[i].attrs[j].value;
            if (strcmp(ev->items[i].attrs[j].key, "amount") == 0)
                amount = ev->items[i].attrs[j].value;
        }
        int m = addr ? member_of(d, addr) : -1;
        if (m >= 0 && amount)
            d->slashed[m] += strtoull(amount, NULL, 10);
    }
}

double gd_dd_block(gd_dd *d) {
    int64_t h = gd_app_height(d->app) + 1;
    uint8_t hash[32], app_hash[32];
    gd_sha256(hash, &h, sizeof h);
    gd_events events = {0};
    double t0 = gd_bench_now();
    if (gd_app_begin_block(d->app, h, hash, &events) != GD_OK ||
        gd_app_end_block(d->app, &events) != GD_OK || gd_app_commit(d->app, app_hash) != GD_OK)
        die("block", gd_error_detail());
    double ms = (gd_bench_now() - t0) * 1e3;
    tally_slashes(d, &events);
    gd_events_free(&events);
    return ms;
}

void gd_dd_until(gd_dd *d, int64_t height) {
    while (gd_app_height(d->app) < height)
        gd_dd_block(d);
}

static const char *const k_urls[] = {
    GD_DILOCO_MSG_COMMIT_ROUND,  GD_DILOCO_MSG_REPORT_AVAILABILITY, GD_DILOCO_MSG_SUBMIT_VERDICT,
    GD_DILOCO_MSG_DISPUTE,       GD_DILOCO_MSG_ATTEST_ROUND,        GD_DILOCO_MSG_CLAIM_REWARDS,
    GD_DILOCO_MSG_RANDOMNESS,    GD_DILOCO_MSG_LEAVE_RUN,           GD_DILOCO_MSG_JOIN_RUN,
    GD_DILOCO_MSG_CREATE_RUN,
};

int gd_dd_msg_kind(const char *url) {
    for (size_t i = 0; i < sizeof k_urls / sizeof k_urls[0]; i++)
        if (strcmp(k_urls[i], url) == 0)
            return (int)i;
    return 15;
}

uint32_t gd_dd_msg(gd_dd *d, const char *url, const void *msg) {
    const gd_module *m = &gd_diloco_module;
    const gd_msg_route *route = NULL;
    for (size_t i = 0; i < m->n_msgs; i++)
        if (strcmp(m->msgs[i].type_url, url) == 0)
            route = &m->msgs[i];
    if (route == NULL)
        die("no route", url);
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(len + 1);
    if (buf == NULL)
        die("message", "out of memory");
    protobuf_c_message_pack(msg, buf);
    gd_kv *kv = NULL;
    gd_gas_meter gas = {0, 0};
    gd_events events = {0};
    uint8_t hash[32] = {0};
    double t0 = gd_bench_now();
    if (gd_cache_new(&kv, gd_store_view(gd_app_store(d->app))) != GD_OK)
        die("cache", gd_error_detail());
    gd_ctx ctx = {.kv = kv, .gas = &gas, .events = &events, .mode = GD_EXEC_DELIVER,
                  .height = gd_app_height(d->app), .chain_id = "prod-sim", .block_hash = hash};
    char signer[GD_ADDRESS_STR_MAX];
    gd_buf resp = {0};
    uint32_t code = 0;
    ProtobufCMessage *decoded = NULL;
    if (gd_msg_route_decode(route, &ctx, &decoded, buf, len) != GD_OK ||
        route->validate(&ctx, decoded, signer, sizeof signer) != GD_OK ||
        route->execute(d->app, &ctx, decoded, &resp) != GD_OK) {
        code = ctx.err.code ? ctx.err.code : 1;
        snprintf(d->log, sizeof d->log, "%s", ctx.err.code ? ctx.err.log : gd_error_detail());
    } else if (gd_cache_write(kv) != GD_OK) {
        die("cache write", gd_error_detail());
    }
    gd_cache_free(kv);
    if (decoded != NULL)
        protobuf_c_message_free_unpacked(decoded, NULL);
    int kind = gd_dd_msg_kind(url);
    d->msg_seconds[kind] += gd_bench_now() - t0;
    d->msg_count[kind]++;
    gd_buf_free(&resp);
    gd_events_free(&events);
    free(buf);
    return code;
}

static void *query(gd_dd *d, const char *path, const void *req,
                   const ProtobufCMessageDescriptor *desc, bool may_fail) {
    uint8_t q[256];
    size_t n = protobuf_c_message_pack(req, q);
    gd_buf resp = {0};
    gd_abci_error err;
    if (gd_app_query(d->app, path, q, n, &resp, &err) != GD_OK)
        die("query", gd_error_detail());
    if (err.code) {
        gd_buf_free(&resp);
        if (!may_fail)
            die("query", err.log);
        return NULL;
    }
    void *r = protobuf_c_message_unpack(desc, NULL, resp.len, resp.data);
    gd_buf_free(&resp);
    if (r == NULL)
        die("query", "the answer does not decode");
    return r;
}

Gonka__Diloco__V1__QueryRoundResponse *gd_dd_round(gd_dd *d, uint64_t round) {
    Gonka__Diloco__V1__QueryRoundRequest req = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
    req.run = 1;
    req.round = round;
    return query(d, GD_DILOCO_QUERY_ROUND, &req, &gonka__diloco__v1__query_round_response__descriptor,
                 true);
}

Gonka__Diloco__V1__QueryRunResponse *gd_dd_run(gd_dd *d) {
    Gonka__Diloco__V1__QueryRunRequest req = GONKA__DILOCO__V1__QUERY_RUN_REQUEST__INIT;
    req.run = 1;
    return query(d, GD_DILOCO_QUERY_RUN, &req, &gonka__diloco__v1__query_run_response__descriptor,
                 false);
}

uint64_t gd_dd_settled(gd_dd *d, int member, uint64_t epoch) {
    Gonka__Diloco__V1__QueryRewardsRequest req = GONKA__DILOCO__V1__QUERY_REWARDS_REQUEST__INIT;
    req.address = d->addr[member];
    Gonka__Diloco__V1__QueryRewardsResponse *r =
        query(d, GD_DILOCO_QUERY_REWARDS, &req,
              &gonka__diloco__v1__query_rewards_response__descriptor, false);
    uint64_t amount = 0;
    for (size_t i = 0; i < r->n_amounts; i++)
        if (r->amounts[i]->run == 1 && r->amounts[i]->epoch == epoch)
            amount = strtoull(r->amounts[i]->amount, NULL, 10);
    gonka__diloco__v1__query_rewards_response__free_unpacked(r, NULL);
    return amount;
}

/* ---- the player -------------------------------------------------------------------- */

void gd_dd_log_init(gd_dd_round_log *l, int members) {
    memset(l, 0, sizeof *l);
    l->committed = calloc((size_t)members, 1);
    l->included = calloc((size_t)members, 1);
    l->aggregated = calloc((size_t)members, 1);
    l->caught = calloc((size_t)members, 1);
    l->faked = calloc((size_t)members, sizeof *l->faked);
    l->checks = calloc((size_t)members, sizeof *l->checks);
    if (!l->committed || !l->included || !l->aggregated || !l->caught || !l->faked || !l->checks)
        die("log", "out of memory");
}

void gd_dd_log_free(gd_dd_round_log *l) {
    free(l->committed);
    free(l->included);
    free(l->aggregated);
    free(l->caught);
    free(l->faked);
    free(l->checks);
}

static bool active(const gd_dd *d, int i) { return d->roles[i] != GD_DD_IDLE; }

static void secret_of(uint8_t out[32], int member, uint64_t round) {
    tag_hash(out, "bench secret", (uint64_t)member, round, 0, 0);
}

void gd_dd_seal_secrets(gd_dd *d, uint64_t round) {
    for (int i = 0; i < d->w; i++) {
        if (!active(d, i))
            continue;
        uint8_t secret[32], seal[32];
        secret_of(secret, i, round);
        gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, d->addr[i], NULL, 0, secret);
        Gonka__Diloco__V1__MsgRandomness m = GONKA__DILOCO__V1__MSG_RANDOMNESS__INIT;
        m.member = d->addr[i];
        m.run = 1;
        m.round = round;
        m.seal = (ProtobufCBinaryData){32, seal};
        gd_dd_msg(d, GD_DILOCO_MSG_RANDOMNESS, &m); /* a released member is refused: fine */
    }
}

/* Which of a member's segments are faked this round (bit s). */
static uint64_t faked_segments(const gd_dd *d, int member, uint64_t round) {
    uint32_t s = d->segments < 64 ? d->segments : 64;
    uint32_t want = 0;
    if (d->roles[member] == GD_DD_COLLUDER)
        want = s;
    else if (d->roles[member] == GD_DD_FAKER) {
        want = (uint32_t)(d->fake_fraction * s + 0.999999);
        want = want > s ? s : want;
    }
    uint64_t mask = 0;
    for (uint32_t k = 0, n = 0; n < want; k++) {
        uint8_t h[32];
        tag_hash(h, "bench fake", (uint64_t)member, round, k, 0);
        uint64_t bit = 1ull << (gd_get_le64(h) % s);
        if (!(mask & bit)) {
            mask |= bit;
            n++;
        }
    }
    return mask;
}

/* The digest of a re-execution of target t's segment: a stand-in trace and
 * end state. */
static void true_digest(const gd_dd *d, uint64_t round, int t, uint32_t segment,
                        uint8_t digest[32]) {
    uint8_t trace[32], end[32];
    tag_hash(trace, "bench trace", round, (uint64_t)t, segment, 0);
    tag_hash(end, "bench state", round, (uint64_t)t, segment, 0);
    gd_diloco_verdict_digest(digest, 1, round, d->addr[t], segment, trace, end);
}

/* What validator v answers for a check of target t: an honest validator
 * re-executes (FAIL on a faked segment, UNAVAILABLE without the target's
 * checkpoints, PASS with the true digest otherwise); a lazy one makes a
 * digest up; colluders pass each other with a digest they agreed on; the
 * review's attackers as their names say (GD_VERDICT_UNSPECIFIED: no
 * answer). A juror (recheck) of a late server finds its states served. */
static void answer(const gd_dd *d, uint64_t round, int v, int t, uint32_t segment, uint32_t step,
                   uint64_t faked, bool recheck, bool single, gd_diloco_verdict *verdict,
                   uint8_t digest[32]) {
    gd_dd_role role = d->roles[v];
    if (role == GD_DD_SKIPPER && !recheck) {
        *verdict = GD_VERDICT_UNSPECIFIED;
        return;
    }
    if (role == GD_DD_PASS_EARLY || (role == GD_DD_LAZY_SINGLE && single && !recheck)) {
        *verdict = GD_VERDICT_PASS;
        tag_hash(digest, "bench partial", (uint64_t)v, round, (uint64_t)t, segment);
        return;
    }
    if (role == GD_DD_FRAMER && d->roles[t] != GD_DD_FRAMER) {
        *verdict = GD_VERDICT_FAIL;
        true_digest(d, round, t, segment, digest);
        return;
    }
    if (d->roles[t] == GD_DD_LATE_SERVER && !recheck) {
        *verdict = GD_VERDICT_UNAVAILABLE;
        memset(digest, 0, 32);
        return;
    }
    if (d->roles[v] == GD_DD_LAZY) {
        *verdict = GD_VERDICT_PASS;
        tag_hash(digest, "bench lazy", (uint64_t)v, round, (uint64_t)t, segment);
        return;
    }
    if (d->roles[v] == GD_DD_COLLUDER && d->roles[t] == GD_DD_COLLUDER) {
        *verdict = GD_VERDICT_PASS;
        tag_hash(digest, "bench collude", round, (uint64_t)t, segment, step);
        return;
    }
    if (d->roles[t] == GD_DD_WITHHOLDER) {
        *verdict = GD_VERDICT_UNAVAILABLE;
        memset(digest, 0, 32);
        return;
    }
    true_digest(d, round, t, segment, digest);
    *verdict = faked >> segment & 1 ? GD_VERDICT_FAIL : GD_VERDICT_PASS;
}

/* The target's own digest of its check: the truth from its kept trace,
 * except what it never computed (a faked segment: made up) or agreed on
 * (a colluder: its partners' digest). */
static void own_digest(const gd_dd *d, uint64_t round, int t, uint32_t segment, uint32_t step,
                       uint64_t faked, uint8_t digest[32]) {
    if (d->roles[t] == GD_DD_COLLUDER)
        tag_hash(digest, "bench collude", round, (uint64_t)t, segment, step);
    else if (faked >> segment & 1)
        tag_hash(digest, "bench own guess", round, (uint64_t)t, segment, step);
    else
        true_digest(d, round, t, segment, digest);
}

static void salt_of(uint8_t out[32], int who, uint64_t round, int t, uint32_t check, int kind) {
    tag_hash(out, "bench salt", (uint64_t)who, round, (uint64_t)t * 64 + check, (uint64_t)kind);
}

/* Sealed (reveal false) or revealed answers of the assigned validators
 * (recheck false) or of the re-checkers. */
static void answers(gd_dd *d, const Gonka__Diloco__V1__QueryRoundResponse *r, const uint64_t *faked,
                    bool recheck, bool reveal) {
    uint64_t round = r->round->index;
    for (size_t i = 0; i < r->n_assignments; i++) {
        const Gonka__Diloco__V1__Assignment *a = r->assignments[i];
        int t = member_of(d, a->target);
        char **who = recheck ? a->recheckers : a->validators;
        size_t n = recheck ? a->n_recheckers : a->n_validators;
        /* Slot n, for a verdict: the target's own digest. */
        for (size_t j = 0; j < n + !recheck; j++) {
            bool own = j == n;
            int v = own ? t : member_of(d, who[j]);
            if (v < 0 || t < 0 || !active(d, v))
                continue;
            gd_diloco_verdict verdict = GD_VERDICT_PASS;
            uint8_t digest[32], salt[32], seal[32];
            if (own)
                own_digest(d, round, t, a->segment, a->step, faked[t], digest);
            else
                answer(d, round, v, t, a->segment, a->step, faked[t], recheck,
                       a->n_validators == 1, &verdict, digest);
            if (verdict == GD_VERDICT_UNSPECIFIED)
                continue; /* a skipped duty */
            int kind = recheck ? GD_SEAL_RECHECK : own ? GD_SEAL_OWN : GD_SEAL_VERDICT;
            salt_of(salt, v, round, t, a->check, kind);
            gd_diloco_verdict_seal(seal, (gd_diloco_seal_kind)kind, d->addr[v], verdict, digest,
                                   salt);
            /* MsgSubmitVerdict and MsgDispute share these fields' names. */
#define DD_FILL(m)                                                                           \
    do {                                                                                     \
        (m).validator = d->addr[v];                                                          \
        (m).run = 1;                                                                         \
        (m).round = round;                                                                   \
        (m).target = a->target;                                                              \
        (m).check = a->check;                                                                \
        if (reveal) {                                                                        \
            (m).verdict = (Gonka__Diloco__V1__Verdict)verdict;                               \
            (m).digest = (ProtobufCBinaryData){32, digest};                                  \
            (m).salt = (ProtobufCBinaryData){32, salt};                                      \
        } else {                                                                             \
            (m).seal = (ProtobufCBinaryData){32, seal};                                      \
        }                                                                                    \
    } while (0)
            uint32_t code;
            if (recheck) {
                Gonka__Diloco__V1__MsgDispute m = GONKA__DILOCO__V1__MSG_DISPUTE__INIT;
                DD_FILL(m);
                code = gd_dd_msg(d, GD_DILOCO_MSG_DISPUTE, &m);
            } else {
                Gonka__Diloco__V1__MsgSubmitVerdict m = GONKA__DILOCO__V1__MSG_SUBMIT_VERDICT__INIT;
                DD_FILL(m);
                code = gd_dd_msg(d, GD_DILOCO_MSG_SUBMIT_VERDICT, &m);
            }
#undef DD_FILL
            if (code != 0)
                die(recheck ? "re-check refused" : "verdict refused", d->log);
        }
    }
}

/* Reporter i's state sample of target t (proofs/state_sample.h). */
static void state_sample(const gd_dd *d, int t, int i, uint64_t round, const uint8_t *rnd,
                         uint8_t desc_bytes[GD_WORKER_DESC_BYTES], gd_buf *desc_proof,
                         uint8_t chunk_leaf[32], gd_buf *chunk_proof) {
    gd_state_sample s;
    gd_state_sample_draw(&s, rnd, d->addr[t], d->addr[i], d->segments);
    gd_worker_desc desc;
    state_desc(d, &desc, t, round, s.leaf);
    gd_worker_desc_encode(&desc, desc_bytes);
    gd_mmr tmmr, smmr;
    uint8_t troot[32], sroot[32];
    transcript_of(d, t, round, &tmmr, troot);
    state_tree(&smmr, sroot);
    uint32_t chunk = gd_state_sample_chunk(&s, &desc);
    gd_mmr_proof p1, p2;
    if (gd_mmr_prove(&tmmr, &p1, s.leaf) != GD_OK ||
        gd_mmr_proof_encode(&p1, desc_proof) != GD_OK || gd_mmr_prove(&smmr, &p2, chunk) != GD_OK ||
        gd_mmr_proof_encode(&p2, chunk_proof) != GD_OK)
        die("state sample", gd_error_detail());
    gd_mmr_hash_leaf(chunk_leaf, chunk, &chunk, sizeof chunk);
    gd_mmr_free(&tmmr);
    gd_mmr_free(&smmr);
}

static void reports(gd_dd *d, const Gonka__Diloco__V1__QueryRoundResponse *r, uint32_t want) {
    const uint8_t *rnd = r->round->verify_randomness.data;
    for (size_t c = 0; c < r->n_commitments; c++) {
        int t = member_of(d, r->commitments[c]->participant);
        for (int i = 0; i < d->w; i++) {
            if (i == t || !active(d, i) || t < 0)
                continue;
            /* A dripped payload is still coming when the window ends. */
            if (d->roles[t] == GD_DD_DRIPPER && d->roles[i] != GD_DD_DRIPPER)
                continue;
            uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
            uint32_t n = gd_diloco_avail_chunks(chunks, rnd, d->addr[t], d->addr[i], GD_DD_CHUNKS,
                                                want);
            uint8_t leaves[GD_DILOCO_AVAIL_CHUNKS_MAX][32];
            gd_buf enc[GD_DILOCO_AVAIL_CHUNKS_MAX] = {{0}};
            ProtobufCBinaryData lh[GD_DILOCO_AVAIL_CHUNKS_MAX], pr[GD_DILOCO_AVAIL_CHUNKS_MAX];
            for (uint32_t k = 0; k < n; k++) {
                gd_mmr_proof proof;
                leaf(leaves[k], t, chunks[k] + 1);
                if (gd_mmr_prove(&d->mmr[t], &proof, chunks[k] + 1) != GD_OK ||
                    gd_mmr_proof_encode(&proof, &enc[k]) != GD_OK)
                    die("proof", gd_error_detail());
                lh[k] = (ProtobufCBinaryData){32, leaves[k]};
                pr[k] = (ProtobufCBinaryData){enc[k].len, enc[k].data};
            }
            Gonka__Diloco__V1__MsgReportAvailability m =
                GONKA__DILOCO__V1__MSG_REPORT_AVAILABILITY__INIT;
            m.reporter = d->addr[i];
            m.run = 1;
            m.round = r->round->index;
            m.target = d->addr[t];
            m.leaf_hashes = lh;
            m.n_leaf_hashes = n;
            m.proofs = pr;
            m.n_proofs = n;
            /* The state sample, from a target that serves its states in
             * the verify window. */
            uint8_t desc_bytes[GD_WORKER_DESC_BYTES], chunk_leaf[32];
            gd_buf desc_proof = {0}, chunk_proof = {0};
            if (d->roles[t] != GD_DD_LATE_SERVER && d->roles[t] != GD_DD_WITHHOLDER) {
                state_sample(d, t, i, r->round->index, rnd, desc_bytes, &desc_proof, chunk_leaf,
                             &chunk_proof);
                m.state_descriptor = (ProtobufCBinaryData){sizeof desc_bytes, desc_bytes};
                m.state_descriptor_proof =
                    (ProtobufCBinaryData){desc_proof.len, desc_proof.data};
                m.state_chunk_leaf = (ProtobufCBinaryData){32, chunk_leaf};
                m.state_chunk_proof = (ProtobufCBinaryData){chunk_proof.len, chunk_proof.data};
            }
            uint32_t code = gd_dd_msg(d, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m);
            gd_buf_free(&desc_proof);
            gd_buf_free(&chunk_proof);
            /* A member suspended or released is not in the snapshot. */
            if (code != 0 && code != GD_DILOCO_ERR_NOT_MEMBER)
                die("report refused", d->log);
            for (uint32_t k = 0; k < n; k++)
                gd_buf_free(&enc[k]);
        }
    }
}

static void attestations(gd_dd *d, uint64_t round, bool reveal) {
    uint8_t next[32];
    tag_hash(next, "bench G", round, 0, 0, 0);
    for (int i = 0; i < d->w; i++) {
        if (!active(d, i))
            continue;
        uint8_t salt[32], seal[32];
        salt_of(salt, i, round, 0, 0, 7);
        gd_diloco_seal(seal, GD_SEAL_ATTEST, d->addr[i], next, 32, salt);
        Gonka__Diloco__V1__MsgAttestRound m = GONKA__DILOCO__V1__MSG_ATTEST_ROUND__INIT;
        m.attester = d->addr[i];
        m.run = 1;
        m.round = round;
        if (reveal) {
            m.next_state_hash = (ProtobufCBinaryData){32, next};
            m.salt = (ProtobufCBinaryData){32, salt};
        } else {
            m.seal = (ProtobufCBinaryData){32, seal};
        }
        uint32_t code = gd_dd_msg(d, GD_DILOCO_MSG_ATTEST_ROUND, &m);
        if (code != 0 && code != GD_DILOCO_ERR_NOT_MEMBER && code != GD_DILOCO_ERR_SEAL)
            die("attestation refused", d->log);
    }
}

static bool listed(char *const *items, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0)
            return true;
    return false;
}

static bool listed_commit(const Gonka__Diloco__V1__QueryRoundResponse *r, const char *s) {
    for (size_t i = 0; i < r->n_commitments; i++)
        if (strcmp(r->commitments[i]->participant, s) == 0)
            return true;
    return false;
}

static void timed(gd_dd *d, int64_t height, double *ms) {
    gd_dd_until(d, height - 1);
    double t = gd_dd_block(d);
    if (ms)
        *ms = t;
}

void gd_dd_await_round(gd_dd *d) {
    for (int i = 0; i < 100000; i++) {
        Gonka__Diloco__V1__QueryRunResponse *run = gd_dd_run(d);
        const Gonka__Diloco__V1__Round *r = run->current_round;
        bool live = r != NULL && r->phase != GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE &&
                    r->phase != GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_VOID;
        gonka__diloco__v1__query_run_response__free_unpacked(run, NULL);
        if (live)
            return;
        gd_dd_block(d);
    }
    die("await", "no round opened in 100000 blocks");
}

static void reveal_one(gd_dd *d, int i, uint64_t round) {
    uint8_t secret[32];
    secret_of(secret, i, round);
    Gonka__Diloco__V1__MsgRandomness m = GONKA__DILOCO__V1__MSG_RANDOMNESS__INIT;
    m.member = d->addr[i];
    m.run = 1;
    m.round = round;
    m.secret = (ProtobufCBinaryData){32, secret};
    gd_dd_msg(d, GD_DILOCO_MSG_RANDOMNESS, &m); /* refused when it sealed none */
}

/* The seed the chain will fix if the members with kept[i] keep their
 * secrets and every other sealed one is revealed (dl_round_seed). */
static void grind_seed(const gd_dd *d, const Gonka__Diloco__V1__QueryRoundResponse *r,
                       const bool *kept, uint8_t seed[32]) {
    uint8_t *secrets = calloc(r->n_randomness + 1, 32);
    if (secrets == NULL)
        die("grind", "out of memory");
    size_t n = 0;
    for (size_t k = 0; k < r->n_randomness; k++) {
        int i = member_of(d, r->randomness[k]->member);
        if (i >= 0 && active(d, i) && !kept[i])
            secret_of(secrets + 32 * n++, i, r->round->index);
    }
    if (gd_diloco_round_seed(seed, 1, r->round->index, r->round->beacon.data, secrets, n) !=
        GD_OK)
        die("grind seed", gd_error_detail());
    free(secrets);
}

/* The validator slots a seed gives the grinders: the chain's draws over
 * the committers (the members active at verify start here), less the
 * target, weighted by frozen weight. More slots, more credited checks. */
static int grind_slots(const gd_dd *d, const Gonka__Diloco__V1__QueryRoundResponse *r,
                       const uint8_t seed[32], uint32_t checks, uint32_t double_ppm) {
    uint8_t rnd[32];
    gd_diloco_purpose(rnd, seed, "verify");
    const char **addr = calloc(r->round->n_members + 1, sizeof *addr);
    uint64_t *weight = calloc(r->round->n_members + 1, sizeof *weight);
    if (addr == NULL || weight == NULL)
        die("grind", "out of memory");
    int slots = 0;
    for (size_t c = 0; c < r->n_commitments; c++) {
        const char *target = r->commitments[c]->participant;
        for (uint32_t j = 0; j < checks; j++) {
            uint32_t n = 0;
            for (size_t m = 0; m < r->round->n_members; m++) {
                const char *a = r->round->members[m]->address;
                if (strcmp(a, target) == 0 || !listed_commit(r, a))
                    continue;
                addr[n] = a;
                weight[n++] = strtoull(r->round->members[m]->weight, NULL, 10);
            }
            gd_diloco_check_draw dr;
            gd_diloco_draw_check(&dr, rnd, target, j, d->segments, 2, GD_DD_CHUNKS, double_ppm);
            for (uint32_t v = 0; v < (dr.twice ? 2u : 1u) && n > 0; v++) {
                uint32_t at = gd_diloco_draw_member("gd-validator", rnd, target, j, v, weight, n);
                int who = member_of(d, addr[at]);
                slots += who >= 0 && d->roles[who] == GD_DD_GRINDER;
                memmove(&addr[at], &addr[at + 1], (n - at - 1) * sizeof *addr);
                memmove(&weight[at], &weight[at + 1], (n - at - 1) * sizeof *weight);
                n--;
            }
        }
    }
    free(addr);
    free(weight);
    return slots;
}

/* Every member reveals its secret, the grinders last: having seen the
 * others', they try each subset of the first GRIND_MAX of them (at least
 * one kept back: a grinder always grinds; the rest always keep theirs)
 * and reveal only what the best seed needs. */
#define GRIND_MAX 8
static void reveal_secrets(gd_dd *d, uint64_t round, uint32_t checks, uint32_t double_ppm) {
    int grinders[GRIND_MAX], g = 0;
    bool *kept = calloc((size_t)d->w, 1);
    if (kept == NULL)
        die("reveal", "out of memory");
    for (int i = 0; i < d->w; i++) {
        if (!active(d, i))
            continue;
        if (d->roles[i] != GD_DD_GRINDER)
            reveal_one(d, i, round);
        else if (g < GRIND_MAX)
            grinders[g++] = i;
        else
            kept[i] = true;
    }
    Gonka__Diloco__V1__QueryRoundResponse *r = g > 0 ? gd_dd_round(d, round) : NULL;
    unsigned best = 0;
    int best_slots = -1;
    for (unsigned mask = 1; r != NULL && mask < 1u << g; mask++) {
        for (int k = 0; k < g; k++)
            kept[grinders[k]] = mask >> k & 1;
        uint8_t seed[32];
        grind_seed(d, r, kept, seed);
        int slots = grind_slots(d, r, seed, checks, double_ppm);
        if (slots > best_slots) {
            best = mask;
            best_slots = slots;
        }
    }
    for (int k = 0; k < g; k++)
        if (!(best >> k & 1))
            reveal_one(d, grinders[k], round);
    if (r != NULL)
        gonka__diloco__v1__query_round_response__free_unpacked(r, NULL);
    free(kept);
}

void gd_dd_play_round(gd_dd *d, gd_dd_round_log *log, double hook_ms[5]) {
    Gonka__Diloco__V1__QueryRunResponse *run = gd_dd_run(d);
    if (run->current_round == NULL)
        die("play", "no round is open");
    uint64_t round = run->current_round->index;
    uint32_t want = run->run->spec->avail_chunks;
    uint32_t checks = run->run->spec->checks_per_commit;
    uint32_t double_ppm = run->run->spec->double_check_ppm;
    Gonka__Diloco__V1__RoundWindows w = *run->current_round->windows;
    gonka__diloco__v1__query_run_response__free_unpacked(run, NULL);
    log->round = round;
    uint64_t *faked = calloc((size_t)d->w, sizeof *faked);
    if (faked == NULL)
        die("play", "out of memory");

    gd_dd_seal_secrets(d, round + 1);
    gd_dd_until(d, w.commit_start);
    for (int i = 0; i < d->w; i++) {
        if (!active(d, i))
            continue;
        faked[i] = faked_segments(d, i, round);
        uint8_t transcript[32];
        gd_mmr tmmr;
        transcript_of(d, i, round, &tmmr, transcript);
        gd_mmr_free(&tmmr);
        Gonka__Diloco__V1__MsgCommitRound m = GONKA__DILOCO__V1__MSG_COMMIT_ROUND__INIT;
        m.participant = d->addr[i];
        m.run = 1;
        m.round = round;
        m.payload_root = (ProtobufCBinaryData){32, d->root[i]};
        m.payload_leaves = GD_DD_CHUNKS + 1;
        m.payload_bytes = 1 << 20;
        m.transcript_root = (ProtobufCBinaryData){32, transcript};
        m.segment_count = d->segments;
        log->committed[i] = gd_dd_msg(d, GD_DILOCO_MSG_COMMIT_ROUND, &m) == 0;
        if (log->committed[i])
            log->faked[i] = (uint32_t)__builtin_popcountll(faked[i]);
    }
    gd_dd_until(d, w.reveal_start);
    reveal_secrets(d, round, checks, double_ppm);
    timed(d, w.verify_start, hook_ms ? &hook_ms[0] : NULL);
    Gonka__Diloco__V1__QueryRoundResponse *r = gd_dd_round(d, round);
    reports(d, r, want);
    answers(d, r, faked, false, false);
    for (size_t i = 0; i < r->n_assignments; i++)
        for (size_t j = 0; j < r->assignments[i]->n_validators; j++) {
            int v = member_of(d, r->assignments[i]->validators[j]);
            if (v >= 0)
                log->checks[v]++;
        }
    timed(d, w.open_start, hook_ms ? &hook_ms[1] : NULL);
    answers(d, r, faked, false, true);
    gonka__diloco__v1__query_round_response__free_unpacked(r, NULL);
    timed(d, w.dispute_start, hook_ms ? &hook_ms[2] : NULL);
    r = gd_dd_round(d, round);
    answers(d, r, faked, true, false);
    gd_dd_until(d, w.dispute_open_start);
    answers(d, r, faked, true, true);
    gonka__diloco__v1__query_round_response__free_unpacked(r, NULL);
    timed(d, w.attest_start, hook_ms ? &hook_ms[3] : NULL);
    attestations(d, round, false);
    gd_dd_until(d, w.attest_open_start);
    attestations(d, round, true);
    timed(d, w.end, hook_ms ? &hook_ms[4] : NULL);
    r = gd_dd_round(d, round);
    if (r == NULL)
        die("play", "the round is gone");
    log->epoch = r->round->epoch;
    log->done = r->round->phase == GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE;
    for (int i = 0; i < d->w; i++) {
        log->included[i] = listed(r->round->inclusion_set, r->round->n_inclusion_set, d->addr[i]);
        log->aggregated[i] =
            listed(r->round->aggregation_set, r->round->n_aggregation_set, d->addr[i]);
        log->caught[i] = listed(r->round->failed, r->round->n_failed, d->addr[i]);
    }
    /* A withholder is caught by a check its class could not fetch. */
    for (size_t x = 0; x < r->n_assignments; x++)
        for (int i = 0; i < d->w; i++)
            log->caught[i] |= r->assignments[x]->outcome ==
                                  GONKA__DILOCO__V1__CHECK_OUTCOME__CHECK_OUTCOME_UNAVAILABLE &&
                              strcmp(r->assignments[x]->target, d->addr[i]) == 0;
    gonka__diloco__v1__query_round_response__free_unpacked(r, NULL);
    free(faked);
}
