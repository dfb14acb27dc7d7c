/* Nodes (plugin/member/member.h) play a whole epoch of a run on a test chain with
 * nothing fabricated: three workers and two validators join by themselves,
 * train every round on the tiny model, commit real payloads and
 * transcripts, fetch and prove each other's payloads, re-execute the drawn
 * segments, aggregate exactly the chain's set and attest, then claim.
 * Every round must end DONE, every node's own G must be the agreed state
 * hash, every settle amount the settlement rule's and claimed once, no
 * transaction refused and nobody slashed; a worker restarted from its
 * state directory in the middle of a round sends nothing twice; after a
 * VOID round the next one starts from the unchanged G, also for a node
 * restarted in between. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/file.h"
#include "plugin/member/artifact_store.h"
#include "plugin/member/member_internal.h"
#include "plugin/member/round_driver.h"
#include "tests/support/member_fixture.h"
#include "tests/support/testkit.h"
#include "trainer/data.h"
#include "trainer/state.h"




/* Every DONE round's next state is every node's own G after it. */
static void check_states(nf_net *net, uint64_t round) {
    df_qround *q = df_q_round(&net->d, round);
    CHECK(q->round->phase == PH(DONE));
    CHECK(q->round->n_failed == 0);
    CHECK(q->round->n_aggregation_set == 3);
    CHECK(q->round->next_state_hash.len == 32);
    for (size_t i = 0; i < q->n_assignments; i++)
        CHECK(q->assignments[i]->outcome == OUTCOME(PASSED));
    for (size_t i = 0; i < q->n_attestations; i++)
        CHECK(memcmp(q->attestations[i]->next_state_hash.data, q->round->next_state_hash.data,
                     32) == 0);
    df_qfree(q);
}

static bool exists_at(const char *fmt, ...) GD_PRINTF(1, 2);
static bool exists_at(const char *fmt, ...) {
    char path[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    struct stat st;
    return stat(path, &st) == 0;
}

static double metric(const char *text, const char *name);

/* Round `current` is open: round current - 1 kept its post state but not
 * its segment starts; rounds below the hot tier are gone, node 1's G of
 * each in its archive, node 2 (three hot rounds) still holds current - 2;
 * the tiers are in /metrics. */
static void check_tiers(nf_net *net, uint64_t current, const char *archive) {
    uint64_t prev = current - 1;
    for (int who = 1; who <= 3; who++) { /* the workers */
        CHECK(!exists_at("%s/run-1/round-%llu/state-0.gdws", net->dirs[who],
                         (unsigned long long)prev));
        CHECK(exists_at("%s/run-1/round-%llu/payload.gdpl", net->dirs[who],
                        (unsigned long long)prev));
        /* Peers' payloads were kept on disk for the round, and went when
         * it was over. */
        CHECK(!exists_at("%s/run-1/round-%llu/peer-0.gdpl", net->dirs[who],
                         (unsigned long long)prev));
    }
    CHECK(exists_at("%s/run-1/round-%llu/peer-0.gdpl", net->dirs[1],
                    (unsigned long long)current));
    CHECK(!exists_at("%s/run-1/round-%llu", net->dirs[1], (unsigned long long)(current - 2)));
    CHECK(exists_at("%s/run-1/round-%llu", net->dirs[2], (unsigned long long)(current - 2)));
    CHECK(!exists_at("%s/run-1/round-%llu", net->dirs[2], (unsigned long long)(current - 3)));
    for (uint64_t r = 1; r + 1 < current; r++)
        CHECK(exists_at("%s/run-1/round-%llu/global.gdgs", archive, (unsigned long long)r));
    char *m = gd_member_metrics_text(net->nodes[1]);
    CHECK(metric(m, "gd_state_dir_bytes{tier=\"hot\"}") > 0);
    CHECK(metric(m, "gd_state_dir_bytes{tier=\"temporary\"}") >= 0);
    CHECK(metric(m, "gd_archive_bytes") > 0);
    free(m);
}

/* The value of metric `name` (with its labels, as written) in a
 * Prometheus text answer, each sample a line of its own after its TYPE. */
static double metric(const char *text, const char *name) {
    char want[128];
    snprintf(want, sizeof want, "\n%s ", name);
    const char *at = strstr(text, want);
    CHECK(at != NULL);
    if (at == NULL) {
        fprintf(stderr, "no metric %s in:\n%s\n", name, text);
        return NAN;
    }
    char base[64];
    snprintf(base, sizeof base, "# TYPE %.*s ", (int)strcspn(name, "{"), name);
    const char *type = strstr(text, base);
    CHECK(type != NULL && type < at);
    return strtod(at + strlen(want), NULL);
}

/* /metrics says what /v1/status and the chain say. */
static void check_metrics(nf_net *net, int who, uint64_t settled) {
    char *m = gd_member_metrics_text(net->nodes[who]);
    json_t *st = gd_member_status_json(net->nodes[who]);
    CHECK(m != NULL && st != NULL);
    CHECK(metric(m, "gd_round") == (double)json_integer_value(json_object_get(st, "round")));
    CHECK(metric(m, "gd_height") == (double)json_integer_value(json_object_get(st, "height")));
    char phase[64];
    snprintf(phase, sizeof phase, "gd_phase{name=\"%s\"}",
             json_string_value(json_object_get(st, "phase")));
    CHECK(metric(m, phase) >= 0);
    bool worker = net->roles[who] & GD_ROLE_WORKER;
    CHECK((metric(m, "gd_inner_step") > 0) == worker);
    CHECK((metric(m, "gd_loss") > 0) == worker);
    CHECK((metric(m, "gd_tokens_per_second") > 0) == worker);
    CHECK(metric(m, "gd_bytes_in_total") > 0);
    CHECK((metric(m, "gd_bytes_out_total") > 0) == worker); /* its payloads, states */
    json_t *checks = json_object_get(st, "checks");
    CHECK(metric(m, "gd_checks_total{verdict=\"pass\"}") ==
          (double)json_integer_value(json_object_get(checks, "pass")));
    CHECK(metric(m, "gd_checks_total{verdict=\"fail\"}") == 0);
    CHECK(metric(m, "gd_checks_total{verdict=\"unavailable\"}") == 0);
    CHECK(metric(m, "gd_rewards_claimed_ngonka_total") == (double)settled);
    CHECK(metric(m, "gd_slashed_ngonka_total") == 0);
    CHECK(metric(m, "gd_errors_total") >= 0);
    double missed = 0;
    for (const char *at = strstr(m, "\ngd_missed_duties_total{"); at;
         at = strstr(at + 1, "\ngd_missed_duties_total{"))
        missed += strtod(strchr(at, '}') + 1, NULL);
    CHECK(missed == 0); /* an honest member the chain never found missing */
    CHECK((json_array_size(json_object_get(st, "losses")) > 0) == worker);
    /* Where a worker's last commitment landed in its commit window, in
     * both places; its training is quick, so not in the last quarter. */
    json_t *room = json_object_get(st, "commit_headroom");
    CHECK(json_is_object(room) == worker);
    if (json_is_object(room)) {
        json_int_t left = json_integer_value(json_object_get(room, "blocks_left"));
        CHECK(left >= 0 && left <= json_integer_value(json_object_get(room, "usable_blocks")));
        CHECK(metric(m, "gd_commit_headroom_blocks") == (double)left);
        CHECK(json_is_false(json_object_get(room, "thin")));
    }
    CHECK(metric(m, "gd_state_dir_free_bytes") > 0);
    CHECK(metric(m, "gd_state_dir_needed_bytes") > 0); /* from the real disk, not a seam */
    /* It says where it stands and what it waits for. */
    CHECK(strcmp(json_string_value(json_object_get(st, "membership")), "member") == 0);
    CHECK(metric(m, "gd_membership{state=\"member\"}") == 1);
    CHECK(metric(m, "gd_membership{state=\"removed\"}") == 0);
    json_t *wait = json_object_get(st, "waiting_for");
    const char *what = json_string_value(json_object_get(wait, "what"));
    json_t *until = json_object_get(wait, "until_height");
    CHECK(what != NULL && (strstr(what, "window to end") != NULL || strstr(what, "to open") != NULL));
    CHECK(json_is_null(until) || json_integer_value(until) > json_integer_value(json_object_get(st, "height")));
    CHECK(strstr(m, "gd_build_info{version=\"") != NULL);
    /* Every family has its HELP and TYPE lines, before its samples. */
    char *copy = strdup(m), *save = NULL;
    char help[128] = "", type[128] = "";
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (sscanf(line, "# HELP %127s", help) == 1 || sscanf(line, "# TYPE %127s", type) == 1)
            continue;
        size_t name = strcspn(line, "{ ");
        if (strncmp(line, help, name) != 0 || strncmp(line, type, name) != 0 ||
            help[name] != '\0' || type[name] != '\0') {
            fprintf(stderr, "  no HELP or TYPE before: %s\n", line);
            gd_test_failures++;
        }
    }
    free(copy);
    json_decref(st);
    free(m);
}

