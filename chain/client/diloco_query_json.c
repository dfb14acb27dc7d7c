/* DiLoCo query answers as JSON (chain/client/diloco_query.h). Builders return NULL
 * only when out of memory; json_pack's "o" steals each reference, also on
 * failure, so a NULL part fails the whole value without a leak. */
#include <inttypes.h>
#include <stdio.h>

#include "chain/client/diloco_query.h"
#include "chain/wire/diloco_spec.h"
#include "chain/wire/json_bytes.h"

/* The largest integer a JSON reader holding doubles keeps exactly. */
#define GD_JSON_EXACT_MAX ((uint64_t)1 << 53)

static json_t *gd_dj_u64(uint64_t v) {
    if (v <= GD_JSON_EXACT_MAX)
        return json_integer((json_int_t)v);
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    return json_string(text);
}

static json_t *gd_dj_i64(int64_t v) {
    if (v >= -(int64_t)GD_JSON_EXACT_MAX && v <= (int64_t)GD_JSON_EXACT_MAX)
        return json_integer((json_int_t)v);
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, v);
    return json_string(text);
}

static json_t *gd_dj_hex(const ProtobufCBinaryData *b) {
    return gd_json_hex(b->data, b->len, false);
}

static json_t *gd_dj_strings(char *const *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

/* An array of fn(items[i]). */
static json_t *gd_dj_list(void *const *items, size_t n, json_t *(*fn)(const void *)) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, fn(items[i])) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

const char *gd_diloco_phase_name(int phase) {
    /* Proto order: the two reveal windows were added after done and void. */
    static const char *const names[] = {"unspecified", "train",  "commit",       "reveal",
                                        "verify",      "open",   "dispute",      "attest",
                                        "done",        "void",   "dispute_open", "attest_open"};
    return phase >= 0 && phase < (int)(sizeof names / sizeof names[0]) ? names[phase]
                                                                       : "unspecified";
}

const char *gd_diloco_verdict_name(int verdict) {
    static const char *const names[] = {"sealed", "pass", "fail", "unavailable"};
    return verdict >= 0 && verdict < 4 ? names[verdict] : "unspecified";
}

const char *gd_diloco_outcome_name(int outcome) {
    static const char *const names[] = {"pending", "passed", "upheld", "undecided", "unavailable"};
    return outcome >= 0 && outcome < 5 ? names[outcome] : "unspecified";
}

/* An array of JSON integers. */
static json_t *gd_dj_u32s(const uint32_t *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_integer(v[i])) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

/* --- records --------------------------------------------------------------------- */

static json_t *gd_dj_run(const void *p) {
    const Gonka__Diloco__V1__Run *r = p;
    return json_pack("{s:o,s:s,s:o,s:o,s:o,s:o,s:s,s:o,s:I}", "id", gd_dj_u64(r->id),
                     "creator", r->creator, "spec", gd_diloco_spec_to_json(r->spec),
                     "state_hash", gd_dj_hex(&r->state_hash), "rounds_aggregated",
                     gd_dj_u64(r->rounds_aggregated), "next_round", gd_dj_u64(r->next_round),
                     "pool", r->pool, "next_settle_epoch", gd_dj_u64(r->next_settle_epoch),
                     "next_rank", (json_int_t)r->next_rank);
}

static json_t *gd_dj_member(const void *p) {
    const Gonka__Diloco__V1__Member *m = p;
    return json_pack("{s:o,s:s,s:s,s:s,s:s,s:o,s:I,s:o,s:b}", "run", gd_dj_u64(m->run),
                     "address", m->address, "artifact_url", m->artifact_url, "hw_class",
                     m->hw_class, "collateral", m->collateral, "joined_height",
                     gd_dj_i64(m->joined_height), "rank", (json_int_t)m->rank, "suspended_until",
                     gd_dj_u64(m->suspended_until), "leaving", (int)m->leaving);
}

static json_t *gd_dj_weighted(const void *p) {
    const Gonka__Diloco__V1__WeightedMember *m = p;
    return json_pack("{s:s,s:s,s:s,s:I,s:b,s:b,s:b,s:o}", "address", m->address, "weight",
                     m->weight, "hw_class", m->hw_class, "rank", (json_int_t)m->rank, "active",
                     (int)m->active, "reported", (int)m->reported, "skip_slashed",
                     (int)m->skip_slashed, "missed",
                     gd_dj_strings(m->missed, m->n_missed));
}

