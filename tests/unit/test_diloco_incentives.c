/* The incentives of protocol v2 against lazy, colluding and Sybil members:
 * one test per attack of the adversarial review. Each test plays the attack
 * through the chain (tests/support/diloco_fixture.h) and then asserts the
 * outcome the protocol promises: the cheater unpaid and slashed or left
 * out, the honest never slashed. The fixture checks every module's
 * invariants after every block and fails a test in which a slash hits a
 * member whose actor is honest.
 *
 * The run (df_knobs_default): 8 members of one class with 20000 bonded
 * each, two checks per commitment, double checks half the time, three
 * re-checkers, classes of at least six, two availability chunks per
 * report, cheat slash 9000, skip slash 200, fail bond 1000, windows of
 * three blocks (rounds at 42 and 69 in epoch 1, 142 and 169 in epoch 2). */
#include <stdlib.h>
#include <string.h>

#include "chain/module/auth.h"
#include "chain/wire/diloco_spec.h"
#include "common/base64.h"
#include "common/bytes.h"
#include "common/hash.h"
#include "tests/support/diloco_fixture.h"
#include "tests/support/testkit.h"

#define N 8 /* members 1..8; 0 the authority; 9.. outsiders */

static uint64_t u64(const char *s) { return strtoull(s, NULL, 10); }

static void setup(df *d, df_knobs *k) {
    df_knobs_default(k);
    df_setup(d, k, N, NULL, NULL);
}

static bool aggregated(const df *d, int who) {
    return df_has_str(d->r->round->aggregation_set, d->r->round->n_aggregation_set,
                      d->f.addr[who]);
}

static bool included(const df *d, int who) {
    return df_has_str(d->r->round->inclusion_set, d->r->round->n_inclusion_set, d->f.addr[who]);
}

static bool failed(const df *d, int who) {
    return df_has_str(d->r->round->failed, d->r->round->n_failed, d->f.addr[who]);
}

/* How many checks of target `who` validator `v` holds in the queried round. */
static int duties(const df *d, int v, int who) {
    int n = 0;
    for (size_t x = 0; x < d->r->n_assignments; x++) {
        const df_assignment *a = d->r->assignments[x];
        if (who > 0 && strcmp(a->target, d->f.addr[who]) != 0)
            continue;
        n += df_has_str(a->validators, a->n_validators, d->f.addr[v]);
    }
    return n;
}

/* ---- 1: hardware classes ----------------------------------------------------------------- */

/* Attack: a member declares a private hardware class that nobody else has,
 * so that no one can be drawn to check it. Promise: the run fixes its
 * classes, and a join with another class is refused (nothing bonded). */
static void test_private_class_refused(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    Cosmos__Base__V1beta1__Coin coin;
    char amount[24];
    uint64_t before = df_balance(&d, 9);
    Gonka__Diloco__V1__MsgJoinRun j = df_join_msg(&d, 9, "tpu-v5-private", &coin, amount, 20000);
    CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_JOIN_RUN, &j) == GD_DILOCO_ERR_INVALID);
    CHECK(df_balance(&d, 9) == before && df_collateral(&d, 9) == UINT64_MAX);
    /* An accepted class joins. */
    j = df_join_msg(&d, 9, DF_GPU, &coin, amount, 20000);
    CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_JOIN_RUN, &j) == 0);
    CHECK(df_collateral(&d, 9) == 20000);
    df_free(&d);
}

/* Attack: two Sybils join a class the run accepts but nobody else uses,
 * and check each other's (unchecked) work. Promise: a class below
 * min_class_members gets no checks at all (event diloco_unchecked), so its
 * commitments, though served and included, are never aggregated and never
 * paid for tokens. */
static void test_small_class_unchecked(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    const char *classes[10] = {DF_CPU, DF_CPU, DF_CPU, DF_CPU, DF_CPU,
                               DF_CPU, DF_CPU, DF_CPU, DF_GPU, DF_GPU};
    df_setup(&d, &k, 10, classes, NULL);
    for (int round = 0; round < 2; round++) {
        df_open(&d);
        df_commit(&d);
        df_reveal(&d);
        df_until(&d, d.w.verify_start + 1); /* the draws happen in this block */
        CHECK(df_last_event(&d, "diloco_unchecked", "target", d.f.addr[9]));
        CHECK(df_last_event(&d, "diloco_unchecked", "target", d.f.addr[10]));
        CHECK(!df_last_event(&d, "diloco_unchecked", "target", d.f.addr[1]));
        df_refresh(&d);
        CHECK(df_assignment_of(d.r, 9, 0, &d) == NULL && df_assignment_of(d.r, 10, 0, &d) == NULL);
        CHECK(d.r->n_assignments == 8 * k.checks);
        for (size_t x = 0; x < d.r->n_assignments; x++)
            CHECK(df_index(&d, d.r->assignments[x]->validators[0]) <= 8);
        df_verify(&d);
        df_open_verdicts(&d);
        df_rest_of_round(&d);
        CHECK(d.r->round->phase == PH(DONE));
        CHECK(included(&d, 9) && included(&d, 10));
        CHECK(!aggregated(&d, 9) && !aggregated(&d, 10));
        CHECK(d.r->round->n_aggregation_set == 8);
    }
    df_until(&d, 121); /* epoch 1 settles */
    df_check_settlement(&d, 1);
    df_settle s9, s10, s1;
    df_settled(&d, &s9, 9, 1);
    df_settled(&d, &s10, 10, 1);
    CHECK(df_settled(&d, &s1, 1, 1) && s1.tokens == 2 * DF_TOKENS);
    CHECK(s9.tokens == 0 && s9.checks == 0 && s10.tokens == 0 && s10.checks == 0);
    df_free(&d);
}

/* ---- 2: withholding and lazy accusations --------------------------------------------------- */

/* Attack: a worker serves its payload (it is included) but withholds the
 * checkpoints a check re-executes from, so no one can show it cheated.
 * Promise: its validators answer UNAVAILABLE (bonded), the class cannot
 * fetch them either and answers UNAVAILABLE too: the check ends
 * UNAVAILABLE. The worker is paid nothing for the round and pays the skip
 * slash per check (a serving duty missed); it is not slashed for cheating
 * or suspended, because an UNAVAILABLE re-executes nothing and so proves
 * no cheat (a vote that can never cause a cheat slash cannot be used to
 * frame). Its accusers get their bonds back and are credited. */
static void test_withheld_checkpoints(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    const int w = 3;
    d.act[w].withhold_checkpoints = true;
    df_to_draws(&d);
    uint64_t bal[DF_ACCOUNTS];
    for (int i = 1; i <= N; i++)
        bal[i] = df_balance(&d, i);
    df_to_juries(&d);
    for (uint32_t j = 0; j < k.checks; j++) {
        const df_assignment *a = df_assignment_of(d.r, w, j, &d);
        CHECK(a->n_recheckers == df_jury_size(d.r, a) && a->n_recheckers >= k.rechecks);
    }
    df_rest_of_round(&d);
    CHECK(included(&d, w) && !aggregated(&d, w) && !failed(&d, w));
    CHECK(d.r->round->n_aggregation_set == N - 1);
    CHECK(df_slashed(&d, w, "upheld", NULL) == 0);
    CHECK(df_slashed(&d, w, "unavailable", NULL) == k.checks * k.skip_slash);
    for (uint32_t j = 0; j < k.checks; j++) {
        const df_assignment *a = df_assignment_of(d.r, w, j, &d);
        CHECK(a->outcome == OUTCOME(UNAVAILABLE));
        for (size_t v = 0; v < a->n_validators; v++) {
            const df_verdict *r = df_verdict_of(d.r, a->target, j, a->validators[v]);
            CHECK(r && r->verdict == V_UNAVAILABLE && r->credited && !r->faulty && !r->bonded);
        }
        for (size_t v = 0; v < a->n_recheckers; v++) {
            const df_verdict *r = df_verdict_of(d.r, a->target, j, a->recheckers[v]);
            CHECK(r && r->verdict == V_UNAVAILABLE && r->credited);
        }
    }
    for (int i = 1; i <= N; i++)
        CHECK(df_balance(&d, i) == bal[i]); /* every bond back */
    /* Not suspended: round 1 runs with it, unpaid again; epoch 1 pays it
     * no tokens. */
    df_play_round(&d);
    CHECK(d.in_round[w] && !aggregated(&d, w));
    df_until(&d, 121);
    df_check_settlement(&d, 1);
    df_settle s;
    df_settled(&d, &s, w, 1);
    CHECK(s.tokens == 0);
    df_free(&d);
}

/* Attack: a lazy validator answers UNAVAILABLE to an honest target instead
 * of re-executing. Promise: the class fetches the data and PASSes it;
 * the lazy validator's bond is burned and its verdict unpaid; the target
 * is aggregated. */
static void test_lazy_unavailable(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    const int t = 2;
    df_to_draws(&d);
    const df_assignment *a = df_assignment_of(d.r, t, 0, &d);
    const int lazy = df_index(&d, a->validators[0]);
    d.act[lazy].verdict_on[t] = DF_UNAVAILABLE;
    int lies = duties(&d, lazy, t);
    uint64_t bal = df_balance(&d, lazy);
    df_to_juries(&d);
    df_rest_of_round(&d);
    CHECK(aggregated(&d, t) && !failed(&d, t));
    for (uint32_t j = 0; j < k.checks; j++) {
        const df_assignment *x = df_assignment_of(d.r, t, j, &d);
        CHECK(x->outcome == OUTCOME(PASSED));
        const df_verdict *v = df_verdict_of(d.r, x->target, j, d.f.addr[lazy]);
        if (v != NULL)
            CHECK(v->verdict == V_UNAVAILABLE && v->faulty && !v->credited && !v->bonded);
    }
    CHECK(df_balance(&d, lazy) == bal - (uint64_t)lies * k.fail_bond);
    CHECK(df_slashed(&d, lazy, NULL, NULL) == 0); /* its bond, not its collateral */
    df_free(&d);
}

/* Attack: one validator holding two (or more) checks of the same target
 * FAILs all of them, hoping its accusations add up. Promise: every
 * accusation goes to the class without it, which PASSes the honest
 * target: it is not slashed and is aggregated; each false accusation
 * loses its bond and, a FAIL being a claim of re-execution, the cheat
 * slash. (Single checks, four per commitment, so that a validator
 * holds several.) */
