/* train, eval: the trainer from the command line, on any backend. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "plugin/cli/cli_train.h"
#include "plugin/cli/cli_util.h"
#include "trainer/checkpoint.h"
#include "trainer/train.h"

/* Evaluation batches train and eval score at most: 100000 batches of the
 * default 8 x 256 tokens take the tiny model about an hour on a few cores
 * (sim has the same bound). */
#define GD_EVAL_BATCHES_MAX 100000
#define GD_EVAL_PROGRESS_S 5.0 /* seconds between progress lines of an evaluation */

/* Progress lines of a long evaluation, one every GD_EVAL_PROGRESS_S, so
 * it is seen working (and how far it has to go); none with --json. */
typedef struct gd_eval_watch {
    gd_cli *cli;
    bool quiet;
    double start, last;
} gd_eval_watch;

static void gd_eval_progress(void *ctx, size_t done, size_t batches) {
    gd_eval_watch *w = ctx;
    double now = gd_clock_seconds();
    if (w->quiet || done == batches || now - w->last < GD_EVAL_PROGRESS_S)
        return;
    w->last = now;
    double elapsed = now - w->start;
    fprintf(w->cli->out, "eval batch %zu/%zu | %.0f s so far, about %.0f s to go\n", done,
            batches, elapsed, elapsed / (double)done * (double)(batches - done));
    fflush(w->cli->out);
}

int gd_cli_backend_group(gd_cli *cli, gd_args *args, gd_backend_group *out) {
    const char *name = gd_arg(args, "backend") ? gd_arg(args, "backend") : "auto";
    uint64_t gpus = 1;
    int rc = gd_cli_u64_opt(cli, args, &gpus, "gpus");
    if (rc != GD_CLI_CONTINUE)
        return rc;
    if (gpus < 1 || gpus > GD_BACKEND_GROUP_MAX)
        return gd_cli_usage(cli, args, "--gpus must be 1..%d", GD_BACKEND_GROUP_MAX);
    gd_status s = gd_backend_group_open(out, name, (size_t)gpus, NULL);
    if (s == GD_ERR_INVALID)
        return gd_cli_usage(cli, args, "%s", gd_error_detail());
    return s == GD_OK ? GD_CLI_CONTINUE : gd_cli_fail(cli, s);
}

int gd_cli_run_settings(gd_cli *cli, gd_args *args, gd_train_options *o) {
    int attention = (int)o->attention, precision = (int)o->precision, moments = (int)o->moments;
    int rc;
    if ((rc = gd_cli_setting_opt(cli, args, &gd_setting_attention, &attention, NULL)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_precision, &precision, NULL)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_moments, &moments, NULL)) !=
            GD_CLI_CONTINUE)
        return rc;
    o->attention = (gd_attention)attention;
    o->precision = (gd_precision)precision;
    o->moments = (gd_precision)moments;
    return GD_CLI_CONTINUE;
}

int gd_cli_trainer_host(gd_cli *cli, gd_args *args, gd_trainer_host *out) {
    int shard = GD_SHARD_OPTIMIZER, recompute = GD_RECOMPUTE_NONE, offload = GD_OFFLOAD_NONE, rc;
    if ((rc = gd_cli_setting_opt(cli, args, &gd_setting_shard, &shard, NULL)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_recompute, &recompute, NULL)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_offload, &offload, NULL)) !=
            GD_CLI_CONTINUE)
        return rc;
    *out = (gd_trainer_host){
        .memory = {(gd_shard)shard, (gd_recompute)recompute, (gd_offload)offload}};
    return GD_CLI_CONTINUE;
}

int gd_cli_threads(gd_cli *cli, gd_args *args, int *threads) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t n = online > 0 ? (uint64_t)online : 1;
    if (n > 64)
        n = 64;
    int rc = gd_cli_u64_opt(cli, args, &n, "threads");
    if (rc != GD_CLI_CONTINUE)
        return rc;
    if (n < 1 || n > 1024)
        return gd_cli_usage(cli, args, "--threads must be 1..1024");
    *threads = (int)n;
    return GD_CLI_CONTINUE;
}

