/* Decoding transactions from outside bytes, with the strictness of the
 * Cosmos SDK's decoder (x/tx/decode, ADR-027): TxRaw fields in ascending
 * order with minimal varint lengths, no unknown fields in TxRaw or AuthInfo,
 * only non-critical (field number bit 11 set) unknown fields in TxBody. */
#ifndef GD_CHAIN_WIRE_TX_DECODE_H
#define GD_CHAIN_WIRE_TX_DECODE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define GD_TX_MAX_BYTES (1 << 20) /* CometBFT's default max_tx_bytes */

typedef struct gd_decoded_tx gd_decoded_tx;

/* Decodes a TxRaw and its body and auth info, strictly: canonical TxRaw,
 * no unknown fields (but non-critical ones in the body), every string of
 * the body and auth info valid UTF-8 (memo, type URLs, ...), as the Cosmos
 * SDK's decoder has it. GD_ERR_PARSE naming the problem. */
gd_status gd_tx_decode(gd_decoded_tx **out, const uint8_t *raw, size_t len) GD_MUST_CHECK;

void gd_decoded_tx_free(gd_decoded_tx *tx);

/* The decoded parts, for code that inspects every field (the chain's ante
 * checks). Valid until gd_decoded_tx_free. */
struct Cosmos__Tx__V1beta1__TxRaw;
struct Cosmos__Tx__V1beta1__TxBody;
struct Cosmos__Tx__V1beta1__AuthInfo;
const struct Cosmos__Tx__V1beta1__TxRaw *gd_decoded_tx_raw(const gd_decoded_tx *tx);
const struct Cosmos__Tx__V1beta1__TxBody *gd_decoded_tx_body(const gd_decoded_tx *tx);
const struct Cosmos__Tx__V1beta1__AuthInfo *gd_decoded_tx_auth_info(const gd_decoded_tx *tx);

/* Checks the single SIGN_MODE_DIRECT signature against the embedded public
 * key for the given chain-id and account number. GD_ERR_CRYPTO on mismatch. */
gd_status gd_decoded_tx_verify(const gd_decoded_tx *tx, const char *chain_id,
                               uint64_t account_number) GD_MUST_CHECK;

/* The signer's address (bech32 "gonka") from the first signer's public key. */
gd_status gd_decoded_tx_signer(const gd_decoded_tx *tx, char *address,
                               size_t cap) GD_MUST_CHECK;

/* A JSON rendering in the shape of the Cosmos CLI's `tx decode` (body,
 * auth_info, signatures), with MsgSend expanded and other messages as
 * {"@type", "value_base64"}. New reference; NULL on allocation failure. */
json_t *gd_decoded_tx_to_json(const gd_decoded_tx *tx);

#endif
