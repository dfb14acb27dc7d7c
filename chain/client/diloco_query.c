/* DiLoCo queries: requests, the online queries and the strict decoders
 * (chain/client/diloco_query.h). The checks of each record are in
 * diloco_records.c. */
#include "chain/client/diloco_query.h"

#include <inttypes.h>
#include <string.h>

#include "chain/keys/address.h"
#include "chain/wire/diloco_records.h"
#include "chain/wire/diloco_rules.h"
#include "chain/wire/msg.h"
#include "chain/wire/pb_strict.h"

/* --- requests ------------------------------------------------------------------ */

gd_status gd_diloco_query_params_request(gd_buf *out) {
    Gonka__Diloco__V1__QueryParamsRequest req = GONKA__DILOCO__V1__QUERY_PARAMS_REQUEST__INIT;
    return gd_msg_pack(out, &req.base);
}

gd_status gd_diloco_query_runs_request(gd_buf *out) {
    Gonka__Diloco__V1__QueryRunsRequest req = GONKA__DILOCO__V1__QUERY_RUNS_REQUEST__INIT;
    return gd_msg_pack(out, &req.base);
}

gd_status gd_diloco_query_run_request(gd_buf *out, uint64_t run) {
    Gonka__Diloco__V1__QueryRunRequest req = GONKA__DILOCO__V1__QUERY_RUN_REQUEST__INIT;
    req.run = run;
    return gd_msg_pack(out, &req.base);
}

gd_status gd_diloco_query_round_request(gd_buf *out, uint64_t run, uint64_t round) {
    Gonka__Diloco__V1__QueryRoundRequest req = GONKA__DILOCO__V1__QUERY_ROUND_REQUEST__INIT;
    req.run = run;
    req.round = round;
    return gd_msg_pack(out, &req.base);
}

gd_status gd_diloco_query_rewards_request(gd_buf *out, const char *address) {
    if (gd_address_check_canonical(address) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "rewards query");
    Gonka__Diloco__V1__QueryRewardsRequest req = GONKA__DILOCO__V1__QUERY_REWARDS_REQUEST__INIT;
    req.address = (char *)address;
    return gd_msg_pack(out, &req.base);
}

/* --- decoders ------------------------------------------------------------------- */

/* Unpacks bytes as desc's message, refuses unknown fields and applies
 * check; *out is the message on success. */
static gd_status gd_dq_decode(ProtobufCMessage **out, const ProtobufCMessageDescriptor *desc,
                              gd_status (*check)(const ProtobufCMessage *), const uint8_t *data,
                              size_t len) {
    *out = NULL;
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, len, data);
    if (m == NULL)
        return gd_fail(GD_ERR_PARSE, "DiLoCo answer is not a %s", desc->short_name);
    gd_status s = gd_pb_reject_unknown(m, false);
    if (s == GD_OK && check(m) != GD_OK)
        s = gd_fail_context(GD_ERR_PARSE, "%s", desc->short_name);
    if (s != GD_OK) {
        protobuf_c_message_free_unpacked(m, NULL);
        return s;
    }
    *out = m;
    return GD_OK;
}

static gd_status gd_dq_params_check(const ProtobufCMessage *m) {
    const Gonka__Diloco__V1__QueryParamsResponse *r = (const void *)m;
    if (r->params == NULL)
        return gd_fail(GD_ERR_INVALID, "no params");
    /* An empty authority is a chain where no one may create runs by tx. */
    if (r->params->authority[0] && gd_address_check_canonical(r->params->authority) != GD_OK)
        return gd_fail_context(GD_ERR_INVALID, "authority");
    return GD_OK;
}

static gd_status gd_dq_runs_check(const ProtobufCMessage *m) {
    const Gonka__Diloco__V1__QueryRunsResponse *r = (const void *)m;
    for (size_t i = 0; i < r->n_runs; i++)
        GD_TRY(gd_diloco_run_check(r->runs[i]));
    return GD_OK;
}

