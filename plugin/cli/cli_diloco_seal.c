/* tx submit-verdict | dispute | attest-round | randomness: the DiLoCo
 * module's sealed answers, each sent twice: first its seal alone, then,
 * in the window after, the answer itself with the salt the seal was made
 * with (proofs/diloco_rules.h, gd_diloco_seal). The salt keeps equal
 * answers from having equal seals, so no one can copy another's answer
 * from its seal before the reveal.
 *
 * The salt is the signer's to keep between the two commands: --seal-only
 * draws a fresh one from the kernel (gd_random_bytes) unless --salt gives
 * one, and prints it with the seal (as "salt: HEX" lines first, or keys of
 * the --json object); the reveal takes it back with --salt. A randomness
 * seal works the same with --secret: the secret is the salt. */
#include <string.h>

#include "common/bytes.h"
#include "common/secure.h"
#include "plugin/cli/cli_diloco.h"

/* --- salts and seals ------------------------------------------------------------------- */

/* The salt option (--salt, or --secret for randomness) and --seal-only:
 * sealing takes the given salt or draws one; revealing needs it given. */
static int gd_seal_flags(gd_cli *cli, gd_args *args, const char *name, gd_dtx *d) {
    d->seal_only = gd_flag(args, "seal-only");
    d->have_salt = gd_arg(args, name) != NULL;
    if (!d->seal_only && !d->have_salt)
        return gd_cli_usage(cli, args, "--%s HEX is required to reveal (the one --seal-only "
                                       "printed), or send --seal-only first",
                            name);
    int rc = gd_cli_hex_opt(cli, args, d->salt, name, GD_DILOCO_SALT_LEN, false);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    if (!d->have_salt)
        return gd_dtx_status(cli, gd_random_bytes(d->salt, GD_DILOCO_SALT_LEN));
    return GD_CLI_CONTINUE;
}

/* Sets tx->extra to {name: salt, "seal": seal} in hex, what the signer
 * keeps for the reveal. */
static int gd_seal_extra(gd_cli *cli, gd_cli_tx *tx, const char *name,
                         const uint8_t salt[GD_DILOCO_SALT_LEN],
                         const uint8_t seal[GD_DILOCO_HASH_LEN]) {
    char salt_hex[2 * GD_DILOCO_SALT_LEN + 1], seal_hex[2 * GD_DILOCO_HASH_LEN + 1];
    gd_hex_encode(salt_hex, salt, GD_DILOCO_SALT_LEN, false);
    gd_hex_encode(seal_hex, seal, GD_DILOCO_HASH_LEN, false);
    tx->extra = json_pack("{s:s,s:s}", name, salt_hex, "seal", seal_hex);
    gd_wipe(salt_hex, sizeof salt_hex);
    return tx->extra ? GD_CLI_CONTINUE : gd_cli_fail(cli, gd_fail(GD_ERR_NOMEM, "out of memory"));
}

/* --run, --round, --target and --check, shared by verdicts and disputes. */
static int gd_seal_check_flags(gd_cli *cli, gd_args *args, gd_dtx *d) {
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, d)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_address_opt(cli, args, d->target, "target", true)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &d->check, "check", UINT32_MAX, true)) != GD_CLI_CONTINUE)
        return rc;
    return GD_CLI_CONTINUE;
}

/* --verdict pass|fail|unavailable and its --digest (all zero, and the
 * default, for unavailable: nothing was re-executed). */
static int gd_seal_verdict_flags(gd_cli *cli, gd_args *args, gd_dtx *d) {
    const char *v = gd_arg(args, "verdict");
    if (v == NULL)
        return gd_cli_usage(cli, args, "--verdict is required");
    if (strcmp(v, "pass") == 0)
        d->verdict = GD_VERDICT_PASS;
    else if (strcmp(v, "fail") == 0)
        d->verdict = GD_VERDICT_FAIL;
    else if (strcmp(v, "unavailable") == 0)
        d->verdict = GD_VERDICT_UNAVAILABLE;
    else
        return gd_cli_usage(cli, args, "--verdict wants pass, fail or unavailable, got '%.40s'",
                            v);
    bool unavailable = d->verdict == GD_VERDICT_UNAVAILABLE;
    int rc = gd_cli_hex_opt(cli, args, d->digest, "digest", GD_DILOCO_HASH_LEN, !unavailable);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    static const uint8_t zero[GD_DILOCO_HASH_LEN];
    if (unavailable && memcmp(d->digest, zero, sizeof zero) != 0)
        return gd_cli_usage(cli, args, "the digest of an unavailable verdict is all zero (leave "
                                       "out --digest)");
    return GD_CLI_CONTINUE;
}

