/* The DiLoCo module's checks: who checks what (verify_start), which checks
 * are disputed and who re-checks them (dispute_start), and what each check
 * decided (attest_start): the outcome, bonds, credits, slashes and the
 * aggregation set (docs/protocol.md section 7, docs/verification.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/diloco_internal.h"

#define VERDICT(x) GONKA__DILOCO__V1__VERDICT__VERDICT_##x
#define OUTCOME(x) GONKA__DILOCO__V1__CHECK_OUTCOME__CHECK_OUTCOME_##x

/* ---- eligible members --------------------------------------------------------- */

/* The round members of one class, less the target and some excluded
 * addresses, in address order, with their frozen weights: those who may
 * check the target. Only members already active in the round are drawn
 * (at verify start: they committed or revealed a secret; at dispute start:
 * anything), so idle weight can neither take checks it will skip nor hold
 * a dispute undecided by never answering. Pointers into the round. */
typedef struct dl_pool {
    const char **addr;
    uint64_t *weight;
    uint32_t n;
} dl_pool;

static gd_status dl_pool_fill(dl_pool *p, const dl_round *r, const char *hw_class,
                              const char *target, char *const *exclude, size_t n_exclude) {
    p->n = 0;
    for (size_t i = 0; i < r->n_members; i++) {
        const dl_weighted *m = r->members[i];
        if (!m->active || strcmp(m->hw_class, hw_class) != 0 ||
            strcmp(m->address, target) == 0 || dl_has_str(exclude, n_exclude, m->address))
            continue;
        GD_TRY(dl_amount(&p->weight[p->n], m->weight));
        p->addr[p->n++] = m->address;
    }
    return GD_OK;
}

static void dl_pool_take(dl_pool *p, uint32_t i) {
    memmove(&p->addr[i], &p->addr[i + 1], (p->n - i - 1) * sizeof *p->addr);
    memmove(&p->weight[i], &p->weight[i + 1], (p->n - i - 1) * sizeof *p->weight);
    p->n--;
}

static gd_status dl_pool_init(dl_pool *p, const dl_round *r) {
    p->addr = calloc(r->n_members + 1, sizeof *p->addr);
    p->weight = calloc(r->n_members + 1, sizeof *p->weight);
    p->n = 0;
    if (p->addr == NULL || p->weight == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    return GD_OK;
}

static void dl_pool_free(dl_pool *p) {
    free(p->addr);
    free(p->weight);
}

/* The members of a class active so far: those who can check and re-check. */
static uint32_t dl_class_size(const dl_round *r, const char *hw_class) {
    uint32_t n = 0;
    for (size_t i = 0; i < r->n_members; i++)
        n += r->members[i]->active && strcmp(r->members[i]->hw_class, hw_class) == 0;
    return n;
}

static const char *dl_class_of(const dl_round *r, const char *addr) {
    size_t i = dl_round_find(r, addr);
    return i < r->n_members ? r->members[i]->hw_class : "";
}

/* ---- verify start: the checks ----------------------------------------------------- */

gd_status dl_assign_checks(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    const uint8_t *rnd = r->verify_randomness.data;
    dl_key k;
    dl_round_prefix(&k, DL_COMMIT, r);
    dl_list commits;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &commits, &gonka__diloco__v1__commitment__descriptor));
    dl_pool pool;
    gd_status s = dl_pool_init(&pool, r);
    const dl_spec *sp = run->spec;
    for (size_t i = 0; s == GD_OK && i < commits.n; i++) {
        const dl_commitment *c = commits.items[i];
        const char *cls = dl_class_of(r, c->participant);
        /* Too few active members of its class to check it and re-check a
         * dispute: the commitment gets no checks, so it is neither
         * aggregated nor paid (a private class is no free pass, and an
         * idle member cannot leave a dispute without a jury). */
        if (dl_class_size(r, cls) < sp->min_class_members) {
            s = dl_event(ctx, "diloco_unchecked", r->run, r->index, "target", c->participant,
                         "reason", "class too small");
            continue;
        }
        for (uint32_t j = 0; s == GD_OK && j < sp->checks_per_commit; j++) {
            gd_diloco_check_draw d;
            /* payload_leaves >= 2 (MsgCommitRound's check): a header and at
             * least one chunk. */
            gd_diloco_draw_check(&d, rnd, c->participant, j, c->segment_count, sp->segment_steps,
                                 c->payload_leaves - 1, sp->double_check_ppm);
            s = dl_pool_fill(&pool, r, cls, c->participant, NULL, 0);
            char *validators[2] = {NULL, NULL};
            size_t n_validators = 0;
            for (uint32_t v = 0; s == GD_OK && v < (d.twice ? 2u : 1u) && pool.n > 0; v++) {
                uint32_t at = gd_diloco_draw_member("gd-validator", rnd, c->participant, j, v,
                                                    pool.weight, pool.n);
                validators[n_validators++] = (char *)pool.addr[at];
                dl_pool_take(&pool, at);
            }
            dl_assignment a = GONKA__DILOCO__V1__ASSIGNMENT__INIT;
            a.target = c->participant;
            a.check = j;
            a.segment = d.segment;
            a.step = d.step;
            a.chunk = d.chunk;
            a.validators = validators;
            a.n_validators = n_validators;
            dl_key ak;
            dl_key_assignment(&ak, r->run, r->index, c->participant, j);
            if (s == GD_OK)
                s = dl_save(ctx, &ak, &a);
        }
        char count[24];
        dl_amount_str(count, sp->checks_per_commit);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_checks_assigned", r->run, r->index, "target",
                         c->participant, "checks", count);
    }
    dl_pool_free(&pool);
    dl_list_free(&commits);
    return s;
}

