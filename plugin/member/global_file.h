/* G's file in the artifact store (global.gdgs): the global descriptor
 * (proofs/state_desc.h), then params and momentum as n little-endian
 * floats each. Written a window at a time, in order, as the windowed
 * aggregate makes G' (trainer/diloco.h): each window goes to the file and
 * into its arrays' leaf hashes as it comes, and the descriptor with the
 * two roots is written last, so G' is never whole in memory unless the
 * caller keeps a copy. The file appears whole or not at all. */
#ifndef GD_PLUGIN_MEMBER_GLOBAL_FILE_H
#define GD_PLUGIN_MEMBER_GLOBAL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/file.h"
#include "common/pool.h"
#include "common/status.h"
#include "plugin/member/artifact_store.h"
#include "trainer/diloco.h"
#include "trainer/state.h"

/* What writing G's file learned: where it went, its state hash and both
 * arrays' chunk leaves (32 bytes a chunk each), so this node opens it
 * again without a pass over it (gd_global_file_get). */
typedef struct gd_global_leaves {
    uint64_t round;             /* the store's round it went under */
    uint8_t hash[32];           /* its state hash */
    uint8_t *params, *momentum; /* owned; NULL: none known */
} gd_global_leaves;

void gd_global_leaves_free(gd_global_leaves *l);

typedef struct gd_global_file {
    gd_file_atomic file;
    uint64_t round; /* the store's */
    gd_global_desc desc;
    bool hashing; /* the roots are computed as the windows come */
    gd_values_stream params, momentum;
    uint64_t next;          /* the next window's first value */
    gd_global_state *copy;  /* also written here, or NULL */
} gd_global_file;

/* A file stored as G_round (the artifact's round) for a G that has
 * aggregated g_round rounds (its descriptor's round), of n values in chunks
 * of chunk_elems; copy (n values, or NULL) receives the same windows. The
 * roots are hashed on pool (may be NULL) as the windows come. */
gd_status gd_global_file_begin(gd_global_file *f, gd_pool *pool, const gd_artifact_store *s,
                               uint64_t run,
                               uint64_t round, uint64_t g_round, const uint8_t layout_digest[32],
                               uint32_t chunk_elems, uint64_t n,
                               gd_global_state *copy) GD_MUST_CHECK;
/* The next window [lo, lo + count) of params and momentum. */
gd_status gd_global_file_write(gd_global_file *f, const float *params, const float *momentum,
                               size_t lo, size_t count) GD_MUST_CHECK;
/* Once every value is written: the descriptor, fsync, in place; hash gets
 * the descriptor's hash (the chain's state hash), unless NULL, and leaves
 * (freed first; may be NULL) what was learned of the file. */
gd_status gd_global_file_commit(gd_global_file *f, uint8_t hash[32],
                                gd_global_leaves *leaves) GD_MUST_CHECK;
void gd_global_file_abort(gd_global_file *f);

/* G_round opened from the store (g is initialised here; free it): the
 * file's size and descriptor are checked against n values in chunks of
 * chunk_elems, and its arrays against the descriptor's roots (one pass, a
 * window at a time). Its params and momentum are read into memory when
 * keep_params and keep_momentum say so, else read from the file as they
 * are needed, each chunk checked (trainer/state.h). g->round is the
 * descriptor's; whether the descriptor is the chain's is the caller's to
 * check (its hash). GD_ERR_NOT_FOUND when the store has no G_round.
 * known (may be NULL) is what this node learned writing a G file: when it
 * is this one (the same round and state hash), an array left in the file
 * takes its leaves from there instead of a pass over the file; each chunk
 * read is still checked against them. */
gd_status gd_global_file_get(const gd_artifact_store *s, gd_pool *pool, uint64_t run,
                             uint64_t round, uint64_t n, uint32_t chunk_elems, bool keep_params,
                             bool keep_momentum, const gd_global_leaves *known,
                             gd_global_state *g, gd_global_desc *desc) GD_MUST_CHECK;

/* Only G_round's descriptor (its hash is the state hash), the file's size
 * checked against n values. */
gd_status gd_global_file_desc(const gd_artifact_store *s, uint64_t run, uint64_t round,
                              uint64_t n, gd_global_desc *desc) GD_MUST_CHECK;

/* The windowed aggregate's G (trainer/diloco.h) for a G_r in memory and
 * G_{r+1} written to a file: x must outlive the io. */
typedef struct gd_global_file_io {
    gd_global_arrays from; /* .from: G_r */
    gd_global_file *to;
} gd_global_file_io;

gd_global_io gd_global_file_io_of(gd_global_file_io *x);

/* A G of from->n values stored as G_round (its descriptor's round g_round),
 * its windows read in order from `from` (from->write is not used) and
 * hashed on the pool; hash and leaves as gd_global_file_commit's. */
gd_status gd_global_file_put_from(const gd_artifact_store *s, gd_pool *pool, uint64_t run,
                                  uint64_t round, uint64_t g_round,
                                  const uint8_t layout_digest[32], uint32_t chunk_elems,
                                  const gd_global_io *from, uint8_t hash[32],
                                  gd_global_leaves *leaves) GD_MUST_CHECK;

/* A G stored as G_round, read a window at a time from memory or its own
 * file (its roots hashed on the pool, its descriptor's round g->round). */
gd_status gd_global_file_put(const gd_artifact_store *s, gd_pool *pool, uint64_t run,
                             uint64_t round, const uint8_t layout_digest[32],
                             uint32_t chunk_elems, const gd_global_state *g) GD_MUST_CHECK;

#endif