/* --- submit-verdict, dispute ------------------------------------------------------------- */

static int gd_seal_build_verdict(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                 gd_any *msg) {
    uint32_t check = (uint32_t)d->check;
    /* On its own commitment: the target's own digest, always a PASS. */
    bool own = strcmp(d->target, tx->signer) == 0;
    if (own && d->verdict != GD_VERDICT_PASS)
        return gd_cli_usage(cli, args, "a target's own digest is a pass: --verdict pass");
    if (!d->seal_only)
        return gd_dtx_status(cli, gd_diloco_msg_submit_verdict_revealed(
                                      msg, tx->signer, d->run, d->round, d->target, check,
                                      d->verdict, d->digest, d->salt));
    uint8_t seal[GD_DILOCO_HASH_LEN];
    gd_diloco_verdict_seal(seal, own ? GD_SEAL_OWN : GD_SEAL_VERDICT, tx->signer, d->verdict,
                           d->digest, d->salt);
    int rc = gd_dtx_status(cli, gd_diloco_msg_submit_verdict_sealed(msg, tx->signer, d->run,
                                                                    d->round, d->target, check,
                                                                    seal));
    return rc != GD_CLI_CONTINUE ? rc : gd_seal_extra(cli, tx, "salt", d->salt, seal);
}

static int gd_seal_build_dispute(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                 gd_any *msg) {
    (void)args;
    uint32_t check = (uint32_t)d->check;
    if (!d->seal_only)
        return gd_dtx_status(cli, gd_diloco_msg_dispute_revealed(msg, tx->signer, d->run,
                                                                 d->round, d->target, check,
                                                                 d->verdict, d->digest,
                                                                 d->salt));
    uint8_t seal[GD_DILOCO_HASH_LEN];
    gd_diloco_verdict_seal(seal, GD_SEAL_RECHECK, tx->signer, d->verdict, d->digest, d->salt);
    int rc = gd_dtx_status(cli, gd_diloco_msg_dispute_sealed(msg, tx->signer, d->run, d->round,
                                                             d->target, check, seal));
    return rc != GD_CLI_CONTINUE ? rc : gd_seal_extra(cli, tx, "salt", d->salt, seal);
}

/* A verdict or a re-check: the same flags, another seal kind. */
static int gd_seal_run_verdict(gd_cli *cli, gd_args *args, gd_dtx_build build) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_seal_check_flags(cli, args, &d)) != GD_CLI_CONTINUE ||
        (rc = gd_seal_verdict_flags(cli, args, &d)) != GD_CLI_CONTINUE ||
        (rc = gd_seal_flags(cli, args, "salt", &d)) != GD_CLI_CONTINUE)
        return rc;
    rc = gd_dtx_submit(cli, args, &d, build);
    gd_wipe(d.salt, sizeof d.salt);
    return rc;
}

static int gd_run_tx_submit_verdict(gd_cli *cli, gd_args *args) {
    return gd_seal_run_verdict(cli, args, gd_seal_build_verdict);
}

static int gd_run_tx_dispute(gd_cli *cli, gd_args *args) {
    return gd_seal_run_verdict(cli, args, gd_seal_build_dispute);
}

/* --- attest-round, randomness ---------------------------------------------------------------- */

static int gd_seal_build_attest(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                gd_any *msg) {
    (void)args;
    if (!d->seal_only)
        return gd_dtx_status(cli, gd_diloco_msg_attest_round_revealed(
                                      msg, tx->signer, d->run, d->round, d->digest, d->salt));
    uint8_t seal[GD_DILOCO_HASH_LEN];
    gd_diloco_seal(seal, GD_SEAL_ATTEST, tx->signer, d->digest, GD_DILOCO_HASH_LEN, d->salt);
    int rc = gd_dtx_status(
        cli, gd_diloco_msg_attest_round_sealed(msg, tx->signer, d->run, d->round, seal));
    return rc != GD_CLI_CONTINUE ? rc : gd_seal_extra(cli, tx, "salt", d->salt, seal);
}

static int gd_run_tx_attest_round(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, &d)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_hex_opt(cli, args, d.digest, "state-hash", GD_DILOCO_HASH_LEN, true)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_seal_flags(cli, args, "salt", &d)) != GD_CLI_CONTINUE)
        return rc;
    rc = gd_dtx_submit(cli, args, &d, gd_seal_build_attest);
    gd_wipe(d.salt, sizeof d.salt);
    return rc;
}