int gd_cli_model_config(gd_cli *cli, gd_args *args, gd_model_config *config) {
    const char *preset = gd_arg(args, "model"), *file = gd_arg(args, "model-config");
    if (preset && file)
        return gd_cli_usage(cli, args, "give --model or --model-config, not both");
    gd_status s = file ? gd_model_config_load(config, file)
                       : gd_model_config_preset(config, preset ? preset : "tiny");
    if (s != GD_OK)
        return gd_cli_fail(cli, s == GD_ERR_PARSE ? GD_ERR_INVALID : s);
    uint64_t vocab = config->vocab_size;
    int rc = gd_cli_u64_opt(cli, args, &vocab, "vocab");
    if (rc != GD_CLI_CONTINUE)
        return rc;
    if (vocab < 1 || vocab > INT32_MAX)
        return gd_cli_usage(cli, args, "--vocab must be 1..%d", INT32_MAX);
    config->vocab_size = (uint32_t)vocab;
    if (gd_model_config_validate(config) != GD_OK)
        return gd_cli_fail(cli, GD_ERR_INVALID);
    return GD_CLI_CONTINUE;
}

/* --batch, --seq, --micro-batch into o (defaults kept when absent). */
static int gd_cli_batch_opts(gd_cli *cli, gd_args *args, gd_train_options *o) {
    uint64_t batch = o->batch, seq = o->seq_len, micro = o->micro_batch;
    int rc;
    if ((rc = gd_cli_u64_opt(cli, args, &batch, "batch")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &seq, "seq")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &micro, "micro-batch")) != GD_CLI_CONTINUE)
        return rc;
    if (batch < 1 || batch > (1u << 20) || seq < 1 || seq > (1u << 20))
        return gd_cli_usage(cli, args, "--batch and --seq must be 1..%u", 1u << 20);
    if (!gd_arg(args, "micro-batch")) {
        if (gd_arg(args, "batch"))
            micro = batch; /* a new batch without a micro-batch: one pass */
    } else if (micro < 1 || micro > batch || batch % micro != 0) {
        /* Checked here, on the values given, so the message names them and
         * not a default the trainer would otherwise report. */
        return gd_cli_usage(cli, args, "--micro-batch %" PRIu64 " must divide the batch %" PRIu64
                                       " (1..%" PRIu64 " sequences per pass)",
                            micro, batch, batch);
    }
    o->batch = (size_t)batch;
    o->seq_len = (size_t)seq;
    o->micro_batch = (size_t)micro;
    return GD_CLI_CONTINUE;
}

/* The optimizer and schedule flags over o->optim. */
static int gd_cli_optim_opts(gd_cli *cli, gd_args *args, gd_optim_config *c) {
    uint64_t warmup = c->warmup_steps, schedule = c->schedule_steps;
    int rc;
    /* --lr's range is the optimizer's (trainer/optim.c): below 10. */
    if ((rc = gd_cli_real_below_opt(cli, args, &c->lr, "lr", 1e-12, 10)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &c->min_lr, "min-lr", 0, 10)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &c->weight_decay, "weight-decay", 0, 0.99)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_real_below_opt(cli, args, &c->beta1, "beta1", 0, 1)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_below_opt(cli, args, &c->beta2, "beta2", 0, 1)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &c->eps, "eps", 1e-30, 0.5)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_real_opt(cli, args, &c->grad_clip, "grad-clip", 0, 1e9)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &warmup, "warmup")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &schedule, "schedule-steps")) != GD_CLI_CONTINUE)
        return rc;
    c->warmup_steps = warmup;
    c->schedule_steps = schedule;
    return GD_CLI_CONTINUE;
}

/* --- train ------------------------------------------------------------------ */

typedef struct gd_train_run {
    gd_backend_group backends; /* --backend and --gpus: where the trainer's tensors live */
    gd_trainer_host placement; /* the backends, with --shard and --recompute */
    gd_trainer *trainer;
    gd_data *data;
    gd_data *eval_data; /* --eval-data's source, or NULL: evaluate on data */
    const char *data_spec, *eval_spec, *out;
    const char *resume;    /* --resume's checkpoint, or NULL */
    uint64_t resumed_from; /* the step it was at */
    uint64_t steps, log_every, save_every, eval_batches;
} gd_train_run;

