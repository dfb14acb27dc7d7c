/* The DiLoCo training module (chain/module/diloco*.c) driven block by block
 * through the application, protocol v2: runs and members, every window edge
 * of the nine windows, double and non-member commits, availability proofs of
 * several chunks and the inclusion set over active weight, sealed and
 * salted verdicts, skipped checks, FAILs upheld and overturned, digest
 * splits, two UNAVAILABLE re-checked, sealed attestations, quorum and void
 * rounds, settlement and claims (at the wrong time, twice, for the wrong
 * epoch), ranks, hardware classes, determinism and export/import, genesis.
 * The attacks of the adversarial review are test_diloco_incentives.c's.
 *
 * tests/support/diloco_fixture.h plays the rounds; every block checks every
 * module's invariants (the module's: its account holds exactly every pool,
 * collateral, bond and unclaimed reward; no reward without an accepted
 * commitment), and a slash of a member whose actor is honest fails the
 * test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/auth.h"
#include "chain/wire/diloco_spec.h"
#include "common/base64.h"
#include "cosmos/base/abci/v1beta1/abci.pb-c.h"
#include "tests/support/diloco_fixture.h"
#include "tests/support/testkit.h"

#define MEMBERS 8 /* accounts 1..8; 0 is the authority, 9.. outsiders */

static uint64_t u64(const char *s) { return strtoull(s, NULL, 10); }

/* ---- the tests ---------------------------------------------------------------------------- */

/* One round end to end with every window edge, then settlement and the
 * claims. Member 8 trains nothing and attests nothing (it still reports and
 * validates); nobody reports member 7, whose commitment has only its own
 * weight. */
