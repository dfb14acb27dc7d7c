/* The DiLoCo training module's cost on chain: one round of W members
 * executed through the module's message handlers and the app's block hooks
 * (no signatures, no network: what a block producer spends on the module).
 * Every member commits, reports every other payload with MMR proofs of the
 * chunks the round's seed draws, seals and reveals its checks, and seals
 * and reveals its attestation; then the epoch settles and everyone claims. Prints microseconds per message of each kind and
 * milliseconds for the blocks whose hooks do the round's work (checks,
 * inclusion, re-checks, resolution, attestation, settlement), including
 * the app hash over the whole state.
 * Usage: gd-bench-module [--members W]... [--json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timer.h"
#include "chain/address.h"
#include "chain/diloco_rules.h"
#include "chain/keys.h"
#include "chain/module/app.h"
#include "chain/module/auth.h"
#include "chain/module/diloco.h"
#include "common/hash.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "gonka/diloco/v1/tx.pb-c.h"
#include "proofs/mmr.h"

#define CHUNKS 8 /* chunks per payload: leaves 1..8 under the header */

enum { K_COMMIT, K_REPORT, K_SEAL, K_REVEAL, K_ATTEST, K_CLAIM, K_COUNT };
static const char *const k_kinds[K_COUNT] = {"commit", "report", "seal", "reveal", "attest",
                                             "claim"};
enum { B_CHECKS, B_INCLUSION, B_RECHECKS, B_RESOLVE, B_END, B_SETTLE, B_COUNT };
static const char *const k_blocks[B_COUNT] = {"checks", "inclusion", "rechecks", "resolve",
                                              "attest end", "settle"};

typedef struct bench {
    gd_app *app;
    int w;
    char (*addr)[GD_ADDRESS_STR_MAX];
    gd_mmr *mmr;
    uint8_t (*root)[32];
    double msg_seconds[K_COUNT];
    size_t msg_count[K_COUNT];
    double block_ms[B_COUNT];
    uint64_t round; /* the measured round (an earlier one may run in epoch 0) */
} bench;

static void die(const char *what) {
    fprintf(stderr, "gd-bench-module: %s: %s\n", what, gd_error_detail());
    exit(1);
}

static void leaf(uint8_t out[32], int member, uint32_t index) {
    char text[64];
    snprintf(text, sizeof text, "member %d chunk %u", member, (unsigned)index);
    gd_mmr_hash_leaf(out, index, text, strlen(text));
}

#define AVAIL 4 /* chunks per availability report */

static json_t *spec_json(void) {
    json_t *j = json_pack(
        "{s:s,s:s,s:i,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s,"
        "s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i},s:s,s:s,s:s,s:i,s:i,s:i,s:i,"
        "s:s,s:s,s:i,s:i,s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:b,s:s,s:i,s:b}",
        "model", "tiny", "layout_digest",
        "1111111111111111111111111111111111111111111111111111111111111111", "seed", 1,
        "data_spec", "synthetic:markov:1", "initial_state_hash",
        "2222222222222222222222222222222222222222222222222222222222222222", "h_min", 40,
        "h_max", 80, "segment_steps", 10, "tokens_per_step", 512, "outer_lr_ppm", 700000,
        "outer_momentum_ppm", 900000, "codec", "int8", "windows", "train", 2, "commit", 2,
        "reveal", 2, "verify", 2, "open", 2, "dispute", 2, "dispute_open", 2, "attest", 2,
        "attest_open", 2, "reward_per_epoch", "1000000ngonka", "min_collateral",
        "1000000ngonka", "fail_bond", "100ngonka", "checks_per_commit", 2, "double_check_ppm",
        100000, "recheck_validators", 3, "validator_share_ppm", 200000,
        "inner_lr", "0.003", "inner_min_lr", "0.0003", "inner_warmup_steps", 10,
        "inner_schedule_steps", 1000, "adam_beta1", "0.9", "adam_beta2", "0.95", "adam_eps",
        "0.00000001", "weight_decay", "0.1", "grad_clip", "1", "batch", 8, "seq_len", 64,
        "micro_batch", 8, "clip_factor", "2", "error_feedback", 1, "error_feedback_decay", "1",
        "chunk_elems", 1048576, "overlap", 0);
    json_object_set_new(j, "hw_classes", json_pack("[s,s]", "cpu-a", "cpu-b"));
    json_object_set_new(j, "avail_chunks", json_integer(AVAIL));
    json_object_set_new(j, "cheat_slash", json_string("1000000ngonka"));
    json_object_set_new(j, "skip_slash", json_string("10000ngonka"));
    json_object_set_new(j, "max_members", json_integer(1024));
    return j;
}

