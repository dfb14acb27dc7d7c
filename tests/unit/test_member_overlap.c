/* Nodes play an overlap run (the one-step delay of DiLoCoX) on a test chain
 * with nothing fabricated: a worker whose commitment of round r is on
 * chain trains round r + 1 ahead, from S_{r+1} = G_r - Δ̂_{w,r}, while round
 * r is still checked, aggregated and attested, and commits it as soon as
 * round r + 1's commit window opens; validators check leaf 0 by the drawn
 * chunk against G_r and the worker's payload chunk of round r.
 *
 * Honest: every round DONE with all three workers aggregated and every
 * check passed, each round's payload already durable when its round
 * opens, each round after the first started overlapped (its leaf 0 is not
 * G_r), every node's G the agreed one, the model learning, nobody slashed.
 * A worker restarted while it trains ahead trains again and commits once;
 * one restarted after it sends the stored commitment. A copier asking for a
 * round trained ahead before it opens gets nothing.
 * Cheaters: a worker that trains its overlapped rounds from another start
 * fails its first overlapped round; one that serves its payloads only
 * whole (no chunk of the round before for its checkers) is UNAVAILABLE,
 * upheld. Neither is aggregated there; no honest node is slashed. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin/member/artifact_store.h"
#include "tests/adversary/adversary.h"
#include "tests/support/member_fixture.h"
#include "tests/support/testkit.h"
#include "trainer/state.h"

#define WORKERS 3
#define CHEATER 3


static void knobs(df_knobs *k) {
    nf_knobs(k);
    k->overlap = true;
}

/* Once node `who` was restarted in round 1: round 2 ends DONE with it
 * aggregated, nothing refused, nobody slashed; round 2's record (the
 * caller frees it). */
static df_qround *round_2_done_with(nf_net *net, int who) {
    nf_until(net, nf_until_round_windows(net, 2).end + 1);
    df_qround *q = df_q_round(&net->d, 2);
    CHECK(q->round->phase == PH(DONE));
    CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set,
                     net->d.f.addr[who]));
    CHECK(net->refused == 0);
    for (int n = 1; n <= NF_NODES; n++)
        CHECK(df_slashed(&net->d, n, NULL, NULL) == 0);
    return q;
}

/* The bytes node `who` stores for an artifact, or false. */
static bool stored(nf_net *net, gd_buf *out, int who, gd_artifact_kind kind, uint64_t round) {
    gd_artifact_store st;
    CHECK_OK(gd_artifact_store_open(&st, net->dirs[who]));
    gd_status s = gd_artifact_get(&st, out, kind, 1, round, 0, (size_t)1 << 30);
    return s == GD_OK;
}

/* Leaf 0 of node who's round r transcript has G_r's parameters (the start
 * without overlap), read from what it stores. */
static bool starts_from_global(nf_net *net, int who, uint64_t r) {
    gd_buf t = {0}, g = {0};
    CHECK(stored(net, &t, who, GD_ARTIFACT_TRANSCRIPT, r));
    CHECK(stored(net, &g, who, GD_ARTIFACT_GLOBAL, r));
    gd_worker_desc leaf0;
    gd_global_desc gd;
    CHECK_OK(gd_worker_desc_decode(&leaf0, t.data, GD_WORKER_DESC_BYTES));
    CHECK_OK(gd_global_desc_decode(&gd, g.data, GD_GLOBAL_DESC_BYTES));
    bool same = memcmp(leaf0.params_root, gd.params_root, 32) == 0;
    gd_buf_free(&t);
    gd_buf_free(&g);
    return same;
}

/* How many workers hold round r's payload (when it opens: trained ahead). */
static int trained_ahead(nf_net *net, uint64_t r) {
    int have = 0;
    for (int who = 1; who <= WORKERS; who++) {
        gd_buf p = {0};
        have += stored(net, &p, who, GD_ARTIFACT_PAYLOAD, r);
        gd_buf_free(&p);
    }
    return have;
}

