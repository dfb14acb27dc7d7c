/* Peers' payloads of the current round (plugin/member/member_internal.h): each
 * fetched once, alone or in a block's batch, checked against the payload
 * its peer committed, and kept for the round's reports, checks and
 * aggregate. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "plugin/member/member_internal.h"

/* The round's commitment of address, refused when it claims a payload
 * larger than this run's model and codec can make (before anything is
 * fetched): a payload is at most its header, its table and every chunk at
 * the codec's bound (a zstd frame never exceeds the raw chunk it stores). */
static gd_status gd_payload_commitment(gd_member *n, const Gonka__Diloco__V1__Commitment **out,
                                       const char *address) {
    const Gonka__Diloco__V1__Commitment *c = gd_commitment_in(n->ans.round, address);
    if (c == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "%s has no commitment this round", address);
    const gd_diloco_config *dc = &n->engine.rc.diloco;
    uint64_t bound = GD_PAYLOAD_HEADER_BYTES +
                     (uint64_t)n->engine.chunks *
                         (GD_PAYLOAD_TABLE_ENTRY_BYTES + gd_codec_chunk_bound(&dc->codec,
                                                                              dc->chunk_elems));
    if (c->payload_bytes > bound || c->payload_bytes > GD_MEMBER_PAYLOAD_MAX)
        return gd_fail(GD_ERR_LIMIT, "%s committed a payload of %" PRIu64 " bytes, over the "
                                     "%" PRIu64 " this run's model and codec make",
                       address, c->payload_bytes, bound);
    *out = c;
    return GD_OK;
}

/* Where address's payload of the round is kept: the node's own in its
 * store, a peer's in the round's peer-L.gdpl, L its slot (the order this
 * node first asked for peers' payloads this round), so asking again, on
 * the step, through the pool or in a batch, lands in the same file, and
 * two peers never share one. The round's directory is made. */
static gd_status gd_payload_place(gd_member *n, gd_member_peer_payload *held,
                                  char path[GD_ARTIFACT_PATH_MAX], const char *address) {
    bool own = strcmp(address, n->address) == 0;
    memset(held, 0, sizeof *held);
    snprintf(held->address, sizeof held->address, "%s", address);
    held->kind = own ? GD_ARTIFACT_PAYLOAD : GD_ARTIFACT_PEER_PAYLOAD;
    if (!own) {
        uint32_t slot = 0;
        while (slot < n->n_peer_slots && strcmp(n->peer_slots[slot], address) != 0)
            slot++;
        if (slot == n->n_peer_slots) {
            char(*grown)[GD_ADDRESS_STR_MAX] =
                realloc(n->peer_slots, (n->n_peer_slots + 1) * sizeof *grown);
            if (grown == NULL)
                return gd_fail(GD_ERR_NOMEM, "out of memory");
            n->peer_slots = grown;
            snprintf(n->peer_slots[n->n_peer_slots++], GD_ADDRESS_STR_MAX, "%s", address);
        }
        held->leaf = slot;
    }
    return gd_artifact_place(&n->store, path, held->kind, n->o.run, n->cache_round, held->leaf);
}

/* Keeps address's payload for the round once its file (held's, where it
 * was fetched to) is the payload it committed (c), checked where it lies
 * and every chunk decoded; a peer's file that is not is removed. One that
 * is the committed payload but does not decode is kept as malformed: the
 * same bytes would come again, and the checks of its commitment need
 * them. */
/* address's member number: its index in the round's members. */
static bool gd_member_number(const gd_member *n, uint32_t *out, const char *address) {
    const Gonka__Diloco__V1__Round *r = gd_member_round(n);
    for (size_t i = 0; r != NULL && i < r->n_members; i++)
        if (strcmp(r->members[i]->address, address) == 0) {
            *out = (uint32_t)i;
            return true;
        }
    return false;
}

