/* GET /v1/status and GET /metrics of a node (plugin/member/member.h): read under the
 * node's lock, from the stats its step keeps. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "common/bytes.h"
#include "common/clock.h"
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
    json_object_set_new(o, "membership",
                        json_string(st.membership ? st.membership : "unknown"));
    json_object_set_new(o, "membership_reason",
                        json_string(st.membership ? st.membership_reason
                                                  : "the chain has not been read yet"));
    json_object_set_new(o, "waiting_for",
                        json_pack("{s:s,s:o}", "what",
                                  st.membership ? st.waiting_for : "the chain to answer",
                                  "until_height",
                                  st.waiting_until > 0 ? json_integer(st.waiting_until)
                                                       : json_null()));
    json_object_set_new(o, "height", json_integer(st.height));
    json_object_set_new(o, "inner_step", gd_u64_json(st.inner_step));
    json_object_set_new(o, "loss", isfinite(st.loss) && st.loss > 0 ? json_real(st.loss) : json_null());
    json_object_set_new(o, "tokens_per_s", isfinite(st.tokens_per_s) ? json_real(st.tokens_per_s) : json_null());
    json_object_set_new(o, "commit_headroom",
                        st.have_headroom
                            ? json_pack("{s:o,s:I,s:I,s:b}", "round",
                                        gd_u64_json(st.headroom_round), "blocks_left",
                                        (json_int_t)st.headroom_left, "usable_blocks",
                                        (json_int_t)st.headroom_usable, "thin",
                                        gd_commit_headroom_thin(st.headroom_left,
                                                                st.headroom_usable))
                            : json_null());
    json_t *losses = json_array();
    size_t nl = st.n_losses < GD_MEMBER_LOSSES ? st.n_losses : GD_MEMBER_LOSSES;
    for (size_t i = 0; i < nl; i++) {
        size_t k = (st.n_losses - nl + i) % GD_MEMBER_LOSSES;
        if (isfinite(st.losses[k].loss))
            json_array_append_new(losses, json_pack("{s:o,s:f}", "round",
                                                    gd_u64_json(st.losses[k].round), "loss",
                                                    st.losses[k].loss));
    }
    json_object_set_new(o, "losses", losses);
    json_t *missed = json_object();
    for (size_t d = 0; d < GD_MISSED_DUTIES; d++)
        json_object_set_new(missed, gd_missed_duty_names[d], gd_u64_json(st.missed[d]));
    json_object_set_new(o, "missed_duties", missed);
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

/* One family's HELP and TYPE lines: every family has both (Prometheus's
 * exposition format; dashboards and alert rules read the HELP). */
