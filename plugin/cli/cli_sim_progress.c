/* sim's progress lines (plugin/cli/cli_sim_progress.h). */
#include "plugin/cli/cli_sim_progress.h"

#include <inttypes.h>
#include <math.h>

#include "common/clock.h"

#define GD_SIM_REDRAW_S 0.1 /* a terminal line redraws at most this often */
#define GD_SIM_LINE_S 5.0   /* piped: seconds between plain lines within a phase */

static const char *const gd_sim_phase_names[GD_SIM_PHASE_COUNT] = {
    "warm start", "evaluation of G_0", "DiLoCo rounds", "DDP baseline", "local baseline"};

/* "42.0 s" or "3 min 05 s". */
static void gd_sim_duration(char *out, size_t cap, double seconds) {
    if (!(seconds >= 0))
        seconds = 0;
    if (seconds < 60)
        snprintf(out, cap, "%.1f s", seconds);
    else
        snprintf(out, cap, "%.0f min %02.0f s", floor(seconds / 60), fmod(floor(seconds), 60));
}

/* What the phase is at: "DiLoCo rounds: round 3/10, 25%" and the like. */
static void gd_sim_where(char *out, size_t cap, const gd_sim_phase_progress *p,
                         uint32_t rounds) {
    const char *name = gd_sim_phase_names[p->phase];
    double pct = p->total ? 100.0 * (double)p->done / (double)p->total : 100.0;
    if (p->phase == GD_SIM_PHASE_ROUNDS)
        snprintf(out, cap, "%s: round %u/%u, %.0f%%", name, p->round + 1, rounds, pct);
    else
        snprintf(out, cap, "%s: %" PRIu64 "/%" PRIu64 ", %.0f%%", name, p->done, p->total, pct);
}

void gd_sim_progress_init(gd_sim_progress_line *line, FILE *f, bool tty, uint32_t rounds) {
    *line = (gd_sim_progress_line){.f = f, .tty = tty, .phase = -1, .rounds = rounds};
}

void gd_sim_progress_clear(gd_sim_progress_line *line) {
    if (line->tty && line->drawn) {
        fputs("\r\033[K", line->f);
        fflush(line->f);
        line->drawn = false;
    }
}

void gd_sim_progress_update(void *ctx, const gd_sim_phase_progress *p) {
    gd_sim_progress_line *line = ctx;
    if ((int)p->phase < 0 || p->phase >= GD_SIM_PHASE_COUNT)
        return;
    double now = gd_clock_seconds();
    bool start = (int)p->phase != line->phase, end = p->done >= p->total;
    if (start) {
        line->phase = (int)p->phase;
        line->phase_start = now;
    }
    double gap = line->tty ? GD_SIM_REDRAW_S : GD_SIM_LINE_S;
    /* The first unit done gives the first estimate: always shown. */
    if (!start && !end && p->done != 1 && now - line->last_print < gap)
        return;
    line->last_print = now;
    double elapsed = now - line->phase_start;
    char where[160], took[40], left[40];
    gd_sim_duration(took, sizeof took, elapsed);
    left[0] = '?';
    left[1] = '\0';
    if (p->done > 0) {
        left[0] = '~';
        gd_sim_duration(left + 1, sizeof left - 1,
                        elapsed / (double)p->done * (double)(p->total - p->done));
    }
    gd_sim_where(where, sizeof where, p, line->rounds);
    const char *erase = line->tty ? "\r\033[K" : "";
    if (end)
        fprintf(line->f, "%ssim: %s done in %s\n", erase, gd_sim_phase_names[p->phase], took);
    else if (start && !line->tty)
        fprintf(line->f, "sim: %s ...\n", gd_sim_phase_names[p->phase]);
    else
        fprintf(line->f, "%ssim: %s | elapsed %s | remaining %s%s", erase, where, took, left,
                line->tty ? "" : "\n");
    line->drawn = line->tty && !end;
    fflush(line->f);
}
