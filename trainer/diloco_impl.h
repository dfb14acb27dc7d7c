/* What the round engine (diloco.c) and the verifier (verify.c) share:
 * loading a worker into the trainer, so a re-execution runs exactly the
 * steps the worker ran. Private to trainer/. */
#ifndef GD_TRAINER_DILOCO_IMPL_H
#define GD_TRAINER_DILOCO_IMPL_H

#include "trainer/diloco.h"

/* Points the trainer at the data stream of `from`'s rank with the run's
 * options and loads its state (step too) a window at a time, each window
 * hashed as it is loaded: out receives the loaded
 * state's training-stage descriptor at round (the residual's root given),
 * so the caller proves what it loaded without reading it again. */
gd_status gd_diloco_load_source(gd_trainer *t, const gd_diloco_config *c, gd_worker_desc *out,
                                uint64_t round, const gd_worker_state_source *from,
                                const uint8_t residual_root[GD_MMR_HASH_LEN]) GD_MUST_CHECK;

#endif
