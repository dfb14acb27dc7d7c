/* Withholders (tests/adversary/adversary.h). Both train and commit
 * honestly.
 *
 * withhold-states serves its payload (so it is reported and included), but
 * never its segment-start states, so nobody can re-execute its segments.
 * Its validators answer UNAVAILABLE; the re-checkers try the fetch
 * themselves and cannot either: an upheld accusation, cheat_slash and
 * suspension (docs/verification.md, "Withholding").
 *
 * withhold-payload serves single payload chunks, the ones an availability
 * proof names, but never the whole payload that aggregating needs, hoping
 * to be reported available and then starve the aggregators. A reporter
 * fetches and checks the whole payload before it reports, so nobody
 * reports it and it is left out of the inclusion and aggregation sets; its
 * validators cannot fetch the payload either and answer UNAVAILABLE, the
 * re-checkers too: upheld, cheat_slash and suspension.
 *
 * late-server answers 404 for its states until the round's dispute window
 * (attack 4 of the red-team review): its validators answer UNAVAILABLE,
 * the jury fetches and passes. The reporters' state samples show the
 * states were not served in the verify window, so the validators get their
 * bonds back and the late server pays the skip slash per such check
 * (docs/verification.md, "The red-team review").
 *
 * dripper serves everything, but its whole payload a burst now and then,
 * just above the peer client's rate floor (plugin/http/http_reply.c), so that
 * only the window's deadline ends those transfers (attack 5).
 * Fetching off the step keeps every other duty of an honest member on time:
 * no honest member misses a duty, and a payload that does not arrive in the
 * verify window is not reported by honest members, so it is not included
 * on a coalition's reports. */
#include "tests/adversary/adversary.h"

bool gd_adv_withhold_states(const gd_artifact_req *req, const gd_serve_clock *now) {
    (void)now;
    return req->kind == GD_REQ_STATE || req->kind == GD_REQ_STATE_CHUNK;
}

bool gd_adv_withhold_payload(const gd_artifact_req *req, const gd_serve_clock *now) {
    (void)now;
    return req->kind == GD_REQ_PAYLOAD;
}

bool gd_adv_late_server(const gd_artifact_req *req, const gd_serve_clock *now) {
    return (req->kind == GD_REQ_STATE || req->kind == GD_REQ_STATE_CHUNK) && now->have_round &&
           req->round == now->round && now->height < now->w.dispute_start;
}

bool gd_adv_drip(const gd_artifact_req *req, const gd_serve_clock *now) {
    (void)now;
    return req->kind == GD_REQ_PAYLOAD;
}
