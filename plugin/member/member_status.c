/* GET /v1/status and GET /metrics of a node (plugin/member/member.h): read under the
 * node's lock, from the stats its step keeps. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "plugin/member/member_internal.h"

#ifndef GD_VERSION
#define GD_VERSION "0"
#endif

void gd_member_note_state(gd_member *n, const gd_global_state *g) {
    uint8_t hash[32];
    if (gd_engine_global_hash(&n->engine, g, hash) != GD_OK)
        return;
    pthread_mutex_lock(&n->mu);
    memcpy(n->stats.state_hash, hash, 32);
    n->stats.have_state_hash = true;
    pthread_mutex_unlock(&n->mu);
}

static json_t *gd_u64_json(uint64_t v) { return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v)); }

json_t *gd_member_status_json(gd_member *n) {
    pthread_mutex_lock(&n->mu);
    gd_member_stats st = n->stats;
    pthread_mutex_unlock(&n->mu);
    json_t *roles = json_array(), *committed = json_array(), *errors = json_array();
    if (n->o.roles & GD_ROLE_WORKER)
        json_array_append_new(roles, json_string("worker"));
    if (n->o.roles & GD_ROLE_VALIDATOR)
        json_array_append_new(roles, json_string("validator"));
    size_t nc = st.n_committed < GD_MEMBER_COMMITTED ? st.n_committed : GD_MEMBER_COMMITTED;
    for (size_t i = 0; i < nc; i++)
        json_array_append_new(committed,
                              gd_u64_json(st.committed[(st.n_committed - nc + i) % GD_MEMBER_COMMITTED]));
    size_t ne = st.n_error_slots < GD_MEMBER_ERRORS ? st.n_error_slots : GD_MEMBER_ERRORS;
    for (size_t i = 0; i < ne; i++) {
        size_t k = (st.n_error_slots - ne + i) % GD_MEMBER_ERRORS;
        json_array_append_new(errors, json_pack("{s:I,s:s,s:I}", "time",
                                                (json_int_t)st.errors[k].time, "error",
                                                st.errors[k].text, "repeats",
                                                (json_int_t)st.errors[k].repeats));
    }
    char hash[65] = "";
    if (st.have_state_hash)
        gd_hex_encode(hash, st.state_hash, 32, false);
    json_t *o = json_object();
    json_object_set_new(o, "version", json_string(GD_VERSION));
    json_object_set_new(o, "address", json_string(n->address));
    json_object_set_new(o, "roles", roles);
    json_object_set_new(o, "run", gd_u64_json(n->o.run));
    json_object_set_new(o, "round", st.have_round ? gd_u64_json(st.round) : json_null());
    json_object_set_new(o, "phase", json_string(gd_window_name(st.window)));
    json_object_set_new(o, "height", json_integer(st.height));
    json_object_set_new(o, "inner_step", gd_u64_json(st.inner_step));
    json_object_set_new(o, "loss", isfinite(st.loss) && st.loss > 0 ? json_real(st.loss) : json_null());
    json_object_set_new(o, "tokens_per_s", isfinite(st.tokens_per_s) ? json_real(st.tokens_per_s) : json_null());
    json_object_set_new(o, "state_hash", st.have_state_hash ? json_string(hash) : json_null());
    json_object_set_new(o, "committed", committed);
    json_object_set_new(o, "bytes_in", gd_u64_json(st.bytes_in));
    json_object_set_new(o, "bytes_out", gd_u64_json(st.bytes_out));
    json_object_set_new(o, "checks",
                        json_pack("{s:o,s:o,s:o}", "pass", gd_u64_json(st.checks[GD_VERDICT_PASS]),
                                  "fail", gd_u64_json(st.checks[GD_VERDICT_FAIL]), "unavailable",
                                  gd_u64_json(st.checks[GD_VERDICT_UNAVAILABLE])));
    json_object_set_new(o, "rewards_claimed_ngonka", gd_u64_json(st.rewards_claimed));
    json_object_set_new(o, "slashed_ngonka", gd_u64_json(st.slashed));
    json_object_set_new(o, "errors", errors);
    return o;
}

char *gd_member_metrics_text(gd_member *n) {
    pthread_mutex_lock(&n->mu);
    gd_member_stats st = n->stats;
    pthread_mutex_unlock(&n->mu);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    fprintf(f, "# HELP gd_round The current round of the run.\n# TYPE gd_round gauge\n"
               "gd_round %" PRIu64 "\n", st.round);
    fprintf(f, "# HELP gd_phase The window the next block falls in (1 train .. 9 attest_open).\n"
               "# TYPE gd_phase gauge\ngd_phase{name=\"%s\"} %d\n", gd_window_name(st.window),
            (int)st.window);
    fprintf(f, "# TYPE gd_height gauge\ngd_height %" PRId64 "\n", st.height);
    fprintf(f, "# TYPE gd_inner_step gauge\ngd_inner_step %" PRIu64 "\n", st.inner_step);
    fprintf(f, "# HELP gd_loss Mean inner loss of the last trained round (nats).\n"
               "# TYPE gd_loss gauge\ngd_loss %.6f\n", isfinite(st.loss) ? st.loss : 0.0);
    fprintf(f, "# TYPE gd_tokens_per_second gauge\ngd_tokens_per_second %.1f\n",
            isfinite(st.tokens_per_s) ? st.tokens_per_s : 0.0);
    fprintf(f, "# TYPE gd_bytes_in_total counter\ngd_bytes_in_total %" PRIu64 "\n", st.bytes_in);
    fprintf(f, "# TYPE gd_bytes_out_total counter\ngd_bytes_out_total %" PRIu64 "\n", st.bytes_out);
    fprintf(f, "# HELP gd_checks_total Checks sealed, by verdict.\n# TYPE gd_checks_total counter\n");
    static const char *const names[4] = {"unspecified", "pass", "fail", "unavailable"};
    for (int v = 1; v < 4; v++)
        fprintf(f, "gd_checks_total{verdict=\"%s\"} %" PRIu64 "\n", names[v], st.checks[v]);
    fprintf(f, "# TYPE gd_rewards_claimed_ngonka_total counter\n"
               "gd_rewards_claimed_ngonka_total %" PRIu64 "\n", st.rewards_claimed);
    fprintf(f, "# TYPE gd_slashed_ngonka_total counter\ngd_slashed_ngonka_total %" PRIu64 "\n",
            st.slashed);
    fprintf(f, "# TYPE gd_errors_total counter\ngd_errors_total %zu\n", st.n_errors);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
