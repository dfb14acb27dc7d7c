/* The DiLoCo module's messages: stateless checks (validate) and execution
 * against the state, one pair per message (docs/protocol.md section 7). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/diloco_internal.h"
#include "chain/module/epochs.h"
#include "chain/wire/coin.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/diloco_spec.h"
#include "chain/wire/pb_strict.h"
#include "proofs/mmr.h"


/* ---- shared pieces --------------------------------------------------------------- */

/* Decodes a message strictly (unknown fields refused, as the SDK does). */
static void *dl_unpack(gd_ctx *ctx, const ProtobufCMessageDescriptor *d, const uint8_t *b,
                       size_t len) {
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, b);
    if (m == NULL) {
        gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_TX_DECODE, "%s does not decode", d->name);
        return NULL;
    }
    if (gd_pb_reject_unknown(m, false) != GD_OK) {
        gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_TX_DECODE, "%s", gd_error_detail());
        dl_free(m);
        return NULL;
    }
    return m;
}

static gd_status dl_address(gd_ctx *ctx, const char *what, const char *addr) {
    if (addr == NULL || gd_address_check_canonical(addr) != GD_OK)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_ADDRESS, "invalid %s: %s",
                           what, addr ? gd_error_detail() : "missing");
    return GD_OK;
}

static gd_status dl_signer(gd_ctx *ctx, const char *addr, char *signer, size_t cap) {
    GD_TRY(dl_address(ctx, "signer address", addr));
    if (strlen(addr) >= cap)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_ADDRESS, "address too long");
    strcpy(signer, addr);
    return GD_OK;
}

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

/* The message's ValidateBasic, shared with the clients that build it
 * (chain/wire/diloco_msg.h), as code 2. */
static gd_status dl_basic(gd_ctx *ctx, gd_status check) {
    if (check != GD_OK)
        return dl_fail(ctx, GD_DILOCO_ERR_INVALID, "%s", gd_error_detail());
    return GD_OK;
}

/* The ValidateBasic step of a message whose stateless checks are all in
 * chain/wire/diloco_msg.h: strict decode, the signer's address, the shared
 * check (code 2). One definition per message, with its own types. */
#define DL_VALIDATE(fn, Type, descriptor, signer_field, check)                                    \
    static gd_status fn(gd_ctx *ctx, const uint8_t *b, size_t len, char *signer, size_t cap) {   \
        Type *m = dl_unpack(ctx, &descriptor, b, len);                                           \
        if (m == NULL)                                                                           \
            return GD_ERR_CHAIN;                                                                 \
        gd_status s = dl_signer(ctx, m->signer_field, signer, cap);                              \
        if (s == GD_OK)                                                                          \
            s = dl_basic(ctx, check(m));                                                         \
        dl_free(m);                                                                              \
        return s;                                                                                \
    }

/* A positive coin that fits 64 bits. */
static gd_status dl_coin_check(gd_ctx *ctx, const char *what,
                               const Cosmos__Base__V1beta1__Coin *c, uint64_t *amount) {
    uint64_t v = 0;
    if (c == NULL || c->denom == NULL || gd_denom_check(c->denom) != GD_OK ||
        dl_amount(c->amount, &v) != GD_OK || v == 0)
        return dl_fail(ctx, GD_DILOCO_ERR_INVALID, "%s must be a positive coin below 2^64", what);
    if (amount)
        *amount = v;
    return GD_OK;
}

static const char *dl_window_name(Gonka__Diloco__V1__RoundPhase w) {
    /* Indexed by RoundPhase: the two reveal windows came last. */
    static const char *const names[] = {"none",    "train",  "commit",       "reveal",
                                        "verify",  "open",   "dispute",      "attest",
                                        "done",    "void",   "dispute_open", "attest_open"};
    return (unsigned)w < sizeof names / sizeof names[0] ? names[w] : "none";
}

/* The run and its current round (code 4 / 8), which must be in window want
 * at this height (code 9). */
static gd_status dl_current(gd_ctx *ctx, uint64_t run_id, uint64_t round_id,
                            Gonka__Diloco__V1__RoundPhase want, dl_run **run, dl_round **round) {
    *run = NULL;
    *round = NULL;
    gd_status s = dl_get_run(ctx, run_id, run);
    if (s == GD_ERR_NOT_FOUND)
        return dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                       (unsigned long long)run_id);
    GD_TRY(s);
    if ((*run)->next_round == 0 || round_id != (*run)->next_round - 1)
        return dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_ROUND, "round %llu is not run %llu's current "
                                                         "round",
                       (unsigned long long)round_id, (unsigned long long)run_id);
    s = dl_get_round(ctx, run_id, round_id, round);
    if (s == GD_ERR_NOT_FOUND)
        return dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_ROUND, "round %llu does not exist",
                       (unsigned long long)round_id);
    GD_TRY(s);
    Gonka__Diloco__V1__RoundPhase at = dl_window_at(*round, ctx->height);
    if (at != want)
        return dl_fail(ctx, GD_DILOCO_ERR_WINDOW,
                       "height %lld is in round %llu's %s window, not its %s window",
                       (long long)ctx->height, (unsigned long long)round_id, dl_window_name(at),
                       dl_window_name(want));
    return GD_OK;
}

