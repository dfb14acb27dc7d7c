/* The model's shape: a Llama-style decoder described with Hugging Face's
 * LlamaConfig keys, so a config.json from the HF world loads here and ours
 * loads there. Presets cover tests (tiny), benchmarks (small) and a
 * GPT-2-small-sized model (base). */
#ifndef GD_TRAINER_CONFIG_H
#define GD_TRAINER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

typedef struct gd_model_config {
    uint32_t vocab_size;
    uint32_t hidden_size;
    uint32_t intermediate_size;
    uint32_t num_hidden_layers;
    uint32_t num_attention_heads;
    uint32_t num_key_value_heads;
    uint32_t max_position_embeddings;
    double rms_norm_eps;
    double rope_theta;
    bool tie_word_embeddings;
    double initializer_range; /* std of the initial weights */
} gd_model_config;

/* "tiny" (~0.1M parameters, vocabulary 256), "small" (~9.5M, vocabulary
 * 256), "base" (~124M, GPT-2's vocabulary of 50257). */
gd_status gd_model_config_preset(gd_model_config *out, const char *name) GD_MUST_CHECK;

/* The names of the presets, for help texts ("tiny, small, base"). */
const char *gd_model_config_preset_names(void);

/* Reads Hugging Face config.json text. Required: hidden_size,
 * intermediate_size, num_hidden_layers, num_attention_heads, vocab_size.
 * Optional with LlamaConfig's defaults: num_key_value_heads (=heads),
 * max_position_embeddings (2048), rms_norm_eps (1e-6), rope_theta (10000),
 * tie_word_embeddings (false), initializer_range (0.02). Keys that would
 * change the architecture into something this trainer does not implement
 * (hidden_act other than silu, rope_scaling, attention or MLP biases, a
 * head_dim other than hidden/heads, a model_type other than llama) are
 * refused by name; other keys are ignored. The result is validated. */
gd_status gd_model_config_parse_json(gd_model_config *out, const char *text,
                                     size_t len) GD_MUST_CHECK;
gd_status gd_model_config_load(gd_model_config *out, const char *path) GD_MUST_CHECK;

/* Checks the shape is consistent and within limits (heads divide the
 * hidden size, query heads a multiple of key/value heads, an even head
 * dimension, at most 2^40 parameters, ...); the message names the key. */
gd_status gd_model_config_validate(const gd_model_config *c) GD_MUST_CHECK;

/* The config as Hugging Face config.json text (malloc'd, NUL-terminated):
 * LlamaForCausalLM, float32, every key above. NULL if out of memory. */
char *gd_model_config_to_json(const gd_model_config *c);

/* The config's digest, which a run spec names instead of a preset:
 * SHA-256("gd-model-config-v1" || the fields in declaration order, integers
 * as LE32, reals as the LE64 bits of their double, the bool as one byte). */
void gd_model_config_digest(const gd_model_config *c, uint8_t out[32]);

size_t gd_model_head_dim(const gd_model_config *c);

/* Parameter count of the model (tied embeddings counted once). */
uint64_t gd_model_param_count(const gd_model_config *c);

#endif
