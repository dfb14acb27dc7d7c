/* Transaction submission with sequence resync and inclusion polling. */
#include "chain/client/submit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "chain/client/query.h"
#include "chain/keys/address.h"
#include "common/bytes.h"
#include "common/clock.h"
#include "common/log.h"

void gd_submit_options_default(gd_submit_options *opt) {
    *opt = (gd_submit_options){
        .gas_adjustment = 1.0,
        .wait = true,
        .wait_timeout_ms = 30000,
        .poll_interval_ms = 300,
        .max_sequence_retries = 3,
    };
}

gd_status gd_parse_expected_sequence(const char *log, uint64_t *expected) {
    const char *p = strstr(log, "expected ");
    if (p == NULL)
        return gd_fail(GD_ERR_PARSE, "no expected sequence in '%.100s'", log);
    p += strlen("expected ");
    uint64_t v = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 20; p++, digits++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return gd_fail(GD_ERR_PARSE, "expected sequence out of range");
        v = v * 10 + d;
    }
    if (digits == 0)
        return gd_fail(GD_ERR_PARSE, "no expected sequence in '%.100s'", log);
    *expected = v;
    return GD_OK;
}

static void gd_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool gd_is_sdk(const gd_abci_code *c, uint32_t code) {
    return c->code == code && strcmp(c->codespace, "sdk") == 0;
}

/* On a signature failure, a chain-id that differs from the node's network
 * is by far the likeliest cause: say so. */
static bool gd_explain_unauthorized(gd_rpc *rpc, const gd_tx_request *req, char *hint,
                                    size_t cap) {
    gd_node_status st;
    hint[0] = '\0';
    if (gd_rpc_status(rpc, &st) != GD_OK || strcmp(st.network, req->chain_id) == 0)
        return false;
    snprintf(hint, cap, "; the node's chain-id is '%s' but the transaction was signed for '%s'",
             st.network, req->chain_id);
    return true;
}

static gd_status gd_fill_gas(gd_rpc *rpc, const gd_key *key, gd_tx_request *req,
                             const gd_submit_options *opt) {
    gd_signed_tx probe = {0};
    uint64_t used = 0;
    if (req->gas_limit == 0)
        req->gas_limit = GD_GAS_DEFAULT; /* placeholder for the simulated tx */
    gd_status s = gd_tx_sign(&probe, key, req);
    if (s == GD_OK)
        s = gd_query_simulate(rpc, probe.raw.data, probe.raw.len, &used, NULL);
    gd_signed_tx_free(&probe);
    if (s != GD_OK)
        return gd_fail_context(s, "--gas auto");
    double adj = opt->gas_adjustment > 0 ? opt->gas_adjustment : 1.0;
    double gas = ceil((double)used * adj);
    req->gas_limit = gas >= 1.8e19 ? UINT64_MAX : (uint64_t)gas;
    GD_LOG_INFO("tx", "simulated gas %llu, limit %llu", (unsigned long long)used,
                (unsigned long long)req->gas_limit);
    return GD_OK;
}

