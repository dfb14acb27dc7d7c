/* Verification v3: the red-team review's attacks on the checks, played
 * through the chain (tests/support/diloco_fixture.h) as rational cheaters
 * would play them under the run's defaults, and the promises the rules now
 * keep (docs/verification.md, "The incentive model"):
 * - no coalition below a third of a class's weight can make an honest
 *   member lose money (the class decides a dispute, by weight, and an
 *   UNAVAILABLE never leads to a cheat slash by itself);
 * - a member with an upheld cheat in an epoch forfeits the epoch's rewards.
 * Each test asserts the promise; against the rules before v3 each of them
 * fails (the attack worked). Withheld checkpoints (an UNAVAILABLE class
 * is no cheat) and skips priced per duty are in test_diloco_incentives.
 *
 * The run (df_knobs_default): ten members of one class with 20000 bonded
 * each, two checks per commitment, double checks half the time, juries of
 * at least three, cheat slash 9000, skip slash 200, fail bond 1000. */
#include <stdlib.h>
#include <string.h>

#include "chain/wire/diloco_rules.h"
#include "tests/support/diloco_fixture.h"
#include "tests/support/testkit.h"

#define N 10

/* The run of the header's comment: ten members, the default knobs. */
static void setup(df *d, df_knobs *k) {
    df_knobs_default(k);
    df_setup(d, k, N, NULL, NULL);
}

static bool is_colluder(int who, const int *colluders, int n) {
    for (int i = 0; i < n; i++)
        if (colluders[i] == who)
            return true;
    return false;
}

/* The re-checkers the rules before v3 drew for a disputed check: three,
 * weighted, from the seed fixed at verify start ("gd-recheck", the
 * purpose "recheck"), among the class's active members less the target
 * and the validators. A coalition computes this before it seals. Returns
 * how many of them are colluders. */
static int predicted_colluders(const df *d, const df_assignment *a, const int *colluders,
                               int n_colluders) {
    const Gonka__Diloco__V1__Round *r = d->r->round;
    uint8_t rnd[32];
    gd_diloco_purpose(rnd, r->seed.data, "recheck");
    const char *addr[DF_ACCOUNTS];
    uint64_t weight[DF_ACCOUNTS];
    uint32_t n = 0;
    for (size_t i = 0; i < r->n_members; i++) {
        const Gonka__Diloco__V1__WeightedMember *m = r->members[i];
        if (!m->active || strcmp(m->address, a->target) == 0 ||
            df_has_str(a->validators, a->n_validators, m->address))
            continue;
        addr[n] = m->address;
        weight[n++] = strtoull(m->weight, NULL, 10);
    }
    int got = 0;
    for (uint32_t k = 0; k < 3 && n > 0; k++) {
        uint32_t at = gd_diloco_draw_member("gd-recheck", rnd, a->target, a->check, k, weight, n);
        got += is_colluder(df_index(d, addr[at]), colluders, n_colluders);
        memmove(&addr[at], &addr[at + 1], (n - at - 1) * sizeof *addr);
        memmove(&weight[at], &weight[at + 1], (n - at - 1) * sizeof *weight);
        n--;
    }
    return got;
}

/* Attack 1, risk-free framing: three colluders of ten equal members
 * (q = 0.3) accuse an honest worker FAIL only where they predict a
 * majority of the re-checkers, and those re-check FAIL too. Before v3 the
 * predicted re-checkers were the drawn ones and every such accusation was
 * upheld: the honest worker paid the cheat slash and was suspended.
 * Promise: a dispute is decided by the class's weight, so the colluders'
 * FAILs (under a third of it) never uphold anything; the honest target is
 * aggregated and never slashed; every colluding FAIL pays the cheat slash. */
