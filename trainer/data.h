/* Training data: where token windows come from, and which windows a batch
 * holds.
 *
 * A data source is opened from a spec:
 *   synthetic:markov:SEED[:ALPHABET[:ORDER]]
 *                  a built-in Markov source of the given order over ALPHABET
 *                  symbols (defaults 16 and 2), its transition table a pure
 *                  function of SEED; its entropy rate and the entropies of
 *                  its best lower-order approximations are computed exactly
 *                  (gd_data_markov_entropies), so "the model learned" has
 *                  objective floors;
 *   synthetic:mixture:SEED:COMPONENTS[:ALPHABET[:ORDER]]
 *                  COMPONENTS such sources (seeds SEED, SEED + 1, ...), for
 *                  non-i.i.d. training: worker w's batches come from
 *                  component w mod COMPONENTS, evaluation window k of the
 *                  concatenated eval order from component k mod COMPONENTS;
 *   text:GLOB      the bytes of the matching files (sorted by path,
 *                  concatenated), one token per byte (vocabulary 256);
 *   PATH or GLOB   llm.c token shards (sorted by path): a header of 256
 *                  little-endian int32 (magic 20240520 and version 1 for
 *                  uint16 tokens, or magic 20240801 and version 7 for uint32
 *                  tokens; header[2] = token count), then the tokens.
 *
 * A window is seq_len + 1 consecutive tokens: inputs are the first seq_len,
 * targets the last seq_len. Batches are pure functions of their arguments,
 * so anyone can recompute any batch:
 *   training: window j of micro-batch `micro` of `step` for `worker` is
 *             drawn with the counter-based RNG keyed by (seed, worker, step,
 *             micro * batch + j): a uniformly random start among all
 *             windows that fit inside one file (token sources), or a fresh
 *             run of the Markov chain from its stationary distribution;
 *   eval:     window j of batch b is eval window k = b * batch + j.
 *             Token sources: the concatenated files hold M = (tokens - 1) /
 *             seq_len windows at a stride of seq_len (window i starts at
 *             token i * seq_len); eval window k is window (k * s) mod M,
 *             s the first integer >= floor(M * 0x9E3779B97F4A7C15 / 2^64)
 *             (M over the golden ratio, in exact integers) coprime to M.
 *             So no window repeats for k < M, any prefix of eval windows
 *             is spread over the whole source (not its first bytes), and
 *             batch b exists while (b + 1) * batch <= M. Markov: a run of
 *             the chain keyed by a fixed evaluation stream (of component k
 *             mod COMPONENTS for a mixture). */
#ifndef GD_TRAINER_DATA_H
#define GD_TRAINER_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pool.h"
#include "common/status.h"

typedef struct gd_data gd_data;

typedef enum gd_data_kind {
    GD_DATA_MARKOV = 0, /* values enter the data digest */
    GD_DATA_TEXT = 1,
    GD_DATA_SHARDS = 2,
} gd_data_kind;

/* Opens a source; a bad spec, a missing file or a corrupt shard header is
 * GD_ERR_INVALID / GD_ERR_NOT_FOUND / GD_ERR_PARSE with a message naming the
 * file and what is wrong. Shards are memory-mapped, text is read. */
gd_status gd_data_open(gd_data **out, const char *spec) GD_MUST_CHECK;

/* The source `spec` names, read from local paths (files or globs, each
 * expanded and sorted as above, in the order given) instead of the
 * location in spec: the same text: or shard source kept elsewhere on
 * another host. No paths: gd_data_open(spec). A synthetic spec has no
 * files and takes no paths (GD_ERR_INVALID). */
gd_status gd_data_open_files(gd_data **out, const char *spec, const char *const *paths,
                             size_t n_paths) GD_MUST_CHECK;

/* What identifies the bytes of a data file as opened: its fstat at open
 * (device, inode, size, modification and change times). */
typedef struct gd_data_file_id {
    uint64_t dev, ino, size;
    int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
} gd_data_file_id;

/* A host's memory of its files' hashes (plugin/member/data_memo.h), so a restart
 * need not read a large data set again. lookup returns true and fills
 * hash when it knows the file with this path and id; record is told each
 * hash computed. Both are called on the caller's thread. */
typedef struct gd_data_hash_memo {
    bool (*lookup)(void *ctx, const char *path, const gd_data_file_id *id, uint8_t hash[32]);
    void (*record)(void *ctx, const char *path, const gd_data_file_id *id,
                   const uint8_t hash[32]);
    void *ctx;
} gd_data_hash_memo;

