/* Shared secp256k1 context. libsecp256k1 contexts are safe for concurrent
 * use once created; only creation and randomisation need serialising. */
#include "chain/keys/secp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/secure.h"

static secp256k1_context *gd_secp_ctx;
static pthread_once_t gd_secp_once = PTHREAD_ONCE_INIT;

static void gd_secp_create(void) {
    unsigned char seed[32];
    gd_secp_ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    if (gd_secp_ctx == NULL || gd_random_bytes(seed, sizeof seed) != GD_OK ||
        !secp256k1_context_randomize(gd_secp_ctx, seed)) {
        fprintf(stderr, "fatal: cannot initialise secp256k1 context\n");
        abort();
    }
    gd_wipe(seed, sizeof seed);
}

const secp256k1_context *gd_secp_context(void) {
    pthread_once(&gd_secp_once, gd_secp_create);
    return gd_secp_ctx;
}