static void test_framing_coalition_fails(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    d.watch_honest = false; /* asserted below, after the attack ran */
    const int colluders[3] = {2, 5, 9};
    int attempts = 0;
    for (int round = 0; round < 4; round++) {
        df_to_draws(&d);
        for (int c = 0; c < 3; c++)
            memset(d.act[colluders[c]].verdict_on, 0, sizeof d.act[0].verdict_on),
                memset(d.act[colluders[c]].recheck_on, 0, sizeof d.act[0].recheck_on);
        bool framed[DF_ACCOUNTS] = {false};
        for (size_t x = 0; x < d.r->n_assignments; x++) {
            const df_assignment *a = d.r->assignments[x];
            int t = df_index(&d, a->target);
            if (t < 0 || is_colluder(t, colluders, 3))
                continue;
            int accuser = -1;
            for (size_t v = 0; v < a->n_validators; v++)
                if (is_colluder(df_index(&d, a->validators[v]), colluders, 3))
                    accuser = df_index(&d, a->validators[v]);
            if (accuser < 0 || 2 * predicted_colluders(&d, a, colluders, 3) <= 3)
                continue;
            d.act[accuser].verdict_on[t] = DF_FAIL;
            for (int c = 0; c < 3; c++)
                d.act[colluders[c]].recheck_on[t] = DF_FAIL;
            framed[t] = true;
            attempts++;
        }
        df_to_juries(&d);
        df_rest_of_round(&d);
        for (int t = 1; t <= N; t++) {
            if (!framed[t])
                continue;
            CHECK(!df_has_str(d.r->round->failed, d.r->round->n_failed, d.f.addr[t]));
            CHECK(df_has_str(d.r->round->aggregation_set, d.r->round->n_aggregation_set,
                             d.f.addr[t]));
        }
    }
    CHECK(attempts > 0); /* the seeds gave the coalition its chances */
    for (int i = 1; i <= N; i++)
        if (!is_colluder(i, colluders, 3))
            CHECK(df_slashed(&d, i, NULL, NULL) == 0);
    uint64_t lost = 0;
    for (int c = 0; c < 3; c++)
        lost += df_slashed(&d, colluders[c], "FAIL", NULL);
    CHECK(lost >= (uint64_t)attempts * k.cheat_slash);
    df_free(&d);
}

/* What a majority of UNAVAILABLE does instead: three colluders accuse an
 * honest worker UNAVAILABLE and re-check UNAVAILABLE. Promise: the data
 * was there for the rest of the class, so the check passes; the accuser's
 * bond burns, the colluding jurors' re-checks are skips, and the honest
 * target is aggregated and never slashed. */
static void test_unavailable_coalition_cannot_grief(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    d.watch_honest = false;
    const int colluders[3] = {2, 5, 9};
    df_to_draws(&d);
    int t = -1, accuser = -1;
    for (size_t x = 0; x < d.r->n_assignments && t < 0; x++) {
        const df_assignment *a = d.r->assignments[x];
        int target = df_index(&d, a->target), v = df_index(&d, a->validators[0]);
        if (!is_colluder(target, colluders, 3) && is_colluder(v, colluders, 3))
            t = target, accuser = v;
    }
    CHECK(t > 0);
    if (t < 0)
        abort();
    d.act[accuser].verdict_on[t] = DF_UNAVAILABLE;
    for (int c = 0; c < 3; c++)
        d.act[colluders[c]].recheck_on[t] = DF_UNAVAILABLE;
    uint64_t before = df_balance(&d, accuser);
    df_to_juries(&d);
    df_rest_of_round(&d);
    CHECK(df_has_str(d.r->round->aggregation_set, d.r->round->n_aggregation_set, d.f.addr[t]));
    CHECK(df_slashed(&d, t, NULL, NULL) == 0);
    CHECK(df_balance(&d, accuser) == before - k.fail_bond);
    for (int c = 0; c < 3; c++)
        if (colluders[c] != accuser)
            CHECK(df_slashed(&d, colluders[c], "re-check", NULL) > 0);
    df_free(&d);
}

/* Attack 4, late serving: a worker answered 404 for its states in the
 * verify window and served them from dispute start; its honest validators
 * answered UNAVAILABLE, the jury fetched and passed, and the validators
 * lost their bonds. Promise: the reporters' state samples show the states
 * were not served in time, so each validator gets its bond back and the
 * late server pays the skip slash for each such check (and is still
 * aggregated: its training was right). No honest member loses anything
 * (d.watch_honest stays on). */
