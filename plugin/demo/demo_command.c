/* gonka-diloco demo: a whole DiLoCo run on this machine, orchestrated from
 * the separate programs a real deployment runs. A temporary home holds a
 * gonka-localnet chain with run 1 in its genesis (accounts funded there,
 * 200 ms blocks) and one `gonka-diloco run` daemon per participant, each
 * with its own key, port and state; the demo only watches (the chain over
 * RPC, each daemon's /v1/status) and prints progress until the last round
 * is settled and its rewards claimed, then the summary (demo_report.h).
 * Every child is stopped and the home removed on every way out: success,
 * failure, SIGINT, SIGTERM or SIGHUP (demo_procs.h). */
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain/client/diloco_query.h"
#include "common/clock.h"
#include "common/file.h"
#include "common/parse.h"
#include "plugin/cli/cli_train.h"
#include "plugin/cli/cli_util.h"
#include "plugin/demo/demo_procs.h"
#include "plugin/demo/demo_report.h"
#include "plugin/demo/demo_setup.h"
#include "plugin/demo/demo_watch.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/hardware_class.h"
#include "plugin/member/round_driver.h"
#include "trainer/checkpoint.h"
#include "trainer/train.h"

#define GD_DEMO_RUN 1
#define GD_DEMO_WORKERS_MAX 8
#define GD_DEMO_VALIDATORS_MAX 4
/* localnet's epoch 1 starts its PoC 20 blocks in, and its Inference phase,
 * where rounds open, 22 blocks after that (docs/localnet.md). */
#define GD_DEMO_POC_START 20
#define GD_DEMO_FIRST_ROUND 42
/* Blocks of slack in epoch 1 for a first round that opens late. */
#define GD_DEMO_SLACK 30
/* The claim-money stage: 25 blocks after an epoch's PoC start. */
#define GD_DEMO_CLAIM_DELAY 25
#define GD_DEMO_STALL_S 30.0

typedef struct gd_demo {
    gd_cli *cli;
    uint64_t workers, validators, rounds;
    bool cheater;
    char self[GD_DEMO_PATH_MAX], localnet[GD_DEMO_PATH_MAX], adversary[GD_DEMO_PATH_MAX];
    char home[GD_DEMO_PATH_MAX];
    char rpc_url[300];
    int64_t span, epoch_length;
    gd_demo_procs procs;
    char url[GD_DEMO_MEMBERS_MAX][64];
    char state_dir[GD_DEMO_MEMBERS_MAX][GD_DEMO_PATH_MAX];
    gd_rpc *rpc;
    gd_demo_http *http;
    gd_demo_report report;
    double start;
} gd_demo;

/* ---- the programs it runs ------------------------------------------------------------------- */

/* gonka-localnet and gd-adversary live beside this binary (build/bin). */
static int gd_demo_find_programs(gd_demo *d) {
    char self[GD_DEMO_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || (size_t)n >= sizeof self - 1) {
        fprintf(d->cli->err, "error: cannot read /proc/self/exe\n");
        return GD_EXIT_FAIL;
    }
    self[n] = 0;
    snprintf(d->self, sizeof d->self, "%s", self);
    const char *dir = dirname(self);
    snprintf(d->localnet, sizeof d->localnet, "%s/gonka-localnet", dir);
    snprintf(d->adversary, sizeof d->adversary, "%s/gd-adversary", dir);
    if (access(d->localnet, X_OK) != 0) {
        fprintf(d->cli->err, "error: the demo runs gonka-localnet, which is not beside %s (no "
                             "%s)\n",
                d->self, d->localnet);
        return GD_EXIT_FAIL;
    }
    if (d->cheater && access(d->adversary, X_OK) != 0) {
        fprintf(d->cli->err, "error: --with-cheater runs the lazy worker with gd-adversary, "
                             "which is not beside %s (no %s)\n",
                d->self, d->adversary);
        return GD_EXIT_FAIL;
    }
    return GD_CLI_CONTINUE;
}

/* The first child that stopped unasked: its last lines, then its error. */
static gd_status gd_demo_children_alive(gd_demo *d) {
    for (size_t i = 0; i < d->procs.n; i++) {
        if (d->procs.p[i].waited || gd_demo_running(&d->procs, i))
            continue;
        const gd_demo_proc *p = &d->procs.p[i];
        char why[64];
        gd_demo_exit_text(p, why, sizeof why);
        gd_demo_log_tail(p, d->cli->err, 8);
        return gd_fail(GD_ERR_IO, "%s stopped (%s)", p->name, why);
    }
    return GD_OK;
}