/* ---- verdict records ------------------------------------------------------------------- */

static gd_status dl_load_verdict(gd_ctx *ctx, const dl_round *r, dl_verdict **out,
                                 const char *target, uint32_t check, const char *validator) {
    *out = NULL;
    dl_key k;
    dl_key_verdict(&k, r->run, r->index, target, check, validator);
    gd_status s = dl_load(ctx, &k, (void **)out, &gonka__diloco__v1__verdict_record__descriptor);
    return s == GD_ERR_NOT_FOUND ? GD_OK : s;
}

static gd_status dl_save_verdict(gd_ctx *ctx, const dl_round *r, const dl_verdict *v) {
    dl_key k;
    dl_key_verdict(&k, r->run, r->index, v->target, v->check, v->validator);
    return dl_save(ctx, &k, v);
}

static bool dl_revealed(const dl_verdict *v) { return v != NULL && v->verdict != 0; }

static bool dl_accuses(const dl_verdict *v) {
    return dl_revealed(v) && (v->verdict == VERDICT(FAIL) || v->verdict == VERDICT(UNAVAILABLE));
}

static bool dl_same_digest(const dl_verdict *a, const dl_verdict *b) {
    return a->digest.len == b->digest.len &&
           memcmp(a->digest.data, b->digest.data, a->digest.len) == 0;
}

/* Returns an accusation's bond to the accuser, or burns it. */
static gd_status dl_settle_bond(gd_ctx *ctx, const dl_run *run, dl_verdict *v, bool give_back) {
    if (!v->bonded)
        return GD_OK;
    uint64_t bond = 0;
    GD_TRY(dl_amount(&bond, run->spec->fail_bond->amount));
    GD_TRY(give_back ? dl_pay_out(ctx, v->validator, dl_denom(run), bond)
                     : dl_burn(ctx, dl_denom(run), bond));
    v->bonded = false;
    return GD_OK;
}

