/* Learning-rate schedule and AdamW bias corrections (see trainer/optim.h). */
#include "trainer/optim.h"

#include <math.h>

void gd_optim_config_default(gd_optim_config *c) {
    *c = (gd_optim_config){.lr = 1e-3, .min_lr = 1e-4, .warmup_steps = 0,
                           .schedule_steps = 1000, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8,
                           .weight_decay = 0.1, .grad_clip = 1.0};
}

gd_status gd_optim_config_validate(const gd_optim_config *c) {
    if (!(c->lr > 0 && c->lr < 10))
        return gd_fail(GD_ERR_INVALID, "learning rate %g must be in (0, 10)", c->lr);
    if (!(c->min_lr >= 0 && c->min_lr <= c->lr))
        return gd_fail(GD_ERR_INVALID, "minimum learning rate %g must be in [0, lr]", c->min_lr);
    if (!(c->beta1 >= 0 && c->beta1 < 1) || !(c->beta2 >= 0 && c->beta2 < 1))
        return gd_fail(GD_ERR_INVALID, "AdamW betas (%g, %g) must be in [0, 1)", c->beta1,
                       c->beta2);
    if (!(c->eps > 0 && c->eps < 1))
        return gd_fail(GD_ERR_INVALID, "AdamW eps %g must be in (0, 1)", c->eps);
    if (!(c->weight_decay >= 0 && c->weight_decay < 1))
        return gd_fail(GD_ERR_INVALID, "weight decay %g must be in [0, 1)", c->weight_decay);
    if (!(c->grad_clip >= 0 && isfinite(c->grad_clip)))
        return gd_fail(GD_ERR_INVALID, "gradient clipping %g must be >= 0 (0 turns it off)",
                       c->grad_clip);
    if (c->schedule_steps == 0)
        return gd_fail(GD_ERR_INVALID, "the schedule must span at least one step");
    return GD_OK;
}

double gd_cos_pi(double p) {
    if (p <= 0)
        return 1;
    if (p >= 1)
        return -1;
    /* cos(pi p) = -cos(pi (1 - p)): reduce to p <= 1/2, x = pi p <= pi/2,
     * where the Taylor series to x^28 is accurate to well below an ulp. */
    double sign = 1;
    if (p > 0.5) {
        p = 1 - p;
        sign = -1;
    }
    const double pi = 3.141592653589793;
    double x = pi * p, x2 = x * x;
    double term = 1, sum = 1;
    for (int k = 1; k <= 14; k++) {
        term *= -x2 / (double)((2 * k - 1) * (2 * k));
        sum += term;
    }
    return sign * sum;
}

double gd_optim_lr_at(const gd_optim_config *c, uint64_t step) {
    if (step < c->warmup_steps)
        return c->lr * (double)(step + 1) / (double)c->warmup_steps;
    if (c->schedule_steps <= c->warmup_steps)
        return c->lr;
    double span = (double)(c->schedule_steps - c->warmup_steps);
    double p = (double)(step - c->warmup_steps) / span;
    if (p >= 1)
        return c->min_lr;
    return c->min_lr + (c->lr - c->min_lr) * 0.5 * (1 + gd_cos_pi(p));
}

double gd_optim_bias_correction(double beta, uint64_t t) {
    double result = 1, base = beta;
    while (t) {
        if (t & 1)
            result *= base;
        base *= base;
        t >>= 1;
    }
    return 1 - result;
}