static void test_honest_round(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    df_setup(&d, &k, MEMBERS, NULL, NULL);
    /* Only the authority creates runs; joins refused: twice, an unknown
     * run, too little collateral. */
    {
        json_t *sj = df_spec_json(&k);
        Gonka__Diloco__V1__RunSpec *spec = NULL;
        CHECK_OK(gd_diloco_spec_from_json(&spec, sj));
        json_decref(sj);
        Gonka__Diloco__V1__MsgCreateRun create = GONKA__DILOCO__V1__MSG_CREATE_RUN__INIT;
        Cosmos__Base__V1beta1__Coin pool = COSMOS__BASE__V1BETA1__COIN__INIT;
        pool.denom = "ngonka";
        pool.amount = "1000";
        create.authority = d.f.addr[1];
        create.spec = spec;
        create.pool = &pool;
        CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_CREATE_RUN, &create) == GD_DILOCO_ERR_UNAUTHORIZED);
        gd_diloco_spec_free(spec);
        /* Rounds of 9 x 9 = 81 blocks never fit the 78-block Inference
         * phase of the fixture's 100-block epochs: refused at delivery,
         * the pool not taken. */
        df_knobs long_rounds = k;
        long_rounds.window = 9;
        sj = df_spec_json(&long_rounds);
        CHECK_OK(gd_diloco_spec_from_json(&spec, sj));
        json_decref(sj);
        create.authority = d.f.addr[0];
        create.spec = spec;
        CHECK(df_deliver(&d, 0, GD_DILOCO_MSG_CREATE_RUN, &create) == GD_DILOCO_ERR_INVALID);
        gd_diloco_spec_free(spec);
        CHECK(df_balance(&d, 0) == DF_BALANCE - k.pool);
        Cosmos__Base__V1beta1__Coin coin;
        char amount[24];
        Gonka__Diloco__V1__MsgJoinRun j = df_join_msg(&d, 1, DF_CPU, &coin, amount, 20000);
        CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_JOIN_RUN, &j) == GD_DILOCO_ERR_ALREADY_MEMBER);
        j = df_join_msg(&d, 9, DF_CPU, &coin, amount, 20000);
        j.run = 9;
        CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_JOIN_RUN, &j) == GD_DILOCO_ERR_UNKNOWN_RUN);
        j = df_join_msg(&d, 9, DF_CPU, &coin, amount, k.min_collateral - 1);
        CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_JOIN_RUN, &j) == GD_DILOCO_ERR_COLLATERAL);
        CHECK(df_collateral(&d, 1) == DF_COLLATERAL && df_collateral(&d, 9) == UINT64_MAX);
    }
    /* Ranks 0, 1, ... in join order; the refused joins took none. */
    df_qrun *run = df_q_run(&d);
    CHECK(run->run->next_rank == MEMBERS && run->n_members == MEMBERS);
    for (size_t i = 0; i < run->n_members; i++)
        CHECK(run->members[i]->rank == (uint32_t)df_index(&d, run->members[i]->address) - 1);
    /* Rounds open only in the Inference phase of epoch 1 (from height 42 on
     * localnet's clock), so the run waits. */
    CHECK(run->current_round == NULL);
    df_qfree(run);

    d.act[8].no_commit = true;
    d.act[8].attest = DF_SKIP;
    for (int i = 1; i <= MEMBERS; i++)
        d.act[i].skip_report[7] = true;
    df_open(&d);
    CHECK(d.w.train_start == 42);
    /* Early: still training. */
    df_until(&d, d.w.commit_start - 1);
    Gonka__Diloco__V1__MsgCommitRound c1 = df_commit_msg(&d, 1, DF_SEGMENTS);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_COMMIT_ROUND, &c1) == GD_DILOCO_ERR_WINDOW);
    df_commit(&d);
    {
        /* A second commit; one from outside the round; a report before the
         * verify window; a segment count outside H_min..H_max. */
        Gonka__Diloco__V1__MsgCommitRound again = df_commit_msg(&d, 1, DF_SEGMENTS);
        Gonka__Diloco__V1__MsgCommitRound outsider = df_commit_msg(&d, 9, DF_SEGMENTS);
        Gonka__Diloco__V1__MsgCommitRound bad = df_commit_msg(&d, 8, 5);
        uint32_t chunks[2] = {0, 1};
        gd_buf proofs[2] = {{0}};
        ProtobufCBinaryData pf[2], lf[2];
        uint8_t leaves[2][32];
        Gonka__Diloco__V1__MsgReportAvailability early =
            df_report_msg(&d, 2, 1, chunks, 2, proofs, pf, leaves, lf);
        int from[4] = {1, 9, 2, 8};
        const char *urls[4] = {GD_DILOCO_MSG_COMMIT_ROUND, GD_DILOCO_MSG_COMMIT_ROUND,
                               GD_DILOCO_MSG_REPORT_AVAILABILITY, GD_DILOCO_MSG_COMMIT_ROUND};
        const void *msgs[4] = {&again, &outsider, &early, &bad};
        uint32_t codes[4];
        df_deliver_n(&d, 4, from, urls, msgs, codes);
        CHECK(codes[0] == GD_DILOCO_ERR_DUPLICATE);
        CHECK(codes[1] == GD_DILOCO_ERR_NOT_MEMBER);
        CHECK(codes[2] == GD_DILOCO_ERR_WINDOW);
        CHECK(codes[3] == GD_DILOCO_ERR_INVALID);
        gd_buf_free(&proofs[0]);
        gd_buf_free(&proofs[1]);
    }
    df_reveal(&d);
    /* Late. */
    Gonka__Diloco__V1__MsgCommitRound late = df_commit_msg(&d, 8, DF_SEGMENTS);
    CHECK(df_deliver(&d, 8, GD_DILOCO_MSG_COMMIT_ROUND, &late) == GD_DILOCO_ERR_WINDOW);
    /* The verify window's first block fixes the seed and draws the checks. */
    df_until(&d, d.w.verify_start + 1);
    df_refresh(&d);
    CHECK(d.r->round->phase == PH(VERIFY) && d.r->round->beacon.len == 32 &&
          d.r->round->seed.len == 32 && d.r->n_randomness == MEMBERS);
    CHECK(d.r->n_commitments == MEMBERS - 1);
    for (size_t i = 0; i < d.r->n_commitments; i++)
        CHECK(d.r->commitments[i]->tokens == DF_TOKENS &&
              u64(d.r->commitments[i]->report_weight) == 0); /* no reports yet */
    CHECK(d.r->n_assignments == (MEMBERS - 1) * k.checks);
    df_check_draws(&d, d.r);
    /* The first check's first validator skips it. */
    const df_assignment *a0 = d.r->assignments[0];
    int skipper = df_index(&d, a0->validators[0]);
    int skipped = df_index(&d, a0->target);
    d.act[skipper].verdict_on[skipped] = DF_SKIP;
    df_verify(&d);
    {
        /* The same report again; a leaf that is not the one asked for; a
         * report without proofs; one chunk of two; one on itself; one on a
         * member that did not commit. A reveal in the verify window is early. */
        uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint32_t n2 = df_drawn_chunks(&d, chunks, 2, 1);
        CHECK(n2 == k.avail);
        gd_buf proofs[6][GD_DILOCO_AVAIL_CHUNKS_MAX];
        ProtobufCBinaryData pf[6][GD_DILOCO_AVAIL_CHUNKS_MAX], lf[6][GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint8_t leaves[6][GD_DILOCO_AVAIL_CHUNKS_MAX][32];
        memset(proofs, 0, sizeof proofs);
        Gonka__Diloco__V1__MsgReportAvailability dup =
            df_report_msg(&d, 2, 1, chunks, n2, proofs[0], pf[0], leaves[0], lf[0]);
        uint32_t n3 = df_drawn_chunks(&d, chunks, 3, 7);
        Gonka__Diloco__V1__MsgReportAvailability wrong =
            df_report_msg(&d, 3, 7, chunks, n3, proofs[1], pf[1], leaves[1], lf[1]);
        leaves[1][0][0] ^= 1;
        Gonka__Diloco__V1__MsgReportAvailability bare = wrong;
        bare.reporter = d.f.addr[4];
        bare.n_proofs = 0;
        bare.proofs = NULL;
        uint32_t n5 = df_drawn_chunks(&d, chunks, 5, 7);
        Gonka__Diloco__V1__MsgReportAvailability one =
            df_report_msg(&d, 5, 7, chunks, n5, proofs[2], pf[2], leaves[2], lf[2]);
        one.n_proofs = one.n_leaf_hashes = 1;
        uint32_t n6 = df_drawn_chunks(&d, chunks, 6, 6);
        Gonka__Diloco__V1__MsgReportAvailability self =
            df_report_msg(&d, 6, 6, chunks, n6, proofs[3], pf[3], leaves[3], lf[3]);
        uint32_t n7 = df_drawn_chunks(&d, chunks, 7, 1);
        Gonka__Diloco__V1__MsgReportAvailability nobody =
            df_report_msg(&d, 7, 1, chunks, n7, proofs[4], pf[4], leaves[4], lf[4]);
        nobody.target = d.f.addr[8];
        /* The early reveal: from a validator (1 or 8) not reporting here. */
        const df_assignment *ea = NULL;
        int v1 = -1;
        for (size_t x = 0; x < d.r->n_assignments && ea == NULL; x++) {
            int v = df_index(&d, d.r->assignments[x]->validators[0]);
            if ((v == 1 || v == 8) && v != skipper) {
                ea = d.r->assignments[x];
                v1 = v;
            }
        }
        CHECK(ea != NULL);
        if (ea == NULL)
            abort();
        uint8_t dg[32], salt[32];
        df_honest_digest(dg, 0, ea->target, ea->segment, ea->step);
        df_salt(&d, salt, GD_SEAL_VERDICT, v1, 0, ea->target, ea->check);
        Gonka__Diloco__V1__MsgSubmitVerdict early =
            df_verdict_msg(&d, v1, ea->target, ea->check, NULL, V_PASS, dg, salt);
        df_batch b;
        df_batch_init(&b);
        df_batch_add(&b, 2, GD_DILOCO_MSG_REPORT_AVAILABILITY, &dup);
        df_batch_add(&b, 3, GD_DILOCO_MSG_REPORT_AVAILABILITY, &wrong);
        df_batch_add(&b, 4, GD_DILOCO_MSG_REPORT_AVAILABILITY, &bare);
        df_batch_add(&b, 5, GD_DILOCO_MSG_REPORT_AVAILABILITY, &one);
        df_batch_add(&b, 6, GD_DILOCO_MSG_REPORT_AVAILABILITY, &self);
        df_batch_add(&b, 7, GD_DILOCO_MSG_REPORT_AVAILABILITY, &nobody);
        df_batch_add(&b, v1, GD_DILOCO_MSG_SUBMIT_VERDICT, &early);
        uint32_t codes[8];
        df_batch_run(&d, &b, codes);
        CHECK(codes[0] == GD_DILOCO_ERR_DUPLICATE);
        CHECK(codes[1] == GD_DILOCO_ERR_BAD_PROOF);
        CHECK(codes[2] == GD_DILOCO_ERR_BAD_PROOF);
        CHECK(codes[3] == GD_DILOCO_ERR_BAD_PROOF);
        CHECK(codes[4] == GD_DILOCO_ERR_INVALID);
        CHECK(codes[5] == GD_DILOCO_ERR_NO_COMMITMENT);
        CHECK(codes[6] == GD_DILOCO_ERR_WINDOW);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < GD_DILOCO_AVAIL_CHUNKS_MAX; j++)
                gd_buf_free(&proofs[i][j]);
    }
    /* Open: a reveal that differs from its seal (FAIL for the sealed PASS)
     * is refused, then the true reveals. */
    df_until(&d, d.w.open_start);
    {
        const df_assignment *a = d.r->assignments[1];
        int v = df_index(&d, a->validators[0]);
        uint8_t dg[32], salt[32];
        df_honest_digest(dg, 0, a->target, a->segment, a->step);
        df_salt(&d, salt, GD_SEAL_VERDICT, v, 0, a->target, a->check);
        Gonka__Diloco__V1__MsgSubmitVerdict lie =
            df_verdict_msg(&d, v, a->target, a->check, NULL, V_FAIL, dg, salt);
        CHECK(df_deliver(&d, v, GD_DILOCO_MSG_SUBMIT_VERDICT, &lie) == GD_DILOCO_ERR_SEAL);
    }
    df_open_verdicts(&d);
    df_refresh(&d);
    /* Inclusion, at open_start: 7 has only its own eighth of the active
     * weight; every other commitment has all of it. */
    CHECK(u64(d.r->round->active_weight) == MEMBERS * DF_COLLATERAL);
    CHECK(d.r->round->n_inclusion_set == MEMBERS - 2);
    CHECK(!df_has_str(d.r->round->inclusion_set, d.r->round->n_inclusion_set, d.f.addr[7]));
    CHECK(df_commitment_of(d.r, d.f.addr[1])->reports == MEMBERS - 1);
    df_dispute(&d);
    /* The skipper paid the skip slash, once. */
    size_t count = 0;
    CHECK(df_slashed(&d, skipper, "skipped check", &count) == k.skip_slash && count == 1);
    CHECK(df_collateral(&d, skipper) == DF_COLLATERAL - k.skip_slash);
    df_dispute_open(&d);
    df_attest(&d);
    df_refresh(&d);
    CHECK(d.r->round->n_aggregation_set == MEMBERS - 2 && d.r->round->n_failed == 0);
    for (size_t i = 0; i < d.r->n_assignments; i++)
        CHECK(d.r->assignments[i]->outcome == OUTCOME(PASSED));
    /* A revealed attestation in the sealed window is early. */
    {
        uint8_t h[32], salt[32];
        df_truth(h, 0);
        df_salt(&d, salt, GD_SEAL_ATTEST, 1, 0, NULL, 0);
        Gonka__Diloco__V1__MsgAttestRound early = df_attest_msg(&d, 1, NULL, h, salt);
        CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_ATTEST_ROUND, &early) == GD_DILOCO_ERR_WINDOW);
    }
    df_attest_open(&d);
    df_finish(&d);
    uint8_t truth[32];
    df_truth(truth, 0);
    CHECK(d.r->round->phase == PH(DONE));
    CHECK(d.r->round->next_state_hash.len == 32 &&
          memcmp(d.r->round->next_state_hash.data, truth, 32) == 0);
    /* Member 8 attested nothing once a quorum formed: the skip slash. */
    CHECK(df_slashed(&d, 8, "absent attestation", NULL) == k.skip_slash);
    run = df_q_run(&d);
    CHECK(run->run->rounds_aggregated == 1 && memcmp(run->run->state_hash.data, truth, 32) == 0);
    df_qfree(run);

    /* Round 1 (69) is played honestly; a round from 96 would end after the
     * next PoC start (120), so none opens until epoch 2's Inference phase
     * (142). Epoch 2 starts at 120: epoch 1 settles. Claims open at its
     * claim-money stage (145). */
    memset(d.act, 0, sizeof d.act);
    df_play_round(&d);
    df_until(&d, 121);
    Gonka__Diloco__V1__MsgClaimRewards cl = df_claim_msg(&d, 1, 1);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_CLAIM_STAGE);
    df_until(&d, 142);
    run = df_q_run(&d);
    CHECK(run->run->next_round == 2 && run->current_round->windows->train_start == 69);
    CHECK(run->current_round->phase == PH(DONE));
    df_qfree(run);
    df_empty_block(&d); /* block 142 */
    run = df_q_run(&d);
    CHECK(run->run->next_round == 3 && run->current_round->windows->train_start == 142);
    CHECK(run->current_round->epoch == 2);
    df_qfree(run);
    df_until(&d, 146);
    df_check_settlement(&d, 1);
    df_settle s1;
    CHECK(df_settled(&d, &s1, 1, 1));
    /* Two aggregated commitments of 2048 tokens, two winning attestations. */
    CHECK(s1.tokens == 2 * DF_TOKENS && s1.attestations == 2 && !s1.claimed);
    df_settle s7, s8;
    CHECK(df_settled(&d, &s7, 7, 1) && s7.tokens == DF_TOKENS); /* round 1 only */
    CHECK(df_settled(&d, &s8, 8, 1) && s8.tokens == DF_TOKENS && s8.attestations == 1);
    uint64_t before = df_balance(&d, 1);
    cl = df_claim_msg(&d, 1, 2);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_EPOCH);
    cl = df_claim_msg(&d, 1, 1);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == 0);
    CHECK(df_balance(&d, 1) == before + s1.amount);
    CHECK(df_settled(&d, &s1, 1, 1) && s1.claimed);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_CLAIMED);
    /* An outsider has nothing. */
    cl = df_claim_msg(&d, 9, 1);
    CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_NOTHING);
    df_free(&d);
}

