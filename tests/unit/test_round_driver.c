/* The round driver (plugin/member/round_driver.c): the duties due in every window
 * of an honest round, for a worker and for a validator that does not
 * train; nothing twice once the chain shows it done (restart safety);
 * nothing after its window; joining, sealing the next round's secret,
 * leaving and claiming; the cap on actions per step; and the view built
 * from the module's query answers (plugin/member/chain_view.c). */
#include <string.h>

#include "plugin/member/chain_view.h"
#include "plugin/member/round_driver.h"
#include "tests/support/testkit.h"

#define ME "gonka1me"
#define A "gonka1aa"
#define B "gonka1bb"

static const gd_round_windows k_windows = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};

typedef struct scene {
    gd_chain_view v;
    gd_member_journal j;
    gd_duty_config cfg;
    const char *commitments[3];
    const char *reported[3];
    gd_view_check checks[2];
} scene;

/* A member in round 7's snapshot with the next round's secret sealed; two
 * checks: it validates A's check 0 and re-checks B's check 1. */
static void scene_init(scene *s, unsigned roles) {
    memset(s, 0, sizeof *s);
    s->cfg.roles = roles;
    s->cfg.join = true;
    strcpy(s->v.address, ME);
    s->v.member = true;
    s->v.next_round = 8;
    s->v.sealed_next = true;
    s->v.have_round = true;
    gd_round_view *r = &s->v.round;
    r->index = 7;
    r->epoch = 2;
    r->windows = k_windows;
    r->in_snapshot = true;
    r->secret_sealed = true;
    s->commitments[0] = A;
    s->commitments[1] = ME;
    s->commitments[2] = B;
    r->commitments = s->commitments;
    r->n_commitments = 3;
    r->reported = s->reported;
    strcpy(s->checks[0].target, A);
    s->checks[0].check = 0;
    s->checks[0].validator = true;
    strcpy(s->checks[1].target, B);
    s->checks[1].check = 1;
    s->checks[1].rechecker = true;
    r->checks = s->checks;
    r->n_checks = 2;
    s->j.round = 7;
}

/* The actions for a view read at `height` (sent now, they land in
 * height + 1), as "kind[:target]" joined by spaces. */
static const char *duties(scene *s, int64_t height) {
    static char text[512];
    gd_action out[16];
    size_t n = 0;
    s->v.height = height;
    CHECK(!gd_round_driver_step(&s->cfg, &s->v, &s->j, out, 16, &n));
    text[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "%s%s%s%s", i ? " " : "",
                 gd_action_names[out[i].kind], out[i].target[0] ? ":" : "", out[i].target);
        bool round_duty = out[i].kind != GD_ACT_SEAL_SECRET && out[i].kind != GD_ACT_CLAIM &&
                          out[i].kind != GD_ACT_JOIN && out[i].kind != GD_ACT_LEAVE;
        CHECK(!round_duty || out[i].round == 7);
    }
    return text;
}

static void test_windows(void) {
    CHECK(gd_round_window_at(&k_windows, 9) == GD_WINDOW_NONE);
    CHECK(gd_round_window_at(&k_windows, 10) == GD_WINDOW_TRAIN);
    CHECK(gd_round_window_at(&k_windows, 19) == GD_WINDOW_TRAIN);
    CHECK(gd_round_window_at(&k_windows, 20) == GD_WINDOW_COMMIT);
    CHECK(gd_round_window_at(&k_windows, 69) == GD_WINDOW_DISPUTE);
    CHECK(gd_round_window_at(&k_windows, 70) == GD_WINDOW_DISPUTE_OPEN);
    CHECK(gd_round_window_at(&k_windows, 99) == GD_WINDOW_ATTEST_OPEN);
    CHECK(gd_round_window_at(&k_windows, 100) == GD_WINDOW_OVER);
    CHECK_STR_EQ(gd_window_name(GD_WINDOW_DISPUTE_OPEN), "dispute_open");
}

