/* Standard base64 (RFC 4648 section 4, with padding), as CometBFT uses for
 * []byte values. The decoder is strict: padding required, no whitespace,
 * unused trailing bits must be zero, so every input has one decoding. */
#ifndef GD_COMMON_BASE64_H
#define GD_COMMON_BASE64_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"

/* Length of the encoding of len bytes, without the NUL. */
size_t gd_base64_encoded_len(size_t len);

/* Upper bound of the bytes decoded from text_len characters. */
size_t gd_base64_decoded_max(size_t text_len);

/* Writes the encoding and a NUL; out must hold gd_base64_encoded_len(len)+1. */
void gd_base64_encode(char *out, const uint8_t *data, size_t len);

gd_status gd_base64_decode(uint8_t *out, size_t out_cap, size_t *out_len, const char *text,
                           size_t text_len) GD_MUST_CHECK;

#endif
