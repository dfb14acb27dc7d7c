/* A scripted stand-in for a Gonka node, served by the loopback mock HTTP
 * server: it answers status, AccountInfo, Balance, EpochInfo and Simulate
 * queries from its fields, checks broadcast transactions the way the SDK's
 * ante handler does (strict decode, signature for its chain-id and account
 * number, sequence), and reports them through /tx after a few polls. The
 * real node for integration tests is gonka-localnet; this one lets unit
 * tests reach each client path on purpose. */
#ifndef GD_TESTS_SUPPORT_FAKE_NODE_H
#define GD_TESTS_SUPPORT_FAKE_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "chain/wire/epoch.h"
#include "tests/support/mock_http.h"

typedef struct fake_node {
    /* chain state */
    char chain_id[64];
    char address[96];          /* the one account it knows ("" = none) */
    uint64_t account_number;
    uint64_t sequence;         /* what the chain expects next */
    uint64_t reported_sequence; /* what AccountInfo answers (stale if lower) */
    char balance[80];          /* ngonka */
    int64_t height;
    gd_epoch epoch;
    gd_epoch_params epoch_params;
    uint64_t simulate_gas;
    /* behaviour */
    int polls_before_found;    /* /tx answers "not found" this many times */
    uint32_t deliver_code;     /* code of the included tx (0 = success) */
    bool drop_first_broadcast; /* accept it into the mempool, then drop the reply */
    bool never_include;
    /* observations */
    int broadcasts;
    int tx_polls;
    uint64_t last_tx_sequence;
    uint64_t last_tx_gas;
    char last_tx_fee[256];     /* its fee coins, "500ngonka" ("" for none) */
    char last_txhash[65];
    bool in_mempool;
} fake_node;

void fake_node_init(fake_node *node, const char *address);
void fake_node_handler(void *ctx, const gd_mock_request *req, gd_mock_response *resp);

#endif