/* ---- setting up ----------------------------------------------------------------------------- */

static gd_status gd_demo_path(char *out, size_t cap, const char *home, const char *name) {
    int n = snprintf(out, cap, "%s/%s", home, name);
    return n > 0 && (size_t)n < cap ? GD_OK : gd_fail(GD_ERR_LIMIT, "path too long: %s", home);
}

/* localnet init with the spec in genesis, then start on a free loopback
 * port; the RPC is open once it writes the address it bound. */
static gd_status gd_demo_start_chain(gd_demo *d, const char *spec) {
    char chain[GD_DEMO_PATH_MAX], log[GD_DEMO_PATH_MAX], addr_file[GD_DEMO_PATH_MAX];
    char accounts[16], epoch[24];
    GD_TRY(gd_demo_path(chain, sizeof chain, d->home, "chain"));
    GD_TRY(gd_demo_path(log, sizeof log, d->home, "chain.log"));
    GD_TRY(gd_demo_path(addr_file, sizeof addr_file, d->home, "rpc.addr"));
    /* Account 0 is the run's authority; participants are 1 .. N. */
    snprintf(accounts, sizeof accounts, "%" PRIu64, d->workers + d->validators + 1);
    snprintf(epoch, sizeof epoch, "%" PRId64, d->epoch_length);
    char *init[] = {d->localnet, "init", "--home", chain, "--accounts", accounts,
                    "--epoch-length", epoch, "--diloco-run", (char *)spec,
                    "--diloco-pool", "1000000ngonka", NULL};
    size_t i = 0;
    int code = 0;
    GD_TRY(gd_demo_spawn(&d->procs, "localnet-init", log, init, &i));
    GD_TRY(gd_demo_wait(&d->procs, i, 60000, &code));
    if (code != 0) {
        gd_demo_log_tail(&d->procs.p[i], d->cli->err, 5);
        return gd_fail(GD_ERR_IO, "gonka-localnet init failed (exit status %d)", code);
    }
    char *start[] = {d->localnet, "start", "--home", chain, "--rpc", "127.0.0.1:0",
                     "--rpc-addr-file", addr_file, "--block-time", "200ms",
                     "--check-invariants", NULL};
    GD_TRY(gd_demo_spawn(&d->procs, "gonka-localnet", log, start, NULL));
    for (int t = 0; d->rpc_url[0] == 0; t++) {
        GD_TRY(gd_demo_check_stop());
        GD_TRY(gd_demo_children_alive(d));
        /* host:port and a newline, once it listens. */
        gd_buf addr = {0};
        if (gd_file_read(&addr, addr_file, 256) == GD_OK && addr.len > 1 &&
            addr.data[addr.len - 1] == '\n')
            snprintf(d->rpc_url, sizeof d->rpc_url, "http://%.*s", (int)addr.len - 1,
                     (const char *)addr.data);
        gd_buf_free(&addr);
        if (d->rpc_url[0] == 0 && t == 300)
            return gd_fail(GD_ERR_TIMEOUT, "gonka-localnet did not start in 15 s");
        if (d->rpc_url[0] == 0)
            gd_demo_sleep_ms(50);
    }
    gd_rpc_options opt;
    gd_rpc_options_default(&opt);
    opt.timeout_ms = 5000;
    opt.max_retries = 2;
    return gd_rpc_open(&d->rpc, d->rpc_url, &opt);
}

/* Each participant's home, node.yaml and daemon: workers first (the last
 * of them the lazy one with --with-cheater), then validators. */