static void test_late_server_pays(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    const int late = 4;
    d.act[late].serve_late = true;
    uint64_t before[DF_ACCOUNTS] = {0};
    for (int i = 1; i <= N; i++)
        before[i] = df_balance(&d, i);
    df_to_draws(&d);
    size_t checks = 0;
    int validators[2 * DF_ACCOUNTS], n_validators = 0;
    for (size_t x = 0; x < d.r->n_assignments; x++) {
        const df_assignment *a = d.r->assignments[x];
        if (df_index(&d, a->target) != late)
            continue;
        checks++;
        for (size_t v = 0; v < a->n_validators; v++)
            validators[n_validators++] = df_index(&d, a->validators[v]);
    }
    CHECK(checks > 0 && n_validators > 0);
    df_to_juries(&d);
    df_rest_of_round(&d);
    const Gonka__Diloco__V1__Commitment *c = df_commitment_of(d.r, d.f.addr[late]);
    CHECK(c != NULL && !c->states_served && c->state_reports == 0);
    for (int i = 0; i < n_validators; i++)
        CHECK(df_balance(&d, validators[i]) == before[validators[i]]);
    size_t count = 0;
    CHECK(df_slashed(&d, late, "after the verify window", &count) == checks * k.skip_slash);
    CHECK(count == checks);
    CHECK(df_slashed(&d, late, "FAIL", NULL) == 0);
    CHECK(df_has_str(d.r->round->aggregation_set, d.r->round->n_aggregation_set,
                     d.f.addr[late]));
    /* An honest worker's commitment is served: every reporter sampled it. */
    const Gonka__Diloco__V1__Commitment *h = df_commitment_of(d.r, d.f.addr[1]);
    CHECK(h != NULL && h->states_served && h->state_reports == N - 1);
    df_free(&d);
}

/* A state sample the chain did not draw, or that proves nothing, is
 * refused like a bad payload proof (code 12); half a sample is malformed
 * (code 2); a report without one still counts for the payload. */
static void test_state_sample_refusals(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    df_to_draws(&d);
    const int target = 3;
    const int from[3] = {2, 6, 7};
    gd_buf proofs[3][GD_DILOCO_AVAIL_CHUNKS_MAX];
    ProtobufCBinaryData pf[3][GD_DILOCO_AVAIL_CHUNKS_MAX], lf[3][GD_DILOCO_AVAIL_CHUNKS_MAX];
    uint8_t leaves[3][GD_DILOCO_AVAIL_CHUNKS_MAX][32];
    uint32_t nc[3];
    memset(proofs, 0, sizeof proofs);
    Gonka__Diloco__V1__MsgReportAvailability m[3];
    for (int i = 0; i < 3; i++) {
        uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
        nc[i] = df_drawn_chunks(&d, chunks, from[i], target);
        m[i] = df_report_msg(&d, from[i], target, chunks, nc[i], proofs[i], pf[i], leaves[i],
                             lf[i]);
    }
    /* Reporter 2 sends reporter 5's sample: drawn for someone else. Equal
     * draws for the two would make this no test, so the test first asks
     * that they differ in this seed. */
    const uint32_t segs = df_commitment_of(d.r, d.f.addr[target])->segment_count;
    gd_state_sample a, b;
    gd_state_sample_draw(&a, d.r->round->verify_randomness.data, d.f.addr[target],
                         d.f.addr[2], segs);
    gd_state_sample_draw(&b, d.r->round->verify_randomness.data, d.f.addr[target], d.f.addr[5],
                         segs);
    CHECK(a.leaf != b.leaf || a.array != b.array || a.pick % DF_CHUNKS != b.pick % DF_CHUNKS);
    df_state_sample s[3];
    df_state_sample_add(&d, 5, target, &m[0], &s[0]);
    /* Reporter 6: its own sample with a flipped leaf hash. */
    df_state_sample_add(&d, 6, target, &m[1], &s[1]);
    s[1].chunk_leaf[0] ^= 1;
    /* Reporter 7: half a sample. */
    df_state_sample_add(&d, 7, target, &m[2], &s[2]);
    m[2].state_chunk_proof = (ProtobufCBinaryData){0, NULL};
    const char *url[3] = {GD_DILOCO_MSG_REPORT_AVAILABILITY, GD_DILOCO_MSG_REPORT_AVAILABILITY,
                          GD_DILOCO_MSG_REPORT_AVAILABILITY};
    const void *msg[3] = {&m[0], &m[1], &m[2]};
    uint32_t codes[3];
    df_deliver_n(&d, 3, from, url, msg, codes);
    CHECK(codes[0] == GD_DILOCO_ERR_BAD_PROOF);
    CHECK(codes[1] == GD_DILOCO_ERR_BAD_PROOF);
    CHECK(codes[2] == GD_DILOCO_ERR_INVALID);
    /* Reporter 2's own sample counts, with its payload. */
    df_state_sample_free(&s[0]);
    df_state_sample_add(&d, 2, target, &m[0], &s[0]);
    uint32_t code = df_deliver(&d, 2, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m[0]);
    CHECK(code == 0);
    for (int i = 0; i < 3; i++) {
        df_state_sample_free(&s[i]);
        for (uint32_t c = 0; c < nc[i]; c++)
            gd_buf_free(&proofs[i][c]);
    }
    df_refresh(&d);
    const Gonka__Diloco__V1__Commitment *c = df_commitment_of(d.r, d.f.addr[target]);
    CHECK(c != NULL && c->state_reports == 1 && c->reports == 1);
    df_free(&d);
}

