/* The state store: layers, iteration, change tracking, hashing, and a
 * randomized comparison against a naive model. */
#include <stdlib.h>

#include "chain/module/store.h"
#include "common/hash.h"
#include "tests/support/testkit.h"

/* Strings as keys and values, for readable tests. */
static gd_status put(gd_kv *kv, const char *k, const char *v) {
    return gd_kv_set(kv, (const uint8_t *)k, strlen(k), (const uint8_t *)v, strlen(v));
}

static gd_status del(gd_kv *kv, const char *k) {
    return gd_kv_delete(kv, (const uint8_t *)k, strlen(k));
}

static bool has(gd_kv *kv, const char *k) { return gd_kv_has(kv, (const uint8_t *)k, strlen(k)); }

/* True if k reads as v, or (v NULL) reads as not found. */
static int reads(gd_kv *kv, const char *k, const char *v) {
    const uint8_t *val = NULL;
    size_t len = 0;
    gd_status st = gd_kv_get(kv, (const uint8_t *)k, strlen(k), &val, &len);
    if (v == NULL) {
        if (st != GD_ERR_NOT_FOUND || has(kv, k)) {
            fprintf(stderr, "  '%s' should be absent (%s)\n", k, gd_status_name(st));
            return 0;
        }
        return 1;
    }
    if (st != GD_OK || len != strlen(v) || (len && memcmp(val, v, len) != 0) || !has(kv, k)) {
        fprintf(stderr, "  '%s' reads %s '%.*s', expected '%s'\n", k, gd_status_name(st),
                st == GD_OK ? (int)len : 0, st == GD_OK ? (const char *)val : "", v);
        return 0;
    }
    return 1;
}

/* Collects a walk as "k=v;k=v;", stopping after limit entries if limit > 0. */
typedef struct walk {
    char text[4096];
    size_t len;
    int seen, limit;
} walk;

static int walk_visit(void *ctx, const uint8_t *key, size_t key_len, const uint8_t *value,
                      size_t value_len) {
    walk *w = ctx;
    w->len += (size_t)snprintf(w->text + w->len, sizeof w->text - w->len, "%.*s=%.*s;",
                               (int)key_len, (const char *)key, (int)value_len,
                               (const char *)value);
    w->seen++;
    return w->limit > 0 && w->seen >= w->limit;
}

static const char *walk_range(gd_kv *kv, const char *start, const char *end, int limit) {
    static walk w;
    memset(&w, 0, sizeof w);
    w.limit = limit;
    CHECK_OK(gd_kv_iterate(kv, (const uint8_t *)start, start ? strlen(start) : 0,
                           (const uint8_t *)end, end ? strlen(end) : 0, walk_visit, &w));
    return w.text;
}

static const char *walk_all(gd_kv *kv) { return walk_range(kv, NULL, NULL, 0); }

static const char *walk_prefix(gd_kv *kv, const char *prefix) {
    static walk w;
    memset(&w, 0, sizeof w);
    CHECK_OK(gd_kv_iterate_prefix(kv, (const uint8_t *)prefix, strlen(prefix), walk_visit, &w));
    return w.text;
}

static void test_base(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s);
    CHECK(gd_store_count(s) == 0);
    CHECK(reads(b, "a", NULL));
    CHECK_OK(put(b, "a", "1"));
    CHECK(reads(b, "a", "1"));
    CHECK(gd_store_count(s) == 1);
    CHECK_OK(put(b, "a", "22"));
    CHECK(reads(b, "a", "22"));
    CHECK(gd_store_count(s) == 1);
    CHECK_OK(put(b, "e", "")); /* empty value is a value */
    CHECK(reads(b, "e", ""));
    CHECK(gd_store_count(s) == 2);
    CHECK_OK(del(b, "a"));
    CHECK(reads(b, "a", NULL));
    CHECK_OK(del(b, "a")); /* absent: not an error */
    CHECK_OK(del(b, "zz"));
    CHECK(gd_store_count(s) == 1);
    CHECK_OK(put(b, "a", "3")); /* set after delete */
    CHECK(reads(b, "a", "3"));
    CHECK(gd_store_count(s) == 2);
    CHECK_STR_EQ(walk_all(b), "a=3;e=;");
    gd_cache_free(b); /* refused on the base view: a no-op */
    CHECK(reads(b, "a", "3"));
    CHECK_STATUS(gd_cache_write(b), GD_ERR_INVALID);
    gd_store_free(s);
    gd_store_free(NULL);
    gd_cache_free(NULL);
}