/* Genesis: W funded members of run 1, collateral and pool in the module
 * account. */
static void bench_open(bench *b) {
    char module[GD_ADDRESS_STR_MAX];
    if (gd_auth_module_address("diloco", module, sizeof module) != GD_OK)
        die("module address");
    json_t *accounts = json_array(), *balances = json_array(), *members = json_array();
    for (int i = 0; i < b->w; i++) {
        uint8_t secret[32];
        gd_sha256(secret, &i, sizeof i);
        gd_key key;
        if (gd_key_from_secret(&key, secret) != GD_OK ||
            gd_address_from_pubkey(b->addr[i], sizeof b->addr[i], "gonka", key.pubkey) != GD_OK)
            die("key");
        gd_key_wipe(&key);
        json_array_append_new(accounts, json_pack("{s:s,s:s,s:i}", "@type",
                                                  "/cosmos.auth.v1beta1.BaseAccount", "address",
                                                  b->addr[i], "account_number", i));
        json_array_append_new(balances, json_pack("{s:s,s:[{s:s,s:s}]}", "address", b->addr[i],
                                                  "coins", "denom", "ngonka", "amount", "100000"));
        json_array_append_new(members, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "run", "1",
                                                 "address", b->addr[i], "artifact_url",
                                                 "http://h", "hw_class", i % 2 ? "cpu-a" : "cpu-b",
                                                 "collateral", "2000000", "rank", i));
        gd_mmr_init(&b->mmr[i]);
        for (uint32_t l = 0; l <= CHUNKS; l++) {
            uint8_t h[32];
            leaf(h, i, l);
            if (gd_mmr_append(&b->mmr[i], h) != GD_OK)
                die("mmr");
        }
        if (gd_mmr_root(&b->mmr[i], b->root[i]) != GD_OK)
            die("mmr root");
    }
    json_array_append_new(accounts, json_pack("{s:s,s:{s:s,s:i},s:s}", "@type",
                                              "/cosmos.auth.v1beta1.ModuleAccount",
                                              "base_account", "address", module,
                                              "account_number", b->w, "name", "diloco"));
    char held[32];
    snprintf(held, sizeof held, "%llu", 100000000ull + 2000000ull * (unsigned long long)b->w);
    json_array_append_new(balances, json_pack("{s:s,s:[{s:s,s:s}]}", "address", module, "coins",
                                              "denom", "ngonka", "amount", held));
    json_t *genesis = json_pack(
        "{s:s,s:{s:{s:o},s:{s:o},s:{s:{s:s},s:[{s:o,s:s,s:i}],s:o}}}", "chain_id", "prod-sim",
        "app_state", "auth", "accounts", accounts, "bank", "balances", balances, "diloco",
        "params", "authority", b->addr[0], "runs", "spec", spec_json(), "pool", "100000000",
        "next_rank", b->w, "members", members);
    if (genesis == NULL || gd_app_new(&b->app, NULL) != GD_OK ||
        gd_app_register_standard(b->app) != GD_OK || gd_app_init_chain(b->app, genesis) != GD_OK)
        die("genesis");
    json_decref(genesis);
}

/* One empty block; its milliseconds (hooks, commit and app hash). */
static double bench_block(bench *b) {
    int64_t h = gd_app_height(b->app) + 1;
    uint8_t hash[32], app_hash[32];
    gd_sha256(hash, &h, sizeof h);
    gd_events events = {0};
    double t0 = gd_bench_now();
    if (gd_app_begin_block(b->app, h, hash, &events) != GD_OK ||
        gd_app_end_block(b->app, &events) != GD_OK || gd_app_commit(b->app, app_hash) != GD_OK)
        die("block");
    double ms = (gd_bench_now() - t0) * 1e3;
    gd_events_free(&events);
    return ms;
}

static void bench_until(bench *b, int64_t height) {
    while (gd_app_height(b->app) < height)
        bench_block(b);
}

/* Validates and executes one message on its own cache (as DeliverTx does)
 * at the last committed height, and writes it down. */
