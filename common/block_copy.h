/* Copies of a fixed-size block for loops that work a block at a time (the
 * codecs' arithmetic and formats): constant-size when the block is whole,
 * so the compiler emits a few vector moves and not a call, and exact in a
 * chunk's short last block. Sizes are in bytes; len is the block's, m the
 * bytes actually there (m <= len). */
#ifndef GD_COMMON_BLOCK_COPY_H
#define GD_COMMON_BLOCK_COPY_H

#include <stddef.h>
#include <string.h>

/* dst (len bytes) = src's m bytes, zero-padded: padding zeros change
 * neither a block's largest magnitude nor the other values' codes. */
static inline void gd_block_load(void *dst, const void *src, size_t len, size_t m) {
    if (m == len) {
        memcpy(dst, src, len);
    } else {
        memset(dst, 0, len);
        memcpy(dst, src, m);
    }
}

/* dst's m bytes = src's first m (of len). */
static inline void gd_block_store(void *dst, const void *src, size_t len, size_t m) {
    if (m == len)
        memcpy(dst, src, len);
    else
        memcpy(dst, src, m);
}

#endif
