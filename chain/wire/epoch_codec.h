/* Conversion between Gonka's EpochParams protobuf message and the epoch
 * clock's gd_epoch_params (the fields the clock uses). */
#ifndef GD_CHAIN_WIRE_EPOCH_CODEC_H
#define GD_CHAIN_WIRE_EPOCH_CODEC_H

#include "chain/wire/epoch.h"
#include "inference/inference/params.pb-c.h"

void gd_epoch_params_from_proto(gd_epoch_params *p, const Inference__Inference__EpochParams *ep);
/* Fills ep (initialised here) from p. */
void gd_epoch_params_to_proto(Inference__Inference__EpochParams *ep, const gd_epoch_params *p);

#endif
