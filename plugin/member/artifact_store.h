/* A node's artifacts on disk, under its state_dir: per (run, round) the
 * payload it committed, its transcript and segment-start states, and G; and
 * the node's journal (plugin/member/round_driver.h). Everything is written
 * atomically and durably (temporary file, fsync, rename, fsync of the
 * directory) before the chain is told of it, so what was committed is
 * still there to serve after a crash. Paths are built only from numbers
 * and fixed names, so nothing is ever read or written outside the root.
 *
 *   ROOT/journal.json
 *   ROOT/run-N/round-R/payload.gdpl      the committed payload (trainer/payload.h)
 *   ROOT/run-N/round-R/transcript.bin    the transcript's leaves
 *   ROOT/run-N/round-R/traces.bin        each segment's trace, 32 bytes a segment: the
 *                                        target's side of its checks' digests
 *   ROOT/run-N/round-R/state-L.gdws      transcript leaf L's state (trainer/state.h)
 *   ROOT/run-N/round-R/global.gdgs       G_R
 *   ROOT/run-N/round-R/checkpoint.safetensors  G_R's parameters, Hugging Face names
 *   ROOT/run-N/round-R/peer-L.gdpl       the payload of the L-th peer asked for in round R,
 *                                        fetched straight into it (kept for the round's
 *                                        reports, checks and aggregate; a crash may lose it:
 *                                        it is fetched again)
 *   ROOT/run-N/round-R/check-K-S.gdws    segment S's start state of the worker of data rank
 *                                        K, fetched for a check of round R (removed once
 *                                        the check has read it) */
#ifndef GD_PLUGIN_MEMBER_ARTIFACT_STORE_H
#define GD_PLUGIN_MEMBER_ARTIFACT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/file.h"
#include "common/status.h"
#include "plugin/member/round_driver.h"
#include "proofs/mmr.h"

#define GD_ARTIFACT_PATH_MAX 4096

typedef struct gd_artifact_store {
    char root[GD_ARTIFACT_PATH_MAX];
} gd_artifact_store;

typedef enum gd_artifact_kind {
    GD_ARTIFACT_PAYLOAD,
    GD_ARTIFACT_TRANSCRIPT,
    GD_ARTIFACT_STATE, /* with a leaf index */
    GD_ARTIFACT_GLOBAL,
    GD_ARTIFACT_CHECKPOINT, /* G_R as a model checkpoint (trainer/checkpoint.h) */
    GD_ARTIFACT_COMMIT,     /* the round's MsgCommitRound (protobuf), sent as stored */
    GD_ARTIFACT_TRACES,     /* the segments' traces (gd_diloco_trace_step), in order */
    GD_ARTIFACT_PEER_PAYLOAD, /* the leaf-th peer payload this node fetched in the round */
} gd_artifact_kind;

/* Opens (creating, mode 0700) the store at root: an absolute or relative
 * directory path below GD_ARTIFACT_PATH_MAX - 128 bytes. */
gd_status gd_artifact_store_open(gd_artifact_store *s, const char *root) GD_MUST_CHECK;

/* Takes the store's lock (root/lock, flock) for as long as *fd stays open,
 * writing this process's pid into it: one member per state_dir, since two
 * daemons on one directory would both do every duty with one key. A lock
 * another process holds is GD_ERR_EXISTS naming its pid; a directory that
 * cannot be written (a read-only mount) fails here, before the member
 * sends anything. Release with gd_artifact_store_unlock. */
gd_status gd_artifact_store_lock(const gd_artifact_store *s, int *fd) GD_MUST_CHECK;
void gd_artifact_store_unlock(int fd);

/* The path of an artifact (leaf only for GD_ARTIFACT_STATE). */
gd_status gd_artifact_path(const gd_artifact_store *s, char *out, size_t cap, gd_artifact_kind kind,
                           uint64_t run, uint64_t round, uint32_t leaf) GD_MUST_CHECK;
/* An artifact's path, its run's and round's directories made (for a file
 * something else writes there: a fetch into it). */
gd_status gd_artifact_place(const gd_artifact_store *s, char path[GD_ARTIFACT_PATH_MAX],
                            gd_artifact_kind kind, uint64_t run, uint64_t round,
                            uint32_t leaf) GD_MUST_CHECK;
/* Where a check's fetched segment start goes (check-RANK-SEGMENT.gdws in
 * the round's directory, which is made): one file per (target, segment),
 * so a fetch given up on and asked again never lands in another check's
 * file. */
