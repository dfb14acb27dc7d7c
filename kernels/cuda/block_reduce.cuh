// Block-wide reductions in a fixed order, for the kernels that reduce a row
// in one block: each thread's strided partial, then a halving tree in shared
// memory, so a sum's bits never depend on how the threads were scheduled.
// Threads is the block size, a power of two; shared holds Threads values.
// Every thread of the block must call them, and every thread gets the result.
#ifndef GD_KERNELS_CUDA_BLOCK_REDUCE_CUH
#define GD_KERNELS_CUDA_BLOCK_REDUCE_CUH

template <int Threads>
__device__ double gd_block_sum(double v, double *shared) {
    static_assert((Threads & (Threads - 1)) == 0, "the block size must be a power of two");
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = Threads / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    double total = shared[0];
    __syncthreads();
    return total;
}

template <int Threads>
__device__ float gd_block_max(float v, float *shared) {
    static_assert((Threads & (Threads - 1)) == 0, "the block size must be a power of two");
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int s = Threads / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    float m = shared[0];
    __syncthreads();
    return m;
}

#endif
