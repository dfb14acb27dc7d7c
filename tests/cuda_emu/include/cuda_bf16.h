// What <cuda_bf16.h> gives the kernels, for the emulator (README.md): the
// bfloat16 type as its 16-bit code. The kernels make their codes with the
// project's own rounding (kernels/cpu/codec_ops.h, gd_bf16_code), so only
// the type is needed here.
#ifndef GD_CUDA_EMU_CUDA_BF16_H
#define GD_CUDA_EMU_CUDA_BF16_H

#include <stdint.h>

struct __nv_bfloat16 {
    uint16_t __x;
};

#endif
