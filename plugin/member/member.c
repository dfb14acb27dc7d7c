/* A member's lifecycle and its step (plugin/member/member.h): it opens and
 * closes the member, and each step reads the chain, does the duties due and
 * sends and settles what they produce, through the chain's exchange
 * (member_chain.c), the duties (member_duties.c) and the helpers they share
 * (member_internal.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chain/keys/address.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/secure.h"
#include "plugin/member/member_internal.h"

static gd_status gd_copy_opt(char *dst, size_t cap, const char *src, const char *what) {
    if (src == NULL)
        src = "";
    if (strlen(src) >= cap)
        return gd_fail(GD_ERR_LIMIT, "%s is over %zu bytes", what, cap - 1);
    memcpy(dst, src, strlen(src) + 1);
    return GD_OK;
}

gd_status gd_member_open(gd_member **out, const gd_member_options *o, const gd_key *key,
                       gd_chain_port chain, gd_peer_port peers) {
    *out = NULL;
    gd_member *n = calloc(1, sizeof *n);
    if (n == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    n->o = *o;
    n->key = *key;
    n->chain = chain;
    n->peers = peers;
    n->stepped_height = -1;
    n->lock_fd = -1;
    pthread_mutex_init(&n->mu, NULL);
    pthread_mutex_init(&n->serve_mu, NULL);
    pthread_mutex_init(&n->head_mu, NULL);
    pthread_mutex_init(&n->mirror_mu, NULL);
    gd_state_index_cache_init(&n->served);
    gd_status s = gd_copy_opt(n->artifact_url, sizeof n->artifact_url, o->artifact_url,
                              "artifact URL");
    if (s == GD_OK)
        s = gd_copy_opt(n->hw_class, sizeof n->hw_class, o->hw_class, "hardware class");
    n->o.artifact_url = n->artifact_url;
    n->o.hw_class = n->hw_class;
    n->o.state_dir = NULL;
    if (s == GD_OK)
        s = gd_address_from_pubkey(n->address, sizeof n->address, GD_ADDRESS_PREFIX, key->pubkey);
    if (s == GD_OK && peers.iface->open_another != NULL)
        s = gd_fetch_pool_open(&n->fetch_pool, peers, GD_FETCH_POOL_THREADS);
    if (s == GD_OK)
        s = gd_artifact_store_open(&n->store, o->state_dir);
    if (s == GD_OK)
        s = gd_artifact_store_lock(&n->store, &n->lock_fd);
    if (s == GD_OK)
        s = gd_start_writer_open(&n->starts, &n->store, o->run, true);
    if (s == GD_OK)
        s = gd_journal_load(&n->store, &n->journal);
    if (s != GD_OK) {
        gd_member_close(n);
        return s;
    }
    /* Secrets and salts: SHA-256 of a tag and the key's secret, so a
     * restarted node derives the same ones and no file holds them. */
    uint8_t in[16 + GD_SECKEY_LEN];
    memcpy(in, "gd-node-salts-v1", 16);
    memcpy(in + 16, key->secret, GD_SECKEY_LEN);
    gd_sha256(n->salt_seed, in, sizeof in);
    gd_wipe(in, sizeof in);
    *out = n;
    return GD_OK;
}

static void gd_member_drop_payloads(gd_member *n) {
    free(n->payloads);
    n->payloads = NULL;
    n->n_payloads = 0;
    free(n->peer_slots);
    n->peer_slots = NULL;
    n->n_peer_slots = 0;
    free(n->fetch_failed);
    n->fetch_failed = NULL;
    n->n_fetch_failed = 0;
    free(n->mirror_misses);
    n->mirror_misses = NULL;
    n->n_mirror_misses = 0;
    pthread_mutex_lock(&n->mirror_mu);
    free(n->mirrors);
    n->mirrors = NULL;
    n->n_mirrors = 0;
    pthread_mutex_unlock(&n->mirror_mu);
}

