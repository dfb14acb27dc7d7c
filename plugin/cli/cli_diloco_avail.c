/* tx report-availability: proves a fetch of a worker's payload
 * (MsgReportAvailability, verify window). From a payload file the command
 * proves the chunks the chain draws for this reporter
 * (gd_diloco_avail_chunks: the run's avail_chunks chunks, from the round's
 * verify randomness, which is fixed only at verify_start, after every
 * commitment, so a worker cannot know which chunks it must serve); or it
 * sends leaf hashes and proofs given by hand. It sends no state sample
 * (the daemon's report does, docs/protocol.md "Availability"): the sample
 * is optional and only speaks for the target when it is there. */
#include <inttypes.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "plugin/cli/cli_diloco.h"
#include "plugin/member/avail_proof.h"
#include "trainer/payload.h"

/* The target's commitment in a round answer, or NULL. */
static const Gonka__Diloco__V1__Commitment *
gd_avail_commitment(const Gonka__Diloco__V1__QueryRoundResponse *r, const char *target) {
    for (size_t i = 0; i < r->n_commitments; i++)
        if (strcmp(r->commitments[i]->participant, target) == 0)
            return r->commitments[i];
    return NULL;
}

/* What the draw needs from the node: the run's avail_chunks, and the
 * round's verify randomness with the target's commitment (which the file
 * must match). */
static gd_status gd_avail_from_node(gd_rpc *rpc, const gd_dtx *d, const uint8_t root[32],
                                    uint32_t leaves, uint8_t randomness[GD_DILOCO_HASH_LEN],
                                    uint32_t *want) {
    Gonka__Diloco__V1__QueryRunResponse *run = NULL;
    GD_TRY(gd_diloco_query_run(rpc, &run, d->run, NULL));
    *want = run->run->spec->avail_chunks;
    protobuf_c_message_free_unpacked(&run->base, NULL);
    Gonka__Diloco__V1__QueryRoundResponse *r = NULL;
    GD_TRY(gd_diloco_query_round(rpc, &r, d->run, d->round, NULL));
    const Gonka__Diloco__V1__Commitment *c = gd_avail_commitment(r, d->target);
    gd_status s = GD_OK;
    if (c == NULL)
        s = gd_fail(GD_ERR_NOT_FOUND, "%s has no commitment in run %" PRIu64 " round %" PRIu64,
                    d->target, d->run, d->round);
    else if (c->payload_leaves != leaves || memcmp(c->payload_root.data, root, 32) != 0)
        s = gd_fail(GD_ERR_INVALID, "--payload %.200s is not the payload %s committed",
                    d->payload, d->target);
    else if (r->round->verify_randomness.len != GD_DILOCO_HASH_LEN)
        s = gd_fail(GD_ERR_INVALID,
                    "round %" PRIu64 " has no verify randomness yet: reports are for its verify "
                    "window, from height %" PRId64,
                    d->round, r->round->windows->verify_start);
    else
        memcpy(randomness, r->round->verify_randomness.data, GD_DILOCO_HASH_LEN);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return s;
}

/* The report of a payload file. */
static int gd_avail_build_payload(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                  gd_any *msg) {
    gd_payload_view p;
    gd_mmr mmr;
    gd_status s = gd_payload_view_open_path(&p, d->payload);
    if (s == GD_OK && (s = gd_payload_view_mmr(&p, &mmr, NULL)) != GD_OK)
        gd_payload_view_close(&p);
    if (s != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(s, "--payload %s", d->payload));
    uint8_t root[GD_MMR_HASH_LEN], randomness[GD_DILOCO_HASH_LEN];
    uint32_t leaves = mmr.n_leaves, want = (uint32_t)d->avail_chunks, n = 0;
    gd_diloco_chunk_proof chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
    gd_buf wire[GD_DILOCO_AVAIL_CHUNKS_MAX] = {{0}};
    int rc = gd_dtx_status(cli, gd_mmr_root(&mmr, root));
    if (rc == GD_CLI_CONTINUE && d->have_randomness)
        memcpy(randomness, d->randomness, sizeof randomness);
    else if (rc == GD_CLI_CONTINUE && (rc = gd_cli_tx_rpc(cli, args, tx)) == GD_CLI_CONTINUE)
        rc = gd_dtx_status(cli, gd_avail_from_node(tx->rpc, d, root, leaves, randomness, &want));
    if (rc == GD_CLI_CONTINUE)
        rc = gd_dtx_status(cli, gd_avail_prove(&p, &mmr, randomness, d->target, tx->signer,
                                                want, chunks, wire, &n));
    if (rc == GD_CLI_CONTINUE)
        rc = gd_dtx_status(cli, gd_diloco_msg_report_availability(msg, tx->signer, d->run,
                                                                  d->round, d->target, chunks,
                                                                  n, NULL));
    for (size_t i = 0; i < GD_DILOCO_AVAIL_CHUNKS_MAX; i++)
        gd_buf_free(&wire[i]);
    gd_payload_view_close(&p);
    gd_mmr_free(&mmr);
    return rc;
}

static int gd_avail_build(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                          gd_any *msg) {
    if (d->payload)
        return gd_avail_build_payload(cli, args, tx, d, msg);
    gd_diloco_chunk_proof chunks[GD_DILOCO_AVAIL_CHUNKS_MAX];
    for (size_t i = 0; i < d->n_chunks; i++) {
        memcpy(chunks[i].leaf_hash, d->leaf_hash[i], GD_DILOCO_HASH_LEN);
        chunks[i].proof = d->proof[i];
        chunks[i].proof_len = d->proof_len[i];
    }
    return gd_dtx_status(cli, gd_diloco_msg_report_availability(msg, tx->signer, d->run,
                                                                d->round, d->target, chunks,
                                                                d->n_chunks, NULL));
}

