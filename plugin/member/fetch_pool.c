/* Fetches beside the step (plugin/member/fetch_pool.h). One mutex guards the job
 * list; a thread takes the oldest queued job, fetches it unlocked on its
 * own port, and files the answer. A job nobody will take any more (its
 * round forgotten, or the pool closing) is cancelled: the thread that
 * holds it frees it when its transfer returns. */
#include "plugin/member/fetch_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/keys/address.h"
#include "chain/wire/diloco_msg.h"

typedef enum gd_job_state { GD_JOB_QUEUED, GD_JOB_RUNNING, GD_JOB_DONE } gd_job_state;

typedef struct gd_fetch_job {
    char who[GD_ADDRESS_STR_MAX];
    char url[GD_DILOCO_URL_MAX + 1];
    gd_artifact_req req;
    char *into; /* req.into's copy (the job outlives the asker's string) */
    size_t max_len;
    gd_job_state state;
    atomic_int cancel; /* read by the transfer's progress callback */
    bool orphan;       /* running, and no longer listed: its thread frees it */
    gd_status status;
    char why[256];
    gd_artifact_answer answer;
} gd_fetch_job;

typedef struct gd_fetch_thread {
    gd_fetch_pool *pool;
    gd_peer_port port;
    pthread_t thread;
    bool started;
} gd_fetch_thread;

struct gd_fetch_pool {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    bool stop;
    gd_fetch_job **jobs; /* in the order asked */
    size_t n_jobs;
    gd_buf returned[GD_FETCH_POOL_RETURNED]; /* bodies given back, for a port to reuse */
    size_t n_returned;
    gd_fetch_thread threads[GD_FETCH_POOL_THREADS];
    size_t n_threads;
};

static void gd_job_free(gd_fetch_job *j) {
    gd_artifact_answer_free(&j->answer);
    free(j->into);
    free(j);
}

/* The same answer: whose, and every field of the request that changes
 * what comes back. */
static bool gd_job_is(const gd_fetch_job *j, const char *who, const gd_artifact_req *req,
                      size_t max_len) {
    return j->req.kind == req->kind && j->req.run == req->run && j->req.round == req->round &&
           j->req.leaf == req->leaf && j->req.chunk == req->chunk &&
           j->req.first_bytes == req->first_bytes && j->max_len == max_len &&
           (j->into == NULL) == (req->into == NULL) &&
           (j->into == NULL || strcmp(j->into, req->into) == 0) && strcmp(j->who, who) == 0;
}

/* The oldest queued job, marked running; NULL once the pool stops. */
static gd_fetch_job *gd_next_job(gd_fetch_pool *p) {
    for (;;) {
        if (p->stop)
            return NULL;
        for (size_t i = 0; i < p->n_jobs; i++)
            if (p->jobs[i]->state == GD_JOB_QUEUED) {
                p->jobs[i]->state = GD_JOB_RUNNING;
                return p->jobs[i];
            }
        pthread_cond_wait(&p->wake, &p->mu);
    }
}

