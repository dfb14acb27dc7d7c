/* The pseudo-gradient payload: what a worker commits to and serves.
 *
 * Canonical form (what is hashed): a fixed 176-byte little-endian header,
 * then the codec's canonical bytes of each chunk of chunk_elems values.
 * The commitment is the MMR (proofs/mmr.h) whose leaf 0 is the header and
 * leaf i + 1 is chunk i's canonical (uncompressed) bytes; its root and
 * leaf count go on chain.
 *
 * Header (offsets in bytes):
 *     0  magic "GDPL"           4  version (LE32, 2)
 *     8  run (LE64)            16  round (LE64)
 *    24  participant (64 bytes: the worker's address, ASCII, NUL-padded)
 *    88  param_count (LE64)    96  layout digest (32 bytes, trainer/layout.h)
 *   128  spec digest (32 bytes: the run's RunSpec digest)
 *   160  codec kind (LE32)    164  codec parameter (LE32: topk ppm, else 0)
 *   168  chunk_elems (LE32)   172  chunk_count (LE32)
 *
 * File / wire form (what is stored and sent): the header, a chunk table of
 * chunk_count entries {LE64 offset, LE32 stored_len, LE32 raw_len, LE32
 * flags (bit 0: zstd), LE32 0}, then the chunks' stored bytes. zstd is
 * transport only: a chunk is stored compressed only when that saves at
 * least 5%, and a reader decompresses and checks raw_len before hashing.
 * The table is not hashed; a reader checks every entry against the file. */
#ifndef GD_TRAINER_PAYLOAD_H
#define GD_TRAINER_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/file.h"
#include "common/pool.h"
#include "common/status.h"
#include "proofs/mmr.h"
#include "trainer/codec.h"

#define GD_PAYLOAD_VERSION 2
#define GD_PAYLOAD_HEADER_BYTES 176
#define GD_PAYLOAD_TABLE_ENTRY_BYTES 24
#define GD_PAYLOAD_PARTICIPANT_MAX 64
/* 1 Mi values per chunk: 1 MiB of int8, a few hundred chunks for a 100M
 * model, each independently fetched, proved and decoded. */
#define GD_PAYLOAD_CHUNK_ELEMS ((uint32_t)1 << 20)

typedef struct gd_payload_header {
    uint64_t run;
    uint64_t round;
    char participant[GD_PAYLOAD_PARTICIPANT_MAX + 1];
    uint64_t param_count;
    uint8_t layout_digest[32];
    uint8_t spec_digest[32];
    gd_codec codec;
    uint32_t chunk_elems;
    uint32_t chunk_count; /* ceil(param_count / chunk_elems) */
} gd_payload_header;

void gd_payload_header_encode(const gd_payload_header *h,
                              uint8_t out[GD_PAYLOAD_HEADER_BYTES]);
/* Strict: magic, version, known codec, chunk_count consistent, participant
 * printable ASCII then NUL padding only, param_count >= 1. */
gd_status gd_payload_header_decode(gd_payload_header *h, const uint8_t *in,
                                   size_t len) GD_MUST_CHECK;
/* What a receiver checks before decoding a peer's payload: run, round,
 * participant, param count, layout and spec digests, codec and chunk size all equal
 * what it expects (chunk_count follows). A decoded payload writes
 * param_count floats, so this also bounds the receiver's buffer.
 * GD_ERR_INVALID naming the first field that differs. */
gd_status gd_payload_header_matches(const gd_payload_header *got,
                                    const gd_payload_header *want) GD_MUST_CHECK;

typedef struct gd_payload_chunk {
    uint8_t *raw;        /* canonical bytes (hashed) */
    size_t raw_len;
    uint8_t *stored;     /* what the file holds: raw itself or its zstd frame */
    size_t stored_len;
    bool zstd;
} gd_payload_chunk;

typedef struct gd_payload {
    gd_payload_header header;
    gd_payload_chunk *chunks;
    gd_mmr mmr; /* header leaf + chunk leaves */
    /* Encoded into a file (gd_payload_encoder_to_file): each chunk's sizes
     * and the MMR are kept, its bytes are in the file only. Root, proofs
     * and wire size work; what needs the bytes refuses (GD_ERR_INVALID). */
    bool in_file;
} gd_payload;

/* Encodes param_count values. With residual (error feedback, may be NULL)
 * it encodes values + residual and leaves in residual what the coding
 * lost: residual = (values + residual) - decoded. Chunks run in parallel
 * on the pool; the result does not depend on the thread count. h's
 * chunk_count is computed. */
gd_status gd_payload_encode(gd_payload *out, const gd_payload_header *h, const float *values,
                            float *residual, gd_pool *pool) GD_MUST_CHECK;

/* The same encoding given the values a window of whole chunks at a time,
 * in order (the pseudo-gradient made a window at a time from the trainer,
 * never whole): begin with the header, add windows [lo, lo + count) whose
 * count is a multiple of chunk_elems but for the last, end once every
 * value is added (the MMR is built then). Chunks of a window run in
 * parallel on the pool; the bits are gd_payload_encode's. A failed add
 * leaves the encoder to abort (and out to gd_payload_free). */