static gd_status dl_event_round(gd_ctx *ctx, const char *type, uint64_t run, uint64_t round,
                                const char *k1, const char *v1, const char *k2, const char *v2) {
    char rs[24], ro[24];
    dl_amount_str(rs, run);
    dl_amount_str(ro, round);
    if (k2 != NULL)
        return gd_events_add(ctx->events, type, "run", rs, "round", ro, k1, v1, k2, v2, NULL);
    return gd_events_add(ctx->events, type, "run", rs, "round", ro, k1, v1, NULL);
}

/* ---- MsgCreateRun ------------------------------------------------------------------ */

DL_VALIDATE(dl_create_validate, Gonka__Diloco__V1__MsgCreateRun,
            gonka__diloco__v1__msg_create_run__descriptor, authority,
            gd_diloco_msg_create_run_check)

static gd_status dl_create_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                   gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgCreateRun *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_create_run__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    dl_params *params = NULL;
    uint64_t pool = 0, id = 1;
    gd_status s = dl_get_params(ctx, &params);
    if (s == GD_OK && strcmp(params->authority, m->authority) != 0)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNAUTHORIZED, "%s is not the module authority",
                    m->authority);
    if (s == GD_OK)
        s = dl_coin_check(ctx, "pool", m->pool, &pool);
    if (s == GD_OK && strcmp(m->pool->denom, m->spec->reward_per_epoch->denom) != 0)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "pool denom %s is not the run's %s",
                    m->pool->denom, m->spec->reward_per_epoch->denom);
    dl_key k;
    dl_key_init(&k, DL_NEXT_RUN);
    const uint8_t *v;
    size_t vlen;
    if (s == GD_OK) {
        gd_status g = gd_ctx_get(ctx, k.b, k.n, &v, &vlen);
        if (g == GD_OK && vlen == 8)
            id = dl_get_be64(v);
        else if (g != GD_ERR_NOT_FOUND)
            s = g == GD_OK ? gd_fail(GD_ERR_PARSE, "stored next run id is malformed") : g;
    }
    gd_epoch latest;
    gd_epoch_params ep;
    if (s == GD_OK)
        s = gd_epochs_get(ctx, &latest, &ep);
    /* Stateful, not ValidateBasic: the epoch clock is the chain's state. */
    if (s == GD_OK && gd_diloco_spec_epoch_check(m->spec, &ep) != GD_OK)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "%s", gd_error_detail());
    if (s == GD_OK)
        s = dl_pay_in(ctx, m->authority, m->pool->denom, pool);
    if (s == GD_OK) {
        dl_run run = GONKA__DILOCO__V1__RUN__INIT;
        char pool_text[24];
        dl_amount_str(pool_text, pool);
        run.id = id;
        run.creator = m->authority;
        run.spec = m->spec;
        run.state_hash = m->spec->initial_state_hash;
        run.pool = pool_text;
        run.next_settle_epoch = latest.index;
        s = dl_put_run(ctx, &run);
        uint8_t next[8];
        dl_put_be64(next, id + 1);
        if (s == GD_OK)
            s = gd_ctx_set(ctx, k.b, k.n, next, 8);
        char ids[24];
        dl_amount_str(ids, id);
        if (s == GD_OK)
            s = gd_events_add(ctx->events, "diloco_run_created", "run", ids, "creator",
                              m->authority, "pool", pool_text, NULL);
        Gonka__Diloco__V1__MsgCreateRunResponse r =
            GONKA__DILOCO__V1__MSG_CREATE_RUN_RESPONSE__INIT;
        r.run = id;
        if (s == GD_OK)
            s = dl_pack(response, &r);
    }
    dl_free(params);
    dl_free(m);
    return s;
}

/* ---- MsgJoinRun ------------------------------------------------------------------------ */

DL_VALIDATE(dl_join_validate, Gonka__Diloco__V1__MsgJoinRun,
            gonka__diloco__v1__msg_join_run__descriptor, participant,
            gd_diloco_msg_join_run_check)