static void test_limits(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s), *c;
    CHECK_OK(gd_cache_new(&c, b));
    static uint8_t key[GD_KV_KEY_MAX + 1];
    memset(key, 'k', sizeof key);
    const uint8_t *v;
    size_t vl;
    gd_kv *views[2] = {b, c};
    for (int i = 0; i < 2; i++) {
        gd_kv *kv = views[i];
        CHECK_STATUS(gd_kv_set(kv, key, 0, (const uint8_t *)"x", 1), GD_ERR_INVALID);
        CHECK_STATUS(gd_kv_set(kv, key, GD_KV_KEY_MAX + 1, (const uint8_t *)"x", 1),
                     GD_ERR_INVALID);
        CHECK_OK(gd_kv_set(kv, key, GD_KV_KEY_MAX, (const uint8_t *)"x", 1));
        CHECK_OK(gd_kv_get(kv, key, GD_KV_KEY_MAX, &v, &vl));
        CHECK_STATUS(gd_kv_get(kv, key, 0, &v, &vl), GD_ERR_INVALID);
        CHECK_STATUS(gd_kv_get(kv, key, GD_KV_KEY_MAX + 1, &v, &vl), GD_ERR_INVALID);
        CHECK(!gd_kv_has(kv, key, 0));
        CHECK(!gd_kv_has(kv, key, GD_KV_KEY_MAX + 1));
        CHECK_STATUS(gd_kv_delete(kv, key, 0), GD_ERR_INVALID);
        CHECK_STATUS(gd_kv_delete(kv, key, GD_KV_KEY_MAX + 1), GD_ERR_INVALID);
        CHECK_OK(gd_kv_set(kv, key, 1, NULL, 0));
        CHECK_OK(gd_kv_get(kv, key, 1, &v, &vl));
        CHECK(vl == 0);
    }
    uint8_t *big = calloc(1, (size_t)GD_KV_VALUE_MAX + 1);
    CHECK(big != NULL);
    if (big != NULL) {
        big[GD_KV_VALUE_MAX - 1] = 7;
        CHECK_STATUS(gd_kv_set(c, key, 2, big, (size_t)GD_KV_VALUE_MAX + 1), GD_ERR_INVALID);
        CHECK_STATUS(gd_store_load(s, key, 2, big, (size_t)GD_KV_VALUE_MAX + 1),
                     GD_ERR_INVALID);
        CHECK_OK(gd_kv_set(c, key, 2, big, GD_KV_VALUE_MAX));
        CHECK_OK(gd_cache_write(c));
        CHECK_OK(gd_kv_get(b, key, 2, &v, &vl));
        CHECK(vl == GD_KV_VALUE_MAX && v[GD_KV_VALUE_MAX - 1] == 7);
        free(big);
    }
    CHECK_STATUS(gd_store_load(s, key, 0, (const uint8_t *)"x", 1), GD_ERR_INVALID);
    CHECK_STATUS(gd_store_load(s, key, GD_KV_KEY_MAX + 1, (const uint8_t *)"x", 1),
                 GD_ERR_INVALID);
    gd_cache_free(c);
    c = NULL;
    CHECK_STATUS(gd_cache_new(&c, NULL), GD_ERR_INVALID);
    CHECK(c == NULL);
    gd_store_free(s);
}

static void test_layers(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s), *block, *tx, *msg;
    CHECK_OK(put(b, "a", "base-a"));
    CHECK_OK(put(b, "b", "base-b"));
    CHECK_OK(gd_cache_new(&block, b));
    CHECK_OK(gd_cache_new(&tx, block));
    CHECK_OK(gd_cache_new(&msg, tx));
    /* Reads fall through every layer. */
    CHECK(reads(msg, "a", "base-a"));
    CHECK_OK(put(block, "c", "block-c"));
    CHECK(reads(msg, "c", "block-c"));
    /* Writes stay in their layer. */
    CHECK_OK(put(msg, "a", "msg-a"));
    CHECK_OK(del(msg, "b"));
    CHECK_OK(put(msg, "d", "msg-d"));
    CHECK(reads(msg, "a", "msg-a") && reads(msg, "b", NULL) && reads(msg, "d", "msg-d"));
    CHECK(reads(tx, "a", "base-a") && reads(tx, "b", "base-b") && reads(tx, "d", NULL));
    CHECK(reads(b, "a", "base-a") && reads(b, "d", NULL) && reads(b, "c", NULL));
    /* Write down one level at a time. */
    CHECK_OK(gd_cache_write(msg));
    CHECK(reads(tx, "a", "msg-a") && reads(tx, "b", NULL) && reads(tx, "d", "msg-d"));
    CHECK(reads(block, "a", "base-a") && reads(block, "b", "base-b"));
    CHECK(reads(msg, "a", "msg-a")); /* now read through from tx */
    CHECK_OK(gd_cache_write(tx));
    CHECK(reads(block, "a", "msg-a") && reads(block, "b", NULL) && reads(block, "d", "msg-d"));
    CHECK(reads(b, "a", "base-a") && reads(b, "b", "base-b"));
    CHECK(gd_store_count(s) == 2);
    /* A second tx is discarded. */
    gd_cache_free(msg);
    gd_cache_free(tx);
    CHECK_OK(gd_cache_new(&tx, block));
    CHECK_OK(put(tx, "a", "tx2-a"));
    CHECK_OK(put(tx, "b", "tx2-b"));
    CHECK_OK(del(tx, "c"));
    CHECK(reads(tx, "a", "tx2-a") && reads(tx, "b", "tx2-b") && reads(tx, "c", NULL));
    gd_cache_free(tx);
    CHECK(reads(block, "a", "msg-a") && reads(block, "b", NULL) && reads(block, "c", "block-c"));
    CHECK_OK(gd_cache_write(block));
    CHECK(reads(b, "a", "msg-a") && reads(b, "b", NULL) && reads(b, "c", "block-c") &&
          reads(b, "d", "msg-d"));
    CHECK(gd_store_count(s) == 3);
    /* The written cache is empty and still usable. */
    CHECK(reads(block, "a", "msg-a"));
    CHECK_STR_EQ(walk_all(block), "a=msg-a;c=block-c;d=msg-d;");
    CHECK_OK(put(block, "a", "again"));
    CHECK_OK(del(block, "d"));
    CHECK(reads(b, "a", "msg-a") && reads(b, "d", "msg-d"));
    CHECK_OK(gd_cache_write(block));
    CHECK_OK(gd_cache_write(block)); /* nothing left: harmless */
    CHECK(reads(b, "a", "again") && reads(b, "d", NULL));
    CHECK(gd_store_count(s) == 2);
    gd_cache_free(block);
    gd_store_free(s);
}

static void test_deletes_and_sets(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s), *c1, *c2;
    CHECK_OK(put(b, "k", "base"));
    CHECK_OK(gd_cache_new(&c1, b));
    CHECK_OK(gd_cache_new(&c2, c1));
    CHECK_OK(del(c1, "k"));
    CHECK(reads(c2, "k", NULL));
    CHECK_STR_EQ(walk_all(c2), "");
    CHECK_OK(put(c2, "k", "top")); /* set over a delete below */
    CHECK(reads(c2, "k", "top"));
    CHECK_STR_EQ(walk_all(c2), "k=top;");
    CHECK_OK(del(c2, "k"));
    CHECK_OK(put(c2, "k", "again")); /* set after delete in the same cache */
    CHECK(reads(c2, "k", "again"));
    CHECK_OK(del(c2, "k"));
    CHECK_OK(del(c2, "k"));
    CHECK_OK(del(c2, "never")); /* delete of a key absent everywhere */
    CHECK(reads(c2, "never", NULL));
    CHECK_OK(gd_cache_write(c2));
    CHECK(reads(c1, "k", NULL) && reads(b, "k", "base"));
    CHECK_OK(put(c2, "k", "revived"));
    CHECK_OK(gd_cache_write(c2));
    CHECK(reads(c1, "k", "revived"));
    CHECK_OK(del(c1, "k"));
    CHECK_OK(gd_cache_write(c1));
    CHECK(reads(b, "k", NULL) && reads(b, "never", NULL));
    CHECK(gd_store_count(s) == 0);
    CHECK_STR_EQ(walk_all(c2), "");
    gd_cache_free(c2);
    gd_cache_free(c1);
    gd_store_free(s);
}

