/* tx create-run | join-run | commit-round | report-availability |
 * submit-verdict | dispute | attest-round | claim-rewards: the DiLoCo
 * module's messages (chain/diloco_msg.h) through the submission path of
 * 'tx send' (cli_submit.h). A command checks its own flags first, then the
 * common ones, loads the key and builds its message for the signer. */
#include <inttypes.h>
#include <string.h>

#include "chain/diloco_msg.h"
#include "chain/diloco_query.h"
#include "chain/diloco_spec.h"
#include "common/file.h"
#include "plugin/cli_submit.h"
#include "proofs/mmr.h"
#include "trainer/payload.h"

/* A proof in wire form: 12 bytes and at most GD_MMR_PROOF_MAX hashes. */
#define GD_PROOF_WIRE_MAX (12 + GD_MMR_PROOF_MAX * GD_MMR_HASH_LEN)

/* Everything a command parsed from its own flags. */
typedef struct gd_dtx {
    uint64_t run, round, check, epoch;
    char target[GD_ADDRESS_STR_MAX];
    gd_diloco_verdict verdict;
    uint8_t digest[GD_DILOCO_HASH_LEN];
    bool seal_only;
    Gonka__Diloco__V1__RunSpec *spec;
    gd_coin coin; /* pool or collateral */
    const char *artifact_url, *hw_class;
    gd_diloco_commit commit;
    const char *payload; /* --payload FILE */
    bool have_beacon;
    uint8_t beacon[GD_DILOCO_HASH_LEN];
    uint8_t leaf_hash[GD_DILOCO_HASH_LEN];
    uint8_t proof[GD_PROOF_WIRE_MAX];
    size_t proof_len;
} gd_dtx;

/* Builds the message for the signer into msg: -1, or an exit code after
 * printing the error. */
typedef int (*gd_dtx_build)(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                            gd_any *msg);

static int gd_dtx_status(gd_cli *cli, gd_status s) { return s == GD_OK ? -1 : gd_cli_fail(cli, s); }

/* The common part of every command: common flags, key, message, submit. */
static int gd_dtx_submit(gd_cli *cli, gd_args *args, const gd_dtx *d, gd_dtx_build build) {
    gd_cli_tx tx;
    gd_any msg = {0};
    int rc = gd_cli_tx_parse(cli, args, &tx);
    if (rc < 0)
        rc = gd_cli_tx_load_key(cli, args, &tx);
    if (rc < 0)
        rc = build(cli, args, &tx, d, &msg);
    if (rc < 0)
        rc = gd_cli_tx_send(cli, args, &tx, &msg, 1);
    gd_any_free(&msg);
    gd_cli_tx_end(&tx);
    return rc;
}

static int gd_dtx_run_round(gd_cli *cli, gd_args *args, gd_dtx *d) {
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, "run", UINT64_MAX, true, &d->run)) >= 0 ||
        (rc = gd_cli_uint_opt(cli, args, "round", UINT64_MAX, true, &d->round)) >= 0)
        return rc;
    return -1;
}

/* --run, --round, --target and --check, shared by verdicts and disputes. */
static int gd_dtx_check_flags(gd_cli *cli, gd_args *args, gd_dtx *d) {
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, d)) >= 0 ||
        (rc = gd_cli_address_opt(cli, args, "target", d->target, true)) >= 0 ||
        (rc = gd_cli_uint_opt(cli, args, "check", UINT32_MAX, true, &d->check)) >= 0)
        return rc;
    return -1;
}

/* --verdict pass|fail[|unavailable]. */
static int gd_dtx_verdict(gd_cli *cli, gd_args *args, bool unavailable_ok, gd_diloco_verdict *out) {
    const char *v = gd_arg(args, "verdict");
    if (v == NULL)
        return gd_cli_usage(cli, args, "--verdict is required");
    if (strcmp(v, "pass") == 0)
        *out = GD_VERDICT_PASS;
    else if (strcmp(v, "fail") == 0)
        *out = GD_VERDICT_FAIL;
    else if (unavailable_ok && strcmp(v, "unavailable") == 0)
        *out = GD_VERDICT_UNAVAILABLE;
    else
        return gd_cli_usage(cli, args, "--verdict wants %s, got '%.40s'",
                            unavailable_ok ? "pass, fail or unavailable" : "pass or fail", v);
    return -1;
}