/* A peer's payload kept: served from now on as a mirror. */
static gd_status gd_mirror_add(gd_member *n, const gd_member_peer_payload *held) {
    uint32_t member = 0;
    if (held->kind != GD_ARTIFACT_PEER_PAYLOAD || !gd_member_number(n, &member, held->address))
        return GD_OK;
    pthread_mutex_lock(&n->mirror_mu);
    gd_member_mirror *grown = realloc(n->mirrors, (n->n_mirrors + 1) * sizeof *grown);
    if (grown != NULL) {
        n->mirrors = grown;
        n->mirrors[n->n_mirrors++] =
            (gd_member_mirror){.round = n->cache_round, .member = member, .slot = held->leaf};
    }
    pthread_mutex_unlock(&n->mirror_mu);
    return grown != NULL ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
}

bool gd_member_mirror_slot(gd_member *n, uint32_t *slot, uint64_t round, uint32_t member) {
    bool found = false;
    pthread_mutex_lock(&n->mirror_mu);
    for (size_t i = 0; i < n->n_mirrors && !found; i++)
        if (n->mirrors[i].round == round && n->mirrors[i].member == member) {
            *slot = n->mirrors[i].slot;
            found = true;
        }
    pthread_mutex_unlock(&n->mirror_mu);
    return found;
}

static gd_status gd_keep_payload(gd_member *n, const gd_member_peer_payload **out,
                                 gd_member_peer_payload *held,
                                 const char path[GD_ARTIFACT_PATH_MAX],
                                 const Gonka__Diloco__V1__Commitment *c) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        gd_status s = gd_fail(GD_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return s;
    }
    held->len = (uint64_t)st.st_size;
    gd_payload_view p;
    gd_payload_decoded d;
    gd_status s = gd_engine_payload_view_file(&n->engine, &p, &d, n->cache_round,
                                              held->address, fd, held->len,
                                              c->payload_root.data, c->payload_leaves);
    if (s == GD_OK)
        gd_payload_view_close(&p);
    held->has_norm = s == GD_OK && d.has_norm;
    held->sum_squares = d.sum_squares;
    if (s == GD_OK && d.malformed) {
        held->malformed = true;
        snprintf(held->malformed_why, sizeof held->malformed_why,
                 "chunk %u does not decode: %s", (unsigned)d.bad_chunk, d.why);
        GD_LOG_WARN("node", "round %" PRIu64 ": the payload %s committed does not decode (%s): "
                            "not reported, not aggregated",
                    n->cache_round, held->address, held->malformed_why);
    }
    close(fd);
    if (s != GD_OK && held->kind == GD_ARTIFACT_PEER_PAYLOAD)
        (void)unlink(path); /* not kept: the next ask fetches it again */
    gd_member_peer_payload *grown =
        s == GD_OK ? realloc(n->payloads, (n->n_payloads + 1) * sizeof *grown) : NULL;
    if (s == GD_OK && grown == NULL)
        s = gd_fail(GD_ERR_NOMEM, "out of memory");
    if (s == GD_OK)
        n->payloads = grown;
    if (s == GD_OK)
        s = gd_mirror_add(n, held);
    if (s != GD_OK)
        return s;
    n->payloads[n->n_payloads] = *held;
    if (out != NULL)
        *out = &n->payloads[n->n_payloads];
    n->n_payloads++;
    return GD_OK;
}

static const gd_member_peer_payload *gd_held_payload(const gd_member *n, const char *address) {
    for (size_t i = 0; i < n->n_payloads; i++)
        if (strcmp(n->payloads[i].address, address) == 0)
            return &n->payloads[i];
    return NULL;
}

