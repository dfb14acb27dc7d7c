/* A node's lifecycle and its step (plugin/member/member.h). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chain/keys/address.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/secure.h"
#include "plugin/member/data_memo.h"
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
    pthread_mutex_init(&n->mu, NULL);
    pthread_mutex_init(&n->serve_mu, NULL);
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

/* recycle: the buffers go back to the peer client for the next round's
 * fetches (not when closing: the client may be gone). */
static void gd_member_drop_payloads(gd_member *n, bool recycle) {
    for (size_t i = 0; i < n->n_payloads; i++) {
        if (recycle)
            gd_member_recycle(n, &n->payloads[i].bytes);
        else
            gd_buf_free(&n->payloads[i].bytes);
    }
    free(n->payloads);
    n->payloads = NULL;
    n->n_payloads = 0;
    free(n->fetch_failed);
    n->fetch_failed = NULL;
    n->n_fetch_failed = 0;
}

void gd_member_close(gd_member *n) {
    if (n == NULL)
        return;
    gd_fetch_pool_close(n->fetch_pool); /* cancels what is in flight */
    gd_chain_view_free(&n->view);
    gd_chain_answers_free(&n->ans);
    gd_member_drop_payloads(n, false);
    gd_trained_round_free(&n->trained);
    gd_engine_job_free(&n->job);
    if (n->have_older)
        gd_global_state_free(&n->older);
    if (n->have_g)
        gd_global_state_free(&n->g);
    if (n->have_next)
        gd_global_state_free(&n->next);
    if (n->have_w)
        gd_worker_state_free(&n->w);
    if (n->engine_open)
        gd_engine_close(&n->engine);
    gd_key_wipe(&n->key);
    gd_wipe(n->salt_seed, sizeof n->salt_seed);
    gd_state_index_cache_free(&n->served);
    pthread_mutex_destroy(&n->serve_mu);
    pthread_mutex_destroy(&n->mu);
    free(n);
}

const char *gd_member_address(const gd_member *n) { return n->address; }

/* An error's text without its leading "height N: ", so that the same
 * failure at each block is one error repeated. */
static const char *gd_member_error_kind(const char *text) {
    const char *p = text;
    if (strncmp(p, "height ", 7) != 0)
        return text;
    p += 7;
    const char *digits = p;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > digits && p[0] == ':' && p[1] == ' ' ? p + 2 : text;
}

