/* The order of device work across streams (README.md, "What it catches").
 * Work runs at once here, so a missing wait between two streams changes
 * no result in the emulator; on a GPU it is a race. So each stream keeps a
 * vector clock: its own count of ops, and the latest op of every other
 * stream it is known to follow. An op on stream s follows what s followed
 * before, what the host had waited for when it issued the op, and what
 * the events s waits on had recorded. Each allocation remembers the op
 * that last wrote it and the last op of each stream that read it; an op
 * that reads memory whose last write it does not follow, or writes memory
 * whose reads or write it does not follow, stops the process. A kernel's
 * pointer argument to const is a read, any other a write. One host clock
 * serves every host thread (a wait on one thread orders what another
 * issues after it, as the trainer's meetings do), so a race between host
 * threads is not caught; a race between streams is. */
#include <pthread.h>
#include <string.h>

#include "tests/cuda_emu/emu.h"

static pthread_mutex_t gd_emu_order_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t gd_emu_clock[GD_EMU_STREAMS][GD_EMU_STREAMS];
static uint64_t gd_emu_host_clock[GD_EMU_STREAMS];
static int gd_emu_named = GD_EMU_DEFAULT_STREAMS; /* ids below: each device's default stream */
static int gd_emu_running = -1;                   /* the running op's stream */
static const char *gd_emu_running_what = "";

static void gd_emu_join(uint64_t *into, const uint64_t *from) {
    for (int t = 0; t < GD_EMU_STREAMS; t++)
        if (from[t] > into[t])
            into[t] = from[t];
}

/* Numbers of destroyed streams, for the next ones. */
static int gd_emu_free_ids[GD_EMU_STREAMS];
static int gd_emu_n_free;

int gd_emu_order_stream_new(void) {
    pthread_mutex_lock(&gd_emu_order_lock);
    int id = -1;
    if (gd_emu_n_free > 0) {
        /* A new stream on an old number follows what the host has waited
         * for, and its op count goes on from the old one's, so marks the
         * old stream left never pass for its own. */
        id = gd_emu_free_ids[--gd_emu_n_free];
        uint64_t own = gd_emu_clock[id][id];
        memcpy(gd_emu_clock[id], gd_emu_host_clock, sizeof gd_emu_clock[id]);
        if (own > gd_emu_clock[id][id])
            gd_emu_clock[id][id] = own;
    } else if (gd_emu_named < GD_EMU_STREAMS) {
        id = gd_emu_named++;
    }
    pthread_mutex_unlock(&gd_emu_order_lock);
    if (id < 0)
        gd_emu_fail("more than %d streams at once: the emulator's stream order has no room",
                    GD_EMU_STREAMS - GD_EMU_DEFAULT_STREAMS);
    return id;
}

void gd_emu_order_stream_free(int stream) {
    pthread_mutex_lock(&gd_emu_order_lock);
    gd_emu_free_ids[gd_emu_n_free++] = stream;
    pthread_mutex_unlock(&gd_emu_order_lock);
}

void gd_emu_order_op(int stream, const char *what) {
    pthread_mutex_lock(&gd_emu_order_lock);
    gd_emu_join(gd_emu_clock[stream], gd_emu_host_clock);
    gd_emu_clock[stream][stream]++;
    gd_emu_running = stream;
    gd_emu_running_what = what;
    pthread_mutex_unlock(&gd_emu_order_lock);
}

void gd_emu_order_op_end(void) {
    pthread_mutex_lock(&gd_emu_order_lock);
    gd_emu_running = -1;
    pthread_mutex_unlock(&gd_emu_order_lock);
}

void gd_emu_order_access(gd_emu_order_mark *m, const void *p, bool write) {
    pthread_mutex_lock(&gd_emu_order_lock);
    int s = gd_emu_running;
    if (s < 0)
        gd_emu_fail("device memory %p touched outside an op", p);
    const uint64_t *now = gd_emu_clock[s];
    if (m->written > 0 && m->writer != s && now[m->writer] < m->written)
        gd_emu_fail("%s on stream %d %s %p, which stream %d wrote in its op %llu, without a "
                    "wait for that op: a race on a GPU",
                    gd_emu_running_what, s, write ? "writes" : "reads", p, m->writer,
                    (unsigned long long)m->written);
    if (write)
        for (int r = 0; r < GD_EMU_STREAMS; r++)
            if (r != s && m->read[r] > now[r])
                gd_emu_fail("%s on stream %d writes %p, which stream %d reads in its op %llu, "
                            "without a wait for that op: a race on a GPU",
                            gd_emu_running_what, s, p, r, (unsigned long long)m->read[r]);
    if (write) {
        memset(m->read, 0, sizeof m->read);
        m->writer = s;
        m->written = now[s];
    } else {
        m->read[s] = now[s];
    }
    pthread_mutex_unlock(&gd_emu_order_lock);
}

void gd_emu_order_follow(int stream, int other) {
    pthread_mutex_lock(&gd_emu_order_lock);
    gd_emu_join(gd_emu_clock[stream], gd_emu_clock[other]);
    pthread_mutex_unlock(&gd_emu_order_lock);
}

void gd_emu_order_record(uint64_t *event_clock, int stream) {
    pthread_mutex_lock(&gd_emu_order_lock);
    memcpy(event_clock, gd_emu_clock[stream], sizeof gd_emu_clock[stream]);
    pthread_mutex_unlock(&gd_emu_order_lock);
}

void gd_emu_order_wait(int stream, const uint64_t *event_clock) {
    pthread_mutex_lock(&gd_emu_order_lock);
    gd_emu_join(gd_emu_clock[stream], event_clock);
    pthread_mutex_unlock(&gd_emu_order_lock);
}

void gd_emu_order_host_waits(int stream) {
    pthread_mutex_lock(&gd_emu_order_lock);
    if (stream >= 0) {
        gd_emu_join(gd_emu_host_clock, gd_emu_clock[stream]);
    } else {
        for (int s = 0; s < GD_EMU_STREAMS; s++)
            gd_emu_join(gd_emu_host_clock, gd_emu_clock[s]);
    }
    pthread_mutex_unlock(&gd_emu_order_lock);
}
