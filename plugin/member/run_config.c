/* RunSpec -> engine configuration (see run_config.h). */
#include "plugin/member/run_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/wire/decimal.h"
#include "chain/wire/diloco_spec.h"
#include "common/bytes.h"
#include "trainer/layout.h"
#include "trainer/plan.h"
#include "trainer/train.h"

/* A canonical decimal of the spec as the nearest double. The chain checked
 * the spelling; this checks it again, since a spec may come from a file. */
static gd_status gd_spec_real(double *out, const char *text, const char *field) {
    gd_decimal d;
    if (gd_decimal_parse(&d, text) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "run spec: %s", field);
    char *end = NULL;
    *out = strtod(text, &end);
    if (end == text || *end != '\0')
        return gd_fail(GD_ERR_INVALID, "run spec: %s '%s' is not a number", field, text);
    return GD_OK;
}

/* The model the spec names: a preset, or the digest of the caller's config. */
static gd_status gd_spec_model(gd_model_config *out, const char *name,
                               const gd_model_config *local) {
    if (gd_model_config_preset(out, name) == GD_OK)
        return GD_OK;
    uint8_t want[32], have[32];
    size_t len = 0;
    if (strlen(name) != 64 || gd_hex_decode(want, sizeof want, &len, name, 64) != GD_OK)
        return gd_fail(GD_ERR_INVALID, "run spec: model '%.64s' is neither a preset (%s) nor a "
                                       "model config digest (64 hex digits)",
                       name, gd_model_config_preset_names());
    if (local == NULL)
        return gd_fail(GD_ERR_INVALID,
                       "run spec: the model is given by its config digest %.16s...; pass the "
                       "config file it was made from",
                       name);
    gd_model_config_digest(local, have);
    if (memcmp(want, have, sizeof want) != 0)
        return gd_fail(GD_ERR_INVALID, "run spec: the model config given is not the one the spec "
                                       "names (digest %.16s...)",
                       name);
    *out = *local;
    return GD_OK;
}

gd_status gd_run_config_from_spec(gd_run_config *out, const Gonka__Diloco__V1__RunSpec *spec,
                                  uint64_t run, const gd_model_config *local_model) {
    memset(out, 0, sizeof *out);
    GD_TRY(gd_diloco_spec_check(spec));
    GD_TRY(gd_spec_model(&out->model, spec->model, local_model));
    gd_param_layout layout;
    GD_TRY(gd_param_layout_build(&layout, &out->model));
    bool same_layout = memcmp(layout.digest, spec->layout_digest.data, 32) == 0;
    gd_param_layout_free(&layout);
    if (!same_layout)
        return gd_fail(GD_ERR_INVALID, "run spec: layout_digest is not the layout of model '%.64s'",
                       spec->model);

    gd_diloco_config *c = &out->diloco;
    gd_diloco_config_default(c);
    c->run = run;
    GD_TRY(gd_diloco_spec_digest(c->spec_digest, spec));
    c->workers = 1;
    c->inner_steps = spec->h_max;
    c->segment_steps = spec->segment_steps;
    gd_train_options *in = &c->inner;
    gd_train_options_default(in);
    in->seed = spec->seed;
    in->batch = spec->batch;
    in->seq_len = spec->seq_len;
    in->micro_batch = spec->micro_batch;
    int attention, precision, moments;
    if (gd_setting_parse_optional(&gd_setting_attention, &attention, spec->attention) != GD_OK ||
        gd_setting_parse_optional(&gd_setting_precision, &precision, spec->precision) != GD_OK ||
        gd_setting_parse_optional(&gd_setting_moments, &moments, spec->moments) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "run spec");
    in->attention = (gd_attention)attention;
    in->precision = (gd_precision)precision;
    in->moments = (gd_precision)moments;
    gd_optim_config *o = &in->optim;
    o->warmup_steps = spec->inner_warmup_steps;
    o->schedule_steps = spec->inner_schedule_steps;
    GD_TRY(gd_spec_real(&o->lr, spec->inner_lr, "inner_lr"));
    GD_TRY(gd_spec_real(&o->min_lr, spec->inner_min_lr, "inner_min_lr"));
    GD_TRY(gd_spec_real(&o->beta1, spec->adam_beta1, "adam_beta1"));
    GD_TRY(gd_spec_real(&o->beta2, spec->adam_beta2, "adam_beta2"));
    GD_TRY(gd_spec_real(&o->eps, spec->adam_eps, "adam_eps"));
    GD_TRY(gd_spec_real(&o->weight_decay, spec->weight_decay, "weight_decay"));
    GD_TRY(gd_spec_real(&o->grad_clip, spec->grad_clip, "grad_clip"));
    /* ppm / 10^6: one correctly rounded division of exact integers. */
    c->outer_lr = (double)spec->outer_lr_ppm / 1e6;
    c->outer_momentum = (double)spec->outer_momentum_ppm / 1e6;
    if (gd_codec_parse(&c->codec, spec->codec) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "run spec: codec");
    c->error_feedback = spec->error_feedback;
    GD_TRY(gd_spec_real(&c->error_feedback_decay, spec->error_feedback_decay,
                        "error_feedback_decay"));
    GD_TRY(gd_spec_real(&c->clip_factor, spec->clip_factor, "clip_factor"));
    c->overlap = spec->overlap;
    c->chunk_elems = spec->chunk_elems;
    if (gd_diloco_config_validate(c, &out->model) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "run spec");
    out->data_spec = spec->data_spec;
    memcpy(out->data_digest, spec->data_digest.data, 32);
    memcpy(out->initial_state_hash, spec->initial_state_hash.data, 32);
    return GD_OK;
}