/* Everything a member writes in its state_dir is private (0600), its
 * directories 0700: payloads, states, checkpoints, the journal, the lock. */
static void check_private(const char *dir) {
    char cmd[640];
    snprintf(cmd, sizeof cmd,
             "find '%s' \\( -type f ! -perm 600 \\) -o \\( -type d ! -perm 700 \\) | head -3",
             dir);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    char line[600];
    bool any = false;
    while (p && fgets(line, sizeof line, p)) {
        fprintf(stderr, "  not private: %s", line);
        any = true;
    }
    if (p)
        pclose(p);
    CHECK(!any);
}

static void test_nodes_play_epoch(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    /* Node 1 archives every round's G as it leaves the hot tier; node 2
     * keeps three rounds hot. */
    char archive[600];
    snprintf(archive, sizeof archive, "%s/archive-1", gd_test_tmpdir());
    net.retention[1] = (gd_retention){.hot_rounds = 2, .archive_every = 1,
                                      .archive_dir = archive};
    net.retention[2] = (gd_retention){.hot_rounds = 3};
    nf_restart(&net, 1);
    nf_restart(&net, 2);
    double loss0 = NAN;
    while (net.d.f.height < 200) {
        nf_block(&net);
        if (isnan(loss0))
            loss0 = gd_member_eval_loss(net.nodes[1], 4);
    }
    df_qrun *run = df_q_run(&net.d);
    CHECK(run->current_round != NULL);
    uint64_t rounds = run->current_round ? run->current_round->index : 0;
    df_qfree(run);
    fprintf(stderr, "  current round %llu\n", (unsigned long long)rounds);
    CHECK(rounds >= 3);
    for (uint64_t r = 0; r <= rounds; r++)
        check_states(&net, r);
    /* Each node's own G is the chain's: the last round's next state. */
    df_qround *cur = df_q_round(&net.d, rounds);
    for (int who = 1; who <= NF_NODES; who++) {
        uint64_t gr = 0;
        uint8_t hash[32];
        CHECK(gd_member_global(net.nodes[who], &gr, hash));
        CHECK(gr == rounds + 1);
        CHECK(memcmp(hash, cur->round->next_state_hash.data, 32) == 0);
    }
    df_qfree(cur);
    check_tiers(&net, rounds, archive);
    df_check_settlement(&net.d, 1);
    for (int who = 1; who <= NF_NODES; who++) {
        df_settle s;
        CHECK(df_settled(&net.d, &s, who, 1) && s.claimed && s.amount > 0);
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
        json_t *st = gd_member_status_json(net.nodes[who]);
        CHECK((uint64_t)json_integer_value(json_object_get(st, "rewards_claimed_ngonka")) ==
              s.amount);
        json_decref(st);
        check_metrics(&net, who, s.amount);
    }
    CHECK(net.refused == 0);
    for (int who = 1; who <= NF_NODES; who++)
        check_private(net.dirs[who]);
    /* What a round fetched (payloads, checks' states) went back to the peer
     * client for the next round's fetches. */
    CHECK(net.recycled > 0);
    double loss1 = gd_member_eval_loss(net.nodes[1], 4);
    fprintf(stderr, "  %llu rounds, %zu duties, eval loss %.4f -> %.4f\n",
            (unsigned long long)rounds, net.duties, loss0, loss1);
    CHECK(loss1 < loss0);
    nf_free(&net);
}

/* A worker that dies right after its commit landed restarts from its state
 * directory: it sends nothing twice, still serves what it committed, and
 * its round completes with its payload aggregated. */
static void test_restart_after_commit(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    df_qrun *run = nf_until_round(&net, 1);
    uint64_t round = 1;
    int64_t reveal = run->current_round->windows->reveal_start;
    int64_t end = run->current_round->windows->end;
    df_qfree(run);
    nf_until(&net, reveal); /* commitments are in */
    df_qround *q = df_q_round(&net.d, round);
    CHECK(df_commitment_of(q, net.d.f.addr[2]) != NULL);
    df_qfree(q);
    nf_restart(&net, 2);
    nf_until(&net, end + 1);
    q = df_q_round(&net.d, round);
    CHECK(q->round->phase == PH(DONE));
    CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, net.d.f.addr[2]));
    df_qfree(q);
    CHECK(net.refused == 0);
    CHECK(df_slashed(&net.d, 2, NULL, NULL) == 0);
    nf_free(&net);
}

/* A round whose attestations never land is VOID and G stays as it was:
 * the next round starts from the G every node holds for the VOID round
 * (which nobody stores under the next round's index), and a worker
 * restarted in between finds it in its store. That round ends DONE with
 * every worker aggregated. */
static void test_after_void_round(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    gd_round_windows w1 = nf_until_round_windows(&net, 1);
    int64_t attest = w1.attest_start;
    int64_t end = w1.end;
    nf_until(&net, attest); /* the aggregation set is fixed at attest start */
    net.censor = true;      /* no seal or reveal of an attestation lands */
    nf_until(&net, end + 1);
    net.censor = false;
    df_qround *q1 = df_q_round(&net.d, 1);
    CHECK(q1->round->phase == PH(VOID));
    CHECK(q1->round->n_aggregation_set == 3);
    nf_restart(&net, 2);
    gd_round_windows w2 = nf_until_round_windows(&net, 2);
    end = w2.end;
    nf_until(&net, end + 1);
    df_qround *q2 = df_q_round(&net.d, 2);
    CHECK(memcmp(q2->round->start_state_hash.data, q1->round->start_state_hash.data, 32) == 0);
    CHECK(q2->round->phase == PH(DONE));
    CHECK(q2->round->n_aggregation_set == 3);
    df_qfree(q2);
    df_qfree(q1);
    CHECK(net.refused == 0);
    for (int who = 1; who <= NF_NODES; who++)
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    nf_free(&net);
}