static gd_status gd_dq_run_check(const ProtobufCMessage *m) {
    const Gonka__Diloco__V1__QueryRunResponse *r = (const void *)m;
    GD_TRY(gd_diloco_run_check(r->run));
    GD_TRY(gd_diloco_members_check(r->run, r->members, r->n_members));
    GD_TRY(gd_diloco_addresses_check(r->next_sealed, r->n_next_sealed, "next_sealed"));
    if (r->current_round) {
        GD_TRY(gd_diloco_round_check(r->current_round));
        if (r->current_round->run != r->run->id)
            return gd_fail(GD_ERR_INVALID, "current round is of run %" PRIu64,
                           r->current_round->run);
    }
    return GD_OK;
}

static gd_status gd_dq_round_check(const ProtobufCMessage *m) {
    const Gonka__Diloco__V1__QueryRoundResponse *r = (const void *)m;
    GD_TRY(gd_diloco_round_check(r->round));
    for (size_t i = 0; i < r->n_commitments; i++)
        GD_TRY(gd_diloco_commitment_check(r->commitments[i], r->round));
    for (size_t i = 0; i < r->n_availability; i++)
        GD_TRY(gd_diloco_availability_check(r->availability[i]));
    for (size_t i = 0; i < r->n_assignments; i++)
        GD_TRY(gd_diloco_assignment_check(r->assignments[i]));
    for (size_t i = 0; i < r->n_verdicts; i++)
        GD_TRY(gd_diloco_verdict_record_check(r->verdicts[i]));
    for (size_t i = 0; i < r->n_attestations; i++)
        GD_TRY(gd_diloco_attestation_check(r->attestations[i]));
    for (size_t i = 0; i < r->n_randomness; i++)
        GD_TRY(gd_diloco_randomness_record_check(r->randomness[i]));
    if (r->height < 0)
        return gd_fail(GD_ERR_INVALID, "negative height");
    return GD_OK;
}

static gd_status gd_dq_rewards_check(const ProtobufCMessage *m) {
    const Gonka__Diloco__V1__QueryRewardsResponse *r = (const void *)m;
    for (size_t i = 0; i < r->n_amounts; i++)
        GD_TRY(gd_diloco_settle_check(r->amounts[i]));
    return GD_OK;
}

/* The typed decoders: gd_dq_decode with the response's descriptor and check. */
#define GD_DQ_DECODER(name, type, desc, check)                                              \
    gd_status name(type **out, const uint8_t *data, size_t len) {                           \
        ProtobufCMessage *m = NULL;                                                         \
        gd_status s = gd_dq_decode(&m, &desc, check, data, len);                            \
        *out = (type *)m;                                                                   \
        return s;                                                                           \
    }

GD_DQ_DECODER(gd_diloco_query_params_decode, Gonka__Diloco__V1__QueryParamsResponse,
              gonka__diloco__v1__query_params_response__descriptor, gd_dq_params_check)
GD_DQ_DECODER(gd_diloco_query_runs_decode, Gonka__Diloco__V1__QueryRunsResponse,
              gonka__diloco__v1__query_runs_response__descriptor, gd_dq_runs_check)
GD_DQ_DECODER(gd_diloco_query_run_decode, Gonka__Diloco__V1__QueryRunResponse,
              gonka__diloco__v1__query_run_response__descriptor, gd_dq_run_check)
GD_DQ_DECODER(gd_diloco_query_round_decode, Gonka__Diloco__V1__QueryRoundResponse,
              gonka__diloco__v1__query_round_response__descriptor, gd_dq_round_check)
GD_DQ_DECODER(gd_diloco_query_rewards_decode, Gonka__Diloco__V1__QueryRewardsResponse,
              gonka__diloco__v1__query_rewards_response__descriptor, gd_dq_rewards_check)

/* --- online queries --------------------------------------------------------------- */

/* Runs the packed request (freed here) at path and decodes the answer. */
static gd_status gd_dq_run(gd_rpc *rpc, const char *path, gd_buf *req,
                           const ProtobufCMessageDescriptor *desc,
                           gd_status (*check)(const ProtobufCMessage *), ProtobufCMessage **out,
                           gd_query_error *err) {
    gd_abci_query_result res = {0};
    gd_status s = gd_query_abci(rpc, path, req->data, req->len, &res, err);
    gd_buf_free(req);
    if (s == GD_OK)
        s = gd_dq_decode(out, desc, check, res.value.data, res.value.len);
    gd_abci_query_result_free(&res);
    return s;
}