/* Two FAILs on different targets: the re-checkers uphold one (the target,
 * which trained wrongly, loses the fixed cheat slash, is suspended and left
 * out of the aggregation; its accusers get their bonds back and are
 * credited) and overturn the other (a false accuser: its bond is burned and
 * its verdict unpaid). Then the attestations split 4 : 4: the round is void
 * and G stays. */
static void test_fail_upheld_and_overturned(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    df_setup(&d, &k, MEMBERS, NULL, NULL);
    const int cheater = 1, honest = 2;
    d.act[cheater].cheat = true;
    df_open(&d);
    df_commit(&d);
    df_reveal(&d);
    df_until(&d, d.w.verify_start + 1);
    df_refresh(&d);
    /* The false accuser: the first validator of the honest target's first
     * check that is not the cheater. */
    int liar = -1;
    for (uint32_t j = 0; j < k.checks && liar < 0; j++) {
        const df_assignment *a = df_assignment_of(d.r, honest, j, &d);
        for (size_t v = 0; a && v < a->n_validators && liar < 0; v++)
            if (df_index(&d, a->validators[v]) != cheater)
                liar = df_index(&d, a->validators[v]);
    }
    CHECK(liar > 0);
    if (liar <= 0)
        abort();
    d.act[liar].verdict_on[honest] = DF_FAIL;
    /* The bonds each accuser will pay: one per FAIL it reveals. */
    uint64_t bonds[DF_ACCOUNTS] = {0};
    size_t lies = 0;
    for (size_t x = 0; x < d.r->n_assignments; x++) {
        const df_assignment *a = d.r->assignments[x];
        for (size_t v = 0; v < a->n_validators; v++) {
            int who = df_index(&d, a->validators[v]);
            if (strcmp(a->target, d.f.addr[cheater]) == 0 ||
                (who == liar && strcmp(a->target, d.f.addr[honest]) == 0))
                bonds[who] += k.fail_bond;
            lies += who == liar && strcmp(a->target, d.f.addr[honest]) == 0;
        }
    }
    uint64_t bal[DF_ACCOUNTS];
    for (int i = 1; i <= MEMBERS; i++)
        bal[i] = df_balance(&d, i);
    df_verify(&d);
    df_open_verdicts(&d);
    for (int i = 1; i <= MEMBERS; i++)
        CHECK(df_balance(&d, i) == bal[i] - bonds[i]);
    df_dispute(&d);
    /* Every check of both targets is disputed, none of the others. */
    for (size_t x = 0; x < d.r->n_assignments; x++) {
        const df_assignment *a = d.r->assignments[x];
        bool accused = strcmp(a->target, d.f.addr[cheater]) == 0 ||
                       (strcmp(a->target, d.f.addr[honest]) == 0 &&
                        df_has_str(a->validators, a->n_validators, d.f.addr[liar]));
        CHECK((a->n_recheckers == df_jury_size(d.r, a)) == accused);
        CHECK(accused || a->outcome == OUTCOME(PASSED));
        for (size_t j = 0; j < a->n_recheckers; j++) {
            CHECK(strcmp(a->recheckers[j], a->target) != 0);
            CHECK(!df_has_str(a->validators, a->n_validators, a->recheckers[j]));
        }
    }
    /* A re-check from someone not re-checking. */
    {
        const df_assignment *a = df_assignment_of(d.r, cheater, 0, &d);
        int outsider = -1;
        for (int i = 1; i <= MEMBERS && outsider < 0; i++)
            if (i != cheater && !df_has_str(a->recheckers, a->n_recheckers, d.f.addr[i]))
                outsider = i;
        uint8_t seal[32] = {1};
        Gonka__Diloco__V1__MsgDispute m = df_dispute_msg(&d, outsider, a->target, 0, seal, 0, NULL,
                                                         NULL);
        CHECK(df_deliver(&d, outsider, GD_DILOCO_MSG_DISPUTE, &m) == GD_DILOCO_ERR_NOT_ASSIGNED);
    }
    df_dispute_open(&d);
    /* Attestations split 4 : 4 of equal weights: no two thirds. */
    for (int i = 5; i <= MEMBERS; i++)
        d.act[i].attest = DF_MINORITY;
    df_attest(&d);
    df_refresh(&d);
    CHECK(d.r->round->n_failed == 1 && strcmp(d.r->round->failed[0], d.f.addr[cheater]) == 0);
    CHECK(d.r->round->n_aggregation_set == MEMBERS - 1);
    CHECK(!df_has_str(d.r->round->aggregation_set, d.r->round->n_aggregation_set,
                      d.f.addr[cheater]));
    CHECK(df_has_str(d.r->round->aggregation_set, d.r->round->n_aggregation_set, d.f.addr[honest]));
    /* The cheater lost the fixed cheat slash. */
    CHECK(df_collateral(&d, cheater) == DF_COLLATERAL - k.cheat_slash);
    CHECK(df_slashed(&d, cheater, "upheld", NULL) == k.cheat_slash);
    for (size_t x = 0; x < d.r->n_assignments; x++) {
        const df_assignment *a = d.r->assignments[x];
        bool on_cheater = strcmp(a->target, d.f.addr[cheater]) == 0;
        CHECK(a->outcome == (on_cheater ? OUTCOME(UPHELD) : OUTCOME(PASSED)));
        for (size_t v = 0; v < a->n_validators; v++) {
            const df_verdict *r = df_verdict_of(d.r, a->target, a->check, a->validators[v]);
            bool lie = df_index(&d, a->validators[v]) == liar && !on_cheater &&
                       strcmp(a->target, d.f.addr[honest]) == 0;
            CHECK(r && !r->bonded);
            CHECK(r && r->faulty == lie && r->credited == !lie);
        }
    }
    /* Upheld: bonds back. Overturned: bonds burned. */
    for (int i = 1; i <= MEMBERS; i++)
        CHECK(df_balance(&d, i) == bal[i] - (i == liar ? lies * k.fail_bond : 0));
    df_attest_open(&d);
    df_finish(&d);
    CHECK(d.r->round->phase == PH(VOID) && d.r->round->next_state_hash.len == 0);
    df_qrun *run = df_q_run(&d);
    uint8_t initial[32];
    memset(initial, 0x22, sizeof initial);
    CHECK(run->run->rounds_aggregated == 0 && memcmp(run->run->state_hash.data, initial, 32) == 0);
    /* The next round opened right after, without the suspended cheater,
     * and attesting the old one is over. */
    CHECK(run->current_round && run->current_round->index == 1);
    CHECK(run->current_round && df_weighted_of(&(df_qround){.round = run->current_round},
                                               d.f.addr[cheater]) == NULL);
    for (size_t i = 0; i < run->n_members; i++)
        if (strcmp(run->members[i]->address, d.f.addr[cheater]) == 0)
            CHECK(run->members[i]->suspended_until == 1 + k.suspend);
    df_qfree(run);
    uint8_t seal[32] = {9};
    d.round = 0;
    Gonka__Diloco__V1__MsgAttestRound again = df_attest_msg(&d, 2, seal, NULL, NULL);
    CHECK(df_deliver(&d, 2, GD_DILOCO_MSG_ATTEST_ROUND, &again) == GD_DILOCO_ERR_UNKNOWN_ROUND);
    /* Nobody was slashed for attesting in a void round; the liar paid the
     * cheat slash for each FAIL the class overturned. */
    for (int i = 5; i <= MEMBERS; i++)
        if (i != liar)
            CHECK(df_slashed(&d, i, NULL, NULL) == 0);
    CHECK(df_slashed(&d, liar, "FAIL overturned", NULL) == lies * k.cheat_slash);
    df_free(&d);
}

