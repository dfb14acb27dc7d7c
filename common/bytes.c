/* Byte buffers and hex. */
#include "common/bytes.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "common/secure.h"

gd_status gd_buf_reserve(gd_buf *buf, size_t extra) {
    if (extra > SIZE_MAX - buf->len)
        return gd_fail(GD_ERR_LIMIT, "buffer size overflow");
    size_t need = buf->len + extra;
    if (need <= buf->cap)
        return GD_OK;
    size_t cap = buf->cap ? buf->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *data = realloc(buf->data, cap);
    if (data == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory growing a buffer to %zu bytes", cap);
    gd_mem_prefer_huge(data + buf->len, cap - buf->len); /* what is not yet touched */
    buf->data = data;
    buf->cap = cap;
    return GD_OK;
}

gd_status gd_buf_append(gd_buf *buf, const void *data, size_t len) {
    if (len == 0)
        return GD_OK;
    GD_TRY(gd_buf_reserve(buf, len));
    memcpy(buf->data + buf->len, data, len);
    buf->len += len;
    return GD_OK;
}

gd_status gd_buf_append_str(gd_buf *buf, const char *text) {
    return gd_buf_append(buf, text, strlen(text));
}

gd_status gd_buf_terminate(gd_buf *buf) {
    GD_TRY(gd_buf_reserve(buf, 1));
    buf->data[buf->len] = 0;
    return GD_OK;
}

void gd_buf_free(gd_buf *buf) {
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
}

void gd_buf_wipe_free(gd_buf *buf) {
    if (buf->data != NULL)
        gd_wipe(buf->data, buf->cap);
    gd_buf_free(buf);
}

void gd_hex_encode(char *out, const uint8_t *data, size_t len, bool uppercase) {
    const char *digits = uppercase ? "0123456789ABCDEF" : "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[data[i] >> 4];
        out[2 * i + 1] = digits[data[i] & 15];
    }
    out[2 * len] = '\0';
}

int gd_hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

gd_status gd_hex_decode(uint8_t *out, size_t out_cap, size_t *out_len, const char *hex,
                        size_t hex_len) {
    if (hex_len % 2 != 0)
        return gd_fail(GD_ERR_PARSE, "hex string has odd length %zu", hex_len);
    if (hex_len / 2 > out_cap)
        return gd_fail(GD_ERR_LIMIT, "hex string decodes to %zu bytes, at most %zu expected",
                       hex_len / 2, out_cap);
    for (size_t i = 0; i < hex_len; i += 2) {
        int hi = gd_hex_digit(hex[i]);
        int lo = gd_hex_digit(hex[i + 1]);
        if (hi < 0 || lo < 0)
            return gd_fail(GD_ERR_PARSE, "invalid hex digit at position %zu", hi < 0 ? i : i + 1);
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    *out_len = hex_len / 2;
    return GD_OK;
}

bool gd_bytes_equal_ct(const uint8_t *a, const uint8_t *b, size_t len) {
    uint8_t diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

void gd_put_floats(uint8_t *out, const float *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        gd_put_le32(out + 4 * i, u);
    }
}

void gd_get_floats(float *v, const uint8_t *in, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t u = gd_get_le32(in + 4 * i);
        memcpy(&v[i], &u, 4);
    }
}
