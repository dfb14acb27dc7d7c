/* Typed queries over abci_query. */
#include "chain/query.h"

#include <stdio.h>
#include <string.h>

#include "chain/epoch_codec.h"
#include "chain/msg.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/query.pb-c.h"
#include "cosmos/crypto/secp256k1/keys.pb-c.h"
#include "cosmos/tx/v1beta1/service.pb-c.h"
#include "inference/inference/query.pb-c.h"

gd_status gd_query_abci(gd_rpc *rpc, const char *path, const uint8_t *req, size_t len,
                        gd_abci_query_result *res, gd_query_error *err) {
    GD_TRY(gd_rpc_abci_query(rpc, path, req, len, 0, res));
    if (err)
        err->abci = res->result;
    if (res->result.code != 0) {
        char why[GD_LOG_MAX + 128];
        gd_abci_code_describe(&res->result, why, sizeof why);
        bool sdk = strcmp(res->result.codespace, "sdk") == 0;
        gd_status s = sdk && (res->result.code == 22 || res->result.code == 38) ? GD_ERR_NOT_FOUND
                                                                                : GD_ERR_CHAIN;
        return gd_fail(s, "query %s failed: %s", path, why);
    }
    return GD_OK;
}

/* gd_query_abci with the request as a protobuf-c message. */
static gd_status gd_query_run(gd_rpc *rpc, const char *path, const ProtobufCMessage *req,
                              gd_abci_query_result *res, gd_query_error *err) {
    gd_buf packed = {0};
    gd_status s = gd_msg_pack(&packed, req);
    if (s == GD_OK)
        s = gd_query_abci(rpc, path, packed.data, packed.len, res, err);
    gd_buf_free(&packed);
    return s;
}

gd_status gd_decode_account_info(const uint8_t *data, size_t len, gd_account_info *out) {
    memset(out, 0, sizeof *out);
    Cosmos__Auth__V1beta1__QueryAccountInfoResponse *resp =
        cosmos__auth__v1beta1__query_account_info_response__unpack(NULL, len, data);
    if (resp == NULL)
        return gd_fail(GD_ERR_PARSE, "AccountInfo answer is not a QueryAccountInfoResponse");
    gd_status s = GD_OK;
    const Cosmos__Auth__V1beta1__BaseAccount *acc = resp->info;
    if (acc == NULL) {
        s = gd_fail(GD_ERR_PARSE, "AccountInfo answer holds no account");
        goto done;
    }
    if (acc->address == NULL || strlen(acc->address) >= sizeof out->address) {
        s = gd_fail(GD_ERR_PARSE, "AccountInfo answer has a malformed address");
        goto done;
    }
    strcpy(out->address, acc->address);
    out->account_number = acc->account_number;
    out->sequence = acc->sequence;
    if (acc->pub_key != NULL && acc->pub_key->type_url != NULL &&
        strcmp(acc->pub_key->type_url, "/cosmos.crypto.secp256k1.PubKey") == 0) {
        Cosmos__Crypto__Secp256k1__PubKey *pk = cosmos__crypto__secp256k1__pub_key__unpack(
            NULL, acc->pub_key->value.len, acc->pub_key->value.data);
        if (pk != NULL && pk->key.len == GD_PUBKEY_LEN) {
            memcpy(out->pubkey, pk->key.data, GD_PUBKEY_LEN);
            out->has_pubkey = true;
        }
        if (pk != NULL)
            cosmos__crypto__secp256k1__pub_key__free_unpacked(pk, NULL);
    }
done:
    cosmos__auth__v1beta1__query_account_info_response__free_unpacked(resp, NULL);
    return s;
}

gd_status gd_query_account_info(gd_rpc *rpc, const char *address, gd_account_info *out,
                                gd_query_error *err) {
    GD_TRY(gd_address_check(address));
    Cosmos__Auth__V1beta1__QueryAccountInfoRequest req =
        COSMOS__AUTH__V1BETA1__QUERY_ACCOUNT_INFO_REQUEST__INIT;
    req.address = (char *)address;
    gd_abci_query_result res = {0};
    gd_status s = gd_query_run(rpc, GD_PATH_ACCOUNT_INFO, &req.base, &res, err);
    if (s == GD_ERR_NOT_FOUND)
        s = gd_fail(GD_ERR_NOT_FOUND, "account %s does not exist on chain yet (it exists once "
                                      "it has received funds)", address);
    if (s == GD_OK)
        s = gd_decode_account_info(res.value.data, res.value.len, out);
    if (s == GD_OK && strcmp(out->address, address) != 0)
        s = gd_fail(GD_ERR_PARSE, "node answered for account %s instead of %s", out->address,
                    address);
    gd_abci_query_result_free(&res);
    return s;
}

