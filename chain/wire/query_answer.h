/* The answers of the chain's queries that the client asks (chain/client/query.h),
 * decoded from their protobuf bytes: outside bytes in, typed values out
 * (fuzzed by tests/fuzz/fuzz_query_decode.c). No I/O, so the module's tests
 * read its answers with them too. */
#ifndef GD_CHAIN_WIRE_QUERY_ANSWER_H
#define GD_CHAIN_WIRE_QUERY_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/keys/address.h"
#include "chain/keys/keys.h"
#include "chain/wire/coin.h"
#include "chain/wire/epoch.h"
#include "common/status.h"

#define GD_PATH_ACCOUNT_INFO "/cosmos.auth.v1beta1.Query/AccountInfo"
#define GD_PATH_BALANCE "/cosmos.bank.v1beta1.Query/Balance"
#define GD_PATH_EPOCH_INFO "/inference.inference.Query/EpochInfo"
#define GD_PATH_SIMULATE "/cosmos.tx.v1beta1.Service/Simulate"

typedef struct gd_account_info {
    char address[GD_ADDRESS_STR_MAX];
    uint64_t account_number;
    uint64_t sequence;
    bool has_pubkey;
    uint8_t pubkey[GD_PUBKEY_LEN];
} gd_account_info;

/* Response decoders (outside bytes in, typed values out). */
gd_status gd_decode_account_info(gd_account_info *out, const uint8_t *data,
                                 size_t len) GD_MUST_CHECK;
gd_status gd_decode_balance(gd_coin *out, const uint8_t *data, size_t len) GD_MUST_CHECK;
gd_status gd_decode_epoch_info(gd_epoch_info *out, const uint8_t *data,
                               size_t len) GD_MUST_CHECK;
gd_status gd_decode_simulate(const uint8_t *data, size_t len, uint64_t *gas_used) GD_MUST_CHECK;

#endif
