/* The byte budget of training a model on one host (gonka-diloco plan): what
 * each GPU holds (weights, gradients, AdamW moments, activations, logits,
 * a workspace) and what the host holds (DiLoCo's outer state, the
 * payload, what is offloaded), and what a round leaves on disk for
 * verification, for the trainer's memory settings.
 *
 * The figures are arithmetic, and for every setting a GPU's figure less
 * the workspace is the trainer's own high-water mark on the rank that
 * holds the most, byte for byte (test_plan measures it on device-like
 * test backends over 1, 2, 3 and 8 ranks). */
#ifndef GD_TRAINER_PLAN_H
#define GD_TRAINER_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "trainer/config.h"
#include "trainer/settings.h"

/* The settings that decide the bytes. */
typedef struct gd_plan_settings {
    gd_shard shard;
    gd_precision precision;
    gd_precision moments;
    gd_recompute recompute;
    gd_attention attention;
    gd_offload offload;
} gd_plan_settings;

/* What is planned for. */
typedef struct gd_plan_input {
    gd_model_config model;
    uint32_t gpus;          /* GPUs of the host (ranks) */
    uint64_t gpu_mem;       /* bytes each GPU has */
    uint64_t host_mem;      /* bytes the host has (0: not checked) */
    uint32_t seq;           /* tokens per sequence */
    uint32_t micro_batch;   /* sequences each GPU runs forward and backward at once */
    uint32_t segments;      /* transcript segments of a round (verification's states) */
    uint64_t offload_window;/* offloaded moments staged at a time (0: GD_OFFLOAD_STAGE) */
} gd_plan_input;

typedef struct gd_plan {
    gd_plan_settings settings;
    uint64_t params;        /* parameters of the model */
    /* One GPU. */
    uint64_t weights;       /* fp32 weights, or the shard and the gathered unit's windows */
    uint64_t gradients;     /* gradient, inbox and accumulator, or their shards */
    uint64_t moments;       /* AdamW's two moments (offloaded: their staging window) */
    uint64_t activations;   /* saved for the backward pass, and its scratch */
    uint64_t logits;        /* the (tokens, vocabulary) logits, whole or a chunk */
    uint64_t workspace;     /* CUDA context, cuBLAS workspace, allocator slack */
    uint64_t per_gpu;       /* the sum */
    /* The host. */
    uint64_t outer_state;   /* G and its momentum (fp32); the residual stays in its files */
    uint64_t payload;       /* the round's encoded pseudo-gradient (int8, with scales) */
    uint64_t offloaded;     /* moments kept on the host (offload optimizer) */
    uint64_t host;          /* the sum */
    uint64_t disk_per_round;/* what a round leaves for verification (docs/node.md) */
    bool fits;              /* per_gpu within gpu_mem, host within host_mem (when given) */
} gd_plan;

/* The budget of in with settings s. GD_ERR_INVALID for a config or input
 * that cannot be planned (no GPUs, no sequence, a model that does not
 * validate); GD_ERR_LIMIT when a figure overflows 64 bits. */
/* Bytes a round leaves under state_dir per parameter, the planning figure
 * of `plan`, `node check` and the node's disk watch (one home): its payload
 * at the fp32 codec's bound (4), the S segment starts and the post state
 * (16 each: a state file holds its residual), G (8: params and momentum),
 * one check's fetched segment start (12), and the payloads of `peers`
 * peers fetched in the round (4 each at the bound), which only a node in
 * a round knows. */
double gd_plan_round_disk_per_param(uint32_t segments, uint32_t peers);

gd_status gd_plan_compute(gd_plan *out, const gd_plan_input *in,
                          const gd_plan_settings *s) GD_MUST_CHECK;

/* The settings tried when none are given, least change first: today's
 * trainer, then full sharding, bf16, flash attention, recomputation, bf16
 * moments, and optimizer offload. */
#define GD_PLAN_LADDER 6
extern const gd_plan_settings gd_plan_ladder[GD_PLAN_LADDER];

#endif