static gd_status dl_save_assignment(gd_ctx *ctx, const dl_round *r, const dl_assignment *a) {
    dl_key k;
    dl_key_assignment(&k, r->run, r->index, a->target, a->check);
    return dl_save(ctx, &k, a);
}

static const char *dl_outcome_name(int o) {
    return o == OUTCOME(PASSED)        ? "passed"
           : o == OUTCOME(UPHELD)      ? "upheld"
           : o == OUTCOME(UNDECIDED)   ? "undecided"
           : o == OUTCOME(UNAVAILABLE) ? "unavailable"
                                       : "pending";
}

static gd_status dl_outcome_event(gd_ctx *ctx, const dl_round *r, const dl_assignment *a,
                                  const char *why) {
    char check[24];
    dl_amount_str(check, a->check);
    char text[64];
    snprintf(text, sizeof text, "%s: %s", dl_outcome_name(a->outcome), why);
    return dl_event(ctx, "diloco_check_outcome", r->run, r->index, "target", a->target,
                    "outcome", text);
}

/* ---- dispute start: undisputed outcomes and juries ----------------------------------------- */

/* A check is undisputed when every validator revealed PASS with one digest
 * and the target revealed that digest as its own; anything else (an
 * accusation, two digests, a PASS the target's own digest contradicts, no
 * revealed verdict at all) goes to a jury, so a skipped check neither
 * passes a cheat nor costs an honest target its pay when a jury is there.
 *
 * The target's own digest is what makes every verdict a risk: the target
 * computed its segment's trace while it trained, so a validator's PASS on
 * an honest target's check is always compared with the truth, single check
 * or double. A PASS with a made-up digest meets the target's, goes to the
 * jury, and loses (the cheat slash). A target that does not reveal its own
 * digest pays the skip slash and its check goes to the jury.
 *
 * The jury is the whole class: every member of the target's class active
 * by dispute start, less the target and the check's validators. A drawn
 * jury of a few would be a sample a coalition wins now and then (at q = 0.3
 * a majority of three one time in five), and a seed fixed before the seals
 * lets it know in advance which samples it wins; a vote of the class by
 * weight is one that no coalition below a third can win, and there is
 * nothing to predict. A dispute costs the class one re-execution each; it
 * arises only from a cheat, a lie, a lazy answer or a skip, and each of
 * those pays a slash. */
