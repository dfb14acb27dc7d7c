/* The round driver (plugin/member/round_driver.c) against the real module: every
 * block, each of eight members builds its view from the module's query
 * answers (plugin/member/chain_view.c), steps the driver, and does exactly the
 * duties it returns (artifacts are the fixture's stand-ins: no training
 * here). Two rounds of epoch 1 and the claims of epoch 1 must follow from
 * the driver alone: every round DONE with every commitment aggregated,
 * every transaction accepted (no duty sent twice, none out of its window),
 * every member paid exactly once; and a member restarted from its journal
 * in the middle of a round sends nothing twice. */
#include <stdlib.h>
#include <string.h>

#include "chain/wire/diloco_rules.h"
#include "plugin/member/chain_view.h"
#include "plugin/member/round_driver.h"
#include "tests/support/diloco_fixture.h"
#include "tests/support/testkit.h"

#define N 8
#define V_KIND_ATTEST 3 /* df_salt's kind for attestations */

typedef struct node {
    gd_member_journal journal;
    uint64_t sealed_upto; /* rounds below this have a sealed secret (what a journal keeps) */
    int claims;
} node;

static df_qrun *g_run;
static df_qround *g_round;

/* The chain's answers for this height (shared by every member's view). */
static void read_chain(df *d) {
    df_qfree(g_run);
    df_qfree(g_round);
    g_round = NULL;
    g_run = df_q_run(d);
    if (g_run->current_round != NULL) {
        d->round = g_run->current_round->index;
        g_round = df_q_round(d, d->round);
        df_qfree(d->r);
        d->r = df_q_round(d, d->round); /* for the fixture's draws */
    }
}

static Gonka__Diloco__V1__QueryRewardsResponse *rewards_of(df *d, int who) {
    Gonka__Diloco__V1__QueryRewardsRequest req = GONKA__DILOCO__V1__QUERY_REWARDS_REQUEST__INIT;
    req.address = d->f.addr[who];
    return df_query(d, GD_DILOCO_QUERY_REWARDS, &req,
                    &gonka__diloco__v1__query_rewards_response__descriptor, NULL);
}

/* Epochs of 100 blocks (the fixture's): epoch 1 is claimed from the claim-
 * money stage of epoch 2 (145) until epoch 3 settles (220). */
static gd_claim_state claims_at(int64_t height) {
    return (gd_claim_state){height >= 145 && height < 220, 1};
}

static const df_assignment *assignment_of(const char *target, uint32_t check) {
    for (size_t i = 0; g_round && i < g_round->n_assignments; i++)
        if (strcmp(g_round->assignments[i]->target, target) == 0 &&
            g_round->assignments[i]->check == check)
            return g_round->assignments[i];
    return NULL;
}

