/* Gonka epoch clock (see epoch.h for the formulas). */
#include "chain/wire/epoch.h"

/* Bounds that keep every sum below inside int64: durations up to 2^40
 * blocks (far above any real value) and heights up to GD_EPOCH_HEIGHT_MAX. */
#define GD_EPOCH_DURATION_MAX ((int64_t)1 << 40)

void gd_epoch_params_mainnet(gd_epoch_params *p) {
    /* Gonka mainnet genesis; poc_validation_duration 480 and
     * inference_validation_cutoff 2 from the v0.2.9 upgrade handler. */
    p->epoch_length = 17280;
    p->epoch_multiplier = 1;
    p->epoch_shift = 16980;
    p->default_unit_of_compute_price = 100;
    p->poc_stage_duration = 60;
    p->poc_exchange_duration = 5;
    p->poc_validation_delay = 5;
    p->poc_validation_duration = 480;
    p->set_new_validators_delay = 120;
    p->inference_validation_cutoff = 2;
    p->inference_pruning_epoch_threshold = 2;
}

gd_status gd_epoch_params_check(const gd_epoch_params *p) {
    /* Gonka's EpochParams.Validate, in its order and words. */
    if (p->epoch_length <= 0)
        return gd_fail(GD_ERR_INVALID, "epoch length must be positive");
    if (p->epoch_multiplier <= 0)
        return gd_fail(GD_ERR_INVALID, "epoch multiplier must be positive");
    if (p->default_unit_of_compute_price < 0)
        return gd_fail(GD_ERR_INVALID, "default unit of compute price cannot be negative");
    if (p->poc_stage_duration <= 0)
        return gd_fail(GD_ERR_INVALID, "poc stage duration must be positive");
    if (p->poc_exchange_duration < 0)
        return gd_fail(GD_ERR_INVALID, "poc exchange duration cannot be negative");
    if (p->poc_validation_delay < 0)
        return gd_fail(GD_ERR_INVALID, "poc validation delay cannot be negative");
    if (p->poc_validation_duration <= 0)
        return gd_fail(GD_ERR_INVALID, "poc validation duration must be positive");
    if (p->set_new_validators_delay < 0)
        return gd_fail(GD_ERR_INVALID, "set new validators delay cannot be negative");
    if (p->inference_validation_cutoff < 0)
        return gd_fail(GD_ERR_INVALID, "inference validation cutoff cannot be negative");
    if (p->inference_pruning_epoch_threshold < 1)
        return gd_fail(GD_ERR_INVALID, "inference pruning epoch threshold must be at least 1");
    /* Ours: bounds so that no stage computation can overflow. */
    const int64_t durations[] = {p->epoch_length,          p->poc_stage_duration,
                                 p->poc_exchange_duration, p->poc_validation_delay,
                                 p->poc_validation_duration, p->set_new_validators_delay,
                                 p->inference_validation_cutoff};
    for (unsigned i = 0; i < sizeof durations / sizeof durations[0]; i++)
        if (durations[i] > GD_EPOCH_DURATION_MAX)
            return gd_fail(GD_ERR_INVALID, "epoch parameter %lld is implausibly large",
                           (long long)durations[i]);
    if (p->epoch_shift > GD_EPOCH_DURATION_MAX || p->epoch_shift < -GD_EPOCH_DURATION_MAX)
        return gd_fail(GD_ERR_INVALID, "epoch shift is implausibly large");
    return GD_OK;
}

/* Gonka computes the wind-down offsets as int64(float64(d) * 0.8): a
 * float64 product truncated toward zero. Doing the same double arithmetic
 * reproduces its result bit for bit (a single IEEE multiply, no contraction
 * possible); for d < 2^40 it equals floor(4d/5). */
static int64_t gd_wind_down(int64_t duration) { return (int64_t)((double)duration * 0.8); }