gd_status gd_run_config_open_data(const gd_run_config *rc, gd_data **out,
                                  const char *const *paths, size_t n_paths, gd_pool *pool,
                                  const gd_data_hash_memo *memo) {
    *out = NULL;
    gd_data *d = NULL;
    gd_status s = gd_data_open_files(&d, rc->data_spec, paths, n_paths);
    if (s != GD_OK)
        return gd_fail_context(s, "run %" PRIu64 "'s data '%.200s'", rc->diloco.run,
                               rc->data_spec);
    uint8_t have[32];
    s = gd_data_digest(d, pool, memo, have);
    if (s == GD_OK && memcmp(have, rc->data_digest, 32) != 0) {
        char want_hex[65], have_hex[65];
        gd_hex_encode(want_hex, rc->data_digest, 32, false);
        gd_hex_encode(have_hex, have, 32, false);
        s = gd_fail(GD_ERR_INVALID,
                    "run %" PRIu64 "'s data_digest is %s, but the local data (%s%s: %s) "
                    "digests to %s: it is not the run's data (other files, order or contents)",
                    rc->diloco.run, want_hex, n_paths ? "the data paths given" : "data_spec ",
                    n_paths ? "" : rc->data_spec, gd_data_describe(d), have_hex);
    }
    if (s != GD_OK) {
        gd_data_close(d);
        return s;
    }
    *out = d;
    return GD_OK;
}

gd_status gd_run_config_initial_state(const gd_run_config *rc, uint8_t out[32], int threads) {
    gd_trainer *t = NULL;
    GD_TRY(gd_trainer_new(&t, &rc->model, &rc->diloco.inner, threads));
    size_t n = gd_trainer_layout(t)->total;
    gd_global_state g;
    gd_status s = gd_global_state_init(&g, n);
    if (s == GD_OK) {
        gd_trainer_get_state(t, g.params, NULL, NULL, NULL);
        s = gd_global_state_hash(gd_trainer_pool(t), out,
                                 gd_trainer_layout(t)->digest, rc->diloco.chunk_elems, &g);
        gd_global_state_free(&g);
    }
    gd_trainer_free(t);
    return s;
}

bool gd_run_spec_lists_class(const Gonka__Diloco__V1__RunSpec *spec, const char *hw_class) {
    for (size_t i = 0; i < spec->n_hw_classes; i++)
        if (strcmp(spec->hw_classes[i], hw_class) == 0)
            return true;
    return false;
}

bool gd_run_spec_takes_collateral(const Gonka__Diloco__V1__RunSpec *spec, const gd_coin *collateral) {
    const Cosmos__Base__V1beta1__Coin *min = spec->min_collateral;
    return min == NULL || (strcmp(collateral->denom, min->denom) == 0 &&
                           gd_amount_cmp(collateral->amount, min->amount) >= 0);
}

double gd_run_spec_round_bytes(const Gonka__Diloco__V1__RunSpec *spec, uint64_t run) {
    gd_run_config rc;
    gd_param_layout layout;
    if (gd_run_config_from_spec(&rc, spec, run, NULL) != GD_OK ||
        gd_param_layout_build(&layout, &rc.model) != GD_OK)
        return 0;
    double values = (double)layout.total;
    gd_param_layout_free(&layout);
    uint32_t segments = spec->segment_steps ? spec->h_max / spec->segment_steps : 1;
    return values * gd_plan_round_disk_per_param(segments, 0);
}
