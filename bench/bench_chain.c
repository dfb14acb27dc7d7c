/* Chain-client throughput on one core: building and signing transactions,
 * decoding and verifying them (what a node does per transaction), and key
 * derivation from a mnemonic. Prints a table, or JSON with --json.
 * Usage: gd-bench-chain [--seconds S] [--json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timer.h"
#include "chain/keys/address.h"
#include "chain/keys/keys.h"
#include "chain/wire/msg.h"
#include "chain/wire/tx.h"
#include "chain/wire/tx_decode.h"

typedef struct bench_ctx {
    gd_key key;
    gd_tx_request req;
    gd_signed_tx signed_tx;
    uint64_t sequence;
} bench_ctx;

static void bench_sign(void *p) {
    bench_ctx *c = p;
    gd_signed_tx tx = {0};
    c->req.sequence = c->sequence++;
    if (gd_tx_sign(&tx, &c->key, &c->req) != GD_OK)
        abort();
    gd_signed_tx_free(&tx);
}

static void bench_verify(void *p) {
    bench_ctx *c = p;
    gd_decoded_tx *dec = NULL;
    if (gd_tx_decode(&dec, c->signed_tx.raw.data, c->signed_tx.raw.len) != GD_OK ||
        gd_decoded_tx_verify(dec, "prod-sim", 3) != GD_OK)
        abort();
    gd_decoded_tx_free(dec);
}

static void bench_mnemonic(void *p) {
    gd_key key;
    (void)p;
    if (gd_key_from_mnemonic(&key, "legal winner thank year wave sausage worth useful legal "
                                   "winner thank yellow", NULL, NULL) != GD_OK)
        abort();
}

int main(int argc, char **argv) {
    double seconds = 1.0;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--seconds S] [--json]\n", argv[0]);
            return 2;
        }
    }
    bench_ctx c;
    memset(&c, 0, sizeof c);
    char from[GD_ADDRESS_STR_MAX];
    gd_any msg = {0};
    gd_coin coin = {"ngonka", "1000"};
    if (gd_key_from_hex(&c.key, "7777777777777777777777777777777777777777777777777777777777777777") !=
            GD_OK ||
        gd_address_from_pubkey(from, sizeof from, GD_ADDRESS_PREFIX, c.key.pubkey) != GD_OK ||
        gd_msg_send(&msg, from, "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc", &coin, 1) != GD_OK)
        return 1;
    c.req = (gd_tx_request){.msgs = &msg, .n_msgs = 1, .gas_limit = GD_GAS_DEFAULT,
                            .chain_id = "prod-sim", .account_number = 3};
    if (gd_tx_sign(&c.signed_tx, &c.key, &c.req) != GD_OK)
        return 1;
    double sign = gd_bench_rate(bench_sign, &c, seconds, 100);
    double verify = gd_bench_rate(bench_verify, &c, seconds, 100);
    double mnemonic = gd_bench_rate(bench_mnemonic, NULL, seconds, 16);
    if (json) {
        printf("{\"tx_sign_per_s\": %.0f, \"tx_decode_verify_per_s\": %.0f, "
               "\"mnemonic_derive_per_s\": %.1f, \"tx_bytes\": %zu}\n",
               sign, verify, mnemonic, c.signed_tx.raw.len);
    } else {
        printf("one core, MsgSend of %zu bytes:\n", c.signed_tx.raw.len);
        printf("  build + sign + hash      %10.0f tx/s  (%6.1f us/tx)\n", sign, 1e6 / sign);
        printf("  strict decode + verify   %10.0f tx/s  (%6.1f us/tx)\n", verify, 1e6 / verify);
        printf("  mnemonic -> key (BIP39+32) %8.1f /s   (%6.1f ms each)\n", mnemonic,
               1e3 / mnemonic);
    }
    gd_signed_tx_free(&c.signed_tx);
    gd_any_free(&msg);
    gd_key_wipe(&c.key);
    return 0;
}
