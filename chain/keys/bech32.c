/* Bech32 written from BIP-173's specification. */
#include "chain/keys/bech32.h"

#include <stdbool.h>
#include <string.h>

static const char gd_bech32_charset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

static uint32_t gd_bech32_polymod_step(uint32_t pre) {
    uint8_t b = (uint8_t)(pre >> 25);
    return ((pre & 0x1FFFFFF) << 5) ^ (-((b >> 0) & 1) & 0x3b6a57b2UL) ^
           (-((b >> 1) & 1) & 0x26508e6dUL) ^ (-((b >> 2) & 1) & 0x1ea119faUL) ^
           (-((b >> 3) & 1) & 0x3d4233ddUL) ^ (-((b >> 4) & 1) & 0x2a1462b3UL);
}

static int8_t gd_bech32_char_value(char c) {
    const char *p = strchr(gd_bech32_charset, c);
    return (c != '\0' && p != NULL) ? (int8_t)(p - gd_bech32_charset) : -1;
}

/* Checksum state after the expanded hrp: high bits, a zero, low bits. */
static uint32_t gd_bech32_hrp_polymod(const char *hrp, size_t hrp_len) {
    uint32_t chk = 1;
    for (size_t i = 0; i < hrp_len; i++)
        chk = gd_bech32_polymod_step(chk) ^ ((uint8_t)hrp[i] >> 5);
    chk = gd_bech32_polymod_step(chk);
    for (size_t i = 0; i < hrp_len; i++)
        chk = gd_bech32_polymod_step(chk) ^ ((uint8_t)hrp[i] & 0x1f);
    return chk;
}

gd_status gd_bech32_encode(char *out, size_t out_cap, const char *hrp, const uint8_t *data,
                           size_t len) {
    size_t hrp_len = strlen(hrp);
    if (hrp_len == 0 || hrp_len > GD_BECH32_HRP_MAX)
        return gd_fail(GD_ERR_INVALID, "bech32 prefix must be 1 to %d characters",
                       GD_BECH32_HRP_MAX);
    if (out_cap < hrp_len + 1 + len + 6 + 1)
        return gd_fail(GD_ERR_LIMIT, "bech32 output buffer too small");
    for (size_t i = 0; i < hrp_len; i++) {
        char c = hrp[i];
        if (c < 33 || c > 126 || (c >= 'A' && c <= 'Z'))
            return gd_fail(GD_ERR_INVALID, "bech32 prefix must be lowercase printable ASCII");
    }
    uint32_t chk = gd_bech32_hrp_polymod(hrp, hrp_len);
    memcpy(out, hrp, hrp_len);
    size_t o = hrp_len;
    out[o++] = '1';
    for (size_t i = 0; i < len; i++) {
        if (data[i] >> 5)
            return gd_fail(GD_ERR_INVALID, "bech32 data value %u is not 5-bit", data[i]);
        chk = gd_bech32_polymod_step(chk) ^ data[i];
        out[o++] = gd_bech32_charset[data[i]];
    }
    for (int i = 0; i < 6; i++)
        chk = gd_bech32_polymod_step(chk);
    chk ^= 1;
    for (int i = 0; i < 6; i++)
        out[o++] = gd_bech32_charset[(chk >> ((5 - i) * 5)) & 31];
    out[o] = '\0';
    return GD_OK;
}

gd_status gd_bech32_decode(char *hrp, size_t hrp_cap, uint8_t *data, size_t data_cap,
                           size_t *data_len, const char *text, size_t max_len) {
    size_t len = strnlen(text, max_len + 1);
    if (len > max_len)
        return gd_fail(GD_ERR_PARSE, "bech32 string longer than %zu characters", max_len);
    bool has_lower = false, has_upper = false;
    size_t sep = len; /* position of the last '1' */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 33 || c > 126)
            return gd_fail(GD_ERR_PARSE, "bech32 string has a character out of range at %zu", i);
        has_lower |= c >= 'a' && c <= 'z';
        has_upper |= c >= 'A' && c <= 'Z';
        if (c == '1')
            sep = i;
    }
    if (has_lower && has_upper)
        return gd_fail(GD_ERR_PARSE, "bech32 string mixes upper and lower case");
    if (sep == len)
        return gd_fail(GD_ERR_PARSE, "bech32 string has no '1' separator");
    if (sep == 0)
        return gd_fail(GD_ERR_PARSE, "bech32 string has an empty prefix");
    if (len - sep - 1 < 6)
        return gd_fail(GD_ERR_PARSE, "bech32 checksum too short");
    if (sep > GD_BECH32_HRP_MAX || sep + 1 > hrp_cap)
        return gd_fail(GD_ERR_PARSE, "bech32 prefix too long");
    size_t n = len - sep - 1 - 6;
    if (n > data_cap)
        return gd_fail(GD_ERR_LIMIT, "bech32 payload longer than expected");
    for (size_t i = 0; i < sep; i++) {
        char c = text[i];
        hrp[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    hrp[sep] = '\0';
    uint32_t chk = gd_bech32_hrp_polymod(hrp, sep);
    for (size_t i = sep + 1; i < len; i++) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        int8_t v = gd_bech32_char_value(c);
        if (v < 0)
            return gd_fail(GD_ERR_PARSE, "bech32 string has invalid character '%c' at %zu",
                           text[i], i);
        chk = gd_bech32_polymod_step(chk) ^ (uint32_t)v;
        if (i < len - 6)
            data[i - sep - 1] = (uint8_t)v;
    }
    if (chk != 1)
        return gd_fail(GD_ERR_PARSE, "bech32 checksum mismatch (typo in the address?)");
    *data_len = n;
    return GD_OK;
}

gd_status gd_bech32_convert_bits(uint8_t *out, size_t out_cap, size_t *out_len, int to_bits,
                                 const uint8_t *in, size_t in_len, int from_bits, int pad) {
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    const uint32_t maxv = (1u << to_bits) - 1;
    for (size_t i = 0; i < in_len; i++) {
        if (in[i] >> from_bits)
            return gd_fail(GD_ERR_PARSE, "value does not fit in %d bits", from_bits);
        acc = (acc << from_bits) | in[i];
        bits += from_bits;
        while (bits >= to_bits) {
            bits -= to_bits;
            if (o == out_cap)
                return gd_fail(GD_ERR_LIMIT, "bit regrouping output too small");
            out[o++] = (uint8_t)((acc >> bits) & maxv);
        }
        acc &= (1u << bits) - 1; /* keep only unconsumed bits */
    }
    if (pad) {
        if (bits > 0) {
            if (o == out_cap)
                return gd_fail(GD_ERR_LIMIT, "bit regrouping output too small");
            out[o++] = (uint8_t)((acc << (to_bits - bits)) & maxv);
        }
    } else if (bits >= from_bits || ((acc << (to_bits - bits)) & maxv) != 0) {
        return gd_fail(GD_ERR_PARSE, "bech32 payload has invalid padding");
    }
    *out_len = o;
    return GD_OK;
}