static gd_status gd_record_fetch_failure(gd_member *n, const char *address, gd_status status,
                                         const char *why) {
    gd_member_fetch_failure *grown =
        realloc(n->fetch_failed, (n->n_fetch_failed + 1) * sizeof *grown);
    if (grown == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    n->fetch_failed = grown;
    gd_member_fetch_failure *f = &n->fetch_failed[n->n_fetch_failed++];
    snprintf(f->address, sizeof f->address, "%s", address);
    f->status = status;
    snprintf(f->why, sizeof f->why, "%s", why);
    return GD_OK;
}

gd_status gd_member_payload_held(gd_member *n, const gd_member_peer_payload **out,
                                 const char *address) {
    if ((*out = gd_held_payload(n, address)) != NULL)
        return GD_OK;
    for (size_t i = 0; i < n->n_fetch_failed; i++)
        if (strcmp(n->fetch_failed[i].address, address) == 0)
            return gd_fail(n->fetch_failed[i].status, "%s", n->fetch_failed[i].why);
    const Gonka__Diloco__V1__Commitment *c = NULL;
    GD_TRY(gd_payload_commitment(n, &c, address));
    gd_member_peer_payload held;
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_payload_place(n, &held, path, address));
    if (held.kind == GD_ARTIFACT_PEER_PAYLOAD) {
        /* Fetched straight to its file: no payload is ever held in memory. */
        gd_artifact_req req = {.kind = GD_REQ_PAYLOAD, .run = n->o.run,
                               .round = n->cache_round, .into = path};
        gd_artifact_answer a;
        GD_TRY(gd_member_fetch(n, &a, address, &req, c->payload_bytes));
        gd_artifact_answer_free(&a);
    }
    return gd_keep_payload(n, out, &held, path, c);
}

static bool gd_mirror_missed(const gd_member *n, const char *of, const char *from) {
    for (size_t i = 0; i < n->n_mirror_misses; i++)
        if (strcmp(n->mirror_misses[i].of, of) == 0 && strcmp(n->mirror_misses[i].from, from) == 0)
            return true;
    return false;
}

