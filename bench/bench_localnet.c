/* Signed-transaction throughput of gonka-localnet, through its real RPC:
 * client threads broadcast pre-signed MsgSends with broadcast_tx_sync over
 * HTTP keep-alive while the node produces blocks. Prints transactions per
 * second admitted (CheckTx passed) and committed, and p50/p99 time from
 * broadcast to the commit of the block that includes it.
 *
 * Two workloads:
 *   throughput  ACCOUNTS senders x TXS_PER_ACCOUNT transactions, as fast as
 *               the clients can send them;
 *   peak        the protocol's burst: 1,000 participants x 4 transactions
 *               (commit, availability, verdict, attest) at once; reports the
 *               time and blocks until all are committed.
 *
 * Usage: gd-bench-localnet [--cpus N] [--clients N] [--accounts N]
 *        [--txs-per-account N] [--block-time MS] [--json] */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/timer.h"
#include "chain/client/rpc.h"
#include "chain/keys/address.h"
#include "chain/keys/keyfile.h"
#include "chain/module/epochs.h"
#include "chain/wire/msg.h"
#include "chain/wire/tx.h"
#include "localnet/init.h"
#include "localnet/node.h"
#include "localnet/rpc_server.h"

typedef struct bench_tx {
    gd_signed_tx signed_tx;
    double sent_at;
    bool admitted;
} bench_tx;

typedef struct bench_run {
    const char *url;
    bench_tx *txs;
    size_t n_accounts;
    size_t per_account;
    size_t n_clients;
    size_t client;
    size_t admitted;
} bench_run;

/* A thread owns accounts client, client+n_clients, ... and sends each
 * account's transactions in sequence order (the check state needs that). */
static void *bench_client(void *p) {
    bench_run *r = p;
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    opt.max_retries = 0;
    gd_rpc *rpc = NULL;
    if (gd_rpc_open(&rpc, r->url, &opt) != GD_OK)
        return NULL;
    for (size_t k = 0; k < r->per_account; k++)
        for (size_t a = r->client; a < r->n_accounts; a += r->n_clients) {
            bench_tx *t = &r->txs[a * r->per_account + k];
            gd_broadcast_result b;
            t->sent_at = gd_bench_now();
            if (gd_rpc_broadcast_tx_sync(rpc, &b, t->signed_tx.raw.data, t->signed_tx.raw.len) ==
                    GD_OK &&
                b.result.code == 0) {
                t->admitted = true;
                r->admitted++;
            }
        }
    gd_rpc_close(rpc);
    return NULL;
}

typedef struct bench_chain {
    gd_node *node;
    gd_rpc_server *server;
    char url[80];
    pthread_t producer, monitor;
    volatile sig_atomic_t stop;
    gd_key *keys;
    char (*addrs)[GD_ADDRESS_STR_MAX];
    uint64_t *next_seq;
    size_t n_accounts;
    char home[256];
    /* commit time of each height, as first seen by the monitor thread */
    pthread_mutex_t seen_lock;
    double *seen;
    size_t seen_cap;
} bench_chain;

static void *bench_producer(void *p) {
    bench_chain *c = p;
    if (gd_node_run_blocks(c->node, &c->stop) != GD_OK)
        fprintf(stderr, "block production failed: %s\n", gd_error_detail());
    return NULL;
}

/* Polls the height every millisecond and stamps each new height. */
static void *bench_monitor(void *p) {
    bench_chain *c = p;
    int64_t last = gd_node_height(c->node);
    while (!c->stop) {
        int64_t h = gd_node_height(c->node);
        double now = gd_bench_now();
        pthread_mutex_lock(&c->seen_lock);
        for (; last < h; last++)
            if ((size_t)(last + 1) < c->seen_cap)
                c->seen[last + 1] = now;
        pthread_mutex_unlock(&c->seen_lock);
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static double bench_seen(bench_chain *c, int64_t h) {
    pthread_mutex_lock(&c->seen_lock);
    double t = h >= 0 && (size_t)h < c->seen_cap ? c->seen[h] : 0;
    pthread_mutex_unlock(&c->seen_lock);
    return t;
}

static int bench_chain_up(bench_chain *c, size_t accounts, long block_ms) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->seen_lock, NULL);
    c->seen_cap = 1 << 20;
    c->seen = calloc(c->seen_cap, sizeof *c->seen);
    snprintf(c->home, sizeof c->home, "/tmp/gd-bench-localnet-XXXXXX");
    if (c->seen == NULL || mkdtemp(c->home) == NULL)
        return -1;
    gd_init_options init = {.home = c->home, .chain_id = "bench", .accounts = accounts,
                            .balance = {"ngonka", "1000000000000"}};
    gd_epoch_params_localnet(&init.epoch_params);
    if (gd_localnet_init(&init, NULL) != GD_OK)
        return -1;
    c->n_accounts = accounts;
    c->keys = calloc(accounts, sizeof *c->keys);
    c->addrs = calloc(accounts, sizeof *c->addrs);
    c->next_seq = calloc(accounts, sizeof *c->next_seq);
    if (!c->keys || !c->addrs || !c->next_seq)
        return -1;
    for (size_t i = 0; i < accounts; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/keys/account-%zu.key", c->home, i);
        if (gd_keyfile_read(&c->keys[i], path) != GD_OK ||
            gd_address_from_pubkey(c->addrs[i], sizeof c->addrs[i], GD_ADDRESS_PREFIX,
                                   c->keys[i].pubkey) != GD_OK)
            return -1;
    }
    gd_node_config cfg;
    gd_node_config_default(&cfg);
    snprintf(cfg.home, sizeof cfg.home, "%s", c->home);
    cfg.block_time_ms = block_ms;
    cfg.mempool_max = 200000;
    cfg.max_block_txs = 200000;
    char bound[64];
    if (gd_node_open(&c->node, &cfg) != GD_OK ||
        gd_rpc_server_start(&c->server, c->node, "127.0.0.1:0", NULL, bound, sizeof bound) != GD_OK)
        return -1;
    snprintf(c->url, sizeof c->url, "http://%s", bound);
    pthread_create(&c->producer, NULL, bench_producer, c);
    pthread_create(&c->monitor, NULL, bench_monitor, c);
    return 0;
}

