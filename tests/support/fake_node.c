/* Scripted node for client tests (see fake_node.h). */
#include "tests/support/fake_node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/wire/epoch_codec.h"
#include "chain/wire/tx.h"
#include "chain/wire/tx_decode.h"
#include "common/base64.h"
#include "common/bytes.h"
#include "common/hash.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/query.pb-c.h"
#include "cosmos/tx/v1beta1/service.pb-c.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"
#include "inference/inference/query.pb-c.h"

void fake_node_init(fake_node *node, const char *address) {
    memset(node, 0, sizeof *node);
    snprintf(node->chain_id, sizeof node->chain_id, "prod-sim");
    snprintf(node->address, sizeof node->address, "%s", address);
    snprintf(node->balance, sizeof node->balance, "1000000");
    node->account_number = 7;
    node->height = 100;
    gd_epoch_params_mainnet(&node->epoch_params);
    node->epoch.index = 5;
    node->epoch.poc_start_block_height = 86400;
    node->simulate_gas = 80000;
}

static json_t *fake_abci(uint32_t code, const char *log, const ProtobufCMessage *msg,
                         int64_t height) {
    char h[24];
    snprintf(h, sizeof h, "%lld", (long long)height);
    json_t *resp = json_pack("{s:s}", "height", h);
    if (code) {
        json_object_set_new(resp, "code", json_integer(code));
        json_object_set_new(resp, "codespace", json_string("sdk"));
        json_object_set_new(resp, "log", json_string(log));
    } else if (msg) {
        size_t n = protobuf_c_message_get_packed_size(msg);
        uint8_t *buf = malloc(n + 1);
        protobuf_c_message_pack(msg, buf);
        char *b64 = malloc(gd_base64_encoded_len(n) + 1);
        gd_base64_encode(b64, buf, n);
        json_object_set_new(resp, "value", json_string(b64));
        free(buf);
        free(b64);
    }
    return json_pack("{s:o}", "response", resp);
}

static json_t *fake_query(fake_node *node, const char *path, const uint8_t *data, size_t len) {
    if (strcmp(path, "/cosmos.auth.v1beta1.Query/AccountInfo") == 0) {
        Cosmos__Auth__V1beta1__QueryAccountInfoRequest *req =
            cosmos__auth__v1beta1__query_account_info_request__unpack(NULL, len, data);
        bool known = req && node->address[0] && strcmp(req->address, node->address) == 0;
        if (req)
            cosmos__auth__v1beta1__query_account_info_request__free_unpacked(req, NULL);
        if (!known)
            return fake_abci(22, "account not found: key not found", NULL, node->height);
        Cosmos__Auth__V1beta1__BaseAccount acc = COSMOS__AUTH__V1BETA1__BASE_ACCOUNT__INIT;
        acc.address = node->address;
        acc.account_number = node->account_number;
        acc.sequence = node->reported_sequence;
        Cosmos__Auth__V1beta1__QueryAccountInfoResponse resp =
            COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_INFO_RESPONSE__INIT;
        resp.info = &acc;
        return fake_abci(0, NULL, &resp.base, node->height);
    }
    if (strcmp(path, "/cosmos.bank.v1beta1.Query/Balance") == 0) {
        Cosmos__Bank__V1beta1__QueryBalanceRequest *req =
            cosmos__bank__v1beta1__query_balance_request__unpack(NULL, len, data);
        Cosmos__Base__V1beta1__Coin coin = COSMOS__BASE__V1BETA1__COIN__INIT;
        coin.denom = req ? req->denom : "";
        bool mine = req && strcmp(req->address, node->address) == 0 &&
                    strcmp(req->denom, "ngonka") == 0;
        coin.amount = mine ? node->balance : "0";
        Cosmos__Bank__V1beta1__QueryBalanceResponse resp =
            COSMOS__BANK__V1BETA1__QUERY_BALANCE_RESPONSE__INIT;
        resp.balance = &coin;
        json_t *j = fake_abci(0, NULL, &resp.base, node->height);
        if (req)
            cosmos__bank__v1beta1__query_balance_request__free_unpacked(req, NULL);
        return j;
    }
    if (strcmp(path, "/inference.inference.Query/EpochInfo") == 0) {
        const gd_epoch_params *p = &node->epoch_params;
        Inference__Inference__EpochParams ep;
        gd_epoch_params_to_proto(&ep, p);
        Inference__Inference__Params params = INFERENCE__INFERENCE__PARAMS__INIT;
        params.epoch_params = &ep;
        Inference__Inference__Epoch epoch = INFERENCE__INFERENCE__EPOCH__INIT;
        epoch.index = node->epoch.index;
        epoch.poc_start_block_height = node->epoch.poc_start_block_height;
        Inference__Inference__QueryEpochInfoResponse resp =
            INFERENCE__INFERENCE__QUERY_EPOCH_INFO_RESPONSE__INIT;
        resp.block_height = node->height;
        resp.params = &params;
        resp.latest_epoch = &epoch;
        return fake_abci(0, NULL, &resp.base, node->height);
    }
    if (strcmp(path, "/cosmos.tx.v1beta1.Service/Simulate") == 0) {
        Cosmos__Base__Abci__V1beta1__GasInfo gas = COSMOS__BASE__ABCI__V1BETA1__GAS_INFO__INIT;
        gas.gas_used = node->simulate_gas;
        gas.gas_wanted = node->simulate_gas;
        Cosmos__Tx__V1beta1__SimulateResponse resp = COSMOS__TX__V1BETA1__SIMULATE_RESPONSE__INIT;
        resp.gas_info = &gas;
        return fake_abci(0, NULL, &resp.base, node->height);
    }
    return fake_abci(6, "unknown query path", NULL, node->height);
}

