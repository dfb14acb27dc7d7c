/* Denoms in a DiLoCo query's text output (plugin/cli/cli_query_denoms.h). */
#include "plugin/cli/cli_query_denoms.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "chain/client/diloco_query.h"
#include "chain/wire/coin.h"

/* The pool and settle amounts are in the run's reward denom, collateral
 * and the weights made of it in min_collateral's. */
static const char *const gd_dq_reward_keys[] = {"pool", "amount", NULL};
static const char *const gd_dq_collateral_keys[] = {
    "collateral",       "weight",        "total_weight", "active_weight",
    "reporting_weight", "report_weight", NULL};

typedef struct gd_dq_denoms {
    char reward[GD_DENOM_MAX + 1], collateral[GD_DENOM_MAX + 1];
} gd_dq_denoms;

static bool gd_dq_listed(const char *const *keys, const char *key) {
    for (size_t i = 0; keys[i] != NULL; i++)
        if (strcmp(keys[i], key) == 0)
            return true;
    return false;
}

/* The denom of a spec coin ("1000000000ngonka"); the default if absent. */
static void gd_dq_coin_denom(char *out, const json_t *spec, const char *key) {
    const char *coin = json_string_value(json_object_get(spec, key));
    while (coin != NULL && isdigit((unsigned char)*coin))
        coin++;
    snprintf(out, GD_DENOM_MAX + 1, "%s", coin != NULL && *coin ? coin : GD_DENOM_DEFAULT);
}

/* A run's denoms, from its JSON (gd_diloco_run_json's "run"). */
static gd_dq_denoms gd_dq_run_denoms(const json_t *run) {
    gd_dq_denoms d;
    const json_t *spec = json_object_get(run, "spec");
    gd_dq_coin_denom(d.reward, spec, "reward_per_epoch");
    gd_dq_coin_denom(d.collateral, spec, "min_collateral");
    return d;
}

/* Appends the denom to every amount in v (not inside a spec: its coins
 * carry theirs). */
static void gd_dq_denominate(json_t *v, const gd_dq_denoms *d) {
    if (json_is_array(v)) {
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item) gd_dq_denominate(item, d);
        return;
    }
    const char *key;
    json_t *item;
    json_object_foreach(v, key, item) {
        const char *text = json_string_value(item);
        const char *denom = gd_dq_listed(gd_dq_reward_keys, key)       ? d->reward
                            : gd_dq_listed(gd_dq_collateral_keys, key) ? d->collateral
                                                                       : NULL;
        if (text != NULL && denom != NULL && *text && strspn(text, "0123456789") == strlen(text)) {
            char coin[64 + GD_DENOM_MAX];
            snprintf(coin, sizeof coin, "%s%s", text, denom);
            json_string_set(item, coin);
        } else if (strcmp(key, "spec") != 0) {
            gd_dq_denominate(item, d);
        }
    }
}

/* The denoms of run `run`, asked of the node. */
static gd_status gd_dq_fetch_denoms(gd_rpc *rpc, gd_dq_denoms *out, uint64_t run) {
    Gonka__Diloco__V1__QueryRunResponse *r = NULL;
    GD_TRY(gd_diloco_query_run(rpc, &r, run, NULL));
    json_t *j = gd_diloco_run_json(r);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    if (j == NULL)
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    *out = gd_dq_run_denoms(json_object_get(j, "run"));
    json_decref(j);
    return GD_OK;
}

gd_status gd_cli_name_denoms(gd_rpc *rpc, uint64_t run, json_t *j) {
    json_t *runs = json_object_get(j, "runs"), *amounts = json_object_get(j, "amounts");
    size_t i;
    json_t *item;
    if (json_object_get(j, "run") != NULL && json_object_get(j, "members") != NULL) {
        gd_dq_denoms d = gd_dq_run_denoms(json_object_get(j, "run"));
        gd_dq_denominate(j, &d);
    } else if (runs != NULL) {
        json_array_foreach(runs, i, item) {
            gd_dq_denoms d = gd_dq_run_denoms(item);
            gd_dq_denominate(item, &d);
        }
    } else if (amounts != NULL) {
        /* Settle amounts of any runs, each in its run's reward denom. */
        uint64_t have = 0;
        gd_dq_denoms d;
        json_array_foreach(amounts, i, item) {
            uint64_t of = (uint64_t)json_integer_value(json_object_get(item, "run"));
            if (have == 0 || of != have)
                GD_TRY(gd_dq_fetch_denoms(rpc, &d, of));
            have = of;
            gd_dq_denominate(item, &d);
        }
    } else if (json_object_get(j, "round") != NULL) {
        gd_dq_denoms d;
        GD_TRY(gd_dq_fetch_denoms(rpc, &d, run));
        gd_dq_denominate(j, &d);
    }
    return GD_OK;
}