static int gd_seal_build_randomness(gd_cli *cli, gd_args *args, gd_cli_tx *tx, const gd_dtx *d,
                                    gd_any *msg) {
    (void)args;
    if (!d->seal_only)
        return gd_dtx_status(cli, gd_diloco_msg_randomness_revealed(msg, tx->signer, d->run,
                                                                    d->round, d->salt));
    /* No body, but not NULL: the rules copy it, and memcpy from NULL is
     * undefined even for no bytes. */
    static const uint8_t no_body[1];
    uint8_t seal[GD_DILOCO_HASH_LEN];
    gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, tx->signer, no_body, 0, d->salt);
    int rc = gd_dtx_status(
        cli, gd_diloco_msg_randomness_sealed(msg, tx->signer, d->run, d->round, seal));
    return rc != GD_CLI_CONTINUE ? rc : gd_seal_extra(cli, tx, "secret", d->salt, seal);
}

static int gd_run_tx_randomness(gd_cli *cli, gd_args *args) {
    gd_dtx d = {0};
    int rc;
    if ((rc = gd_dtx_run_round(cli, args, &d)) != GD_CLI_CONTINUE ||
        (rc = gd_seal_flags(cli, args, "secret", &d)) != GD_CLI_CONTINUE)
        return rc;
    rc = gd_dtx_submit(cli, args, &d, gd_seal_build_randomness);
    gd_wipe(d.salt, sizeof d.salt);
    return rc;
}

/* --- the command table ------------------------------------------------------------------- */

#define GD_SEAL_SALT_OPTS                                                                     \
    {"seal-only", NULL, "send only the seal; prints the salt the reveal needs"},              \
        {"salt", "HEX", "the 32-byte salt: to reveal (the one --seal-only printed), or to "   \
                        "seal with (default: a fresh random one)"}

static const gd_opt_spec gd_submit_verdict_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"target", "ADDR", "the checked worker"},
    {"check", "J", "the check's index"},
    {"verdict", "V", "pass, fail or unavailable"},
    {"digest", "HEX", "the verdict digest (default all zero for unavailable)"},
    GD_SEAL_SALT_OPTS,
    GD_DTX_END,
};

static const gd_opt_spec gd_dispute_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"target", "ADDR", "the checked worker"},
    {"check", "J", "the disputed check's index"},
    {"verdict", "V", "pass, fail or unavailable"},
    {"digest", "HEX", "the re-check's verdict digest (default all zero for unavailable)"},
    GD_SEAL_SALT_OPTS,
    GD_DTX_END,
};

static const gd_opt_spec gd_attest_round_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"state-hash", "HEX", "the state hash of G_{r+1} as computed here"},
    GD_SEAL_SALT_OPTS,
    GD_DTX_END,
};

static const gd_opt_spec gd_randomness_opts[] = {
    GD_DTX_KEY, GD_DTX_RUN, GD_DTX_ROUND,
    {"seal-only", NULL, "send only the seal of a secret; prints the secret the reveal needs"},
    {"secret", "HEX", "the 32-byte secret: to reveal (the one --seal-only printed), or to seal "
                      "(default: a fresh random one)"},
    GD_DTX_END,
};

const gd_command gd_cmd_tx_submit_verdict = {
    "tx submit-verdict", "", 0, 0,
    "Seal (verify window) or reveal (open window) a verdict on a check (MsgSubmitVerdict).",
    "--seal-only sends the salted seal of the verdict and digest and prints the salt (a\n"
    "fresh random one unless --salt is given); in the open window the same command with\n"
    "--salt instead of --seal-only reveals. A FAIL or UNAVAILABLE pays the run's fail_bond.",
    gd_submit_verdict_opts, gd_run_tx_submit_verdict,
};

const gd_command gd_cmd_tx_dispute = {
    "tx dispute", "", 0, 0,
    "Seal (dispute window) or reveal (dispute_open window) a re-check (MsgDispute).",
    "As submit-verdict: --seal-only prints the salt, the reveal takes it with --salt.",
    gd_dispute_opts, gd_run_tx_dispute,
};

const gd_command gd_cmd_tx_attest_round = {
    "tx attest-round", "", 0, 0,
    "Seal (attest window) or reveal (attest_open) the state hash of G_{r+1} (MsgAttestRound).",
    "As submit-verdict: --seal-only prints the salt, the reveal takes it with --salt.",
    gd_attest_round_opts, gd_run_tx_attest_round,
};

const gd_command gd_cmd_tx_randomness = {
    "tx randomness", "", 0, 0,
    "Seal a secret for a round's seed, or reveal it in the round's reveal window "
    "(MsgRandomness).",
    "--seal-only draws a fresh random secret (unless --secret gives one), sends its seal\n"
    "and prints it; in the round's reveal window, --secret HEX reveals it. A sealed secret\n"
    "that is not revealed costs the run's withhold_slash.",
    gd_randomness_opts, gd_run_tx_randomness,
};
