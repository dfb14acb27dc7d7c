/* The DiLoCo module's store, and how its files report: keys, protobuf
 * records, 64-bit amounts, the module account's transfers, errors
 * (dl_fail) and a round's events (dl_event). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/auth.h"
#include "chain/module/bank.h"
#include "chain/module/diloco_internal.h"
#include "chain/wire/pb_strict.h"

/* ---- keys ------------------------------------------------------------------ */

void dl_key_init(dl_key *k, uint8_t kind) {
    k->b[0] = DL_PREFIX;
    k->b[1] = kind;
    k->n = 2;
}

void dl_key_u64(dl_key *k, uint64_t v) {
    for (int i = 7; i >= 0; i--)
        k->b[k->n++] = (uint8_t)(v >> (8 * i));
}

void dl_key_u32(dl_key *k, uint32_t v) {
    for (int i = 3; i >= 0; i--)
        k->b[k->n++] = (uint8_t)(v >> (8 * i));
}

/* Addresses were validated before they reach a key; a longer one is cut so
 * that the key stays in bounds (it then names nothing). */
void dl_key_addr(dl_key *k, const char *address) {
    size_t len = strlen(address);
    if (len > GD_ADDRESS_STR_MAX)
        len = GD_ADDRESS_STR_MAX;
    k->b[k->n++] = (uint8_t)len;
    memcpy(k->b + k->n, address, len);
    k->n += len;
}

uint64_t dl_get_be64(const uint8_t b[8]) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | b[i];
    return v;
}

void dl_put_be64(uint8_t b[8], uint64_t v) {
    for (int i = 7; i >= 0; i--, v >>= 8)
        b[i] = (uint8_t)v;
}

void dl_round_prefix(dl_key *k, uint8_t kind, const dl_round *r) {
    dl_key_init(k, kind);
    dl_key_u64(k, r->run);
    dl_key_u64(k, r->index);
}

static void dl_key_run_round(dl_key *k, uint8_t kind, uint64_t run, uint64_t round) {
    dl_key_init(k, kind);
    dl_key_u64(k, run);
    dl_key_u64(k, round);
}

void dl_key_commit(dl_key *k, uint64_t run, uint64_t round, const char *participant) {
    dl_key_run_round(k, DL_COMMIT, run, round);
    dl_key_addr(k, participant);
}

void dl_key_weight(dl_key *k, uint64_t run, uint64_t round, const char *member) {
    dl_key_run_round(k, DL_WEIGHT, run, round);
    dl_key_addr(k, member);
}

void dl_key_assignment(dl_key *k, uint64_t run, uint64_t round, const char *target,
                       uint32_t check) {
    dl_key_run_round(k, DL_ASSIGN, run, round);
    dl_key_addr(k, target);
    dl_key_u32(k, check);
}

void dl_key_verdict(dl_key *k, uint64_t run, uint64_t round, const char *target, uint32_t check,
                    const char *validator) {
    dl_key_run_round(k, DL_VERDICT, run, round);
    dl_key_addr(k, target);
    dl_key_u32(k, check);
    dl_key_addr(k, validator);
}

void dl_key_settle(dl_key *k, uint64_t run, uint64_t epoch, const char *address) {
    dl_key_run_round(k, DL_SETTLE, run, epoch);
    dl_key_addr(k, address);
}

/* ---- records ----------------------------------------------------------------- */

void dl_key_secret(dl_key *k, uint64_t run, uint64_t round, const char *member) {
    dl_key_run_round(k, DL_RANDOM, run, round);
    dl_key_addr(k, member);
}

gd_status dl_load(gd_ctx *ctx, const dl_key *k, void **out,
                  const ProtobufCMessageDescriptor *d) {
    *out = NULL;
    const uint8_t *v;
    size_t len;
    gd_status s = gd_ctx_get(ctx, k->b, k->n, &v, &len);
    if (s != GD_OK)
        return s;
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, v);
    if (m == NULL)
        return gd_fail(GD_ERR_PARSE, "stored %s does not decode", d->short_name);
    *out = m;
    return GD_OK;
}

