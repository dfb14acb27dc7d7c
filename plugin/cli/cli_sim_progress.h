/* sim's progress on stderr (trainer/sim.h's phase watch): a warm start or a
 * baseline can run for minutes without a round line, so every phase shows
 * where it stands, its elapsed time and an estimate of what is left. On a
 * terminal one line redraws itself; piped, plain lines go out at each
 * phase's start and end and every few seconds between, each flushed. */
#ifndef GD_PLUGIN_CLI_CLI_SIM_PROGRESS_H
#define GD_PLUGIN_CLI_CLI_SIM_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trainer/sim.h"

typedef struct gd_sim_progress_line {
    FILE *f;
    bool tty;          /* redraw one line in place */
    bool drawn;        /* tty: a line is on the screen now */
    int phase;         /* the phase shown, -1 before the first */
    uint32_t rounds;   /* the simulation's R, for "round r/R" */
    double phase_start, last_print;
} gd_sim_progress_line;

/* f is stderr (or a test's stream); tty decides the form. */
void gd_sim_progress_init(gd_sim_progress_line *line, FILE *f, bool tty, uint32_t rounds);

/* The watch function: ctx is the gd_sim_progress_line. */
void gd_sim_progress_update(void *ctx, const gd_sim_phase_progress *p);

/* Erases a redrawn line, before stdout writes to the same terminal and at
 * the end; plain lines need nothing. */
void gd_sim_progress_clear(gd_sim_progress_line *line);

#endif