/* --leaf-hash HEX --proof HEX, repeated in pairs, in the chain's draw order. */
static int gd_avail_by_hand(gd_cli *cli, gd_args *args, gd_dtx *d) {
    const char *leaves[GD_DILOCO_AVAIL_CHUNKS_MAX + 1], *proofs[GD_DILOCO_AVAIL_CHUNKS_MAX + 1];
    size_t n = gd_arg_all(args, leaves, GD_DILOCO_AVAIL_CHUNKS_MAX + 1, "leaf-hash");
    size_t n_proofs = gd_arg_all(args, proofs, GD_DILOCO_AVAIL_CHUNKS_MAX + 1, "proof");
    if (n == 0)
        return gd_cli_usage(cli, args, "give --payload FILE, or --leaf-hash HEX --proof HEX "
                                       "for each drawn chunk");
    if (n != n_proofs)
        return gd_cli_usage(cli, args, "%zu --leaf-hash but %zu --proof: give one proof per "
                                       "leaf hash, in the same order",
                            n, n_proofs);
    if (n > GD_DILOCO_AVAIL_CHUNKS_MAX)
        return gd_cli_usage(cli, args, "a report proves at most %d chunks",
                            GD_DILOCO_AVAIL_CHUNKS_MAX);
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        if (strlen(leaves[i]) != 2 * GD_DILOCO_HASH_LEN ||
            gd_hex_decode(d->leaf_hash[i], GD_DILOCO_HASH_LEN, &len, leaves[i],
                          strlen(leaves[i])) != GD_OK)
            return gd_cli_usage(cli, args, "--leaf-hash %zu wants 64 hex digits", i + 1);
        if (gd_hex_decode(d->proof[i], GD_PROOF_WIRE_MAX, &d->proof_len[i], proofs[i],
                          strlen(proofs[i])) != GD_OK)
            return gd_cli_usage(cli, args, "--proof %zu wants hex (an MMR proof in wire form, "
                                           "at most %d bytes)",
                                i + 1, GD_PROOF_WIRE_MAX);
    }
    d->n_chunks = n;
    return GD_CLI_CONTINUE;
}

/* --payload FILE with, offline, --randomness HEX and --chunks N. */
static int gd_avail_payload_flags(gd_cli *cli, gd_args *args, gd_dtx *d) {
    bool randomness = gd_arg(args, "randomness") != NULL, chunks = gd_arg(args, "chunks") != NULL;
    if (gd_arg(args, "leaf-hash") || gd_arg(args, "proof"))
        return gd_cli_usage(cli, args, "give --payload FILE, or --leaf-hash and --proof, not "
                                       "both");
    if (randomness != chunks)
        return gd_cli_usage(cli, args, "--randomness and --chunks go together (the round's "
                                       "verify randomness and the run's avail_chunks)");
    if (gd_flag(args, "offline") && !randomness)
        return gd_cli_usage(cli, args, "--payload with --offline needs --randomness and "
                                       "--chunks (they come from the node otherwise)");
    d->have_randomness = randomness;
    d->avail_chunks = 0;
    int rc;
    if ((rc = gd_cli_hex_opt(cli, args, d->randomness, "randomness", GD_DILOCO_HASH_LEN,
                             false)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &d->avail_chunks, "chunks", GD_DILOCO_AVAIL_CHUNKS_MAX,
                              false)) != GD_CLI_CONTINUE)
        return rc;
    if (randomness && d->avail_chunks == 0)
        return gd_cli_usage(cli, args, "--chunks wants the run's avail_chunks, 1 to %d",
                            GD_DILOCO_AVAIL_CHUNKS_MAX);
    return GD_CLI_CONTINUE;
}

static int gd_run_tx_report_availability(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, &d)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_address_opt(cli, args, d.target, "target", true)) != GD_CLI_CONTINUE)
        return rc;
    d.payload = gd_arg(args, "payload");
    if (d.payload)
        rc = gd_avail_payload_flags(cli, args, &d);
    else if (gd_arg(args, "randomness") || gd_arg(args, "chunks"))
        rc = gd_cli_usage(cli, args, "--randomness and --chunks go with --payload");
    else
        rc = gd_avail_by_hand(cli, args, &d);
    return rc != GD_CLI_CONTINUE ? rc : gd_dtx_submit(cli, args, &d, gd_avail_build);
}

static const gd_opt_spec gd_report_availability_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"target", "ADDR", "the worker whose payload was fetched"},
    {"payload", "FILE", "the fetched payload: the drawn chunks, leaf hashes and proofs come "
                        "from it"},
    {"randomness", "HEX", "the round's verify_randomness (with --payload; default: the node's)"},
    {"chunks", "N", "the run's avail_chunks (with --randomness)"},
    {"leaf-hash", "HEX", "a drawn chunk's MMR leaf hash (without --payload; repeat per chunk)",
     true},
    {"proof", "HEX", "its inclusion proof in wire form (one per --leaf-hash, same order)", true},
    GD_DTX_END,
};

const gd_command gd_cmd_tx_report_availability = {
    "tx report-availability", "", 0, 0,
    "Prove a fetch of a worker's payload (MsgReportAvailability, verify window).",
    "With --payload the run's avail_chunks chunks the chain draws for (verify randomness,\n"
    "target, signer) are proved from the file; the randomness, the chunk count and the\n"
    "target's commitment are read from the node (or give --randomness and --chunks, e.g.\n"
    "with --offline). Without it, give --leaf-hash and --proof once per drawn chunk.",
    gd_report_availability_opts, gd_run_tx_report_availability,
};
