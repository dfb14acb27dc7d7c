/* What a member's files share. They call one another in layers, with no
 * circle: member.c (lifecycle and the step) calls the duties and the
 * helpers; the duties (member_duties.c, the dispatch, calling member_train.c,
 * member_report.c, member_check.c, member_aggregate.c) call the helpers; the
 * helpers (member_chain.c: the exchange with the chain; member_global.c: G
 * on disk and from peers; member_payloads.c: peers' payloads; member_fetch.c:
 * fetching from peers; member_status.c: status and metrics; member_util.c:
 * errors, salts, the engine, the chain's answers) call only helpers below
 * them, and member_serve.c (answering peers) calls none. */
#ifndef GD_PLUGIN_MEMBER_MEMBER_INTERNAL_H
#define GD_PLUGIN_MEMBER_MEMBER_INTERNAL_H

#include <pthread.h>

#include "plugin/member/artifact_store.h"
#include "plugin/member/chain_view.h"
#include "plugin/member/fetch_pool.h"
#include "plugin/member/global_file.h"
#include "plugin/member/start_writer.h"
#include "plugin/member/member.h"
#include "plugin/member/round_driver.h"
#include "plugin/member/round_engine.h"
#include "plugin/member/state_index.h"

#define GD_MEMBER_URL_MAX 512
#define GD_MEMBER_CLASS_MAX 128
#define GD_MEMBER_ERRORS 8
#define GD_MEMBER_ANSWERS 64
#define GD_MEMBER_COMMITTED 16
#define GD_MEMBER_SYNC_RETRY 5 /* blocks between tries of an early state sync */
#define GD_MEMBER_FETCH_MIN_MS 2000 /* the shortest deadline a window's fetch gets */
/* Artifacts fetched from peers are bounded by what the run's model makes. */
#define GD_MEMBER_TRANSCRIPT_MAX ((size_t)(4096 + 2) * 312)
/* A payload is bounded by the size its commitment states, and that by this. */
#define GD_MEMBER_PAYLOAD_MAX ((uint64_t)1 << 40)

/* A check's answer kept for its reveal (recomputed after a restart). */
typedef struct gd_member_answer {
    uint64_t round;
    char target[GD_ADDRESS_STR_MAX];
    uint32_t check;
    bool recheck;
    gd_diloco_verdict verdict;
    uint8_t digest[32];
} gd_member_answer;

/* A payload of the current round this node holds (for reports, checks
 * and the aggregate), checked against its commitment and kept on disk:
 * the node's own in its store, a peer's as the round's peer-L.gdpl. */
typedef struct gd_member_peer_payload {
    char address[GD_ADDRESS_STR_MAX];
    gd_artifact_kind kind; /* GD_ARTIFACT_PAYLOAD or GD_ARTIFACT_PEER_PAYLOAD */
    uint32_t leaf;
    uint64_t len;
    /* The committed payload has a chunk that does not decode (the worker's
     * fault, docs/protocol.md): kept, for the checks that FAIL it, but
     * never reported available nor aggregated. */
    bool malformed;
    char malformed_why[256];
    /* Its sum of squares, made in the pass that checked it (has_norm), so
     * the aggregate reads it once more, not twice. */
    bool has_norm;
    double sum_squares;
} gd_member_peer_payload;

/* A peer whose payload this step's batch could not fetch: its duties in
 * the same step fail with this detail instead of fetching again (they stay
 * due, and the next block tries again). */
typedef struct gd_member_fetch_failure {
    char address[GD_ADDRESS_STR_MAX];
    gd_status status;
    char why[256];
} gd_member_fetch_failure;

/* A peer's payload this node holds in the round it caches, which it also
 * serves (GD_REQ_PEER_PAYLOAD): the peer's member number (its index in the
 * round's members) and the slot of its file (peer-L.gdpl). */
typedef struct gd_member_mirror {
    uint64_t round;
    uint32_t member, slot;
} gd_member_mirror;

/* A member that did not give this node another's payload this round (a
 * mirror is asked once a round). */
typedef struct gd_member_mirror_miss {
    char of[GD_ADDRESS_STR_MAX], from[GD_ADDRESS_STR_MAX];
} gd_member_mirror_miss;

#define GD_MEMBER_LOSSES 64 /* trained rounds whose loss the status lists */

/* The duties the chain can record as missed (GD_DUTY_*), then "other". */
#define GD_MISSED_DUTIES 9
extern const char *const gd_missed_duty_names[GD_MISSED_DUTIES];