/* Double checks: two UNAVAILABLE against a target that served everything
 * no longer fail it alone: re-checkers fetch the data, PASS it, and both
 * accusers lose their bonds. Two PASS digests that differ go to
 * re-checkers, and the validator whose digest they do not share is slashed
 * the fixed cheat slash and goes unpaid. */
static void test_double_checks(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.double_ppm = 1000000;
    k.checks = 1;
    df_setup(&d, &k, MEMBERS, NULL, NULL);
    df_open(&d);
    df_commit(&d);
    df_reveal(&d);
    df_until(&d, d.w.verify_start + 1);
    df_refresh(&d);
    for (size_t i = 0; i < d.r->n_assignments; i++)
        CHECK(d.r->assignments[i]->n_validators == 2 &&
              strcmp(d.r->assignments[i]->validators[0], d.r->assignments[i]->validators[1]) != 0);
    /* Target 1: both validators say UNAVAILABLE. Target 2: its second
     * validator PASSes with a digest it did not compute. */
    const df_assignment *a1 = df_assignment_of(d.r, 1, 0, &d), *a2 = df_assignment_of(d.r, 2, 0, &d);
    int u0 = df_index(&d, a1->validators[0]), u1 = df_index(&d, a1->validators[1]);
    int good = df_index(&d, a2->validators[0]), lazy = df_index(&d, a2->validators[1]);
    d.act[u0].verdict_on[1] = d.act[u1].verdict_on[1] = DF_UNAVAILABLE;
    d.act[lazy].verdict_on[2] = DF_LAZY_PASS;
    uint64_t bal0 = df_balance(&d, u0), bal1 = df_balance(&d, u1);
    df_verify(&d);
    df_open_verdicts(&d);
    CHECK(df_balance(&d, u0) == bal0 - k.fail_bond && df_balance(&d, u1) == bal1 - k.fail_bond);
    df_dispute(&d);
    a1 = df_assignment_of(d.r, 1, 0, &d);
    a2 = df_assignment_of(d.r, 2, 0, &d);
    CHECK(a1->n_recheckers == df_jury_size(d.r, a1) && a2->n_recheckers == df_jury_size(d.r, a2));
    CHECK(a1->n_recheckers >= k.rechecks);
    for (int t = 3; t <= MEMBERS; t++)
        CHECK(df_assignment_of(d.r, t, 0, &d)->n_recheckers == 0);
    df_dispute_open(&d);
    df_attest(&d);
    df_refresh(&d);
    CHECK(d.r->round->n_failed == 0 && d.r->round->n_aggregation_set == MEMBERS);
    CHECK(df_assignment_of(d.r, 1, 0, &d)->outcome == OUTCOME(PASSED));
    CHECK(df_assignment_of(d.r, 2, 0, &d)->outcome == OUTCOME(PASSED));
    const df_verdict *vu0 = df_verdict_of(d.r, d.f.addr[1], 0, d.f.addr[u0]);
    const df_verdict *vu1 = df_verdict_of(d.r, d.f.addr[1], 0, d.f.addr[u1]);
    CHECK(vu0 && vu0->faulty && !vu0->credited && !vu0->bonded);
    CHECK(vu1 && vu1->faulty && !vu1->credited && !vu1->bonded);
    CHECK(df_balance(&d, u0) == bal0 - k.fail_bond && df_balance(&d, u1) == bal1 - k.fail_bond);
    const df_verdict *vg = df_verdict_of(d.r, d.f.addr[2], 0, d.f.addr[good]);
    const df_verdict *vl = df_verdict_of(d.r, d.f.addr[2], 0, d.f.addr[lazy]);
    CHECK(vg && !vg->faulty && vg->credited);
    CHECK(vl && vl->faulty && !vl->credited);
    CHECK(df_slashed(&d, lazy, "PASS digest lost", NULL) == k.cheat_slash);
    CHECK(df_collateral(&d, lazy) == DF_COLLATERAL - k.cheat_slash);
    /* The re-checkers who agreed are credited. */
    a2 = df_assignment_of(d.r, 2, 0, &d);
    for (size_t j = 0; j < a2->n_recheckers; j++) {
        const df_verdict *v = df_verdict_of(d.r, d.f.addr[2], 0, a2->recheckers[j]);
        CHECK(v && v->recheck && v->credited && !v->faulty);
    }
    df_free(&d);
}

