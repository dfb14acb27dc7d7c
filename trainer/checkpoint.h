/* Checkpoints: the model as a Hugging Face-compatible safetensors file, and
 * the optimizer state in a companion file, so training resumes exactly.
 *
 * Model file (PATH): one F32 tensor per parameter, named and shaped as
 * Hugging Face's LlamaForCausalLM (tied models omit lm_head.weight, as
 * save_pretrained does), in the canonical layout order. Metadata:
 *   "format": "pt"                        what HF's loaders expect
 *   "config": the HF config.json text     so the file describes itself
 *   "gonka_diloco.step": the optimizer steps taken
 *   "gonka_diloco.layout_sha256": the layout digest (trainer/layout.h)
 *
 * Optimizer file (PATH with ".safetensors" replaced by
 * ".optim.safetensors"): "adamw.exp_avg" and "adamw.exp_avg_sq", each one
 * flat F32 tensor in the canonical layout order, and metadata with the
 * step, the layout digest and every training option (numbers printed so
 * they read back exactly).
 *
 * Each file is written atomically. The two carry the same step, so a crash
 * between their writes is detected on resume instead of silently mixing
 * states. */
#ifndef GD_TRAINER_CHECKPOINT_H
#define GD_TRAINER_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "trainer/config.h"
#include "trainer/layout.h"
#include "trainer/state.h"
#include "trainer/train.h"

#define GD_CHECKPOINT_PATH_MAX 4096

/* The optimizer companion's path for a model checkpoint path. */
gd_status gd_checkpoint_optim_path(char *out, size_t cap, const char *model_path) GD_MUST_CHECK;

gd_status gd_checkpoint_save_model(const char *path, const gd_param_layout *layout,
                                   const float *params, uint64_t step) GD_MUST_CHECK;
/* The same with the parameters read a window at a time (from G's file,
 * say): the model is never whole in memory. */
gd_status gd_checkpoint_save_model_from(const char *path, const gd_param_layout *layout,
                                        const gd_values_reader *params,
                                        uint64_t step) GD_MUST_CHECK;

/* Reads a model checkpoint: the config from its metadata (or, for files
 * from elsewhere, config.json in the same directory), then every tensor,
 * checked against the layout (names, shapes; F32, F16 or BF16 data, widened
 * to float). *params is malloc'd (layout->total floats); *layout must be
 * freed with gd_param_layout_free. *step is 0 when not recorded. */
gd_status gd_checkpoint_load_model(const char *path, gd_param_layout *layout, float **params,
                                   uint64_t *step) GD_MUST_CHECK;

typedef struct gd_optim_state {
    uint64_t step;
    gd_train_options options;
    char data_spec[1024];
} gd_optim_state;

gd_status gd_checkpoint_save_optim(const char *model_path, const gd_param_layout *layout,
                                   const float *exp_avg, const float *exp_avg_sq,
                                   const gd_optim_state *state) GD_MUST_CHECK;

/* Reads the optimizer companion of model_path into exp_avg and exp_avg_sq
 * (layout->total floats each), checking its layout digest. */
gd_status gd_checkpoint_load_optim(const char *model_path, const gd_param_layout *layout,
                                   float *exp_avg, float *exp_avg_sq,
                                   gd_optim_state *state) GD_MUST_CHECK;

/* The data source recorded with a checkpoint (its optimizer companion's
 * "data", the spec it was trained on) into out. GD_ERR_NOT_FOUND when the
 * companion is missing or records none (checkpoints from elsewhere), with a
 * message naming the file; GD_ERR_LIMIT when the spec does not fit cap. */
gd_status gd_checkpoint_data_spec(char *out, size_t cap, const char *model_path) GD_MUST_CHECK;

/* The training options recorded with a checkpoint (its optimizer
 * companion's metadata; the moments are not read), such as the sequence
 * length it was trained at. GD_ERR_NOT_FOUND when the companion is missing
 * (checkpoints from elsewhere). */
gd_status gd_checkpoint_train_options(gd_train_options *out,
                                      const char *model_path) GD_MUST_CHECK;

#endif