gd_status dl_save(gd_ctx *ctx, const dl_key *k, const void *msg) {
    const ProtobufCMessage *m = msg;
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(len ? len : 1);
    if (buf == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a %s", m->descriptor->short_name);
    protobuf_c_message_pack(m, buf);
    gd_status s = gd_ctx_set(ctx, k->b, k->n, buf, len);
    free(buf);
    return s;
}

gd_status dl_pack(gd_buf *out, const void *msg) {
    const ProtobufCMessage *m = msg;
    size_t len = protobuf_c_message_get_packed_size(m);
    out->len = 0;
    GD_TRY(gd_buf_reserve(out, len + 1));
    out->len = protobuf_c_message_pack(m, out->data);
    return GD_OK;
}

void dl_free(void *msg) {
    if (msg != NULL)
        protobuf_c_message_free_unpacked(msg, NULL);
}

typedef struct dl_list_job {
    const ProtobufCMessageDescriptor *d;
    dl_list *out;
    gd_status status;
} dl_list_job;

static int dl_list_visit(void *ctx, const uint8_t *key, size_t key_len, const uint8_t *value,
                         size_t value_len) {
    (void)key;
    (void)key_len;
    dl_list_job *job = ctx;
    ProtobufCMessage *m = protobuf_c_message_unpack(job->d, NULL, value_len, value);
    void **items = realloc(job->out->items, (job->out->n + 1) * sizeof *items);
    if (m == NULL || items == NULL) {
        dl_free(m);
        if (items != NULL)
            job->out->items = items;
        job->status = m == NULL ? gd_fail(GD_ERR_PARSE, "stored %s does not decode",
                                          job->d->short_name)
                                : gd_fail(GD_ERR_NOMEM, "out of memory listing records");
        return 1;
    }
    job->out->items = items;
    items[job->out->n++] = m;
    return 0;
}

gd_status dl_list_prefix(gd_kv *kv, const dl_key *prefix, dl_list *out,
                         const ProtobufCMessageDescriptor *d) {
    out->items = NULL;
    out->n = 0;
    dl_list_job job = {d, out, GD_OK};
    gd_status s = gd_kv_iterate_prefix(kv, prefix->b, prefix->n, dl_list_visit, &job);
    if (s == GD_OK)
        s = job.status;
    if (s != GD_OK)
        dl_list_free(out);
    return s;
}

void dl_list_free(dl_list *l) {
    for (size_t i = 0; i < l->n; i++)
        dl_free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

typedef struct dl_keys_job {
    uint8_t **keys;
    size_t *lens;
    size_t n, cap;
    gd_status status;
} dl_keys_job;

static int dl_keys_visit(void *arg, const uint8_t *key, size_t key_len, const uint8_t *value,
                         size_t value_len) {
    (void)value;
    (void)value_len;
    dl_keys_job *job = arg;
    if (job->n == job->cap) {
        size_t cap = job->cap ? 2 * job->cap : 64;
        uint8_t **keys = realloc(job->keys, cap * sizeof *keys);
        if (keys != NULL)
            job->keys = keys;
        size_t *lens = keys ? realloc(job->lens, cap * sizeof *lens) : NULL;
        if (lens != NULL)
            job->lens = lens;
        if (keys == NULL || lens == NULL) {
            job->status = gd_fail(GD_ERR_NOMEM, "out of memory listing keys");
            return 1;
        }
        job->cap = cap;
    }
    uint8_t *copy = malloc(key_len);
    if (copy == NULL) {
        job->status = gd_fail(GD_ERR_NOMEM, "out of memory listing keys");
        return 1;
    }
    memcpy(copy, key, key_len);
    job->keys[job->n] = copy;
    job->lens[job->n++] = key_len;
    return 0;
}

/* Keys are collected first: the store is not changed under an iteration. */
gd_status dl_delete_prefix(gd_ctx *ctx, const dl_key *prefix) {
    dl_keys_job job = {NULL, NULL, 0, 0, GD_OK};
    gd_status s = gd_kv_iterate_prefix(ctx->kv, prefix->b, prefix->n, dl_keys_visit, &job);
    if (s == GD_OK)
        s = job.status;
    for (size_t i = 0; s == GD_OK && i < job.n; i++)
        s = gd_ctx_delete(ctx, job.keys[i], job.lens[i]);
    for (size_t i = 0; i < job.n; i++)
        free(job.keys[i]);
    free(job.keys);
    free(job.lens);
    return s;
}

static int dl_count_visit(void *arg, const uint8_t *key, size_t key_len, const uint8_t *value,
                          size_t value_len) {
    (void)key;
    (void)key_len;
    (void)value;
    (void)value_len;
    (*(size_t *)arg)++;
    return 0;
}

gd_status dl_count_prefix(gd_kv *kv, const dl_key *prefix, size_t *out) {
    *out = 0;
    return gd_kv_iterate_prefix(kv, prefix->b, prefix->n, dl_count_visit, out);
}

/* protobuf-c frees an unpacked message's fields with free(), and an empty
 * string field may point at its static default: such a pointer must not be
 * freed, so replaced strings are freed only when they are not that default. */
gd_status dl_set_str(char **field, const char *value) {
    char *copy = strdup(value);
    if (copy == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    if (*field != NULL && *field != protobuf_c_empty_string)
        free(*field);
    *field = copy;
    return GD_OK;
}

gd_status dl_set_bytes(ProtobufCBinaryData *field, const uint8_t *data, size_t len) {
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    memcpy(copy, data, len);
    free(field->data);
    field->data = copy;
    field->len = len;
    return GD_OK;
}

gd_status dl_push_str(char ***items, size_t *n, const char *s) {
    char **grown = realloc(*items, (*n + 1) * sizeof *grown);
    if (grown == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    *items = grown;
    grown[*n] = strdup(s);
    if (grown[*n] == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    (*n)++;
    return GD_OK;
}

bool dl_has_str(char *const *items, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i], s) == 0)
            return true;
    return false;
}

/* ---- typed access --------------------------------------------------------------- */

gd_status dl_get_params(gd_ctx *ctx, dl_params **out) {
    dl_key k;
    dl_key_init(&k, DL_PARAMS);
    return dl_load(ctx, &k, (void **)out, &gonka__diloco__v1__params__descriptor);
}

gd_status dl_get_run(gd_ctx *ctx, dl_run **out, uint64_t run) {
    dl_key k;
    dl_key_init(&k, DL_RUN);
    dl_key_u64(&k, run);
    return dl_load(ctx, &k, (void **)out, &gonka__diloco__v1__run__descriptor);
}

gd_status dl_put_run(gd_ctx *ctx, const dl_run *r) {
    dl_key k;
    dl_key_init(&k, DL_RUN);
    dl_key_u64(&k, r->id);
    return dl_save(ctx, &k, r);
}

gd_status dl_get_member(gd_ctx *ctx, dl_member **out, uint64_t run, const char *addr) {
    dl_key k;
    dl_key_init(&k, DL_MEMBER);
    dl_key_u64(&k, run);
    dl_key_addr(&k, addr);
    return dl_load(ctx, &k, (void **)out, &gonka__diloco__v1__member__descriptor);
}

gd_status dl_put_member(gd_ctx *ctx, const dl_member *m) {
    dl_key k;
    dl_key_init(&k, DL_MEMBER);
    dl_key_u64(&k, m->run);
    dl_key_addr(&k, m->address);
    return dl_save(ctx, &k, m);
}

gd_status dl_get_round(gd_ctx *ctx, dl_round **out, uint64_t run, uint64_t round) {
    dl_key k;
    dl_key_init(&k, DL_ROUND);
    dl_key_u64(&k, run);
    dl_key_u64(&k, round);
    return dl_load(ctx, &k, (void **)out, &gonka__diloco__v1__round__descriptor);
}

gd_status dl_put_round(gd_ctx *ctx, const dl_round *r) {
    dl_key k;
    dl_key_init(&k, DL_ROUND);
    dl_key_u64(&k, r->run);
    dl_key_u64(&k, r->index);
    dl_round bare = *r;
    bare.members = NULL;
    bare.n_members = 0;
    return dl_save(ctx, &k, &bare);
}

gd_status dl_load_members(gd_ctx *ctx, dl_round *r) {
    if (r->n_members > 0)
        return GD_OK;
    dl_key k;
    dl_key_init(&k, DL_WEIGHT);
    dl_key_u64(&k, r->run);
    dl_key_u64(&k, r->index);
    dl_list l;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &l, &gonka__diloco__v1__weighted_member__descriptor));
    /* The round takes the list: free_unpacked frees both. */
    r->members = (Gonka__Diloco__V1__WeightedMember **)l.items;
    r->n_members = l.n;
    return GD_OK;
}