static void bench_chain_down(bench_chain *c) {
    c->stop = 1;
    pthread_join(c->producer, NULL);
    pthread_join(c->monitor, NULL);
    gd_rpc_server_stop(c->server);
    gd_node_close(c->node);
    for (size_t i = 0; i < c->n_accounts; i++)
        gd_key_wipe(&c->keys[i]);
    free(c->keys);
    free(c->addrs);
    free(c->next_seq);
    free(c->seen);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", c->home);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", c->home);
}

typedef struct bench_result {
    size_t sent, admitted, committed;
    double send_seconds, commit_seconds;
    double p50_ms, p99_ms, max_ms;
    int64_t blocks;
} bench_result;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int64_t bench_unconfirmed(bench_chain *c) {
    json_t *j = NULL;
    int64_t n = -1;
    if (gd_node_unconfirmed_json(c->node, &j) == GD_OK)
        n = strtoll(json_string_value(json_object_get(j, "n_txs")), NULL, 10);
    json_decref(j);
    return n;
}

/* Signs (untimed), sends and waits for every transaction; fills res. */
static int bench_workload(bench_chain *c, size_t accounts, size_t per_account, size_t clients,
                          bench_result *res) {
    memset(res, 0, sizeof *res);
    size_t n = accounts * per_account;
    bench_tx *txs = calloc(n, sizeof *txs);
    pthread_t *threads = calloc(clients, sizeof *threads);
    bench_run *runs = calloc(clients, sizeof *runs);
    double *lat = calloc(n, sizeof *lat);
    if (!txs || !threads || !runs || !lat)
        return -1;
    gd_coin coin = {"ngonka", "1"};
    gd_gas_price price; /* the node runs with the default minimum: pay it */
    if (gd_gas_price_parse(&price, GD_GAS_PRICE_DEFAULT) != GD_OK)
        return -1;
    for (size_t a = 0; a < accounts; a++) {
        gd_any msg = {0};
        if (gd_msg_send(&msg, c->addrs[a], c->addrs[(a + 1) % accounts], &coin, 1) != GD_OK)
            return -1;
        for (size_t k = 0; k < per_account; k++) {
            gd_tx_request req = {.msgs = &msg, .n_msgs = 1, .gas_limit = GD_GAS_DEFAULT,
                                 .gas_price = &price, .chain_id = "bench", .account_number = a,
                                 .sequence = c->next_seq[a]++};
            if (gd_tx_sign(&txs[a * per_account + k].signed_tx, &c->keys[a], &req) != GD_OK)
                return -1;
        }
        gd_any_free(&msg);
    }
    int64_t start_height = gd_node_height(c->node);
    double t0 = gd_bench_now();
    for (size_t i = 0; i < clients; i++) {
        runs[i] = (bench_run){.url = c->url, .txs = txs, .n_accounts = accounts,
                              .per_account = per_account, .n_clients = clients, .client = i};
        pthread_create(&threads[i], NULL, bench_client, &runs[i]);
    }
    for (size_t i = 0; i < clients; i++) {
        pthread_join(threads[i], NULL);
        res->admitted += runs[i].admitted;
    }
    double t1 = gd_bench_now();
    res->sent = n;
    res->send_seconds = t1 - t0;
    /* Wait until the mempool has drained into blocks. */
    while (bench_unconfirmed(c) != 0 && gd_bench_now() - t1 < 120) {
        struct timespec ts = {0, 2 * 1000000L};
        nanosleep(&ts, NULL);
    }
    int64_t last = start_height;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *j = NULL;
        if (!txs[i].admitted ||
            gd_node_tx_json(c->node, &j, txs[i].signed_tx.hash, 32) != GD_OK)
            continue;
        int64_t th = strtoll(json_string_value(json_object_get(j, "height")), NULL, 10);
        json_decref(j);
        res->committed++;
        if (th > last)
            last = th;
        /* The monitor may not have stamped the very last height yet. */
        double at = 0;
        for (int tries = 0; (at = bench_seen(c, th)) == 0 && tries < 1000; tries++) {
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
        lat[m++] = (at - txs[i].sent_at) * 1e3;
    }
    res->commit_seconds = bench_seen(c, last) - t0;
    res->blocks = last - start_height;
    qsort(lat, m, sizeof *lat, cmp_double);
    if (m) {
        res->p50_ms = lat[m / 2];
        res->p99_ms = lat[m * 99 / 100];
        res->max_ms = lat[m - 1];
    }
    for (size_t i = 0; i < n; i++)
        gd_signed_tx_free(&txs[i].signed_tx);
    free(lat);
    free(txs);
    free(threads);
    free(runs);
    return 0;
}

