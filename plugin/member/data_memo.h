/* A node's memory of its data files' hashes, so a restarted node digests a
 * run's data (trainer/data.h gd_data_digest) without reading every file
 * again: on a data set of terabytes that read is many minutes at each
 * start, and a node restarted in the middle of a round has seconds.
 *
 * A file is known only while its identity is what it was when hashed:
 * device, inode, size, modification time and change time. The kernel sets
 * the change time on every write, truncation, rename or chmod, and a user
 * cannot set it back, so any change to the file makes it unknown. A file
 * changed less than GD_DATA_MEMO_SETTLE_SEC before it was hashed might be
 * changed again within the same timestamp; it is not remembered until a
 * later start finds it settled. The memo only ever saves reading a file:
 * the run's digest is still computed from every file's hash and compared
 * with the spec's.
 *
 * It lives in STATE_DIR/data-hashes, one line per file of the last data
 * set digested, fields separated by one space, the path last:
 *   <SHA-256 of its tokens, 64 hex> <dev> <ino> <size> <mtime s> <mtime ns>
 *   <ctime s> <ctime ns> <path>
 * It is a cache: a file that does not parse is ignored and replaced. */
#ifndef GD_PLUGIN_MEMBER_DATA_MEMO_H
#define GD_PLUGIN_MEMBER_DATA_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "trainer/data.h"

#define GD_DATA_MEMO_FILE "data-hashes"
#define GD_DATA_MEMO_MAX_BYTES ((size_t)64 << 20)
#define GD_DATA_MEMO_PATH_MAX 4096
#define GD_DATA_MEMO_SETTLE_SEC 2

typedef struct gd_data_memo_entry {
    char *path;
    gd_data_file_id id;
    uint8_t hash[32];
} gd_data_memo_entry;

typedef struct gd_data_memo {
    char file[GD_DATA_MEMO_PATH_MAX];
    gd_data_memo_entry *known; /* as loaded, sorted by path */
    size_t n_known;
    gd_data_memo_entry *seen; /* this digest's files: what save writes */
    size_t n_seen, cap_seen;
    int64_t began;            /* wall-clock seconds at load, before any hashing */
    bool lost;                /* a file could not be remembered (no memory) */
} gd_data_memo;

/* Strict parse of a memo file's bytes into entries (each path allocated;
 * free with gd_data_memo_entries_free). GD_ERR_PARSE names the line. */
gd_status gd_data_memo_parse(gd_data_memo_entry **out, const uint8_t *bytes, size_t len,
                             size_t *n) GD_MUST_CHECK;
void gd_data_memo_entries_free(gd_data_memo_entry *entries, size_t n);

/* Loads the memo of state_dir. A missing file is an empty memo; so is one
 * that cannot be read or parsed, with *ignored set to say so (the caller
 * logs gd_error_detail). GD_ERR_NOMEM only. */
gd_status gd_data_memo_load(gd_data_memo *m, const char *state_dir,
                            bool *ignored) GD_MUST_CHECK;

/* The hooks gd_data_digest calls (m must outlive them). */
gd_data_hash_memo gd_data_memo_hooks(gd_data_memo *m);

/* Writes the files this digest looked up or hashed, sorted, each path
 * once, atomically (mode 0600), replacing what was there. */
gd_status gd_data_memo_save(gd_data_memo *m) GD_MUST_CHECK;
void gd_data_memo_free(gd_data_memo *m);

#endif
