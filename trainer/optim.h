/* The inner optimizer's settings and learning-rate schedule: AdamW with a
 * linear warmup and a cosine decay, and global-norm gradient clipping.
 *
 * Everything here that decides bits of the parameters (the learning rate
 * of a step, the bias corrections) uses only exactly rounded IEEE
 * operations, not libm, so every host computes the same values. */
#ifndef GD_TRAINER_OPTIM_H
#define GD_TRAINER_OPTIM_H

#include <stdint.h>

#include "common/status.h"

typedef struct gd_optim_config {
    double lr;               /* peak learning rate */
    double min_lr;           /* where the cosine decay ends */
    uint64_t warmup_steps;   /* linear warmup from lr / warmup_steps to lr */
    uint64_t schedule_steps; /* steps the warmup + cosine schedule spans */
    double beta1, beta2, eps;
    double weight_decay;     /* decoupled; matrices only, not norm weights */
    double grad_clip;        /* largest global L2 norm of the gradient; 0 = off */
} gd_optim_config;

/* lr 1e-3, min_lr 1e-4, no warmup, schedule 1000 steps, betas (0.9, 0.95),
 * eps 1e-8, weight decay 0.1, clipping at 1.0. */
void gd_optim_config_default(gd_optim_config *c);

gd_status gd_optim_config_validate(const gd_optim_config *c) GD_MUST_CHECK;

/* The learning rate of step (0-based): (step + 1) / warmup * lr during the
 * warmup, then min_lr + (lr - min_lr) * (1 + cos(pi * p)) / 2 with p the
 * fraction of the remaining schedule done (min_lr after it ends). */
double gd_optim_lr_at(const gd_optim_config *c, uint64_t step);

/* 1 - beta^t by repeated squaring (t >= 1): AdamW's bias correction. */
double gd_optim_bias_correction(double beta, uint64_t t);

/* cos(pi * p) for p in [0, 1], from a fixed polynomial: bit-identical on
 * every IEEE machine (libm's cos is not). Accurate to a few ulps. */
double gd_cos_pi(double p);

#endif