static void *gd_fetch_thread_main(void *arg) {
    gd_fetch_thread *t = arg;
    gd_fetch_pool *p = t->pool;
    pthread_mutex_lock(&p->mu);
    for (gd_fetch_job *j; (j = gd_next_job(p)) != NULL;) {
        gd_artifact_req req = j->req;
        req.cancel = &j->cancel;
        gd_buf reuse = p->n_returned > 0 ? p->returned[--p->n_returned] : (gd_buf){0};
        pthread_mutex_unlock(&p->mu);
        /* Only this thread uses its port: the body goes to it here. */
        if (reuse.cap > 0 && t->port.iface->recycle != NULL)
            t->port.iface->recycle(t->port.ctx, &reuse);
        gd_buf_free(&reuse);
        gd_artifact_answer answer;
        gd_status s = t->port.iface->fetch(t->port.ctx, &answer, j->url, &req, j->max_len);
        char why[256];
        snprintf(why, sizeof why, "%s", s == GD_OK ? "" : gd_error_detail());
        pthread_mutex_lock(&p->mu);
        if (j->orphan) {
            if (s == GD_OK)
                gd_artifact_answer_free(&answer);
            gd_job_free(j);
            continue;
        }
        j->status = s;
        memcpy(j->why, why, sizeof why);
        if (s == GD_OK)
            j->answer = answer;
        j->state = GD_JOB_DONE;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

gd_status gd_fetch_pool_open(gd_fetch_pool **out, gd_peer_port base, size_t threads) {
    *out = NULL;
    if (base.iface->open_another == NULL || base.iface->close == NULL)
        return gd_fail(GD_ERR_INVALID, "this peer port serves one thread only");
    if (threads < 1 || threads > GD_FETCH_POOL_THREADS)
        return gd_fail(GD_ERR_INVALID, "a fetch pool of %zu threads (1 to %d)", threads,
                       GD_FETCH_POOL_THREADS);
    gd_fetch_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < threads; i++) {
        gd_fetch_thread *t = &p->threads[i];
        t->pool = p;
        s = base.iface->open_another(base.ctx, &t->port);
        if (s != GD_OK)
            break;
        p->n_threads++;
        if (pthread_create(&t->thread, NULL, gd_fetch_thread_main, t) != 0)
            s = gd_fail(GD_ERR_NOMEM, "cannot start a fetch thread");
        else
            t->started = true;
    }
    if (s != GD_OK) {
        gd_fetch_pool_close(p);
        return s;
    }
    *out = p;
    return GD_OK;
}

void gd_fetch_pool_close(gd_fetch_pool *p) {
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    for (size_t i = 0; i < p->n_jobs; i++)
        atomic_store(&p->jobs[i]->cancel, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < p->n_threads; i++) {
        if (p->threads[i].started)
            pthread_join(p->threads[i].thread, NULL);
        p->threads[i].port.iface->close(p->threads[i].port.ctx);
    }
    for (size_t i = 0; i < p->n_jobs; i++)
        gd_job_free(p->jobs[i]);
    free(p->jobs);
    for (size_t i = 0; i < p->n_returned; i++)
        gd_buf_free(&p->returned[i]);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* The job of (who, req), queued now if there is none; under the lock. */
static gd_status gd_find_or_queue(gd_fetch_pool *p, const char *who, const char *url,
                                  const gd_artifact_req *req, size_t max_len,
                                  size_t *at) {
    for (size_t i = 0; i < p->n_jobs; i++)
        if (gd_job_is(p->jobs[i], who, req, max_len)) {
            *at = i;
            return GD_OK;
        }
    if (p->n_jobs >= GD_FETCH_POOL_JOBS_MAX)
        return gd_fail(GD_ERR_LIMIT, "%d fetches are waiting already", GD_FETCH_POOL_JOBS_MAX);
    if (strlen(who) >= GD_ADDRESS_STR_MAX || strlen(url) > GD_DILOCO_URL_MAX)
        return gd_fail(GD_ERR_INVALID, "an address or artifact URL too long to fetch from");
    gd_fetch_job **grown = realloc(p->jobs, (p->n_jobs + 1) * sizeof *grown);
    if (grown == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    p->jobs = grown;
    gd_fetch_job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    snprintf(j->who, sizeof j->who, "%s", who);
    snprintf(j->url, sizeof j->url, "%s", url);
    j->req = *req;
    j->req.cancel = NULL;
    if (req->into != NULL && (j->into = strdup(req->into)) == NULL) {
        free(j);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    j->req.into = j->into;
    j->max_len = max_len;
    atomic_init(&j->cancel, 0);
    j->state = GD_JOB_QUEUED;
    *at = p->n_jobs;
    p->jobs[p->n_jobs++] = j;
    pthread_cond_signal(&p->wake);
    return GD_OK;
}

static void gd_remove_at(gd_fetch_pool *p, size_t i) {
    memmove(&p->jobs[i], &p->jobs[i + 1], (p->n_jobs - i - 1) * sizeof *p->jobs);
    p->n_jobs--;
}

gd_status gd_fetch_pool_ready(gd_fetch_pool *p, const char *who, const char *url,
                              const gd_artifact_req *req, size_t max_len) {
    pthread_mutex_lock(&p->mu);
    size_t at = 0;
    gd_status s = gd_find_or_queue(p, who, url, req, max_len, &at);
    if (s == GD_OK && p->jobs[at]->state != GD_JOB_DONE)
        s = gd_fail(GD_ERR_PENDING, "fetching from %s", who);
    pthread_mutex_unlock(&p->mu);
    return s;
}

gd_status gd_fetch_pool_take(gd_fetch_pool *p, gd_artifact_answer *out, const char *who,
                             const char *url, const gd_artifact_req *req,
                             size_t max_len) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    size_t at = 0;
    gd_status s = gd_find_or_queue(p, who, url, req, max_len, &at);
    if (s == GD_OK && p->jobs[at]->state != GD_JOB_DONE)
        s = gd_fail(GD_ERR_PENDING, "fetching from %s", who);
    else if (s == GD_OK) {
        gd_fetch_job *j = p->jobs[at];
        gd_remove_at(p, at);
        s = j->status;
        if (s == GD_OK) {
            *out = j->answer;
            j->answer = (gd_artifact_answer){0};
        } else {
            gd_fail(s, "%s", j->why);
        }
        gd_job_free(j);
    }
    pthread_mutex_unlock(&p->mu);
    return s;
}

/* Unlists job i: freed, or (running) cancelled and left to its thread. */
static void gd_unlist(gd_fetch_pool *p, size_t i) {
    gd_fetch_job *j = p->jobs[i];
    gd_remove_at(p, i);
    if (j->state == GD_JOB_RUNNING) {
        atomic_store(&j->cancel, 1);
        j->orphan = true; /* its thread frees it */
    } else {
        gd_job_free(j);
    }
}

void gd_fetch_pool_drop(gd_fetch_pool *p, const char *who, const gd_artifact_req *req,
                        size_t max_len) {
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->n_jobs; i++)
        if (gd_job_is(p->jobs[i], who, req, max_len)) {
            gd_unlist(p, i);
            break;
        }
    pthread_mutex_unlock(&p->mu);
}

void gd_fetch_pool_forget_before(gd_fetch_pool *p, uint64_t round) {
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->n_jobs;) {
        if (p->jobs[i]->req.round + 1 >= round)
            i++;
        else
            gd_unlist(p, i);
    }
    pthread_mutex_unlock(&p->mu);
}

void gd_fetch_pool_recycle(gd_fetch_pool *p, gd_buf *b) {
    pthread_mutex_lock(&p->mu);
    if (b->cap > 0 && p->n_returned < GD_FETCH_POOL_RETURNED) {
        p->returned[p->n_returned++] = *b;
        *b = (gd_buf){0};
    }
    pthread_mutex_unlock(&p->mu);
    gd_buf_free(b);
}

size_t gd_fetch_pool_pending(gd_fetch_pool *p) {
    pthread_mutex_lock(&p->mu);
    size_t n = 0;
    for (size_t i = 0; i < p->n_jobs; i++)
        n += p->jobs[i]->state != GD_JOB_DONE;
    pthread_mutex_unlock(&p->mu);
    return n;
}
