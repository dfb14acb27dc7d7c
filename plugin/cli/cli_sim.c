/* sim: a DiLoCo simulation of W workers on this machine, with the DDP and
 * no-communication baselines (trainer/sim.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain/wire/diloco_spec.h"
#include "chain/wire/json_bytes.h"
#include "plugin/cli/cli_sim_chain.h"
#include "plugin/cli/cli_sim_progress.h"
#include "plugin/cli/cli_sim_spec.h"
#include "plugin/cli/cli_sim_timeline.h"
#include "plugin/cli/cli_train.h"
#include "plugin/cli/cli_util.h"
#include "plugin/member/hardware_class.h"
#include "trainer/sim.h"

#define GD_SIM_MAX_WORKERS 256

typedef struct gd_sim_cli {
    gd_cli *cli;
    bool json;
    uint32_t rounds;
    gd_sim_progress_line *progress;
} gd_sim_cli;

/* sim_wall: the link model's clock, not the seconds this machine took. */
static void gd_sim_print_round(void *ctx, const gd_sim_round_report *r) {
    const gd_sim_cli *c = ctx;
    if (c->json)
        return;
    gd_sim_progress_clear(c->progress);
    fprintf(c->cli->out,
            "round %4u/%u | inner loss %.4f | eval loss %.4f | sent %.2f MB | received %.2f MB "
            "| sim_wall %.1f s%s\n",
            r->round + 1, c->rounds, r->inner_loss, r->eval_loss, (double)r->bytes_sent / 1e6,
            (double)r->bytes_received / 1e6, r->wall_seconds,
            r->clipped ? " | clipped" : "");
    fflush(c->cli->out);
}

/* --speeds 1,1,0.5,1: one relative speed per worker. */
static int gd_sim_speeds(gd_cli *cli, gd_args *args, uint32_t workers, double *speeds) {
    const char *text = gd_arg(args, "speeds");
    if (text == NULL)
        return GD_CLI_CONTINUE;
    const char *p = text;
    for (uint32_t w = 0; w < workers; w++) {
        char *end = NULL;
        speeds[w] = strtod(p, &end);
        /* The floor keeps simulated times finite: a speed of 1e-300 would
         * make a second of compute an infinite wall time. */
        if (end == p || !(speeds[w] >= GD_SIM_SPEED_MIN && speeds[w] <= GD_SIM_SPEED_MAX) ||
            (w + 1 < workers ? *end != ',' : *end != '\0'))
            return gd_cli_usage(cli, args, "--speeds wants %u numbers in [%g, %g] separated by "
                                           "commas, got '%.60s'",
                                workers, GD_SIM_SPEED_MIN, GD_SIM_SPEED_MAX, text);
        p = end + 1;
    }
    return GD_CLI_CONTINUE;
}

static int gd_sim_baselines(gd_cli *cli, gd_args *args, gd_sim_options *o) {
    const char *values[GD_CLI_MAX_REPEATS];
    size_t n = gd_arg_all(args, values, GD_CLI_MAX_REPEATS, "baseline");
    for (size_t i = 0; i < n && i < GD_CLI_MAX_REPEATS; i++) {
        if (strcmp(values[i], "ddp") == 0)
            o->ddp = true;
        else if (strcmp(values[i], "local") == 0)
            o->local = true;
        else
            return gd_cli_usage(cli, args, "--baseline is ddp or local, got '%.40s'", values[i]);
    }
    return GD_CLI_CONTINUE;
}