typedef struct gd_payload_encoder {
    gd_payload *out;
    uint8_t header_bytes[GD_PAYLOAD_HEADER_BYTES];
    uint8_t (*leaves)[GD_MMR_HASH_LEN];
    uint64_t next;        /* the next value to add */
    gd_file_atomic *file; /* where the chunks go as they are made, or NULL */
} gd_payload_encoder;

gd_status gd_payload_encoder_begin(gd_payload_encoder *e, gd_payload *out,
                                   const gd_payload_header *h) GD_MUST_CHECK;
/* Right after begin: the file form goes to f (begun by the caller, empty)
 * as the encoding goes, so the payload is never whole in memory (a worker's
 * own, 1 byte a parameter with int8). Each window's chunks are appended in
 * order once encoded, after a place for the header and the chunk table,
 * and their bytes are let go; end writes the header and the table at the
 * front. The bytes are gd_payload_write's. The caller commits f (or
 * aborts it after a failure); out ends with in_file set. */
gd_status gd_payload_encoder_to_file(gd_payload_encoder *e, gd_file_atomic *f) GD_MUST_CHECK;
gd_status gd_payload_encoder_add(gd_payload_encoder *e, const float *values, float *residual,
                                 size_t lo, size_t count, gd_pool *pool) GD_MUST_CHECK;
gd_status gd_payload_encoder_end(gd_payload_encoder *e) GD_MUST_CHECK;
void gd_payload_encoder_abort(gd_payload_encoder *e);

/* One chunk's canonical bytes from n values, exactly as gd_payload_encode
 * codes each chunk (the rule a verifier replays on a single chunk): with
 * residual (n values, may be NULL) it codes values + residual and leaves
 * the coding error in residual. out has cap >= gd_codec_chunk_bound. */
gd_status gd_payload_encode_values(const gd_codec *codec, uint8_t *out, size_t cap,
                                   const float *values, float *residual, size_t n,
                                   size_t *written) GD_MUST_CHECK;

/* The commitment: MMR root and leaf count (chunk_count + 1). */
gd_status gd_payload_root(const gd_payload *p, uint8_t root[GD_MMR_HASH_LEN],
                          uint32_t *leaf_count) GD_MUST_CHECK;

/* The file form and its size (the bytes a transfer moves). */
size_t gd_payload_wire_bytes(const gd_payload *p);
gd_status gd_payload_serialize(const gd_payload *p, gd_buf *out) GD_MUST_CHECK;
/* The file form as parts pointing into p's chunks (no serialized copy):
 * parts[0] the header and chunk table (prefix, owned), then each chunk's
 * stored bytes; p must outlive them. Free with gd_payload_parts_free. */
typedef struct gd_payload_parts {
    gd_bytes_part *parts;
    size_t count;
    uint8_t *prefix;
} gd_payload_parts;

gd_status gd_payload_file_parts(const gd_payload *p, gd_payload_parts *out) GD_MUST_CHECK;
void gd_payload_parts_free(gd_payload_parts *parts);
/* Writes the file form atomically and durably (temporary file, fsync,
 * rename): a committed payload must survive a crash. */
gd_status gd_payload_write(const gd_payload *p, const char *path) GD_MUST_CHECK;

/* Parses a file form: validates the header, the table (every entry inside
 * the file, chunk data not overlapping the header or table), decompresses,
 * checks raw sizes and rebuilds the MMR. Does not decode values. */
gd_status gd_payload_parse(gd_payload *out, const uint8_t *bytes, size_t len,
                           gd_pool *pool) GD_MUST_CHECK;
gd_status gd_payload_read(gd_payload *out, const char *path, gd_pool *pool) GD_MUST_CHECK;

/* A payload's file form read where it lies (fetched bytes, a stored file
 * read once): the header and the table checked as gd_payload_parse checks
 * them, nothing copied. A chunk is decompressed, checked and decoded only
 * when asked for, so a reader of many payloads holds their bytes and one
 * chunk. bytes must outlive the view unchanged; one thread per view. */
typedef struct gd_payload_view_chunk {
    uint64_t offset;
    uint32_t stored_len, raw_len;
    bool zstd;
} gd_payload_view_chunk;

typedef struct gd_payload_view {
    gd_payload_header header;
    const uint8_t *bytes; /* the file, or (read from fd) its header and table */
    size_t len;
    int fd;               /* the file the chunks are read from, or -1 */
    gd_payload_view_chunk *chunks;
    uint8_t *raw; /* a zstd chunk's canonical bytes, reused */
    size_t raw_cap;
    uint8_t *src; /* a chunk's stored bytes read from fd, reused */
    size_t src_cap;
    uint8_t *prefix; /* the header and table read from fd */
    bool owns_fd;    /* opened by gd_payload_view_open_path: closed with the view */
    struct ZSTD_DCtx_s *dctx;
    /* Read from fd: each chunk's leaf (chunk i's at [i]) once the view's
     * commitment was computed, or NULL; or those of the chunks read so far,
     * in order, while learning (gd_payload_view_learn). */
    uint8_t (*leaves)[GD_MMR_HASH_LEN];
    uint32_t leaves_known; /* leaves holds chunks [0, leaves_known) */
} gd_payload_view;

