/* Hash functions over OpenSSL libcrypto: SHA-256 (one-shot and streaming),
 * RIPEMD-160, HMAC-SHA512 and PBKDF2-HMAC-SHA512. */
#ifndef GD_COMMON_HASH_H
#define GD_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_SHA256_LEN 32
#define GD_RIPEMD160_LEN 20
#define GD_SHA512_LEN 64

void gd_sha256(uint8_t out[GD_SHA256_LEN], const void *data, size_t len);
void gd_ripemd160(uint8_t out[GD_RIPEMD160_LEN], const void *data, size_t len);
void gd_hmac_sha512(uint8_t out[GD_SHA512_LEN], const void *key, size_t key_len,
                    const void *data, size_t len);
void gd_pbkdf2_hmac_sha512(uint8_t *out, size_t out_len, const void *password,
                           size_t password_len, const void *salt, size_t salt_len,
                           uint32_t iterations);

/* Streaming SHA-256 for inputs that arrive in pieces. */
typedef struct gd_sha256_ctx gd_sha256_ctx;
gd_status gd_sha256_begin(gd_sha256_ctx **ctx) GD_MUST_CHECK;
void gd_sha256_update(gd_sha256_ctx *ctx, const void *data, size_t len);
/* Writes the digest and frees ctx. */
void gd_sha256_finish(gd_sha256_ctx *ctx, uint8_t out[GD_SHA256_LEN]);

#endif
