/* Attacks on the engine's verification, as a rational cheater would play
 * them. Each test first shows what the cheater does and what it gains (and
 * that the checks that existed before still pass), then that a check of
 * trainer/verify.h refuses it. docs/verification.md explains each rule.
 *
 * The validator here checks exhaustively (every chunk and every segment),
 * so a refusal is deterministic; on a chain each check samples one segment
 * and one chunk, and docs/verification.md gives the probabilities. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testkit.h"
#include "trainer/diloco.h"
#include "trainer/verify.h"

#define H 4
#define K 2
#define S (H / K)

/* --- the world: a run, its G, and a validator --------------------------------------------- */

typedef struct world {
    gd_diloco_config c;
    gd_model_config model;
    gd_data *data;
    gd_trainer *t;
    gd_pool *pool;
    size_t n;
    const uint8_t *layout;
    gd_global_state g; /* G_r: the state the chain attested last */
    gd_global_desc g_desc;
    uint8_t g_hash[32];
} world;

static void world_attest(world *x) {
    CHECK_OK(gd_global_state_describe(x->pool, &x->g_desc, x->layout, x->c.chunk_elems, &x->g));
    gd_global_desc_hash(&x->g_desc, x->g_hash);
}

static void world_open(world *x) {
    memset(x, 0, sizeof *x);
    gd_diloco_config_default(&x->c);
    x->c.run = 7;
    memset(x->c.spec_digest, 0x5a, 32);
    x->c.workers = 2;
    x->c.inner_steps = H;
    x->c.segment_steps = K;
    x->c.chunk_elems = 4096; /* several chunks */
    x->c.inner.batch = 2;
    x->c.inner.micro_batch = 2;
    x->c.inner.seq_len = 16;
    x->c.inner.optim.lr = 3e-3;
    x->c.inner.optim.schedule_steps = 40;
    CHECK_OK(gd_model_config_preset(&x->model, "tiny"));
    x->model.vocab_size = 32;
    CHECK_OK(gd_diloco_config_validate(&x->c, &x->model));
    CHECK_OK(gd_data_open(&x->data, "synthetic:markov:5"));
    CHECK_OK(gd_trainer_new(&x->t, &x->model, &x->c.inner, 2));
    x->pool = gd_trainer_pool(x->t);
    x->n = gd_trainer_layout(x->t)->total;
    x->layout = gd_trainer_layout(x->t)->digest;
    CHECK_OK(gd_global_state_init(&x->g, x->n));
    gd_trainer_get_state(x->t, x->g.params, NULL, NULL, NULL);
    world_attest(x);
}

static void world_close(world *x) {
    gd_global_state_free(&x->g);
    gd_trainer_free(x->t);
    gd_data_close(x->data);
}

/* What a worker commits and serves for a round. */
typedef struct served {
    gd_worker_round res;
    gd_worker_state segs[S]; /* segment-start states */
    gd_worker_state post;    /* after encoding: θ_H, moments, e_out */
} served;

static void served_free(served *v) {
    gd_worker_round_free(&v->res);
    for (int i = 0; i < S; i++)
        gd_worker_state_free(&v->segs[i]);
    gd_worker_state_free(&v->post);
}

/* An honest round of w from G_r (w is updated). */
static void honest_round(world *x, gd_worker_state *w, served *out, uint64_t round) {
    memset(out, 0, sizeof *out);
    CHECK_OK(gd_diloco_worker_round(x->t, &x->c, x->data, &out->res, round, x->g.params, x->n, w,
                                    out->segs));
    CHECK_OK(gd_worker_state_copy(&out->post, w));
}

/* The aggregate of one contribution: the chain's G_{r+1}. */
static void world_aggregate(world *x, const served *v) {
    float *decoded = malloc(x->n * sizeof(float));
    CHECK_OK(gd_payload_decode(&v->res.payload, decoded, x->pool));
    gd_contribution one = {.address = v->post.address, .n = x->n, .layout_digest = x->layout,
                           .delta = decoded, .tokens = v->res.tokens};
    CHECK_OK(gd_diloco_aggregate(gd_trainer_backend(x->t), &x->c, x->layout, &one, 1, &x->g, NULL));
    world_attest(x);
    free(decoded);
}