static gd_status dl_join_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                 gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgJoinRun *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_join_run__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    dl_run *run = NULL;
    dl_member *old = NULL;
    uint64_t amount = 0, min = 0;
    gd_status s = dl_get_run(ctx, m->run, &run);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                    (unsigned long long)m->run);
    if (s == GD_OK) {
        gd_status g = dl_get_member(ctx, m->run, m->participant, &old);
        if (g == GD_OK)
            s = dl_fail(ctx, GD_DILOCO_ERR_ALREADY_MEMBER, "%s is already a member of run %llu",
                        m->participant, (unsigned long long)m->run);
        else if (g != GD_ERR_NOT_FOUND)
            s = g;
    }
    /* The run fixes the classes it accepts: a class no one else declares
     * would get no checks (docs/verification.md). */
    if (s == GD_OK && !dl_has_str(run->spec->hw_classes, run->spec->n_hw_classes, m->hw_class))
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "hardware class %s is not one of run %llu's",
                    m->hw_class, (unsigned long long)m->run);
    size_t count = 0;
    dl_key mk;
    dl_key_init(&mk, DL_MEMBER);
    dl_key_u64(&mk, m->run);
    if (s == GD_OK)
        s = dl_count_prefix(ctx->kv, &mk, &count);
    if (s == GD_OK && count >= run->spec->max_members)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "run %llu has its %u members",
                    (unsigned long long)m->run, (unsigned)run->spec->max_members);
    if (s == GD_OK)
        s = dl_coin_check(ctx, "collateral", m->collateral, &amount);
    if (s == GD_OK && (dl_amount(run->spec->min_collateral->amount, &min) != GD_OK ||
                       strcmp(m->collateral->denom, dl_denom(run)) != 0 || amount < min))
        s = dl_fail(ctx, GD_DILOCO_ERR_COLLATERAL, "collateral must be at least %s%s",
                    run->spec->min_collateral->amount, dl_denom(run));
    /* Ranks are handed out once, in join order, and never reused: a later
     * member cannot take over an earlier one's data stream. */
    if (s == GD_OK && run->next_rank == UINT32_MAX)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "run %llu has no ranks left",
                    (unsigned long long)m->run);
    if (s == GD_OK)
        s = dl_pay_in(ctx, m->participant, m->collateral->denom, amount);
    if (s == GD_OK) {
        dl_member mem = GONKA__DILOCO__V1__MEMBER__INIT;
        char amount_text[24], rank_text[24];
        dl_amount_str(amount_text, amount);
        dl_amount_str(rank_text, run->next_rank);
        mem.run = m->run;
        mem.address = m->participant;
        mem.artifact_url = m->artifact_url;
        mem.hw_class = m->hw_class;
        mem.collateral = amount_text;
        mem.joined_height = ctx->height;
        mem.rank = run->next_rank++;
        s = dl_put_member(ctx, &mem);
        if (s == GD_OK)
            s = dl_put_run(ctx, run);
        char rs[24];
        dl_amount_str(rs, m->run);
        if (s == GD_OK)
            s = gd_events_add(ctx->events, "diloco_joined", "run", rs, "participant",
                              m->participant, "hw_class", m->hw_class, "collateral",
                              amount_text, "rank", rank_text, NULL);
        Gonka__Diloco__V1__MsgJoinRunResponse r = GONKA__DILOCO__V1__MSG_JOIN_RUN_RESPONSE__INIT;
        r.rank = mem.rank;
        if (s == GD_OK)
            s = dl_pack(response, &r);
    }
    dl_free(old);
    dl_free(run);
    dl_free(m);
    return s;
}

/* ---- MsgCommitRound ------------------------------------------------------------------- */

DL_VALIDATE(dl_commit_validate, Gonka__Diloco__V1__MsgCommitRound,
            gonka__diloco__v1__msg_commit_round__descriptor, participant,
            gd_diloco_msg_commit_round_check)

static gd_status dl_commit_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                   gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgCommitRound *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_commit_round__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    dl_run *run = NULL;
    dl_round *round = NULL;
    uint64_t tokens = 0;
    gd_status s = dl_current(ctx, m->run, m->round, GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_COMMIT,
                             &run, &round);
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
            s = dl_event_round(ctx, "diloco_committed", m->run, m->round, "participant",
                               m->participant, "tokens", ts);
        Gonka__Diloco__V1__MsgCommitRoundResponse r =
            GONKA__DILOCO__V1__MSG_COMMIT_ROUND_RESPONSE__INIT;
        r.tokens = tokens;
        if (s == GD_OK)
            s = dl_pack(response, &r);
    }
    dl_free(round);
    dl_free(run);
    dl_free(m);
    return s;
}

/* ---- MsgReportAvailability --------------------------------------------------------- */