static void test_one_validator_two_checks(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.checks = 4;
    k.double_ppm = 0;
    k.min_class = 5;
    df_setup(&d, &k, N, NULL, NULL);
    df_to_draws(&d);
    int t = -1, v = -1;
    for (int x = 1; x <= N && t < 0; x++)
        for (int y = 1; y <= N && t < 0; y++)
            if (duties(&d, y, x) >= 2) {
                t = x;
                v = y;
            }
    CHECK(t > 0);
    if (t < 0)
        abort();
    const int held = duties(&d, v, t);
    d.act[v].verdict_on[t] = DF_FAIL;
    uint64_t bal = df_balance(&d, v);
    df_to_juries(&d);
    for (uint32_t j = 0; j < k.checks; j++) {
        const df_assignment *a = df_assignment_of(d.r, t, j, &d);
        bool accused = df_has_str(a->validators, a->n_validators, d.f.addr[v]);
        CHECK((a->n_recheckers == df_jury_size(d.r, a)) == accused);
        CHECK(!df_has_str(a->recheckers, a->n_recheckers, d.f.addr[v]));
    }
    df_rest_of_round(&d);
    CHECK(aggregated(&d, t) && !failed(&d, t));
    CHECK(df_collateral(&d, t) == DF_COLLATERAL);
    for (uint32_t j = 0; j < k.checks; j++)
        CHECK(df_assignment_of(d.r, t, j, &d)->outcome == OUTCOME(PASSED));
    CHECK(df_slashed(&d, v, "FAIL overturned", NULL) == (uint64_t)held * k.cheat_slash);
    /* Its bonds are gone; what the slashes left of its collateral comes
     * back when it falls below the minimum and is released. */
    uint64_t released = 0;
    df_released(&d, v, &released);
    CHECK(df_balance(&d, v) == bal - (uint64_t)held * k.fail_bond + released);
    df_free(&d);
}

/* ---- 3: lazy passes, copying, weighted selection -------------------------------------------------- */

/* Attack: on a double check, a lazy validator PASSes with a digest it did
 * not compute, hoping to be paid for a check it never ran. Promise: the
 * two digests differ, so re-checkers decide; the lazy PASS loses to the
 * majority and is slashed the cheat slash and unpaid; the honest
 * validator is credited. */
static void test_lazy_pass_slashed(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.double_ppm = 1000000;
    k.checks = 1;
    df_setup(&d, &k, N, NULL, NULL);
    const int t = 4;
    df_to_draws(&d);
    const df_assignment *a = df_assignment_of(d.r, t, 0, &d);
    CHECK(a->n_validators == 2);
    const int honest = df_index(&d, a->validators[0]), lazy = df_index(&d, a->validators[1]);
    d.act[lazy].verdict_on[t] = DF_LAZY_PASS;
    df_to_juries(&d);
    CHECK(df_assignment_of(d.r, t, 0, &d)->n_recheckers ==
          df_jury_size(d.r, df_assignment_of(d.r, t, 0, &d)));
    df_rest_of_round(&d);
    CHECK(aggregated(&d, t));
    const df_verdict *vl = df_verdict_of(d.r, d.f.addr[t], 0, d.f.addr[lazy]);
    const df_verdict *vh = df_verdict_of(d.r, d.f.addr[t], 0, d.f.addr[honest]);
    CHECK(vl && vl->verdict == V_PASS && vl->faulty && !vl->credited);
    CHECK(vh && vh->credited && !vh->faulty);
    CHECK(df_slashed(&d, lazy, "PASS digest lost", NULL) == k.cheat_slash);
    CHECK(df_collateral(&d, lazy) == DF_COLLATERAL - k.cheat_slash);
    df_free(&d);
}

/* Attack: a validator colludes with a cheater and PASSes its wrong work on
 * a double check whose other validator FAILs it. Promise: the re-checkers
 * FAIL it too: the cheater is upheld and slashed, and the colluding PASS,
 * on the losing side of a FAIL majority, is slashed the cheat slash. */
static void test_colluding_pass_slashed(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.double_ppm = 1000000;
    k.checks = 1;
    df_setup(&d, &k, N, NULL, NULL);
    const int c = 3;
    d.act[c].cheat = true;
    df_to_draws(&d);
    const df_assignment *a = df_assignment_of(d.r, c, 0, &d);
    const int honest = df_index(&d, a->validators[0]), friend = df_index(&d, a->validators[1]);
    d.act[friend].verdict_on[c] = DF_PASS;
    uint64_t bal = df_balance(&d, honest);
    df_to_juries(&d);
    df_rest_of_round(&d);
    CHECK(failed(&d, c) && !aggregated(&d, c));
    CHECK(df_assignment_of(d.r, c, 0, &d)->outcome == OUTCOME(UPHELD));
    CHECK(df_slashed(&d, c, "upheld", NULL) == k.cheat_slash);
    CHECK(df_slashed(&d, friend, "PASS on a FAIL", NULL) == k.cheat_slash);
    const df_verdict *vf = df_verdict_of(d.r, d.f.addr[c], 0, d.f.addr[friend]);
    const df_verdict *vh = df_verdict_of(d.r, d.f.addr[c], 0, d.f.addr[honest]);
    CHECK(vf && vf->faulty && !vf->credited);
    CHECK(vh && vh->credited && !vh->faulty && !vh->bonded);
    CHECK(df_balance(&d, honest) == bal);
    df_free(&d);
}

/* Jurors answer too. Attack: a juror FAILs an honest target the others
 * PASS (a lie, since re-execution is bit-exact within a class). Promise:
 * it is slashed the cheat slash and unpaid. A juror that answers
 * UNAVAILABLE where the class fetched the data did not do the re-check:
 * unpaid, and it pays the skip slash for it. */
static void test_recheck_outcomes(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.checks = 1;
    df_setup(&d, &k, N, NULL, NULL);
    const int t1 = 2, t2 = 4;
    df_to_draws(&d);
    const int acc1 = df_index(&d, df_assignment_of(d.r, t1, 0, &d)->validators[0]);
    const int acc2 = df_index(&d, df_assignment_of(d.r, t2, 0, &d)->validators[0]);
    d.act[acc1].verdict_on[t1] = DF_UNAVAILABLE;
    d.act[acc2].verdict_on[t2] = DF_UNAVAILABLE;
    df_to_juries(&d);
    const df_assignment *a1 = df_assignment_of(d.r, t1, 0, &d), *a2 = df_assignment_of(d.r, t2, 0, &d);
    CHECK(a1->n_recheckers == df_jury_size(d.r, a1) && a2->n_recheckers == df_jury_size(d.r, a2));
    const int liar = df_index(&d, a1->recheckers[2]), lazy = df_index(&d, a2->recheckers[2]);
    d.act[liar].recheck_on[t1] = DF_FAIL;
    d.act[lazy].recheck_on[t2] = DF_UNAVAILABLE;
    df_rest_of_round(&d);
    CHECK(aggregated(&d, t1) && aggregated(&d, t2));
    CHECK(df_assignment_of(d.r, t1, 0, &d)->outcome == OUTCOME(PASSED));
    CHECK(df_assignment_of(d.r, t2, 0, &d)->outcome == OUTCOME(PASSED));
    const df_verdict *vl = df_verdict_of(d.r, d.f.addr[t1], 0, d.f.addr[liar]);
    const df_verdict *vz = df_verdict_of(d.r, d.f.addr[t2], 0, d.f.addr[lazy]);
    CHECK(vl && vl->recheck && vl->faulty && !vl->credited);
    CHECK(vz && vz->recheck && vz->faulty && !vz->credited);
    CHECK(df_slashed(&d, liar, "FAIL overturned", NULL) == k.cheat_slash);
    if (lazy != liar)
        CHECK(df_slashed(&d, lazy, NULL, NULL) == k.skip_slash);
    df_free(&d);
}

/* Attack: a lazy re-checker copies another re-checker's sealed answer
 * (seals are public) instead of re-executing, then reveals what the other
 * revealed. Promise: seals are salted and bound to their signer, so the
 * copied seal matches no reveal of the copier's own (code 14, with the
 * other's salt or its own): its re-check stays unrevealed and it pays the
 * skip slash; the check is decided by the others. */
static void test_recheck_copy_fails(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    const int t = 5;
    df_to_draws(&d);
    /* A lazy accuser opens a dispute on t's first check. */
    const df_assignment *a = df_assignment_of(d.r, t, 0, &d);
    int accuser = df_index(&d, a->validators[0]);
    d.act[accuser].verdict_on[t] = DF_UNAVAILABLE;
    df_to_juries(&d);
    a = df_assignment_of(d.r, t, 0, &d);
    CHECK(a->n_recheckers == df_jury_size(d.r, a));
    const int source = df_index(&d, a->recheckers[0]), copier = df_index(&d, a->recheckers[1]);
    /* The copier sits in the jury of every disputed check of t. */
    size_t juries = 0;
    for (uint32_t j = 0; j < k.checks; j++)
        juries += df_has_str(df_assignment_of(d.r, t, j, &d)->recheckers,
                             df_assignment_of(d.r, t, j, &d)->n_recheckers, d.f.addr[copier]);
    char target[GD_ADDRESS_STR_MAX];
    snprintf(target, sizeof target, "%s", a->target);
    d.act[copier].recheck_on[t] = DF_SKIP; /* the driver sends nothing for it */
    df_dispute(&d);
    /* The source's seal is on the chain: the copier seals it as its own. */
    const df_verdict *sv = df_verdict_of(d.r, target, 0, d.f.addr[source]);
    CHECK(sv == NULL); /* d.r was read before the seals */
    df_refresh(&d);
    sv = df_verdict_of(d.r, target, 0, d.f.addr[source]);
    CHECK(sv && sv->seal.len == 32);
    uint8_t copied[32];
    memcpy(copied, sv->seal.data, 32);
    Gonka__Diloco__V1__MsgDispute m = df_dispute_msg(&d, copier, target, 0, copied, 0, NULL, NULL);
    CHECK(df_deliver(&d, copier, GD_DILOCO_MSG_DISPUTE, &m) == 0);
    df_dispute_open(&d);
    df_refresh(&d);
    sv = df_verdict_of(d.r, target, 0, d.f.addr[source]);
    CHECK(sv && sv->verdict == V_PASS);
    /* Everything the source revealed, sent by the copier. */
    uint8_t salt[32], own[32];
    df_salt(&d, salt, GD_SEAL_RECHECK, source, 0, target, 0);
    df_salt(&d, own, GD_SEAL_RECHECK, copier, 0, target, 0);
    uint8_t digest[32];
    memcpy(digest, sv->digest.data, 32);
    Gonka__Diloco__V1__MsgDispute r1 =
        df_dispute_msg(&d, copier, target, 0, NULL, V_PASS, digest, salt);
    CHECK(df_deliver(&d, copier, GD_DILOCO_MSG_DISPUTE, &r1) == GD_DILOCO_ERR_SEAL);
    Gonka__Diloco__V1__MsgDispute r2 = df_dispute_msg(&d, copier, target, 0, NULL, V_PASS, digest, own);
    CHECK(df_deliver(&d, copier, GD_DILOCO_MSG_DISPUTE, &r2) == GD_DILOCO_ERR_SEAL);
    df_attest(&d);
    CHECK(df_slashed(&d, copier, "skipped re-check", NULL) == juries * k.skip_slash);
    df_refresh(&d);
    const df_verdict *cv = df_verdict_of(d.r, target, 0, d.f.addr[copier]);
    CHECK(cv && cv->verdict == 0 && !cv->credited);
    CHECK(df_assignment_of(d.r, t, 0, &d)->outcome == OUTCOME(PASSED));
    df_attest_open(&d);
    df_finish(&d);
    CHECK(aggregated(&d, t));
    df_free(&d);
}