static void bench_msg(bench *b, int kind, const char *url, const void *msg) {
    const gd_module *m = &gd_diloco_module;
    const gd_msg_route *route = NULL;
    for (size_t i = 0; i < m->n_msgs; i++)
        if (strcmp(m->msgs[i].type_url, url) == 0)
            route = &m->msgs[i];
    uint8_t buf[8192];
    size_t len = protobuf_c_message_pack(msg, buf);
    gd_kv *kv = NULL;
    gd_gas_meter gas = {0, 0};
    gd_events events = {0};
    uint8_t hash[32] = {0};
    double t0 = gd_bench_now();
    if (gd_cache_new(&kv, gd_store_view(gd_app_store(b->app))) != GD_OK)
        die("cache");
    gd_ctx ctx = {.kv = kv, .gas = &gas, .events = &events, .mode = GD_EXEC_DELIVER,
                  .height = gd_app_height(b->app), .chain_id = "prod-sim", .block_hash = hash};
    char signer[GD_ADDRESS_STR_MAX];
    gd_buf resp = {0};
    if (route->validate(&ctx, buf, len, signer, sizeof signer) != GD_OK ||
        route->execute(b->app, &ctx, buf, len, &resp) != GD_OK) {
        fprintf(stderr, "gd-bench-module: %s refused: %s\n", url, ctx.err.log);
        exit(1);
    }
    if (gd_cache_write(kv) != GD_OK)
        die("cache write");
    gd_cache_free(kv);
    b->msg_seconds[kind] += gd_bench_now() - t0;
    b->msg_count[kind]++;
    gd_buf_free(&resp);
    gd_events_free(&events);
}

/* The run's current round index. */
static uint64_t bench_current(bench *b) {
    Gonka__Diloco__V1__QueryRunRequest req = GONKA__DILOCO__V1__QUERY_RUN_REQUEST__INIT;
    req.run = 1;
    uint8_t q[64];
    size_t n = protobuf_c_message_pack(&req.base, q);
    gd_buf resp = {0};
    gd_abci_error err;
    if (gd_app_query(b->app, GD_DILOCO_QUERY_RUN, q, n, &resp, &err) != GD_OK || err.code)
        die("query run");
    Gonka__Diloco__V1__QueryRunResponse *r =
        gonka__diloco__v1__query_run_response__unpack(NULL, resp.len, resp.data);
    gd_buf_free(&resp);
    if (r == NULL || r->current_round == NULL)
        die("no current round");
    uint64_t index = r->current_round->index;
    gonka__diloco__v1__query_run_response__free_unpacked(r, NULL);
    return index;
}

static Gonka__Diloco__V1__QueryRoundResponse *bench_round(bench *b) {
    Gonka__Diloco__V1__QueryRoundRequest req = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
    req.run = 1;
    req.round = b->round;
    uint8_t q[64];
    size_t n = protobuf_c_message_pack(&req.base, q);
    gd_buf resp = {0};
    gd_abci_error err;
    if (gd_app_query(b->app, GD_DILOCO_QUERY_ROUND, q, n, &resp, &err) != GD_OK || err.code)
        die("query round");
    Gonka__Diloco__V1__QueryRoundResponse *r =
        gonka__diloco__v1__query_round_response__unpack(NULL, resp.len, resp.data);
    gd_buf_free(&resp);
    if (r == NULL || r->round == NULL)
        die("round");
    return r;
}

static void bench_verdicts(bench *b, const Gonka__Diloco__V1__QueryRoundResponse *r, bool reveal) {
    for (size_t i = 0; i < r->n_assignments; i++) {
        const Gonka__Diloco__V1__Assignment *a = r->assignments[i];
        for (size_t j = 0; j < a->n_validators; j++) {
            uint8_t digest[32], seal[32], state[32] = {3}, salt[32];
            gd_diloco_verdict_digest(digest, 1, b->round, a->target, a->segment, state, state);
            gd_sha256(salt, a->validators[j], strlen(a->validators[j]));
            Gonka__Diloco__V1__MsgSubmitVerdict m = GONKA__DILOCO__V1__MSG_SUBMIT_VERDICT__INIT;
            m.validator = a->validators[j];
            m.run = 1;
            m.round = b->round;
            m.target = a->target;
            m.check = a->check;
            if (reveal) {
                m.verdict = GONKA__DILOCO__V1__VERDICT__VERDICT_PASS;
                m.digest = (ProtobufCBinaryData){32, digest};
                m.salt = (ProtobufCBinaryData){32, salt};
            } else {
                gd_diloco_verdict_seal(seal, GD_SEAL_VERDICT, a->validators[j], GD_VERDICT_PASS,
                                       digest, salt);
                m.seal = (ProtobufCBinaryData){32, seal};
            }
            bench_msg(b, reveal ? K_REVEAL : K_SEAL, GD_DILOCO_MSG_SUBMIT_VERDICT, &m);
        }
    }
}

