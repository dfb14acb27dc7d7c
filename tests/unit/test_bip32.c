/* BIP32 against the BIP's test vectors 1 and 2 and the master keys of the
 * BIP39 vectors; Cosmos addresses against cosmjs' published ones. */
#include "chain/keys/address.h"
#include "chain/keys/bip32.h"
#include "chain/keys/bip39.h"
#include "chain/keys/keys.h"
#include "common/bytes.h"
#include "common/hash.h"
#include "tests/support/vectors.h"

/* Base58Check decoding, only to read the vectors' xprv strings. */
static int gd_base58check_decode(uint8_t *out, const char *text, size_t want) {
    static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    uint8_t num[128] = {0}; /* big-endian */
    size_t len = sizeof num;
    for (const char *p = text; *p; p++) {
        const char *hit = strchr(alphabet, *p);
        if (!hit)
            return 0;
        unsigned carry = (unsigned)(hit - alphabet);
        for (size_t i = len; i-- > 0;) {
            carry += 58u * num[i];
            num[i] = (uint8_t)carry;
            carry >>= 8;
        }
        if (carry)
            return 0;
    }
    /* The payload is the last want+4 bytes; check the double-SHA256 checksum. */
    const uint8_t *payload = num + len - (want + 4);
    uint8_t h1[32], h2[32];
    gd_sha256(h1, payload, want);
    gd_sha256(h2, h1, 32);
    if (memcmp(h2, payload + want, 4) != 0)
        return 0;
    memcpy(out, payload, want);
    return 1;
}

/* xprv layout: version(4) depth(1) parent(4) child(4) chain(32) 0x00 key(32). */
static void gd_check_xprv(const gd_hd_node *node, const char *xprv) {
    uint8_t raw[78];
    CHECK(gd_base58check_decode(raw, xprv, sizeof raw));
    CHECK(raw[45] == 0);
    CHECK(memcmp(node->chain_code, raw + 13, 32) == 0);
    CHECK(memcmp(node->key, raw + 46, 32) == 0);
}

static void test_bip32_vectors(void) {
    FILE *f = gd_vectors_open("bip32.txt");
    char line[4096], *v[3];
    int count = 0;
    while (gd_vectors_next(f, line, v, 3) == 3) {
        uint8_t seed[64];
        size_t n = gd_test_unhex(seed, sizeof seed, v[0]);
        gd_hd_node node;
        CHECK_OK(gd_hd_derive(&node, seed, n, v[1]));
        gd_check_xprv(&node, v[2]);
        count++;
    }
    fclose(f);
    CHECK(count == 12);
}

static void test_bip39_master_keys(void) {
    FILE *f = gd_vectors_open("bip39_trezor.txt");
    char line[4096], *v[4];
    while (gd_vectors_next(f, line, v, 4) == 4) {
        uint8_t seed[64];
        gd_test_unhex(seed, sizeof seed, v[2]);
        gd_hd_node node;
        CHECK_OK(gd_hd_master(&node, seed, 64));
        gd_check_xprv(&node, v[3]);
    }
    fclose(f);
}

static void test_cosmjs_addresses(void) {
    FILE *f = gd_vectors_open("cosmos_addresses.txt");
    char line[4096], *v[4];
    int count = 0;
    while (gd_vectors_next(f, line, v, 4) == 4) {
        gd_key key;
        CHECK_OK(gd_key_from_mnemonic(&key, v[0], NULL, v[1]));
        CHECK_HEX_EQ(key.pubkey, 33, v[2]);
        char prefix[16];
        const char *one = strchr(v[3], '1');
        snprintf(prefix, sizeof prefix, "%.*s", (int)(one - v[3]), v[3]);
        char address[GD_ADDRESS_STR_MAX];
        CHECK_OK(gd_address_from_pubkey(address, sizeof address, prefix, key.pubkey));
        CHECK_STR_EQ(address, v[3]);
        count++;
    }
    fclose(f);
    CHECK(count == 6);
}

static void test_paths(void) {
    uint32_t idx[GD_HD_PATH_MAX_DEPTH];
    size_t depth;
    CHECK_OK(gd_hd_path_parse(idx, GD_HD_PATH_MAX_DEPTH, &depth, GD_HD_PATH_GONKA));
    CHECK(depth == 5 && idx[0] == (44 | GD_HD_HARDENED) && idx[1] == (1200 | GD_HD_HARDENED) &&
          idx[2] == GD_HD_HARDENED && idx[3] == 0 && idx[4] == 0);
    CHECK_OK(gd_hd_path_parse(idx, GD_HD_PATH_MAX_DEPTH, &depth, "m/44h/118H/0'/0/7"));
    CHECK(depth == 5 && idx[4] == 7);
    CHECK_OK(gd_hd_path_parse(idx, GD_HD_PATH_MAX_DEPTH, &depth, "m"));
    CHECK(depth == 0);
    const char *bad[] = {"", "44'/0", "m/", "m//0", "m/x", "m/2147483648", "m/1''",
                         "m/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(gd_hd_path_parse(idx, GD_HD_PATH_MAX_DEPTH, &depth, bad[i]) != GD_OK);
    gd_hd_node node;
    uint8_t seed[16] = {0};
    CHECK_STATUS(gd_hd_master(&node, seed, 15), GD_ERR_INVALID);
}

/* The Gonka path differs from the Cosmos Hub path for the same mnemonic. */
static void test_gonka_path(void) {
    const char *m = "economy stock theory fatal elder harbor betray wasp final emotion task "
                    "crumble siren bottom lizard educate guess current outdoor pair theory focus "
                    "wife stone";
    gd_key gonka, hub;
    CHECK_OK(gd_key_from_mnemonic(&gonka, m, NULL, NULL));
    CHECK_OK(gd_key_from_mnemonic(&hub, m, NULL, "m/44'/118'/0'/0/0"));
    CHECK(memcmp(gonka.pubkey, hub.pubkey, 33) != 0);
    gd_key explicit_path;
    CHECK_OK(gd_key_from_mnemonic(&explicit_path, m, NULL, "m/44'/1200'/0'/0/0"));
    CHECK(memcmp(gonka.pubkey, explicit_path.pubkey, 33) == 0);
}

int main(void) {
    RUN_TEST(test_bip32_vectors);
    RUN_TEST(test_bip39_master_keys);
    RUN_TEST(test_cosmjs_addresses);
    RUN_TEST(test_paths);
    RUN_TEST(test_gonka_path);
    return gd_test_finish();
}