static json_t *fake_check_tx(fake_node *node, const uint8_t *raw, size_t len, int *code_out) {
    char hash_hex[65], log[256] = "";
    uint8_t hash[32];
    uint32_t code = 0;
    gd_tx_hash(hash, hash_hex, raw, len);
    gd_decoded_tx *dec = NULL;
    Cosmos__Tx__V1beta1__TxRaw *txraw = cosmos__tx__v1beta1__tx_raw__unpack(NULL, len, raw);
    Cosmos__Tx__V1beta1__AuthInfo *auth =
        txraw ? cosmos__tx__v1beta1__auth_info__unpack(NULL, txraw->auth_info_bytes.len,
                                                        txraw->auth_info_bytes.data)
              : NULL;
    if (node->in_mempool && strcmp(hash_hex, node->last_txhash) == 0) {
        *code_out = -1; /* CometBFT answers this as a JSON-RPC error */
        goto out;
    }
    if (gd_tx_decode(&dec, raw, len) != GD_OK || auth == NULL || auth->n_signer_infos != 1) {
        code = 2;
        snprintf(log, sizeof log, "tx parse error");
    } else if (auth->signer_infos[0]->sequence != node->sequence) {
        code = 32;
        snprintf(log, sizeof log,
                 "account sequence mismatch, expected %llu, got %llu: incorrect account sequence",
                 (unsigned long long)node->sequence,
                 (unsigned long long)auth->signer_infos[0]->sequence);
    } else if (gd_decoded_tx_verify(dec, node->chain_id, node->account_number) != GD_OK) {
        code = 4;
        snprintf(log, sizeof log,
                 "signature verification failed; please verify account number (%llu) and "
                 "chain-id (%s): unauthorized",
                 (unsigned long long)node->account_number, node->chain_id);
    } else {
        node->sequence++;
        node->reported_sequence = node->sequence;
        node->last_tx_sequence = auth->signer_infos[0]->sequence;
        node->last_tx_gas = auth->fee ? auth->fee->gas_limit : 0;
        node->last_tx_fee[0] = '\0';
        for (size_t i = 0; auth->fee && i < auth->fee->n_amount; i++) {
            size_t used = strlen(node->last_tx_fee);
            snprintf(node->last_tx_fee + used, sizeof node->last_tx_fee - used, "%s%s%s",
                     i ? "," : "", auth->fee->amount[i]->amount, auth->fee->amount[i]->denom);
        }
        snprintf(node->last_txhash, sizeof node->last_txhash, "%s", hash_hex);
        node->in_mempool = true;
        node->tx_polls = 0;
    }
    *code_out = (int)code;
out:
    gd_decoded_tx_free(dec);
    if (auth)
        cosmos__tx__v1beta1__auth_info__free_unpacked(auth, NULL);
    if (txraw)
        cosmos__tx__v1beta1__tx_raw__free_unpacked(txraw, NULL);
    json_t *r = json_pack("{s:s,s:s}", "hash", hash_hex, "log", log);
    if (code) {
        json_object_set_new(r, "code", json_integer(code));
        json_object_set_new(r, "codespace", json_string("sdk"));
    }
    return r;
}

