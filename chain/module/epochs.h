/* Gonka's epoch clock as a chain module (a minimal subset of Gonka's
 * x/inference, under its name "inference"): EpochParams, the latest epoch,
 * a new epoch at each PoC start, and the EpochInfo query. Keys under store
 * prefix 0x03:
 *   0x03 0x01   EpochParams (protobuf)
 *   0x03 0x02   latest Epoch (protobuf) */
#ifndef GD_CHAIN_MODULE_EPOCHS_H
#define GD_CHAIN_MODULE_EPOCHS_H

#include "chain/module/app.h"
#include "chain/wire/epoch.h"

extern const gd_module gd_epochs_module;

/* Localnet's short epochs: 100 blocks with a 10-block PoC generation stage,
 * the first PoC at height 20. */
void gd_epoch_params_localnet(gd_epoch_params *p);

gd_status gd_epochs_get(gd_ctx *ctx, gd_epoch *latest, gd_epoch_params *params) GD_MUST_CHECK;

#endif