static gd_status dl_report_validate(gd_ctx *ctx, const uint8_t *b, size_t len, char *signer,
                                    size_t cap) {
    Gonka__Diloco__V1__MsgReportAvailability *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_report_availability__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
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
    dl_free(m);
    return s;
}

/* Adds weight to a tally kept as a decimal string ("" reads as 0). */
static gd_status dl_tally_add(char **tally, uint64_t weight) {
    dl_u128 w = 0;
    GD_TRY(dl_tally_read(*tally, &w));
    char text[40];
    dl_amount128_str(text, w + weight);
    return dl_set_str(tally, text);
}

/* Checks a report's state sample against the commitment (code 12 when it
 * does not prove the drawn chunk); *out gets the draw, its pick replaced
 * by the chunk. */
static gd_status dl_report_state(gd_ctx *ctx, const dl_round *round, const dl_commitment *c,
                                 const Gonka__Diloco__V1__MsgReportAvailability *m,
                                 gd_state_sample *out) {
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

static gd_status dl_report_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                   gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgReportAvailability *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_report_availability__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_commitment *c = NULL;
    gd_status s = dl_current(ctx, m->run, m->round, GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_VERIFY,
                             &run, &round);
    if (s == GD_OK && strcmp(m->reporter, m->target) == 0)
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "a committer's own weight already counts for its "
                                                "payload");
    uint64_t weight = 0;
    if (s == GD_OK)
        s = dl_mark_reporter(ctx, m->run, m->round, m->reporter, &weight);
    if (s == GD_OK) {
        gd_status g = dl_get_commitment(ctx, m->run, m->round, m->target, &c);
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
        n = gd_diloco_avail_chunks(round->verify_randomness.data, m->target, m->reporter,
                                   c->payload_leaves - 1, run->spec->avail_chunks, chunks);
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
        s = dl_report_state(ctx, round, c, m, &sample);
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
            s = dl_event_round(ctx, "diloco_available", m->run, m->round, "target", m->target,
                               "reporter", m->reporter);
    }
    response->len = 0;
    dl_free(c);
    dl_free(round);
    dl_free(run);
    dl_free(m);
    return s;
}

/* ---- MsgSubmitVerdict and MsgDispute ---------------------------------------------------- */

DL_VALIDATE(dl_verdict_validate, Gonka__Diloco__V1__MsgSubmitVerdict,
            gonka__diloco__v1__msg_submit_verdict__descriptor, validator,
            gd_diloco_msg_submit_verdict_check)

/* The assignment of (target, check), and whether addr is among its
 * validators (recheck = false; or the target itself, for its own digest)
 * or re-checkers (true); code 13 otherwise. */
static gd_status dl_assigned(gd_ctx *ctx, uint64_t run, uint64_t round, const char *target,
                             uint32_t check, const char *addr, bool recheck,
                             dl_assignment **out) {
    dl_key k;
    dl_key_assignment(&k, run, round, target, check);
    gd_status s = dl_load(ctx, &k, &gonka__diloco__v1__assignment__descriptor, (void **)out);
    bool in = s == GD_OK && (recheck ? dl_has_str((*out)->recheckers, (*out)->n_recheckers, addr)
                                     : dl_has_str((*out)->validators, (*out)->n_validators, addr) ||
                                           strcmp(target, addr) == 0);
    if (s == GD_OK && !in)
        s = GD_ERR_NOT_FOUND;
    if (s == GD_ERR_NOT_FOUND)
        return dl_fail(ctx, GD_DILOCO_ERR_NOT_ASSIGNED, "%s is not %s check %u of %s", addr,
                       recheck ? "re-checking" : "assigned", (unsigned)check, target);
    return s;
}

static const char *dl_verdict_name(int v) {
    return v == 1 ? "pass" : v == 2 ? "fail" : v == 3 ? "unavailable" : "sealed";
}

#define PHASE(x) GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_##x

/* A sealed answer's record, stored at its seal and completed at its reveal:
 * verdicts and re-checks (VerdictRecord), attestations, secrets. The
 * reveal must match the seal (code 14), once (code 10). */
static gd_status dl_check_reveal(gd_ctx *ctx, bool found, const ProtobufCBinaryData *stored_seal,
                                 bool already, const uint8_t computed[GD_DILOCO_HASH_LEN],
                                 const char *who, const char *what) {
    if (!found || stored_seal->len != GD_DILOCO_HASH_LEN)
        return dl_fail(ctx, GD_DILOCO_ERR_SEAL, "%s sealed no %s", who, what);
    if (already)
        return dl_fail(ctx, GD_DILOCO_ERR_DUPLICATE, "%s already revealed its %s", who, what);
    if (memcmp(computed, stored_seal->data, GD_DILOCO_HASH_LEN) != 0)
        return dl_fail(ctx, GD_DILOCO_ERR_SEAL, "the revealed %s does not match %s's seal", what,
                       who);
    return GD_OK;
}

