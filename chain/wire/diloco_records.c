/* Checks of the DiLoCo module's records (chain/wire/diloco_records.h). */
#include "chain/wire/diloco_records.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "chain/keys/address.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/diloco_rules.h"
#include "chain/wire/diloco_spec.h"

static gd_status gd_rec_address(const char *text, const char *what) {
    if (gd_address_check_canonical(text) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "%s", what);
    return GD_OK;
}

gd_status gd_diloco_addresses_check(char *const *list, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        GD_TRY(gd_rec_address(list[i], what));
    return GD_OK;
}

/* 32 bytes, or (when optional) empty: not fixed yet. */
static gd_status gd_rec_hash(const ProtobufCBinaryData *b, bool optional, const char *what) {
    if (b->len == GD_DILOCO_HASH_LEN || (optional && b->len == 0))
        return GD_OK;
    return gd_fail(GD_ERR_INVALID, "%s is %zu bytes, not %d", what, b->len, GD_DILOCO_HASH_LEN);
}

/* An amount the module fixes later (a tally, the active weight): empty
 * until then, else canonical. */
static gd_status gd_rec_amount_later(const char *amount, const char *what) {
    return amount[0] ? gd_diloco_amount_check(amount, what) : GD_OK;
}

static gd_status gd_rec_check_index(uint32_t check) {
    if (check >= GD_DILOCO_CHECKS_MAX)
        return gd_fail(GD_ERR_INVALID, "check %u is out of range", check);
    return GD_OK;
}

static int gd_rec_rank_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* n ranks (the array is sorted here): each below `below`, no two equal. */
static gd_status gd_rec_ranks(uint32_t *ranks, size_t n, uint64_t below, const char *what) {
    if (n > 1)
        qsort(ranks, n, sizeof *ranks, gd_rec_rank_cmp);
    if (n > 0 && ranks[n - 1] >= below)
        return gd_fail(GD_ERR_INVALID, "%s rank %u is not below the run's next_rank %" PRIu64,
                       what, ranks[n - 1], below);
    for (size_t i = 1; i < n; i++)
        if (ranks[i] == ranks[i - 1])
            return gd_fail(GD_ERR_INVALID, "two %ss have rank %u", what, ranks[i]);
    return GD_OK;
}

/* Whether class is one the run's spec lets members declare. */
static bool gd_rec_class_of_run(const Gonka__Diloco__V1__Run *run, const char *class) {
    for (size_t i = 0; run->spec && i < run->spec->n_hw_classes; i++)
        if (strcmp(run->spec->hw_classes[i], class) == 0)
            return true;
    return false;
}

gd_status gd_diloco_members_check(const Gonka__Diloco__V1__Run *run,
                                  Gonka__Diloco__V1__Member *const *members, size_t n) {
    uint32_t *ranks = malloc((n ? n : 1) * sizeof *ranks);
    if (ranks == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < n; i++) {
        s = gd_diloco_member_check(members[i]);
        if (s == GD_OK && members[i]->run != run->id)
            s = gd_fail(GD_ERR_INVALID, "member %zu is of run %" PRIu64, i, members[i]->run);
        if (s == GD_OK && !gd_rec_class_of_run(run, members[i]->hw_class))
            s = gd_fail(GD_ERR_INVALID, "member %zu declares hw_class '%.40s', not one of the "
                                        "run's hw_classes",
                        i, members[i]->hw_class);
        if (s == GD_OK)
            ranks[i] = members[i]->rank;
    }
    if (s == GD_OK)
        s = gd_rec_ranks(ranks, n, run->next_rank, "member");
    free(ranks);
    return s;
}

gd_status gd_diloco_run_check(const Gonka__Diloco__V1__Run *r) {
    if (r == NULL)
        return gd_fail(GD_ERR_INVALID, "run is missing");
    if (r->creator[0])
        GD_TRY(gd_rec_address(r->creator, "run creator"));
    GD_TRY(gd_diloco_spec_check(r->spec));
    GD_TRY(gd_rec_hash(&r->state_hash, false, "run state_hash"));
    return gd_diloco_amount_check(r->pool, "run pool");
}

gd_status gd_diloco_member_check(const Gonka__Diloco__V1__Member *m) {
    GD_TRY(gd_rec_address(m->address, "member address"));
    GD_TRY(gd_diloco_text_check(m->artifact_url, GD_DILOCO_URL_MAX, "member artifact_url"));
    GD_TRY(gd_diloco_text_check(m->hw_class, GD_DILOCO_HW_CLASS_MAX, "member hw_class"));
    GD_TRY(gd_diloco_amount_check(m->collateral, "member collateral"));
    if (m->joined_height < 0)
        return gd_fail(GD_ERR_INVALID, "member joined_height is negative");
    return GD_OK;
}