/* What the status and metrics show; guarded by gd_member.mu. */
typedef struct gd_member_stats {
    int64_t height;
    uint64_t round;
    bool have_round;
    bool round_over;            /* the round is DONE or VOID */
    gd_window window;
    gd_round_windows windows;
    uint64_t inner_step;
    double loss, tokens_per_s;
    uint64_t bytes_in, bytes_out;
    uint64_t http_refused[2];   /* clients turned away: rate (429), connections (the cap) */
    uint64_t checks[4];         /* by gd_diloco_verdict */
    uint64_t rewards_claimed;   /* ngonka */
    uint64_t slashed;           /* ngonka: bonded at join less what is bonded now */
    uint64_t missed[GD_MISSED_DUTIES]; /* duties the chain recorded as skipped, by name */
    /* Where this node's last commitment landed in its commit window, from
     * the chain's record of its block: the window's blocks left after it,
     * of those after the window's first (gd_commit_headroom_thin). */
    bool have_headroom;
    uint64_t headroom_round;
    int64_t headroom_left, headroom_usable;
    double disk_needed;         /* bytes two rounds of the run take in state_dir (0: unknown) */
    gd_tier_bytes tiers;        /* what the run's rounds take, by tier */
    bool have_tiers;
    int64_t read_ok_ms;         /* when the chain was last read in full (gd_clock_ms; 0: never) */
    uint8_t state_hash[32];     /* of the newest G held */
    bool have_state_hash;
    uint64_t committed[GD_MEMBER_COMMITTED];
    size_t n_committed;
    struct {
        uint64_t round;
        double loss;
    } losses[GD_MEMBER_LOSSES]; /* each trained round's mean loss, the last ones kept */
    size_t n_losses;            /* total recorded */
    struct {
        int64_t time;           /* of the latest repeat */
        char text[200];         /* the latest repeat's */
        uint32_t repeats;       /* times in a row, at any height */
    } errors[GD_MEMBER_ERRORS];
    size_t n_errors;            /* total recorded (every repeat) */
    size_t n_error_slots;       /* slots filled: the last GD_MEMBER_ERRORS are kept */
    /* Why it does what it does (GET /v1/status): its standing in the run,
     * and what it waits for, until which height (0: no height fixes it). */
    const char *membership;     /* member, suspended, removed, not_joined */
    char membership_reason[160];
    char waiting_for[160];
    int64_t waiting_until;
} gd_member_stats;

#define GD_MEMBER_MSGS_MAX 32 /* duties (messages) in one step */
#define GD_MEMBER_RETRY_MAX 64 /* blocks at most between tries of a refused duty */

/* A duty the chain refused when sent alone, and when to try it again. */
typedef struct gd_member_suspect {
    gd_action act;
    uint32_t tries;             /* refusals so far */
    int64_t retry_height;       /* not sent again before this height */
} gd_member_suspect;
#define GD_MEMBER_WAITING 8   /* transactions sent ahead, not yet settled */

struct gd_member {
    gd_member_options o;
    char artifact_url[GD_MEMBER_URL_MAX], hw_class[GD_MEMBER_CLASS_MAX];
    gd_key key;
    uint8_t salt_seed[32];      /* secrets and salts derive from it (and so from the key) */
    char address[GD_ADDRESS_STR_MAX];
    gd_chain_port chain;
    gd_peer_port peers;
    gd_fetch_pool *fetch_pool; /* NULL: fetches run on the step (plugin/member/fetch_pool.h) */
    gd_artifact_store store;
    gd_member_journal journal;

    /* The step's chain answers (valid during a step). */
    gd_chain_answers ans;
    gd_chain_view_buf view;
    bool solo;                  /* a transaction of several duties was refused: one duty
                                 * per step until the one the chain refuses is found */
    gd_member_suspect suspects[GD_MEMBER_MSGS_MAX]; /* duties the chain refused alone: sent
                                                     * only when nothing else is due */
    size_t n_suspects;
    bool rejoined;              /* removed from the run, it joined again (once a start) */
    /* Transactions sent ahead (the chain port's send), settled in this
     * order at the end of the step: the node computes its next duty while
     * they wait for their blocks. */
    struct {
        uint32_t ticket;
        gd_action acts[GD_MEMBER_MSGS_MAX];
        size_t n_acts;
    } waiting[GD_MEMBER_WAITING];
    size_t n_waiting;
    int64_t stepped_height;     /* the height of the last step that did its duties */
    int lock_fd;                /* state_dir's lock (gd_artifact_store_lock), -1: none */
    /* During a step: the messages its duties queued, so that a duty can
     * send them before it computes (gd_member_before_compute). */
    struct {
        gd_any *msgs;
        size_t *n_msgs, *n_sent, *done, *flushes;
        gd_action *sent;
    } outbox;
    bool computed;              /* the current duty trained, re-executed or aggregated */
    const volatile int *stop;   /* a stop asked for (gd_member_stop_on), or NULL */