/* The experiment's flags (what a spec does not fix), into o. */
static int gd_sim_parse(gd_cli *cli, gd_args *args, gd_sim_options *o, double *speeds,
                        uint64_t *run) {
    uint64_t workers = 4, rounds = 10, eval = 8, warm_start = 0;
    int rc;
    if ((rc = gd_cli_u64_opt(cli, args, &workers, "workers")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &rounds, "rounds")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &eval, "eval-batches")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, run, "run")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &warm_start, "warm-start")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &o->link_mbps, "link-mbps", 0, 1e7)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &o->rtt_ms, "rtt-ms", 0, 1e5)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_threads(cli, args, &o->threads)) != GD_CLI_CONTINUE)
        return rc;
    if (workers < 1 || workers > GD_SIM_MAX_WORKERS || rounds < 1 || rounds > 100000 ||
        eval < 1 || eval > 100000)
        return gd_cli_usage(cli, args, "--workers 1..%d, --rounds and --eval-batches 1..100000",
                            GD_SIM_MAX_WORKERS);
    if (warm_start > 1000000)
        return gd_cli_usage(cli, args, "--warm-start must be at most 1000000 steps");
    o->warm_start = (uint32_t)warm_start;
    o->diloco.workers = (uint32_t)workers;
    o->rounds = (uint32_t)rounds;
    o->eval_batches = (uint32_t)eval;
    o->verify = gd_flag(args, "verify");
    o->payload_dir = gd_arg(args, "payload-dir");
    if ((rc = gd_sim_speeds(cli, args, o->diloco.workers, speeds)) != GD_CLI_CONTINUE)
        return rc;
    o->speeds = gd_arg(args, "speeds") ? speeds : NULL;
    return gd_sim_baselines(cli, args, o);
}

/* The run spec: from --spec FILE, or from the flags. */
/* What --print-spec proposes is a run this host's daemons can join as
 * printed: its hardware class is this host's (a node.yaml's `auto`), and a
 * class needs no more members than the run's own workers, with the fewest
 * checkers the rules allow when they are few (one validator per check, one
 * re-checker: 3 members; a run of 6 or more keeps the defaults). */
static gd_status gd_sim_spec_for_host(gd_cli *cli, json_t *j, uint32_t workers) {
    char cls[GD_HARDWARE_CLASS_MAX + 1];
    GD_TRY(gd_hardware_class_auto(cls, "auto", NULL, 0));
    json_int_t class_min = json_integer_value(json_object_get(j, "min_class_members"));
    bool ok = json_object_set_new(j, "hw_classes", json_pack("[s]", cls)) == 0;
    if (ok && (json_int_t)workers < class_min) {
        ok = json_object_set_new(j, "double_check_ppm", json_integer(0)) == 0 &&
             json_object_set_new(j, "recheck_validators", json_integer(1)) == 0 &&
             json_object_set_new(j, "min_class_members",
                                 json_integer(workers > 3 ? (json_int_t)workers : 3)) == 0;
        if (workers < 3)
            fprintf(cli->err, "note: a class needs 3 members (the target, its validator, a "
                              "re-checker): run %u more daemon%s of class %s beside the %u "
                              "worker%s\n",
                    3 - workers, 3 - workers == 1 ? "" : "s", cls, workers,
                    workers == 1 ? "" : "s");
    }
    if (!ok)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    gd_status s = gd_diloco_spec_from_json(&spec, j);
    if (s == GD_OK)
        s = gd_diloco_spec_check(spec);
    gd_diloco_spec_free(spec);
    return s;
}

static int gd_sim_spec(gd_cli *cli, gd_args *args, gd_sim_options *o, uint64_t run,
                       Gonka__Diloco__V1__RunSpec **spec, gd_run_config *rc) {
    const char *path = gd_arg(args, "spec");
    if (path == NULL)
        return gd_sim_spec_from_flags(cli, args, o->warm_start, o->rounds, run, o->threads, spec,
                                      rc);
    for (size_t i = 0; gd_sim_spec_flags[i] != NULL; i++)
        if (strcmp(gd_sim_spec_flags[i], "model-config") != 0 && gd_arg(args, gd_sim_spec_flags[i]))
            return gd_cli_usage(cli, args, "--%s is fixed by --spec", gd_sim_spec_flags[i]);
    if (gd_arg(args, "data") != NULL)
        return gd_cli_usage(cli, args, "--data is fixed by --spec (its data_spec)");
    gd_model_config local;
    const char *file = gd_arg(args, "model-config");
    if (file != NULL && gd_model_config_load(&local, file) != GD_OK)
        return gd_cli_fail(cli, GD_ERR_INVALID);
    return gd_sim_spec_from_file(cli, path, run, file ? &local : NULL, o->threads, spec, rc);
}