/* Checks go to validators of the target's hardware class only, re-checks
 * too: with classes of five and four members (a small-knob run: single
 * checks, one re-checker, classes of three), every validator and
 * re-checker shares its target's class. */
static void test_hardware_classes(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.double_ppm = 0;
    k.rechecks = 1;
    k.min_class = 3;
    k.checks = 3;
    const char *classes[9] = {DF_CPU, DF_CPU, DF_CPU, DF_CPU, DF_CPU,
                              DF_GPU, DF_GPU, DF_GPU, DF_GPU};
    df_setup(&d, &k, 9, classes, NULL);
    /* Every member of the GPU class is accused once by a lazy validator, so
     * that every one of its checks is re-checked. */
    for (int i = 1; i <= 9; i++)
        d.act[i].verdict = DF_UNAVAILABLE;
    df_open(&d);
    df_commit(&d);
    df_reveal(&d);
    df_verify(&d);
    CHECK(d.r->n_assignments == 3 * 9);
    df_open_verdicts(&d);
    df_dispute(&d);
    for (size_t i = 0; i < d.r->n_assignments; i++) {
        const df_assignment *a = d.r->assignments[i];
        bool gpu = df_index(&d, a->target) >= 6;
        CHECK(a->n_validators == 1 && a->n_recheckers == df_jury_size(d.r, a));
        for (size_t j = 0; j < a->n_validators; j++)
            CHECK((df_index(&d, a->validators[j]) >= 6) == gpu &&
                  strcmp(a->validators[j], a->target) != 0);
        for (size_t j = 0; j < a->n_recheckers; j++)
            CHECK((df_index(&d, a->recheckers[j]) >= 6) == gpu);
    }
    df_dispute_open(&d);
    df_attest(&d);
    df_refresh(&d);
    /* All overturned: every target aggregated, every accuser's bonds gone. */
    CHECK(d.r->round->n_aggregation_set == 9);
    for (int i = 1; i <= 9; i++)
        CHECK(df_balance(&d, i) < DF_BALANCE - DF_COLLATERAL);
    df_free(&d);
}

