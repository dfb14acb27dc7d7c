/* The canonical layout of the model's parameters in one flat buffer.
 *
 * All parameters live in one contiguous allocation (and so do their
 * gradients and the AdamW moments), so a pseudo-gradient, a state hash or an
 * all-reduce is one contiguous operation. The order is fixed and part of
 * the checkpoint and payload formats (docs/trainer.md):
 *
 *   model.embed_tokens.weight                          (vocab, hidden)
 *   for each layer i:
 *     model.layers.{i}.input_layernorm.weight          (hidden)
 *     model.layers.{i}.self_attn.q_proj.weight         (heads*head_dim, hidden)
 *     model.layers.{i}.self_attn.k_proj.weight         (kv_heads*head_dim, hidden)
 *     model.layers.{i}.self_attn.v_proj.weight         (kv_heads*head_dim, hidden)
 *     model.layers.{i}.self_attn.o_proj.weight         (hidden, heads*head_dim)
 *     model.layers.{i}.post_attention_layernorm.weight (hidden)
 *     model.layers.{i}.mlp.gate_proj.weight            (intermediate, hidden)
 *     model.layers.{i}.mlp.up_proj.weight              (intermediate, hidden)
 *     model.layers.{i}.mlp.down_proj.weight            (hidden, intermediate)
 *   model.norm.weight                                  (hidden)
 *   lm_head.weight                                     (vocab, hidden), untied only
 *
 * Names, shapes and the (out_features, in_features) weight layout are
 * Hugging Face's LlamaForCausalLM. Layers are contiguous so a model can be
 * sharded by layer ranges. */
#ifndef GD_TRAINER_LAYOUT_H
#define GD_TRAINER_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "trainer/config.h"

#define GD_PARAM_NAME_MAX 80

typedef struct gd_param_tensor {
    char name[GD_PARAM_NAME_MAX];
    size_t offset; /* elements from the start of the flat buffer */
    size_t numel;
    size_t ndim;   /* 1 or 2 */
    size_t shape[2];
    bool decay;    /* weight decay applies: matrices yes, norm weights no */
} gd_param_tensor;

/* Offsets (in elements) of one layer's tensors. */
typedef struct gd_layer_params {
    size_t input_norm, q, k, v, o, post_norm, gate, up, down;
} gd_layer_params;

typedef struct gd_param_layout {
    gd_model_config config;
    gd_param_tensor *tensors; /* canonical order */
    size_t n_tensors;
    gd_layer_params *layers;  /* num_hidden_layers */
    size_t embed, final_norm;
    size_t lm_head;           /* == embed when tied */
    size_t total;             /* elements */
    uint8_t digest[32];       /* SHA-256 of the layout (names, shapes, order) */
} gd_param_layout;

/* Builds the layout of a validated config. */
gd_status gd_param_layout_build(gd_param_layout *out, const gd_model_config *c) GD_MUST_CHECK;
void gd_param_layout_free(gd_param_layout *layout);

/* The model's units: the ranges a fully sharded trainer gathers one at a
 * time (trainer/train.c). Unit 0 is the embedding, 1..L the layers, L + 1
 * the final norm with the head when it is not tied (a tied head is unit
 * 0's table). Each is the contiguous range [lo, hi) of the flat layout;
 * together they cover it in order. */
size_t gd_param_layout_units(const gd_param_layout *layout);
void gd_param_layout_unit(const gd_param_layout *layout, size_t unit, size_t *lo, size_t *hi);
/* Elements of the largest unit from unit `first` on (a fully sharded
 * rank's window; 1 leaves out a tied table, which has one of its own). */
size_t gd_param_layout_unit_max(const gd_param_layout *layout, size_t first);
/* Elements of the largest part of one unit inside [lo, hi) (a fully
 * sharded rank's inbox for its shard). */
size_t gd_param_layout_slice_max(const gd_param_layout *layout, size_t lo, size_t hi);

const gd_param_tensor *gd_param_layout_find(const gd_param_layout *layout, const char *name);

/* GD_OK when every parameter is finite; else GD_ERR_PARSE naming how many
 * are not and the first tensor holding one (a diverged or damaged model,
 * whose loss would only read as nan). */
gd_status gd_params_check_finite(const gd_param_layout *layout,
                                 const float *params) GD_MUST_CHECK;

#endif