/* The rules' weighted draw picks each member in proportion to its weight:
 * over 40000 draws from weights 1 : 2 : 3 : 4 : 10 (and a member of weight
 * 0, never picked) every count is within five standard deviations of its
 * share; the module's draw takes each pick out before the next, so the
 * two validators of a check always differ. */
static void test_weighted_draws(void) {
    const uint64_t weights[6] = {1, 2, 3, 4, 10, 0};
    uint32_t count[6] = {0};
    uint8_t rnd[32];
    const int draws = 40000;
    for (int i = 0; i < draws; i++) {
        char text[32];
        snprintf(text, sizeof text, "draw %d", i);
        gd_sha256(rnd, text, strlen(text));
        uint32_t at = gd_diloco_draw_member("gd-validator", rnd, "gonka1target", (uint32_t)i % 4, 0,
                                            weights, 6);
        CHECK(at < 6);
        count[at < 6 ? at : 0]++;
    }
    for (int i = 0; i < 6; i++) {
        double p = weights[i] / 20.0, want = draws * p, off = count[i] - want;
        if (off * off > 25 * draws * p * (1 - p) + 0.25) { /* five standard deviations */
            fprintf(stderr, "weight %llu: %u of %d draws, expected %.0f\n",
                    (unsigned long long)weights[i], count[i], draws, want);
            gd_test_failures++;
        }
    }
    CHECK(count[5] == 0);
    /* A tiny weight among large ones is picked about as often as its share. */
    const uint64_t sybil[8] = {100000, 100000, 100000, 100000, 100000, 100000, 100000, 10000};
    uint32_t tiny = 0;
    for (int i = 0; i < draws; i++) {
        char text[32];
        snprintf(text, sizeof text, "sybil %d", i);
        gd_sha256(rnd, text, strlen(text));
        tiny += gd_diloco_draw_member("gd-recheck", rnd, "gonka1target", 0, 0, sybil, 8) == 7;
    }
    double p = 10000.0 / 710000.0, off = tiny - draws * p;
    CHECK(off * off < 25 * draws * p * (1 - p));
}

/* Attack: a Sybil joins with the minimum collateral to be drawn as a
 * validator as often as anyone (and check its friends). Promise: draws are
 * weighted by bonded collateral, so a member with a tenth of the others'
 * bond is picked about a tenth as often. Eight members bond 100000, the
 * Sybil 10000; eight double checks per commitment (144 picks). */
static void test_sybil_rarely_picked(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.checks = 8;
    k.double_ppm = 1000000;
    uint64_t coll[9] = {100000, 100000, 100000, 100000, 100000, 100000, 100000, 100000, 10000};
    df_setup(&d, &k, 9, NULL, coll);
    df_to_draws(&d);
    int picks[DF_ACCOUNTS] = {0}, total = 0;
    for (size_t x = 0; x < d.r->n_assignments; x++)
        for (size_t v = 0; v < d.r->assignments[x]->n_validators; v++) {
            picks[df_index(&d, d.r->assignments[x]->validators[v])]++;
            total++;
        }
    CHECK(total == 9 * 8 * 2);
    /* Expected about 2 for the Sybil (16 if picks were uniform); at least
     * 10 for each of the others. */
    if (getenv("GD_TEST_VERBOSE"))
        for (int i = 1; i <= 9; i++)
            fprintf(stderr, "  member %d: %d picks\n", i, picks[i]);
    CHECK(picks[9] <= 5);
    for (int i = 1; i <= 8; i++)
        CHECK(picks[i] >= 10);
    df_verify(&d);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    CHECK(d.r->round->n_aggregation_set == 9);
    df_free(&d);
}

/* ---- 4: randomness ------------------------------------------------------------------------------ */

/* Plays round 0 up to its re-checkers, with a lazy accuser (the first
 * check's validator) so that there are some. Block hashes from `from` on are salted with `salt` (0: none). */
static void seed_chain(df *d, uint32_t salt, int64_t from) {
    df_knobs k;
    setup(d, &k);
    d->f.hash_salt = salt;
    d->f.hash_salt_from = from;
    df_to_draws(d);
    d->act[df_index(d, d->r->assignments[0]->validators[0])].verdict = DF_UNAVAILABLE;
    df_verify(d);
    df_open_verdicts(d);
    df_dispute(d);
}

static bool same_message(const void *a, const void *b) {
    gd_buf x = {0}, y = {0};
    size_t nx = protobuf_c_message_get_packed_size(a), ny = protobuf_c_message_get_packed_size(b);
    CHECK_OK(gd_buf_reserve(&x, nx + 1));
    CHECK_OK(gd_buf_reserve(&y, ny + 1));
    x.len = protobuf_c_message_pack(a, x.data);
    y.len = protobuf_c_message_pack(b, y.data);
    bool same = x.len == y.len && memcmp(x.data, y.data, x.len) == 0;
    gd_buf_free(&x);
    gd_buf_free(&y);
    return same;
}

/* Attack: the producer of the verify_start block (or of any block after
 * train_start) picks its hash to steer the draws. Promise: the seed is the
 * train_start block's hash and the members' secrets, nothing later: two
 * chains whose blocks differ from height 43 on (the round opened at 42)
 * draw the same checks and chunks, open the same disputes and reach the
 * same state;
 * a chain whose train_start block differs draws from another seed. */
static void test_seed_independent_of_block(void) {
    df a, b, c;
    seed_chain(&a, 0, 0);
    seed_chain(&b, 7, 43);
    seed_chain(&c, 7, 42);
    CHECK(memcmp(a.r->round->beacon.data, b.r->round->beacon.data, 32) == 0);
    CHECK(memcmp(a.r->round->seed.data, b.r->round->seed.data, 32) == 0);
    CHECK(memcmp(a.r->round->verify_randomness.data, b.r->round->verify_randomness.data, 32) == 0);
    CHECK(a.r->n_assignments == b.r->n_assignments);
    size_t rechecked = 0;
    for (size_t i = 0; i < a.r->n_assignments && i < b.r->n_assignments; i++) {
        CHECK(same_message(a.r->assignments[i], b.r->assignments[i]));
        rechecked += a.r->assignments[i]->n_recheckers > 0;
    }
    CHECK(rechecked > 0);
    CHECK(same_message(a.r, b.r)); /* the whole round, as queried */
    uint8_t ha[32], hb[32], hc[32];
    gd_app_hash(a.f.app, ha);
    gd_app_hash(b.f.app, hb);
    gd_app_hash(c.f.app, hc);
    CHECK(memcmp(ha, hb, 32) == 0);
    CHECK(memcmp(a.r->round->beacon.data, c.r->round->beacon.data, 32) != 0);
    CHECK(memcmp(a.r->round->seed.data, c.r->round->seed.data, 32) != 0);
    CHECK(memcmp(ha, hc, 32) != 0);
    df_free(&a);
    df_free(&b);
    df_free(&c);
}

/* Attack: a member seals a secret and withholds it after seeing the
 * others', to choose between two seeds. Promise: the seed counts only the
 * revealed secrets (the draws stay reproducible) and the withholder pays
 * the withhold slash, once (test_diloco_v3 prices the choice). */
static void test_unrevealed_secret_slashed(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    const int s = 4;
    d.act[s].secret = DF_SEAL_ONLY;
    df_to_draws(&d); /* the verify_start block fixed the seed */
    CHECK(df_slashed(&d, s, "unrevealed randomness", NULL) == k.withhold_slash);
    CHECK(d.r->n_randomness == N);
    size_t revealed = 0;
    for (size_t i = 0; i < d.r->n_randomness; i++)
        revealed += d.r->randomness[i]->secret.len == 32;
    CHECK(revealed == N - 1);
    df_check_draws(&d, d.r); /* the seed of the seven revealed secrets */
    CHECK(df_weighted_of(d.r, d.f.addr[s])->skip_slashed);
    df_verify(&d);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    size_t count = 0;
    CHECK(df_slashed(&d, s, NULL, &count) == k.withhold_slash && count == 1);
    CHECK(d.r->round->phase == PH(DONE) && aggregated(&d, s));
    df_free(&d);
}

/* Attacks on the secrets themselves. Promise: a reveal must match its seal
 * (code 14) and come in the round's reveal window (code 9), once (code
 * 10); a seal is for the run's next round only (code 8), once (code 10),
 * by a member (code 6); a reveal without a seal is refused (code 14). */
