/* The emulator's inside (tests/cuda_emu/README.md), shared by its runtime,
 * its cuBLAS and its NCCL, and by the kernels' launch glue (device.h).
 *
 * Device work (a kernel, a copy, a GEMM, a transfer) runs between
 * gd_emu_device_enter and gd_emu_device_leave: one at a time in the whole
 * process, the only time device memory can be read or written, and only the
 * allocations it names (gd_emu_device_use). Misuse that
 * a GPU would punish with a fault or a hang (a host pointer handed to a
 * kernel, memory of another device, a copy past an allocation's end, an
 * unmatched send) stops the process with a message naming it. */
#ifndef GD_CUDA_EMU_EMU_H
#define GD_CUDA_EMU_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gd_emu_dim {
    unsigned x, y, z;
} gd_emu_dim;

/* The running thread's indices, as threadIdx and friends read them. Every
 * kernel thread reads them, so they take the quick thread-local model. */
#ifdef __cplusplus
#define GD_EMU_TLS thread_local __attribute__((tls_model("initial-exec")))
#else
#define GD_EMU_TLS _Thread_local __attribute__((tls_model("initial-exec")))
#endif
extern GD_EMU_TLS gd_emu_dim gd_emu_thread_idx, gd_emu_block_idx, gd_emu_block_dim,
    gd_emu_grid_dim;

/* Prints "cuda emulator: ..." and aborts: the misuse would fault a GPU. */
__attribute__((noreturn, format(printf, 1, 2))) void gd_emu_fail(const char *fmt, ...);

void gd_emu_device_enter(void);
void gd_emu_device_leave(void);

/* The device of the allocation holding [p, p + bytes), which stays
 * readable and writable until gd_emu_device_leave; -1 when that range is
 * not inside one allocation. Only between enter and leave. */
int gd_emu_device_use(const void *p, size_t bytes);

/* The calling thread's current device (cudaSetDevice). */
int gd_emu_current_device(void);

/* The device a stream belongs to (the current one for the default stream);
 * -1 when the handle is not a live stream. */
int gd_emu_stream_device(cudaStream_t stream);

/* Runs kernel body over grid x block threads, each thread a fiber of its
 * block, so __syncthreads (gd_emu_syncthreads) is a real barrier. pointers
 * holds n_args entries: the kernel's pointer arguments (NULL for the others
 * and for null pointers), each checked to lie in the current device's
 * memory; writes[i] says whether argument i may be written (not a pointer
 * to const), for the stream order. A bad configuration sets the thread's last error, as CUDA does. */
void gd_emu_launch(const char *kernel, void (*body)(void *), void *ctx, gd_emu_dim grid,
                   gd_emu_dim block, size_t dynamic_shared, cudaStream_t stream,
                   const void *const *pointers, const bool *writes, size_t n_args);

void gd_emu_syncthreads(void);

/* Sets the thread's last error (cudaGetLastError) and returns it. */
cudaError_t gd_emu_error(cudaError_t e);

/* The stream order (order.c). Streams are numbered: 0 to
 * GD_EMU_DEFAULT_STREAMS - 1 are the devices' default streams, the others
 * come from gd_emu_order_stream_new. */
#define GD_EMU_STREAMS 64
#define GD_EMU_DEFAULT_STREAMS 16

/* What an allocation remembers: the op that last wrote it (stream writer,
 * that stream's op count written; 0: none) and the last op of each stream
 * that read it since. Zeroed: untouched. */
typedef struct gd_emu_order_mark {
    int writer;
    uint64_t written;
    uint64_t read[GD_EMU_STREAMS];
} gd_emu_order_mark;

int gd_emu_order_stream_new(void);
void gd_emu_order_stream_free(int stream); /* its number may serve a new stream */
/* A live stream's number (NULL: the current device's default stream). */
int gd_emu_stream_number(cudaStream_t stream);
/* An op on stream (what names it in a report) begins, inside device work;
 * its accesses follow, then gd_emu_order_op_end. */
void gd_emu_order_op(int stream, const char *what);
void gd_emu_order_access(gd_emu_order_mark *m, const void *p, bool write);
void gd_emu_order_op_end(void);
/* stream follows everything other has issued so far (a matched NCCL
 * receive follows its send). */
void gd_emu_order_follow(int stream, int other);
void gd_emu_order_record(uint64_t *event_clock, int stream); /* GD_EMU_STREAMS values */
void gd_emu_order_wait(int stream, const uint64_t *event_clock);
/* The host has waited for stream's work (-1: every stream's). */
void gd_emu_order_host_waits(int stream);

/* The running op's access to [p, p + bytes): as gd_emu_device_use, and
 * checked against the stream order (a write when write is set). */
int gd_emu_device_access(const void *p, size_t bytes, bool write);
/* Begins device work for one op on stream (gd_emu_device_enter, then
 * gd_emu_order_op); gd_emu_device_leave ends both. */
void gd_emu_op_enter(cudaStream_t stream, const char *what);

#ifdef __cplusplus
}
#endif

#endif
