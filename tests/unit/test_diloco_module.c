/* The DiLoCo training module (chain/module/diloco*.c) driven block by block
 * through the application: runs and members, every window edge, double and
 * non-member commits, availability proofs and the inclusion set, sealed and
 * revealed verdicts, skipped checks, FAILs upheld and overturned, digest
 * splits, two UNAVAILABLE, attestation quorum and void rounds, settlement
 * and claims (at the wrong time, twice, for the wrong epoch), determinism
 * and export/import. The fixture checks every module's invariants after
 * every block (the module's: its account holds exactly every pool,
 * collateral, bond and unclaimed reward; no reward without an accepted
 * commitment). */
#include <stdlib.h>
#include <string.h>

#include "chain/diloco_rules.h"
#include "chain/diloco_spec.h"
#include "chain/module/auth.h"
#include "common/hash.h"
#include "chain/module/diloco.h"
#include "cosmos/base/abci/v1beta1/abci.pb-c.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "gonka/diloco/v1/tx.pb-c.h"
#include "proofs/mmr.h"
#include "tests/testkit.h"
#include "tests/unit/app_fixture.h"

#define PH(x) GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_##x
#define V_PASS GONKA__DILOCO__V1__VERDICT__VERDICT_PASS
#define V_FAIL GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL
#define V_UNAVAILABLE GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE
#define MEMBERS 5 /* accounts 1..5; 0 is the authority, 6 and 7 outsiders */
#define CHUNKS 2  /* every test payload: a header leaf and two chunks */

typedef struct knobs {
    uint32_t checks, double_ppm, rechecks;
    bool two_classes; /* members 4 and 5 in another hardware class */
} knobs;

/* ---- plumbing -------------------------------------------------------------------------- */

static json_t *spec_json(const knobs *k) {
    return json_pack(
        "{s:s,s:s,s:i,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:s,"
        "s:{s:i,s:i,s:i,s:i,s:i,s:i,s:i},s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,"
        "s:s,s:s,s:i,s:i,s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:b,s:s,s:i,s:b}",
        "model", "tiny", "layout_digest",
        "1111111111111111111111111111111111111111111111111111111111111111", "seed", 1,
        "data_spec", "synthetic:markov:1", "initial_state_hash",
        "2222222222222222222222222222222222222222222222222222222222222222", "h_min", 4, "h_max",
        8, "segment_steps", 2, "tokens_per_step", 512, "outer_lr_ppm", 700000,
        "outer_momentum_ppm", 900000, "codec", "int8", "windows", "train", 3, "commit", 3,
        "reveal", 3, "verify", 3, "open", 3, "dispute", 3, "attest", 3, "reward_per_epoch",
        "50000ngonka", "min_collateral", "5000ngonka", "fail_bond", "1000ngonka",
        "checks_per_commit", (int)k->checks, "double_check_ppm", (int)k->double_ppm,
        "recheck_validators", (int)k->rechecks, "slash_ppm", 500000, "skip_slash_ppm", 100000,
        "validator_share_ppm", 200000,
        "inner_lr", "0.003", "inner_min_lr", "0.0003", "inner_warmup_steps", 10,
        "inner_schedule_steps", 1000, "adam_beta1", "0.9", "adam_beta2", "0.95", "adam_eps",
        "0.00000001", "weight_decay", "0.1", "grad_clip", "1", "batch", 8, "seq_len", 64,
        "micro_batch", 4, "clip_factor", "2", "error_feedback", 1, "error_feedback_decay", "1",
        "chunk_elems", 1024, "overlap", 0);
}

/* A transaction of several messages from one signer. */
typedef struct txspec {
    int from;
    size_t n;
    const char *urls[8];
    const void *msgs[8];
} txspec;

/* One block of n transactions; codes[i] receives each result code (999
 * for a codespace other than sdk or diloco). */
static void run_block(app_fixture *f, const txspec *t, size_t n, uint32_t *codes) {
    gd_buf txs[8] = {{0}};
    gd_tx_outcome outs[8];
    memset(outs, 0, sizeof outs);
    for (size_t i = 0; i < n; i++)
        CHECK_OK(fix_msgs_tx(f, t[i].from, t[i].n, t[i].urls, t[i].msgs, &txs[i]));
    fix_block(f, txs, n, outs);
    for (size_t i = 0; i < n; i++) {
        codes[i] = outs[i].err.code;
        if (outs[i].err.code != 0 && strcmp(outs[i].err.codespace, "diloco") != 0 &&
            strcmp(outs[i].err.codespace, "sdk") != 0)
            codes[i] = 999;
        if (outs[i].err.code != 0 && getenv("GD_TEST_VERBOSE"))
            fprintf(stderr, "  tx %zu: %s %u %s\n", i, outs[i].err.codespace, outs[i].err.code,
                    outs[i].err.log);
        gd_tx_outcome_free(&outs[i]);
        gd_buf_free(&txs[i]);
    }
}

static void block(app_fixture *f, size_t n, const int *from, const char *const *url,
                  const void *const *msg, uint32_t *codes) {
    txspec t[8];
    for (size_t i = 0; i < n; i++)
        t[i] = (txspec){from[i], 1, {url[i]}, {msg[i]}};
    run_block(f, t, n, codes);
}

/* One transaction in its own block; its code. */
static uint32_t deliver(app_fixture *f, int from, const char *url, const void *msg) {
    uint32_t code;
    block(f, 1, &from, &url, &msg, &code);
    return code;
}

/* Empty blocks until the next block is `height`. */
static void until(app_fixture *f, int64_t height) {
    while (f->height + 1 < height)
        fix_block(f, NULL, 0, NULL);
}

static void *query(app_fixture *f, const char *path, const void *req,
                   const ProtobufCMessageDescriptor *d) {
    uint8_t buf[512];
    size_t n = protobuf_c_message_pack(req, buf);
    gd_buf resp = {0};
    gd_abci_error err;
    CHECK_OK(gd_app_query(f->app, path, buf, n, &resp, &err));
    void *out = err.code == 0 ? protobuf_c_message_unpack(d, NULL, resp.len, resp.data) : NULL;
    gd_buf_free(&resp);
    return out;
}

static Gonka__Diloco__V1__QueryRoundResponse *q_round(app_fixture *f, uint64_t round) {
    Gonka__Diloco__V1__QueryRoundRequest req = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
    req.run = 1;
    req.round = round;
    Gonka__Diloco__V1__QueryRoundResponse *r =
        query(f, GD_DILOCO_QUERY_ROUND, &req, &gonka__diloco__v1__query_round_response__descriptor);
    CHECK(r != NULL && r->round != NULL);
    return r;
}

static Gonka__Diloco__V1__QueryRunResponse *q_run(app_fixture *f) {
    Gonka__Diloco__V1__QueryRunRequest req = GONKA__DILOCO__V1__QUERY_RUN_REQUEST__INIT;
    req.run = 1;
    Gonka__Diloco__V1__QueryRunResponse *r =
        query(f, GD_DILOCO_QUERY_RUN, &req, &gonka__diloco__v1__query_run_response__descriptor);
    CHECK(r != NULL && r->run != NULL);
    return r;
}

static const char *collateral_of(app_fixture *f, int who) {
    static char out[32];
    Gonka__Diloco__V1__QueryRunResponse *r = q_run(f);
    out[0] = '\0';
    for (size_t i = 0; r && i < r->n_members; i++)
        if (strcmp(r->members[i]->address, f->addr[who]) == 0)
            snprintf(out, sizeof out, "%s", r->members[i]->collateral);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return out;
}

static bool has_str(char *const *items, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0)
            return true;
    return false;
}

static int index_of(app_fixture *f, const char *addr) {
    for (int i = 0; i < FIX_ACCOUNTS; i++)
        if (strcmp(f->addr[i], addr) == 0)
            return i;
    return -1;
}