static void test_secret_rules(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.window = 8; /* room for the refused messages in each window */
    df_setup(&d, &k, N, NULL, NULL);
    df_open(&d); /* round 0 is training: the next round is 1 */
    uint8_t secret[32], seal[32];
    df_secret(&d, secret, 1, 1);
    gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, d.f.addr[1], NULL, 0, secret);
    Gonka__Diloco__V1__MsgRandomness m = df_randomness_msg(&d, 1, 0, seal, NULL);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_RANDOMNESS, &m) == GD_DILOCO_ERR_UNKNOWN_ROUND);
    m = df_randomness_msg(&d, 1, 2, seal, NULL);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_RANDOMNESS, &m) == GD_DILOCO_ERR_UNKNOWN_ROUND);
    m = df_randomness_msg(&d, 9, 1, seal, NULL);
    CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_RANDOMNESS, &m) == GD_DILOCO_ERR_NOT_MEMBER);
    m = df_randomness_msg(&d, 1, 1, seal, NULL);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_RANDOMNESS, &m) == 0);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_RANDOMNESS, &m) == GD_DILOCO_ERR_DUPLICATE);
    d.sealed[1] |= 2; /* the driver does not seal it again */
    /* Round 0's secret before its reveal window. */
    uint8_t s0[32];
    df_secret(&d, s0, 2, 0);
    Gonka__Diloco__V1__MsgRandomness early = df_randomness_msg(&d, 2, 0, NULL, s0);
    CHECK(df_deliver(&d, 2, GD_DILOCO_MSG_RANDOMNESS, &early) == GD_DILOCO_ERR_WINDOW);
    df_commit(&d);
    df_until(&d, d.w.reveal_start);
    uint8_t wrong[32];
    memcpy(wrong, s0, 32);
    wrong[31] ^= 1;
    Gonka__Diloco__V1__MsgRandomness bad = df_randomness_msg(&d, 2, 0, NULL, wrong);
    uint8_t s9[32];
    df_secret(&d, s9, 9, 0);
    Gonka__Diloco__V1__MsgRandomness unsealed = df_randomness_msg(&d, 9, 0, NULL, s9);
    int from[2] = {2, 9};
    const char *urls[2] = {GD_DILOCO_MSG_RANDOMNESS, GD_DILOCO_MSG_RANDOMNESS};
    const void *msgs[2] = {&bad, &unsealed};
    uint32_t codes[2];
    df_deliver_n(&d, 2, from, urls, msgs, codes);
    CHECK(codes[0] == GD_DILOCO_ERR_SEAL && codes[1] == GD_DILOCO_ERR_SEAL);
    df_reveal(&d); /* the true reveals, 2's among them */
    Gonka__Diloco__V1__MsgRandomness twice = df_randomness_msg(&d, 2, 0, NULL, s0);
    CHECK(df_deliver(&d, 2, GD_DILOCO_MSG_RANDOMNESS, &twice) == GD_DILOCO_ERR_DUPLICATE);
    df_until(&d, d.w.verify_start + 1);
    Gonka__Diloco__V1__MsgRandomness late = df_randomness_msg(&d, 3, 0, NULL, s0);
    CHECK(df_deliver(&d, 3, GD_DILOCO_MSG_RANDOMNESS, &late) == GD_DILOCO_ERR_WINDOW);
    df_refresh(&d);
    for (size_t i = 0; i < d.r->n_randomness; i++)
        CHECK(d.r->randomness[i]->secret.len == 32);
    df_verify(&d);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    CHECK(d.r->round->phase == PH(DONE));
    df_free(&d);
}

/* ---- 5: availability ---------------------------------------------------------------------------- */

/* v1's chunk: SHA-256("gd-avail" || beacon || target || reporter), mod chunks. */
static uint32_t v1_chunk(const uint8_t beacon[32], const char *target, const char *reporter) {
    uint8_t buf[256], h[32];
    size_t n = 0;
    memcpy(buf, "gd-avail", 8);
    n = 8;
    memcpy(buf + n, beacon, 32);
    n += 32;
    memcpy(buf + n, target, strlen(target));
    n += strlen(target);
    memcpy(buf + n, reporter, strlen(reporter));
    n += strlen(reporter);
    gd_sha256(h, buf, n);
    return (uint32_t)(gd_get_le64(h) % DF_CHUNKS);
}

/* Attack: a worker serves only the chunks it knows will be asked for, as
 * v1 let it (one chunk, from the beacon, known at commit time). Promise:
 * the chunks come from the seed, fixed after the commit window from the
 * members' sealed secrets: a prediction from the beacon alone is wrong, a
 * report proving v1's chunk or the beacon's draw is refused (code 12), and
 * every report proves avail_chunks chunks in draw order. */
static void test_chunks_drawn_after_commit(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.window = 8; /* room for the refused reports in the verify window */
    df_setup(&d, &k, N, NULL, NULL);
    df_to_draws(&d);
    uint8_t beacon[32]; /* a copy: d.r is queried again below */
    memcpy(beacon, d.r->round->beacon.data, 32);
    /* What a worker could compute at commit time: the seed without secrets. */
    uint8_t guess_seed[32], guess[32];
    CHECK_OK(gd_diloco_round_seed(guess_seed, 1, 0, beacon, NULL, 0));
    gd_diloco_purpose(guess, guess_seed, "verify");
    CHECK(memcmp(guess, d.r->round->verify_randomness.data, 32) != 0);
    /* A reporter-target pair whose beacon draw differs from the real one. */
    int rep = -1, tgt = -1;
    uint32_t drawn[GD_DILOCO_AVAIL_CHUNKS_MAX], fake[GD_DILOCO_AVAIL_CHUNKS_MAX];
    uint32_t nd = 0;
    for (int x = 2; x <= N && rep < 0; x++) {
        nd = df_drawn_chunks(&d, drawn, x, 1);
        uint32_t nf = gd_diloco_avail_chunks(fake, guess, d.f.addr[1], d.f.addr[x], DF_CHUNKS,
                                             k.avail);
        if (nf == nd && memcmp(fake, drawn, nd * sizeof *drawn) != 0) {
            rep = x;
            tgt = 1;
        }
    }
    CHECK(rep > 0 && nd == k.avail && drawn[0] != drawn[1]);
    if (rep < 0)
        abort();
    d.act[rep].skip_report[tgt] = true;
    df_verify(&d);
    gd_buf proofs[5][GD_DILOCO_AVAIL_CHUNKS_MAX];
    ProtobufCBinaryData pf[5][GD_DILOCO_AVAIL_CHUNKS_MAX], lf[5][GD_DILOCO_AVAIL_CHUNKS_MAX];
    uint8_t leaves[5][GD_DILOCO_AVAIL_CHUNKS_MAX][32];
    memset(proofs, 0, sizeof proofs);
    uint32_t old = v1_chunk(beacon, d.f.addr[tgt], d.f.addr[rep]);
    Gonka__Diloco__V1__MsgReportAvailability m1 =
        df_report_msg(&d, rep, tgt, &old, 1, proofs[0], pf[0], leaves[0], lf[0]);
    CHECK(df_deliver(&d, rep, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m1) == GD_DILOCO_ERR_BAD_PROOF);
    Gonka__Diloco__V1__MsgReportAvailability m2 =
        df_report_msg(&d, rep, tgt, fake, nd, proofs[1], pf[1], leaves[1], lf[1]);
    CHECK(df_deliver(&d, rep, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m2) == GD_DILOCO_ERR_BAD_PROOF);
    Gonka__Diloco__V1__MsgReportAvailability m3 =
        df_report_msg(&d, rep, tgt, drawn, 1, proofs[2], pf[2], leaves[2], lf[2]);
    CHECK(df_deliver(&d, rep, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m3) == GD_DILOCO_ERR_BAD_PROOF);
    uint32_t reversed[2] = {drawn[1], drawn[0]};
    Gonka__Diloco__V1__MsgReportAvailability m4 =
        df_report_msg(&d, rep, tgt, reversed, 2, proofs[3], pf[3], leaves[3], lf[3]);
    CHECK(df_deliver(&d, rep, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m4) == GD_DILOCO_ERR_BAD_PROOF);
    df_until(&d, d.w.open_start);
    /* The verify window is over: even the right report is late. */
    Gonka__Diloco__V1__MsgReportAvailability m5 =
        df_report_msg(&d, rep, tgt, drawn, nd, proofs[4], pf[4], leaves[4], lf[4]);
    CHECK(df_deliver(&d, rep, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m5) == GD_DILOCO_ERR_WINDOW);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < GD_DILOCO_AVAIL_CHUNKS_MAX; j++)
            gd_buf_free(&proofs[i][j]);
    df_refresh(&d);
    for (size_t i = 0; i < d.r->n_availability; i++) {
        const Gonka__Diloco__V1__AvailabilityReport *r = d.r->availability[i];
        CHECK(r->n_chunks == k.avail);
        uint32_t want[GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint32_t n = df_drawn_chunks(&d, want, df_index(&d, r->reporter), df_index(&d, r->target));
        CHECK(n == r->n_chunks && memcmp(want, r->chunks, n * sizeof *want) == 0);
    }
    CHECK(df_commitment_of(d.r, d.f.addr[tgt])->reports == N - 2);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    CHECK(aggregated(&d, tgt)); /* six of eight reports and its own: three quarters */
    df_free(&d);
}

/* Attack: a coalition holding a third of the weight (three of nine) seals
 * its secrets for round 0 and then goes idle, so that no honest commitment
 * reaches two thirds of the total weight and checks land on members who
 * never answer. Promise: thresholds count active weight and only active
 * members are drawn, so the six others include, check, aggregate and
 * attest each other's work; each idle member pays for the two duties it
 * skipped (the withhold slash for the secret it sealed and never revealed,
 * the skip slash for the round); having sealed nothing for round 1, the idle members are in no later
 * snapshot, pay nothing more, and count for nothing. */
static void test_idle_coalition_cannot_exclude(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    const int n = 9;
    df_setup(&d, &k, n, NULL, NULL);
    for (int i = 7; i <= n; i++)
        d.act[i].idle = true;
    for (int round = 0; round < 2; round++) {
        df_open(&d);
        df_commit(&d);
        df_reveal(&d);
        df_verify(&d);
        df_open_verdicts(&d);
        df_refresh(&d);
        CHECK(u64(d.r->round->active_weight) == 6 * DF_COLLATERAL);
        CHECK(u64(d.r->round->total_weight) == (uint64_t)(round == 0 ? n : 6) * DF_COLLATERAL);
        CHECK(d.r->round->n_members == (size_t)(round == 0 ? n : 6));
        CHECK(d.r->round->n_inclusion_set == 6);
        for (size_t x = 0; x < d.r->n_assignments; x++) {
            const df_assignment *a = d.r->assignments[x];
            for (int i = 7; i <= n; i++)
                CHECK(!df_has_str(a->validators, a->n_validators, d.f.addr[i]) &&
                      !df_has_str(a->recheckers, a->n_recheckers, d.f.addr[i]));
        }
        df_rest_of_round(&d);
        CHECK(d.r->round->phase == PH(DONE));
        for (int i = 1; i <= 6; i++)
            CHECK(aggregated(&d, i));
        for (int i = 7; i <= n; i++) {
            size_t count = 0;
            CHECK(df_slashed(&d, i, NULL, &count) == k.withhold_slash + k.skip_slash &&
                  count == 2);
        }
    }
    df_free(&d);
}

/* Attack: a coalition of a third of the weight (three of nine) takes part
 * in everything (commits, checks, attests) but never reports anyone's
 * payload, so that honest payloads miss two thirds of the active weight.
 * Promise: inclusion counts the reporting weight, so every honest payload
 * is included and aggregated (the coalition's own too: honest members
 * fetched them); each of the coalition pays the skip slash for the duty it
 * skipped, once. */
