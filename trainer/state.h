/* The states a DiLoCo run hashes, and their canonical forms.
 *
 * A worker's local state is its parameters, AdamW moments, error-feedback
 * residual and inner step counter; the global state G is the parameters and
 * the outer momentum. Each is committed to by a descriptor: a fixed-size
 * header naming what the state is (run, round, worker, data rank, ...)
 * followed by one sub-root per array. A sub-root is the MMR root
 * (proofs/state_hash.h) over the array's chunks of chunk_elems values, the
 * same chunks a payload is cut into, so a verifier can check chunk i of a
 * state against chunk i of a payload or of G, downloading only those chunks
 * and their proofs. A state's hash is SHA-256 of its descriptor.
 *
 * Chunks are ranges of value indices of one array, so a hash depends
 * neither on how the arrays are held in memory nor on how a model is later
 * sharded across devices. Floats are hashed as their little-endian bytes
 * (this code runs on little-endian hosts; codec.c checks it at compile
 * time).
 *
 * Worker descriptor (312 bytes, docs/protocol.md section 2):
 *     0 "GDWS"               4 version (LE32, 2)
 *     8 spec digest (32)    40 layout digest (32)
 *    72 run (LE64)          80 round (LE64)
 *    88 address (64, NUL-padded printable ASCII)
 *   152 rank (LE32)        156 stage (LE32)
 *   160 step (LE64)        168 n (LE64)
 *   176 chunk_elems (LE32) 180 0 (LE32)
 *   184 params root  216 exp_avg root  248 exp_avg_sq root  280 residual root
 *
 * Global descriptor (128 bytes):
 *     0 "GDGS"               4 version (LE32, 2)
 *     8 layout digest (32)  40 rounds aggregated (LE64)
 *    48 n (LE64)            56 chunk_elems (LE32)  60 0 (LE32)
 *    64 params root         96 momentum root
 * G's descriptor names no run: the run's spec carries G_0's hash, and the
 * chain assigns the run id only when the spec is accepted. */
#ifndef GD_TRAINER_STATE_H
#define GD_TRAINER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/pool.h"
#include "common/status.h"
#include "proofs/mmr.h"
#include "proofs/state_desc.h"

/* --- worker states ------------------------------------------------------------- */

typedef struct gd_worker_state {
    uint32_t rank; /* its data stream: assigned by the chain at join */
    char address[GD_STATE_ADDRESS_MAX + 1];
    size_t n;
    float *params, *exp_avg, *exp_avg_sq;
    float *residual; /* NULL in a state parsed without it (its root then stands in) */
    uint64_t step; /* inner steps taken over the whole run */
    bool borrowed; /* the arrays point into bytes it does not own (gd_worker_state_view) */
} gd_worker_state;

/* Zeroed arrays of n values (the run's initial optimizer state); address
 * defaults to "worker-RANK" (5 digits). */
gd_status gd_worker_state_init(gd_worker_state *w, uint32_t rank, size_t n) GD_MUST_CHECK;
gd_status gd_worker_state_copy(gd_worker_state *dst, const gd_worker_state *src) GD_MUST_CHECK;
void gd_worker_state_free(gd_worker_state *w);
/* Copies a window of the four arrays into w's [lo, lo + count) (a state
 * kept whole in memory, filled a window at a time); GD_ERR_INVALID past
 * its n values or without a residual. */
gd_status gd_worker_state_put_window(gd_worker_state *w, const float *params,
                                     const float *exp_avg, const float *exp_avg_sq,
                                     const float *residual, size_t lo,
                                     size_t count) GD_MUST_CHECK;


/* The descriptor of w at (round, stage): hashes all four arrays. */
gd_status gd_worker_state_describe(gd_pool *pool, const gd_state_tag *tag, gd_worker_desc *out,
                                   uint64_t round, gd_state_stage stage,
                                   const gd_worker_state *w) GD_MUST_CHECK;
/* The same with the residual's root given (w->residual may then be NULL):
 * training never changes the residual, so a re-execution carries its root
 * instead of downloading and rehashing it. */
