/* tx create-run | join-run | commit-round | leave-run | claim-rewards: the
 * DiLoCo module's messages that seal nothing and prove nothing
 * (chain/wire/diloco_msg.h), and what every DiLoCo tx command shares
 * (cli_diloco.h). Availability reports are in cli_diloco_avail.c, the
 * sealed answers (verdicts, re-checks, attestations, randomness) in
 * cli_diloco_seal.c. */
#include "plugin/cli/cli_diloco.h"

#include <inttypes.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "chain/client/query.h"
#include "chain/wire/diloco_spec.h"
#include "common/file.h"
#include "trainer/payload.h"

int gd_dtx_status(gd_cli *cli, gd_status s) { return s == GD_OK ? GD_CLI_CONTINUE : gd_cli_fail(cli, s); }

int gd_dtx_submit(gd_cli *cli, gd_args *args, const gd_dtx *d, gd_dtx_build build) {
    gd_cli_tx tx;
    gd_any msg = {0};
    int rc = gd_cli_tx_parse(cli, args, &tx);
    tx.for_round = d->has_round;
    tx.run = d->run;
    tx.round = d->round;
    if (rc == GD_CLI_CONTINUE)
        rc = gd_cli_tx_load_key(cli, args, &tx);
    if (rc == GD_CLI_CONTINUE)
        rc = build(cli, args, &tx, d, &msg);
    if (rc == GD_CLI_CONTINUE)
        rc = gd_cli_tx_send(cli, args, &tx, &msg, 1);
    gd_any_free(&msg);
    gd_cli_tx_end(&tx);
    return rc;
}

int gd_dtx_run_round(gd_cli *cli, gd_args *args, gd_dtx *d) {
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, &d->run, "run", UINT64_MAX, true)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &d->round, "round", UINT64_MAX, true)) != GD_CLI_CONTINUE)
        return rc;
    d->has_round = true;
    return GD_CLI_CONTINUE;
}

/* --- create-run ------------------------------------------------------------------ */

/* The chain's epoch parameters, read from the node, must leave room for
 * one round (gd_diloco_spec_epoch_check), as the module checks at
 * delivery; --offline has no node to ask, and the check is the chain's. */
static int gd_dtx_create_run_fits(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d) {
    if (tx->offline)
        return GD_CLI_CONTINUE;
    int rc = gd_cli_tx_rpc(cli, args, tx);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_epoch_info info;
    gd_status s = gd_query_epoch_info(tx->rpc, &info, NULL);
    if (s == GD_OK)
        s = gd_diloco_spec_epoch_check(d->spec, &info.params);
    return gd_dtx_status(cli, s);
}

static int gd_dtx_build_create_run(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                   gd_any *msg) {
    int rc = gd_dtx_create_run_fits(cli, args, tx, d);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    return gd_dtx_status(cli, gd_diloco_msg_create_run(msg, tx->signer, d->spec, &d->coin));
}

/* A required coin option. */
static int gd_dtx_coin(gd_cli *cli, gd_args *args, gd_coin *out, const char *name) {
    const char *v = gd_arg(args, name);
    if (v == NULL)
        return gd_cli_usage(cli, args, "--%s COIN is required (e.g. 1000ngonka)", name);
    if (gd_coin_parse(out, v) != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--%s", name));
    return GD_CLI_CONTINUE;
}

static int gd_run_tx_create_run(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    const char *spec = gd_arg(args, "spec");
    if (spec == NULL)
        return gd_cli_usage(cli, args, "--spec FILE.json is required");
    int rc = gd_dtx_coin(cli, args, &d.coin, "pool");
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_status s = gd_cli_read_run_spec(&d.spec, spec, "--spec");
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    rc = gd_dtx_submit(cli, args, &d, gd_dtx_build_create_run);
    gd_diloco_spec_free(d.spec);
    return rc;
}

/* --- join-run --------------------------------------------------------------------- */

static int gd_dtx_build_join_run(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                 gd_any *msg) {
    (void)args;
    return gd_dtx_status(cli, gd_diloco_msg_join_run(msg, tx->signer, d->run, d->artifact_url,
                                                     d->hw_class, &d->coin));
}

static int gd_run_tx_join_run(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    d.artifact_url = gd_arg(args, "artifact-url");
    d.hw_class = gd_arg(args, "hw-class");
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, &d.run, "run", UINT64_MAX, true)) != GD_CLI_CONTINUE)
        return rc;
    if (d.artifact_url == NULL)
        return gd_cli_usage(cli, args, "--artifact-url URL is required");
    if (d.hw_class == NULL)
        return gd_cli_usage(cli, args, "--hw-class CLASS is required");
    if ((rc = gd_dtx_coin(cli, args, &d.coin, "collateral")) != GD_CLI_CONTINUE)
        return rc;
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_join_run);
}

