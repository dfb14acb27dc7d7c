/* The CPU backend's identity (kernels/cpu/identity.h). */
#include "kernels/cpu/identity.h"

#include <cblas.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

/* The first "model name" of /proc/cpuinfo (absent on some systems). */
static void gd_cpu_model(char *out, size_t cap) {
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (v == NULL)
            break;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(out, cap, "%s", v);
        size_t n = strlen(out);
        while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
            out[--n] = 0;
        break;
    }
    fclose(f);
}

gd_status gd_cpu_identity(char *out, size_t cap) {
    struct utsname u;
    if (uname(&u) != 0)
        snprintf(u.machine, sizeof u.machine, "unknown");
    char model[256];
    gd_cpu_model(model, sizeof model);
    const char *config = openblas_get_config(), *core = openblas_get_corename();
#ifdef __VERSION__
    const char *cc = __VERSION__;
#else
    const char *cc = "unknown";
#endif
    int n = snprintf(out, cap, "arch=%s; cpu=%s; blas=%s; core=%s; cc=%s", u.machine, model,
                     config ? config : "unknown", core ? core : "unknown", cc);
    if (n < 0 || (size_t)n >= cap)
        return gd_fail(GD_ERR_LIMIT, "the CPU identity does not fit %zu bytes", cap);
    return GD_OK;
}