/* --- create-run ------------------------------------------------------------------ */

static int gd_dtx_build_create_run(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                   gd_any *msg) {
    (void)args;
    return gd_dtx_status(cli, gd_diloco_msg_create_run(msg, tx->signer, d->spec, &d->coin));
}

/* A required coin option. */
static int gd_dtx_coin(gd_cli *cli, gd_args *args, const char *name, gd_coin *out) {
    const char *v = gd_arg(args, name);
    if (v == NULL)
        return gd_cli_usage(cli, args, "--%s COIN is required (e.g. 1000ngonka)", name);
    if (gd_coin_parse(out, v) != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--%s", name));
    return -1;
}

static int gd_run_tx_create_run(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    const char *spec = gd_arg(args, "spec");
    if (spec == NULL)
        return gd_cli_usage(cli, args, "--spec FILE.json is required");
    int rc = gd_dtx_coin(cli, args, "pool", &d.coin);
    if (rc >= 0)
        return rc;
    gd_status s = gd_cli_read_run_spec(spec, "--spec", &d.spec);
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
    if ((rc = gd_cli_uint_opt(cli, args, "run", UINT64_MAX, true, &d.run)) >= 0)
        return rc;
    if (d.artifact_url == NULL)
        return gd_cli_usage(cli, args, "--artifact-url URL is required");
    if (d.hw_class == NULL)
        return gd_cli_usage(cli, args, "--hw-class CLASS is required");
    if ((rc = gd_dtx_coin(cli, args, "collateral", &d.coin)) >= 0)
        return rc;
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_join_run);
}

/* --- commit-round ------------------------------------------------------------------- */

/* The commitment of a payload file: root, leaves and wire size; the file
 * must be for this run and round. */
static gd_status gd_dtx_payload_commit(const char *path, gd_diloco_commit *c) {
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
    gd_payload_free(&p);
    return s;
}

static int gd_dtx_build_commit(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                               gd_any *msg) {
    (void)args;
    return gd_dtx_status(cli, gd_diloco_msg_commit_round(msg, tx->signer, &d->commit));
}

static int gd_run_tx_commit_round(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    gd_diloco_commit *c = &d.commit;
    uint64_t leaves = 0, segments = 0;
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, &d)) >= 0)
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
        ((rc = gd_cli_hex_opt(cli, args, "payload-root", c->payload_root, GD_DILOCO_HASH_LEN,
                              true)) >= 0 ||
         (rc = gd_cli_uint_opt(cli, args, "payload-leaves", UINT32_MAX, true, &leaves)) >= 0 ||
         (rc = gd_cli_uint_opt(cli, args, "payload-bytes", UINT64_MAX, true,
                               &c->payload_bytes)) >= 0))
        return rc;
    c->payload_leaves = (uint32_t)leaves;
    if ((rc = gd_cli_hex_opt(cli, args, "transcript-root", c->transcript_root,
                             GD_DILOCO_HASH_LEN, true)) >= 0 ||
        (rc = gd_cli_uint_opt(cli, args, "segments", UINT32_MAX, true, &segments)) >= 0 ||
        (rc = gd_cli_uint_opt(cli, args, "loss-first-micro", UINT64_MAX, false,
                              &c->loss_first_micro)) >= 0 ||
        (rc = gd_cli_uint_opt(cli, args, "loss-last-micro", UINT64_MAX, false,
                              &c->loss_last_micro)) >= 0)
        return rc;
    c->segment_count = (uint32_t)segments;
    if (d.payload && (rc = gd_dtx_status(cli, gd_dtx_payload_commit(d.payload, c))) >= 0)
        return rc;
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_commit);
}

/* --- report-availability -------------------------------------------------------------- */

/* The beacon and chunk count the chain draws the chunk from: the target's
 * commitment in the round (which the file must match), or --beacon and
 * the file's own chunk count. */