gd_status gd_decode_balance(const uint8_t *data, size_t len, gd_coin *out) {
    Cosmos__Bank__V1beta1__QueryBalanceResponse *resp =
        cosmos__bank__v1beta1__query_balance_response__unpack(NULL, len, data);
    if (resp == NULL)
        return gd_fail(GD_ERR_PARSE, "Balance answer is not a QueryBalanceResponse");
    gd_status s = GD_OK;
    const Cosmos__Base__V1beta1__Coin *c = resp->balance;
    const char *denom = c && c->denom ? c->denom : "";
    const char *amount = c && c->amount && c->amount[0] ? c->amount : "0";
    if (strlen(denom) > GD_DENOM_MAX || strlen(amount) > GD_AMOUNT_DIGITS_MAX ||
        (denom[0] && gd_denom_check(denom) != GD_OK) || gd_amount_check(amount) != GD_OK) {
        s = gd_fail(GD_ERR_PARSE, "Balance answer holds a malformed coin");
    } else {
        strcpy(out->denom, denom);
        strcpy(out->amount, amount);
    }
    cosmos__bank__v1beta1__query_balance_response__free_unpacked(resp, NULL);
    return s;
}

gd_status gd_query_balance(gd_rpc *rpc, const char *address, const char *denom, gd_coin *out,
                           gd_query_error *err) {
    GD_TRY(gd_address_check(address));
    GD_TRY(gd_denom_check(denom));
    Cosmos__Bank__V1beta1__QueryBalanceRequest req =
        COSMOS__BANK__V1BETA1__QUERY_BALANCE_REQUEST__INIT;
    req.address = (char *)address;
    req.denom = (char *)denom;
    gd_abci_query_result res = {0};
    gd_status s = gd_query_run(rpc, GD_PATH_BALANCE, &req.base, &res, err);
    if (s == GD_OK)
        s = gd_decode_balance(res.value.data, res.value.len, out);
    if (s == GD_OK && out->denom[0] == '\0')
        strcpy(out->denom, denom); /* an empty balance omits the denom */
    if (s == GD_OK && strcmp(out->denom, denom) != 0)
        s = gd_fail(GD_ERR_PARSE, "node answered for denom %s instead of %s", out->denom, denom);
    gd_abci_query_result_free(&res);
    return s;
}

gd_status gd_decode_epoch_info(const uint8_t *data, size_t len, gd_epoch_info *out) {
    memset(out, 0, sizeof *out);
    Inference__Inference__QueryEpochInfoResponse *resp =
        inference__inference__query_epoch_info_response__unpack(NULL, len, data);
    if (resp == NULL)
        return gd_fail(GD_ERR_PARSE, "EpochInfo answer is not a QueryEpochInfoResponse");
    gd_status s = GD_OK;
    if (resp->params == NULL || resp->params->epoch_params == NULL) {
        s = gd_fail(GD_ERR_PARSE, "EpochInfo answer has no epoch params");
        goto done;
    }
    const Inference__Inference__EpochParams *ep = resp->params->epoch_params;
    out->block_height = resp->block_height;
    if (resp->latest_epoch) {
        out->epoch.index = resp->latest_epoch->index;
        out->epoch.poc_start_block_height = resp->latest_epoch->poc_start_block_height;
    }
    gd_epoch_params_from_proto(&out->params, ep);
    if (gd_epoch_params_check(&out->params) != GD_OK) {
        s = gd_fail_context(GD_ERR_PARSE, "EpochInfo answer has invalid epoch params");
        goto done;
    }
    if (out->block_height < 0 || out->epoch.poc_start_block_height < 0)
        s = gd_fail(GD_ERR_PARSE, "EpochInfo answer has negative heights");
done:
    inference__inference__query_epoch_info_response__free_unpacked(resp, NULL);
    return s;
}

gd_status gd_query_epoch_info(gd_rpc *rpc, gd_epoch_info *out, gd_query_error *err) {
    Inference__Inference__QueryEpochInfoRequest req =
        INFERENCE__INFERENCE__QUERY_EPOCH_INFO_REQUEST__INIT;
    gd_abci_query_result res = {0};
    gd_status s = gd_query_run(rpc, GD_PATH_EPOCH_INFO, &req.base, &res, err);
    if (s == GD_OK)
        s = gd_decode_epoch_info(res.value.data, res.value.len, out);
    gd_abci_query_result_free(&res);
    return s;
}

gd_status gd_decode_simulate(const uint8_t *data, size_t len, uint64_t *gas_used) {
    Cosmos__Tx__V1beta1__SimulateResponse *resp =
        cosmos__tx__v1beta1__simulate_response__unpack(NULL, len, data);
    if (resp == NULL)
        return gd_fail(GD_ERR_PARSE, "Simulate answer is not a SimulateResponse");
    gd_status s = GD_OK;
    if (resp->gas_info == NULL || resp->gas_info->gas_used == 0)
        s = gd_fail(GD_ERR_PARSE, "Simulate answer has no gas used");
    else
        *gas_used = resp->gas_info->gas_used;
    cosmos__tx__v1beta1__simulate_response__free_unpacked(resp, NULL);
    return s;
}

gd_status gd_query_simulate(gd_rpc *rpc, const uint8_t *tx, size_t len, uint64_t *gas_used,
                            gd_query_error *err) {
    Cosmos__Tx__V1beta1__SimulateRequest req = COSMOS__TX__V1BETA1__SIMULATE_REQUEST__INIT;
    req.tx_bytes.data = (uint8_t *)tx;
    req.tx_bytes.len = len;
    gd_abci_query_result res = {0};
    gd_status s = gd_query_run(rpc, GD_PATH_SIMULATE, &req.base, &res, err);
    if (s == GD_OK)
        s = gd_decode_simulate(res.value.data, res.value.len, gas_used);
    gd_abci_query_result_free(&res);
    return s;
}
