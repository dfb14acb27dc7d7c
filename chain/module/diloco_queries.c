/* The DiLoCo module's gRPC queries, read-only against the committed
 * state: params, runs, one run with its members and current round, one
 * round with every record of it, and an address's settled rewards. */
#include <stdlib.h>
#include <string.h>

#include "chain/module/diloco_internal.h"

static gd_status dl_query_bad(gd_ctx *ctx, const char *what) {
    return gd_ctx_fail(ctx, GD_CODESPACE_SDK, GD_SDK_ERR_INVALID_REQUEST,
                       "rpc error: code = InvalidArgument desc = %s", what);
}

gd_status dl_q_params(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                      gd_buf *resp) {
    (void)app;
    (void)req;
    (void)len;
    dl_params *p = NULL;
    GD_TRY(dl_get_params(ctx, &p));
    Gonka__Diloco__V1__QueryParamsResponse r = GONKA__DILOCO__V1__QUERY_PARAMS_RESPONSE__INIT;
    r.params = p;
    gd_status s = dl_pack(resp, &r);
    dl_free(p);
    return s;
}

gd_status dl_q_runs(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                    gd_buf *resp) {
    (void)app;
    (void)req;
    (void)len;
    dl_key k;
    dl_key_init(&k, DL_RUN);
    dl_list runs;
    GD_TRY(dl_list_prefix(ctx->kv, &k, &runs, &gonka__diloco__v1__run__descriptor));
    Gonka__Diloco__V1__QueryRunsResponse r = GONKA__DILOCO__V1__QUERY_RUNS_RESPONSE__INIT;
    r.runs = (dl_run **)runs.items;
    r.n_runs = runs.n;
    gd_status s = dl_pack(resp, &r);
    dl_list_free(&runs);
    return s;
}

gd_status dl_q_run(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                   gd_buf *resp) {
    (void)app;
    Gonka__Diloco__V1__QueryRunRequest *q =
        gonka__diloco__v1__query_run_request__unpack(NULL, len, req);
    if (q == NULL)
        return dl_query_bad(ctx, "the request does not decode");
    dl_run *run = NULL;
    dl_round *round = NULL;
    dl_list members = {NULL, 0};
    gd_status s = dl_get_run(ctx, &run, q->run);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_RUN, "run %llu does not exist",
                    (unsigned long long)q->run);
    dl_key k;
    dl_key_init(&k, DL_MEMBER);
    dl_key_u64(&k, q->run);
    if (s == GD_OK)
        s = dl_list_prefix(ctx->kv, &k, &members, &gonka__diloco__v1__member__descriptor);
    if (s == GD_OK && run->next_round > 0) {
        s = dl_get_round(ctx, &round, q->run, run->next_round - 1);
        if (s == GD_ERR_NOT_FOUND) /* pruned after its epoch's claims closed */
            s = GD_OK;
    }
    if (s == GD_OK && round != NULL)
        s = dl_load_members(ctx, round);
    /* The next round's seals, which no round record holds before it opens:
     * a member restarted after sending its seal reads here that it landed. */
    dl_list secrets = {NULL, 0};
    if (s == GD_OK) {
        dl_key_init(&k, DL_RANDOM);
        dl_key_u64(&k, q->run);
        dl_key_u64(&k, run->next_round);
        s = dl_list_prefix(ctx->kv, &k, &secrets,
                           &gonka__diloco__v1__randomness_record__descriptor);
    }
    char **sealed = NULL;
    if (s == GD_OK && secrets.n > 0) {
        sealed = calloc(secrets.n, sizeof *sealed);
        if (sealed == NULL)
            s = gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; s == GD_OK && i < secrets.n; i++)
        sealed[i] = ((dl_secret *)secrets.items[i])->member;
    if (s == GD_OK) {
        Gonka__Diloco__V1__QueryRunResponse r = GONKA__DILOCO__V1__QUERY_RUN_RESPONSE__INIT;
        r.run = run;
        r.members = (dl_member **)members.items;
        r.n_members = members.n;
        r.current_round = round;
        r.next_sealed = sealed;
        r.n_next_sealed = secrets.n;
        s = dl_pack(resp, &r);
    }
    free(sealed);
    dl_list_free(&secrets);
    dl_list_free(&members);
    dl_free(round);
    dl_free(run);
    dl_free(q);
    return s;
}