static void bench_print(const char *name, const bench_result *r, bool json, bool last) {
    double admit = r->admitted / r->send_seconds, commit = r->committed / r->commit_seconds;
    if (json) {
        printf("    \"%s\": {\"sent\": %zu, \"admitted\": %zu, \"committed\": %zu, "
               "\"admitted_per_s\": %.0f, \"committed_per_s\": %.0f, \"seconds_to_commit\": %.3f, "
               "\"blocks\": %lld, \"p50_ms\": %.1f, \"p99_ms\": %.1f, \"max_ms\": %.1f}%s\n",
               name, r->sent, r->admitted, r->committed, admit, commit, r->commit_seconds,
               (long long)r->blocks, r->p50_ms, r->p99_ms, r->max_ms, last ? "" : ",");
        return;
    }
    printf("%-11s %7zu sent, %7zu admitted %8.0f tx/s, %7zu committed %8.0f tx/s in %.2f s "
           "(%lld blocks); broadcast->commit p50 %.0f ms, p99 %.0f ms, max %.0f ms\n",
           name, r->sent, r->admitted, admit, r->committed, commit, r->commit_seconds,
           (long long)r->blocks, r->p50_ms, r->p99_ms, r->max_ms);
}

int main(int argc, char **argv) {
    size_t cpus = 1, clients = 4, accounts = 1000, per_account = 20;
    long block_ms = 500;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (v && strcmp(a, "--cpus") == 0) {
            cpus = strtoul(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--clients") == 0) {
            clients = strtoul(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--accounts") == 0) {
            accounts = strtoul(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--txs-per-account") == 0) {
            per_account = strtoul(v, NULL, 10), i++;
        } else if (v && strcmp(a, "--block-time") == 0) {
            block_ms = strtol(v, NULL, 10), i++;
        } else {
            fprintf(stderr, "usage: %s [--cpus N] [--clients N] [--accounts N] "
                            "[--txs-per-account N] [--block-time MS] [--json]\n", argv[0]);
            return 2;
        }
    }
    if (accounts < 1000)
        accounts = 1000; /* the peak workload needs 1,000 participants */
    if (clients == 0 || per_account == 0 || block_ms < 10)
        return 2;
    /* Pin node and clients together onto the first cpus cores. */
    cpu_set_t set;
    CPU_ZERO(&set);
    for (size_t i = 0; i < cpus; i++)
        CPU_SET((int)i, &set);
    if (cpus > 0 && sched_setaffinity(0, sizeof set, &set) != 0)
        perror("sched_setaffinity");
    bench_chain c;
    if (bench_chain_up(&c, accounts, block_ms) != 0) {
        fprintf(stderr, "cannot start the chain: %s\n", gd_error_detail());
        return 1;
    }
    bench_result peak, thr;
    /* The protocol's burst first (fresh accounts), then sustained throughput. */
    if (bench_workload(&c, 1000, 4, clients, &peak) != 0 ||
        bench_workload(&c, accounts, per_account, clients, &thr) != 0) {
        fprintf(stderr, "workload failed: %s\n", gd_error_detail());
        bench_chain_down(&c);
        return 1;
    }
    if (json) {
        printf("{\n  \"cpus\": %zu, \"clients\": %zu, \"block_time_ms\": %ld,\n  \"results\": {\n",
               cpus, clients, block_ms);
        bench_print("peak", &peak, true, false);
        bench_print("throughput", &thr, true, true);
        printf("  }\n}\n");
    } else {
        printf("gonka-localnet, %zu core(s) shared by node and %zu HTTP clients, %ld ms blocks, "
               "MsgSend signed in advance:\n", cpus, clients, block_ms);
        bench_print("peak", &peak, false, false);
        bench_print("throughput", &thr, false, true);
        printf("peak = 1,000 participants x 4 transactions sent at once (one DiLoCo round's "
               "commit, availability, verdict and attestation per participant)\n");
    }
    bench_chain_down(&c);
    return 0;
}
