/* hardware_class: auto (plugin/member/hardware_class.h). */
#include "plugin/member/hardware_class.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/bytes.h"
#include "common/hash.h"
#include "kernels/backend_registry.h"

gd_status gd_hardware_class_auto(char out[GD_HARDWARE_CLASS_MAX + 1], const char *backend,
                                 char *identity, size_t identity_cap) {
    const char *name = gd_backend_resolve(backend);
    char id[1024];
    GD_TRY(gd_backend_identity(id, sizeof id, name));
    bool cpu = strcmp(name, "cpu") == 0;
    uint8_t digest[32];
    gd_sha256(digest, id, strlen(id));
    char hex[65];
    gd_hex_encode(hex, digest, sizeof digest, false);
    if (cpu) {
        struct utsname u;
        if (uname(&u) != 0)
            snprintf(u.machine, sizeof u.machine, "unknown");
        /* The class must be printable without spaces (the run spec's rule). */
        for (char *c = u.machine; *c; c++)
            if (*c < 0x21 || *c > 0x7e)
                *c = '_';
        snprintf(out, GD_HARDWARE_CLASS_MAX + 1, "cpu-%.32s-%.16s", u.machine, hex);
    } else {
        /* The GPU's model and everything else is in the digest. */
        snprintf(out, GD_HARDWARE_CLASS_MAX + 1, "%.16s-%.16s", name, hex);
    }
    if (identity != NULL) {
        if (strlen(id) >= identity_cap)
            return gd_fail(GD_ERR_LIMIT, "the identity does not fit %zu bytes", identity_cap);
        strcpy(identity, id);
    }
    return GD_OK;
}
