/* Strict standard base64. */
#include "common/base64.h"

static const char gd_b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t gd_base64_encoded_len(size_t len) { return (len + 2) / 3 * 4; }

size_t gd_base64_decoded_max(size_t text_len) { return text_len / 4 * 3; }

void gd_base64_encode(char *out, const uint8_t *data, size_t len) {
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
        out[o++] = gd_b64_alphabet[v >> 18];
        out[o++] = gd_b64_alphabet[(v >> 12) & 63];
        out[o++] = gd_b64_alphabet[(v >> 6) & 63];
        out[o++] = gd_b64_alphabet[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)data[i] << 16;
        out[o++] = gd_b64_alphabet[v >> 18];
        out[o++] = gd_b64_alphabet[(v >> 12) & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8;
        out[o++] = gd_b64_alphabet[v >> 18];
        out[o++] = gd_b64_alphabet[(v >> 12) & 63];
        out[o++] = gd_b64_alphabet[(v >> 6) & 63];
        out[o++] = '=';
    }
    out[o] = '\0';
}

static int gd_b64_value(char c) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

gd_status gd_base64_decode(uint8_t *out, size_t out_cap, size_t *out_len, const char *text,
                           size_t text_len) {
    if (text_len % 4 != 0)
        return gd_fail(GD_ERR_PARSE, "base64 length %zu is not a multiple of 4", text_len);
    size_t pad = 0;
    if (text_len >= 4 && text[text_len - 1] == '=')
        pad = text[text_len - 2] == '=' ? 2 : 1;
    size_t n = text_len / 4 * 3 - pad;
    if (n > out_cap)
        return gd_fail(GD_ERR_LIMIT, "base64 decodes to %zu bytes, at most %zu expected", n,
                       out_cap);
    size_t o = 0;
    for (size_t i = 0; i < text_len; i += 4) {
        bool last = i + 4 == text_len;
        int v[4];
        for (int k = 0; k < 4; k++) {
            char c = text[i + (size_t)k];
            if (c == '=' && last && k >= 4 - (int)pad) {
                v[k] = 0;
                continue;
            }
            v[k] = gd_b64_value(c);
            if (v[k] < 0)
                return gd_fail(GD_ERR_PARSE, "invalid base64 character at position %zu",
                               i + (size_t)k);
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
                     (uint32_t)v[3];
        if (last && pad == 2 && (w & 0xFFFF) != 0)
            return gd_fail(GD_ERR_PARSE, "non-canonical base64 padding bits");
        if (last && pad == 1 && (w & 0xFF) != 0)
            return gd_fail(GD_ERR_PARSE, "non-canonical base64 padding bits");
        out[o++] = (uint8_t)(w >> 16);
        if (!(last && pad == 2))
            out[o++] = (uint8_t)(w >> 8);
        if (!(last && pad >= 1))
            out[o++] = (uint8_t)w;
    }
    *out_len = o;
    return GD_OK;
}
