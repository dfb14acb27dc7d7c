/* tx send | broadcast | decode. */
#include <stdlib.h>
#include <string.h>

#include "chain/wire/tx_decode.h"
#include "common/base64.h"
#include "common/file.h"
#include "plugin/cli/cli_submit.h"

static int gd_run_tx_send(gd_cli *cli, gd_args *args) {
    const char *to = gd_arg(args, "to");
    const char *amount = gd_arg(args, "amount");
    if (to == NULL)
        return gd_cli_usage(cli, args, "--to ADDR is required");
    if (amount == NULL)
        return gd_cli_usage(cli, args, "--amount COINS is required (e.g. 1000ngonka)");
    gd_cli_tx tx;
    gd_any msg = {0};
    int rc = gd_cli_tx_parse(cli, args, &tx);
    if (rc != GD_CLI_CONTINUE)
        goto done;

    /* Addresses are re-encoded in canonical lower case; coins sorted. */
    char to_canon[GD_ADDRESS_STR_MAX];
    if (gd_address_canonical(to_canon, sizeof to_canon, to) != GD_OK) {
        rc = gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--to"));
        goto done;
    }
    gd_coin coins[GD_COINS_MAX];
    size_t n_coins = 0;
    if (gd_coins_parse(coins, GD_COINS_MAX, &n_coins, amount, 1) != GD_OK) {
        rc = gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "--amount"));
        goto done;
    }
    if (n_coins == 0) {
        rc = gd_cli_usage(cli, args, "--amount is empty");
        goto done;
    }
    if ((rc = gd_cli_tx_load_key(cli, args, &tx)) != GD_CLI_CONTINUE)
        goto done;
    gd_status s = gd_msg_send(&msg, tx.signer, to_canon, coins, n_coins);
    rc = s == GD_OK ? gd_cli_tx_send(cli, args, &tx, &msg, 1) : gd_cli_fail(cli, s);
done:
    gd_any_free(&msg);
    gd_cli_tx_end(&tx);
    return rc;
}

/* Reads --tx-base64 or --tx-file (raw bytes or base64 text) into raw.
 * Returns -1 on success; on failure raw is freed and an exit code returned. */
static int gd_cli_read_tx(gd_cli *cli, gd_args *args, const char *positional, gd_buf *raw) {
    const char *b64 = positional ? positional : gd_arg(args, "tx-base64");
    const char *file = gd_arg(args, "tx-file");
    if ((b64 != NULL) == (file != NULL))
        return gd_cli_usage(cli, args, "give the transaction as base64 or with --tx-file FILE");
    gd_buf text = {0};
    const char *src = b64;
    size_t n = b64 ? strlen(b64) : 0;
    bool raw_fallback = false;
    if (file) {
        gd_status s = gd_file_read(&text, file, 4 * GD_TX_MAX_BYTES);
        if (s != GD_OK) {
            gd_buf_free(&text);
            return gd_cli_fail(cli, s);
        }
        /* A file may hold base64 text (as tx send --offline prints) or raw bytes. */
        src = (const char *)text.data;
        n = text.len;
        while (n > 0 && (src[n - 1] == '\n' || src[n - 1] == '\r' || src[n - 1] == ' '))
            n--;
        raw_fallback = true;
    }
    gd_status s = gd_buf_reserve(raw, gd_base64_decoded_max(n) + 1);
    if (s == GD_OK)
        s = gd_base64_decode(raw->data, raw->cap, &raw->len, src ? src : "", n);
    if (s != GD_OK && raw_fallback) {
        raw->len = 0;
        s = gd_buf_append(raw, text.data, text.len);
    }
    gd_buf_free(&text);
    if (s == GD_OK)
        return GD_CLI_CONTINUE;
    gd_buf_free(raw);
    return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "transaction base64"));
}

static int gd_run_tx_broadcast(gd_cli *cli, gd_args *args) {
    gd_buf raw = {0};
    int rc = gd_cli_read_tx(cli, args, args->n_positional ? args->positional[0] : NULL, &raw);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_decoded_tx *dec = NULL;
    gd_status s = gd_tx_decode(&dec, raw.data, raw.len);
    gd_decoded_tx_free(dec);
    if (s != GD_OK) {
        gd_buf_free(&raw);
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "not a valid transaction"));
    }
    gd_rpc *rpc = NULL;
    if ((rc = gd_cli_open_rpc(cli, args, &rpc)) != GD_CLI_CONTINUE) {
        gd_buf_free(&raw);
        return rc;
    }
    gd_submit_options opt;
    gd_submit_options_default(&opt);
    opt.wait = !gd_flag(args, "no-wait");
    if ((rc = gd_cli_duration_opt(cli, args, "wait-timeout", &opt.wait_timeout_ms)) != GD_CLI_CONTINUE)
        goto out;
    gd_signed_tx tx = {.raw = raw};
    gd_tx_hash(tx.hash, tx.hash_hex, raw.data, raw.len);
    gd_submit_result r;
    s = gd_tx_broadcast_signed(rpc, &tx, &opt, &r);
    rc = s == GD_OK ? gd_cli_print_submit(cli, args, &r) : gd_cli_submit_failed(cli, args, &r, s);
