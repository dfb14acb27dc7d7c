/* Keys, signatures and key files. */
#include <sys/stat.h>

#include "chain/keys/address.h"
#include "chain/keys/bip39.h"
#include "chain/keys/keyfile.h"
#include "chain/keys/keys.h"
#include "common/bytes.h"
#include "common/hash.h"
#include "tests/support/vectors.h"

#define SIMD "sign_direct_simd.txt"

/* simd's signature over its sign bytes, reproduced bit for bit: RFC 6979
 * nonces make ECDSA deterministic, so equal bytes prove equal signing. */
static void test_simd_signature(void) {
    gd_key key;
    CHECK_OK(gd_key_from_mnemonic(&key, gd_vectors_value(SIMD, "mnemonic"), NULL,
                                  gd_vectors_value(SIMD, "path")));
    uint8_t doc[1024], digest[32], sig[64], expected[64];
    size_t n = gd_test_unhex(doc, sizeof doc, gd_vectors_value(SIMD, "sign_bytes"));
    gd_sha256(digest, doc, n);
    CHECK_OK(gd_key_sign(&key, digest, sig));
    CHECK_HEX_EQ(sig, 64, gd_vectors_value(SIMD, "signature"));
    gd_test_unhex(expected, 64, gd_vectors_value(SIMD, "signature"));
    CHECK(gd_signature_verify(key.pubkey, digest, expected));
    digest[0] ^= 1;
    CHECK(!gd_signature_verify(key.pubkey, digest, expected));
}

/* The SDK rejects high-S signatures; so does the verifier, and signing
 * never produces one. */
static void test_low_s(void) {
    gd_key key;
    uint8_t secret[32];
    memset(secret, 0x42, sizeof secret);
    CHECK_OK(gd_key_from_secret(&key, secret));
    for (int i = 0; i < 64; i++) {
        uint8_t digest[32], sig[64];
        gd_sha256(digest, &i, sizeof i);
        CHECK_OK(gd_key_sign(&key, digest, sig));
        /* S <= n/2, the half order 7fffffff...5d576e73 57a4501d dfe92f46 681b20a0 */
        static const uint8_t half[32] = {
            0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xff, 0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4,
            0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0};
        CHECK(memcmp(sig + 32, half, 32) <= 0);
        CHECK(gd_signature_verify(key.pubkey, digest, sig));
        /* Negate S (n - S): the same signature in high-S form must fail. */
        static const uint8_t order[32] = {
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48,
            0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41};
        uint8_t high[64];
        memcpy(high, sig, 32);
        int borrow = 0;
        for (int k = 31; k >= 0; k--) {
            int d = order[k] - sig[32 + k] - borrow;
            borrow = d < 0;
            high[32 + k] = (uint8_t)(d + (borrow ? 256 : 0));
        }
        CHECK(!gd_signature_verify(key.pubkey, digest, high));
    }
}

static void test_secret_range(void) {
    gd_key key;
    uint8_t zero[32] = {0}, order[32];
    CHECK_STATUS(gd_key_from_secret(&key, zero), GD_ERR_CRYPTO);
    gd_test_unhex(order, 32, "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141");
    CHECK_STATUS(gd_key_from_secret(&key, order), GD_ERR_CRYPTO);
    CHECK_STATUS(gd_key_from_hex(&key, "00"), GD_ERR_PARSE);
    CHECK_STATUS(gd_key_from_hex(&key, "zz00000000000000000000000000000000000000000000000000000000000001"),
                 GD_ERR_PARSE);
    CHECK_OK(gd_key_from_hex(&key, "0000000000000000000000000000000000000000000000000000000000000001"));
    /* 1*G, the generator point. */
    CHECK_HEX_EQ(key.pubkey, 33, "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798");
}

static void test_generate(void) {
    gd_key a, b;
    char ma[GD_BIP39_MNEMONIC_MAX + 1], mb[GD_BIP39_MNEMONIC_MAX + 1];
    CHECK_OK(gd_key_generate(&a, ma, sizeof ma));
    CHECK_OK(gd_key_generate(&b, mb, sizeof mb));
    CHECK(memcmp(a.secret, b.secret, 32) != 0);
    /* The mnemonic regenerates the key at Gonka's path. */
    gd_key again;
    CHECK_OK(gd_key_from_mnemonic(&again, ma, NULL, NULL));
    CHECK(memcmp(again.secret, a.secret, 32) == 0);
    int words = 1;
    for (const char *p = ma; *p; p++)
        words += *p == ' ';
    CHECK(words == 24);
}

static void test_keyfile_roundtrip(void) {
    gd_key key, back;
    CHECK_OK(gd_key_from_hex(&key, "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"));
    char path[600];
    snprintf(path, sizeof path, "%s/k.key", gd_test_tmpdir());
    CHECK_OK(gd_keyfile_write(path, &key));
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK_OK(gd_keyfile_read(&back, path));
    CHECK(memcmp(&key, &back, sizeof key) == 0);
    CHECK_STATUS(gd_keyfile_write(path, &key), GD_ERR_EXISTS);
    CHECK(chmod(path, 0644) == 0);
    CHECK_STATUS(gd_keyfile_read(&back, path), GD_ERR_PERMISSION);
}

static void test_keyfile_formats(void) {
    gd_key key;
    const char *hex = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
    /* A bare hex export, with or without newline. */
    CHECK_OK(gd_keyfile_parse(&key, (const uint8_t *)hex, strlen(hex)));
    char withnl[80];
    snprintf(withnl, sizeof withnl, "%s\n", hex);
    CHECK_OK(gd_keyfile_parse(&key, (const uint8_t *)withnl, strlen(withnl)));
    /* The minimal structured form. */
    char text[512];
    snprintf(text, sizeof text, "type: secp256k1\nprivkey: %s\n", hex);
    CHECK_OK(gd_keyfile_parse(&key, (const uint8_t *)text, strlen(text)));
    /* Mismatched pubkey or address is caught. */
    snprintf(text, sizeof text,
             "type: secp256k1\npubkey: 0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798\nprivkey: %s\n",
             hex);
    CHECK_STATUS(gd_keyfile_parse(&key, (const uint8_t *)text, strlen(text)), GD_ERR_PARSE);
    snprintf(text, sizeof text,
             "type: secp256k1\naddress: gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc\nprivkey: %s\n",
             hex);
    CHECK_STATUS(gd_keyfile_parse(&key, (const uint8_t *)text, strlen(text)), GD_ERR_PARSE);
    /* Malformed files: never accepted, and the secret never echoed. */
    const char *bad[] = {
        "",
        "type: secp256k1\n",
        "type: ed25519\nprivkey: a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90\n",
        "privkey: a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90\n",
        "type: secp256k1\nprivkey: a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9\n",
        "type: secp256k1\nprivkey: 0000000000000000000000000000000000000000000000000000000000000000\n",
        "type: secp256k1\ntype: secp256k1\nprivkey: a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90\n",
        "type: secp256k1\nnote: hello\n",
        "type secp256k1\n",
        "0000000000000000000000000000000000000000000000000000000000000000",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(gd_keyfile_parse(&key, (const uint8_t *)bad[i], strlen(bad[i])),
                     GD_ERR_PARSE);
        CHECK(strstr(gd_error_detail(), "a1b2c3d4e5f6") == NULL);
    }
}

int main(void) {
    RUN_TEST(test_simd_signature);
    RUN_TEST(test_low_s);
    RUN_TEST(test_secret_range);
    RUN_TEST(test_generate);
    RUN_TEST(test_keyfile_roundtrip);
    RUN_TEST(test_keyfile_formats);
    return gd_test_finish();
}
