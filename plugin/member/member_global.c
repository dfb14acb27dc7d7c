/* G on a node (plugin/member/member_internal.h): the state a round starts from,
 * from memory, the store, G_0, or synchronised chunk by chunk from peers
 * and proved against the chain's state hash.
 *
 * The file form is plugin/member/global_file.h's. A global chunk a node serves is
 * chunk i of params then of momentum; its proof is the descriptor, then
 * each array's chunk proof (proofs/mmr.h wire form) after its LE32 length. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/bytes.h"
#include "common/log.h"
#include "plugin/member/global_file.h"
#include "plugin/member/member_internal.h"
#include "trainer/checkpoint.h"
#include "trainer/init.h"

void gd_member_drop_next(gd_member *n) {
    if (n->have_next)
        gd_global_state_free(&n->next);
    n->have_next = n->aggregated_next = false;
}

gd_status gd_member_global_read(gd_member *n, uint64_t round, const uint8_t hash[32],
                                gd_global_state *g) {
    /* G's arrays are read from its file as they are needed, unless the
     * budget keeps them in memory (member_memory.c). */
    gd_global_desc d;
    gd_status s = gd_global_file_get(&n->store, gd_trainer_pool(n->engine.trainer), n->o.run,
                                     round, n->engine.n, n->engine.rc.diloco.chunk_elems,
                                     n->keep_params, n->keep_next, &n->written, g, &d);
    if (s != GD_OK)
        return s;
    uint8_t got[32];
    s = gd_engine_global_hash(&n->engine, g, got);
    if (s == GD_OK && memcmp(got, hash, 32) != 0)
        s = gd_fail(GD_ERR_INVALID, "the global state's hash is not the chain's");
    if (s != GD_OK)
        gd_global_state_free(g);
    return s;
}

/* G_round as a model checkpoint, for GET .../checkpoint.safetensors:
 * written aside and renamed, so a reader never sees half a file; private
 * (0600) like everything in state_dir. */
static void gd_member_checkpoint(gd_member *n, uint64_t round) {
    char path[GD_ARTIFACT_PATH_MAX], tmp[GD_ARTIFACT_PATH_MAX + 8];
    if (gd_artifact_path(&n->store, path, sizeof path, GD_ARTIFACT_CHECKPOINT, n->o.run, round,
                         0) != GD_OK)
        return;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    gd_values_reader params = gd_global_params_reader(&n->g); /* memory or G's file */
    if (gd_checkpoint_save_model_from(tmp, gd_trainer_layout(n->engine.trainer), &params,
                                      n->stats.inner_step) != GD_OK ||
        chmod(tmp, 0600) != 0 || rename(tmp, path) != 0) {
        gd_member_error(n, "writing the checkpoint of G_%" PRIu64 ": %s", round,
                        gd_error_detail());
        remove(tmp);
    }
}

static void gd_member_set_global(gd_member *n, gd_global_state *g, uint64_t round) {
    gd_member_drop_next(n); /* G moved on: an aggregated G' is this G or stale */
    if (n->have_g)
        gd_global_state_free(&n->g);
    n->g = *g;
    n->have_g = true;
    n->g_round = round;
    gd_member_note_state(n, &n->g);
    gd_member_checkpoint(n, round);
}

/* --- state sync ------------------------------------------------------------------------------- */

/* Chunk i of G_round from one peer, proved against the descriptor whose
 * hash is the chain's, and written to the store's file of G_round (begun
 * at chunk 0, when the descriptor gives G's round). */
