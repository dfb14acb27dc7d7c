/* Decoders of the answers to the chain queries of chain/client/query.h
 * (chain/wire/query_answer.h). */
#include "chain/wire/query_answer.h"

#include <stdio.h>
#include <string.h>

#include "chain/wire/epoch_codec.h"
#include "chain/wire/msg.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/query.pb-c.h"
#include "cosmos/crypto/secp256k1/keys.pb-c.h"
#include "cosmos/tx/v1beta1/service.pb-c.h"
#include "inference/inference/query.pb-c.h"

gd_status gd_decode_account_info(gd_account_info *out, const uint8_t *data, size_t len) {
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

gd_status gd_decode_balance(gd_coin *out, const uint8_t *data, size_t len) {
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

gd_status gd_decode_epoch_info(gd_epoch_info *out, const uint8_t *data, size_t len) {
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
