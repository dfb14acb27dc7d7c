/* The RunSpec of a simulation (see cli_sim_spec.h). Why it is built this
 * way: the flags become the spec's JSON, which then goes through the
 * chain's own reader and rules (gd_diloco_spec_from_json) and the one
 * conversion to the engine (gd_run_config_from_spec). So a simulation runs
 * exactly the configuration a chain run of the printed spec would, and a
 * flag value the chain would refuse is refused here too. Real numbers keep
 * the digits the user typed (0.003 stays 0.003, not the double nearest it),
 * and defaults come from the trainer's own defaults. */
#include "plugin/cli/cli_sim_spec.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/wire/decimal.h"
#include "chain/wire/diloco_spec.h"
#include "common/bytes.h"
#include "plugin/cli/cli_train.h"
#include "plugin/cli/cli_util.h"
#include "trainer/layout.h"
#include "trainer/optim.h"

const char *const gd_sim_spec_flags[] = {
    "model",        "model-config", "vocab",  "seed",     "inner-steps", "segment-steps",
    "batch",        "seq",          "micro-batch", "lr",  "min-lr",      "warmup",
    "weight-decay", "outer-lr",     "outer-momentum", "codec", "chunk-elems", "clip",
    "ef-decay",     "no-error-feedback", "overlap", "warm-start", NULL,
};

/* What sim --print-spec proposes for the chain's side of a run; an
 * authority edits these (docs/cli.md). The windows add up to 76 blocks, a
 * round inside gonka-localnet's Inference phase. Verify is the longest:
 * each validator re-executes checks_per_commit segments of every other
 * member in it, one after another, and must answer with a third of it
 * left; train is short, since the tiny model's round takes seconds. With
 * verify at 8 blocks, three members on two cores with one-second blocks
 * answered checks UNAVAILABLE whose evidence was still on its way. The hardware class is a
 * placeholder: a simulation runs on one host and names none. The slashes
 * are the smallest the rules allow for a cheat (one epoch's reward) and 1%
 * of that for a skipped duty, within a collateral of two epochs' reward. A
 * sealed secret not revealed costs half an epoch's reward: choosing among
 * seeds wins less than that per withheld secret (docs/verification.md,
 * "Seed grinding"). */
static const char k_default_incentives[] =
    "{\"windows\": {\"train\": 16, \"commit\": 8, \"reveal\": 6, \"verify\": 22, "
    "\"open\": 6, \"dispute\": 5, \"attest\": 6, \"dispute_open\": 3, \"attest_open\": 4}, "
    "\"reward_per_epoch\": \"1000000000ngonka\", \"min_collateral\": \"2000000000ngonka\", "
    "\"fail_bond\": \"10000000ngonka\", \"checks_per_commit\": 4, "
    "\"double_check_ppm\": 500000, \"recheck_validators\": 3, "
    "\"validator_share_ppm\": 200000, \"hw_classes\": [\"cpu\"], \"min_class_members\": 6, "
    "\"avail_chunks\": 4, \"cheat_slash\": \"1000000000ngonka\", "
    "\"skip_slash\": \"10000000ngonka\", \"suspend_rounds\": 4, \"max_members\": 256, "
    "\"attest_share_ppm\": 50000, \"withhold_slash\": \"500000000ngonka\"}";

/* The shortest decimal that reads back as x (x from the trainer's own
 * defaults, whose decimal spelling is short: 0.9, 0.95, 1e-08). */
static gd_status gd_decimal_of_double(char out[GD_DECIMAL_TEXT_MAX + 1], double x) {
    char text[40];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (strtod(text, NULL) == x)
            break;
    }
    gd_decimal d;
    GD_TRY(gd_decimal_read(&d, text));
    gd_decimal_format(&d, out);
    return GD_OK;
}

/* A real flag as the user typed it, or the default, as canonical text. */
static int gd_flag_decimal(gd_cli *cli, gd_args *args, char out[GD_DECIMAL_TEXT_MAX + 1],
                           const char *name, double dflt) {
    const char *text = gd_arg(args, name);
    if (text == NULL)
        return gd_decimal_of_double(out, dflt) == GD_OK ? GD_CLI_CONTINUE
                                                        : gd_cli_fail(cli, GD_ERR_INVALID);
    gd_decimal d;
    if (gd_decimal_read(&d, text) != GD_OK)
        return gd_cli_usage(cli, args, "--%s: %s", name, gd_error_detail());
    gd_decimal_format(&d, out);
    return GD_CLI_CONTINUE;
}