static gd_status gd_mirror_miss(gd_member *n, const char *of, const char *from) {
    gd_member_mirror_miss *grown =
        realloc(n->mirror_misses, (n->n_mirror_misses + 1) * sizeof *grown);
    if (grown == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    n->mirror_misses = grown;
    gd_member_mirror_miss *m = &n->mirror_misses[n->n_mirror_misses++];
    snprintf(m->of, sizeof m->of, "%s", of);
    snprintf(m->from, sizeof m->from, "%s", from);
    return GD_OK;
}

gd_status gd_member_payload_mirrored(gd_member *n, const gd_member_peer_payload **out,
                                     const char *address) {
    if ((*out = gd_held_payload(n, address)) != NULL)
        return GD_OK;
    const Gonka__Diloco__V1__Commitment *c = NULL;
    GD_TRY(gd_payload_commitment(n, &c, address));
    const Gonka__Diloco__V1__Round *r = gd_member_round(n);
    uint32_t number = 0;
    if (r == NULL || r->n_members == 0 || !gd_member_number(n, &number, address))
        return gd_fail(GD_ERR_NOT_FOUND, "%s is not a member of the round", address);
    /* Where this node starts in the members' order: from its address. */
    size_t start = 0;
    for (const char *p = n->address; *p; p++)
        start = start * 31 + (unsigned char)*p;
    gd_status s = gd_fail(GD_ERR_NOT_FOUND, "no other member gave %s's payload", address);
    for (size_t k = 0; k < r->n_members; k++) {
        const char *from = r->members[(start + k) % r->n_members]->address;
        if (strcmp(from, address) == 0 || strcmp(from, n->address) == 0 ||
            gd_mirror_missed(n, address, from))
            continue;
        gd_member_peer_payload held;
        char path[GD_ARTIFACT_PATH_MAX];
        GD_TRY(gd_payload_place(n, &held, path, address));
        int64_t end = gd_member_fetch_deadline(n), now = gd_clock_ms();
        gd_artifact_req req = {.kind = GD_REQ_PEER_PAYLOAD, .run = n->o.run,
                               .round = n->cache_round, .leaf = number, .into = path,
                               .deadline_ms = end > now ? now + (end - now) / 2 : 0};
        gd_artifact_answer a;
        s = gd_member_fetch(n, &a, from, &req, c->payload_bytes);
        gd_artifact_answer_free(&a);
        if (s == GD_OK)
            s = gd_keep_payload(n, out, &held, path, c);
        if (s == GD_OK) {
            GD_LOG_INFO("node", "round %" PRIu64 ": %s's payload from %s, which holds it",
                        n->cache_round, address, from);
            return GD_OK;
        }
        if (s == GD_ERR_NOMEM || s == GD_ERR_IO || s == GD_ERR_PENDING)
            return s; /* this node's own failure, or an answer still to come */
        GD_TRY(gd_mirror_miss(n, address, from));
    }
    return s;
}

gd_status gd_member_payload_included(gd_member *n, const gd_member_peer_payload **out,
                                     const char *address) {
    if ((*out = gd_held_payload(n, address)) != NULL)
        return GD_OK;
    /* Its worker already failed this node: not asked again this round. */
    if (gd_mirror_missed(n, address, address))
        return gd_member_payload_mirrored(n, out, address);
    gd_status s = gd_member_payload_held(n, out, address);
    if (s == GD_OK || s == GD_ERR_NOMEM || s == GD_ERR_IO || s == GD_ERR_PENDING ||
        strcmp(address, n->address) == 0)
        return s;
    GD_TRY(gd_mirror_miss(n, address, address));
    return gd_member_payload_mirrored(n, out, address);
}

gd_status gd_member_payload_path(const gd_member *n, char path[GD_ARTIFACT_PATH_MAX],
                                 const gd_member_peer_payload *held) {
    return gd_artifact_path(&n->store, path, GD_ARTIFACT_PATH_MAX, held->kind, n->o.run,
                            n->cache_round, held->leaf);
}

/* A block's batch of payload fetches: what each item is, and where its
 * payload goes. */
typedef struct gd_payload_batch {
    gd_peer_fetch_item *items;
    char (*who)[GD_ADDRESS_STR_MAX];
    gd_member_peer_payload *held;
    char (*path)[GD_ARTIFACT_PATH_MAX];
    size_t n, cap;
} gd_payload_batch;

static void gd_batch_free(gd_payload_batch *b) {
    for (size_t i = 0; b->items != NULL && i < b->n; i++)
        gd_artifact_answer_free(&b->items[i].answer);
    free(b->items);
    free(b->who);
    free(b->held);
    free(b->path);
}

/* Adds address to the batch unless it is already there, held, this node's
 * own, or has no commitment or URL (its duty then says why, as before). */
static void gd_batch_add(gd_member *n, gd_payload_batch *b, const char *address) {
    if (b->n >= b->cap || strcmp(address, n->address) == 0 || gd_held_payload(n, address))
        return;
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->who[i], address) == 0)
            return;
    const Gonka__Diloco__V1__Commitment *c = NULL;
    const Gonka__Diloco__V1__Member *m = gd_member_lookup(n, address);
    if (gd_payload_commitment(n, &c, address) != GD_OK || m == NULL ||
        m->artifact_url == NULL || m->artifact_url[0] == '\0' ||
        gd_payload_place(n, &b->held[b->n], b->path[b->n], address) != GD_OK)
        return;
    snprintf(b->who[b->n], sizeof b->who[b->n], "%s", address);
    b->items[b->n] = (gd_peer_fetch_item){
        .url = m->artifact_url, .max_len = c->payload_bytes,
        .req = {.kind = GD_REQ_PAYLOAD, .run = n->o.run, .round = n->cache_round,
                .deadline_ms = gd_member_fetch_deadline(n), .into = b->path[b->n]}};
    b->n++;
}