gd_status gd_payload_view_open(gd_payload_view *out, const uint8_t *bytes,
                               size_t len) GD_MUST_CHECK;
/* The same over a file of len bytes: the header and table are read and
 * checked, each chunk is read from fd (which must stay open and unchanged
 * while the view is used; closing the view leaves it open) when asked for,
 * so a payload on disk is never whole in memory. */
gd_status gd_payload_view_open_file(gd_payload_view *out, int fd,
                                    uint64_t len) GD_MUST_CHECK;
/* The same for the file at path, which the view opens and closes. */
gd_status gd_payload_view_open_path(gd_payload_view *out, const char *path) GD_MUST_CHECK;
void gd_payload_view_close(gd_payload_view *v);
/* gd_payload_root's commitment, every chunk decompressed and hashed on the
 * pool (a chunk at a time per thread). A view read from a file keeps the
 * chunks' leaves: from then on a chunk read (gd_payload_view_raw, _decode)
 * is hashed again and must match, else GD_ERR_IO ("changed on disk"). The
 * file changed on this host after it was checked: nothing made of those
 * bytes (a verdict, a G') may come out as if the committer had sent them. */
gd_status gd_payload_view_root(gd_payload_view *v, uint8_t root[GD_MMR_HASH_LEN],
                               uint32_t *leaf_count, gd_pool *pool) GD_MUST_CHECK;
/* The same, with visit(ctx, chunk, raw, raw_len) given each chunk's
 * canonical bytes as it is hashed, on the pool's threads (each chunk once,
 * in any order): what else a reader wants of every chunk comes out of the
 * one pass. Its first failure ends the root. */
typedef struct gd_payload_visitor {
    gd_status (*chunk)(void *ctx, uint32_t chunk, const uint8_t *raw, size_t raw_len);
    void *ctx;
} gd_payload_visitor;

gd_status gd_payload_view_root_visit(gd_payload_view *v, uint8_t root[GD_MMR_HASH_LEN],
                                     uint32_t *leaf_count, const gd_payload_visitor *visit,
                                     gd_pool *pool) GD_MUST_CHECK;
/* The same commitment as the whole MMR, to prove chunks from (leaf i + 1
 * is chunk i; gd_mmr_free it); a file's leaves are kept as above. */
gd_status gd_payload_view_mmr(gd_payload_view *v, gd_mmr *out, gd_pool *pool) GD_MUST_CHECK;
/* gd_payload_view_mmr with visit (may be NULL) given every chunk's
 * canonical bytes as gd_payload_view_root_visit gives them. */
gd_status gd_payload_view_mmr_visit(gd_payload_view *v, gd_mmr *out,
                                    const gd_payload_visitor *visit,
                                    gd_pool *pool) GD_MUST_CHECK;
/* For a payload the reader checked before, in an earlier pass (a member
 * checks a payload as it arrives): its commitment learned as its chunks
 * are first read, which must be in order, each leaf kept as it is read and
 * later reads held to it, so the reader's one pass both uses and checks the
 * bytes. gd_payload_view_learned_root gives the commitment once every
 * chunk was read (GD_ERR_INVALID before); comparing it with the commitment
 * is the caller's. */
gd_status gd_payload_view_learn(gd_payload_view *v) GD_MUST_CHECK;
gd_status gd_payload_view_learned_root(const gd_payload_view *v, uint8_t root[GD_MMR_HASH_LEN],
                                       uint32_t *leaf_count) GD_MUST_CHECK;
/* Chunk `chunk`'s canonical bytes (what its leaf hashes), valid until the
 * view's next call. */
gd_status gd_payload_view_raw(gd_payload_view *v, uint32_t chunk, const uint8_t **raw,
                              size_t *raw_len) GD_MUST_CHECK;
/* Values in chunk `chunk` (0 past the last). */
size_t gd_payload_view_chunk_values(const gd_payload_view *v, uint32_t chunk);
/* Chunk `chunk` decoded into values (count: its values), validated as
 * gd_payload_decode validates it. */
gd_status gd_payload_view_decode(gd_payload_view *v, uint32_t chunk, float *values,
                                 size_t count) GD_MUST_CHECK;

/* Decodes every chunk into values (param_count floats), validating each. */
gd_status gd_payload_decode(const gd_payload *p, float *values, gd_pool *pool) GD_MUST_CHECK;

/* Chunk i's inclusion proof (leaf i + 1), and its check by someone holding
 * only the root, the leaf count and the chunk's canonical bytes. */
gd_status gd_payload_prove_chunk(const gd_payload *p, gd_mmr_proof *out,
                                 uint32_t chunk) GD_MUST_CHECK;
bool gd_payload_verify_chunk(const uint8_t root[GD_MMR_HASH_LEN], uint32_t chunk,
                             const uint8_t *raw, size_t raw_len, const gd_mmr_proof *proof);

void gd_payload_free(gd_payload *p);

#endif
