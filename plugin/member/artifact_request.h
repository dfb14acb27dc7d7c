/* What a peer asks a node for, as one value: the daemon's HTTP paths
 * (docs/node.md, "HTTP") parse into it (plugin/http/http_path.h), the in-process
 * peers of tests and the simulation build it directly, and one function
 * answers it (plugin/artifact_serve.h), so what is served, and when, has one
 * home whatever the transport. */
#ifndef GD_PLUGIN_MEMBER_ARTIFACT_REQUEST_H
#define GD_PLUGIN_MEMBER_ARTIFACT_REQUEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/bytes.h"

typedef enum gd_artifact_req_kind {
    GD_REQ_STATUS = 1,   /* GET /v1/status */
    GD_REQ_METRICS,      /* GET /metrics */
    GD_REQ_PAYLOAD,      /* GET /v1/runs/{run}/rounds/{round}/payload (Range) */
    GD_REQ_PAYLOAD_CHUNK,/* GET /v1/runs/{run}/rounds/{round}/payload/chunks/{i} */
    GD_REQ_TRANSCRIPT,   /* GET /v1/runs/{run}/rounds/{round}/transcript: every leaf's
                          * descriptor, in leaf order */
    GD_REQ_STATE,        /* GET /v1/runs/{run}/rounds/{round}/states/{leaf} (Range) */
    GD_REQ_STATE_CHUNK,  /* GET /v1/runs/{run}/rounds/{round}/states/{leaf}/chunks/{i} */
    GD_REQ_GLOBAL_CHUNK, /* GET /v1/runs/{run}/global/{round}/chunks/{i} */
    GD_REQ_CHECKPOINT,   /* GET /v1/runs/{run}/checkpoint.safetensors (Range) */
    GD_REQ_PAGE,         /* GET /: the status page */
    GD_REQ_PEER_PAYLOAD, /* GET /v1/runs/{run}/rounds/{round}/payloads/{leaf} (Range): the
                          * payload of the round's member number leaf (address order)
                          * as this node holds it, checked against its commitment; an
                          * included payload's other source than its worker */
} gd_artifact_req_kind;

typedef struct gd_artifact_req {
    gd_artifact_req_kind kind;
    uint64_t run, round;
    uint32_t leaf, chunk;
    /* A client's: > 0 asks a file answer's first bytes only (HTTP
     * "Range: bytes=0-(first_bytes - 1)"); a check takes a segment-start
     * state without its residual. Paths never set it. */
    uint64_t first_bytes;
    /* A client's: when the whole transfer must have ended (gd_clock_ms),
     * taken from the window the answer is for; 0: the transport's own
     * cap. Paths never set it. */
    int64_t deadline_ms;
    /* A client's: the transfer stops (GD_ERR_CANCELLED) once *cancel is
     * nonzero; NULL: never. Paths never set it. */
    const atomic_int *cancel;
    /* A client's: the body goes to this file rather than to memory (a
     * check's segment state, 12 bytes a parameter): written beside it and
     * renamed into place whole once the answer is complete, so a transfer
     * given up on never leaves a torn file there, and two transfers to one
     * path never write into each other. The answer's path then names it
     * and its body is empty. NULL: memory. Paths never set it. */
    const char *into;
} gd_artifact_req;

/* An answer: bytes in memory, or a whole file under the node's state_dir
 * (which HTTP may serve in ranges). proof, when set, is the MMR proof of a
 * chunk in proofs/mmr.h wire form (several concatenated for a state or
 * global chunk, in the order the body holds the arrays); HTTP sends it
 * hex-encoded in X-Gd-Proof. */
typedef struct gd_artifact_answer {
    gd_buf body;
    char path[4096];          /* "" unless the answer is a file */
    gd_buf proof;
    const char *content_type; /* a static string */
    /* A test-only adversary's (gd_member_options.drip): HTTP sends a file
     * answer slowly, a burst now and then (plugin/http/http_reply.c). */
    bool drip;
} gd_artifact_answer;

static inline void gd_artifact_answer_free(gd_artifact_answer *a) {
    gd_buf_free(&a->body);
    gd_buf_free(&a->proof);
    a->path[0] = '\0';
}

#endif