/* In the order the windows follow each other (dispute_open between
 * dispute and attest, attest_open between attest and end). */
static json_t *gd_dj_windows(const Gonka__Diloco__V1__RoundWindows *w) {
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "train_start",
                     gd_dj_i64(w->train_start), "commit_start", gd_dj_i64(w->commit_start),
                     "reveal_start", gd_dj_i64(w->reveal_start), "verify_start",
                     gd_dj_i64(w->verify_start), "open_start", gd_dj_i64(w->open_start),
                     "dispute_start", gd_dj_i64(w->dispute_start), "dispute_open_start",
                     gd_dj_i64(w->dispute_open_start), "attest_start", gd_dj_i64(w->attest_start),
                     "attest_open_start", gd_dj_i64(w->attest_open_start), "end",
                     gd_dj_i64(w->end));
}

static json_t *gd_dj_round(const void *p) {
    const Gonka__Diloco__V1__Round *r = p;
    return json_pack(
        "{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s,s:s,s:s,s:o,s:o,s:s,s:o,s:o,s:o,s:o}", "run",
        gd_dj_u64(r->run), "index", gd_dj_u64(r->index), "epoch", gd_dj_u64(r->epoch),
        "windows", gd_dj_windows(r->windows), "beacon", gd_dj_hex(&r->beacon), "seed",
        gd_dj_hex(&r->seed), "verify_randomness", gd_dj_hex(&r->verify_randomness),
        "recheck_randomness", gd_dj_hex(&r->recheck_randomness), "members",
        gd_dj_list((void *const *)r->members, r->n_members, gd_dj_weighted), "total_weight",
        r->total_weight, "active_weight", r->active_weight, "reporting_weight",
        r->reporting_weight, "start_state_hash",
        gd_dj_hex(&r->start_state_hash), "next_state_hash", gd_dj_hex(&r->next_state_hash),
        "phase", gd_diloco_phase_name((int)r->phase), "inclusion_set",
        gd_dj_strings(r->inclusion_set, r->n_inclusion_set), "aggregation_set",
        gd_dj_strings(r->aggregation_set, r->n_aggregation_set), "failed",
        gd_dj_strings(r->failed, r->n_failed), "cheaters", gd_dj_strings(r->cheaters, r->n_cheaters));
}

static json_t *gd_dj_commitment(const void *p) {
    const Gonka__Diloco__V1__Commitment *c = p;
    return json_pack("{s:o,s:o,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s,s:I}", "run",
                     gd_dj_u64(c->run), "round", gd_dj_u64(c->round), "participant",
                     c->participant, "payload_root", gd_dj_hex(&c->payload_root),
                     "payload_leaves", json_integer(c->payload_leaves), "payload_bytes",
                     gd_dj_u64(c->payload_bytes), "transcript_root",
                     gd_dj_hex(&c->transcript_root), "segment_count",
                     json_integer(c->segment_count), "tokens", gd_dj_u64(c->tokens),
                     "loss_first_micro", gd_dj_u64(c->loss_first_micro), "loss_last_micro",
                     gd_dj_u64(c->loss_last_micro), "height", gd_dj_i64(c->height),
                     "report_weight", c->report_weight, "reports", (json_int_t)c->reports);
}

static json_t *gd_dj_availability(const void *p) {
    const Gonka__Diloco__V1__AvailabilityReport *a = p;
    return json_pack("{s:s,s:s,s:o}", "reporter", a->reporter, "target", a->target, "chunks",
                     gd_dj_u32s(a->chunks, a->n_chunks));
}

static json_t *gd_dj_assignment(const void *p) {
    const Gonka__Diloco__V1__Assignment *a = p;
    return json_pack("{s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:s}", "target", a->target, "check",
                     (json_int_t)a->check, "segment", (json_int_t)a->segment, "step",
                     (json_int_t)a->step, "chunk", (json_int_t)a->chunk, "validators",
                     gd_dj_strings(a->validators, a->n_validators), "recheckers",
                     gd_dj_strings(a->recheckers, a->n_recheckers), "outcome",
                     gd_diloco_outcome_name((int)a->outcome));
}