/* Member i's payload commitment: an MMR over a header and CHUNKS chunks. */
typedef struct payload {
    gd_mmr mmr;
    uint8_t root[32];
} payload;

static void payload_of(payload *p, int member) {
    gd_mmr_init(&p->mmr);
    for (uint32_t leaf = 0; leaf <= CHUNKS; leaf++) {
        char data[64];
        snprintf(data, sizeof data, "payload of %d, leaf %u", member, (unsigned)leaf);
        uint8_t h[32];
        gd_mmr_hash_leaf(h, leaf, data, strlen(data));
        CHECK_OK(gd_mmr_append(&p->mmr, h));
    }
    CHECK_OK(gd_mmr_root(&p->mmr, p->root));
}

static void payloads_free(payload *p) {
    for (int i = 1; i <= MEMBERS; i++)
        gd_mmr_free(&p[i].mmr);
}

static void leaf_hash_of(uint8_t out[32], int member, uint32_t leaf) {
    char data[64];
    snprintf(data, sizeof data, "payload of %d, leaf %u", member, (unsigned)leaf);
    gd_mmr_hash_leaf(out, leaf, data, strlen(data));
}

static uint8_t g_transcript[32] = {7};

static Gonka__Diloco__V1__MsgCommitRound commit_msg(app_fixture *f, int who, uint64_t round,
                                                    payload *p, uint32_t segments) {
    Gonka__Diloco__V1__MsgCommitRound m = GONKA__DILOCO__V1__MSG_COMMIT_ROUND__INIT;
    m.participant = f->addr[who];
    m.run = 1;
    m.round = round;
    m.payload_root = (ProtobufCBinaryData){32, p->root};
    m.payload_leaves = CHUNKS + 1;
    m.payload_bytes = 4096;
    m.transcript_root = (ProtobufCBinaryData){32, g_transcript};
    m.segment_count = segments;
    m.loss_first_micro = 2500000;
    m.loss_last_micro = 2100000;
    return m;
}

/* A report by `who` on `target` with the proof the chain asks for (or a
 * wrong leaf). The returned message points into *proof_buf. */
static Gonka__Diloco__V1__MsgReportAvailability report_msg(app_fixture *f, int who, int target,
                                                           uint64_t round, const uint8_t *beacon,
                                                           payload *p, gd_buf *proof_buf,
                                                           uint8_t leaf[32], bool honest) {
    uint32_t chunk = gd_diloco_avail_chunk(beacon, f->addr[target], f->addr[who], CHUNKS);
    gd_mmr_proof proof;
    CHECK_OK(gd_mmr_prove(&p->mmr, chunk + 1, &proof));
    proof_buf->len = 0;
    CHECK_OK(gd_mmr_proof_encode(&proof, proof_buf));
    leaf_hash_of(leaf, target, honest ? chunk + 1 : chunk == 0 ? 2 : 1);
    Gonka__Diloco__V1__MsgReportAvailability m = GONKA__DILOCO__V1__MSG_REPORT_AVAILABILITY__INIT;
    m.reporter = f->addr[who];
    m.run = 1;
    m.round = round;
    m.target = f->addr[target];
    m.leaf_hash = (ProtobufCBinaryData){32, leaf};
    m.proof = (ProtobufCBinaryData){proof_buf->len, proof_buf->data};
    return m;
}

/* The digest an honest validator computes for a check (stand-in state
 * hashes derived from the target, segment and step). */
static void honest_digest(uint8_t out[32], const char *target, uint32_t segment, uint32_t step) {
    uint8_t a[32], b[32];
    char text[160];
    snprintf(text, sizeof text, "%s/%u/%u", target, (unsigned)segment, (unsigned)step);
    gd_sha256(a, text, strlen(text));
    gd_sha256(b, a, sizeof a);
    gd_diloco_verdict_digest(out, 1, 0, target, segment, a, b);
}

static Gonka__Diloco__V1__MsgSubmitVerdict verdict_msg(app_fixture *f, int who, uint64_t round,
                                                       const char *target, uint32_t check) {
    Gonka__Diloco__V1__MsgSubmitVerdict m = GONKA__DILOCO__V1__MSG_SUBMIT_VERDICT__INIT;
    m.validator = f->addr[who];
    m.run = 1;
    m.round = round;
    m.target = (char *)target;
    m.check = check;
    return m;
}

/* ---- setting up a run ---------------------------------------------------------------------------- */

static void setup(app_fixture *f, const knobs *k) {
    json_t *state = NULL;
    fix_init_diloco(f, NULL); /* for the addresses */
    state = json_pack("{s:{s:s}}", "params", "authority", f->addr[0]);
    fix_free(f);
    fix_init_diloco(f, state);
    json_decref(state);

    Gonka__Diloco__V1__MsgCreateRun create = GONKA__DILOCO__V1__MSG_CREATE_RUN__INIT;
    Cosmos__Base__V1beta1__Coin pool = COSMOS__BASE__V1BETA1__COIN__INIT;
    pool.denom = "ngonka";
    pool.amount = "100000";
    json_t *sj = spec_json(k);
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK_OK(gd_diloco_spec_from_json(&spec, sj));
    json_decref(sj);
    create.spec = spec;
    create.pool = &pool;
    /* Only the authority creates runs. */
    create.authority = f->addr[1];
    CHECK(deliver(f, 1, GD_DILOCO_MSG_CREATE_RUN, &create) == GD_DILOCO_ERR_UNAUTHORIZED);
    create.authority = f->addr[0];
    CHECK(deliver(f, 0, GD_DILOCO_MSG_CREATE_RUN, &create) == 0);
    CHECK_STR_EQ(fix_balance(f, f->addr[0]), "900000");
    gd_diloco_spec_free(spec);

    Gonka__Diloco__V1__MsgJoinRun join[MEMBERS];
    Cosmos__Base__V1beta1__Coin coll = COSMOS__BASE__V1BETA1__COIN__INIT;
    coll.denom = "ngonka";
    coll.amount = "10000";
    int from[MEMBERS];
    const char *urls[MEMBERS];
    const void *msgs[MEMBERS];
    uint32_t codes[MEMBERS];
    for (int i = 0; i < MEMBERS; i++) {
        Gonka__Diloco__V1__MsgJoinRun j = GONKA__DILOCO__V1__MSG_JOIN_RUN__INIT;
        j.participant = f->addr[i + 1];
        j.run = 1;
        j.artifact_url = "http://127.0.0.1:8080";
        j.hw_class = k->two_classes && i >= 3 ? "gpu-h100-cuda13" : "cpu-x86-openblas";
        j.collateral = &coll;
        join[i] = j;
        from[i] = i + 1;
        urls[i] = GD_DILOCO_MSG_JOIN_RUN;
        msgs[i] = &join[i];
    }
    block(f, MEMBERS, from, urls, msgs, codes);
    for (int i = 0; i < MEMBERS; i++)
        CHECK(codes[i] == 0);
    /* Joining twice, an unknown run, too little collateral. */
    CHECK(deliver(f, 1, GD_DILOCO_MSG_JOIN_RUN, &join[0]) == GD_DILOCO_ERR_ALREADY_MEMBER);
    Gonka__Diloco__V1__MsgJoinRun other = join[0];
    other.participant = f->addr[6];
    other.run = 9;
    CHECK(deliver(f, 6, GD_DILOCO_MSG_JOIN_RUN, &other) == GD_DILOCO_ERR_UNKNOWN_RUN);
    other.run = 1;
    coll.amount = "4999";
    CHECK(deliver(f, 6, GD_DILOCO_MSG_JOIN_RUN, &other) == GD_DILOCO_ERR_COLLATERAL);
    CHECK_STR_EQ(collateral_of(f, 1), "10000");
    /* Ranks 0, 1, ... in join order (the block's order); the refused joins
     * took none. */
    Gonka__Diloco__V1__QueryRunResponse *run = q_run(f);
    CHECK(run->run->next_rank == MEMBERS && run->n_members == MEMBERS);
    for (size_t i = 0; i < run->n_members; i++)
        CHECK(run->members[i]->rank == (uint32_t)index_of(f, run->members[i]->address) - 1);
    protobuf_c_message_free_unpacked(&run->base, NULL);
}

