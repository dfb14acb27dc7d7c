/* BIP32 hierarchical deterministic private key derivation over secp256k1,
 * written from the BIP32 specification with OpenSSL (HMAC-SHA512) and
 * libsecp256k1 (scalar addition, public keys). */
#ifndef GD_CHAIN_KEYS_BIP32_H
#define GD_CHAIN_KEYS_BIP32_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* Gonka's coin type is 1200 (SLIP-44), so its default path differs from the
 * Cosmos Hub's m/44'/118'/0'/0/0. */
#define GD_HD_PATH_GONKA "m/44'/1200'/0'/0/0"
#define GD_HD_HARDENED 0x80000000u
#define GD_HD_PATH_MAX_DEPTH 16

typedef struct gd_hd_node {
    uint8_t key[32];        /* private key (secret) */
    uint8_t chain_code[32]; /* chain code (secret) */
} gd_hd_node;

/* Master node from a seed (16..64 bytes): HMAC-SHA512("Bitcoin seed", seed). */
gd_status gd_hd_master(gd_hd_node *node, const uint8_t *seed, size_t seed_len) GD_MUST_CHECK;

/* Replaces node by its child at index (hardened when index >= 2^31).
 * Fails, leaving node unchanged, in the 2^-127-probability case BIP32 calls
 * invalid (IL >= n or a zero key); callers pick another index. */
gd_status gd_hd_child(gd_hd_node *node, uint32_t index) GD_MUST_CHECK;

/* Parses "m/44'/1200'/0'/0/0" (hardened marks ' or h) into indices. */
gd_status gd_hd_path_parse(uint32_t *indices, size_t cap, size_t *depth,
                           const char *path) GD_MUST_CHECK;

/* Derives the node at path from a seed. */
gd_status gd_hd_derive(gd_hd_node *out, const uint8_t *seed, size_t seed_len,
                       const char *path) GD_MUST_CHECK;

void gd_hd_node_wipe(gd_hd_node *node);

#endif