static gd_status gd_rec_windows(const Gonka__Diloco__V1__RoundWindows *w) {
    if (w == NULL)
        return gd_fail(GD_ERR_INVALID, "round windows are missing");
    /* In the order the windows follow each other. */
    const int64_t h[] = {w->train_start,  w->commit_start,       w->reveal_start,
                         w->verify_start, w->open_start,         w->dispute_start,
                         w->dispute_open_start, w->attest_start, w->attest_open_start,
                         w->end};
    if (h[0] < 0)
        return gd_fail(GD_ERR_INVALID, "round train_start is negative");
    for (size_t i = 1; i < sizeof h / sizeof h[0]; i++)
        if (h[i] < h[i - 1])
            return gd_fail(GD_ERR_INVALID, "round window heights decrease");
    return GD_OK;
}

gd_status gd_diloco_round_check(const Gonka__Diloco__V1__Round *r) {
    if (r == NULL)
        return gd_fail(GD_ERR_INVALID, "round is missing");
    GD_TRY(gd_rec_windows(r->windows));
    GD_TRY(gd_rec_hash(&r->beacon, false, "round beacon"));
    GD_TRY(gd_rec_hash(&r->verify_randomness, true, "round verify_randomness"));
    GD_TRY(gd_rec_hash(&r->recheck_randomness, true, "round recheck_randomness"));
    GD_TRY(gd_rec_hash(&r->seed, true, "round seed"));
    uint32_t *ranks = malloc((r->n_members ? r->n_members : 1) * sizeof *ranks);
    if (ranks == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < r->n_members; i++) {
        const Gonka__Diloco__V1__WeightedMember *m = r->members[i];
        s = gd_rec_address(m->address, "round member");
        if (s == GD_OK)
            s = gd_diloco_amount_check(m->weight, "round member weight");
        if (s == GD_OK)
            s = gd_diloco_text_check(m->hw_class, GD_DILOCO_HW_CLASS_MAX,
                                     "round member hw_class");
        ranks[i] = m->rank;
    }
    /* A snapshot does not carry next_rank: distinct ranks is what it can show. */
    if (s == GD_OK)
        s = gd_rec_ranks(ranks, r->n_members, (uint64_t)UINT32_MAX + 1, "round member");
    free(ranks);
    GD_TRY(s);
    GD_TRY(gd_diloco_amount_check(r->total_weight, "round total_weight"));
    GD_TRY(gd_rec_amount_later(r->active_weight, "round active_weight"));
    GD_TRY(gd_rec_amount_later(r->reporting_weight, "round reporting_weight"));
    GD_TRY(gd_rec_hash(&r->start_state_hash, false, "round start_state_hash"));
    GD_TRY(gd_rec_hash(&r->next_state_hash, true, "round next_state_hash"));
    if (r->phase < GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_TRAIN ||
        r->phase > GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_ATTEST_OPEN)
        return gd_fail(GD_ERR_INVALID, "round phase %d is not defined", (int)r->phase);
    GD_TRY(gd_diloco_addresses_check(r->inclusion_set, r->n_inclusion_set, "round inclusion_set"));
    GD_TRY(gd_diloco_addresses_check(r->aggregation_set, r->n_aggregation_set, "round aggregation_set"));
    GD_TRY(gd_diloco_addresses_check(r->failed, r->n_failed, "round failed"));
    return gd_diloco_addresses_check(r->cheaters, r->n_cheaters, "round cheaters");
}

gd_status gd_diloco_commitment_check(const Gonka__Diloco__V1__Commitment *c,
                                     const Gonka__Diloco__V1__Round *round) {
    if (c->run != round->run || c->round != round->index)
        return gd_fail(GD_ERR_INVALID, "commitment of run %" PRIu64 " round %" PRIu64
                                       " listed under another round", c->run, c->round);
    GD_TRY(gd_rec_address(c->participant, "commitment participant"));
    GD_TRY(gd_rec_hash(&c->payload_root, false, "commitment payload_root"));
    GD_TRY(gd_rec_hash(&c->transcript_root, false, "commitment transcript_root"));
    if (c->payload_leaves < 2)
        return gd_fail(GD_ERR_INVALID, "commitment payload_leaves %u is below 2",
                       c->payload_leaves);
    if (c->height < 0)
        return gd_fail(GD_ERR_INVALID, "commitment height is negative");
    return gd_rec_amount_later(c->report_weight, "commitment report_weight");
}

