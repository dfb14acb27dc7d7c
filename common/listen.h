/* A server's listening socket: "host:port" parsed, bound and listening,
 * with the system's own reason when that fails. Kept apart from the HTTP
 * library (the daemon's HTTP server and the localnet's RPC both hand the
 * socket to libmicrohttpd) so the errno of bind() reaches the operator
 * unchanged. */
#ifndef GD_COMMON_LISTEN_H
#define GD_COMMON_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "common/status.h"

/* Opens a non-blocking, close-on-exec TCP socket listening on address:
 * "a.b.c.d:port", "localhost:port" (127.0.0.1) or "[v6]:port"; port 0
 * picks a free one. Writes the bound "host:port" into bound (truncated to
 * bound_cap) and whether the host is a loopback address into *loopback.
 * Returns GD_ERR_INVALID for a malformed address, GD_ERR_NETWORK with
 * strerror(errno) when the socket, bind or listen fails. */
gd_status gd_listen_open(const char *address, int *fd_out, char *bound, size_t bound_cap,
                         bool *loopback) GD_MUST_CHECK;

/* After a failed start an HTTP library may or may not have closed the
 * listening socket it was given (it depends on how far it got). Closes fd
 * only if it is still the socket described by was (its fstat before the
 * start), never a descriptor another thread has opened since under the
 * same number. */
void gd_listen_close_if_same(int fd, const struct stat *was);

#endif
