/* OpenSSL-backed hashes. The one-shot calls cannot fail for valid arguments
 * short of memory exhaustion inside OpenSSL, which is fatal here: a wrong
 * digest would be worse than stopping. */
#include "common/hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>

struct gd_sha256_ctx {
    EVP_MD_CTX *md;
};

static void gd_hash_abort(const char *what) {
    fprintf(stderr, "fatal: OpenSSL %s failed\n", what);
    abort();
}

static void gd_digest(uint8_t *out, const EVP_MD *md, const void *data, size_t len,
                      const char *name) {
    if (EVP_Digest(data, len, out, NULL, md, NULL) != 1)
        gd_hash_abort(name);
}

void gd_sha256(uint8_t out[GD_SHA256_LEN], const void *data, size_t len) {
    gd_digest(out, EVP_sha256(), data, len, "SHA-256");
}

void gd_ripemd160(uint8_t out[GD_RIPEMD160_LEN], const void *data, size_t len) {
    /* OpenSSL 3.0.7+ serves RIPEMD-160 from the default provider. */
    gd_digest(out, EVP_ripemd160(), data, len, "RIPEMD-160");
}

void gd_hmac_sha512(uint8_t out[GD_SHA512_LEN], const void *key, size_t key_len,
                    const void *data, size_t len) {
    unsigned int out_len = 0;
    if (HMAC(EVP_sha512(), key, (int)key_len, data, len, out, &out_len) == NULL ||
        out_len != GD_SHA512_LEN)
        gd_hash_abort("HMAC-SHA512");
}

void gd_pbkdf2_hmac_sha512(uint8_t *out, size_t out_len, const void *password,
                           size_t password_len, const void *salt, size_t salt_len,
                           uint32_t iterations) {
    if (PKCS5_PBKDF2_HMAC(password, (int)password_len, salt, (int)salt_len, (int)iterations,
                          EVP_sha512(), (int)out_len, out) != 1)
        gd_hash_abort("PBKDF2-HMAC-SHA512");
}

gd_status gd_sha256_begin(gd_sha256_ctx **ctx) {
    gd_sha256_ctx *c = malloc(sizeof *c);
    if (c == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory for a SHA-256 context");
    c->md = EVP_MD_CTX_new();
    if (c->md == NULL || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(c->md);
        free(c);
        return gd_fail(GD_ERR_NOMEM, "cannot start a SHA-256 context");
    }
    *ctx = c;
    return GD_OK;
}

void gd_sha256_update(gd_sha256_ctx *ctx, const void *data, size_t len) {
    if (EVP_DigestUpdate(ctx->md, data, len) != 1)
        gd_hash_abort("SHA-256 update");
}

void gd_sha256_finish(gd_sha256_ctx *ctx, uint8_t out[GD_SHA256_LEN]) {
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx->md, out, &n) != 1 || n != GD_SHA256_LEN)
        gd_hash_abort("SHA-256 final");
    EVP_MD_CTX_free(ctx->md);
    free(ctx);
}