/* A commitment built from chosen states, as a cheater builds one: the
 * training states (S + 1) described under `round`, `address` and `rank`,
 * and a payload coding Δ = start - θ_H with error feedback from the last
 * training state's residual. */
static void forge_tampered(world *x, const gd_worker_state *train, served *out,
                           uint64_t round, const float *start, const char *address,
                           uint32_t rank, const float *post_poison) {
    memset(out, 0, sizeof *out);
    gd_worker_round *r = &out->res;
    gd_mmr_init(&r->transcript);
    r->n_leaves = gd_transcript_leaves(S);
    r->descs = calloc(r->n_leaves, sizeof *r->descs);
    r->leaves = calloc(r->n_leaves, 32);
    float *delta = malloc(x->n * sizeof(float));
    CHECK(delta != NULL);
    gd_state_tag tag;
    gd_diloco_state_tag(&x->c, gd_trainer_layout(x->t), &tag);
    for (uint32_t i = 0; i <= S; i++) {
        gd_worker_state st;
        CHECK_OK(gd_worker_state_copy(&st, &train[i]));
        snprintf(st.address, sizeof st.address, "%s", address);
        st.rank = rank;
        CHECK_OK(gd_worker_state_describe(x->pool, &tag, &r->descs[i], round, GD_STAGE_TRAIN, &st));
        if (i < S)
            CHECK_OK(gd_worker_state_copy(&out->segs[i], &st));
        else
            CHECK_OK(gd_worker_state_copy(&out->post, &st));
        gd_worker_state_free(&st);
    }
    for (size_t i = 0; i < x->n; i++)
        delta[i] = start[i] - out->post.params[i];
    gd_payload_header h = {.run = x->c.run, .round = round, .param_count = x->n,
                           .codec = x->c.codec, .chunk_elems = x->c.chunk_elems};
    snprintf(h.participant, sizeof h.participant, "%s", address);
    memcpy(h.layout_digest, tag.layout_digest, 32);
    memcpy(h.spec_digest, tag.spec_digest, 32);
    CHECK_OK(gd_payload_encode(&r->payload, &h, delta, out->post.residual, x->pool));
    free(delta);
    CHECK_OK(gd_payload_root(&r->payload, r->payload_root, &r->payload_leaves));
    for (size_t i = 0; post_poison && i < x->n; i++)
        out->post.residual[i] += post_poison[i];
    CHECK_OK(gd_worker_state_describe(x->pool, &tag, &r->descs[S + 1], round, GD_STAGE_ENCODED,
                                      &out->post));
    for (uint32_t i = 0; i < r->n_leaves; i++) {
        uint8_t leaf[32];
        gd_worker_desc_hash(&r->descs[i], r->leaves[i]);
        gd_mmr_hash_leaf(leaf, i, r->leaves[i], 32);
        CHECK_OK(gd_mmr_append(&r->transcript, leaf));
    }
    CHECK_OK(gd_mmr_root(&r->transcript, r->transcript_root));
    r->steps = H;
    r->tokens = (uint64_t)H * x->c.inner.batch * x->c.inner.seq_len;
}

static void forge(world *x, const gd_worker_state *train, served *out, uint64_t round,
                  const float *start, const char *address, uint32_t rank) {
    forge_tampered(x, train, out, round, start, address, rank, NULL);
}

/* The S + 1 training states of an honest served round: its segment starts
 * and its trained state (the post state with the round's starting residual). */
static void training_states(const served *v, gd_worker_state train[S + 1]) {
    for (int i = 0; i < S; i++)
        CHECK_OK(gd_worker_state_copy(&train[i], &v->segs[i]));
    CHECK_OK(gd_worker_state_copy(&train[S], &v->post));
    memcpy(train[S].residual, v->segs[0].residual, v->post.n * sizeof(float));
}

static void states_free(gd_worker_state *s, int n) {
    for (int i = 0; i < n; i++)
        gd_worker_state_free(&s[i]);
}

/* What the validator found: each kind of check over everything it covers. */
typedef struct verdicts {
    bool links, payload, segments;
    uint32_t chunks_failed, segments_failed;
    char why[3][224]; /* the first failure of each kind */
} verdicts;

