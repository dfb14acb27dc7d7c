/* What every part of a member shares (plugin/member/member_internal.h):
 * recording a failed duty, the salts and secrets derived from the key, the
 * engine, and reading the step's chain answers (a member of the run, a
 * commitment of the round, the round's start hash, whether a duty may wait
 * for a later block). It calls no other member file. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/hash.h"
#include "common/log.h"
#include "common/secure.h"
#include "plugin/member/data_memo.h"
#include "plugin/member/member_internal.h"

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
                           .memory = n->o.memory,
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
    gd_member_memory_plan(n); /* what G keeps in memory, before it is first loaded */
    return GD_OK;
}

const Gonka__Diloco__V1__Commitment *
gd_commitment_in(const Gonka__Diloco__V1__QueryRoundResponse *q, const char *address) {
    for (size_t i = 0; q && i < q->n_commitments; i++)
        if (strcmp(q->commitments[i]->participant, address) == 0)
            return q->commitments[i];
    return NULL;
}

/* The round's start state hash as the chain records it. */
gd_status gd_start_hash(const gd_member *n, uint8_t out[32]) {
    const Gonka__Diloco__V1__Round *r = gd_member_round(n);
    if (r == NULL || r->start_state_hash.len != 32)
        return gd_fail(GD_ERR_NOT_FOUND, "the round has no start state hash");
    memcpy(out, r->start_state_hash.data, 32);
    return GD_OK;
}

/* Whether a check whose target does not answer may wait for a later block
 * of its window [start, end) rather than be answered UNAVAILABLE now.
 * Waiting until the last height that can still land (h + 2 = end) left one
 * height to answer at, and a node misses it: a step with re-executions or
 * a transaction's wait for its block skips heights, and the view can be a
 * block old when the answer is sent, so it lands after the window. Either
 * way the check went unanswered and the validator paid the skip slash. So
 * the answer is given once fewer than a third of the window (at least four
 * blocks) remain after the view's height: a validator answering many
 * checks of one window one after another, each waiting out a withholder,
 * still lands them all, and one sent at the first such height lands in time
 * even a few blocks late. Never at the window's first height while a later
 * one can still land: a target serves its states only once its own view
 * reaches the window, which may be a block after the checker's. */
bool gd_can_wait(const gd_member *n, int64_t start, int64_t end) {
    int64_t h = n->view.view.height;
    int64_t margin = (end - start) / 3 > 4 ? (end - start) / 3 : 4;
    return h + 2 < end && (h + margin < end || h <= start);
}