/* Ranks: a late joiner gets the next one (in its response and event, never
 * an earlier member's), and the round snapshot carries every member's. */
static void test_ranks(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    df_setup(&d, &k, MEMBERS, NULL, NULL);
    Cosmos__Base__V1beta1__Coin coin;
    char amount[24];
    Gonka__Diloco__V1__MsgJoinRun j = df_join_msg(&d, 9, DF_CPU, &coin, amount, 12000);
    gd_buf tx = {0};
    gd_tx_outcome out;
    memset(&out, 0, sizeof out);
    CHECK_OK(fix_msg_tx(&d.f, &tx, 9, GD_DILOCO_MSG_JOIN_RUN, &j));
    fix_block(&d.f, &tx, 1, &out);
    CHECK(out.err.code == 0);
    Cosmos__Base__Abci__V1beta1__TxMsgData *md =
        cosmos__base__abci__v1beta1__tx_msg_data__unpack(NULL, out.data.len, out.data.data);
    CHECK(md && md->n_msg_responses == 1);
    if (md && md->n_msg_responses == 1) {
        CHECK_STR_EQ(md->msg_responses[0]->type_url, "/gonka.diloco.v1.MsgJoinRunResponse");
        Gonka__Diloco__V1__MsgJoinRunResponse *r = gonka__diloco__v1__msg_join_run_response__unpack(
            NULL, md->msg_responses[0]->value.len, md->msg_responses[0]->value.data);
        CHECK(r && r->rank == MEMBERS);
        if (r)
            gonka__diloco__v1__msg_join_run_response__free_unpacked(r, NULL);
    }
    if (md)
        cosmos__base__abci__v1beta1__tx_msg_data__free_unpacked(md, NULL);
    bool rank = false, who = false;
    for (size_t i = 0; i < out.events.n; i++)
        for (size_t a = 0; a < out.events.items[i].n_attrs; a++) {
            const gd_event_attr *x = &out.events.items[i].attrs[a];
            if (strcmp(out.events.items[i].type, "diloco_joined") != 0)
                continue;
            rank |= strcmp(x->key, "rank") == 0 && strcmp(x->value, "8") == 0;
            who |= strcmp(x->key, "participant") == 0 && strcmp(x->value, d.f.addr[9]) == 0;
        }
    CHECK(rank && who);
    gd_tx_outcome_free(&out);
    gd_buf_free(&tx);
    d.n = 9;
    d.member[9] = true;
    df_seal_secret(&d, 9, d.round); /* a member takes part once it seals a secret */
    df_open(&d);
    df_qrun *run = df_q_run(&d);
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
            if (strcmp(r->members[i]->address, d.f.addr[9]) == 0)
                CHECK(r->members[i]->rank == MEMBERS && u64(r->members[i]->weight) == 12000);
    }
    df_qfree(run);
    df_free(&d);
}