static gd_prev_link link_of(const served *v, uint64_t round) {
    gd_prev_link p = {.round = round, .transcript_root = v->res.transcript_root,
                      .segments = S};
    CHECK_OK(gd_worker_round_leaf(&v->res, &p.post, S + 1));
    return p;
}

/* Every check of docs/verification.md, exhaustively, on what `v` serves
 * for `address`, whose chain rank is `rank`, in round `round` from the
 * world's G (which the chain attested as G_round). */
static verdicts validate(world *x, const char *address, uint32_t rank, uint64_t round,
                         const served *v, const gd_prev_link *prev) {
    verdicts out = {.links = true, .payload = true, .segments = true};
    gd_commitment_view cv = {.round = round, .address = address, .rank = rank, .segments = S,
                             .transcript_root = v->res.transcript_root,
                             .payload_root = v->res.payload_root,
                             .payload_leaves = v->res.payload_leaves,
                             .start_state_hash = x->g_hash};
    gd_leaf_evidence start, final, post;
    CHECK_OK(gd_worker_round_leaf(&v->res, &start, 0));
    CHECK_OK(gd_worker_round_leaf(&v->res, &final, S));
    CHECK_OK(gd_worker_round_leaf(&v->res, &post, S + 1));
    gd_check_result r;
    CHECK_OK(gd_diloco_check_links(x->pool, &x->c, x->layout, x->n, &cv, &x->g_desc, prev, NULL,
                                   &start, &final, &post, &r));
    out.links = r.pass;
    snprintf(out.why[0], sizeof out.why[0], "%s", r.why);
    uint32_t chunks = gd_values_chunks(x->n, x->c.chunk_elems);
    for (uint32_t c = 0; c < chunks; c++) {
        gd_chunk_evidence ev;
        CHECK_OK(gd_worker_round_chunk(x->pool, &x->c, &v->res, &v->post, &ev, v->segs[0].residual,
                                       c));
        size_t lo = 0, count = 0;
        CHECK(gd_values_chunk_range(x->n, x->c.chunk_elems, c, &lo, &count));
        CHECK_OK(gd_diloco_check_payload_chunk(&x->c, x->n, &cv, &final, &post, &ev,
                                               x->g.params + lo, &r));
        if (!r.pass && out.chunks_failed++ == 0)
            snprintf(out.why[1], sizeof out.why[1], "%s", r.why);
    }
    out.payload = out.chunks_failed == 0;
    for (uint32_t s = 0; s < S; s++) {
        gd_leaf_evidence a, b;
        CHECK_OK(gd_worker_round_leaf(&v->res, &a, s));
        CHECK_OK(gd_worker_round_leaf(&v->res, &b, s + 1));
        gd_segment_claim claim = {.cv = &cv, .segment = s,
                                  .first_step = start.desc.step,
                                  .residual_root = start.desc.residual_root, .start = gd_worker_state_source_of(&v->segs[s]),
                                  .start_proof = &a.proof, .end_leaf = v->res.leaves[s + 1],
                                  .end_proof = &b.proof};
        CHECK_OK(gd_diloco_verify_segment(x->t, &x->c, x->data, &claim, &r));
        if (!r.pass && out.segments_failed++ == 0)
            snprintf(out.why[2], sizeof out.why[2], "%s", r.why);
    }
    out.segments = out.segments_failed == 0;
    return out;
}

static bool contains(const char *text, const char *part) { return strstr(text, part) != NULL; }

static double distance(const float *a, const float *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    return sqrt(s);
}

/* --- honest work passes, across rounds ---------------------------------------------------- */

/* Three honest rounds, each linked to the one before: everything passes,
 * and the forger rebuilds an honest round bit for bit (so the attacks below
 * change only what they say they change). */
