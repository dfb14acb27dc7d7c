/* A DiLoCo simulation on one machine: W workers run the real round engine
 * (trainer/diloco.h) in turn, their payloads go through the real wire form
 * (serialized, parsed, root-checked, decoded), and a link model turns the
 * measured compute times and the payload sizes into a simulated wall
 * clock, with and without the one-step-delay overlap. Baselines train the
 * same model on the same tokens by synchronous data parallelism (DDP) and
 * with no communication at all (averaged once at the end).
 *
 * Timeline model, per round r: c_r = the slowest worker's compute time
 * (measured seconds / its relative speed); m_r = the exchange: one round
 * trip plus max(bytes up, bytes down) over the link (full duplex).
 *   synchronous: rounds take c_r + m_r one after the other;
 *   overlap:     round r + 1 computes while round r's exchange runs; it may
 *                start once its own previous compute and the exchange of
 *                round r - 1 are done.
 * DDP: every step computes 1/W of the global batch on each worker (the
 * slowest bounds it) and then ring-all-reduces fp32 gradients: 2 (W - 1)
 * latency terms of half a round trip and 2 (W - 1) / W * 4 * params bytes. */
#ifndef GD_TRAINER_SIM_H
#define GD_TRAINER_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "trainer/config.h"
#include "trainer/diloco.h"

/* The range of a worker's relative speed (gd_sim_options.speeds). */
#define GD_SIM_SPEED_MIN 1e-3
#define GD_SIM_SPEED_MAX 1e3

typedef struct gd_sim_options {
    gd_diloco_config diloco;
    gd_model_config model;
    const char *data_spec;
    /* Where every evaluation reads (G each round, the start, both
     * baselines; the entropy floor is its own); NULL: data_spec. */
    const char *eval_data_spec;
    uint32_t rounds;
    /* Steps of synchronous data-parallel training every method starts from
     * (as the DiLoCo paper starts from a pretrained model): G_0 and the
     * AdamW moments after them are shared by DiLoCo and both baselines.
     * The inner schedule is diloco.inner's (sim's command line makes it
     * span warm_start + rounds x H steps). */
    uint32_t warm_start;
    uint32_t eval_batches;  /* evaluation batches for G after every round */
    double link_mbps;       /* 0: an infinitely fast link */
    double rtt_ms;
    const double *speeds;   /* per worker relative compute speed (W values) or NULL (all 1) */
    bool ddp;               /* also run the DDP baseline */
    bool local;             /* also run the no-communication baseline */
    bool verify;            /* a validator re-executes one random segment per worker per round */
    /* If set, every payload is also written there as the file a worker
     * serves: r<round>-<address>.gdpl (round zero-padded to 4 digits).
     * It is created (with its parents) before the first round. */
    const char *payload_dir;
    int threads;
    /* Where the trainers' tensors live and how they are sharded; no
     * backends (zeroed): one rank on the CPU. */
    gd_trainer_host ranks;
    /* If set, called as every phase starts, advances and ends (below). */
    struct gd_sim_phase_watch *watch;
} gd_sim_options;

/* The parts of a simulation, in the order they run. */
typedef enum gd_sim_phase {
    GD_SIM_PHASE_WARM_START, /* units: synchronous steps */
    GD_SIM_PHASE_START_EVAL, /* units: the one evaluation of G_0 */
    GD_SIM_PHASE_ROUNDS,     /* units: W worker rounds and one evaluation per round */
    GD_SIM_PHASE_DDP,        /* units: DDP steps, then its evaluation */
    GD_SIM_PHASE_LOCAL,      /* units: every worker's steps, then the evaluation */
    GD_SIM_PHASE_COUNT
} gd_sim_phase;

/* Where a phase stands: done of total units (done = 0 as it starts, done =
 * total as it ends); round is the round under way in GD_SIM_PHASE_ROUNDS. */
typedef struct gd_sim_phase_progress {
    gd_sim_phase phase;
    uint32_t round;
    uint64_t done, total;
} gd_sim_phase_progress;

/* A long simulation spends minutes in one phase (the warm start, a
 * baseline) without finishing a round: this is how a caller sees it move.
 * fn is called often (every step); throttling is the caller's. */
typedef struct gd_sim_phase_watch {
    void (*fn)(void *ctx, const gd_sim_phase_progress *p);
    void *ctx;
} gd_sim_phase_watch;

typedef struct gd_sim_round_report {
    uint32_t round;
    double inner_loss;        /* mean over workers of their inner steps' losses */
    double eval_loss;         /* of G after this round */
    uint64_t bytes_sent;      /* per worker, this round: its payload */
    uint64_t bytes_received;  /* per worker, this round: the other payloads */
    double wall_seconds;      /* simulated, cumulative, in this run's mode */
    uint32_t clipped;         /* contributions clipped by the aggregation */
    uint32_t verified;        /* segments re-executed this round (all passed) */
    /* Each worker's committed payload root this round, in worker order
     * (W x 32 bytes, owned by the report). */
    uint8_t *payload_roots;
} gd_sim_round_report;

typedef struct gd_sim_report {
    gd_sim_round_report *rounds;
    uint32_t n_rounds;
    uint32_t rounds_capacity;  /* entries allocated (a failed round's may hold roots) */
    uint32_t workers;          /* payload roots per round */
    char (*addresses)[GD_STATE_ADDRESS_MAX + 1]; /* the workers' addresses, in worker order */
    double diloco_eval;
    uint64_t diloco_bytes;     /* per worker over the run, sent + received */
    double diloco_wall;        /* simulated seconds in this run's mode */
    double wall_sync, wall_overlap;           /* the same rounds under both timelines */
    double utilization_sync, utilization_overlap;
    double utilization;        /* of this run's mode */
    bool has_ddp, has_local;
    double ddp_eval, ddp_wall, ddp_utilization;
    uint64_t ddp_bytes;        /* per worker over the run */
    double local_eval;
    double entropy_floor;      /* NAN unless the evaluation data has one */
    double loss_ratio;         /* excess loss over the floor, DiLoCo / DDP (NAN without DDP) */
    double byte_reduction;     /* DDP bytes / DiLoCo bytes (NAN without DDP) */
    uint64_t params;
    uint32_t verified_segments;
    double start_eval;         /* eval loss of G_0 (after the warm start, if any) */
} gd_sim_report;

typedef void (*gd_sim_progress_fn)(void *ctx, const gd_sim_round_report *round);

/* Runs the simulation; progress (may be NULL) is called after each round. A
 * segment that fails re-execution is GD_ERR_INVALID (an honest simulation
 * never produces one). */
gd_status gd_sim_run(const gd_sim_options *o, gd_sim_report *report,
                     gd_sim_progress_fn progress, void *ctx) GD_MUST_CHECK;
void gd_sim_report_free(gd_sim_report *r);

#endif
