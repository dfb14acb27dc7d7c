/* Bech32 (BIP-173, the original checksum constant 1, not bech32m) as Cosmos
 * uses it for addresses: hrp "1" data checksum, no witness version byte. */
#ifndef GD_CHAIN_KEYS_BECH32_H
#define GD_CHAIN_KEYS_BECH32_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* BIP-173's overall length limit; Cosmos addresses (44 or 64 characters for
 * 20- or 32-byte payloads with hrp "gonka") stay well inside it. */
#define GD_BECH32_MAX_LEN 90
#define GD_BECH32_HRP_MAX 83

/* Encodes 5-bit values data[0..len) under hrp (lowercase) into out, which
 * must hold strlen(hrp) + 1 + len + 6 + 1 bytes. */
gd_status gd_bech32_encode(char *out, size_t out_cap, const char *hrp, const uint8_t *data,
                           size_t len) GD_MUST_CHECK;

/* Decodes a bech32 string of at most max_len characters: checks the
 * character set, rejects mixed case, verifies the checksum. hrp receives the
 * lowercase human-readable part (hrp_cap >= GD_BECH32_HRP_MAX + 1), data the
 * 5-bit values without the checksum. */
gd_status gd_bech32_decode(char *hrp, size_t hrp_cap, uint8_t *data, size_t data_cap,
                           size_t *data_len, const char *text, size_t max_len) GD_MUST_CHECK;

/* Regroups bits: from_bits-wide values in to to_bits-wide values out.
 * pad=1 pads the final group with zeros (encoding); pad=0 requires the
 * leftover bits to be fewer than from_bits and zero (decoding). */
gd_status gd_bech32_convert_bits(uint8_t *out, size_t out_cap, size_t *out_len, int to_bits,
                                 const uint8_t *in, size_t in_len, int from_bits,
                                 int pad) GD_MUST_CHECK;

#endif
