/* The demo's progress line and summary (see demo_report.h). */
#include "plugin/demo/demo_report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "common/bytes.h"

#define PHASE(x) GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_##x
#define VERDICT(x) GONKA__DILOCO__V1__VERDICT__VERDICT_##x

const char *gd_demo_role_name(gd_demo_role role) {
    return role == GD_DEMO_WORKER ? "worker" : role == GD_DEMO_VALIDATOR ? "validator" : "cheater";
}

gd_demo_member *gd_demo_report_member(gd_demo_report *r, const char *address) {
    for (size_t i = 0; i < r->n_members; i++)
        if (strcmp(r->members[i].address, address) == 0)
            return &r->members[i];
    return NULL;
}

uint64_t gd_demo_member_slashed(const gd_demo_member *m) {
    uint64_t chain = m->bonded > m->collateral ? m->bonded - m->collateral : 0;
    return chain > m->status_slashed ? chain : m->status_slashed;
}

static bool gd_demo_trains(gd_demo_role role) { return role != GD_DEMO_VALIDATOR; }

static void gd_demo_hash_hex(char out[65], const ProtobufCBinaryData *h) {
    out[0] = 0;
    if (h->len == 32)
        gd_hex_encode(out, h->data, 32, false);
}

gd_status gd_demo_report_add_round(gd_demo_report *r,
                                   const Gonka__Diloco__V1__QueryRoundResponse *q) {
    if (r->n_rounds == GD_DEMO_ROUNDS_MAX)
        return gd_fail(GD_ERR_LIMIT, "more than %d rounds", GD_DEMO_ROUNDS_MAX);
    const Gonka__Diloco__V1__Round *round = q->round;
    gd_demo_round *o = &r->rounds[r->n_rounds++];
    memset(o, 0, sizeof *o);
    o->index = round->index;
    o->epoch = round->epoch;
    o->done = round->phase == PHASE(DONE);
    /* A void round leaves G as it was: its agreed state is the one it
     * started from. */
    gd_demo_hash_hex(o->state_hash, o->done ? &round->next_state_hash : &round->start_state_hash);
    o->participants = (unsigned)round->n_members;
    o->commitments = (unsigned)q->n_commitments;
    o->aggregated = o->done ? (unsigned)round->n_aggregation_set : 0;
    for (size_t i = 0; o->done && i < q->n_attestations; i++) {
        const ProtobufCBinaryData *h = &q->attestations[i]->next_state_hash;
        o->attesters += h->len == 32 && round->next_state_hash.len == 32 &&
                        memcmp(h->data, round->next_state_hash.data, 32) == 0;
    }
    /* Tokens count as the chain pays them: the commitments of the
     * aggregation set of a DONE round. */
    for (size_t i = 0; o->done && i < round->n_aggregation_set; i++)
        for (size_t k = 0; k < q->n_commitments; k++) {
            const Gonka__Diloco__V1__Commitment *c = q->commitments[k];
            gd_demo_member *m = gd_demo_report_member(r, c->participant);
            if (m && strcmp(c->participant, round->aggregation_set[i]) == 0)
                m->tokens += c->tokens;
        }
    for (size_t i = 0; i < round->n_failed; i++) {
        const gd_demo_member *m = gd_demo_report_member(r, round->failed[i]);
        size_t len = strlen(o->failed);
        snprintf(o->failed + len, sizeof o->failed - len, "%s%s", len ? " " : "",
                 m ? m->label : "?");
    }
    for (size_t i = 0; i < q->n_verdicts; i++) {
        const Gonka__Diloco__V1__VerdictRecord *v = q->verdicts[i];
        gd_demo_member *m = gd_demo_report_member(r, v->target);
        if (m && v->verdict == VERDICT(FAIL))
            m->verdicts_failed++;
    }
    return GD_OK;
}