/* Frees m and fails: the answer is not for what was asked. */
static gd_status gd_dq_mismatch(ProtobufCMessage *m, const char *what) {
    protobuf_c_message_free_unpacked(m, NULL);
    return gd_fail(GD_ERR_PARSE, "node answered for another %s", what);
}

gd_status gd_diloco_query_params(gd_rpc *rpc, Gonka__Diloco__V1__QueryParamsResponse **out,
                                 gd_query_error *err) {
    ProtobufCMessage *m = NULL;
    gd_buf req = {0};
    *out = NULL;
    GD_TRY(gd_diloco_query_params_request(&req));
    GD_TRY(gd_dq_run(rpc, GD_DILOCO_QUERY_PARAMS, &req,
                     &gonka__diloco__v1__query_params_response__descriptor, gd_dq_params_check,
                     &m, err));
    *out = (Gonka__Diloco__V1__QueryParamsResponse *)m;
    return GD_OK;
}

gd_status gd_diloco_query_runs(gd_rpc *rpc, Gonka__Diloco__V1__QueryRunsResponse **out,
                               gd_query_error *err) {
    ProtobufCMessage *m = NULL;
    gd_buf req = {0};
    *out = NULL;
    GD_TRY(gd_diloco_query_runs_request(&req));
    GD_TRY(gd_dq_run(rpc, GD_DILOCO_QUERY_RUNS, &req,
                     &gonka__diloco__v1__query_runs_response__descriptor, gd_dq_runs_check, &m,
                     err));
    *out = (Gonka__Diloco__V1__QueryRunsResponse *)m;
    return GD_OK;
}

gd_status gd_diloco_query_run(gd_rpc *rpc, Gonka__Diloco__V1__QueryRunResponse **out,
                              uint64_t run, gd_query_error *err) {
    ProtobufCMessage *m = NULL;
    gd_buf req = {0};
    *out = NULL;
    GD_TRY(gd_diloco_query_run_request(&req, run));
    GD_TRY(gd_dq_run(rpc, GD_DILOCO_QUERY_RUN, &req,
                     &gonka__diloco__v1__query_run_response__descriptor, gd_dq_run_check, &m,
                     err));
    Gonka__Diloco__V1__QueryRunResponse *r = (Gonka__Diloco__V1__QueryRunResponse *)m;
    if (r->run->id != run)
        return gd_dq_mismatch(m, "run");
    *out = r;
    return GD_OK;
}

gd_status gd_diloco_query_round(gd_rpc *rpc, Gonka__Diloco__V1__QueryRoundResponse **out,
                                uint64_t run, uint64_t round, gd_query_error *err) {
    ProtobufCMessage *m = NULL;
    gd_buf req = {0};
    *out = NULL;
    GD_TRY(gd_diloco_query_round_request(&req, run, round));
    GD_TRY(gd_dq_run(rpc, GD_DILOCO_QUERY_ROUND, &req,
                     &gonka__diloco__v1__query_round_response__descriptor, gd_dq_round_check,
                     &m, err));
    Gonka__Diloco__V1__QueryRoundResponse *r = (Gonka__Diloco__V1__QueryRoundResponse *)m;
    if (r->round->run != run || r->round->index != round)
        return gd_dq_mismatch(m, "round");
    *out = r;
    return GD_OK;
}

gd_status gd_diloco_query_rewards(gd_rpc *rpc, Gonka__Diloco__V1__QueryRewardsResponse **out,
                                  const char *address,
                                  gd_query_error *err) {
    ProtobufCMessage *m = NULL;
    gd_buf req = {0};
    *out = NULL;
    GD_TRY(gd_diloco_query_rewards_request(&req, address));
    GD_TRY(gd_dq_run(rpc, GD_DILOCO_QUERY_REWARDS, &req,
                     &gonka__diloco__v1__query_rewards_response__descriptor,
                     gd_dq_rewards_check, &m, err));
    Gonka__Diloco__V1__QueryRewardsResponse *r = (Gonka__Diloco__V1__QueryRewardsResponse *)m;
    for (size_t i = 0; i < r->n_amounts; i++)
        if (strcmp(r->amounts[i]->address, address) != 0)
            return gd_dq_mismatch(m, "address");
    *out = r;
    return GD_OK;
}
