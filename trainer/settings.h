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
} gd_model_settings;

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

/* The name of value v (0 or 1; anything else reads "?"). */
const char *gd_setting_name(const gd_setting *s, int v);

/* The value named text into *out; GD_ERR_INVALID naming both choices
 * otherwise. */
gd_status gd_setting_parse(const gd_setting *s, int *out, const char *text) GD_MUST_CHECK;

#endif