static gd_status gd_sync_chunk(gd_member *n, const char *peer, uint64_t round, uint32_t chunk,
                               const uint8_t hash[32], gd_global_file *file, float *window) {
    size_t lo = 0, count = 0;
    size_t values = n->engine.n;
    uint32_t ce = n->engine.rc.diloco.chunk_elems;
    if (!gd_values_chunk_range(values, ce, chunk, &lo, &count))
        return gd_fail(GD_ERR_INVALID, "chunk %u is out of range", chunk);
    gd_artifact_req req = {.kind = GD_REQ_GLOBAL_CHUNK, .run = n->o.run, .round = round,
                           .chunk = chunk};
    gd_artifact_answer a;
    GD_TRY(gd_member_fetch_wait(n, &a, peer, &req, 8 * count));
    gd_status s = GD_OK;
    gd_global_desc d;
    gd_mmr_proof pp, mp;
    const uint8_t *p = a.proof.data;
    size_t left = a.proof.len;
    uint8_t got[32];
    if (a.body.len != 8 * count || left < GD_GLOBAL_DESC_BYTES)
        s = gd_fail(GD_ERR_PARSE, "global chunk %u from %s has the wrong size", chunk, peer);
    if (s == GD_OK)
        s = gd_global_desc_decode(&d, p, GD_GLOBAL_DESC_BYTES);
    p += GD_GLOBAL_DESC_BYTES;
    left -= left >= GD_GLOBAL_DESC_BYTES ? GD_GLOBAL_DESC_BYTES : left;
    if (s == GD_OK) {
        gd_global_desc_hash(&d, got);
        if (memcmp(got, hash, 32) != 0 || d.n != values || d.chunk_elems != ce)
            s = gd_fail(GD_ERR_INVALID, "global chunk %u from %s is not of the chain's state",
                        chunk, peer);
    }
    if (s == GD_OK)
        s = gd_state_chunk_proof_next(&pp, &p, &left);
    if (s == GD_OK)
        s = gd_state_chunk_proof_next(&mp, &p, &left);
    float *params = window, *momentum = window + ce;
    if (s == GD_OK) {
        gd_get_floats(params, a.body.data, count);
        gd_get_floats(momentum, a.body.data + 4 * count, count);
        if (!gd_values_verify_chunk(d.params_root, values, ce, chunk, params, count, &pp) ||
            !gd_values_verify_chunk(d.momentum_root, values, ce, chunk, momentum, count, &mp))
            s = gd_fail(GD_ERR_INVALID, "global chunk %u from %s does not prove", chunk, peer);
    }
    gd_member_recycle_wait(n, &a.body); /* the next chunk is fetched into it */
    gd_artifact_answer_free(&a);
    if (s == GD_OK && chunk == 0)
        s = gd_global_file_begin(file, gd_trainer_pool(n->engine.trainer), &n->store, n->o.run,
                                 round, d.round, gd_trainer_layout(n->engine.trainer)->digest,
                                 ce, values, NULL);
    if (s == GD_OK)
        s = gd_global_file_write(file, params, momentum, lo, count);
    return s;
}

/* G_round from the first member that serves all of it, written to the
 * store a chunk at a time as each proves (never whole in memory), then
 * opened from there like any stored G. */
