/* The round's timeline model (trainer/timeline.h): a round worked by hand,
 * what each input moves, and refusals. */
#include <math.h>
#include <string.h>

#include "tests/support/testkit.h"
#include "trainer/timeline.h"

/* One million parameters, a 1 MB payload, three workers, H 10, K 5, one
 * segment check; a step a second, 1 MB/s each way, disk and hash at
 * 1 MB/s, coding at 4 MB/s, one-second blocks. By hand: training ends at
 * 10 s; each segment start takes 12 s to write and 12 s to hash, the two
 * one after another (24 and 48 s), so the seal (encoding 1 s, the final
 * state hashed 16 s and written with the payload 17 s: to 44 s) waits for
 * the second, to 48 s; commit 49; the exchange of two payloads each way
 * 51; aggregation decodes three payloads, 3 s, to 54; verification
 * downloads a segment start (12 s) and re-executes 5 steps, to 68;
 * settling takes ten blocks, to 78. */
static gd_timeline_input hand(void) {
    return (gd_timeline_input){.params = 1000000, .payload_bytes = 1000000, .workers = 3,
                               .inner_steps = 10, .segment_steps = 5, .checks = 1,
                               .step_s = 1, .link_mbps = 8, .rtt_ms = 0, .disk_mbps = 1,
                               .hash_mbps = 1, .code_mbps = 4, .block_s = 1};
}

static void test_by_hand(void) {
    gd_timeline_input in = hand();
    gd_timeline t;
    CHECK_OK(gd_timeline_compute(&t, &in));
    static const struct {
        const char *name;
        double start, end;
    } want[GD_TIMELINE_PHASES] = {{"train", 0, 10},      {"seal", 10, 48},
                                  {"commit", 48, 49},    {"exchange", 49, 51},
                                  {"aggregate", 51, 54}, {"verify", 51, 68},
                                  {"settle", 68, 78}};
    for (int i = 0; i < GD_TIMELINE_PHASES; i++) {
        CHECK(strcmp(t.phases[i].name, want[i].name) == 0);
        CHECK(fabs(t.phases[i].start_s - want[i].start) < 1e-9);
        CHECK(fabs(t.phases[i].end_s - want[i].end) < 1e-9);
    }
    CHECK(fabs(t.round_s - 78) < 1e-9);
    CHECK(fabs(t.utilization - 10.0 / 78) < 1e-12);
    CHECK(t.bytes_up == 14e6 && t.bytes_down == 14e6);
}

/* Each input moves what it should: a faster link shortens the exchange
 * and verification, one worker exchanges nothing, no checks download
 * nothing, a faster disk ends the seal at training's end plus its own
 * work, and a longer step raises the share spent training. */
static void test_what_moves(void) {
    gd_timeline base, t;
    gd_timeline_input in = hand();
    CHECK_OK(gd_timeline_compute(&base, &in));
    in.link_mbps = 80;
    CHECK_OK(gd_timeline_compute(&t, &in));
    CHECK(t.phases[3].end_s - t.phases[3].start_s < base.phases[3].end_s - base.phases[3].start_s);
    CHECK(t.round_s < base.round_s && t.bytes_up == base.bytes_up);
    in = hand();
    in.workers = 1;
    CHECK_OK(gd_timeline_compute(&t, &in));
    CHECK(t.phases[3].end_s == t.phases[3].start_s && t.bytes_up == 12e6);
    in = hand();
    in.checks = 0;
    CHECK_OK(gd_timeline_compute(&t, &in));
    CHECK(t.bytes_down == 2e6 && t.phases[5].end_s == t.phases[5].start_s);
    in = hand();
    in.disk_mbps = 1e6;
    in.hash_mbps = 1e6;
    CHECK_OK(gd_timeline_compute(&t, &in));
    CHECK(fabs(t.phases[1].end_s - (10 + 1 + 16e-6 + 17e-6)) < 1e-9); /* writes kept up */
    in = hand();
    in.step_s = 100;
    CHECK_OK(gd_timeline_compute(&t, &in));
    CHECK(t.utilization > base.utilization);
}

static void test_refusals(void) {
    gd_timeline t;
    gd_timeline_input in = hand();
    in.segment_steps = 3;
    CHECK_STATUS(gd_timeline_compute(&t, &in), GD_ERR_INVALID);
    in = hand();
    in.link_mbps = 0;
    CHECK_STATUS(gd_timeline_compute(&t, &in), GD_ERR_INVALID);
    in = hand();
    in.step_s = NAN;
    CHECK_STATUS(gd_timeline_compute(&t, &in), GD_ERR_INVALID);
    in = hand();
    in.rtt_ms = -1;
    CHECK_STATUS(gd_timeline_compute(&t, &in), GD_ERR_INVALID);
    in = hand();
    in.workers = 0;
    CHECK_STATUS(gd_timeline_compute(&t, &in), GD_ERR_INVALID);
}

int main(void) {
    RUN_TEST(test_by_hand);
    RUN_TEST(test_what_moves);
    RUN_TEST(test_refusals);
    return gd_test_finish();
}