static gd_status gd_demo_start_daemons(gd_demo *d, const char *rpc_url, const char *chain_id) {
    size_t n = (size_t)(d->workers + d->validators);
    gd_demo_report *r = &d->report;
    r->n_members = n;
    for (size_t i = 0; i < n; i++) {
        gd_demo_member *m = &r->members[i];
        memset(m, 0, sizeof *m);
        m->loss = NAN;
        bool worker = i < d->workers;
        m->role = !worker ? GD_DEMO_VALIDATOR
                  : d->cheater && i + 1 == d->workers ? GD_DEMO_CHEATER
                                                      : GD_DEMO_WORKER;
        snprintf(m->label, sizeof m->label, "%c%zu",
                 m->role == GD_DEMO_VALIDATOR ? 'v' : m->role == GD_DEMO_CHEATER ? 'c' : 'w',
                 worker ? i + 1 : i + 1 - (size_t)d->workers);
        char home[GD_DEMO_PATH_MAX], key[GD_DEMO_PATH_MAX], yaml[GD_DEMO_PATH_MAX];
        char log[GD_DEMO_PATH_MAX], name[32];
        snprintf(name, sizeof name, "%s", m->label);
        GD_TRY(gd_demo_path(home, sizeof home, d->home, name));
        snprintf(name, sizeof name, "chain/keys/account-%zu.key", i + 1);
        GD_TRY(gd_demo_path(key, sizeof key, d->home, name));
        GD_TRY(gd_demo_path(yaml, sizeof yaml, home, "node.yaml"));
        snprintf(name, sizeof name, "%s.log", m->label);
        GD_TRY(gd_demo_path(log, sizeof log, d->home, name));
        GD_TRY(gd_demo_path(d->state_dir[i], sizeof d->state_dir[i], home, "state"));
        GD_TRY(gd_demo_key_address(m->address, key));
        gd_demo_node node = {home, key, rpc_url, chain_id,
                             worker ? GD_ROLE_WORKER : GD_ROLE_VALIDATOR, 0};
        GD_TRY(gd_demo_free_port(&node.port));
        snprintf(d->url[i], sizeof d->url[i], "http://127.0.0.1:%u", (unsigned)node.port);
        GD_TRY(gd_demo_write_node(&node));
        char *daemon[] = {d->self, "run", "--config", yaml, "--poll-ms", "100", NULL};
        char *lazy[] = {d->adversary, "--lazy", "0.5", "run", "--config", yaml,
                        "--poll-ms", "100", NULL};
        bool lazy_one = m->role == GD_DEMO_CHEATER;
        GD_TRY(gd_demo_spawn(&d->procs, m->label, log, lazy_one ? lazy : daemon, NULL));
        fprintf(d->cli->out, "%-3s %-9s %s  %s%s\n", m->label, gd_demo_role_name(m->role),
                m->address, d->url[i], lazy_one ? "  (gd-adversary --lazy 0.5)" : "");
    }
    return GD_OK;
}

/* ---- evaluating G --------------------------------------------------------------------------- */

static gd_status gd_demo_eval(const char *checkpoint, double *loss) {
    gd_param_layout layout;
    float *params = NULL;
    uint64_t step = 0;
    GD_TRY(gd_checkpoint_load_model(checkpoint, &layout, &params, &step));
    gd_data *data = NULL;
    gd_pool *pool = NULL;
    uint64_t tokens = 0;
    gd_status s = gd_data_open(&data, GD_DEMO_DATA);
    if (s == GD_OK)
        s = gd_data_eval_check(data, GD_DEMO_BATCH, GD_DEMO_SEQ, layout.config.vocab_size);
    if (s == GD_OK)
        s = gd_pool_new(&pool, 1);
    if (s == GD_OK)
        s = gd_evaluate(&layout, params, data, GD_DEMO_EVAL_BATCHES, GD_DEMO_BATCH, GD_DEMO_SEQ,
                        GD_DEMO_BATCH, pool, loss, &tokens);
    if (s == GD_OK && tokens == 0)
        s = gd_fail(GD_ERR_INVALID, "no evaluation tokens");
    gd_pool_free(pool);
    gd_data_close(data);
    free(params);
    gd_param_layout_free(&layout);
    return s == GD_OK ? GD_OK : gd_fail_context(s, "evaluating %s", checkpoint);
}

/* G_0 as the first worker serves it once round 0 is open: NOT_FOUND until
 * its daemon has seen the round. */
static gd_status gd_demo_loss_before(gd_demo *d, bool *have) {
    char path[GD_DEMO_PATH_MAX];
    GD_TRY(gd_demo_path(path, sizeof path, d->home, "g0.safetensors"));
    gd_status s = gd_demo_http_checkpoint(d->http, d->url[0], GD_DEMO_RUN, path);
    if (s == GD_ERR_NOT_FOUND || s == GD_ERR_NETWORK || s == GD_ERR_TIMEOUT)
        return GD_OK;
    GD_TRY(s);
    GD_TRY(gd_demo_eval(path, &d->report.loss_before));
    *have = true;
    fprintf(d->cli->out, "G_0 eval loss %.4f\n", d->report.loss_before);
    return GD_OK;
}

