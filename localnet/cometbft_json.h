/* CometBFT 0.38's JSON conventions for the localnet's answers: int64 as
 * strings, []byte as base64, HexBytes as upper-case hex, zero-valued
 * protobuf fields omitted (omitempty), and the RFC 6962 merkle root CometBFT
 * uses for data and results hashes. */
#ifndef GD_LOCALNET_COMETBFT_JSON_H
#define GD_LOCALNET_COMETBFT_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/module/app.h"
#include "chain/wire/json_bytes.h"

json_t *gd_cmt_int64(int64_t v);

/* [{type, attributes: [{key, value, index}]}] */
json_t *gd_cmt_events(const gd_events *events);

/* ExecTxResult / ResponseCheckTx as JSON, zero fields omitted. */
json_t *gd_cmt_tx_result(const gd_tx_outcome *o);

/* merkle.HashFromByteSlices: leaves SHA256(0x00||item), inner nodes
 * SHA256(0x01||left||right), split at the largest power of two below n;
 * the empty list hashes to SHA256(""). GD_ERR_NOMEM when out of memory:
 * the block is not produced and the node stops. */
gd_status gd_merkle_root(uint8_t out[32], const uint8_t *const *items, const size_t *lens,
                         size_t n) GD_MUST_CHECK;

#endif
