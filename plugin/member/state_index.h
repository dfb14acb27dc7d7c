/* The proofs of one stored state file's arrays (a worker's segment-start
 * state, or G for state sync), built once and kept for the requests that
 * follow. A peer synchronising G asks for every chunk in turn; proving each
 * from scratch read and rehashed the whole file per chunk, so serving a
 * state took time quadratic in its size. Built from the file's bytes as
 * they are (the arrays are canonical little-endian floats), checked against
 * the file's own descriptor, and answered with one pread of the chunk from
 * the file kept open as it was indexed (a request costs a stat of the path,
 * which notices a file replaced since). */
#ifndef GD_PLUGIN_MEMBER_STATE_INDEX_H
#define GD_PLUGIN_MEMBER_STATE_INDEX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/bytes.h"
#include "proofs/mmr.h"
#include "trainer/state.h"

#define GD_STATE_INDEX_ARRAYS 4

typedef struct gd_state_index {
    bool loaded;
    char path[512];
    int fd;                      /* open on the file as it was indexed (-1: none) */
    struct stat st;              /* its identity then: a replaced file is indexed again */
    bool global;                 /* G (params, momentum) or a worker state */
    uint8_t header[GD_WORKER_DESC_BYTES]; /* the file's descriptor */
    size_t header_len;
    size_t n;                    /* values per array */
    uint32_t chunk_elems;
    int n_arrays;
    gd_mmr mmr[GD_STATE_INDEX_ARRAYS];
} gd_state_index;

void gd_state_index_init(gd_state_index *x);
void gd_state_index_free(gd_state_index *x);

/* Makes x the index of the state file at path (G when global, else a
 * worker state with all four arrays), of n values in chunks of chunk_elems,
 * unless it already is (the same file, unchanged since). Reads the file
 * once and hashes each array; a file whose size, descriptor or arrays are
 * not what they should be is GD_ERR_IO (this node's own store is damaged),
 * a missing one GD_ERR_NOT_FOUND. */
gd_status gd_state_index_load(gd_state_index *x, const char *path, bool global, size_t n,
                              uint32_t chunk_elems) GD_MUST_CHECK;

/* Chunk i of every array: their bytes, one array after another, into body;
 * into proof, G's descriptor first, then each array's chunk proof (the
 * proofs/mmr.h wire form) after its LE32 length. Both are appended to. */
gd_status gd_state_index_chunk(const gd_state_index *x, uint32_t chunk, gd_buf *body,
                               gd_buf *proof) GD_MUST_CHECK;

/* The indexes of the last few state files asked for. A validator's check
 * asks for a chunk of the target's start state and one of its post state,
 * and several validators check one worker at once: with one index, each
 * such request re-read and rehashed a whole state. Not thread-safe: the
 * caller holds its lock for the get and the chunk read. */
#define GD_STATE_INDEX_CACHE_SLOTS 8

typedef struct gd_state_index_cache {
    gd_state_index slot[GD_STATE_INDEX_CACHE_SLOTS];
    uint64_t last_use[GD_STATE_INDEX_CACHE_SLOTS];
    uint64_t uses;
} gd_state_index_cache;

void gd_state_index_cache_init(gd_state_index_cache *c);
void gd_state_index_cache_free(gd_state_index_cache *c);

/* The index of the state file at path (gd_state_index_load's arguments
 * and errors): the slot holding it, else the least recently used one,
 * loaded. *out stays valid until the next get. */
gd_status gd_state_index_cache_get(gd_state_index_cache *c, gd_state_index **out, const char *path,
                                   bool global, size_t n,
                                   uint32_t chunk_elems) GD_MUST_CHECK;

/* Chunk i of the state file at path, from its cached index: get, then
 * gd_state_index_chunk (their arguments and errors). */
gd_status gd_state_index_cache_chunk(gd_state_index_cache *c, const char *path, bool global,
                                     size_t n, uint32_t chunk_elems, uint32_t chunk,
                                     gd_buf *body, gd_buf *proof) GD_MUST_CHECK;

/* The reader's side of that proof: the next array's chunk proof at *p
 * (*left bytes remain), both advanced past it. GD_ERR_PARSE when short or
 * malformed. */
gd_status gd_state_chunk_proof_next(gd_mmr_proof *out, const uint8_t **p,
                                    size_t *left) GD_MUST_CHECK;

#endif