gd_status dl_member_weight(gd_ctx *ctx, uint64_t run, uint64_t round, const char *addr,
                           uint64_t *weight) {
    *weight = 0;
    dl_key k;
    dl_key_weight(&k, run, round, addr);
    Gonka__Diloco__V1__WeightedMember *m = NULL;
    gd_status s = dl_load(ctx, &k, (void **)&m, &gonka__diloco__v1__weighted_member__descriptor);
    if (s == GD_ERR_NOT_FOUND)
        return GD_OK;
    if (s == GD_OK)
        s = dl_amount(weight, m->weight);
    dl_free(m);
    return s;
}

gd_status dl_get_commitment(gd_ctx *ctx, dl_commitment **out, uint64_t run, uint64_t round,
                            const char *addr) {
    dl_key k;
    dl_key_commit(&k, run, round, addr);
    return dl_load(ctx, &k, (void **)out, &gonka__diloco__v1__commitment__descriptor);
}

/* ---- amounts --------------------------------------------------------------------- */

gd_status dl_amount(uint64_t *out, const char *text) {
    if (text == NULL || text[0] == '\0' || (text[0] == '0' && text[1] != '\0'))
        return gd_fail(GD_ERR_INVALID, "amount '%s' is not a canonical decimal",
                       text ? text : "");
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return gd_fail(GD_ERR_INVALID, "amount '%s' is not a canonical decimal", text);
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return gd_fail(GD_ERR_INVALID, "amount %s does not fit 64 bits", text);
        v = v * 10 + d;
    }
    *out = v;
    return GD_OK;
}