/* Attack 2, a lazy PASS on a single check: whether a check is double was
 * public at verify start, and a PASS with no partner was compared with
 * nothing, so a validator that answered every single check PASS without
 * re-executing was paid in full at no risk. Promise: the target's own
 * digest (its segment's trace, kept while it trained) meets every PASS;
 * the made-up digest goes to the class and loses: the cheat slash, no
 * credit; the honest target is aggregated. */
static void test_lazy_single_pass_caught(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.double_ppm = 0;
    df_setup(&d, &k, N, NULL, NULL);
    df_to_draws(&d);
    const df_assignment *a = d.r->assignments[0];
    const int t = df_index(&d, a->target), lazy = df_index(&d, a->validators[0]);
    const uint32_t check = a->check;
    CHECK(a->n_validators == 1);
    d.act[lazy].verdict = DF_LAZY_PASS; /* every check it holds */
    int held = 0;
    for (size_t x = 0; x < d.r->n_assignments; x++)
        held += df_has_str(d.r->assignments[x]->validators, d.r->assignments[x]->n_validators,
                           d.f.addr[lazy]);
    df_to_juries(&d);
    a = df_assignment_of(d.r, t, check, &d);
    CHECK(a->n_recheckers == df_jury_size(d.r, a)); /* disputed by the target's own digest */
    df_rest_of_round(&d);
    size_t slashes = 0; /* one per check it held (its collateral may run out first) */
    CHECK(df_slashed(&d, lazy, "PASS digest lost", &slashes) > 0 && slashes == (size_t)held);
    CHECK(df_slashed(&d, t, NULL, NULL) == 0);
    CHECK(df_has_str(d.r->round->aggregation_set, d.r->round->n_aggregation_set, d.f.addr[t]));
    const df_verdict *v = df_verdict_of(d.r, d.f.addr[t], check, d.f.addr[lazy]);
    CHECK(v && v->faulty && !v->credited);
    CHECK(df_has_str(d.r->round->cheaters, d.r->round->n_cheaters, d.f.addr[lazy]));
    df_free(&d);
}

/* The target's own digest is a duty and a statement. Promise: a target
 * that does not reveal it pays the skip slash per check and its checks go
 * to the class (which passes them: it is aggregated); a target whose own
 * digest is not its training's (the class passes another) pays the cheat
 * slash; neither is ever paid for an own digest. */
static void test_own_digest_rules(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    d.watch_honest = false;
    const int silent = 3, liar = 7;
    d.act[silent].own = DF_SKIP;
    d.act[liar].own = DF_LAZY_PASS;
    df_play_round(&d);
    CHECK(df_slashed(&d, silent, "own digest not revealed", NULL) == k.checks * k.skip_slash);
    CHECK(df_slashed(&d, silent, "cheat", NULL) == 0);
    CHECK(df_has_str(d.r->round->aggregation_set, d.r->round->n_aggregation_set,
                     d.f.addr[silent]));
    CHECK(df_slashed(&d, liar, "own digest lost", NULL) == k.checks * k.cheat_slash);
    for (uint32_t j = 0; j < k.checks; j++) {
        const df_assignment *a = df_assignment_of(d.r, liar, j, &d);
        CHECK(a->outcome == OUTCOME(PASSED) && a->n_recheckers > 0);
        const df_verdict *own = df_verdict_of(d.r, d.f.addr[liar], j, d.f.addr[liar]);
        CHECK(own && own->faulty && !own->credited);
    }
    for (int i = 1; i <= N; i++)
        if (i != silent && i != liar)
            CHECK(df_slashed(&d, i, NULL, NULL) == 0);
    df_free(&d);
}

/* A worker caught cheating in a round still claimed its validator pay and
 * its other rounds' tokens for that epoch. Promise: a member with an
 * upheld cheat in an epoch forfeits every reward of the epoch; what it
 * would have had stays in the pool. */