void fake_node_handler(void *ctx, const gd_mock_request *req, gd_mock_response *resp) {
    fake_node *node = ctx;
    const char *m = req->rpc_method;
    json_t *params = req->rpc_params;
    if (strcmp(m, "status") == 0) {
        char h[24];
        snprintf(h, sizeof h, "%lld", (long long)node->height);
        gd_mock_result(resp, req,
                       json_pack("{s:{s:s,s:s,s:s,s:s},s:{s:s,s:s,s:b}}", "node_info", "network",
                                 node->chain_id, "moniker", "fake", "version", "0.38.17", "id",
                                 "f00d", "sync_info", "latest_block_height", h,
                                 "latest_block_time", "2026-11-29T00:00:00Z", "catching_up", 0));
    } else if (strcmp(m, "abci_query") == 0) {
        const char *path = json_string_value(json_object_get(params, "path"));
        const char *hex = json_string_value(json_object_get(params, "data"));
        uint8_t data[4096];
        size_t n = 0;
        if (!path || !hex || gd_hex_decode(data, sizeof data, &n, hex, strlen(hex)) != GD_OK) {
            gd_mock_error(resp, req, -32602, "Invalid params", "bad abci_query params");
            return;
        }
        gd_mock_result(resp, req, fake_query(node, path, data, n));
    } else if (strcmp(m, "broadcast_tx_sync") == 0) {
        const char *b64 = json_string_value(json_object_get(params, "tx"));
        uint8_t raw[65536];
        size_t n = 0;
        node->broadcasts++;
        if (!b64 || gd_base64_decode(raw, sizeof raw, &n, b64, strlen(b64)) != GD_OK) {
            gd_mock_error(resp, req, -32602, "Invalid params", "bad tx");
            return;
        }
        int code = 0;
        json_t *r = fake_check_tx(node, raw, n, &code);
        if (code == -1) {
            json_decref(r);
            gd_mock_error(resp, req, -32603, "Internal error", "tx already exists in cache");
        } else if (code == 0 && node->drop_first_broadcast) {
            node->drop_first_broadcast = false;
            json_decref(r);
            resp->drop = true;
        } else {
            gd_mock_result(resp, req, r);
        }
    } else if (strcmp(m, "tx") == 0) {
        node->tx_polls++;
        if (!node->in_mempool || node->never_include ||
            node->tx_polls <= node->polls_before_found) {
            gd_mock_error(resp, req, -32603, "Internal error", "tx (...) not found");
            return;
        }
        node->height++;
        char h[24];
        snprintf(h, sizeof h, "%lld", (long long)node->height);
        json_t *txr = json_pack("{s:s,s:s,s:s}", "gas_wanted", "200000", "gas_used", "61234",
                                "log", node->deliver_code ? "insufficient funds" : "");
        if (node->deliver_code) {
            json_object_set_new(txr, "code", json_integer(node->deliver_code));
            json_object_set_new(txr, "codespace", json_string("sdk"));
        }
        gd_mock_result(resp, req,
                       json_pack("{s:s,s:s,s:i,s:o}", "hash", node->last_txhash, "height", h,
                                 "index", 0, "tx_result", txr));
    } else {
        gd_mock_error(resp, req, -32601, "Method not found", m);
    }
}
