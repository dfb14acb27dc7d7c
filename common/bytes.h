/* Growable byte buffers and hex encoding.
 *
 * A gd_buf owns its memory; zero-initialise it (`gd_buf b = {0};`) and free it
 * with gd_buf_free(), or gd_buf_wipe_free() when it held a secret. */
#ifndef GD_COMMON_BYTES_H
#define GD_COMMON_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* A read-only span of bytes; lists of them describe data that is written
 * or hashed as if concatenated, without copying it together. */
typedef struct gd_bytes_part {
    const void *data;
    size_t len;
} gd_bytes_part;

typedef struct gd_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} gd_buf;

/* Ensures room for `extra` more bytes. */
gd_status gd_buf_reserve(gd_buf *buf, size_t extra) GD_MUST_CHECK;
gd_status gd_buf_append(gd_buf *buf, const void *data, size_t len) GD_MUST_CHECK;
gd_status gd_buf_append_str(gd_buf *buf, const char *text) GD_MUST_CHECK;
/* Appends a NUL without counting it in len, so data can be used as a C string. */
gd_status gd_buf_terminate(gd_buf *buf) GD_MUST_CHECK;
void gd_buf_free(gd_buf *buf);
/* Overwrites the whole allocation before freeing it. */
void gd_buf_wipe_free(gd_buf *buf);

/* Writes 2*len hex digits and a NUL to out (size >= 2*len+1). */
void gd_hex_encode(char *out, const uint8_t *data, size_t len, bool uppercase);

/* Little-endian fixed-width fields of the project's binary formats. */
static inline void gd_put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void gd_put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t gd_get_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t gd_get_le64(const uint8_t *p) {
    return (uint64_t)gd_get_le32(p) | (uint64_t)gd_get_le32(p + 4) << 32;
}

/* n floats as little-endian IEEE binary32 (4 n bytes), and back. */
void gd_put_floats(uint8_t *out, const float *v, size_t n);
void gd_get_floats(float *v, const uint8_t *in, size_t n);

/* The value of one hex digit (either case), or -1. */
int gd_hex_digit(char c);

/* Decodes exactly hex_len digits (either case) into out.
 * Returns GD_ERR_PARSE for odd length or a non-hex digit, GD_ERR_LIMIT if
 * the result would exceed out_cap. On success *out_len = hex_len / 2. */
gd_status gd_hex_decode(uint8_t *out, size_t out_cap, size_t *out_len, const char *hex,
                        size_t hex_len) GD_MUST_CHECK;

/* Compares two byte ranges in time independent of where they differ. */
bool gd_bytes_equal_ct(const uint8_t *a, const uint8_t *b, size_t len);

#endif