/* "10ngonka,5stake": the fee coins of req, "" for none. */
static void gd_fee_text(const gd_tx_request *req, char *out, size_t cap) {
    gd_coin coins[GD_COINS_MAX];
    size_t n = gd_tx_fee_coins(req, coins), len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && len < cap; i++) {
        int w = snprintf(out + len, cap - len, "%s%s%s", i ? "," : "", coins[i].amount,
                         coins[i].denom);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

#define GD_FIRST_POLL_MS 25L

gd_status gd_tx_await(gd_rpc *rpc, gd_submit_result *out, const uint8_t hash[32],
                      const gd_submit_options *opt) {
    char hex[GD_TXHASH_HEX_LEN + 1];
    gd_hex_encode(hex, hash, 32, true);
    int64_t start = gd_clock_ms(), deadline = start + opt->wait_timeout_ms;
    for (;;) {
        gd_tx_result r;
        gd_status s = gd_rpc_tx(rpc, &r, hash);
        if (s == GD_OK) {
            out->included = true;
            out->height = r.height;
            out->deliver = r.result;
            out->gas_wanted = r.gas_wanted;
            out->gas_used = r.gas_used;
            if (r.result.code != 0) {
                char why[GD_LOG_MAX + 128];
                gd_abci_code_describe(&r.result, why, sizeof why);
                return gd_fail(GD_ERR_CHAIN, "transaction %s was included at height %lld but "
                                             "failed: %s", hex, (long long)r.height,
                               why);
            }
            return GD_OK;
        }
        if (s != GD_ERR_NOT_FOUND && s != GD_ERR_NETWORK && s != GD_ERR_TIMEOUT)
            return s;
        if (gd_clock_ms() >= deadline)
            return gd_fail(GD_ERR_TIMEOUT, "transaction %s was accepted but not seen in a block "
                                           "within %ld ms; it may still be included (check "
                                           "with the node's /tx?hash=0x%s)", hex,
                           opt->wait_timeout_ms, hex);
        /* The transaction lands in the next block, whenever that is: the
         * pause is 25 ms plus an eighth of the time waited so far (at most
         * poll_interval_ms), so a short block is seen a few tens of ms after
         * it is made, and a long one costs a few more polls. */
        long pause = GD_FIRST_POLL_MS + (long)(gd_clock_ms() - start) / 8;
        gd_sleep_ms(pause < opt->poll_interval_ms ? pause : opt->poll_interval_ms);
    }
}

/* Broadcasts signed bytes once. GD_OK when the mempool accepted them (or
 * already held them: code 19); GD_ERR_CHAIN with out->check set when CheckTx
 * rejected them; a transport error otherwise. */
static gd_status gd_broadcast_once(gd_rpc *rpc, const gd_signed_tx *tx, gd_submit_result *out) {
    gd_broadcast_result b;
    memcpy(out->txhash, tx->hash_hex, sizeof out->txhash);
    gd_status s = gd_rpc_broadcast_tx_sync(rpc, &b, tx->raw.data, tx->raw.len);
    if (s != GD_OK)
        return gd_fail_context(s, "broadcasting transaction %s (it may still reach the chain)",
                               tx->hash_hex);
    out->check = b.result;
    if (b.result.code == 0 || gd_is_sdk(&b.result, 19))
        return GD_OK;
    char why[GD_LOG_MAX + 128];
    gd_abci_code_describe(&b.result, why, sizeof why);
    return gd_fail(GD_ERR_CHAIN, "node rejected transaction %s: %s", tx->hash_hex, why);
}

gd_status gd_tx_broadcast_signed(gd_rpc *rpc, const gd_signed_tx *tx,
                                 const gd_submit_options *opt, gd_submit_result *out) {
    memset(out, 0, sizeof *out);
    GD_TRY(gd_broadcast_once(rpc, tx, out));
    return opt->wait ? gd_tx_await(rpc, out, tx->hash, opt) : GD_OK;
}

gd_status gd_tx_submit(gd_rpc *rpc, const gd_key *key, gd_tx_request *req,
                       const gd_submit_options *opt, gd_submit_result *out) {
    memset(out, 0, sizeof *out);
    if (!opt->have_account) {
        char address[GD_ADDRESS_STR_MAX];
        gd_account_info acc;
        GD_TRY(gd_address_from_pubkey(address, sizeof address, GD_ADDRESS_PREFIX, key->pubkey));
        GD_TRY(gd_query_account_info(rpc, &acc, address, NULL));
        if (acc.has_pubkey && memcmp(acc.pubkey, key->pubkey, GD_PUBKEY_LEN) != 0)
            return gd_fail(GD_ERR_CRYPTO, "account %s has a different public key on chain",
                           address);
        req->account_number = acc.account_number;
        req->sequence = acc.sequence;
    }
    if (opt->gas_auto)
        GD_TRY(gd_fill_gas(rpc, key, req, opt));
    gd_signed_tx tx = {0};
    gd_status s = GD_OK;
    for (int attempt = 0;; attempt++) {
        gd_signed_tx_free(&tx);
        s = gd_tx_sign(&tx, key, req);
        if (s != GD_OK)
            break;
        out->account_number = req->account_number;
        out->sequence = req->sequence;
        out->gas_limit = req->gas_limit;
        gd_fee_text(req, out->fee, sizeof out->fee);
        s = gd_broadcast_once(rpc, &tx, out);
        uint64_t expected;
        if (s == GD_ERR_CHAIN && gd_is_sdk(&out->check, 32) &&
            attempt < opt->max_sequence_retries &&
            gd_parse_expected_sequence(out->check.log, &expected) == GD_OK) {
            GD_LOG_INFO("tx", "sequence %llu rejected, chain expects %llu; signing again",
                        (unsigned long long)req->sequence, (unsigned long long)expected);
            req->sequence = expected;
            continue;
        }
        if (s == GD_ERR_CHAIN && gd_is_sdk(&out->check, 4)) {
            char hint[256], detail[GD_LOG_MAX + 256];
            snprintf(detail, sizeof detail, "%s", gd_error_detail());
            out->wrong_chain = gd_explain_unauthorized(rpc, req, hint, sizeof hint);
            s = gd_fail(s, "%s%s", detail, hint);
        }
        break;
    }
    if (s == GD_OK && opt->wait)
        s = gd_tx_await(rpc, out, tx.hash, opt);
    gd_signed_tx_free(&tx);
    return s;
}