    bool engine_open;
    gd_engine engine;
    bool have_g;
    uint64_t g_round;           /* g is G_{g_round} */
    gd_global_state g;
    bool aggregated_next;       /* G_{g_round + 1} aggregated and stored, hash next_hash */
    uint8_t next_hash[32];
    bool have_next;             /* ... and held in next (as the memory budget allows) */
    gd_global_state next;
    int64_t prepare_after;      /* no early state sync before this height (a try failed) */
    bool have_w;
    gd_worker_state w;          /* a stand-in trainer's worker state (o.train), for one round */
    bool have_trained;
    gd_trained_round trained;   /* the newest trained round's artifacts (for its commit) */
    gd_engine_job job;          /* a round trained a segment at a time (ahead, with overlap) */
    gd_start_writer starts;     /* its segment-start states, written as training reaches them */
    bool keep_next;             /* the budget keeps G's momentum and an aggregated G' in memory */
    bool keep_params;           /* the budget keeps G's params in memory */
    bool memory_floor_said;     /* a budget under the round's floor was logged */
    bool memory_planned;        /* the plan above was made (and logged) once */
    bool reread;                /* a duty read the chain again: the step ends after it */
    int64_t read_ms;            /* when the chain was last read (monotonic ms) */
    int64_t pace_height, pace_ms; /* the height last seen to change, and when */
    double block_ms;            /* the chain's pace: milliseconds per block (0: not seen yet) */
    bool chain_down;            /* the last read of the chain failed */
    bool missed_started;        /* missed_upto is set (at the first read) */
    uint64_t missed_upto;       /* the first round whose missed duties are not counted yet */
    double round_bytes;         /* what a round of the run leaves in state_dir (0: not known) */
    bool disk_short;            /* state_dir had no room for two rounds at the last read */
    uint64_t disk_warned_round; /* the round it last said so in */
    bool have_older;
    gd_global_state older;      /* a G before the node's own (an overlapped start's G_{r-1}) */
    uint8_t older_hash[32];     /* its state hash */
    /* The G file this node wrote last (G_0, a state sync, an aggregate's
     * G'), as it hashed it: opening that file again needs no pass over it. */
    gd_global_leaves written;

    uint64_t cache_round;
    gd_member_peer_payload *payloads;
    size_t n_payloads;
    /* The peers whose payloads this round were asked for, in order: peer
     * L's payload goes to the round's peer-L.gdpl. */
    char (*peer_slots)[GD_ADDRESS_STR_MAX];
    uint32_t n_peer_slots;
    gd_member_fetch_failure *fetch_failed; /* this step's batch (gd_member_prefetch) */
    size_t n_fetch_failed;
    gd_member_mirror_miss *mirror_misses; /* this round's (gd_member_payload_mirrored) */
    size_t n_mirror_misses;
    /* The peers' payloads it serves as a mirror: the step appends, the
     * server's threads read; guarded by mirror_mu. */
    pthread_mutex_t mirror_mu;
    gd_member_mirror *mirrors;
    size_t n_mirrors;
    gd_member_answer answers[GD_MEMBER_ANSWERS];
    size_t n_answers;

    pthread_mutex_t mu;         /* guards stats (peers' threads read them) */
    gd_member_stats stats;
    /* The state files whose chunks peers ask for: G (state sync) and
     * worker states (checks), each indexed once; guarded by serve_mu. */
    pthread_mutex_t serve_mu;
    gd_state_index_cache served;
    /* The chain's head as the server's threads last asked it (the chain
     * port's head), when the step's read was stale; guarded by head_mu. */
    pthread_mutex_t head_mu;
    int64_t head_height, head_ms;
};

/* The current round as the step's chain answers show it, or NULL. */
static inline const Gonka__Diloco__V1__Round *gd_member_round(const gd_member *n) {
    return n->ans.round ? n->ans.round->round : NULL;
}

/* --- member_util.c ------------------------------------------------------------------------- */