/* A flag in parts per million (the spec's outer lr and momentum). */
static int gd_flag_ppm(gd_cli *cli, gd_args *args, uint32_t *out, const char *name,
                       uint32_t dflt) {
    const char *text = gd_arg(args, name);
    *out = dflt;
    if (text == NULL)
        return GD_CLI_CONTINUE;
    gd_decimal d;
    if (gd_decimal_read(&d, text) != GD_OK)
        return gd_cli_usage(cli, args, "--%s: %s", name, gd_error_detail());
    uint64_t unit = GD_DECIMAL_ONE / 1000000;
    if (d.fraction % unit != 0 || d.integer > 4000)
        return gd_cli_usage(cli, args, "--%s %s: the run spec holds it in millionths (at most six "
                                       "decimals, at most 4000)",
                            name, text);
    *out = (uint32_t)(d.integer * 1000000 + d.fraction / unit);
    return GD_CLI_CONTINUE;
}

/* The model: a preset by name, or any other shape by its config digest. */
static void gd_spec_model_name(gd_args *args, const gd_model_config *model, char out[65]) {
    const char *preset = gd_arg(args, "model");
    if (gd_arg(args, "model-config") == NULL && gd_arg(args, "vocab") == NULL) {
        snprintf(out, 65, "%s", preset ? preset : "tiny");
        return;
    }
    uint8_t digest[32];
    gd_model_config_digest(model, digest);
    gd_hex_encode(out, digest, sizeof digest, false);
}

static json_t *gd_u64_json(uint64_t v) {
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    return json_string(text);
}

/* The digest of the data a spec names (trainer/data.h), as hex. */
static int gd_spec_data_digest(gd_cli *cli, const char *data_spec, char hex[65]) {
    gd_data *d = NULL;
    gd_status s = gd_data_open(&d, data_spec ? data_spec : "");
    uint8_t digest[32];
    if (s == GD_OK)
        s = gd_data_digest(d, NULL, NULL, digest);
    gd_data_close(d);
    if (s != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(s, "--data"));
    gd_hex_encode(hex, digest, sizeof digest, false);
    return GD_CLI_CONTINUE;
}

/* Turns the spec into a configuration and names G_0 in it. */
static int gd_spec_finish(gd_cli *cli, Gonka__Diloco__V1__RunSpec *spec, uint64_t run,
                          const gd_model_config *model, int threads, gd_run_config *rc) {
    gd_status s = gd_run_config_from_spec(rc, spec, run, model);
    uint8_t g0[32];
    if (s == GD_OK)
        s = gd_run_config_initial_state(rc, g0, threads);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    memcpy(spec->initial_state_hash.data, g0, 32);
    memcpy(rc->initial_state_hash, g0, 32);
    /* The spec digest covers G_0's hash: recompute it now that it is set. */
    s = gd_diloco_spec_digest(rc->diloco.spec_digest, spec);
    return s == GD_OK ? GD_CLI_CONTINUE : gd_cli_fail(cli, s);
}