/* Builds the trainer: fresh from the model flags, or resumed. */
static int gd_train_setup(gd_cli *cli, gd_args *args, gd_train_run *run, int threads) {
    const char *resume = gd_arg(args, "resume");
    gd_train_options o;
    gd_train_options_default(&o);
    gd_status s;
    if (resume) {
        if (gd_arg(args, "model") || gd_arg(args, "model-config") || gd_arg(args, "vocab"))
            return gd_cli_usage(cli, args, "--resume takes the model from the checkpoint; drop "
                                           "--model, --model-config and --vocab");
        s = gd_trainer_resume_ranks(&run->trainer, resume, threads, &run->placement);
        if (s != GD_OK)
            return gd_cli_fail(cli, s);
        run->resume = resume;
        run->resumed_from = gd_trainer_step_count(run->trainer);
        o = *gd_trainer_options(run->trainer);
    }
    int rc;
    uint64_t seed = o.seed, worker = o.worker;
    bool schedule_given = gd_arg(args, "schedule-steps") != NULL;
    if ((rc = gd_cli_batch_opts(cli, args, &o)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_run_settings(cli, args, &o)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_optim_opts(cli, args, &o.optim)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &seed, "seed")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &worker, "worker")) != GD_CLI_CONTINUE)
        return rc;
    if (worker > UINT32_MAX)
        return gd_cli_usage(cli, args, "--worker must fit 32 bits");
    o.seed = seed;
    o.worker = (uint32_t)worker;
    if (!resume) {
        /* A fresh run: the schedule spans the run unless told otherwise,
         * with a 5% warmup (at most 100 steps) when none is given. */
        if (!schedule_given)
            o.optim.schedule_steps = run->steps;
        if (!gd_arg(args, "warmup"))
            o.optim.warmup_steps = run->steps / 20 < 100 ? run->steps / 20 : 100;
        if (!gd_arg(args, "min-lr"))
            o.optim.min_lr = o.optim.lr / 10;
        gd_model_config config;
        if ((rc = gd_cli_model_config(cli, args, &config)) != GD_CLI_CONTINUE)
            return rc;
        s = gd_trainer_new_ranks(&run->trainer, &config, &o, threads, &run->placement);
    } else {
        /* The stored schedule ends where the first run did; past it every
         * step runs at min-lr. Going on past it is a choice to make, not a
         * default to discover. */
        uint64_t end = o.optim.schedule_steps, at = gd_trainer_step_count(run->trainer);
        if (!schedule_given && run->steps > end)
            return gd_cli_usage(cli, args,
                                "the checkpoint's learning-rate schedule ends at step %" PRIu64
                                ", so steps %" PRIu64 "..%" PRIu64 " would run at the minimum "
                                "rate %g: give --schedule-steps %" PRIu64 " to stretch it over "
                                "the longer run, or --schedule-steps %" PRIu64 " to keep it",
                                end, at > end ? at : end, run->steps - 1, o.optim.min_lr,
                                run->steps, end);
        if (memcmp(&o, gd_trainer_options(run->trainer), sizeof o) != 0)
            GD_LOG_WARN("train", "resuming with changed options: the run no longer matches an "
                                 "uninterrupted one");
        s = gd_trainer_reconfigure(run->trainer, &o);
    }
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    return GD_CLI_CONTINUE;
}

