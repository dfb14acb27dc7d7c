/* Secret hygiene: wiping memory the compiler may not optimise away, and
 * reading the kernel's random generator. */
#ifndef GD_COMMON_SECURE_H
#define GD_COMMON_SECURE_H

#include <stddef.h>

#include "common/status.h"

/* Overwrites len bytes at p with zeros; never elided by the optimiser. */
void gd_wipe(void *p, size_t len);

/* Fills buf with len bytes from getrandom(2), blocking until the pool is
 * initialised. Returns GD_ERR_CRYPTO if the kernel refuses. */
gd_status gd_random_bytes(void *buf, size_t len) GD_MUST_CHECK;

#endif
