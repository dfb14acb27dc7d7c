/* Requests per second per client address: one token bucket per address in
 * a small fixed table, so memory stays bounded whatever the number of
 * clients. Thread-safe (one mutex); the clock is the caller's, so tests
 * drive time by hand. */
#ifndef GD_PLUGIN_HTTP_HTTP_RATE_H
#define GD_PLUGIN_HTTP_HTTP_RATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/status.h"

/* Buckets in the table; a new address past that evicts the least recently
 * seen one of its probe group (which then starts again with a full bucket:
 * eviction can only make the limit more lenient, never refuse anyone). */
#define GD_HTTP_RATE_SLOTS 1024

typedef struct gd_http_rate gd_http_rate;

/* A table allowing per_second requests per second and bursts of burst
 * requests per address. Both must be at least 1. */
gd_status gd_http_rate_new(gd_http_rate **out, uint32_t per_second, uint32_t burst) GD_MUST_CHECK;
void gd_http_rate_free(gd_http_rate *rate);

/* The table's key of a client address: an IPv4 address (also when it comes
 * IPv4-mapped over IPv6), or the /64 prefix of an IPv6 address, as one
 * host commonly holds a whole /64. Other families share one key. */
void gd_http_rate_key(const struct sockaddr *addr, uint8_t key[16]);

/* Takes one token from key's bucket at time now_us (a monotonic clock in
 * microseconds). Returns false when the bucket is empty: answer 429. */
bool gd_http_rate_take(gd_http_rate *rate, const uint8_t key[16], uint64_t now_us);

#endif
