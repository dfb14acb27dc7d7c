// What nvcc gives a .cu file, for the emulator (tests/cuda_emu/README.md):
// forced into every kernel file compiled as host C++ (translate.sh turns
// each launch into gd_emu::launcher(...)(args)). The qualifiers vanish,
// __shared__ memory is one copy per block (blocks run one at a time on a
// host thread), and the built-in indices read the emulator's.
#ifndef GD_CUDA_EMU_DEVICE_H
#define GD_CUDA_EMU_DEVICE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

#include <cuda_runtime_api.h>

#include "tests/cuda_emu/emu.h"

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static thread_local
#define threadIdx gd_emu_thread_idx
#define blockIdx gd_emu_block_idx
#define blockDim gd_emu_block_dim
#define gridDim gd_emu_grid_dim
#define __syncthreads() gd_emu_syncthreads()

// Rounded double arithmetic: the kernels that need it are built without
// contraction (-ffp-contract=off), so a plain operation rounds once.
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }

// A float's bits and back, as the reinterpreting intrinsics give them.
inline unsigned __float_as_uint(float f) {
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}
inline float __uint_as_float(unsigned u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

namespace gd_emu {

// Whether a kernel may write through an argument of type T: a pointer not
// to const (the stream order counts it a write).
template <typename T>
constexpr bool writes_through() {
    if constexpr (std::is_pointer_v<T>)
        return !std::is_const_v<std::remove_pointer_t<T>>;
    else
        return false;
}

template <typename T>
const void *pointer_of(const T &v) {
    if constexpr (std::is_pointer_v<T>)
        return (const void *)v;
    else
        return nullptr;
}

template <typename... P>
struct launcher {
    void (*kernel)(P...);
    const char *name;
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;

    template <typename... A>
    void operator()(A &&...a) const {
        static_assert(sizeof...(A) == sizeof...(P), "a kernel launched with the wrong arguments");
        struct call {
            void (*kernel)(P...);
            std::tuple<P...> args;
        } c{kernel, std::tuple<P...>(std::forward<A>(a)...)};
        const void *pointers[sizeof...(P) + 1] = {};
        const bool writes[sizeof...(P) + 1] = {writes_through<P>()...};
        fill(pointers, c.args, std::index_sequence_for<P...>{});
        gd_emu_launch(
            name, [](void *p) { auto *k = static_cast<call *>(p); std::apply(k->kernel, k->args); },
            &c, gd_emu_dim{grid.x, grid.y, grid.z}, gd_emu_dim{block.x, block.y, block.z}, shared,
            stream, pointers, writes, sizeof...(P));
    }

  private:
    template <size_t... I>
    static void fill(const void **out, const std::tuple<P...> &args, std::index_sequence<I...>) {
        ((out[I] = pointer_of(std::get<I>(args))), ...);
    }
};

template <typename... P>
launcher<P...> launch(void (*kernel)(P...), const char *name, dim3 grid, dim3 block,
                      size_t shared = 0, cudaStream_t stream = nullptr) {
    return launcher<P...>{kernel, name, grid, block, shared, stream};
}

}  // namespace gd_emu

#endif