void gd_member_close(gd_member *n) {
    if (n == NULL)
        return;
    gd_fetch_pool_close(n->fetch_pool); /* cancels what is in flight */
    gd_chain_view_free(&n->view);
    gd_chain_answers_free(&n->ans);
    gd_member_drop_payloads(n);
    gd_trained_round_free(&n->trained);
    gd_engine_job_free(&n->job);
    gd_start_writer_close(&n->starts);
    if (n->have_older)
        gd_global_state_free(&n->older);
    gd_global_leaves_free(&n->written);
    if (n->have_g)
        gd_global_state_free(&n->g);
    gd_member_drop_next(n);
    if (n->have_w)
        gd_worker_state_free(&n->w);
    if (n->engine_open)
        gd_engine_close(&n->engine);
    gd_key_wipe(&n->key);
    gd_wipe(n->salt_seed, sizeof n->salt_seed);
    gd_state_index_cache_free(&n->served);
    gd_artifact_store_unlock(n->lock_fd);
    pthread_mutex_destroy(&n->serve_mu);
    pthread_mutex_destroy(&n->head_mu);
    pthread_mutex_destroy(&n->mirror_mu);
    pthread_mutex_destroy(&n->mu);
    free(n);
}

const char *gd_member_address(const gd_member *n) { return n->address; }

/* --- the step ------------------------------------------------------------------------------ */

/* A new round: what was fetched for the old one goes. */
static void gd_member_round_cache(gd_member *n) {
    const gd_chain_view *v = &n->view.view;
    if (!v->have_round || v->round.index == n->cache_round)
        return;
    gd_member_drop_payloads(n);
    n->n_answers = 0;
    n->cache_round = v->round.index;
    if (n->fetch_pool != NULL)
        gd_fetch_pool_forget_before(n->fetch_pool, n->cache_round);
    n->n_suspects = 0; /* a new round's duties deserve a fresh try */
    gd_member_retain(n, v->round.index);
}

gd_status gd_member_observe(gd_member *n) { return gd_member_read(n); }

void gd_member_stop_on(gd_member *n, const volatile int *stop) { n->stop = stop; }