/* A value read from a lower layer survives writes to the layers above. */
static void test_value_lifetime(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s), *c1, *c2;
    CHECK_OK(put(b, "k", "base-value"));
    CHECK_OK(gd_cache_new(&c1, b));
    CHECK_OK(put(c1, "m", "cache-value"));
    CHECK_OK(gd_cache_new(&c2, c1));
    const uint8_t *bv, *cv;
    size_t bl, cl;
    CHECK_OK(gd_kv_get(c2, (const uint8_t *)"k", 1, &bv, &bl));
    CHECK_OK(gd_kv_get(c2, (const uint8_t *)"m", 1, &cv, &cl));
    CHECK(cl == 11 && memcmp(cv, "cache-value", cl) == 0);
    for (int i = 0; i < 500; i++) {
        char k[16];
        snprintf(k, sizeof k, "x%03d", i);
        CHECK_OK(put(c2, k, "filler"));
    }
    CHECK_OK(put(c2, "k", "shadow"));
    CHECK_OK(del(c2, "m"));
    CHECK_OK(gd_cache_write(c2)); /* writes c1, which holds neither value */
    CHECK(bl == 10 && memcmp(bv, "base-value", bl) == 0);
    gd_cache_free(c2);
    gd_cache_free(c1);
    gd_store_free(s);
}

static void test_iterate(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s), *c1, *c2;
    /* Inserted out of order; "a" < "aa" < "ab" < "b" (shorter first). */
    const char *keys[] = {"b", "ab", "a", "ba", "aa", "c", "ca", "d"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK_OK(put(b, keys[i], keys[i]));
    CHECK_STR_EQ(walk_all(b), "a=a;aa=aa;ab=ab;b=b;ba=ba;c=c;ca=ca;d=d;");
    CHECK_OK(gd_cache_new(&c1, b));
    CHECK_OK(gd_cache_new(&c2, c1));
    CHECK_OK(del(c1, "aa"));
    CHECK_OK(put(c1, "ac", "c1"));
    CHECK_OK(put(c1, "b", "c1"));
    CHECK_OK(del(c2, "c"));
    CHECK_OK(put(c2, "b", "c2"));
    CHECK_OK(put(c2, "aa", "c2")); /* revives what c1 deleted */
    CHECK_OK(put(c2, "e", "c2"));
    CHECK_OK(del(c2, "zz"));
    CHECK_OK(put(c2, "0", "c2"));
    CHECK_STR_EQ(walk_all(c2), "0=c2;a=a;aa=c2;ab=ab;ac=c1;b=c2;ba=ba;ca=ca;d=d;e=c2;");
    CHECK_STR_EQ(walk_all(c1), "a=a;ab=ab;ac=c1;b=c1;ba=ba;c=c;ca=ca;d=d;");
    /* [start, end): start included, end excluded, bounds need not exist. */
    CHECK_STR_EQ(walk_range(c2, "aa", "b", 0), "aa=c2;ab=ab;ac=c1;");
    CHECK_STR_EQ(walk_range(c2, "ab", "ba", 0), "ab=ab;ac=c1;b=c2;");
    CHECK_STR_EQ(walk_range(c2, "a0", "bb", 0), "aa=c2;ab=ab;ac=c1;b=c2;ba=ba;");
    CHECK_STR_EQ(walk_range(c2, "c", NULL, 0), "ca=ca;d=d;e=c2;");
    CHECK_STR_EQ(walk_range(c2, NULL, "a", 0), "0=c2;");
    CHECK_STR_EQ(walk_range(c2, "b", "b", 0), "");
    CHECK_STR_EQ(walk_range(c2, "d", "a", 0), "");
    CHECK_STR_EQ(walk_range(c2, "f", NULL, 0), "");
    char all[sizeof(walk){0}.text];
    snprintf(all, sizeof all, "%s", walk_all(c2));
    CHECK_STR_EQ(walk_range(c2, "", NULL, 0), all);
    /* Early stop. */
    CHECK_STR_EQ(walk_range(c2, NULL, NULL, 3), "0=c2;a=a;aa=c2;");
    CHECK_STR_EQ(walk_range(c2, "b", NULL, 1), "b=c2;");
    /* Prefixes. */
    CHECK_STR_EQ(walk_prefix(c2, "a"), "a=a;aa=c2;ab=ab;ac=c1;");
    CHECK_STR_EQ(walk_prefix(c2, "b"), "b=c2;ba=ba;");
    CHECK_STR_EQ(walk_prefix(c2, "c"), "ca=ca;");
    CHECK_STR_EQ(walk_prefix(c2, "ab"), "ab=ab;");
    CHECK_STR_EQ(walk_prefix(c2, "abc"), "");
    CHECK_STR_EQ(walk_prefix(c2, "x"), "");
    CHECK_STR_EQ(walk_prefix(c2, ""), walk_all(c2));
    gd_cache_free(c2);
    gd_cache_free(c1);
    gd_store_free(s);
}

typedef struct byte_walk {
    uint8_t keys[16][4];
    size_t lens[16];
    int n;
} byte_walk;

static int byte_visit(void *ctx, const uint8_t *key, size_t key_len, const uint8_t *value,
                      size_t value_len) {
    byte_walk *w = ctx;
    if (w->n < 16 && key_len <= 4) {
        memcpy(w->keys[w->n], key, key_len);
        w->lens[w->n] = key_len;
    }
    w->n++;
    return 0;
}