void dl_amount_str(char out[24], uint64_t v) { snprintf(out, 24, "%llu", (unsigned long long)v); }

uint64_t dl_muldiv(uint64_t a, uint64_t b, dl_u128 c) {
    dl_u128 p = (dl_u128)a * b / c;
    return p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
}

uint64_t dl_muldiv_wide(uint64_t a, dl_u128 b, dl_u128 c) {
    /* b and c shifted alike until the product fits: floor(b / 2^k) summed
     * over a split of c never exceeds floor(c / 2^k), so shares computed
     * this way never add up to more than a. */
    while (c > UINT64_MAX) {
        b >>= 1;
        c >>= 1;
    }
    return c == 0 ? 0 : dl_muldiv(a, (uint64_t)b, c);
}

gd_status dl_tally_read(dl_u128 *out, const char *text) {
    *out = 0;
    return text == NULL || text[0] == '\0' ? GD_OK : dl_amount128(out, text);
}

gd_status dl_amount128(dl_u128 *out, const char *text) {
    if (text == NULL || text[0] == '\0' || (text[0] == '0' && text[1] != '\0') ||
        strlen(text) > 39)
        return gd_fail(GD_ERR_INVALID, "amount '%s' is not a canonical decimal",
                       text ? text : "");
    dl_u128 v = 0, max = ~(dl_u128)0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return gd_fail(GD_ERR_INVALID, "amount '%s' is not a canonical decimal", text);
        unsigned d = (unsigned)(*p - '0');
        if (v > (max - d) / 10)
            return gd_fail(GD_ERR_INVALID, "amount %s does not fit 128 bits", text);
        v = v * 10 + d;
    }
    *out = v;
    return GD_OK;
}

