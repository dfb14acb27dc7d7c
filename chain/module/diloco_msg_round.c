/* The DiLoCo module's messages of a round's course: a worker's commitment
 * (MsgCommitRound), availability reports with their state samples
 * (MsgReportAvailability), and the secrets sealed a round ahead and
 * revealed for its seed (MsgRandomness); docs/protocol.md section 7. */
#include <stdlib.h>
#include <string.h>

#include "chain/module/diloco_internal.h"
#include "chain/wire/diloco_msg.h"
#include "proofs/mmr.h"

/* Code 10 when a record already exists under k (a second commit, report,
 * re-check or attestation). */
static gd_status dl_require_absent(gd_ctx *ctx, const dl_key *k, const char *what) {
    const uint8_t *v;
    size_t n;
    gd_status g = gd_ctx_get(ctx, k->b, k->n, &v, &n);
    if (g == GD_ERR_NOT_FOUND)
        return GD_OK;
    if (g != GD_OK)
        return g;
    return dl_fail(ctx, GD_DILOCO_ERR_DUPLICATE, "%s", what);
}

/* ---- MsgCommitRound ------------------------------------------------------------------- */

DL_VALIDATE(dl_commit_validate, Gonka__Diloco__V1__MsgCommitRound, participant,
            gd_diloco_msg_commit_round_check)

gd_status dl_commit_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                            gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgCommitRound *m = (const Gonka__Diloco__V1__MsgCommitRound *)msg;
    dl_run *run = NULL;
    dl_round *round = NULL;
    uint64_t tokens = 0;
    gd_status s = dl_current(ctx, m->run, m->round, PH(COMMIT), &run, &round);
    uint64_t weight = 0;
    if (s == GD_OK)
        s = dl_mark_active(ctx, m->run, m->round, m->participant, &weight);
    dl_key k;
    dl_key_commit(&k, m->run, m->round, m->participant);
    if (s == GD_OK)
        s = dl_require_absent(ctx, &k, "the participant already committed to this round");
    if (s == GD_OK) {
        const dl_spec *sp = run->spec;
        uint64_t steps = (uint64_t)m->segment_count * sp->segment_steps;
        if (steps < sp->h_min || steps > sp->h_max)
            s = dl_fail(ctx, GD_DILOCO_ERR_INVALID,
                        "%u segments of %u steps is %llu inner steps, outside %u..%u",
                        (unsigned)m->segment_count, (unsigned)sp->segment_steps,
                        (unsigned long long)steps, (unsigned)sp->h_min, (unsigned)sp->h_max);
        else if (sp->tokens_per_step > UINT64_MAX / steps)
            s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "token count overflows");
        else
            tokens = steps * sp->tokens_per_step;
    }
    if (s == GD_OK) {
        dl_commitment c = GONKA__DILOCO__V1__COMMITMENT__INIT;
        c.run = m->run;
        c.round = m->round;
        c.participant = m->participant;
        c.payload_root = m->payload_root;
        c.payload_leaves = m->payload_leaves;
        c.payload_bytes = m->payload_bytes;
        c.transcript_root = m->transcript_root;
        c.segment_count = m->segment_count;
        c.tokens = tokens;
        c.loss_first_micro = m->loss_first_micro;
        c.loss_last_micro = m->loss_last_micro;
        c.height = ctx->height;
        c.report_weight = (char *)"0";
        c.state_report_weight = (char *)"0";
        s = dl_save(ctx, &k, &c);
        char ts[24];
        dl_amount_str(ts, tokens);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_committed", m->run, m->round, "participant",
                         m->participant, "tokens", ts);
        Gonka__Diloco__V1__MsgCommitRoundResponse r =
            GONKA__DILOCO__V1__MSG_COMMIT_ROUND_RESPONSE__INIT;
        r.tokens = tokens;
        if (s == GD_OK)
            s = dl_pack(response, &r);
    }
    dl_free(round);
    dl_free(run);
    return s;
}