/* The final G: the checkpoint the first worker wrote when it took the
 * agreed G_R (its status shows that state hash), read from its state
 * directory, which does not wait for round R to open as serving would. */
static gd_status gd_demo_loss_after(gd_demo *d, const json_t *status, bool *have) {
    const gd_demo_report *r = &d->report;
    const char *held = json_string_value(json_object_get(status, "state_hash"));
    if (held == NULL || strcmp(held, r->rounds[r->n_rounds - 1].state_hash) != 0)
        return GD_OK;
    gd_artifact_store store;
    char path[GD_ARTIFACT_PATH_MAX];
    GD_TRY(gd_artifact_store_open(&store, d->state_dir[0]));
    GD_TRY(gd_artifact_path(&store, path, sizeof path, GD_ARTIFACT_CHECKPOINT, GD_DEMO_RUN,
                            d->rounds, 0));
    if (access(path, R_OK) != 0)
        return GD_OK; /* written just after the state hash is shown */
    GD_TRY(gd_demo_eval(path, &d->report.loss_after));
    *have = true;
    return GD_OK;
}

/* ---- watching ------------------------------------------------------------------------------- */

/* Every daemon's status into its member; the first worker's is kept in
 * *first (a new reference, or NULL if it did not answer). */
static void gd_demo_read_daemons(gd_demo *d, json_t **first) {
    *first = NULL;
    for (size_t i = 0; i < d->report.n_members; i++) {
        json_t *st = NULL;
        /* A busy daemon may not answer within the timeout: keep what it
         * said last. */
        if (gd_demo_http_status(d->http, &st, d->url[i]) != GD_OK)
            continue;
        gd_demo_member *m = &d->report.members[i];
        json_t *loss = json_object_get(st, "loss");
        if (json_is_number(loss))
            m->loss = json_number_value(loss);
        m->bytes_in = (uint64_t)json_integer_value(json_object_get(st, "bytes_in"));
        m->bytes_out = (uint64_t)json_integer_value(json_object_get(st, "bytes_out"));
        m->status_slashed = (uint64_t)json_integer_value(json_object_get(st, "slashed_ngonka"));
        if (i == 0)
            *first = st;
        else
            json_decref(st);
    }
}

/* The collateral each member has bonded now, and what it first bonded. */
static void gd_demo_read_collateral(gd_demo *d, const gd_demo_chain *c) {
    for (size_t i = 0; c->run && i < c->run->n_members; i++) {
        const Gonka__Diloco__V1__Member *cm = c->run->members[i];
        gd_demo_member *m = gd_demo_report_member(&d->report, cm->address);
        uint64_t v = 0;
        if (m == NULL || gd_parse_u64(&v, cm->collateral) != GD_OK)
            continue;
        if (m->bonded == 0)
            m->bonded = m->collateral = v;
        else if (v < m->collateral)
            m->collateral = v;
    }
}

static bool gd_demo_round_over(int phase) {
    return phase == GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE ||
           phase == GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_VOID;
}

/* Records the demo's rounds that are over, in order, and says so. */
static gd_status gd_demo_tally(gd_demo *d, const gd_demo_chain *c) {
    gd_demo_report *r = &d->report;
    while (c->round && r->n_rounds < d->rounds) {
        uint64_t next = r->n_rounds, current = c->round->round->index;
        if (current < next || (current == next && !gd_demo_round_over(c->round->round->phase)))
            return GD_OK;
        Gonka__Diloco__V1__QueryRoundResponse *q = NULL;
        if (current == next)
            q = c->round;
        else
            GD_TRY(gd_diloco_query_round(d->rpc, &q, GD_DEMO_RUN, next, NULL));
        gd_status s = gd_demo_report_add_round(r, q);
        if (q != c->round)
            protobuf_c_message_free_unpacked(&q->base, NULL);
        GD_TRY(s);
        const gd_demo_round *o = &r->rounds[r->n_rounds - 1];
        fprintf(d->cli->out,
                "round %" PRIu64 " %s: %u of %u commitments aggregated, %u attesters, state "
                "%.16s...%s%s\n",
                o->index, o->done ? "done" : "VOID (G unchanged)", o->aggregated, o->commitments,
                o->attesters, o->state_hash, o->failed[0] ? "; caught: " : "", o->failed);
    }
    return GD_OK;
}