/* A worker that starts only once round 1 is DONE joins and has G_2 before
 * round 2 opens: its peers hold G_2 from the moment round 1 is DONE and
 * serve it then (not only once round 2 is open, and never while round 1's
 * attestations are open, which would let an attester copy its hash), so
 * the joiner's state sync, chunk by chunk with proofs, is done in the gap
 * between the rounds rather than in round 2's train window. It trains
 * round 2 with the others and is aggregated in it; nobody is slashed. */
static void test_late_joiner_syncs_before_round_opens(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    unsigned roles[NF_NODES + 1];
    memcpy(roles, nf_roles, sizeof nf_roles);
    roles[NF_NODES] = GD_ROLE_WORKER;
    nf_setup(&net, &k, NF_NODES + 1, roles);
    int late = NF_NODES + 1;
    net.off[late] = true;
    net.d.member[late] = false;
    df_qrun *open1 = nf_until_round(&net, 1);
    int64_t attest_open = open1->current_round->windows->attest_open_start;
    df_qfree(open1);
    /* The attack: a lazy attester asks a peer for G_2 while round 1's
     * attestations are still being sealed, to attest its hash without
     * aggregating. Every member has aggregated G_2 by then; none serves
     * it before the round is over. */
    nf_until(&net, attest_open);
    gd_artifact_req early = {.kind = GD_REQ_GLOBAL_CHUNK, .run = 1, .round = 2, .chunk = 0};
    gd_artifact_answer refused;
    unsigned early_status = 0;
    for (int who = 1; who <= NF_NODES; who++) {
        CHECK(gd_member_serve(net.nodes[who], &early, &refused, &early_status) != GD_OK &&
              early_status == 425);
        gd_artifact_answer_free(&refused);
    }
    df_qround *q1 = NULL;
    for (;;) {
        nf_block(&net);
        df_qfree(q1);
        q1 = df_q_round(&net.d, 1);
        if (q1->round->phase == PH(DONE))
            break;
    }
    nf_block(&net); /* the members see round 1 DONE */
    CHECK(nf_current_round(&net) == 1);
    /* Every member already holds G_2: what it serves a joiner. */
    for (int who = 1; who <= NF_NODES; who++) {
        uint64_t gr = 0;
        uint8_t hash[32];
        CHECK(gd_member_global(net.nodes[who], &gr, hash) && gr == 2);
        CHECK(memcmp(hash, q1->round->next_state_hash.data, 32) == 0);
    }
    gd_artifact_req chunk = {.kind = GD_REQ_GLOBAL_CHUNK, .run = 1, .round = 2, .chunk = 0};
    gd_artifact_answer a;
    unsigned status = 0;
    CHECK_OK(gd_member_serve(net.nodes[1], &chunk, &a, &status));
    gd_artifact_answer_free(&a);
    chunk.round = 3; /* not agreed yet */
    CHECK(gd_member_serve(net.nodes[1], &chunk, &a, &status) != GD_OK && status == 425);
    gd_artifact_answer_free(&a);
    net.off[late] = false;
    net.d.member[late] = true;
    int64_t started = net.d.f.height;
    uint64_t gr = 0;
    uint8_t hash[32];
    while (!gd_member_global(net.nodes[late], &gr, hash) && net.d.f.height < started + 40)
        nf_block(&net);
    fprintf(stderr, "  started at %lld, G_%llu at %lld, round now %llu\n", (long long)started,
            (unsigned long long)gr, (long long)net.d.f.height,
            (unsigned long long)nf_current_round(&net));
    CHECK(gr == 2 && memcmp(hash, q1->round->next_state_hash.data, 32) == 0);
    CHECK(nf_current_round(&net) == 1); /* round 2 has not opened */
    gd_round_windows w2 = nf_until_round_windows(&net, 2);
    int64_t end = w2.end;
    nf_until(&net, end + 1);
    df_qround *q2 = df_q_round(&net.d, 2);
    CHECK(q2->round->phase == PH(DONE));
    CHECK(df_has_str(q2->round->aggregation_set, q2->round->n_aggregation_set,
                     net.d.f.addr[late]));
    df_qfree(q2);
    df_qfree(q1);
    CHECK(net.refused == 0);
    for (int who = 1; who <= NF_NODES + 1; who++)
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    nf_free(&net);
}

/* Whether answer a (a chunk of the four arrays of a worker state, or of
 * G's two with its descriptor first in the proof) proves against roots. */
static bool chunk_proves(const gd_artifact_answer *a, size_t n, uint32_t chunk_elems,
                         uint32_t chunk, int arrays, uint8_t roots[][32], bool global) {
    size_t lo = 0, count = 0;
    if (!gd_values_chunk_range(n, chunk_elems, chunk, &lo, &count) ||
        a->body.len != (size_t)arrays * 4 * count)
        return false;
    const uint8_t *p = a->proof.data;
    size_t left = a->proof.len;
    if (global) {
        gd_global_desc d;
        if (left < GD_GLOBAL_DESC_BYTES ||
            gd_global_desc_decode(&d, p, GD_GLOBAL_DESC_BYTES) != GD_OK)
            return false;
        memcpy(roots[0], d.params_root, 32);
        memcpy(roots[1], d.momentum_root, 32);
        p += GD_GLOBAL_DESC_BYTES;
        left -= GD_GLOBAL_DESC_BYTES;
    }
    for (int i = 0; i < arrays; i++) {
        if (left < 4)
            return false;
        uint32_t len = gd_get_le32(p);
        gd_mmr_proof pr;
        if (len > left - 4 || gd_mmr_proof_decode(&pr, p + 4, len) != GD_OK)
            return false;
        p += 4 + len;
        left -= 4 + len;
        float *values = malloc(4 * count);
        memcpy(values, a->body.data + (size_t)i * 4 * count, 4 * count);
        bool ok = gd_values_verify_chunk(roots[i], n, chunk_elems, chunk, values, count, &pr);
        free(values);
        if (!ok)
            return false;
    }
    return left == 0;
}

/* A worker serves any chunk of a stored state, and of G, with proofs
 * against the roots of the file's descriptor, from one index of each file
 * (not one pass over the file per chunk); a file damaged on disk after it
 * was indexed is noticed and refused, not served. */