/* ---- MsgReportAvailability --------------------------------------------------------- */

gd_status dl_report_validate(gd_ctx *ctx, const ProtobufCMessage *msg, char *signer,
                             size_t cap) {
    const Gonka__Diloco__V1__MsgReportAvailability *m =
        (const Gonka__Diloco__V1__MsgReportAvailability *)msg;
    gd_mmr_proof proof;
    gd_status s = dl_signer(ctx, m->reporter, signer, cap);
    /* A missing or undecodable proof is code 12, like one that does not
     * verify; the rest of ValidateBasic is code 2. */
    if (s == GD_OK && m->n_proofs == 0)
        s = dl_fail(ctx, GD_DILOCO_ERR_BAD_PROOF, "the availability proofs are missing");
    for (size_t i = 0; s == GD_OK && i < m->n_proofs; i++)
        if (m->proofs[i].len == 0 ||
            gd_mmr_proof_decode(&proof, m->proofs[i].data, m->proofs[i].len) != GD_OK)
            s = dl_fail(ctx, GD_DILOCO_ERR_BAD_PROOF,
                        "availability proof %zu does not decode: %s", i,
                        m->proofs[i].len ? gd_error_detail() : "empty");
    if (s == GD_OK)
        s = dl_basic(ctx, gd_diloco_msg_report_availability_check(m));
    return s;
}

/* Adds weight to a tally kept as a decimal string ("" reads as 0). */
static gd_status dl_tally_add(char **tally, uint64_t weight) {
    dl_u128 w = 0;
    GD_TRY(dl_tally_read(&w, *tally));
    char text[40];
    dl_amount128_str(text, w + weight);
    return dl_set_str(tally, text);
}

/* Checks a report's state sample against the commitment (code 12 when it
 * does not prove the drawn chunk); *out gets the draw, its pick replaced
 * by the chunk. */
static gd_status dl_report_state(gd_ctx *ctx, const dl_round *round, const dl_commitment *c,
                                 gd_state_sample *out,
                                 const Gonka__Diloco__V1__MsgReportAvailability *m) {
    if (c->transcript_root.len != GD_DILOCO_HASH_LEN || c->segment_count == 0)
        return gd_fail(GD_ERR_PARSE, "stored commitment of %s is malformed", m->target);
    gd_state_sample_draw(out, round->verify_randomness.data, m->target, m->reporter,
                         c->segment_count);
    gd_state_sample_proof p = {
        .descriptor = m->state_descriptor.data,
        .descriptor_len = m->state_descriptor.len,
        .descriptor_proof = m->state_descriptor_proof.data,
        .descriptor_proof_len = m->state_descriptor_proof.len,
        .chunk_leaf = m->state_chunk_leaf.data,
        .chunk_leaf_len = m->state_chunk_leaf.len,
        .chunk_proof = m->state_chunk_proof.data,
        .chunk_proof_len = m->state_chunk_proof.len,
    };
    uint32_t chunk = 0;
    if (gd_state_sample_verify(out, c->transcript_root.data, c->segment_count, &p, &chunk) !=
        GD_OK)
        return dl_fail(ctx, GD_DILOCO_ERR_BAD_PROOF, "the state sample of %s: %s", m->target,
                       gd_error_detail());
    out->pick = chunk;
    return GD_OK;
}

