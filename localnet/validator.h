/* The localnet validator's ed25519 key, kept as CometBFT keeps it
 * (priv_validator_key.json, mode 0600): it names the proposer in every
 * block header and signs each block's commit. */
#ifndef GD_LOCALNET_VALIDATOR_H
#define GD_LOCALNET_VALIDATOR_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

typedef struct gd_validator_key {
    uint8_t seed[32]; /* secret */
    uint8_t pub[32];
    uint8_t address[20]; /* SHA256(pub)[:20], as CometBFT */
} gd_validator_key;

/* Generates a key and writes it to path (created 0600, never overwritten). */
gd_status gd_validator_key_create(const char *path) GD_MUST_CHECK;
gd_status gd_validator_key_load(gd_validator_key *out, const char *path) GD_MUST_CHECK;
gd_status gd_validator_sign(const gd_validator_key *key, const uint8_t *msg, size_t len,
                            uint8_t sig[64]) GD_MUST_CHECK;
void gd_validator_key_wipe(gd_validator_key *key);

#endif
