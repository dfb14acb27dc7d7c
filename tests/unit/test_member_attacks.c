/* Cheaters among honest nodes on a test chain, each played by the honest
 * member with one misbehaviour (tests/adversary) and real training,
 * payloads and re-execution around it.
 *
 * lazy: a worker trains half of each round's segments and claims the rest
 * (copies of its last trained state as their starts, the whole round's
 * tokens). Each check drawn on a skipped segment re-executes to another
 * state: FAIL, upheld by the re-checker, so it pays cheat_slash, is left
 * out of the aggregation and sits out suspend_rounds rounds; every honest
 * member is aggregated, never slashed, and ends each DONE round with the
 * agreed G; the model still learns.
 *
 * scaled (1000 x its Δ) and garbage payloads beside an honest transcript:
 * the drawn chunk is not the re-encoding of the transcript's trained state,
 * so the first round either commits is caught, with the same outcome. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tests/adversary/adversary.h"
#include "tests/support/member_fixture.h"
#include "tests/support/testkit.h"

#define NODES 5
#define LAZY 3

static const unsigned g_roles[NODES] = {GD_ROLE_WORKER, GD_ROLE_WORKER, GD_ROLE_WORKER,
                                        GD_ROLE_VALIDATOR, GD_ROLE_VALIDATOR};

/* Three workers and two validators, node `who` the cheater through the
 * given seams (NULL: the engine's); two checks per commitment, each a
 * double check when `doubled`. */
static void open_with_cheater(nf_net *net, int who, bool doubled, gd_engine_train_fn train,
                              gd_engine_check_fn check, gd_member_withhold_fn withhold) {
    df_knobs k;
    df_knobs_default(&k);
    k.checks = 2;
    k.double_ppm = doubled ? 1000000 : 0;
    k.rechecks = 1;
    k.min_class = doubled ? 4 : 3; /* the target, its validators, one re-checker */
    memset(net, 0, sizeof *net);
    nf_setup(net, &k, NODES, g_roles);
    net->train[who] = train;
    net->check[who] = check;
    net->withhold[who] = withhold;
    nf_restart(net, who);
    net->d.act[who].cheat = true; /* its slash is expected */
}

/* Called once the network is open, before play_cheater's blocks (NULL:
 * nothing to prepare). */
static void (*g_prepare)(nf_net *net);

/* Set when no honest member may report the cheater's payload available
 * (one no one could aggregate): each of its commitments has no report. */
static bool g_unreported;

/* Plays a cheating worker (node LAZY) for an epoch; returns the first
 * round it was caught: failed (an upheld FAIL), or a check the class
 * could not fetch (UNAVAILABLE); either way it is not aggregated. */