static void gd_train_banner(gd_cli *cli, const gd_train_run *run, int threads) {
    const gd_param_layout *l = gd_trainer_layout(run->trainer);
    const gd_train_options *o = gd_trainer_options(run->trainer);
    const gd_model_config *c = &l->config;
    if (run->resume)
        fprintf(cli->out, "resumed from step %" PRIu64 " of %s\n", run->resumed_from,
                run->resume);
    fprintf(cli->out,
            "model: %zu parameters (hidden %u, %u layers, %u/%u heads, vocab %u%s)\n"
            "data: %s\n"
            "batch %zu x %zu tokens (micro-batch %zu), lr %.3g -> %.3g, warmup %" PRIu64
            ", schedule %" PRIu64 " steps, %d threads, seed %" PRIu64 ", backend %s\n",
            l->total, c->hidden_size, c->num_hidden_layers, c->num_attention_heads,
            c->num_key_value_heads, c->vocab_size, c->tie_word_embeddings ? ", tied" : "",
            gd_data_describe(run->data), o->batch, o->seq_len, o->micro_batch, o->optim.lr,
            o->optim.min_lr, o->optim.warmup_steps, o->optim.schedule_steps, threads, o->seed,
            run->backends.ranks[0].iface->name);
    if (run->backends.n > 1)
        fprintf(cli->out, "data parallel over %zu GPUs, %s sharding, collective %s\n",
                run->backends.n, gd_setting_name(&gd_setting_shard, (int)run->placement.memory.shard),
                run->backends.collective);
    if (run->eval_data)
        fprintf(cli->out, "eval data: %s\n", gd_data_describe(run->eval_data));
    fflush(cli->out); /* seen at once in a log, before the first step line */
}

/* The source the eval after training reads, checked against the model
 * before training so a bad one does not cost the run. */
static gd_status gd_train_eval_check(const gd_train_run *run) {
    const gd_train_options *o = gd_trainer_options(run->trainer);
    const gd_data *eval = run->eval_data ? run->eval_data : run->data;
    gd_status s = gd_data_eval_check(eval, o->batch, o->seq_len,
                                     gd_trainer_layout(run->trainer)->config.vocab_size);
    if (s != GD_OK)
        return gd_fail_context(s, "evaluation data '%s'",
                               run->eval_spec ? run->eval_spec : run->data_spec);
    return GD_OK;
}

static gd_status gd_train_save(const gd_train_run *run) {
    return gd_trainer_save(run->trainer, run->out, run->data_spec);
}