static int gd_dtx_avail_draw(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                             const gd_payload *p, uint8_t beacon[GD_DILOCO_HASH_LEN],
                             uint32_t *chunks) {
    uint8_t root[GD_MMR_HASH_LEN];
    uint32_t leaves;
    int rc = gd_dtx_status(cli, gd_payload_root(p, root, &leaves));
    if (rc >= 0)
        return rc;
    if (d->have_beacon) {
        memcpy(beacon, d->beacon, GD_DILOCO_HASH_LEN);
        *chunks = leaves - 1;
        return -1;
    }
    if ((rc = gd_cli_tx_rpc(cli, args, tx)) >= 0)
        return rc;
    Gonka__Diloco__V1__QueryRoundResponse *r = NULL;
    gd_status s = gd_diloco_query_round(tx->rpc, d->run, d->round, &r, NULL);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    const Gonka__Diloco__V1__Commitment *c = NULL;
    for (size_t i = 0; i < r->n_commitments && c == NULL; i++)
        if (strcmp(r->commitments[i]->participant, d->target) == 0)
            c = r->commitments[i];
    if (c == NULL)
        s = gd_fail(GD_ERR_NOT_FOUND, "%s has no commitment in run %" PRIu64 " round %" PRIu64,
                    d->target, d->run, d->round);
    else if (c->payload_leaves != leaves || memcmp(c->payload_root.data, root, sizeof root) != 0)
        s = gd_fail(GD_ERR_INVALID, "--payload %.200s is not the payload %s committed",
                    d->payload, d->target);
    if (s == GD_OK) {
        memcpy(beacon, r->round->beacon.data, GD_DILOCO_HASH_LEN);
        *chunks = c->payload_leaves - 1;
    }
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return gd_dtx_status(cli, s);
}

/* The drawn chunk's leaf hash and proof, from the payload file. */
static int gd_dtx_build_avail_payload(gd_cli *cli, gd_args *args, gd_cli_tx *tx,
                                      const gd_dtx *d, gd_any *msg) {
    gd_payload p;
    gd_status s = gd_payload_read(&p, d->payload, NULL);
    if (s != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(s, "--payload"));
    uint8_t beacon[GD_DILOCO_HASH_LEN], leaf[GD_MMR_HASH_LEN];
    uint32_t chunks = 0;
    int rc = gd_dtx_avail_draw(cli, args, tx, d, &p, beacon, &chunks);
    if (rc < 0) {
        uint32_t chunk = gd_diloco_avail_chunk(beacon, d->target, tx->signer, chunks);
        const gd_payload_chunk *ch = &p.chunks[chunk];
        gd_mmr_hash_leaf(leaf, chunk + 1, ch->raw, ch->raw_len);
        gd_mmr_proof proof;
        gd_buf wire = {0};
        s = gd_payload_prove_chunk(&p, chunk, &proof);
        if (s == GD_OK)
            s = gd_mmr_proof_encode(&proof, &wire);
        if (s == GD_OK)
            s = gd_diloco_msg_report_availability(msg, tx->signer, d->run, d->round, d->target,
                                                  leaf, wire.data, wire.len);
        gd_buf_free(&wire);
        rc = gd_dtx_status(cli, s);
    }
    gd_payload_free(&p);
    return rc;
}

static int gd_dtx_build_avail(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                              gd_any *msg) {
    if (d->payload)
        return gd_dtx_build_avail_payload(cli, args, tx, d, msg);
    return gd_dtx_status(cli, gd_diloco_msg_report_availability(msg, tx->signer, d->run,
                                                                d->round, d->target,
                                                                d->leaf_hash, d->proof,
                                                                d->proof_len));
}

/* --proof HEX: a proof in wire form, any length up to the largest. */
static int gd_dtx_proof(gd_cli *cli, gd_args *args, gd_dtx *d) {
    const char *v = gd_arg(args, "proof");
    if (v == NULL)
        return gd_cli_usage(cli, args, "--proof HEX is required without --payload");
    if (gd_hex_decode(d->proof, sizeof d->proof, &d->proof_len, v, strlen(v)) != GD_OK)
        return gd_cli_usage(cli, args, "--proof wants hex (an MMR proof in wire form, at most "
                                       "%d bytes)", GD_PROOF_WIRE_MAX);
    return -1;
}

