/* Room under state_dir for the run's rounds (plugin/member/member_internal.h):
 * a warning while the node still has a round's time to act, rather than a
 * write that fails mid-round. The need is the run's planning figure
 * (gd_run_spec_round_bytes, the same as node check's), for two rounds. */
#include <inttypes.h>
#include <sys/statvfs.h>

#include "common/log.h"
#include "plugin/member/member_internal.h"
#include "plugin/member/run_config.h"

static double gd_member_disk_free(const gd_member *n) {
    if (n->o.disk_free != NULL)
        return (double)n->o.disk_free(n->store.root);
    struct statvfs vfs;
    if (statvfs(n->store.root, &vfs) != 0)
        return -1;
    return (double)vfs.f_bavail * (double)vfs.f_frsize;
}

void gd_member_watch_disk(gd_member *n) {
    const Gonka__Diloco__V1__Run *run = n->ans.run ? n->ans.run->run : NULL;
    if (run == NULL || run->spec == NULL)
        return;
    if (n->round_bytes == 0)
        n->round_bytes = gd_run_spec_round_bytes(run->spec, n->o.run);
    double need = 2 * n->round_bytes, free_bytes = gd_member_disk_free(n);
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
