/* The peer port (plugin/member/member_ports.h) over HTTP: a member's artifact URL
 * (from the chain, so outside input: http or https only, no redirects)
 * plus the one spelling of the request's path (plugin/http/http_path.h), fetched
 * with libcurl under a size cap, connect and stall timeouts, an overall
 * deadline (the request's, from its window, or an hour) and an average-rate
 * floor over the whole transfer; a chunk's proof comes back from the
 * X-Gd-Proof header. */
#ifndef GD_PLUGIN_PORTS_PEER_HTTP_H
#define GD_PLUGIN_PORTS_PEER_HTTP_H

#include "plugin/member/member_ports.h"

typedef struct gd_peer_http gd_peer_http;

gd_status gd_peer_http_open(gd_peer_http **out) GD_MUST_CHECK;
void gd_peer_http_close(gd_peer_http *p);
/* Used by one thread at a time (the member's step). */
gd_peer_port gd_peer_http_port(gd_peer_http *p);

#endif