/* An honest worker-validator through every window, the chain showing each
 * duty done once it is. */
static void test_honest_round(void) {
    scene s;
    scene_init(&s, GD_ROLE_WORKER | GD_ROLE_VALIDATOR);
    gd_round_view *r = &s.v.round;
    CHECK_STR_EQ(duties(&s, 12), "train");
    CHECK_STR_EQ(duties(&s, 19), "train commit"); /* training late commits at once */
    s.j.trained = true;
    CHECK_STR_EQ(duties(&s, 15), ""); /* trained early: the commit waits for its window */
    CHECK_STR_EQ(duties(&s, 20), "commit");
    r->committed = true;
    CHECK_STR_EQ(duties(&s, 25), "");
    CHECK_STR_EQ(duties(&s, 29), "reveal-secret"); /* it lands at 30 */
    r->secret_revealed = true;
    CHECK_STR_EQ(duties(&s, 31), "");
    /* The next block starts the verify window, but the draws are fixed in
     * that block: the view must show it first. */
    CHECK_STR_EQ(duties(&s, 39), "");
    CHECK_STR_EQ(duties(&s, 40), "report:" A " report:" B " check:" A);
    s.reported[0] = B;
    r->n_reported = 1;
    CHECK_STR_EQ(duties(&s, 41), "report:" A " check:" A);
    s.reported[1] = A;
    r->n_reported = 2;
    s.checks[0].sealed = true;
    CHECK_STR_EQ(duties(&s, 42), "");
    CHECK_STR_EQ(duties(&s, 49), "reveal-verdict:" A); /* lands at 50: the open window */
    s.checks[0].revealed = true;
    CHECK_STR_EQ(duties(&s, 59), ""); /* the re-checkers are drawn at 60 */
    CHECK_STR_EQ(duties(&s, 60), "recheck:" B);
    s.checks[1].sealed = true;
    CHECK_STR_EQ(duties(&s, 61), "");
    CHECK_STR_EQ(duties(&s, 70), "reveal-recheck:" B);
    s.checks[1].revealed = true;
    CHECK_STR_EQ(duties(&s, 79), ""); /* the aggregation set is fixed at 80 */
    CHECK_STR_EQ(duties(&s, 80), "aggregate seal-attest");
    s.j.aggregated = true;
    CHECK_STR_EQ(duties(&s, 81), "seal-attest");
    r->attest_sealed = true;
    CHECK_STR_EQ(duties(&s, 85), "");
    CHECK_STR_EQ(duties(&s, 90), "reveal-attest");
    r->attest_revealed = true;
    CHECK_STR_EQ(duties(&s, 95), "");
    r->over = true;
    CHECK_STR_EQ(duties(&s, 100), "");
}

/* A validator that does not train has no training or commit duty, and
 * still reports, checks and attests. */
static void test_validator_only(void) {
    scene s;
    scene_init(&s, GD_ROLE_VALIDATOR);
    CHECK_STR_EQ(duties(&s, 12), "");
    CHECK_STR_EQ(duties(&s, 20), "");
    CHECK_STR_EQ(duties(&s, 40), "report:" A " report:" B " check:" A);
    CHECK_STR_EQ(duties(&s, 80), "aggregate seal-attest");
}

/* Restart safety: a journal from before a crash never causes a duty the
 * chain already shows, and a journal of an older round does not count as
 * this round's training. */
static void test_restart(void) {
    scene s;
    scene_init(&s, GD_ROLE_WORKER | GD_ROLE_VALIDATOR);
    s.j.trained = true;
    s.v.round.committed = true; /* the commit landed before the crash */
    CHECK_STR_EQ(duties(&s, 22), "");
    s.v.round.committed = false;
    s.j.round = 6; /* the journal is the last round's */
    CHECK_STR_EQ(duties(&s, 22), "train commit");
    s.j.round = 7;
    s.j.aggregated = false;
    s.v.round.attest_sealed = true; /* sealed, then crashed before the journal */
    CHECK_STR_EQ(duties(&s, 85), "aggregate");
    s.j.aggregated = true;
    CHECK_STR_EQ(duties(&s, 85), "");
}

