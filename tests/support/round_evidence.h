/* A worker's trained round as a validator fetches it, for the tests of the
 * round check (plugin/member/round_engine.h's gd_engine_check): its state files,
 * state chunks with their proofs as a member serves them, the evidence of
 * one (segment, chunk) and the chain's record of its commitment. */
#ifndef GD_TESTS_SUPPORT_ROUND_EVIDENCE_H
#define GD_TESTS_SUPPORT_ROUND_EVIDENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/bytes.h"
#include "plugin/member/round_engine.h"

/* A worker's trained round: its engine, the round, what it made and its
 * state after encoding (the last leaf). */
typedef struct gd_test_trained {
    gd_engine *e;
    uint64_t round;
    const gd_trained_round *t;
    const gd_worker_state *post;
} gd_test_trained;

/* State leaf `leaf` as the worker stores it. */
void gd_test_state_file(const gd_test_trained *tr, gd_buf *out, uint32_t leaf);
/* Chunk `chunk` of state leaf `leaf` and its proof, as a member serves it. */
void gd_test_served_chunk(const gd_test_trained *tr, uint32_t leaf, uint32_t chunk,
                          gd_buf *body, gd_buf *proof);
/* The honest evidence for (segment, chunk) of a round that did not start
 * overlapped, the payload in a file of its own; free it with
 * gd_check_evidence_free. */
void gd_test_evidence(const gd_test_trained *tr, uint32_t segment, uint32_t chunk,
                      gd_check_evidence *ev);
/* t's payload in its file form (what the worker stores and serves). */
void gd_test_payload_file(const gd_trained_round *t, gd_buf *out);
/* Whether two trained rounds made the same payload file, byte for byte. */
bool gd_test_same_payload(const gd_trained_round *a, const gd_trained_round *b);
/* The chain's record of t's commitment by participant (pointing into t). */
void gd_test_commitment(const gd_trained_round *t, const char *participant,
                        Gonka__Diloco__V1__Commitment *c);

#endif