static void test_cheater_forfeits_epoch(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    const int w = 6;
    df_play_round(&d); /* honest: tokens and checks */
    d.act[w].cheat = true;
    df_play_round(&d); /* caught */
    CHECK(df_has_str(d.r->round->failed, d.r->round->n_failed, d.f.addr[w]));
    df_until(&d, 121); /* epoch 1 settles */
    df_check_settlement(&d, 1);
    df_settle s;
    CHECK(df_settled(&d, &s, w, 1) && s.forfeited && s.amount == 0);
    CHECK(s.tokens > 0 && s.checks > 0); /* what it forfeited */
    CHECK(df_settled(&d, &s, 1, 1) && !s.forfeited && s.amount > 0);
    /* Nothing to claim. */
    df_until(&d, 146); /* the claim-money stage, before round 2 draws anything */
    Gonka__Diloco__V1__MsgClaimRewards claim = df_claim_msg(&d, w, 1);
    CHECK(df_deliver(&d, w, GD_DILOCO_MSG_CLAIM_REWARDS, &claim) == GD_DILOCO_ERR_NOTHING);
    df_free(&d);
}

/* ---- attack 6: seed grinding ---- */

#define GRIND_N 12 /* equal members: four colluders are a third of the class */
#define GRIND_K 4

/* What a seed gives the grinders: how many of their commitments have every
 * validator of every check a colluder (a fake there would pass), times 100,
 * plus the colluders' validator slots on colluders' checks as a tie-break.
 * The draws are the chain's (proofs/diloco_rules.h): every member commits,
 * so every member of the one class is eligible, in address order. */
static int grind_score(const df *d, const uint8_t seed[32], const int *colluders) {
    const Gonka__Diloco__V1__Round *r = d->r->round;
    uint8_t rnd[32];
    gd_diloco_purpose(rnd, seed, "verify");
    int score = 0;
    for (int c = 0; c < GRIND_K; c++) {
        const char *target = d->f.addr[colluders[c]];
        int whole = 1;
        for (uint32_t j = 0; j < d->k.checks; j++) {
            gd_diloco_check_draw dr;
            gd_diloco_draw_check(&dr, rnd, target, j, DF_SEGMENTS, 2, DF_CHUNKS, d->k.double_ppm);
            const char *addr[DF_ACCOUNTS];
            uint64_t weight[DF_ACCOUNTS];
            uint32_t n = 0;
            for (size_t m = 0; m < r->n_members; m++)
                if (strcmp(r->members[m]->address, target) != 0) {
                    addr[n] = r->members[m]->address;
                    weight[n++] = strtoull(r->members[m]->weight, NULL, 10);
                }
            for (uint32_t v = 0; v < (dr.twice ? 2u : 1u) && n > 0; v++) {
                uint32_t at = gd_diloco_draw_member("gd-validator", rnd, target, j, v, weight, n);
                bool ours = is_colluder(df_index(d, addr[at]), colluders, GRIND_K);
                score += ours;
                whole &= ours;
                memmove(&addr[at], &addr[at + 1], (n - at - 1) * sizeof *addr);
                memmove(&weight[at], &weight[at + 1], (n - at - 1) * sizeof *weight);
                n--;
            }
        }
        score += 100 * whole;
    }
    return score;
}

/* The seed when the colluders in `withheld` (bit c: colluders[c]) keep
 * their secrets and everyone else reveals: the beacon and the revealed
 * secrets in address order, as dl_round_seed computes it. */
static void grind_seed(const df *d, const int *colluders, unsigned withheld, uint8_t seed[32]) {
    const Gonka__Diloco__V1__Round *r = d->r->round;
    uint8_t secrets[DF_ACCOUNTS][32];
    size_t n = 0;
    for (size_t m = 0; m < r->n_members; m++) {
        int who = df_index(d, r->members[m]->address);
        bool kept = false;
        for (int c = 0; c < GRIND_K; c++)
            kept |= colluders[c] == who && (withheld >> c & 1);
        if (!kept)
            df_secret(d, secrets[n++], who, d->round);
    }
    CHECK_OK(gd_diloco_round_seed(seed, r->run, r->index, r->beacon.data, &secrets[0][0], n));
}

/* Attack 6, seed grinding: four colluders of twelve equal members (q = 1/3)
 * seal their secrets, wait for every honest reveal, and withhold the subset
 * of theirs (at least one) whose seed hands their own commitments' checks
 * to colluders: a choice among 2^4 seeds. A fake committed before the
 * reveals passes only if the chosen seed gives all of its checks to
 * colluders, p = (q(1 - d + dq))^c for one seed, P = 1 - (1 - p)^(2^k) for
 * the best of 2^k; it gains at most V (the epoch's reward) and loses at
 * least V when caught (cheat_slash >= reward_per_epoch, and the epoch
 * forfeited), so grinding is worth at most (2P - 1) V. Before the withhold
 * slash, j withheld secrets cost j skip slashes, less than that; promise:
 * they cost j withhold slashes, more than that, and every withholder nets
 * less than every honest member even credited with the whole gain. */