static void test_honest_rounds_chain(void) {
    world x;
    world_open(&x);
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 0, x.n));
    served prev_round = {0};
    gd_prev_link link = {0};
    for (uint64_t r = 0; r < 3; r++) {
        served v;
        honest_round(&x, &w, &v, r);
        verdicts got = validate(&x, w.address, 0, r, &v, r ? &link : NULL);
        CHECK(got.links && got.payload && got.segments);
        if (!got.links)
            fprintf(stderr, "  links: %s\n", got.why[0]);
        gd_worker_state train[S + 1];
        training_states(&v, train);
        served again;
        forge(&x, train, &again, r, x.g.params, w.address, 0);
        CHECK(memcmp(again.res.transcript_root, v.res.transcript_root, 32) == 0);
        CHECK(memcmp(again.res.payload_root, v.res.payload_root, 32) == 0);
        served_free(&again);
        states_free(train, S + 1);
        world_aggregate(&x, &v);
        if (r)
            served_free(&prev_round);
        prev_round = v;
        link = link_of(&prev_round, r);
    }
    served_free(&prev_round);
    gd_worker_state_free(&w);
    world_close(&x);
}

/* --- 1. replay ------------------------------------------------------------------------------ */

static void test_replay_is_refused(void) {
    world x;
    world_open(&x);
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 0, x.n));
    served r0;
    honest_round(&x, &w, &r0, 0);
    gd_prev_link link = link_of(&r0, 0);
    world_aggregate(&x, &r0); /* the chain moves to G_1 */

    /* The cheater trains nothing in round 1: it re-hashes round 0's states
     * under round 1 and sends Δ = G_1 - θ. */
    gd_worker_state train[S + 1];
    training_states(&r0, train);
    served replay;
    forge(&x, train, &replay, 1, x.g.params, w.address, 0);
    verdicts got = validate(&x, w.address, 0, 1, &replay, &link);
    /* What it gets past: every segment re-executes exactly and every
     * payload chunk is the coding of G_1 - θ_H. */
    CHECK(got.segments && got.payload);
    /* What stops it: leaf 0 is not G_1. */
    CHECK(!got.links && contains(got.why[0], "not trained from G_1"));

    /* The same replay into another run (another spec, run id): refused by
     * the descriptors' tag. */
    world y;
    world_open(&y);
    y.c.run = 8;
    memset(y.c.spec_digest, 0x33, 32);
    verdicts other = validate(&y, w.address, 0, 0, &r0, NULL);
    CHECK(!other.links && contains(other.why[0], "another run"));
    CHECK(!other.segments); /* the served states do not hash to the other run's leaves */
    world_close(&y);

    served_free(&replay);
    states_free(train, S + 1);
    served_free(&r0);
    gd_worker_state_free(&w);
    world_close(&x);
}

/* --- 2. residual poisoning ---------------------------------------------------------------- */