static uint64_t play_cheater(gd_engine_train_fn train, gd_member_withhold_fn withhold) {
    nf_net net;
    open_with_cheater(&net, LAZY, false, train, NULL, withhold);
    if (g_prepare)
        g_prepare(&net);
    g_prepare = NULL;
    double loss0 = NAN;
    uint64_t caught_round = UINT64_MAX;
    while (net.d.f.height < 200) {
        nf_block(&net);
        if (isnan(loss0))
            loss0 = gd_member_eval_loss(net.nodes[1], 4);
    }
    uint64_t rounds = nf_current_round(&net);
    const char *lazy = net.d.f.addr[LAZY];
    for (uint64_t r = 0; r < rounds; r++) {
        df_qround *q = df_q_round(&net.d, r);
        CHECK(q->round->phase == PH(DONE));
        bool failed = df_has_str(q->round->failed, q->round->n_failed, lazy);
        for (size_t x = 0; x < q->n_assignments; x++)
            failed |= strcmp(q->assignments[x]->target, lazy) == 0 &&
                      q->assignments[x]->outcome == OUTCOME(UNAVAILABLE);
        bool committed = df_commitment_of(q, lazy) != NULL;
        if (committed && g_unreported)
            CHECK(df_commitment_of(q, lazy)->reports == 0);
        size_t fails = 0;
        for (size_t i = 0; i < q->n_verdicts; i++)
            if (strcmp(q->verdicts[i]->target, lazy) == 0 &&
                (q->verdicts[i]->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL ||
                 q->verdicts[i]->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE))
                fails++;
        fprintf(stderr, "  round %llu: the cheater %s, %zu accusations, %s\n", (unsigned long long)r,
                committed ? "committed" : "out", fails, failed ? "failed" : "not failed");
        if (failed) {
            CHECK(fails > 0);
            CHECK(!df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, lazy));
            if (caught_round == UINT64_MAX)
                caught_round = r;
        }
        for (int who = 1; who <= 3; who++)
            if (who != LAZY && df_commitment_of(q, net.d.f.addr[who]) != NULL)
                CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set,
                                 net.d.f.addr[who]));
        df_qfree(q);
    }
    CHECK(caught_round != UINT64_MAX);
    CHECK(df_slashed(&net.d, LAZY, NULL, NULL) > 0);
    /* Each member's status says where it stands in the run, as the chain
     * it last read does: the cheater suspended or removed, the honest ones
     * members. */
    df_qrun *qr = df_q_run(&net.d);
    uint64_t round_now = qr->current_round ? qr->current_round->index : qr->run->next_round;
    for (int who = 1; who <= NODES; who++) {
        const Gonka__Diloco__V1__Member *m = NULL;
        for (size_t i = 0; i < qr->n_members; i++)
            if (strcmp(qr->members[i]->address, net.d.f.addr[who]) == 0)
                m = qr->members[i];
        const char *want = m == NULL                       ? "removed"
                           : m->suspended_until > round_now ? "suspended"
                                                            : "member";
        json_t *st = gd_member_status_json(net.nodes[who]);
        const char *got = json_string_value(json_object_get(st, "membership"));
        if (who == LAZY)
            fprintf(stderr, "  the cheater's status: %s (%s)\n", got ? got : "?",
                    json_string_value(json_object_get(st, "membership_reason")));
        CHECK(got != NULL && strcmp(got, want) == 0);
        CHECK(who == LAZY || strcmp(want, "member") == 0);
        json_decref(st);
    }
    df_qfree(qr);
    for (int who = 1; who <= NODES; who++)
        if (who != LAZY)
            CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    /* Every honest node's G is the agreed one. */
    df_qround *cur = df_q_round(&net.d, rounds);
    for (int who = 1; who <= NODES; who++) {
        if (who == LAZY)
            continue;
        uint64_t gr = 0;
        uint8_t hash[32];
        CHECK(gd_member_global(net.nodes[who], &gr, hash));
        CHECK(memcmp(hash, cur->round->start_state_hash.data, 32) == 0 ||
                     memcmp(hash, cur->round->next_state_hash.data, 32) == 0);
    }
    df_qfree(cur);
    double loss1 = gd_member_eval_loss(net.nodes[1], 4);
    fprintf(stderr, "  %llu rounds, caught in round %llu, paid %llu ngonka; eval loss %.4f -> %.4f\n",
            (unsigned long long)rounds, (unsigned long long)caught_round,
            (unsigned long long)df_slashed(&net.d, LAZY, NULL, NULL), loss0, loss1);
    CHECK(loss1 < loss0);
    nf_free(&net);
    return caught_round;
}

static void test_lazy_worker_is_caught(void) {
    g_adv_lazy_fraction = 0.5;
    CHECK(play_cheater(gd_adv_lazy_train, NULL) != UINT64_MAX);
}

/* Every chunk of these payloads differs from the honest encoding, so the
 * first round they commit is caught. */
static void test_scaled_payload_is_caught(void) {
    g_adv_scale = 1000;
    CHECK(play_cheater(gd_adv_scaled_train, NULL) == 0);
}

static void test_garbage_payload_is_caught(void) {
    CHECK(play_cheater(gd_adv_garbage_train, NULL) == 0);
}

/* A payload whose bytes are what the worker committed to but whose chunk 0
 * no decoder accepts: it passes every root and proof check, and only a
 * receiver that decodes it sees the fault. */
static void test_malformed_payload_is_caught(void) {
    g_unreported = true;
    CHECK(play_cheater(gd_adv_malformed_train, NULL) == 0);
    g_unreported = false;
}