static void gd_family(FILE *f, const char *name, const char *type, const char *help) {
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
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
    gd_family(f, "gd_build_info", "gauge", "The daemon's version (always 1).");
    fprintf(f, "gd_build_info{version=\"%s\"} 1\n", GD_VERSION);
    gd_family(f, "gd_round", "gauge", "The current round of the run.");
    fprintf(f, "gd_round %" PRIu64 "\n", st.round);
    gd_family(f, "gd_phase", "gauge", "The window the next block falls in (1 train .. 9 attest_open).");
    fprintf(f, "gd_phase{name=\"%s\"} %d\n", gd_window_name(st.window), (int)st.window);
    gd_family(f, "gd_membership", "gauge",
              "1 for the member's standing in the run (GET /v1/status says why), 0 for the others.");
    static const char *const standings[] = {"member", "suspended", "removed", "not_joined"};
    for (size_t i = 0; i < sizeof standings / sizeof standings[0]; i++)
        fprintf(f, "gd_membership{state=\"%s\"} %d\n", standings[i],
                st.membership != NULL && strcmp(st.membership, standings[i]) == 0);
    gd_family(f, "gd_height", "gauge", "The chain's height at the member's last read.");
    fprintf(f, "gd_height %" PRId64 "\n", st.height);
    gd_family(f, "gd_inner_step", "gauge", "Inner steps this worker has trained.");
    fprintf(f, "gd_inner_step %" PRIu64 "\n", st.inner_step);
    gd_family(f, "gd_loss", "gauge", "Mean inner loss of the last trained round (nats).");
    fprintf(f, "gd_loss %.6f\n", isfinite(st.loss) ? st.loss : 0.0);
    gd_family(f, "gd_tokens_per_second", "gauge", "Training throughput of the last round.");
    fprintf(f, "gd_tokens_per_second %.1f\n", isfinite(st.tokens_per_s) ? st.tokens_per_s : 0.0);
    gd_family(f, "gd_bytes_in_total", "counter", "Bytes fetched from peers.");
    fprintf(f, "gd_bytes_in_total %" PRIu64 "\n", st.bytes_in);
    gd_family(f, "gd_bytes_out_total", "counter", "Bytes served to peers.");
    fprintf(f, "gd_bytes_out_total %" PRIu64 "\n", st.bytes_out);
    gd_family(f, "gd_http_refused_total", "counter",
              "Clients the HTTP server turned away, by reason (rate: 429; connections: the cap).");
    fprintf(f, "gd_http_refused_total{reason=\"rate\"} %" PRIu64 "\n", st.http_refused[0]);
    fprintf(f, "gd_http_refused_total{reason=\"connections\"} %" PRIu64 "\n", st.http_refused[1]);
    gd_family(f, "gd_checks_total", "counter", "Checks sealed, by verdict.");
    static const char *const names[4] = {"unspecified", "pass", "fail", "unavailable"};
    for (int v = 1; v < 4; v++)
        fprintf(f, "gd_checks_total{verdict=\"%s\"} %" PRIu64 "\n", names[v], st.checks[v]);
    gd_family(f, "gd_rewards_claimed_ngonka_total", "counter", "Rewards claimed (ngonka).");
    fprintf(f, "gd_rewards_claimed_ngonka_total %" PRIu64 "\n", st.rewards_claimed);
    gd_family(f, "gd_slashed_ngonka_total", "counter", "Collateral slashed (ngonka).");
    fprintf(f, "gd_slashed_ngonka_total %" PRIu64 "\n", st.slashed);
    gd_family(f, "gd_missed_duties_total", "counter",
              "Duties the chain slashed this member for skipping, by duty (from its round records).");
    for (size_t d = 0; d < GD_MISSED_DUTIES; d++)
        fprintf(f, "gd_missed_duties_total{duty=\"%s\"} %" PRIu64 "\n", gd_missed_duty_names[d],
                st.missed[d]);
    if (st.have_headroom) {
        gd_family(f, "gd_commit_headroom_blocks", "gauge",
                  "Blocks of the commit window left after the one this worker's last commitment "
                  "landed in (the chain's record). In the window's last quarter it is logged as "
                  "a warning: a slower round misses the commit and pays the skip slash.");
        fprintf(f, "gd_commit_headroom_blocks %" PRId64 "\n", st.headroom_left);
    }
    gd_family(f, "gd_errors_total", "counter", "Errors logged (GET /v1/status lists the last).");
    fprintf(f, "gd_errors_total %zu\n", st.n_errors);
    /* The disk a round's artifacts go to: an alert fires before it is full. */
    struct statvfs vfs;
    if (statvfs(n->store.root, &vfs) == 0) {
        gd_family(f, "gd_state_dir_free_bytes", "gauge", "Free bytes on state_dir's file system.");
        fprintf(f, "gd_state_dir_free_bytes %.0f\n", (double)vfs.f_bavail * (double)vfs.f_frsize);
        gd_family(f, "gd_state_dir_size_bytes", "gauge", "Size of state_dir's file system.");
        fprintf(f, "gd_state_dir_size_bytes %.0f\n", (double)vfs.f_blocks * (double)vfs.f_frsize);
    }
    if (st.disk_needed > 0) {
        gd_family(f, "gd_state_dir_needed_bytes", "gauge",
                  "What two rounds of the run take in state_dir (a planning figure).");
        fprintf(f, "gd_state_dir_needed_bytes %.0f\n", st.disk_needed);
    }
    if (st.have_tiers) {
        gd_family(f, "gd_state_dir_bytes", "gauge",
                  "What the run's rounds take in state_dir, by tier: temporary (segment starts, "
                  "gone when their round is over) and hot (the last rounds' G, payloads, post "
                  "states).");
        fprintf(f, "gd_state_dir_bytes{tier=\"temporary\"} %" PRIu64 "\n", st.tiers.temporary);
        fprintf(f, "gd_state_dir_bytes{tier=\"hot\"} %" PRIu64 "\n", st.tiers.hot);
        if (n->o.retention.archive_dir != NULL) {
            gd_family(f, "gd_archive_bytes", "gauge",
                      "What the run's archived G take in retention.archive_dir.");
            fprintf(f, "gd_archive_bytes %" PRIu64 "\n", st.tiers.archive);
            struct statvfs avfs;
            if (statvfs(n->o.retention.archive_dir, &avfs) == 0) {
                gd_family(f, "gd_archive_free_bytes", "gauge",
                          "Free bytes on retention.archive_dir's file system.");
                fprintf(f, "gd_archive_free_bytes %.0f\n",
                        (double)avfs.f_bavail * (double)avfs.f_frsize);
            }
        }
    }
    if (st.read_ok_ms > 0) {
        gd_family(f, "gd_chain_read_age_seconds", "gauge",
                  "Seconds since the chain was last read (it grows while the chain is out of reach).");
        fprintf(f, "gd_chain_read_age_seconds %.1f\n", (double)(gd_clock_ms() - st.read_ok_ms) / 1e3);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
