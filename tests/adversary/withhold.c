/* The withholder (tests/adversary/adversary.h): it trains and commits
 * honestly and serves its payload (so it is reported and included), but
 * never its segment-start states, so nobody can re-execute its segments.
 * Its validators answer UNAVAILABLE; the re-checkers try the fetch
 * themselves and cannot either: an upheld accusation, cheat_slash and
 * suspension (docs/verification.md, "Withholding"). */
#include "tests/adversary/adversary.h"

bool gd_adv_withhold_states(const gd_artifact_req *req) {
    return req->kind == GD_REQ_STATE || req->kind == GD_REQ_STATE_CHUNK;
}