gd_status dl_report_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                            gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgReportAvailability *m =
        (const Gonka__Diloco__V1__MsgReportAvailability *)msg;
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_commitment *c = NULL;
    gd_status s = dl_current(ctx, m->run, m->round, PH(VERIFY), &run, &round);
    if (s == GD_OK && strcmp(m->reporter, m->target) == 0)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "a committer's own weight already counts for its "
                                                "payload");
    uint64_t weight = 0;
    if (s == GD_OK)
        s = dl_mark_reporter(ctx, m->run, m->round, m->reporter, &weight);
    if (s == GD_OK) {
        gd_status g = dl_get_commitment(ctx, &c, m->run, m->round, m->target);
        if (g == GD_ERR_NOT_FOUND)
            s = dl_fail(ctx, GD_DILOCO_ERR_NO_COMMITMENT, "%s has no commitment in round %llu",
                        m->target, (unsigned long long)m->round);
        else
            s = g;
    }
    dl_key k;
    dl_key_init(&k, DL_REPORT);
    dl_key_u64(&k, m->run);
    dl_key_u64(&k, m->round);
    dl_key_addr(&k, m->target);
    dl_key_addr(&k, m->reporter);
    if (s == GD_OK)
        s = dl_require_absent(ctx, &k, "the reporter already reported this payload");
    /* The stored lengths first: the draw reads 32 bytes of the randomness. */
    if (s == GD_OK && (round->verify_randomness.len != GD_DILOCO_HASH_LEN ||
                       c->payload_root.len != GD_DILOCO_HASH_LEN || c->payload_leaves < 2))
        s = gd_fail(GD_ERR_PARSE, "stored round or commitment is malformed");
    /* The chunks come from the seed, fixed after the commit window closed:
     * a worker cannot know them when it decides what to serve. */
    uint32_t chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
    uint32_t n = 0;
    if (s == GD_OK) {
        n = gd_diloco_avail_chunks(chunks, round->verify_randomness.data, m->target,
                                   m->reporter, c->payload_leaves - 1, run->spec->avail_chunks);
        if (m->n_leaf_hashes != n || m->n_proofs != n)
            s = dl_fail(ctx, GD_DILOCO_ERR_BAD_PROOF, "the report proves %zu chunks, not the %u "
                                                      "the chain drew",
                        m->n_proofs, (unsigned)n);
    }
    for (uint32_t i = 0; s == GD_OK && i < n; i++) {
        gd_mmr_proof proof;
        if (m->leaf_hashes[i].len != GD_DILOCO_HASH_LEN ||
            gd_mmr_proof_decode(&proof, m->proofs[i].data, m->proofs[i].len) != GD_OK ||
            proof.leaf_index != chunks[i] + 1 || proof.leaf_count != c->payload_leaves ||
            !gd_mmr_verify(c->payload_root.data, &proof, m->leaf_hashes[i].data))
            s = dl_fail(ctx, GD_DILOCO_ERR_BAD_PROOF,
                        "proof %u does not show leaf %u of %u under %s's payload root",
                        (unsigned)i, (unsigned)chunks[i] + 1, (unsigned)c->payload_leaves,
                        m->target);
    }
    /* The state sample, when the reporter could fetch it: it tallies apart,
     * and says whether the target served its states when its validators
     * had to fetch them (dl_fix_inclusion, dl_judge). */
    gd_state_sample sample = {0};
    bool state = m->state_descriptor.len > 0;
    if (s == GD_OK && state)
        s = dl_report_state(ctx, round, c, &sample, m);
    /* The tallies: inclusion reads one number per commitment, not its
     * reports. */
    if (s == GD_OK)
        s = dl_tally_add(&c->report_weight, weight);
    if (s == GD_OK && state)
        s = dl_tally_add(&c->state_report_weight, weight);
    if (s == GD_OK) {
        c->reports++;
        c->state_reports += state;
        dl_key ck;
        dl_key_commit(&ck, m->run, m->round, m->target);
        if (s == GD_OK)
            s = dl_save(ctx, &ck, c);
    }
    if (s == GD_OK) {
        dl_report r = GONKA__DILOCO__V1__AVAILABILITY_REPORT__INIT;
        r.reporter = m->reporter;
        r.target = m->target;
        r.chunks = chunks;
        r.n_chunks = n;
        r.state = state;
        r.state_leaf = sample.leaf;
        r.state_array = sample.array;
        r.state_chunk = (uint32_t)sample.pick; /* dl_report_state leaves the chunk here */
        s = dl_save(ctx, &k, &r);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_available", m->run, m->round, "target", m->target,
                         "reporter", m->reporter);
    }
    response->len = 0;
    dl_free(c);
    dl_free(round);
    dl_free(run);
    return s;
}