static int gd_run_tx_report_availability(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, &d)) >= 0 ||
        (rc = gd_cli_address_opt(cli, args, "target", d.target, true)) >= 0)
        return rc;
    d.payload = gd_arg(args, "payload");
    d.have_beacon = gd_arg(args, "beacon") != NULL;
    if (d.payload) {
        if (gd_arg(args, "leaf-hash") || gd_arg(args, "proof"))
            return gd_cli_usage(cli, args, "give --payload FILE, or --leaf-hash and --proof, "
                                           "not both");
        if (gd_flag(args, "offline") && !d.have_beacon)
            return gd_cli_usage(cli, args, "--payload with --offline needs --beacon (the round's "
                                           "beacon comes from the node otherwise)");
        if ((rc = gd_cli_hex_opt(cli, args, "beacon", d.beacon, GD_DILOCO_HASH_LEN, false)) >= 0)
            return rc;
    } else {
        if (d.have_beacon)
            return gd_cli_usage(cli, args, "--beacon goes with --payload");
        if ((rc = gd_cli_hex_opt(cli, args, "leaf-hash", d.leaf_hash, GD_DILOCO_HASH_LEN,
                                 true)) >= 0 ||
            (rc = gd_dtx_proof(cli, args, &d)) >= 0)
            return rc;
    }
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_avail);
}

/* --- submit-verdict, dispute -------------------------------------------------------------- */

static int gd_dtx_build_verdict(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                gd_any *msg) {
    (void)args;
    if (!d->seal_only)
        return gd_dtx_status(cli, gd_diloco_msg_submit_verdict_revealed(
                                      msg, tx->signer, d->run, d->round, d->target,
                                      (uint32_t)d->check, d->verdict, d->digest));
    uint8_t seal[GD_DILOCO_HASH_LEN];
    gd_diloco_seal(seal, tx->signer, d->verdict, d->digest);
    return gd_dtx_status(cli, gd_diloco_msg_submit_verdict_sealed(msg, tx->signer, d->run,
                                                                  d->round, d->target,
                                                                  (uint32_t)d->check, seal));
}

static int gd_run_tx_submit_verdict(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_dtx_check_flags(cli, args, &d)) >= 0 ||
        (rc = gd_dtx_verdict(cli, args, true, &d.verdict)) >= 0)
        return rc;
    bool unavailable = d.verdict == GD_VERDICT_UNAVAILABLE;
    if ((rc = gd_cli_hex_opt(cli, args, "digest", d.digest, GD_DILOCO_HASH_LEN, !unavailable)) >=
        0)
        return rc;
    static const uint8_t zero[GD_DILOCO_HASH_LEN];
    if (unavailable && memcmp(d.digest, zero, sizeof zero) != 0)
        return gd_cli_usage(cli, args, "the digest of an unavailable verdict is all zero (leave "
                                       "out --digest)");
    d.seal_only = gd_flag(args, "seal-only");
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_verdict);
}

static int gd_dtx_build_dispute(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                gd_any *msg) {
    (void)args;
    return gd_dtx_status(cli, gd_diloco_msg_dispute(msg, tx->signer, d->run, d->round, d->target,
                                                    (uint32_t)d->check, d->verdict, d->digest));
}

static int gd_run_tx_dispute(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_dtx_check_flags(cli, args, &d)) >= 0 ||
        (rc = gd_dtx_verdict(cli, args, false, &d.verdict)) >= 0 ||
        (rc = gd_cli_hex_opt(cli, args, "digest", d.digest, GD_DILOCO_HASH_LEN, true)) >= 0)
        return rc;
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_dispute);
}

/* --- attest-round, claim-rewards ------------------------------------------------------------ */

static int gd_dtx_build_attest(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                               gd_any *msg) {
    (void)args;
    return gd_dtx_status(cli, gd_diloco_msg_attest_round(msg, tx->signer, d->run, d->round,
                                                         d->digest));
}

static int gd_run_tx_attest_round(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, &d)) >= 0 ||
        (rc = gd_cli_hex_opt(cli, args, "state-hash", d.digest, GD_DILOCO_HASH_LEN, true)) >= 0)
        return rc;
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_attest);
}