static void test_grinding_withholders_lose(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    df_setup(&d, &k, GRIND_N, NULL, NULL);
    const int colluders[GRIND_K] = {2, 5, 8, 11};
    df_open(&d);
    df_commit(&d);
    df_refresh(&d); /* the beacon and the members, in address order */
    unsigned best = 0;
    int best_score = -1;
    uint8_t seed[32], chosen[32], all[32];
    grind_seed(&d, colluders, 0, all);
    for (unsigned m = 1; m < 1u << GRIND_K; m++) {
        grind_seed(&d, colluders, m, seed);
        int score = grind_score(&d, seed, colluders);
        if (score > best_score || (score == best_score &&
                                   __builtin_popcount(m) < __builtin_popcount(best))) {
            best = m;
            best_score = score;
            memcpy(chosen, seed, 32);
        }
    }
    /* The choice is worth having: no worse than revealing everything (here
     * it hands one colluder's checks all to colluders). */
    CHECK(best_score >= grind_score(&d, all, colluders));
    for (int c = 0; c < GRIND_K; c++)
        if (best >> c & 1)
            d.act[colluders[c]].secret = DF_SEAL_ONLY;
    df_reveal(&d);
    df_verify(&d); /* the verify_start block fixed the seed: the one they chose */
    CHECK(memcmp(d.r->round->seed.data, chosen, 32) == 0);
    CHECK(memcmp(chosen, all, 32) != 0);
    df_open_verdicts(&d);
    df_dispute(&d);
    df_dispute_open(&d);
    df_attest(&d);
    df_attest_open(&d);
    df_finish(&d);
    CHECK(d.r->round->phase == PH(DONE));
    uint64_t epoch = d.r->round->epoch;
    for (int c = 0; c < GRIND_K; c++)
        d.act[colluders[c]].secret = DF_HONEST;
    df_play_round(&d); /* the epoch's other round, honest all through */
    CHECK(d.r->round->epoch == epoch);
    df_until(&d, 121); /* the epoch settles */

    /* What grinding among 2^k seeds is worth at most, and what it cost. */
    const double q = (double)GRIND_K / GRIND_N, dd = k.double_ppm / 1e6, v = (double)k.reward;
    double p = 1, miss = 1;
    for (uint32_t j = 0; j < k.checks; j++)
        p *= q * (1 - dd + dd * q);
    for (int s = 0; s < 1 << GRIND_K; s++)
        miss *= 1 - p;
    const double gain = (2 * (1 - miss) - 1) * v;
    const int withheld = __builtin_popcount(best);
    CHECK(withheld >= 1);
    CHECK((double)withheld * (double)k.skip_slash < gain);     /* the old price: it paid */
    CHECK((double)withheld * (double)k.withhold_slash > gain); /* the new one: it does not */
    double honest_net = 1e300;
    for (int i = 1; i <= GRIND_N; i++) {
        if (is_colluder(i, colluders, GRIND_K))
            continue;
        df_settle st = {0};
        CHECK(df_settled(&d, &st, i, epoch));
        CHECK(df_slashed(&d, i, NULL, NULL) == 0);
        if ((double)st.amount < honest_net)
            honest_net = (double)st.amount;
    }
    for (int c = 0; c < GRIND_K; c++) {
        int who = colluders[c];
        bool kept = best >> c & 1;
        size_t count = 0;
        CHECK(df_slashed(&d, who, "unrevealed randomness", &count) ==
              (kept ? k.withhold_slash : 0));
        CHECK(count == (kept ? 1u : 0u));
        df_settle st = {0};
        df_settled(&d, &st, who, epoch);
        double net = (double)st.amount - (double)df_slashed(&d, who, NULL, NULL);
        if (kept)
            CHECK(net + gain < honest_net);
    }
    df_free(&d);
}

int main(void) {
    RUN_TEST(test_framing_coalition_fails);
    RUN_TEST(test_unavailable_coalition_cannot_grief);
    RUN_TEST(test_late_server_pays);
    RUN_TEST(test_state_sample_refusals);
    RUN_TEST(test_lazy_single_pass_caught);
    RUN_TEST(test_own_digest_rules);
    RUN_TEST(test_cheater_forfeits_epoch);
    RUN_TEST(test_grinding_withholders_lose);
    return gd_test_finish();
}
