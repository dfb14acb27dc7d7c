/* The DiLoCo training module's cost on chain: one round of W members
 * executed through the module's message handlers and the app's block hooks
 * (no signatures, no network: what a block producer spends on the module).
 * Every member seals and reveals a secret, commits, reports every other
 * payload with its drawn chunks' MMR proofs, seals and reveals its checks,
 * seals and reveals its attestation; then the epoch settles and everyone
 * claims. Prints microseconds per message of each kind and milliseconds for
 * the blocks whose hooks do the round's work (the seed and checks,
 * inclusion, re-checks, resolution, attestation, settlement), including the
 * app hash over the whole state.
 * Usage: gd-bench-module [--members W]... [--json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/diloco_driver.h"
#include "chain/wire/diloco_rules.h"
#include "gonka/diloco/v1/tx.pb-c.h"

static const char *const k_kinds[] = {"commit", "report", "verdict", "attest", "secret",
                                      "claim"};
static const char *const k_urls[] = {GD_DILOCO_MSG_COMMIT_ROUND,
                                     GD_DILOCO_MSG_REPORT_AVAILABILITY,
                                     GD_DILOCO_MSG_SUBMIT_VERDICT, GD_DILOCO_MSG_ATTEST_ROUND,
                                     GD_DILOCO_MSG_RANDOMNESS, GD_DILOCO_MSG_CLAIM_REWARDS};
#define K_COUNT 6
static const char *const k_blocks[] = {"checks", "inclusion", "rechecks", "resolve",
                                       "attest end", "settle"};
#define B_COUNT 6

typedef struct bench_result {
    double us[K_COUNT];
    size_t count[K_COUNT];
    double block_ms[B_COUNT];
} bench_result;

static void bench_run(bench_result *out, int w) {
    gd_dd d = {0};
    const char **classes = calloc((size_t)w, sizeof *classes);
    gd_dd_role *roles = calloc((size_t)w, sizeof *roles);
    if (classes == NULL || roles == NULL) {
        fprintf(stderr, "gd-bench-module: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < w; i++)
        classes[i] = "cpu";
    gd_dd_open(&d, w, gd_dd_spec(6), classes, 8000000, 0);
    d.roles = roles; /* all honest */
    d.segments = 6;
    gd_dd_seal_secrets(&d, 0);
    /* Rounds are played until one has run in epoch 1; the next one is
     * measured (its epoch settles into claims at the next epoch's start). */
    gd_dd_round_log log;
    gd_dd_log_init(&log, w);
    do {
        gd_dd_await_round(&d);
        gd_dd_play_round(&d, &log, NULL);
    } while (log.epoch < 1);
    gd_dd_await_round(&d);
    memset(d.msg_seconds, 0, sizeof d.msg_seconds);
    memset(d.msg_count, 0, sizeof d.msg_count);
    gd_dd_round_log measured;
    gd_dd_log_init(&measured, w);
    double hooks[5];
    gd_dd_play_round(&d, &measured, hooks);
    if (!measured.done) {
        fprintf(stderr, "gd-bench-module: the measured round did not finish DONE\n");
        exit(1);
    }
    for (int i = 0; i < 5; i++)
        out->block_ms[i] = hooks[i];
    /* The epoch of the measured round settles at the next epoch's first
     * block; claims open at its claim-money stage. */
    uint64_t epoch = measured.epoch;
    for (uint64_t before = gd_dd_settled(&d, 0, epoch); before == 0;
         before = gd_dd_settled(&d, 0, epoch))
        out->block_ms[5] = gd_dd_block(&d);
    for (int tries = 0; tries < 1000; tries++) {
        Gonka__Diloco__V1__MsgClaimRewards m = GONKA__DILOCO__V1__MSG_CLAIM_REWARDS__INIT;
        m.claimer = d.addr[0];
        m.run = 1;
        m.epoch = epoch;
        if (gd_dd_msg(&d, GD_DILOCO_MSG_CLAIM_REWARDS, &m) == 0)
            break;
        gd_dd_block(&d);
    }
    for (int i = 1; i < w; i++) {
        Gonka__Diloco__V1__MsgClaimRewards m = GONKA__DILOCO__V1__MSG_CLAIM_REWARDS__INIT;
        m.claimer = d.addr[i];
        m.run = 1;
        m.epoch = epoch;
        if (gd_dd_msg(&d, GD_DILOCO_MSG_CLAIM_REWARDS, &m) != 0) {
            fprintf(stderr, "gd-bench-module: claim refused: %s\n", d.log);
            exit(1);
        }
    }
    if (gd_app_check_invariants(d.app) != GD_OK) {
        fprintf(stderr, "gd-bench-module: invariants: %s\n", gd_error_detail());
        exit(1);
    }
    for (int k = 0; k < K_COUNT; k++) {
        int kind = gd_dd_msg_kind(k_urls[k]);
        out->count[k] = d.msg_count[kind];
        out->us[k] = d.msg_count[kind] ? d.msg_seconds[kind] * 1e6 / (double)d.msg_count[kind] : 0;
    }
    gd_dd_log_free(&log);
    gd_dd_log_free(&measured);
    gd_dd_close(&d);
    free(classes);
    free(roles);
}

int main(int argc, char **argv) {
    int sizes[8], n_sizes = 0;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--members") == 0 && i + 1 < argc && n_sizes < 8) {
            int v = atoi(argv[++i]);
            if (v < 6 || v > 1024) {
                fprintf(stderr, "gd-bench-module: --members wants 6 to 1024 (the class "
                                "minimum to the member cap)\n");
                return 2;
            }
            sizes[n_sizes++] = v;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else {
            fprintf(stderr, "usage: %s [--members W]... [--json]\n", argv[0]);
            return 2;
        }
    }
    if (n_sizes == 0) {
        sizes[0] = 50;
        sizes[1] = 100;
        sizes[2] = 200;
        n_sizes = 3;
    }
    if (json)
        printf("[");
    else
        printf("one core; one round of W members through the DiLoCo module (no signatures):\n"
               "%6s %8s %8s %8s %8s %8s %8s | block ms: %6s %9s %8s %7s %10s %7s\n",
               "W", k_kinds[0], k_kinds[1], k_kinds[2], k_kinds[3], k_kinds[4], k_kinds[5], k_blocks[0],
               k_blocks[1], k_blocks[2], k_blocks[3], k_blocks[4], k_blocks[5]);
    for (int s = 0; s < n_sizes; s++) {
        bench_result r = {{0}};
        bench_run(&r, sizes[s]);
        if (json) {
            printf("%s{\"members\": %d", s ? ", " : "", sizes[s]);
            for (int k = 0; k < K_COUNT; k++)
                printf(", \"%s_us\": %.1f, \"%s_count\": %zu", k_kinds[k], r.us[k], k_kinds[k],
                       r.count[k]);
            for (int k = 0; k < B_COUNT; k++)
                printf(", \"block_%d_ms\": %.2f", k, r.block_ms[k]);
            printf("}");
        } else {
            printf("%6d %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f | %16.2f %9.2f %8.2f %7.2f %10.2f "
                   "%7.2f\n",
                   sizes[s], r.us[0], r.us[1], r.us[2], r.us[3], r.us[4], r.us[5], r.block_ms[0],
                   r.block_ms[1], r.block_ms[2], r.block_ms[3], r.block_ms[4], r.block_ms[5]);
        }
    }
    if (json)
        printf("]\n");
    else
        printf("(microseconds per message, seals and reveals together; the block figures "
               "include the app hash over the whole state)\n");
    return 0;
}