static void bench_attest(bench *b, bool reveal) {
    uint8_t next[32] = {7};
    for (int i = 0; i < b->w; i++) {
        uint8_t salt[32], seal[32];
        gd_sha256(salt, b->addr[i], strlen(b->addr[i]));
        Gonka__Diloco__V1__MsgAttestRound m = GONKA__DILOCO__V1__MSG_ATTEST_ROUND__INIT;
        m.attester = b->addr[i];
        m.run = 1;
        m.round = b->round;
        if (reveal) {
            m.next_state_hash = (ProtobufCBinaryData){32, next};
            m.salt = (ProtobufCBinaryData){32, salt};
        } else {
            gd_diloco_seal(seal, GD_SEAL_ATTEST, b->addr[i], next, 32, salt);
            m.seal = (ProtobufCBinaryData){32, seal};
        }
        bench_msg(b, K_ATTEST, GD_DILOCO_MSG_ATTEST_ROUND, &m);
    }
}

static void bench_run(bench *b) {
    bench_open(b);
    bench_until(b, 41);
    bench_block(b); /* 42: the round opens */
    b->round = bench_current(b);
    Gonka__Diloco__V1__QueryRoundResponse *r = bench_round(b);
    Gonka__Diloco__V1__RoundWindows w = *r->round->windows;
    gonka__diloco__v1__query_round_response__free_unpacked(r, NULL);
    uint8_t transcript[32] = {9};
    bench_until(b, w.commit_start);
    for (int i = 0; i < b->w; i++) {
        Gonka__Diloco__V1__MsgCommitRound m = GONKA__DILOCO__V1__MSG_COMMIT_ROUND__INIT;
        m.participant = b->addr[i];
        m.run = 1;
        m.round = b->round;
        m.payload_root = (ProtobufCBinaryData){32, b->root[i]};
        m.payload_leaves = CHUNKS + 1;
        m.payload_bytes = 1 << 20;
        m.transcript_root = (ProtobufCBinaryData){32, transcript};
        m.segment_count = 6;
        bench_msg(b, K_COMMIT, GD_DILOCO_MSG_COMMIT_ROUND, &m);
    }
    /* verify_start: the seed (the beacon; no secrets here) and the checks. */
    bench_until(b, w.verify_start - 1);
    b->block_ms[B_CHECKS] = bench_block(b);
    r = bench_round(b);
    uint8_t rnd[32];
    memcpy(rnd, r->round->verify_randomness.data, 32);
    for (int i = 0; i < b->w; i++) {
        for (int t = 0; t < b->w; t++) {
            if (t == i)
                continue;
            uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
            uint32_t n = gd_diloco_avail_chunks(rnd, b->addr[t], b->addr[i], CHUNKS, AVAIL, chunks);
            gd_buf enc[GD_DILOCO_AVAIL_CHUNKS_MAX];
            uint8_t lh[GD_DILOCO_AVAIL_CHUNKS_MAX][32];
            ProtobufCBinaryData leaves[GD_DILOCO_AVAIL_CHUNKS_MAX], proofs[GD_DILOCO_AVAIL_CHUNKS_MAX];
            memset(enc, 0, sizeof enc);
            for (uint32_t c = 0; c < n; c++) {
                gd_mmr_proof proof;
                leaf(lh[c], t, chunks[c] + 1);
                if (gd_mmr_prove(&b->mmr[t], chunks[c] + 1, &proof) != GD_OK ||
                    gd_mmr_proof_encode(&proof, &enc[c]) != GD_OK)
                    die("proof");
                leaves[c] = (ProtobufCBinaryData){32, lh[c]};
                proofs[c] = (ProtobufCBinaryData){enc[c].len, enc[c].data};
            }
            Gonka__Diloco__V1__MsgReportAvailability m =
                GONKA__DILOCO__V1__MSG_REPORT_AVAILABILITY__INIT;
            m.reporter = b->addr[i];
            m.run = 1;
            m.round = b->round;
            m.target = b->addr[t];
            m.n_leaf_hashes = n;
            m.leaf_hashes = leaves;
            m.n_proofs = n;
            m.proofs = proofs;
            bench_msg(b, K_REPORT, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m);
            for (uint32_t c = 0; c < n; c++)
                gd_buf_free(&enc[c]);
        }
    }
    bench_verdicts(b, r, false);
    bench_until(b, w.open_start - 1);
    b->block_ms[B_INCLUSION] = bench_block(b);
    Gonka__Diloco__V1__QueryRoundResponse *o = bench_round(b);
    if (o->round->n_inclusion_set != (size_t)b->w)
        die("inclusion set");
    gonka__diloco__v1__query_round_response__free_unpacked(o, NULL);
    bench_verdicts(b, r, true);
    gonka__diloco__v1__query_round_response__free_unpacked(r, NULL);
    bench_until(b, w.dispute_start - 1);
    b->block_ms[B_RECHECKS] = bench_block(b);
    bench_until(b, w.attest_start - 1);
    b->block_ms[B_RESOLVE] = bench_block(b);
    bench_attest(b, false);
    bench_until(b, w.attest_open_start);
    bench_attest(b, true);
    bench_until(b, w.end - 1);
    b->block_ms[B_END] = bench_block(b);
    bench_until(b, 119);
    b->block_ms[B_SETTLE] = bench_block(b); /* 120: epoch 2, epoch 1 settles */
    bench_until(b, 145);
    for (int i = 0; i < b->w; i++) {
        Gonka__Diloco__V1__MsgClaimRewards m = GONKA__DILOCO__V1__MSG_CLAIM_REWARDS__INIT;
        m.claimer = b->addr[i];
        m.run = 1;
        m.epoch = 1;
        bench_msg(b, K_CLAIM, GD_DILOCO_MSG_CLAIM_REWARDS, &m);
    }
    if (gd_app_check_invariants(b->app) != GD_OK)
        die("invariants");
}