static int gd_dtx_build_claim(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                              gd_any *msg) {
    (void)args;
    return gd_dtx_status(cli, gd_diloco_msg_claim_rewards(msg, tx->signer, d->run, d->epoch));
}

static int gd_run_tx_claim_rewards(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, "run", UINT64_MAX, true, &d.run)) >= 0 ||
        (rc = gd_cli_uint_opt(cli, args, "epoch", UINT64_MAX, true, &d.epoch)) >= 0)
        return rc;
    return gd_dtx_submit(cli, args, &d, gd_dtx_build_claim);
}

/* --- the command table ------------------------------------------------------------------- */

#define GD_DTX_KEY {"key", "FILE", "signer's key file"}
#define GD_DTX_RUN {"run", "N", "the run"}
#define GD_DTX_ROUND {"round", "R", "the round"}
#define GD_DTX_END GD_TX_OPTS, {NULL, NULL, NULL}

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

static const gd_opt_spec gd_report_availability_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"target", "ADDR", "the worker whose payload was fetched"},
    {"payload", "FILE", "the fetched payload: the chunk, leaf hash and proof come from it"},
    {"beacon", "HEX", "the round's beacon (with --payload; default: read from the node)"},
    {"leaf-hash", "HEX", "the drawn chunk's MMR leaf hash (without --payload)"},
    {"proof", "HEX", "its inclusion proof in wire form (without --payload)"},
    GD_DTX_END,
};

static const gd_opt_spec gd_submit_verdict_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"target", "ADDR", "the checked worker"},
    {"check", "J", "the check's index"},
    {"verdict", "V", "pass, fail or unavailable"},
    {"digest", "HEX", "the verdict digest (default all zero for unavailable)"},
    {"seal-only", NULL, "send only the seal (verify window); reveal later without it"},
    GD_DTX_END,
};

static const gd_opt_spec gd_dispute_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"target", "ADDR", "the checked worker"},
    {"check", "J", "the disputed check's index"},
    {"verdict", "V", "pass or fail"},
    {"digest", "HEX", "the re-check's verdict digest"},
    GD_DTX_END,
};

static const gd_opt_spec gd_attest_round_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"state-hash", "HEX", "the state hash of G_{r+1} as computed here"},
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
    "which must be for --run and --round.",
    gd_commit_round_opts, gd_run_tx_commit_round,
};

const gd_command gd_cmd_tx_report_availability = {
    "tx report-availability", "", 0, 0,
    "Prove a fetch of a worker's payload (MsgReportAvailability, reveal window).",
    "With --payload the chunk the chain draws for (beacon, target, signer) is proved from\n"
    "the file; the beacon and the target's commitment are read from the node (or give\n"
    "--beacon, e.g. with --offline).",
    gd_report_availability_opts, gd_run_tx_report_availability,
};

const gd_command gd_cmd_tx_submit_verdict = {
    "tx submit-verdict", "", 0, 0,
    "Seal (verify window) or reveal (open window) a verdict on a check (MsgSubmitVerdict).",
    "--seal-only sends SHA-256(\"gd-verdict-seal\" || signer || verdict || digest); run the\n"
    "same command without it in the open window to reveal. A FAIL pays the run's fail_bond.",
    gd_submit_verdict_opts, gd_run_tx_submit_verdict,
};

const gd_command gd_cmd_tx_dispute = {
    "tx dispute", "", 0, 0,
    "Answer a disputed check as a re-checker (MsgDispute, dispute window).",
    NULL, gd_dispute_opts, gd_run_tx_dispute,
};

const gd_command gd_cmd_tx_attest_round = {
    "tx attest-round", "", 0, 0,
    "Attest the state hash of the round's next global state (MsgAttestRound, attest window).",
    NULL, gd_attest_round_opts, gd_run_tx_attest_round,
};

const gd_command gd_cmd_tx_claim_rewards = {
    "tx claim-rewards", "", 0, 0,
    "Claim what a run settled to the signer for the previous epoch (MsgClaimRewards).",
    NULL, gd_claim_rewards_opts, gd_run_tx_claim_rewards,
};