gd_status dl_q_round(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                     gd_buf *resp) {
    (void)app;
    Gonka__Diloco__V1__QueryRoundRequest *q =
        gonka__diloco__v1__query_round_request__unpack(NULL, len, req);
    if (q == NULL)
        return dl_query_bad(ctx, "the request does not decode");
    dl_round *round = NULL;
    gd_status s = dl_get_round(ctx, &round, q->run, q->round);
    if (s == GD_ERR_NOT_FOUND)
        s = dl_fail(ctx, GD_DILOCO_ERR_UNKNOWN_ROUND, "run %llu has no round %llu",
                    (unsigned long long)q->run, (unsigned long long)q->round);
    if (s == GD_OK)
        s = dl_load_members(ctx, round);
    static const uint8_t kinds[] = {DL_COMMIT, DL_REPORT, DL_ASSIGN, DL_VERDICT, DL_ATTEST,
                                    DL_RANDOM};
    const ProtobufCMessageDescriptor *types[] = {
        &gonka__diloco__v1__commitment__descriptor,
        &gonka__diloco__v1__availability_report__descriptor,
        &gonka__diloco__v1__assignment__descriptor,
        &gonka__diloco__v1__verdict_record__descriptor,
        &gonka__diloco__v1__attestation__descriptor,
        &gonka__diloco__v1__randomness_record__descriptor};
    dl_list lists[6] = {{NULL, 0}};
    for (size_t i = 0; s == GD_OK && i < 6; i++) {
        dl_key k;
        dl_key_init(&k, kinds[i]);
        dl_key_u64(&k, q->run);
        dl_key_u64(&k, q->round);
        s = dl_list_prefix(ctx->kv, &k, &lists[i], types[i]);
    }
    if (s == GD_OK) {
        Gonka__Diloco__V1__QueryRoundResponse r = GONKA__DILOCO__V1__QUERY_ROUND_RESPONSE__INIT;
        r.round = round;
        r.commitments = (dl_commitment **)lists[0].items;
        r.n_commitments = lists[0].n;
        r.availability = (dl_report **)lists[1].items;
        r.n_availability = lists[1].n;
        r.assignments = (dl_assignment **)lists[2].items;
        r.n_assignments = lists[2].n;
        r.verdicts = (dl_verdict **)lists[3].items;
        r.n_verdicts = lists[3].n;
        r.attestations = (dl_attestation **)lists[4].items;
        r.n_attestations = lists[4].n;
        r.randomness = (dl_secret **)lists[5].items;
        r.n_randomness = lists[5].n;
        r.height = ctx->height;
        s = dl_pack(resp, &r);
    }
    for (size_t i = 0; i < 6; i++)
        dl_list_free(&lists[i]);
    dl_free(round);
    dl_free(q);
    return s;
}

typedef struct dl_rewards_job {
    const char *address;
    dl_list *out;
    gd_status status;
} dl_rewards_job;

static int dl_rewards_visit(void *arg, const uint8_t *key, size_t key_len, const uint8_t *value,
                            size_t value_len) {
    (void)key;
    (void)key_len;
    dl_rewards_job *job = arg;
    dl_settle *st = gonka__diloco__v1__settle_amount__unpack(NULL, value_len, value);
    if (st == NULL) {
        job->status = gd_fail(GD_ERR_PARSE, "stored SettleAmount does not decode");
        return 1;
    }
    if (strcmp(st->address, job->address) != 0) {
        dl_free(st);
        return 0;
    }
    void **items = realloc(job->out->items, (job->out->n + 1) * sizeof *items);
    if (items == NULL) {
        dl_free(st);
        job->status = gd_fail(GD_ERR_NOMEM, "out of memory");
        return 1;
    }
    job->out->items = items;
    items[job->out->n++] = st;
    return 0;
}

gd_status dl_q_rewards(gd_app *app, gd_ctx *ctx, const uint8_t *req, size_t len,
                       gd_buf *resp) {
    (void)app;
    Gonka__Diloco__V1__QueryRewardsRequest *q =
        gonka__diloco__v1__query_rewards_request__unpack(NULL, len, req);
    if (q == NULL)
        return dl_query_bad(ctx, "the request does not decode");
    gd_status s = GD_OK;
    if (gd_address_check(q->address) != GD_OK)
        s = dl_query_bad(ctx, "invalid address");
    dl_list found = {NULL, 0};
    dl_rewards_job job = {q->address, &found, GD_OK};
    dl_key k;
    dl_key_init(&k, DL_SETTLE);
    if (s == GD_OK)
        s = gd_kv_iterate_prefix(ctx->kv, k.b, k.n, dl_rewards_visit, &job);
    if (s == GD_OK)
        s = job.status;
    if (s == GD_OK) {
        Gonka__Diloco__V1__QueryRewardsResponse r =
            GONKA__DILOCO__V1__QUERY_REWARDS_RESPONSE__INIT;
        r.amounts = (dl_settle **)found.items;
        r.n_amounts = found.n;
        s = dl_pack(resp, &r);
    }
    dl_list_free(&found);
    dl_free(q);
    return s;
}