gd_status gd_member_prefetch(gd_member *n, const gd_action *acts, size_t n_acts) {
    n->n_fetch_failed = 0;
    if ((n->peers.iface->fetch_all == NULL && n->fetch_pool == NULL) || !n->engine_open)
        return GD_OK;
    const gd_round_view *rv = &n->view.view.round;
    gd_payload_batch b = {.cap = n_acts + rv->n_aggregation_set};
    size_t cap = b.cap ? b.cap : 1;
    b.items = calloc(cap, sizeof *b.items);
    b.who = calloc(cap, sizeof *b.who);
    b.held = calloc(cap, sizeof *b.held);
    b.path = calloc(cap, sizeof *b.path);
    if (b.items == NULL || b.who == NULL || b.held == NULL || b.path == NULL) {
        gd_batch_free(&b);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n_acts; i++) {
        if (acts[i].kind == GD_ACT_REPORT)
            gd_batch_add(n, &b, acts[i].target);
        for (size_t j = 0; acts[i].kind == GD_ACT_AGGREGATE && j < rv->n_aggregation_set; j++)
            gd_batch_add(n, &b, rv->aggregation_set[j]);
    }
    size_t k = b.n;
    char (*who)[GD_ADDRESS_STR_MAX] = b.who;
    /* With a fetch pool every payload is queued now, and each duty takes
     * its own when it is in: a slow peer holds up only what needs it. */
    if (n->fetch_pool != NULL) {
        gd_status s = GD_OK;
        size_t in = 0, pending = 0;
        uint64_t bytes = 0;
        for (size_t i = 0; s == GD_OK && i < k; i++) {
            const gd_member_peer_payload *held = NULL;
            gd_status got = gd_member_payload_held(n, &held, who[i]);
            if (got == GD_OK) {
                in++;
                bytes += held->len;
            } else if (got == GD_ERR_PENDING) {
                pending++;
            } else if (got == GD_ERR_NOMEM) {
                s = got;
            } else {
                s = gd_record_fetch_failure(n, who[i], got, gd_error_detail());
            }
        }
        if (s == GD_OK && in + n->n_fetch_failed > 0)
            GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 ": %zu payloads in off the "
                                "step (%" PRIu64 " bytes, %zu pending, %zu failed)",
                        n->view.view.height, n->cache_round, in, bytes, pending,
                        n->n_fetch_failed);
        gd_batch_free(&b);
        return s;
    }
    /* One payload alone is fetched by its duty, as before. */
    if (k < 2) {
        gd_batch_free(&b);
        return GD_OK;
    }
    gd_status s = n->peers.iface->fetch_all(n->peers.ctx, b.items, k);
    uint64_t fetched = 0;
    for (size_t i = 0; s == GD_OK && i < k; i++) {
        gd_peer_fetch_item *it = &b.items[i];
        if (it->status != GD_OK) {
            s = gd_record_fetch_failure(n, who[i], it->status, it->why);
            continue;
        }
        const Gonka__Diloco__V1__Commitment *c = NULL;
        gd_status kept = gd_payload_commitment(n, &c, who[i]);
        if (kept == GD_OK)
            kept = gd_member_answer_landed(n, &it->answer, &it->req);
        if (kept == GD_OK)
            kept = gd_keep_payload(n, NULL, &b.held[i], b.path[i], c);
        if (kept == GD_OK)
            fetched += b.held[i].len;
        if (kept == GD_ERR_NOMEM)
            s = kept;
        else if (kept != GD_OK)
            s = gd_record_fetch_failure(n, who[i], kept, gd_error_detail());
    }
    if (s == GD_OK)
        GD_LOG_INFO("node", "height %" PRId64 ": round %" PRIu64 ": %zu payloads fetched at once "
                            "(%" PRIu64 " bytes, %zu failed)",
                    n->view.view.height, n->cache_round, k, fetched, n->n_fetch_failed);
    gd_batch_free(&b);
    return s;
}
