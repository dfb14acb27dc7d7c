/* Fetches from peers (plugin/member/member_internal.h): through the fetch
 * pool's threads or the peer port on the step, each by a deadline the
 * current window sets, counted in bytes_in; and the bodies given back to
 * fetch into again. */
#include <string.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "common/file.h"
#include "plugin/member/member_internal.h"

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

gd_status gd_member_answer_landed(gd_member *n, gd_artifact_answer *a,
                                 const gd_artifact_req *req) {
    uint64_t body = a->body.len;
    gd_status s = GD_OK;
    if (req->into != NULL && a->path[0] == '\0') {
        gd_file_atomic f;
        s = gd_file_atomic_begin(&f, req->into, 0600);
        if (s == GD_OK) {
            s = gd_file_atomic_append(&f, a->body.data, a->body.len);
            if (s == GD_OK)
                s = gd_file_atomic_commit_unsynced(&f);
            gd_file_atomic_abort(&f);
        }
        if (s != GD_OK && s != GD_ERR_NOMEM) /* this node's disk, never the peer's */
            s = gd_fail_context(GD_ERR_IO, "keeping an answer in %s", req->into);
        gd_buf_free(&a->body);
        if (s == GD_OK)
            snprintf(a->path, sizeof a->path, "%s", req->into);
    } else if (req->into != NULL) {
        struct stat st;
        body = stat(a->path, &st) == 0 ? (uint64_t)st.st_size : 0;
    }
    if (s != GD_OK) {
        gd_artifact_answer_free(a);
        return s;
    }
    pthread_mutex_lock(&n->mu);
    n->stats.bytes_in += body + a->proof.len;
    pthread_mutex_unlock(&n->mu);
    return GD_OK;
}

gd_status gd_member_fetch_wait(gd_member *n, gd_artifact_answer *out, const char *address,
                               const gd_artifact_req *req, size_t max_len) {
    memset(out, 0, sizeof *out);
    const char *url = NULL;
    gd_artifact_req timed;
    GD_TRY(gd_member_fetch_target(n, address, req, &url, &timed));
    GD_TRY(n->peers.iface->fetch(n->peers.ctx, out, url, &timed, max_len));
    return gd_member_answer_landed(n, out, req);
}

gd_status gd_member_fetch(gd_member *n, gd_artifact_answer *out, const char *address,
                        const gd_artifact_req *req, size_t max_len) {
    if (n->fetch_pool == NULL)
        return gd_member_fetch_wait(n, out, address, req, max_len);
    memset(out, 0, sizeof *out);
    const char *url = NULL;
    gd_artifact_req timed;
    GD_TRY(gd_member_fetch_target(n, address, req, &url, &timed));
    GD_TRY(gd_fetch_pool_take(n->fetch_pool, out, address, url, &timed, max_len));
    return gd_member_answer_landed(n, out, req);
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

/* One artifact of the target into body (and its proof, for a chunk, into
 * proof; NULL otherwise). */
gd_status gd_fetch_into(gd_member *n, const char *target, const gd_artifact_req *req,
                        size_t max, gd_buf *body, gd_buf *proof) {
    gd_artifact_answer a;
    GD_TRY(gd_member_fetch(n, &a, target, req, max));
    *body = a.body;
    a.body = (gd_buf){0};
    if (proof != NULL) {
        *proof = a.proof;
        a.proof = (gd_buf){0};
    }
    gd_artifact_answer_free(&a);
    return GD_OK;
}