static void test_state_chunks_served(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    gd_round_windows w0 = nf_until_round_windows(&net, 0);
    int64_t verify = w0.verify_start;
    nf_until(&net, verify + 1);
    gd_member *w = net.nodes[1];
    gd_artifact_answer a;
    unsigned status = 0;
    gd_artifact_req whole = {.kind = GD_REQ_STATE, .run = 1, .round = 0, .leaf = 0};
    CHECK_OK(gd_member_serve(w, &whole, &a, &status));
    gd_buf file = {0};
    CHECK_OK(gd_file_read(&file, a.path, SIZE_MAX));
    char path[GD_ARTIFACT_PATH_MAX];
    snprintf(path, sizeof path, "%s", a.path);
    gd_artifact_answer_free(&a);
    gd_worker_desc d;
    CHECK_OK(gd_worker_desc_decode(&d, file.data, GD_WORKER_DESC_BYTES));
    uint8_t roots[4][32];
    memcpy(roots[0], d.params_root, 32);
    memcpy(roots[1], d.exp_avg_root, 32);
    memcpy(roots[2], d.exp_avg_sq_root, 32);
    memcpy(roots[3], d.residual_root, 32);
    uint32_t chunks = gd_values_chunks(d.n, d.tag.chunk_elems);
    CHECK(chunks > 2);
    uint32_t picks[3] = {0, chunks / 2, chunks - 1};
    for (int i = 0; i < 3; i++) {
        gd_artifact_req req = {.kind = GD_REQ_STATE_CHUNK, .run = 1, .round = 0, .leaf = 0,
                               .chunk = picks[i]};
        CHECK_OK(gd_member_serve(w, &req, &a, &status));
        CHECK(chunk_proves(&a, d.n, d.tag.chunk_elems, picks[i], 4, roots, false));
        gd_artifact_answer_free(&a);
    }
    gd_artifact_req beyond = {.kind = GD_REQ_STATE_CHUNK, .run = 1, .round = 0, .chunk = chunks};
    CHECK(gd_member_serve(w, &beyond, &a, &status) != GD_OK && status == 404);
    gd_artifact_answer_free(&a);
    for (uint32_t c = 0; c < chunks; c++) { /* every chunk of G_0, as a state sync asks */
        gd_artifact_req req = {.kind = GD_REQ_GLOBAL_CHUNK, .run = 1, .round = 0, .chunk = c};
        uint8_t groots[2][32];
        CHECK_OK(gd_member_serve(w, &req, &a, &status));
        CHECK(chunk_proves(&a, d.n, d.tag.chunk_elems, c, 2, groots, true));
        gd_artifact_answer_free(&a);
    }
    /* A bit of the stored state flips on disk: the file is indexed again,
     * its arrays no longer hash to its descriptor's roots, and nothing is
     * served from it. */
    file.data[file.len - 1] ^= 1;
    CHECK_OK(gd_file_write_atomic(path, &(gd_bytes_part){file.data, file.len}, 1, 0600));
    gd_artifact_req req = {.kind = GD_REQ_STATE_CHUNK, .run = 1, .round = 0, .leaf = 0,
                           .chunk = 0};
    CHECK_STATUS(gd_member_serve(w, &req, &a, &status), GD_ERR_IO);
    CHECK(strstr(gd_error_detail(), "does not hash to its descriptor's root") != NULL);
    gd_artifact_answer_free(&a);
    gd_buf_free(&file);
    nf_free(&net);
}

/* The status keeps the last eight errors. A failure that recurs at every
 * block (a peer that stays down) is one entry with its count, so the error
 * before it (the chain's outage) stays in view; /metrics counts each. */
static void test_repeated_errors_are_one_entry(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    gd_member *n = net.nodes[1];
    char *m = gd_member_metrics_text(n);
    double before = metric(m, "gd_errors_total");
    free(m);
    gd_member_error(n, "height 40: the chain cannot be read: no answer");
    for (int h = 41; h < 61; h++)
        gd_member_error(n, "height %d: report on gonka1down: Couldn't connect to server", h);
    gd_member_error(n, "height 61: another failure");
    json_t *st = gd_member_status_json(n);
    json_t *errors = json_object_get(st, "errors");
    size_t count = json_array_size(errors);
    CHECK(count >= 3);
    if (count >= 3) {
        json_t *outage = json_array_get(errors, count - 3);
        json_t *down = json_array_get(errors, count - 2);
        json_t *last = json_array_get(errors, count - 1);
        CHECK(strstr(json_string_value(json_object_get(outage, "error")), "cannot be read"));
        CHECK(json_integer_value(json_object_get(outage, "repeats")) == 1);
        CHECK_STR_EQ(json_string_value(json_object_get(down, "error")),
                     "height 60: report on gonka1down: Couldn't connect to server");
        CHECK(json_integer_value(json_object_get(down, "repeats")) == 20);
        CHECK(json_integer_value(json_object_get(last, "repeats")) == 1);
    }
    json_decref(st);
    m = gd_member_metrics_text(n);
    CHECK(metric(m, "gd_errors_total") == before + 22);
    free(m);
    nf_free(&net);
}

/* A copier asks a worker for its payload as soon as it is committed, to
 * commit a near-copy before the commit window closes; a lazy worker asks
 * for a peer's states to know the drawn segment early. Both get 425 until
 * the window that makes the artifact public: the payload once no
 * commitment can land (reveal_start - 1), the transcript and states once
 * the seed is fixed (verify_start). */
static void test_nothing_served_early(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    df_qrun *run = NULL;
    for (;;) {
        nf_block(&net);
        df_qfree(run);
        run = df_q_run(&net.d);
        if (run->current_round && net.d.f.height >= run->current_round->windows->commit_start)
            break;
    }
    const Gonka__Diloco__V1__RoundWindows *w = run->current_round->windows;
    int64_t reveal = w->reveal_start, verify = w->verify_start;
    gd_artifact_req pay = {.kind = GD_REQ_PAYLOAD, .run = 1, .round = 0};
    gd_artifact_req state = {.kind = GD_REQ_STATE, .run = 1, .round = 0, .leaf = 0};
    gd_artifact_req transcript = {.kind = GD_REQ_TRANSCRIPT, .run = 1, .round = 0};
    gd_artifact_req state_chunk = {.kind = GD_REQ_STATE_CHUNK, .run = 1, .round = 0, .leaf = 0,
                                   .chunk = 1};
    gd_artifact_answer a;
    unsigned status = 0;
    for (; net.d.f.height < verify; nf_block(&net)) {
        gd_status s = gd_member_serve(net.nodes[1], &pay, &a, &status);
        if (net.d.f.height < reveal - 1)
            CHECK(s != GD_OK && status == 425);
        gd_artifact_answer_free(&a);
        CHECK(gd_member_serve(net.nodes[1], &state, &a, &status) != GD_OK && status == 425);
        CHECK(gd_member_serve(net.nodes[1], &transcript, &a, &status) != GD_OK &&
              status == 425);
        CHECK(gd_member_serve(net.nodes[1], &state_chunk, &a, &status) != GD_OK &&
              status == 425);
    }
    nf_block(&net); /* the member's clock reaches verify_start */
    CHECK_OK(gd_member_serve(net.nodes[1], &pay, &a, &status));
    gd_artifact_answer_free(&a);
    CHECK_OK(gd_member_serve(net.nodes[1], &state, &a, &status));
    CHECK(status == 200 && a.path[0] != '\0');
    gd_artifact_answer_free(&a);
    CHECK_OK(gd_member_serve(net.nodes[1], &state_chunk, &a, &status));
    CHECK(status == 200 && a.body.len > 0 && a.proof.len > 0);
    gd_artifact_answer_free(&a);
    df_qfree(run);
    CHECK(net.refused == 0);
    nf_free(&net);
}

/* A member whose step is held (here: it does not step at all, as while it
 * re-executes a long check or trains) from just before round 1's verify
 * window still serves its states from the window's first block on: its
 * server asks the chain's head once its own read is a second old. Never
 * before the window; and its checkers find every state, so no check of it
 * is UNAVAILABLE (which, with a held server answering 425, every one was). */
