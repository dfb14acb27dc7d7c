/* Execution context helpers: ABCI errors, events, metered store access. */
#include "chain/module/context.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gd_sdk_error_text(uint32_t code) {
    switch (code) {
    case 2: return "tx parse error";
    case 3: return "invalid sequence";
    case 4: return "unauthorized";
    case 5: return "insufficient funds";
    case 6: return "unknown request";
    case 7: return "invalid address";
    case 8: return "invalid pubkey";
    case 9: return "unknown address";
    case 10: return "invalid coins";
    case 11: return "out of gas";
    case 12: return "memo too large";
    case 13: return "insufficient fee";
    case 14: return "maximum number of signatures exceeded";
    case 15: return "no signatures supplied";
    case 18: return "invalid request";
    case 19: return "tx already in mempool";
    case 20: return "mempool is full";
    case 21: return "tx too large";
    case 22: return "key not found";
    case 28: return "invalid chain-id";
    case 30: return "tx timeout height";
    case 32: return "incorrect account sequence";
    case 38: return "not found";
    case 41: return "invalid gas limit";
    default: return "error";
    }
}

gd_status gd_ctx_fail(gd_ctx *ctx, const char *codespace, uint32_t code, const char *fmt, ...) {
    char msg[GD_ABCI_LOG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ctx->err.code = code;
    snprintf(ctx->err.codespace, sizeof ctx->err.codespace, "%s", codespace);
    if (strcmp(codespace, GD_CODESPACE_SDK) == 0)
        snprintf(ctx->err.log, sizeof ctx->err.log, "%s: %s", msg, gd_sdk_error_text(code));
    else
        snprintf(ctx->err.log, sizeof ctx->err.log, "%s", msg);
    return gd_fail(GD_ERR_CHAIN, "%s", ctx->err.log);
}

gd_status gd_ctx_gas(gd_ctx *ctx, uint64_t amount, const char *what) {
    gd_gas_meter *g = ctx->gas;
    if (g == NULL)
        return GD_OK;
    uint64_t used = g->used + amount;
    if (used < g->used)
        used = UINT64_MAX; /* saturate: gas counts never wrap */
    g->used = used;
    if (g->limit != 0 && used > g->limit)
        return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_OUT_OF_GAS,
                           "out of gas in location: %s; gasWanted: %llu, gasUsed: %llu", what,
                           (unsigned long long)g->limit, (unsigned long long)used);
    return GD_OK;
}

gd_status gd_ctx_get(gd_ctx *ctx, const uint8_t *key, size_t key_len, const uint8_t **value,
                     size_t *value_len) {
    GD_TRY(gd_ctx_gas(ctx, GD_GAS_READ_FLAT, "ReadFlat"));
    gd_status s = gd_kv_get(ctx->kv, key, key_len, value, value_len);
    if (s == GD_OK)
        GD_TRY(gd_ctx_gas(ctx, (uint64_t)GD_GAS_READ_PER_BYTE * (key_len + *value_len),
                          "ReadPerByte"));
    return s;
}

gd_status gd_ctx_set(gd_ctx *ctx, const uint8_t *key, size_t key_len, const uint8_t *value,
                     size_t value_len) {
    GD_TRY(gd_ctx_gas(ctx, GD_GAS_WRITE_FLAT, "WriteFlat"));
    GD_TRY(gd_ctx_gas(ctx, (uint64_t)GD_GAS_WRITE_PER_BYTE * (key_len + value_len),
                      "WritePerByte"));
    return gd_kv_set(ctx->kv, key, key_len, value, value_len);
}

gd_status gd_ctx_delete(gd_ctx *ctx, const uint8_t *key, size_t key_len) {
    GD_TRY(gd_ctx_gas(ctx, GD_GAS_DELETE, "Delete"));
    return gd_kv_delete(ctx->kv, key, key_len);
}

/* --- events --------------------------------------------------------------- */

gd_status gd_events_add(gd_events *events, const char *type, ...) {
    if (events == NULL)
        return GD_OK;
    va_list ap;
    size_t n = 0;
    va_start(ap, type);
    while (va_arg(ap, const char *) != NULL)
        n++;
    va_end(ap);
    if (n % 2 != 0)
        return gd_fail(GD_ERR_INVALID, "event %s: odd number of key/value strings", type);
    if (events->n == events->cap) {
        size_t cap = events->cap ? events->cap * 2 : 8;
        gd_event *items = realloc(events->items, cap * sizeof *items);
        if (items == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for events");
        events->items = items;
        events->cap = cap;
    }
    gd_event ev = {.type = strdup(type), .attrs = calloc(n / 2 ? n / 2 : 1, sizeof(gd_event_attr)),
                   .n_attrs = n / 2};
    bool ok = ev.type && ev.attrs;
    va_start(ap, type);
    for (size_t i = 0; i < n / 2; i++) {
        const char *k = va_arg(ap, const char *);
        const char *v = va_arg(ap, const char *);
        if (ok) {
            ev.attrs[i] = (gd_event_attr){strdup(k), strdup(v), true};
            ok = ev.attrs[i].key && ev.attrs[i].value;
        }
    }
    va_end(ap);
    if (!ok) {
        gd_events tmp = {&ev, 1, 1};
        gd_events_free(&tmp);
        return gd_fail(GD_ERR_NOMEM, "out of memory for events");
    }
    events->items[events->n++] = ev;
    return GD_OK;
}

gd_status gd_events_move(gd_events *dst, gd_events *src) {
    if (src->n == 0)
        return GD_OK;
    if (dst->n + src->n > dst->cap) {
        size_t cap = dst->n + src->n;
        gd_event *items = realloc(dst->items, cap * sizeof *items);
        if (items == NULL)
            return gd_fail(GD_ERR_NOMEM, "out of memory for events");
        dst->items = items;
        dst->cap = cap;
    }
    memcpy(dst->items + dst->n, src->items, src->n * sizeof *src->items);
    dst->n += src->n;
    free(src->items);
    *src = (gd_events){0};
    return GD_OK;
}

void gd_events_free(gd_events *events) {
    for (size_t i = 0; i < events->n; i++) {
        gd_event *e = &events->items[i];
        for (size_t k = 0; e->attrs && k < e->n_attrs; k++) {
            free(e->attrs[k].key);
            free(e->attrs[k].value);
        }
        free(e->attrs);
        free(e->type);
    }
    free(events->items);
    *events = (gd_events){0};
}
