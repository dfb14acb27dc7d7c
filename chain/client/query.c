/* Typed queries over abci_query. */
#include "chain/client/query.h"

#include <stdio.h>
#include <string.h>

#include "chain/wire/epoch_codec.h"
#include "chain/wire/msg.h"
#include "cosmos/auth/v1beta1/query.pb-c.h"
#include "cosmos/bank/v1beta1/query.pb-c.h"
#include "cosmos/crypto/secp256k1/keys.pb-c.h"
#include "cosmos/tx/v1beta1/service.pb-c.h"
#include "inference/inference/query.pb-c.h"

gd_status gd_query_abci(gd_rpc *rpc, const char *path, const uint8_t *req, size_t len,
                        gd_abci_query_result *res, gd_query_error *err) {
    GD_TRY(gd_rpc_abci_query(rpc, res, path, req, len, 0));
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

gd_status gd_query_account_info(gd_rpc *rpc, gd_account_info *out, const char *address,
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
        s = gd_decode_account_info(out, res.value.data, res.value.len);
    if (s == GD_OK && strcmp(out->address, address) != 0)
        s = gd_fail(GD_ERR_PARSE, "node answered for account %s instead of %s", out->address,
                    address);
    gd_abci_query_result_free(&res);
    return s;
}

gd_status gd_query_balance(gd_rpc *rpc, gd_coin *out, const char *address, const char *denom,
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
        s = gd_decode_balance(out, res.value.data, res.value.len);
    if (s == GD_OK && out->denom[0] == '\0')
        strcpy(out->denom, denom); /* an empty balance omits the denom */
    if (s == GD_OK && strcmp(out->denom, denom) != 0)
        s = gd_fail(GD_ERR_PARSE, "node answered for denom %s instead of %s", out->denom, denom);
    gd_abci_query_result_free(&res);
    return s;
}

gd_status gd_query_epoch_info(gd_rpc *rpc, gd_epoch_info *out, gd_query_error *err) {
    Inference__Inference__QueryEpochInfoRequest req =
        INFERENCE__INFERENCE__QUERY_EPOCH_INFO_REQUEST__INIT;
    gd_abci_query_result res = {0};
    gd_status s = gd_query_run(rpc, GD_PATH_EPOCH_INFO, &req.base, &res, err);
    if (s == GD_OK)
        s = gd_decode_epoch_info(out, res.value.data, res.value.len);
    gd_abci_query_result_free(&res);
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