int main(int argc, char **argv) {
    int sizes[8], n_sizes = 0;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--members") == 0 && i + 1 < argc && n_sizes < 8) {
            int v = atoi(argv[++i]);
            if (v < 2 || v > 5000) {
                fprintf(stderr, "gd-bench-module: --members wants 2 to 5000\n");
                return 2;
            }
            sizes[n_sizes++] = v;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else {
            fprintf(stderr, "usage: %s [--members W]... [--json]\n", argv[0]);
            return 2;
        }
    }
    if (n_sizes == 0) {
        sizes[0] = 50;
        sizes[1] = 100;
        sizes[2] = 200;
        n_sizes = 3;
    }
    if (json)
        printf("[");
    else
        printf("one core; one round of W members through the DiLoCo module (no signatures):\n"
               "%6s %8s %8s %8s %8s %8s %8s | block ms: %6s %9s %8s %7s %10s %7s\n",
               "W", "commit", "report", "seal", "reveal", "attest", "claim", k_blocks[0],
               k_blocks[1], k_blocks[2], k_blocks[3], k_blocks[4], k_blocks[5]);
    for (int s = 0; s < n_sizes; s++) {
        bench b = {.w = sizes[s]};
        b.addr = calloc((size_t)b.w, sizeof *b.addr);
        b.mmr = calloc((size_t)b.w, sizeof *b.mmr);
        b.root = calloc((size_t)b.w, sizeof *b.root);
        if (!b.addr || !b.mmr || !b.root)
            die("memory");
        bench_run(&b);
        double us[K_COUNT];
        for (int k = 0; k < K_COUNT; k++)
            us[k] = b.msg_count[k] ? b.msg_seconds[k] * 1e6 / (double)b.msg_count[k] : 0;
        if (json) {
            printf("%s{\"members\": %d", s ? ", " : "", b.w);
            for (int k = 0; k < K_COUNT; k++)
                printf(", \"%s_us\": %.1f, \"%s_count\": %zu", k_kinds[k], us[k], k_kinds[k],
                       b.msg_count[k]);
            for (int k = 0; k < B_COUNT; k++)
                printf(", \"block_%d_ms\": %.2f", k, b.block_ms[k]);
            printf("}");
        } else {
            printf("%6d %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f | %16.2f %9.2f %8.2f %7.2f %10.2f "
                   "%7.2f\n",
                   b.w, us[K_COMMIT], us[K_REPORT], us[K_SEAL], us[K_REVEAL], us[K_ATTEST],
                   us[K_CLAIM], b.block_ms[B_CHECKS], b.block_ms[B_INCLUSION],
                   b.block_ms[B_RECHECKS], b.block_ms[B_RESOLVE], b.block_ms[B_END],
                   b.block_ms[B_SETTLE]);
        }
        for (int i = 0; i < b.w; i++)
            gd_mmr_free(&b.mmr[i]);
        free(b.addr);
        free(b.mmr);
        free(b.root);
        gd_app_free(b.app);
    }
    if (json)
        printf("]\n");
    else
        printf("(microseconds per message; the block figures include the app hash over the "
               "whole state)\n");
    return 0;
}