static void test_silent_reporters_cannot_exclude(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    const int n = 9;
    df_setup(&d, &k, n, NULL, NULL);
    for (int i = 7; i <= n; i++)
        d.act[i].no_reports = true;
    df_open(&d);
    df_commit(&d);
    df_reveal(&d);
    df_verify(&d);
    df_open_verdicts(&d);
    df_refresh(&d);
    CHECK(u64(d.r->round->active_weight) == (uint64_t)n * DF_COLLATERAL);
    CHECK(u64(d.r->round->reporting_weight) == 6 * DF_COLLATERAL);
    CHECK(d.r->round->n_inclusion_set == (size_t)n);
    df_rest_of_round(&d);
    CHECK(d.r->round->phase == PH(DONE));
    for (int i = 1; i <= 6; i++)
        CHECK(aggregated(&d, i));
    for (int i = 7; i <= n; i++) {
        size_t count = 0;
        CHECK(df_slashed(&d, i, "no availability report", &count) == k.skip_slash && count == 1);
    }
    df_free(&d);
}

/* The edge the class minimum leaves: a coalition that seals and then goes
 * idle can take a class below min_class_members active members for one
 * round (three of eight, minimum six). Promise: the class's commitments
 * are then unchecked and unpaid for that round rather than checked by
 * fewer re-checkers than the run requires; the coalition pays the
 * withhold and skip slashes for it, and no honest member is slashed (the fixture fails the
 * test otherwise). */
static void test_sealed_idle_below_minimum(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    for (int i = 6; i <= N; i++)
        d.act[i].idle = true;
    df_open(&d);
    df_commit(&d);
    df_reveal(&d);
    df_until(&d, d.w.verify_start + 1);
    for (int i = 1; i <= 5; i++)
        CHECK(df_last_event(&d, "diloco_unchecked", "target", d.f.addr[i]));
    df_verify(&d);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    CHECK(d.r->round->phase == PH(DONE));
    CHECK(d.r->n_assignments == 0 && d.r->round->n_inclusion_set == 5 &&
          d.r->round->n_aggregation_set == 0);
    for (int i = 6; i <= N; i++) { /* its unrevealed secret and its idle round */
        size_t count = 0;
        CHECK(df_slashed(&d, i, NULL, &count) == k.withhold_slash + k.skip_slash &&
              count == 2);
    }
    df_free(&d);
}

/* MsgLeaveRun. Promise: a member that leaves while a round holds it stays
 * bonded (and on duty) until that round is over, and is paid back and
 * removed when the next round opens; one that no live round holds is paid
 * back at once. After leaving it can neither leave again nor seal (code
 * 6). */
static void test_leave_run(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.window = 8; /* room for the leaves and joins in the commit window */
    df_setup(&d, &k, N, NULL, NULL);
    const int x = 5;
    df_open(&d);
    df_commit(&d);
    uint64_t bal = df_balance(&d, x);
    Gonka__Diloco__V1__MsgLeaveRun leave = GONKA__DILOCO__V1__MSG_LEAVE_RUN__INIT;
    leave.participant = d.f.addr[x];
    leave.run = 1;
    CHECK(df_deliver(&d, x, GD_DILOCO_MSG_LEAVE_RUN, &leave) == 0);
    CHECK(df_balance(&d, x) == bal && df_collateral(&d, x) == DF_COLLATERAL);
    df_qrun *run = df_q_run(&d);
    for (size_t i = 0; i < run->n_members; i++)
        if (strcmp(run->members[i]->address, d.f.addr[x]) == 0)
            CHECK(run->members[i]->leaving);
    df_qfree(run);
    CHECK(df_deliver(&d, x, GD_DILOCO_MSG_LEAVE_RUN, &leave) == GD_DILOCO_ERR_NOT_MEMBER);
    uint8_t seal[32] = {3};
    Gonka__Diloco__V1__MsgRandomness m = df_randomness_msg(&d, x, 2, seal, NULL);
    m.round = 1;
    CHECK(df_deliver(&d, x, GD_DILOCO_MSG_RANDOMNESS, &m) == GD_DILOCO_ERR_NOT_MEMBER);
    /* An outsider joins now (not in round 0) and leaves: paid back at once. */
    Cosmos__Base__V1beta1__Coin coin;
    char amount[24];
    uint64_t bal9 = df_balance(&d, 9);
    Gonka__Diloco__V1__MsgJoinRun j = df_join_msg(&d, 9, DF_CPU, &coin, amount, 15000);
    CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_JOIN_RUN, &j) == 0);
    CHECK(df_balance(&d, 9) == bal9 - 15000);
    leave.participant = d.f.addr[9];
    CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_LEAVE_RUN, &leave) == 0);
    CHECK(df_balance(&d, 9) == bal9 && df_collateral(&d, 9) == UINT64_MAX);
    uint64_t paid = 0;
    CHECK(df_released(&d, 9, &paid) && paid == 15000);
    /* The leaver still does round 0's duties. */
    df_reveal(&d);
    df_verify(&d);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    CHECK(aggregated(&d, x));
    CHECK(!df_released(&d, x, NULL));
    df_open(&d); /* round 1 opened in round 0's last block */
    CHECK(df_released(&d, x, &paid) && paid == DF_COLLATERAL);
    CHECK(df_balance(&d, x) == bal + DF_COLLATERAL);
    CHECK(df_collateral(&d, x) == UINT64_MAX && !d.in_round[x] && d.in_round[1]);
    CHECK(d.r->round->n_members == N - 1);
    df_free(&d);
}

/* ---- 6: undecided checks ------------------------------------------------------------------------------- */

/* Attack: an accusation whose jury splits or stays silent (one PASS, one
 * PASS with another digest, one FAIL beside the accuser's, the rest
 * silent), so that no side holds a third of the class. Promise: the check
 * is UNDECIDED: the accused is not aggregated nor paid for the round but
 * not slashed or marked failed; the accuser gets its bond back; nobody is
 * slashed for the decision (the silent jurors pay for their skips). A spec
 * that could leave a dispute without enough jurors (a class minimum below
 * target + validators + recheck_validators) is refused. */
static void test_tie_undecided(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.checks = 1;
    df_setup(&d, &k, N, NULL, NULL);
    d.watch_honest = false; /* the silent jurors pay; the parties are checked below */
    const int t = 6;
    df_to_draws(&d);
    const df_assignment *a = df_assignment_of(d.r, t, 0, &d);
    const int accuser = df_index(&d, a->validators[0]);
    const int other = a->n_validators > 1 ? df_index(&d, a->validators[1]) : -1;
    d.act[accuser].verdict_on[t] = DF_FAIL;
    uint64_t bal = df_balance(&d, accuser);
    df_to_juries(&d);
    a = df_assignment_of(d.r, t, 0, &d);
    CHECK(a->n_recheckers == df_jury_size(d.r, a) && a->n_recheckers >= 3);
    /* One honest PASS (the other validator's, or the first juror's), one
     * made-up digest, a second FAIL, the rest silent: each side holds at
     * most two of eight equal weights, never more than a third. */
    static const int plan[3] = {DF_PASS, DF_LAZY_PASS, DF_FAIL};
    int re[DF_ACCOUNTS], n_re = (int)a->n_recheckers, first = other > 0 ? 1 : 0;
    for (int i = 0; i < n_re; i++) {
        re[i] = df_index(&d, a->recheckers[i]);
        d.act[re[i]].recheck_on[t] = i + first < 3 ? plan[i + first] : DF_SKIP;
    }
    df_rest_of_round(&d);
    a = df_assignment_of(d.r, t, 0, &d);
    CHECK(a->outcome == OUTCOME(UNDECIDED));
    CHECK(!aggregated(&d, t) && !failed(&d, t) && included(&d, t));
    CHECK(d.r->round->n_aggregation_set == N - 1);
    CHECK(df_collateral(&d, t) == DF_COLLATERAL);
    CHECK(df_balance(&d, accuser) == bal);
    const df_verdict *va = df_verdict_of(d.r, d.f.addr[t], 0, d.f.addr[accuser]);
    CHECK(va && !va->bonded && !va->credited && !va->faulty);
    CHECK(df_slashed(&d, t, NULL, NULL) == 0 && df_slashed(&d, accuser, NULL, NULL) == 0);
    for (int i = 0; i < n_re; i++)
        CHECK(df_slashed(&d, re[i], NULL, NULL) ==
              (d.act[re[i]].recheck_on[t] == DF_SKIP ? k.skip_slash : 0));
    if (other > 0)
        CHECK(df_slashed(&d, other, NULL, NULL) == 0);
    /* The undecided target is paid nothing for round 0's tokens. */
    memset(d.act, 0, sizeof d.act);
    df_play_round(&d);
    df_until(&d, 121);
    df_check_settlement(&d, 1);
    df_settle s;
    CHECK(df_settled(&d, &s, t, 1) && s.tokens == DF_TOKENS); /* round 1 only */
    df_free(&d);

    /* The spec refuses a class minimum that leaves no re-checkers. */
    df_knobs_default(&k);
    k.min_class = 5; /* 1 + 2 validators + 3 re-checkers = 6 */
    json_t *sj = df_spec_json(&k);
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    CHECK(gd_diloco_spec_from_json(&spec, sj) != GD_OK);
    gd_diloco_spec_free(spec);
    spec = NULL;
    k.min_class = 6;
    json_decref(sj);
    sj = df_spec_json(&k);
    CHECK_OK(gd_diloco_spec_from_json(&spec, sj));
    json_decref(sj);
    df_setup(&d, &k, N, NULL, NULL);
    spec->min_class_members = 5;
    Gonka__Diloco__V1__MsgCreateRun create = GONKA__DILOCO__V1__MSG_CREATE_RUN__INIT;
    Cosmos__Base__V1beta1__Coin pool = COSMOS__BASE__V1BETA1__COIN__INIT;
    pool.denom = "ngonka";
    pool.amount = "1000";
    create.authority = d.f.addr[0];
    create.spec = spec;
    create.pool = &pool;
    CHECK(df_deliver(&d, 0, GD_DILOCO_MSG_CREATE_RUN, &create) == GD_DILOCO_ERR_INVALID);
    gd_diloco_spec_free(spec);
    df_free(&d);
}

