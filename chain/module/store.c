/* The state store: an ordered map in sorted chunks, with nested write caches. */
#include "chain/module/store.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

/* Every layer keeps its entries in a two-level sorted array (a flat B+tree):
 * a sorted array of chunk pointers, each chunk a sorted array of at most
 * GD_CHUNK_MAX entries. Inserting moves at most one chunk's entries plus,
 * on a split, the chunk pointers, so 10^5 keys in random order stay cheap,
 * while lookups and in-order walks remain binary search and a linear scan.
 * Chunks start small and grow, so a cache of a few entries costs little. */
#define GD_CHUNK_MAX 128
#define GD_CHUNK_FIRST_CAP 4

enum {
    GD_E_TOMB = 1,  /* deleted: hides the key in the layers below */
    GD_E_DIRTY = 2, /* base only: changed since the last take_changes */
    GD_E_STORED = 4 /* base only: existed at the last take_changes or was loaded */
};

typedef struct gd_entry {
    uint8_t *data; /* key bytes then value bytes, one allocation */
    uint32_t value_len;
    uint16_t key_len;
    uint16_t flags;
} gd_entry;

typedef struct gd_chunk {
    uint32_t n, cap;
    gd_entry e[];
} gd_chunk;

typedef struct gd_omap {
    gd_chunk **chunks; /* none of them empty */
    size_t nchunks, cap;
} gd_omap;

struct gd_kv {
    gd_kv *parent;   /* NULL on the base view */
    gd_store *store; /* set on the base view only */
    gd_omap map;
};

struct gd_store {
    gd_kv base;
    size_t live;
};

static int gd_key_cmp(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len) {
    size_t n = a_len < b_len ? a_len : b_len;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0)
        return c;
    return (a_len > b_len) - (a_len < b_len);
}

static int gd_entry_cmp(const gd_entry *e, const uint8_t *key, size_t key_len) {
    return gd_key_cmp(e->data, e->key_len, key, key_len);
}