static void test_held_member_serves_its_window(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    df_qrun *run = nf_until_round(&net, 1);
    int64_t verify = run->current_round->windows->verify_start;
    df_qfree(run);
    nf_until(&net, verify - 3); /* committed and revealed */
    net.off[2] = true;
    net.d.act[2].cheat = true; /* held, it misses its own duties: its slashes are expected */
    nf_until(&net, verify - 1);
    gd_artifact_req state = {.kind = GD_REQ_STATE, .run = 1, .round = 1, .leaf = 0};
    gd_artifact_answer a;
    unsigned status = 0;
    usleep(1100 * 1000); /* its last read is a second old */
    CHECK(gd_member_serve(net.nodes[2], &state, &a, &status) != GD_OK && status == 425);
    gd_artifact_answer_free(&a);
    nf_make_block(&net); /* the chain reaches verify_start; node 2 has not read it */
    CHECK(net.d.f.height == verify);
    usleep(600 * 1000);
    CHECK_OK(gd_member_serve(net.nodes[2], &state, &a, &status));
    CHECK(status == 200);
    gd_artifact_answer_free(&a);
    df_qround *q = df_q_round(&net.d, 1);
    int64_t open = q->round->windows->open_start;
    df_qfree(q);
    nf_until(&net, open + 1);
    q = df_q_round(&net.d, 1);
    size_t checked = 0;
    for (size_t x = 0; x < q->n_assignments; x++)
        if (strcmp(q->assignments[x]->target, net.d.f.addr[2]) == 0) {
            checked++;
            CHECK(q->assignments[x]->outcome != OUTCOME(UNAVAILABLE));
        }
    for (size_t i = 0; i < q->n_verdicts; i++)
        if (strcmp(q->verdicts[i]->target, net.d.f.addr[2]) == 0 &&
            strcmp(q->verdicts[i]->validator, net.d.f.addr[2]) != 0)
            CHECK(q->verdicts[i]->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_PASS);
    fprintf(stderr, "  %zu checks of the held member\n", checked);
    CHECK(checked > 0);
    df_qfree(q);
    nf_free(&net);
}

/* The attack on an honest worker through its checker's own fault: a
 * validator whose disk refuses what it fetches (a directory in the way of
 * each file it would keep, so keeping one fails with an I/O error) must
 * not answer UNAVAILABLE for targets that served everything right. The
 * failure is its own: its step ends in the local error (the daemon
 * retries), the check stays due, no verdict blames the target. `name`
 * names the files in the way from (i, j); `named` is what the validator's
 * errors name. */
typedef void (*kept_file_name)(char *out, size_t cap, int i, int j);

static void local_fault_not_blamed(kept_file_name name, const char *named) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    const int v = 4; /* a validator */
    net.d.act[v].cheat = true; /* it cannot check or aggregate: its own misses are expected */
    net.local_fault[v] = true;
    for (int r = 0; r <= 2; r++)
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++) {
                char file[64], dir[800];
                name(file, sizeof file, i, j);
                snprintf(dir, sizeof dir, "%s/run-1/round-%d/%s", net.dirs[v], r, file);
                CHECK_OK(gd_dir_create(dir, 0700));
            }
    df_qfree(nf_until_round(&net, 2));
    size_t by_v = 0;
    for (uint64_t r = 0; r < 2; r++) {
        df_qround *q = df_q_round(&net.d, r);
        for (size_t i = 0; i < q->n_verdicts; i++) {
            if (strcmp(q->verdicts[i]->validator, net.d.f.addr[v]) != 0)
                continue;
            by_v++;
            CHECK(q->verdicts[i]->verdict != GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE);
        }
        df_qfree(q);
    }
    json_t *st = gd_member_status_json(net.nodes[v]);
    size_t said = 0, i;
    json_t *e;
    json_array_foreach(json_object_get(st, "errors"), i, e)
        said += strstr(json_string_value(json_object_get(e, "error")), named) != NULL;
    json_decref(st);
    fprintf(stderr, "  %zu verdicts by the validator, %zu errors naming its '%s' files, "
                    "%zu steps ended in a local error\n",
            by_v, said, named, net.step_errors[v]);
    CHECK(said > 0 && net.step_errors[v] > 0);
    for (int who = 1; who <= 3; who++)
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    nf_free(&net);
}

/* The payloads it fetches (peer-L.gdpl). */
static void peer_payload_name(char *out, size_t cap, int i, int j) {
    (void)j;
    snprintf(out, cap, "peer-%d.gdpl", i);
}

static void test_local_payload_fault_not_blamed(void) {
    local_fault_not_blamed(peer_payload_name, "peer-");
}

/* The segment starts its checks fetch (check-K-S.gdws). */
static void check_state_name(char *out, size_t cap, int i, int j) {
    snprintf(out, cap, "check-%d-%d.gdws", i, j);
}

static void test_local_check_state_fault_not_blamed(void) {
    local_fault_not_blamed(check_state_name, "check-");
}

/* The attack: a host trains (or checks) on other data than the run's, its
 * own corpus or a shuffled copy, and commits plausible payloads. The run
 * spec records its data's digest; a member opening the run reads the data
 * from its local paths (the node's `data` key), digests it, and refuses to
 * take part unless it is the run's: the step fails with the reason. The
 * same files kept under another name are the run's data. */
static void test_data_not_the_runs(void) {
    const char *run_file = gd_test_write_file("run-corpus.txt", "the run's own corpus\n", 21, 0644);
    const char *copy = gd_test_write_file("host-copy.txt", "the run's own corpus\n", 21, 0644);
    const char *other = gd_test_write_file("host-other.txt", "another corpus, same size\n", 26,
                                           0644);
    df_knobs k;
    nf_knobs(&k);
    json_t *spec = nf_spec(&k);
    char data_spec[700];
    snprintf(data_spec, sizeof data_spec, "text:%s", run_file);
    gd_data *d = NULL;
    uint8_t digest[32];
    CHECK_OK(gd_data_open(&d, data_spec));
    CHECK_OK(gd_data_digest(d, NULL, NULL, digest));
    gd_data_close(d);
    char hex[65];
    gd_hex_encode(hex, digest, 32, false);
    json_object_set_new(spec, "data_spec", json_string(data_spec));
    json_object_set_new(spec, "data_digest", json_string(hex));
    k.spec = spec;
    static const unsigned roles[3] = {GD_ROLE_WORKER, GD_ROLE_WORKER, GD_ROLE_VALIDATOR};
    nf_net net;
    nf_setup(&net, &k, 3, roles);
    net.data_paths[2][0] = copy;
    nf_restart(&net, 2);
    net.data_paths[3][0] = other;
    nf_restart(&net, 3);
    size_t done = 0;
    /* A node's first height only sets where it starts; it joins at the next. */
    for (int pass = 0; pass < 2; pass++) {
        CHECK_OK(gd_member_step(net.nodes[1], &done)); /* the spec's own path */
        CHECK_OK(gd_member_step(net.nodes[2], &done)); /* the same bytes elsewhere */
        if (pass == 0)
            df_empty_block(&net.d);
    }
    CHECK(net.pending.n_tx > 0);
    size_t before = net.pending.n_tx;
    CHECK_STATUS(gd_member_step(net.nodes[3], &done), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "data_digest") != NULL &&
          strstr(gd_error_detail(), "cannot be run here") != NULL);
    CHECK(net.pending.n_tx == before); /* it sent nothing: not even its join */
    net.data_paths[3][0] = NULL; /* the spec's path: the run's data */
    nf_restart(&net, 3);
    CHECK_OK(gd_member_step(net.nodes[3], &done));
    nf_free(&net);
    json_decref(spec);
}

/* The attack: a worker's commitment claims a payload far larger than any
 * its run's model and codec can make (2^40 bytes), so that each peer that
 * fetches it reserves and downloads that much. Every member refuses the
 * commitment before asking for a byte: nobody fetches the cheater's
 * payload, nobody reports it, it is left out of the inclusion and
 * aggregation sets, its checks are answered UNAVAILABLE and upheld (it
 * pays cheat_slash), and the round ends DONE on the honest payloads with no
 * honest member slashed. */
