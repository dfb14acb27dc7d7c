/* The trainer's memory settings, by name: how the model is spread over a
 * host's GPUs and in what precision it is held. One home for their names,
 * shared by the trainer, `plan`, the command line and node.yaml.
 *
 * Some change a step's bits and are therefore fields of the run's spec
 * (precision, moments, attention); the others only move bytes (shard,
 * recompute, offload) and are tested not to change a bit. */
#ifndef GD_TRAINER_SETTINGS_H
#define GD_TRAINER_SETTINGS_H

#include "common/status.h"

/* Each rank owns a shard of the optimizer state (ZeRO-1) and holds the
 * whole model, or a shard of everything and gathers a layer at a time
 * (ZeRO-3). */
typedef enum { GD_SHARD_OPTIMIZER, GD_SHARD_FULL } gd_shard;
typedef enum { GD_PRECISION_FP32, GD_PRECISION_BF16 } gd_precision;
typedef enum { GD_RECOMPUTE_NONE, GD_RECOMPUTE_FULL } gd_recompute;
typedef enum { GD_ATTENTION_NAIVE, GD_ATTENTION_FLASH } gd_attention;
typedef enum { GD_OFFLOAD_NONE, GD_OFFLOAD_OPTIMIZER } gd_offload;
/* Offloaded moments reach a rank this many values at a time (a staging
 * window of each moment: 16 MiB each in fp32). */
#define GD_OFFLOAD_STAGE ((size_t)1 << 22)
/* Full sharding's windows each have this many values past their largest
 * unit: where a bf16 gather widens its last codes (trainer/train_full.c). */
#define GD_GATHER_TAIL ((size_t)4096)
/* Full sharding keeps this many unit windows a rank: the unit the ops read
 * and the next, gathered beside them (trainer/train_full.c). */
#define GD_UNIT_SLOTS 2

/* How a host keeps the model on its ranks: the settings that only move
 * bytes, none of which changes a step's bits. Zeroed: the defaults. */
typedef struct gd_memory_settings {
    gd_shard shard;
    gd_recompute recompute;
    gd_offload offload;
} gd_memory_settings;

/* GD_ERR_INVALID for a value out of its enum (from outside the parsers). */
gd_status gd_memory_settings_check(const gd_memory_settings *m) GD_MUST_CHECK;

/* What decides how a model's passes keep their activations
 * (trainer/model_api.h); zeroed: the defaults. */
typedef struct gd_model_settings {
    gd_recompute recompute;
    gd_attention attention; /* flash also takes the cross-entropy in chunks */
    gd_precision precision; /* bf16: see below */
} gd_model_settings;

/* A bf16 run (precision bf16) computes in fp32, as an fp32 run does, and
 * stores in bfloat16: every op reads its weights as the fp32 master
 * weights rounded to bf16, and every activation or activation gradient an
 * op writes is rounded to bf16 as it is stored (kernels/backend.h's
 * gd_backend_bf16_round: nearest even, saturating). What stays fp32: the
 * master weights, the parameter gradients and their sums, per-row
 * statistics (RMSNorm's 1/rms, flash attention's log-sum-exp), the
 * per-token losses and every op's arithmetic. moments bf16 stores AdamW's
 * moments rounded to bf16 after each update (the update itself reads and
 * computes them in fp32). The stored values are bf16's, so keeping them
 * as 16-bit codes (the model's activations, the trainer's moments) or as
 * floats gives the same bits. */

/* The flash path's cross-entropy takes the logits this many token rows at
 * a time, never the whole (tokens, vocabulary) matrix. */
#define GD_MODEL_LOGIT_CHUNK ((size_t)1024)

/* A setting's option name and its two values' names (value 0 first, the
 * default). */
typedef struct gd_setting {
    const char *option;
    const char *names[2];
} gd_setting;

extern const gd_setting gd_setting_shard;     /* shard: optimizer | full */
extern const gd_setting gd_setting_precision; /* precision: fp32 | bf16 */
extern const gd_setting gd_setting_moments;   /* moments: fp32 | bf16 */
extern const gd_setting gd_setting_recompute; /* recompute: none | full */
extern const gd_setting gd_setting_attention; /* attention: naive | flash */
extern const gd_setting gd_setting_offload;   /* offload: none | optimizer */

/* The settings that decide a step's bits, in the order of their run spec
 * keys (each spec key is the setting's option name). */
#define GD_RUN_SETTINGS 3
extern const gd_setting *const gd_run_settings[GD_RUN_SETTINGS];

/* The name of value v (0 or 1; anything else reads "?"). */
const char *gd_setting_name(const gd_setting *s, int v);

/* The value named text into *out; GD_ERR_INVALID naming both choices
 * otherwise. */
gd_status gd_setting_parse(const gd_setting *s, int *out, const char *text) GD_MUST_CHECK;

/* As gd_setting_parse, where absent text (NULL or empty) is the default:
 * a run spec's optional key, a checkpoint's metadata. */
gd_status gd_setting_parse_optional(const gd_setting *s, int *out,
                                    const char *text) GD_MUST_CHECK;

#endif