/* Attack: in a class that has just min_class_members members, one of them
 * idle (a Sybil that stays silent for the skip slash), a colluder falsely
 * accuses an honest target, and a cheater hopes to escape its slash. Only
 * active members are drawn, so after the target and its two validators
 * fewer than three re-checkers are left. Promise: a false accusation always
 * puts its bond at risk and a caught cheat is slashed; no check ends
 * UNDECIDED for want of re-checkers (a class that cannot re-check a
 * dispute should not be checked at all). */
static void test_short_class_accusation_is_not_free(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.double_ppm = 1000000;
    k.checks = 1;
    df_setup(&d, &k, 6, NULL, NULL); /* a class of exactly min_class_members */
    const int t = 2, idle = 6, cheater = 3;
    d.act[idle].idle = true;
    d.act[cheater].cheat = true;
    df_to_draws(&d);
    const df_assignment *a = df_assignment_of(d.r, t, 0, &d);
    int accuser = -1;
    uint64_t bal = 0;
    if (a != NULL) {
        CHECK(!df_has_str(a->validators, a->n_validators, d.f.addr[idle]));
        accuser = df_index(&d, a->validators[0]);
        d.act[accuser].verdict_on[t] = DF_FAIL;
        bal = df_balance(&d, accuser);
    }
    df_to_juries(&d);
    df_rest_of_round(&d);
    for (size_t x = 0; x < d.r->n_assignments; x++) {
        const df_assignment *c = d.r->assignments[x];
        if (c->outcome == OUTCOME(UNDECIDED) && c->n_recheckers == 0)
            fprintf(stderr, "check %u of member %d: undecided with no re-checkers\n", c->check,
                    df_index(&d, c->target));
        CHECK(!(c->outcome == OUTCOME(UNDECIDED) && c->n_recheckers == 0));
    }
    a = df_assignment_of(d.r, t, 0, &d);
    if (a != NULL && a->outcome != OUTCOME(PASSED))
        fprintf(stderr, "the falsely accused member %d: outcome %d, accuser's balance %llu of "
                        "%llu\n",
                t, (int)a->outcome, (unsigned long long)df_balance(&d, accuser),
                (unsigned long long)bal);
    CHECK(a == NULL || (a->outcome == OUTCOME(PASSED) && df_balance(&d, accuser) == bal - k.fail_bond));
    if (df_assignment_of(d.r, cheater, 0, &d) != NULL) {
        CHECK(failed(&d, cheater));
        CHECK(df_slashed(&d, cheater, "upheld", NULL) == k.cheat_slash);
    }
    CHECK(!aggregated(&d, cheater));
    df_free(&d);
}

/* ---- 7: fixed slashes, suspension, ejection ----------------------------------------------------------- */

/* Attack: cheaters with different bonds (20000, 60000, 12000) each fail
 * two checks, and a big one hopes a proportional slash spares it.
 * Promise: each loses exactly cheat_slash, once however many checks were
 * upheld; each is out of the snapshots of the next suspend_rounds rounds
 * (never skip-slashed meanwhile) and back after; the one left below the
 * minimum collateral is paid its remainder back and removed when the next
 * round opens. */
static void test_fixed_slashes_and_suspension(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    uint64_t coll[N] = {20000, 60000, 12000, 20000, 20000, 20000, 20000, 20000};
    df_setup(&d, &k, N, NULL, coll);
    for (int i = 1; i <= 3; i++)
        d.act[i].cheat = true;
    df_to_draws(&d);
    df_verify(&d);
    df_open_verdicts(&d);
    df_dispute(&d);
    df_dispute_open(&d);
    df_attest(&d); /* the outcomes are fixed at attest_start */
    df_refresh(&d);
    for (int i = 1; i <= 3; i++) {
        size_t count = 0;
        CHECK(failed(&d, i) && !aggregated(&d, i));
        CHECK(df_slashed(&d, i, NULL, &count) == k.cheat_slash && count == 1);
        CHECK(df_collateral(&d, i) == coll[i - 1] - k.cheat_slash);
    }
    uint64_t bal3 = df_balance(&d, 3);
    df_attest_open(&d);
    df_finish(&d);
    memset(d.act, 0, sizeof d.act);
    /* Round 1 (69, opened in round 0's last block): 1 and 2 suspended, 3
     * ejected (3000 < 10000). */
    df_open(&d);
    uint64_t paid = 0;
    CHECK(df_released(&d, 3, &paid) && paid == 12000 - k.cheat_slash);
    CHECK(df_balance(&d, 3) == bal3 + paid && df_collateral(&d, 3) == UINT64_MAX);
    CHECK(!d.in_round[1] && !d.in_round[2] && !d.in_round[3] && d.r->round->n_members == N - 3);
    df_qrun *run = df_q_run(&d);
    for (size_t i = 0; i < run->n_members; i++)
        if (strcmp(run->members[i]->address, d.f.addr[1]) == 0)
            CHECK(run->members[i]->suspended_until == 1 + k.suspend);
    df_qfree(run);
    df_commit(&d);
    df_reveal(&d);
    df_verify(&d);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    /* Round 2 (142, epoch 2): still out. */
    df_open(&d);
    CHECK(!d.in_round[1] && !d.in_round[2]);
    df_commit(&d);
    df_reveal(&d);
    df_verify(&d);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    CHECK(df_collateral(&d, 1) == 20000 - k.cheat_slash &&
          df_collateral(&d, 2) == 60000 - k.cheat_slash);
    /* Round 3 (169): back, and honest. */
    df_open(&d);
    CHECK(d.in_round[1] && d.in_round[2] && d.r->round->n_members == N - 1);
    df_commit(&d);
    df_reveal(&d);
    df_verify(&d);
    df_open_verdicts(&d);
    df_rest_of_round(&d);
    CHECK(aggregated(&d, 1) && aggregated(&d, 2));
    df_free(&d);
}

/* ---- 8: attestations -------------------------------------------------------------------------------------- */

/* Attack: an attester that did not compute G_{r+1} copies another's
 * sealed attestation, then its revealed hash and salt. Promise: the seal
 * is bound to its signer: the copy reveals as nothing of the copier's
 * (code 14), its attestation stays unrevealed, and once a quorum forms it
 * pays the skip slash as absent and is not paid for attesting. */
static void test_attestation_copy_fails(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    const int src = 2, copier = 3;
    d.act[copier].attest = DF_SKIP;
    df_to_draws(&d);
    df_verify(&d);
    df_open_verdicts(&d);
    df_dispute(&d);
    df_dispute_open(&d);
    df_attest(&d);
    df_refresh(&d);
    const Gonka__Diloco__V1__Attestation *sa = NULL;
    for (size_t i = 0; i < d.r->n_attestations; i++)
        if (strcmp(d.r->attestations[i]->attester, d.f.addr[src]) == 0)
            sa = d.r->attestations[i];
    CHECK(sa && sa->seal.len == 32 && sa->next_state_hash.len == 0);
    uint8_t copied[32];
    memcpy(copied, sa->seal.data, 32);
    Gonka__Diloco__V1__MsgAttestRound m = df_attest_msg(&d, copier, copied, NULL, NULL);
    CHECK(df_deliver(&d, copier, GD_DILOCO_MSG_ATTEST_ROUND, &m) == 0);
    df_attest_open(&d);
    uint8_t hash[32], salt[32], own[32];
    df_truth(hash, 0);
    df_salt(&d, salt, GD_SEAL_ATTEST, src, 0, NULL, 0);
    df_salt(&d, own, GD_SEAL_ATTEST, copier, 0, NULL, 0);
    Gonka__Diloco__V1__MsgAttestRound r1 = df_attest_msg(&d, copier, NULL, hash, salt);
    CHECK(df_deliver(&d, copier, GD_DILOCO_MSG_ATTEST_ROUND, &r1) == GD_DILOCO_ERR_SEAL);
    Gonka__Diloco__V1__MsgAttestRound r2 = df_attest_msg(&d, copier, NULL, hash, own);
    CHECK(df_deliver(&d, copier, GD_DILOCO_MSG_ATTEST_ROUND, &r2) == GD_DILOCO_ERR_SEAL);
    df_finish(&d);
    CHECK(d.r->round->phase == PH(DONE));
    CHECK(df_slashed(&d, copier, "absent attestation", NULL) == k.skip_slash);
    memset(d.act, 0, sizeof d.act);
    df_play_round(&d);
    df_until(&d, 121);
    df_check_settlement(&d, 1);
    df_settle sc, ss;
    CHECK(df_settled(&d, &sc, copier, 1) && sc.attestations == 1);
    CHECK(df_settled(&d, &ss, src, 1) && ss.attestations == 2);
    df_free(&d);
}

/* Attack: attesters that attest another hash than the majority, or none,
 * to save the work. Promise: once a hash has two thirds of the active
 * weight, each minority and each absent attester pays the skip slash
 * (once); the winning attesters are paid their share
 * (SettleAmount.attestations). */
static void test_attesters_paid_and_slashed(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    const int minority = 4, absent = 5;
    d.act[minority].attest = DF_MINORITY;
    d.act[absent].attest = DF_SKIP;
    df_play_round(&d);
    CHECK(d.r->round->phase == PH(DONE));
    CHECK(df_slashed(&d, minority, "minority attestation", NULL) == k.skip_slash);
    CHECK(df_slashed(&d, absent, "absent attestation", NULL) == k.skip_slash);
    memset(d.act, 0, sizeof d.act);
    df_play_round(&d);
    df_until(&d, 121);
    df_check_settlement(&d, 1);
    for (int i = 1; i <= N; i++) {
        df_settle s;
        CHECK(df_settled(&d, &s, i, 1));
        CHECK(s.attestations == (i == minority || i == absent ? 1u : 2u));
    }
    df_free(&d);
}

/* Attack: a member splits its collateral into several minimum-size
 * identities, each of which attests, to take a larger part of the
 * attesters' share. Promise (incentives that hold against Sybils): what an
 * identity earns does not grow by splitting; the attesters' share is paid
 * by weight, so two identities of 20000 earn together what one of 40000
 * earns. Only attestations are paid in this run. */
static void test_attest_pay_does_not_reward_splitting(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.validator_share_ppm = 0;
    k.attest_share_ppm = 1000000;
    uint64_t coll[N] = {40000, 40000, 40000, 40000, 40000, 40000, 20000, 20000};
    df_setup(&d, &k, N, NULL, coll);
    df_play_round(&d);
    df_play_round(&d);
    df_until(&d, 121);
    df_settle big, s7, s8;
    CHECK(df_settled(&d, &big, 1, 1) && df_settled(&d, &s7, 7, 1) && df_settled(&d, &s8, 8, 1));
    CHECK(big.attestations == 2 && s7.attestations == 2 && s8.attestations == 2);
    if (s7.amount + s8.amount > big.amount + 1)
        fprintf(stderr, "two identities of 20000 earn %llu for attesting, one of 40000 %llu\n",
                (unsigned long long)(s7.amount + s8.amount), (unsigned long long)big.amount);
    CHECK(s7.amount + s8.amount <= big.amount + 1);
    df_free(&d);
}