static void test_oversized_payload_claim(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    const int cheater = 3;
    net.claim_payload_bytes[cheater] = (uint64_t)1 << 40;
    net.d.act[cheater].cheat = true; /* its slash is expected */
    gd_round_windows w0 = nf_until_round_windows(&net, 0);
    int64_t end = w0.end;
    nf_until(&net, end + 1);
    df_qround *q = df_q_round(&net.d, 0);
    const char *addr = net.d.f.addr[cheater];
    const Gonka__Diloco__V1__Commitment *c = df_commitment_of(q, addr);
    CHECK(c != NULL && c->payload_bytes == (uint64_t)1 << 40);
    CHECK(c != NULL && c->reports == 0);
    CHECK(net.payload_fetches[cheater] == 0);
    CHECK(net.payload_fetches[1] > 0 && net.payload_fetches[2] > 0);
    CHECK(!df_has_str(q->round->inclusion_set, q->round->n_inclusion_set, addr));
    CHECK(!df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, addr));
    CHECK(q->round->phase == PH(DONE));
    CHECK(q->round->n_aggregation_set == 2);
    df_qfree(q);
    for (int who = 1; who <= NF_NODES; who++)
        if (who != cheater)
            CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    /* Its checks were answered UNAVAILABLE (nothing it can serve fits its
     * claim) and upheld: it paid cheat_slash. */
    uint64_t paid = df_slashed(&net.d, cheater, NULL, NULL);
    fprintf(stderr, "  the cheater paid %llu ngonka\n", (unsigned long long)paid);
    CHECK(paid > 0);
    nf_free(&net);
}

/* A worker killed after its seal of the next round's secret went out but
 * before its journal recorded it: the seal lands, and the restarted worker
 * reads it from the chain (the Run query's next_sealed) rather than sealing
 * again, which the chain would refuse as a duplicate. It trains the round
 * again, commits it, and takes part in the next round on the seal that
 * landed, with no transaction refused. */
static void test_restart_after_seal_sent(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    char path[600];
    snprintf(path, sizeof path, "%s/journal.json", net.dirs[2]);
    bool crashed = false;
    while (!crashed && net.d.f.height < 200) {
        gd_buf before = {0};
        gd_status read = gd_file_read(&before, path, 4096);
        CHECK(read == GD_OK || read == GD_ERR_NOT_FOUND); /* absent before the join */
        nf_block(&net);
        gd_buf after = {0};
        read = gd_file_read(&after, path, 4096);
        CHECK(read == GD_OK || read == GD_ERR_NOT_FOUND);
        static const char sealed_round_1[] = "\"sealed_upto\":\"2\"";
        if (after.len > 0 &&
            memmem(after.data, after.len, sealed_round_1, sizeof sealed_round_1 - 1) != NULL) {
            gd_bytes_part part = {before.data, before.len};
            CHECK_OK(gd_file_write_atomic(path, &part, 1, 0600));
            nf_restart(&net, 2);
            crashed = true;
        }
        gd_buf_free(&before);
        gd_buf_free(&after);
    }
    CHECK(crashed);
    df_qfree(nf_until_round(&net, 2));
    for (uint64_t r = 0; r <= 1; r++) {
        df_qround *q = df_q_round(&net.d, r);
        CHECK(q->round->phase == PH(DONE));
        CHECK(df_commitment_of(q, net.d.f.addr[2]) != NULL);
        CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set,
                         net.d.f.addr[2]));
        df_qfree(q);
    }
    fprintf(stderr, "  %llu transactions refused\n", (unsigned long long)net.refused);
    CHECK(net.refused == 0);
    CHECK(df_slashed(&net.d, 2, NULL, NULL) == 0);
    nf_free(&net);
}

/* A worker whose stored G is not the agreed one (a disk that flipped a
 * bit, or a minority aggregate) restarts as round 2 opens: it finds its G_2
 * does not hash to the chain's state hash, synchronises G_2 from its peers
 * chunk by chunk, proved against that hash, stores the agreed one, and
 * trains and commits round 2 with the others. */
static void test_wrong_g_is_synchronised(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    gd_round_windows w2 = nf_until_round_windows(&net, 2);
    int64_t end = w2.end;
    gd_artifact_store st;
    CHECK_OK(gd_artifact_store_open(&st, net.dirs[2]));
    char path[GD_ARTIFACT_PATH_MAX];
    CHECK_OK(gd_artifact_path(&st, path, sizeof path, GD_ARTIFACT_GLOBAL, 1, 2, 0));
    gd_buf g = {0};
    CHECK_OK(gd_file_read(&g, path, (size_t)1 << 30));
    g.data[GD_GLOBAL_DESC_BYTES + 1000] ^= 0x10;
    gd_bytes_part part = {g.data, g.len};
    CHECK_OK(gd_file_write_atomic(path, &part, 1, 0600));
    /* G_1 under round 1 is not G_2 either: only a peer can give it. */
    nf_restart(&net, 2);
    nf_until(&net, end + 1);
    df_qround *q = df_q_round(&net.d, 2);
    CHECK(q->round->phase == PH(DONE));
    CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, net.d.f.addr[2]));
    /* What it stores now is the agreed G_2. */
    gd_buf fixed = {0};
    CHECK_OK(gd_file_read(&fixed, path, (size_t)1 << 30));
    g.data[GD_GLOBAL_DESC_BYTES + 1000] ^= 0x10;
    CHECK(fixed.len == g.len && memcmp(fixed.data, g.data, g.len) == 0);
    gd_buf_free(&fixed);
    gd_buf_free(&g);
    df_qfree(q);
    CHECK(net.refused == 0);
    for (int who = 1; who <= NF_NODES; who++)
        CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    nf_free(&net);
}

/* Whether address is a member of the run, and leaving. */
static bool member_leaving(nf_net *net, const char *address, bool *leaving) {
    df_qrun *run = df_q_run(&net->d);
    bool member = false;
    for (size_t i = 0; i < run->n_members; i++)
        if (strcmp(run->members[i]->address, address) == 0) {
            member = true;
            *leaving = run->members[i]->leaving;
        }
    df_qfree(run);
    return member;
}

/* `node leave` while the node runs: the wish goes into a file of its own
 * beside the journal, which the running node writes over all the time; the
 * node takes it at its next step, sends MsgLeaveRun itself, seals no secret
 * for a later round, and its collateral comes back once no live round holds
 * it. Nobody is slashed and the rounds go on with the others. */
static void test_leave_while_running(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    df_qfree(nf_until_round(&net, 1));
    const char *who = net.d.f.addr[2];
    gd_artifact_store st;
    CHECK_OK(gd_artifact_store_open(&st, net.dirs[2]));
    CHECK_OK(gd_leave_request_save(&st));
    bool leaving = false;
    for (int i = 0; i < 5 && !leaving; i++) {
        nf_block(&net);
        CHECK(member_leaving(&net, who, &leaving));
    }
    CHECK(leaving);
    gd_member_journal j;
    CHECK_OK(gd_journal_load(&st, &j));
    CHECK(j.leave_wanted);
    /* Released once the round it is in is over; never sealed for round 3. */
    df_qfree(nf_until_round(&net, 3));
    CHECK(!member_leaving(&net, who, &leaving));
    df_qround *q = df_q_round(&net.d, 3);
    for (size_t i = 0; i < q->n_randomness; i++)
        CHECK(strcmp(q->randomness[i]->member, who) != 0);
    CHECK(df_commitment_of(q, who) == NULL);
    df_qfree(q);
    CHECK(net.refused == 0);
    for (int n = 1; n <= NF_NODES; n++)
        CHECK(df_slashed(&net.d, n, NULL, NULL) == 0);
    nf_free(&net);
}

