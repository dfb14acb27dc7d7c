// What <mma.h> gives the kernels, for the emulator (README.md): the warp
// matrix functions (nvcuda::wmma) at the one shape and types the kernels
// use, 16 x 16 x 16 with bf16 operands and float accumulators.
//
// On a GPU a fragment is spread over the 32 lanes of a warp and each call
// is collective. Here every thread of the warp holds the whole tile and
// computes it alone, so each lane's fragment is the full matrix and the
// kernels must not read a fragment's elements (the GPU's mapping of
// elements to lanes is unspecified anyway). A product is summed in float
// in k order; a tensor core's order and intermediate rounding are its
// own, so an emulated result is near a GPU's, not equal to it.
//
// What a GPU would fault on or silently misread stops the process: a
// pointer not 256-bit aligned, or a leading dimension not a multiple of
// 16 bytes.
#ifndef GD_CUDA_EMU_MMA_H
#define GD_CUDA_EMU_MMA_H

#include <stdint.h>
#include <string.h>

#include <type_traits>

#include <cuda_bf16.h>

#include "tests/cuda_emu/emu.h"

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
class fragment {
    static_assert(M == 16 && N == 16 && K == 16, "the emulator has the 16 x 16 x 16 shape only");

  public:
    enum { num_elements = 256 };
    float v[16][16]; // the tile as the matrix it is: v[row][column]
};

namespace detail {

inline void check_pointer(const void *p, unsigned ldm, size_t element, const char *what) {
    if ((uintptr_t)p % 32 != 0)
        gd_emu_fail("wmma::%s: pointer %p is not 256-bit aligned", what, p);
    if (ldm * element % 16 != 0)
        gd_emu_fail("wmma::%s: leading dimension %u is not a multiple of 16 bytes", what, ldm);
}

inline float widen(const __nv_bfloat16 &h) {
    uint32_t u = (uint32_t)h.__x << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// Element (r, c) of a matrix stored from p with leading dimension ldm.
template <typename T>
inline const T &at(const T *p, unsigned ldm, bool row_major, int r, int c) {
    return row_major ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r];
}

} // namespace detail

template <typename Use, typename Layout>
inline void load_matrix_sync(fragment<Use, 16, 16, 16, __nv_bfloat16, Layout> &f,
                             const __nv_bfloat16 *p, unsigned ldm) {
    detail::check_pointer(p, ldm, sizeof *p, "load_matrix_sync");
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            f.v[r][c] = detail::widen(detail::at(p, ldm, std::is_same_v<Layout, row_major>, r, c));
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float> &f, const float *p,
                             unsigned ldm, layout_t layout) {
    detail::check_pointer(p, ldm, sizeof *p, "load_matrix_sync");
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            f.v[r][c] = detail::at(p, ldm, layout == mem_row_major, r, c);
}

inline void store_matrix_sync(float *p, const fragment<accumulator, 16, 16, 16, float> &f,
                              unsigned ldm, layout_t layout) {
    detail::check_pointer(p, ldm, sizeof *p, "store_matrix_sync");
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            (layout == mem_row_major ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r]) =
                f.v[r][c];
}

template <typename Use, typename T, typename Layout>
inline void fill_fragment(fragment<Use, 16, 16, 16, T, Layout> &f, float value) {
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            f.v[r][c] = value;
}

// d = a b + c; d may be c.
template <typename LayoutA, typename LayoutB>
inline void mma_sync(fragment<accumulator, 16, 16, 16, float> &d,
                     const fragment<matrix_a, 16, 16, 16, __nv_bfloat16, LayoutA> &a,
                     const fragment<matrix_b, 16, 16, 16, __nv_bfloat16, LayoutB> &b,
                     const fragment<accumulator, 16, 16, 16, float> &c) {
    float out[16][16];
    for (int r = 0; r < 16; r++)
        for (int col = 0; col < 16; col++) {
            float s = c.v[r][col];
            for (int k = 0; k < 16; k++)
                s += a.v[r][k] * b.v[k][col];
            out[r][col] = s;
        }
    memcpy(d.v, out, sizeof out);
}

} // namespace wmma
} // namespace nvcuda

#endif