static gd_status dl_open_dispute(gd_ctx *ctx, const dl_run *run, dl_round *r, dl_assignment *a,
                                 dl_pool *pool) {
    size_t nv = a->n_validators < 2 ? a->n_validators : 2;
    dl_verdict *v[2] = {NULL, NULL};
    gd_status s = GD_OK;
    size_t revealed = 0;
    bool accused = false;
    for (size_t j = 0; s == GD_OK && j < nv; j++) {
        s = dl_load_verdict(ctx, r, &v[j], a->target, a->check, a->validators[j]);
        if (s == GD_OK && !dl_revealed(v[j]))
            s = dl_skip(ctx, run, r, a->validators[j], GD_DUTY_CHECK, "skipped check");
        else if (s == GD_OK) {
            revealed++;
            accused |= dl_accuses(v[j]);
        }
    }
    bool split = revealed == 2 && !accused && !dl_same_digest(v[0], v[1]);
    dl_verdict *own = NULL;
    if (s == GD_OK)
        s = dl_load_verdict(ctx, r, &own, a->target, a->check, a->target);
    bool own_revealed = dl_revealed(own);
    if (s == GD_OK && !own_revealed)
        s = dl_skip(ctx, run, r, a->target, GD_DUTY_DIGEST, "own digest not revealed");
    /* With a revealed PASS (no accusation, no split), v[0] or v[1] holds it. */
    const dl_verdict *pass = dl_revealed(v[0]) ? v[0] : v[1];
    bool contradicted = revealed > 0 && !accused && !split &&
                        (!own_revealed || !dl_same_digest(pass, own));
    dl_free(own);
    bool disputed = revealed == 0 || accused || split || contradicted;
    if (s == GD_OK && !disputed) {
        a->outcome = OUTCOME(PASSED);
        for (size_t j = 0; s == GD_OK && j < nv; j++) {
            if (!dl_revealed(v[j]))
                continue;
            v[j]->credited = true;
            s = dl_save_verdict(ctx, r, v[j]);
        }
        if (s == GD_OK)
            s = dl_save_assignment(ctx, r, a);
    } else if (s == GD_OK) {
        s = dl_pool_fill(pool, r, dl_class_of(r, a->target), a->target, a->validators,
                         a->n_validators);
        if (s == GD_OK && pool->n < run->spec->recheck_validators) {
            /* Too few to decide: the target is not paid, accusers get their
             * bonds back, nobody is slashed for the decision. */
            a->outcome = OUTCOME(UNDECIDED);
            for (size_t j = 0; s == GD_OK && j < nv; j++)
                if (v[j] != NULL && v[j]->bonded) {
                    s = dl_settle_bond(ctx, run, v[j], true);
                    if (s == GD_OK)
                        s = dl_save_verdict(ctx, r, v[j]);
                }
            if (s == GD_OK)
                s = dl_save_assignment(ctx, r, a);
            if (s == GD_OK)
                s = dl_outcome_event(ctx, r, a, "too few jurors");
        } else {
            for (uint32_t k = 0; s == GD_OK && k < pool->n; k++)
                s = dl_push_str(&a->recheckers, &a->n_recheckers, pool->addr[k]);
            if (s == GD_OK)
                s = dl_save_assignment(ctx, r, a);
            char count[24];
            dl_amount_str(count, a->n_recheckers);
            if (s == GD_OK)
                s = dl_event(ctx, "diloco_dispute", r->run, r->index, "target", a->target,
                             "recheckers", count);
        }
    }
    dl_free(v[0]);
    dl_free(v[1]);
    return s;
}

gd_status dl_assign_rechecks(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    dl_key k;
    dl_round_prefix(&k, DL_ASSIGN, r);
    dl_list checks;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &checks, &gonka__diloco__v1__assignment__descriptor));
    dl_pool pool;
    gd_status s = dl_pool_init(&pool, r);
    for (size_t i = 0; s == GD_OK && i < checks.n; i++)
        s = dl_open_dispute(ctx, run, r, checks.items[i], &pool);
    dl_pool_free(&pool);
    dl_list_free(&checks);
    return s;
}

/* ---- attest start: outcomes ---------------------------------------------------------------- */

/* The class's decision, by frozen weight. Every revealed re-execution
 * votes: the check's validators and its jury. The class's weight is the
 * target's, the validators' and the jury's: every member of the class
 * active at dispute start. A side decides only with more than a third of
 * it, which no coalition below a third reaches alone, and which the
 * honest members (more than two thirds, bit-exact within a class, so all
 * on one side) reach whenever half of them answer:
 * - UPHELD: re-executed FAILs. Only a FAIL proves a cheat; an UNAVAILABLE
 *   is no re-execution and never leads to a cheat slash.
 * - PASSED: one PASS digest.
 * - UNAVAILABLE: the class could not fetch the target's states: it is not
 *   aggregated and pays the skip slash per check (a serving duty it
 *   missed), no cheat slash. A coalition cannot reach it alone.
 * - UNDECIDED: none of these (too many silent): bonds return, nobody is
 *   slashed, the target is not aggregated. */
typedef struct dl_vote {
    dl_verdict *v;
    uint64_t weight;
    bool assigned;
} dl_vote;

typedef struct dl_tally {
    dl_u128 class_weight, fail, unavailable, major;
    const dl_verdict *major_verdict; /* the PASS digest with the most weight */
    int outcome;
    bool states_served; /* the target's commitment: its states sampled in time */
    bool served_late;   /* an assigned UNAVAILABLE the class overturned, not served */
} dl_tally;

