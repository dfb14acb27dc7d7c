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

/* The same for a state read a window at a time from `from` (its rank and
 * step too), each window hashed as it is loaded: out receives the loaded
 * state's training-stage descriptor at round (the residual's root given),
 * so the caller proves what it loaded without reading it again. */
gd_status gd_diloco_load_source(gd_trainer *t, const gd_diloco_config *c, gd_worker_desc *out,
                                uint64_t round, const gd_worker_state_source *from,
                                const uint8_t residual_root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;

#endif
