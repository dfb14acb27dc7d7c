/* A node: one member of a chain run, as a host runs it. Each step reads
 * what the chain shows through its chain port, asks the round driver
 * (plugin/member/round_driver.h) which duties are due, and does them: trains
 * through the round engine (plugin/member/round_engine.h) and makes the payload,
 * transcript and states durable in its artifact store before it commits,
 * fetches and checks peers' artifacts through its peer port, and sends
 * each duty's message. It also answers peers' requests (gd_member_serve),
 * from other threads, serving nothing before its window.
 *
 * Restart safety: everything a step decides comes from the chain and the
 * journal, secrets and salts are derived from the node's key (so a
 * restarted node reveals what it sealed), and nothing is sent twice: a
 * duty the chain shows done is not returned by the driver, and a duty sent
 * in the last few blocks is not sent again until the chain has had time to
 * show it. */
#ifndef GD_PLUGIN_MEMBER_MEMBER_H
#define GD_PLUGIN_MEMBER_MEMBER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chain/keys/keys.h"
#include "chain/wire/coin.h"
#include "common/status.h"
#include "gonka/diloco/v1/query.pb-c.h"
#include "plugin/member/artifact_tiers.h"
#include "plugin/member/member_ports.h"
#include "plugin/member/round_driver.h"
#include "plugin/member/round_engine.h"

/* The latest height and round a member has seen: when it serves what. */
typedef struct gd_serve_clock {
    int64_t height;
    bool have_round;
    uint64_t round;
    bool round_over;
    gd_round_windows w;
} gd_serve_clock;

/* Requests a member answers 404 although it holds what they ask for, now:
 * a test-only adversary's seam (tests/adversary), never set by the
 * product. */
typedef bool (*gd_member_withhold_fn)(const gd_artifact_req *req, const gd_serve_clock *now);

/* A stand-in for duties, the test-only adversaries' other seam: called
 * before each duty with the node's address, its run and the current
 * round's records on the chain (NULL when there is none). It returns true
 * when it did the duty itself: then *msg goes in the duty's place when it
 * sets *sent, and nothing goes otherwise (the duty stays due). */
typedef bool (*gd_member_duty_fn)(const gd_action *a, const char *address, uint64_t run,
                                  const Gonka__Diloco__V1__QueryRoundResponse *round,
                                  gd_any *msg, bool *sent);

typedef struct gd_member_options {
    uint64_t run;
    unsigned roles;            /* GD_ROLE_* bits */
    bool join;                 /* bond and join when not a member */
    const char *artifact_url;  /* where peers reach this node (recorded at join) */
    const char *hw_class;      /* recorded at join */
    gd_coin collateral;        /* bonded at join */
    const char *state_dir;
    int threads;
    const char *backend;       /* where it trains: cpu, cuda, auto (NULL: cpu) */
    size_t gpus;               /* over how many of its GPUs (0: 1) */
    gd_memory_settings memory; /* how the model is kept on them */
    uint64_t memory_budget;    /* host bytes a round may use beside the trainer's buffers
                                * (0: no limit); plugin/member/member_memory.c */
    gd_retention retention;    /* what a round leaves on disk, and for how long
                                * (hot_rounds 0: 2); plugin/member/artifact_tiers.h */
    const char *const *data_paths; /* local paths of the run's data (none: the spec's); kept
                                    * by the caller while the member lives */
    size_t n_data_paths;
    gd_engine_train_fn train;      /* NULL: gd_engine_train */
    gd_engine_check_fn check;      /* NULL: gd_engine_check */
    gd_member_withhold_fn withhold; /* NULL: everything in its window is served */
    gd_member_withhold_fn drip;     /* NULL: every answer at the link's pace; else those
                                     * it picks are sent a burst now and then */
    gd_member_duty_fn duty;         /* NULL: every duty is the member's own */
    unsigned ahead_read_ms;         /* how often training ahead reads the chain between
                                     * segments (0: GD_MEMBER_AHEAD_READ_MS) */
    uint64_t (*disk_free)(const char *dir); /* a test's seam: the free bytes under dir
                                             * (NULL: statvfs) */
} gd_member_options;

typedef struct gd_member gd_member;

/* Opens the node: its store and journal under state_dir, the key's address.
 * The key is copied (and wiped with the node). */
gd_status gd_member_open(gd_member **out, const gd_member_options *o, const gd_key *key,
                       gd_chain_port chain, gd_peer_port peers) GD_MUST_CHECK;
void gd_member_close(gd_member *n);

/* Sets the memory budget (gd_member_options.memory_budget) from the next
 * round trained on. */
void gd_member_set_memory_budget(gd_member *n, uint64_t bytes);

/* While *stop is non-zero a duty that computes (training a round) stops
 * within one inner step and the step returns GD_ERR_CANCELLED; nothing of
 * the duty is journalled, so a restart does it again. NULL: never. */
void gd_member_stop_on(gd_member *n, const volatile int *stop);

/* One step: reads the chain, does every duty due (*done receives how many),
 * and journals their effects. A duty that fails is logged and recorded in
 * the node's errors; it is due again at the next step while its window
 * lasts. An error status is a local failure (out of memory, the store)
 * or a chain that cannot be read: the caller retries with backoff. */
gd_status gd_member_step(gd_member *n, size_t *done) GD_MUST_CHECK;

/* Reads the chain and updates what the member serves and shows, doing no
 * duty: a host that steps members in turn observes them all first, so that
 * none answers a peer from a block-old clock. */
gd_status gd_member_observe(gd_member *n) GD_MUST_CHECK;

/* Answers a peer's request (thread-safe); on an error *http_status is the
 * status to answer with (404 none, 425 not yet in its window). */
gd_status gd_member_serve(gd_member *n, const gd_artifact_req *req, gd_artifact_answer *out,
                        unsigned *http_status) GD_MUST_CHECK;

/* Counts bytes sent to peers (bytes_out in the status): the HTTP server's
 * count of each response, or gd_member_serve_local's answer. */
void gd_member_count_out(gd_member *n, uint64_t bytes);
/* Counts a client its HTTP server turned away, by reason ("rate" or
 * "connections"; gd_http_refused_total in /metrics). */
void gd_member_count_refused(gd_member *n, const char *reason);

/* The same answer with a file's bytes read into the body (at most max_len,
 * else GD_ERR_LIMIT): what an in-process peer port hands over. */
gd_status gd_member_serve_local(gd_member *n, const gd_artifact_req *req, gd_artifact_answer *out,
                                size_t max_len) GD_MUST_CHECK;

/* GET /v1/status's object and /metrics' text (thread-safe; NULL on OOM). */
json_t *gd_member_status_json(gd_member *n);
char *gd_member_metrics_text(gd_member *n);

const char *gd_member_address(const gd_member *n);
/* The newest G the node holds: G_round and its state hash (false if none). */
bool gd_member_global(gd_member *n, uint64_t *round, uint8_t hash[32]);
/* The node's evaluation loss of that G (NAN if none). */
double gd_member_eval_loss(gd_member *n, size_t batches);

#endif