/* 3 * part > total: more than a third. */
static bool dl_over_third(dl_u128 part, dl_u128 total) { return 3 * part > total; }

static gd_status dl_weight_of(const dl_round *r, uint64_t *out, const char *addr) {
    size_t i = dl_round_find(r, addr);
    *out = 0;
    return i < r->n_members ? dl_amount(out, r->members[i]->weight) : GD_OK;
}

static gd_status dl_tally_count(dl_tally *t, const dl_round *r, const dl_assignment *a,
                                const dl_vote *votes, size_t n) {
    *t = (dl_tally){0};
    uint64_t w = 0;
    GD_TRY(dl_weight_of(r, &w, a->target));
    t->class_weight += w;
    for (size_t i = 0; i < a->n_validators; i++) {
        GD_TRY(dl_weight_of(r, &w, a->validators[i]));
        t->class_weight += w;
    }
    for (size_t i = 0; i < a->n_recheckers; i++) {
        GD_TRY(dl_weight_of(r, &w, a->recheckers[i]));
        t->class_weight += w;
    }
    /* PASS weight by digest: a jury is the whole class, and its honest
     * members share one digest, so the distinct digests are few. */
    const dl_verdict **digest = calloc(n + 1, sizeof *digest);
    dl_u128 *weight = calloc(n + 1, sizeof *weight);
    if (digest == NULL || weight == NULL) {
        free(digest);
        free(weight);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        const dl_verdict *v = votes[i].v;
        if (v->verdict == VERDICT(FAIL))
            t->fail += votes[i].weight;
        else if (v->verdict == VERDICT(UNAVAILABLE))
            t->unavailable += votes[i].weight;
        if (v->verdict != VERDICT(PASS))
            continue;
        size_t d = 0;
        while (d < distinct && !dl_same_digest(digest[d], v))
            d++;
        if (d == distinct)
            digest[distinct++] = v;
        weight[d] += votes[i].weight;
    }
    /* The first digest to reach the most weight, in vote order. */
    for (size_t d = 0; d < distinct; d++)
        if (weight[d] > t->major) {
            t->major = weight[d];
            t->major_verdict = digest[d];
        }
    free(digest);
    free(weight);
    t->outcome = dl_over_third(t->fail, t->class_weight)          ? OUTCOME(UPHELD)
                 : dl_over_third(t->major, t->class_weight)       ? OUTCOME(PASSED)
                 : dl_over_third(t->unavailable, t->class_weight) ? OUTCOME(UNAVAILABLE)
                                                                  : OUTCOME(UNDECIDED);
    return GD_OK;
}

/* Slashes a cheat and remembers the cheater in the round: it forfeits the
 * epoch's rewards (diloco_settle.c). */
static gd_status dl_cheat(gd_ctx *ctx, const dl_run *run, dl_round *r, const char *addr,
                          const char *reason) {
    GD_TRY(dl_slash_cheat(ctx, run, addr, reason));
    if (dl_has_str(r->cheaters, r->n_cheaters, addr))
        return GD_OK;
    GD_TRY(dl_push_str(&r->cheaters, &r->n_cheaters, addr));
    /* Keep address order: move the new one down into place. */
    for (size_t i = r->n_cheaters - 1;
         i > 0 && gd_diloco_address_cmp(r->cheaters[i - 1], r->cheaters[i]) > 0; i--) {
        char *x = r->cheaters[i];
        r->cheaters[i] = r->cheaters[i - 1];
        r->cheaters[i - 1] = x;
    }
    return GD_OK;
}