/* One scenario with an upheld cheat, a false accusation, a skipped check
 * and a member leaving, played twice: the same app hash after every
 * window; and a chain restarted from the export taken at the dispute window
 * finishes the round, and opens the next, with the same hashes. */
static void scenario(df *d) {
    df_knobs k;
    df_knobs_default(&k);
    df_setup(d, &k, MEMBERS, NULL, NULL);
    d->act[3].cheat = true;
    d->act[4].verdict = DF_UNAVAILABLE;
    d->act[5].verdict = DF_SKIP;
    df_open(d);
    df_commit(d);
    Gonka__Diloco__V1__MsgLeaveRun leave = GONKA__DILOCO__V1__MSG_LEAVE_RUN__INIT;
    leave.participant = d->f.addr[6];
    leave.run = 1;
    CHECK(df_deliver(d, 6, GD_DILOCO_MSG_LEAVE_RUN, &leave) == 0);
    df_reveal(d);
    df_verify(d);
    df_open_verdicts(d);
    df_dispute(d);
}

static void scenario_rest(df *d, uint8_t hashes[4][32]) {
    df_dispute_open(d);
    gd_app_hash(d->f.app, hashes[0]);
    df_attest(d);
    gd_app_hash(d->f.app, hashes[1]);
    df_attest_open(d);
    df_finish(d);
    gd_app_hash(d->f.app, hashes[2]);
    df_open(d);
    gd_app_hash(d->f.app, hashes[3]);
}


static void test_determinism_and_export(void) {
    df a, b;
    uint8_t ha[4][32], hb[4][32];
    scenario(&a);
    scenario(&b);
    uint8_t x[32], y[32];
    gd_app_hash(a.f.app, x);
    gd_app_hash(b.f.app, y);
    CHECK(memcmp(x, y, 32) == 0);
    json_t *exported = gd_app_export(b.f.app);
    CHECK(exported != NULL && json_object_get(exported, "diloco") != NULL);
    /* The v2 state travels: the leaving flag, randomness records. */
    json_t *dl = json_object_get(exported, "diloco");
    bool leaving = false;
    json_t *m;
    size_t i;
    json_array_foreach(json_object_get(dl, "members"), i, m)
        leaving |= json_is_true(json_object_get(m, "leaving"));
    CHECK(leaving);
    df_restart_from_export(&b, exported);
    json_decref(exported);
    scenario_rest(&a, ha);
    scenario_rest(&b, hb);
    CHECK(memcmp(ha, hb, sizeof ha) == 0);
    /* The cheater is suspended in the next round, the leaver released. */
    CHECK(!a.in_round[3] && !a.in_round[6] && a.in_round[1]);
    CHECK(df_released(&a, 6, NULL) && df_released(&b, 6, NULL));
    CHECK(df_collateral(&b, 6) == UINT64_MAX);
    /* An export with a suspended member in the next round's time still
     * round-trips. */
    exported = gd_app_export(b.f.app);
    df_restart_from_export(&b, exported);
    json_decref(exported);
    df_free(&a);
    df_free(&b);
}

/* Genesis: a run and its members can be created there (the module account
 * funded through bank's genesis); malformed diloco genesis is refused. */
static void test_genesis(void) {
    app_fixture f;
    fix_init_diloco(&f, NULL);
    char module[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_auth_module_address(module, sizeof module, "diloco"));
    json_t *genesis = json_deep_copy(f.genesis);
    fix_free(&f);
    df_knobs k;
    df_knobs_default(&k);
    json_t *spec = df_spec_json(&k);
    json_t *state = json_pack("{s:{s:s},s:[{s:o,s:s,s:i}],s:[{s:s,s:s,s:s,s:s,s:s,s:i}]}",
                              "params", "authority", "", "runs", "spec", spec, "pool", "7000",
                              "next_rank", 2, "members", "run", "1", "address",
                              "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", "artifact_url",
                              "http://h:1", "hw_class", DF_CPU, "collateral", "3000", "rank", 1);
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
    /* v2 member fields: suspension and leaving. */
    json_t *members = json_object_get(json_object_get(app_state, "diloco"), "members");
    json_t *first = json_array_get(members, 0);
    json_object_set_new(first, "suspended_until", json_string("4"));
    json_object_set_new(first, "leaving", json_true());
    CHECK_OK(gd_app_new(&app, NULL));
    CHECK_OK(gd_app_register_standard(app));
    CHECK_OK(gd_app_init_chain(app, genesis));
    json_t *exported = gd_app_export(app);
    json_t *em = json_array_get(json_object_get(json_object_get(exported, "diloco"), "members"), 0);
    CHECK(json_is_true(json_object_get(em, "leaving")));
    CHECK_STR_EQ(json_string_value(json_object_get(em, "suspended_until")), "4");
    json_decref(exported);
    gd_app_free(app);
    json_object_set_new(first, "leaving", json_string("yes"));
    CHECK_OK(gd_app_new(&app, NULL));
    CHECK_OK(gd_app_register_standard(app));
    CHECK(gd_app_init_chain(app, genesis) != GD_OK);
    gd_app_free(app);
    json_object_del(first, "leaving");
    json_object_del(first, "suspended_until");
    /* Ranks: distinct per run, below the run's next_rank, and given. A
     * second member bonds nothing, so only its rank is wrong. */
    json_t *second = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "run", "1", "address",
                               "gonka10ht9tyks4vh7p5p904t340cr9nvahy7uhvqtp8", "artifact_url",
                               "http://h:2", "hw_class", DF_CPU, "collateral", "0", "rank", 0);
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
    json_object_set_new(json_array_get(runs, 0), "pool", json_string("7000"));
    /* A v1 spec (fractional slashes, seven windows, no classes) is refused. */
    json_t *spec2 = json_object_get(json_array_get(runs, 0), "spec");
    json_object_set_new(spec2, "slash_ppm", json_integer(500000));
    CHECK_OK(gd_app_new(&app, NULL));
    CHECK_OK(gd_app_register_standard(app));
    CHECK(gd_app_init_chain(app, genesis) != GD_OK);
    gd_app_free(app);
    /* Unknown keys, a member of a missing run, a bad spec, a raw record of
     * an unknown kind. */
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
 * nine two-block windows end before block 20), with the exact total, and
 * the chain keeps going with every invariant holding. */
