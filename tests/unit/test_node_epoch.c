/* Nodes (plugin/member.h) play a whole epoch of a run on a test chain with
 * nothing fabricated: three workers and two validators join by themselves,
 * train every round on the tiny model, commit real payloads and
 * transcripts, fetch and prove each other's payloads, re-execute the drawn
 * segments, aggregate exactly the chain's set and attest, then claim.
 * Every round must end DONE, every node's own G must be the agreed state
 * hash, every settle amount the settlement rule's and claimed once, no
 * transaction refused and nobody slashed; a worker restarted from its
 * state directory in the middle of a round sends nothing twice; after a
 * VOID round the next one starts from the unchanged G, also for a node
 * restarted in between. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin/round_driver.h"
#include "tests/testkit.h"
#include "tests/unit/node_fixture.h"

#define NODES 5

static const unsigned g_roles[NODES] = {GD_NODE_WORKER, GD_NODE_WORKER, GD_NODE_WORKER,
                                        GD_NODE_VALIDATOR, GD_NODE_VALIDATOR};

static void knobs(df_knobs *k) {
    df_knobs_default(k);
    k->checks = 2;
    k->double_ppm = 500000;
    k->rechecks = 1;
    k->min_class = 4; /* 1 + two validators of a double check + one re-checker */
}

/* Every DONE round's next state is every node's own G after it. */
static void check_states(nf_net *net, uint64_t round) {
    df_qround *q = df_q_round(&net->d, round);
    CHECK(q->round->phase == PH(DONE));
    CHECK(q->round->n_failed == 0);
    CHECK(q->round->n_aggregation_set == 3);
    CHECK(q->round->next_state_hash.len == 32);
    for (size_t i = 0; i < q->n_assignments; i++)
        CHECK(q->assignments[i]->outcome == OUTCOME(PASSED));
    for (size_t i = 0; i < q->n_attestations; i++)
        CHECK(memcmp(q->attestations[i]->next_state_hash.data, q->round->next_state_hash.data,
                     32) == 0);
    df_qfree(q);
}

static void test_nodes_play_epoch(void) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    nf_setup(&net, &k, NODES, g_roles);
    double loss0 = NAN;
    while (net.d.f.height < 200) {
        nf_block(&net);
        if (isnan(loss0))
            loss0 = gd_member_eval_loss(net.nodes[1], 4);
    }
    df_qrun *run = df_q_run(&net.d);
    CHECK(run->current_round != NULL);
    uint64_t rounds = run->current_round ? run->current_round->index : 0;
    df_qfree(run);
    fprintf(stderr, "  current round %llu\n", (unsigned long long)rounds);
    CHECK(rounds >= 3);
    for (uint64_t r = 0; r <= rounds; r++)
        check_states(&net, r);
    /* Each node's own G is the chain's: the last round's next state. */
    df_qround *cur = df_q_round(&net.d, rounds);
    for (int who = 1; who <= NODES; who++) {
        uint64_t gr = 0;
        uint8_t hash[32];
        CHECK(gd_member_global(net.nodes[who], &gr, hash));
        CHECK(gr == rounds + 1);
        CHECK(memcmp(hash, cur->round->next_state_hash.data, 32) == 0);
    }
    df_qfree(cur);
    df_check_settlement(&net.d, 1);
    for (int who = 1; who <= NODES; who++) {
        df_settle s;
        CHECK(df_settled(&net.d, who, 1, &s) && s.claimed && s.amount > 0);
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
        json_t *st = gd_member_status_json(net.nodes[who]);
        CHECK((uint64_t)json_integer_value(json_object_get(st, "rewards_claimed_ngonka")) ==
              s.amount);
        json_decref(st);
    }
    CHECK(net.refused == 0);
    double loss1 = gd_member_eval_loss(net.nodes[1], 4);
    fprintf(stderr, "  %llu rounds, %zu duties, eval loss %.4f -> %.4f\n",
            (unsigned long long)rounds, net.duties, loss0, loss1);
    CHECK(loss1 < loss0);
    nf_free(&net);
}

/* A worker that dies right after its commit landed restarts from its state
 * directory: it sends nothing twice, still serves what it committed, and
 * its round completes with its payload aggregated. */
static void test_restart_after_commit(void) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    nf_setup(&net, &k, NODES, g_roles);
    df_qrun *run = NULL;
    for (;;) {
        nf_block(&net);
        df_qfree(run);
        run = df_q_run(&net.d);
        if (run->current_round && run->current_round->index == 1)
            break;
    }
    uint64_t round = 1;
    int64_t reveal = run->current_round->windows->reveal_start;
    int64_t end = run->current_round->windows->end;
    df_qfree(run);
    nf_until(&net, reveal); /* commitments are in */
    df_qround *q = df_q_round(&net.d, round);
    CHECK(df_commitment_of(q, net.d.f.addr[2]) != NULL);
    df_qfree(q);
    nf_restart(&net, 2);
    nf_until(&net, end + 1);
    q = df_q_round(&net.d, round);
    CHECK(q->round->phase == PH(DONE));
    CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, net.d.f.addr[2]));
    df_qfree(q);
    CHECK(net.refused == 0);
    CHECK(df_slashed(&net.d, 2, NULL, NULL) == 0);
    nf_free(&net);
}