/* Rounds 0 .. rounds - 1 ended DONE, all three workers aggregated, every
 * check passed. */
static void check_rounds_passed(nf_net *net, uint64_t rounds) {
    for (uint64_t r = 0; r < rounds; r++) {
        df_qround *q = df_q_round(&net->d, r);
        CHECK(q->round->phase == PH(DONE));
        CHECK(q->round->n_failed == 0 && q->round->n_aggregation_set == WORKERS);
        for (size_t i = 0; i < q->n_assignments; i++)
            CHECK(q->assignments[i]->outcome == OUTCOME(PASSED));
        df_qfree(q);
    }
}

/* An overlap epoch played under a memory budget on every node (0: none);
 * hash gets the chain's start state of round 3. */
static void overlap_epoch(uint64_t budget, uint8_t hash3[32]) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    for (int who = 1; who <= NF_NODES; who++)
        gd_member_set_memory_budget(net.nodes[who], budget);
    double loss0 = NAN;
    uint64_t seen = 0;
    size_t ahead = 0;
    while (net.d.f.height < 200) {
        nf_block(&net);
        if (isnan(loss0))
            loss0 = gd_member_eval_loss(net.nodes[1], 4);
        uint64_t r = nf_current_round(&net);
        if (r <= seen)
            continue;
        seen = r;
        /* Round r has just opened: each worker trained it ahead, and round
         * r - 1 started overlapped from round 1 on. */
        int have = trained_ahead(&net, r);
        CHECK(have == WORKERS);
        ahead += (size_t)have;
        for (int who = 1; who <= WORKERS; who++)
            CHECK(starts_from_global(&net, who, r - 1) == (r - 1 == 0));
    }
    uint64_t rounds = nf_current_round(&net);
    fprintf(stderr, "  current round %llu, %zu rounds trained ahead\n",
            (unsigned long long)rounds, ahead);
    CHECK(rounds >= 3 && ahead >= 3 * WORKERS);
    check_rounds_passed(&net, rounds);
    df_qround *cur = df_q_round(&net.d, rounds);
    for (int who = 1; who <= NF_NODES; who++) {
        uint64_t gr = 0;
        uint8_t hash[32];
        CHECK(gd_member_global(net.nodes[who], &gr, hash));
        CHECK(memcmp(hash, cur->round->start_state_hash.data, 32) == 0 ||
              memcmp(hash, cur->round->next_state_hash.data, 32) == 0);
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    }
    df_qfree(cur);
    df_qround *q3 = df_q_round(&net.d, 3);
    CHECK(q3->round->start_state_hash.len == 32);
    memcpy(hash3, q3->round->start_state_hash.data, 32);
    df_qfree(q3);
    df_check_settlement(&net.d, 1);
    CHECK(net.refused == 0);
    double loss1 = gd_member_eval_loss(net.nodes[1], 4);
    fprintf(stderr, "  eval loss %.4f -> %.4f\n", loss0, loss1);
    CHECK(loss1 < loss0);
    nf_free(&net);
}

/* And under a budget of one byte, so each worker keeps every round's
 * overlapped start in a file of its own, G in its file and its payloads
 * encoded straight to their files: the same rounds, to the same G. */
static void test_overlap_epoch(void) {
    uint8_t free_hash[32], budget_hash[32];
    overlap_epoch(0, free_hash);
    overlap_epoch(1, budget_hash);
    CHECK(memcmp(free_hash, budget_hash, 32) == 0);
}

/* Slow workers: a block passes while they train each segment, in windows
 * of three blocks. Training ahead gives way whenever another duty falls
 * due, so each worker still reveals its secret, reports, checks, attests
 * and commits in time: every round DONE with all three aggregated, every
 * check passed, nobody slashed, and every round after the first trained
 * before it opened. (A worker that never gave way misses its reveal and
 * pays the skip slash.) */