/* Nothing after its window: the chain would refuse it (code 9). */
static void test_late(void) {
    scene s;
    scene_init(&s, GD_ROLE_WORKER | GD_ROLE_VALIDATOR);
    s.j.trained = true;
    CHECK_STR_EQ(duties(&s, 29), "reveal-secret"); /* the commit would land at 30: too late */
    s.v.round.secret_revealed = true;
    CHECK_STR_EQ(duties(&s, 49), ""); /* the report and check would land at 50: too late, */
    CHECK_STR_EQ(duties(&s, 50), ""); /* and a check never sealed has nothing to reveal */
    s.v.round.secret_sealed = false;
    s.v.round.secret_revealed = false;
    CHECK_STR_EQ(duties(&s, 31), ""); /* nothing sealed for this round: nothing to reveal */
}

static void test_membership(void) {
    scene s;
    scene_init(&s, GD_ROLE_WORKER);
    /* Not in this round's snapshot (joined late, or sealed nothing): only
     * the next round's secret. */
    s.v.round.in_snapshot = false;
    s.v.sealed_next = false;
    CHECK_STR_EQ(duties(&s, 12), "seal-secret");
    gd_action out[4];
    size_t n = 0;
    gd_round_driver_step(&s.cfg, &s.v, &s.j, out, 4, &n);
    CHECK(n == 1 && out[0].round == 8);
    /* Not a member: join once. */
    s.v.member = false;
    CHECK_STR_EQ(duties(&s, 12), "join");
    s.j.join_sent = true;
    CHECK_STR_EQ(duties(&s, 12), "");
    s.cfg.join = false;
    s.j.join_sent = false;
    CHECK_STR_EQ(duties(&s, 12), "");
    /* Leaving: MsgLeaveRun once, and no secret for the next round. */
    scene_init(&s, GD_ROLE_WORKER);
    s.v.sealed_next = false;
    s.j.leave_wanted = true;
    CHECK_STR_EQ(duties(&s, 12), "leave train");
    s.v.leaving = true;
    CHECK_STR_EQ(duties(&s, 12), "train"); /* a live round still holds it */
}

static void test_claims(void) {
    scene s;
    scene_init(&s, GD_ROLE_WORKER);
    s.v.have_round = false;
    s.v.claim_open = true;
    s.v.claim_epoch = 4;
    s.v.owed = 1234;
    CHECK_STR_EQ(duties(&s, 12), "claim");
    gd_action out[4];
    size_t n = 0;
    gd_round_driver_step(&s.cfg, &s.v, &s.j, out, 4, &n);
    CHECK(n == 1 && out[0].epoch == 4);
    s.v.member = false; /* left the run: still claims what it earned */
    s.cfg.join = false;
    CHECK_STR_EQ(duties(&s, 12), "claim");
    s.v.claimed = true;
    CHECK_STR_EQ(duties(&s, 12), "");
    s.v.claimed = false;
    s.v.owed = 0;
    CHECK_STR_EQ(duties(&s, 12), "");
}

static void test_cap(void) {
    scene s;
    scene_init(&s, GD_ROLE_VALIDATOR);
    s.v.height = 40;
    gd_action out[2];
    size_t n = 0;
    CHECK(gd_round_driver_step(&s.cfg, &s.v, &s.j, out, 2, &n)); /* three due */
    CHECK(n == 2 && out[0].kind == GD_ACT_REPORT && out[1].kind == GD_ACT_REPORT);
    s.v.claim_open = true;
    s.v.owed = 1;
    CHECK(gd_round_driver_step(&s.cfg, &s.v, &s.j, out, 2, &n));
    CHECK(n == 2 && out[1].kind == GD_ACT_REPORT && out[1].epoch == 0);
}

