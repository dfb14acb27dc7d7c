/* A deadline for each request of a server's connections: a request must
 * arrive whole (request line, headers, body) within the deadline of the
 * connection's opening or of its previous answer, or the connection is shut
 * down. An idle timeout alone does not bound a slow client: one byte every
 * few seconds keeps the connection "active" for as long as it likes, and a
 * few hundred such clients hold every slot. Kept apart from the HTTP
 * library (the daemon's HTTP server and the localnet's RPC both use it with
 * libmicrohttpd): the library keeps the socket, and the watch only calls
 * shutdown(2) on it, which the library then sees as the peer's close.
 *
 * Lifecycle of a connection: add (armed), disarm once its request is in,
 * arm again once its answer is done (keep-alive), remove before the socket
 * is closed. Every call is thread-safe. */
#ifndef GD_COMMON_CONN_WATCH_H
#define GD_COMMON_CONN_WATCH_H

#include <stdint.h>

#include "common/status.h"

typedef struct gd_conn_watch gd_conn_watch;
typedef struct gd_conn_slot gd_conn_slot;

/* Starts the watch (one thread, waking every 100 ms). deadline_ms >= 1. */
gd_status gd_conn_watch_start(gd_conn_watch **out, uint32_t deadline_ms) GD_MUST_CHECK;
/* Stops the thread and frees the watch; every slot must be removed first
 * (stop the server before the watch). NULL is fine. */
void gd_conn_watch_stop(gd_conn_watch *w);

/* Watches the connection on socket fd, its deadline running from now.
 * NULL when out of memory: the connection then has only the library's
 * idle timeout. */
gd_conn_slot *gd_conn_watch_add(gd_conn_watch *w, int fd);
/* The request is in: no deadline while it is answered. */
void gd_conn_watch_disarm(gd_conn_watch *w, gd_conn_slot *s);
/* The answer is done: the next request's deadline runs from now. */
void gd_conn_watch_arm(gd_conn_watch *w, gd_conn_slot *s);
/* The connection closes (before its socket is): the slot is freed. NULL
 * is fine. */
void gd_conn_watch_remove(gd_conn_watch *w, gd_conn_slot *s);

/* Connections shut down for missing their deadline so far. */
uint64_t gd_conn_watch_expired(gd_conn_watch *w);

#endif