/* Runs round `round` of the run up to its verify window: every member
 * commits (except `silent`), everyone reports everyone (but nobody reports
 * `unreported`). Checks the window edges on the way. Returns the round. */
static Gonka__Diloco__V1__QueryRoundResponse *to_verify(app_fixture *f, uint64_t round,
                                                        payload *p, int silent, int unreported,
                                                        bool edges) {
    Gonka__Diloco__V1__QueryRunResponse *run = q_run(f);
    CHECK(run->current_round != NULL);
    if (run->current_round == NULL)
        abort();
    const Gonka__Diloco__V1__RoundWindows w = *run->current_round->windows;
    CHECK(run->current_round->index == round);
    protobuf_c_message_free_unpacked(&run->base, NULL);
    for (int i = 1; i <= MEMBERS; i++)
        payload_of(&p[i], i);

    Gonka__Diloco__V1__MsgCommitRound c[MEMBERS + 1];
    for (int i = 1; i <= MEMBERS; i++)
        c[i] = commit_msg(f, i, round, &p[i], 2);
    if (edges) { /* early: still training */
        until(f, w.commit_start - 1);
        CHECK(deliver(f, 1, GD_DILOCO_MSG_COMMIT_ROUND, &c[1]) == GD_DILOCO_ERR_WINDOW);
    }
    until(f, w.commit_start);
    int from[8];
    const char *urls[8];
    const void *msgs[8];
    uint32_t codes[8];
    size_t n = 0;
    for (int i = 1; i <= MEMBERS; i++) {
        if (i == silent)
            continue;
        from[n] = i;
        urls[n] = GD_DILOCO_MSG_COMMIT_ROUND;
        msgs[n++] = &c[i];
    }
    block(f, n, from, urls, msgs, codes);
    for (size_t i = 0; i < n; i++)
        CHECK(codes[i] == 0);
    if (edges) {
        /* A second commit; one from outside the round; a segment count
         * outside H_min..H_max; a report before the reveal window. */
        Gonka__Diloco__V1__MsgCommitRound outsider = commit_msg(f, 6, round, &p[1], 2);
        gd_buf pb = {0};
        uint8_t leaf[32];
        uint8_t beacon[32] = {0};
        Gonka__Diloco__V1__MsgReportAvailability early =
            report_msg(f, 2, 1, round, beacon, &p[1], &pb, leaf, true);
        int from2[3] = {1, 6, 2};
        const char *urls2[3] = {GD_DILOCO_MSG_COMMIT_ROUND, GD_DILOCO_MSG_COMMIT_ROUND,
                                GD_DILOCO_MSG_REPORT_AVAILABILITY};
        const void *msgs2[3] = {&c[1], &outsider, &early};
        block(f, 3, from2, urls2, msgs2, codes);
        CHECK(codes[0] == GD_DILOCO_ERR_DUPLICATE);
        CHECK(codes[1] == GD_DILOCO_ERR_NOT_MEMBER);
        CHECK(codes[2] == GD_DILOCO_ERR_WINDOW);
        gd_buf_free(&pb);
        if (silent > 0) {
            Gonka__Diloco__V1__MsgCommitRound bad = commit_msg(f, silent, round, &p[silent], 5);
            CHECK(deliver(f, silent, GD_DILOCO_MSG_COMMIT_ROUND, &bad) == GD_DILOCO_ERR_INVALID);
        }
    }
    until(f, w.reveal_start);
    if (edges && silent > 0) /* late */
        CHECK(deliver(f, silent, GD_DILOCO_MSG_COMMIT_ROUND, &c[silent]) ==
              GD_DILOCO_ERR_WINDOW);
    else
        fix_block(f, NULL, 0, NULL); /* the reveal window's first block draws the checks */
    Gonka__Diloco__V1__QueryRoundResponse *r = q_round(f, round);
    CHECK(r->round->phase == PH(REVEAL) && r->round->beacon.len == 32 &&
          r->round->verify_randomness.len == 32);
    uint8_t beacon[32];
    memcpy(beacon, r->round->beacon.data, 32);
    protobuf_c_message_free_unpacked(&r->base, NULL);

    /* Reports: each reporter sends one transaction holding all its reports;
     * all reporters in one block. */
    Gonka__Diloco__V1__MsgReportAvailability rep[MEMBERS + 1][MEMBERS + 1];
    gd_buf pbs[MEMBERS + 1][MEMBERS + 1];
    uint8_t leaves[MEMBERS + 1][MEMBERS + 1][32];
    memset(pbs, 0, sizeof pbs);
    txspec t[MEMBERS];
    n = 0;
    for (int reporter = 1; reporter <= MEMBERS; reporter++) {
        txspec x = {reporter, 0, {NULL}, {NULL}};
        for (int target = 1; target <= MEMBERS; target++) {
            if (target == reporter || target == silent || target == unreported)
                continue;
            rep[reporter][target] = report_msg(f, reporter, target, round, beacon, &p[target],
                                               &pbs[reporter][target], leaves[reporter][target],
                                               true);
            x.urls[x.n] = GD_DILOCO_MSG_REPORT_AVAILABILITY;
            x.msgs[x.n++] = &rep[reporter][target];
        }
        if (x.n > 0)
            t[n++] = x;
    }
    run_block(f, t, n, codes);
    for (size_t i = 0; i < n; i++)
        CHECK(codes[i] == 0);
    if (edges) {
        /* The same report again; a leaf that is not the one asked for. */
        gd_buf pb = {0};
        uint8_t leaf[32];
        Gonka__Diloco__V1__MsgReportAvailability wrong =
            report_msg(f, 3, unreported, round, beacon, &p[unreported], &pb, leaf, false);
        /* And one without any proof. */
        Gonka__Diloco__V1__MsgReportAvailability bare = wrong;
        bare.reporter = f->addr[5];
        bare.proof = (ProtobufCBinaryData){0, NULL};
        int from3[3] = {2, 3, 5};
        const char *urls3[3] = {GD_DILOCO_MSG_REPORT_AVAILABILITY,
                                GD_DILOCO_MSG_REPORT_AVAILABILITY,
                                GD_DILOCO_MSG_REPORT_AVAILABILITY};
        const void *msgs3[3] = {&rep[2][1], &wrong, &bare};
        block(f, 3, from3, urls3, msgs3, codes);
        CHECK(codes[0] == GD_DILOCO_ERR_DUPLICATE);
        CHECK(codes[1] == GD_DILOCO_ERR_BAD_PROOF);
        CHECK(codes[2] == GD_DILOCO_ERR_BAD_PROOF);
        gd_buf_free(&pb);
    }
    for (int i = 0; i <= MEMBERS; i++)
        for (int j = 0; j <= MEMBERS; j++)
            gd_buf_free(&pbs[i][j]);
    until(f, w.verify_start);
    fix_block(f, NULL, 0, NULL); /* the verify window's first block fixes the inclusion set */
    r = q_round(f, round);
    CHECK(r->round->phase == PH(VERIFY));
    return r;
}

/* What each assigned validator does with each check: verdict 0 = skip. */
typedef struct plan {
    int verdict[64][2];
    uint8_t digest[64][2][32];
} plan;

/* Honest PASS everywhere. */
static void plan_honest(plan *pl, const Gonka__Diloco__V1__QueryRoundResponse *r) {
    memset(pl, 0, sizeof *pl);
    for (size_t i = 0; i < r->n_assignments && i < 64; i++) {
        const Gonka__Diloco__V1__Assignment *a = r->assignments[i];
        for (size_t j = 0; j < a->n_validators && j < 2; j++) {
            pl->verdict[i][j] = V_PASS;
            honest_digest(pl->digest[i][j], a->target, a->segment, a->step);
        }
    }
}