/* The withholder commits honestly but never serves its segment starts: its
 * checks are answered UNAVAILABLE and the class cannot fetch them either:
 * the checks end UNAVAILABLE, it is not aggregated and pays the skip slash
 * per check (no cheat slash: an UNAVAILABLE proves no cheat). */
static void test_withholder_is_caught(void) {
    CHECK(play_cheater(NULL, gd_adv_withhold_states) == 0);
}

/* A vector planted in the residual breaks the links every check verifies:
 * caught in its first round (its residual is not zeros there). */
static void test_residual_poisoning_is_caught(void) {
    CHECK(play_cheater(gd_adv_poison_train, NULL) == 0);
}

/* Validators that skip their work, played by node 5 (tests/adversary/
 * validator.c). The lazy validator answers every check PASS with a made-up
 * digest. The target's own digest contradicts it, single check or double,
 * the class re-executes, and the made-up digest loses: its verdict is
 * faulty and it pays cheat_slash. Honest workers are never failed (a lazy
 * PASS does not hurt them), nobody honest is slashed, and every round ends
 * DONE.
 *
 * play_validator plays `check` as validator node 5's checker, with every
 * check doubled or every check single; it returns what node 5 was slashed
 * and the number of its faulty verdicts, each of which must be `want` and
 * uncredited. */
static uint64_t play_validator(gd_engine_check_fn check, Gonka__Diloco__V1__Verdict want,
                               bool doubled, size_t *faulty_out) {
    const int lazy = 5;
    nf_net net;
    open_with_cheater(&net, lazy, doubled, NULL, check, NULL);
    while (net.d.f.height < 120)
        nf_block(&net);
    uint64_t rounds = nf_current_round(&net);
    CHECK(rounds >= 1);
    size_t faulty = 0;
    for (uint64_t r = 0; r < rounds; r++) {
        df_qround *q = df_q_round(&net.d, r);
        CHECK(q->round->phase == PH(DONE));
        CHECK(q->round->n_failed == 0);
        for (size_t i = 0; i < q->n_verdicts; i++) {
            const Gonka__Diloco__V1__VerdictRecord *v = q->verdicts[i];
            bool by_lazy = strcmp(v->validator, net.d.f.addr[lazy]) == 0;
            if (v->faulty) {
                CHECK(by_lazy);
                CHECK(v->verdict == want && !v->credited);
            }
            faulty += v->faulty && by_lazy;
        }
        df_qfree(q);
    }
    uint64_t paid = df_slashed(&net.d, lazy, NULL, NULL);
    fprintf(stderr, "  %llu rounds: %zu faulty verdicts of the lazy validator, it paid %llu\n",
            (unsigned long long)rounds, faulty, (unsigned long long)paid);
    for (int who = 1; who <= NODES; who++)
        if (who != lazy)
            CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    nf_free(&net);
    *faulty_out = faulty;
    return paid;
}

/* A validating cheater that must lose: at least one faulty verdict, and a
 * slash (or, for the UNAVAILABLE spammer, burned bonds: paid is not
 * checked then). */
static void validator_loses(gd_engine_check_fn check, Gonka__Diloco__V1__Verdict want,
                            bool doubled, bool slashed) {
    size_t faulty = 0;
    uint64_t paid = play_validator(check, want, doubled, &faulty);
    CHECK(faulty > 0);
    if (slashed)
        CHECK(paid > 0);
}

static void test_lazy_validator_is_caught(void) {
    validator_loses(gd_adv_lazy_check, GONKA__DILOCO__V1__VERDICT__VERDICT_PASS, true, true);
}

/* The red-team review's second attack, lazy-single: with single checks
 * only, a PASS with no partner was never compared with anything, so a
 * validator that never re-executed was paid at no risk. Every check now
 * meets the target's own digest: the made-up one loses. */
static void test_lazy_single_validator_is_caught(void) {
    validator_loses(gd_adv_lazy_check, GONKA__DILOCO__V1__VERDICT__VERDICT_PASS, false, true);
}