/* Does one action of member `who` into the block's batch (or locally). */
static void perform(df *d, node *nd, int who, const gd_action *a, df_batch *b) {
    const char *me = d->f.addr[who];
    uint8_t secret[32], seal[32], digest[32], salt[32], hash[32];
    switch (a->kind) {
    case GD_ACT_SEAL_SECRET: {
        df_secret(d, secret, who, a->round);
        gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, me, NULL, 0, secret);
        Gonka__Diloco__V1__MsgRandomness m = df_randomness_msg(d, who, a->round, seal, NULL);
        df_batch_add(b, who, GD_DILOCO_MSG_RANDOMNESS, &m);
        nd->sealed_upto = a->round + 1;
        break;
    }
    case GD_ACT_TRAIN: /* the fixture's payload stands in for training */
        nd->journal = (gd_member_journal){.round = a->round, .trained = true};
        break;
    case GD_ACT_COMMIT: {
        Gonka__Diloco__V1__MsgCommitRound m = df_commit_msg(d, who, DF_SEGMENTS);
        df_batch_add(b, who, GD_DILOCO_MSG_COMMIT_ROUND, &m);
        break;
    }
    case GD_ACT_REVEAL_SECRET: {
        df_secret(d, secret, who, a->round);
        Gonka__Diloco__V1__MsgRandomness m = df_randomness_msg(d, who, a->round, NULL, secret);
        df_batch_add(b, who, GD_DILOCO_MSG_RANDOMNESS, &m);
        break;
    }
    case GD_ACT_REPORT: {
        int t = df_index(d, a->target);
        uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint32_t n = df_drawn_chunks(d, chunks, who, t);
        gd_buf proofs[GD_DILOCO_AVAIL_CHUNKS_MAX] = {{0}};
        ProtobufCBinaryData pf[GD_DILOCO_AVAIL_CHUNKS_MAX], lf[GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint8_t leaves[GD_DILOCO_AVAIL_CHUNKS_MAX][32];
        Gonka__Diloco__V1__MsgReportAvailability m =
            df_report_msg(d, who, t, chunks, n, proofs, pf, leaves, lf);
        df_batch_add(b, who, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m);
        for (uint32_t i = 0; i < n; i++)
            gd_buf_free(&proofs[i]);
        break;
    }
    case GD_ACT_CHECK:
    case GD_ACT_REVEAL_VERDICT: {
        const df_assignment *as = assignment_of(a->target, a->check);
        CHECK(as != NULL);
        if (as == NULL)
            return;
        /* A check of its own commitment: its own digest, its own seal kind. */
        bool own = strcmp(a->target, me) == 0;
        int verdict = own ? df_own_answer(d, as, digest) : df_answer(d, who, false, as, digest);
        int kind = own ? GD_SEAL_OWN : GD_SEAL_VERDICT;
        df_salt(d, salt, kind, who, a->round, a->target, a->check);
        gd_diloco_verdict_seal(seal, kind, me, (gd_diloco_verdict)verdict, digest, salt);
        Gonka__Diloco__V1__MsgSubmitVerdict m =
            a->kind == GD_ACT_CHECK
                ? df_verdict_msg(d, who, a->target, a->check, seal, 0, NULL, NULL)
                : df_verdict_msg(d, who, a->target, a->check, NULL, verdict, digest, salt);
        df_batch_add(b, who, GD_DILOCO_MSG_SUBMIT_VERDICT, &m);
        break;
    }
    case GD_ACT_AGGREGATE: /* G_{r+1} from the aggregation set: the fixture's truth */
        nd->journal.round = a->round;
        nd->journal.aggregated = true;
        break;
    case GD_ACT_SEAL_ATTEST:
    case GD_ACT_REVEAL_ATTEST: {
        df_truth(hash, a->round);
        df_salt(d, salt, V_KIND_ATTEST, who, a->round, NULL, 0);
        gd_diloco_seal(seal, GD_SEAL_ATTEST, me, hash, 32, salt);
        Gonka__Diloco__V1__MsgAttestRound m = a->kind == GD_ACT_SEAL_ATTEST
                                                  ? df_attest_msg(d, who, seal, NULL, NULL)
                                                  : df_attest_msg(d, who, NULL, hash, salt);
        df_batch_add(b, who, GD_DILOCO_MSG_ATTEST_ROUND, &m);
        break;
    }
    case GD_ACT_CLAIM: {
        Gonka__Diloco__V1__MsgClaimRewards m = df_claim_msg(d, who, a->epoch);
        df_batch_add(b, who, GD_DILOCO_MSG_CLAIM_REWARDS, &m);
        nd->claims++;
        break;
    }
    default: /* no disputes in an honest run; join and leave are not asked for */
        fprintf(stderr, "member %d: unexpected duty %s\n", who, gd_action_names[a->kind]);
        gd_test_failures++;
        break;
    }
}

