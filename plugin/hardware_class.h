/* The hardware class a node declares when `hardware_class: auto`: its
 * backend and architecture with a digest of everything that decides the
 * bits of its results (kernels/cpu/identity.h), so that two hosts share a
 * class exactly when re-execution is bit-exact between them. */
#ifndef GD_PLUGIN_HARDWARE_CLASS_H
#define GD_PLUGIN_HARDWARE_CLASS_H

#include <stddef.h>

#include "common/status.h"

#define GD_HARDWARE_CLASS_MAX 128

/* "cpu-ARCH-" and the first 16 hex digits of SHA-256 of the identity; the
 * identity itself into identity (cap >= 512) when not NULL. */
gd_status gd_hardware_class_auto(char out[GD_HARDWARE_CLASS_MAX + 1], char *identity,
                                 size_t identity_cap) GD_MUST_CHECK;

#endif