/* Each worker's payload of one round: its address and committed root. */
static json_t *gd_sim_payloads_json(const gd_sim_report *r, const gd_sim_round_report *x) {
    json_t *a = json_array();
    for (uint32_t w = 0; a && w < r->workers; w++)
        if (json_array_append_new(
                a, json_pack("{s:s,s:o}", "worker", r->addresses[w], "payload_root",
                             gd_json_hex(x->payload_roots + (size_t)w * GD_MMR_HASH_LEN,
                                         GD_MMR_HASH_LEN, false))) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

static int gd_sim_print_json(gd_cli *cli, const gd_sim_options *o, const gd_sim_report *r) {
    char codec[40];
    gd_codec_format(&o->diloco.codec, codec, sizeof codec);
    json_t *rounds = json_array();
    for (uint32_t i = 0; rounds && i < r->n_rounds; i++) {
        const gd_sim_round_report *x = &r->rounds[i];
        json_array_append_new(
            rounds, json_pack("{s:i,s:o,s:o,s:I,s:I,s:I,s:o,s:i,s:o}", "round", (int)x->round,
                              "eval_loss", gd_cli_json_number(x->eval_loss), "inner_loss",
                              gd_cli_json_number(x->inner_loss), "bytes_per_worker",
                              (json_int_t)(x->bytes_sent + x->bytes_received), "bytes_sent",
                              (json_int_t)x->bytes_sent, "bytes_received",
                              (json_int_t)x->bytes_received, "wall_seconds", gd_cli_json_number(x->wall_seconds),
                              "clipped", (int)x->clipped, "payloads",
                              gd_sim_payloads_json(r, x)));
    }
    json_t *root = json_pack(
        "{s:{s:o,s:I,s:o,s:o,s:s,s:i,s:i,s:f,s:f,s:b},s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:i,"
        "s:I,s:I,s:o}",
        "diloco", "eval_loss", gd_cli_json_number(r->diloco_eval), "bytes_per_worker",
        (json_int_t)r->diloco_bytes, "wall_seconds", gd_cli_json_number(r->diloco_wall),
        "utilization", gd_cli_json_number(r->utilization), "codec", codec, "workers", (int)o->diloco.workers, "inner_steps",
        (int)o->diloco.inner_steps, "outer_lr", o->diloco.outer_lr, "outer_momentum",
        o->diloco.outer_momentum, "overlap", o->diloco.overlap, "entropy_floor",
        gd_cli_json_number(r->entropy_floor), "loss_ratio", gd_cli_json_number(r->loss_ratio),
        "byte_reduction", gd_cli_json_number(r->byte_reduction), "utilization",
        gd_cli_json_number(r->utilization), "utilization_sync",
        gd_cli_json_number(r->utilization_sync), "utilization_overlap",
        gd_cli_json_number(r->utilization_overlap), "wall_sync",
        gd_cli_json_number(r->wall_sync), "wall_overlap", gd_cli_json_number(r->wall_overlap),
        "start_eval_loss", gd_cli_json_number(r->start_eval), "warm_start", (int)o->warm_start, "params",
        (json_int_t)r->params, "verified_segments", (json_int_t)r->verified_segments, "rounds",
        rounds);
    if (root)
        json_object_set_new(root, "eval_data",
                            json_string(o->eval_data_spec ? o->eval_data_spec : o->data_spec));
    if (root && r->has_ddp)
        json_object_set_new(root, "ddp",
                            json_pack("{s:o,s:I,s:o,s:o}", "eval_loss",
                                      gd_cli_json_number(r->ddp_eval), "bytes_per_worker",
                                      (json_int_t)r->ddp_bytes, "wall_seconds",
                                      gd_cli_json_number(r->ddp_wall), "utilization",
                                      gd_cli_json_number(r->ddp_utilization)));
    if (root && r->has_local)
        json_object_set_new(root, "local",
                            json_pack("{s:o}", "eval_loss", gd_cli_json_number(r->local_eval)));
    return gd_cli_print_json(cli, root);
}

static void gd_sim_print_summary(gd_cli *cli, const gd_sim_options *o, const gd_sim_report *r) {
    char codec[40];
    gd_codec_format(&o->diloco.codec, codec, sizeof codec);
    const gd_diloco_config *c = &o->diloco;
    if (o->eval_data_spec)
        fprintf(cli->out, "\nevaluated on %s (trained on %s)\n", o->eval_data_spec,
                o->data_spec);
    if (o->warm_start)
        fprintf(cli->out, "\nshared start: %u synchronous steps, eval loss %.4f\n", o->warm_start,
                r->start_eval);
    fprintf(cli->out,
            "\nDiLoCo  eval loss %.4f | %.2f MB per worker | simulated %.1f s, utilization %.3f "
            "(%u workers, H=%u, %s, outer lr %g, momentum %g%s)\n",
            r->diloco_eval, (double)r->diloco_bytes / 1e6, r->diloco_wall, r->utilization,
            c->workers, c->inner_steps, codec, c->outer_lr, c->outer_momentum,
            c->overlap ? ", overlap" : "");
    fprintf(cli->out, "        the same rounds synchronous: %.1f s (utilization %.3f); with "
                      "overlap: %.1f s (utilization %.3f)\n",
            r->wall_sync, r->utilization_sync, r->wall_overlap, r->utilization_overlap);
    if (r->has_ddp)
        fprintf(cli->out,
                "DDP     eval loss %.4f | %.2f MB per worker | simulated %.1f s, utilization "
                "%.3f\n",
                r->ddp_eval, (double)r->ddp_bytes / 1e6, r->ddp_wall, r->ddp_utilization);
    if (r->has_local)
        fprintf(cli->out, "local   eval loss %.4f (no communication, averaged once at the end)\n",
                r->local_eval);
    if (isfinite(r->entropy_floor))
        fprintf(cli->out, "entropy floor %.4f nats/token\n", r->entropy_floor);
    if (r->has_ddp)
        fprintf(cli->out, "excess loss DiLoCo / DDP = %.3f; bytes DDP / DiLoCo = %.1fx\n",
                r->loss_ratio, r->byte_reduction);
    if (r->has_ddp && r->has_local) {
        double floor = isfinite(r->entropy_floor) ? r->entropy_floor : 0;
        fprintf(cli->out, "excess loss local / DDP = %.3f\n",
                (r->local_eval - floor) / (r->ddp_eval - floor));
    }
    if (o->verify)
        fprintf(cli->out, "validators re-executed %u segments; all matched\n",
                r->verified_segments);
}

static int gd_run_sim(gd_cli *cli, gd_args *args) {
    gd_sim_options o;
    memset(&o, 0, sizeof o);
    o.link_mbps = 100;
    o.rtt_ms = 50;
    uint64_t run = 1;
    double speeds[GD_SIM_MAX_WORKERS];
    bool print_spec = gd_flag(args, "print-spec");
    if (gd_flag(args, "timeline"))
        return gd_sim_timeline(cli, args);
    if (gd_arg(args, "data") == NULL && gd_arg(args, "spec") == NULL)
        return gd_cli_usage(cli, args, "--data (or --spec) is required");
    int rc = gd_sim_parse(cli, args, &o, speeds, &run);
    if (rc != GD_CLI_CONTINUE)
        return rc;
    if (o.warm_start > 0 && (print_spec || gd_arg(args, "spec")))
        return gd_cli_usage(cli, args, "--warm-start is a simulation's own start: a run spec "
                                       "starts from its seed's weights");
    if (gd_arg(args, "memory-budget") && !gd_flag(args, "chain"))
        return gd_cli_usage(cli, args, "--memory-budget is a member's: it needs --chain");
    Gonka__Diloco__V1__RunSpec *spec = NULL;
    gd_run_config config;
    if ((rc = gd_sim_spec(cli, args, &o, run, &spec, &config)) != GD_CLI_CONTINUE)
        return rc;
    if (gd_flag(args, "chain")) {
        /* The same run played by members over the module's state machine. */
        rc = gd_sim_chain_run(cli, args, spec, o.diloco.workers, o.rounds, o.threads);
        gd_diloco_spec_free(spec);
        return rc;
    }
    if (print_spec) {
        /* The spec as tx create-run and gonka-localnet init --diloco-run take it. */
        json_t *j = gd_diloco_spec_to_json(spec);
        gd_diloco_spec_free(spec);
        if (j == NULL)
            return gd_cli_fail(cli, gd_fail(GD_ERR_NOMEM, "out of memory"));
        gd_status s = gd_sim_spec_for_host(cli, j, o.diloco.workers);
        if (s != GD_OK) {
            json_decref(j);
            return gd_cli_fail(cli, s);
        }
        return gd_cli_print_json(cli, j);
    }
    uint32_t workers = o.diloco.workers;
    o.diloco = config.diloco;
    o.diloco.workers = workers;
    o.model = config.model;
    o.data_spec = config.data_spec;
    o.eval_data_spec = gd_arg(args, "eval-data");
    gd_sim_progress_line progress;
    gd_sim_progress_init(&progress, cli->err, isatty(fileno(cli->err)) == 1, o.rounds);
    gd_sim_phase_watch watch = {gd_sim_progress_update, &progress};
    o.watch = &watch;
    gd_sim_cli ctx = {cli, gd_flag(args, "json"), o.rounds, &progress};
    if ((rc = gd_cli_trainer_host(cli, args, &o.ranks)) != GD_CLI_CONTINUE) {
        gd_diloco_spec_free(spec);
        return rc;
    }
    gd_backend_group backends;
    if ((rc = gd_cli_backend_group(cli, args, &backends)) != GD_CLI_CONTINUE) {
        gd_diloco_spec_free(spec);
        return rc;
    }
    o.ranks.be = backends.ranks;
    o.ranks.n = backends.n;
    o.ranks.coll = &backends.coll;
    gd_sim_report report;
    gd_status s = gd_sim_run(&o, &report, gd_sim_print_round, &ctx);
    gd_sim_progress_clear(&progress);
    gd_backend_group_close(&backends);
    if (s != GD_OK) {
        gd_diloco_spec_free(spec);
        return gd_cli_fail(cli, s);
    }
    if (ctx.json) {
        rc = gd_sim_print_json(cli, &o, &report);
    } else {
        gd_sim_print_summary(cli, &o, &report);
        rc = GD_EXIT_OK;
    }
    gd_sim_report_free(&report);
    gd_diloco_spec_free(spec);
    return rc;
}

static const gd_opt_spec gd_sim_opts[] = {
    {"workers", "W", "workers (default 4)"},
    {"inner-steps", "H", "inner AdamW steps per round (default 50)"},
    {"rounds", "R", "outer rounds (default 10)"},
    {"segment-steps", "K", "inner steps per transcript segment; divides H (default 10 or H)"},
    {"model", "NAME", "model preset: tiny, small or base (default tiny)"},
    {"model-config", "FILE", "model shape from a Hugging Face config.json instead"},
    {"vocab", "N", "override the vocabulary size"},
    {"data", "SPEC", "synthetic:markov:SEED..., synthetic:mixture:SEED:COMPONENTS..., text:GLOB "
                     "or token shards"},
    {"eval-data", "SPEC", "evaluate on this source instead of --data (a held-out loss)"},
    {"codec", "C", "none, bf16, int8 (default), int4 or topk:FRACTION"},
    {"chunk-elems", "N", "values per payload chunk; topk selects within each chunk "
                         "(default 1048576)"},
    {"no-error-feedback", NULL, "drop the coding error instead of carrying it to the next round"},
    {"ef-decay", "B", "multiply the carried coding error by B each round (default 1)"},
    {"outer-lr", "X", "outer learning rate (default 0.7)"},
    {"outer-momentum", "Y", "outer Nesterov momentum (default 0.9)"},
    {"clip", "C", "clip contributions to C times the median norm (default 2; 0 = off)"},
    {"overlap", NULL, "one-step-delay overlap of exchange and training"},
    {"link-mbps", "M", "each worker's link in Mbit/s, full duplex (default 100; 0 = unlimited)"},
    {"rtt-ms", "L", "round-trip time in ms (default 50)"},
    {"speeds", "S1,S2,...", "relative compute speed of each worker (default all 1)"},
    {"baseline", "ddp|local", "also train a baseline: ddp (synchronous data parallel) or local "
                              "(no communication); repeat for both", true},
    {"batch", "B", "sequences per inner step per worker (default 8)"},
    {"seq", "T", "tokens per sequence (default 64)"},
    {"micro-batch", "M", "sequences per forward/backward pass (default B)"},
    {"lr", "LR", "inner peak learning rate (default 3e-3; cosine to lr/10)"},
    {"min-lr", "LR", "inner learning rate the cosine ends at (default lr/10)"},
    {"warmup", "N", "inner warmup steps (default 5% of all steps, at most 100)"},
    {"warm-start", "N", "first train N steps synchronously; every method starts there "
                        "(default 0)"},
    {"weight-decay", "WD", "inner AdamW weight decay on matrices (default 0.1)"},
    {"eval-batches", "N", "evaluation batches for each round's global state (default 8)"},
    {"verify", NULL, "a validator re-executes one random segment per worker per round"},
    {"payload-dir", "DIR", "also write every payload there (r<round>-<address>.gdpl); made if "
                          "missing"},
    {"run", "ID", "run id, tags hashes and payloads (default 1)"},
    {"seed", "S", "seed of the initial weights and the batches (default 1)"},
    {"threads", "N", "worker threads (default: all cores)"},
    {"backend", "NAME", "cpu, cuda or auto (default auto: cuda where a GPU is usable); not --chain"},
    {"gpus", "N", "each trainer data parallel over GPUs 0..N-1 (cuda; default 1); not --chain"},
    GD_TRAINER_HOST_OPTS,
    GD_RUN_SETTINGS_OPTS,
    {"spec", "FILE", "run the RunSpec in FILE (tx create-run's JSON) instead of the flags it "
                     "fixes"},
    {"chain", NULL, "play the run over the training module's state machine in this process: "
                    "members join, train, report, check, aggregate, attest and claim as the "
                    "daemon does"},
    {"validators", "V", "with --chain: members that only check (default 1)"},
    {"memory-budget", "SIZE", "with --chain: each member's host memory beside its trainer's "
                              "(512M, 64G; default 0: no limit); the same bits"},
    {"print-spec", NULL, "print the RunSpec these flags make (for tx create-run or gonka-localnet "
                         "init --diloco-run) and exit"},
    {"json", NULL, "print one JSON object instead of round lines and the summary (progress "
                   "still goes to stderr)"},
    {"timeline", NULL, "model one round on one host from rates, without training: when each "
                       "phase starts and ends, the bytes sent and received, the share spent "
                       "training (--model or --model-config, --workers, --link-mbps, ...)"},
    {"step-s", "S", "--timeline: seconds an inner step takes (default: this machine's sgemm "
                    "rate at 6 FLOP a parameter a token of --batch x --seq)"},
    {"disk", "MBPS", "--timeline: writing with fsync, MB/s (default: measured here)"},
    {"hash", "MBPS", "--timeline: SHA-256, MB/s (default: measured here)"},
    {"block-s", "S", "--timeline: the chain's block time (default 6)"},
    {"checks", "N", "--timeline: segment checks a host runs and serves a round (default 1)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_sim = {
    "sim", "", 0, 0,
    "Simulate DiLoCo: W workers, H inner steps, R rounds, compressed exchange.",
    "Runs the real round engine: every worker's payload is encoded, serialized,\n"
    "parsed, checked against its commitment and decoded; aggregation is\n"
    "deterministic. Prints per round the mean inner loss, the eval loss of the global\n"
    "model, the bytes each worker sent and received, and the simulated wall time\n"
    "from the link model (sim_wall: not the time this machine took). Every phase (the\n"
    "warm start, the rounds, each baseline) shows its progress, elapsed and remaining\n"
    "time on stderr. --baseline ddp and --baseline local train the same model on\n"
    "the same tokens synchronously and with no communication, for comparison.",
    gd_sim_opts, gd_run_sim,
};
