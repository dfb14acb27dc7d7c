/* The round driver's view from the module's query answers
 * (plugin/member/chain_view.h). */
#include "plugin/member/chain_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PH(x) GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_##x

void gd_chain_view_free(gd_chain_view_buf *b) {
    free(b->commitments);
    free(b->reported);
    free(b->aggregation);
    free(b->checks);
    memset(b, 0, sizeof *b);
}

static gd_round_windows gd_windows_of(const Gonka__Diloco__V1__RoundWindows *w) {
    gd_round_windows out = {0};
    if (w == NULL)
        return out;
    out.train_start = w->train_start;
    out.commit_start = w->commit_start;
    out.reveal_start = w->reveal_start;
    out.verify_start = w->verify_start;
    out.open_start = w->open_start;
    out.dispute_start = w->dispute_start;
    out.dispute_open_start = w->dispute_open_start;
    out.attest_start = w->attest_start;
    out.attest_open_start = w->attest_open_start;
    out.end = w->end;
    return out;
}

static bool gd_has(char *const *items, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0)
            return true;
    return false;
}

/* The checks of the round that involve the node, with its own records. */
static gd_status gd_view_checks(gd_chain_view_buf *b, const char *me,
                                const Gonka__Diloco__V1__QueryRoundResponse *q) {
    b->checks = calloc(q->n_assignments + 1, sizeof *b->checks);
    if (b->checks == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < q->n_assignments; i++) {
        const Gonka__Diloco__V1__Assignment *a = q->assignments[i];
        bool validator = gd_has(a->validators, a->n_validators, me);
        bool rechecker = gd_has(a->recheckers, a->n_recheckers, me);
        bool own = strcmp(a->target, me) == 0;
        if (!validator && !rechecker && !own)
            continue;
        gd_view_check *c = &b->checks[n++];
        snprintf(c->target, sizeof c->target, "%s", a->target);
        c->check = a->check;
        c->segment = a->segment;
        c->step = a->step;
        c->chunk = a->chunk;
        c->validator = validator;
        c->rechecker = rechecker;
        c->own = own;
        for (size_t j = 0; j < q->n_verdicts; j++) {
            const Gonka__Diloco__V1__VerdictRecord *v = q->verdicts[j];
            if (strcmp(v->validator, me) != 0 || strcmp(v->target, a->target) != 0 ||
                v->check != a->check)
                continue;
            c->sealed = v->seal.len > 0;
            c->revealed = v->verdict != 0;
        }
    }
    b->view.round.checks = b->checks;
    b->view.round.n_checks = n;
    return GD_OK;
}

static gd_status gd_view_round(gd_chain_view_buf *b, const char *me,
                               const Gonka__Diloco__V1__QueryRoundResponse *q) {
    gd_round_view *r = &b->view.round;
    const Gonka__Diloco__V1__Round *round = q->round;
    r->index = round->index;
    r->epoch = round->epoch;
    r->windows = gd_windows_of(round->windows);
    r->over = round->phase == PH(DONE) || round->phase == PH(VOID);
    for (size_t i = 0; i < round->n_members; i++)
        r->in_snapshot |= strcmp(round->members[i]->address, me) == 0;
    b->commitments = calloc(q->n_commitments + 1, sizeof *b->commitments);
    b->reported = calloc(q->n_availability + 1, sizeof *b->reported);
    b->aggregation = calloc(round->n_aggregation_set + 1, sizeof *b->aggregation);
    if (!b->commitments || !b->reported || !b->aggregation)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < q->n_commitments; i++) {
        b->commitments[i] = q->commitments[i]->participant;
        r->committed |= strcmp(q->commitments[i]->participant, me) == 0;
    }
    r->commitments = b->commitments;
    r->n_commitments = q->n_commitments;
    size_t n = 0;
    for (size_t i = 0; i < q->n_availability; i++)
        if (strcmp(q->availability[i]->reporter, me) == 0)
            b->reported[n++] = q->availability[i]->target;
    r->reported = b->reported;
    r->n_reported = n;
    for (size_t i = 0; i < round->n_aggregation_set; i++)
        b->aggregation[i] = round->aggregation_set[i];
    r->aggregation_set = b->aggregation;
    r->n_aggregation_set = round->n_aggregation_set;
    for (size_t i = 0; i < q->n_randomness; i++)
        if (strcmp(q->randomness[i]->member, me) == 0) {
            r->secret_sealed = q->randomness[i]->seal.len > 0;
            r->secret_revealed = q->randomness[i]->secret.len > 0;
        }
    for (size_t i = 0; i < q->n_attestations; i++)
        if (strcmp(q->attestations[i]->attester, me) == 0) {
            r->attest_sealed = q->attestations[i]->seal.len > 0;
            r->attest_revealed = q->attestations[i]->next_state_hash.len > 0;
        }
    return gd_view_checks(b, me, q);
}

