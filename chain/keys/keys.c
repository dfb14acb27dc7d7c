/* Key creation, import and signatures. */
#include "chain/keys/keys.h"

#include <string.h>

#include "chain/keys/bip32.h"
#include "chain/keys/bip39.h"
#include "chain/keys/secp.h"
#include "common/bytes.h"
#include "common/secure.h"

gd_status gd_key_from_secret(gd_key *key, const uint8_t secret[GD_SECKEY_LEN]) {
    const secp256k1_context *ctx = gd_secp_context();
    secp256k1_pubkey pk;
    size_t len = GD_PUBKEY_LEN;
    if (!secp256k1_ec_seckey_verify(ctx, secret))
        return gd_fail(GD_ERR_CRYPTO, "private key is out of range (zero or >= curve order)");
    if (!secp256k1_ec_pubkey_create(ctx, &pk, secret) ||
        !secp256k1_ec_pubkey_serialize(ctx, key->pubkey, &len, &pk, SECP256K1_EC_COMPRESSED))
        return gd_fail(GD_ERR_CRYPTO, "cannot compute the public key");
    memcpy(key->secret, secret, GD_SECKEY_LEN);
    return GD_OK;
}

gd_status gd_key_from_hex(gd_key *key, const char *hex) {
    uint8_t secret[GD_SECKEY_LEN];
    size_t n = 0;
    size_t len = strlen(hex);
    if (len != 2 * GD_SECKEY_LEN)
        return gd_fail(GD_ERR_PARSE, "private key must be %d hex digits, got %zu",
                       2 * GD_SECKEY_LEN, len);
    gd_status s = gd_hex_decode(secret, sizeof secret, &n, hex, len);
    if (s != GD_OK)
        s = gd_fail(GD_ERR_PARSE, "private key is not valid hex");
    else
        s = gd_key_from_secret(key, secret);
    gd_wipe(secret, sizeof secret);
    return s;
}

gd_status gd_key_from_mnemonic(gd_key *key, const char *mnemonic, const char *passphrase,
                               const char *path) {
    uint8_t seed[GD_BIP39_SEED_LEN];
    gd_hd_node node;
    GD_TRY(gd_bip39_seed(seed, mnemonic, passphrase));
    gd_status s = gd_hd_derive(&node, seed, sizeof seed, path ? path : GD_HD_PATH_GONKA);
    if (s == GD_OK)
        s = gd_key_from_secret(key, node.key);
    gd_wipe(seed, sizeof seed);
    gd_hd_node_wipe(&node);
    return s;
}

gd_status gd_key_generate(gd_key *key, char *mnemonic_out, size_t mnemonic_cap) {
    uint8_t entropy[32];
    GD_TRY(gd_random_bytes(entropy, sizeof entropy));
    gd_status s = gd_bip39_from_entropy(mnemonic_out, mnemonic_cap, entropy, sizeof entropy);
    gd_wipe(entropy, sizeof entropy);
    if (s == GD_OK)
        s = gd_key_from_mnemonic(key, mnemonic_out, NULL, NULL);
    if (s != GD_OK)
        gd_wipe(mnemonic_out, mnemonic_cap);
    return s;
}

gd_status gd_key_sign(const gd_key *key, const uint8_t digest[32],
                      uint8_t signature[GD_SIGNATURE_LEN]) {
    const secp256k1_context *ctx = gd_secp_context();
    secp256k1_ecdsa_signature sig;
    /* NULL nonce function = RFC 6979; libsecp256k1 always emits lower-S. */
    if (!secp256k1_ecdsa_sign(ctx, &sig, digest, key->secret, NULL, NULL) ||
        !secp256k1_ecdsa_signature_serialize_compact(ctx, signature, &sig))
        return gd_fail(GD_ERR_CRYPTO, "signing failed");
    return GD_OK;
}

bool gd_signature_verify(const uint8_t pubkey[GD_PUBKEY_LEN], const uint8_t digest[32],
                         const uint8_t signature[GD_SIGNATURE_LEN]) {
    const secp256k1_context *ctx = gd_secp_context();
    secp256k1_ecdsa_signature sig;
    secp256k1_pubkey pk;
    if (!secp256k1_ec_pubkey_parse(ctx, &pk, pubkey, GD_PUBKEY_LEN))
        return false;
    if (!secp256k1_ecdsa_signature_parse_compact(ctx, &sig, signature))
        return false;
    /* secp256k1_ecdsa_verify rejects non-normalised (high-S) signatures. */
    return secp256k1_ecdsa_verify(ctx, &sig, digest, &pk) == 1;
}

bool gd_pubkey_valid(const uint8_t pubkey[GD_PUBKEY_LEN]) {
    secp256k1_pubkey pk;
    return (pubkey[0] == 2 || pubkey[0] == 3) &&
           secp256k1_ec_pubkey_parse(gd_secp_context(), &pk, pubkey, GD_PUBKEY_LEN) == 1;
}

void gd_key_wipe(gd_key *key) { gd_wipe(key, sizeof *key); }
