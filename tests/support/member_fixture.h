/* Nodes (plugin/member/member.h) on a test chain (tests/support/diloco_fixture.h): each
 * node's chain port reads the app's query answers and queues its
 * transactions for the next block; its peer port answers from the other
 * nodes' gd_member_serve, as HTTP would (a node can be taken "down"). Every
 * block: every node steps, then one block holds all their transactions. */
#ifndef GD_TESTS_SUPPORT_MEMBER_FIXTURE_H
#define GD_TESTS_SUPPORT_MEMBER_FIXTURE_H

#include "plugin/member/member.h"
#include "tests/support/diloco_fixture.h"

typedef struct nf_net nf_net;

typedef struct nf_port {
    nf_net *net;
    int who;
} nf_port;

struct nf_net {
    df d;
    int n;                         /* nodes are accounts 1 .. n */
    gd_member *nodes[DF_ACCOUNTS];
    unsigned roles[DF_ACCOUNTS];
    char dirs[DF_ACCOUNTS][512];
    nf_port ports[DF_ACCOUNTS];
    bool down[DF_ACCOUNTS];        /* its artifacts cannot be fetched */
    /* refuses_payload[a][b]: node a answers node b's requests for a's own
     * payload (whole or a chunk) with a refused connection, and everyone
     * else's as usual: a refusal aimed at one peer. */
    bool refuses_payload[DF_ACCOUNTS][DF_ACCOUNTS];
    bool off[DF_ACCOUNTS];         /* not started yet: it does not step */
    bool local_fault[DF_ACCOUNTS]; /* its disk fails: a step may end in a local error */
    size_t step_errors[DF_ACCOUNTS]; /* the local errors its steps ended in */
    bool no_join[DF_ACCOUNTS];     /* opened with join off (as `join: false` in node.yaml) */
    uint64_t (*disk_free[DF_ACCOUNTS])(const char *dir); /* its disk (NULL: the real one) */
    gd_retention retention[DF_ACCOUNTS]; /* node.yaml's retention (zeros: the defaults) */
    /* A slow node: a block passes while it trains each segment (the other
     * nodes, which run beside it, step, then the block), so its first
     * chain read after it trained is a block later; and it reads the chain
     * after every segment it trains ahead. */
    bool slow[DF_ACCOUNTS];
    json_int_t trained_to[DF_ACCOUNTS]; /* its inner step at its last read */
    bool passing;                  /* a slow node's block is being made */
    int64_t stepped_at[DF_ACCOUNTS]; /* the height each node last stepped at */
    bool censor;                   /* blocks hold none of the nodes' transactions */
    const char *data_paths[DF_ACCOUNTS][1]; /* a node's local data path, or NULL: the spec's */
    uint64_t claim_payload_bytes[DF_ACCOUNTS]; /* not 0: the node's commitments claim this
                                                * payload size (rewritten on the way out) */
    size_t payload_fetches[DF_ACCOUNTS];       /* payload requests its peers sent it */
    size_t recycled;                           /* fetched bodies the nodes gave back */
    gd_engine_train_fn train[DF_ACCOUNTS];     /* a node's trainer (NULL: the engine's) */
    gd_engine_check_fn check[DF_ACCOUNTS];     /* a node's checker (NULL: the engine's) */
    gd_member_withhold_fn withhold[DF_ACCOUNTS]; /* what a node refuses to serve */
    gd_member_duty_fn duty[DF_ACCOUNTS];         /* duties a node does its own way */
    /* Not NULL: a transaction of the node holding a message it returns true
     * for is refused at once (code 10, as a submit that waits for inclusion
     * learns of a refusal) and never reaches a block. */
    bool (*refuse[DF_ACCOUNTS])(const nf_net *net, const gd_any *msg);
    uint64_t refused_at_once;      /* transactions refuse turned away */
    df_batch pending;
    size_t duties;                 /* done by all nodes so far */
    uint64_t refused;              /* transactions refused */
};

/* Three workers and two validators, the nodes most node tests play, with
 * knobs they can meet: two checks per commitment, double half the time,
 * one re-checker, classes of four (1 + the two validators of a double
 * check + the re-checker). */
#define NF_NODES 5
extern const unsigned nf_roles[NF_NODES];
void nf_knobs(df_knobs *k);

/* A real run spec (the tiny model's layout digest and initial state hash)
 * with the knobs; the caller decrefs it. */
json_t *nf_spec(const df_knobs *k);

/* The chain with the run (k->spec when the caller set it, else nf_spec's;
 * members none yet) and n nodes with roles[i - 1] (GD_ROLE_* bits) that
 * join by themselves. */
void nf_setup(nf_net *net, df_knobs *k, int n, const unsigned *roles);
void nf_free(nf_net *net);

/* Opens node `who` again (as after a crash: only its state dir remains). */
void nf_restart(nf_net *net, int who);

/* One block: every node steps, then the block with their transactions. */
void nf_block(nf_net *net);
/* The block alone: the transactions queued so far. */
void nf_make_block(nf_net *net);
/* Blocks until the chain's height is `height`. */
void nf_until(nf_net *net, int64_t height);
/* Blocks until round `round` is the run's current one; the run's answer
 * then (the caller frees it with df_qfree). */
df_qrun *nf_until_round(nf_net *net, uint64_t round);
/* The same, and the windows the module recorded for it. */
gd_round_windows nf_until_round_windows(nf_net *net, uint64_t round);
/* The index of the run's current round (0 before the first opens). */
uint64_t nf_current_round(nf_net *net);

#endif