static gd_status gd_sync_global(gd_member *n, uint64_t round, const uint8_t hash[32],
                                gd_global_state *g) {
    memset(g, 0, sizeof *g);
    uint32_t ce = n->engine.rc.diloco.chunk_elems;
    float *window = malloc(2 * (size_t)ce * sizeof(float));
    if (window == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a chunk of G");
    const Gonka__Diloco__V1__QueryRunResponse *r = n->ans.run;
    gd_status s = GD_OK;
    for (size_t m = 0; r && m < r->n_members; m++) {
        const char *peer = r->members[m]->address;
        if (strcmp(peer, n->address) == 0)
            continue;
        gd_global_file file;
        memset(&file, 0, sizeof file);
        file.file.fd = -1;
        s = GD_OK;
        for (uint32_t c = 0; s == GD_OK && c < n->engine.chunks; c++)
            s = gd_sync_chunk(n, peer, round, c, hash, &file, window);
        uint8_t got[32];
        if (s == GD_OK)
            s = gd_global_file_commit(&file, got, &n->written);
        else
            gd_global_file_abort(&file);
        if (s == GD_OK && memcmp(got, hash, 32) != 0)
            s = gd_fail(GD_ERR_INVALID, "hash differs");
        if (s == GD_OK)
            s = gd_member_global_read(n, round, hash, g);
        if (s == GD_OK) {
            GD_LOG_INFO("node", "height %" PRId64 ": state sync: G_%" PRIu64 " from %s (%u chunks)",
                        n->view.view.height, round, peer, n->engine.chunks);
            free(window);
            return GD_OK;
        }
        if (s == GD_ERR_NOMEM || s == GD_ERR_IO)
            break; /* this node's own failure: no other peer helps */
        gd_member_error(n, "state sync of G_%" PRIu64 " from %s: %s", round, peer,
                        gd_error_detail());
    }
    free(window);
    if (s == GD_ERR_NOMEM || s == GD_ERR_IO)
        return s;
    return gd_fail(GD_ERR_NOT_FOUND, "no member serves G_%" PRIu64 " with the chain's hash",
                   round);
}

/* G kept on disk under `round`: what this node serves for others' state
 * sync. */
static gd_status gd_member_store_global(gd_member *n, const gd_global_state *g, uint64_t round) {
    return gd_global_file_put(&n->store, gd_trainer_pool(n->engine.trainer), n->o.run, round,
                              gd_trainer_layout(n->engine.trainer)->digest,
                              n->engine.rc.diloco.chunk_elems, g);
}

/* The G held is also G_round (a void round, or one with nothing to
 * aggregate, left it as it was). */
static gd_status gd_member_relabel_global(gd_member *n, uint64_t round) {
    GD_TRY(gd_member_store_global(n, &n->g, round));
    n->g_round = round;
    gd_member_checkpoint(n, round);
    return GD_OK;
}

/* Makes g (taken) this node's G_round, stored under `round` too. */
static gd_status gd_member_adopt_global(gd_member *n, gd_global_state *g, uint64_t round) {
    gd_status s = gd_member_store_global(n, g, round);
    if (s != GD_OK) {
        gd_global_state_free(g);
        return s;
    }
    gd_member_set_global(n, g, round);
    return GD_OK;
}

gd_status gd_member_prepare_global(gd_member *n) {
    const gd_chain_view *v = &n->view.view;
    const Gonka__Diloco__V1__Round *r = gd_member_round(n);
    if (!n->engine_open || !v->member || r == NULL ||
        r->phase != GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE ||
        r->next_state_hash.len != 32 || (n->have_g && n->g_round == r->index + 1) ||
        v->height < n->prepare_after)
        return GD_OK;
    gd_status s = gd_member_global_at(n, r->index + 1, r->next_state_hash.data);
    if (s == GD_ERR_NOMEM)
        return s;
    if (s != GD_OK) {
        n->prepare_after = v->height + GD_MEMBER_SYNC_RETRY;
        gd_member_error(n, "height %" PRId64 ": G_%" PRIu64 " before its round opens: %s",
                        v->height, r->index + 1, gd_error_detail());
    }
    return GD_OK;
}

/* G_0's windows: the seed's initial weights, zero momentum. */
static gd_status gd_initial_read(void *ctx, float *params, float *momentum, size_t lo,
                                 size_t count) {
    gd_engine *e = ctx;
    gd_params_init_range(gd_trainer_pool(e->trainer), params, gd_trainer_layout(e->trainer),
                         e->rc.diloco.inner.seed, lo, count);
    memset(momentum, 0, count * sizeof(float));
    return GD_OK;
}

/* G_0 made a window at a time straight into the store under `round`, then
 * opened from there, as the budget says (member_memory.c): never whole in
 * memory unless the budget keeps it. */
static gd_status gd_member_initial_to_store(gd_member *n, uint64_t round, const uint8_t hash[32],
                                            gd_global_state *g) {
    memset(g, 0, sizeof *g);
    gd_global_io from = {.n = n->engine.n, .read = gd_initial_read, .ctx = &n->engine};
    uint8_t got[32];
    GD_TRY(gd_global_file_put_from(&n->store, gd_trainer_pool(n->engine.trainer), n->o.run,
                                   round, 0, gd_trainer_layout(n->engine.trainer)->digest,
                                   n->engine.rc.diloco.chunk_elems, &from, got, &n->written));
    if (memcmp(got, hash, 32) != 0)
        return gd_fail(GD_ERR_INVALID, "run spec: initial_state_hash is not the hash of the "
                                       "seed's initial weights");
    return gd_member_global_read(n, round, hash, g);
}

/* G_round with the chain's hash from the node's store (under round, or
 * after a VOID under the round before), G_0, or peers. g is initialised;
 * *stored is true when the store holds it under round already. */
static gd_status gd_global_load(gd_member *n, uint64_t round, const uint8_t hash[32],
                                gd_global_state *g, bool *stored) {
    gd_status s = gd_member_global_read(n, round, hash, g);
    *stored = s == GD_OK;
    if (s == GD_OK || s == GD_ERR_NOMEM)
        return s;
    /* After a restart, the G of a VOID round's start is in the store under
     * the round before (rounds below that are pruned). */
    s = round > 0 ? gd_member_global_read(n, round - 1, hash, g) : GD_ERR_NOT_FOUND;
    if (s == GD_OK || s == GD_ERR_NOMEM)
        return s;
    /* G_0 (every round so far VOID), or peers' G: either way into the
     * store under round, then opened from there. */
    if (memcmp(hash, n->engine.rc.initial_state_hash, 32) == 0)
        s = gd_member_initial_to_store(n, round, hash, g);
    else
        s = gd_sync_global(n, round, hash, g);
    *stored = s == GD_OK;
    return s;
}

gd_status gd_member_global_view(gd_member *n, const gd_global_state **out, uint64_t round,
                                const uint8_t hash[32]) {
    /* The copy kept aside first: its hash is known, where the node's own
     * G would be hashed again for every check of the round. */
    if (n->have_older && memcmp(n->older_hash, hash, 32) == 0) {
        *out = &n->older;
        return GD_OK;
    }
    uint8_t got[32];
    if (n->have_g) {
        GD_TRY(gd_engine_global_hash(&n->engine, &n->g, got));
        if (memcmp(got, hash, 32) == 0) {
            *out = &n->g;
            return GD_OK;
        }
    }
    if (n->have_next && memcmp(n->next_hash, hash, 32) == 0) {
        *out = &n->next;
        return GD_OK;
    }
    if (n->have_older)
        gd_global_state_free(&n->older);
    n->have_older = false;
    bool stored = false;
    GD_TRY(gd_global_load(n, round, hash, &n->older, &stored));
    n->have_older = true;
    memcpy(n->older_hash, hash, 32);
    *out = &n->older;
    return GD_OK;
}

gd_status gd_member_global_at(gd_member *n, uint64_t round, const uint8_t hash[32]) {
    uint8_t got[32];
    if (n->have_g) {
        /* By hash, not by round: after a void round, or one with nothing to
         * aggregate, G_{r+1} is G_r itself. */
        GD_TRY(gd_engine_global_hash(&n->engine, &n->g, got));
        if (memcmp(got, hash, 32) == 0) {
            if (n->g_round != round)
                GD_TRY(gd_member_relabel_global(n, round));
            return GD_OK;
        }
    }
    if (n->aggregated_next && n->have_g && n->g_round + 1 == round) {
        bool same = memcmp(n->next_hash, hash, 32) == 0;
        if (same && n->have_next) {
            gd_global_state next = n->next;
            n->have_next = false;
            gd_member_set_global(n, &next, round);
            return GD_OK;
        }
        if (!same)
            gd_member_error(n, "G_%" PRIu64 " as this node aggregated it is not the chain's",
                            round);
        if (same && !n->keep_next) {
            /* G' is in the store only (the memory budget): G_r goes first,
             * so the two are never both in memory (G_r is stored too). */
            gd_global_state_free(&n->g);
            n->have_g = false;
        }
    }
    gd_global_state g;
    bool stored = false;
    GD_TRY(gd_global_load(n, round, hash, &g, &stored));
    if (stored) {
        gd_member_set_global(n, &g, round);
        return GD_OK;
    }
    return gd_member_adopt_global(n, &g, round);
}
