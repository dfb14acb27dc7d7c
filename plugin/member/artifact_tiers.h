/* What a round leaves under state_dir, by tier (docs/node.md, "Retention"):
 *
 *   temporary  segment-start states (every state file of a round but its
 *              post-encoding state) and files a killed write left: deleted
 *              as soon as their round is over (the next round opens only
 *              then, and nothing reads them after it);
 *   hot        the last `hot_rounds` rounds' G, payloads, transcripts,
 *              commitments and post states, on state_dir's disk (round r's
 *              checks read r - 1's, and the next round's training reads
 *              the post state);
 *   archive    every `archive_every`-th round's G (global.gdgs and
 *              checkpoint.safetensors) moved, when its round leaves the hot
 *              tier, to archive_dir/run-N/round-R/: a directory that may be
 *              on a slower, cheaper disk. */
#ifndef GD_PLUGIN_MEMBER_ARTIFACT_TIERS_H
#define GD_PLUGIN_MEMBER_ARTIFACT_TIERS_H

#include <stdint.h>

#include "common/status.h"
#include "plugin/member/artifact_store.h"

#define GD_RETENTION_HOT_MIN 2
#define GD_RETENTION_HOT_MAX 1000

typedef struct gd_retention {
    uint32_t hot_rounds;     /* rounds kept whole but their temporary files (>= 2) */
    uint32_t archive_every;  /* 0: no archive */
    const char *archive_dir; /* NULL: no archive */
} gd_retention;

/* Round `round` is over: its temporary files go. */
gd_status gd_artifact_settle(const gd_artifact_store *s, uint64_t run,
                             uint64_t round) GD_MUST_CHECK;

/* The rounds below `below` leave the hot tier: each archived first when
 * retention says so, then removed. */
gd_status gd_artifact_retire(const gd_artifact_store *s, uint64_t run, uint64_t below,
                             const gd_retention *retention) GD_MUST_CHECK;

/* G_R's files, those present, moved into archive_dir/run-N/round-R/
 * (rename, or a copy streamed and fsynced across file systems). */
gd_status gd_artifact_archive(const gd_artifact_store *s, uint64_t run, uint64_t round,
                              const char *archive_dir) GD_MUST_CHECK;

typedef struct gd_tier_bytes {
    uint64_t temporary, hot, archive;
} gd_tier_bytes;

/* The bytes of run `run` in each tier (archive: 0 without archive_dir). */
gd_status gd_artifact_tier_bytes(const gd_artifact_store *s, gd_tier_bytes *out, uint64_t run,
                                 const char *archive_dir) GD_MUST_CHECK;

#endif
