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
 * not, the check passes, and its bond (fail_bond) is burned each time.
 *
 * The framer (the red-team review's first attack, one member of the
 * coalition) answers every check and re-check FAIL, with a made-up digest:
 * under protocol v3 the class decides by weight, and its FAILs never
 * uphold anything against an honest target; each pays the cheat slash.
 *
 * The early passer (the review's third) does not re-execute the segment: it
 * answers PASS with the digest it can make without doing so, the segment
 * end's leaf (public, from the transcript it fetched) and a trace of the
 * steps it ran, none. The target's own digest contradicts it. */
#include <stdio.h>
#include <string.h>

#include "common/hash.h"
#include "proofs/diloco_rules.h"
#include "tests/adversary/adversary.h"
#include "trainer/state.h"

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

gd_status gd_adv_framer_check(gd_engine *e, const gd_check_input *in, const gd_check_evidence *ev,
                              const gd_global_state *g, gd_check_answer *out) {
    GD_TRY(gd_adv_lazy_check(e, in, ev, g, out));
    out->verdict = GD_VERDICT_FAIL;
    snprintf(out->why, sizeof out->why, "framed");
    return GD_OK;
}

gd_status gd_adv_pass_early_check(gd_engine *e, const gd_check_input *in,
                                  const gd_check_evidence *ev, const gd_global_state *g,
                                  gd_check_answer *out) {
    (void)g;
    memset(out, 0, sizeof *out);
    out->verdict = GD_VERDICT_PASS;
    size_t at = (size_t)(in->segment + 1) * GD_WORKER_DESC_BYTES;
    if (ev->transcript.len < at + GD_WORKER_DESC_BYTES)
        return gd_fail(GD_ERR_PARSE, "the transcript has no leaf %u", in->segment + 1);
    gd_worker_desc end;
    GD_TRY(gd_worker_desc_decode(&end, ev->transcript.data + at, GD_WORKER_DESC_BYTES));
    uint8_t end_hash[32], trace[32];
    gd_worker_desc_hash(&end, end_hash);
    gd_diloco_trace_begin(trace);
    gd_diloco_verdict_digest(out->digest, e->rc.diloco.run, in->round, in->target, in->segment,
                             trace, end_hash);
    return GD_OK;
}
