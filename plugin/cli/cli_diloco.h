/* What the DiLoCo module's tx commands share (cli_diloco.c,
 * cli_diloco_avail.c, cli_diloco_seal.c): the flags a command parsed, and
 * the one path from them through the common tx flags, the key and the
 * message builder to 'tx send's submission (cli_submit.h). */
#ifndef GD_PLUGIN_CLI_CLI_DILOCO_H
#define GD_PLUGIN_CLI_CLI_DILOCO_H

#include <stdbool.h>
#include <stdint.h>

#include "chain/wire/diloco_msg.h"
#include "plugin/cli/cli_submit.h"
#include "proofs/mmr.h"
#include "trainer/payload.h"

/* A proof in wire form: 12 bytes and at most GD_MMR_PROOF_MAX hashes. */
#define GD_PROOF_WIRE_MAX (12 + GD_MMR_PROOF_MAX * GD_MMR_HASH_LEN)

/* Everything a command parsed from its own flags. */
typedef struct gd_dtx {
    uint64_t run, round, check, epoch;
    bool has_round; /* --run and --round given (gd_dtx_run_round) */
    char target[GD_ADDRESS_STR_MAX];
    gd_diloco_verdict verdict;
    uint8_t digest[GD_DILOCO_HASH_LEN]; /* a verdict's digest, or a state hash */
    bool seal_only;
    bool have_salt; /* --salt (or --secret) given; else a sealing draws one */
    uint8_t salt[GD_DILOCO_SALT_LEN];
    Gonka__Diloco__V1__RunSpec *spec;
    gd_coin coin; /* pool or collateral */
    const char *artifact_url, *hw_class;
    gd_diloco_commit commit;
    const char *payload; /* --payload FILE */
    gd_payload_header header; /* commit-round: that file's header */
    /* report-availability: --randomness and --chunks (with --payload), or
     * the chunks by hand (--leaf-hash and --proof pairs). */
    bool have_randomness;
    uint8_t randomness[GD_DILOCO_HASH_LEN];
    uint64_t avail_chunks;
    size_t n_chunks;
    uint8_t leaf_hash[GD_DILOCO_AVAIL_CHUNKS_MAX][GD_DILOCO_HASH_LEN];
    uint8_t proof[GD_DILOCO_AVAIL_CHUNKS_MAX][GD_PROOF_WIRE_MAX];
    size_t proof_len[GD_DILOCO_AVAIL_CHUNKS_MAX];
} gd_dtx;

/* Builds the message for the signer into msg (and may set tx->extra):
 * GD_CLI_CONTINUE, or an exit code after printing the error. */
typedef int (*gd_dtx_build)(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                            gd_any *msg);

/* GD_CLI_CONTINUE for GD_OK, else the error printed and its exit code. */
int gd_dtx_status(gd_cli *cli, gd_status s);

/* The common part of every command: common flags, key, message, submit. */
int gd_dtx_submit(gd_cli *cli, gd_args *args, const gd_dtx *d, gd_dtx_build build);

/* --run and --round, both required. GD_CLI_CONTINUE or an exit code. */
int gd_dtx_run_round(gd_cli *cli, gd_args *args, gd_dtx *d);

/* The option lines every command's table starts and ends with. */
#define GD_DTX_KEY {"key", "FILE", "signer's key file"}
#define GD_DTX_RUN {"run", "N", "the run"}
#define GD_DTX_ROUND {"round", "R", "the round"}
#define GD_DTX_END GD_TX_OPTS, {NULL, NULL, NULL}

#endif