gd_status gd_worker_state_describe_with(gd_pool *pool, const gd_state_tag *tag, gd_worker_desc *out,
                                        uint64_t round, gd_state_stage stage,
                                        const gd_worker_state *w,
                                        const uint8_t residual_root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;
/* describe + hash. */
gd_status gd_worker_state_hash(gd_pool *pool, const gd_state_tag *tag, uint8_t out[GD_MMR_HASH_LEN],
                               uint64_t round, gd_state_stage stage,
                               const gd_worker_state *w) GD_MUST_CHECK;

/* The file form of a worker state (a segment-start checkpoint a worker
 * serves): the descriptor, then params, exp_avg, exp_avg_sq and residual as
 * n little-endian floats each (312 + 16 n bytes). Its first 312 + 12 n
 * bytes (all but the residual) are what a segment re-execution needs. */
gd_status gd_worker_state_serialize(gd_pool *pool, const gd_state_tag *tag, gd_buf *out,
                                    uint64_t round, gd_state_stage stage,
                                    const gd_worker_state *w) GD_MUST_CHECK;
/* The same file as parts pointing into w, for a writer that streams it
 * without a second copy of the state: header receives desc's encoding
 * (parts[0]), parts[1..4] are w's four arrays. desc must be w's (the
 * descriptor the round recorded for it); w's residual is required. */
#define GD_WORKER_STATE_FILE_PARTS 5
gd_status gd_worker_state_file_parts(gd_bytes_part parts[GD_WORKER_STATE_FILE_PARTS],
                                     uint8_t header[GD_WORKER_DESC_BYTES],
                                     const gd_worker_desc *desc,
                                     const gd_worker_state *w) GD_MUST_CHECK;
/* Parses a peer's state file. Before anything is allocated or copied it
 * checks the descriptor strictly, that its run, spec digest, layout digest
 * and chunk size are `expect`'s and its n is expect_n, and that the length
 * is exactly 312 + 16 n, or 312 + 12 n without the residual (w->residual is
 * then NULL); then it rehashes the arrays and requires the descriptor's
 * roots. GD_ERR_INVALID / GD_ERR_PARSE naming what is wrong. *w is
 * initialised on success (free with gd_worker_state_free). */
gd_status gd_worker_state_parse(gd_pool *pool, gd_worker_state *w, gd_worker_desc *desc,
                                const uint8_t *bytes, size_t len, const gd_state_tag *expect,
                                size_t expect_n) GD_MUST_CHECK;
/* gd_worker_state_parse's checks without the copy: w's arrays point into
 * bytes, which must outlive w and stay unchanged (w->borrowed; free only
 * forgets them). A validator checks three fetched states of a round this
 * way: copying them doubled the memory a check holds, and fresh pages for
 * the copies cost more than hashing them. Copies when bytes + 312 is not
 * aligned for floats. */
gd_status gd_worker_state_view(gd_pool *pool, gd_worker_state *w, gd_worker_desc *desc,
                               const uint8_t *bytes, size_t len, const gd_state_tag *expect,
                               size_t expect_n) GD_MUST_CHECK;

/* A worker state read a window at a time wherever it lies: its arrays in
 * memory (gd_worker_state_source_of) or a served state file, in memory or
 * on disk (gd_state_file_view_source). A re-execution loads a segment's
 * start through it a window at a time, hashing as it goes, so a validator
 * never holds a second copy of the state. */
typedef struct gd_worker_state_source {
    const char *address;
    uint32_t rank;
    uint64_t step;
    size_t n;
    /* Values [lo, lo + count) of params, exp_avg and exp_avg_sq into
     * arrays of count values each (NULL: that array is skipped); GD_ERR_IO
     * when the state's file cannot be read (a local failure). */
    gd_status (*read)(const void *ctx, float *params, float *exp_avg, float *exp_avg_sq, size_t lo,
                      size_t count);
    const void *ctx;
} gd_worker_state_source;

/* w's arrays (w must outlive the source); w NULL: a source of no values. */
gd_worker_state_source gd_worker_state_source_of(const gd_worker_state *w);

/* One array read a window at a time wherever it lies: values [lo, lo +
 * count) into out (the caller keeps lo + count within the array). The
 * worker's error-feedback residual comes this way, from memory or from the
 * state file of its previous round, so a round never holds it whole. */
typedef struct gd_values_reader {
    gd_status (*read)(const void *ctx, float *out, size_t lo, size_t count);
    const void *ctx;
} gd_values_reader;

/* values in memory (which must outlive the reader); NULL: zeros. */
gd_values_reader gd_values_reader_of(const float *values);

/* A peer's state file (312 + 16 n bytes, or 312 + 12 n without the
 * residual) read where it lies: opening checks its descriptor and length
 * as gd_worker_state_parse does, but not its arrays, which are read only
 * when asked for: whoever reads them hashes what it reads (the
 * re-execution proves the start state against the transcript), so a
 * served state is read once. */
typedef struct gd_state_file_view {
    gd_worker_desc desc;  /* as served: its roots are the file's claim */
    const uint8_t *bytes; /* the file in memory, or NULL: */
    int fd;               /* its file (not owned) */
    int arrays;           /* 4 with the residual, 3 without */
} gd_state_file_view;

gd_status gd_state_file_view_open(gd_state_file_view *v, const uint8_t *bytes, size_t len,
                                  const gd_state_tag *expect, size_t expect_n) GD_MUST_CHECK;
/* The same for the file open at fd, whose length must be len. */
gd_status gd_state_file_view_open_file(gd_state_file_view *v, int fd, uint64_t len,
                                       const gd_state_tag *expect, size_t expect_n) GD_MUST_CHECK;
/* Its arrays as a source (v must outlive it). */
gd_worker_state_source gd_state_file_view_source(const gd_state_file_view *v);
/* Its residual as a reader (v must outlive it; reads fail with
 * GD_ERR_INVALID for a file without one). */
gd_values_reader gd_state_file_view_residual(const gd_state_file_view *v);

/* --- the global state -------------------------------------------------------------- */

/* Where G's arrays that are not in memory lie (trainer/global_backing.c). */
typedef struct gd_global_backing gd_global_backing;

typedef struct gd_global_state {
    size_t n;
    /* In memory, or NULL: in the backing file when there is one, else
     * none (a round's start has no momentum). */
    float *params, *momentum;
    uint64_t round;            /* rounds aggregated so far */
    gd_global_backing *file;   /* owned, or NULL: everything in memory */
} gd_global_state;

gd_status gd_global_state_init(gd_global_state *g, size_t n) GD_MUST_CHECK;
gd_status gd_global_state_copy(gd_global_state *dst, const gd_global_state *src) GD_MUST_CHECK;
void gd_global_state_free(gd_global_state *g);


/* G of n values opened on the file fd (taken: closed by free, and on a
 * failure here), whose arrays are little-endian floats at params_at and
 * momentum_at. keep_params and keep_momentum load those arrays into
 * memory; the others stay in the file. The whole file is read once, a
 * window at a time: its arrays' roots must be params_root and
 * momentum_root (else GD_ERR_INVALID), and every chunk's leaf is kept so
 * that a chunk read later is checked alone. An array that stays in the
 * file and whose leaves are known (leaves[0] params, leaves[1] momentum,
 * each NULL or every chunk's leaf, as the writer hashed them) is not read
 * at all: its leaves must make its root, and a chunk read later is checked
 * against them all the same. path names the file in errors. g->round is
 * the caller's to set. */
gd_status gd_global_state_open_file(gd_global_state *g, gd_pool *pool, int fd, const char *path,
                                    size_t n, uint32_t chunk_elems, uint64_t params_at,
                                    uint64_t momentum_at, const uint8_t params_root[32],
                                    const uint8_t momentum_root[32], bool keep_params,
                                    bool keep_momentum,
                                    const uint8_t *const leaves[2]) GD_MUST_CHECK;
/* A round's start of n values (params only: a start has no momentum)
 * kept in a file rather than in memory: made a window at a time by `from`
 * into a file in dir that is unlinked as soon as it is made (it goes when
 * g is freed, or the process ends), each chunk's leaf recorded as it is
 * written, so a read checks it as it checks a G opened from its file. */
gd_status gd_global_state_make_file(gd_global_state *g, gd_pool *pool, const char *dir,
                                    size_t n, uint32_t chunk_elems,
                                    const gd_values_reader *from) GD_MUST_CHECK;
/* G's params and momentum [lo, lo + count) into the arrays (either may be
 * NULL: not wanted), from memory or from the file. A chunk read from the
 * file whose leaf is not the one recorded at open is GD_ERR_IO: the disk
 * changed it, and no G with other bits is ever made from it. */
gd_status gd_global_state_read(const gd_global_state *g, float *params, float *momentum,
                               size_t lo, size_t count) GD_MUST_CHECK;

/* G's params as a reader, from memory or its file (g must outlive it). */
gd_values_reader gd_global_params_reader(const gd_global_state *g);

/* The root of G's params (else momentum) when they lie in its file, as
 * checked when it was opened; false when they are in memory. */
bool gd_global_backing_root(const gd_global_state *g, bool momentum,
                            uint8_t root[GD_MMR_HASH_LEN]);
void gd_global_backing_free(gd_global_backing *b);

gd_status gd_global_state_describe(gd_pool *pool, gd_global_desc *out,
                                   const uint8_t layout_digest[32], uint32_t chunk_elems,
                                   const gd_global_state *g) GD_MUST_CHECK;
/* describe + hash: what attesters post and the run's spec names for G_0. */
gd_status gd_global_state_hash(gd_pool *pool, uint8_t out[GD_MMR_HASH_LEN],
                               const uint8_t layout_digest[32], uint32_t chunk_elems,
                               const gd_global_state *g) GD_MUST_CHECK;

/* --- arrays and their chunks ----------------------------------------------------------- */

/* The sub-root of n values in chunks of chunk_elems. */
gd_status gd_values_root(gd_pool *pool, const float *values, size_t n, uint32_t chunk_elems,
                         uint8_t root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;
/* The sub-root of n zeros: the moments' and residual's at a worker's first
 * round (O(n) hashing; a verifier computes it once per run). */
gd_status gd_zero_values_root(gd_pool *pool, size_t n, uint32_t chunk_elems,
                              uint8_t root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;
/* Chunk `chunk`'s proof within the n values. */
gd_status gd_values_prove(gd_pool *pool, const float *values, size_t n, uint32_t chunk_elems,
                          uint32_t chunk, gd_mmr_proof *proof) GD_MUST_CHECK;
/* The values of chunk `chunk` (count values) of an array of n under root. */
bool gd_values_verify_chunk(const uint8_t root[GD_MMR_HASH_LEN], size_t n, uint32_t chunk_elems,
                            uint32_t chunk, const float *values, size_t count,
                            const gd_mmr_proof *proof);
/* gd_values_root of an array that arrives in order, any number of values
 * at a time (G' as the windowed aggregate writes it, a state read from its
 * trainer or its file a window at a time): each chunk's leaf hashed as its
 * values come, whole chunks in parallel on the pool (may be NULL), the
 * root from the leaves' running peaks. */
typedef struct gd_values_stream {
    gd_pool *pool;
    uint64_t n, fed;
    uint32_t chunk_elems;
    uint32_t chunk;       /* the chunk being hashed */
    size_t in_chunk;      /* its values fed so far */
    gd_sha256_ctx *leaf;  /* its open leaf hash, or NULL */
    gd_mmr_peaks peaks;
    uint8_t *leaves;      /* every chunk's leaf, when kept; owned */
} gd_values_stream;

gd_status gd_values_stream_begin(gd_values_stream *s, gd_pool *pool, uint64_t n,
                                 uint32_t chunk_elems) GD_MUST_CHECK;
gd_status gd_values_stream_add(gd_values_stream *s, const float *values,
                               size_t count) GD_MUST_CHECK;
/* Values per window for an array moved a window at a time: whole chunks,
 * about 2^20 values (at least one chunk, unless chunks are larger than
 * 2^22 values: then 2^20 and the stream hashes across windows). */
size_t gd_values_window(uint32_t chunk_elems);
/* The same for an array of n values: at most n, at least 1. */
size_t gd_values_window_of(uint32_t chunk_elems, size_t n);
/* The same in whole chunks always (for what reads, writes or encodes a
 * chunk at a time): one chunk a window when chunks are larger. */
size_t gd_values_window_whole(uint32_t chunk_elems, size_t n);
/* The root once all n values were fed; GD_ERR_INVALID before. */
gd_status gd_values_stream_root(const gd_values_stream *s,
                                uint8_t root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;
/* Before the first value: every chunk's leaf is kept as it is hashed (32
 * bytes a chunk), so what the array was written to can be opened again
 * without reading it whole (gd_global_state_open_file). */
gd_status gd_values_stream_keep_leaves(gd_values_stream *s) GD_MUST_CHECK;
/* Once all n values were fed: the kept leaves, chunk after chunk (the
 * caller's to free); NULL before, or if none were kept. */
uint8_t *gd_values_stream_take_leaves(gd_values_stream *s);
void gd_values_stream_end(gd_values_stream *s);

/* The [*lo, *lo + *count) range of chunk `chunk` (gd_values_chunks, in
 * proofs/state_desc.h, counts them); false if the chunk is out of range. */
/* Whether chunk `chunk`'s count values hash to leaf (its MMR leaf, as
 * recorded when the chunk was written or first read): one home for the
 * check of a chunk read back from a file. */
bool gd_values_chunk_has_leaf(const float *values, size_t count, uint32_t chunk,
                              const uint8_t leaf[GD_MMR_HASH_LEN]);
bool gd_values_chunk_range(size_t n, uint32_t chunk_elems, uint32_t chunk, size_t *lo,
                           size_t *count);

#endif
