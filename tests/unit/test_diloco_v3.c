/* Verification v3: the red-team review's attacks on the checks, played
 * through the chain (tests/unit/diloco_fixture.h) as rational cheaters
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

#include "chain/diloco_rules.h"
#include "tests/testkit.h"
#include "tests/unit/diloco_fixture.h"

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
    CHECK(df_settled(&d, w, 1, &s) && s.forfeited && s.amount == 0);
    CHECK(s.tokens > 0 && s.checks > 0); /* what it forfeited */
    CHECK(df_settled(&d, 1, 1, &s) && !s.forfeited && s.amount > 0);
    /* Nothing to claim. */
    df_until(&d, 146); /* the claim-money stage, before round 2 draws anything */
    Gonka__Diloco__V1__MsgClaimRewards claim = df_claim_msg(&d, w, 1);
    CHECK(df_deliver(&d, w, GD_DILOCO_MSG_CLAIM_REWARDS, &claim) == GD_DILOCO_ERR_NOTHING);
    df_free(&d);
}

int main(void) {
    RUN_TEST(test_framing_coalition_fails);
    RUN_TEST(test_unavailable_coalition_cannot_grief);
    RUN_TEST(test_lazy_single_pass_caught);
    RUN_TEST(test_own_digest_rules);
    RUN_TEST(test_cheater_forfeits_epoch);
    return gd_test_finish();
}