out:
    gd_rpc_close(rpc);
    gd_buf_free(&raw);
    return rc;
}

static int gd_run_tx_decode(gd_cli *cli, gd_args *args) {
    gd_buf raw = {0};
    int rc = gd_cli_read_tx(cli, args, args->n_positional ? args->positional[0] : NULL, &raw);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    gd_decoded_tx *tx = NULL;
    gd_status s = gd_tx_decode(&tx, raw.data, raw.len);
    if (s != GD_OK) {
        gd_buf_free(&raw);
        return gd_cli_fail(cli, gd_fail_context(GD_ERR_INVALID, "not a valid transaction"));
    }
    char txhash[GD_TXHASH_HEX_LEN + 1], signer[GD_ADDRESS_STR_MAX] = "";
    uint8_t hash[32];
    gd_tx_hash(hash, txhash, raw.data, raw.len);
    if (gd_decoded_tx_signer(tx, signer, sizeof signer) != GD_OK)
        signer[0] = '\0';
    const char *chain_id = gd_arg(args, "chain-id");
    uint64_t account_number = 0;
    const char *verified = NULL;
    if ((rc = gd_cli_u64_opt(cli, args, &account_number, "account-number")) != GD_CLI_CONTINUE)
        goto done;
    if (chain_id) {
        s = gd_decoded_tx_verify(tx, chain_id, account_number);
        if (s != GD_OK) {
            rc = gd_cli_fail(cli, s);
            goto done;
        }
        verified = "valid";
    }
    json_t *j = gd_decoded_tx_to_json(tx);
    if (j) {
        json_object_set_new(j, "txhash", json_string(txhash));
        json_object_set_new(j, "signer", json_string(signer));
        if (verified)
            json_object_set_new(j, "signature", json_string(verified));
    }
    rc = gd_cli_print_json(cli, j);
done:
    gd_decoded_tx_free(tx);
    gd_buf_free(&raw);
    return rc;
}

static const gd_opt_spec gd_tx_send_opts[] = {
    {"key", "FILE", "signer's key file"},
    {"to", "ADDR", "recipient gonka1... address"},
    {"amount", "COINS", "amount, e.g. 1000ngonka (1 GNK = 1000000000ngonka)"},
    GD_TX_OPTS,
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_tx_send = {
    "tx send", "", 0, 0,
    "Send coins (cosmos.bank.v1beta1.MsgSend), signed in SIGN_MODE_DIRECT.",
    "Online, the account number and sequence are read from the node, a sequence mismatch\n"
    "(code 32) is resolved by signing again with the sequence the chain expects, and the\n"
    "command waits until the transaction is in a block. With --offline it prints the\n"
    "signed transaction (base64 TxRaw) and its hash; --json prints\n"
    "{\"tx_base64\": ..., \"txhash\": ...}. Broadcast it later with 'tx broadcast'.",
    gd_tx_send_opts, gd_run_tx_send,
};

static const gd_opt_spec gd_tx_broadcast_opts[] = {
    {"tx-base64", "B64", "the signed transaction (as 'tx send --offline' prints it)"},
    {"tx-file", "FILE", "read the transaction (base64 text or raw bytes) from FILE"},
    {"no-wait", NULL, "return once the node accepts it, without waiting for a block"},
    {"wait-timeout", "DURATION", "how long to wait for a block (default 30s)"},
    GD_RPC_OPTS,
    {"json", NULL, "print the result as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_tx_broadcast = {
    "tx broadcast", "[TX_BASE64]", 0, 1,
    "Broadcast a signed transaction (broadcast_tx_sync) and wait for its block.",
    NULL, gd_tx_broadcast_opts, gd_run_tx_broadcast,
};

static const gd_opt_spec gd_tx_decode_opts[] = {
    {"tx-base64", "B64", "the transaction as base64"},
    {"tx-file", "FILE", "read the transaction (base64 text or raw bytes) from FILE"},
    {"chain-id", "ID", "also verify the signature for this chain id"},
    {"account-number", "N", "account number for the signature check (default 0)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_tx_decode = {
    "tx decode", "[TX_BASE64]", 0, 1,
    "Decode a transaction as JSON (with the strict checks a Cosmos SDK node applies).",
    "With --chain-id the SIGN_MODE_DIRECT signature is verified too; a bad signature\n"
    "exits with status 1.",
    gd_tx_decode_opts, gd_run_tx_decode,
};