/* --- commit-round ------------------------------------------------------------------- */

/* The commitment of a payload file: root, leaves and wire size, and its
 * header for the checks against the signer and the run; the file must be
 * for this run and round. */
static gd_status gd_dtx_payload_commit(const char *path, gd_diloco_commit *c,
                                       gd_payload_header *header) {
    gd_payload p;
    GD_TRY(gd_payload_read(&p, path, NULL));
    uint32_t leaves = 0;
    gd_status s = gd_payload_root(&p, c->payload_root, &leaves);
    if (s == GD_OK && (p.header.run != c->run || p.header.round != c->round))
        s = gd_fail(GD_ERR_INVALID,
                    "--payload %.200s is for run %" PRIu64 " round %" PRIu64 ", not run %" PRIu64
                    " round %" PRIu64, path, p.header.run, p.header.round, c->run, c->round);
    c->payload_leaves = leaves;
    c->payload_bytes = gd_payload_wire_bytes(&p);
    *header = p.header;
    gd_payload_free(&p);
    return s;
}

/* A payload header against what the run fixes: the digest of its spec,
 * its layout, codec and chunk size. Peers refuse a payload that differs
 * in any of them, so a commitment to it could only be slashed. */
static gd_status gd_dtx_header_for_run(const gd_payload_header *h,
                                       const Gonka__Diloco__V1__RunSpec *spec, const char *path,
                                       uint64_t run) {
    uint8_t digest[32];
    GD_TRY(gd_diloco_spec_digest(digest, spec));
    gd_codec codec;
    if (gd_codec_parse(&codec, spec->codec) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "run %" PRIu64 " has codec '%.40s', which this build "
                                       "cannot read", run, spec->codec);
    char got[32], want[32];
    gd_codec_format(&h->codec, got, sizeof got);
    gd_codec_format(&codec, want, sizeof want);
    if (memcmp(h->spec_digest, digest, 32) != 0)
        return gd_fail(GD_ERR_INVALID, "--payload %.200s is for another run spec than run %" PRIu64
                                       "'s", path, run);
    if (spec->layout_digest.len != 32 || memcmp(h->layout_digest, spec->layout_digest.data, 32))
        return gd_fail(GD_ERR_INVALID, "--payload %.200s has another parameter layout than run "
                                       "%" PRIu64 "'s layout_digest", path, run);
    if (h->codec.kind != codec.kind || h->codec.topk_ppm != codec.topk_ppm)
        return gd_fail(GD_ERR_INVALID, "--payload %.200s is encoded with codec %s, run %" PRIu64
                                       " uses %s", path, got, run, want);
    if (h->chunk_elems != spec->chunk_elems)
        return gd_fail(GD_ERR_INVALID, "--payload %.200s has chunks of %" PRIu32 " values, run "
                                       "%" PRIu64 " uses %" PRIu32, path, h->chunk_elems, run,
                       spec->chunk_elems);
    return GD_OK;
}

