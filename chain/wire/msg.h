/* Transaction messages packed as google.protobuf.Any, ready for a TxBody.
 * Each encoder validates its inputs the way the message's ValidateBasic
 * does on chain, so a malformed message fails here, not after a fee. */
#ifndef GD_CHAIN_WIRE_MSG_H
#define GD_CHAIN_WIRE_MSG_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "chain/wire/coin.h"
#include "common/bytes.h"
#include "common/status.h"

#define GD_TYPE_URL_MAX 128

typedef struct gd_any {
    char type_url[GD_TYPE_URL_MAX];
    gd_buf value; /* serialized message; owned */
} gd_any;

void gd_any_free(gd_any *any);

/* Packs a protobuf-c message into out, replacing its contents (out->data
 * is allocated even for an empty message). */
gd_status gd_msg_pack(gd_buf *out, const ProtobufCMessage *msg) GD_MUST_CHECK;

/* Packs a protobuf-c message into any->value under type_url (the other
 * message encoders, such as chain/wire/diloco_msg.h, share it). */
gd_status gd_any_pack(gd_any *any, const char *type_url,
                      const ProtobufCMessage *msg) GD_MUST_CHECK;

/* /cosmos.bank.v1beta1.MsgSend from one Gonka address to another. */
gd_status gd_msg_send(gd_any *out, const char *from_address, const char *to_address,
                      const gd_coin *amount, size_t n_amount) GD_MUST_CHECK;

/* The same for any bech32 account prefix (tests use Cosmos SDK vectors with
 * prefix "cosmos"). */
gd_status gd_msg_send_prefixed(gd_any *out, const char *prefix, const char *from_address,
                               const char *to_address, const gd_coin *amount,
                               size_t n_amount) GD_MUST_CHECK;

#endif