int gd_sim_spec_from_flags(gd_cli *cli, gd_args *args, uint64_t warm_start, uint64_t rounds,
                           uint64_t run, int threads, Gonka__Diloco__V1__RunSpec **spec,
                           gd_run_config *rc) {
    *spec = NULL;
    gd_model_config model;
    int code = gd_cli_model_config(cli, args, &model);
    if (code != GD_CLI_CONTINUE)
        return code;
    gd_diloco_config dc;
    gd_diloco_config_default(&dc);
    gd_optim_config oc;
    gd_optim_config_default(&oc);
    uint64_t inner = dc.inner_steps, segment = 0, seed = 1, batch = 8, seq = 64, micro = 0;
    uint64_t chunk = dc.chunk_elems, warmup = 0;
    if ((code = gd_cli_u64_opt(cli, args, &inner, "inner-steps")) != GD_CLI_CONTINUE ||
        (code = gd_cli_u64_opt(cli, args, &segment, "segment-steps")) != GD_CLI_CONTINUE ||
        (code = gd_cli_u64_opt(cli, args, &seed, "seed")) != GD_CLI_CONTINUE ||
        (code = gd_cli_u64_opt(cli, args, &batch, "batch")) != GD_CLI_CONTINUE ||
        (code = gd_cli_u64_opt(cli, args, &seq, "seq")) != GD_CLI_CONTINUE ||
        (code = gd_cli_u64_opt(cli, args, &micro, "micro-batch")) != GD_CLI_CONTINUE ||
        (code = gd_cli_u64_opt(cli, args, &warmup, "warmup")) != GD_CLI_CONTINUE ||
        (code = gd_cli_u64_opt(cli, args, &chunk, "chunk-elems")) != GD_CLI_CONTINUE)
        return code;
    if (inner < 1 || inner > 100000)
        return gd_cli_usage(cli, args, "--inner-steps must be 1..100000");
    if (batch < 1 || batch > 4096 || seq < 1 || seq > (1u << 20) || (micro && batch % micro))
        return gd_cli_usage(cli, args, "--batch 1..4096, --seq >= 1, --micro-batch dividing it");
    if (chunk < 1 || chunk > ((uint64_t)1 << 28))
        return gd_cli_usage(cli, args, "--chunk-elems must be 1..2^28");
    if (segment == 0)
        segment = inner % 10 == 0 ? 10 : inner;
    uint64_t schedule_steps = warm_start + rounds * inner;
    if (!gd_arg(args, "warmup"))
        warmup = schedule_steps / 20 < 100 ? schedule_steps / 20 : 100;
    /* sim's inner learning rate defaults higher than the trainer's: its
     * models are small. */
    char lr[GD_DECIMAL_TEXT_MAX + 1], min_lr[GD_DECIMAL_TEXT_MAX + 1];
    char b1[GD_DECIMAL_TEXT_MAX + 1], b2[GD_DECIMAL_TEXT_MAX + 1], eps[GD_DECIMAL_TEXT_MAX + 1];
    char wd[GD_DECIMAL_TEXT_MAX + 1], gclip[GD_DECIMAL_TEXT_MAX + 1];
    char clip[GD_DECIMAL_TEXT_MAX + 1], decay[GD_DECIMAL_TEXT_MAX + 1];
    if ((code = gd_flag_decimal(cli, args, lr, "lr", 3e-3)) != GD_CLI_CONTINUE ||
        (code = gd_flag_decimal(cli, args, wd, "weight-decay", oc.weight_decay)) !=
            GD_CLI_CONTINUE ||
        (code = gd_flag_decimal(cli, args, clip, "clip", dc.clip_factor)) != GD_CLI_CONTINUE ||
        (code = gd_flag_decimal(cli, args, decay, "ef-decay", dc.error_feedback_decay)) !=
            GD_CLI_CONTINUE)
        return code;
    if (gd_decimal_of_double(b1, oc.beta1) != GD_OK ||
        gd_decimal_of_double(b2, oc.beta2) != GD_OK ||
        gd_decimal_of_double(eps, oc.eps) != GD_OK ||
        gd_decimal_of_double(gclip, oc.grad_clip) != GD_OK)
        return gd_cli_fail(cli, GD_ERR_INVALID);
    if (gd_arg(args, "min-lr") != NULL) {
        if ((code = gd_flag_decimal(cli, args, min_lr, "min-lr", 0)) != GD_CLI_CONTINUE)
            return code;
    } else {
        /* The cosine ends at a tenth of the peak, computed in decimal. */
        gd_decimal d;
        if (gd_decimal_parse(&d, lr) != GD_OK || gd_decimal_div_pow10(&d, 1) != GD_OK)
            return gd_cli_usage(cli, args, "--lr %s: give --min-lr too (a tenth of it needs more "
                                           "than 18 decimals)",
                                lr);
        gd_decimal_format(&d, min_lr);
    }
    uint32_t outer_lr_ppm = 0, outer_momentum_ppm = 0;
    if ((code = gd_flag_ppm(cli, args, &outer_lr_ppm, "outer-lr",
                            (uint32_t)(dc.outer_lr * 1e6 + 0.5))) != GD_CLI_CONTINUE ||
        (code = gd_flag_ppm(cli, args, &outer_momentum_ppm, "outer-momentum",
                            (uint32_t)(dc.outer_momentum * 1e6 + 0.5))) != GD_CLI_CONTINUE)
        return code;
    gd_codec codec = dc.codec;
    const char *codec_text = gd_arg(args, "codec");
    if (codec_text && gd_codec_parse(&codec, codec_text) != GD_OK)
        return gd_cli_fail(cli, GD_ERR_INVALID);
    char codec_name[40];
    gd_codec_format(&codec, codec_name, sizeof codec_name);
    char model_name[65];
    gd_spec_model_name(args, &model, model_name);
    gd_param_layout layout;
    gd_status s = gd_param_layout_build(&layout, &model);
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    char layout_hex[65];
    gd_hex_encode(layout_hex, layout.digest, sizeof layout.digest, false);
    gd_param_layout_free(&layout);
    const char *data = gd_arg(args, "data");
    char data_hex[65];
    if ((code = gd_spec_data_digest(cli, data, data_hex)) != GD_CLI_CONTINUE)
        return code;

    json_t *j = json_pack(
        "{s:s,s:s,s:o,s:s,s:s,s:I,s:I,s:I,s:o,s:I,s:I,s:s}", "model", model_name,
        "layout_digest", layout_hex, "seed", gd_u64_json(seed), "data_spec", data ? data : "",
        "initial_state_hash", "0000000000000000000000000000000000000000000000000000000000000000",
        "h_min", (json_int_t)inner, "h_max", (json_int_t)inner, "segment_steps",
        (json_int_t)segment, "tokens_per_step", gd_u64_json(batch * seq), "outer_lr_ppm",
        (json_int_t)outer_lr_ppm, "outer_momentum_ppm", (json_int_t)outer_momentum_ppm, "codec",
        codec_name);
    json_t *incentives = json_loads(k_default_incentives, 0, NULL);
    if (j == NULL || incentives == NULL || json_object_update(j, incentives) != 0) {
        json_decref(j);
        json_decref(incentives);
        return gd_cli_fail(cli, gd_fail(GD_ERR_NOMEM, "out of memory"));
    }
    json_decref(incentives);
    json_object_set_new(j, "inner_lr", json_string(lr));
    json_object_set_new(j, "inner_min_lr", json_string(min_lr));
    json_object_set_new(j, "inner_warmup_steps", gd_u64_json(warmup));
    json_object_set_new(j, "inner_schedule_steps", gd_u64_json(schedule_steps));
    json_object_set_new(j, "adam_beta1", json_string(b1));
    json_object_set_new(j, "adam_beta2", json_string(b2));
    json_object_set_new(j, "adam_eps", json_string(eps));
    json_object_set_new(j, "weight_decay", json_string(wd));
    json_object_set_new(j, "grad_clip", json_string(gclip));
    json_object_set_new(j, "batch", json_integer((json_int_t)batch));
    json_object_set_new(j, "seq_len", json_integer((json_int_t)seq));
    json_object_set_new(j, "micro_batch", json_integer((json_int_t)(micro ? micro : batch)));
    json_object_set_new(j, "clip_factor", json_string(clip));
    json_object_set_new(j, "error_feedback", json_boolean(!gd_flag(args, "no-error-feedback")));
    json_object_set_new(j, "error_feedback_decay", json_string(decay));
    json_object_set_new(j, "chunk_elems", json_integer((json_int_t)chunk));
    json_object_set_new(j, "overlap", json_boolean(gd_flag(args, "overlap")));
    json_object_set_new(j, "data_digest", json_string(data_hex));
    for (size_t i = 0; i < GD_RUN_SETTINGS; i++) { /* the spec checks the names */
        const char *key = gd_run_settings[i]->option;
        if (gd_arg(args, key))
            json_object_set_new(j, key, json_string(gd_arg(args, key)));
    }
    s = gd_diloco_spec_from_json(spec, j);
    json_decref(j);
    if (s != GD_OK)
        return gd_cli_fail(cli, gd_fail_context(s, "sim"));
    code = gd_spec_finish(cli, *spec, run, &model, threads, rc);
    if (code != GD_CLI_CONTINUE) {
        gd_diloco_spec_free(*spec);
        *spec = NULL;
    }
    return code;
}