/* Binary keys: 0x00 and 0xff bytes, memcmp order, prefixes ending in 0xff. */
static void test_iterate_binary(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s);
    static const uint8_t k[][3] = {{0x01, 0xff, 0x00}, {0x01, 0xff, 0}, {0x02, 0, 0},
                                   {0x00, 0, 0},       {0x01, 0, 0},    {0xff, 0xff, 0},
                                   {0xff, 0, 0},       {0x01, 0xfe, 0}, {0xff, 0xff, 0x01}};
    static const size_t kl[] = {3, 2, 1, 1, 1, 2, 1, 2, 3};
    for (size_t i = 0; i < 9; i++)
        CHECK_OK(gd_kv_set(b, k[i], kl[i], k[i], kl[i]));
    byte_walk w = {0};
    CHECK_OK(gd_kv_iterate(b, NULL, 0, NULL, 0, byte_visit, &w));
    /* 00 < 01 < 01fe < 01ff < 01ff00 < 02 < ff < ffff < ffff01 */
    static const size_t order[] = {3, 4, 7, 1, 0, 2, 6, 5, 8};
    CHECK(w.n == 9);
    for (int i = 0; i < 9 && i < w.n; i++)
        CHECK(w.lens[i] == kl[order[i]] && memcmp(w.keys[i], k[order[i]], kl[order[i]]) == 0);
    memset(&w, 0, sizeof w);
    CHECK_OK(gd_kv_iterate_prefix(b, (const uint8_t *)"\x01\xff", 2, byte_visit, &w));
    CHECK(w.n == 2 && w.lens[0] == 2 && w.lens[1] == 3);
    memset(&w, 0, sizeof w);
    CHECK_OK(gd_kv_iterate_prefix(b, (const uint8_t *)"\xff", 1, byte_visit, &w));
    CHECK(w.n == 3 && w.lens[0] == 1 && w.lens[2] == 3);
    memset(&w, 0, sizeof w);
    CHECK_OK(gd_kv_iterate_prefix(b, (const uint8_t *)"\xff\xff", 2, byte_visit, &w));
    CHECK(w.n == 2 && w.lens[0] == 2 && w.lens[1] == 3);
    memset(&w, 0, sizeof w);
    CHECK_OK(gd_kv_iterate_prefix(b, (const uint8_t *)"\x01", 1, byte_visit, &w));
    CHECK(w.n == 4);
    gd_store_free(s);
}

/* More layers than the iterator keeps on its stack. */
static void test_deep_stack(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *layers[13];
    layers[0] = gd_store_view(s);
    CHECK_OK(put(layers[0], "k00", "0"));
    for (int i = 1; i < 13; i++) {
        CHECK_OK(gd_cache_new(&layers[i], layers[i - 1]));
        char k[8], v[8];
        snprintf(k, sizeof k, "k%02d", i);
        snprintf(v, sizeof v, "%d", i);
        CHECK_OK(put(layers[i], k, v));
        CHECK_OK(put(layers[i], "shared", v));
    }
    CHECK_OK(del(layers[12], "k05"));
    CHECK_STR_EQ(walk_prefix(layers[12], "k0"), "k00=0;k01=1;k02=2;k03=3;k04=4;k06=6;k07=7;k08=8;k09=9;");
    CHECK(reads(layers[12], "shared", "12") && reads(layers[7], "shared", "7"));
    for (int i = 12; i >= 1; i--) {
        CHECK_OK(gd_cache_write(layers[i]));
        gd_cache_free(layers[i]);
    }
    CHECK(gd_store_count(s) == 13);
    CHECK(reads(layers[0], "shared", "12") && reads(layers[0], "k05", NULL));
    gd_store_free(s);
}

static int change_is(const gd_store_change *c, const char *k, const char *v) {
    if (c->key_len != strlen(k) || memcmp(c->key, k, c->key_len) != 0)
        return 0;
    if (v == NULL)
        return c->deleted && c->value == NULL;
    return !c->deleted && c->value != NULL && c->value_len == strlen(v) &&
           memcmp(c->value, v, c->value_len) == 0;
}

static void test_changes(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s), *c;
    gd_store_change *ch = NULL;
    size_t n = 99;
    CHECK_OK(gd_store_take_changes(s, &ch, &n));
    CHECK(n == 0);
    gd_store_changes_free(ch, n);

    /* Loads restore persisted state without counting as changes. */
    CHECK_OK(gd_store_load(s, (const uint8_t *)"p1", 2, (const uint8_t *)"old", 3));
    CHECK_OK(gd_store_load(s, (const uint8_t *)"p2", 2, (const uint8_t *)"old", 3));
    CHECK_OK(gd_store_load(s, (const uint8_t *)"p3", 2, (const uint8_t *)"old", 3));
    CHECK(gd_store_count(s) == 3 && reads(b, "p1", "old"));
    CHECK_OK(gd_store_take_changes(s, &ch, &n));
    CHECK(n == 0);
    gd_store_changes_free(ch, n);

    CHECK_OK(put(b, "z", "1"));
    CHECK_OK(put(b, "m", ""));
    CHECK_OK(put(b, "z", "2"));   /* reported once, with its current value */
    CHECK_OK(put(b, "tmp", "x")); /* born and gone in one period: nothing to report */
    CHECK_OK(del(b, "tmp"));
    CHECK_OK(del(b, "p1"));       /* persisted, then deleted */
    CHECK_OK(put(b, "p2", "x"));  /* persisted, deleted, set back */
    CHECK_OK(del(b, "p2"));
    CHECK_OK(put(b, "p2", "new"));
    CHECK_OK(del(b, "absent"));
    CHECK_OK(gd_cache_new(&c, b));
    CHECK_OK(put(c, "a", "via-cache"));
    CHECK_OK(del(c, "p3"));
    CHECK_OK(del(c, "nowhere"));
    CHECK_OK(gd_cache_write(c));
    CHECK_OK(gd_store_take_changes(s, &ch, &n));
    CHECK(n == 6);
    if (n == 6) {
        CHECK(change_is(&ch[0], "a", "via-cache"));
        CHECK(change_is(&ch[1], "m", ""));
        CHECK(change_is(&ch[2], "p1", NULL));
        CHECK(change_is(&ch[3], "p2", "new"));
        CHECK(change_is(&ch[4], "p3", NULL));
        CHECK(change_is(&ch[5], "z", "2"));
    }
    gd_store_changes_free(ch, n);
    CHECK(gd_store_count(s) == 4);
    CHECK_STR_EQ(walk_all(b), "a=via-cache;m=;p2=new;z=2;");

    /* Tracking restarted; keys persisted at the last take report deletes. */
    CHECK_OK(gd_store_take_changes(s, &ch, &n));
    CHECK(n == 0);
    gd_store_changes_free(ch, n);
    CHECK_OK(put(b, "z", "3"));
    CHECK_OK(del(b, "z"));
    CHECK_OK(del(b, "m"));
    CHECK_OK(put(b, "m", "back"));
    CHECK_OK(gd_store_load(s, (const uint8_t *)"q", 1, (const uint8_t *)"loaded", 6));
    CHECK_OK(gd_store_load(s, (const uint8_t *)"m", 1, (const uint8_t *)"loaded", 6));
    CHECK_OK(gd_store_take_changes(s, &ch, &n));
    CHECK(n == 2);
    if (n == 2) {
        CHECK(change_is(&ch[0], "m", "loaded")); /* dirty before the load */
        CHECK(change_is(&ch[1], "z", NULL));
    }
    gd_store_changes_free(ch, n);
    /* A key that was loaded and then deleted was persisted: report it. */
    CHECK_OK(del(b, "q"));
    CHECK_OK(gd_store_take_changes(s, &ch, &n));
    CHECK(n == 1 && change_is(&ch[0], "q", NULL));
    gd_store_changes_free(ch, n);
    gd_store_changes_free(NULL, 0);
    gd_cache_free(c);
    gd_store_free(s);
}