/* Sends every validator's sealed (reveal = false) or revealed verdicts,
 * one transaction per validator, all in one block; returns how many
 * transactions failed. */
static int verdicts(app_fixture *f, uint64_t round, const Gonka__Diloco__V1__QueryRoundResponse *r,
                    const plan *pl, bool reveal) {
    Gonka__Diloco__V1__MsgSubmitVerdict msgs[64][2];
    uint8_t seals[64][2][32];
    txspec t[8];
    size_t nt = 0;
    for (int who = 1; who <= MEMBERS; who++) {
        txspec x = {who, 0, {NULL}, {NULL}};
        for (size_t i = 0; i < r->n_assignments && i < 64; i++) {
            const Gonka__Diloco__V1__Assignment *a = r->assignments[i];
            for (size_t j = 0; j < a->n_validators && j < 2; j++) {
                if (index_of(f, a->validators[j]) != who || pl->verdict[i][j] == 0 || x.n == 8)
                    continue;
                Gonka__Diloco__V1__MsgSubmitVerdict m =
                    verdict_msg(f, who, round, a->target, a->check);
                if (reveal) {
                    m.verdict = (Gonka__Diloco__V1__Verdict)pl->verdict[i][j];
                    m.digest = (ProtobufCBinaryData){32, (uint8_t *)pl->digest[i][j]};
                } else {
                    gd_diloco_seal(seals[i][j], f->addr[who],
                                   (gd_diloco_verdict)pl->verdict[i][j], pl->digest[i][j]);
                    m.seal = (ProtobufCBinaryData){32, seals[i][j]};
                }
                msgs[i][j] = m;
                x.urls[x.n] = GD_DILOCO_MSG_SUBMIT_VERDICT;
                x.msgs[x.n++] = &msgs[i][j];
            }
        }
        if (x.n > 0)
            t[nt++] = x;
    }
    uint32_t codes[8];
    run_block(f, t, nt, codes);
    int failed = 0;
    for (size_t i = 0; i < nt; i++)
        failed += codes[i] != 0;
    return failed;
}

/* Attestations: member i attests hashes[i] (NULL: does not attest). */
static void attest(app_fixture *f, uint64_t round, const uint8_t *const *hashes) {
    Gonka__Diloco__V1__MsgAttestRound m[MEMBERS + 1];
    int from[MEMBERS];
    const char *urls[MEMBERS];
    const void *msgs[MEMBERS];
    uint32_t codes[MEMBERS];
    size_t n = 0;
    for (int i = 1; i <= MEMBERS; i++) {
        if (hashes[i] == NULL)
            continue;
        Gonka__Diloco__V1__MsgAttestRound a = GONKA__DILOCO__V1__MSG_ATTEST_ROUND__INIT;
        a.attester = f->addr[i];
        a.run = 1;
        a.round = round;
        a.next_state_hash = (ProtobufCBinaryData){32, (uint8_t *)hashes[i]};
        m[i] = a;
        from[n] = i;
        urls[n] = GD_DILOCO_MSG_ATTEST_ROUND;
        msgs[n++] = &m[i];
    }
    block(f, n, from, urls, msgs, codes);
    for (size_t i = 0; i < n; i++)
        CHECK(codes[i] == 0);
}

static const Gonka__Diloco__V1__RoundWindows *windows_of(app_fixture *f, uint64_t round,
                                                         Gonka__Diloco__V1__RoundWindows *out) {
    Gonka__Diloco__V1__QueryRoundResponse *r = q_round(f, round);
    *out = *r->round->windows;
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return out;
}

static Gonka__Diloco__V1__MsgClaimRewards claim_msg(app_fixture *f, int who, uint64_t epoch) {
    Gonka__Diloco__V1__MsgClaimRewards m = GONKA__DILOCO__V1__MSG_CLAIM_REWARDS__INIT;
    m.claimer = f->addr[who];
    m.run = 1;
    m.epoch = epoch;
    return m;
}

/* Every assignment is the draw of proofs/diloco_rules.h for its commitment
 * (one hardware class: the eligible validators are the members other than
 * the target, in address order). */
static void check_draws(const Gonka__Diloco__V1__QueryRoundResponse *r, const knobs *k) {
    const Gonka__Diloco__V1__Round *round = r->round;
    CHECK(round->verify_randomness.len == 32);
    for (size_t i = 0; i < r->n_assignments && round->verify_randomness.len == 32; i++) {
        const Gonka__Diloco__V1__Assignment *a = r->assignments[i];
        const Gonka__Diloco__V1__Commitment *c = NULL;
        for (size_t j = 0; j < r->n_commitments; j++)
            if (strcmp(r->commitments[j]->participant, a->target) == 0)
                c = r->commitments[j];
        CHECK(c != NULL);
        if (c == NULL)
            continue;
        const char *eligible[MEMBERS];
        uint32_t n = 0;
        for (size_t j = 0; j < round->n_members; j++)
            if (strcmp(round->members[j]->address, a->target) != 0)
                eligible[n++] = round->members[j]->address;
        gd_diloco_check_draw d;
        gd_diloco_draw_check(&d, round->verify_randomness.data, a->target, a->check,
                             c->segment_count, 2, c->payload_leaves - 1, n, k->double_ppm);
        CHECK(a->segment == d.segment && a->step == d.step && a->chunk == d.chunk);
        CHECK(a->chunk < CHUNKS);
        CHECK(a->n_validators == (d.twice ? 2u : 1u));
        CHECK_STR_EQ(a->validators[0], eligible[d.first]);
        if (d.twice && a->n_validators == 2)
            CHECK_STR_EQ(a->validators[1], eligible[d.second]);
    }
}

/* ---- the tests ---------------------------------------------------------------------------- */