static int gd_run_train(gd_cli *cli, gd_args *args) {
    gd_train_run run = {.data_spec = gd_arg(args, "data"), .eval_spec = gd_arg(args, "eval-data"),
                        .out = gd_arg(args, "out"), .log_every = 0, .save_every = 0,
                        .eval_batches = 0};
    if (run.data_spec == NULL || gd_arg(args, "steps") == NULL || run.out == NULL)
        return gd_cli_usage(cli, args, "--data, --steps and --out are required");
    if (run.eval_spec && !gd_arg(args, "eval-batches"))
        return gd_cli_usage(cli, args, "--eval-data is read by the eval after training: give "
                                       "--eval-batches N too");
    int threads = 1, rc;
    if ((rc = gd_cli_u64_opt(cli, args, &run.steps, "steps")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &run.log_every, "log-every")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &run.save_every, "save-every")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_u64_opt(cli, args, &run.eval_batches, "eval-batches")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_threads(cli, args, &threads)) != GD_CLI_CONTINUE)
        return rc;
    if (run.steps == 0 || run.steps > (1ull << 40))
        return gd_cli_usage(cli, args, "--steps must be 1..2^40");
    if (run.eval_batches > GD_EVAL_BATCHES_MAX)
        return gd_cli_usage(cli, args, "--eval-batches must be at most %d, got %" PRIu64,
                            GD_EVAL_BATCHES_MAX, run.eval_batches);
    if (run.log_every == 0)
        run.log_every = run.steps / 20 ? run.steps / 20 : 1;
    gd_status s = gd_data_open(&run.data, run.data_spec);
    if (s == GD_OK && run.eval_spec) {
        s = gd_data_open(&run.eval_data, run.eval_spec);
        if (s != GD_OK)
            s = gd_fail_context(s, "evaluation data '%s'", run.eval_spec);
    }
    if (s != GD_OK) {
        gd_data_close(run.data);
        return gd_cli_fail(cli, s);
    }
    if ((rc = gd_cli_trainer_host(cli, args, &run.placement)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_backend_group(cli, args, &run.backends)) != GD_CLI_CONTINUE) {
        gd_data_close(run.data);
        gd_data_close(run.eval_data);
        return rc;
    }
    run.placement.be = run.backends.ranks;
    run.placement.n = run.backends.n;
    run.placement.coll = &run.backends.coll;
    rc = gd_train_setup(cli, args, &run, threads);
    if (rc == GD_CLI_CONTINUE && run.eval_batches && (s = gd_train_eval_check(&run)) != GD_OK)
        rc = gd_cli_fail(cli, s);
    if (rc != GD_CLI_CONTINUE) {
        gd_trainer_free(run.trainer);
        gd_backend_group_close(&run.backends);
        gd_data_close(run.data);
        gd_data_close(run.eval_data);
        return rc;
    }
    bool json = gd_flag(args, "json");
    if (!json)
        gd_train_banner(cli, &run, threads);
    uint64_t start = gd_trainer_step_count(run.trainer);
    if (start >= run.steps)
        fprintf(cli->err, "note: the checkpoint is at step %" PRIu64 ", not before --steps %" PRIu64
                          "; nothing to train\n",
                start, run.steps);
    double t0 = gd_clock_seconds(), t_log = t0;
    uint64_t tokens = 0; /* a count: an integer in text and in JSON */
    gd_step_stats st = {0};
    double last_loss = NAN;
    uint64_t since_log = 0;
    while (s == GD_OK && gd_trainer_step_count(run.trainer) < run.steps) {
        s = gd_trainer_step(run.trainer, run.data, &st);
        if (s != GD_OK)
            break;
        last_loss = st.loss;
        tokens += st.tokens;
        since_log++;
        uint64_t done = st.step + 1;
        if (!json && (done % run.log_every == 0 || done == run.steps)) {
            double now = gd_clock_seconds(), dt = now - t_log;
            fprintf(cli->out,
                    "step %6" PRIu64 "/%" PRIu64 " | loss %.4f | lr %.2e | grad norm %.3f | "
                    "%.0f tok/s | %.1f ms/step\n",
                    done, run.steps, st.loss, st.lr, st.grad_norm,
                    (double)since_log * (double)st.tokens / dt, dt * 1e3 / (double)since_log);
            fflush(cli->out);
            t_log = now;
            since_log = 0;
        }
        if (run.save_every && done % run.save_every == 0 && done != run.steps)
            s = gd_train_save(&run);
    }
    double seconds = gd_clock_seconds() - t0;
    if (s == GD_OK)
        s = gd_train_save(&run);
    double eval_loss = NAN;
    uint64_t eval_tokens = 0;
    if (s == GD_OK && run.eval_batches) {
        const gd_train_options *o = gd_trainer_options(run.trainer);
        gd_eval_watch watch = {cli, json, gd_clock_seconds(), gd_clock_seconds()};
        s = gd_trainer_evaluate(run.trainer, run.eval_data ? run.eval_data : run.data,
                                run.eval_batches, o->batch, o->seq_len, o->micro_batch,
                                &eval_loss, &eval_tokens, gd_eval_progress, &watch);
        if (s == GD_OK && eval_tokens && !isfinite(eval_loss))
            s = gd_fail(GD_ERR_LIMIT, "the eval loss after training is not finite (%g); %s "
                                      "holds the diverged model",
                        eval_loss, run.out);
    }
    if (s == GD_OK) {
        if (json) {
            json_t *j = json_pack("{s:o,s:I,s:I,s:f,s:f,s:s}", "final_loss",
                                  isfinite(last_loss) ? json_real(last_loss) : json_null(),
                                  "steps", (json_int_t)gd_trainer_step_count(run.trainer),
                                  "tokens", (json_int_t)tokens, "seconds", seconds,
                                  "tokens_per_s", seconds > 0 ? (double)tokens / seconds : 0.0,
                                  "checkpoint", run.out);
            if (j && run.resume)
                json_object_set_new(j, "resumed_from", json_integer((json_int_t)run.resumed_from));
            if (j && run.eval_batches) {
                json_object_set_new(j, "eval_loss", eval_tokens ? gd_cli_json_number(eval_loss)
                                                                : json_null());
                json_object_set_new(j, "eval_tokens", json_integer((json_int_t)eval_tokens));
                json_object_set_new(j, "eval_data",
                                    json_string(run.eval_spec ? run.eval_spec : run.data_spec));
            }
            rc = gd_cli_print_json(cli, j);
        } else {
            fprintf(cli->out,
                    "final loss %.4f after %" PRIu64 " steps (%" PRIu64 " tokens in %.1f s)\n",
                    last_loss, gd_trainer_step_count(run.trainer), tokens, seconds);
            if (run.eval_batches)
                fprintf(cli->out, "eval loss %.4f nats/token over %" PRIu64 " tokens%s%s\n",
                        eval_loss, eval_tokens, run.eval_spec ? " of " : "",
                        run.eval_spec ? run.eval_spec : "");
            fprintf(cli->out, "saved %s\n", run.out);
            rc = GD_EXIT_OK;
        }
    } else {
        rc = gd_cli_fail(cli, s);
    }
    gd_trainer_free(run.trainer);
    gd_backend_group_close(&run.backends);
    gd_data_close(run.data);
    gd_data_close(run.eval_data);
    return rc;
}