/* Records a failed duty: logged, and kept for /v1/status. */
void gd_member_error(gd_member *n, const char *fmt, ...) GD_PRINTF(2, 3);

/* The salt of a sealed answer, or a round's secret (kind GD_SEAL_RANDOMNESS). */
void gd_member_salt(const gd_member *n, uint8_t out[32], gd_diloco_seal_kind kind, uint64_t round,
                  const char *target, uint32_t check);

/* The engine for the run (opened from the spec on first use). */
gd_status gd_member_engine(gd_member *n) GD_MUST_CHECK;

const Gonka__Diloco__V1__Member *gd_member_lookup(const gd_member *n, const char *address);

/* The round's commitment of address in q, or NULL. */
const Gonka__Diloco__V1__Commitment *
gd_commitment_in(const Gonka__Diloco__V1__QueryRoundResponse *q, const char *address);

/* The round's start state hash as the chain records it. */
gd_status gd_start_hash(const gd_member *n, uint8_t out[32]) GD_MUST_CHECK;

/* Whether a duty whose target does not answer may wait for a later block
 * of its window [start, end) rather than be done without it now. */
bool gd_can_wait(const gd_member *n, int64_t start, int64_t end);

/* --- member_fetch.c ------------------------------------------------------------------------ */

/* Gives a body from gd_member_fetch back to the peer client to fetch into
 * again (the fetch pool's threads, or the step's port; or frees it); b is
 * left empty. _wait: one from gd_member_fetch_wait (the step's port). */
void gd_member_recycle(gd_member *n, gd_buf *b);
void gd_member_recycle_wait(gd_member *n, gd_buf *b);

/* When a fetch for the current window's duties must have ended
 * (gd_clock_ms): the blocks left in the window, less one for the answer to
 * land, at the chain's observed pace; 0 outside a live round or before the
 * pace is known (the transport's own cap applies). */
int64_t gd_member_fetch_deadline(const gd_member *n);

/* A fetch from a member's artifact URL, counted in bytes_in, ending by
 * req's deadline or else the current window's. With a fetch pool (a peer
 * port that opens others: HTTP) it runs on the pool's threads: the first
 * call queues it and every call says GD_ERR_PENDING until it is done, and
 * a duty that gets GD_ERR_PENDING tries again at a later step, so no peer
 * holds the step. Without one (the in-process ports of tests), it runs
 * here, as before. */
gd_status gd_member_fetch(gd_member *n, gd_artifact_answer *out, const char *address,
                        const gd_artifact_req *req, size_t max_len) GD_MUST_CHECK;
/* GD_OK when gd_member_fetch of the same would not say GD_ERR_PENDING
 * (queuing it if need be): a duty that needs several answers asks for all
 * of them at once and takes them when every one is in. */
gd_status gd_member_fetch_ready(gd_member *n, const char *address, const gd_artifact_req *req,
                                size_t max_len) GD_MUST_CHECK;
/* Forgets what gd_member_fetch_ready queued for the same (nothing
 * without a fetch pool). */
void gd_member_fetch_drop(gd_member *n, const char *address, const gd_artifact_req *req,
                          size_t max_len);
/* The same fetch on the step itself, however long it takes (state sync,
 * which has no window to miss). */
gd_status gd_member_fetch_wait(gd_member *n, gd_artifact_answer *out, const char *address,
                               const gd_artifact_req *req, size_t max_len) GD_MUST_CHECK;
/* One artifact of the target by gd_member_fetch into body (and its proof,
 * for a chunk, into proof; NULL otherwise). */
gd_status gd_fetch_into(gd_member *n, const char *target, const gd_artifact_req *req,
                        size_t max, gd_buf *body, gd_buf *proof) GD_MUST_CHECK;

/* --- member_chain.c ------------------------------------------------------------------------ */

/* Reads the chain into the node's answers and view; updates the stats. */
gd_status gd_member_read(gd_member *n) GD_MUST_CHECK;

/* Whether a commitment with left of the commit window's usable blocks
 * after it came too close: it landed in the window's last quarter. A
 * worker whose training runs that far into the commit window misses it
 * the first round a little slower, and pays the skip slash. */
bool gd_commit_headroom_thin(int64_t left, int64_t usable);

/* --- member_missed.c ----------------------------------------------------------------------- */

/* Logs and counts the duties the chain recorded as skipped by this member
 * in every round that ended since the last call (reading the rounds it
 * needs); a round the chain cannot give now is tried at the next call. */
gd_status gd_member_count_missed(gd_member *n) GD_MUST_CHECK;