/* ---- MsgRandomness ---------------------------------------------------------------------------- */

DL_VALIDATE(dl_randomness_validate, Gonka__Diloco__V1__MsgRandomness, member,
            gd_diloco_msg_randomness_check)

gd_status dl_randomness_execute(gd_app *app, gd_ctx *ctx, const ProtobufCMessage *msg,
                                gd_buf *response) {
    (void)app;
    const Gonka__Diloco__V1__MsgRandomness *m = (const Gonka__Diloco__V1__MsgRandomness *)msg;
    bool sealed = m->seal.len > 0;
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_member *mem = NULL;
    dl_secret *rec = NULL;
    gd_status s = GD_OK;
    if (sealed) {
        /* Sealed a round ahead: for the round not yet opened, by a member. */
        s = dl_get_run(ctx, &run, m->run);
        if (s == GD_ERR_NOT_FOUND)
            s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                        (unsigned long long)m->run);
        if (s == GD_OK && m->round != run->next_round)
            s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_ROUND,
                        "secrets are sealed for run %llu's next round, %llu, not %llu",
                        (unsigned long long)m->run, (unsigned long long)run->next_round,
                        (unsigned long long)m->round);
        if (s == GD_OK)
            s = dl_run_member(ctx, &mem, m->run, m->member);
    } else {
        s = dl_current(ctx, m->run, m->round, PH(REVEAL), &run, &round);
        if (s == GD_OK && m->secret.len != GD_DILOCO_SALT_LEN)
            s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "a secret is 32 bytes");
    }
    dl_key k;
    dl_key_secret(&k, m->run, m->round, m->member);
    gd_status g = GD_ERR_NOT_FOUND;
    if (s == GD_OK) {
        g = dl_load(ctx, &k, (void **)&rec, &gonka__diloco__v1__randomness_record__descriptor);
        if (g != GD_OK && g != GD_ERR_NOT_FOUND)
            s = g;
    }
    if (s == GD_OK && sealed) {
        if (g == GD_OK)
            s = dl_fail(ctx, GD_DILOCO_ERR_DUPLICATE, "%s already sealed a secret for round %llu",
                        m->member, (unsigned long long)m->round);
        dl_secret x = GONKA__DILOCO__V1__RANDOMNESS_RECORD__INIT;
        x.member = m->member;
        x.seal = m->seal;
        if (s == GD_OK)
            s = dl_save(ctx, &k, &x);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_secret_sealed", m->run, m->round, "member", m->member,
                         NULL, NULL);
    } else if (s == GD_OK) {
        uint8_t seal[GD_DILOCO_HASH_LEN];
        gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, m->member, NULL, 0, m->secret.data);
        s = dl_check_reveal(ctx, g == GD_OK, g == GD_OK ? &rec->seal : NULL,
                            g == GD_OK && rec->secret.len != 0, seal, m->member, "secret");
        uint64_t weight = 0;
        if (s == GD_OK)
            s = dl_member_weight(ctx, m->run, m->round, m->member, &weight);
        if (s == GD_OK && weight > 0)
            s = dl_mark_active(ctx, m->run, m->round, m->member, &weight);
        if (s == GD_OK)
            s = dl_set_bytes(&rec->secret, m->secret.data, GD_DILOCO_SALT_LEN);
        if (s == GD_OK)
            s = dl_save(ctx, &k, rec);
        if (s == GD_OK)
            s = dl_event(ctx, "diloco_secret_revealed", m->run, m->round, "member",
                         m->member, NULL, NULL);
    }
    response->len = 0;
    dl_free(rec);
    dl_free(mem);
    dl_free(round);
    dl_free(run);
    return s;
}
