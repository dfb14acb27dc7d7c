/* The state store of the chain's state machine: an ordered in-memory
 * key-value map (byte-string keys compared with memcmp, shorter-is-smaller
 * on a common prefix) with nested write caches, in the manner of the Cosmos
 * SDK's cachemulti store:
 *
 *   base store  <- block cache  <- tx cache  <- msg cache
 *
 * Reads fall through the layers; writes stay in the top cache until it is
 * written down into its parent (gd_cache_write) or thrown away
 * (gd_cache_free without writing). Iteration is in key order and sees
 * every layer merged. The base store tracks which keys changed since the
 * last gd_store_take_changes (what the node persists per block), and hashes
 * its whole content in key order (the app hash).
 *
 * Deterministic: no pointers, time or randomness influence order or hash.
 * Not thread-safe: the node serialises access. */
#ifndef GD_CHAIN_MODULE_STORE_H
#define GD_CHAIN_MODULE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_KV_KEY_MAX 1024
#define GD_KV_VALUE_MAX (16u << 20)

typedef struct gd_store gd_store; /* the committed state */
typedef struct gd_kv gd_kv;       /* a view: the base store or a cache layer */

gd_status gd_store_new(gd_store **out) GD_MUST_CHECK;
void gd_store_free(gd_store *store);

/* The base store as a view (writes go straight into the store). */
gd_kv *gd_store_view(gd_store *store);

/* A new empty write cache over parent (a base view or another cache). */
gd_status gd_cache_new(gd_kv **out, gd_kv *parent) GD_MUST_CHECK;
/* Applies the cache's writes and deletes to its parent, in key order, and
 * empties the cache (it stays usable). */
gd_status gd_cache_write(gd_kv *cache) GD_MUST_CHECK;
/* Frees a cache, discarding writes that were not written down. NULL is ok.
 * Never call on the base view. */
void gd_cache_free(gd_kv *cache);

/* Looks key up through the layers. GD_ERR_NOT_FOUND if absent or deleted.
 * *value stays valid until the next write or cache_write touching this
 * view or a layer below it. */
gd_status gd_kv_get(gd_kv *kv, const uint8_t *key, size_t key_len, const uint8_t **value,
                    size_t *value_len) GD_MUST_CHECK;
bool gd_kv_has(gd_kv *kv, const uint8_t *key, size_t key_len);
/* Copies key and value. Keys of 1..GD_KV_KEY_MAX bytes, values of
 * 0..GD_KV_VALUE_MAX bytes (an empty value is a value, not a delete). */
gd_status gd_kv_set(gd_kv *kv, const uint8_t *key, size_t key_len, const uint8_t *value,
                    size_t value_len) GD_MUST_CHECK;
/* Deleting an absent key is not an error. */
gd_status gd_kv_delete(gd_kv *kv, const uint8_t *key, size_t key_len) GD_MUST_CHECK;

/* Calls fn for every live key in [start, end) in ascending key order, all
 * layers merged; start NULL means from the first key, end NULL to the last.
 * fn returns 0 to go on, non-zero to stop (then gd_kv_iterate returns
 * GD_OK). fn must not write to kv or a layer below it. */
typedef int (*gd_kv_visit_fn)(void *ctx, const uint8_t *key, size_t key_len,
                              const uint8_t *value, size_t value_len);
gd_status gd_kv_iterate(gd_kv *kv, const uint8_t *start, size_t start_len, const uint8_t *end,
                        size_t end_len, gd_kv_visit_fn fn, void *ctx) GD_MUST_CHECK;
/* Every key that starts with prefix, in order. */
gd_status gd_kv_iterate_prefix(gd_kv *kv, const uint8_t *prefix, size_t prefix_len,
                               gd_kv_visit_fn fn, void *ctx) GD_MUST_CHECK;

/* Number of live keys in the base store. */
size_t gd_store_count(const gd_store *store);

/* SHA-256 over every entry in key order, each as
 * BE32(key_len) || key || BE32(value_len) || value; an empty store hashes
 * the empty string. */
gd_status gd_store_hash(const gd_store *store, uint8_t out[32]) GD_MUST_CHECK;

/* The keys changed in the base store since the last call (or since
 * creation), in key order, each with its current value or marked deleted.
 * Returns owned arrays; free with gd_store_changes_free. Resets tracking. */
typedef struct gd_store_change {
    uint8_t *key;
    size_t key_len;
    uint8_t *value; /* NULL when deleted */
    size_t value_len;
    bool deleted;
} gd_store_change;
gd_status gd_store_take_changes(gd_store *store, gd_store_change **changes,
                                size_t *count) GD_MUST_CHECK;
void gd_store_changes_free(gd_store_change *changes, size_t count);

/* Loads an entry without recording it as a change (restoring persisted
 * state at start-up). */
gd_status gd_store_load(gd_store *store, const uint8_t *key, size_t key_len,
                        const uint8_t *value, size_t value_len) GD_MUST_CHECK;

#endif