/* A worker that is down for a whole round (it sealed the round's secret
 * before) misses every duty of it: the chain records each in its snapshot
 * record and slashes it. Back up, the worker logs each one the chain
 * recorded and counts it by duty (gd_missed_duties_total{duty}), though
 * it never saw those duties fall due; the others count nothing. */
static void test_missed_duties_counted(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    df_qfree(nf_until_round(&net, 1));
    net.off[2] = true;
    net.d.act[2].cheat = true; /* its slashes are expected */
    df_qfree(nf_until_round(&net, 2));
    net.off[2] = false;
    df_qround *q = df_q_round(&net.d, 1);
    CHECK(q->round->phase == PH(DONE));
    const Gonka__Diloco__V1__WeightedMember *rec = NULL;
    for (size_t i = 0; i < q->round->n_members; i++)
        if (strcmp(q->round->members[i]->address, net.d.f.addr[2]) == 0)
            rec = q->round->members[i];
    CHECK(rec != NULL && rec->skip_slashed && rec->n_missed > 0);
    nf_block(&net);
    nf_block(&net);
    char *m = gd_member_metrics_text(net.nodes[2]);
    json_t *st = gd_member_status_json(net.nodes[2]);
    json_t *by_duty = json_object_get(st, "missed_duties");
    size_t counted = 0;
    for (size_t i = 0; rec && i < rec->n_missed; i++) {
        char want[96];
        snprintf(want, sizeof want, "gd_missed_duties_total{duty=\"%s\"}", rec->missed[i]);
        fprintf(stderr, "  round 1: missed %s\n", rec->missed[i]);
        CHECK(metric(m, want) >= 1);
        CHECK(json_integer_value(json_object_get(by_duty, rec->missed[i])) >= 1);
    }
    const char *key;
    json_t *v;
    json_object_foreach(by_duty, key, v) counted += (size_t)json_integer_value(v);
    CHECK(rec != NULL && counted == rec->n_missed);
    bool logged = false;
    json_t *e;
    size_t i;
    json_array_foreach(json_object_get(st, "errors"), i, e) logged |=
        strstr(json_string_value(json_object_get(e, "error")), "round 1: the chain slashed") != NULL;
    CHECK(logged);
    json_decref(st);
    free(m);
    df_qfree(q);
    for (int who = 1; who <= NF_NODES; who++) {
        if (who == 2)
            continue;
        st = gd_member_status_json(net.nodes[who]);
        counted = 0;
        json_object_foreach(json_object_get(st, "missed_duties"), key, v) counted +=
            (size_t)json_integer_value(v);
        CHECK(counted == 0);
        json_decref(st);
    }
    nf_free(&net);
}

/* Takes node who down for round `round` (it misses every duty of it and
 * is slashed) and brings it back when round + 1 opens, where the chain,
 * which finds its collateral below the minimum, removes it. */
static void miss_a_round(nf_net *net, int who, uint64_t round) {
    df_qfree(nf_until_round(net, round));
    net->off[who] = true;
    df_qfree(nf_until_round(net, round + 1));
    CHECK(df_collateral(&net->d, who) == UINT64_MAX); /* removed */
}

static const char *membership(nf_net *net, int who) {
    json_t *st = gd_member_status_json(net->nodes[who]);
    static char out[32];
    snprintf(out, sizeof out, "%s", json_string_value(json_object_get(st, "membership")));
    json_decref(st);
    return out;
}

/* A member the chain removed (its collateral slashed below the minimum
 * while it was down) joins again by itself with its configured
 * collateral, once: it takes part again. Removed a second time, it stops
 * with the reason (its operator should look before it bonds more), and so
 * does a removed node with joining off, at once. */
static void test_removed_member_joins_again(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    k.min_collateral = 16000; /* 20000 bonded less one missed round's 4700 */
    nf_setup(&net, &k, NF_NODES, nf_roles);
    net.d.act[2].cheat = true; /* its slashes are expected */
    miss_a_round(&net, 2, 1);
    net.off[2] = false;
    nf_block(&net);
    CHECK(strcmp(membership(&net, 2), "removed") == 0 ||
          strcmp(membership(&net, 2), "not_joined") == 0);
    df_qfree(nf_until_round(&net, 3));
    CHECK(df_collateral(&net.d, 2) == 20000);
    CHECK(strcmp(membership(&net, 2), "member") == 0);
    df_qround *q = df_q_round(&net.d, 3);
    bool in = false;
    for (size_t i = 0; i < q->round->n_members; i++)
        in |= strcmp(q->round->members[i]->address, net.d.f.addr[2]) == 0;
    CHECK(in); /* it sealed for round 3 and is in its snapshot */
    df_qfree(q);
    /* Removed again: the node stops, saying why. */
    miss_a_round(&net, 2, 3);
    size_t done = 0;
    CHECK_STATUS(gd_member_step(net.nodes[2], &done), GD_ERR_INVALID);
    fprintf(stderr, "  %s\n", gd_error_detail());
    CHECK(strstr(gd_error_detail(), "removed again") != NULL);
    /* With joining off, removal stops it at once. */
    net.no_join[2] = true;
    nf_restart(&net, 2);
    CHECK_STATUS(gd_member_step(net.nodes[2], &done), GD_ERR_INVALID);
    CHECK(strstr(gd_error_detail(), "join is off") != NULL);
    CHECK(net.refused == 0);
    for (int who = 1; who <= NF_NODES; who++)
        if (who != 2)
            CHECK(df_slashed(&net.d, who, NULL, NULL) == 0);
    nf_free(&net);
}

static uint64_t g_disk_free;
static uint64_t disk_free_of(const char *dir) {
    (void)dir;
    return g_disk_free;
}

/* A node whose state_dir cannot hold a round does not start it: the train
 * duty says why (and stays due), it commits nothing in that round, and it
 * warns once a round while there is no room for two, showing the need
 * beside the free bytes. With room again it trains and commits the next
 * round, and says so no more. */
static void test_low_disk_refused(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    memset(&net, 0, sizeof net);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    g_disk_free = 1000;
    net.disk_free[1] = disk_free_of;
    net.d.act[1].cheat = true; /* the round it does not train costs it the skip slash */
    nf_restart(&net, 1);
    df_qfree(nf_until_round(&net, 1));
    nf_block(&net);
    json_t *st = gd_member_status_json(net.nodes[1]);
    size_t warned = 0, refused = 0, i;
    json_t *e;
    json_array_foreach(json_object_get(st, "errors"), i, e) {
        const char *text = json_string_value(json_object_get(e, "error"));
        if (strstr(text, "has 0.00 GB free, and two rounds of this model take about") != NULL) {
            warned++;
            CHECK(json_integer_value(json_object_get(e, "repeats")) == 1);
        }
        refused += strstr(text, "round 0 not started: state_dir") != NULL &&
                   strstr(text, "a round of this model writes about") != NULL;
    }
    fprintf(stderr, "  %zu warnings by round 1\n", warned);
    CHECK(warned >= 1 && refused >= 1);
    json_decref(st);
    df_qround *q = df_q_round(&net.d, 0);
    CHECK(df_commitment_of(q, net.d.f.addr[1]) == NULL);
    df_qfree(q);
    char *m = gd_member_metrics_text(net.nodes[1]);
    CHECK(metric(m, "gd_state_dir_needed_bytes") > 1000);
    CHECK(metric(m, "gd_chain_read_age_seconds") >= 0);
    free(m);
    st = gd_member_status_json(net.nodes[2]);
    json_array_foreach(json_object_get(st, "errors"), i, e) CHECK(
        strstr(json_string_value(json_object_get(e, "error")), "GB free") == NULL);
    json_decref(st);
    /* Room again: it trains the next round it can, and warns no more. */
    g_disk_free = UINT64_MAX / 2;
    m = gd_member_metrics_text(net.nodes[1]);
    double errors_before = metric(m, "gd_errors_total");
    free(m);
    df_qfree(nf_until_round(&net, 3));
    m = gd_member_metrics_text(net.nodes[1]);
    CHECK(metric(m, "gd_errors_total") == errors_before);
    free(m);
    q = df_q_round(&net.d, 2);
    CHECK(df_commitment_of(q, net.d.f.addr[1]) != NULL);
    df_qfree(q);
    nf_free(&net);
}