void gd_member_error(gd_member *n, const char *fmt, ...) {
    char text[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    GD_LOG_WARN("node", "%s", text);
    pthread_mutex_lock(&n->mu);
    gd_member_stats *st = &n->stats;
    st->n_errors++;
    /* A failure that recurs block after block (a peer that stays down) is
     * one entry with a count: it must not push out of the status the
     * errors before it. */
    size_t last = (st->n_error_slots + GD_MEMBER_ERRORS - 1) % GD_MEMBER_ERRORS;
    bool repeat = st->n_error_slots > 0 &&
                  strcmp(gd_member_error_kind(st->errors[last].text),
                         gd_member_error_kind(text)) == 0;
    size_t i = repeat ? last : st->n_error_slots++ % GD_MEMBER_ERRORS;
    st->errors[i].repeats = repeat ? st->errors[i].repeats + 1 : 1;
    st->errors[i].time = (int64_t)time(NULL);
    snprintf(st->errors[i].text, sizeof st->errors[i].text, "%s", text);
    pthread_mutex_unlock(&n->mu);
}

void gd_member_salt(const gd_member *n, uint8_t out[32], gd_diloco_seal_kind kind, uint64_t round,
                  const char *target, uint32_t check) {
    uint8_t in[13 + 32 + 1 + 8 + 8 + 4 + GD_ADDRESS_STR_MAX];
    size_t len = 0;
    memcpy(in, "gd-node-salt", 13);
    len = 13;
    memcpy(in + len, n->salt_seed, 32);
    len += 32;
    in[len++] = (uint8_t)kind;
    for (int i = 0; i < 8; i++)
        in[len++] = (uint8_t)(n->o.run >> (8 * i));
    for (int i = 0; i < 8; i++)
        in[len++] = (uint8_t)(round >> (8 * i));
    for (int i = 0; i < 4; i++)
        in[len++] = (uint8_t)(check >> (8 * i));
    size_t tl = target ? strnlen(target, GD_ADDRESS_STR_MAX - 1) : 0;
    memcpy(in + len, target ? target : "", tl);
    len += tl;
    gd_sha256(out, in, len);
    gd_wipe(in, sizeof in);
}

const Gonka__Diloco__V1__Member *gd_member_lookup(const gd_member *n, const char *address) {
    const Gonka__Diloco__V1__QueryRunResponse *r = n->ans.run;
    for (size_t i = 0; r && i < r->n_members; i++)
        if (strcmp(r->members[i]->address, address) == 0)
            return r->members[i];
    return NULL;
}

gd_status gd_member_engine(gd_member *n) {
    if (n->engine_open)
        return GD_OK;
    if (n->ans.run == NULL || n->ans.run->run == NULL || n->ans.run->run->spec == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "run %" PRIu64 " has no spec", n->o.run);
    gd_engine_host host = {.threads = n->o.threads, .backend = n->o.backend, .gpus = n->o.gpus,
                           .data_paths = n->o.data_paths, .n_data_paths = n->o.n_data_paths};
    /* What this node remembers of its data files' hashes: a restart reads
     * again only files that changed. */
    gd_data_memo memo = {0};
    gd_data_hash_memo hooks = gd_data_memo_hooks(&memo);
    bool ignored = false;
    if (n->o.state_dir != NULL) {
        GD_TRY(gd_data_memo_load(&memo, n->o.state_dir, &ignored));
        host.data_memo = &hooks;
    }
    if (ignored)
        GD_LOG_WARN("node", "%s: ignored, every data file is hashed again", gd_error_detail());
    gd_status s = gd_engine_open(&n->engine, n->ans.run->run->spec, n->o.run, &host);
    if (s == GD_OK && n->o.state_dir != NULL && gd_data_memo_save(&memo) != GD_OK)
        GD_LOG_WARN("node", "%s (the next start hashes the data again)", gd_error_detail());
    gd_data_memo_free(&memo);
    GD_TRY(s);
    n->engine_open = true;
    return GD_OK;
}

int64_t gd_member_fetch_deadline(const gd_member *n) {
    const gd_chain_view *v = &n->view.view;
    int64_t end = v->have_round ? gd_round_window_end(&v->round.windows, v->height + 1) : 0;
    if (end == 0 || n->block_ms <= 0)
        return 0;
    /* The blocks left in the window, less one for the answer to land. */
    double left = (double)(end - v->height - 2) * n->block_ms;
    return gd_clock_ms() + (left > GD_MEMBER_FETCH_MIN_MS ? (int64_t)left : GD_MEMBER_FETCH_MIN_MS);
}

/* The artifact URL of address and req with its deadline. */
static gd_status gd_member_fetch_target(gd_member *n, const char *address,
                                        const gd_artifact_req *req, const char **url,
                                        gd_artifact_req *timed) {
    const Gonka__Diloco__V1__Member *m = gd_member_lookup(n, address);
    if (m == NULL || m->artifact_url == NULL || m->artifact_url[0] == '\0')
        return gd_fail(GD_ERR_NOT_FOUND, "%s records no artifact URL", address);
    *url = m->artifact_url;
    *timed = *req;
    if (timed->deadline_ms == 0)
        timed->deadline_ms = gd_member_fetch_deadline(n);
    return GD_OK;
}

static void gd_member_count_in(gd_member *n, const gd_artifact_answer *a) {
    pthread_mutex_lock(&n->mu);
    n->stats.bytes_in += a->body.len + a->proof.len;
    pthread_mutex_unlock(&n->mu);
}

gd_status gd_member_fetch_wait(gd_member *n, const char *address, const gd_artifact_req *req,
                               size_t max_len, gd_artifact_answer *out) {
    memset(out, 0, sizeof *out);
    const char *url = NULL;
    gd_artifact_req timed;
    GD_TRY(gd_member_fetch_target(n, address, req, &url, &timed));
    GD_TRY(n->peers.iface->fetch(n->peers.ctx, url, &timed, max_len, out));
    gd_member_count_in(n, out);
    return GD_OK;
}

gd_status gd_member_fetch(gd_member *n, const char *address, const gd_artifact_req *req,
                        size_t max_len, gd_artifact_answer *out) {
    if (n->fetch_pool == NULL)
        return gd_member_fetch_wait(n, address, req, max_len, out);
    memset(out, 0, sizeof *out);
    const char *url = NULL;
    gd_artifact_req timed;
    GD_TRY(gd_member_fetch_target(n, address, req, &url, &timed));
    GD_TRY(gd_fetch_pool_take(n->fetch_pool, address, url, &timed, max_len, out));
    gd_member_count_in(n, out);
    return GD_OK;
}

void gd_member_fetch_drop(gd_member *n, const char *address, const gd_artifact_req *req,
                          size_t max_len) {
    if (n->fetch_pool != NULL)
        gd_fetch_pool_drop(n->fetch_pool, address, req, max_len);
}

gd_status gd_member_fetch_ready(gd_member *n, const char *address, const gd_artifact_req *req,
                                size_t max_len) {
    if (n->fetch_pool == NULL)
        return GD_OK;
    const char *url = NULL;
    gd_artifact_req timed;
    GD_TRY(gd_member_fetch_target(n, address, req, &url, &timed));
    return gd_fetch_pool_ready(n->fetch_pool, address, url, &timed, max_len);
}

void gd_member_recycle_wait(gd_member *n, gd_buf *b) {
    if (n->peers.iface->recycle != NULL)
        n->peers.iface->recycle(n->peers.ctx, b);
    else
        gd_buf_free(b);
}

void gd_member_recycle(gd_member *n, gd_buf *b) {
    if (n->fetch_pool != NULL)
        gd_fetch_pool_recycle(n->fetch_pool, b);
    else
        gd_member_recycle_wait(n, b);
}

/* --- the step ------------------------------------------------------------------------------ */

static uint64_t gd_coin_u64(const char *amount) {
    if (amount == NULL || amount[0] < '0' || amount[0] > '9')
        return 0;
    char *end = NULL;
    unsigned long long v = strtoull(amount, &end, 10);
    return end && *end == '\0' ? (uint64_t)v : 0;
}

/* Reads the chain into the node's answers and view; updates the stats. */
static gd_status gd_member_read(gd_member *n) {
    n->read_ms = gd_clock_ms();
    gd_chain_view_free(&n->view);
    gd_chain_answers_free(&n->ans);
    int64_t height = 0;
    gd_claim_state claims = {false, 0};
    gd_status s = n->chain.iface->read(n->chain.ctx, n->o.run, n->address, &n->ans, &height,
                                       &claims);
    /* An outage goes into the node's errors once, when it begins. */
    if (s != GD_OK && s != GD_ERR_NOMEM && s != GD_ERR_CANCELLED && !n->chain_down) {
        n->chain_down = true;
        gd_member_error(n, "the chain cannot be read: %s", gd_error_detail());
    }
    GD_TRY(s);
    n->chain_down = false;
    /* The chain's pace, which turns a window's blocks into a deadline for
     * the fetches of its duties. */
    if (height > n->pace_height) {
        if (n->pace_height > 0) {
            double sample = (double)(n->read_ms - n->pace_ms) / (double)(height - n->pace_height);
            n->block_ms = n->block_ms > 0 ? 0.75 * n->block_ms + 0.25 * sample : sample;
        }
        n->pace_height = height;
        n->pace_ms = n->read_ms;
    }
    uint64_t next = n->ans.run->run ? n->ans.run->run->next_round : 0;
    GD_TRY(gd_chain_view_build(&n->view, n->address, height, n->ans.run, n->ans.round,
                               n->ans.rewards, &claims, n->journal.sealed_upto > next));
    const gd_chain_view *v = &n->view.view;
    const Gonka__Diloco__V1__Member *me = gd_member_lookup(n, n->address);
    uint64_t bonded = me ? gd_coin_u64(me->collateral) : 0;
    if (me && n->journal.bonded == 0 && bonded > 0) {
        n->journal.bonded = bonded;
        GD_TRY(gd_journal_save(&n->store, &n->journal));
    }
    pthread_mutex_lock(&n->mu);
    gd_member_stats *st = &n->stats;
    st->height = v->height;
    st->have_round = v->have_round;
    st->round = v->round.index;
    st->round_over = v->have_round && v->round.over;
    st->windows = v->round.windows;
    st->window = v->have_round ? gd_round_window_at(&v->round.windows, v->height + 1)
                               : GD_WINDOW_NONE;
    if (me && n->journal.bonded > bonded && !me->leaving)
        st->slashed = n->journal.bonded - bonded;
    pthread_mutex_unlock(&n->mu);
    return GD_OK;
}

/* A new round: what was fetched for the old one goes. */
static void gd_member_round_cache(gd_member *n) {
    const gd_chain_view *v = &n->view.view;
    if (!v->have_round || v->round.index == n->cache_round)
        return;
    gd_member_drop_payloads(n, true);
    n->n_answers = 0;
    n->cache_round = v->round.index;
    if (n->fetch_pool != NULL)
        gd_fetch_pool_forget_before(n->fetch_pool, n->cache_round);
    n->n_suspects = 0; /* a new round's duties deserve a fresh try */
    /* Round r's checks read r - 1's transcripts, and state sync reads the
     * newest G: everything older has settled and nobody reads it. */
    if (v->round.index >= 2 &&
        gd_artifact_prune(&n->store, n->o.run, v->round.index - 1) != GD_OK)
        gd_member_error(n, "pruning rounds below %" PRIu64 ": %s", v->round.index - 1,
                        gd_error_detail());
}

static bool gd_action_same(const gd_action *a, const gd_action *b) {
    return a->kind == b->kind && a->round == b->round && a->epoch == b->epoch &&
           a->check == b->check && strcmp(a->target, b->target) == 0;
}

static size_t gd_member_suspect_at(const gd_member *n, const gd_action *a) {
    size_t i = 0;
    while (i < n->n_suspects && !gd_action_same(a, &n->suspects[i]))
        i++;
    return i;
}

/* A refused transaction of one duty names the duty; of several, none (the
 * chain refuses the whole transaction): the next steps send one duty each
 * until one is refused alone. */
static void gd_member_refused(gd_member *n, const gd_action *acts, size_t n_acts) {
    if (n_acts != 1) {
        n->solo = true;
        return;
    }
    n->solo = false;
    if (gd_member_suspect_at(n, &acts[0]) == n->n_suspects && n->n_suspects < GD_MEMBER_MSGS_MAX)
        n->suspects[n->n_suspects++] = acts[0];
}

static void gd_member_accepted(gd_member *n, const gd_action *acts, size_t n_acts) {
    n->solo = false;
    for (size_t i = 0; i < n_acts; i++) {
        size_t at = gd_member_suspect_at(n, &acts[i]);
        if (at < n->n_suspects)
            n->suspects[at] = n->suspects[--n->n_suspects];
    }
}

/* What the step sends: its duties with the suspects set aside (they never
 * hold up the others, however often the chain refuses them), or, when
 * nothing else is due, the first suspect alone to try it again; while solo,
 * one duty per transaction. */
static size_t gd_member_due(const gd_member *n, gd_action *acts, size_t n_acts) {
    size_t kept = 0, first_suspect = n_acts;
    for (size_t i = 0; i < n_acts; i++) {
        if (gd_member_suspect_at(n, &acts[i]) == n->n_suspects)
            acts[kept++] = acts[i];
        else if (first_suspect == n_acts)
            first_suspect = i;
    }
    if (kept == 0 && first_suspect < n_acts) {
        acts[0] = acts[first_suspect];
        kept = 1;
    }
    return kept;
}

/* What the chain said of a transaction of n_acts duties (s: how sending or
 * settling it went, code and log: its result): logged, and the journal,
 * stats and done (the duties accepted) follow what it accepted. */
static gd_status gd_member_outcome(gd_member *n, gd_status s, uint32_t code, const char *log,
                                   const gd_action *acts, size_t n_acts, size_t *done) {
    int64_t h = n->view.view.height;
    if (s == GD_ERR_CANCELLED)
        return s; /* the node stops; the duty is due again after a restart */
    if (s != GD_OK) {
        gd_member_error(n, "height %" PRId64 ": sending %s (round %" PRIu64 "): %s", h,
                      gd_action_names[acts[0].kind], acts[0].round, gd_error_detail());
        return GD_OK; /* due again next step */
    }
    if (code != 0) {
        gd_member_refused(n, acts, n_acts);
        gd_member_error(n, "height %" PRId64 ": %s (round %" PRIu64 ") refused with code %u: %s", h,
                      gd_action_names[acts[0].kind], acts[0].round, code, log);
        return GD_OK;
    }
    gd_member_accepted(n, acts, n_acts);
    *done += n_acts;
    for (size_t i = 0; i < n_acts; i++) {
        GD_LOG_INFO("node", "height %" PRId64 ": %s round %" PRIu64 "%s%s done", h,
                    gd_action_names[acts[i].kind], acts[i].round, acts[i].target[0] ? " " : "",
                    acts[i].target);
        if (acts[i].kind == GD_ACT_SEAL_SECRET && n->journal.sealed_upto <= acts[i].round) {
            n->journal.sealed_upto = acts[i].round + 1;
            GD_TRY(gd_journal_save(&n->store, &n->journal));
        }
        if (acts[i].kind == GD_ACT_JOIN || acts[i].kind == GD_ACT_LEAVE) {
            n->journal.join_sent |= acts[i].kind == GD_ACT_JOIN;
            GD_TRY(gd_journal_save(&n->store, &n->journal));
        }
        if (acts[i].kind == GD_ACT_COMMIT) {
            pthread_mutex_lock(&n->mu);
            n->stats.committed[n->stats.n_committed++ % GD_MEMBER_COMMITTED] = acts[i].round;
            pthread_mutex_unlock(&n->mu);
        }
        if (acts[i].kind == GD_ACT_CLAIM) {
            pthread_mutex_lock(&n->mu);
            n->stats.rewards_claimed += n->view.view.owed;
            pthread_mutex_unlock(&n->mu);
        }
    }
    return GD_OK;
}

/* Waits for every transaction sent ahead and takes what the chain said of
 * each, in the order sent; done counts the duties accepted. */
static gd_status gd_member_settle(gd_member *n, size_t *done) {
    gd_status first = GD_OK;
    for (size_t i = 0; i < n->n_waiting; i++) {
        uint32_t code = 0;
        char log[256] = "";
        gd_status s = n->chain.iface->settle(n->chain.ctx, n->waiting[i].ticket, &code, log,
                                             sizeof log);
        s = gd_member_outcome(n, s, code, log, n->waiting[i].acts, n->waiting[i].n_acts, done);
        if (s != GD_OK && first == GD_OK)
            first = s;
    }
    n->n_waiting = 0;
    return first;
}

/* Sends one transaction of n_acts duties: ahead, where the chain port can
 * (settled by gd_member_settle), else waiting for its block. done counts
 * the duties accepted so far. */
static gd_status gd_member_send(gd_member *n, const gd_any *msgs, size_t n_msgs,
                                const gd_action *acts, size_t n_acts, size_t *done) {
    uint32_t code = 0, ticket = 0;
    char log[256] = "";
    if (n->chain.iface->send == NULL) {
        gd_status s = n->chain.iface->submit(n->chain.ctx, &n->key, msgs, n_msgs, &code, log,
                                             sizeof log);
        return gd_member_outcome(n, s, code, log, acts, n_acts, done);
    }
    if (n->n_waiting == GD_MEMBER_WAITING)
        GD_TRY(gd_member_settle(n, done));
    gd_status s = n->chain.iface->send(n->chain.ctx, &n->key, msgs, n_msgs, &ticket, &code, log,
                                       sizeof log);
    if (s != GD_OK || code != 0) /* not admitted: nothing waits */
        return gd_member_outcome(n, s, code, log, acts, n_acts, done);
    n->waiting[n->n_waiting].ticket = ticket;
    memcpy(n->waiting[n->n_waiting].acts, acts, n_acts * sizeof *acts);
    n->waiting[n->n_waiting].n_acts = n_acts;
    n->n_waiting++;
    return GD_OK;
}

gd_status gd_member_observe(gd_member *n) { return gd_member_read(n); }

bool gd_member_others_due(gd_member *n, const gd_action *self) {
    if (n->stop != NULL && *n->stop)
        return true;
    unsigned every = n->o.ahead_read_ms ? n->o.ahead_read_ms : GD_MEMBER_AHEAD_READ_MS;
    if (gd_clock_ms() - n->read_ms < (int64_t)every)
        return false;
    int64_t before = n->view.view.height;
    n->reread = true;
    if (gd_member_read(n) != GD_OK)
        return true;
    /* The duties of this height went before this one. */
    if (n->view.view.height == before)
        return false;
    gd_duty_config cfg = {n->o.roles, n->o.join};
    gd_action acts[GD_MEMBER_MSGS_MAX];
    size_t n_acts = 0;
    (void)gd_round_driver_step(&cfg, &n->view.view, &n->journal, acts, GD_MEMBER_MSGS_MAX, &n_acts);
    n_acts = gd_member_due(n, acts, n_acts);
    for (size_t i = 0; i < n_acts; i++)
        if (!gd_action_same(&acts[i], self))
            return true;
    return false;
}

void gd_member_stop_on(gd_member *n, const volatile int *stop) { n->stop = stop; }

/* Sends the messages gathered so far in one transaction and empties the
 * batch. */
static gd_status gd_member_flush(gd_member *n, gd_any *msgs, size_t *n_msgs, gd_action *sent,
                                 size_t *n_sent, size_t *done) {
    gd_status s = gd_member_send(n, msgs, *n_msgs, sent, *n_sent, done);
    for (size_t k = 0; k < *n_msgs; k++)
        gd_any_free(&msgs[k]);
    *n_msgs = *n_sent = 0;
    return s;
}

gd_status gd_member_before_compute(gd_member *n) {
    n->computed = true;
    if (n->outbox.msgs == NULL || *n->outbox.n_msgs == 0)
        return GD_OK;
    (*n->outbox.flushes)++;
    return gd_member_flush(n, n->outbox.msgs, n->outbox.n_msgs, n->outbox.sent,
                           n->outbox.n_sent, n->outbox.done);
}

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
    const gd_global_state *g = n->have_next ? &n->next : &n->g;
    *round = n->have_next ? n->g_round + 1 : n->g_round;
    return gd_engine_global_hash(&n->engine, g, hash) == GD_OK;
}

double gd_member_eval_loss(gd_member *n, size_t batches) {
    double loss = NAN;
    if (!n->have_g || !n->engine_open)
        return NAN;
    const gd_global_state *g = n->have_next ? &n->next : &n->g;
    if (gd_engine_eval(&n->engine, g, batches, &loss) != GD_OK)
        return NAN;
    return loss;
}