/* The review's third, pass-early: a PASS with the end leaf (public) and a
 * trace of fewer steps than the segment's. The digest covers every step,
 * and the target's own digest contradicts it: faulty, the cheat slash. */
static void test_early_passer_is_caught(void) {
    validator_loses(gd_adv_pass_early_check, GONKA__DILOCO__V1__VERDICT__VERDICT_PASS, false,
                    true);
}

/* The review's first, the framer, alone: every check and re-check FAIL.
 * The class decides and no honest worker fails (play_validator checks
 * every round); each of its FAILs is faulty and pays the cheat slash. */
static void test_framer_pays(void) {
    validator_loses(gd_adv_framer_check, GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL, false, true);
}

/* The UNAVAILABLE spammer: the re-checker fetches the data, the check
 * passes, and its accusations are faulty and unpaid (their bonds are burned:
 * test_diloco_module plays that rule); no honest worker fails. */
static void test_unavailable_spammer_pays(void) {
    validator_loses(gd_adv_unavailable_check, GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE,
                    true, false);
}

/* Serving payload chunks but never the whole payload: nobody reports it
 * (a reporter checks the whole payload), and its validators cannot fetch
 * it either: UNAVAILABLE, upheld, caught in its first round. */
static void test_payload_withholder_is_caught(void) {
    CHECK(play_cheater(NULL, gd_adv_withhold_payload) == 0);
}

/* Replay: its first round is honest; every later one trains that round's
 * start again, and leaf 0 is not G_r: caught in round 1. */
static void test_replay_is_caught(void) {
    CHECK(play_cheater(gd_adv_replay_train, NULL) == 1);
}

/* The copier commits node 1's payload with one value changed beside its
 * own honest transcript: no drawn chunk is its own encoding. */
static void copy_from_node_1(nf_net *net) { g_adv_copy_dir = net->dirs[1]; }

static void test_copier_is_caught(void) {
    g_prepare = copy_from_node_1;
    CHECK(play_cheater(gd_adv_copy_train, NULL) == 0);
}

/* The sybil commits node 1's training (its rank, read once it joined)
 * under its own address: the leaves name node 1. */
static void sybil_of_node_1(nf_net *net) {
    for (bool found = false; !found && net->d.f.height < 40;) {
        nf_block(net);
        df_qrun *run = df_q_run(&net->d);
        for (size_t i = 0; i < run->n_members; i++)
            if (strcmp(run->members[i]->address, net->d.f.addr[1]) == 0) {
                snprintf(g_adv_sybil_address, sizeof g_adv_sybil_address, "%s",
                         net->d.f.addr[1]);
                g_adv_sybil_rank = run->members[i]->rank;
                found = true;
            }
        df_qfree(run);
    }
    CHECK(g_adv_sybil_address[0] != '\0');
}

static void test_sybil_is_caught(void) {
    g_prepare = sybil_of_node_1;
    CHECK(play_cheater(gd_adv_sybil_train, NULL) == 0);
}

/* Members that skip or fake a duty through the duty seam (tests/adversary/
 * duty.c), played by node `who` for an epoch: every round ends DONE, no
 * honest worker fails or is left out of a round it committed, nobody honest
 * is slashed, and all the cheater pays is the skip slash for `reason`, once
 * in each of `rounds_min` rounds at least. */
static void play_skipper(int who, bool doubled, gd_member_duty_fn duty,
                         gd_member_withhold_fn withhold, const char *reason,
                         void (*per_round)(const nf_net *net, const df_qround *q, int who)) {
    nf_net net;
    open_with_cheater(&net, who, doubled, NULL, NULL, withhold);
    net.duty[who] = duty;
    nf_restart(&net, who);
    while (net.d.f.height < 200)
        nf_block(&net);
    uint64_t rounds = nf_current_round(&net);
    CHECK(rounds >= 3);
    for (uint64_t r = 0; r < rounds; r++) {
        df_qround *q = df_q_round(&net.d, r);
        CHECK(q->round->phase == PH(DONE));
        CHECK(q->round->n_failed == 0);
        for (int w = 1; w <= 3; w++)
            if (w != who && df_commitment_of(q, net.d.f.addr[w]) != NULL)
                CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set,
                                 net.d.f.addr[w]));
        if (per_round)
            per_round(&net, q, who);
        df_qfree(q);
    }
    size_t count = 0;
    uint64_t paid = df_slashed(&net.d, who, reason, &count);
    fprintf(stderr, "  %llu rounds: skip-slashed %zu times for '%s', %llu ngonka\n",
            (unsigned long long)rounds, count, reason, (unsigned long long)paid);
    CHECK(count >= 2);
    CHECK(df_slashed(&net.d, who, NULL, NULL) == paid);
    for (int w = 1; w <= NODES; w++)
        if (w != who)
            CHECK(df_slashed(&net.d, w, NULL, NULL) == 0);
    nf_free(&net);
}