/* One block: every member's duties at the next height, in one batch. */
static void step_all(df *d, node *nodes, size_t *actions) {
    read_chain(d);
    int64_t height = d->f.height; /* the state read; the transactions land in the next block */
    df_batch b;
    df_batch_init(&b);
    gd_duty_config cfg = {GD_ROLE_WORKER | GD_ROLE_VALIDATOR, false};
    for (int who = 1; who <= N; who++) {
        Gonka__Diloco__V1__QueryRewardsResponse *rw = rewards_of(d, who);
        gd_claim_state cl = claims_at(height + 1);
        gd_chain_view_buf v;
        CHECK_OK(gd_chain_view_build(&v, d->f.addr[who], height, g_run, g_round, rw, &cl,
                                     nodes[who].sealed_upto > g_run->run->next_round));
        gd_action out[32];
        size_t n = 0;
        CHECK(!gd_round_driver_step(&cfg, &v.view, &nodes[who].journal, out, 32, &n));
        for (size_t i = 0; i < n; i++)
            perform(d, &nodes[who], who, &out[i], &b);
        *actions += n;
        gd_chain_view_free(&v);
        df_qfree(rw);
    }
    uint32_t codes[DF_ACCOUNTS];
    size_t n_tx = b.n_tx;
    int from[DF_ACCOUNTS];
    memcpy(from, b.from, sizeof from);
    if (df_batch_run(d, &b, codes) != 0)
        for (size_t i = 0; i < n_tx; i++)
            if (codes[i] != 0) {
                fprintf(stderr, "height %lld: member %d's duties failed with code %u: %s\n",
                        (long long)d->f.height, from[i], codes[i], d->last_log);
                gd_test_failures++;
            }
}

static void test_driver_plays_epoch(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    df_setup(&d, &k, N, NULL, NULL); /* joined, secrets for round 0 sealed */
    node nodes[DF_ACCOUNTS];
    memset(nodes, 0, sizeof nodes);
    for (int who = 1; who <= N; who++)
        nodes[who].sealed_upto = 1;
    size_t actions = 0;
    while (d.f.height < 200)
        step_all(&d, nodes, &actions);
    /* Rounds 0 and 1 (epoch 1) and 2 and 3 (epoch 2) have run. */
    for (uint64_t r = 0; r < 4; r++) {
        df_qround *q = df_q_round(&d, r);
        CHECK(q->round->phase == GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE);
        CHECK(q->round->n_aggregation_set == N && q->round->n_failed == 0);
        for (size_t i = 0; i < q->n_assignments; i++)
            CHECK(q->assignments[i]->outcome == GONKA__DILOCO__V1__CHECK_OUTCOME__CHECK_OUTCOME_PASSED);
        df_qfree(q);
    }
    df_check_settlement(&d, 1);
    for (int who = 1; who <= N; who++) {
        df_settle s;
        CHECK(df_settled(&d, &s, who, 1) && s.claimed && s.tokens == 2 * DF_TOKENS);
        CHECK(nodes[who].claims == 1);
        CHECK(df_slashed(&d, who, NULL, NULL) == 0);
    }
    CHECK(actions > 0);
    df_qfree(g_run);
    df_qfree(g_round);
    g_run = NULL;
    g_round = NULL;
    df_free(&d);
}

/* A member whose process dies after its commit and report landed restarts
 * with the journal it had fsynced: the chain shows what it sent, so the
 * driver sends none of it again, and the round still ends DONE. */
static void test_restart_sends_nothing_twice(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    df_setup(&d, &k, N, NULL, NULL);
    node nodes[DF_ACCOUNTS];
    memset(nodes, 0, sizeof nodes);
    for (int who = 1; who <= N; who++)
        nodes[who].sealed_upto = 1;
    size_t actions = 0;
    df_open(&d);
    int64_t mid_verify = d.w.verify_start + 1;
    while (d.f.height + 1 < mid_verify + 1)
        step_all(&d, nodes, &actions);
    /* Member 3 "restarts": its journal as saved (trained, round 0), and
     * its memory of sealed secrets as the chain-backed journal keeps it. */
    gd_member_journal saved = nodes[3].journal;
    uint64_t sealed = nodes[3].sealed_upto;
    memset(&nodes[3], 0, sizeof nodes[3]);
    nodes[3].journal = saved;
    nodes[3].sealed_upto = sealed;
    while (d.f.height < d.w.end + 1)
        step_all(&d, nodes, &actions); /* every transaction still accepted */
    df_qround *q = df_q_round(&d, 0);
    CHECK(q->round->phase == GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE);
    CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, d.f.addr[3]));
    df_qfree(q);
    df_qfree(g_run);
    df_qfree(g_round);
    g_run = NULL;
    g_round = NULL;
    df_free(&d);
}

int main(void) {
    RUN_TEST(test_driver_plays_epoch);
    RUN_TEST(test_restart_sends_nothing_twice);
    return gd_test_finish();
}
