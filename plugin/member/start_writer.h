/* A worker's segment-start states written as training reaches them
 * (docs/protocol.md, "A round"): leaf i, the state at the start of segment
 * i, goes to the artifact store while segment i trains, so the round's
 * states are on disk when its last step is, and a round no longer keeps S
 * copies of the worker's state in memory until it is sealed.
 *
 * In the background a put copies the state into one staging state and a
 * thread of the writer's own streams it to its file (header and arrays
 * written as parts, fsynced, renamed); the next put first waits for that
 * write. In the foreground a put writes from the live state (the trainer)
 * a window at a time before it returns (no staging copy: what a tight
 * memory budget asks for). Either
 * way a failed write is the put's or drain's status, so a round whose
 * starts did not reach the disk is never committed. */
#ifndef GD_PLUGIN_MEMBER_START_WRITER_H
#define GD_PLUGIN_MEMBER_START_WRITER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/round_engine.h"
#include "trainer/state.h"

typedef struct gd_start_writer {
    const gd_artifact_store *store;
    uint64_t run;
    bool background;
    pthread_t thread;
    bool started;                /* the thread runs */
    pthread_mutex_t mu;
    pthread_cond_t wake;         /* a write is queued, or the writer stops */
    pthread_cond_t done;         /* the queued write finished */
    bool queued, stop;
    gd_worker_state staging;     /* the queued state (background) */
    bool have_staging;
    gd_worker_desc desc;
    uint64_t round;
    uint32_t leaf;
    gd_status failed;            /* the first failed write since the last drain */
    char why[256];
    uint64_t written;            /* states written since open */
    gd_file_atomic post;         /* the state being written as it is made */
    bool post_open;
    size_t post_n;
    uint64_t post_next, post_round;
    uint32_t post_leaf;
} gd_start_writer;

/* A writer for run `run`'s states in store (which must outlive it). */
gd_status gd_start_writer_open(gd_start_writer *w, const gd_artifact_store *store, uint64_t run,
                               bool background) GD_MUST_CHECK;
/* Leaf `leaf` of round `round`: state with residual (each read a window
 * at a time), described by desc (the round's record of it).
 * Both may change as soon as this returns. Fails with the first failed
 * write before it. */
gd_status gd_start_writer_put(gd_start_writer *w, uint64_t round, uint32_t leaf,
                              const gd_worker_desc *desc, const gd_worker_state_source *state,
                              const gd_values_reader *residual) GD_MUST_CHECK;
/* Leaf `leaf` of round `round` written as it is made (the state after
 * encoding), in the caller's thread: begin (after any queued write), its
 * n values' windows in order, then end with its descriptor, which puts
 * the file in place durably; abort gives it up (a failed write aborts by
 * itself). */
gd_status gd_start_writer_post_begin(gd_start_writer *w, uint64_t round, uint32_t leaf,
                                     size_t n) GD_MUST_CHECK;
gd_status gd_start_writer_post_write(gd_start_writer *w, const float *params,
                                     const float *exp_avg, const float *exp_avg_sq,
                                     const float *residual, size_t lo,
                                     size_t count) GD_MUST_CHECK;
gd_status gd_start_writer_post_end(gd_start_writer *w, const gd_worker_desc *desc) GD_MUST_CHECK;
void gd_start_writer_post_abort(gd_start_writer *w);
/* The writer as a round job's sink (w must outlive the job). */
gd_engine_start_sink gd_start_writer_sink(gd_start_writer *w);
/* Waits until every put is durable and frees the staging state; the first
 * failure since the last drain, if any. */
gd_status gd_start_writer_drain(gd_start_writer *w) GD_MUST_CHECK;
/* The same for a round given up: waits, and forgets any failure without
 * touching the calling thread's error detail. */
void gd_start_writer_forget(gd_start_writer *w);
/* Stops the thread (a queued write finishes first) and frees everything. */
void gd_start_writer_close(gd_start_writer *w);

#endif