/* The data digest, which a run spec records so every host trains on the
 * same data: SHA-256 of "gonka-diloco data v1", then little-endian u32
 * kind (0 Markov, 1 text, 2 shards) and
 *   Markov: u32 components, then per component u64 seed, u32 alphabet,
 *           u32 order;
 *   text, shards: u32 token bytes, u64 files, then per file in order u64
 *           tokens and the SHA-256 of its token bytes (a shard's header
 *           excluded).
 * Paths never enter it: hosts keep the files where they like. Files are
 * hashed in parallel on pool (NULL: the caller's thread); a file memo
 * (NULL: none) knows is not read. */
gd_status gd_data_digest(const gd_data *data, gd_pool *pool, const gd_data_hash_memo *memo,
                         uint8_t out[32]) GD_MUST_CHECK;
void gd_data_close(gd_data *data);

gd_data_kind gd_data_kind_of(const gd_data *data);

/* The smallest vocabulary that holds every token this source can yield:
 * ALPHABET (markov), 256 (text), 65536 or 2^32 for uint16/uint32 shards
 * (their tokens are checked against the model's vocabulary per batch). */
uint64_t gd_data_vocab_bound(const gd_data *data);

/* Total tokens (0 for the unbounded Markov source). */
uint64_t gd_data_token_count(const gd_data *data);

/* A human-readable one-line description ("3 shards, 1.2e9 uint16 tokens"). */
const char *gd_data_describe(const gd_data *data);

/* Fills tokens (batch rows of seq_len + 1) with the training windows of
 * (seed, worker, step, micro). Fails with GD_ERR_INVALID if a token is
 * >= vocab (naming file and position) or if no window of seq_len + 1
 * tokens fits in the source. */
gd_status gd_data_train_batch(const gd_data *data, int32_t *tokens, size_t batch,
                              size_t seq_len, uint64_t vocab, uint64_t seed, uint32_t worker,
                              uint64_t step, uint32_t micro) GD_MUST_CHECK;

/* Fills tokens with evaluation batch `index`. *available is false (and
 * tokens untouched) when the source has no such batch: a token source
 * holds fewer than (index + 1) * batch windows (M above). */
gd_status gd_data_eval_batch(const gd_data *data, int32_t *tokens, size_t batch,
                             size_t seq_len, uint64_t vocab, uint64_t index,
                             bool *available) GD_MUST_CHECK;

/* Checks, before a run relies on it, that the source can be evaluated
 * with a model of vocabulary vocab: evaluation batch 0 exists and its
 * tokens fit (the checks gd_data_eval_batch makes; later batches are
 * checked as they are read, as training batches are). GD_ERR_INVALID with
 * the reason otherwise. */
gd_status gd_data_eval_check(const gd_data *data, size_t batch, size_t seq_len,
                             uint64_t vocab) GD_MUST_CHECK;

/* For a Markov source: entropies[j] = H(X_t | X_{t-j}..X_{t-1}) in nats for
 * j = 0..order (entropies[order] is the entropy rate; entropies[order - 1]
 * the best order-(order-1) approximation); for a mixture, the mean over its
 * components. Returns the number written (order + 1), 0 for other sources.
 * cap >= order + 1. */
size_t gd_data_markov_entropies(const gd_data *data, double *entropies, size_t cap);

/* --- llm.c token shard headers (exposed for tests and the fuzz target) --- */

#define GD_SHARD_HEADER_BYTES 1024
#define GD_SHARD_MAGIC_U16 20240520
#define GD_SHARD_VERSION_U16 1
#define GD_SHARD_MAGIC_U32 20240801
#define GD_SHARD_VERSION_U32 7

typedef struct gd_shard_header {
    uint32_t token_bytes; /* 2 or 4 */
    uint64_t token_count;
} gd_shard_header;

/* Validates a shard's header against the file's size: magic and version
 * known, token count > 0 and exactly matching the bytes after the header.
 * bytes holds the first min(file_size, GD_SHARD_HEADER_BYTES) bytes. The
 * message says what is wrong and that the file should be regenerated. */
gd_status gd_shard_header_parse(gd_shard_header *out, const uint8_t *bytes, size_t file_size,
                                const char *name) GD_MUST_CHECK;

/* Writes a shard (used by tests and tools): header then tokens. */
gd_status gd_shard_write(const char *path, const uint32_t *tokens, size_t count,
                         uint32_t token_bytes) GD_MUST_CHECK;

#endif
