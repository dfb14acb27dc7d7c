/* The run configuration: the one place where the chain's RunSpec
 * (chain/wire/diloco_spec.h) and the trainer's types meet. A worker, a
 * validator and the simulation all turn a spec into the engine's
 * configuration through gd_run_config_from_spec, so a simulation is a run
 * without a chain and every host derives the same bits from one spec.
 *
 * The spec's real numbers are canonical decimals (chain/wire/decimal.h); each
 * becomes the double nearest to it (strtod rounds correctly), the same on
 * every host. */
#ifndef GD_PLUGIN_MEMBER_RUN_CONFIG_H
#define GD_PLUGIN_MEMBER_RUN_CONFIG_H

#include <stdint.h>

#include "chain/wire/coin.h"
#include "common/status.h"
#include "gonka/diloco/v1/types.pb-c.h"
#include "trainer/config.h"
#include "trainer/data.h"
#include "trainer/diloco.h"

typedef struct gd_run_config {
    gd_model_config model;
    gd_diloco_config diloco;       /* inner_steps = h_max; workers = 1 (a chain has members) */
    const char *data_spec;         /* the spec's */
    uint8_t data_digest[32];       /* the spec's: gd_data_digest of that data */
    uint8_t initial_state_hash[32];/* the spec's G_0 */
} gd_run_config;

/* The engine configuration of run `run` from its spec. The spec's model is
 * a preset name, or the 64-hex-digit gd_model_config_digest of a config the
 * caller holds (local_model; NULL when it has none). The spec must pass
 * gd_diloco_spec_check; the layout digest must be the model's; the spec
 * digest goes into the configuration. GD_ERR_INVALID naming the field on
 * any mismatch. */
gd_status gd_run_config_from_spec(gd_run_config *out, const Gonka__Diloco__V1__RunSpec *spec,
                                  uint64_t run,
                                  const gd_model_config *local_model) GD_MUST_CHECK;

/* Opens the run's data: data_spec's source, read from the local paths when
 * any are given (gd_data_open_files: the same files kept elsewhere), and
 * refused with GD_ERR_INVALID unless its digest is the spec's data_digest:
 * a host never trains or checks on data other than the run's. The files
 * are digested on pool (NULL: the caller's thread), skipping those memo
 * (NULL: none) knows. */
gd_status gd_run_config_open_data(const gd_run_config *rc, gd_data **out,
                                  const char *const *paths, size_t n_paths, gd_pool *pool,
                                  const gd_data_hash_memo *memo) GD_MUST_CHECK;

/* G_0's state hash for a configuration: the seed's initial weights and a
 * zero outer momentum, as the spec's initial_state_hash must name it. */
gd_status gd_run_config_initial_state(const gd_run_config *rc, uint8_t out[32],
                                      int threads) GD_MUST_CHECK;

/* What a run takes from a member at join, as the module judges it: a
 * hardware class among its hw_classes, and a collateral in min_collateral's
 * denom and at least it. The one home of the rule for the member's own
 * check before a join, node check and node init. */
bool gd_run_spec_lists_class(const Gonka__Diloco__V1__RunSpec *spec, const char *hw_class);
bool gd_run_spec_takes_collateral(const Gonka__Diloco__V1__RunSpec *spec, const gd_coin *collateral);

/* Bytes a round of the run leaves in a member's state_dir, from the
 * model's size and the rule of trainer/plan.h
 * (gd_plan_round_disk_per_param, without peers' payloads: a running node
 * adds those of its round). Two rounds live at once (the one before is
 * pruned when the next opens). A planning figure, not a bound
 * (docs/node.md); 0 when the model is not a preset this build knows. The
 * one home of the spec's figure for node check and the running member's
 * disk watch. */
double gd_run_spec_round_bytes(const Gonka__Diloco__V1__RunSpec *spec, uint64_t run);

#endif