void gd_demo_progress(FILE *f, const gd_demo_report *r, const gd_demo_chain *c,
                      const char *extra) {
    fprintf(f, "height %4" PRId64, c->height);
    const Gonka__Diloco__V1__QueryRoundResponse *q = c->round;
    if (q == NULL) {
        fprintf(f, "  no round yet, %zu/%zu members joined", c->run ? c->run->n_members : 0,
                r->n_members);
    } else {
        fprintf(f, "  round %" PRIu64 " %-12s", q->round->index,
                gd_diloco_phase_name(q->round->phase));
        for (size_t i = 0; i < r->n_members; i++) {
            const gd_demo_member *m = &r->members[i];
            if (!gd_demo_trains(m->role))
                continue;
            if (isfinite(m->loss))
                fprintf(f, " %s loss %.3f", m->label, m->loss);
            else
                fprintf(f, " %s loss -", m->label);
        }
        size_t training = 0;
        for (size_t i = 0; i < q->round->n_members; i++) {
            const gd_demo_member *m =
                gd_demo_report_member((gd_demo_report *)r, q->round->members[i]->address);
            training += m && gd_demo_trains(m->role);
        }
        size_t pass = 0, fail = 0;
        for (size_t i = 0; i < q->n_verdicts; i++) {
            pass += q->verdicts[i]->verdict == VERDICT(PASS);
            fail += q->verdicts[i]->verdict == VERDICT(FAIL);
        }
        fprintf(f, "  commits %zu/%zu  verdicts pass %zu fail %zu", q->n_commitments, training,
                pass, fail);
    }
    uint64_t in = 0, out = 0;
    for (size_t i = 0; i < r->n_members; i++) {
        in += r->members[i].bytes_in;
        out += r->members[i].bytes_out;
    }
    fprintf(f, "  in %.1f MB out %.1f MB", (double)in / 1e6, (double)out / 1e6);
    if (extra && extra[0])
        fprintf(f, "  %s", extra);
    fputc('\n', f);
    fflush(f);
}

void gd_demo_report_print(FILE *f, const gd_demo_report *r) {
    fprintf(f, "\n%-4s %-9s %-46s %10s %9s %16s %14s\n", "who", "role", "address", "tokens",
            "verdicts", "reward claimed", "slashed");
    for (size_t i = 0; i < r->n_members; i++) {
        const gd_demo_member *m = &r->members[i];
        char reward[32], slashed[32];
        snprintf(reward, sizeof reward, "%" PRIu64 "ngonka", m->reward_claimed);
        snprintf(slashed, sizeof slashed, "%" PRIu64 "ngonka", gd_demo_member_slashed(m));
        fprintf(f, "%-4s %-9s %-46s %10" PRIu64 " %9" PRIu64 " %16s %14s\n", m->label,
                gd_demo_role_name(m->role), m->address, m->tokens, m->verdicts_failed, reward,
                slashed);
    }
    fprintf(f, "(tokens: accepted by the chain; verdicts: FAIL verdicts against it)\n");
    fprintf(f, "\neval loss of G over %u batches of %u x %u tokens: %.4f before (G_0), %.4f "
               "after (G_%zu)\n",
            r->eval_batches, r->batch, r->seq, r->loss_before, r->loss_after, r->n_rounds);
    fprintf(f, "\n%-5s %-6s %-64s %9s %12s\n", "round", "phase", "agreed state hash",
            "attesters", "participants");
    for (size_t i = 0; i < r->n_rounds; i++) {
        const gd_demo_round *o = &r->rounds[i];
        fprintf(f, "%-5" PRIu64 " %-6s %-64s %9u %12u\n", o->index, o->done ? "done" : "void",
                o->state_hash, o->attesters, o->participants);
    }
    fprintf(f, "\nfinished at height %" PRId64 " after %.0f s\n", r->height, r->seconds);
}

static json_t *gd_demo_u64(uint64_t v) {
    return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

json_t *gd_demo_report_json(const gd_demo_report *r) {
    json_t *rounds = json_array(), *members = json_array();
    for (size_t i = 0; rounds && i < r->n_rounds; i++) {
        const gd_demo_round *o = &r->rounds[i];
        json_array_append_new(
            rounds, json_pack("{s:o,s:s,s:s,s:i,s:i,s:i,s:i,s:o}", "round", gd_demo_u64(o->index),
                              "phase", o->done ? "done" : "void", "state_hash", o->state_hash,
                              "attesters", (int)o->attesters, "participants",
                              (int)o->participants, "commitments", (int)o->commitments,
                              "aggregated", (int)o->aggregated, "epoch", gd_demo_u64(o->epoch)));
    }
    for (size_t i = 0; members && i < r->n_members; i++) {
        const gd_demo_member *m = &r->members[i];
        json_array_append_new(
            members, json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "address", m->address, "role",
                               gd_demo_role_name(m->role), "tokens", gd_demo_u64(m->tokens),
                               "verdicts_failed", gd_demo_u64(m->verdicts_failed),
                               "reward_claimed_ngonka", gd_demo_u64(m->reward_claimed),
                               "slashed_ngonka", gd_demo_u64(gd_demo_member_slashed(m))));
    }
    /* A loss that could not be computed (the G was never fetched) is null,
     * never a JSON failure. */
    json_t *before = isfinite(r->loss_before) ? json_real(r->loss_before) : json_null();
    json_t *after = isfinite(r->loss_after) ? json_real(r->loss_after) : json_null();
    return json_pack("{s:o,s:o,s:o,s:o,s:i,s:I,s:f}", "rounds", rounds, "participants", members,
                     "loss_before", before, "loss_after", after, "eval_batches",
                     (int)r->eval_batches, "height", (json_int_t)r->height, "seconds",
                     r->seconds);
}