#define GD_MODEL_OPTS                                                                          \
    {"model", "NAME", "model preset: tiny, small or base (default tiny)"},                     \
        {"model-config", "FILE", "model shape from a Hugging Face config.json instead"},       \
        {"vocab", "N", "override the vocabulary size"}
#define GD_BATCH_OPTS                                                                          \
    {"batch", "B", "sequences per step (default 8)"},                                          \
        {"seq", "T", "tokens per sequence (default 256)"},                                     \
        {"micro-batch", "M", "sequences per forward/backward pass; divides B (default B)"},    \
        {"threads", "N", "worker threads (default: all cores; results do not depend on it)"}, \
        {"backend", "NAME", "cpu, cuda or auto (default auto: cuda where a GPU is usable)"}

static const gd_opt_spec gd_train_opts[] = {
    GD_MODEL_OPTS,
    GD_RUN_SETTINGS_OPTS,
    {"data", "SPEC", "synthetic:markov:SEED[:ALPHABET[:ORDER]], text:GLOB, or token shards"},
    {"steps", "N", "train until this many optimizer steps in total"},
    {"out", "CKPT", "checkpoint to write (safetensors; optimizer state beside it)"},
    {"resume", "CKPT", "continue from a checkpoint and its optimizer state"},
    GD_BATCH_OPTS,
    {"gpus", "N", "data parallel over GPUs 0..N-1 (cuda; default 1): the same bits for any N"},
    GD_TRAINER_HOST_OPTS,
    {"lr", "LR", "peak learning rate (default 1e-3)"},
    {"min-lr", "LR", "learning rate at the end of the cosine decay (default lr/10)"},
    {"warmup", "N", "linear warmup steps (default 5% of --steps, at most 100)"},
    {"schedule-steps", "N", "steps the warmup+cosine schedule spans (default --steps; with "
                            "--resume the checkpoint's, which --steps may not pass unless "
                            "this is given)"},
    {"weight-decay", "WD", "AdamW weight decay on matrices (default 0.1)"},
    {"beta1", "B1", "AdamW beta1 (default 0.9)"},
    {"beta2", "B2", "AdamW beta2 (default 0.95)"},
    {"eps", "EPS", "AdamW epsilon (default 1e-8)"},
    {"grad-clip", "NORM", "clip the gradient's global norm (default 1.0; 0 = off)"},
    {"seed", "S", "seed of the initial weights and the batches (default 1)"},
    {"worker", "W", "worker rank: which data stream (default 0)"},
    {"log-every", "N", "steps between progress lines (default steps/20)"},
    {"save-every", "N", "also write the checkpoint every N steps"},
    {"eval-batches", "N", "after training, the eval loss over N evaluation batches"},
    {"eval-data", "SPEC", "the source of those batches (default --data): a held-out loss"},
    {"json", NULL, "print one JSON summary instead of progress lines"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_train = {
    "train", "", 0, 0,
    "Train a Llama-style model on the CPU and write a checkpoint.",
    "Prints a progress line per log interval (step, loss, learning rate, gradient\n"
    "norm, tokens/s) and the final loss. The checkpoint is a Hugging Face-compatible\n"
    "safetensors file; CKPT's .optim.safetensors companion holds the AdamW state so\n"
    "--resume continues bit-exactly. Results do not depend on --threads.",
    gd_train_opts, gd_run_train,
};

/* --- eval -------------------------------------------------------------------- */

static int gd_run_eval(gd_cli *cli, gd_args *args) {
    const char *ckpt = gd_arg(args, "checkpoint"), *spec = gd_arg(args, "eval-data");
    if (ckpt == NULL)
        return gd_cli_usage(cli, args, "--checkpoint is required");
    if (spec && gd_arg(args, "data"))
        return gd_cli_usage(cli, args, "--data and --eval-data name the same source here; give "
                                       "one");
    if (spec == NULL)
        spec = gd_arg(args, "data");
    uint64_t batches = 10;
    int threads = 1, rc;
    gd_train_options o;
    gd_train_options_default(&o);
    if ((rc = gd_cli_u64_opt(cli, args, &batches, "batches")) != GD_CLI_CONTINUE ||
        (rc = gd_cli_batch_opts(cli, args, &o)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_threads(cli, args, &threads)) != GD_CLI_CONTINUE)
        return rc;
    if (batches == 0 || batches > GD_EVAL_BATCHES_MAX)
        return gd_cli_usage(cli, args, "--batches must be 1..%d, got %" PRIu64,
                            GD_EVAL_BATCHES_MAX, batches);
    gd_param_layout layout;
    float *params = NULL;
    uint64_t step = 0;
    gd_status s = gd_checkpoint_load_model(ckpt, &layout, &params, &step);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    /* A nan loss is not a score: refuse the weights that would give one. */
    if ((s = gd_params_check_finite(&layout, params)) != GD_OK) {
        free(params);
        gd_param_layout_free(&layout);
        return gd_cli_fail(cli, gd_fail_context(s, "checkpoint %s", ckpt));
    }
    /* Neither given: the source it was trained on, as its optimizer state
     * records it. */
    char recorded[sizeof ((gd_optim_state *)0)->data_spec];
    if (spec == NULL) {
        s = gd_checkpoint_data_spec(recorded, sizeof recorded, ckpt);
        if (s != GD_OK) {
            free(params);
            gd_param_layout_free(&layout);
            if (s != GD_ERR_NOT_FOUND)
                return gd_cli_fail(cli, s);
            return gd_cli_usage(cli, args, "%s; give --eval-data SPEC", gd_error_detail());
        }
        spec = recorded;
    }
    bool from_checkpoint = spec == recorded;
    /* Without --seq, the length it was trained at: a model scored at a
     * length it never saw reads worse than it is. Checkpoints from
     * elsewhere record none and keep the default, within the model. */
    const char *seq_from = "given";
    if (!gd_arg(args, "seq")) {
        gd_train_options trained;
        s = gd_checkpoint_train_options(&trained, ckpt);
        if (s == GD_OK && trained.seq_len >= 1 &&
            trained.seq_len <= layout.config.max_position_embeddings) {
            o.seq_len = trained.seq_len;
            seq_from = "the training length, recorded in the checkpoint";
        } else if (s != GD_OK && s != GD_ERR_NOT_FOUND) {
            free(params);
            gd_param_layout_free(&layout);
            return gd_cli_fail(cli, s);
        } else {
            seq_from = "the default";
            if (o.seq_len > layout.config.max_position_embeddings) {
                o.seq_len = layout.config.max_position_embeddings;
                seq_from = "the model's max_position_embeddings";
            }
        }
        s = GD_OK;
    }
    gd_data *data = NULL;
    gd_pool *pool = NULL;
    s = gd_data_open(&data, spec);
    if (s == GD_OK)
        s = gd_data_eval_check(data, o.batch, o.seq_len, layout.config.vocab_size);
    if (s != GD_OK)
        s = gd_fail_context(s, "evaluation data '%s'%s", spec,
                            from_checkpoint ? " (recorded in the checkpoint)" : "");
    if (s == GD_OK)
        s = gd_pool_new(&pool, threads);
    gd_backend backend = {0};
    if (s == GD_OK) {
        const char *name = gd_arg(args, "backend") ? gd_arg(args, "backend") : "auto";
        s = gd_backend_open(&backend, name, pool);
    }
    double loss = 0;
    uint64_t tokens = 0;
    gd_eval_watch watch = {cli, gd_flag(args, "json"), gd_clock_seconds(), gd_clock_seconds()};
    if (s == GD_OK)
        s = gd_evaluate_backend(&backend, &layout, params, data, batches, o.batch, o.seq_len,
                                o.micro_batch, &loss, &tokens, gd_eval_progress, &watch);
    if (s == GD_OK && !isfinite(loss))
        s = gd_fail(GD_ERR_LIMIT, "the loss of checkpoint %s over %" PRIu64 " tokens is not "
                                  "finite (%g): its weights overflow the forward pass",
                    ckpt, tokens, loss);
    if (s != GD_OK) {
        rc = gd_cli_fail(cli, s);
    } else if (gd_flag(args, "json")) {
        rc = gd_cli_print_json(cli, json_pack("{s:f,s:I,s:I,s:o,s:I,s:I,s:s,s:s,s:b}", "loss",
                                              loss, "tokens", (json_int_t)tokens, "batches",
                                              (json_int_t)(tokens / (o.batch * o.seq_len)),
                                              "perplexity", gd_cli_json_number(exp(loss)),
                                              "step",
                                              (json_int_t)step, "seq", (json_int_t)o.seq_len,
                                              "seq_from", seq_from, "eval_data", spec,
                                              "eval_data_from_checkpoint", from_checkpoint));
    } else {
        fprintf(cli->out, "data: %s%s: %s\n", spec,
                from_checkpoint ? " (recorded in the checkpoint)" : "", gd_data_describe(data));
        fprintf(cli->out, "seq: %zu tokens (%s)\n", o.seq_len, seq_from);
        fprintf(cli->out, "loss %.4f nats/token (perplexity %.3f) over %" PRIu64 " tokens, "
                          "%" PRIu64 " batches of %zu x %zu\n",
                loss, exp(loss), tokens, tokens / (o.batch * o.seq_len), o.batch, o.seq_len);
        rc = GD_EXIT_OK;
    }
    gd_backend_close(&backend);
    gd_pool_free(pool);
    gd_data_close(data);
    free(params);
    gd_param_layout_free(&layout);
    return rc;
}

static const gd_opt_spec gd_eval_opts[] = {
    {"checkpoint", "CKPT", "model checkpoint (safetensors)"},
    {"eval-data", "SPEC", "synthetic:markov:SEED[:ALPHABET[:ORDER]], text:GLOB, or token shards "
                          "(default: the data recorded in the checkpoint)"},
    {"data", "SPEC", "the same as --eval-data"},
    {"batches", "N", "evaluation batches, from the first (default 10)"},
    {"batch", "B", "sequences per batch (default 8)"},
    {"seq", "T", "tokens per sequence (default: the length it was trained at, as its optimizer "
                 "state records it; else 256)"},
    {"micro-batch", "M", "sequences per forward pass; divides B (default B)"},
    {"threads", "N", "worker threads (default: all cores; results do not depend on it)"},
    {"backend", "NAME", "cpu, cuda or auto (default auto: cuda where a GPU is usable)"},
    {"json", NULL, "print {\"loss\", \"tokens\", ...} as JSON"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_eval = {
    "eval", "", 0, 0,
    "Mean cross-entropy (nats/token) of a checkpoint over fixed evaluation batches.",
    "A window is T+1 tokens (T inputs, T shifted targets). With text or token\n"
    "shards, the files hold M windows at a stride of T and batch b takes B of them,\n"
    "spread over all the files by a golden-ratio stride (docs/trainer.md); batches\n"
    "run out after M/B.",
    gd_eval_opts, gd_run_eval,
};
