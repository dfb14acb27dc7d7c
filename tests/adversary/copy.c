/* The copier (tests/adversary/adversary.h): it trains honestly (its own
 * transcript, its own tokens) and then commits a near-copy of another
 * worker's payload of the same round, one value changed, under its own
 * name. The other's payload reaches it out of band (here: read from that
 * worker's store, as a colluder would hand it over); it is not served to
 * anyone before the reveal window. A check re-encodes the drawn chunk from
 * the copier's own trained state, and the copy is not that: FAIL on every
 * chunk drawn (docs/verification.md, "payload not from training"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "tests/adversary/adversary.h"
#include "trainer/payload.h"

const char *g_adv_copy_dir; /* the other worker's state_dir */

/* The other's payload of `round`, waited for up to a minute. */
static gd_status adv_their_payload(gd_engine *e, uint64_t round, gd_payload *p) {
    char path[1024];
    int n = snprintf(path, sizeof path, "%s/run-%" PRIu64 "/round-%" PRIu64 "/payload.gdpl",
                     g_adv_copy_dir, e->rc.diloco.run, round);
    if (n < 0 || (size_t)n >= sizeof path)
        return gd_fail(GD_ERR_LIMIT, "copy: path too long");
    struct stat st;
    for (int tries = 0; stat(path, &st) != 0; tries++) {
        if (tries == 600)
            return gd_fail(GD_ERR_NOT_FOUND, "copy: no payload at %s", path);
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    return gd_payload_read(p, path, gd_trainer_pool(e->trainer));
}

gd_status gd_adv_copy_train(gd_engine *e, gd_trained_round *out, uint64_t round,
                            const gd_global_state *g, bool fresh, gd_worker_state *w) {
    GD_TRY(gd_engine_train(e, out, round, g, fresh, w));
    float *values = malloc(e->n * sizeof *values);
    if (values == NULL) {
        gd_trained_round_free(out);
        return gd_fail(GD_ERR_NOMEM, "out of memory");
    }
    gd_payload theirs;
    gd_status s = adv_their_payload(e, round, &theirs);
    if (s == GD_OK) {
        s = theirs.header.param_count == e->n
                ? gd_payload_decode(&theirs, values, gd_trainer_pool(e->trainer))
                : gd_fail(GD_ERR_INVALID, "copy: their payload is not of this model");
        gd_payload_free(&theirs);
    }
    if (s == GD_OK) {
        values[0] += 1e-3f; /* one value changed */
        s = gd_adv_commit_values(e, out, round, w, values);
    } else {
        gd_trained_round_free(out);
    }
    free(values);
    return s;
}