/* What a revealed vote earns or costs under the outcome. */
static gd_status dl_judge(gd_ctx *ctx, const dl_run *run, dl_round *r, dl_tally *t,
                          const dl_vote *vote) {
    dl_verdict *v = vote->v;
    int o = t->outcome;
    bool passed = o == OUTCOME(PASSED), upheld = o == OUTCOME(UPHELD);
    gd_status s = GD_OK;
    if (v->verdict == VERDICT(FAIL)) {
        /* Within a class re-execution is bit-exact, so a FAIL the class
         * overturns is a lie: the cheat slash, assigned or juror. */
        if (vote->assigned)
            s = dl_settle_bond(ctx, run, v, !passed);
        v->credited = upheld;
        v->faulty = passed;
        if (s == GD_OK && passed)
            s = dl_cheat(ctx, run, r, v->validator, "FAIL overturned by the class");
    } else if (v->verdict == VERDICT(UNAVAILABLE)) {
        /* Right when the class could not fetch either. When the class
         * fetched and re-executed, a juror's is a re-check it did not do:
         * a skip. An assigned one fetched in the verify window, when the
         * class's reporters sampled the target's states: if two thirds of
         * them got their samples, the states were there and it loses its
         * bond; otherwise the target served late, the bond comes back and
         * the target pays (dl_resolve_check). */
        bool late = passed && vote->assigned && !t->states_served;
        t->served_late |= late;
        if (vote->assigned)
            s = dl_settle_bond(ctx, run, v, !passed || late);
        v->credited = o == OUTCOME(UNAVAILABLE);
        v->faulty = passed && !late;
        if (s == GD_OK && passed && !vote->assigned)
            s = dl_skip(ctx, run, r, v->validator, GD_DUTY_RECHECK,
                        "UNAVAILABLE re-check of data the class fetched");
    } else if (v->verdict == VERDICT(PASS)) {
        bool agrees = passed && dl_same_digest(v, t->major_verdict);
        v->credited = agrees;
        v->faulty = (passed && !agrees) || upheld;
        /* A PASS that loses is slashed, not only unpaid: a lazy validator
         * that reveals PASS with any digest pays for it. */
        if (passed && !agrees)
            s = dl_cheat(ctx, run, r, v->validator, "PASS digest lost to the class");
        else if (upheld)
            s = dl_cheat(ctx, run, r, v->validator, "PASS on a FAIL the class upheld");
    }
    if (s == GD_OK)
        s = dl_save_verdict(ctx, r, v);
    return s;
}

static gd_status dl_resolve_check(gd_ctx *ctx, const dl_run *run, dl_round *r, dl_assignment *a) {
    size_t nv = a->n_validators < 2 ? a->n_validators : 2, nr = a->n_recheckers;
    dl_vote *votes = calloc(nv + nr + 1, sizeof *votes);
    gd_status s = votes ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t j = 0; s == GD_OK && j < nv + nr; j++) {
        bool assigned = j < nv;
        const char *who = assigned ? a->validators[j] : a->recheckers[j - nv];
        dl_verdict *v = NULL;
        s = dl_load_verdict(ctx, r, &v, a->target, a->check, who);
        if (s == GD_OK && !dl_revealed(v)) {
            /* An assigned validator's skip was priced at dispute start. */
            if (!assigned)
                s = dl_skip(ctx, run, r, who, GD_DUTY_RECHECK, "skipped re-check");
            dl_free(v);
            continue;
        }
        uint64_t w = 0;
        if (s == GD_OK)
            s = dl_weight_of(r, &w, who);
        if (s == GD_OK)
            votes[n++] = (dl_vote){v, w, assigned};
        else
            dl_free(v);
    }
    dl_tally t = {0};
    if (s == GD_OK)
        s = dl_tally_count(&t, r, a, votes, n);
    dl_commitment *c = NULL;
    if (s == GD_OK)
        s = dl_get_commitment(ctx, &c, r->run, r->index, a->target);
    if (s == GD_OK)
        t.states_served = c->states_served;
    dl_free(c);
    for (size_t j = 0; s == GD_OK && j < n; j++)
        s = dl_judge(ctx, run, r, &t, &votes[j]);
    /* The target's own digest is no vote, but a statement about its own
     * training: one the class contradicts is a lie about it. */
    dl_verdict *own = NULL;
    if (s == GD_OK)
        s = dl_load_verdict(ctx, r, &own, a->target, a->check, a->target);
    if (s == GD_OK && t.outcome == OUTCOME(PASSED) && dl_revealed(own) &&
        !dl_same_digest(own, t.major_verdict)) {
        own->faulty = true;
        s = dl_cheat(ctx, run, r, a->target, "own digest lost to the class");
        if (s == GD_OK)
            s = dl_save_verdict(ctx, r, own);
    }
    dl_free(own);
    if (s == GD_OK && t.outcome == OUTCOME(UNAVAILABLE))
        s = dl_skip(ctx, run, r, a->target, GD_DUTY_SERVE, "states unavailable to the class");
    if (s == GD_OK && t.served_late)
        s = dl_skip(ctx, run, r, a->target, GD_DUTY_SERVE, "states served after the verify window");
    if (s == GD_OK)
        a->outcome = t.outcome;
    if (s == GD_OK)
        s = dl_save_assignment(ctx, r, a);
    if (s == GD_OK)
        s = dl_outcome_event(ctx, r, a, "decided by the class");
    for (size_t j = 0; j < n; j++)
        dl_free(votes[j].v);
    free(votes);
    return s;
}