/* A verdict or re-check, sealed or revealed (MsgSubmitVerdict and
 * MsgDispute differ only in their windows, whom they are for, the seal's
 * kind, and the bond an assigned accusation pays). */
typedef struct dl_answer {
    const char *validator;
    uint64_t run, round;
    const char *target;
    uint32_t check;
    const ProtobufCBinaryData *seal, *digest, *salt;
    int verdict;
    bool recheck;
} dl_answer;

static gd_status dl_answer_execute(gd_ctx *ctx, const dl_answer *m) {
    bool sealed = m->seal->len > 0;
    /* The target's own digest: sealed and revealed as a verdict is, with a
     * seal of its own kind and no bond (docs/protocol.md, "The target's
     * own digest"). */
    bool own = !m->recheck && strcmp(m->validator, m->target) == 0;
    Gonka__Diloco__V1__RoundPhase want =
        m->recheck ? (sealed ? PHASE(DISPUTE) : PHASE(DISPUTE_OPEN))
                   : (sealed ? PHASE(VERIFY) : PHASE(OPEN));
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_assignment *a = NULL;
    dl_verdict *rec = NULL;
    gd_status s = dl_current(ctx, m->run, m->round, want, &run, &round);
    /* ValidateBasic ran before; the sizes the seal reads are checked again
     * where they are read. */
    if (s == GD_OK && !sealed &&
        (m->digest->len != GD_DILOCO_HASH_LEN || m->salt->len != GD_DILOCO_SALT_LEN))
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "a revealed %s needs a 32-byte digest and salt",
                    m->recheck ? "re-check" : "verdict");
    if (s == GD_OK)
        s = dl_assigned(ctx, m->run, m->round, m->target, m->check, m->validator, m->recheck, &a);
    dl_key k;
    dl_key_verdict(&k, m->run, m->round, m->target, m->check, m->validator);
    gd_status g = GD_ERR_NOT_FOUND;
    if (s == GD_OK) {
        g = dl_load(ctx, &k, &gonka__diloco__v1__verdict_record__descriptor, (void **)&rec);
        if (g != GD_OK && g != GD_ERR_NOT_FOUND)
            s = g;
    }
    const char *what = m->recheck ? "re-check" : "verdict";
    if (s == GD_OK && sealed) {
        uint64_t weight = 0;
        if (g == GD_OK)
            s = dl_fail(ctx, GD_DILOCO_ERR_DUPLICATE, "%s already sealed check %u of %s",
                        m->validator, (unsigned)m->check, m->target);
        if (s == GD_OK)
            s = dl_mark_active(ctx, m->run, m->round, m->validator, &weight);
        dl_verdict v = GONKA__DILOCO__V1__VERDICT_RECORD__INIT;
        v.validator = (char *)m->validator;
        v.target = (char *)m->target;
        v.check = m->check;
        v.seal = *m->seal;
        v.recheck = m->recheck;
        if (s == GD_OK)
            s = dl_save(ctx, &k, &v);
        if (s == GD_OK)
            s = dl_event_round(ctx, m->recheck ? "diloco_recheck_sealed" : "diloco_verdict_sealed",
                               m->run, m->round, "target", m->target, "validator", m->validator);
    } else if (s == GD_OK) {
        uint8_t seal[GD_DILOCO_HASH_LEN];
        gd_diloco_verdict_seal(seal, m->recheck ? GD_SEAL_RECHECK : own ? GD_SEAL_OWN
                                                                         : GD_SEAL_VERDICT,
                               m->validator, (gd_diloco_verdict)m->verdict, m->digest->data,
                               m->salt->data);
        s = dl_check_reveal(ctx, g == GD_OK, g == GD_OK ? &rec->seal : NULL,
                            g == GD_OK && rec->verdict != 0, seal, m->validator, what);
        /* An assigned accusation (FAIL or UNAVAILABLE) is bonded: it is paid
         * only if the class upholds it, and loses the bond otherwise. */
        bool accuses = m->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL ||
                       m->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE;
        if (s == GD_OK && accuses && !m->recheck && !own) {
            uint64_t bond = 0;
            s = dl_amount(run->spec->fail_bond->amount, &bond);
            if (s == GD_OK)
                s = dl_pay_in(ctx, m->validator, dl_denom(run), bond);
            rec->bonded = true;
        }
        if (s == GD_OK) {
            rec->verdict = m->verdict;
            s = dl_set_bytes(&rec->digest, m->digest->data, m->digest->len);
        }
        if (s == GD_OK)
            s = dl_save(ctx, &k, rec);
        if (s == GD_OK)
            s = dl_event_round(ctx,
                               m->recheck ? "diloco_recheck_revealed" : "diloco_verdict_revealed",
                               m->run, m->round, "target", m->target, "verdict",
                               dl_verdict_name(m->verdict));
    }
    dl_free(rec);
    dl_free(a);
    dl_free(round);
    dl_free(run);
    return s;
}