gd_status gd_artifact_check_state_place(const gd_artifact_store *s,
                                       char path[GD_ARTIFACT_PATH_MAX], uint64_t run,
                                       uint64_t round, uint32_t rank,
                                       uint32_t segment) GD_MUST_CHECK;
/* Writes an artifact, atomically and durably (mode 0600), creating its
 * round's directory. */
gd_status gd_artifact_put(const gd_artifact_store *s, gd_artifact_kind kind, uint64_t run,
                          uint64_t round, uint32_t leaf, const void *data,
                          size_t len) GD_MUST_CHECK;
/* The same for an artifact given as parts written as if concatenated (a
 * state file streamed from the arrays it is made of). */
gd_status gd_artifact_put_parts(const gd_artifact_store *s, gd_artifact_kind kind, uint64_t run,
                                uint64_t round, uint32_t leaf, const gd_bytes_part *parts,
                                size_t n_parts) GD_MUST_CHECK;
/* A round's committed payload (payload.gdpl) written from its chunks, with
 * no serialized copy, atomically and durably. */
struct gd_payload;
gd_status gd_artifact_put_payload(const gd_artifact_store *s, uint64_t run, uint64_t round,
                                  const struct gd_payload *p) GD_MUST_CHECK;
/* The same for an artifact written in pieces (a G a window at a time):
 * f is its temporary file; gd_file_atomic_commit puts it in place. */
gd_status gd_artifact_begin(const gd_artifact_store *s, gd_file_atomic *f, gd_artifact_kind kind,
                            uint64_t run, uint64_t round, uint32_t leaf) GD_MUST_CHECK;
/* Reads an artifact of at most max_len bytes; GD_ERR_NOT_FOUND if absent. */
gd_status gd_artifact_get(const gd_artifact_store *s, gd_buf *out, gd_artifact_kind kind,
                          uint64_t run, uint64_t round, uint32_t leaf,
                          size_t max_len) GD_MUST_CHECK;

/* Chunk i of a round's committed payload: its canonical bytes and its MMR
 * inclusion proof in wire form (proofs/mmr.h), what a peer checks against
 * the committed root. GD_ERR_NOT_FOUND if there is no payload or no such
 * chunk. */
gd_status gd_artifact_payload_chunk(const gd_artifact_store *s, uint64_t run, uint64_t round,
                                    uint32_t chunk, gd_buf *raw,
                                    gd_buf *proof) GD_MUST_CHECK;

/* The directory of a round's artifacts. */
gd_status gd_artifact_round_dir(const gd_artifact_store *s, char *out, size_t cap, uint64_t run,
                                uint64_t round) GD_MUST_CHECK;
/* The same, made (with its run's directory) for files of the node's own
 * there: a check's fetched start, an overlapped start's unnamed file. */
gd_status gd_artifact_round_place(const gd_artifact_store *s, char dir[GD_ARTIFACT_PATH_MAX],
                                  uint64_t run, uint64_t round) GD_MUST_CHECK;
/* The rounds of run in the store below `below`, in directory order
 * (*rounds malloc'd, NULL when none). */
gd_status gd_artifact_rounds(const gd_artifact_store *s, uint64_t **rounds, size_t *count,
                             uint64_t run, uint64_t below) GD_MUST_CHECK;

/* Removes every round of run below `below` (settled: nothing reads them). */
gd_status gd_artifact_prune(const gd_artifact_store *s, uint64_t run,
                            uint64_t below) GD_MUST_CHECK;

/* The journal: written atomically and durably; a store without one loads
 * an empty journal. A journal that does not parse is an error naming the
 * file (the node stops rather than guess what it did). */
gd_status gd_journal_save(const gd_artifact_store *s, const gd_member_journal *j) GD_MUST_CHECK;
gd_status gd_journal_load(const gd_artifact_store *s, gd_member_journal *j) GD_MUST_CHECK;
#define GD_JOURNAL_MAX 4096 /* bytes of a journal file */

/* The journal from its file's bytes (named path in errors): what
 * gd_journal_load reads, refusing unknown keys, a missing one, a version
 * other than the two it reads, and more than GD_JOURNAL_MAX bytes. */
gd_status gd_journal_parse(gd_member_journal *j, const uint8_t *data, size_t len,
                           const char *path) GD_MUST_CHECK;

/* The operator's wish to leave the run (`node leave`): a file of its own,
 * `leave`, beside the journal, which only the node writes, so a running
 * node never writes over it; the node takes it into its journal at its
 * next step. */
gd_status gd_leave_request_save(const gd_artifact_store *s) GD_MUST_CHECK;
bool gd_leave_requested(const gd_artifact_store *s);

#endif
