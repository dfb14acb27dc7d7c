/* ed25519 validator key over OpenSSL. */
#include "localnet/validator.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <string.h>

#include "common/base64.h"
#include "common/bytes.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/secure.h"

static gd_status gd_ed25519_public(const uint8_t seed[32], uint8_t pub[32]) {
    EVP_PKEY *pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
    size_t len = 32;
    gd_status s = GD_OK;
    if (pk == NULL || EVP_PKEY_get_raw_public_key(pk, pub, &len) != 1 || len != 32)
        s = gd_fail(GD_ERR_CRYPTO, "cannot derive the ed25519 public key");
    EVP_PKEY_free(pk);
    return s;
}

static void gd_fill_address(gd_validator_key *key) {
    uint8_t h[32];
    gd_sha256(h, key->pub, 32);
    memcpy(key->address, h, 20);
}

gd_status gd_validator_key_create(const char *path) {
    gd_validator_key key;
    GD_TRY(gd_random_bytes(key.seed, 32));
    gd_status s = gd_ed25519_public(key.seed, key.pub);
    if (s != GD_OK) {
        gd_validator_key_wipe(&key);
        return s;
    }
    gd_fill_address(&key);
    uint8_t priv[64];
    memcpy(priv, key.seed, 32);
    memcpy(priv + 32, key.pub, 32);
    char addr[41], pub_b64[45], priv_b64[89];
    gd_hex_encode(addr, key.address, 20, true);
    gd_base64_encode(pub_b64, key.pub, 32);
    gd_base64_encode(priv_b64, priv, 64);
    char text[512];
    int n = snprintf(text, sizeof text,
                     "{\n  \"address\": \"%s\",\n  \"pub_key\": {\n    \"type\": "
                     "\"tendermint/PubKeyEd25519\",\n    \"value\": \"%s\"\n  },\n  \"priv_key\": "
                     "{\n    \"type\": \"tendermint/PrivKeyEd25519\",\n    \"value\": \"%s\"\n  "
                     "}\n}\n", addr, pub_b64, priv_b64);
    s = gd_file_create_private(path, text, (size_t)n);
    gd_wipe(text, sizeof text);
    gd_wipe(priv, sizeof priv);
    gd_wipe(priv_b64, sizeof priv_b64);
    gd_validator_key_wipe(&key);
    return s;
}

gd_status gd_validator_key_load(gd_validator_key *out, const char *path) {
    gd_buf buf = {0};
    GD_TRY(gd_file_read_private(&buf, path, 4096));
    json_t *j = json_loadb((const char *)buf.data, buf.len, 0, NULL);
    gd_buf_wipe_free(&buf);
    const char *priv = json_string_value(json_object_get(json_object_get(j, "priv_key"), "value"));
    uint8_t raw[64];
    size_t n = 0;
    gd_status s = GD_OK;
    if (priv == NULL || gd_base64_decode(raw, sizeof raw, &n, priv, strlen(priv)) != GD_OK ||
        n != 64)
        s = gd_fail(GD_ERR_PARSE, "%s is not a validator key file", path);
    if (s == GD_OK) {
        memcpy(out->seed, raw, 32);
        s = gd_ed25519_public(out->seed, out->pub);
    }
    if (s == GD_OK && memcmp(out->pub, raw + 32, 32) != 0)
        s = gd_fail(GD_ERR_PARSE, "%s: public key does not match the private key", path);
    if (s == GD_OK)
        gd_fill_address(out);
    gd_wipe(raw, sizeof raw);
    json_decref(j); /* jansson's copy of the base64 text is freed here */
    if (s != GD_OK)
        gd_validator_key_wipe(out);
    return s;
}

gd_status gd_validator_sign(const gd_validator_key *key, const uint8_t *msg, size_t len,
                            uint8_t sig[64]) {
    EVP_PKEY *pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, key->seed, 32);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    size_t sig_len = 64;
    gd_status s = GD_OK;
    if (pk == NULL || md == NULL || EVP_DigestSignInit(md, NULL, NULL, NULL, pk) != 1 ||
        EVP_DigestSign(md, sig, &sig_len, msg, len) != 1 || sig_len != 64)
        s = gd_fail(GD_ERR_CRYPTO, "ed25519 signing failed");
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(pk);
    return s;
}

void gd_validator_key_wipe(gd_validator_key *key) { gd_wipe(key, sizeof *key); }