static void test_residual_poisoning_is_refused(void) {
    world x;
    world_open(&x);
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 0, x.n));
    served r0;
    honest_round(&x, &w, &r0, 0);
    gd_prev_link link = link_of(&r0, 0);
    world_aggregate(&x, &r0);

    /* Round 1: the cheater plants R in its round-start residual and trains
     * honestly, so its payload is Q(Δ + R): anything it wants G to move by. */
    float *poison = malloc(x.n * sizeof(float));
    for (size_t i = 0; i < x.n; i++)
        poison[i] = (i % 7 == 0) ? 0.05f : -0.01f;
    for (size_t i = 0; i < x.n; i++)
        w.residual[i] += poison[i];
    served r1;
    honest_round(&x, &w, &r1, 1);
    float *sent = malloc(x.n * sizeof(float)), *delta = malloc(x.n * sizeof(float));
    CHECK(sent != NULL && delta != NULL);
    for (size_t i = 0; i < x.n; i++) /* Δ = G_1 - θ_H */
        delta[i] = x.g.params[i] - r1.post.params[i];
    CHECK_OK(gd_payload_decode(&r1.res.payload, sent, x.pool));
    double off = distance(sent, delta, x.n);
    double honest_norm = 0;
    for (size_t i = 0; i < x.n; i++)
        honest_norm += (double)delta[i] * delta[i];
    honest_norm = sqrt(honest_norm);
    fprintf(stderr, "  poisoned payload: |payload - Δ| = %.3f against |Δ| = %.3f\n", off,
            honest_norm);
    CHECK(off > 3 * honest_norm);
    verdicts got = validate(&x, w.address, 0, 1, &r1, &link);
    /* Every segment and every payload chunk is consistent with the
     * poisoned residual the leaves carry... */
    CHECK(got.segments && got.payload);
    /* ...but leaf 0's residual is not the one round 0's encoding left. */
    CHECK(!got.links && contains(got.why[0], "residual is not the one the previous round"));

    /* Poisoned in a worker's first round: the run starts from zeros. */
    world fresh;
    world_open(&fresh);
    gd_worker_state w0;
    CHECK_OK(gd_worker_state_init(&w0, 0, fresh.n));
    memcpy(w0.residual, poison, fresh.n * sizeof(float));
    served p0;
    honest_round(&fresh, &w0, &p0, 0);
    got = validate(&fresh, w0.address, 0, 0, &p0, NULL);
    CHECK(got.segments && got.payload);
    CHECK(!got.links && contains(got.why[0], "zero moments and residual"));

    /* Poisoned after encoding instead: round 0's last leaf carries e_out + R,
     * so round 1's leaf 0 links to it, but round 0's own chunk checks see
     * that the coding did not leave that residual. */
    gd_worker_state clean_w;
    CHECK_OK(gd_worker_state_init(&clean_w, 0, fresh.n));
    served clean;
    honest_round(&fresh, &clean_w, &clean, 0);
    gd_worker_state train[S + 1];
    training_states(&clean, train);
    served tampered;
    forge_tampered(&fresh, train, &tampered, 0, fresh.g.params, clean_w.address, 0, poison);
    got = validate(&fresh, clean_w.address, 0, 0, &tampered, NULL);
    CHECK(got.links && got.segments);
    CHECK(!got.payload && got.chunks_failed == gd_values_chunks(fresh.n, fresh.c.chunk_elems) &&
          contains(got.why[1], "new residual is not what the coding left"));
    states_free(train, S + 1);
    served_free(&tampered);
    served_free(&clean);
    gd_worker_state_free(&clean_w);
    gd_worker_state_free(&w0);

    served_free(&p0);
    world_close(&fresh);
    free(sent);
    free(delta);
    free(poison);
    served_free(&r1);
    served_free(&r0);
    gd_worker_state_free(&w);
    world_close(&x);
}

/* --- 3. Sybil re-tag -------------------------------------------------------------------- */

static void test_sybil_retag_is_refused(void) {
    world x;
    world_open(&x);
    /* The chain assigned rank 0 to A and rank 1 to B, both the cheater's. */
    gd_worker_state a;
    CHECK_OK(gd_worker_state_init(&a, 0, x.n));
    snprintf(a.address, sizeof a.address, "gonka1sybil-a");
    served trained;
    honest_round(&x, &a, &trained, 0);
    verdicts honest = validate(&x, "gonka1sybil-a", 0, 0, &trained, NULL);
    CHECK(honest.links && honest.payload && honest.segments);

    /* One training, re-tagged under B: a second share for no work. */
    gd_worker_state train[S + 1];
    training_states(&trained, train);
    served as_b;
    forge(&x, train, &as_b, 0, x.g.params, "gonka1sybil-b", 0);
    verdicts got = validate(&x, "gonka1sybil-b", 1, 0, &as_b, NULL);
    /* The states are B's in every byte but the rank the chain gave B. */
    CHECK(got.payload);
    CHECK(!got.links && contains(got.why[0], "rank 0; the chain assigned rank 1"));
    CHECK(!got.segments && contains(got.why[2], "rank 0, not 'gonka1sybil-b' rank 1"));

    /* The cheater writes B's rank into every leaf as well: now the leaves
     * name rank 1, but the segments were trained on rank 0's batches, and
     * the validator re-executes on rank 1's (the chain's). */
    served lying;
    forge(&x, train, &lying, 0, x.g.params, "gonka1sybil-b", 1);
    got = validate(&x, "gonka1sybil-b", 1, 0, &lying, NULL);
    CHECK(got.links && got.payload);
    CHECK(!got.segments && got.segments_failed == S && contains(got.why[2], "does not reach"));

    served_free(&lying);
    served_free(&as_b);
    states_free(train, S + 1);
    served_free(&trained);
    gd_worker_state_free(&a);
    world_close(&x);
}

/* --- 4. a payload that is not the training's result ------------------------------------------ */