/* --- member_memory.c ----------------------------------------------------------------------- */

/* What the memory budget lets a round keep in memory, for the round about
 * to be trained (the start writer's mode, keep_next). */
void gd_member_memory_plan(gd_member *n);

/* --- member_disk.c ------------------------------------------------------------------------- */

/* Checks the room under state_dir against two rounds of the run: a warning
 * (an error entry) once a round while it is short; the need as a gauge. */
void gd_member_watch_disk(gd_member *n);
/* GD_ERR_LIMIT when state_dir's free space cannot hold one round of the
 * run: the round is not started (the train duty stays due). */
gd_status gd_member_disk_room(gd_member *n, uint64_t round) GD_MUST_CHECK;
/* Round `round` opened: the rounds before it leave their tiers (settled,
 * retired, archived) and the tiers are counted again. */
void gd_member_retain(gd_member *n, uint64_t round);
/* A round's files were stored: the tiers are counted again. */
void gd_member_disk_stored(gd_member *n);

/* What the step sends of the duties due (acts, rewritten in place; their
 * number is returned): the duties the chain refused alone set aside. */
size_t gd_member_due(const gd_member *n, gd_action *acts, size_t n_acts);

/* Sends the n_msgs messages of the n_sent duties in sent in one
 * transaction and empties the batch; done counts the duties accepted. */
gd_status gd_member_flush(gd_member *n, gd_any *msgs, size_t *n_msgs, gd_action *sent,
                          size_t *n_sent, size_t *done) GD_MUST_CHECK;

/* Waits for every transaction sent ahead and takes what the chain said of
 * each, in the order sent; done counts the duties accepted. */
gd_status gd_member_settle(gd_member *n, size_t *done) GD_MUST_CHECK;

/* Called by a duty just before it trains, re-executes or aggregates: what
 * the step has queued so far (reports, reveals, answers that needed no
 * work) is sent first, and what this duty produces goes at once after it,
 * so minutes of computing never hold an answer past its window, while
 * answers that needed none (UNAVAILABLE) share one transaction. */
gd_status gd_member_before_compute(gd_member *n) GD_MUST_CHECK;

/* Called by a duty that trains the next round ahead, between segments:
 * reads the chain again (at most every GD_MEMBER_AHEAD_READ_MS, or the
 * options' ahead_read_ms) and says
 * whether anything but that duty (self) is due at a new height, or the
 * chain cannot be read; the duty then returns, staying due, and the step
 * ends after it, so every duty of the current round goes first. */
bool gd_member_others_due(gd_member *n, const gd_action *self);
#define GD_MEMBER_AHEAD_READ_MS 250

/* --- member_status.c ----------------------------------------------------------------------- */

/* Records the newest G's state hash for the status. */
void gd_member_note_state(gd_member *n, const gd_global_state *g);

/* --- member_global.c ----------------------------------------------------------------------- */

/* Makes n->g G_round with the chain's state hash `hash`: from memory, the
 * store, G_0, or synchronised from peers. */
gd_status gd_member_global_at(gd_member *n, uint64_t round, const uint8_t hash[32]) GD_MUST_CHECK;

/* G_round with the chain's hash `hash`, read only: the node's G or the G
 * it aggregated when it is that state, else a copy kept aside (n->older)
 * from the store, G_0 or peers. What an overlapped round starts from
 * (G_{r-1}); *out stays valid until the node's G changes. */
gd_status gd_member_global_view(gd_member *n, const gd_global_state **out, uint64_t round,
                                const uint8_t hash[32]) GD_MUST_CHECK;

/* Once the current round R is DONE, makes G_{R+1} (its hash now on chain)
 * the node's G at once, rather than when R + 1 opens: the node serves it
 * to others' state sync in the gap before R + 1, and a node that lacks it
 * (a late joiner, a node whose G was not the agreed one) synchronises it
 * there instead of in R + 1's train window. A failure is logged and tried
 * again GD_MEMBER_SYNC_RETRY blocks later; only out of memory is returned. */
gd_status gd_member_prepare_global(gd_member *n) GD_MUST_CHECK;
/* Forgets an aggregated G' (in memory or not): G moved on past it. */
void gd_member_drop_next(gd_member *n);
/* G_round from the store, required to have the state hash; g is
 * initialised on success. */
gd_status gd_member_global_read(gd_member *n, uint64_t round, const uint8_t hash[32],
                                gd_global_state *g) GD_MUST_CHECK;