/* A round whose attestations never land is VOID and G stays as it was:
 * the next round starts from the G every node holds for the VOID round
 * (which nobody stores under the next round's index), and a worker
 * restarted in between finds it in its store. That round ends DONE with
 * every worker aggregated. */
static void test_after_void_round(void) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    nf_setup(&net, &k, NODES, g_roles);
    df_qrun *run = NULL;
    for (;;) {
        nf_block(&net);
        df_qfree(run);
        run = df_q_run(&net.d);
        if (run->current_round && run->current_round->index == 1)
            break;
    }
    int64_t attest = run->current_round->windows->attest_start;
    int64_t end = run->current_round->windows->end;
    df_qfree(run);
    run = NULL;
    nf_until(&net, attest); /* the aggregation set is fixed at attest start */
    net.censor = true;      /* no seal or reveal of an attestation lands */
    nf_until(&net, end + 1);
    net.censor = false;
    df_qround *q1 = df_q_round(&net.d, 1);
    CHECK(q1->round->phase == PH(VOID));
    CHECK(q1->round->n_aggregation_set == 3);
    nf_restart(&net, 2);
    for (;;) {
        nf_block(&net);
        df_qfree(run);
        run = df_q_run(&net.d);
        if (run->current_round && run->current_round->index == 2)
            break;
    }
    end = run->current_round->windows->end;
    df_qfree(run);
    nf_until(&net, end + 1);
    df_qround *q2 = df_q_round(&net.d, 2);
    CHECK(memcmp(q2->round->start_state_hash.data, q1->round->start_state_hash.data, 32) == 0);
    CHECK(q2->round->phase == PH(DONE));
    CHECK(q2->round->n_aggregation_set == 3);
    df_qfree(q2);
    df_qfree(q1);
    CHECK(net.refused == 0);
    for (int who = 1; who <= NODES; who++)
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    nf_free(&net);
}

/* A copier asks a worker for its payload as soon as it is committed, to
 * commit a near-copy before the commit window closes; a lazy worker asks
 * for a peer's states to know the drawn segment early. Both get 425 until
 * the window that makes the artifact public: the payload once no
 * commitment can land (reveal_start - 1), the transcript and states once
 * the seed is fixed (verify_start). */
static void test_nothing_served_early(void) {
    nf_net net;
    df_knobs k;
    knobs(&k);
    nf_setup(&net, &k, NODES, g_roles);
    df_qrun *run = NULL;
    for (;;) {
        nf_block(&net);
        df_qfree(run);
        run = df_q_run(&net.d);
        if (run->current_round && net.d.f.height >= run->current_round->windows->commit_start)
            break;
    }
    const Gonka__Diloco__V1__RoundWindows *w = run->current_round->windows;
    int64_t reveal = w->reveal_start, verify = w->verify_start;
    gd_artifact_req pay = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 0};
    gd_artifact_req state = {.kind = GD_REQ_STATE, .run = 1, .round = 0, .leaf = 0};
    gd_artifact_req transcript = {.kind = GD_REQ_TRANSCRIPT, .run = 1, .round = 0};
    gd_artifact_answer a;
    unsigned status = 0;
    for (; net.d.f.height < verify; nf_block(&net)) {
        gd_status s = gd_member_serve(net.nodes[1], &pay, &a, &status);
        if (net.d.f.height < reveal - 1)
            CHECK(s != GD_OK && status == 425);
        gd_artifact_answer_free(&a);
        CHECK(gd_member_serve(net.nodes[1], &state, &a, &status) != GD_OK && status == 425);
        CHECK(gd_member_serve(net.nodes[1], &transcript, &a, &status) != GD_OK &&
              status == 425);
    }
    nf_block(&net); /* the member's clock reaches verify_start */
    CHECK_OK(gd_member_serve(net.nodes[1], &pay, &a, &status));
    gd_artifact_answer_free(&a);
    CHECK_OK(gd_member_serve(net.nodes[1], &state, &a, &status));
    CHECK(status == 200 && a.path[0] != '\0');
    gd_artifact_answer_free(&a);
    df_qfree(run);
    CHECK(net.refused == 0);
    nf_free(&net);
}

int main(void) {
    RUN_TEST(test_nodes_play_epoch);
    RUN_TEST(test_restart_after_commit);
    RUN_TEST(test_after_void_round);
    RUN_TEST(test_nothing_served_early);
    return gd_test_finish();
}
