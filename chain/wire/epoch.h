/* Gonka's epoch clock: the stage heights of an epoch and the phase at a
 * height, computed exactly as inference-chain/x/inference/types
 * (epoch_params.go, epoch_context.go) does.
 *
 * From P = poc_start_block_height:
 *   PoC generation wind-down  P + trunc(0.8 * poc_stage_duration)
 *   end of PoC generation  E  P + poc_stage_duration
 *   PoC exchange deadline     E + poc_exchange_duration
 *   PoC validation start   V  E + poc_validation_delay
 *   validation wind-down      V + trunc(0.8 * poc_validation_duration)
 *   end of PoC validation  X  V + poc_validation_duration
 *   set new validators     S  X + set_new_validators_delay
 *   claim money               S + 1
 *   next PoC start         N  P + epoch_length
 *   inference validation cutoff  N - inference_validation_cutoff
 * Epoch 0 runs no PoC: its stage heights are 0 and its next PoC starts at
 * epoch_length - epoch_shift. */
#ifndef GD_CHAIN_WIRE_EPOCH_H
#define GD_CHAIN_WIRE_EPOCH_H

#include <stdint.h>

#include "common/status.h"

typedef struct gd_epoch_params {
    int64_t epoch_length;
    int64_t epoch_multiplier;
    int64_t epoch_shift;
    int64_t default_unit_of_compute_price;
    int64_t poc_stage_duration;
    int64_t poc_exchange_duration;
    int64_t poc_validation_delay;
    int64_t poc_validation_duration;
    int64_t set_new_validators_delay;
    int64_t inference_validation_cutoff;
    uint64_t inference_pruning_epoch_threshold;
} gd_epoch_params;

typedef struct gd_epoch {
    uint64_t index;
    int64_t poc_start_block_height;
} gd_epoch;

typedef struct gd_epoch_stages {
    int64_t poc_start;
    int64_t poc_generation_wind_down;
    int64_t poc_generation_end;
    int64_t poc_exchange_deadline;
    int64_t poc_validation_start;
    int64_t poc_validation_wind_down;
    int64_t poc_validation_end;
    int64_t set_new_validators;
    int64_t claim_money;
    int64_t next_poc_start;
    int64_t inference_validation_cutoff;
} gd_epoch_stages;

typedef enum gd_epoch_phase {
    GD_PHASE_POC_GENERATE,
    GD_PHASE_POC_GENERATE_WIND_DOWN,
    GD_PHASE_POC_VALIDATE,
    GD_PHASE_POC_VALIDATE_WIND_DOWN,
    GD_PHASE_INFERENCE,
} gd_epoch_phase;

/* The largest height the clock computes with: stage heights of an epoch
 * starting here stay inside int64 (gd_epoch_stages_compute clamps beyond
 * it, so a caller takes only heights up to it). */
#define GD_EPOCH_HEIGHT_MAX ((int64_t)1 << 62)

/* Mainnet values (Gonka genesis, validation duration 480 since v0.2.9). */
void gd_epoch_params_mainnet(gd_epoch_params *p);

/* Checks the parameters the way Gonka's EpochParams.Validate does, plus
 * bounds that keep every stage height inside int64. */
gd_status gd_epoch_params_check(const gd_epoch_params *p) GD_MUST_CHECK;

/* Stage heights of epoch e (params must pass gd_epoch_params_check). */
void gd_epoch_stages_compute(gd_epoch_stages *out, const gd_epoch *e, const gd_epoch_params *p);

/* The phase at height within epoch e, as Gonka's GetCurrentPhase. */
gd_epoch_phase gd_epoch_phase_at(const gd_epoch *e, const gd_epoch_params *p, int64_t height);

/* "PoCGenerate", "PoCGenerateWindDown", "PoCValidate",
 * "PoCValidateWindDown" or "Inference" (Gonka's EpochPhase strings). */
const char *gd_epoch_phase_name(gd_epoch_phase phase);

/* The length in blocks of the Inference phase of every epoch after the
 * genesis one: from the end of PoC validation to the next PoC start,
 *   epoch_length - (poc_stage_duration + poc_validation_delay
 *                   + poc_validation_duration),
 * which may be zero or negative for parameters that leave no Inference
 * phase (params must pass gd_epoch_params_check). */
int64_t gd_epoch_inference_length(const gd_epoch_params *p);

/* The epoch whose validators are in power at height: the latest epoch from
 * its set-new-validators height on, the one before it until then. */
uint64_t gd_epoch_effective_index(const gd_epoch *latest, const gd_epoch_params *p,
                                  int64_t height);

/* The epoch clock as a node reports it at a block height (EpochInfo). */
typedef struct gd_epoch_info {
    int64_t block_height;
    gd_epoch epoch;
    gd_epoch_params params;
} gd_epoch_info;

#endif
