/* The process-wide libsecp256k1 context, created once and randomised
 * (side-channel blinding) before any secret-key operation. */
#ifndef GD_CHAIN_KEYS_SECP_H
#define GD_CHAIN_KEYS_SECP_H

#include <secp256k1.h>

/* Returns the shared signing/verification context. Aborts the process if
 * the kernel gives no randomness for blinding: signing without it is refused
 * rather than done weakly. Thread-safe. */
const secp256k1_context *gd_secp_context(void);

#endif
