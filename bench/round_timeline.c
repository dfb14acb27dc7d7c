/* One DiLoCo round of a member, phase by phase, through the code a node
 * runs: the round engine (plugin/member/round_engine.h), the artifact store, the
 * HTTP server and peer client, and the chain port over RPC against a real
 * gonka-localnet process. For the member (worker 0) it prints
 *   train             the inner steps (their own clock) and tokens/s, then
 *                     the state hashes and payload encoding after them; the
 *                     segment starts are written while it trains, the post
 *                     state and the payload as they are encoded, durable
 *                     before the round is sealed;
 *   encode + fsync    what is left: the transcript written durably;
 *   commit latency    MsgCommitRound submitted until it is in a block;
 *   fetch + verify    the peers' payloads, and the check target's
 *                     transcript, drawn segment's state and one chunk of its
 *                     start and post states over loopback HTTP (the payloads
 *                     and the state straight into files, as a member keeps
 *                     them), each parsed against what was committed (the
 *                     state's descriptor only: its arrays are hashed as the
 *                     check loads them); MB/s, and per core: bytes
 *                     over the member's CPU seconds (its client thread while
 *                     the peers answer, then parsing), and over both ends'
 *                     (the whole process, the loopback servers included).
 *                     Twice: into the buffers a round gave back, as in every
 *                     round of a node but its first (the figure in the
 *                     total), and before that into fresh memory, as in the
 *                     first (printed beside it);
 *   validator check   links, one payload chunk, one re-executed segment;
 *   aggregate         G_{r+1} from the W payloads;
 *   attest            G_{r+1}'s state hash;
 * and compute utilization, training time over the sum of the phases, and
 * the process's peak resident memory in each phase (the high-water mark
 * reset at the phase's start; every worker's state lives in the process,
 * so it is an upper bound on one member's).
 *
 * The W workers are trained in turn by one engine (ranks 0..W-1), each
 * with its own store and HTTP server. The run spec is what `gonka-diloco
 * sim --print-spec` prints for these flags (built in-process), with a
 * one-block train window so the commit window opens right after the
 * member's secret is sealed. The member joins run 1 on the localnet, seals
 * its secret once every worker has trained, and commits in round 0's commit
 * window. gonka-localnet opens rounds only in an Inference phase, the
 * first from about block 42, so the bench waits some 40 blocks there
 * (--block-time, default 200 ms as in the e2e tests). The commit latency is
 * the chain port's submit: account query, signing, broadcast, and polling
 * /tx (after 25 ms plus an eighth of the time waited, at most 300 ms;
 * chain/client/submit.c) until the block holds it. If localnet cannot be started,
 * the commit is printed as unavailable and left out of the total. The
 * check's draw is fixed (middle segment, middle step, middle chunk), not
 * the chain's.
 *
 * Training is the member's: a segment at a time through the round engine's
 * job, each segment's start written as training reaches it (behind
 * training, or in the foreground when --memory-budget leaves no room for
 * the staging copy: plugin/member/member_memory.h), and the post state and
 * the payload go to their files as they are encoded, so "encode + fsync" is
 * what is left after that: the transcript.
 * The aggregate is the member's too: the peers' payloads in the files they
 * were fetched to, each read a chunk at a time, G' written to its
 * file a window at a time (kept in memory as the budget allows), so
 * "attest" is only its descriptor's hash.
 *
 * Usage: gd-bench-round [--model tiny|small] [--inner-steps H] [--segment-steps K]
 *                       [--workers W] [--threads N] [--block-time MS] [--bin DIR]
 *                       [--dir DIR] [--memory-budget SIZE] [--json] */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/args.h"
#include "bench/timer.h"
#include "chain/keys/address.h"
#include "chain/keys/keyfile.h"
#include "chain/wire/coin.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/diloco_spec.h"
#include "common/parse.h"
#include "plugin/cli/cli.h"
#include "plugin/http/http_server.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/global_file.h"
#include "plugin/member/member_memory.h"
#include "plugin/member/round_engine.h"
#include "plugin/member/start_writer.h"
#include "plugin/member/state_index.h"
#include "plugin/ports/chain_port_rpc.h"
#include "plugin/ports/peer_http.h"

#define BENCH_WORKERS_MAX 16
#define BENCH_RUN 1
#define BENCH_ROUND 0

typedef struct bench_opts {
    const char *model, *bin, *dir;
    uint32_t inner_steps, segment_steps, workers, threads, block_ms;
    bool json;
    uint64_t memory_budget; /* 0: no limit (plugin/member/member_memory.h) */
} bench_opts;

typedef struct bench_worker {
    char address[GD_ADDRESS_STR_MAX];
    uint32_t rank;
    gd_trained_round t;
    bool trained;
    gd_artifact_store store;
    pthread_mutex_t serve_mu; /* guards served */
    gd_state_index_cache served;
    size_t n;             /* the model's values, for state chunks */
    uint32_t chunk_elems; /* and its chunk size */
    gd_http_server *server;
    char url[96];
} bench_worker;

/* The member's view of gonka-localnet: the process, the port, its key. */
typedef struct bench_chain {
    bool up;
    pid_t pid;
    char home[GD_ARTIFACT_PATH_MAX];
    gd_chain_rpc rpc;
    bool rpc_open;
    gd_key key;
    char address[GD_ADDRESS_STR_MAX];
    char why[512]; /* why there is no commit figure */
} bench_chain;

/* One fetch + verify of a round's artifacts. */
typedef struct bench_pass {
    uint64_t bytes;
    uint32_t fetches;
    double fetch_s, verify_s;
    double cpu_s;        /* both ends: the member and the serving peers */
    double member_cpu_s; /* the member alone: its client thread, then parsing */
} bench_pass;

typedef struct bench_result {
    size_t params;
    uint32_t segments;
    uint64_t tokens;
    double train_s, tokens_per_s, loss, round_extra_s;
    double record_s;         /* of round_extra_s: the leaves recorded at the boundaries */
    double store_s;
    uint64_t store_bytes;
    uint64_t payload_bytes;  /* the member's payload file */
    uint64_t starts_bytes;   /* segment starts written while training */
    bool starts_background;  /* behind training (else in the foreground) */
    bool have_commit;
    double commit_s;
    bench_pass fresh;  /* a node's first round: fetched into fresh memory */
    bench_pass reused; /* a later round: into the buffers given back */
    double check_s;
    uint32_t check_segment, check_step, check_chunk;
    gd_check_answer check;
    double aggregate_s, attest_s;
    uint8_t next_hash[32];
    /* The process's peak resident memory in each phase, MiB (0: the kernel
     * did not say): train, encode + fsync, fetch + verify (both passes),
     * check, aggregate, attest. */
    double peak_mib[6];
} bench_result;

static int usage(const char *why) {
    fprintf(stderr, "error: %s\nusage: gd-bench-round [--model tiny|small] [--inner-steps H] "
                    "[--segment-steps K] [--workers W] [--threads N] [--block-time MS] "
                    "[--bin DIR] [--dir DIR] [--memory-budget SIZE] [--json]\n",
            why);
    return 2;
}