static json_t *gd_dj_verdict(const void *p) {
    const Gonka__Diloco__V1__VerdictRecord *v = p;
    return json_pack("{s:s,s:s,s:I,s:o,s:s,s:o,s:b,s:b,s:b,s:b}", "validator", v->validator,
                     "target", v->target, "check", (json_int_t)v->check, "seal",
                     gd_dj_hex(&v->seal), "verdict", gd_diloco_verdict_name((int)v->verdict),
                     "digest", gd_dj_hex(&v->digest), "bonded", (int)v->bonded, "recheck",
                     (int)v->recheck, "faulty", (int)v->faulty, "credited", (int)v->credited);
}

static json_t *gd_dj_attestation(const void *p) {
    const Gonka__Diloco__V1__Attestation *a = p;
    return json_pack("{s:s,s:o,s:o}", "attester", a->attester, "seal", gd_dj_hex(&a->seal),
                     "next_state_hash", gd_dj_hex(&a->next_state_hash));
}

static json_t *gd_dj_randomness(const void *p) {
    const Gonka__Diloco__V1__RandomnessRecord *r = p;
    return json_pack("{s:s,s:o,s:o}", "member", r->member, "seal", gd_dj_hex(&r->seal),
                     "secret", gd_dj_hex(&r->secret));
}

static json_t *gd_dj_settle(const void *p) {
    const Gonka__Diloco__V1__SettleAmount *s = p;
    return json_pack("{s:o,s:o,s:s,s:s,s:o,s:I,s:I,s:b,s:b}", "run", gd_dj_u64(s->run), "epoch",
                     gd_dj_u64(s->epoch), "address", s->address, "amount", s->amount, "tokens",
                     gd_dj_u64(s->tokens), "checks", (json_int_t)s->checks, "attestations",
                     (json_int_t)s->attestations, "claimed", (int)s->claimed, "forfeited",
                     (int)s->forfeited);
}

/* --- responses ------------------------------------------------------------------- */

json_t *gd_diloco_params_json(const Gonka__Diloco__V1__QueryParamsResponse *r) {
    return json_pack("{s:{s:s}}", "params", "authority", r->params->authority);
}

json_t *gd_diloco_runs_json(const Gonka__Diloco__V1__QueryRunsResponse *r) {
    return json_pack("{s:o}", "runs", gd_dj_list((void *const *)r->runs, r->n_runs, gd_dj_run));
}

json_t *gd_diloco_run_json(const Gonka__Diloco__V1__QueryRunResponse *r) {
    return json_pack("{s:o,s:o,s:o,s:o}", "run", gd_dj_run(r->run), "members",
                     gd_dj_list((void *const *)r->members, r->n_members, gd_dj_member),
                     "current_round",
                     r->current_round ? gd_dj_round(r->current_round) : json_null(),
                     "next_sealed", gd_dj_strings(r->next_sealed, r->n_next_sealed));
}

json_t *gd_diloco_round_json(const Gonka__Diloco__V1__QueryRoundResponse *r) {
    return json_pack(
        "{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "round", gd_dj_round(r->round), "commitments",
        gd_dj_list((void *const *)r->commitments, r->n_commitments, gd_dj_commitment),
        "availability",
        gd_dj_list((void *const *)r->availability, r->n_availability, gd_dj_availability),
        "assignments",
        gd_dj_list((void *const *)r->assignments, r->n_assignments, gd_dj_assignment),
        "verdicts", gd_dj_list((void *const *)r->verdicts, r->n_verdicts, gd_dj_verdict),
        "attestations",
        gd_dj_list((void *const *)r->attestations, r->n_attestations, gd_dj_attestation),
        "randomness",
        gd_dj_list((void *const *)r->randomness, r->n_randomness, gd_dj_randomness), "height",
        gd_dj_i64(r->height));
}

json_t *gd_diloco_rewards_json(const Gonka__Diloco__V1__QueryRewardsResponse *r) {
    return json_pack("{s:o}", "amounts",
                     gd_dj_list((void *const *)r->amounts, r->n_amounts, gd_dj_settle));
}