/* Finds key: true with its position, or false with where it would go. */
static bool gd_omap_find(const gd_omap *m, const uint8_t *key, size_t key_len, size_t *ci,
                         size_t *pi) {
    if (m->nchunks == 0) {
        *ci = *pi = 0;
        return false;
    }
    size_t lo = 0, hi = m->nchunks;
    while (lo < hi) { /* the first chunk whose first key is above key */
        size_t mid = lo + (hi - lo) / 2;
        if (gd_entry_cmp(&m->chunks[mid]->e[0], key, key_len) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t c = lo ? lo - 1 : 0;
    const gd_chunk *ch = m->chunks[c];
    lo = 0;
    hi = ch->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = gd_entry_cmp(&ch->e[mid], key, key_len);
        if (r == 0) {
            *ci = c;
            *pi = mid;
            return true;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *ci = c;
    *pi = lo;
    return false;
}

static gd_status gd_omap_add_chunk(gd_omap *m, size_t at, uint32_t cap) {
    if (m->nchunks == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 4;
        gd_chunk **chunks = realloc(m->chunks, ncap * sizeof *chunks);
        if (chunks == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory growing the store");
        m->chunks = chunks;
        m->cap = ncap;
    }
    gd_chunk *ch = malloc(sizeof *ch + cap * sizeof(gd_entry));
    if (ch == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory growing the store");
    ch->n = 0;
    ch->cap = cap;
    memmove(m->chunks + at + 1, m->chunks + at, (m->nchunks - at) * sizeof *m->chunks);
    m->chunks[at] = ch;
    m->nchunks++;
    return GD_OK;
}

static void gd_omap_drop_chunk(gd_omap *m, size_t at) {
    free(m->chunks[at]);
    memmove(m->chunks + at, m->chunks + at + 1, (m->nchunks - at - 1) * sizeof *m->chunks);
    m->nchunks--;
}

/* Inserts e at (ci, pi) from gd_omap_find. On failure the map is unchanged
 * and e still belongs to the caller. */
static gd_status gd_omap_insert(gd_omap *m, size_t ci, size_t pi, gd_entry e) {
    if (m->nchunks == 0)
        GD_TRY(gd_omap_add_chunk(m, 0, GD_CHUNK_FIRST_CAP));
    gd_chunk *ch = m->chunks[ci];
    if (ch->n == ch->cap && ch->cap < GD_CHUNK_MAX) {
        uint32_t cap = ch->cap * 2 < GD_CHUNK_MAX ? ch->cap * 2 : GD_CHUNK_MAX;
        gd_chunk *grown = realloc(ch, sizeof *ch + cap * sizeof(gd_entry));
        if (grown == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory growing the store");
        grown->cap = cap;
        m->chunks[ci] = ch = grown;
    } else if (ch->n == ch->cap) {
        GD_TRY(gd_omap_add_chunk(m, ci + 1, GD_CHUNK_MAX));
        gd_chunk *right = m->chunks[ci + 1];
        uint32_t half = ch->n / 2;
        memcpy(right->e, ch->e + half, (ch->n - half) * sizeof(gd_entry));
        right->n = ch->n - half;
        ch->n = half;
        if (pi > half) {
            pi -= half;
            ch = right;
        }
    }
    memmove(ch->e + pi + 1, ch->e + pi, (ch->n - pi) * sizeof(gd_entry));
    ch->e[pi] = e;
    ch->n++;
    return GD_OK;
}

/* Joins chunk at+1 into chunk at when both are small; best effort, since
 * sparse chunks only cost speed. */
static void gd_omap_merge(gd_omap *m, size_t at) {
    if (at + 1 >= m->nchunks)
        return;
    gd_chunk *left = m->chunks[at], *right = m->chunks[at + 1];
    uint32_t n = left->n + right->n;
    if (n > GD_CHUNK_MAX / 2)
        return;
    if (left->cap < n) {
        gd_chunk *grown = realloc(left, sizeof *left + GD_CHUNK_MAX * sizeof(gd_entry));
        if (grown == NULL)
            return;
        grown->cap = GD_CHUNK_MAX;
        m->chunks[at] = left = grown;
    }
    memcpy(left->e + left->n, right->e, right->n * sizeof(gd_entry));
    left->n = n;
    gd_omap_drop_chunk(m, at + 1);
}

/* Removes the entry at (ci, pi) without freeing its data. */
static void gd_omap_remove(gd_omap *m, size_t ci, size_t pi) {
    gd_chunk *ch = m->chunks[ci];
    memmove(ch->e + pi, ch->e + pi + 1, (ch->n - pi - 1) * sizeof(gd_entry));
    ch->n--;
    if (ch->n == 0) {
        gd_omap_drop_chunk(m, ci);
        return;
    }
    if (ch->n < GD_CHUNK_MAX / 4) {
        gd_omap_merge(m, ci);
        if (ci > 0)
            gd_omap_merge(m, ci - 1);
    }
}

static void gd_omap_clear(gd_omap *m, bool free_data) {
    for (size_t c = 0; c < m->nchunks; c++) {
        if (free_data)
            for (uint32_t i = 0; i < m->chunks[c]->n; i++)
                free(m->chunks[c]->e[i].data);
        free(m->chunks[c]);
    }
    m->nchunks = 0;
}

static void gd_omap_free(gd_omap *m) {
    gd_omap_clear(m, true);
    free(m->chunks);
    m->chunks = NULL;
    m->cap = 0;
}

static gd_status gd_key_check(size_t key_len) {
    if (key_len == 0 || key_len > GD_KV_KEY_MAX)
        return gd_fail(GD_ERR_INVALID, "store key of %zu bytes; keys have 1 to %d bytes",
                       key_len, GD_KV_KEY_MAX);
    return GD_OK;
}

static gd_status gd_entry_new(gd_entry *e, const uint8_t *key, size_t key_len,
                              const uint8_t *value, size_t value_len, uint16_t flags) {
    GD_TRY(gd_key_check(key_len));
    if (value_len > GD_KV_VALUE_MAX)
        return gd_fail(GD_ERR_INVALID, "store value of %zu bytes; values have at most %u bytes",
                       value_len, GD_KV_VALUE_MAX);
    uint8_t *data = malloc(key_len + value_len);
    if (data == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a store entry of %zu bytes",
                       key_len + value_len);
    memcpy(data, key, key_len);
    if (value_len)
        memcpy(data + key_len, value, value_len);
    e->data = data;
    e->key_len = (uint16_t)key_len;
    e->value_len = (uint32_t)value_len;
    e->flags = flags;
    return GD_OK;
}

/* A tombstone keeps only the key; shrinking is best effort. */
static void gd_entry_to_tomb(gd_entry *e) {
    if (e->value_len) {
        uint8_t *data = realloc(e->data, e->key_len);
        if (data != NULL)
            e->data = data;
    }
    e->value_len = 0;
    e->flags |= GD_E_TOMB;
}

/* Puts an owned entry (not a tombstone) into the base. record: a change to
 * report; otherwise a load of persisted state. On failure e is still the
 * caller's. */
static gd_status gd_base_put(gd_store *s, gd_entry e, bool record) {
    size_t ci, pi;
    gd_omap *m = &s->base.map;
    if (gd_omap_find(m, e.data, e.key_len, &ci, &pi)) {
        gd_entry *old = &m->chunks[ci]->e[pi];
        uint16_t keep = old->flags & (record ? GD_E_STORED : GD_E_DIRTY);
        e.flags = (uint16_t)(keep | (record ? GD_E_DIRTY : GD_E_STORED));
        if (old->flags & GD_E_TOMB)
            s->live++;
        free(old->data);
        *old = e;
        return GD_OK;
    }
    e.flags = record ? GD_E_DIRTY : GD_E_STORED;
    GD_TRY(gd_omap_insert(m, ci, pi, e));
    s->live++;
    return GD_OK;
}

/* A key that was persisted leaves a tombstone for take_changes to report; a
 * key born since the last take just goes. */
static void gd_base_delete(gd_store *s, const uint8_t *key, size_t key_len) {
    size_t ci, pi;
    gd_omap *m = &s->base.map;
    if (!gd_omap_find(m, key, key_len, &ci, &pi))
        return;
    gd_entry *e = &m->chunks[ci]->e[pi];
    if (e->flags & GD_E_TOMB)
        return;
    s->live--;
    if (e->flags & GD_E_STORED) {
        gd_entry_to_tomb(e);
        e->flags |= GD_E_DIRTY;
        return;
    }
    free(e->data);
    gd_omap_remove(m, ci, pi);
}

/* Puts an owned entry (value or tombstone) into a cache. */
static gd_status gd_cache_put(gd_kv *kv, gd_entry e) {
    size_t ci, pi;
    if (gd_omap_find(&kv->map, e.data, e.key_len, &ci, &pi)) {
        gd_entry *old = &kv->map.chunks[ci]->e[pi];
        free(old->data);
        *old = e;
        return GD_OK;
    }
    return gd_omap_insert(&kv->map, ci, pi, e);
}

gd_status gd_store_new(gd_store **out) {
    gd_store *s = calloc(1, sizeof *s);
    if (s == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a store");
    s->base.store = s;
    *out = s;
    return GD_OK;
}

void gd_store_free(gd_store *store) {
    if (store == NULL)
        return;
    gd_omap_free(&store->base.map);
    free(store);
}

gd_kv *gd_store_view(gd_store *store) { return &store->base; }

gd_status gd_cache_new(gd_kv **out, gd_kv *parent) {
    if (parent == NULL)
        return gd_fail(GD_ERR_INVALID, "a store cache needs a parent");
    gd_kv *kv = calloc(1, sizeof *kv);
    if (kv == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a store cache");
    kv->parent = parent;
    *out = kv;
    return GD_OK;
}

gd_status gd_cache_write(gd_kv *cache) {
    if (cache->store != NULL)
        return gd_fail(GD_ERR_INVALID, "the base store is not a cache");
    gd_omap *m = &cache->map;
    gd_kv *parent = cache->parent;
    for (size_t c = 0; c < m->nchunks; c++) {
        gd_chunk *ch = m->chunks[c];
        for (uint32_t i = 0; i < ch->n; i++) {
            gd_entry e = ch->e[i];
            gd_status st = GD_OK;
            if (parent->store != NULL && (e.flags & GD_E_TOMB)) {
                gd_base_delete(parent->store, e.data, e.key_len);
                free(e.data);
            } else if (parent->store != NULL) {
                st = gd_base_put(parent->store, e, true);
            } else {
                st = gd_cache_put(parent, e);
            }
            if (st != GD_OK) {
                /* Keep exactly the writes not yet applied, so a retry
                 * finishes the job. */
                for (size_t k = 0; k < c; k++)
                    free(m->chunks[k]);
                memmove(m->chunks, m->chunks + c, (m->nchunks - c) * sizeof *m->chunks);
                m->nchunks -= c;
                memmove(ch->e, ch->e + i, (ch->n - i) * sizeof(gd_entry));
                ch->n -= i;
                return st;
            }
        }
    }
    gd_omap_clear(m, false);
    return GD_OK;
}

void gd_cache_free(gd_kv *cache) {
    if (cache == NULL || cache->store != NULL)
        return;
    gd_omap_free(&cache->map);
    free(cache);
}

/* The entry that decides key in this view, or NULL if absent or deleted. */
static const gd_entry *gd_lookup(const gd_kv *kv, const uint8_t *key, size_t key_len) {
    for (; kv != NULL; kv = kv->parent) {
        size_t ci, pi;
        if (gd_omap_find(&kv->map, key, key_len, &ci, &pi)) {
            const gd_entry *e = &kv->map.chunks[ci]->e[pi];
            return (e->flags & GD_E_TOMB) ? NULL : e;
        }
    }
    return NULL;
}

gd_status gd_kv_get(gd_kv *kv, const uint8_t *key, size_t key_len, const uint8_t **value,
                    size_t *value_len) {
    GD_TRY(gd_key_check(key_len));
    const gd_entry *e = gd_lookup(kv, key, key_len);
    if (e == NULL)
        return gd_fail(GD_ERR_NOT_FOUND, "key not in the store");
    *value = e->data + e->key_len;
    *value_len = e->value_len;
    return GD_OK;
}

bool gd_kv_has(gd_kv *kv, const uint8_t *key, size_t key_len) {
    if (key_len == 0 || key_len > GD_KV_KEY_MAX)
        return false;
    return gd_lookup(kv, key, key_len) != NULL;
}

gd_status gd_kv_set(gd_kv *kv, const uint8_t *key, size_t key_len, const uint8_t *value,
                    size_t value_len) {
    gd_entry e = {NULL, 0, 0, 0};
    GD_TRY(gd_entry_new(&e, key, key_len, value, value_len, 0));
    gd_status st = kv->store != NULL ? gd_base_put(kv->store, e, true) : gd_cache_put(kv, e);
    if (st != GD_OK)
        free(e.data);
    return st;
}

gd_status gd_kv_delete(gd_kv *kv, const uint8_t *key, size_t key_len) {
    GD_TRY(gd_key_check(key_len));
    if (kv->store != NULL) {
        gd_base_delete(kv->store, key, key_len);
        return GD_OK;
    }
    size_t ci, pi;
    if (gd_omap_find(&kv->map, key, key_len, &ci, &pi)) {
        gd_entry_to_tomb(&kv->map.chunks[ci]->e[pi]);
        return GD_OK;
    }
    gd_entry e = {NULL, 0, 0, 0};
    GD_TRY(gd_entry_new(&e, key, key_len, NULL, 0, GD_E_TOMB));
    gd_status st = gd_omap_insert(&kv->map, ci, pi, e);
    if (st != GD_OK)
        free(e.data);
    return st;
}

/* A position in one layer's map during a merged walk. */
typedef struct gd_cursor {
    const gd_omap *m;
    size_t ci, pi;
} gd_cursor;

static const gd_entry *gd_cursor_entry(const gd_cursor *c) {
    return c->ci < c->m->nchunks ? &c->m->chunks[c->ci]->e[c->pi] : NULL;
}

static void gd_cursor_next(gd_cursor *c) {
    if (++c->pi == c->m->chunks[c->ci]->n) {
        c->ci++;
        c->pi = 0;
    }
}

static void gd_cursor_seek(gd_cursor *c, const gd_omap *m, const uint8_t *start,
                           size_t start_len) {
    c->m = m;
    c->ci = c->pi = 0;
    if (start == NULL)
        return;
    (void)gd_omap_find(m, start, start_len, &c->ci, &c->pi);
    if (c->ci < m->nchunks && c->pi == m->chunks[c->ci]->n) {
        c->ci++;
        c->pi = 0;
    }
}

#define GD_CURSORS_ON_STACK 8

gd_status gd_kv_iterate(gd_kv *kv, const uint8_t *start, size_t start_len, const uint8_t *end,
                        size_t end_len, gd_kv_visit_fn fn, void *ctx) {
    size_t depth = 0;
    for (const gd_kv *v = kv; v != NULL; v = v->parent)
        depth++;
    gd_cursor stack[GD_CURSORS_ON_STACK];
    gd_cursor *cur = stack;
    if (depth > GD_CURSORS_ON_STACK) {
        cur = malloc(depth * sizeof *cur);
        if (cur == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory iterating %zu store layers", depth);
    }
    /* cur[0] is the top layer, so on equal keys the lowest index wins. */
    size_t i = 0;
    for (const gd_kv *v = kv; v != NULL; v = v->parent)
        gd_cursor_seek(&cur[i++], &v->map, start, start_len);
    for (;;) {
        const gd_entry *best = NULL;
        size_t best_i = 0;
        for (i = 0; i < depth; i++) {
            const gd_entry *e = gd_cursor_entry(&cur[i]);
            if (e != NULL &&
                (best == NULL || gd_key_cmp(e->data, e->key_len, best->data, best->key_len) < 0)) {
                best = e;
                best_i = i;
            }
        }
        if (best == NULL || (end != NULL && gd_entry_cmp(best, end, end_len) >= 0))
            break;
        /* Lower layers holding the same key are shadowed: step past it. */
        for (i = best_i + 1; i < depth; i++) {
            const gd_entry *e = gd_cursor_entry(&cur[i]);
            if (e != NULL && gd_key_cmp(e->data, e->key_len, best->data, best->key_len) == 0)
                gd_cursor_next(&cur[i]);
        }
        gd_cursor_next(&cur[best_i]);
        if (!(best->flags & GD_E_TOMB) &&
            fn(ctx, best->data, best->key_len, best->data + best->key_len, best->value_len) != 0)
            break;
    }
    if (cur != stack)
        free(cur);
    return GD_OK;
}

gd_status gd_kv_iterate_prefix(gd_kv *kv, const uint8_t *prefix, size_t prefix_len,
                               gd_kv_visit_fn fn, void *ctx) {
    if (prefix_len == 0)
        return gd_kv_iterate(kv, NULL, 0, NULL, 0, fn, ctx);
    if (prefix_len > GD_KV_KEY_MAX)
        return GD_OK; /* no key is that long */
    /* The end bound is the smallest key above every key with the prefix:
     * drop trailing 0xff bytes and increment the last; none if all 0xff. */
    uint8_t end[GD_KV_KEY_MAX];
    size_t end_len = prefix_len;
    memcpy(end, prefix, prefix_len);
    while (end_len > 0 && end[end_len - 1] == 0xff)
        end_len--;
    if (end_len == 0)
        return gd_kv_iterate(kv, prefix, prefix_len, NULL, 0, fn, ctx);
    end[end_len - 1]++;
    return gd_kv_iterate(kv, prefix, prefix_len, end, end_len, fn, ctx);
}

size_t gd_store_count(const gd_store *store) { return store->live; }

/* Batches small pieces: one SHA-256 update per entry field would cost more
 * than the hashing itself. */
typedef struct gd_hash_buf {
    gd_sha256_ctx *ctx;
    size_t len;
    uint8_t data[16384];
} gd_hash_buf;

static void gd_hash_add(gd_hash_buf *hb, const uint8_t *p, size_t n) {
    if (hb->len + n > sizeof hb->data) {
        gd_sha256_update(hb->ctx, hb->data, hb->len);
        hb->len = 0;
    }
    if (n > sizeof hb->data / 2) {
        gd_sha256_update(hb->ctx, p, n);
        return;
    }
    if (n)
        memcpy(hb->data + hb->len, p, n);
    hb->len += n;
}

static void gd_hash_be32(gd_hash_buf *hb, uint32_t v) {
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    gd_hash_add(hb, b, 4);
}

gd_status gd_store_hash(const gd_store *store, uint8_t out[32]) {
    gd_hash_buf hb;
    hb.len = 0;
    GD_TRY(gd_sha256_begin(&hb.ctx));
    const gd_omap *m = &store->base.map;
    for (size_t c = 0; c < m->nchunks; c++) {
        const gd_chunk *ch = m->chunks[c];
        for (uint32_t i = 0; i < ch->n; i++) {
            const gd_entry *e = &ch->e[i];
            if (e->flags & GD_E_TOMB)
                continue;
            gd_hash_be32(&hb, e->key_len);
            gd_hash_add(&hb, e->data, e->key_len);
            gd_hash_be32(&hb, e->value_len);
            gd_hash_add(&hb, e->data + e->key_len, e->value_len);
        }
    }
    if (hb.len)
        gd_sha256_update(hb.ctx, hb.data, hb.len);
    gd_sha256_finish(hb.ctx, out);
    return GD_OK;
}

void gd_store_changes_free(gd_store_change *changes, size_t count) {
    if (changes == NULL)
        return;
    for (size_t i = 0; i < count; i++) {
        free(changes[i].key);
        free(changes[i].value);
    }
    free(changes);
}

static gd_status gd_change_fill(gd_store_change *ch, const gd_entry *e) {
    ch->key = malloc(e->key_len);
    ch->key_len = e->key_len;
    ch->deleted = (e->flags & GD_E_TOMB) != 0;
    ch->value = NULL;
    ch->value_len = 0;
    if (ch->key == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory collecting store changes");
    memcpy(ch->key, e->data, e->key_len);
    if (ch->deleted)
        return GD_OK;
    ch->value = malloc(e->value_len ? e->value_len : 1); /* NULL means deleted */
    if (ch->value == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory collecting store changes");
    if (e->value_len)
        memcpy(ch->value, e->data + e->key_len, e->value_len);
    ch->value_len = e->value_len;
    return GD_OK;
}

/* After a successful take: tombstones go, everything left is persisted. */
static void gd_store_settle(gd_store *s) {
    gd_omap *m = &s->base.map;
    size_t kept_chunks = 0;
    for (size_t c = 0; c < m->nchunks; c++) {
        gd_chunk *ch = m->chunks[c];
        uint32_t kept = 0;
        for (uint32_t i = 0; i < ch->n; i++) {
            if (ch->e[i].flags & GD_E_TOMB) {
                free(ch->e[i].data);
                continue;
            }
            ch->e[kept] = ch->e[i];
            ch->e[kept++].flags = GD_E_STORED;
        }
        ch->n = kept;
        if (kept == 0)
            free(ch);
        else
            m->chunks[kept_chunks++] = ch;
    }
    m->nchunks = kept_chunks;
    for (size_t c = 0; c + 1 < m->nchunks;) {
        size_t before = m->nchunks;
        gd_omap_merge(m, c);
        if (m->nchunks == before)
            c++;
    }
}

/* Reports each key whose persisted copy may be stale: a key set since the
 * last take with its value now, a key deleted since then only if it existed
 * at that take or was loaded (one born and deleted in between needs no
 * write). A failure leaves tracking as it was. */
gd_status gd_store_take_changes(gd_store *store, gd_store_change **changes, size_t *count) {
    const gd_omap *m = &store->base.map;
    size_t n = 0;
    for (size_t c = 0; c < m->nchunks; c++)
        for (uint32_t i = 0; i < m->chunks[c]->n; i++)
            n += (m->chunks[c]->e[i].flags & GD_E_DIRTY) != 0;
    gd_store_change *out = NULL;
    if (n > 0) {
        out = calloc(n, sizeof *out);
        if (out == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory collecting %zu store changes", n);
    }
    size_t k = 0;
    for (size_t c = 0; c < m->nchunks; c++) {
        const gd_chunk *ch = m->chunks[c];
        for (uint32_t i = 0; i < ch->n; i++) {
            if (!(ch->e[i].flags & GD_E_DIRTY))
                continue;
            gd_status st = gd_change_fill(&out[k++], &ch->e[i]);
            if (st != GD_OK) {
                gd_store_changes_free(out, k); /* tracking stays as it was */
                return st;
            }
        }
    }
    gd_store_settle(store);
    *changes = out;
    *count = n;
    return GD_OK;
}

gd_status gd_store_load(gd_store *store, const uint8_t *key, size_t key_len,
                        const uint8_t *value, size_t value_len) {
    gd_entry e = {NULL, 0, 0, 0};
    GD_TRY(gd_entry_new(&e, key, key_len, value, value_len, 0));
    gd_status st = gd_base_put(store, e, false);
    if (st != GD_OK)
        free(e.data);
    return st;
}