/* The payload file's header against the signer (always) and the run (from
 * the node; --offline has no run at hand, so only the signer is checked). */
static int gd_dtx_check_header(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d) {
    const gd_payload_header *h = &d->header;
    if (strcmp(h->participant, tx->signer) != 0)
        return gd_cli_fail(cli, gd_fail(GD_ERR_INVALID, "--payload %.200s is the payload of "
                                                        "'%s', not of the signer %s",
                                        d->payload, h->participant, tx->signer));
    if (tx->offline)
        return GD_CLI_CONTINUE;
    int rc = gd_cli_tx_rpc(cli, args, tx);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    Gonka__Diloco__V1__QueryRunResponse *run = NULL;
    gd_status s = gd_diloco_query_run(tx->rpc, &run, d->run, NULL);
    if (s == GD_OK)
        s = gd_dtx_header_for_run(h, run->run->spec, d->payload, d->run);
    if (run != NULL)
        protobuf_c_message_free_unpacked(&run->base, NULL);
    return gd_dtx_status(cli, s);
}

static int gd_dtx_build_commit(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                               gd_any *msg) {
    int rc = d->payload ? gd_dtx_check_header(cli, args, tx, d) : -1;
    if (rc != GD_CLI_CONTINUE)
        return rc;
    return gd_dtx_status(cli, gd_diloco_msg_commit_round(msg, tx->signer, &d->commit));
}

static int gd_run_tx_commit_round(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    gd_diloco_commit *c = &d.commit;
    uint64_t leaves = 0, segments = 0;
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, &d)) != GD_CLI_CONTINUE)
        return rc;
    c->run = d.run;
    c->round = d.round;
    d.payload = gd_arg(args, "payload");
    bool by_hand = gd_arg(args, "payload-root") || gd_arg(args, "payload-leaves") ||
                   gd_arg(args, "payload-bytes");
    if (d.payload && by_hand)
        return gd_cli_usage(cli, args, "give --payload FILE, or --payload-root, "
                                       "--payload-leaves and --payload-bytes, not both");
    if (!d.payload &&
        ((rc = gd_cli_hex_opt(cli, args, c->payload_root, "payload-root", GD_DILOCO_HASH_LEN,
                              true)) != GD_CLI_CONTINUE ||
         (rc = gd_cli_uint_opt(cli, args, &leaves, "payload-leaves", UINT32_MAX, true)) !=
             GD_CLI_CONTINUE ||
         (rc = gd_cli_uint_opt(cli, args, &c->payload_bytes, "payload-bytes", UINT64_MAX, true)) !=
             GD_CLI_CONTINUE))
        return rc;
    c->payload_leaves = (uint32_t)leaves;
    if ((rc = gd_cli_hex_opt(cli, args, c->transcript_root, "transcript-root", GD_DILOCO_HASH_LEN,
                             true)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &segments, "segments", UINT32_MAX, true)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &c->loss_first_micro, "loss-first-micro", UINT64_MAX,
                              false)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &c->loss_last_micro, "loss-last-micro", UINT64_MAX,
                              false)) != GD_CLI_CONTINUE)
        return rc;
    c->segment_count = (uint32_t)segments;
    if (d.payload && (rc = gd_dtx_status(cli, gd_dtx_payload_commit(d.payload, c, &d.header))) != GD_CLI_CONTINUE)
        return rc;
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_commit);
}

/* --- leave-run, claim-rewards ------------------------------------------------------------- */

static int gd_dtx_build_leave(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                              gd_any *msg) {
    (void)args;
    return gd_dtx_status(cli, gd_diloco_msg_leave_run(msg, tx->signer, d->run));
}

static int gd_run_tx_leave_run(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc = gd_cli_uint_opt(cli, args, &d.run, "run", UINT64_MAX, true);
    return rc != GD_CLI_CONTINUE ? rc : gd_dtx_submit(cli, args, &d, gd_dtx_build_leave);
}