static void test_payload_not_from_training_is_refused(void) {
    world x;
    world_open(&x);
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 0, x.n));
    served v;
    honest_round(&x, &w, &v, 0);
    gd_worker_state train[S + 1];
    training_states(&v, train);

    /* The cheater trains honestly (every segment re-executes) but commits a
     * payload of three times its Δ: it wants a larger say in G. Its
     * transcript is the honest one. */
    float *fake_start = malloc(x.n * sizeof(float));
    for (size_t i = 0; i < x.n; i++)
        fake_start[i] = x.g.params[i] + 2.0f * (x.g.params[i] - v.post.params[i]);
    served scaled;
    forge(&x, train, &scaled, 0, fake_start, w.address, 0);
    CHECK(memcmp(scaled.res.descs[0].params_root, v.res.descs[0].params_root, 32) == 0);
    verdicts got = validate(&x, w.address, 0, 0, &scaled, NULL);
    CHECK(got.segments);
    /* Only the last segment's check tied the payload to the trained state
     * before (a 1 in S chance per check); now every chunk check does. */
    uint32_t chunks = gd_values_chunks(x.n, x.c.chunk_elems);
    CHECK(!got.payload && got.chunks_failed == chunks &&
          contains(got.why[1], "not the trained state's"));

    /* Changing one chunk only: the check of that chunk catches it, others
     * pass; a check samples one chunk, so it catches it with probability
     * 1 / chunks (docs/verification.md). */
    for (size_t i = 0; i < x.n; i++)
        fake_start[i] = x.g.params[i];
    fake_start[x.c.chunk_elems + 5] += 0.5f; /* chunk 1 */
    served one;
    forge(&x, train, &one, 0, fake_start, w.address, 0);
    got = validate(&x, w.address, 0, 0, &one, NULL);
    CHECK(got.links && got.segments && got.chunks_failed == 1 && chunks > 2);

    served_free(&one);
    served_free(&scaled);
    free(fake_start);
    states_free(train, S + 1);
    served_free(&v);
    gd_worker_state_free(&w);
    world_close(&x);
}

/* --- 5. states of the wrong size ------------------------------------------------------------ */

