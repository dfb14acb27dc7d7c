/* A chain in a test: the state machine of chain/module with a genesis of
 * funded accounts whose keys are known, and blocks driven by hand. Every
 * block checks the invariants, and that no account sequence went down. */
#ifndef GD_TESTS_SUPPORT_APP_FIXTURE_H
#define GD_TESTS_SUPPORT_APP_FIXTURE_H

#include <jansson.h>

#include "chain/keys/address.h"
#include "chain/keys/keys.h"
#include "chain/module/app.h"
#include "chain/wire/msg.h"
#include "common/bytes.h"

#define FIX_ACCOUNTS 8      /* accounts of the fix_init* genesis */
#define FIX_ACCOUNTS_MAX 24 /* accounts fix_init_accounts can make */
#define FIX_CHAIN "prod-sim"

typedef struct app_fixture {
    gd_app *app;
    int n_accounts; /* accounts 0 .. n_accounts - 1 */
    gd_key keys[FIX_ACCOUNTS_MAX];
    char addr[FIX_ACCOUNTS_MAX][GD_ADDRESS_STR_MAX];
    uint64_t seq[FIX_ACCOUNTS_MAX]; /* next sequence, as the chain should have it */
    json_t *genesis;
    int64_t height;
    /* Block hashes are SHA-256 of the height (int64, host order); from
     * height hash_salt_from on, with hash_salt != 0, SHA-256 of the height
     * then the salt (LE32): two chains that differ only in some block
     * hashes. */
    uint32_t hash_salt;
    int64_t hash_salt_from;
    gd_events events; /* the last block's begin- and end-block events */
} app_fixture;

/* Builds the genesis (each account 1000000ngonka) and initialises an app.
 * min_gas_price may be NULL. */
void fix_init(app_fixture *f, const char *min_gas_price);
/* The same with app_state.diloco set to diloco_state (a new reference is
 * taken; NULL leaves it out). */
void fix_init_diloco(app_fixture *f, const json_t *diloco_state);
/* The same with n accounts (1 .. FIX_ACCOUNTS_MAX; account i has account
 * number i). */
void fix_init_accounts(app_fixture *f, int n, const json_t *diloco_state);
/* The same with one more module registered after the standard ones. */
void fix_init_with(app_fixture *f, const gd_module *extra);
void fix_free(app_fixture *f);

/* A signed MsgSend from account i to address to; fees may be NULL. */
gd_status fix_send_tx(app_fixture *f, gd_buf *out, int from, const char *to,
                      const char *amount, const char *fees, uint64_t gas, uint64_t sequence,
                      const char *chain_id);

/* A signed transaction of one message from account i, at the sequence the
 * chain holds for it (so transactions of one block need distinct signers,
 * or use fix_send_tx's explicit sequence). */
gd_status fix_msg_tx(app_fixture *f, gd_buf *out, int from, const char *type_url,
                     const void *msg);
/* The same with n messages in one transaction (it fails as a whole). */
#define FIX_TX_MSGS_MAX 64
gd_status fix_msgs_tx(app_fixture *f, int from, size_t n, const char *const *type_urls,
                      const void *const *msgs, gd_buf *out);
/* The same with messages already packed as Any. */
gd_status fix_anys_tx(app_fixture *f, gd_buf *out, int from, size_t n, const gd_any *msgs);

/* Runs a block of the given transactions; outcomes[i] receives each
 * result (caller frees). Checks invariants and sequence monotonicity. */
void fix_block(app_fixture *f, const gd_buf *txs, size_t n, gd_tx_outcome *outcomes);

/* Balance of ngonka at address, as a decimal string (static buffer). */
const char *fix_balance(app_fixture *f, const char *address);

/* The sequence of account i from a query. */
uint64_t fix_sequence(app_fixture *f, int i);

#endif
