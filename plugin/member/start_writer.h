/* A worker's segment-start states written as training reaches them
 * (docs/protocol.md, "A round"): leaf i, the state at the start of segment
 * i, goes to the artifact store while segment i trains, so the round's
 * states are on disk when its last step is, and a round no longer keeps S
 * copies of the worker's state in memory until it is sealed.
 *
 * A start comes in the pass of windows that describes it (the trainer is
 * read once at a boundary, each rank its own shard). In the background
 * each window is copied into one staging state and, once the start ends,
 * a thread of the writer's own hashes it when the round left that to it
 * (start_end_unhashed) and streams it to its file (header and arrays
 * written as parts, fsynced, renamed) while training goes on; the next
 * start first waits for that write. In the foreground each window goes to
 * the file as it comes, and the start is durable when it ends (no staging
 * copy: what a tight memory budget asks for). Either way a failed write is
 * a later call's or drain's status, so a round whose starts did not reach
 * the disk is never committed. */
#ifndef GD_PLUGIN_MEMBER_START_WRITER_H
#define GD_PLUGIN_MEMBER_START_WRITER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/pool.h"
#include "common/status.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/round_engine.h"
#include "trainer/state.h"

/* Threads that hash a start behind training: the trainer's host cores are
 * mostly idle while a GPU trains, and a start must be hashed within the
 * next segment. */
#define GD_START_HASH_THREADS 4

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
    bool hash_queued;            /* the queued start's roots are the thread's to hash */
    gd_worker_desc hashed;       /* the last start hashed by the thread, with its roots */
    uint32_t hashed_leaf;
    gd_pool *pool;               /* the thread's hashing (made at its first hash) */
    gd_worker_state staging;     /* the start being staged or queued (background) */
    bool residual_staged;        /* staging holds the residual of round residual_round */
    uint64_t residual_round;
    bool have_staging;
    bool staging_open;           /* a start is being copied into staging */
    gd_worker_desc desc;
    uint64_t round;
    uint32_t leaf;
    gd_status failed;            /* the first failed write since the last drain */
    char why[256];
    uint64_t written;            /* states written since open */
    gd_file_atomic post;         /* the state being written as it is made */
    bool post_open;
    size_t post_n;
    uint64_t post_next;          /* values written so far (in order for leaf S + 1) */
    uint64_t post_round;
    uint32_t post_leaf;
} gd_start_writer;

/* A writer for run `run`'s states in store (which must outlive it). */
gd_status gd_start_writer_open(gd_start_writer *w, const gd_artifact_store *store, uint64_t run,
                               bool background) GD_MUST_CHECK;
/* Leaf `leaf` of round `round`, a segment start, as the round describes
 * it: begin (after any queued write, and failing with the first failed
 * write before it), its n values' windows (copied: they may
 * change once write returns), then end with its descriptor, which queues
 * it (background) or puts it in place durably (foreground); end with NULL
 * gives it up. The windows may come in any order, each value once. */
gd_status gd_start_writer_start_begin(gd_start_writer *w, uint64_t round, uint32_t leaf,
                                      size_t n) GD_MUST_CHECK;
gd_status gd_start_writer_start_write(gd_start_writer *w, const float *params,
                                      const float *exp_avg, const float *exp_avg_sq,
                                      const float *residual, size_t lo,
                                      size_t count) GD_MUST_CHECK;
gd_status gd_start_writer_start_end(gd_start_writer *w, const gd_worker_desc *desc) GD_MUST_CHECK;
/* Behind training only: where array a (0 params, 1 exp_avg, 2 exp_avg_sq)
 * of the begun start's values [lo, lo + count) goes in the staging state,
 * so the ranks copy straight into it (NULL in the foreground or out of
 * range). The residual staged with a round's leaf 0 stays for its later
 * starts, whose windows may come without one. */
float *gd_start_writer_start_place(gd_start_writer *w, int array, size_t lo, size_t count);
/* Behind training only: end with a descriptor whose three roots are left
 * to the writer's thread, which hashes the staged start (on threads of its
 * own, GD_START_HASH_THREADS) before it writes it; start_roots then waits
 * for that write and gives the roots of round `round`'s leaf `leaf` (the
 * last start hashed), or the write's failure. */
gd_status gd_start_writer_start_end_unhashed(gd_start_writer *w,
                                             const gd_worker_desc *desc) GD_MUST_CHECK;
gd_status gd_start_writer_start_roots(gd_start_writer *w, uint64_t round, uint32_t leaf,
                                      uint8_t roots[3][GD_MMR_HASH_LEN]) GD_MUST_CHECK;
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
/* Waits until every start is durable and frees the staging state; the first
 * failure since the last drain, if any. */
gd_status gd_start_writer_drain(gd_start_writer *w) GD_MUST_CHECK;
/* The same for a round given up: waits, and forgets any failure without
 * touching the calling thread's error detail. */
void gd_start_writer_forget(gd_start_writer *w);
/* Stops the thread (a queued write finishes first) and frees everything. */
void gd_start_writer_close(gd_start_writer *w);

#endif