static void test_slow_workers_yield(void) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    /* Eight segments a round: training ahead lets eight blocks pass, more
     * than any one window (a worker that never gave way would miss its
     * reveal, reports or attestation); round 0, trained in its window,
     * has a train window of ten. */
    json_t *spec = nf_spec(&k);
    json_object_set_new(spec, "h_min", json_integer(16));
    json_object_set_new(spec, "h_max", json_integer(16));
    json_object_set_new(json_object_get(spec, "windows"), "train", json_integer(10));
    k.spec = spec;
    nf_setup(&net, &k, NF_NODES, nf_roles);
    json_decref(spec);
    for (int who = 1; who <= WORKERS; who++) {
        net.slow[who] = true;
        nf_restart(&net, who);
    }
    uint64_t seen = 0;
    while (nf_current_round(&net) < 3) {
        nf_block(&net);
        uint64_t r = nf_current_round(&net);
        if (r <= seen)
            continue;
        seen = r;
        CHECK(trained_ahead(&net, r) == WORKERS);
    }
    check_rounds_passed(&net, 3);
    for (int who = 1; who <= NF_NODES; who++)
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    CHECK(net.refused == 0);
    nf_free(&net);
}

/* Killed in round 1's verify window, after it committed round 1 and while
 * it trains round 2 ahead (nothing of round 2 journalled): the restarted
 * worker trains round 2 again, commits it once and is aggregated. */
static void test_restart_while_training_ahead(void) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    nf_until(&net, nf_until_round_windows(&net, 1).verify_start);
    gd_buf p = {0};
    bool had = stored(&net, &p, 2, GD_ARTIFACT_PAYLOAD, 2);
    gd_buf_free(&p);
    fprintf(stderr, "  round 2 trained ahead by verify start: %s\n", had ? "yes" : "no");
    /* As a crash before the journal: round 2's files and journal entry go. */
    gd_artifact_store st;
    CHECK_OK(gd_artifact_store_open(&st, net.dirs[2]));
    gd_member_journal j;
    CHECK_OK(gd_journal_load(&st, &j));
    j.ahead = false;
    CHECK_OK(gd_journal_save(&st, &j));
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&st, path, sizeof path, GD_ARTIFACT_PAYLOAD, 1, 2, 0));
    remove(path);
    nf_restart(&net, 2);
    df_qround *q = round_2_done_with(&net, 2);
    size_t commits = 0;
    for (size_t i = 0; i < q->n_commitments; i++)
        commits += strcmp(q->commitments[i]->participant, net.d.f.addr[2]) == 0;
    CHECK(commits == 1);
    df_qfree(q);
    nf_free(&net);
}

/* A copier asks the workers for round 2 while round 1 is still open: they
 * hold round 2's payload, transcript and states (trained ahead), and serve
 * none of them (425) before round 2's own windows. Then a worker restarted
 * before round 2 opens has nothing of it in memory, so its commitment is
 * the one stored with the round's files, sent as it was made (its loss
 * figures too, which the files alone do not hold). */
static void test_restart_after_training_ahead(void) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    nf_until(&net, nf_until_round_windows(&net, 1).attest_start);
    CHECK(trained_ahead(&net, 2) == WORKERS);
    const gd_artifact_req_kind kinds[] = {GD_REQ_PAYLOAD, GD_REQ_PAYLOAD_CHUNK,
                                          GD_REQ_TRANSCRIPT, GD_REQ_STATE, GD_REQ_STATE_CHUNK};
    for (int who = 1; who <= WORKERS; who++)
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            gd_artifact_req req = {.kind = kinds[i], .run = 1, .round = 2};
            gd_artifact_answer a;
            unsigned status = 0;
            CHECK(gd_member_serve(net.nodes[who], &req, &a, &status) != GD_OK &&
                  status == 425);
            gd_artifact_answer_free(&a);
        }
    nf_restart(&net, 2);
    df_qround *q = round_2_done_with(&net, 2);
    const Gonka__Diloco__V1__Commitment *c = df_commitment_of(q, net.d.f.addr[2]);
    CHECK(c != NULL && c->loss_first_micro > 0 && c->loss_last_micro > 0);
    df_qfree(q);
    nf_free(&net);
}

