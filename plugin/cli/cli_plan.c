/* `gonka-diloco plan`: the byte budget of training a model on one host
 * (trainer/plan.h), for the memory settings given or, without them, for
 * each rung of the ladder, saying which fit. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/parse.h"
#include "plugin/cli/cli.h"
#include "plugin/cli/cli_util.h"
#include "trainer/plan.h"

/* "80G", "512M", "1T", "81920000000": bytes, binary units (G = 2^30). */
static int gd_plan_bytes_opt(gd_cli *cli, gd_args *args, uint64_t *out, const char *name) {
    const char *text = gd_arg(args, name);
    if (text == NULL)
        return GD_CLI_CONTINUE;
    if (gd_parse_size(out, text) != GD_OK)
        return gd_cli_usage(cli, args, "--%s: %s", name, gd_error_detail());
    return GD_CLI_CONTINUE;
}

static json_t *gd_plan_json(const gd_plan *p) {
    const gd_plan_settings *s = &p->settings;
    return json_pack(
        "{s:{s:s,s:s,s:s,s:s,s:s,s:s},s:b,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I},s:I,"
        "s:{s:I,s:I,s:I},s:I,s:I}",
        "settings", "shard", gd_setting_name(&gd_setting_shard, (int)s->shard), "precision",
        gd_setting_name(&gd_setting_precision, (int)s->precision), "moments", gd_setting_name(&gd_setting_moments, (int)s->moments),
        "recompute", gd_setting_name(&gd_setting_recompute, (int)s->recompute), "attention",
        gd_setting_name(&gd_setting_attention, (int)s->attention), "offload", gd_setting_name(&gd_setting_offload, (int)s->offload),
        "fits", p->fits, "params", (json_int_t)p->params, "per_gpu",
        "weights", (json_int_t)p->weights, "gradients", (json_int_t)p->gradients, "moments",
        (json_int_t)p->moments, "activations", (json_int_t)p->activations, "logits",
        (json_int_t)p->logits, "workspace", (json_int_t)p->workspace, "per_gpu_bytes",
        (json_int_t)p->per_gpu, "host", "outer_state", (json_int_t)p->outer_state, "payload",
        (json_int_t)p->payload, "offloaded", (json_int_t)p->offloaded, "host_bytes",
        (json_int_t)p->host, "disk_per_round_bytes", (json_int_t)p->disk_per_round);
}

static void gd_plan_print(gd_cli *cli, const gd_plan *p) {
    const gd_plan_settings *s = &p->settings;
    const double g = 1024.0 * 1024.0 * 1024.0;
    fprintf(cli->out,
            "shard %s, precision %s, moments %s, recompute %s, attention %s, offload %s\n"
            "  per GPU %8.1f GiB: weights %.1f, gradients %.1f, moments %.1f, activations %.1f, "
            "logits %.1f, workspace %.1f\n"
            "  host    %8.1f GiB: outer state %.1f, payload %.1f, offloaded %.1f\n"
            "  disk a round %.1f GiB; %s\n",
            gd_setting_name(&gd_setting_shard, (int)s->shard), gd_setting_name(&gd_setting_precision, (int)s->precision),
            gd_setting_name(&gd_setting_moments, (int)s->moments), gd_setting_name(&gd_setting_recompute, (int)s->recompute),
            gd_setting_name(&gd_setting_attention, (int)s->attention), gd_setting_name(&gd_setting_offload, (int)s->offload),
            p->per_gpu / g, p->weights / g, p->gradients / g, p->moments / g,
            p->activations / g, p->logits / g, p->workspace / g, p->host / g,
            p->outer_state / g, p->payload / g, p->offloaded / g, p->disk_per_round / g,
            p->fits ? "fits" : "does not fit");
}

