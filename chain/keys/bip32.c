/* BIP32 private derivation. */
#include "chain/keys/bip32.h"

#include <string.h>

#include "chain/keys/secp.h"
#include "common/hash.h"
#include "common/secure.h"

static void gd_hd_split(gd_hd_node *node, const uint8_t I[64]) {
    memcpy(node->key, I, 32);
    memcpy(node->chain_code, I + 32, 32);
}

gd_status gd_hd_master(gd_hd_node *node, const uint8_t *seed, size_t seed_len) {
    if (seed_len < 16 || seed_len > 64)
        return gd_fail(GD_ERR_INVALID, "BIP32 seed must be 16 to 64 bytes, got %zu", seed_len);
    uint8_t I[64];
    gd_hmac_sha512(I, "Bitcoin seed", 12, seed, seed_len);
    gd_status s = GD_OK;
    if (!secp256k1_ec_seckey_verify(gd_secp_context(), I))
        s = gd_fail(GD_ERR_CRYPTO, "seed gives an invalid BIP32 master key; use another seed");
    else
        gd_hd_split(node, I);
    gd_wipe(I, sizeof I);
    return s;
}

gd_status gd_hd_child(gd_hd_node *node, uint32_t index) {
    const secp256k1_context *ctx = gd_secp_context();
    uint8_t data[37];
    if (index & GD_HD_HARDENED) {
        data[0] = 0;
        memcpy(data + 1, node->key, 32);
    } else {
        secp256k1_pubkey pk;
        size_t len = 33;
        if (!secp256k1_ec_pubkey_create(ctx, &pk, node->key) ||
            !secp256k1_ec_pubkey_serialize(ctx, data, &len, &pk, SECP256K1_EC_COMPRESSED))
            return gd_fail(GD_ERR_CRYPTO, "BIP32 parent key is invalid");
    }
    data[33] = (uint8_t)(index >> 24);
    data[34] = (uint8_t)(index >> 16);
    data[35] = (uint8_t)(index >> 8);
    data[36] = (uint8_t)index;
    uint8_t I[64];
    gd_hmac_sha512(I, node->chain_code, 32, data, sizeof data);
    /* child = IL + parent (mod n); tweak_add fails iff IL >= n or child = 0. */
    uint8_t child[32];
    memcpy(child, node->key, 32);
    gd_status s = GD_OK;
    if (!secp256k1_ec_seckey_verify(ctx, I) || !secp256k1_ec_seckey_tweak_add(ctx, child, I)) {
        s = gd_fail(GD_ERR_CRYPTO, "BIP32 child %u is invalid; use the next index", index);
    } else {
        memcpy(node->key, child, 32);
        memcpy(node->chain_code, I + 32, 32);
    }
    gd_wipe(data, sizeof data);
    gd_wipe(I, sizeof I);
    gd_wipe(child, sizeof child);
    return s;
}

gd_status gd_hd_path_parse(uint32_t *indices, size_t cap, size_t *depth, const char *path) {
    const char *p = path;
    if (p[0] != 'm')
        return gd_fail(GD_ERR_PARSE, "HD path '%s' must start with 'm'", path);
    p++;
    size_t n = 0;
    while (*p) {
        if (*p != '/')
            return gd_fail(GD_ERR_PARSE, "HD path '%s': expected '/' at position %zu", path,
                           (size_t)(p - path));
        p++;
        if (*p < '0' || *p > '9')
            return gd_fail(GD_ERR_PARSE, "HD path '%s': expected a number at position %zu", path,
                           (size_t)(p - path));
        uint64_t v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (uint64_t)(*p++ - '0');
            if (v >= GD_HD_HARDENED)
                return gd_fail(GD_ERR_PARSE, "HD path '%s': index too large", path);
        }
        if (*p == '\'' || *p == 'h' || *p == 'H') {
            v |= GD_HD_HARDENED;
            p++;
        }
        if (n == cap)
            return gd_fail(GD_ERR_PARSE, "HD path '%s' is deeper than %zu levels", path, cap);
        indices[n++] = (uint32_t)v;
    }
    *depth = n;
    return GD_OK;
}

gd_status gd_hd_derive(gd_hd_node *out, const uint8_t *seed, size_t seed_len,
                       const char *path) {
    uint32_t idx[GD_HD_PATH_MAX_DEPTH];
    size_t depth = 0;
    GD_TRY(gd_hd_path_parse(idx, GD_HD_PATH_MAX_DEPTH, &depth, path));
    gd_hd_node node;
    gd_status s = gd_hd_master(&node, seed, seed_len);
    for (size_t i = 0; s == GD_OK && i < depth; i++)
        s = gd_hd_child(&node, idx[i]);
    if (s == GD_OK)
        *out = node;
    gd_hd_node_wipe(&node);
    return s;
}

void gd_hd_node_wipe(gd_hd_node *node) { gd_wipe(node, sizeof *node); }