void dl_amount128_str(char out[40], dl_u128 v) {
    char rev[40];
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + (unsigned)(v % 10));
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    out[n] = '\0';
}

/* ---- the module account ---------------------------------------------------------- */

gd_status dl_module_address(char out[GD_ADDRESS_STR_MAX]) {
    return gd_auth_module_address(out, GD_ADDRESS_STR_MAX, GD_DILOCO_MODULE_NAME);
}

static gd_status dl_coin(gd_coin *c, const char *denom, uint64_t amount) {
    if (strlen(denom) >= sizeof c->denom)
        return gd_fail(GD_ERR_INVALID, "denom too long");
    snprintf(c->denom, sizeof c->denom, "%s", denom);
    snprintf(c->amount, sizeof c->amount, "%llu", (unsigned long long)amount);
    return GD_OK;
}

gd_status dl_pay_in(gd_ctx *ctx, const char *from, const char *denom, uint64_t amount) {
    if (amount == 0)
        return GD_OK;
    char module[GD_ADDRESS_STR_MAX];
    gd_coin c;
    GD_TRY(dl_module_address(module));
    GD_TRY(dl_coin(&c, denom, amount));
    return gd_bank_send(ctx, from, module, &c, 1);
}

gd_status dl_pay_out(gd_ctx *ctx, const char *to, const char *denom, uint64_t amount) {
    if (amount == 0)
        return GD_OK;
    char module[GD_ADDRESS_STR_MAX];
    gd_coin c;
    GD_TRY(dl_module_address(module));
    GD_TRY(dl_coin(&c, denom, amount));
    return gd_bank_send(ctx, module, to, &c, 1);
}

gd_status dl_burn(gd_ctx *ctx, const char *denom, uint64_t amount) {
    if (amount == 0)
        return GD_OK;
    char module[GD_ADDRESS_STR_MAX];
    gd_coin c;
    GD_TRY(dl_module_address(module));
    GD_TRY(dl_coin(&c, denom, amount));
    return gd_bank_burn(ctx, module, &c, 1);
}

gd_status dl_fail(gd_ctx *ctx, uint32_t code, const char *fmt, ...) {
    char log[GD_ABCI_LOG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(log, sizeof log, fmt, ap);
    va_end(ap);
    return gd_ctx_fail(ctx, GD_DILOCO_CODESPACE, code, "%s", log);
}

gd_status dl_event(gd_ctx *ctx, const char *type, uint64_t run, uint64_t round, const char *k1,
                   const char *v1, const char *k2, const char *v2) {
    char rs[24], ro[24];
    dl_amount_str(rs, run);
    dl_amount_str(ro, round);
    if (k1 == NULL)
        return gd_events_add(ctx->events, type, "run", rs, "round", ro, NULL);
    if (k2 == NULL)
        return gd_events_add(ctx->events, type, "run", rs, "round", ro, k1, v1, NULL);
    return gd_events_add(ctx->events, type, "run", rs, "round", ro, k1, v1, k2, v2, NULL);
}

const char *dl_denom(const dl_run *r) {
    return r->spec && r->spec->reward_per_epoch && r->spec->reward_per_epoch->denom
               ? r->spec->reward_per_epoch->denom
               : "";
}
