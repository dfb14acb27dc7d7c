/* EpochParams protobuf <-> gd_epoch_params. */
#include "chain/wire/epoch_codec.h"

void gd_epoch_params_from_proto(gd_epoch_params *p, const Inference__Inference__EpochParams *ep) {
    *p = (gd_epoch_params){
        .epoch_length = ep->epoch_length,
        .epoch_multiplier = ep->epoch_multiplier,
        .epoch_shift = ep->epoch_shift,
        .default_unit_of_compute_price = ep->default_unit_of_compute_price,
        .poc_stage_duration = ep->poc_stage_duration,
        .poc_exchange_duration = ep->poc_exchange_duration,
        .poc_validation_delay = ep->poc_validation_delay,
        .poc_validation_duration = ep->poc_validation_duration,
        .set_new_validators_delay = ep->set_new_validators_delay,
        .inference_validation_cutoff = ep->inference_validation_cutoff,
        .inference_pruning_epoch_threshold = ep->inference_pruning_epoch_threshold,
    };
}

void gd_epoch_params_to_proto(Inference__Inference__EpochParams *ep, const gd_epoch_params *p) {
    inference__inference__epoch_params__init(ep);
    ep->epoch_length = p->epoch_length;
    ep->epoch_multiplier = p->epoch_multiplier;
    ep->epoch_shift = p->epoch_shift;
    ep->default_unit_of_compute_price = p->default_unit_of_compute_price;
    ep->poc_stage_duration = p->poc_stage_duration;
    ep->poc_exchange_duration = p->poc_exchange_duration;
    ep->poc_validation_delay = p->poc_validation_delay;
    ep->poc_validation_duration = p->poc_validation_duration;
    ep->set_new_validators_delay = p->set_new_validators_delay;
    ep->inference_validation_cutoff = p->inference_validation_cutoff;
    ep->inference_pruning_epoch_threshold = p->inference_pruning_epoch_threshold;
}
