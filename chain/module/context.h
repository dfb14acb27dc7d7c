/* The execution context of a transaction, block hook or query in the state
 * machine: the store layer it works on, its gas meter, the events it emits,
 * and the ABCI error it ends with.
 *
 * Store access from module code goes through gd_ctx_get/set/... which charge
 * gas as the Cosmos SDK's KVGasConfig does (so gas_used, and `--gas auto`,
 * behave like on a real chain), then touch the store. */
#ifndef GD_CHAIN_MODULE_CONTEXT_H
#define GD_CHAIN_MODULE_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/module/store.h"
#include "common/status.h"

/* --- ABCI errors ---------------------------------------------------------
 * Codes of codespace "sdk" (cosmos-sdk types/errors/errors.go); module
 * errors use the module's own codespace. */
#define GD_CODESPACE_SDK "sdk"
enum {
    GD_SDK_ERR_TX_DECODE = 2,
    GD_SDK_ERR_INVALID_SEQUENCE = 3,
    GD_SDK_ERR_UNAUTHORIZED = 4,
    GD_SDK_ERR_INSUFFICIENT_FUNDS = 5,
    GD_SDK_ERR_UNKNOWN_REQUEST = 6,
    GD_SDK_ERR_INVALID_ADDRESS = 7,
    GD_SDK_ERR_INVALID_PUBKEY = 8,
    GD_SDK_ERR_UNKNOWN_ADDRESS = 9,
    GD_SDK_ERR_INVALID_COINS = 10,
    GD_SDK_ERR_OUT_OF_GAS = 11,
    GD_SDK_ERR_MEMO_TOO_LARGE = 12,
    GD_SDK_ERR_INSUFFICIENT_FEE = 13,
    GD_SDK_ERR_TOO_MANY_SIGNATURES = 14,
    GD_SDK_ERR_NO_SIGNATURES = 15,
    GD_SDK_ERR_INVALID_REQUEST = 18,
    GD_SDK_ERR_TX_IN_MEMPOOL = 19,
    GD_SDK_ERR_MEMPOOL_FULL = 20,
    GD_SDK_ERR_TX_TOO_LARGE = 21,
    GD_SDK_ERR_KEY_NOT_FOUND = 22,
    GD_SDK_ERR_INVALID_CHAIN_ID = 28,
    GD_SDK_ERR_TX_TIMEOUT_HEIGHT = 30,
    GD_SDK_ERR_WRONG_SEQUENCE = 32,
    GD_SDK_ERR_NOT_FOUND = 38,
    GD_SDK_ERR_INVALID_GAS_LIMIT = 41,
};

#define GD_ABCI_LOG_MAX 1024

typedef struct gd_abci_error {
    uint32_t code; /* 0: no error */
    char codespace[32];
    char log[GD_ABCI_LOG_MAX];
} gd_abci_error;

/* --- events --------------------------------------------------------------- */

typedef struct gd_event_attr {
    char *key;
    char *value;
    bool index;
} gd_event_attr;

typedef struct gd_event {
    char *type;
    gd_event_attr *attrs;
    size_t n_attrs;
} gd_event;

typedef struct gd_events {
    gd_event *items;
    size_t n;
    size_t cap;
} gd_events;

/* Appends an event with (key, value) string pairs ending in NULL; every
 * attribute is indexed. */
gd_status gd_events_add(gd_events *events, const char *type, ...) GD_MUST_CHECK;
/* Moves all of src's events to the end of dst (src is left empty). */
gd_status gd_events_move(gd_events *dst, gd_events *src) GD_MUST_CHECK;
void gd_events_free(gd_events *events);

/* --- gas (cosmos-sdk store/types/gas.go, KVGasConfig defaults) ------------ */

#define GD_GAS_HAS 1000
#define GD_GAS_DELETE 1000
#define GD_GAS_READ_FLAT 1000
#define GD_GAS_READ_PER_BYTE 3
#define GD_GAS_WRITE_FLAT 2000
#define GD_GAS_WRITE_PER_BYTE 30
#define GD_GAS_ITER_NEXT_FLAT 30

typedef struct gd_gas_meter {
    uint64_t limit; /* 0: infinite (block hooks, genesis, queries) */
    uint64_t used;
} gd_gas_meter;

/* --- the context -------------------------------------------------------- */

typedef enum gd_exec_mode {
    GD_EXEC_CHECK,    /* mempool admission: ante only */
    GD_EXEC_DELIVER,  /* in a block */
    GD_EXEC_SIMULATE, /* gas estimation: like deliver, no signature check, discarded */
    GD_EXEC_QUERY,    /* read-only */
    GD_EXEC_BLOCK,    /* begin/end block hooks, genesis */
} gd_exec_mode;

typedef struct gd_ctx {
    gd_kv *kv;          /* the store layer to work on */
    gd_gas_meter *gas;
    gd_events *events;  /* may be NULL for queries */
    gd_exec_mode mode;
    int64_t height;     /* the block being executed (queries: the last committed) */
    const char *chain_id;
    const uint8_t *block_hash; /* 32 bytes of the block being executed; NULL in check */
    gd_abci_error err;  /* set by gd_ctx_fail */
} gd_ctx;

/* Records an ABCI error (codespace, code, log) and returns GD_ERR_CHAIN.
 * The log is "<formatted message>: <the SDK's description of the code>"
 * for codespace "sdk", as the SDK wraps registered errors. */
gd_status gd_ctx_fail(gd_ctx *ctx, const char *codespace, uint32_t code, const char *fmt, ...)
    GD_PRINTF(4, 5);

/* Charges gas; fails with SDK code 11 past the limit. */
gd_status gd_ctx_gas(gd_ctx *ctx, uint64_t amount, const char *what) GD_MUST_CHECK;

/* Metered store access. get returns GD_ERR_NOT_FOUND (not a ctx error)
 * for an absent key. */
gd_status gd_ctx_get(gd_ctx *ctx, const uint8_t *key, size_t key_len, const uint8_t **value,
                     size_t *value_len) GD_MUST_CHECK;
gd_status gd_ctx_set(gd_ctx *ctx, const uint8_t *key, size_t key_len, const uint8_t *value,
                     size_t value_len) GD_MUST_CHECK;
gd_status gd_ctx_delete(gd_ctx *ctx, const uint8_t *key, size_t key_len) GD_MUST_CHECK;

/* The SDK's description of an sdk-codespace code ("insufficient funds"). */
const char *gd_sdk_error_text(uint32_t code);

#endif