static int parse(int argc, char **argv, bench_opts *o) {
    *o = (bench_opts){.model = "tiny", .inner_steps = 20, .segment_steps = 5, .workers = 3,
                      .block_ms = 200};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (v == NULL)
            return usage("every option but --json takes a value");
        i++;
        if (strcmp(a, "--model") == 0) {
            if (strcmp(v, "tiny") != 0 && strcmp(v, "small") != 0)
                return usage("--model is tiny or small");
            o->model = v;
        } else if (strcmp(a, "--bin") == 0) {
            o->bin = v;
        } else if (strcmp(a, "--dir") == 0) {
            o->dir = v;
        } else if (strcmp(a, "--memory-budget") == 0) {
            if (strcmp(v, "0") != 0 && gd_parse_size(&o->memory_budget, v) != GD_OK)
                return usage("--memory-budget is a size such as 512M or 0 (no limit)");
        } else {
            uint32_t x = 0;
            if (!gd_bench_count(&x, v))
                return usage("numbers must be 1..100000");
            if (strcmp(a, "--inner-steps") == 0)
                o->inner_steps = x;
            else if (strcmp(a, "--segment-steps") == 0)
                o->segment_steps = x;
            else if (strcmp(a, "--workers") == 0)
                o->workers = x;
            else if (strcmp(a, "--threads") == 0)
                o->threads = x;
            else if (strcmp(a, "--block-time") == 0)
                o->block_ms = x;
            else
                return usage("unknown option");
        }
    }
    if (o->threads == 0)
        o->threads = gd_bench_cores();
    if (o->inner_steps % o->segment_steps != 0)
        return usage("--segment-steps must divide --inner-steps");
    if (o->workers > BENCH_WORKERS_MAX)
        return usage("--workers is at most 16");
    if (o->block_ms < 10)
        return usage("--block-time is at least 10 ms");
    return -1;
}

