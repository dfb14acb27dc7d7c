/* What the demo (plugin/demo/demo_command.c) reads while the run goes on, the way
 * anyone watching a run would: the chain's view over its RPC (the height,
 * the run with its members and current round, a round with its
 * commitments, verdicts and attestations, an address's settle amounts),
 * and each daemon's HTTP server (GET /v1/status, the served checkpoint). */
#ifndef GD_PLUGIN_DEMO_DEMO_WATCH_H
#define GD_PLUGIN_DEMO_DEMO_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "chain/client/rpc.h"
#include "common/status.h"
#include "gonka/diloco/v1/query.pb-c.h"

/* One reading of the chain: the latest height, the run (its members and
 * current round) and that round in full (NULL before the first opens). */
typedef struct gd_demo_chain {
    int64_t height;
    Gonka__Diloco__V1__QueryRunResponse *run;
    Gonka__Diloco__V1__QueryRoundResponse *round;
} gd_demo_chain;

gd_status gd_demo_chain_read(gd_rpc *rpc, gd_demo_chain *out, uint64_t run) GD_MUST_CHECK;
void gd_demo_chain_free(gd_demo_chain *c);

/* The sum of the settle amounts of `run` for address, claimed and not,
 * over every epoch up to last_epoch; *settled says whether any exists. */
typedef struct gd_demo_rewards {
    uint64_t claimed, unclaimed;
    bool settled;
} gd_demo_rewards;
gd_status gd_demo_rewards_read(gd_rpc *rpc, gd_demo_rewards *out, uint64_t run,
                               const char *address, uint64_t last_epoch) GD_MUST_CHECK;

/* An HTTP client for the daemons' servers (loopback, short timeouts). */
typedef struct gd_demo_http gd_demo_http;
gd_status gd_demo_http_open(gd_demo_http **out) GD_MUST_CHECK;
void gd_demo_http_close(gd_demo_http *h);

/* GET base_url/v1/status as JSON (*out: a new reference). */
gd_status gd_demo_http_status(gd_demo_http *h, json_t **out,
                              const char *base_url) GD_MUST_CHECK;
/* GET base_url/v1/runs/RUN/checkpoint.safetensors into the file path. */
gd_status gd_demo_http_checkpoint(gd_demo_http *h, const char *base_url, uint64_t run,
                                  const char *path) GD_MUST_CHECK;

#endif