int gd_sim_spec_from_file(gd_cli *cli, const char *path, uint64_t run,
                          const gd_model_config *local_model, int threads,
                          Gonka__Diloco__V1__RunSpec **spec, gd_run_config *rc) {
    gd_status s = gd_cli_read_run_spec(spec, path, "--spec");
    if (s != GD_OK)
        return gd_cli_fail(cli, s);
    uint8_t named[32];
    memcpy(named, (*spec)->initial_state_hash.data, 32);
    int code = gd_spec_finish(cli, *spec, run, local_model, threads, rc);
    if (code == GD_CLI_CONTINUE && memcmp(named, rc->initial_state_hash, 32) != 0)
        code = gd_cli_fail(cli, gd_fail(GD_ERR_INVALID,
                                        "--spec %.200s: its initial_state_hash is not G_0 of "
                                        "its model and seed",
                                        path));
    gd_data *data = NULL;
    if (code == GD_CLI_CONTINUE) {
        s = gd_run_config_open_data(rc, &data, NULL, 0, NULL, NULL);
        if (s != GD_OK)
            code = gd_cli_fail(cli, gd_fail_context(s, "--spec %.200s", path));
        gd_data_close(data);
    }
    if (code != GD_CLI_CONTINUE) {
        gd_diloco_spec_free(*spec);
        *spec = NULL;
    }
    return code;
}