gd_status gd_diloco_availability_check(const Gonka__Diloco__V1__AvailabilityReport *a) {
    GD_TRY(gd_rec_address(a->reporter, "availability reporter"));
    GD_TRY(gd_rec_address(a->target, "availability target"));
    /* The chunks the chain drew: distinct, as gd_diloco_avail_chunks draws them. */
    if (a->n_chunks < 1 || a->n_chunks > GD_DILOCO_AVAIL_CHUNKS_MAX)
        return gd_fail(GD_ERR_INVALID, "availability report has %zu chunks, not 1 to %d",
                       a->n_chunks, GD_DILOCO_AVAIL_CHUNKS_MAX);
    for (size_t i = 0; i < a->n_chunks; i++)
        for (size_t k = 0; k < i; k++)
            if (a->chunks[i] == a->chunks[k])
                return gd_fail(GD_ERR_INVALID, "availability report lists chunk %u twice",
                               a->chunks[i]);
    return GD_OK;
}

gd_status gd_diloco_assignment_check(const Gonka__Diloco__V1__Assignment *a) {
    GD_TRY(gd_rec_address(a->target, "assignment target"));
    GD_TRY(gd_rec_check_index(a->check));
    if (a->n_validators < 1 || a->n_validators > 2)
        return gd_fail(GD_ERR_INVALID, "assignment has %zu validators, not 1 or 2",
                       a->n_validators);
    GD_TRY(gd_diloco_addresses_check(a->validators, a->n_validators, "assignment validator"));
    if (a->n_recheckers > GD_DILOCO_RECHECKERS_MAX)
        return gd_fail(GD_ERR_INVALID, "assignment has %zu re-checkers", a->n_recheckers);
    if ((int)a->outcome < GONKA__DILOCO__V1__CHECK_OUTCOME__CHECK_OUTCOME_PENDING ||
        (int)a->outcome > GONKA__DILOCO__V1__CHECK_OUTCOME__CHECK_OUTCOME_UNAVAILABLE)
        return gd_fail(GD_ERR_INVALID, "assignment outcome %d is not defined", (int)a->outcome);
    return gd_diloco_addresses_check(a->recheckers, a->n_recheckers, "assignment re-checker");
}

gd_status gd_diloco_verdict_record_check(const Gonka__Diloco__V1__VerdictRecord *v) {
    GD_TRY(gd_rec_address(v->validator, "verdict validator"));
    GD_TRY(gd_rec_address(v->target, "verdict target"));
    GD_TRY(gd_rec_check_index(v->check));
    GD_TRY(gd_rec_hash(&v->seal, true, "verdict seal"));
    GD_TRY(gd_rec_hash(&v->digest, true, "verdict digest"));
    if ((int)v->verdict < GONKA__DILOCO__V1__VERDICT__VERDICT_UNSPECIFIED ||
        (int)v->verdict > GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE)
        return gd_fail(GD_ERR_INVALID, "verdict %d is not defined", (int)v->verdict);
    if (v->faulty && v->credited)
        return gd_fail(GD_ERR_INVALID, "verdict is on both sides of its check (faulty and "
                                       "credited)");
    return GD_OK;
}

/* A sealed answer's record: the seal, the revealed value, or both; not
 * neither (there would be nothing to record). */
static gd_status gd_rec_sealed(const ProtobufCBinaryData *seal, const ProtobufCBinaryData *value,
                               const char *what) {
    if (seal->len == 0 && value->len == 0)
        return gd_fail(GD_ERR_INVALID, "%s has neither a seal nor a revealed value", what);
    return GD_OK;
}

gd_status gd_diloco_attestation_check(const Gonka__Diloco__V1__Attestation *a) {
    GD_TRY(gd_rec_address(a->attester, "attester"));
    GD_TRY(gd_rec_hash(&a->seal, true, "attestation seal"));
    GD_TRY(gd_rec_hash(&a->next_state_hash, true, "attested next_state_hash"));
    return gd_rec_sealed(&a->seal, &a->next_state_hash, "attestation");
}

gd_status gd_diloco_randomness_record_check(const Gonka__Diloco__V1__RandomnessRecord *r) {
    GD_TRY(gd_rec_address(r->member, "randomness member"));
    GD_TRY(gd_rec_hash(&r->seal, true, "randomness seal"));
    if (r->secret.len != 0 && r->secret.len != GD_DILOCO_SALT_LEN)
        return gd_fail(GD_ERR_INVALID, "randomness secret is %zu bytes, not %d", r->secret.len,
                       GD_DILOCO_SALT_LEN);
    return gd_rec_sealed(&r->seal, &r->secret, "randomness record");
}

gd_status gd_diloco_settle_check(const Gonka__Diloco__V1__SettleAmount *s) {
    GD_TRY(gd_rec_address(s->address, "settled address"));
    return gd_diloco_amount_check(s->amount, "settled amount");
}
