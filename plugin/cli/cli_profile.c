/* The op profile, printed (see plugin/cli/cli_profile.h). */
#include "plugin/cli/cli_profile.h"

/* The step's time outside every timed op: the host's own work (reading
 * batches, the trainer's loop), collectives, and the profile's clock. */
static double gd_profile_outside(const gd_backend_profile *p, size_t steps, double step_s) {
    double outside = step_s - gd_backend_profile_total(p) / (double)steps;
    return outside > 0 ? outside : 0;
}

void gd_profile_print(FILE *out, const gd_backend_profile *p, size_t steps, double step_s) {
    double step_ms = step_s * 1e3;
    fprintf(out,
            "  profile         %.1f ms per step over %zu steps, each op synchronized "
            "(rank 0)\n"
            "    %-24s %-13s %8s %9s %7s %9s\n",
            step_ms, steps, "op", "in x out", "calls", "ms", "share", "GFLOP/s");
    for (size_t i = 0; i < p->n; i++) {
        const gd_profile_entry *e = &p->entries[i];
        char shape[32] = "";
        if (e->in_dim || e->out_dim)
            snprintf(shape, sizeof shape, "%zux%zu", e->in_dim, e->out_dim);
        double ms = e->seconds * 1e3 / (double)steps;
        fprintf(out, "    %-24s %-13s %8.1f %9.2f %6.1f%%", gd_op_name(e->op), shape,
                (double)e->calls / (double)steps, ms, 100 * ms / step_ms);
        if (e->flops > 0 && e->seconds > 0)
            fprintf(out, " %9.1f", e->flops / e->seconds * 1e-9);
        fputc('\n', out);
    }
    double other = p->overflow_seconds * 1e3 / (double)steps;
    if (p->overflow_calls > 0)
        fprintf(out, "    %-24s %-13s %8s %9.2f %6.1f%%\n", "(shapes beyond the table)", "",
                "", other, 100 * other / step_ms);
    double outside = gd_profile_outside(p, steps, step_s) * 1e3;
    fprintf(out, "    %-24s %-13s %8s %9.2f %6.1f%%\n", "(outside the ops)", "", "", outside,
            100 * outside / step_ms);
}

json_t *gd_profile_json(const gd_backend_profile *p, size_t steps, double step_s) {
    json_t *ops = json_array();
    for (size_t i = 0; ops != NULL && i < p->n; i++) {
        const gd_profile_entry *e = &p->entries[i];
        double ms = e->seconds * 1e3 / (double)steps;
        json_t *gflops = e->flops > 0 && e->seconds > 0
                             ? json_real(e->flops / e->seconds * 1e-9)
                             : json_null();
        if (json_array_append_new(
                ops, json_pack("{s:s,s:I,s:I,s:f,s:f,s:f,s:o}", "op", gd_op_name(e->op),
                               "in_dim", (json_int_t)e->in_dim, "out_dim",
                               (json_int_t)e->out_dim, "calls",
                               (double)e->calls / (double)steps, "ms", ms, "share",
                               ms / (step_s * 1e3), "gflops", gflops)) != 0) {
            json_decref(ops);
            return NULL;
        }
    }
    if (ops == NULL)
        return NULL;
    return json_pack("{s:I,s:f,s:f,s:o}", "steps", (json_int_t)steps, "step_ms", step_s * 1e3,
                     "outside_ms", gd_profile_outside(p, steps, step_s) * 1e3, "ops", ops);
}