static void store_hash_hex(gd_store *s, char hex[65]) {
    uint8_t h[32];
    CHECK_OK(gd_store_hash(s, h));
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", h[i]);
}

static void test_hash(void) {
    gd_store *s1, *s2, *s3;
    CHECK_OK(gd_store_new(&s1));
    CHECK_OK(gd_store_new(&s2));
    CHECK_OK(gd_store_new(&s3));
    uint8_t h[32], h2[32];
    CHECK_OK(gd_store_hash(s1, h));
    CHECK_HEX_EQ(h, 32, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    /* One entry, by the documented layout. */
    CHECK_OK(put(gd_store_view(s1), "ab", "xyz"));
    static const uint8_t layout[] = {0, 0, 0, 2, 'a', 'b', 0, 0, 0, 3, 'x', 'y', 'z'};
    gd_sha256(h2, layout, sizeof layout);
    CHECK_OK(gd_store_hash(s1, h));
    CHECK(memcmp(h, h2, 32) == 0);
    /* An empty value is still an entry. */
    CHECK_OK(put(gd_store_view(s1), "e", ""));
    static const uint8_t layout2[] = {0, 0, 0, 2, 'a', 'b', 0, 0, 0, 3, 'x', 'y', 'z',
                                      0, 0, 0, 1, 'e', 0,   0, 0, 0};
    gd_sha256(h2, layout2, sizeof layout2);
    CHECK_OK(gd_store_hash(s1, h));
    CHECK(memcmp(h, h2, 32) == 0);
    gd_store_free(s1);
    CHECK_OK(gd_store_new(&s1));

    /* Same content: direct, reversed order with churn, and via caches. */
    char k[16], v[16];
    for (int i = 0; i < 300; i++) {
        snprintf(k, sizeof k, "key%d", i);
        snprintf(v, sizeof v, "v%d", i * 7);
        CHECK_OK(put(gd_store_view(s1), k, v));
    }
    for (int i = 299; i >= 0; i--) {
        snprintf(k, sizeof k, "key%d", i);
        snprintf(v, sizeof v, "v%d", i * 7);
        CHECK_OK(put(gd_store_view(s2), k, "junk"));
        CHECK_OK(put(gd_store_view(s2), "gone", "x"));
        CHECK_OK(del(gd_store_view(s2), "gone"));
        CHECK_OK(put(gd_store_view(s2), k, v));
    }
    gd_kv *c1, *c2;
    CHECK_OK(gd_cache_new(&c1, gd_store_view(s3)));
    CHECK_OK(gd_cache_new(&c2, c1));
    for (int i = 0; i < 300; i += 2) {
        snprintf(k, sizeof k, "key%d", i);
        snprintf(v, sizeof v, "v%d", i * 7);
        CHECK_OK(gd_store_load(s3, (const uint8_t *)k, strlen(k), (const uint8_t *)v, strlen(v)));
    }
    for (int i = 1; i < 300; i += 2) {
        snprintf(k, sizeof k, "key%d", i);
        snprintf(v, sizeof v, "v%d", i * 7);
        CHECK_OK(put(c2, k, v));
        CHECK_OK(put(c1, "extra", "x"));
    }
    CHECK_OK(del(c2, "extra"));
    CHECK_OK(gd_cache_write(c2));
    CHECK_OK(gd_cache_write(c1));
    char x1[65], x2[65], x3[65];
    store_hash_hex(s1, x1);
    store_hash_hex(s2, x2);
    store_hash_hex(s3, x3);
    CHECK_STR_EQ(x1, x2);
    CHECK_STR_EQ(x1, x3);
    /* Tombstones waiting for take_changes do not count. */
    gd_store_change *ch;
    size_t n;
    CHECK_OK(gd_store_take_changes(s3, &ch, &n));
    gd_store_changes_free(ch, n);
    CHECK_OK(put(gd_store_view(s3), "key0", "tmp"));
    CHECK_OK(del(gd_store_view(s3), "key0"));
    CHECK_OK(del(gd_store_view(s1), "key0"));
    store_hash_hex(s1, x1);
    store_hash_hex(s3, x3);
    CHECK_STR_EQ(x1, x3);
    /* Any difference shows: a value, a key, an extra empty value. */
    CHECK_OK(put(gd_store_view(s2), "key0", "v0"));
    store_hash_hex(s2, x2);
    CHECK(strcmp(x1, x2) != 0);
    CHECK_OK(del(gd_store_view(s2), "key0"));
    CHECK_OK(put(gd_store_view(s2), "key5", "v36"));
    store_hash_hex(s2, x2);
    CHECK(strcmp(x1, x2) != 0);
    CHECK_OK(put(gd_store_view(s2), "key5", "v35"));
    store_hash_hex(s2, x2);
    CHECK_STR_EQ(x1, x2);
    CHECK_OK(put(gd_store_view(s2), "key", ""));
    store_hash_hex(s2, x2);
    CHECK(strcmp(x1, x2) != 0);
    /* The framing separates key from value: "ab"->"c" differs from "a"->"bc". */
    gd_store *t1, *t2;
    CHECK_OK(gd_store_new(&t1));
    CHECK_OK(gd_store_new(&t2));
    CHECK_OK(put(gd_store_view(t1), "ab", "c"));
    CHECK_OK(put(gd_store_view(t2), "a", "bc"));
    store_hash_hex(t1, x1);
    store_hash_hex(t2, x2);
    CHECK(strcmp(x1, x2) != 0);
    gd_store_free(t1);
    gd_store_free(t2);
    gd_cache_free(c2);
    gd_cache_free(c1);
    gd_store_free(s1);
    gd_store_free(s2);
    gd_store_free(s3);
}

/* ---- randomized comparison against a naive model ---- */

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

#define MODEL_LAYERS 5 /* the base and up to four caches */
#define MODEL_VAL 8

enum { CELL_NONE, CELL_SET, CELL_DEL };

typedef struct cell {
    uint8_t state;
    uint8_t len;
    uint8_t val[MODEL_VAL];
} cell;

typedef struct model {
    size_t nkeys;
    uint8_t (*keys)[8];
    size_t *klen;
    size_t *order; /* key indices in store order */
    size_t *rank;  /* position of each key in order */
    cell *layer[MODEL_LAYERS]; /* layer[0]: the base (SET or NONE) */
    bool *persisted, *dirty;
    gd_kv *kv[MODEL_LAYERS];
    int depth; /* caches on the base */
    gd_store *s;
    uint64_t rng;
} model;

static const model *sort_model;

static int key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (al > bl) - (al < bl);
}

