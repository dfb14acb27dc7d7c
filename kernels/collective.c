/* Choosing a collective (kernels/collective.h). */
#include "kernels/collective.h"

#include <stdio.h>
#include <string.h>

#ifdef GD_HAVE_NCCL
#include "kernels/cuda/collective_nccl.h"
#endif

gd_status gd_collective_open(gd_collective *c, const gd_backend *ranks, size_t n, char *why,
                             size_t why_cap) {
    char reason[256] = "this build has no NCCL";
#ifdef GD_HAVE_NCCL
    gd_status s = gd_collective_nccl_open(c, ranks, n, reason, sizeof reason);
    if (s == GD_OK) {
        if (why != NULL)
            snprintf(why, why_cap, "nccl");
        return GD_OK;
    }
    if (s != GD_ERR_NOT_FOUND)
        return s;
#endif
    GD_TRY(gd_collective_host_open(c, ranks, n));
    if (why != NULL)
        snprintf(why, why_cap, "host (%s)", reason);
    return GD_OK;
}

void gd_collective_close(gd_collective *c) {
    if (c == NULL || c->iface == NULL)
        return;
    c->iface->close(c);
    memset(c, 0, sizeof *c);
}