static void test_wrong_sizes_are_refused(void) {
    world x;
    world_open(&x);
    gd_worker_state w;
    CHECK_OK(gd_worker_state_init(&w, 0, x.n));
    served v;
    honest_round(&x, &w, &v, 0);
    gd_commitment_view cv = {.round = 0, .address = w.address, .rank = 0, .segments = S,
                             .transcript_root = v.res.transcript_root,
                             .payload_root = v.res.payload_root,
                             .payload_leaves = v.res.payload_leaves,
                             .start_state_hash = x.g_hash};
    gd_leaf_evidence a, b;
    CHECK_OK(gd_worker_round_leaf(&v.res, &a, 0));
    CHECK_OK(gd_worker_round_leaf(&v.res, &b, 1));

    /* A segment-start state of a tenth of the model's size: the validator
     * refuses it before copying anything (it would read 9/10 of the model
     * past the end of the buffer). */
    gd_worker_state small;
    CHECK_OK(gd_worker_state_init(&small, 0, x.n / 10));
    gd_segment_claim claim = {.cv = &cv, .segment = 0, .first_step = 0,
                              .residual_root = v.res.descs[0].residual_root,
                              .start = gd_worker_state_source_of(&small), .start_proof = &a.proof,
                              .end_leaf = v.res.leaves[1], .end_proof = &b.proof};
    gd_check_result r;
    CHECK_OK(gd_diloco_verify_segment(x.t, &x.c, x.data, &claim, &r));
    CHECK(!r.pass && contains(r.why, "the model has"));
    gd_worker_state_free(&small);

    /* The file form from a peer: a state of another size, a truncated
     * file, a state of another run or layout are refused before any copy. */
    gd_state_tag tag;
    gd_diloco_state_tag(&x.c, gd_trainer_layout(x.t), &tag);
    gd_buf file = {0};
    CHECK_OK(gd_worker_state_serialize(x.pool, &tag, &file, 0, GD_STAGE_TRAIN, &v.segs[0]));
    gd_worker_state got;
    gd_worker_desc desc;
    CHECK_OK(gd_worker_state_parse(x.pool, &got, &desc, file.data, file.len, &tag, x.n));
    CHECK(memcmp(got.params, v.segs[0].params, x.n * sizeof(float)) == 0 && got.rank == 0);
    gd_worker_state_free(&got);
    /* What a validator fetches is the file without the residual (its root
     * is in the descriptor, and training never changes it); the segment
     * re-executes from that. */
    size_t partial = GD_WORKER_DESC_BYTES + 12 * x.n;
    CHECK_OK(gd_worker_state_parse(x.pool, &got, &desc, file.data, partial, &tag, x.n));
    CHECK(got.residual == NULL);
    claim.start = gd_worker_state_source_of(&got);
    CHECK_OK(gd_diloco_verify_segment(x.t, &x.c, x.data, &claim, &r));
    CHECK(r.pass);
    gd_worker_state_free(&got);
    CHECK_STATUS(gd_worker_state_parse(x.pool, &got, &desc, file.data, partial + 4, &tag, x.n),
                 GD_ERR_PARSE);
    CHECK_STATUS(gd_worker_state_parse(x.pool, &got, &desc, file.data, file.len, &tag, x.n + 1),
                 GD_ERR_INVALID);
    CHECK(contains(gd_error_detail(), "the model has"));
    CHECK_STATUS(gd_worker_state_parse(x.pool, &got, &desc, file.data, file.len - 4, &tag, x.n),
                 GD_ERR_PARSE);
    CHECK_STATUS(gd_worker_state_parse(x.pool, &got, &desc, file.data, 100, &tag, x.n),
                 GD_ERR_PARSE);
    gd_state_tag other = tag;
    other.layout_digest[0] ^= 1;
    CHECK_STATUS(gd_worker_state_parse(x.pool, &got, &desc, file.data, file.len, &other, x.n),
                 GD_ERR_INVALID);
    CHECK(contains(gd_error_detail(), "layout digest"));
    /* A descriptor that claims a smaller n, with the length to match: the
     * size check against the model refuses it. */
    gd_worker_state shrunk;
    CHECK_OK(gd_worker_state_init(&shrunk, 0, x.n / 2));
    gd_buf small_file = {0};
    CHECK_OK(gd_worker_state_serialize(x.pool, &tag, &small_file, 0, GD_STAGE_TRAIN, &shrunk));
    CHECK_STATUS(gd_worker_state_parse(x.pool, &got, &desc, small_file.data, small_file.len, &tag,
                                       x.n),
                 GD_ERR_INVALID);
    /* One flipped value: the arrays no longer hash to the descriptor. */
    file.data[GD_WORKER_DESC_BYTES + 8] ^= 1;
    CHECK_STATUS(gd_worker_state_parse(x.pool, &got, &desc, file.data, file.len, &tag, x.n),
                 GD_ERR_INVALID);
    CHECK(contains(gd_error_detail(), "do not hash"));
    gd_buf_free(&small_file);
    gd_worker_state_free(&shrunk);
    gd_buf_free(&file);

    /* The worker's own round and the aggregation take sizes with every
     * array and refuse a mismatch. */
    gd_worker_round bad;
    CHECK_STATUS(gd_diloco_worker_round(x.t, &x.c, x.data, &bad, 1, x.g.params, x.n / 2, &w,
                                        NULL),
                 GD_ERR_INVALID);
    float *shorter = calloc(x.n / 2, sizeof(float));
    gd_contribution contrib = {.address = w.address, .n = x.n / 2, .layout_digest = x.layout,
                               .delta = shorter, .tokens = 1};
    CHECK_STATUS(gd_diloco_aggregate(gd_trainer_backend(x.t), &x.c, x.layout, &contrib, 1, &x.g, NULL),
                 GD_ERR_INVALID);
    free(shorter);

    served_free(&v);
    gd_worker_state_free(&w);
    world_close(&x);
}

int main(void) {
    RUN_TEST(test_honest_rounds_chain);
    RUN_TEST(test_replay_is_refused);
    RUN_TEST(test_residual_poisoning_is_refused);
    RUN_TEST(test_sybil_retag_is_refused);
    RUN_TEST(test_payload_not_from_training_is_refused);
    RUN_TEST(test_wrong_sizes_are_refused);
    return gd_test_finish();
}
