/* The DiLoCo module's queries (gonka.diloco.v1 Query, paths in
 * chain/wire/diloco_rules.h): packed requests, strict decoding of the answers,
 * the queries themselves over abci_query, and the answers as JSON.
 *
 * The decoders take outside bytes (fuzzed by tests/fuzz/fuzz_diloco_query.c)
 * and refuse, with GD_ERR_PARSE: bytes that are not the response message,
 * unknown fields anywhere, addresses that are not canonical Gonka
 * addresses, hashes that are not 32 bytes (or empty where the record says
 * "not fixed yet"), amounts that are not canonical decimals within 64 bits,
 * enum values the proto does not define, a run spec failing
 * gd_diloco_spec_check, and records inconsistent with the round they are
 * listed under. A decoded response is the protobuf-c message, owned by the
 * caller: free it with protobuf_c_message_free_unpacked(&resp->base, NULL). */
#ifndef GD_CHAIN_CLIENT_DILOCO_QUERY_H
#define GD_CHAIN_CLIENT_DILOCO_QUERY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/client/query.h"
#include "chain/client/rpc.h"
#include "common/bytes.h"
#include "common/status.h"
#include "gonka/diloco/v1/query.pb-c.h"

/* Request messages, packed (replacing out's contents). */
gd_status gd_diloco_query_params_request(gd_buf *out) GD_MUST_CHECK;
gd_status gd_diloco_query_runs_request(gd_buf *out) GD_MUST_CHECK;
gd_status gd_diloco_query_run_request(gd_buf *out, uint64_t run) GD_MUST_CHECK;
gd_status gd_diloco_query_round_request(gd_buf *out, uint64_t run, uint64_t round) GD_MUST_CHECK;
gd_status gd_diloco_query_rewards_request(gd_buf *out, const char *address) GD_MUST_CHECK;

/* Strict response decoders. */
gd_status gd_diloco_query_params_decode(Gonka__Diloco__V1__QueryParamsResponse **out,
                                        const uint8_t *data, size_t len) GD_MUST_CHECK;
gd_status gd_diloco_query_runs_decode(Gonka__Diloco__V1__QueryRunsResponse **out,
                                      const uint8_t *data, size_t len) GD_MUST_CHECK;
gd_status gd_diloco_query_run_decode(Gonka__Diloco__V1__QueryRunResponse **out,
                                     const uint8_t *data, size_t len) GD_MUST_CHECK;
gd_status gd_diloco_query_round_decode(Gonka__Diloco__V1__QueryRoundResponse **out,
                                       const uint8_t *data, size_t len) GD_MUST_CHECK;
gd_status gd_diloco_query_rewards_decode(Gonka__Diloco__V1__QueryRewardsResponse **out,
                                         const uint8_t *data, size_t len) GD_MUST_CHECK;

/* The queries: request, abci_query (errors as gd_query_abci), strict
 * decoding, and a check that the answer is for what was asked (the run,
 * the round, the address). */
gd_status gd_diloco_query_params(gd_rpc *rpc, Gonka__Diloco__V1__QueryParamsResponse **out,
                                 gd_query_error *err) GD_MUST_CHECK;
gd_status gd_diloco_query_runs(gd_rpc *rpc, Gonka__Diloco__V1__QueryRunsResponse **out,
                               gd_query_error *err) GD_MUST_CHECK;
gd_status gd_diloco_query_run(gd_rpc *rpc, Gonka__Diloco__V1__QueryRunResponse **out,
                              uint64_t run,
                              gd_query_error *err) GD_MUST_CHECK;
gd_status gd_diloco_query_round(gd_rpc *rpc, Gonka__Diloco__V1__QueryRoundResponse **out,
                                uint64_t run, uint64_t round, gd_query_error *err) GD_MUST_CHECK;
gd_status gd_diloco_query_rewards(gd_rpc *rpc, Gonka__Diloco__V1__QueryRewardsResponse **out,
                                  const char *address,
                                  gd_query_error *err) GD_MUST_CHECK;

/* The responses as JSON (docs/cli.md has the shapes): keys are the proto
 * field names, bytes lowercase hex, 64-bit integers JSON numbers up to 2^53
 * and decimal strings above, amounts strings, enums their short names, a
 * run's spec in the run-spec file format (chain/wire/diloco_spec.h). NULL when
 * out of memory. Decoded (checked) responses only. */
json_t *gd_diloco_params_json(const Gonka__Diloco__V1__QueryParamsResponse *r);
json_t *gd_diloco_runs_json(const Gonka__Diloco__V1__QueryRunsResponse *r);
json_t *gd_diloco_run_json(const Gonka__Diloco__V1__QueryRunResponse *r);
json_t *gd_diloco_round_json(const Gonka__Diloco__V1__QueryRoundResponse *r);
json_t *gd_diloco_rewards_json(const Gonka__Diloco__V1__QueryRewardsResponse *r);

/* "train", "commit", "reveal", "verify", "open", "dispute", "attest",
 * "done", "void", "dispute_open", "attest_open"; "unspecified" for
 * anything else. */
const char *gd_diloco_phase_name(int phase);
/* "pass", "fail", "unavailable"; "sealed" for 0 (not revealed yet). */
const char *gd_diloco_verdict_name(int verdict);
/* A check's outcome: "pending", "passed", "upheld", "undecided";
 * "unspecified" for anything else. */
const char *gd_diloco_outcome_name(int outcome);

#endif
