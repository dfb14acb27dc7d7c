/* A model of one round's wall time (trainer/timeline.h). */
#include "trainer/timeline.h"

#include <math.h>
#include <stdbool.h>

/* Bytes of a state a parameter: what a segment check downloads and a
 * segment start keeps and hashes (parameters and both moments: the
 * residual does not change while training), and a whole worker state
 * (with the residual, which the encoding changes): docs/verification.md. */
#define GD_TIMELINE_SEGMENT_BYTES 12.0
#define GD_TIMELINE_STATE_BYTES 16.0
/* The windows after verify at their least: five of two blocks. */
#define GD_TIMELINE_SETTLE_BLOCKS 10.0

static bool gd_rate_ok(double x) {
    return isfinite(x) && x > 0;
}

static void gd_phase(gd_timeline *t, int i, const char *name, double start_s, double end_s) {
    t->phases[i] = (gd_timeline_phase){name, start_s, end_s};
}

gd_status gd_timeline_compute(gd_timeline *out, const gd_timeline_input *in) {
    const struct {
        const char *name;
        double value;
    } rates[] = {{"step time", in->step_s},   {"link", in->link_mbps},
                 {"disk rate", in->disk_mbps}, {"hash rate", in->hash_mbps},
                 {"coding rate", in->code_mbps}, {"block time", in->block_s}};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (!gd_rate_ok(rates[i].value))
            return gd_fail(GD_ERR_INVALID, "timeline: the %s must be positive and finite",
                           rates[i].name);
    if (!isfinite(in->rtt_ms) || in->rtt_ms < 0)
        return gd_fail(GD_ERR_INVALID, "timeline: the round trip must be at least 0");
    if (in->params == 0 || in->workers == 0 || in->inner_steps == 0 || in->segment_steps == 0 ||
        in->inner_steps % in->segment_steps != 0)
        return gd_fail(GD_ERR_INVALID, "timeline: parameters, workers and H must be at least 1 "
                                       "and K must divide H");
    gd_timeline t = {0};
    double P = (double)in->params, W = in->workers, payload = (double)in->payload_bytes;
    double link_Bps = in->link_mbps * 1e6 / 8, rtt = in->rtt_ms / 1e3;
    double disk = in->disk_mbps * 1e6, hash = in->hash_mbps * 1e6, code = in->code_mbps * 1e6;
    double K = in->segment_steps, S = (double)in->inner_steps / K;

    /* Training, with each segment start hashed and written after the one
     * before, from the step that reaches it. */
    double train_end = in->inner_steps * in->step_s;
    double keep = GD_TIMELINE_SEGMENT_BYTES * P / disk + GD_TIMELINE_SEGMENT_BYTES * P / hash;
    double kept = 0;
    for (double i = 0; i < S; i++)
        kept = fmax(kept, i * K * in->step_s) + keep;
    gd_phase(&t, 0, "train", 0, train_end);

    double encode = 4 * P / code;
    double final = GD_TIMELINE_STATE_BYTES * P / hash +
                   (GD_TIMELINE_STATE_BYTES * P + payload) / disk;
    double seal_end = fmax(kept, train_end + encode + final);
    gd_phase(&t, 1, "seal", train_end, seal_end);
    double commit_end = seal_end + in->block_s;
    gd_phase(&t, 2, "commit", seal_end, commit_end);

    double peers = (W - 1) * payload;
    double exchange_end = commit_end + (W > 1 ? rtt + peers / link_Bps : 0);
    gd_phase(&t, 3, "exchange", commit_end, exchange_end);
    double aggregate_end = exchange_end + W * 4 * P / code;
    gd_phase(&t, 4, "aggregate", exchange_end, aggregate_end);
    double states = in->checks * GD_TIMELINE_SEGMENT_BYTES * P;
    double verify_end = exchange_end + (in->checks ? rtt + states / link_Bps : 0) +
                        in->checks * K * in->step_s;
    gd_phase(&t, 5, "verify", exchange_end, verify_end);
    double settle_start = fmax(aggregate_end, verify_end);
    gd_phase(&t, 6, "settle", settle_start, settle_start + GD_TIMELINE_SETTLE_BLOCKS * in->block_s);

    t.round_s = t.phases[6].end_s;
    t.bytes_up = peers + states;
    t.bytes_down = peers + states;
    t.utilization = train_end / t.round_s;
    *out = t;
    return GD_OK;
}
