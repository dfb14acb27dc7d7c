/* libgonka_diloco: the plugin as a library a host process embeds. One
 * handle runs one member of one training run, configured by a node.yaml
 * (docs/node.md): it follows the chain over RPC, does the member's duties,
 * and serves its artifacts over HTTP on the configured address. The
 * `gonka-diloco run` daemon is a thin host of exactly these calls.
 *
 * Every function returns GONKA_DILOCO_OK (0) or a negative error code and,
 * where it takes err/err_cap, writes a one-line reason there (never a
 * secret). Handles are not thread-safe: call one function at a time per
 * handle (the HTTP server runs on its own threads inside the handle). */
#ifndef GONKA_DILOCO_H
#define GONKA_DILOCO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version: changes only when a function or its meaning changes. */
#define GONKA_DILOCO_ABI_VERSION 1
#define GONKA_DILOCO_VERSION_MAJOR 0
#define GONKA_DILOCO_VERSION_MINOR 1
#define GONKA_DILOCO_VERSION_PATCH 0

enum {
    GONKA_DILOCO_OK = 0,
    GONKA_DILOCO_ERR_CONFIG = -1,  /* the config file is missing, malformed or has a bad value */
    GONKA_DILOCO_ERR_KEY = -2,     /* the key file cannot be read (mode, format) */
    GONKA_DILOCO_ERR_CHAIN = -3,   /* the chain cannot be reached or read: retry later */
    GONKA_DILOCO_ERR_LISTEN = -4,  /* the HTTP address cannot be bound */
    GONKA_DILOCO_ERR_STATE = -5,   /* the state directory cannot be used (I/O, journal) */
    GONKA_DILOCO_ERR_NOMEM = -6,
    GONKA_DILOCO_ERR_INVALID = -7, /* a NULL handle or argument, or another local failure */
};

typedef struct gonka_diloco gonka_diloco;

/* The library's ABI version (GONKA_DILOCO_ABI_VERSION it was built with)
 * and version string ("0.1.0"). */
unsigned gonka_diloco_abi_version(void);
const char *gonka_diloco_version(void);

/* Opens a member from a node.yaml: parses it strictly, reads the key,
 * opens the state directory and its journal, and starts the HTTP server.
 * It does not contact the chain (the first step does). Errors: CONFIG,
 * KEY, STATE, LISTEN, NOMEM. */
int gonka_diloco_open(const char *config_path, gonka_diloco **out, char *err, size_t err_cap);

/* Overrides node.yaml's memory_budget: the most host memory, in bytes, a
 * round may use beside the trainer's buffers (0: no limit), from the next
 * round trained on. Errors: INVALID (a NULL handle). */
int gonka_diloco_set_memory_budget(gonka_diloco *h, uint64_t bytes);

/* One step: reads the chain and does every duty due now. Errors: CHAIN
 * (the chain cannot be read, or answered what does not decode, or knows no
 * such run: retry with backoff), STATE (the state directory), INVALID (the
 * run cannot be taken part in here: its model, spec or data is not this
 * host's; retrying does not help), NOMEM. A duty that fails for a peer's or
 * the chain's reason is not an error: it is logged, kept in the status and
 * due again. */
int gonka_diloco_step(gonka_diloco *h, char *err, size_t err_cap);

/* Steps until *stop becomes non-zero (polling the chain every poll_ms,
 * 0 = 250), retrying CHAIN errors with backoff up to 30 s; returns OK once
 * stopped, or the first error that is not CHAIN. A stop cuts a long duty
 * short: a round being trained stops within one inner step, and a chain
 * call or a transaction's wait for its block within a second; the duty is
 * done again after a restart, as after a crash. */
int gonka_diloco_run(gonka_diloco *h, const volatile int *stop, unsigned poll_ms, char *err,
                     size_t err_cap);

/* The status object of GET /v1/status as JSON text (malloc'd; release with
 * gonka_diloco_free), or NULL on a NULL handle or out of memory. */
char *gonka_diloco_status_json(gonka_diloco *h);
/* The HTTP address the server listens on ("127.0.0.1:PORT"), or NULL. */
const char *gonka_diloco_listen_address(const gonka_diloco *h);
void gonka_diloco_free(void *p);

/* Stops the HTTP server, wipes the key and frees the handle (NULL is fine). */
void gonka_diloco_close(gonka_diloco *h);

#ifdef __cplusplus
}
#endif

#endif
