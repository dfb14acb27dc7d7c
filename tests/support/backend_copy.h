/* A test backend whose memory is not the host's: every buffer is a separate
 * allocation fenced by guard bytes, transfers are explicit copies, and no
 * op slot is filled, so every op runs through the dispatcher's fallback.
 * It plays a device backend on a machine without one: code that forgets a
 * transfer, or writes past a buffer, fails against it (the guards are
 * checked at every free and on demand); and it counts what it holds. */
#ifndef GD_TESTS_SUPPORT_BACKEND_COPY_H
#define GD_TESTS_SUPPORT_BACKEND_COPY_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/backend.h"

typedef struct gd_copy_backend gd_copy_backend;

/* A copy backend over pool (borrowed; may be NULL); out is its handle. */
gd_copy_backend *gd_copy_backend_new(gd_backend *out, gd_pool *pool);
/* Frees what it holds; false if a guard was ever found damaged or a
 * buffer is still allocated (both are printed). */
bool gd_copy_backend_free(gd_copy_backend *cb);
/* true while every live buffer's guards are intact. */
bool gd_copy_backend_guards_ok(const gd_copy_backend *cb);
/* Buffers allocated and bytes moved so far. */
size_t gd_copy_backend_live(const gd_copy_backend *cb);
size_t gd_copy_backend_bytes_moved(const gd_copy_backend *cb);
/* The most bytes its buffers held at once (guards not counted): a GPU's
 * high-water mark, which gonka-diloco plan budgets. */
size_t gd_copy_backend_peak_bytes(const gd_copy_backend *cb);

#endif
