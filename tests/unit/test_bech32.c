/* Bech32 (BIP-173 vectors) and Gonka addresses. */
#include "chain/keys/address.h"
#include "chain/keys/bech32.h"
#include "tests/support/testkit.h"

/* BIP-173 "Test vectors": valid bech32 strings. */
static const char *const gd_valid[] = {
    "A12UEL5L",
    "a12uel5l",
    "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
    "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
    "11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
    "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
    "?1ezyfcl",
};

/* BIP-173 invalid strings, each with the reason BIP-173 gives. */
static const char *const gd_invalid[] = {
    "\x20" "1nwldj5",   /* HRP character out of range */
    "\x7f" "1axkwrx",   /* HRP character out of range */
    "\x80" "1eym55h",   /* HRP character out of range */
    "an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx",
    "pzry9x0s0muk",      /* no separator */
    "1pzry9x0s0muk",     /* empty HRP */
    "x1b4n0q5v",         /* invalid data character */
    "li1dgmt3",          /* too short checksum */
    "de1lg7wt" "\xff",   /* invalid character in checksum */
    "A1G7SGD8",          /* checksum calculated with uppercase form of HRP */
    "10a06t8",           /* empty HRP */
    "1qzzfhee",          /* empty HRP */
};

static void test_bip173_valid(void) {
    for (size_t i = 0; i < sizeof gd_valid / sizeof gd_valid[0]; i++) {
        char hrp[GD_BECH32_HRP_MAX + 1];
        uint8_t data[GD_BECH32_MAX_LEN];
        size_t n = 0;
        CHECK_OK(gd_bech32_decode(hrp, sizeof hrp, data, sizeof data, &n, gd_valid[i],
                                  GD_BECH32_MAX_LEN));
        /* Re-encoding gives the lower-case form of the input. */
        char again[GD_BECH32_MAX_LEN + 1], lower[GD_BECH32_MAX_LEN + 1];
        CHECK_OK(gd_bech32_encode(again, sizeof again, hrp, data, n));
        size_t len = strlen(gd_valid[i]);
        for (size_t k = 0; k <= len; k++) {
            char c = gd_valid[i][k];
            lower[k] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
        }
        CHECK_STR_EQ(again, lower);
    }
}

static void test_bip173_invalid(void) {
    for (size_t i = 0; i < sizeof gd_invalid / sizeof gd_invalid[0]; i++) {
        char hrp[GD_BECH32_HRP_MAX + 1];
        uint8_t data[GD_BECH32_MAX_LEN];
        size_t n = 0;
        gd_status s = gd_bech32_decode(hrp, sizeof hrp, data, sizeof data, &n, gd_invalid[i],
                                       GD_BECH32_MAX_LEN);
        if (s == GD_OK)
            fprintf(stderr, "accepted invalid vector %zu\n", i);
        CHECK(s != GD_OK);
    }
    /* Mixed case is refused. */
    char hrp[GD_BECH32_HRP_MAX + 1];
    uint8_t data[GD_BECH32_MAX_LEN];
    size_t n;
    CHECK(gd_bech32_decode(hrp, sizeof hrp, data, sizeof data, &n, "a12UEL5L", 90) != GD_OK);
}

static void test_convert_bits(void) {
    /* 21 bytes = 168 bits = 33 groups of 5 plus 3 padding bits. */
    uint8_t in[21], five[40], back[32];
    size_t n5 = 0, n8 = 0;
    for (int i = 0; i < 21; i++)
        in[i] = (uint8_t)(i * 13 + 7);
    CHECK_OK(gd_bech32_convert_bits(five, sizeof five, &n5, 5, in, 21, 8, 1));
    CHECK(n5 == 34);
    CHECK_OK(gd_bech32_convert_bits(back, sizeof back, &n8, 8, five, n5, 5, 0));
    CHECK(n8 == 21 && memcmp(back, in, 21) == 0);
    /* Non-zero padding bits are refused when decoding. */
    five[n5 - 1] |= 1;
    CHECK_STATUS(gd_bech32_convert_bits(back, sizeof back, &n8, 8, five, n5, 5, 0), GD_ERR_PARSE);
}

static void test_addresses(void) {
    uint8_t raw[GD_ADDRESS_RAW_MAX];
    size_t n = 0;
    char text[GD_ADDRESS_STR_MAX];
    /* cosmjs faucet address0 decodes under "cosmos" and re-encodes under "gonka". */
    CHECK_OK(gd_address_decode(raw, &n, "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6", "cosmos"));
    CHECK(n == 20);
    CHECK_OK(gd_address_encode(text, sizeof text, "gonka", raw, n));
    CHECK_STR_EQ(text, "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc");
    CHECK_OK(gd_address_check("gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc"));
    /* Upper case is the same address. */
    CHECK_OK(gd_address_check("GONKA1PKPTRE7FDKL6GFRZLESJJVHXHLC3R4GMTRQAHC"));
    /* Wrong prefix, checksum, length. */
    CHECK_STATUS(gd_address_check("cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6"), GD_ERR_PARSE);
    CHECK(strstr(gd_error_detail(), "prefix 'cosmos'") != NULL);
    CHECK_STATUS(gd_address_check("gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahd"), GD_ERR_PARSE);
    CHECK_STATUS(gd_address_check("gonka1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"), GD_ERR_PARSE);
    CHECK_STATUS(gd_address_check(""), GD_ERR_PARSE);
    CHECK_STATUS(gd_address_check("gonka1"), GD_ERR_PARSE);
    /* A 32-byte module-style address round-trips. */
    uint8_t mod[32];
    for (int i = 0; i < 32; i++)
        mod[i] = (uint8_t)(255 - i);
    CHECK_OK(gd_address_encode(text, sizeof text, "gonka", mod, 32));
    CHECK(strlen(text) == 64);
    CHECK_OK(gd_address_decode(raw, &n, text, "gonka"));
    CHECK(n == 32 && memcmp(raw, mod, 32) == 0);
}

int main(void) {
    RUN_TEST(test_bip173_valid);
    RUN_TEST(test_bip173_invalid);
    RUN_TEST(test_convert_bits);
    RUN_TEST(test_addresses);
    return gd_test_finish();
}