static gd_status dl_verdict_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                    gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgSubmitVerdict *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_submit_verdict__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    dl_answer x = {m->validator, m->run, m->round, m->target, m->check,
                   &m->seal, &m->digest, &m->salt, (int)m->verdict, false};
    gd_status s = dl_answer_execute(ctx, &x);
    response->len = 0;
    dl_free(m);
    return s;
}

DL_VALIDATE(dl_dispute_validate, Gonka__Diloco__V1__MsgDispute,
            gonka__diloco__v1__msg_dispute__descriptor, validator,
            gd_diloco_msg_dispute_check)

static gd_status dl_dispute_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                    gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgDispute *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_dispute__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    dl_answer x = {m->validator, m->run, m->round, m->target, m->check,
                   &m->seal, &m->digest, &m->salt, (int)m->verdict, true};
    gd_status s = dl_answer_execute(ctx, &x);
    response->len = 0;
    dl_free(m);
    return s;
}

/* ---- MsgAttestRound ------------------------------------------------------------------------ */

DL_VALIDATE(dl_attest_validate, Gonka__Diloco__V1__MsgAttestRound,
            gonka__diloco__v1__msg_attest_round__descriptor, attester,
            gd_diloco_msg_attest_round_check)

static gd_status dl_attest_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                   gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgAttestRound *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_attest_round__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    bool sealed = m->seal.len > 0;
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_attestation *rec = NULL;
    gd_status s = dl_current(ctx, m->run, m->round, sealed ? PHASE(ATTEST) : PHASE(ATTEST_OPEN),
                             &run, &round);
    if (s == GD_OK && !sealed &&
        (m->next_state_hash.len != GD_DILOCO_HASH_LEN || m->salt.len != GD_DILOCO_SALT_LEN))
        s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "a revealed attestation needs a 32-byte hash and "
                                                "salt");
    dl_key k;
    dl_key_init(&k, DL_ATTEST);
    dl_key_u64(&k, m->run);
    dl_key_u64(&k, m->round);
    dl_key_addr(&k, m->attester);
    gd_status g = GD_ERR_NOT_FOUND;
    if (s == GD_OK) {
        g = dl_load(ctx, &k, &gonka__diloco__v1__attestation__descriptor, (void **)&rec);
        if (g != GD_OK && g != GD_ERR_NOT_FOUND)
            s = g;
    }
    if (s == GD_OK && sealed) {
        uint64_t weight = 0;
        s = dl_mark_active(ctx, m->run, m->round, m->attester, &weight);
        if (s == GD_OK && g == GD_OK)
            s = dl_fail(ctx, GD_DILOCO_ERR_DUPLICATE, "the attester already attested this round");
        dl_attestation a = GONKA__DILOCO__V1__ATTESTATION__INIT;
        a.attester = m->attester;
        a.seal = m->seal;
        if (s == GD_OK)
            s = dl_save(ctx, &k, &a);
        if (s == GD_OK)
            s = dl_event_round(ctx, "diloco_attestation_sealed", m->run, m->round, "attester",
                               m->attester, NULL, NULL);
    } else if (s == GD_OK) {
        uint8_t seal[GD_DILOCO_HASH_LEN];
        gd_diloco_seal(seal, GD_SEAL_ATTEST, m->attester, m->next_state_hash.data,
                       GD_DILOCO_HASH_LEN, m->salt.data);
        s = dl_check_reveal(ctx, g == GD_OK, g == GD_OK ? &rec->seal : NULL,
                            g == GD_OK && rec->next_state_hash.len != 0, seal, m->attester,
                            "attestation");
        if (s == GD_OK)
            s = dl_set_bytes(&rec->next_state_hash, m->next_state_hash.data, GD_DILOCO_HASH_LEN);
        if (s == GD_OK)
            s = dl_save(ctx, &k, rec);
        char hex[2 * GD_DILOCO_HASH_LEN + 1];
        gd_hex_encode(hex, m->next_state_hash.data, GD_DILOCO_HASH_LEN, false);
        if (s == GD_OK)
            s = dl_event_round(ctx, "diloco_attested", m->run, m->round, "attester",
                               m->attester, "next_state_hash", hex);
    }
    response->len = 0;
    dl_free(rec);
    dl_free(round);
    dl_free(run);
    dl_free(m);
    return s;
}