static int order_cmp(const void *x, const void *y) {
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return key_cmp(sort_model->keys[a], sort_model->klen[a], sort_model->keys[b],
                   sort_model->klen[b]);
}

static void model_init(model *m, size_t nkeys, size_t max_len, uint64_t seed) {
    memset(m, 0, sizeof *m);
    m->rng = seed;
    m->nkeys = nkeys;
    m->keys = calloc(nkeys, sizeof *m->keys);
    m->klen = calloc(nkeys, sizeof *m->klen);
    m->order = calloc(nkeys, sizeof *m->order);
    m->rank = calloc(nkeys, sizeof *m->rank);
    m->persisted = calloc(nkeys, sizeof *m->persisted);
    m->dirty = calloc(nkeys, sizeof *m->dirty);
    for (int l = 0; l < MODEL_LAYERS; l++)
        m->layer[l] = calloc(nkeys, sizeof(cell));
    /* Distinct keys over a small alphabet, so prefixes and 0x00/0xff meet. */
    static const uint8_t alphabet[] = {0x00, 0x01, 'a', 0x7f, 0x80, 0xfe, 0xff};
    for (size_t i = 0; i < nkeys; i++) {
        for (;;) {
            size_t len = 1 + rng_next(&m->rng) % max_len;
            for (size_t j = 0; j < len; j++)
                m->keys[i][j] = alphabet[rng_next(&m->rng) % sizeof alphabet];
            m->klen[i] = len;
            size_t j = 0;
            while (j < i && key_cmp(m->keys[j], m->klen[j], m->keys[i], len) != 0)
                j++;
            if (j == i)
                break;
        }
        m->order[i] = i;
    }
    sort_model = m;
    qsort(m->order, nkeys, sizeof *m->order, order_cmp);
    for (size_t i = 0; i < nkeys; i++)
        m->rank[m->order[i]] = i;
    CHECK_OK(gd_store_new(&m->s));
    m->kv[0] = gd_store_view(m->s);
}

static void model_free(model *m) {
    for (int l = m->depth; l >= 1; l--)
        gd_cache_free(m->kv[l]);
    gd_store_free(m->s);
    for (int l = 0; l < MODEL_LAYERS; l++)
        free(m->layer[l]);
    free(m->keys);
    free(m->klen);
    free(m->order);
    free(m->rank);
    free(m->persisted);
    free(m->dirty);
}

/* The model's view of key k from layer l down; NULL if absent. */
static const cell *model_get(const model *m, int l, size_t k) {
    for (; l >= 1; l--) {
        if (m->layer[l][k].state == CELL_SET)
            return &m->layer[l][k];
        if (m->layer[l][k].state == CELL_DEL)
            return NULL;
    }
    return m->layer[0][k].state == CELL_SET ? &m->layer[0][k] : NULL;
}

static void model_base_set(model *m, size_t k, const cell *c) {
    m->layer[0][k] = *c;
    m->layer[0][k].state = CELL_SET;
    m->dirty[k] = true;
}

/* A key born since the last take and deleted again leaves no trace. */
static void model_base_del(model *m, size_t k) {
    if (m->layer[0][k].state == CELL_SET) {
        m->layer[0][k].state = CELL_NONE;
        m->dirty[k] = m->persisted[k];
    }
}

static void model_check_get(model *m, int l, size_t k) {
    const cell *want = model_get(m, l, k);
    const uint8_t *v;
    size_t vl;
    gd_status st = gd_kv_get(m->kv[l], m->keys[k], m->klen[k], &v, &vl);
    bool h = gd_kv_has(m->kv[l], m->keys[k], m->klen[k]);
    if (want == NULL) {
        CHECK(st == GD_ERR_NOT_FOUND && !h);
    } else {
        CHECK(st == GD_OK && h && vl == want->len && (vl == 0 || memcmp(v, want->val, vl) == 0));
    }
}