/* ---- 9: tallies, the member cap, pruning -------------------------------------------------------------- */

/* Each commitment's tally (Commitment.report_weight) starts at zero and
 * adds each reporter's frozen weight, once; inclusion is exactly
 * 3 * (tally + the committer's weight, as it reports too) >= 2 * the
 * reporting weight (Round.reporting_weight: every member that reported).
 * Unequal bonds; some reporters skip some targets, so that some
 * commitments fall short. A report from outside the round is refused
 * (code 6). */
static void test_report_tally(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    uint64_t coll[N] = {20000, 21000, 22000, 23000, 24000, 25000, 26000, 40000};
    df_setup(&d, &k, N, NULL, coll);
    /* Target 1: everyone but 8 (the biggest) reports it; target 2: only 3
     * and 4; target 3: only 8. */
    d.act[8].skip_report[1] = true;
    for (int i = 1; i <= N; i++) {
        if (i != 3 && i != 4)
            d.act[i].skip_report[2] = true;
        if (i != 8)
            d.act[i].skip_report[3] = true;
    }
    df_to_draws(&d);
    for (size_t i = 0; i < d.r->n_commitments; i++) {
        const Gonka__Diloco__V1__Commitment *c = d.r->commitments[i];
        CHECK(u64(c->report_weight) == 0 && c->reports == 0);
    }
    df_verify(&d);
    /* An outsider's report. */
    {
        uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint32_t n = df_drawn_chunks(&d, chunks, 9, 1);
        gd_buf proofs[GD_DILOCO_AVAIL_CHUNKS_MAX] = {{0}};
        ProtobufCBinaryData pf[GD_DILOCO_AVAIL_CHUNKS_MAX], lf[GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint8_t leaves[GD_DILOCO_AVAIL_CHUNKS_MAX][32];
        Gonka__Diloco__V1__MsgReportAvailability m =
            df_report_msg(&d, 9, 1, chunks, n, proofs, pf, leaves, lf);
        CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m) == GD_DILOCO_ERR_NOT_MEMBER);
        for (uint32_t i = 0; i < n; i++)
            gd_buf_free(&proofs[i]);
    }
    /* A committer reporting its own payload, to count its weight twice:
     * refused (code 2), and its tally unchanged. */
    {
        df_refresh(&d);
        uint64_t before = u64(df_commitment_of(d.r, d.f.addr[2])->report_weight);
        uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint32_t n = df_drawn_chunks(&d, chunks, 2, 2);
        gd_buf proofs[GD_DILOCO_AVAIL_CHUNKS_MAX] = {{0}};
        ProtobufCBinaryData pf[GD_DILOCO_AVAIL_CHUNKS_MAX], lf[GD_DILOCO_AVAIL_CHUNKS_MAX];
        uint8_t leaves[GD_DILOCO_AVAIL_CHUNKS_MAX][32];
        Gonka__Diloco__V1__MsgReportAvailability m =
            df_report_msg(&d, 2, 2, chunks, n, proofs, pf, leaves, lf);
        CHECK(df_deliver(&d, 2, GD_DILOCO_MSG_REPORT_AVAILABILITY, &m) == GD_DILOCO_ERR_INVALID);
        for (uint32_t i = 0; i < n; i++)
            gd_buf_free(&proofs[i]);
        df_refresh(&d);
        CHECK(u64(df_commitment_of(d.r, d.f.addr[2])->report_weight) == before);
    }
    df_open_verdicts(&d);
    df_refresh(&d);
    uint64_t active = u64(d.r->round->active_weight), total = 0;
    uint64_t reporting = u64(d.r->round->reporting_weight);
    for (int i = 0; i < N; i++)
        total += coll[i];
    CHECK(active == total && reporting == total); /* everyone reported something */
    for (size_t i = 0; i < d.r->n_commitments; i++) {
        const Gonka__Diloco__V1__Commitment *c = d.r->commitments[i];
        int who = df_index(&d, c->participant);
        uint64_t want = 0;
        uint32_t reports = 0;
        for (size_t j = 0; j < d.r->n_availability; j++)
            if (strcmp(d.r->availability[j]->target, c->participant) == 0) {
                want += coll[df_index(&d, d.r->availability[j]->reporter) - 1];
                reports++;
            }
        CHECK(u64(c->report_weight) == want && c->reports == reports);
        CHECK(included(&d, who) == (3 * (want + coll[who - 1]) >= 2 * reporting));
    }
    CHECK(u64(df_commitment_of(d.r, d.f.addr[1])->report_weight) == total - 40000 - 20000);
    CHECK(included(&d, 1) && !included(&d, 2) && !included(&d, 3) && included(&d, 4));
    df_rest_of_round(&d);
    df_free(&d);
}

/* Attack: a Sybil farm joins far more identities than the run can check.
 * Promise: the run admits max_members; a join beyond is refused (code 2)
 * and bonds nothing; a member that leaves frees its place. */
static void test_max_members(void) {
    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.max_members = N + 1;
    df_setup(&d, &k, N, NULL, NULL);
    Cosmos__Base__V1beta1__Coin coin;
    char amount[24];
    Gonka__Diloco__V1__MsgJoinRun j = df_join_msg(&d, 9, DF_CPU, &coin, amount, 20000);
    CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_JOIN_RUN, &j) == 0);
    uint64_t bal = df_balance(&d, 10);
    j = df_join_msg(&d, 10, DF_CPU, &coin, amount, 20000);
    CHECK(df_deliver(&d, 10, GD_DILOCO_MSG_JOIN_RUN, &j) == GD_DILOCO_ERR_INVALID);
    CHECK(df_balance(&d, 10) == bal && df_collateral(&d, 10) == UINT64_MAX);
    Gonka__Diloco__V1__MsgLeaveRun leave = GONKA__DILOCO__V1__MSG_LEAVE_RUN__INIT;
    leave.participant = d.f.addr[9];
    leave.run = 1;
    CHECK(df_deliver(&d, 9, GD_DILOCO_MSG_LEAVE_RUN, &leave) == 0); /* no round yet: at once */
    CHECK(df_collateral(&d, 9) == UINT64_MAX);
    CHECK(df_deliver(&d, 10, GD_DILOCO_MSG_JOIN_RUN, &j) == 0);
    df_free(&d);
}

/* Every key of the export's raw records, decoded: kind, run, and the round
 * (or, for settle records, the epoch). */
static void export_keys(json_t *exported, int *kinds, uint64_t *rounds, size_t *n, size_t cap) {
    json_t *records = json_object_get(json_object_get(exported, "diloco"), "records");
    *n = 0;
    size_t i;
    json_t *r;
    json_array_foreach(records, i, r) {
        const char *b64 = json_string_value(json_object_get(r, "key"));
        uint8_t key[256];
        size_t len = 0;
        CHECK(b64 && gd_base64_decode(key, sizeof key, &len, b64, strlen(b64)) == GD_OK);
        if (len < 18 || *n >= cap)
            continue;
        kinds[*n] = key[1];
        uint64_t v = 0;
        for (int b = 10; b < 18; b++)
            v = v << 8 | key[b];
        rounds[(*n)++] = v;
    }
}

static void restart_from_export(df *d) {
    json_t *exported = gd_app_export(d->f.app);
    df_restart_from_export(d, exported);
    json_decref(exported);
}

/* Settled rounds are pruned: when epoch 3 settles epoch 2 (height 220),
 * epoch 1's claim window closes: its unclaimed amounts are burned, its
 * settle records and its rounds (every record of them) removed; the round
 * query answers code 8 for them. The state still round-trips through
 * export/import, and two identical runs reach the same app hash. */
