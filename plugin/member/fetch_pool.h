/* Fetches that run beside a member's step, on threads of their own, so no
 * peer holds the step: a peer that drips its answer just above the rate
 * floor keeps only the duties that need its answer waiting, and every
 * other duty of the window goes out on time (docs/verification.md, "The
 * red-team review", attack 5).
 *
 * A duty asks for an answer by what identifies it (whose, and the
 * request); the first ask queues it and says GD_ERR_PENDING, and so does
 * every ask while it is in flight; once it is done, the next ask hands its
 * status and answer over, once. Each thread has its own port from the
 * member's (gd_peer_port_iface.open_another), so transfers never share a
 * connection handle. Closing cancels what is in flight (the transfers'
 * progress callback reads the cancel flag) and joins the threads. */
#ifndef GD_PLUGIN_MEMBER_FETCH_POOL_H
#define GD_PLUGIN_MEMBER_FETCH_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "plugin/member/member_ports.h"

/* Transfers at once (the threads). */
#define GD_FETCH_POOL_THREADS 8
/* Answers queued, in flight or waiting to be taken, at most. */
#define GD_FETCH_POOL_JOBS_MAX 4096

typedef struct gd_fetch_pool gd_fetch_pool;

/* GD_ERR_INVALID if base cannot open another port. */
gd_status gd_fetch_pool_open(gd_fetch_pool **out, gd_peer_port base,
                             size_t threads) GD_MUST_CHECK;
void gd_fetch_pool_close(gd_fetch_pool *p);

/* GD_OK once the answer of (who, req) is done (whatever its status: take
 * it with _take); GD_ERR_PENDING while it is queued or in flight; the
 * first ask queues it (url, at most max_len body bytes, req's deadline).
 * GD_ERR_LIMIT when the pool holds too many; GD_ERR_NOMEM. */
gd_status gd_fetch_pool_ready(gd_fetch_pool *p, const char *who, const char *url,
                              const gd_artifact_req *req, size_t max_len) GD_MUST_CHECK;

/* _ready, and once done the answer's own status with *out (the answer
 * leaves the pool: the next ask fetches again). */
gd_status gd_fetch_pool_take(gd_fetch_pool *p, gd_artifact_answer *out, const char *who,
                             const char *url, const gd_artifact_req *req,
                             size_t max_len) GD_MUST_CHECK;

/* Forgets the answer of (who, req), done or not (one in flight is
 * cancelled): a duty that gave up on some of its answers drops the rest,
 * so that its next try fetches them afresh rather than taking stale ones. */
void gd_fetch_pool_drop(gd_fetch_pool *p, const char *who, const gd_artifact_req *req,
                        size_t max_len);

/* Forgets the answers of rounds before `round` - 1 that nobody took
 * (transfers still in flight are cancelled). */
void gd_fetch_pool_forget_before(gd_fetch_pool *p, uint64_t round);

/* Takes a fetched body back (b is left empty): the next thread to start a
 * transfer hands it to its port to fetch into (gd_peer_port_iface.recycle),
 * so fetched buffers are reused as on the step. At most
 * GD_FETCH_POOL_RETURNED wait; more are freed. */
#define GD_FETCH_POOL_RETURNED 16
void gd_fetch_pool_recycle(gd_fetch_pool *p, gd_buf *b);

/* Queued or in flight, for the status. */
size_t gd_fetch_pool_pending(gd_fetch_pool *p);

#endif
