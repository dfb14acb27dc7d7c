/* The copy backend (see tests/support/backend_copy.h). */
#include "tests/support/backend_copy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GD_GUARD_BYTES 64
#define GD_GUARD_BYTE 0xA5
#define GD_MAX_BUFFERS 4096

typedef struct gd_copy_buffer {
    unsigned char *base; /* guard, data, guard */
    size_t bytes;
} gd_copy_buffer;

struct gd_copy_backend {
    gd_copy_buffer buffers[GD_MAX_BUFFERS];
    size_t live, moved;
    size_t bytes_live, bytes_peak; /* allocated now, and the most at once */
    bool damaged;
};

static bool guard_intact(const gd_copy_buffer *b) {
    for (size_t i = 0; i < GD_GUARD_BYTES; i++)
        if (b->base[i] != GD_GUARD_BYTE || b->base[GD_GUARD_BYTES + b->bytes + i] != GD_GUARD_BYTE)
            return false;
    return true;
}

static gd_copy_buffer *find(gd_copy_backend *cb, const void *p, size_t bytes) {
    const unsigned char *c = p;
    for (size_t i = 0; i < GD_MAX_BUFFERS; i++) {
        gd_copy_buffer *b = &cb->buffers[i];
        if (b->base == NULL)
            continue;
        const unsigned char *lo = b->base + GD_GUARD_BYTES;
        if (c >= lo && c + bytes <= lo + b->bytes)
            return b;
    }
    return NULL;
}

/* Every transfer must lie inside one buffer: a range that does not is a
 * caller's bug, reported and counted as damage. */
static void check_range(gd_copy_backend *cb, const void *p, size_t bytes, const char *what) {
    if (find(cb, p, bytes) == NULL) {
        fprintf(stderr, "copy backend: %s of %zu bytes outside any buffer\n", what, bytes);
        cb->damaged = true;
    }
}

static void *copy_alloc(const gd_backend *be, size_t bytes) {
    gd_copy_backend *cb = be->ctx;
    if (bytes > SIZE_MAX - 2 * GD_GUARD_BYTES)
        return NULL;
    for (size_t i = 0; i < GD_MAX_BUFFERS; i++) {
        gd_copy_buffer *b = &cb->buffers[i];
        if (b->base != NULL)
            continue;
        b->base = malloc(bytes + 2 * GD_GUARD_BYTES);
        if (b->base == NULL)
            return NULL;
        memset(b->base, GD_GUARD_BYTE, GD_GUARD_BYTES);
        memset(b->base + GD_GUARD_BYTES, 0, bytes);
        memset(b->base + GD_GUARD_BYTES + bytes, GD_GUARD_BYTE, GD_GUARD_BYTES);
        b->bytes = bytes;
        cb->live++;
        cb->bytes_live += bytes;
        if (cb->bytes_live > cb->bytes_peak)
            cb->bytes_peak = cb->bytes_live;
        return b->base + GD_GUARD_BYTES;
    }
    return NULL;
}

static void copy_free(const gd_backend *be, void *buf) {
    gd_copy_backend *cb = be->ctx;
    for (size_t i = 0; i < GD_MAX_BUFFERS; i++) {
        gd_copy_buffer *b = &cb->buffers[i];
        if (b->base == NULL || b->base + GD_GUARD_BYTES != buf)
            continue;
        if (!guard_intact(b)) {
            fprintf(stderr, "copy backend: guard bytes of a %zu-byte buffer overwritten\n",
                    b->bytes);
            cb->damaged = true;
        }
        free(b->base);
        b->base = NULL;
        cb->live--;
        cb->bytes_live -= b->bytes;
        return;
    }
    fprintf(stderr, "copy backend: free of a pointer it did not allocate\n");
    cb->damaged = true;
}

static void copy_upload(const gd_backend *be, void *dst, const void *src, size_t bytes) {
    gd_copy_backend *cb = be->ctx;
    check_range(cb, dst, bytes, "upload");
    memcpy(dst, src, bytes);
    cb->moved += bytes;
}

static void copy_download(const gd_backend *be, void *dst, const void *src, size_t bytes) {
    gd_copy_backend *cb = be->ctx;
    check_range(cb, src, bytes, "download");
    memcpy(dst, src, bytes);
    cb->moved += bytes;
}

static void copy_copy(const gd_backend *be, void *dst, const void *src, size_t bytes) {
    gd_copy_backend *cb = be->ctx;
    check_range(cb, dst, bytes, "copy (to)");
    check_range(cb, src, bytes, "copy (from)");
    memmove(dst, src, bytes);
}

static void copy_zero(const gd_backend *be, void *dst, size_t bytes) {
    gd_copy_backend *cb = be->ctx;
    check_range(cb, dst, bytes, "zero");
    memset(dst, 0, bytes);
}

static const gd_backend_iface gd_copy_iface = {
    .name = "copy",
    .host_memory = false,
    .buffer_alloc = copy_alloc,
    .buffer_free = copy_free,
    .upload = copy_upload,
    .download = copy_download,
    .copy = copy_copy,
    .zero = copy_zero,
};

gd_copy_backend *gd_copy_backend_new(gd_backend *out, gd_pool *pool) {
    gd_copy_backend *cb = calloc(1, sizeof *cb);
    if (cb != NULL)
        *out = (gd_backend){.iface = &gd_copy_iface, .ctx = cb, .pool = pool};
    return cb;
}

bool gd_copy_backend_guards_ok(const gd_copy_backend *cb) {
    bool ok = !cb->damaged;
    for (size_t i = 0; i < GD_MAX_BUFFERS; i++)
        if (cb->buffers[i].base != NULL && !guard_intact(&cb->buffers[i]))
            ok = false;
    return ok;
}

size_t gd_copy_backend_live(const gd_copy_backend *cb) {
    return cb->live;
}

size_t gd_copy_backend_peak_bytes(const gd_copy_backend *cb) {
    return cb->bytes_peak;
}

size_t gd_copy_backend_bytes_moved(const gd_copy_backend *cb) {
    return cb->moved;
}

bool gd_copy_backend_free(gd_copy_backend *cb) {
    if (cb == NULL)
        return true;
    bool ok = gd_copy_backend_guards_ok(cb);
    if (cb->live != 0) {
        fprintf(stderr, "copy backend: %zu buffers never freed\n", cb->live);
        ok = false;
    }
    for (size_t i = 0; i < GD_MAX_BUFFERS; i++)
        free(cb->buffers[i].base);
    free(cb);
    return ok;
}