/* A worker that never reports: everyone is still included (2/3 of the
 * reporting weight), and it pays for its silence. */
static void test_non_reporter_pays(void) {
    play_skipper(3, false, gd_adv_no_reports, NULL, "no availability report", NULL);
}

/* Its revealed hash is not the round's. */
static void wrong_hash_revealed(const nf_net *net, const df_qround *q, int who) {
    for (size_t i = 0; i < q->n_attestations; i++)
        if (strcmp(q->attestations[i]->attester, net->d.f.addr[who]) == 0)
            CHECK(q->attestations[i]->next_state_hash.len == 32 &&
                  memcmp(q->attestations[i]->next_state_hash.data,
                         q->round->next_state_hash.data, 32) != 0);
}

static void test_wrong_hash_attester_pays(void) {
    play_skipper(3, false, gd_adv_wrong_attest, NULL, "minority attestation", wrong_hash_revealed);
}

/* A copied reveal never matches its seal: no attestation of it is
 * revealed, */
static void no_attestation_revealed(const nf_net *net, const df_qround *q, int who) {
    for (size_t i = 0; i < q->n_attestations; i++)
        if (strcmp(q->attestations[i]->attester, net->d.f.addr[who]) == 0)
            CHECK(q->attestations[i]->next_state_hash.len == 0);
}

static void test_attestation_copier_pays(void) {
    play_skipper(3, false, gd_adv_copy_attest, NULL, "absent attestation", no_attestation_revealed);
}

/* no verdict of it either. */
static void no_verdict_revealed(const nf_net *net, const df_qround *q, int who) {
    for (size_t i = 0; i < q->n_verdicts; i++)
        if (strcmp(q->verdicts[i]->validator, net->d.f.addr[who]) == 0 && !q->verdicts[i]->recheck)
            CHECK(q->verdicts[i]->verdict == 0);
}

static void test_copying_validator_pays(void) {
    play_skipper(5, true, gd_adv_copy_verdicts, NULL, "skipped check", no_verdict_revealed);
}

/* The review's seventh, the skipper: it leaves every check it holds
 * unanswered; each one costs the skip slash (play_skipper counts them),
 * and the class passes the honest targets. */
static void test_skipper_pays(void) {
    play_skipper(5, false, gd_adv_skipper, NULL, "skipped check", no_verdict_revealed);
}

/* The review's fourth, the late server: a worker that answers 404 for its
 * states until the dispute window. Its validators answer UNAVAILABLE; the
 * jury fetches and passes; the reporters' state samples show the states
 * were late, so no validator loses its bond (no UNAVAILABLE of it is
 * faulty) and the worker pays the skip slash for each such check, and is
 * still aggregated (its training was right). */
static void late_checks_passed(const nf_net *net, const df_qround *q, int who) {
    const char *late = net->d.f.addr[who];
    const Gonka__Diloco__V1__Commitment *c = df_commitment_of(q, late);
    if (c == NULL)
        return;
    CHECK(!c->states_served);
    CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, late));
    for (size_t x = 0; x < q->n_assignments; x++)
        if (strcmp(q->assignments[x]->target, late) == 0)
            CHECK(q->assignments[x]->outcome == OUTCOME(PASSED));
    for (size_t i = 0; i < q->n_verdicts; i++)
        if (strcmp(q->verdicts[i]->target, late) == 0)
            CHECK(!q->verdicts[i]->faulty);
}