typedef struct collect {
    const model *m;
    size_t *got; /* key indices visited */
    size_t n;
    int bad;
} collect;

static int collect_visit(void *ctx, const uint8_t *key, size_t key_len, const uint8_t *value,
                         size_t value_len) {
    collect *c = ctx;
    if (c->n >= c->m->nkeys) {
        c->bad = 1;
        return 1;
    }
    /* Find the key by binary search over the model's order. */
    size_t lo = 0, hi = c->m->nkeys;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2, k = c->m->order[mid];
        int r = key_cmp(c->m->keys[k], c->m->klen[k], key, key_len);
        if (r == 0) {
            c->got[c->n++] = k;
            return 0;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    c->bad = 1;
    return 1;
}

/* Walks [start, end) at layer l (bounds as key indices; -1 for none, or a
 * raw prefix) and compares with the model. */
static void model_check_walk(model *m, int l, long start, long end, const uint8_t *prefix,
                             size_t prefix_len) {
    collect c = {m, calloc(m->nkeys + 1, sizeof(size_t)), 0, 0};
    if (prefix != NULL) {
        CHECK_OK(gd_kv_iterate_prefix(m->kv[l], prefix, prefix_len, collect_visit, &c));
    } else {
        CHECK_OK(gd_kv_iterate(m->kv[l], start >= 0 ? m->keys[start] : NULL,
                               start >= 0 ? m->klen[start] : 0, end >= 0 ? m->keys[end] : NULL,
                               end >= 0 ? m->klen[end] : 0, collect_visit, &c));
    }
    CHECK(!c.bad);
    size_t j = 0;
    int mismatch = 0;
    for (size_t r = 0; r < m->nkeys; r++) {
        size_t k = m->order[r];
        if (start >= 0 && r < m->rank[start])
            continue;
        if (end >= 0 && r >= m->rank[end])
            continue;
        if (prefix != NULL &&
            (m->klen[k] < prefix_len || memcmp(m->keys[k], prefix, prefix_len) != 0))
            continue;
        if (model_get(m, l, k) == NULL)
            continue;
        if (j >= c.n || c.got[j] != k)
            mismatch = 1;
        j++;
    }
    CHECK(!mismatch && j == c.n);
    free(c.got);
}

static void model_check_changes(model *m) {
    gd_store_change *ch = NULL;
    size_t n = 0;
    CHECK_OK(gd_store_take_changes(m->s, &ch, &n));
    size_t j = 0;
    int mismatch = 0;
    for (size_t r = 0; r < m->nkeys; r++) {
        size_t k = m->order[r];
        bool live = m->layer[0][k].state == CELL_SET;
        if (m->dirty[k] && (live || m->persisted[k])) {
            if (j >= n)
                mismatch = 1;
            else if (ch[j].key_len != m->klen[k] || memcmp(ch[j].key, m->keys[k], m->klen[k]))
                mismatch = 1;
            else if (ch[j].deleted != !live)
                mismatch = 1;
            else if (live && (ch[j].value == NULL || ch[j].value_len != m->layer[0][k].len ||
                              (ch[j].value_len &&
                               memcmp(ch[j].value, m->layer[0][k].val, ch[j].value_len))))
                mismatch = 1;
            j++;
        }
        m->persisted[k] = live;
        m->dirty[k] = false;
    }
    CHECK(!mismatch && j == n);
    gd_store_changes_free(ch, n);
}

static size_t model_count(const model *m) {
    size_t n = 0;
    for (size_t k = 0; k < m->nkeys; k++)
        n += m->layer[0][k].state == CELL_SET;
    return n;
}

static void model_random_cell(model *m, cell *c) {
    c->state = CELL_SET;
    c->len = (uint8_t)(rng_next(&m->rng) % (MODEL_VAL + 1)); /* 0 included */
    for (int i = 0; i < MODEL_VAL; i++)
        c->val[i] = (uint8_t)rng_next(&m->rng);
}

static void run_model(size_t nkeys, size_t max_len, int ops, uint64_t seed) {
    model m;
    model_init(&m, nkeys, max_len, seed);
    int failures_before = gd_test_failures;
    for (int op = 0; op < ops && gd_test_failures == failures_before; op++) {
        uint64_t r = rng_next(&m.rng) % 100;
        size_t k = rng_next(&m.rng) % nkeys;
        int top = m.depth;
        gd_kv *kv = m.kv[top];
        if (r < 35) { /* set */
            cell c;
            model_random_cell(&m, &c);
            CHECK_OK(gd_kv_set(kv, m.keys[k], m.klen[k], c.val, c.len));
            if (top == 0)
                model_base_set(&m, k, &c);
            else
                m.layer[top][k] = c;
        } else if (r < 50) { /* delete */
            CHECK_OK(gd_kv_delete(kv, m.keys[k], m.klen[k]));
            if (top == 0)
                model_base_del(&m, k);
            else
                m.layer[top][k].state = CELL_DEL;
        } else if (r < 65) { /* read at any layer */
            model_check_get(&m, (int)(rng_next(&m.rng) % (uint64_t)(top + 1)), k);
        } else if (r < 70) { /* push a cache */
            if (top + 1 < MODEL_LAYERS) {
                CHECK_OK(gd_cache_new(&m.kv[top + 1], kv));
                memset(m.layer[top + 1], 0, nkeys * sizeof(cell));
                m.depth++;
            }
        } else if (r < 78 && top > 0) { /* write down, then keep or free */
            CHECK_OK(gd_cache_write(kv));
            for (size_t i = 0; i < nkeys; i++) {
                cell *c = &m.layer[top][i];
                if (c->state == CELL_NONE)
                    continue;
                if (top - 1 > 0)
                    m.layer[top - 1][i] = *c;
                else if (c->state == CELL_SET)
                    model_base_set(&m, i, c);
                else
                    model_base_del(&m, i);
                c->state = CELL_NONE;
            }
            if (r < 74) {
                gd_cache_free(kv);
                m.depth--;
            }
        } else if (r < 81 && top > 0) { /* discard */
            gd_cache_free(kv);
            m.depth--;
        } else if (r < 84) { /* load into the base */
            cell c;
            model_random_cell(&m, &c);
            CHECK_OK(gd_store_load(m.s, m.keys[k], m.klen[k], c.val, c.len));
            m.layer[0][k] = c;
            m.persisted[k] = true;
        } else if (r < 89) { /* range walk at any layer */
            int l = (int)(rng_next(&m.rng) % (uint64_t)(top + 1));
            long start = rng_next(&m.rng) % 4 ? (long)(rng_next(&m.rng) % nkeys) : -1;
            long end = rng_next(&m.rng) % 4 ? (long)(rng_next(&m.rng) % nkeys) : -1;
            model_check_walk(&m, l, start, end, NULL, 0);
        } else if (r < 92) { /* prefix walk */
            size_t plen = 1 + rng_next(&m.rng) % m.klen[k];
            model_check_walk(&m, top, -1, -1, m.keys[k], plen);
        } else if (r < 94) {
            model_check_changes(&m);
        } else {
            /* the rest: more sets at the base to grow it past chunk sizes */
            cell c;
            model_random_cell(&m, &c);
            CHECK_OK(gd_kv_set(m.kv[0], m.keys[k], m.klen[k], c.val, c.len));
            model_base_set(&m, k, &c);
        }
        CHECK(gd_store_count(m.s) == model_count(&m));
        if (op % 500 == 0) {
            model_check_walk(&m, m.depth, -1, -1, NULL, 0);
            model_check_walk(&m, 0, -1, -1, NULL, 0);
        }
    }
    /* Every key at every layer, then the final state by content and hash. */
    for (int l = 0; l <= m.depth; l++)
        for (size_t k = 0; k < nkeys; k++)
            model_check_get(&m, l, k);
    model_check_walk(&m, m.depth, -1, -1, NULL, 0);
    model_check_changes(&m);
    gd_store *fresh;
    CHECK_OK(gd_store_new(&fresh));
    for (size_t i = 0; i < nkeys; i++) {
        size_t k = (i * 7919) % nkeys; /* a scrambled order when nkeys is not a multiple */
        if (m.layer[0][k].state == CELL_SET)
            CHECK_OK(gd_store_load(fresh, m.keys[k], m.klen[k], m.layer[0][k].val,
                                   m.layer[0][k].len));
    }
    uint8_t h1[32], h2[32];
    CHECK_OK(gd_store_hash(m.s, h1));
    CHECK_OK(gd_store_hash(fresh, h2));
    CHECK(memcmp(h1, h2, 32) == 0);
    CHECK(gd_store_count(fresh) == gd_store_count(m.s));
    gd_store_free(fresh);
    model_free(&m);
}

static void test_random_small(void) { run_model(60, 3, 20000, 1); }

static void test_random_large(void) { run_model(3001, 6, 40000, 2); }

/* Many keys in random order, then most deleted: chunk splits and merges. */
static void test_bulk(void) {
    gd_store *s;
    CHECK_OK(gd_store_new(&s));
    gd_kv *b = gd_store_view(s);
    enum { N = 20000 };
    uint64_t rng = 3;
    uint32_t *perm = malloc(N * sizeof *perm);
    for (uint32_t i = 0; i < N; i++)
        perm[i] = i;
    for (uint32_t i = N - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(rng_next(&rng) % (i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint32_t i = 0; i < N; i++) {
        uint8_t k[4] = {(uint8_t)(perm[i] >> 24), (uint8_t)(perm[i] >> 16),
                        (uint8_t)(perm[i] >> 8), (uint8_t)perm[i]};
        CHECK_OK(gd_kv_set(b, k, 4, k, 4));
    }
    CHECK(gd_store_count(s) == N);
    for (uint32_t i = 0; i < N; i++) {
        if (perm[i] % 10 == 0)
            continue;
        uint8_t k[4] = {(uint8_t)(perm[i] >> 24), (uint8_t)(perm[i] >> 16),
                        (uint8_t)(perm[i] >> 8), (uint8_t)perm[i]};
        CHECK_OK(gd_kv_delete(b, k, 4));
    }
    CHECK(gd_store_count(s) == N / 10);
    byte_walk w = {0};
    CHECK_OK(gd_kv_iterate(b, NULL, 0, NULL, 0, byte_visit, &w));
    CHECK(w.n == N / 10);
    CHECK(w.keys[1][3] == 10 && w.keys[2][3] == 20);
    gd_store_change *ch;
    size_t n;
    CHECK_OK(gd_store_take_changes(s, &ch, &n));
    CHECK(n == N / 10); /* keys born and deleted in the period are not reported */
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)ch[i].key[0] << 24 | (uint32_t)ch[i].key[1] << 16 |
                     (uint32_t)ch[i].key[2] << 8 | ch[i].key[3];
        CHECK(v == i * 10 && !ch[i].deleted);
    }
    gd_store_changes_free(ch, n);
    for (uint32_t i = 0; i < N; i += 10) {
        uint8_t k[4] = {(uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
        CHECK_OK(gd_kv_delete(b, k, 4));
    }
    CHECK(gd_store_count(s) == 0);
    CHECK_OK(gd_store_take_changes(s, &ch, &n));
    CHECK(n == N / 10 && n > 0 && ch[0].deleted);
    gd_store_changes_free(ch, n);
    uint8_t h[32];
    CHECK_OK(gd_store_hash(s, h));
    CHECK_HEX_EQ(h, 32, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    free(perm);
    gd_store_free(s);
}

int main(void) {
    RUN_TEST(test_base);
    RUN_TEST(test_limits);
    RUN_TEST(test_layers);
    RUN_TEST(test_deletes_and_sets);
    RUN_TEST(test_value_lifetime);
    RUN_TEST(test_iterate);
    RUN_TEST(test_iterate_binary);
    RUN_TEST(test_deep_stack);
    RUN_TEST(test_changes);
    RUN_TEST(test_hash);
    RUN_TEST(test_random_small);
    RUN_TEST(test_random_large);
    RUN_TEST(test_bulk);
    return gd_test_finish();
}