/* The view from query answers: the node (ME) in round 3's snapshot, a
 * commitment of its own and of A, a report of A's payload, one verdict
 * sealed on A's check 0 and a re-check of B's check 1 assigned to it, its
 * secret sealed, its attestation sealed and revealed; 900 owed for epoch 1,
 * not yet claimed. */
static void test_view_from_queries(void) {
    uint8_t h[32] = {1};
    ProtobufCBinaryData hash = {32, h};
    Gonka__Diloco__V1__RoundWindows w = GONKA__DILOCO__V1__ROUND_WINDOWS__INIT;
    w.train_start = 10, w.commit_start = 20, w.reveal_start = 30, w.verify_start = 40;
    w.open_start = 50, w.dispute_start = 60, w.dispute_open_start = 70, w.attest_start = 80;
    w.attest_open_start = 90, w.end = 100;
    Gonka__Diloco__V1__WeightedMember m1 = GONKA__DILOCO__V1__WEIGHTED_MEMBER__INIT,
                                        m2 = GONKA__DILOCO__V1__WEIGHTED_MEMBER__INIT;
    m1.address = A;
    m2.address = ME;
    Gonka__Diloco__V1__WeightedMember *members[] = {&m1, &m2};
    Gonka__Diloco__V1__Round round = GONKA__DILOCO__V1__ROUND__INIT;
    round.run = 1;
    round.index = 3;
    round.epoch = 1;
    round.windows = &w;
    round.members = members;
    round.n_members = 2;
    round.phase = GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_VERIFY;
    Gonka__Diloco__V1__Run run = GONKA__DILOCO__V1__RUN__INIT;
    run.id = 1;
    run.next_round = 4;
    Gonka__Diloco__V1__Member me = GONKA__DILOCO__V1__MEMBER__INIT;
    me.address = ME;
    Gonka__Diloco__V1__Member *run_members[] = {&me};
    Gonka__Diloco__V1__QueryRunResponse qrun = GONKA__DILOCO__V1__QUERY_RUN_RESPONSE__INIT;
    qrun.run = &run;
    qrun.members = run_members;
    qrun.n_members = 1;
    qrun.current_round = &round;

    Gonka__Diloco__V1__Commitment c1 = GONKA__DILOCO__V1__COMMITMENT__INIT,
                                   c2 = GONKA__DILOCO__V1__COMMITMENT__INIT;
    c1.participant = A;
    c2.participant = ME;
    Gonka__Diloco__V1__Commitment *commits[] = {&c1, &c2};
    Gonka__Diloco__V1__AvailabilityReport rep = GONKA__DILOCO__V1__AVAILABILITY_REPORT__INIT;
    rep.reporter = ME;
    rep.target = A;
    Gonka__Diloco__V1__AvailabilityReport *reps[] = {&rep};
    char *vals[] = {(char *)ME}, *rechk[] = {(char *)ME};
    Gonka__Diloco__V1__Assignment a0 = GONKA__DILOCO__V1__ASSIGNMENT__INIT,
                                   a1 = GONKA__DILOCO__V1__ASSIGNMENT__INIT;
    a0.target = A;
    a0.check = 0;
    a0.segment = 2;
    a0.validators = vals;
    a0.n_validators = 1;
    a1.target = B;
    a1.check = 1;
    a1.recheckers = rechk;
    a1.n_recheckers = 1;
    Gonka__Diloco__V1__Assignment *asg[] = {&a0, &a1};
    Gonka__Diloco__V1__VerdictRecord vr = GONKA__DILOCO__V1__VERDICT_RECORD__INIT;
    vr.validator = ME;
    vr.target = A;
    vr.check = 0;
    vr.seal = hash;
    Gonka__Diloco__V1__VerdictRecord *vrs[] = {&vr};
    Gonka__Diloco__V1__RandomnessRecord rr = GONKA__DILOCO__V1__RANDOMNESS_RECORD__INIT;
    rr.member = ME;
    rr.seal = hash;
    Gonka__Diloco__V1__RandomnessRecord *rrs[] = {&rr};
    Gonka__Diloco__V1__Attestation at = GONKA__DILOCO__V1__ATTESTATION__INIT;
    at.attester = ME;
    at.seal = hash;
    at.next_state_hash = hash;
    Gonka__Diloco__V1__Attestation *ats[] = {&at};
    Gonka__Diloco__V1__QueryRoundResponse q = GONKA__DILOCO__V1__QUERY_ROUND_RESPONSE__INIT;
    q.round = &round;
    q.commitments = commits;
    q.n_commitments = 2;
    q.availability = reps;
    q.n_availability = 1;
    q.assignments = asg;
    q.n_assignments = 2;
    q.verdicts = vrs;
    q.n_verdicts = 1;
    q.randomness = rrs;
    q.n_randomness = 1;
    q.attestations = ats;
    q.n_attestations = 1;
    Gonka__Diloco__V1__SettleAmount owed = GONKA__DILOCO__V1__SETTLE_AMOUNT__INIT;
    owed.run = 1;
    owed.epoch = 1;
    owed.address = ME;
    owed.amount = "900";
    Gonka__Diloco__V1__SettleAmount *amounts[] = {&owed};
    Gonka__Diloco__V1__QueryRewardsResponse rw = GONKA__DILOCO__V1__QUERY_REWARDS_RESPONSE__INIT;
    rw.amounts = amounts;
    rw.n_amounts = 1;
    gd_claim_state claims = {true, 1};

    gd_chain_view_buf b;
    Gonka__Diloco__V1__RunSpec spec = GONKA__DILOCO__V1__RUN_SPEC__INIT;
    spec.overlap = true;
    run.spec = &spec;
    CHECK_OK(gd_chain_view_build(&b, ME, 41, &qrun, &q, &rw, &claims, true));
    CHECK(b.view.overlap); /* the run's spec says */
    gd_chain_view_free(&b);
    run.spec = NULL;
    CHECK_OK(gd_chain_view_build(&b, ME, 41, &qrun, &q, &rw, &claims, true));
    const gd_chain_view *v = &b.view;
    CHECK(v->member && !v->leaving && v->next_round == 4 && v->sealed_next && v->have_round);
    CHECK(!v->overlap); /* no spec in the answer: no overlap */
    CHECK(v->round.index == 3 && v->round.in_snapshot && v->round.committed && !v->round.over);
    CHECK(v->round.secret_sealed && !v->round.secret_revealed);
    CHECK(v->round.attest_sealed && v->round.attest_revealed);
    CHECK(v->round.n_commitments == 2 && v->round.n_reported == 1);
    CHECK_STR_EQ(v->round.reported[0], A);
    CHECK(v->round.n_checks == 2);
    CHECK(v->round.checks[0].validator && v->round.checks[0].sealed &&
          !v->round.checks[0].revealed && v->round.checks[0].segment == 2);
    CHECK(v->round.checks[1].rechecker && !v->round.checks[1].sealed);
    CHECK(v->round.windows.dispute_open_start == 70);
    CHECK(v->claim_open && v->claim_epoch == 1 && v->owed == 900 && !v->claimed);
    /* The driver on it: A reported, the check sealed, so only the claim. */
    gd_duty_config cfg = {GD_ROLE_WORKER | GD_ROLE_VALIDATOR, true};
    gd_member_journal j = {.round = 3, .trained = true};
    gd_action out[8];
    size_t n = 0;
    CHECK(!gd_round_driver_step(&cfg, v, &j, out, 8, &n));
    CHECK(n == 1 && out[0].kind == GD_ACT_CLAIM && out[0].epoch == 1);
    gd_chain_view_free(&b);
    /* A round answer that is not the run's current round is refused. */
    round.index = 2;
    qrun.current_round = NULL;
    CHECK(gd_chain_view_build(&b, ME, 41, &qrun, &q, &rw, &claims, true) == GD_ERR_INVALID);
    /* No round: only membership and claims. */
    CHECK_OK(gd_chain_view_build(&b, B, 41, &qrun, NULL, NULL, NULL, false));
    CHECK(!b.view.member && !b.view.have_round && !b.view.claim_open);
    gd_chain_view_free(&b);
}