/* The review's sixth, the grinder: it seals a secret for every round and
 * never reveals it (what a last revealer choosing between seeds does);
 * each one costs the withhold slash, priced above what the choice can
 * win (docs/verification.md, "Seed grinding"). */
static void test_grinder_pays(void) {
    play_skipper(3, false, gd_adv_grinder, NULL, "unrevealed randomness", NULL);
}

static void test_late_server_pays(void) {
    play_skipper(3, false, NULL, gd_adv_late_server, "after the verify window",
                 late_checks_passed);
}

/* A worker that serves its payload to every member but one honest member,
 * which it refuses by its address (the fixture's aimed refusal), in every
 * window: its payload is included on the others' reports, and the member
 * it refuses must still aggregate it to attest. Before mirrors that member
 * could not: it never attested and paid the skip slash ("absent
 * attestation") every round, at no cost to the worker. Now an included
 * payload also comes from any member that holds it (each reporter fetched
 * it whole), checked against the commitment like any other: the refused
 * member attests with the rest and pays nothing, and the worker is
 * aggregated as before. */
static void test_aimed_refusal_frames_no_attester(void) {
    enum { REFUSER = 1, REFUSED = 4 };
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    net.refuses_payload[REFUSER][REFUSED] = true;
    while (net.d.f.height < 200)
        nf_block(&net);
    uint64_t rounds = nf_current_round(&net);
    CHECK(rounds >= 3);
    for (uint64_t r = 0; r + 1 < rounds; r++) {
        df_qround *q = df_q_round(&net.d, r);
        CHECK(q->round->phase == PH(DONE));
        CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set,
                         net.d.f.addr[REFUSER]));
        bool attested = false;
        for (size_t i = 0; i < q->n_attestations; i++)
            attested |= strcmp(q->attestations[i]->attester, net.d.f.addr[REFUSED]) == 0;
        CHECK(attested);
        df_qfree(q);
    }
    size_t skips = 0;
    uint64_t slashed = df_slashed(&net.d, REFUSED, NULL, &skips);
    fprintf(stderr, "  %llu rounds: the refused member slashed %llu ngonka (%zu times)\n",
            (unsigned long long)rounds, (unsigned long long)slashed, skips);
    for (int who = 1; who <= NF_NODES; who++)
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    nf_free(&net);
}

/* `test_member_attacks` plays the first nine; `test_member_attacks more` the
 * rest (a second CTest entry, which the sanitizer pass leaves out with the
 * other Byzantine tests: the member's paths they reach are the first
 * nine's and test_member_epoch's). */
int main(int argc, char **argv) {
    bool more = argc > 1 && strcmp(argv[1], "more") == 0;
    if (!more) {
        RUN_TEST(test_lazy_worker_is_caught);
        RUN_TEST(test_scaled_payload_is_caught);
        RUN_TEST(test_garbage_payload_is_caught);
        RUN_TEST(test_malformed_payload_is_caught);
        RUN_TEST(test_residual_poisoning_is_caught);
        RUN_TEST(test_withholder_is_caught);
        RUN_TEST(test_lazy_validator_is_caught);
        RUN_TEST(test_lazy_single_validator_is_caught);
        RUN_TEST(test_framer_pays);
        RUN_TEST(test_unavailable_spammer_pays);
        RUN_TEST(test_aimed_refusal_frames_no_attester);
        return gd_test_finish();
    }
    RUN_TEST(test_payload_withholder_is_caught);
    RUN_TEST(test_replay_is_caught);
    RUN_TEST(test_copier_is_caught);
    RUN_TEST(test_sybil_is_caught);
    RUN_TEST(test_non_reporter_pays);
    RUN_TEST(test_wrong_hash_attester_pays);
    RUN_TEST(test_attestation_copier_pays);
    RUN_TEST(test_copying_validator_pays);
    RUN_TEST(test_early_passer_is_caught);
    RUN_TEST(test_skipper_pays);
    RUN_TEST(test_late_server_pays);
    RUN_TEST(test_grinder_pays);
    return gd_test_finish();
}