static int gd_dtx_build_claim(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                              gd_any *msg) {
    (void)args;
    return gd_dtx_status(cli, gd_diloco_msg_claim_rewards(msg, tx->signer, d->run, d->epoch));
}

static int gd_run_tx_claim_rewards(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, &d.run, "run", UINT64_MAX, true)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &d.epoch, "epoch", UINT64_MAX, true)) != GD_CLI_CONTINUE)
        return rc;
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_claim);
}

/* --- the command table ------------------------------------------------------------------- */

static const gd_opt_spec gd_create_run_opts[] = {
    GD_DTX_KEY,
    {"spec", "FILE.json", "the RunSpec (docs/cli.md; docs/examples/run-spec.json)"},
    {"pool", "COIN", "the reward pool, in the reward denom, e.g. 1000000ngonka"},
    GD_DTX_END,
};

static const gd_opt_spec gd_join_run_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN,
    {"artifact-url", "URL", "where this host serves its payloads and checkpoints"},
    {"hw-class", "CLASS", "hardware class (re-execution is bit-exact only within one)"},
    {"collateral", "COIN", "collateral to bond, at least the run's min_collateral"},
    GD_DTX_END,
};

static const gd_opt_spec gd_commit_round_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"payload", "FILE", "the payload file: root, leaves and wire size come from it"},
    {"payload-root", "HEX", "the payload's MMR root (without --payload)"},
    {"payload-leaves", "N", "its leaf count, chunk count + 1 (without --payload)"},
    {"payload-bytes", "N", "its wire size in bytes (without --payload)"},
    {"transcript-root", "HEX", "the root of the round's transcript"},
    {"segments", "N", "transcript segments trained (segments x K inner steps)"},
    {"loss-first-micro", "N", "mean inner loss of the first segment, in 1e-6 nats"},
    {"loss-last-micro", "N", "mean inner loss of the last segment, in 1e-6 nats"},
    GD_DTX_END,
};

static const gd_opt_spec gd_leave_run_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN,
    GD_DTX_END,
};

static const gd_opt_spec gd_claim_rewards_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN,
    {"epoch", "E", "the epoch to claim (the previous one)"},
    GD_DTX_END,
};

const gd_command gd_cmd_tx_create_run = {
    "tx create-run", "", 0, 0,
    "Create a DiLoCo training run (MsgCreateRun; the signer must be the module's authority).",
    "The spec is checked as the chain checks it before anything is signed. Offline\n"
    "signing and the output are as for 'tx send'.",
    gd_create_run_opts, gd_run_tx_create_run,
};

const gd_command gd_cmd_tx_join_run = {
    "tx join-run", "", 0, 0,
    "Join a run, bonding collateral (MsgJoinRun).",
    NULL, gd_join_run_opts, gd_run_tx_join_run,
};

const gd_command gd_cmd_tx_commit_round = {
    "tx commit-round", "", 0, 0,
    "Commit this round's payload and transcript (MsgCommitRound, commit window).",
    "With --payload the root, leaf count and wire size are read from the payload file,\n"
    "which must be for --run and --round and name the signer; online, its spec digest,\n"
    "layout, codec and chunk size must also be the run's (only the signer is checked\n"
    "with --offline).",
    gd_commit_round_opts, gd_run_tx_commit_round,
};

const gd_command gd_cmd_tx_leave_run = {
    "tx leave-run", "", 0, 0,
    "Leave a run (MsgLeaveRun): out of every later round's snapshot.",
    "The collateral is paid back once no live round holds the member any more.",
    gd_leave_run_opts, gd_run_tx_leave_run,
};

const gd_command gd_cmd_tx_claim_rewards = {
    "tx claim-rewards", "", 0, 0,
    "Claim what a run settled to the signer for the previous epoch (MsgClaimRewards).",
    NULL, gd_claim_rewards_opts, gd_run_tx_claim_rewards,
};
