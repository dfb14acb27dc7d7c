/* The DiLoCo module's invariants: the ledger of what the module account
 * must hold (pools, collateral, held bonds, unclaimed rewards), settled
 * tokens backed by accepted commitments, and members' distinct ranks.
 * Genesis checks them too, so that a bad genesis is refused at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/module/bank.h"
#include "chain/module/diloco_internal.h"

typedef struct dl_owed {
    char denom[GD_DENOM_MAX + 1];
    dl_u128 amount;
} dl_owed;

typedef struct dl_ledger {
    dl_owed items[64]; /* one per denom runs pay in (in practice one: ngonka) */
    size_t n;
    gd_status status;
    gd_kv *kv;
    /* The run the last record named: records of one run sit together in
     * key order, so each run is read once per kind, not once per record. */
    uint64_t run_id;
    dl_run *run;
    /* The ranks of run rank_run's members seen so far: member records of
     * one run sit together in key order too. */
    uint64_t rank_run;
    uint32_t *ranks;
    size_t n_ranks, cap_ranks;
} dl_ledger;

static void dl_owe(dl_ledger *l, const char *denom, const char *amount) {
    uint64_t v = 0;
    if (dl_amount(&v, amount) != GD_OK) {
        l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: stored amount '%s' is malformed",
                            amount);
        return;
    }
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].denom, denom) == 0) {
            l->items[i].amount += v;
            return;
        }
    if (l->n == sizeof l->items / sizeof l->items[0]) {
        l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: too many denoms");
        return;
    }
    snprintf(l->items[l->n].denom, sizeof l->items[l->n].denom, "%s", denom);
    l->items[l->n++].amount = v;
}

/* The run a member, bond or settle record names (they name only their
 * run), or NULL with the ledger failed when it does not exist. */
static const dl_run *dl_ledger_run(dl_ledger *l, uint64_t run_id) {
    if (l->run != NULL && l->run_id == run_id)
        return l->run;
    dl_free(l->run);
    l->run = NULL;
    gd_gas_meter unmetered = {0, 0};
    gd_ctx ctx = {.kv = l->kv, .gas = &unmetered, .mode = GD_EXEC_QUERY};
    if (dl_get_run(&ctx, &l->run, run_id) != GD_OK) {
        l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: a record names run %llu, which "
                                          "does not exist",
                            (unsigned long long)run_id);
        return NULL;
    }
    l->run_id = run_id;
    return l->run;
}

static int dl_rank_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* No two members of the run whose ranks were collected share a rank. */
static void dl_ranks_flush(dl_ledger *l) {
    if (l->n_ranks > 1)
        qsort(l->ranks, l->n_ranks, sizeof *l->ranks, dl_rank_cmp);
    for (size_t i = 1; l->status == GD_OK && i < l->n_ranks; i++)
        if (l->ranks[i] == l->ranks[i - 1])
            l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: two members of run %llu have "
                                              "rank %u (each rank names one member's data)",
                                (unsigned long long)l->rank_run, l->ranks[i]);
    l->n_ranks = 0;
}

/* A member's rank: below its run's next_rank, and (dl_ranks_flush) its own. */
static void dl_rank_add(dl_ledger *l, const dl_run *run, const dl_member *m) {
    if (m->rank >= run->next_rank) {
        l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: member %s of run %llu has rank %u, "
                                          "not below the run's next_rank %u",
                            m->address, (unsigned long long)run->id, m->rank, run->next_rank);
        return;
    }
    if (l->n_ranks > 0 && l->rank_run != run->id)
        dl_ranks_flush(l);
    l->rank_run = run->id;
    if (l->n_ranks == l->cap_ranks) {
        size_t cap = l->cap_ranks ? 2 * l->cap_ranks : 64;
        uint32_t *grown = realloc(l->ranks, cap * sizeof *grown);
        if (grown == NULL) {
            l->status = gd_fail(GD_ERR_NOMEM, "invariant diloco: out of memory");
            return;
        }
        l->ranks = grown;
        l->cap_ranks = cap;
    }
    l->ranks[l->n_ranks++] = m->rank;
}

