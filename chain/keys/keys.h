/* secp256k1 account keys: creation, import, SIGN_MODE_DIRECT-style signing
 * (ECDSA over a 32-byte digest, 64-byte R||S, low S) and verification. */
#ifndef GD_CHAIN_KEYS_KEYS_H
#define GD_CHAIN_KEYS_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_SECKEY_LEN 32
#define GD_PUBKEY_LEN 33
#define GD_SIGNATURE_LEN 64

typedef struct gd_key {
    uint8_t secret[GD_SECKEY_LEN]; /* never logged; wipe with gd_key_wipe */
    uint8_t pubkey[GD_PUBKEY_LEN]; /* compressed */
} gd_key;

/* Builds a key from a 32-byte secret (0 < secret < n). */
gd_status gd_key_from_secret(gd_key *key, const uint8_t secret[GD_SECKEY_LEN]) GD_MUST_CHECK;

/* Builds a key from 64 hex digits. */
gd_status gd_key_from_hex(gd_key *key, const char *hex) GD_MUST_CHECK;

/* Derives the key at path (NULL: Gonka's m/44'/1200'/0'/0/0) from a BIP39
 * mnemonic and optional passphrase. */
gd_status gd_key_from_mnemonic(gd_key *key, const char *mnemonic, const char *passphrase,
                               const char *path) GD_MUST_CHECK;

/* Creates a fresh 24-word mnemonic from 32 bytes of kernel randomness and
 * derives the key at Gonka's path from it. mnemonic_out receives the words
 * (cap >= GD_BIP39_MNEMONIC_MAX + 1); the caller wipes it. */
gd_status gd_key_generate(gd_key *key, char *mnemonic_out, size_t mnemonic_cap) GD_MUST_CHECK;

/* Signs a 32-byte digest: RFC 6979 deterministic nonce, lower-S form,
 * 64 bytes R||S big-endian, as the Cosmos SDK's secp256k1 Sign produces. */
gd_status gd_key_sign(const gd_key *key, const uint8_t digest[32],
                      uint8_t signature[GD_SIGNATURE_LEN]) GD_MUST_CHECK;

/* True if signature is a valid lower-S signature of digest by pubkey; the
 * Cosmos SDK rejects high-S signatures, and so does this. */
bool gd_signature_verify(const uint8_t pubkey[GD_PUBKEY_LEN], const uint8_t digest[32],
                         const uint8_t signature[GD_SIGNATURE_LEN]);

/* True if pubkey parses as a compressed secp256k1 point. */
bool gd_pubkey_valid(const uint8_t pubkey[GD_PUBKEY_LEN]);

void gd_key_wipe(gd_key *key);

#endif
