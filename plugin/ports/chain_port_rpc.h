/* The chain port (plugin/member/member_ports.h) over a node's CometBFT RPC: the
 * module's typed queries for reading, and signed transactions submitted the
 * way 'tx send' does (chain/client/submit.h), waiting for their block so that the
 * next read shows them. Transactions sent in two halves (send, then
 * settle) while others are still waiting take the next sequence without
 * asking the node, as its mempool expects. */
#ifndef GD_PLUGIN_PORTS_CHAIN_PORT_RPC_H
#define GD_PLUGIN_PORTS_CHAIN_PORT_RPC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "chain/client/rpc.h"
#include "chain/wire/gas_price.h"
#include "plugin/member/member_ports.h"

#define GD_CHAIN_RPC_WAITING 32

typedef struct gd_chain_rpc {
    gd_rpc *rpc;
    /* The head's own client (the port's head, from the HTTP server's
     * threads): short deadlines, one caller at a time. */
    gd_rpc *head_rpc;
    pthread_mutex_t head_mu;
    bool head_open;
    char chain_id[64];
    gd_gas_price gas_price;
    bool have_gas_price;
    uint64_t gas_limit;
    long wait_timeout_ms;
    /* Sent, not yet settled: their hashes by ticket, and the account's next
     * sequence once the first of them was admitted. */
    struct {
        uint8_t hash[32];
        bool used;
    } waiting[GD_CHAIN_RPC_WAITING];
    unsigned n_waiting;
    bool have_sequence;
    uint64_t account_number, next_sequence;
} gd_chain_rpc;

/* Opens the port on url. chain_id "" takes the node's; gas_price "" pays
 * the default price (GD_GAS_PRICE_DEFAULT). */
gd_status gd_chain_rpc_open(gd_chain_rpc *c, const char *url, const char *chain_id,
                            const char *gas_price) GD_MUST_CHECK;
void gd_chain_rpc_close(gd_chain_rpc *c);
gd_chain_port gd_chain_rpc_port(gd_chain_rpc *c);

#endif