static gd_status gd_member_step_once(gd_member *n, size_t *done, bool *long_duty) {
    *long_duty = false;
    GD_TRY(gd_member_read(n));
    /* The engine opens once the run's spec is read, before any duty: a run
     * this host cannot take part in (its local data is not the run's, the
     * model is unknown here) stops the member with the reason, rather than
     * failing every duty of every round. */
    if (!n->engine_open && n->ans.run && n->ans.run->run && n->ans.run->run->spec) {
        gd_status s = gd_member_engine(n);
        if (s == GD_ERR_NOMEM)
            return s;
        if (s != GD_OK)
            return gd_fail_context(GD_ERR_INVALID, "run %" PRIu64 " cannot be run here",
                                   n->o.run);
    }
    /* Once per block: what was sent at this height lands in the next one. */
    if (n->view.view.height == n->stepped_height)
        return GD_OK;
    /* The first height a node sees only sets where it starts: what it sent
     * before a crash, still in flight, lands in the next block, which it
     * reads before it decides what is due (rather than sending it again,
     * which the chain would refuse). */
    bool first = n->stepped_height < 0;
    n->stepped_height = n->view.view.height;
    if (first)
        return GD_OK;
    gd_member_round_cache(n);
    /* `node leave`, run while the node runs: it seals no later secret. */
    if (!n->journal.leave_wanted && gd_leave_requested(&n->store)) {
        n->journal.leave_wanted = true;
        GD_TRY(gd_journal_save(&n->store, &n->journal));
        GD_LOG_INFO("node", "height %" PRId64 ": leaving run %" PRIu64 " as asked",
                    n->view.view.height, n->o.run);
    }
    gd_duty_config cfg = {n->o.roles, n->o.join};
    gd_action acts[GD_MEMBER_MSGS_MAX];
    size_t n_acts = 0;
    (void)gd_round_driver_step(&cfg, &n->view.view, &n->journal, acts, GD_MEMBER_MSGS_MAX, &n_acts);
    n_acts = gd_member_due(n, acts, n_acts);
    GD_TRY(gd_member_prefetch(n, acts, n_acts));
    gd_any msgs[GD_MEMBER_MSGS_MAX];
    gd_action sent[GD_MEMBER_MSGS_MAX];
    size_t n_msgs = 0, n_sent = 0;
    gd_status s = GD_OK;
    size_t flushes = 0;
    n->outbox.msgs = msgs;
    n->outbox.n_msgs = &n_msgs;
    n->outbox.sent = sent;
    n->outbox.n_sent = &n_sent;
    n->outbox.done = done;
    n->outbox.flushes = &flushes;
    n->reread = false;
    for (size_t i = 0; s == GD_OK && i < n_acts && !n->reread; i++) {
        if (n->solo && (n_msgs > 0 || flushes > 0))
            break; /* after a refused transaction, one duty per step */
        /* What is cheap goes before a duty computes (it flushes the queue
         * itself, gd_member_before_compute), and what a computing duty
         * produced (a sealed verdict) goes at once: minutes of training or
         * a validator's many re-executions never push an answer past its
         * window. */
        n->computed = false;
        size_t before = n_msgs, flushed = flushes;
        s = gd_member_duty(n, &acts[i], msgs, GD_MEMBER_MSGS_MAX, &n_msgs);
        if (flushes != flushed)
            before = 0; /* it sent the queue before computing */
        if (s == GD_OK && n_msgs > before)
            sent[n_sent++] = acts[i];
        if (s == GD_OK && n->computed) {
            *long_duty = true;
            if (n_msgs > 0) {
                s = gd_member_flush(n, msgs, &n_msgs, sent, &n_sent, done);
                flushes++;
            }
        }
        if (s == GD_OK && (acts[i].kind == GD_ACT_TRAIN || acts[i].kind == GD_ACT_AGGREGATE))
            (*done)++;
    }
    memset(&n->outbox, 0, sizeof n->outbox);
    if (s == GD_OK && n_msgs > 0)
        s = gd_member_flush(n, msgs, &n_msgs, sent, &n_sent, done);
    for (size_t i = 0; i < n_msgs; i++)
        gd_any_free(&msgs[i]);
    /* Before the chain is read again, whatever a duty sent ahead is in a
     * block (or refused there). */
    gd_status settled = gd_member_settle(n, done);
    if (s == GD_OK)
        s = settled;
    if (s == GD_OK)
        s = gd_member_prepare_global(n); /* after the duties: it never holds one up */
    return s;
}

gd_status gd_member_step(gd_member *n, size_t *done) {
    *done = 0;
    bool long_duty = false;
    GD_TRY(gd_member_step_once(n, done, &long_duty));
    /* Blocks went by while it trained, checked or aggregated: what is due
     * now (the commit, the attestation) goes at once rather than a poll
     * later. A chain that has not moved is not stepped twice (step_once
     * returns at once). */
    for (int i = 0; long_duty && i < 2; i++) {
        size_t more = 0;
        GD_TRY(gd_member_step_once(n, &more, &long_duty));
        *done += more;
    }
    return GD_OK;
}

bool gd_member_global(gd_member *n, uint64_t *round, uint8_t hash[32]) {
    if (!n->have_g || !n->engine_open)
        return false;
    if (n->aggregated_next) {
        *round = n->g_round + 1;
        memcpy(hash, n->next_hash, 32);
        return true;
    }
    *round = n->g_round;
    return gd_engine_global_hash(&n->engine, &n->g, hash) == GD_OK;
}

double gd_member_eval_loss(gd_member *n, size_t batches) {
    double loss = NAN;
    if (!n->have_g || !n->engine_open)
        return NAN;
    if (n->aggregated_next && !n->have_next) {
        /* G' was written to the store only (the memory budget): read back. */
        gd_global_state next;
        if (gd_member_global_read(n, n->g_round + 1, n->next_hash, &next) != GD_OK)
            return NAN;
        if (gd_engine_eval(&n->engine, &next, batches, &loss) != GD_OK)
            loss = NAN;
        gd_global_state_free(&next);
        return loss;
    }
    const gd_global_state *g = n->have_next ? &n->next : &n->g;
    if (gd_engine_eval(&n->engine, g, batches, &loss) != GD_OK)
        return NAN;
    return loss;
}