static void test_huge_collateral(void) {
    app_fixture f;
    fix_init_diloco(&f, NULL);
    char module[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_auth_module_address(module, sizeof module, "diloco"));
    df_knobs k;
    df_knobs_default(&k);
    k.window = 2;
    json_t *spec = df_spec_json(&k);
    json_t *members = json_array();
    for (int i = 1; i <= 3; i++)
        json_array_append_new(members, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "run", "1",
                                                 "address", f.addr[i], "artifact_url",
                                                 "http://h", "hw_class", DF_CPU, "collateral",
                                                 "9000000000000000000", "rank", i - 1));
    /* Each member sealed a secret for round 0 (raw records, key 0x04 0x0d
     * run round addr): members take part only in rounds they sealed for. */
    json_t *records = json_array();
    for (int i = 1; i <= 3; i++) {
        uint8_t key[2 + 8 + 8 + 1 + 64], seal[32], value[128];
        size_t alen = strlen(f.addr[i]), klen = 0;
        key[klen++] = 0x04;
        key[klen++] = 0x0d;
        for (int b = 0; b < 16; b++) /* BE64 run 1, BE64 round 0 */
            key[klen++] = b == 7 ? 1 : 0;
        key[klen++] = (uint8_t)alen;
        memcpy(key + klen, f.addr[i], alen);
        klen += alen;
        memset(seal, i, sizeof seal);
        Gonka__Diloco__V1__RandomnessRecord rec = GONKA__DILOCO__V1__RANDOMNESS_RECORD__INIT;
        rec.member = f.addr[i];
        rec.seal = (ProtobufCBinaryData){32, seal};
        size_t vlen = gonka__diloco__v1__randomness_record__pack(&rec, value);
        char k64[128], v64[256];
        gd_base64_encode(k64, key, klen);
        gd_base64_encode(v64, value, vlen);
        json_array_append_new(records, json_pack("{s:s,s:s}", "key", k64, "value", v64));
    }
    json_t *genesis = json_deep_copy(f.genesis);
    json_t *app_state = json_object_get(genesis, "app_state");
    json_object_set_new(app_state, "diloco",
                        json_pack("{s:{s:s},s:[{s:o,s:s,s:i}],s:o,s:o}", "params", "authority",
                                  f.addr[0], "runs", "spec", spec, "pool", "1000", "next_rank", 3,
                                  "members", members, "records", records));
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
    Gonka__Diloco__V1__QueryRunRequest req = GONKA__DILOCO__V1__QUERY_RUN_REQUEST__INIT;
    req.run = 1;
    uint8_t buf[64];
    size_t n = gonka__diloco__v1__query_run_request__pack(&req, buf);
    gd_buf resp = {0};
    gd_abci_error err;
    CHECK_OK(gd_app_query(f.app, GD_DILOCO_QUERY_RUN, buf, n, &resp, &err));
    df_qrun *run = gonka__diloco__v1__query_run_response__unpack(NULL, resp.len, resp.data);
    gd_buf_free(&resp);
    CHECK(run && run->current_round != NULL);
    if (run && run->current_round)
        CHECK_STR_EQ(run->current_round->total_weight, "27000000000000000000");
    df_qfree(run);
    /* Eighteen idle blocks: the round goes void, and every idle member pays
     * fixed slashes, not a share of 9 * 10^18, for each duty it skipped: the
     * withhold slash for its sealed secret, the skip slash for its idle
     * round. */
    while (f.height < 20)
        fix_block(&f, NULL, 0, NULL);
    Gonka__Diloco__V1__QueryRoundRequest rr = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
    rr.run = 1;
    rr.round = 0;
    n = gonka__diloco__v1__query_round_request__pack(&rr, buf);
    CHECK_OK(gd_app_query(f.app, GD_DILOCO_QUERY_ROUND, buf, n, &resp, &err));
    df_qround *r = gonka__diloco__v1__query_round_response__unpack(NULL, resp.len, resp.data);
    gd_buf_free(&resp);
    CHECK(r && r->round && r->round->phase == PH(VOID));
    for (size_t i = 0; r && r->round && i < r->round->n_members; i++)
        CHECK(r->round->members[i]->skip_slashed);
    df_qfree(r);
    n = gonka__diloco__v1__query_run_request__pack(&req, buf);
    CHECK_OK(gd_app_query(f.app, GD_DILOCO_QUERY_RUN, buf, n, &resp, &err));
    run = gonka__diloco__v1__query_run_response__unpack(NULL, resp.len, resp.data);
    gd_buf_free(&resp);
    char left[24];
    snprintf(left, sizeof left, "%llu",
             (unsigned long long)(9000000000000000000ull - k.skip_slash - k.withhold_slash));
    for (size_t i = 0; run && i < run->n_members; i++)
        CHECK_STR_EQ(run->members[i]->collateral, left);
    df_qfree(run);
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
