/* Room under state_dir for the run's rounds (plugin/member/member_internal.h):
 * a warning while the node still has a round's time to act, rather than a
 * write that fails mid-round, and a round not started that the free space
 * cannot hold. The need is the run's planning figure
 * (gd_run_spec_round_bytes, the same as node check's) with the payloads of
 * the round's workers this node may fetch, for two rounds in the warning
 * and one for the refusal. And what a round leaves there, by
 * tier (plugin/member/artifact_tiers.h): temporary files go when their
 * round is over, hot rounds stay, the archive's G leave. */
#include <inttypes.h>
#include <sys/statvfs.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"
#include "plugin/member/run_config.h"
#include "trainer/plan.h"

static double gd_member_disk_free(const gd_member *n) {
    if (n->o.disk_free != NULL)
        return (double)n->o.disk_free(n->store.root);
    struct statvfs vfs;
    if (statvfs(n->store.root, &vfs) != 0)
        return -1;
    return (double)vfs.f_bavail * (double)vfs.f_frsize;
}

/* What a round of the run leaves under state_dir: the spec's figure, and
 * the payloads of the round's workers (its aggregation set) fetched into
 * it, at the same bound per value; 0 when not known. */
static double gd_member_round_need(gd_member *n) {
    const Gonka__Diloco__V1__Run *run = n->ans.run ? n->ans.run->run : NULL;
    if (run == NULL || run->spec == NULL)
        return 0;
    if (n->round_bytes == 0)
        n->round_bytes = gd_run_spec_round_bytes(run->spec, n->o.run);
    const Gonka__Diloco__V1__RunSpec *spec = run->spec;
    uint32_t segments = spec->segment_steps ? spec->h_max / spec->segment_steps : 1;
    const gd_chain_view *v = &n->view.view;
    size_t peers = v->have_round ? v->round.n_aggregation_set : 0;
    /* The spec's figure is values times the rule without peers. */
    return n->round_bytes * gd_plan_round_disk_per_param(segments, (uint32_t)peers) /
           gd_plan_round_disk_per_param(segments, 0);
}

void gd_member_watch_disk(gd_member *n) {
    double need = 2 * gd_member_round_need(n), free_bytes = gd_member_disk_free(n);
    if (need <= 0 || free_bytes < 0)
        return;
    pthread_mutex_lock(&n->mu);
    n->stats.disk_needed = need;
    pthread_mutex_unlock(&n->mu);
    const gd_chain_view *v = &n->view.view;
    uint64_t round = v->have_round ? v->round.index : v->next_round;
    if (free_bytes >= need) {
        if (n->disk_short)
            GD_LOG_INFO("node", "state_dir %s has room for two rounds again (%.2f GB free)",
                        n->store.root, free_bytes / 1e9);
        n->disk_short = false;
        return;
    }
    /* Once a round while it lasts: each round is another chance to act. */
    if (n->disk_short && n->disk_warned_round == round)
        return;
    n->disk_short = true;
    n->disk_warned_round = round;
    gd_member_error(n, "round %" PRIu64 ": state_dir %s has %.2f GB free, and two rounds of this "
                       "model take about %.2f GB: free space or move state_dir before a round's "
                       "writes fail", round, n->store.root, free_bytes / 1e9, need / 1e9);
}

gd_status gd_member_disk_room(gd_member *n, uint64_t round) {
    double need = gd_member_round_need(n), free_bytes = gd_member_disk_free(n);
    if (need <= 0 || free_bytes < 0 || free_bytes >= need)
        return GD_OK;
    return gd_fail(GD_ERR_LIMIT, "round %" PRIu64 " not started: state_dir %s has %.2f GB free "
                                 "and a round of this model writes about %.2f GB; free space "
                                 "or move state_dir",
                   round, n->store.root, free_bytes / 1e9, need / 1e9);
}

/* The tiers' bytes for /metrics (a directory walk: after a round changes
 * what is on disk, not at every scrape). */
static void gd_member_count_tiers(gd_member *n) {
    gd_tier_bytes b;
    if (gd_artifact_tier_bytes(&n->store, &b, n->o.run, n->o.retention.archive_dir) != GD_OK)
        return;
    pthread_mutex_lock(&n->mu);
    n->stats.tiers = b;
    n->stats.have_tiers = true;
    pthread_mutex_unlock(&n->mu);
}

void gd_member_retain(gd_member *n, uint64_t round) {
    /* Round r opens only once r - 1 is over: its segment starts go. */
    if (round >= 1 && gd_artifact_settle(&n->store, n->o.run, round - 1) != GD_OK)
        gd_member_error(n, "removing round %" PRIu64 "'s temporary files: %s", round - 1,
                        gd_error_detail());
    /* Round r's checks read r - 1's transcripts, state sync reads the newest
     * G and the next round's training the last post state: hot_rounds (at
     * least two) stay, older ones leave, their G to the archive when due. */
    uint32_t hot = n->o.retention.hot_rounds ? n->o.retention.hot_rounds : GD_RETENTION_HOT_MIN;
    if (round >= hot &&
        gd_artifact_retire(&n->store, n->o.run, round - (hot - 1), &n->o.retention) != GD_OK)
        gd_member_error(n, "retiring rounds below %" PRIu64 ": %s", round - (hot - 1),
                        gd_error_detail());
    gd_member_count_tiers(n);
}

void gd_member_disk_stored(gd_member *n) { gd_member_count_tiers(n); }