/* What a target's checks decided, for the aggregation set. */
typedef struct dl_target {
    const char *address;
    uint32_t passed;
    bool upheld;
} dl_target;

static int dl_target_cmp(const void *key, const void *item) {
    return gd_diloco_address_cmp(key, ((const dl_target *)item)->address);
}

gd_status dl_resolve(gd_ctx *ctx, const dl_run *run, dl_round *r) {
    dl_key k;
    dl_round_prefix(&k, DL_ASSIGN, r);
    dl_list checks;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &checks, &gonka__diloco__v1__assignment__descriptor));
    /* Assignments come in (target, check) key order: one run per target. */
    dl_target *targets = calloc(checks.n + 1, sizeof *targets);
    size_t n_targets = 0;
    gd_status s = targets ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    for (size_t i = 0; s == GD_OK && i < checks.n; i++) {
        dl_assignment *a = checks.items[i];
        if (a->outcome == OUTCOME(PENDING))
            s = dl_resolve_check(ctx, run, r, a);
        if (n_targets == 0 || strcmp(targets[n_targets - 1].address, a->target) != 0)
            targets[n_targets++] = (dl_target){a->target, 0, false};
        dl_target *t = &targets[n_targets - 1];
        t->passed += a->outcome == OUTCOME(PASSED);
        t->upheld |= a->outcome == OUTCOME(UPHELD);
    }
    const dl_spec *sp = run->spec;
    for (size_t i = 0; s == GD_OK && i < n_targets; i++) {
        if (!targets[i].upheld)
            continue;
        s = dl_push_str(&r->failed, &r->n_failed, targets[i].address);
        if (s == GD_OK)
            s = dl_cheat(ctx, run, r, targets[i].address, "upheld FAIL");
        uint64_t until = r->index + 1 + sp->suspend_rounds;
        if (s == GD_OK)
            s = dl_suspend(ctx, r->run, targets[i].address, until < r->index ? UINT64_MAX : until);
    }
    /* Aggregated: included, and every one of its checks passed. */
    for (size_t i = 0; s == GD_OK && i < r->n_inclusion_set; i++) {
        const dl_target *t = bsearch(r->inclusion_set[i], targets, n_targets, sizeof *targets,
                                     dl_target_cmp);
        if (t != NULL && !t->upheld && t->passed == sp->checks_per_commit)
            s = dl_push_str(&r->aggregation_set, &r->n_aggregation_set, r->inclusion_set[i]);
    }
    free(targets);
    dl_list_free(&checks);
    return s;
}
