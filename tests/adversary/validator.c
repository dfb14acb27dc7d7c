/* Validators that do not do their checks (tests/adversary/adversary.h).
 *
 * The lazy validator answers every check PASS with a made-up digest, never
 * re-executing a segment, to be paid for checks it did not do. Alone on a
 * check nothing contradicts it; on a double check beside an honest
 * validator the digests differ, the re-checkers re-execute, and the made-up
 * digest loses: it pays cheat_slash (docs/verification.md, "Validators").
 *
 * The UNAVAILABLE spammer answers every check UNAVAILABLE, an accusation
 * that costs nothing to make up: the re-checkers fetch what it says it could
 * not, the check passes, and its bond (fail_bond) is burned each time. */
#include <stdio.h>
#include <string.h>

#include "common/hash.h"
#include "tests/adversary/adversary.h"

gd_status gd_adv_lazy_check(gd_engine *e, const gd_check_input *in, const gd_check_evidence *ev,
                            const gd_global_state *g, gd_check_answer *out) {
    (void)e;
    (void)ev;
    (void)g;
    memset(out, 0, sizeof *out);
    out->verdict = GD_VERDICT_PASS;
    /* A digest that looks like one: a hash of what the check names. */
    char what[160];
    int n = snprintf(what, sizeof what, "lazy %s %llu %u %u", in->target,
                     (unsigned long long)in->round, in->segment, in->step);
    gd_sha256(out->digest, what, n > 0 ? (size_t)n : 0);
    return GD_OK;
}

gd_status gd_adv_unavailable_check(gd_engine *e, const gd_check_input *in,
                                   const gd_check_evidence *ev, const gd_global_state *g,
                                   gd_check_answer *out) {
    (void)e;
    (void)in;
    (void)ev;
    (void)g;
    memset(out, 0, sizeof *out);
    out->verdict = GD_VERDICT_UNAVAILABLE;
    return GD_OK;
}
