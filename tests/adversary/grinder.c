/* grinder (the red-team review's sixth attack), played through the
 * member's duty seam (gd_member_duty_fn): trains, reports, validates and
 * attests like an honest member, seals its secret for every round, and
 * never reveals it. A member that reveals last can withhold to choose
 * between the seed with its secret and the seed without; whichever seed it
 * would have preferred, what the chain takes is the same: the run's
 * withhold_slash for each sealed secret not revealed by verify start, so
 * this grinder pays every round what a grinding one pays when it withholds
 * (docs/verification.md, "Seed grinding"). */
#include "tests/adversary/adversary.h"

bool gd_adv_grinder(const gd_action *a, const char *address, uint64_t run,
                    const Gonka__Diloco__V1__QueryRoundResponse *round, gd_any *msg,
                    bool *sent) {
    (void)address;
    (void)run;
    (void)round;
    (void)msg;
    *sent = false;
    /* Its seals go out as the member's own: only the reveal is kept back. */
    return a->kind == GD_ACT_REVEAL_SECRET;
}