/* Plays node CHEATER with a train or withhold seam for three rounds;
 * returns the first round it was caught (UINT64_MAX: never): failed (an
 * upheld FAIL), or a check the class could not fetch (UNAVAILABLE). */
static uint64_t play_cheater(gd_engine_train_fn train, gd_member_withhold_fn withhold) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    net.train[CHEATER] = train;
    net.withhold[CHEATER] = withhold;
    nf_restart(&net, CHEATER);
    net.d.act[CHEATER].cheat = true; /* its slash is expected */
    df_qrun *run = nf_until_round(&net, 3);
    df_qfree(run);
    const char *cheater = net.d.f.addr[CHEATER];
    uint64_t caught = UINT64_MAX;
    for (uint64_t r = 0; r < 3; r++) {
        df_qround *q = df_q_round(&net.d, r);
        CHECK(q->round->phase == PH(DONE));
        bool failed = df_has_str(q->round->failed, q->round->n_failed, cheater);
        bool unavailable = false;
        for (size_t x = 0; x < q->n_assignments; x++)
            unavailable |= strcmp(q->assignments[x]->target, cheater) == 0 &&
                           q->assignments[x]->outcome == OUTCOME(UNAVAILABLE);
        fprintf(stderr, "  round %llu: the cheater %s, %s\n", (unsigned long long)r,
                df_commitment_of(q, cheater) ? "committed" : "out",
                failed ? "failed" : unavailable ? "unavailable" : "not failed");
        failed |= unavailable;
        if (failed && caught == UINT64_MAX)
            caught = r;
        if (failed)
            CHECK(!df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, cheater));
        for (int who = 1; who <= WORKERS; who++)
            if (who != CHEATER)
                CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set,
                                 net.d.f.addr[who]));
        df_qfree(q);
    }
    CHECK(df_slashed(&net.d, CHEATER, NULL, NULL) > 0);
    for (int who = 1; who <= NF_NODES; who++)
        if (who != CHEATER)
            CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    /* Its status counts the slash from its first bond, also once
     * restarted (the journal keeps that bond). */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            nf_restart(&net, CHEATER);
            nf_block(&net);
        }
        json_t *st = gd_member_status_json(net.nodes[CHEATER]);
        CHECK((uint64_t)json_integer_value(json_object_get(st, "slashed_ngonka")) ==
              df_slashed(&net.d, CHEATER, NULL, NULL));
        json_decref(st);
    }
    nf_free(&net);
    return caught;
}

/* A start moved off S_r, from its first overlapped round (round 0 starts
 * from G_0 and is honest). */
static gd_status shifted_when_overlapped(gd_engine *e, gd_trained_round *out, uint64_t round,
                                         const gd_global_state *g, bool fresh, gd_worker_state *w) {
    if (fresh)
        return gd_engine_train(e, out, round, g, fresh, w);
    return gd_adv_shifted_start_train(e, out, round, g, fresh, w);
}

static void test_shifted_start_is_caught(void) {
    CHECK(play_cheater(shifted_when_overlapped, NULL) == 1);
}

static void test_withheld_payload_chunks_are_caught(void) {
    CHECK(play_cheater(NULL, gd_adv_withhold_payload_chunks) == 1);
}

int main(void) {
    RUN_TEST(test_overlap_epoch);
    RUN_TEST(test_slow_workers_yield);
    RUN_TEST(test_restart_while_training_ahead);
    RUN_TEST(test_restart_after_training_ahead);
    RUN_TEST(test_shifted_start_is_caught);
    RUN_TEST(test_withheld_payload_chunks_are_caught);
    return gd_test_finish();
}