/* ---- MsgRandomness ---------------------------------------------------------------------------- */

DL_VALIDATE(dl_randomness_validate, Gonka__Diloco__V1__MsgRandomness,
            gonka__diloco__v1__msg_randomness__descriptor, member,
            gd_diloco_msg_randomness_check)

static gd_status dl_randomness_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                       gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgRandomness *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_randomness__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    bool sealed = m->seal.len > 0;
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_member *mem = NULL;
    dl_secret *rec = NULL;
    gd_status s = GD_OK;
    if (sealed) {
        /* Sealed a round ahead: for the round not yet opened, by a member. */
        s = dl_get_run(ctx, m->run, &run);
        if (s == GD_ERR_NOT_FOUND)
            s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                        (unsigned long long)m->run);
        if (s == GD_OK && m->round != run->next_round)
            s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_ROUND,
                        "secrets are sealed for run %llu's next round, %llu, not %llu",
                        (unsigned long long)m->run, (unsigned long long)run->next_round,
                        (unsigned long long)m->round);
        if (s == GD_OK)
            s = dl_run_member(ctx, m->run, m->member, &mem);
    } else {
        s = dl_current(ctx, m->run, m->round, PHASE(REVEAL), &run, &round);
        if (s == GD_OK && m->secret.len != GD_DILOCO_SALT_LEN)
            s = dl_fail(ctx, GD_DILOCO_ERR_INVALID, "a secret is 32 bytes");
    }
    dl_key k;
    dl_key_secret(&k, m->run, m->round, m->member);
    gd_status g = GD_ERR_NOT_FOUND;
    if (s == GD_OK) {
        g = dl_load(ctx, &k, &gonka__diloco__v1__randomness_record__descriptor, (void **)&rec);
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
            s = dl_event_round(ctx, "diloco_secret_sealed", m->run, m->round, "member", m->member,
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
            s = dl_event_round(ctx, "diloco_secret_revealed", m->run, m->round, "member",
                               m->member, NULL, NULL);
    }
    response->len = 0;
    dl_free(rec);
    dl_free(mem);
    dl_free(round);
    dl_free(run);
    dl_free(m);
    return s;
}

/* ---- MsgLeaveRun -------------------------------------------------------------------------------- */

DL_VALIDATE(dl_leave_validate, Gonka__Diloco__V1__MsgLeaveRun,
            gonka__diloco__v1__msg_leave_run__descriptor, participant,
            gd_diloco_msg_leave_run_check)

static gd_status dl_leave_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                  gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgLeaveRun *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_leave_run__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    dl_run *run = NULL;
    dl_member *mem = NULL;
    dl_round *round = NULL;
    gd_status s = dl_get_run(ctx, m->run, &run);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                    (unsigned long long)m->run);
    if (s == GD_OK)
        s = dl_run_member(ctx, m->run, m->participant, &mem);
    /* Its collateral stays bonded while a live round holds it (it can
     * still be slashed for that round); after that it is paid back. */
    uint64_t held = 0;
    if (s == GD_OK && run->next_round > 0) {
        gd_status g = dl_get_round(ctx, m->run, run->next_round - 1, &round);
        if (g == GD_OK && !dl_round_over(round))
            g = dl_member_weight(ctx, m->run, round->index, m->participant, &held);
        s = g == GD_ERR_NOT_FOUND ? GD_OK : g;
    }
    if (s == GD_OK && held > 0) {
        mem->leaving = true;
        s = dl_put_member(ctx, mem);
        char rs[24];
        dl_amount_str(rs, m->run);
        if (s == GD_OK)
            s = gd_events_add(ctx->events, "diloco_leaving", "run", rs, "participant",
                              m->participant, NULL);
    } else if (s == GD_OK) {
        s = dl_release(ctx, run, mem, "left");
    }
    response->len = 0;
    dl_free(round);
    dl_free(mem);
    dl_free(run);
    dl_free(m);
    return s;
}

/* ---- MsgClaimRewards --------------------------------------------------------------------- */

DL_VALIDATE(dl_claim_validate, Gonka__Diloco__V1__MsgClaimRewards,
            gonka__diloco__v1__msg_claim_rewards__descriptor, claimer,
            gd_diloco_msg_claim_rewards_check)