static double bench_clock(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of the whole process: the fetching member and, over
 * loopback, the peers' servers. */
static double bench_cpu_now(void) { return bench_clock(CLOCK_PROCESS_CPUTIME_ID); }

/* CPU seconds of the calling thread: the fetching member's client alone
 * while the servers' threads answer it. */
static double bench_thread_cpu_now(void) { return bench_clock(CLOCK_THREAD_CPUTIME_ID); }

/* --- the run spec ------------------------------------------------------------------------ */

/* sim --print-spec's spec for the options, in-process, with windows that
 * let the bench commit as soon as it has trained. */
static gd_status bench_spec_json(const bench_opts *o, json_t **out) {
    char h[16], k[16], threads[16];
    snprintf(h, sizeof h, "%u", o->inner_steps);
    snprintf(k, sizeof k, "%u", o->segment_steps);
    snprintf(threads, sizeof threads, "%u", o->threads);
    char *argv[] = {"gonka-diloco", "sim", "--model", (char *)o->model, "--data",
                    "synthetic:markov:1", "--inner-steps", h, "--segment-steps", k, "--rounds",
                    "20", "--threads", threads, "--print-spec", NULL};
    char *text = NULL, *errs = NULL;
    size_t text_len = 0, errs_len = 0;
    FILE *f = open_memstream(&text, &text_len);
    FILE *e = open_memstream(&errs, &errs_len);
    if (f == NULL || e == NULL) {
        if (f)
            fclose(f);
        if (e)
            fclose(e);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    int rc = gd_cli_main(f, (int)(sizeof argv / sizeof argv[0]) - 1, argv, e);
    fclose(f);
    fclose(e);
    gd_status s = GD_OK;
    json_error_t jerr;
    *out = rc == 0 ? json_loads(text, 0, &jerr) : NULL;
    if (rc != 0)
        s = gd_fail(GD_ERR_INVALID, "sim --print-spec: %s", errs);
    else if (*out == NULL)
        s = gd_fail(GD_ERR_PARSE, "sim --print-spec printed no JSON: %s", jerr.text);
    free(text);
    free(errs);
    if (s != GD_OK)
        return s;
    json_t *w = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "train", 1, "commit", 10,
                          "reveal", 4, "verify", 6, "open", 4, "dispute", 4, "dispute_open", 4,
                          "attest", 6, "attest_open", 4);
    if (w == NULL || json_object_set_new(*out, "windows", w) != 0) {
        json_decref(*out);
        *out = NULL;
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    return GD_OK;
}

/* --- gonka-localnet -------------------------------------------------------------------------- */

/* Starts argv[0] with its output in log; it dies with the bench. */
static pid_t bench_spawn(char *const argv[], const char *log) {
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static bool bench_exec(char *const argv[], const char *log) {
    pid_t pid = bench_spawn(argv, log);
    int st = 0;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The last line of a log, for a reason. */
static void bench_log_tail(char *out, size_t cap, const char *log) {
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (line[0] != '\n') {
            line[strcspn(line, "\n")] = '\0';
            snprintf(out, cap, "%s", line);
        }
    if (f)
        fclose(f);
}

static bool bench_chain_fail(bench_chain *c, const char *what, const char *detail) {
    snprintf(c->why, sizeof c->why, "%s: %s", what, detail);
    return false;
}

/* Submits one message as the member; false with why unless the chain took it. */
static bool bench_submit(bench_chain *c, gd_any *msg, const char *what, double *seconds) {
    gd_chain_port port = gd_chain_rpc_port(&c->rpc);
    uint32_t code = 0;
    char log[400];
    double t0 = gd_bench_now();
    gd_status s = port.iface->submit(port.ctx, &c->key, msg, 1, &code, log, sizeof log);
    if (seconds)
        *seconds = gd_bench_now() - t0;
    gd_any_free(msg);
    if (s != GD_OK)
        return bench_chain_fail(c, what, gd_error_detail());
    if (code != 0) {
        char detail[480];
        snprintf(detail, sizeof detail, "refused with code %u: %s", code, log);
        return bench_chain_fail(c, what, detail);
    }
    return true;
}

/* gonka-localnet initialised with the spec (run 1 in genesis), started on
 * loopback, and the member (account 1) joined with the minimum collateral. */
static bool bench_chain_start(bench_chain *c, const char *bin, const char *dir, json_t *spec,
                              const char *artifact_url, uint32_t block_ms) {
    char localnet[GD_ARTIFACT_PATH_MAX], spec_path[GD_ARTIFACT_PATH_MAX];
    char addr_path[GD_ARTIFACT_PATH_MAX], log[GD_ARTIFACT_PATH_MAX], bt[32];
    snprintf(localnet, sizeof localnet, "%s/gonka-localnet", bin);
    snprintf(spec_path, sizeof spec_path, "%s/spec.json", dir);
    snprintf(addr_path, sizeof addr_path, "%s/rpc.addr", dir);
    snprintf(c->home, sizeof c->home, "%s/chain", dir);
    snprintf(bt, sizeof bt, "%ums", block_ms);
    if (access(localnet, X_OK) != 0)
        return bench_chain_fail(c, localnet, strerror(errno));
    if (json_dump_file(spec, spec_path, 0) != 0)
        return bench_chain_fail(c, spec_path, "cannot write the run spec");
    snprintf(log, sizeof log, "%s/localnet-init.log", dir);
    char *init[] = {localnet, "init", "--home", c->home, "--accounts", "2", "--epoch-length",
                    "100000", "--diloco-run", spec_path, NULL};
    if (!bench_exec(init, log)) {
        char tail[400];
        bench_log_tail(tail, sizeof tail, log);
        return bench_chain_fail(c, "gonka-localnet init", tail);
    }
    snprintf(log, sizeof log, "%s/localnet.log", dir);
    char *start[] = {localnet, "start", "--home", c->home, "--rpc", "127.0.0.1:0",
                     "--rpc-addr-file", addr_path, "--block-time", bt, NULL};
    c->pid = bench_spawn(start, log);
    if (c->pid <= 0)
        return bench_chain_fail(c, "gonka-localnet start", strerror(errno));
    c->up = true;
    char addr[128] = "";
    for (int i = 0; i < 500 && strchr(addr, '\n') == NULL; i++) {
        int st = 0;
        if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
            c->up = false;
            char tail[400];
            bench_log_tail(tail, sizeof tail, log);
            return bench_chain_fail(c, "gonka-localnet start exited", tail);
        }
        usleep(20000);
        FILE *f = fopen(addr_path, "r");
        if (f) {
            size_t got = fread(addr, 1, sizeof addr - 1, f);
            addr[got] = '\0';
            fclose(f);
        }
    }
    if (strchr(addr, '\n') == NULL)
        return bench_chain_fail(c, "gonka-localnet start", "no RPC address within 10 s");
    addr[strcspn(addr, "\n")] = '\0';
    char url[160];
    snprintf(url, sizeof url, "http://%s", addr);
    if (gd_chain_rpc_open(&c->rpc, url, "", "") != GD_OK)
        return bench_chain_fail(c, url, gd_error_detail());
    c->rpc_open = true;
    char key_path[GD_ARTIFACT_PATH_MAX + 32];
    snprintf(key_path, sizeof key_path, "%s/keys/account-1.key", c->home);
    if (gd_keyfile_read(&c->key, key_path) != GD_OK ||
        gd_address_from_pubkey(c->address, sizeof c->address, "gonka", c->key.pubkey) != GD_OK)
        return bench_chain_fail(c, key_path, gd_error_detail());
    gd_coin collateral;
    json_t *hw = json_array_get(json_object_get(spec, "hw_classes"), 0);
    const char *min = json_string_value(json_object_get(spec, "min_collateral"));
    if (hw == NULL || min == NULL || gd_coin_parse(&collateral, min) != GD_OK)
        return bench_chain_fail(c, "the run spec", "no hardware class or minimum collateral");
    gd_any msg;
    memset(&msg, 0, sizeof msg);
    if (gd_diloco_msg_join_run(&msg, c->address, BENCH_RUN, artifact_url, json_string_value(hw),
                               &collateral) != GD_OK)
        return bench_chain_fail(c, "MsgJoinRun", gd_error_detail());
    return bench_submit(c, &msg, "MsgJoinRun", NULL);
}

/* Seals the member's secret (round 0 opens in the next block), waits for
 * its commit window and times the commitment's submission. */
static bool bench_chain_commit(bench_chain *c, const gd_diloco_commit *commit, uint32_t block_ms,
                               double *seconds) {
    uint8_t secret[GD_DILOCO_SALT_LEN], seal[GD_DILOCO_HASH_LEN];
    memset(secret, 0x5a, sizeof secret);
    gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, c->address, NULL, 0, secret);
    gd_any msg;
    memset(&msg, 0, sizeof msg);
    if (gd_diloco_msg_randomness_sealed(&msg, c->address, BENCH_RUN, BENCH_ROUND, seal) != GD_OK)
        return bench_chain_fail(c, "MsgRandomness", gd_error_detail());
    if (!bench_submit(c, &msg, "MsgRandomness (sealed)", NULL))
        return false;
    gd_chain_port port = gd_chain_rpc_port(&c->rpc);
    int64_t commit_start = -1;
    double deadline = gd_bench_now() + 10.0 + 40.0 * block_ms / 1000.0;
    for (;;) {
        if (gd_bench_now() > deadline)
            return bench_chain_fail(c, "round 0", "its commit window did not open in time");
        if (commit_start < 0) {
            Gonka__Diloco__V1__QueryRoundResponse *q = NULL;
            if (port.iface->query_round(port.ctx, &q, BENCH_RUN, BENCH_ROUND) == GD_OK && q &&
                q->round && q->round->windows)
                commit_start = q->round->windows->commit_start;
            if (q)
                protobuf_c_message_free_unpacked(&q->base, NULL);
        }
        gd_node_status st;
        if (commit_start >= 0 && gd_rpc_status(c->rpc.rpc, &st) == GD_OK &&
            st.latest_block_height >= commit_start)
            break;
        usleep(10000);
    }
    memset(&msg, 0, sizeof msg);
    if (gd_diloco_msg_commit_round(&msg, c->address, commit) != GD_OK)
        return bench_chain_fail(c, "MsgCommitRound", gd_error_detail());
    return bench_submit(c, &msg, "MsgCommitRound", seconds);
}

static void bench_chain_stop(bench_chain *c) {
    if (c->rpc_open)
        gd_chain_rpc_close(&c->rpc);
    c->rpc_open = false;
    gd_key_wipe(&c->key);
    if (!c->up)
        return;
    kill(c->pid, SIGTERM);
    int st = 0;
    for (int i = 0; i < 300; i++) {
        if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
            c->up = false;
            return;
        }
        usleep(10000);
    }
    kill(c->pid, SIGKILL);
    waitpid(c->pid, &st, 0);
    c->up = false;
}

/* The directory of gonka-localnet: --bin, else beside this program, its
 * ../bin, or build/bin. */
static void bench_bin_dir(char *out, size_t cap, const char *given, const char *argv0) {
    if (given) {
        snprintf(out, cap, "%s", given);
        return;
    }
    char self[GD_ARTIFACT_PATH_MAX];
    snprintf(self, sizeof self, "%s", argv0);
    const char *here = dirname(self);
    char candidates[3][GD_ARTIFACT_PATH_MAX];
    snprintf(candidates[0], sizeof candidates[0], "%s", here);
    snprintf(candidates[1], sizeof candidates[1], "%s/../bin", here);
    snprintf(candidates[2], sizeof candidates[2], "build/bin");
    for (int i = 0; i < 3; i++) {
        char path[GD_ARTIFACT_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/gonka-localnet", candidates[i]);
        if (access(path, X_OK) == 0) {
            snprintf(out, cap, "%s", candidates[i]);
            return;
        }
    }
    snprintf(out, cap, "%s", candidates[0]);
}

/* --- serving ------------------------------------------------------------------------------- */

/* A member's artifact files, as plugin/member/member_serve.c serves them (without
 * the windows: the bench asks only once they may be served). */
static gd_status bench_answer(void *ctx, const gd_artifact_req *req, gd_artifact_answer *out,
                              unsigned *http_status) {
    bench_worker *w = ctx;
    gd_artifact_kind kind;
    switch (req->kind) {
    case GD_REQ_PAYLOAD: kind = GD_ARTIFACT_PAYLOAD; break;
    case GD_REQ_TRANSCRIPT: kind = GD_ARTIFACT_TRANSCRIPT; break;
    case GD_REQ_STATE:
    case GD_REQ_STATE_CHUNK: kind = GD_ARTIFACT_STATE; break;
    default: *http_status = 404; return gd_fail(GD_ERR_NOT_FOUND, "not served here");
    }
    *http_status = 404;
    GD_TRY(gd_artifact_path(&w->store, out->path, sizeof out->path, kind, req->run, req->round,
                            req->leaf));
    out->content_type = "application/octet-stream";
    if (req->kind == GD_REQ_STATE_CHUNK) {
        char path[sizeof out->path];
        memcpy(path, out->path, sizeof path);
        out->path[0] = '\0';
        pthread_mutex_lock(&w->serve_mu);
        gd_status s = gd_state_index_cache_chunk(&w->served, path, false, w->n, w->chunk_elems,
                                                 req->chunk, &out->body, &out->proof);
        pthread_mutex_unlock(&w->serve_mu);
        GD_TRY(s);
    }
    *http_status = 200;
    return GD_OK;
}

/* What is left to write when training is done: the transcript (the
 * states were written as training reached them, the payload and the state
 * after encoding as they were made), as gd_member_store_round does. */
static gd_status bench_store(bench_worker *w, uint64_t *bytes) {
    const gd_trained_round *t = &w->t;
    *bytes = t->transcript.len;
    if (!t->r.payload.in_file) {
        *bytes += t->commit.payload_bytes;
        GD_TRY(gd_artifact_put_payload(&w->store, BENCH_RUN, BENCH_ROUND, &t->r.payload));
    }
    return gd_artifact_put(&w->store, GD_ARTIFACT_TRANSCRIPT, BENCH_RUN, BENCH_ROUND, 0,
                           t->transcript.data, t->transcript.len);
}

/* The floor of the member's memory choices. */
static uint64_t bench_floor_bytes(const gd_engine *e) {
    return gd_memory_floor_bytes(&e->rc.diloco.codec, e->n, e->rc.diloco.chunk_elems);
}

/* A worker's round as a member trains it: a segment at a time, each
 * state written behind training (or in the foreground) by a writer of its
 * own as it is reached; done once the last is durable. */
static gd_status bench_train(gd_engine *e, bench_worker *w, const gd_global_state *g0,
                             bool background, uint64_t *starts_bytes) {
    gd_start_writer writer;
    GD_TRY(gd_start_writer_open(&writer, &w->store, BENCH_RUN, background));
    gd_engine_job job;
    memset(&job, 0, sizeof job);
    gd_engine_start_sink sink = gd_start_writer_sink(&writer);
    gd_status s = gd_engine_job_begin(e, BENCH_ROUND, g0, NULL, NULL, w->address, w->rank, &sink,
                                      &job);
    bool done = false;
    while (s == GD_OK && !done)
        s = gd_engine_job_segment(e, &job, NULL, &done);
    if (s == GD_OK)
        gd_engine_job_take(&job, &w->t);
    gd_engine_job_free(&job);
    gd_status drained = gd_start_writer_drain(&writer);
    if (s == GD_OK)
        s = drained;
    *starts_bytes = writer.written * ((uint64_t)GD_WORKER_DESC_BYTES + 16 * (uint64_t)e->n);
    gd_start_writer_close(&writer);
    if (s != GD_OK && done)
        gd_trained_round_free(&w->t);
    return s;
}

/* The chain's record of a worker's commitment, as a validator reads it. */
static void bench_commitment(const bench_worker *w, Gonka__Diloco__V1__Commitment *c) {
    gonka__diloco__v1__commitment__init(c);
    const gd_diloco_commit *m = &w->t.commit;
    c->run = m->run;
    c->round = m->round;
    c->participant = (char *)w->address;
    c->payload_root = (ProtobufCBinaryData){32, (uint8_t *)m->payload_root};
    c->payload_leaves = m->payload_leaves;
    c->payload_bytes = m->payload_bytes;
    c->transcript_root = (ProtobufCBinaryData){32, (uint8_t *)m->transcript_root};
    c->segment_count = m->segment_count;
    c->tokens = w->t.r.tokens;
    c->loss_first_micro = m->loss_first_micro;
    c->loss_last_micro = m->loss_last_micro;
}

typedef struct bench_fetcher {
    gd_peer_port port;
    uint64_t bytes;
    uint32_t count;
    double seconds;
} bench_fetcher;

/* One artifact (leaf, chunk) of `from`, or a file's first max bytes when
 * prefix; a chunk's proof goes into proof (NULL for whole files). With
 * into, the body goes to that file, as a member fetches a payload or a
 * segment start, and out stays empty. */
static gd_status bench_fetch(bench_fetcher *f, const bench_worker *from, gd_buf *out,
                             gd_artifact_req_kind kind, uint32_t leaf, uint32_t chunk, size_t max,
                             bool prefix, gd_buf *proof, const char *into) {
    gd_artifact_req req = {.kind = kind, .run = BENCH_RUN, .round = BENCH_ROUND, .leaf = leaf,
                           .chunk = chunk, .first_bytes = prefix ? max : 0, .into = into};
    gd_artifact_answer a;
    memset(&a, 0, sizeof a);
    double t0 = gd_bench_now();
    gd_status s = f->port.iface->fetch(f->port.ctx, &a, from->url, &req, max);
    f->seconds += gd_bench_now() - t0;
    if (s != GD_OK)
        return gd_fail_context(s, "fetching from %s", from->url);
    *out = a.body;
    a.body = (gd_buf){0};
    if (proof != NULL) {
        *proof = a.proof;
        a.proof = (gd_buf){0};
    }
    gd_artifact_answer_free(&a);
    struct stat st;
    f->bytes += into != NULL ? (stat(into, &st) == 0 ? (uint64_t)st.st_size : 0) : out->len;
    f->count++;
    return GD_OK;
}

/* Where the member keeps worker i's payload: its own in its store, a
 * peer's in the round's peer-i.gdpl (the directory made). */
static gd_status bench_payload_path(const bench_worker *ws, uint32_t W, uint32_t i,
                                    char path[GD_ARTIFACT_PATH_MAX]) {
    bool own = i == 0 && W > 1;
    return gd_artifact_place(&ws[0].store, path,
                             own ? GD_ARTIFACT_PAYLOAD : GD_ARTIFACT_PEER_PAYLOAD, BENCH_RUN,
                             BENCH_ROUND, own ? 0 : i);
}

/* The peers' payloads (the member's own when alone), as a node fetches
 * them: at once, in parallel, where there are several, each straight into
 * the file the member keeps it in. */
static gd_status bench_fetch_payloads(bench_fetcher *f, const bench_worker *ws, uint32_t W) {
    uint32_t first = W > 1 ? 1 : 0, k = W - first;
    char (*paths)[GD_ARTIFACT_PATH_MAX] = calloc(W, sizeof *paths);
    gd_peer_fetch_item *items = calloc(k ? k : 1, sizeof *items);
    gd_status s = paths && items ? GD_OK : gd_fail(GD_ERR_NOMEM, "out of memory");
    for (uint32_t i = first; s == GD_OK && i < W; i++)
        s = bench_payload_path(ws, W, i, paths[i]);
    if (s == GD_OK && (k < 2 || f->port.iface->fetch_all == NULL)) {
        for (uint32_t i = first; s == GD_OK && i < W; i++) {
            gd_buf none = {0};
            s = bench_fetch(f, &ws[i], &none, GD_REQ_PAYLOAD, 0, 0, ws[i].t.commit.payload_bytes,
                            false, NULL, paths[i]);
        }
        free(items);
        free(paths);
        return s;
    }
    for (uint32_t i = 0; s == GD_OK && i < k; i++)
        items[i] = (gd_peer_fetch_item){
            .url = ws[first + i].url, .max_len = ws[first + i].t.commit.payload_bytes,
            .req = {.kind = GD_REQ_PAYLOAD, .run = BENCH_RUN, .round = BENCH_ROUND,
                    .into = paths[first + i]}};
    double t0 = gd_bench_now();
    if (s == GD_OK)
        s = f->port.iface->fetch_all(f->port.ctx, items, k);
    f->seconds += gd_bench_now() - t0;
    for (uint32_t i = 0; items != NULL && i < k; i++) {
        if (s == GD_OK && items[i].status != GD_OK)
            s = gd_fail(items[i].status, "fetching from %s", items[i].why);
        struct stat st;
        if (s == GD_OK && stat(paths[first + i], &st) == 0) {
            f->bytes += (uint64_t)st.st_size;
            f->count++;
        }
        gd_artifact_answer_free(&items[i].answer);
    }
    free(items);
    free(paths);
    return s;
}

/* --- the round -------------------------------------------------------------------------------- */

static gd_status bench_address(char *out, size_t cap, uint32_t i) {
    uint8_t secret[GD_SECKEY_LEN] = {0};
    secret[GD_SECKEY_LEN - 1] = (uint8_t)(i + 1);
    secret[0] = 0x42;
    gd_key k;
    GD_TRY(gd_key_from_secret(&k, secret));
    gd_status s = gd_address_from_pubkey(out, cap, "gonka", k.pubkey);
    gd_key_wipe(&k);
    return s;
}

/* What one round fetches and verifies: the peers' payloads (the member's
 * own when alone) and what the check needs from its target. */
typedef struct bench_fetched {
    gd_check_evidence ev; /* the segment's start and the payloads are in files */
    /* Each payload's sum of squares, made as it was checked (has_norm), as
     * the member keeps them for its aggregate. */
    bool has_norm[BENCH_WORKERS_MAX];
    double sum_squares[BENCH_WORKERS_MAX];
} bench_fetched;

/* Gives every fetched buffer back to the peer client, as a node does when
 * a round ends, so the next pass fetches into memory touched before. */
static void bench_recycle(gd_peer_port port, bench_fetched *x) {
    port.iface->recycle(port.ctx, &x->ev.start_chunk);
    port.iface->recycle(port.ctx, &x->ev.post_chunk);
    gd_check_evidence_free(&x->ev);
}

static gd_status bench_fetch_verify(gd_engine *e, const bench_opts *o, const bench_worker *ws,
                                    const bench_result *r, bench_pass *out, gd_peer_port port,
                                    bench_fetched *x) {
    uint32_t W = o->workers, S = r->segments;
    const bench_worker *target = &ws[W > 1 ? 1 : 0];
    size_t state_max = (size_t)GD_WORKER_DESC_BYTES + 12 * e->n; /* without the residual */
    size_t chunk_max = (size_t)16 * e->rc.diloco.chunk_elems;
    bench_fetcher f = {.port = port};
    gd_check_evidence *ev = &x->ev;
    gd_status s = GD_OK;
    double cpu0 = bench_cpu_now(), thread0 = bench_thread_cpu_now();
    s = bench_fetch_payloads(&f, ws, W);
    if (s == GD_OK)
        s = bench_fetch(&f, target, &ev->transcript, GD_REQ_TRANSCRIPT, 0,
                        0, (size_t)(S + 2) * GD_WORKER_DESC_BYTES, false, NULL, NULL);
    if (s == GD_OK)
        s = gd_artifact_check_state_place(&ws[0].store, ev->segment_state_path, BENCH_RUN,
                                          BENCH_ROUND, (uint32_t)(target - ws),
                                          r->check_segment);
    if (s == GD_OK)
        s = bench_fetch(&f, target, &ev->segment_state, GD_REQ_STATE, r->check_segment, 0,
                        state_max, true, NULL, ev->segment_state_path);
    if (s == GD_OK)
        s = bench_fetch(&f, target, &ev->start_chunk, GD_REQ_STATE_CHUNK, 0, r->check_chunk,
                        chunk_max, false, &ev->start_proof, NULL);
    if (s == GD_OK)
        s = bench_fetch(&f, target, &ev->post_chunk, GD_REQ_STATE_CHUNK, S + 1, r->check_chunk,
                        chunk_max, false, &ev->post_proof, NULL);
    /* The servers are idle from here: parsing's CPU is the member's,
     * its pool threads included. */
    double client_cpu = bench_thread_cpu_now() - thread0, parse_cpu0 = bench_cpu_now();
    double t0 = gd_bench_now();
    for (uint32_t i = W > 1 ? 1 : 0; s == GD_OK && i < W; i++) {
        /* As the member keeps a payload: checked in its file, every chunk
         * decoded in the same pass, which also gives its norm. */
        gd_payload_view p;
        gd_payload_decoded d;
        char path[GD_ARTIFACT_PATH_MAX];
        s = bench_payload_path(ws, W, i, path);
        if (s == GD_OK)
            s = gd_engine_payload_view_path_proved(e, &p, NULL, &d, BENCH_ROUND,
                                                   ws[i].address, path,
                                                   ws[i].t.commit.payload_root,
                                                   ws[i].t.commit.payload_leaves);
        if (s == GD_OK)
            gd_payload_view_close(&p);
        if (s == GD_OK && d.malformed)
            s = gd_fail(GD_ERR_INVALID, "an honest payload does not decode: %s", d.why);
        x->has_norm[i] = s == GD_OK && d.has_norm;
        x->sum_squares[i] = d.sum_squares;
    }
    if (s == GD_OK) {
        gd_worker_desc *descs = calloc(S + 2, sizeof *descs);
        gd_mmr mmr;
        s = descs ? gd_engine_transcript_parse(ev->transcript.data, ev->transcript.len, S,
                                               target->t.commit.transcript_root, descs, &mmr)
                  : gd_fail(GD_ERR_NOMEM, "out of memory");
        if (descs)
            gd_mmr_free(&mmr);
        free(descs);
    }
    /* The chunks' proofs, and the state's arrays (hashed as the
     * re-execution loads them), are checked by the check. */
    int fd = s == GD_OK ? open(ev->segment_state_path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (s == GD_OK && (fd < 0 || fstat(fd, &st) != 0))
        s = gd_fail(GD_ERR_IO, "cannot open %s: %s", ev->segment_state_path, strerror(errno));
    if (s == GD_OK) {
        gd_state_file_view v;
        s = gd_state_file_view_open_file(&v, fd, (uint64_t)st.st_size, &e->tag, e->n);
    }
    if (fd >= 0)
        close(fd);
    out->verify_s = gd_bench_now() - t0;
    out->cpu_s = bench_cpu_now() - cpu0;
    out->member_cpu_s = client_cpu + bench_cpu_now() - parse_cpu0;
    out->fetch_s = f.seconds;
    out->bytes = f.bytes;
    out->fetches = f.count;
    return s;
}

/* The round after training and storing: fetch, check, aggregate, attest. */
static gd_status bench_after_commit(gd_engine *e, const bench_opts *o, bench_worker *ws,
                                    const gd_global_state *g0, bench_result *r) {
    uint32_t W = o->workers, S = r->segments;
    const bench_worker *target = &ws[W > 1 ? 1 : 0];
    gd_peer_http *http = NULL;
    GD_TRY(gd_peer_http_open(&http));
    gd_peer_port port = gd_peer_http_port(http);
    bench_fetched x;
    memset(&x, 0, sizeof x);
    gd_status s = GD_OK;
    r->check_segment = S > 1 ? S / 2 : 0;
    r->check_step = o->segment_steps / 2;
    r->check_chunk = e->chunks / 2;
    /* The first round of a node fetches into fresh memory; every later one
     * into the buffers the round before gave back. */
    gd_bench_peak_reset();
    if (s == GD_OK)
        s = bench_fetch_verify(e, o, ws, r, &r->fresh, port, &x);
    if (s == GD_OK) {
        bench_recycle(port, &x);
        s = bench_fetch_verify(e, o, ws, r, &r->reused, port, &x);
    }
    r->peak_mib[2] = gd_bench_peak_mib();
    gd_check_evidence ev = x.ev;

    /* The validator's check of the target. */
    Gonka__Diloco__V1__Commitment cm;
    bench_commitment(target, &cm);
    gd_check_input in = {.round = BENCH_ROUND, .target = target->address,
                         .rank = (uint32_t)(target - ws), .commitment = &cm, .prev = NULL,
                         .segment = r->check_segment, .step = r->check_step,
                         .chunk = r->check_chunk};
    if (s == GD_OK)
        s = bench_payload_path(ws, W, (uint32_t)(target - ws), ev.payload_path);
    gd_bench_peak_reset();
    double t0 = gd_bench_now();
    if (s == GD_OK)
        s = gd_engine_check(e, &in, &ev, g0, &r->check);
    r->check_s = gd_bench_now() - t0;
    r->peak_mib[3] = gd_bench_peak_mib();
    /* As the member: the segment's start goes once the check has read it. */
    (void)unlink(ev.segment_state_path);
    if (s == GD_OK && r->check.verdict != GD_VERDICT_PASS)
        s = gd_fail(GD_ERR_INVALID, "the check of an honest worker failed: %s", r->check.why);

    /* Aggregation over every payload as the member holds them: the peers'
     * in the round's peer-L.gdpl they were fetched to, the member's own in
     * its store, each read from its file a chunk at a time; then the state
     * hash it attests. */
    gd_engine_contribution cs[BENCH_WORKERS_MAX];
    int fds[BENCH_WORKERS_MAX];
    uint32_t opened = 0;
    for (uint32_t i = 0; s == GD_OK && i < W; i++) {
        char path[GD_ARTIFACT_PATH_MAX];
        s = bench_payload_path(ws, W, i, path);
        int fd = s == GD_OK ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        struct stat st;
        if (s == GD_OK && (fd < 0 || fstat(fd, &st) != 0))
            s = gd_fail(GD_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        size_t len = s == GD_OK ? (size_t)st.st_size : 0;
        if (fd >= 0)
            fds[opened++] = fd;
        /* The peers' norms from fetch + verify, as the member keeps them;
         * its own payload is checked by the aggregate itself. */
        cs[i] = (gd_engine_contribution){.address = ws[i].address, .tokens = ws[i].t.r.tokens,
                                         .fd = fd, .payload_len = len,
                                         .root = ws[i].t.commit.payload_root,
                                         .leaves = ws[i].t.commit.payload_leaves,
                                         .sum_squares = x.has_norm[i] ? &x.sum_squares[i]
                                                                      : NULL};
    }
    /* As the member aggregates: G' written to its file a window at a time
     * and hashed as it is written, kept in memory too if the budget
     * allows; the attestation's hash is then the file's descriptor's. */
    gd_global_state next;
    memset(&next, 0, sizeof next);
    bool keep_next = gd_memory_choose(o->memory_budget, e->n, bench_floor_bytes(e)).keep_next;
    gd_bench_peak_reset();
    t0 = gd_bench_now();
    if (s == GD_OK && keep_next)
        s = gd_global_state_init(&next, e->n);
    gd_global_file file;
    if (s == GD_OK)
        s = gd_global_file_begin(&file, gd_trainer_pool(e->trainer), &ws[0].store, BENCH_RUN, BENCH_ROUND + 1, g0->round + 1,
                                 gd_trainer_layout(e->trainer)->digest,
                                 e->rc.diloco.chunk_elems, e->n, keep_next ? &next : NULL);
    if (s == GD_OK) {
        gd_global_file_io gio = {.from = {.from = g0}, .to = &file};
        gd_global_io io = gd_global_file_io_of(&gio);
        s = gd_engine_aggregate_io(e, BENCH_ROUND, cs, W, &io);
        if (s == GD_OK)
            s = gd_global_file_commit(&file, r->next_hash, NULL);
        else
            gd_global_file_abort(&file);
    }
    r->aggregate_s = gd_bench_now() - t0;
    r->peak_mib[4] = gd_bench_peak_mib();
    gd_bench_peak_reset();
    t0 = gd_bench_now();
    gd_global_desc d;
    if (s == GD_OK)
        s = gd_global_file_desc(&ws[0].store, BENCH_RUN, BENCH_ROUND + 1, e->n, &d);
    if (s == GD_OK) {
        uint8_t again[32];
        gd_global_desc_hash(&d, again);
        if (memcmp(again, r->next_hash, 32) != 0)
            s = gd_fail(GD_ERR_INVALID, "the stored G' does not have the aggregate's hash");
    }
    r->attest_s = gd_bench_now() - t0;
    r->peak_mib[5] = gd_bench_peak_mib();

    if (keep_next)
        gd_global_state_free(&next);
    for (uint32_t i = 0; i < opened; i++)
        close(fds[i]);
    gd_check_evidence_free(&ev);
    gd_peer_http_close(http);
    return s;
}

static int bench_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static gd_status run(const bench_opts *o, const char *bin, const char *dir, bench_result *r,
                     bench_chain *chain) {
    memset(r, 0, sizeof *r);
    uint32_t W = o->workers;
    json_t *spec_json = NULL;
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    GD_TRY(bench_spec_json(o, &spec_json));
    gd_status s = gd_diloco_spec_from_json(&spec, spec_json);
    gd_engine e;
    memset(&e, 0, sizeof e);
    bool engine_open = false;
    if (s == GD_OK)
        s = gd_engine_open(&e, spec, BENCH_RUN, &(gd_engine_host){.threads = (int)o->threads});
    engine_open = s == GD_OK;
    r->params = engine_open ? e.n : 0;
    r->segments = o->inner_steps / o->segment_steps;
    gd_global_state g0;
    memset(&g0, 0, sizeof g0);
    bool have_g0 = false;
    if (s == GD_OK)
        s = gd_engine_initial_global(&e, &g0);
    have_g0 = s == GD_OK;
    bench_worker *ws = calloc(W, sizeof *ws);
    if (s == GD_OK && ws == NULL)
        s = gd_fail(GD_ERR_NOMEM, "out of memory");

    /* Each worker's store and server. */
    gd_http_limits limits = gd_http_limits_default();
    limits.threads = 2;
    for (uint32_t i = 0; s == GD_OK && i < W; i++) {
        char root[GD_ARTIFACT_PATH_MAX];
        snprintf(root, sizeof root, "%s/worker-%u", dir, i);
        s = gd_artifact_store_open(&ws[i].store, root);
        pthread_mutex_init(&ws[i].serve_mu, NULL);
        gd_state_index_cache_init(&ws[i].served);
        ws[i].n = e.n;
        ws[i].chunk_elems = e.rc.diloco.chunk_elems;
        gd_http_handler h = {.answer = bench_answer, .ctx = &ws[i]};
        char bound[64] = "";
        if (s == GD_OK)
            s = gd_http_server_start(&ws[i].server, "127.0.0.1:0", &limits, &h, bound,
                                     sizeof bound);
        snprintf(ws[i].url, sizeof ws[i].url, "http://%s", bound);
        if (s == GD_OK && i > 0)
            s = bench_address(ws[i].address, sizeof ws[i].address, i);
    }
    /* G as the member holds it under the budget: what it does not keep in
     * memory is read from G's file. */
    gd_memory_choices held = gd_memory_choose(o->memory_budget, e.n, bench_floor_bytes(&e));
    if (s == GD_OK && !(held.keep_params && held.keep_next)) {
        gd_pool *pool = gd_trainer_pool(e.trainer);
        gd_global_desc d;
        s = gd_global_file_put(&ws[0].store, pool, BENCH_RUN, BENCH_ROUND,
                               gd_trainer_layout(e.trainer)->digest, e.rc.diloco.chunk_elems,
                               &g0);
        gd_global_state_free(&g0);
        have_g0 = false;
        if (s == GD_OK)
            s = gd_global_file_get(&ws[0].store, pool, BENCH_RUN, BENCH_ROUND, e.n,
                                   e.rc.diloco.chunk_elems, held.keep_params, held.keep_next, NULL,
                                   &g0, &d);
        have_g0 = s == GD_OK;
    }
    /* The member on the chain, or not. */
    if (s == GD_OK && bench_chain_start(chain, bin, dir, spec_json, ws[0].url, o->block_ms))
        snprintf(ws[0].address, sizeof ws[0].address, "%s", chain->address);
    else if (s == GD_OK)
        s = bench_address(ws[0].address, sizeof ws[0].address, 0);

    /* Train and store every worker; the figures are the member's. */
    for (uint32_t i = 0; s == GD_OK && i < W; i++) {
        ws[i].rank = i;
        gd_bench_peak_reset();
        double t0 = gd_bench_now();
        gd_memory_choices mem = gd_memory_choose(o->memory_budget, e.n, bench_floor_bytes(&e));
        uint64_t starts_bytes = 0;
        if (s == GD_OK)
            s = bench_train(&e, &ws[i], &g0, mem.background_starts, &starts_bytes);
        double train_wall = gd_bench_now() - t0;
        double train_peak = gd_bench_peak_mib();
        ws[i].trained = s == GD_OK;
        uint64_t bytes = 0;
        gd_bench_peak_reset();
        t0 = gd_bench_now();
        if (s == GD_OK)
            s = bench_store(&ws[i], &bytes);
        double store_s = gd_bench_now() - t0;
        if (i == 0) {
            r->peak_mib[0] = train_peak;
            r->peak_mib[1] = gd_bench_peak_mib();
        }
        if (s == GD_OK && i == 0) {
            const gd_worker_round *wr = &ws[0].t.r;
            r->train_s = wr->seconds;
            r->tokens = wr->tokens;
            r->tokens_per_s = wr->seconds > 0 ? (double)wr->tokens / wr->seconds : 0;
            r->loss = ws[0].t.mean_loss;
            r->round_extra_s = train_wall > wr->seconds ? train_wall - wr->seconds : 0;
            r->record_s = wr->record_seconds;
            r->store_s = store_s;
            r->store_bytes = bytes;
            r->payload_bytes = ws[0].t.commit.payload_bytes;
            r->starts_bytes = starts_bytes;
            r->starts_background = mem.background_starts;
        }
    }
    if (s == GD_OK && chain->up && chain->why[0] == '\0')
        r->have_commit = bench_chain_commit(chain, &ws[0].t.commit, o->block_ms, &r->commit_s);
    bench_chain_stop(chain);
    if (s == GD_OK)
        s = bench_after_commit(&e, o, ws, &g0, r);

    for (uint32_t i = 0; ws && i < W; i++) {
        gd_http_server_stop(ws[i].server);
        if (ws[i].n != 0) {
            gd_state_index_cache_free(&ws[i].served);
            pthread_mutex_destroy(&ws[i].serve_mu);
        }
        if (ws[i].trained)
            gd_trained_round_free(&ws[i].t);
    }
    free(ws);
    if (have_g0)
        gd_global_state_free(&g0);
    if (engine_open)
        gd_engine_close(&e);
    gd_diloco_spec_free(spec);
    json_decref(spec_json);
    return s;
}

/* --- output ----------------------------------------------------------------------------------- */

static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void print_row(const char *phase, double s, double total, const char *detail) {
    printf("%-22s %9.4f s %6.1f%%  %s\n", phase, s, total > 0 ? 100 * s / total : 0, detail);
}

/* A pass's figures: seconds, MB/s, and MB/s per core of the member and
 * of both ends. */
typedef struct bench_rates {
    double seconds, rate, per_core, per_core_both;
} bench_rates;

static bench_rates bench_rates_of(const bench_pass *p) {
    double mb = (double)p->bytes / 1e6;
    bench_rates x = {.seconds = p->fetch_s + p->verify_s};
    x.rate = x.seconds > 0 ? mb / x.seconds : 0;
    x.per_core = p->member_cpu_s > 0 ? mb / p->member_cpu_s : 0;
    x.per_core_both = p->cpu_s > 0 ? mb / p->cpu_s : 0;
    return x;
}

static void print_result(const bench_opts *o, const bench_result *r, const bench_chain *chain,
                         const char *dir) {
    double mb = 1e6;
    /* The round's figure is a later round's: a node's first round alone
     * fetches into fresh memory. */
    const bench_pass *p = &r->reused;
    bench_rates now = bench_rates_of(p), first = bench_rates_of(&r->fresh);
    double fetch_total = now.seconds, rate = now.rate, per_core = now.per_core;
    double per_core_both = now.per_core_both;
    double total = r->train_s + r->round_extra_s + r->store_s +
                   (r->have_commit ? r->commit_s : 0) + fetch_total + r->check_s +
                   r->aggregate_s + r->attest_s;
    double utilization = total > 0 ? r->train_s / total : 0;
    char hash[65];
    for (int i = 0; i < 32; i++)
        snprintf(hash + 2 * i, 3, "%02x", r->next_hash[i]);
    if (o->json) {
        printf("{\"model\":\"%s\",\"params\":%zu,\"inner_steps\":%u,\"segment_steps\":%u,"
               "\"workers\":%u,\"threads\":%u,\"block_ms\":%u,\"tokens\":%" PRIu64 ","
               "\"train_s\":%.6f,\"tokens_per_s\":%.1f,\"mean_loss\":%.6f,"
               "\"round_extra_s\":%.6f,\"record_s\":%.6f,\"store_s\":%.6f,"
               "\"store_bytes\":%" PRIu64 ","
               "\"payload_bytes\":%" PRIu64 ",\"starts_bytes\":%" PRIu64 ","
               "\"starts_background\":%s,\"memory_budget\":%" PRIu64 ",",
               o->model, r->params, o->inner_steps, o->segment_steps, o->workers, o->threads,
               o->block_ms, r->tokens, r->train_s, r->tokens_per_s, r->loss, r->round_extra_s,
               r->record_s, r->store_s, r->store_bytes, r->payload_bytes, r->starts_bytes,
               r->starts_background ? "true" : "false", o->memory_budget);
        if (r->have_commit)
            printf("\"commit_s\":%.6f,", r->commit_s);
        else {
            printf("\"commit_s\":null,\"commit_unavailable\":");
            json_str(chain->why);
            putchar(',');
        }
        printf("\"fetch_bytes\":%" PRIu64 ",\"fetches\":%u,\"fetch_s\":%.6f,\"verify_s\":%.6f,"
               "\"fetch_cpu_s\":%.6f,\"member_cpu_s\":%.6f,\"fetch_verify_mb_s\":%.2f,"
               "\"fetch_verify_mb_s_per_core\":%.2f,\"per_core_vs_1gb_s\":%.4f,"
               "\"fetch_verify_mb_s_per_core_both_ends\":%.2f,"
               "\"first_round_fetch_s\":%.6f,\"first_round_verify_s\":%.6f,"
               "\"first_round_mb_s_per_core\":%.2f,"
               "\"first_round_mb_s_per_core_both_ends\":%.2f,"
               "\"check_s\":%.6f,\"check_segment\":%u,\"check_step\":%u,\"check_chunk\":%u,"
               "\"aggregate_s\":%.6f,\"attest_s\":%.6f,\"next_state_hash\":\"%s\","
               "\"total_s\":%.6f,\"compute_utilization\":%.4f,\"peak_mib\":{\"train\":%.1f,"
               "\"store\":%.1f,\"fetch\":%.1f,\"check\":%.1f,\"aggregate\":%.1f,"
               "\"attest\":%.1f}}\n",
               p->bytes, p->fetches, p->fetch_s, p->verify_s, p->cpu_s, p->member_cpu_s, rate,
               per_core, per_core / 1000.0, per_core_both, r->fresh.fetch_s, r->fresh.verify_s,
               first.per_core, first.per_core_both, r->check_s, r->check_segment, r->check_step,
               r->check_chunk, r->aggregate_s, r->attest_s, hash, total, utilization,
               r->peak_mib[0], r->peak_mib[1], r->peak_mib[2], r->peak_mib[3], r->peak_mib[4],
               r->peak_mib[5]);
        return;
    }
    char d[512];
    printf("one round of a member: model %s (%zu parameters), H = %u, K = %u (%u segment%s), "
           "W = %u workers, %u threads\n",
           o->model, r->params, o->inner_steps, o->segment_steps, r->segments,
           r->segments == 1 ? "" : "s", o->workers, o->threads);
    printf("%-22s %11s %7s  %s\n", "phase", "seconds", "share", "detail");
    snprintf(d, sizeof d, "%" PRIu64 " tokens, %.0f tokens/s, mean loss %.4f; %u segment "
                          "starts and the post state (%.2f MB) written %s",
             r->tokens, r->tokens_per_s, r->loss, r->segments, (double)r->starts_bytes / mb,
             r->starts_background ? "behind training" : "in the foreground");
    print_row("train (inner steps)", r->train_s, total, d);
    snprintf(d, sizeof d, "state hashes, payload encoded into its file, state writes waited "
                          "for; of which %.4f s recording the %u segment starts and leaf S",
             r->record_s, r->segments);
    print_row("  hashes + encoding", r->round_extra_s, total, d);
    snprintf(d, sizeof d, "transcript: %.3f MB under %s (the payload, %.2f MB, went to its "
                          "file as it was encoded)",
             (double)r->store_bytes / mb, dir, (double)r->payload_bytes / mb);
    print_row("encode + fsync", r->store_s, total, d);
    if (r->have_commit) {
        snprintf(d, sizeof d, "MsgCommitRound until in a block (localnet, %u ms blocks)",
                 o->block_ms);
        print_row("commit latency", r->commit_s, total, d);
    } else {
        printf("%-22s %11s %7s  unavailable: %s\n", "commit latency", "-", "-", chain->why);
    }
    snprintf(d, sizeof d, "%u files, %.2f MB: fetch %.4f s, parse %.4f s; %.0f MB/s, %.0f MB/s "
                          "per member core = %.3f x 1 GB/s (%.0f MB/s per core of both ends)",
             p->fetches, (double)p->bytes / mb, p->fetch_s, p->verify_s, rate, per_core,
             per_core / 1000.0, per_core_both);
    print_row("fetch + verify", fetch_total, total, d);
    snprintf(d, sizeof d, "not in the total: a node's first round, into fresh memory: %.0f MB/s "
                          "per member core (%.0f both ends)",
             first.per_core, first.per_core_both);
    print_row("  first round", first.seconds, total, d);
    snprintf(d, sizeof d, "PASS: links, chunk %u, segment %u re-executed (digest step %u)",
             r->check_chunk, r->check_segment, r->check_step);
    print_row("validator check", r->check_s, total, d);
    snprintf(d, sizeof d, "G_1 from %u payload%s", o->workers, o->workers == 1 ? "" : "s");
    print_row("aggregate", r->aggregate_s, total, d);
    snprintf(d, sizeof d, "G_1 state hash %.16s...", hash);
    print_row("attest", r->attest_s, total, d);
    printf("%-22s %9.4f s%s\n", "total", total,
           r->have_commit ? "" : "  (without the commit)");
    printf("compute utilization    %.1f%%  (train / total)\n", 100 * utilization);
    printf("peak resident memory   train %.0f MiB, encode + fsync %.0f, fetch + verify %.0f, "
           "check %.0f, aggregate %.0f, attest %.0f (the whole process: every worker's state "
           "lives in it)\n",
           r->peak_mib[0], r->peak_mib[1], r->peak_mib[2], r->peak_mib[3], r->peak_mib[4],
           r->peak_mib[5]);
}

int main(int argc, char **argv) {
    bench_opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    char bin[GD_ARTIFACT_PATH_MAX];
    bench_bin_dir(bin, sizeof bin, o.bin, argv[0]);
    const char *tmp = o.dir ? o.dir : getenv("TMPDIR");
    char dir[GD_ARTIFACT_PATH_MAX];
    snprintf(dir, sizeof dir, "%s/gd-bench-round.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "error: cannot create a directory under %s: %s\n",
                tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
        return 1;
    }
    bench_result r;
    bench_chain chain;
    memset(&chain, 0, sizeof chain);
    gd_status s = run(&o, bin, dir, &r, &chain);
    bench_chain_stop(&chain);
    if (s != GD_OK)
        fprintf(stderr, "error: %s\n", gd_error_detail());
    else
        print_result(&o, &r, &chain, dir);
    nftw(dir, bench_rm, 16, FTW_DEPTH | FTW_PHYS);
    return s == GD_OK ? 0 : 1;
}
