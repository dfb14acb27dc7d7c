/* The hardware class a node declares when `hardware_class: auto`: its
 * backend and architecture with a digest of everything that decides the
 * bits of its results (the backend's identity: kernels/backend_registry.h),
 * so that two hosts share a class exactly when re-execution is bit-exact
 * between them. */
#ifndef GD_PLUGIN_MEMBER_HARDWARE_CLASS_H
#define GD_PLUGIN_MEMBER_HARDWARE_CLASS_H

#include <stddef.h>

#include "common/status.h"

#define GD_HARDWARE_CLASS_MAX 128

/* The class of this host on backend ("cpu", "cuda" or "auto"): "cpu-ARCH-"
 * or "cuda-" and the first 16 hex digits of SHA-256 of the backend's
 * identity; the identity itself into identity (cap >= 512) when not NULL.
 * A backend that cannot run here is GD_ERR_NOT_FOUND, with why. */
gd_status gd_hardware_class_auto(char out[GD_HARDWARE_CLASS_MAX + 1], const char *backend,
                                 char *identity, size_t identity_cap) GD_MUST_CHECK;

#endif