/* Seals of round 1 on (the first a worker sends as round 0 trains). */
static bool refuse_later_seals(const nf_net *net, const gd_any *msg) {
    (void)net;
    if (strcmp(msg->type_url, GD_DILOCO_MSG_RANDOMNESS) != 0)
        return false;
    Gonka__Diloco__V1__MsgRandomness *m =
        gonka__diloco__v1__msg_randomness__unpack(NULL, msg->value.len, msg->value.data);
    CHECK(m != NULL);
    bool refuse = m && m->seal.len > 0 && m->round >= 1;
    gonka__diloco__v1__msg_randomness__free_unpacked(m, NULL);
    return refuse;
}

/* A duty the chain refuses every time (here the seal of the next round's
 * secret, which a submit that waits for inclusion learns of at once) goes
 * last while the node sends one duty per transaction: the others still go.
 * The worker trains, commits and is aggregated in round 0, and sits out
 * round 1, for which it never sealed. */
static void test_refused_duty_starves_nothing(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    net.refuse[2] = refuse_later_seals;
    df_qfree(nf_until_round(&net, 1));
    df_qround *q = df_q_round(&net.d, 0);
    CHECK(q->round->phase == PH(DONE));
    CHECK(df_commitment_of(q, net.d.f.addr[2]) != NULL);
    CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, net.d.f.addr[2]));
    bool attested = false;
    for (size_t i = 0; i < q->n_attestations; i++)
        attested |= strcmp(q->attestations[i]->attester, net.d.f.addr[2]) == 0 &&
                    q->attestations[i]->next_state_hash.len == 32;
    CHECK(attested);
    df_qfree(q);
    CHECK(df_slashed(&net.d, 2, NULL, NULL) == 0);
    /* The first retry at the next block, then each refusal doubles the
     * wait (2, 4, .. 64 blocks): a few tries for each round's seal (each a
     * duty of its own),
     * where trying every block paid a fee at 147 of these blocks. */
    nf_until(&net, net.d.f.height + 128);
    fprintf(stderr, "  %llu transactions refused by height %lld\n",
            (unsigned long long)net.refused_at_once, (long long)net.d.f.height);
    CHECK(net.refused_at_once > 0 && net.refused_at_once <= 24);
    nf_free(&net);
}

/* A worker whose commitment lands in the commit window's last block (held
 * back through the duty seam, as a training that ran long would be): the
 * node says so, in /v1/status and /metrics from the chain's record of the
 * commitment, while one that landed at the window's start does not. The
 * late one is still in time: included, aggregated, not slashed. */
static const nf_net *g_late_net;

static bool commit_late(const gd_action *a, const char *address, uint64_t run,
                        const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                        bool *sent) {
    (void)address, (void)run, (void)msg;
    if (a->kind != GD_ACT_COMMIT || round == NULL || round->round == NULL ||
        round->round->windows == NULL)
        return false;
    *sent = false; /* held back until the next block is the window's last */
    return g_late_net->d.f.height + 2 < round->round->windows->reveal_start;
}

static void test_late_commitment_is_flagged(void) {
    nf_net net;
    df_knobs k;
    nf_knobs(&k);
    nf_setup(&net, &k, NF_NODES, nf_roles);
    g_late_net = &net;
    net.duty[2] = commit_late;
    nf_restart(&net, 2);
    df_qfree(nf_until_round(&net, 1));
    df_qround *q = df_q_round(&net.d, 0);
    CHECK(q->round->phase == PH(DONE));
    const Gonka__Diloco__V1__Commitment *late = df_commitment_of(q, net.d.f.addr[2]);
    const Gonka__Diloco__V1__Commitment *quick = df_commitment_of(q, net.d.f.addr[1]);
    CHECK(late != NULL && quick != NULL);
    CHECK(late->height == q->round->windows->reveal_start - 1);
    CHECK(quick->height == q->round->windows->commit_start);
    CHECK(df_has_str(q->round->aggregation_set, q->round->n_aggregation_set, net.d.f.addr[2]));
    for (int who = 1; who <= 2; who++) {
        json_t *st = gd_member_status_json(net.nodes[who]);
        char *m = gd_member_metrics_text(net.nodes[who]);
        json_t *room = json_object_get(st, "commit_headroom");
        json_int_t left = json_integer_value(json_object_get(room, "blocks_left"));
        json_int_t usable = json_integer_value(json_object_get(room, "usable_blocks"));
        fprintf(stderr, "  worker %d: round %lld's commitment landed with %lld of %lld blocks "
                        "left%s\n",
                who, (long long)json_integer_value(json_object_get(room, "round")),
                (long long)left, (long long)usable,
                json_is_true(json_object_get(room, "thin")) ? ", thin" : "");
        CHECK(json_integer_value(json_object_get(room, "round")) == 0);
        CHECK(usable == q->round->windows->reveal_start - 1 - q->round->windows->commit_start);
        CHECK(left == (who == 2 ? 0 : usable));
        CHECK(json_is_true(json_object_get(room, "thin")) == (who == 2));
        CHECK(metric(m, "gd_commit_headroom_blocks") == (double)left);
        free(m);
        json_decref(st);
    }
    df_qfree(q);
    CHECK(df_slashed(&net.d, 2, NULL, NULL) == 0);
    nf_free(&net);
}

int main(void) {
    RUN_TEST(test_nodes_play_epoch);
    RUN_TEST(test_restart_after_commit);
    RUN_TEST(test_restart_after_seal_sent);
    RUN_TEST(test_leave_while_running);
    RUN_TEST(test_wrong_g_is_synchronised);
    RUN_TEST(test_refused_duty_starves_nothing);
    RUN_TEST(test_late_commitment_is_flagged);
    RUN_TEST(test_missed_duties_counted);
    RUN_TEST(test_removed_member_joins_again);
    RUN_TEST(test_low_disk_refused);
    RUN_TEST(test_after_void_round);
    RUN_TEST(test_late_joiner_syncs_before_round_opens);
    RUN_TEST(test_nothing_served_early);
    RUN_TEST(test_held_member_serves_its_window);
    RUN_TEST(test_local_payload_fault_not_blamed);
    RUN_TEST(test_local_check_state_fault_not_blamed);
    RUN_TEST(test_repeated_errors_are_one_entry);
    RUN_TEST(test_state_chunks_served);
    RUN_TEST(test_data_not_the_runs);
    RUN_TEST(test_oversized_payload_claim);
    return gd_test_finish();
}
