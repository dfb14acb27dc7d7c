/* Token buckets per client address (plugin/http/http_rate.h). Tokens are counted
 * in millionths so refilling needs no floating point. */
#include "plugin/http/http_rate.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Slots probed for one key: a collision chain longer than this evicts. */
#define GD_RATE_PROBE 8
#define GD_RATE_UNIT 1000000u /* one token, in millionths */

typedef struct gd_rate_slot {
    uint8_t key[16];
    bool used;
    uint64_t tokens;  /* millionths of a token */
    uint64_t seen_us; /* last refill */
} gd_rate_slot;

struct gd_http_rate {
    pthread_mutex_t lock;
    uint64_t per_second;
    uint64_t capacity; /* burst, in millionths of a token */
    uint64_t fill_us;  /* more than the time an empty bucket takes to fill */
    gd_rate_slot slots[GD_HTTP_RATE_SLOTS];
};

gd_status gd_http_rate_new(gd_http_rate **out, uint32_t per_second, uint32_t burst) {
    if (per_second == 0 || burst == 0)
        return gd_fail(GD_ERR_INVALID, "the request rate and burst must be at least 1");
    gd_http_rate *rate = calloc(1, sizeof *rate);
    if (rate == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    if (pthread_mutex_init(&rate->lock, NULL) != 0) {
        free(rate);
        return gd_fail(GD_ERR_NOMEM, "cannot create the rate table's lock");
    }
    rate->per_second = per_second;
    rate->capacity = (uint64_t)burst * GD_RATE_UNIT;
    rate->fill_us = rate->capacity / per_second + 1;
    *out = rate;
    return GD_OK;
}

void gd_http_rate_free(gd_http_rate *rate) {
    if (rate == NULL)
        return;
    pthread_mutex_destroy(&rate->lock);
    free(rate);
}

void gd_http_rate_key(const struct sockaddr *addr, uint8_t key[16]) {
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(key, 0, 16);
    if (addr != NULL && addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr;
        memcpy(key, v4_mapped, sizeof v4_mapped);
        memcpy(key + 12, &in->sin_addr, 4);
    } else if (addr != NULL && addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        const uint8_t *a = in6->sin6_addr.s6_addr;
        memcpy(key, a, memcmp(a, v4_mapped, sizeof v4_mapped) == 0 ? 16 : 8);
    }
}

/* FNV-1a: only spreads keys over the table; a crafted collision can only
 * evict buckets, which makes the limit more lenient, not stricter. */
static size_t gd_rate_hash(const uint8_t key[16]) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < 16; i++)
        h = (h ^ key[i]) * 16777619u;
    return h % GD_HTTP_RATE_SLOTS;
}

/* An empty slot beats any used one; among used ones the least recently
 * seen is evicted. */
static bool gd_rate_better_victim(const gd_rate_slot *candidate, const gd_rate_slot *current) {
    if (current == NULL)
        return true;
    if (!current->used)
        return false;
    return !candidate->used || candidate->seen_us < current->seen_us;
}

/* The key's slot, or a fresh full one in place of the best victim of its
 * probe group. */
static gd_rate_slot *gd_rate_slot_of(gd_http_rate *rate, const uint8_t key[16], uint64_t now_us) {
    size_t home = gd_rate_hash(key);
    gd_rate_slot *victim = NULL;
    for (size_t i = 0; i < GD_RATE_PROBE; i++) {
        gd_rate_slot *s = &rate->slots[(home + i) % GD_HTTP_RATE_SLOTS];
        if (s->used && memcmp(s->key, key, 16) == 0)
            return s;
        if (gd_rate_better_victim(s, victim))
            victim = s;
    }
    memcpy(victim->key, key, 16);
    victim->used = true;
    victim->tokens = rate->capacity;
    victim->seen_us = now_us;
    return victim;
}

static void gd_rate_refill(const gd_http_rate *rate, gd_rate_slot *s, uint64_t now_us) {
    if (now_us <= s->seen_us)
        return; /* a clock that did not move (or went back) adds nothing */
    uint64_t gap = now_us - s->seen_us;
    s->seen_us = now_us;
    if (gap >= rate->fill_us) {
        s->tokens = rate->capacity;
        return;
    }
    /* Millionths of a token per microsecond is exactly per_second; below
     * fill_us, gap * per_second <= capacity + per_second < 2^63. */
    uint64_t add = gap * rate->per_second;
    s->tokens = add >= rate->capacity - s->tokens ? rate->capacity : s->tokens + add;
}

bool gd_http_rate_take(gd_http_rate *rate, const uint8_t key[16], uint64_t now_us) {
    pthread_mutex_lock(&rate->lock);
    gd_rate_slot *s = gd_rate_slot_of(rate, key, now_us);
    gd_rate_refill(rate, s, now_us);
    bool ok = s->tokens >= GD_RATE_UNIT;
    if (ok)
        s->tokens -= GD_RATE_UNIT;
    pthread_mutex_unlock(&rate->lock);
    return ok;
}
