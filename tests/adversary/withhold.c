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
 * re-checkers too: upheld, cheat_slash and suspension. */
#include "tests/adversary/adversary.h"

bool gd_adv_withhold_states(const gd_artifact_req *req) {
    return req->kind == GD_REQ_STATE || req->kind == GD_REQ_STATE_CHUNK;
}

bool gd_adv_withhold_payload(const gd_artifact_req *req) { return req->kind == GD_REQ_PAYLOAD; }
