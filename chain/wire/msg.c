/* Message encoders. */
#include "chain/wire/msg.h"

#include <stdio.h>
#include <string.h>

#include "chain/keys/address.h"
#include "cosmos/bank/v1beta1/tx.pb-c.h"

void gd_any_free(gd_any *any) {
    gd_buf_free(&any->value);
    any->type_url[0] = '\0';
}

gd_status gd_msg_pack(gd_buf *out, const ProtobufCMessage *msg) {
    size_t size = protobuf_c_message_get_packed_size(msg);
    out->len = 0;
    GD_TRY(gd_buf_reserve(out, size ? size : 1));
    out->len = protobuf_c_message_pack(msg, out->data);
    return GD_OK;
}

gd_status gd_any_pack(gd_any *any, const char *type_url, const ProtobufCMessage *msg) {
    GD_TRY(gd_msg_pack(&any->value, msg));
    snprintf(any->type_url, sizeof any->type_url, "%s", type_url);
    return GD_OK;
}

gd_status gd_msg_send(gd_any *out, const char *from_address, const char *to_address,
                      const gd_coin *amount, size_t n_amount) {
    return gd_msg_send_prefixed(out, GD_ADDRESS_PREFIX, from_address, to_address, amount,
                                n_amount);
}

gd_status gd_msg_send_prefixed(gd_any *out, const char *prefix, const char *from_address,
                               const char *to_address, const gd_coin *amount, size_t n_amount) {
    uint8_t raw[GD_ADDRESS_RAW_MAX];
    size_t raw_len;
    if (gd_address_decode(raw, &raw_len, from_address, prefix) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "sender");
    if (gd_address_decode(raw, &raw_len, to_address, prefix) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "recipient");
    if (n_amount == 0 || n_amount > GD_COINS_MAX)
        return gd_fail(GD_ERR_INVALID, "MsgSend needs 1 to %d coins", GD_COINS_MAX);
    Cosmos__Base__V1beta1__Coin coins[GD_COINS_MAX];
    Cosmos__Base__V1beta1__Coin *coin_ptrs[GD_COINS_MAX];
    for (size_t i = 0; i < n_amount; i++) {
        GD_TRY(gd_denom_check(amount[i].denom));
        GD_TRY(gd_amount_check(amount[i].amount));
        if (strcmp(amount[i].amount, "0") == 0)
            return gd_fail(GD_ERR_INVALID, "MsgSend amounts must be positive");
        if (i > 0 && strcmp(amount[i - 1].denom, amount[i].denom) >= 0)
            return gd_fail(GD_ERR_INVALID, "MsgSend coins must be sorted by denom, no repeats");
        cosmos__base__v1beta1__coin__init(&coins[i]);
        coins[i].denom = (char *)amount[i].denom;
        coins[i].amount = (char *)amount[i].amount;
        coin_ptrs[i] = &coins[i];
    }
    Cosmos__Bank__V1beta1__MsgSend msg = COSMOS__BANK__V1BETA1__MSG_SEND__INIT;
    msg.from_address = (char *)from_address;
    msg.to_address = (char *)to_address;
    msg.n_amount = n_amount;
    msg.amount = coin_ptrs;
    return gd_any_pack(out, "/cosmos.bank.v1beta1.MsgSend", &msg.base);
}