static int gd_run_plan(gd_cli *cli, gd_args *args) {
    const char *model = gd_arg(args, "model");
    if (model == NULL)
        return gd_cli_usage(cli, args, "--model NAME|CONFIG.json is required");
    gd_plan_input in = {.gpus = 1, .seq = 0, .micro_batch = 1, .segments = 10};
    bool file = strchr(model, '/') != NULL || strstr(model, ".json") != NULL;
    gd_status st = file ? gd_model_config_load(&in.model, model)
                        : gd_model_config_preset(&in.model, model);
    if (st != GD_OK)
        return gd_cli_fail(cli, st);
    uint64_t gpus = 1, seq = 0, batch = 1, segments = 10;
    int rc;
    if ((rc = gd_cli_uint_opt(cli, args, &gpus, "gpus", 4096, false)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &seq, "seq", UINT32_MAX, false)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &batch, "batch", 65536, false)) != GD_CLI_CONTINUE ||
        (rc = gd_cli_uint_opt(cli, args, &segments, "segments", 4096, false)) != GD_CLI_CONTINUE ||
        (rc = gd_plan_bytes_opt(cli, args, &in.gpu_mem, "gpu-mem")) != GD_CLI_CONTINUE ||
        (rc = gd_plan_bytes_opt(cli, args, &in.host_mem, "host-mem")) != GD_CLI_CONTINUE)
        return rc;
    if (in.gpu_mem == 0)
        return gd_cli_usage(cli, args, "--gpu-mem SIZE is required (80G for an H100)");
    in.gpus = (uint32_t)gpus;
    in.seq = (uint32_t)(seq ? seq : in.model.max_position_embeddings);
    in.micro_batch = (uint32_t)batch;
    in.segments = (uint32_t)segments;
    gd_plan_settings s = gd_plan_ladder[0];
    bool given = false;
    int shard = s.shard, precision = s.precision, moments = s.moments, recompute = s.recompute,
        attention = s.attention, offload = s.offload;
    if ((rc = gd_cli_setting_opt(cli, args, &gd_setting_shard, &shard, &given)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_precision, &precision, &given)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_moments, &moments, &given)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_recompute, &recompute, &given)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_attention, &attention, &given)) !=
            GD_CLI_CONTINUE ||
        (rc = gd_cli_setting_opt(cli, args, &gd_setting_offload, &offload, &given)) !=
            GD_CLI_CONTINUE)
        return rc;
    s = (gd_plan_settings){(gd_shard)shard,         (gd_precision)precision,
                           (gd_precision)moments,   (gd_recompute)recompute,
                           (gd_attention)attention, (gd_offload)offload};
    gd_plan plans[GD_PLAN_LADDER];
    size_t n = given ? 1 : GD_PLAN_LADDER, chosen = n - 1;
    for (size_t i = 0; i < n; i++) {
        if ((st = gd_plan_compute(&plans[i], &in, given ? &s : &gd_plan_ladder[i])) != GD_OK)
            return gd_cli_fail(cli, st);
    }
    for (size_t i = 0; i < n && !given; i++)
        if (plans[i].fits) {
            chosen = i;
            break;
        }
    if (gd_flag(args, "json")) {
        json_t *o = gd_plan_json(&plans[chosen]);
        json_object_set_new(o, "model", json_string(model));
        json_object_set_new(o, "gpus", json_integer(in.gpus));
        json_object_set_new(o, "gpu_mem_bytes", json_integer((json_int_t)in.gpu_mem));
        json_object_set_new(o, "host_mem_bytes",
                            in.host_mem ? json_integer((json_int_t)in.host_mem) : json_null());
        json_object_set_new(o, "seq", json_integer(in.seq));
        json_object_set_new(o, "batch", json_integer(in.micro_batch));
        if (!given) {
            json_t *ladder = json_array();
            for (size_t i = 0; i < n; i++)
                json_array_append_new(ladder, gd_plan_json(&plans[i]));
            json_object_set_new(o, "ladder", ladder);
        }
        return gd_cli_print_json(cli, o);
    }
    fprintf(cli->out, "%s: %.2fB parameters, %u GPUs of %.0f GiB, %u sequences of %u tokens "
                      "a GPU\n",
            model, plans[0].params / 1e9, in.gpus, in.gpu_mem / 1073741824.0, in.micro_batch,
            in.seq);
    for (size_t i = 0; i < n; i++)
        gd_plan_print(cli, &plans[i]);
    if (!given && plans[chosen].fits)
        fprintf(cli->out, "the first that fits: rung %zu\n", chosen + 1);
    else if (!given)
        fprintf(cli->out, "none fits: more GPUs, more memory, or a smaller batch or sequence\n");
    return plans[chosen].fits ? GD_EXIT_OK : GD_EXIT_FAIL;
}

static const gd_opt_spec gd_plan_opts[] = {
    {"model", "NAME|CONFIG.json", "a preset (tiny, small, base) or a Hugging Face config.json"},
    {"gpus", "N", "GPUs of the host (default 1)"},
    {"gpu-mem", "SIZE", "memory of each GPU: 80G (binary units: G = 2^30 bytes)"},
    {"host-mem", "SIZE", "memory of the host, to check the host's part too"},
    {"seq", "T", "tokens per sequence (default the model's max_position_embeddings)"},
    {"batch", "B", "sequences each GPU runs forward and backward at once (default 1)"},
    {"segments", "S", "transcript segments a round (default 10): what verification stores"},
    {"shard", "optimizer|full", "shard the optimizer (today's trainer) or everything"},
    {"precision", "fp32|bf16", "weights as the ops read them and activations"},
    {"moments", "fp32|bf16", "AdamW's moments"},
    {"recompute", "none|full", "recompute each layer's activations in the backward pass"},
    {"attention", "naive|flash", "keep the T x T probabilities, or tile them (flash)"},
    {"offload", "none|optimizer", "keep AdamW's moments in host memory"},
    {"json", NULL, "print the chosen plan as JSON (fits, per_gpu_bytes, host_bytes, ...)"},
    {NULL, NULL, NULL},
};

const gd_command gd_cmd_plan = {
    "plan", "", 0, 0, "The byte budget of training a model on one host's GPUs.",
    "Per GPU: weights, gradients, AdamW moments, activations, logits and a workspace (1 GiB\n"
    "and 5% of the GPU); per host: DiLoCo's outer state, the payload and what is offloaded;\n"
    "on disk: what a round leaves for verification. With memory settings, it budgets those;\n"
    "without, it tries each rung of the ladder (today's trainer, full sharding, bf16 with\n"
    "flash attention, recomputation, bf16 moments, optimizer offload) and names the first\n"
    "that fits. Every figure is what the trainer holds, byte for byte. Exit 0 when the\n"
    "chosen plan fits, 1 when it does not (docs/hardware.md).",
    gd_plan_opts, gd_run_plan,
};