gd_status gd_chain_view_build(gd_chain_view_buf *b, const char *address, int64_t height,
                              const Gonka__Diloco__V1__QueryRunResponse *run,
                              const Gonka__Diloco__V1__QueryRoundResponse *round,
                              const Gonka__Diloco__V1__QueryRewardsResponse *rewards,
                              const gd_claim_state *claims, bool sealed_next) {
    memset(b, 0, sizeof *b);
    if (run == NULL || run->run == NULL)
        return gd_fail(GD_ERR_INVALID, "chain view: no run");
    if (strlen(address) >= sizeof b->view.address)
        return gd_fail(GD_ERR_INVALID, "chain view: address too long");
    gd_chain_view *v = &b->view;
    v->height = height;
    strcpy(v->address, address);
    v->next_round = run->run->next_round;
    v->overlap = run->run->spec != NULL && run->run->spec->overlap;
    /* The journal knows of a seal still in flight; the chain of one a
     * restart's journal lost (sent, then killed before it was recorded). */
    v->sealed_next = sealed_next;
    for (size_t i = 0; i < run->n_next_sealed; i++)
        v->sealed_next |= strcmp(run->next_sealed[i], address) == 0;
    for (size_t i = 0; i < run->n_members; i++)
        if (strcmp(run->members[i]->address, address) == 0) {
            v->member = true;
            v->leaving = run->members[i]->leaving;
        }
    gd_status s = GD_OK;
    if (round != NULL && round->round != NULL) {
        if (run->current_round == NULL || run->current_round->index != round->round->index) {
            gd_chain_view_free(b);
            return gd_fail(GD_ERR_INVALID, "chain view: round %llu is not the run's current one",
                           (unsigned long long)round->round->index);
        }
        v->have_round = true;
        s = gd_view_round(b, address, round);
    }
    if (s == GD_OK && claims != NULL && claims->open) {
        v->claim_open = true;
        v->claim_epoch = claims->epoch;
        for (size_t i = 0; rewards != NULL && i < rewards->n_amounts; i++) {
            const Gonka__Diloco__V1__SettleAmount *a = rewards->amounts[i];
            if (a->run != run->run->id || a->epoch != claims->epoch)
                continue;
            v->owed = strtoull(a->amount, NULL, 10);
            v->claimed = a->claimed;
        }
    }
    if (s != GD_OK)
        gd_chain_view_free(b);
    return s;
}

void gd_chain_answers_free(gd_chain_answers *a) {
    if (a->run)
        protobuf_c_message_free_unpacked(&a->run->base, NULL);
    if (a->round)
        protobuf_c_message_free_unpacked(&a->round->base, NULL);
    if (a->rewards)
        protobuf_c_message_free_unpacked(&a->rewards->base, NULL);
    memset(a, 0, sizeof *a);
}

gd_claim_state gd_claims_at(const gd_epoch_info *clock) {
    gd_claim_state claims = {false, 0};
    if (clock->epoch.index > 0) {
        gd_epoch_stages st;
        gd_epoch_stages_compute(&st, &clock->epoch, &clock->params);
        claims.open = clock->block_height >= st.claim_money;
        claims.epoch = clock->epoch.index - 1;
    }
    return claims;
}
