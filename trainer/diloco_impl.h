/* What the round engine (diloco.c) and the verifier (verify.c) share:
 * loading a worker into the trainer, so a re-execution runs exactly the
 * steps the worker ran. Private to trainer/. */
#ifndef GD_TRAINER_DILOCO_IMPL_H
#define GD_TRAINER_DILOCO_IMPL_H

#include "trainer/diloco.h"

/* Points the trainer at w's data stream (its rank) with the run's options
 * and loads w's optimizer state with params as the parameters. */
gd_status gd_diloco_load_worker(gd_trainer *t, const gd_diloco_config *c,
                                const gd_worker_state *w, const float *params) GD_MUST_CHECK;

#endif