/* --- member_payloads.c --------------------------------------------------------------------- */

/* A fetched answer counted in bytes_in; one asked into a file (req->into)
 * from a port that gave it in memory (the in-process ports of tests) is
 * written there first, so the caller finds it where it asked whatever the
 * port. A file this node cannot write is GD_ERR_IO (its own failure). */
gd_status gd_member_answer_landed(gd_member *n, gd_artifact_answer *a,
                                  const gd_artifact_req *req) GD_MUST_CHECK;

/* The payload `address` committed in the current round (the node's own
 * from its store): fetched once, checked against the commitment, and kept
 * on disk for the round. A peer this block's batch failed to fetch fails
 * with that batch's detail (plugin/member/member_payloads.c). */
gd_status gd_member_payload_held(gd_member *n, const gd_member_peer_payload **out,
                                 const char *address) GD_MUST_CHECK;
/* An included payload: as gd_member_payload_held, and when its worker does
 * not give it to this node, from the other members that hold it
 * (gd_member_payload_mirrored); once its worker failed this node in the
 * round, from them alone. */
gd_status gd_member_payload_included(gd_member *n, const gd_member_peer_payload **out,
                                     const char *address) GD_MUST_CHECK;
/* The payload of `address`, included in the current round, when its worker
 * does not give it to this node (gd_member_payload_held failed): from
 * another member that holds it (every reporter fetched it whole), checked
 * against the commitment like any other and kept the same way. A worker
 * that refuses one member by its address cannot keep that member from
 * aggregating, and so attesting. The members are asked one after another,
 * from a place in their order that this node's address picks (so no one
 * member is everybody's first), each once a round, each with half of what
 * is left of the window; GD_ERR_PENDING while one is asked through the
 * fetch pool. */
gd_status gd_member_payload_mirrored(gd_member *n, const gd_member_peer_payload **out,
                                     const char *address) GD_MUST_CHECK;
/* The slot of the file holding the payload of member number `member` in
 * `round`, when this node serves it as a mirror (the server's threads ask;
 * thread-safe). */
bool gd_member_mirror_slot(gd_member *n, uint32_t *slot, uint64_t round, uint32_t member);
/* The path of a payload held this round (its file under the store). */
gd_status gd_member_payload_path(const gd_member *n, char path[GD_ARTIFACT_PATH_MAX],
                                 const gd_member_peer_payload *held) GD_MUST_CHECK;
/* Fetches at once, in parallel, the payloads this step's duties (acts)
 * will read and the node does not hold yet, where the peer port can
 * (fetch_all); each is checked against its commitment and kept as
 * gd_round_payload would keep it. Failures are kept for this step's
 * duties. Only out of memory is returned. */
gd_status gd_member_prefetch(gd_member *n, const gd_action *acts, size_t n_acts) GD_MUST_CHECK;

/* --- the duties ---------------------------------------------------------------------------- */

/* Does one action into msgs (0 or more messages appended to *n_msgs, at
 * most cap). Returns GD_OK also when the duty could not be done now (a
 * peer unreachable): it stays due; an error status is local
 * (member_duties.c). */
gd_status gd_member_duty(gd_member *n, const gd_action *a, gd_any *msgs, size_t cap,
                       size_t *n_msgs) GD_MUST_CHECK;

/* Each family's duties, which gd_member_duty dispatches to; a duty that
 * builds a message sets *sent once msg holds it.
 * member_train.c: trains round a->round (in its window, or ahead a segment
 * at a time); commits round r. */
gd_status gd_duty_train(gd_member *n, const gd_action *a) GD_MUST_CHECK;
gd_status gd_duty_commit(gd_member *n, uint64_t r, gd_any *msg, bool *sent) GD_MUST_CHECK;
/* member_report.c: reports the availability of a->target's payload. */
gd_status gd_duty_report(gd_member *n, const gd_action *a, gd_any *msg,
                         bool *sent) GD_MUST_CHECK;
/* member_check.c: checks, re-checks and their reveals. */
gd_status gd_duty_answer(gd_member *n, const gd_action *a, gd_any *msg,
                         bool *sent) GD_MUST_CHECK;
/* member_aggregate.c: aggregates round r; seals or reveals its attestation. */
gd_status gd_duty_aggregate(gd_member *n, uint64_t r) GD_MUST_CHECK;
gd_status gd_duty_attest(gd_member *n, const gd_action *a, gd_any *msg,
                         bool *sent) GD_MUST_CHECK;

#endif