/* With overlap a worker whose commitment of round 7 is on chain trains
 * round 8 ahead, last in every step, through round 7's windows and the gap
 * after it, until the journal holds round 8 (then round 8's train window
 * asks nothing more of it); never without overlap, the commitment, the
 * next round's seal, the worker role, or while leaving. */
static int ahead_at(scene *s, int64_t height, size_t *n_out) {
    gd_action out[16];
    size_t n = 0;
    s->v.height = height;
    CHECK(!gd_round_driver_step(&s->cfg, &s->v, &s->j, out, 16, &n));
    *n_out = n;
    for (size_t i = 0; i < n; i++)
        if (out[i].kind == GD_ACT_TRAIN && out[i].round == 8)
            return i + 1 == n ? 1 : -1; /* -1: not last */
    return 0;
}

static void test_train_ahead(void) {
    scene s;
    scene_init(&s, GD_ROLE_WORKER | GD_ROLE_VALIDATOR);
    size_t n = 0;
    s.v.overlap = true;
    s.j.trained = true;
    CHECK(ahead_at(&s, 25, &n) == 0); /* not committed yet */
    s.v.round.committed = true;
    CHECK(ahead_at(&s, 25, &n) == 1 && n == 1);
    CHECK(ahead_at(&s, 40, &n) == 1 && n > 1); /* after the reports and check */
    s.v.round.over = true;
    CHECK(ahead_at(&s, 101, &n) == 1); /* the gap before round 8 */
    s.v.round.over = false;
    s.v.sealed_next = false; /* takes no part in round 8 */
    CHECK(ahead_at(&s, 40, &n) == 0);
    s.v.sealed_next = true;
    s.v.leaving = true;
    CHECK(ahead_at(&s, 40, &n) == 0);
    s.v.leaving = false;
    s.v.overlap = false;
    CHECK(ahead_at(&s, 40, &n) == 0);
    s.v.overlap = true;
    s.cfg.roles = GD_ROLE_VALIDATOR;
    CHECK(ahead_at(&s, 40, &n) == 0);
    s.cfg.roles = GD_ROLE_WORKER | GD_ROLE_VALIDATOR;
    /* Trained ahead: journalled for round 7 with ahead set. */
    s.j.ahead = true;
    CHECK(ahead_at(&s, 40, &n) == 0);
    CHECK(gd_journal_trained(&s.j, 8) && gd_journal_trained(&s.j, 7) &&
          !gd_journal_trained(&s.j, 9));
    /* Round 8 opens: its train window asks nothing, its commit window the
     * commit. */
    s.v.round = (gd_round_view){.index = 8, .windows = {110, 120, 130, 140, 150, 160, 170, 180,
                                                        190, 200},
                                .in_snapshot = true};
    s.v.next_round = 9;
    CHECK(ahead_at(&s, 112, &n) == 0 && n == 0);
    gd_action out[16];
    s.v.height = 120;
    CHECK(!gd_round_driver_step(&s.cfg, &s.v, &s.j, out, 16, &n));
    CHECK(n == 1 && out[0].kind == GD_ACT_COMMIT && out[0].round == 8);
}

int main(void) {
    RUN_TEST(test_windows);
    RUN_TEST(test_honest_round);
    RUN_TEST(test_validator_only);
    RUN_TEST(test_restart);
    RUN_TEST(test_late);
    RUN_TEST(test_membership);
    RUN_TEST(test_claims);
    RUN_TEST(test_cap);
    RUN_TEST(test_train_ahead);
    RUN_TEST(test_view_from_queries);
    return gd_test_finish();
}
