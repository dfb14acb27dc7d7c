/* Cosmos-style addresses over bech32. */
#include "chain/keys/address.h"

#include <string.h>

#include "chain/keys/bech32.h"
#include "common/hash.h"

void gd_address_raw_from_pubkey(uint8_t out[20], const uint8_t pubkey33[33]) {
    uint8_t sha[GD_SHA256_LEN];
    gd_sha256(sha, pubkey33, 33);
    gd_ripemd160(out, sha, sizeof sha);
}

gd_status gd_address_encode(char *out, size_t out_cap, const char *prefix, const uint8_t *raw,
                            size_t raw_len) {
    uint8_t five[GD_ADDRESS_RAW_MAX * 8 / 5 + 1];
    size_t n = 0;
    if (raw_len > GD_ADDRESS_RAW_MAX)
        return gd_fail(GD_ERR_INVALID, "address payload of %zu bytes is too long", raw_len);
    GD_TRY(gd_bech32_convert_bits(five, sizeof five, &n, 5, raw, raw_len, 8, 1));
    return gd_bech32_encode(out, out_cap, prefix, five, n);
}

gd_status gd_address_from_pubkey(char *out, size_t out_cap, const char *prefix,
                                 const uint8_t pubkey33[33]) {
    uint8_t raw[20];
    gd_address_raw_from_pubkey(raw, pubkey33);
    return gd_address_encode(out, out_cap, prefix, raw, sizeof raw);
}

gd_status gd_address_decode(uint8_t raw[GD_ADDRESS_RAW_MAX], size_t *raw_len, const char *text,
                            const char *prefix) {
    char hrp[GD_BECH32_HRP_MAX + 1];
    uint8_t five[GD_BECH32_MAX_LEN];
    size_t n = 0;
    if (gd_bech32_decode(hrp, sizeof hrp, five, sizeof five, &n, text, GD_BECH32_MAX_LEN) !=
        GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "invalid address '%.100s'", text);
    if (prefix != NULL && strcmp(hrp, prefix) != 0)
        return gd_fail(GD_ERR_PARSE, "address '%.100s' has prefix '%s', expected '%s'", text, hrp,
                       prefix);
    if (gd_bech32_convert_bits(raw, GD_ADDRESS_RAW_MAX, raw_len, 8, five, n, 5, 0) != GD_OK)
        return gd_fail_context(GD_ERR_PARSE, "invalid address '%.100s'", text);
    if (*raw_len != 20 && *raw_len != 32)
        return gd_fail(GD_ERR_PARSE, "address '%.100s' holds %zu bytes, expected 20 or 32", text,
                       *raw_len);
    return GD_OK;
}

gd_status gd_address_check(const char *text) {
    uint8_t raw[GD_ADDRESS_RAW_MAX];
    size_t n;
    return gd_address_decode(raw, &n, text, GD_ADDRESS_PREFIX);
}

gd_status gd_address_canonical(char *out, size_t out_cap, const char *text) {
    uint8_t raw[GD_ADDRESS_RAW_MAX];
    size_t n;
    GD_TRY(gd_address_decode(raw, &n, text, GD_ADDRESS_PREFIX));
    return gd_address_encode(out, out_cap, GD_ADDRESS_PREFIX, raw, n);
}

gd_status gd_address_check_canonical(const char *text) {
    char canon[GD_ADDRESS_STR_MAX];
    if (text == NULL)
        return gd_fail(GD_ERR_PARSE, "address is missing");
    GD_TRY(gd_address_canonical(canon, sizeof canon, text));
    if (strcmp(canon, text) != 0)
        return gd_fail(GD_ERR_PARSE, "address %.100s is not in canonical (lower-case) form",
                       text);
    return GD_OK;
}