static gd_status dl_claim_execute(gd_app *app, gd_ctx *ctx, const uint8_t *b, size_t len,
                                  gd_buf *response) {
    (void)app;
    Gonka__Diloco__V1__MsgClaimRewards *m =
        dl_unpack(ctx, &gonka__diloco__v1__msg_claim_rewards__descriptor, b, len);
    if (m == NULL)
        return GD_ERR_CHAIN;
    gd_epoch latest;
    gd_epoch_params ep;
    dl_run *run = NULL;
    dl_settle *st = NULL;
    uint64_t amount = 0;
    gd_status s = dl_get_run(ctx, m->run, &run);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                    (unsigned long long)m->run);
    if (s == GD_OK)
        s = gd_epochs_get(ctx, &latest, &ep);
    if (s == GD_OK && (latest.index == 0 || m->epoch != latest.index - 1))
        s = dl_fail(ctx, GD_DILOCO_ERR_EPOCH, "only the previous epoch can be claimed (epoch "
                                              "%llu is current)",
                    (unsigned long long)latest.index);
    if (s == GD_OK) {
        gd_epoch_stages st_h;
        gd_epoch_stages_compute(&st_h, &latest, &ep);
        if (ctx->height < st_h.claim_money)
            s = dl_fail(ctx, GD_DILOCO_ERR_CLAIM_STAGE,
                        "claims open at the claim-money stage, height %lld",
                        (long long)st_h.claim_money);
    }
    dl_key k;
    dl_key_settle(&k, m->run, m->epoch, m->claimer);
    if (s == GD_OK) {
        gd_status g = dl_load(ctx, &k, &gonka__diloco__v1__settle_amount__descriptor,
                              (void **)&st);
        if (g == GD_ERR_NOT_FOUND)
            s = dl_fail(ctx, GD_DILOCO_ERR_NOTHING, "nothing settled to %s for epoch %llu",
                        m->claimer, (unsigned long long)m->epoch);
        else if (g == GD_OK && st->forfeited)
            s = dl_fail(ctx, GD_DILOCO_ERR_NOTHING,
                        "%s forfeited epoch %llu: a cheat slash in one of its rounds",
                        m->claimer, (unsigned long long)m->epoch);
        else if (g == GD_OK && st->claimed)
            s = dl_fail(ctx, GD_DILOCO_ERR_CLAIMED, "%s already claimed epoch %llu", m->claimer,
                        (unsigned long long)m->epoch);
        else
            s = g;
    }
    if (s == GD_OK)
        s = dl_amount(st->amount, &amount);
    if (s == GD_OK)
        s = dl_pay_out(ctx, m->claimer, dl_denom(run), amount);
    if (s == GD_OK) {
        st->claimed = true;
        s = dl_save(ctx, &k, st);
    }
    if (s == GD_OK) {
        char rs[24], es[24];
        dl_amount_str(rs, m->run);
        dl_amount_str(es, m->epoch);
        s = gd_events_add(ctx->events, "diloco_claimed", "run", rs, "epoch", es, "claimer",
                          m->claimer, "amount", st->amount, NULL);
    }
    if (s == GD_OK) {
        Cosmos__Base__V1beta1__Coin coin = COSMOS__BASE__V1BETA1__COIN__INIT;
        coin.denom = (char *)dl_denom(run);
        coin.amount = st->amount;
        Gonka__Diloco__V1__MsgClaimRewardsResponse r =
            GONKA__DILOCO__V1__MSG_CLAIM_REWARDS_RESPONSE__INIT;
        r.amount = &coin;
        s = dl_pack(response, &r);
    }
    dl_free(st);
    dl_free(run);
    dl_free(m);
    return s;
}

const gd_msg_route dl_msg_routes[] = {
    {GD_DILOCO_MSG_CREATE_RUN, dl_create_validate, dl_create_execute},
    {GD_DILOCO_MSG_JOIN_RUN, dl_join_validate, dl_join_execute},
    {GD_DILOCO_MSG_COMMIT_ROUND, dl_commit_validate, dl_commit_execute},
    {GD_DILOCO_MSG_REPORT_AVAILABILITY, dl_report_validate, dl_report_execute},
    {GD_DILOCO_MSG_SUBMIT_VERDICT, dl_verdict_validate, dl_verdict_execute},
    {GD_DILOCO_MSG_DISPUTE, dl_dispute_validate, dl_dispute_execute},
    {GD_DILOCO_MSG_ATTEST_ROUND, dl_attest_validate, dl_attest_execute},
    {GD_DILOCO_MSG_CLAIM_REWARDS, dl_claim_validate, dl_claim_execute},
    {GD_DILOCO_MSG_RANDOMNESS, dl_randomness_validate, dl_randomness_execute},
    {GD_DILOCO_MSG_LEAVE_RUN, dl_leave_validate, dl_leave_execute},
};
const size_t dl_n_msg_routes = sizeof dl_msg_routes / sizeof dl_msg_routes[0];
