/* BIP39 against Trezor's published vectors, plus malformed mnemonics. */
#include "chain/keys/bip39.h"
#include "common/bytes.h"
#include "tests/support/vectors.h"

static void test_trezor_vectors(void) {
    FILE *f = gd_vectors_open("bip39_trezor.txt");
    char line[4096], *v[4];
    int count = 0;
    while (gd_vectors_next(f, line, v, 4) == 4) {
        uint8_t entropy[32], seed[64];
        size_t n = gd_test_unhex(entropy, sizeof entropy, v[0]);
        char words[GD_BIP39_MNEMONIC_MAX + 1];
        CHECK_OK(gd_bip39_from_entropy(words, sizeof words, entropy, n));
        CHECK_STR_EQ(words, v[1]);
        char norm[GD_BIP39_MNEMONIC_MAX + 1];
        CHECK_OK(gd_bip39_normalize(norm, sizeof norm, v[1]));
        CHECK_STR_EQ(norm, v[1]);
        CHECK_OK(gd_bip39_seed(seed, v[1], "TREZOR"));
        CHECK_HEX_EQ(seed, 64, v[2]);
        count++;
    }
    fclose(f);
    CHECK(count == 24);
}

static void test_normalize_whitespace(void) {
    char norm[GD_BIP39_MNEMONIC_MAX + 1];
    CHECK_OK(gd_bip39_normalize(norm, sizeof norm,
                                "  abandon\tabandon abandon abandon abandon abandon abandon "
                                "abandon\nabandon abandon abandon   about \n"));
    CHECK_STR_EQ(norm, "abandon abandon abandon abandon abandon abandon abandon abandon abandon "
                       "abandon abandon about");
}

static void test_rejects(void) {
    char norm[GD_BIP39_MNEMONIC_MAX + 1];
    uint8_t seed[64];
    /* Bad checksum: last word changed. */
    CHECK_STATUS(gd_bip39_normalize(norm, sizeof norm,
                                    "abandon abandon abandon abandon abandon abandon abandon "
                                    "abandon abandon abandon abandon abandon"),
                 GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "checksum") != NULL);
    /* Unknown word: the message names its position, never the word. */
    CHECK_STATUS(gd_bip39_normalize(norm, sizeof norm,
                                    "abandon abandon abandon abandon abandon zzzzz abandon "
                                    "abandon abandon abandon abandon about"),
                 GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "word 6") != NULL);
    CHECK(strstr(gd_error_detail(), "zzzzz") == NULL);
    /* Wrong word counts. */
    CHECK_STATUS(gd_bip39_normalize(norm, sizeof norm, "abandon about"), GD_ERR_PARSE);
    CHECK_STATUS(gd_bip39_normalize(norm, sizeof norm, ""), GD_ERR_PARSE);
    /* Upper case and non-ASCII are refused rather than guessed at. */
    CHECK_STATUS(gd_bip39_normalize(norm, sizeof norm,
                                    "Abandon abandon abandon abandon abandon abandon abandon "
                                    "abandon abandon abandon abandon about"),
                 GD_ERR_PARSE);
    CHECK_STATUS(gd_bip39_normalize(norm, sizeof norm, "abandon\xc3\xa9"), GD_ERR_PARSE);
    /* A very long token is refused without overflowing. */
    char longword[300];
    memset(longword, 'a', sizeof longword - 1);
    longword[sizeof longword - 1] = '\0';
    CHECK_STATUS(gd_bip39_normalize(norm, sizeof norm, longword), GD_ERR_PARSE);
    CHECK_STATUS(gd_bip39_seed(seed,
                               "abandon abandon abandon abandon abandon abandon abandon abandon "
                               "abandon abandon abandon about",
                               "p\xc3\xa4ss"),
                 GD_ERR_INVALID);
    /* Entropy sizes. */
    uint8_t e[33] = {0};
    CHECK_STATUS(gd_bip39_from_entropy(norm, sizeof norm, e, 15), GD_ERR_INVALID);
    CHECK_STATUS(gd_bip39_from_entropy(norm, sizeof norm, e, 33), GD_ERR_INVALID);
    CHECK_STATUS(gd_bip39_from_entropy(norm, 10, e, 16), GD_ERR_LIMIT);
}

static void test_wordlist(void) {
    CHECK_STR_EQ(gd_bip39_english[0], "abandon");
    CHECK_STR_EQ(gd_bip39_english[2047], "zoo");
    for (int i = 1; i < 2048; i++)
        CHECK(strcmp(gd_bip39_english[i - 1], gd_bip39_english[i]) < 0);
}

int main(void) {
    RUN_TEST(test_trezor_vectors);
    RUN_TEST(test_normalize_whitespace);
    RUN_TEST(test_rejects);
    RUN_TEST(test_wordlist);
    return gd_test_finish();
}