static int dl_ledger_visit(void *arg, const uint8_t *key, size_t key_len, const uint8_t *value,
                           size_t value_len) {
    dl_ledger *l = arg;
    if (key_len < 10)
        return 0;
    uint64_t run_id = dl_get_be64(key + 2);
    if (key[1] == DL_RUN) {
        dl_run *r = gonka__diloco__v1__run__unpack(NULL, value_len, value);
        if (r)
            dl_owe(l, dl_denom(r), r->pool);
        else
            l->status = gd_fail(GD_ERR_PARSE, "invariant diloco: a run does not decode");
        dl_free(r);
    } else if (key[1] == DL_MEMBER) {
        dl_member *m = gonka__diloco__v1__member__unpack(NULL, value_len, value);
        const dl_run *run = m ? dl_ledger_run(l, run_id) : NULL;
        if (run) {
            dl_owe(l, dl_denom(run), m->collateral);
            dl_rank_add(l, run, m);
        }
        dl_free(m);
    } else if (key[1] == DL_VERDICT) {
        dl_verdict *v = gonka__diloco__v1__verdict_record__unpack(NULL, value_len, value);
        const dl_run *run = v && v->bonded ? dl_ledger_run(l, run_id) : NULL;
        if (run)
            dl_owe(l, dl_denom(run), run->spec->fail_bond->amount);
        dl_free(v);
    } else if (key[1] == DL_SETTLE) {
        dl_settle *st = gonka__diloco__v1__settle_amount__unpack(NULL, value_len, value);
        const dl_run *run = st && !st->claimed ? dl_ledger_run(l, run_id) : NULL;
        if (run)
            dl_owe(l, dl_denom(run), st->amount);
        dl_free(st);
    }
    return l->status != GD_OK;
}

/* The module account holds exactly every pool, collateral, held bond and
 * unclaimed settle amount; every settled token amount comes from an
 * accepted commitment; and each run's members have distinct ranks below
 * its next_rank. */
gd_status dl_invariants(gd_app *app, gd_kv *kv) {
    (void)app;
    dl_ledger l = {.n = 0, .status = GD_OK, .kv = kv, .run = NULL, .ranks = NULL};
    const uint8_t prefix[1] = {DL_PREFIX};
    gd_status it = gd_kv_iterate_prefix(kv, prefix, 1, dl_ledger_visit, &l);
    if (it == GD_OK && l.status == GD_OK)
        dl_ranks_flush(&l);
    free(l.ranks);
    dl_free(l.run);
    GD_TRY(it);
    GD_TRY(l.status);
    gd_gas_meter unmetered = {0, 0};
    gd_ctx ctx = {.kv = kv, .gas = &unmetered, .mode = GD_EXEC_QUERY};
    char module[GD_ADDRESS_STR_MAX];
    GD_TRY(dl_module_address(module));
    for (size_t i = 0; i < l.n; i++) {
        gd_u256 have;
        GD_TRY(gd_bank_balance(&ctx, &have, module, l.items[i].denom));
        uint64_t hi = (uint64_t)(l.items[i].amount >> 64), lo = (uint64_t)l.items[i].amount;
        if (have.w[0] != lo || have.w[1] != hi || have.w[2] != 0 || have.w[3] != 0)
            return gd_fail(GD_ERR_PARSE, "invariant diloco: the module account's %s balance "
                                         "is not the sum of pools, collateral, bonds and "
                                         "unclaimed rewards",
                           l.items[i].denom);
    }
    dl_key k;
    dl_key_init(&k, DL_SETTLE);
    dl_list owed;
    GD_TRY(dl_list_prefix(kv, &k, &owed, &gonka__diloco__v1__settle_amount__descriptor));
    gd_status s = GD_OK;
    for (size_t i = 0; s == GD_OK && i < owed.n; i++) {
        const dl_settle *st = owed.items[i];
        if (st->tokens == 0)
            continue;
        dl_key rk;
        dl_key_init(&rk, DL_ROUND);
        dl_key_u64(&rk, st->run);
        dl_list rounds;
        s = dl_list_prefix(kv, &rk, &rounds, &gonka__diloco__v1__round__descriptor);
        bool accepted = false;
        for (size_t j = 0; s == GD_OK && j < rounds.n && !accepted; j++) {
            const dl_round *r = rounds.items[j];
            accepted = r->epoch == st->epoch &&
                       r->phase == GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_DONE &&
                       dl_has_str(r->aggregation_set, r->n_aggregation_set, st->address);
        }
        if (s == GD_OK && !accepted)
            s = gd_fail(GD_ERR_PARSE, "invariant diloco: %s was settled tokens without an "
                                      "accepted commitment",
                        st->address);
        dl_list_free(&rounds);
    }
    dl_list_free(&owed);
    return s;
}
