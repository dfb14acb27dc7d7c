/* Gonka account addresses: bech32("gonka", RIPEMD160(SHA256(pubkey33))).
 * Module accounts use 32-byte payloads; both sizes decode. */
#ifndef GD_CHAIN_KEYS_ADDRESS_H
#define GD_CHAIN_KEYS_ADDRESS_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_ADDRESS_PREFIX "gonka"
#define GD_ADDRESS_RAW_MAX 32
/* Enough for any prefix up to 16 characters with a 32-byte payload. */
#define GD_ADDRESS_STR_MAX 96

/* The 20-byte account id of a compressed secp256k1 public key. */
void gd_address_raw_from_pubkey(uint8_t out[20], const uint8_t pubkey33[33]);

/* Encodes raw (20 or 32 bytes) as bech32 under prefix. */
gd_status gd_address_encode(char *out, size_t out_cap, const char *prefix, const uint8_t *raw,
                            size_t raw_len) GD_MUST_CHECK;

/* bech32 address of a compressed public key under prefix. */
gd_status gd_address_from_pubkey(char *out, size_t out_cap, const char *prefix,
                                 const uint8_t pubkey33[33]) GD_MUST_CHECK;

/* Decodes text, requiring the given prefix (NULL: any prefix) and a 20- or
 * 32-byte payload. Returns GD_ERR_PARSE with a message naming the problem
 * (wrong prefix, bad checksum, bad length). */
gd_status gd_address_decode(uint8_t raw[GD_ADDRESS_RAW_MAX], size_t *raw_len, const char *text,
                            const char *prefix) GD_MUST_CHECK;

/* Validates text as a Gonka account address (prefix "gonka"). */
gd_status gd_address_check(const char *text) GD_MUST_CHECK;

/* A Gonka address re-encoded in canonical (lower-case) form, e.g. for an
 * address typed in upper case. */
gd_status gd_address_canonical(char *out, size_t out_cap, const char *text) GD_MUST_CHECK;

/* Validates text as a Gonka address already in canonical form: state that
 * compares addresses as strings (the DiLoCo module) must not take
 * "GONKA1..." for another account. */
gd_status gd_address_check_canonical(const char *text) GD_MUST_CHECK;

#endif