static void pruning_run(df *d, uint8_t hash[32]) {
    df_knobs k;
    setup(d, &k);
    d->act[7].cheat = true; /* some bonds, slashes and suspension in the records */
    for (int r = 0; r < 4; r++) {
        df_play_round(d);
        memset(d->act, 0, sizeof d->act);
        if (r == 2) { /* 169: epoch 2's claim stage */
            /* Member 1 claims epoch 1; the rest leave theirs. */
            Gonka__Diloco__V1__MsgClaimRewards cl = df_claim_msg(d, 1, 1);
            CHECK(df_deliver(d, 1, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == 0);
        }
    }
    char module[GD_ADDRESS_STR_MAX];
    CHECK_OK(gd_auth_module_address(module, sizeof module, "diloco"));
    df_until(d, 220);
    CHECK(df_q_round_code(d, 0) == 0 && df_q_round_code(d, 1) == 0);
    uint64_t unclaimed = 0;
    for (int i = 2; i < DF_ACCOUNTS; i++) {
        df_settle s;
        if (df_settled(d, &s, i, 1) && !s.claimed)
            unclaimed += s.amount;
    }
    CHECK(unclaimed > 0);
    uint64_t before = u64(fix_balance(&d->f, module));
    df_empty_block(d); /* 220: epoch 3 begins */
    CHECK(u64(fix_balance(&d->f, module)) == before - unclaimed);
    CHECK(df_q_round_code(d, 0) == GD_DILOCO_ERR_UNKNOWN_ROUND);
    CHECK(df_q_round_code(d, 1) == GD_DILOCO_ERR_UNKNOWN_ROUND);
    CHECK(df_q_round_code(d, 2) == 0 && df_q_round_code(d, 3) == 0);
    for (int i = 1; i < DF_ACCOUNTS; i++)
        CHECK(!df_settled(d, NULL, i, 1));
    CHECK(df_settled(d, NULL, 1, 2));
    Gonka__Diloco__V1__MsgClaimRewards cl = df_claim_msg(d, 2, 1);
    CHECK(df_deliver(d, 2, GD_DILOCO_MSG_CLAIM_REWARDS, &cl) == GD_DILOCO_ERR_EPOCH);
    json_t *exported = gd_app_export(d->f.app);
    int kinds[4096];
    uint64_t rounds[4096];
    size_t n = 0;
    export_keys(exported, kinds, rounds, &n, 4096);
    json_decref(exported);
    size_t of_later = 0;
    for (size_t i = 0; i < n; i++) {
        if (kinds[i] == 0x0b) /* settle: run, epoch */
            CHECK(rounds[i] >= 2);
        else
            CHECK(rounds[i] >= 2); /* round-level records: run, round */
        of_later += kinds[i] != 0x0b;
    }
    CHECK(of_later > 0);
    restart_from_export(d);
    gd_app_hash(d->f.app, hash);
}

static void test_pruning(void) {
    df a, b;
    uint8_t ha[32], hb[32];
    pruning_run(&a, ha);
    pruning_run(&b, hb);
    CHECK(memcmp(ha, hb, 32) == 0);
    /* The restarted chain goes on: round 4 opens in epoch 3 (242). */
    df_until(&a, 243);
    df_qrun *run = df_q_run(&a);
    CHECK(run->current_round && run->current_round->index == 4 && run->current_round->epoch == 3);
    df_qfree(run);
    df_free(&a);
    df_free(&b);
}

/* ---- 10: skips priced per duty, salted seals ------------------------------------------------------- */

/* Attack (the red-team review's seventh): with one skip slash per round,
 * every skip after the first was free, so a member that had skipped one
 * duty skipped the rest. Promise: each skipped duty costs the skip slash.
 * A validator skips its round secret, its checks, its re-checks and its
 * attestation: it pays for each; the checks it skipped go to the class,
 * so the honest targets still pass. (A producer that censors many of a
 * member's messages can now cost it more than one skip slash a round: the
 * price of making every duty count; docs/verification.md.) */
static void test_skips_priced_per_duty(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    df_to_draws(&d);
    int v = -1;
    for (int i = 1; i <= N && v < 0; i++)
        if (duties(&d, i, 0) >= 2)
            v = i;
    CHECK(v > 0);
    if (v < 0)
        abort();
    d.act[v].verdict = DF_SKIP;
    d.act[v].recheck = DF_SKIP;
    d.act[v].attest = DF_SKIP;
    d.act[v].secret = DF_SEAL_ONLY; /* too late for round 0's (fixed already), not for round 1's */
    /* A lazy accuser on a check v neither holds nor is the target of puts
     * v on a jury. */
    for (size_t x = 0; x < d.r->n_assignments; x++) {
        const df_assignment *a = d.r->assignments[x];
        int t = df_index(&d, a->target), u = df_index(&d, a->validators[0]);
        if (t != v && !df_has_str(a->validators, a->n_validators, d.f.addr[v]) &&
            duties(&d, u, t) == 1) {
            d.act[u].verdict_on[t] = DF_UNAVAILABLE;
            break;
        }
    }
    d.watch_honest = false; /* the lazy accuser loses its bond, v its skips */
    df_to_juries(&d);
    size_t count = 0;
    CHECK(df_slashed(&d, v, "skipped check", &count) == (uint64_t)duties(&d, v, 0) * k.skip_slash);
    CHECK(count == (size_t)duties(&d, v, 0));
    size_t juries = 0;
    for (size_t x = 0; x < d.r->n_assignments; x++)
        juries += df_has_str(d.r->assignments[x]->recheckers, d.r->assignments[x]->n_recheckers,
                             d.f.addr[v]);
    CHECK(juries > 0);
    df_rest_of_round(&d);
    CHECK(df_slashed(&d, v, "skipped re-check", &count) == juries * k.skip_slash);
    CHECK(df_slashed(&d, v, "absent attestation", &count) == k.skip_slash);
    CHECK(df_weighted_of(d.r, d.f.addr[v])->skip_slashed);
    for (int i = 1; i <= N; i++)
        if (i != v)
            CHECK(aggregated(&d, i));
    /* Round 1: the unrevealed secret is one more duty skipped, priced as
     * a withheld secret. */
    uint64_t before = df_slashed(&d, v, NULL, NULL);
    df_play_round(&d);
    CHECK(df_slashed(&d, v, "unrevealed randomness", &count) == k.withhold_slash && count == 1);
    CHECK(df_slashed(&d, v, NULL, NULL) > before + k.withhold_slash);
    df_free(&d);
}

/* Seals are salted: the same verdict and digest sealed by two validators,
 * or by one with two salts, gives different seals, so a seal tells nothing
 * about the answer until it is revealed; a reveal with another salt than
 * the sealed one is refused (code 14). On a double check where both
 * validators PASS with one digest, the chain holds two different seals. */
static void test_seals_salted(void) {
    uint8_t digest[32], s1[32], s2[32], a[32], b[32], c[32], e[32];
    memset(digest, 5, 32);
    memset(s1, 1, 32);
    memset(s2, 2, 32);
    gd_diloco_verdict_seal(a, GD_SEAL_VERDICT, "gonka1alice", GD_VERDICT_PASS, digest, s1);
    gd_diloco_verdict_seal(b, GD_SEAL_VERDICT, "gonka1bob", GD_VERDICT_PASS, digest, s1);
    gd_diloco_verdict_seal(c, GD_SEAL_VERDICT, "gonka1alice", GD_VERDICT_PASS, digest, s2);
    gd_diloco_verdict_seal(e, GD_SEAL_RECHECK, "gonka1alice", GD_VERDICT_PASS, digest, s1);
    CHECK(memcmp(a, b, 32) != 0 && memcmp(a, c, 32) != 0 && memcmp(a, e, 32) != 0);

    df d;
    df_knobs k;
    df_knobs_default(&k);
    k.double_ppm = 1000000;
    k.checks = 1;
    df_setup(&d, &k, N, NULL, NULL);
    df_to_draws(&d);
    df_verify(&d);
    df_refresh(&d);
    const df_assignment *x = df_assignment_of(d.r, 1, 0, &d);
    const df_verdict *v0 = df_verdict_of(d.r, x->target, 0, x->validators[0]);
    const df_verdict *v1 = df_verdict_of(d.r, x->target, 0, x->validators[1]);
    CHECK(v0 && v1 && v0->seal.len == 32 && v1->seal.len == 32 &&
          memcmp(v0->seal.data, v1->seal.data, 32) != 0);
    /* A reveal with another salt. */
    df_until(&d, d.w.open_start);
    int who = df_index(&d, x->validators[0]);
    uint8_t dg[32], other[32];
    df_honest_digest(dg, 0, x->target, x->segment, x->step);
    memset(other, 0x42, 32);
    char target[GD_ADDRESS_STR_MAX];
    snprintf(target, sizeof target, "%s", x->target);
    Gonka__Diloco__V1__MsgSubmitVerdict m = df_verdict_msg(&d, who, target, 0, NULL, V_PASS, dg, other);
    CHECK(df_deliver(&d, who, GD_DILOCO_MSG_SUBMIT_VERDICT, &m) == GD_DILOCO_ERR_SEAL);
    df_open_verdicts(&d);
    df_refresh(&d);
    x = df_assignment_of(d.r, 1, 0, &d);
    v0 = df_verdict_of(d.r, x->target, 0, x->validators[0]);
    v1 = df_verdict_of(d.r, x->target, 0, x->validators[1]);
    CHECK(v0 && v1 && v0->verdict == V_PASS && v1->verdict == V_PASS &&
          memcmp(v0->digest.data, v1->digest.data, 32) == 0);
    df_rest_of_round(&d);
    CHECK(aggregated(&d, 1));
    df_free(&d);
}

/* A message in the wrong window is refused with code 9 and a log naming
 * both windows, the two reveal windows of v2 included. */
static void test_window_names(void) {
    df d;
    df_knobs k;
    setup(&d, &k);
    df_to_draws(&d);
    d.act[df_index(&d, d.r->assignments[0]->validators[0])].verdict_on[df_index(
        &d, d.r->assignments[0]->target)] = DF_UNAVAILABLE;
    df_to_juries(&d);
    df_dispute(&d);
    df_dispute_open(&d);
    uint8_t seal[32] = {1};
    const df_assignment *a = d.r->assignments[0];
    int re = df_index(&d, a->recheckers[0]);
    Gonka__Diloco__V1__MsgDispute m = df_dispute_msg(&d, re, a->target, a->check, seal, 0, NULL, NULL);
    CHECK(df_deliver(&d, re, GD_DILOCO_MSG_DISPUTE, &m) == GD_DILOCO_ERR_WINDOW);
    if (strstr(d.last_log, "dispute_open window") == NULL)
        fprintf(stderr, "log: %s\n", d.last_log);
    CHECK(strstr(d.last_log, "dispute_open window") != NULL);
    df_attest(&d);
    df_attest_open(&d);
    Gonka__Diloco__V1__MsgAttestRound at = df_attest_msg(&d, 1, seal, NULL, NULL);
    CHECK(df_deliver(&d, 1, GD_DILOCO_MSG_ATTEST_ROUND, &at) == GD_DILOCO_ERR_WINDOW);
    if (strstr(d.last_log, "attest_open window") == NULL)
        fprintf(stderr, "log: %s\n", d.last_log);
    CHECK(strstr(d.last_log, "attest_open window") != NULL);
    df_finish(&d);
    df_free(&d);
}

int main(void) {
    RUN_TEST(test_private_class_refused);
    RUN_TEST(test_small_class_unchecked);
    RUN_TEST(test_withheld_checkpoints);
    RUN_TEST(test_lazy_unavailable);
    RUN_TEST(test_one_validator_two_checks);
    RUN_TEST(test_lazy_pass_slashed);
    RUN_TEST(test_colluding_pass_slashed);
    RUN_TEST(test_recheck_outcomes);
    RUN_TEST(test_recheck_copy_fails);
    RUN_TEST(test_weighted_draws);
    RUN_TEST(test_sybil_rarely_picked);
    RUN_TEST(test_seed_independent_of_block);
    RUN_TEST(test_unrevealed_secret_slashed);
    RUN_TEST(test_secret_rules);
    RUN_TEST(test_chunks_drawn_after_commit);
    RUN_TEST(test_idle_coalition_cannot_exclude);
    RUN_TEST(test_sealed_idle_below_minimum);
    RUN_TEST(test_silent_reporters_cannot_exclude);
    RUN_TEST(test_leave_run);
    RUN_TEST(test_tie_undecided);
    RUN_TEST(test_short_class_accusation_is_not_free);
    RUN_TEST(test_fixed_slashes_and_suspension);
    RUN_TEST(test_attestation_copy_fails);
    RUN_TEST(test_attesters_paid_and_slashed);
    RUN_TEST(test_attest_pay_does_not_reward_splitting);
    RUN_TEST(test_report_tally);
    RUN_TEST(test_max_members);
    RUN_TEST(test_pruning);
    RUN_TEST(test_skips_priced_per_duty);
    RUN_TEST(test_seals_salted);
    RUN_TEST(test_window_names);
    return gd_test_finish();
}
