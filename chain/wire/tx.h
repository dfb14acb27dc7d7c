/* Cosmos SDK transactions signed in SIGN_MODE_DIRECT.
 *
 * TxBody and AuthInfo are encoded canonically (fields in number order, zero
 * values omitted, as Go's deterministic marshalling does); the signature is
 * ECDSA-secp256k1 over SHA256(SignDoc{body_bytes, auth_info_bytes, chain_id,
 * account_number}); TxRaw carries the same bytes; the hash is SHA256(TxRaw)
 * in upper-case hex. */
#ifndef GD_CHAIN_WIRE_TX_H
#define GD_CHAIN_WIRE_TX_H

#include <stddef.h>
#include <stdint.h>

#include "chain/keys/keys.h"
#include "chain/wire/coin.h"
#include "chain/wire/gas_price.h"
#include "chain/wire/msg.h"
#include "common/bytes.h"
#include "common/status.h"

#define GD_CHAIN_ID_MAX 50 /* CometBFT's MaxChainIDLen */
#define GD_MEMO_MAX 65536  /* sanity bound; the chain enforces its own limit */
#define GD_GAS_DEFAULT 200000 /* the Cosmos CLI's default --gas */
#define GD_TXHASH_HEX_LEN 64

typedef struct gd_tx_request {
    const gd_any *msgs;
    size_t n_msgs;
    const char *memo; /* NULL or "" for none */
    uint64_t timeout_height;
    const gd_coin *fees; /* sorted by denom (gd_coins_parse does this) */
    size_t n_fees;
    /* Instead of fees: pay ceil(gas_limit x price), computed when signing
     * (so after --gas auto has set the limit). NULL or a zero price: no fee
     * unless fees are given. Giving both is refused, as the SDK's CLI does. */
    const gd_gas_price *gas_price;
    uint64_t gas_limit;
    const char *chain_id;
    uint64_t account_number;
    uint64_t sequence;
} gd_tx_request;

typedef struct gd_signed_tx {
    gd_buf raw;                            /* serialized TxRaw */
    uint8_t hash[32];                      /* SHA256(raw) */
    char hash_hex[GD_TXHASH_HEX_LEN + 1];  /* upper-case, as CometBFT prints it */
} gd_signed_tx;

/* The fee coins req pays: its fees, or the one coin its gas price asks for
 * (none for a zero price). Returns the count (at most GD_COINS_MAX). */
size_t gd_tx_fee_coins(const gd_tx_request *req, gd_coin out[GD_COINS_MAX]);

/* Serialized TxBody of req. */
gd_status gd_tx_encode_body(gd_buf *out, const gd_tx_request *req) GD_MUST_CHECK;

/* Serialized AuthInfo: one signer (pubkey, SIGN_MODE_DIRECT, sequence), fee. */
gd_status gd_tx_encode_auth_info(gd_buf *out, const gd_tx_request *req,
                                 const uint8_t pubkey[GD_PUBKEY_LEN]) GD_MUST_CHECK;

/* Serialized SignDoc, exactly as the chain re-encodes it to verify. */
gd_status gd_tx_encode_sign_doc(gd_buf *out, const uint8_t *body, size_t body_len,
                                const uint8_t *auth_info, size_t auth_info_len,
                                const char *chain_id, uint64_t account_number) GD_MUST_CHECK;

/* Builds, signs and hashes a transaction with key as its only signer. */
gd_status gd_tx_sign(gd_signed_tx *out, const gd_key *key,
                     const gd_tx_request *req) GD_MUST_CHECK;

/* SHA256 of TxRaw bytes, and its upper-case hex. */
void gd_tx_hash(uint8_t hash[32], char hex[GD_TXHASH_HEX_LEN + 1], const uint8_t *raw,
                size_t len);

void gd_signed_tx_free(gd_signed_tx *tx);

#endif
