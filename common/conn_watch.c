/* Request deadlines for a server's connections (common/conn_watch.h). */
#include "common/conn_watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "common/clock.h"

#define GD_CONN_WATCH_TICK_MS 100

struct gd_conn_slot {
    int fd;
    bool armed;
    bool shut;             /* shut down once; the library closes it */
    int64_t due_ms;        /* CLOCK_MONOTONIC */
    gd_conn_slot *prev, *next;
};

struct gd_conn_watch {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t thread;
    bool stopping;
    uint32_t deadline_ms;
    gd_conn_slot *head;
    uint64_t expired;
};

/* Shuts down, under the lock, every armed connection past its deadline.
 * The lock is what makes shutdown(2) safe: a slot is removed (under it)
 * before the library closes the socket, so the fd is never one that has
 * been closed and reused. */
static void gd_conn_sweep(gd_conn_watch *w, int64_t now) {
    for (gd_conn_slot *s = w->head; s; s = s->next) {
        if (!s->armed || s->shut || now < s->due_ms)
            continue;
        s->shut = true;
        w->expired++;
        (void)shutdown(s->fd, SHUT_RDWR);
    }
}

static void *gd_conn_watch_main(void *arg) {
    gd_conn_watch *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += GD_CONN_WATCH_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        int rc = 0;
        while (!w->stopping && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&w->wake, &w->mu, &until);
        if (!w->stopping)
            gd_conn_sweep(w, gd_clock_ms());
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

gd_status gd_conn_watch_start(gd_conn_watch **out, uint32_t deadline_ms) {
    *out = NULL;
    if (deadline_ms == 0)
        return gd_fail(GD_ERR_INVALID, "a request deadline of 0 ms");
    gd_conn_watch *w = calloc(1, sizeof *w);
    if (w == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    w->deadline_ms = deadline_ms;
    pthread_condattr_t ca;
    bool ok = pthread_condattr_init(&ca) == 0;
    ok = ok && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    ok = ok && pthread_cond_init(&w->wake, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!ok || pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        return gd_fail(GD_ERR_NOMEM, "cannot set up the connection watch");
    }
    if (pthread_create(&w->thread, NULL, gd_conn_watch_main, w) != 0) {
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return gd_fail(GD_ERR_NOMEM, "cannot start the connection watch's thread");
    }
    *out = w;
    return GD_OK;
}

void gd_conn_watch_stop(gd_conn_watch *w) {
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    while (w->head) { /* a caller that did not remove them all */
        gd_conn_slot *s = w->head;
        w->head = s->next;
        free(s);
    }
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

gd_conn_slot *gd_conn_watch_add(gd_conn_watch *w, int fd) {
    gd_conn_slot *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->fd = fd;
    pthread_mutex_lock(&w->mu);
    s->armed = true;
    s->due_ms = gd_clock_ms() + w->deadline_ms;
    s->next = w->head;
    if (w->head)
        w->head->prev = s;
    w->head = s;
    pthread_mutex_unlock(&w->mu);
    return s;
}

void gd_conn_watch_disarm(gd_conn_watch *w, gd_conn_slot *s) {
    if (s == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    s->armed = false;
    pthread_mutex_unlock(&w->mu);
}

void gd_conn_watch_arm(gd_conn_watch *w, gd_conn_slot *s) {
    if (s == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    s->armed = true;
    s->due_ms = gd_clock_ms() + w->deadline_ms;
    pthread_mutex_unlock(&w->mu);
}

void gd_conn_watch_remove(gd_conn_watch *w, gd_conn_slot *s) {
    if (s == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    if (s->prev)
        s->prev->next = s->next;
    else
        w->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    pthread_mutex_unlock(&w->mu);
    free(s);
}

uint64_t gd_conn_watch_expired(gd_conn_watch *w) {
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->expired;
    pthread_mutex_unlock(&w->mu);
    return n;
}
