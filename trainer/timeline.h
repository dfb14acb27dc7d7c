/* A model of one DiLoCo round's wall time on one host, without training
 * (gonka-diloco sim --timeline): from rates (an inner step, hashing,
 * writing with fsync, coding, the link, the chain's block time) and sizes
 * (the model's parameters, the codec's payload), when each phase of the
 * round starts and ends, the bytes the host sends and receives, and the
 * share of the round its accelerators spend training.
 *
 * The host is a worker and a validator, as every member is. Its round:
 *
 *   train      H inner steps; the segment starts (leaves 0 .. S - 1, 12
 *              bytes a parameter each) are hashed and written in the
 *              background as they are reached, one after another (the
 *              hash rate is the host's, over all the threads it gives)
 *   seal       the payload encoded, the final state (16 bytes a
 *              parameter) hashed and written, after the last segment
 *              start's write
 *   commit     the commitment lands in the next block
 *   exchange   every peer fetches the payload from the host and the host
 *              fetches every peer's: (W - 1) payloads each way
 *   aggregate  W payloads decoded and the outer step
 *   verify     beside it, the host's segment checks: each downloads a
 *              segment start (12 bytes a parameter) and re-executes K
 *              steps; the host serves as many of its own
 *   settle     the windows after verify at their least (open, dispute,
 *              dispute_open, attest, attest_open: two blocks each)
 *
 * Without overlap: the next round's training waits for this one to
 * settle. Every figure is arithmetic on the rates given. */
#ifndef GD_TRAINER_TIMELINE_H
#define GD_TRAINER_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

typedef struct gd_timeline_input {
    uint64_t params;         /* parameters of the model */
    uint64_t payload_bytes;  /* one worker's payload */
    uint32_t workers;        /* W, at least 1 */
    uint32_t inner_steps;    /* H */
    uint32_t segment_steps;  /* K, dividing H */
    uint32_t checks;         /* segment checks the host runs (and serves) a round */
    double step_s;           /* one inner step, seconds */
    double link_mbps;        /* each host's link, Mbit/s each way */
    double rtt_ms;           /* round trip */
    double disk_mbps;        /* writing with fsync, MB/s (10^6 bytes) */
    double hash_mbps;        /* SHA-256, MB/s */
    double code_mbps;        /* encoding or decoding fp32 values, MB/s of input */
    double block_s;          /* the chain's block time */
} gd_timeline_input;

#define GD_TIMELINE_PHASES 7

typedef struct gd_timeline_phase {
    const char *name; /* "train", "seal", ... (above) */
    double start_s, end_s;
} gd_timeline_phase;

typedef struct gd_timeline {
    gd_timeline_phase phases[GD_TIMELINE_PHASES];
    double round_s;      /* the last phase's end */
    double bytes_up;     /* the host sends a round */
    double bytes_down;   /* and receives */
    double utilization;  /* H steps' time over the round's */
} gd_timeline;

/* The round for in; GD_ERR_INVALID naming the first input out of range
 * (rates must be positive and finite, K must divide H). */
gd_status gd_timeline_compute(gd_timeline *out, const gd_timeline_input *in) GD_MUST_CHECK;

#endif