/* Whether every member has claimed all that the demo's epochs settled to
 * it; *claims counts those that have, for the progress line. */
static gd_status gd_demo_claims(gd_demo *d, uint64_t last_epoch, size_t *claims, bool *all) {
    *claims = 0;
    for (size_t i = 0; i < d->report.n_members; i++) {
        gd_demo_member *m = &d->report.members[i];
        gd_demo_rewards rw;
        GD_TRY(gd_demo_rewards_read(d->rpc, &rw, GD_DEMO_RUN, m->address, last_epoch));
        m->reward_claimed = rw.claimed;
        m->reward_unclaimed = rw.unclaimed;
        *claims += rw.unclaimed == 0;
    }
    *all = *claims == d->report.n_members;
    return GD_OK;
}

/* One reading a second until the last round is settled and claimed and
 * the final G evaluated. */
static gd_status gd_demo_watch(gd_demo *d) {
    gd_demo_report *r = &d->report;
    bool have_g0 = false, have_final = false, claimed = false;
    int64_t last_height = -1, limit = 3 * d->epoch_length + GD_DEMO_POC_START;
    double moved = gd_clock_seconds();
    while (!(claimed && have_final)) {
        double tick = gd_clock_seconds();
        GD_TRY(gd_demo_check_stop());
        GD_TRY(gd_demo_children_alive(d));
        gd_demo_chain c;
        gd_status s = gd_demo_chain_read(d->rpc, &c, GD_DEMO_RUN);
        if (s != GD_OK) {
            /* A chain busy with a block may not answer in time: the stall
             * check below decides when that is a failure. */
            if (gd_clock_seconds() - moved > GD_DEMO_STALL_S)
                return gd_fail_context(s, "reading the chain");
            gd_demo_sleep_ms(500);
            continue;
        }
        json_t *first = NULL;
        gd_demo_read_daemons(d, &first);
        gd_demo_read_collateral(d, &c);
        if (s == GD_OK && !have_g0 && c.round) {
            if (c.round->round->index > 0)
                s = gd_fail(GD_ERR_TIMEOUT, "round 1 opened before G_0 could be fetched");
            else
                s = gd_demo_loss_before(d, &have_g0);
        }
        if (s == GD_OK)
            s = gd_demo_tally(d, &c);
        char extra[96] = "";
        if (s == GD_OK && r->n_rounds == d->rounds) {
            /* An epoch settles when the next one starts (its PoC), and is
             * claimable from that epoch's claim-money stage. */
            uint64_t last_epoch = r->rounds[r->n_rounds - 1].epoch;
            int64_t settles = GD_DEMO_POC_START + (int64_t)last_epoch * d->epoch_length;
            if (c.run->run->next_settle_epoch <= last_epoch) {
                snprintf(extra, sizeof extra, "epoch %" PRIu64 " settles at height %" PRId64,
                         last_epoch, settles);
            } else {
                size_t n = 0;
                s = gd_demo_claims(d, last_epoch, &n, &claimed);
                snprintf(extra, sizeof extra, "claims %zu/%zu (from height %" PRId64 ")", n,
                         r->n_members, settles + GD_DEMO_CLAIM_DELAY);
            }
            if (s == GD_OK && !have_final && first)
                s = gd_demo_loss_after(d, first, &have_final);
        }
        json_decref(first);
        if (s == GD_OK)
            gd_demo_progress(d->cli->out, r, &c, extra);
        r->height = c.height;
        gd_demo_chain_free(&c);
        GD_TRY(s);
        if (r->height != last_height) {
            last_height = r->height;
            moved = gd_clock_seconds();
        } else if (gd_clock_seconds() - moved > GD_DEMO_STALL_S) {
            return gd_fail(GD_ERR_TIMEOUT, "the chain made no block for %.0f s (height %" PRId64
                           ")", GD_DEMO_STALL_S, r->height);
        }
        if (r->height > limit)
            return gd_fail(GD_ERR_TIMEOUT, "height %" PRId64 " and the run is not over: %zu of "
                           "%" PRIu64 " rounds ended%s", r->height, r->n_rounds, d->rounds,
                           r->n_rounds == d->rounds ? ", rewards not all claimed" : "");
        double left = 1.0 - (gd_clock_seconds() - tick);
        if (!(claimed && have_final) && left > 0)
            gd_demo_sleep_ms((long)(left * 1000));
    }
    return GD_OK;
}