void gd_epoch_stages_compute(gd_epoch_stages *out, const gd_epoch *e, const gd_epoch_params *p) {
    int64_t P = e->poc_start_block_height;
    if (P > GD_EPOCH_HEIGHT_MAX)
        P = GD_EPOCH_HEIGHT_MAX;
    if (P < -GD_EPOCH_HEIGHT_MAX)
        P = -GD_EPOCH_HEIGHT_MAX;
    if (e->index == 0) {
        /* Genesis epoch: no PoC; every stage height reads 0 as in Gonka. */
        *out = (gd_epoch_stages){0};
        out->next_poc_start = p->epoch_length - p->epoch_shift;
    } else {
        int64_t gen_end = P + p->poc_stage_duration;
        int64_t val_start = gen_end + p->poc_validation_delay;
        int64_t val_end = val_start + p->poc_validation_duration;
        out->poc_start = P;
        out->poc_generation_wind_down = P + gd_wind_down(p->poc_stage_duration);
        out->poc_generation_end = gen_end;
        out->poc_exchange_deadline = gen_end + p->poc_exchange_duration;
        out->poc_validation_start = val_start;
        out->poc_validation_wind_down = val_start + gd_wind_down(p->poc_validation_duration);
        out->poc_validation_end = val_end;
        out->set_new_validators = val_end + p->set_new_validators_delay;
        out->claim_money = out->set_new_validators + 1;
        out->next_poc_start = P + p->epoch_length;
    }
    out->inference_validation_cutoff = out->next_poc_start - p->inference_validation_cutoff;
}

gd_epoch_phase gd_epoch_phase_at(const gd_epoch *e, const gd_epoch_params *p, int64_t height) {
    if (e->index == 0 || height < e->poc_start_block_height)
        return GD_PHASE_INFERENCE; /* Gonka's safest default, and epoch 0 */
    gd_epoch_stages s;
    gd_epoch_stages_compute(&s, e, p);
    if (height >= s.poc_start && height < s.poc_generation_wind_down)
        return GD_PHASE_POC_GENERATE;
    if (height >= s.poc_generation_wind_down && height < s.poc_validation_start)
        return GD_PHASE_POC_GENERATE_WIND_DOWN;
    if (height >= s.poc_validation_start && height < s.poc_validation_wind_down)
        return GD_PHASE_POC_VALIDATE;
    if (height >= s.poc_validation_wind_down && height < s.poc_validation_end)
        return GD_PHASE_POC_VALIDATE_WIND_DOWN;
    return GD_PHASE_INFERENCE;
}

const char *gd_epoch_phase_name(gd_epoch_phase phase) {
    switch (phase) {
    case GD_PHASE_POC_GENERATE: return "PoCGenerate";
    case GD_PHASE_POC_GENERATE_WIND_DOWN: return "PoCGenerateWindDown";
    case GD_PHASE_POC_VALIDATE: return "PoCValidate";
    case GD_PHASE_POC_VALIDATE_WIND_DOWN: return "PoCValidateWindDown";
    case GD_PHASE_INFERENCE: return "Inference";
    }
    return "Unknown";
}

int64_t gd_epoch_inference_length(const gd_epoch_params *p) {
    /* The phase is Inference from poc_validation_end on (gd_epoch_phase_at),
     * and that is P + stage + delay + validation; the epoch ends at
     * P + epoch_length. */
    return p->epoch_length -
           (p->poc_stage_duration + p->poc_validation_delay + p->poc_validation_duration);
}

uint64_t gd_epoch_effective_index(const gd_epoch *latest, const gd_epoch_params *p,
                                  int64_t height) {
    if (latest->index == 0)
        return 0;
    gd_epoch_stages s;
    gd_epoch_stages_compute(&s, latest, p);
    /* Validators switch in the block at set_new_validators; queries at that
     * height already see the new set. */
    return height >= s.set_new_validators ? latest->index : latest->index - 1;
}