/* One honest round end to end, with every window edge and the claims. */
static void test_honest_round(void) {
    app_fixture f;
    knobs k = {1, 0, 2};
    setup(&f, &k);
    /* Rounds open only in the Inference phase of epoch 1 (from height 42 on
     * localnet's clock), so the run waits. */
    Gonka__Diloco__V1__QueryRunResponse *run = q_run(&f);
    CHECK(run->current_round == NULL && run->n_members == MEMBERS);
    protobuf_c_message_free_unpacked(&run->base, NULL);
    until(&f, 43);
    payload p[MEMBERS + 1];
    Gonka__Diloco__V1__QueryRoundResponse *r = to_verify(&f, 0, p, 5, 4, true);
    /* 5 did not commit; 4 was reported by nobody: only its own fifth of
     * the weight, under two thirds. */
    CHECK(r->n_commitments == 4);
    CHECK(r->round->n_inclusion_set == 3);
    CHECK(!has_str(r->round->inclusion_set, r->round->n_inclusion_set, f.addr[4]));
    CHECK(r->n_assignments == 4);
    check_draws(r, &k);
    for (size_t i = 0; i < r->n_commitments; i++)
        CHECK(r->commitments[i]->tokens == 2 * 2 * 512);
    Gonka__Diloco__V1__RoundWindows w;
    windows_of(&f, 0, &w);
    plan pl;
    plan_honest(&pl, r);
    /* The first check's validator skips; everyone else seals PASS. */
    int skipper = index_of(&f, r->assignments[0]->validators[0]);
    pl.verdict[0][0] = 0;
    CHECK(verdicts(&f, 0, r, &pl, false) == 0);
    /* Revealing in the verify window is early. */
    CHECK(verdicts(&f, 0, r, &pl, true) > 0);
    until(&f, w.open_start);
    /* A reveal that differs from its seal. */
    plan lie = pl;
    for (size_t i = 1; i < r->n_assignments; i++)
        lie.verdict[i][0] = V_FAIL;
    CHECK(verdicts(&f, 0, r, &lie, true) > 0);
    CHECK(verdicts(&f, 0, r, &pl, true) == 0);
    until(&f, w.dispute_start + 1);
    /* The skipper lost 10% of its collateral. */
    CHECK_STR_EQ(collateral_of(&f, skipper), "9000");
    until(&f, w.attest_start + 1);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = q_round(&f, 0);
    CHECK(r->round->n_aggregation_set == 3 && r->round->n_failed == 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    uint8_t h[32];
    memset(h, 0x5a, sizeof h);
    const uint8_t *hs[MEMBERS + 1] = {NULL, h, h, h, h, NULL};
    attest(&f, 0, hs);
    until(&f, w.end + 1);
    r = q_round(&f, 0);
    CHECK(r->round->phase == PH(DONE));
    CHECK(r->round->next_state_hash.len == 32 && memcmp(r->round->next_state_hash.data, h, 32) == 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    run = q_run(&f);
    CHECK(run->run->rounds_aggregated == 1 && memcmp(run->run->state_hash.data, h, 32) == 0);
    protobuf_c_message_free_unpacked(&run->base, NULL);

    /* Rounds 1 (63) and 2 (84) opened and went void with no commitments;
     * a round from 105 would end after the next PoC start (120), so none
     * opens until epoch 2's Inference phase (142). */
    /* Epoch 2 starts at 120: epoch 1 settles. Claims open at its
     * claim-money stage (145). */
    until(&f, 121);
    Gonka__Diloco__V1__MsgClaimRewards cl = claim_msg(&f, 1, 1);
    CHECK(deliver(&f, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_CLAIM_STAGE);
    until(&f, 142);
    run = q_run(&f);
    CHECK(run->run->next_round == 3 && run->current_round->windows->train_start == 84);
    CHECK(run->current_round->phase == PH(VOID));
    protobuf_c_message_free_unpacked(&run->base, NULL);
    fix_block(&f, NULL, 0, NULL); /* block 142 */
    run = q_run(&f);
    CHECK(run->run->next_round == 4 && run->current_round->windows->train_start == 142);
    CHECK(run->current_round->epoch == 2);
    protobuf_c_message_free_unpacked(&run->base, NULL);
    until(&f, 146);
    Gonka__Diloco__V1__QueryRewardsRequest rq = GONKA__DILOCO__V1__QUERY_REWARDS_REQUEST__INIT;
    rq.address = f.addr[1];
    Gonka__Diloco__V1__QueryRewardsResponse *rw = query(
        &f, GD_DILOCO_QUERY_REWARDS, &rq, &gonka__diloco__v1__query_rewards_response__descriptor);
    CHECK(rw && rw->n_amounts == 1);
    uint64_t owed = 0;
    if (rw && rw->n_amounts == 1) {
        CHECK(rw->amounts[0]->epoch == 1 && rw->amounts[0]->tokens == 2048);
        owed = strtoull(rw->amounts[0]->amount, NULL, 10);
        /* Three accepted commitments share 80% of 50000 equally. */
        CHECK(owed >= 40000 / 3);
    }
    if (rw)
        protobuf_c_message_free_unpacked(&rw->base, NULL);
    uint64_t before = strtoull(fix_balance(&f, f.addr[1]), NULL, 10);
    cl = claim_msg(&f, 1, 2);
    CHECK(deliver(&f, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_EPOCH);
    cl = claim_msg(&f, 1, 1);
    CHECK(deliver(&f, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == 0);
    CHECK(strtoull(fix_balance(&f, f.addr[1]), NULL, 10) == before + owed);
    CHECK(deliver(&f, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_CLAIMED);
    /* 4's payload was not included and 5 never committed: nothing for 5
     * unless it validated; an outsider has nothing. */
    cl = claim_msg(&f, 6, 1);
    CHECK(deliver(&f, 6, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_NOTHING);
    payloads_free(p);
    fix_free(&f);
}

/* Re-check verdicts for every disputed check: each re-checker answers with
 * answer(target) and the honest digest. */
static void rechecks(app_fixture *f, uint64_t round, const Gonka__Diloco__V1__QueryRoundResponse *r,
                     int (*answer)(app_fixture *, const char *target)) {
    Gonka__Diloco__V1__MsgDispute msgs[64][4];
    uint8_t digests[64][32];
    txspec t[8];
    size_t nt = 0;
    for (int who = 1; who <= MEMBERS; who++) {
        txspec x = {who, 0, {NULL}, {NULL}};
        for (size_t i = 0; i < r->n_assignments && i < 64; i++) {
            const Gonka__Diloco__V1__Assignment *a = r->assignments[i];
            for (size_t j = 0; j < a->n_recheckers && j < 4; j++) {
                if (index_of(f, a->recheckers[j]) != who || x.n == 8)
                    continue;
                honest_digest(digests[i], a->target, a->segment, a->step);
                Gonka__Diloco__V1__MsgDispute m = GONKA__DILOCO__V1__MSG_DISPUTE__INIT;
                m.validator = f->addr[who];
                m.run = 1;
                m.round = round;
                m.target = a->target;
                m.check = a->check;
                m.verdict = (Gonka__Diloco__V1__Verdict)answer(f, a->target);
                m.digest = (ProtobufCBinaryData){32, digests[i]};
                msgs[i][j] = m;
                x.urls[x.n] = GD_DILOCO_MSG_DISPUTE;
                x.msgs[x.n++] = &msgs[i][j];
            }
        }
        if (x.n > 0)
            t[nt++] = x;
    }
    uint32_t codes[8];
    run_block(f, t, nt, codes);
    for (size_t i = 0; i < nt; i++)
        CHECK(codes[i] == 0);
}

static const char *g_cheater; /* the target whose FAIL the re-checkers uphold */

static int uphold_cheater(app_fixture *f, const char *target) {
    (void)f;
    return strcmp(target, g_cheater) == 0 ? V_FAIL : V_PASS;
}

static const Gonka__Diloco__V1__VerdictRecord *verdict_of(
    const Gonka__Diloco__V1__QueryRoundResponse *r, const char *target, uint32_t check,
    const char *validator) {
    for (size_t i = 0; i < r->n_verdicts; i++) {
        const Gonka__Diloco__V1__VerdictRecord *v = r->verdicts[i];
        if (strcmp(v->target, target) == 0 && v->check == check &&
            strcmp(v->validator, validator) == 0)
            return v;
    }
    return NULL;
}

/* Two FAILs on different targets: the re-checkers uphold one (the target
 * is slashed and left out of the aggregation; the accuser gets its bond
 * back) and overturn the other (the accuser's bond is burned and its
 * verdict unpaid). Then the attestations split: the round is void and G
 * stays. */
static void test_fail_upheld_and_overturned(void) {
    app_fixture f;
    knobs k = {1, 0, 3};
    setup(&f, &k);
    until(&f, 43);
    payload p[MEMBERS + 1];
    Gonka__Diloco__V1__QueryRoundResponse *r = to_verify(&f, 0, p, 0, 0, false);
    CHECK(r->round->n_inclusion_set == MEMBERS && r->n_assignments == MEMBERS);
    Gonka__Diloco__V1__RoundWindows w;
    windows_of(&f, 0, &w);
    plan pl;
    plan_honest(&pl, r);
    /* Assignments are in target order: 0 is member 1's check, 1 member 2's. */
    /* Copies: r is queried again below. */
    struct {
        char target[GD_ADDRESS_STR_MAX], validators[2][GD_ADDRESS_STR_MAX];
    } a0s, a1s, *a0 = &a0s, *a1 = &a1s;
    snprintf(a0s.target, sizeof a0s.target, "%s", r->assignments[0]->target);
    snprintf(a0s.validators[0], sizeof a0s.validators[0], "%s", r->assignments[0]->validators[0]);
    snprintf(a1s.target, sizeof a1s.target, "%s", r->assignments[1]->target);
    snprintf(a1s.validators[0], sizeof a1s.validators[0], "%s", r->assignments[1]->validators[0]);
    int accuser0 = index_of(&f, a0->validators[0]), accuser1 = index_of(&f, a1->validators[0]);
    pl.verdict[0][0] = V_FAIL;
    pl.verdict[1][0] = V_FAIL;
    g_cheater = a0->target;
    uint64_t bal0 = strtoull(fix_balance(&f, f.addr[accuser0]), NULL, 10);
    uint64_t bal1 = strtoull(fix_balance(&f, f.addr[accuser1]), NULL, 10);
    CHECK(verdicts(&f, 0, r, &pl, false) == 0);
    until(&f, w.open_start);
    CHECK(verdicts(&f, 0, r, &pl, true) == 0);
    /* Each FAIL holds a bond of 1000 (an accuser of both holds two). */
    uint64_t bonds0 = accuser0 == accuser1 ? 2000 : 1000;
    CHECK(strtoull(fix_balance(&f, f.addr[accuser0]), NULL, 10) == bal0 - bonds0);
    until(&f, w.dispute_start + 1);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = q_round(&f, 0);
    CHECK(r->round->phase == PH(DISPUTE));
    CHECK(r->assignments[0]->n_recheckers == 3 && r->assignments[1]->n_recheckers == 3);
    CHECK(r->assignments[2]->n_recheckers == 0);
    for (size_t j = 0; j < r->assignments[0]->n_recheckers; j++) {
        CHECK(strcmp(r->assignments[0]->recheckers[j], a0->target) != 0);
        CHECK(strcmp(r->assignments[0]->recheckers[j], r->assignments[0]->validators[0]) != 0);
    }
    rechecks(&f, 0, r, uphold_cheater);
    /* A re-check from someone not re-checking. */
    Gonka__Diloco__V1__MsgDispute d = GONKA__DILOCO__V1__MSG_DISPUTE__INIT;
    uint8_t dg[32] = {1};
    d.validator = f.addr[accuser0];
    d.run = 1;
    d.round = 0;
    d.target = r->assignments[0]->target;
    d.check = 0;
    d.verdict = V_PASS;
    d.digest = (ProtobufCBinaryData){32, dg};
    CHECK(deliver(&f, accuser0, GD_DILOCO_MSG_DISPUTE, &d) == GD_DILOCO_ERR_NOT_ASSIGNED);
    until(&f, w.attest_start + 1);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = q_round(&f, 0);
    int cheater = index_of(&f, g_cheater);
    CHECK(r->round->n_failed == 1 && strcmp(r->round->failed[0], g_cheater) == 0);
    CHECK(r->round->n_aggregation_set == MEMBERS - 1);
    CHECK(!has_str(r->round->aggregation_set, r->round->n_aggregation_set, g_cheater));
    /* The cheater lost half its collateral. */
    CHECK_STR_EQ(collateral_of(&f, cheater), "5000");
    const Gonka__Diloco__V1__VerdictRecord *v0 =
        verdict_of(r, a0->target, 0, a0->validators[0]);
    const Gonka__Diloco__V1__VerdictRecord *v1 =
        verdict_of(r, a1->target, 0, a1->validators[0]);
    CHECK(v0 && !v0->faulty && !v0->bonded);
    CHECK(v1 && v1->faulty && !v1->bonded);
    /* Upheld: bond back. Overturned: bond burned. */
    uint64_t now0 = strtoull(fix_balance(&f, f.addr[accuser0]), NULL, 10);
    uint64_t now1 = strtoull(fix_balance(&f, f.addr[accuser1]), NULL, 10);
    if (accuser0 == accuser1)
        CHECK(now0 == bal0 - 1000);
    else {
        CHECK(now0 == bal0);
        CHECK(now1 == bal1 - 1000);
    }
    /* Attestations split 2 : 3 of five equal weights: no two thirds. */
    uint8_t h1[32], h2[32];
    memset(h1, 1, 32);
    memset(h2, 2, 32);
    const uint8_t *hs[MEMBERS + 1] = {NULL, h1, h1, h2, h2, h2};
    attest(&f, 0, hs);
    Gonka__Diloco__V1__MsgAttestRound again = GONKA__DILOCO__V1__MSG_ATTEST_ROUND__INIT;
    again.attester = f.addr[1];
    again.run = 1;
    again.round = 0;
    again.next_state_hash = (ProtobufCBinaryData){32, h2};
    CHECK(deliver(&f, 1, GD_DILOCO_MSG_ATTEST_ROUND, &again) == GD_DILOCO_ERR_DUPLICATE);
    until(&f, w.end + 1);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = q_round(&f, 0);
    CHECK(r->round->phase == PH(VOID) && r->round->next_state_hash.len == 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    Gonka__Diloco__V1__QueryRunResponse *run = q_run(&f);
    uint8_t initial[32];
    memset(initial, 0x22, sizeof initial);
    CHECK(run->run->rounds_aggregated == 0 && memcmp(run->run->state_hash.data, initial, 32) == 0);
    /* The next round opened right after, and attesting the old one is over. */
    CHECK(run->current_round && run->current_round->index == 1);
    protobuf_c_message_free_unpacked(&run->base, NULL);
    CHECK(deliver(&f, 2, GD_DILOCO_MSG_ATTEST_ROUND, &again) == GD_DILOCO_ERR_UNKNOWN_ROUND);
    payloads_free(p);
    fix_free(&f);
}

static int all_pass(app_fixture *f, const char *target) {
    (void)f;
    (void)target;
    return V_PASS;
}

/* Double checks: two UNAVAILABLE against one target count as a FAIL; two
 * PASS digests that differ go to re-checkers, and the validator whose
 * digest the re-checkers do not share goes unpaid. */
static void test_double_checks(void) {
    app_fixture f;
    knobs k = {1, 1000000, 2};
    setup(&f, &k);
    until(&f, 43);
    payload p[MEMBERS + 1];
    Gonka__Diloco__V1__QueryRoundResponse *r = to_verify(&f, 0, p, 0, 0, false);
    Gonka__Diloco__V1__RoundWindows w;
    windows_of(&f, 0, &w);
    check_draws(r, &k);
    for (size_t i = 0; i < r->n_assignments; i++)
        CHECK(r->assignments[i]->n_validators == 2 &&
              strcmp(r->assignments[i]->validators[0], r->assignments[i]->validators[1]) != 0);
    plan pl;
    plan_honest(&pl, r);
    struct {
        char target[GD_ADDRESS_STR_MAX], validators[2][GD_ADDRESS_STR_MAX];
    } a0s, a1s, *a0 = &a0s, *a1 = &a1s;
    snprintf(a0s.target, sizeof a0s.target, "%s", r->assignments[0]->target);
    snprintf(a1s.target, sizeof a1s.target, "%s", r->assignments[1]->target);
    for (int j = 0; j < 2; j++)
        snprintf(a1s.validators[j], sizeof a1s.validators[j], "%s",
                 r->assignments[1]->validators[j]);
    pl.verdict[0][0] = pl.verdict[0][1] = V_UNAVAILABLE;
    memset(pl.digest[0], 0, sizeof pl.digest[0]);
    pl.digest[1][1][0] ^= 1; /* the second validator of check 1 did not re-execute */
    CHECK(verdicts(&f, 0, r, &pl, false) == 0);
    until(&f, w.open_start);
    CHECK(verdicts(&f, 0, r, &pl, true) == 0);
    until(&f, w.dispute_start + 1);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = q_round(&f, 0);
    CHECK(r->assignments[1]->n_recheckers == 2 && r->assignments[0]->n_recheckers == 0);
    rechecks(&f, 0, r, all_pass);
    until(&f, w.attest_start + 1);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = q_round(&f, 0);
    CHECK(r->round->n_failed == 1 && strcmp(r->round->failed[0], a0->target) == 0);
    const Gonka__Diloco__V1__VerdictRecord *good = verdict_of(r, a1->target, 0, a1->validators[0]);
    const Gonka__Diloco__V1__VerdictRecord *lazy = verdict_of(r, a1->target, 0, a1->validators[1]);
    CHECK(good && !good->faulty);
    CHECK(lazy && lazy->faulty);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    payloads_free(p);
    fix_free(&f);
}

/* Checks go to validators of the target's hardware class only: with two
 * classes of three and two members, every validator shares its target's
 * class, and a class's members never check the other class. */
static void test_hardware_classes(void) {
    app_fixture f;
    knobs k = {3, 500000, 1, true};
    setup(&f, &k);
    until(&f, 43);
    payload p[MEMBERS + 1];
    Gonka__Diloco__V1__QueryRoundResponse *r = to_verify(&f, 0, p, 0, 0, false);
    CHECK(r->n_assignments == 3 * MEMBERS);
    for (size_t i = 0; i < r->n_assignments; i++) {
        const Gonka__Diloco__V1__Assignment *a = r->assignments[i];
        bool gpu = index_of(&f, a->target) >= 4;
        for (size_t j = 0; j < a->n_validators; j++) {
            CHECK((index_of(&f, a->validators[j]) >= 4) == gpu);
            CHECK(strcmp(a->validators[j], a->target) != 0);
        }
        /* The GPU class has one other member: never a double check. */
        if (gpu)
            CHECK(a->n_validators == 1);
    }
    protobuf_c_message_free_unpacked(&r->base, NULL);
    payloads_free(p);
    fix_free(&f);
}

static bool has_event_attr(const gd_events *ev, const char *type, const char *key,
                           const char *value) {
    for (size_t i = 0; i < ev->n; i++) {
        if (strcmp(ev->items[i].type, type) != 0)
            continue;
        for (size_t j = 0; j < ev->items[i].n_attrs; j++)
            if (strcmp(ev->items[i].attrs[j].key, key) == 0 &&
                strcmp(ev->items[i].attrs[j].value, value) == 0)
                return true;
    }
    return false;
}

/* Ranks: a late joiner gets the next one (in its response and event, never
 * an earlier member's), and the round snapshot carries every member's. */
static void test_ranks(void) {
    app_fixture f;
    knobs k = {1, 0, 2};
    setup(&f, &k);
    Cosmos__Base__V1beta1__Coin coll = COSMOS__BASE__V1BETA1__COIN__INIT;
    coll.denom = "ngonka";
    coll.amount = "6000";
    Gonka__Diloco__V1__MsgJoinRun j = GONKA__DILOCO__V1__MSG_JOIN_RUN__INIT;
    j.participant = f.addr[6];
    j.run = 1;
    j.artifact_url = "http://127.0.0.1:8086";
    j.hw_class = "cpu-x86-openblas";
    j.collateral = &coll;
    gd_buf tx = {0};
    gd_tx_outcome out;
    memset(&out, 0, sizeof out);
    CHECK_OK(fix_msg_tx(&f, 6, GD_DILOCO_MSG_JOIN_RUN, &j, &tx));
    fix_block(&f, &tx, 1, &out);
    CHECK(out.err.code == 0);
    Cosmos__Base__Abci__V1beta1__TxMsgData *d =
        cosmos__base__abci__v1beta1__tx_msg_data__unpack(NULL, out.data.len, out.data.data);
    CHECK(d && d->n_msg_responses == 1);
    if (d && d->n_msg_responses == 1) {
        CHECK_STR_EQ(d->msg_responses[0]->type_url, "/gonka.diloco.v1.MsgJoinRunResponse");
        Gonka__Diloco__V1__MsgJoinRunResponse *r = gonka__diloco__v1__msg_join_run_response__unpack(
            NULL, d->msg_responses[0]->value.len, d->msg_responses[0]->value.data);
        CHECK(r && r->rank == MEMBERS);
        if (r)
            gonka__diloco__v1__msg_join_run_response__free_unpacked(r, NULL);
    }
    if (d)
        cosmos__base__abci__v1beta1__tx_msg_data__free_unpacked(d, NULL);
    CHECK(has_event_attr(&out.events, "diloco_joined", "rank", "5"));
    CHECK(has_event_attr(&out.events, "diloco_joined", "participant", f.addr[6]));
    gd_tx_outcome_free(&out);
    gd_buf_free(&tx);

    until(&f, 43);
    Gonka__Diloco__V1__QueryRunResponse *run = q_run(&f);
    CHECK(run->run->next_rank == MEMBERS + 1 && run->n_members == MEMBERS + 1);
    CHECK(run->current_round != NULL);
    if (run->current_round) {
        const Gonka__Diloco__V1__Round *r = run->current_round;
        CHECK(r->n_members == MEMBERS + 1);
        for (size_t i = 0; i < r->n_members; i++)
            for (size_t m = 0; m < run->n_members; m++)
                if (strcmp(run->members[m]->address, r->members[i]->address) == 0)
                    CHECK(r->members[i]->rank == run->members[m]->rank);
        for (size_t i = 0; i < r->n_members; i++)
            if (strcmp(r->members[i]->address, f.addr[6]) == 0)
                CHECK(r->members[i]->rank == MEMBERS);
    }
    protobuf_c_message_free_unpacked(&run->base, NULL);
    fix_free(&f);
}

/* The same genesis and transactions give the same app hash on two runs,
 * and a chain restarted from the exported genesis has it too. */
static void test_determinism_and_export(void) {
    uint8_t hashes[2][32];
    json_t *exported = NULL;
    int64_t height = 0;
    for (int pass = 0; pass < 2; pass++) {
        app_fixture f;
        knobs k = {2, 500000, 2};
        setup(&f, &k);
        until(&f, 43);
        payload p[MEMBERS + 1];
        Gonka__Diloco__V1__QueryRoundResponse *r = to_verify(&f, 0, p, 3, 0, false);
        plan pl;
        plan_honest(&pl, r);
        CHECK(verdicts(&f, 0, r, &pl, false) == 0);
        protobuf_c_message_free_unpacked(&r->base, NULL);
        gd_app_hash(f.app, hashes[pass]);
        if (pass == 0) {
            exported = gd_app_export(f.app);
            height = gd_app_height(f.app);
        }
        payloads_free(p);
        fix_free(&f);
    }
    CHECK(memcmp(hashes[0], hashes[1], 32) == 0);
    CHECK(exported != NULL && json_object_get(exported, "diloco") != NULL);
    char initial[24];
    snprintf(initial, sizeof initial, "%lld", (long long)(height + 1));
    json_t *genesis = json_pack("{s:s,s:s,s:O}", "chain_id", FIX_CHAIN, "initial_height",
                                initial, "app_state", exported);
    gd_app *again = NULL;
    CHECK_OK(gd_app_new(&again, NULL));
    CHECK_OK(gd_app_register_standard(again));
    CHECK_OK(gd_app_init_chain(again, genesis));
    uint8_t h[32];
    gd_app_hash(again, h);
    CHECK(memcmp(h, hashes[0], 32) == 0);
    CHECK_OK(gd_app_check_invariants(again));
    json_t *exported2 = gd_app_export(again);
    CHECK(json_equal(exported, exported2));
    json_decref(exported2);
    gd_app_free(again);
    json_decref(genesis);
    json_decref(exported);
}

/* Genesis: a run and its members can be created there (the module account
 * funded through bank's genesis); malformed diloco genesis is refused. */
static void test_genesis(void) {
    app_fixture f;
    fix_init_diloco(&f, NULL);
    char module[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_auth_module_address("diloco", module, sizeof module));
    json_t *genesis = json_deep_copy(f.genesis);
    fix_free(&f);
    knobs k = {1, 0, 2};
    json_t *spec = spec_json(&k);
    json_t *state = json_pack("{s:{s:s},s:[{s:o,s:s,s:i}],s:[{s:s,s:s,s:s,s:s,s:s,s:i}]}",
                              "params", "authority", "", "runs", "spec", spec, "pool", "7000",
                              "next_rank", 2, "members", "run", "1", "address",
                              "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", "artifact_url",
                              "http://h:1", "hw_class", "cpu", "collateral", "3000", "rank", 1);
    json_t *app_state = json_object_get(genesis, "app_state");
    json_object_set_new(app_state, "diloco", state);
    json_array_append_new(json_object_get(json_object_get(app_state, "auth"), "accounts"),
                          json_pack("{s:s,s:{s:s,s:s,s:s},s:s}", "@type",
                                    "/cosmos.auth.v1beta1.ModuleAccount", "base_account",
                                    "address", module, "account_number", "8", "sequence", "0",
                                    "name", "diloco"));
    json_array_append_new(json_object_get(json_object_get(app_state, "bank"), "balances"),
                          json_pack("{s:s,s:[{s:s,s:s}]}", "address", module, "coins", "denom",
                                    "ngonka", "amount", "10000"));
    gd_app *app = NULL;
    CHECK_OK(gd_app_new(&app, NULL));
    CHECK_OK(gd_app_register_standard(app));
    CHECK_OK(gd_app_init_chain(app, genesis));
    CHECK_OK(gd_app_check_invariants(app));
    gd_app_free(app);
    /* Ranks: distinct per run, below the run's next_rank, and given. A
     * second member bonds nothing, so only its rank is wrong. */
    json_t *members = json_object_get(json_object_get(app_state, "diloco"), "members");
    json_t *second = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "run", "1", "address",
                               "gonka10ht9tyks4vh7p5p904t340cr9nvahy7uhvqtp8", "artifact_url",
                               "http://h:2", "hw_class", "cpu", "collateral", "0", "rank", 0);
    json_array_append_new(members, second);
    CHECK_OK(gd_app_new(&app, NULL));
    CHECK_OK(gd_app_register_standard(app));
    CHECK_OK(gd_app_init_chain(app, genesis)); /* ranks 1 and 0 of 2 */
    gd_app_free(app);
    const struct {
        int rank; /* the second member's; -1: no rank key */
        const char *detail;
    } rank_cases[] = {
        {1, "two members of run 1 have rank 1"},
        {2, "rank 2 is not below run 1's next_rank 2"},
        {-1, "rank"},
    };
    for (size_t i = 0; i < sizeof rank_cases / sizeof rank_cases[0]; i++) {
        if (rank_cases[i].rank < 0)
            json_object_del(second, "rank");
        else
            json_object_set_new(second, "rank", json_integer(rank_cases[i].rank));
        CHECK_OK(gd_app_new(&app, NULL));
        CHECK_OK(gd_app_register_standard(app));
        CHECK(gd_app_init_chain(app, genesis) != GD_OK);
        if (getenv("GD_TEST_VERBOSE") || strstr(gd_error_detail(), rank_cases[i].detail) == NULL)
            fprintf(stderr, "rank case %zu: '%s'\n", i, gd_error_detail());
        CHECK(strstr(gd_error_detail(), rank_cases[i].detail) != NULL);
        gd_app_free(app);
    }
    json_array_remove(members, 1);
    /* A pool the module account does not hold: refused at genesis, not
     * left to stop the chain at its first invariant check. */
    json_t *runs = json_object_get(json_object_get(app_state, "diloco"), "runs");
    json_object_set_new(json_array_get(runs, 0), "pool", json_string("7001"));
    CHECK_OK(gd_app_new(&app, NULL));
    CHECK_OK(gd_app_register_standard(app));
    CHECK(gd_app_init_chain(app, genesis) != GD_OK);
    gd_app_free(app);
    /* Unknown keys, a member of a missing run, a bad spec. */
    const char *bad[] = {
        "{\"params\":{\"authority\":\"\"},\"typo\":1}",
        ("{\"members\":[{\"run\":\"9\",\"address\":\"gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\","
         "\"artifact_url\":\"u\",\"hw_class\":\"c\",\"collateral\":\"1\",\"rank\":0}]}"),
        "{\"runs\":[{\"spec\":{\"model\":\"tiny\"},\"pool\":\"1\"}]}",
        "{\"records\":[{\"key\":\"BAE=\",\"value\":\"\"}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_error_t e;
        json_t *st = json_loads(bad[i], 0, &e);
        CHECK(st != NULL);
        json_object_set_new(app_state, "diloco", st);
        CHECK_OK(gd_app_new(&app, NULL));
        CHECK_OK(gd_app_register_standard(app));
        CHECK(gd_app_init_chain(app, genesis) != GD_OK);
        gd_app_free(app);
    }
    json_decref(genesis);
}

/* Weights are summed in 128 bits: three members whose collateral sums past
 * 2^64 still get a round (at height 1: epoch 0 has no PoC and the round's
 * seven one-block windows end before block 20), with the exact total, and
 * the chain keeps going with every invariant holding. */
static void test_huge_collateral(void) {
    app_fixture f;
    fix_init_diloco(&f, NULL);
    char module[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_auth_module_address("diloco", module, sizeof module));
    knobs k = {1, 0, 1};
    json_t *spec = spec_json(&k);
    json_object_set_new(spec, "windows",
                        json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "train", 1, "commit", 1,
                                  "reveal", 1, "verify", 1, "open", 1, "dispute", 1, "attest",
                                  1));
    json_t *members = json_array();
    for (int i = 1; i <= 3; i++)
        json_array_append_new(members, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "run", "1",
                                                 "address", f.addr[i], "artifact_url",
                                                 "http://h", "hw_class", "cpu", "collateral",
                                                 "9000000000000000000", "rank", i - 1));
    json_t *genesis = json_deep_copy(f.genesis);
    json_t *app_state = json_object_get(genesis, "app_state");
    json_object_set_new(app_state, "diloco",
                        json_pack("{s:{s:s},s:[{s:o,s:s,s:i}],s:o}", "params", "authority",
                                  f.addr[0], "runs", "spec", spec, "pool", "1000", "next_rank", 3,
                                  "members", members));
    json_array_append_new(json_object_get(json_object_get(app_state, "auth"), "accounts"),
                          json_pack("{s:s,s:{s:s,s:s,s:s},s:s}", "@type",
                                    "/cosmos.auth.v1beta1.ModuleAccount", "base_account",
                                    "address", module, "account_number", "8", "sequence", "0",
                                    "name", "diloco"));
    json_array_append_new(json_object_get(json_object_get(app_state, "bank"), "balances"),
                          json_pack("{s:s,s:[{s:s,s:s}]}", "address", module, "coins", "denom",
                                    "ngonka", "amount", "27000000000000001000"));
    gd_app_free(f.app);
    json_decref(f.genesis);
    f.genesis = genesis;
    CHECK_OK(gd_app_new(&f.app, NULL));
    CHECK_OK(gd_app_register_standard(f.app));
    CHECK_OK(gd_app_init_chain(f.app, f.genesis));
    f.height = 0;
    fix_block(&f, NULL, 0, NULL);
    Gonka__Diloco__V1__QueryRunResponse *run = q_run(&f);
    CHECK(run->current_round != NULL);
    if (run->current_round)
        CHECK_STR_EQ(run->current_round->total_weight, "27000000000000000000");
    protobuf_c_message_free_unpacked(&run->base, NULL);
    until(&f, 12);
    Gonka__Diloco__V1__QueryRoundResponse *r = q_round(&f, 0);
    CHECK(r->round->phase == PH(VOID));
    protobuf_c_message_free_unpacked(&r->base, NULL);
    fix_free(&f);
}

int main(void) {
    RUN_TEST(test_honest_round);
    RUN_TEST(test_fail_upheld_and_overturned);
    RUN_TEST(test_double_checks);
    RUN_TEST(test_hardware_classes);
    RUN_TEST(test_ranks);
    RUN_TEST(test_determinism_and_export);
    RUN_TEST(test_genesis);
    RUN_TEST(test_huge_collateral);
    return gd_test_finish();
}