/* ---- the command ---------------------------------------------------------------------------- */

static gd_status gd_demo_write_json(const gd_demo *d, const char *path) {
    json_t *j = gd_demo_report_json(&d->report);
    if (j == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    int rc = json_dump_file(j, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    return rc == 0 ? GD_OK : gd_fail(GD_ERR_IO, "--json: cannot write %s", path);
}

/* --json FILE's directory takes files: said at once, not after the run. */
static int gd_demo_json_writable(gd_cli *cli, const char *path) {
    char dir[GD_DEMO_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    const char *parent = dirname(dir);
    if (access(parent, W_OK | X_OK) == 0)
        return GD_CLI_CONTINUE;
    fprintf(cli->err, "error: --json %s: cannot write in %s\n", path, parent);
    return GD_EXIT_FAIL;
}

/* Everything between the temporary home's creation and its removal. */
static int gd_demo_go(gd_demo *d, const char *json_path) {
    gd_cli *cli = d->cli;
    char cls[GD_HARDWARE_CLASS_MAX + 1], identity[1024], spec[GD_DEMO_PATH_MAX];
    gd_status s = gd_hardware_class_auto(cls, "cpu", identity, sizeof identity);
    if (s == GD_OK)
        s = gd_demo_path(spec, sizeof spec, d->home, "spec.json");
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    int rc = gd_demo_write_spec(cli, spec, d->rounds, cls, &d->span);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    /* Every round in epoch 1's Inference phase, from block 42 to the next
     * PoC: the rewards settle at epoch 2's start. */
    d->epoch_length = GD_DEMO_FIRST_ROUND - GD_DEMO_POC_START +
                      (int64_t)d->rounds * d->span + GD_DEMO_SLACK;
    fprintf(cli->out, "gonka-localnet: 200 ms blocks, epochs of %" PRId64 " blocks; run 1: the "
                      "tiny model on %s, rounds of %" PRId64 " blocks\n",
            d->epoch_length, GD_DEMO_DATA, d->span);
    s = gd_demo_start_chain(d, spec);
    gd_node_status st;
    memset(&st, 0, sizeof st);
    for (int t = 0; s == GD_OK; t++) {
        s = gd_rpc_status(d->rpc, &st);
        if (s == GD_OK || t == 20)
            break;
        s = gd_demo_check_stop();
        gd_demo_sleep_ms(250);
    }
    if (s == GD_OK)
        s = gd_demo_http_open(&d->http);
    if (s == GD_OK)
        fprintf(cli->out, "chain %s at %s; accounts 0 .. %" PRIu64 " funded in genesis, 0 the "
                          "run's authority\n",
                st.network, d->rpc_url, d->workers + d->validators);
    if (s == GD_OK)
        s = gd_demo_start_daemons(d, d->rpc_url, st.network);
    if (s == GD_OK)
        s = gd_demo_watch(d);
    if (s != GD_OK) {
        fprintf(cli->err, "error: %s\n", gd_error_detail());
        return GD_EXIT_FAIL;
    }
    d->report.eval_batches = GD_DEMO_EVAL_BATCHES;
    d->report.batch = GD_DEMO_BATCH;
    d->report.seq = GD_DEMO_SEQ;
    d->report.seconds = gd_clock_seconds() - d->start;
    gd_demo_report_print(cli->out, &d->report);
    if (json_path && (s = gd_demo_write_json(d, json_path)) != GD_OK)
        return gd_cli_fail(cli, s);
    return GD_EXIT_OK;
}

/* The options, checked: -1, or the exit code of the error printed. */
static int gd_demo_options(gd_cli *cli, gd_args *args, gd_demo *d) {
    d->workers = 3;
    d->validators = 1;
    d->rounds = 3;
    d->cheater = gd_flag(args, "with-cheater");
    int rc;
    if ((rc = gd_cli_u64_opt(cli, args, &d->workers, "workers")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &d->validators, "validators")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &d->rounds, "rounds")) != GD_CLI_CONTINUE)
        return rc;
    if (d->workers < 1 || d->workers > GD_DEMO_WORKERS_MAX)
        return gd_cli_usage(cli, args, "--workers must be 1 to %d", GD_DEMO_WORKERS_MAX);
    if (d->validators < 1 || d->validators > GD_DEMO_VALIDATORS_MAX)
        return gd_cli_usage(cli, args, "--validators must be 1 to %d", GD_DEMO_VALIDATORS_MAX);
    if (d->rounds < 1 || d->rounds > GD_DEMO_ROUNDS_MAX)
        return gd_cli_usage(cli, args, "--rounds must be 1 to %d", GD_DEMO_ROUNDS_MAX);
    /* A commitment is checked only in a class of three: the worker, its
     * validator and a re-checker. */
    if (d->workers + d->validators < 3)
        return gd_cli_usage(cli, args, "the demo needs at least 3 participants (workers + "
                                       "validators)");
    if (d->cheater && d->workers < 2)
        return gd_cli_usage(cli, args, "--with-cheater makes the last worker lazy: give "
                                       "--workers 2 or more");
    return GD_CLI_CONTINUE;
}

static int gd_run_demo(gd_cli *cli, gd_args *args) {
    gd_demo *d = calloc(1, sizeof *d);
    if (d == NULL)
        return gd_cli_fail(cli, gd_fail(GD_ERR_NOMEM, "out of memory"));
    d->cli = cli;
    const char *json_path = gd_arg(args, "json");
    int rc = gd_demo_options(cli, args, d);
    if (rc == GD_CLI_CONTINUE)
        rc = gd_demo_find_programs(d);
    if (rc == GD_CLI_CONTINUE && json_path)
        rc = gd_demo_json_writable(cli, json_path);
    if (rc != GD_CLI_CONTINUE) {
        free(d);
        return rc;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(d->home, sizeof d->home, "%s/gd-demo-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(d->home) == NULL) {
        fprintf(cli->err, "error: cannot create a temporary directory %s\n", d->home);
        free(d);
        return GD_EXIT_FAIL;
    }
    d->start = gd_clock_seconds();
    fprintf(cli->out, "demo: %" PRIu64 " workers%s, %" PRIu64 " validator%s, %" PRIu64
                      " round%s; home %s (removed at exit)\n",
            d->workers, d->cheater ? " (the last one lazy)" : "", d->validators,
            d->validators == 1 ? "" : "s", d->rounds, d->rounds == 1 ? "" : "s", d->home);
    fflush(cli->out);
    gd_demo_signals_catch();
    rc = gd_demo_go(d, json_path);
    /* Every way out of gd_demo_go comes here. */
    gd_demo_stop_all(&d->procs, 5000);
    gd_demo_http_close(d->http);
    gd_rpc_close(d->rpc);
    if (gd_demo_remove_tree(d->home) != GD_OK)
        fprintf(cli->err, "warning: %s\n", gd_error_detail());
    gd_demo_signals_restore();
    free(d);
    return rc;
}

static const gd_opt_spec gd_demo_opts[] = {
    {"workers", "N", "workers (default 3, at most 8)"},
    {"validators", "N", "validators (default 1, at most 4)"},
    {"rounds", "N", "rounds to train, settle and claim (default 3, at most 20)"},
    {"with-cheater", NULL, "the last worker is lazy (gd-adversary --lazy 0.5, beside this binary)"},
    {"json", "FILE", "also write the summary to FILE as one JSON object"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_demo = {
    "demo", "", 0, 0,
    "Run a whole DiLoCo run here: a local chain, a daemon per participant, live progress.",
    "Creates a temporary home, starts gonka-localnet on a free loopback port with run 1 (the\n"
    "tiny model on a synthetic source) and its participants funded in genesis, and one\n"
    "`gonka-diloco run` daemon per worker and validator. Prints a progress line a second\n"
    "(height, round and phase, each worker's inner loss, commitments, verdicts, bytes)\n"
    "until the last round is settled and its rewards claimed, then per participant its\n"
    "role, tokens accepted, verdicts against it, reward claimed and collateral slashed; the\n"
    "eval loss of G before and after; each round's agreed state hash. Everything it started\n"
    "is stopped and the home removed on exit, SIGINT and SIGTERM included (docs/cli.md).",
    gd_demo_opts, gd_run_demo,
};
