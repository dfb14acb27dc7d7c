/* What decides the bits of the CPU backend's results, as one string: the
 * processor (its architecture and model), the BLAS build and the core it
 * picked, the compiler, and this program's version. Re-execution is
 * bit-exact only between hosts whose strings are equal, so a node derives
 * its hardware class from it (`hardware_class: auto`). */
#ifndef GD_KERNELS_CPU_IDENTITY_H
#define GD_KERNELS_CPU_IDENTITY_H

#include <stddef.h>

#include "common/status.h"

/* Writes the identity into out (at least 512 bytes), e.g.
 * "arch=x86_64; cpu=AMD EPYC; blas=OpenBLAS 0.3.21 ... Zen; core=Zen;
 *  cc=12.2.0". */
gd_status gd_cpu_identity(char *out, size_t cap) GD_MUST_CHECK;

#endif
