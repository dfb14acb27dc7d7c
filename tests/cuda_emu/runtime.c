/* The emulated CUDA runtime (see tests/cuda_emu/emu.h and README.md):
 * devices, memory, streams, errors and kernel launches on the host. */
#include "tests/cuda_emu/emu.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* --- failures and errors --------------------------------------------------------------- */

void gd_emu_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cuda emulator: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

static _Thread_local cudaError_t gd_emu_last_error = cudaSuccess;

cudaError_t gd_emu_error(cudaError_t e) {
    if (e != cudaSuccess)
        gd_emu_last_error = e;
    return e;
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = gd_emu_last_error;
    gd_emu_last_error = cudaSuccess;
    return e;
}

const char *cudaGetErrorString(cudaError_t error) {
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    }
    return "unrecognized error code";
}

/* --- devices --------------------------------------------------------------------------- */

/* GD_CUDA_EMU_DEVICES (default 2, so the multi-GPU paths run) and
 * GD_CUDA_EMU_MEMORY_MB (per device, default 16384). */
static long gd_emu_env(const char *name, long fallback, long lo, long hi) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return fallback;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < lo || n > hi)
        gd_emu_fail("%s=%s: expected a whole number in [%ld, %ld]", name, v, lo, hi);
    return n;
}

#define GD_EMU_MAX_DEVICES 16

static int gd_emu_devices(void) {
    return (int)gd_emu_env("GD_CUDA_EMU_DEVICES", 2, 0, GD_EMU_MAX_DEVICES);
}

static _Thread_local int gd_emu_current = 0;

int gd_emu_current_device(void) {
    return gd_emu_current;
}

cudaError_t cudaGetDeviceCount(int *count) {
    *count = gd_emu_devices();
    return *count == 0 ? gd_emu_error(cudaErrorNoDevice) : cudaSuccess;
}

static bool gd_emu_device_valid(int device) {
    return device >= 0 && device < gd_emu_devices();
}

cudaError_t cudaSetDevice(int device) {
    if (!gd_emu_device_valid(device))
        return gd_emu_error(cudaErrorInvalidDevice);
    gd_emu_current = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
    *device = gd_emu_current;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
    if (!gd_emu_device_valid(device))
        return gd_emu_error(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "CUDA emulator");
    prop->totalGlobalMem = (size_t)gd_emu_env("GD_CUDA_EMU_MEMORY_MB", 16384, 1, 1 << 20) << 20;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 1;
    prop->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *version) {
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *version) {
    *version = CUDART_VERSION;
    return cudaSuccess;
}

/* --- device memory --------------------------------------------------------------------- */

/* Each allocation is a mapping of its own, placed so that it ends (rounded
 * up to cudaMalloc's 256-byte alignment) where a guard page begins: a write
 * past the end faults. An allocation is PROT_NONE except while device work
 * that names it runs (a kernel's pointer arguments, a copy's ends, a GEMM's
 * operands): host code that touches device memory faults, and so does a
 * kernel that reaches memory none of its arguments points into. */
typedef struct gd_emu_region {
    char *map;        /* the mapping: usable pages, then the guard page */
    size_t map_bytes; /* including the guard page */
    char *base;       /* what cudaMalloc returned */
    size_t bytes;     /* what was asked for */
    int device;
    bool open;        /* readable and writable for the device work running */
    gd_emu_order_mark order; /* the ops that last wrote and read it (order.c) */
} gd_emu_region;

static pthread_mutex_t gd_emu_lock = PTHREAD_MUTEX_INITIALIZER;
static gd_emu_region *gd_emu_regions;
static size_t gd_emu_n_regions, gd_emu_regions_cap;
static size_t gd_emu_used[GD_EMU_MAX_DEVICES];
static bool gd_emu_in_device_work;

static size_t gd_emu_page(void) {
    return (size_t)sysconf(_SC_PAGESIZE);
}

static void gd_emu_protect(gd_emu_region *r, bool open) {
    if (mprotect(r->map, r->map_bytes - gd_emu_page(), open ? PROT_READ | PROT_WRITE : PROT_NONE))
        gd_emu_fail("mprotect: %s", strerror(errno));
    r->open = open;
}

void gd_emu_device_enter(void) {
    pthread_mutex_lock(&gd_emu_lock);
    gd_emu_in_device_work = true;
}

void gd_emu_device_leave(void) {
    gd_emu_order_op_end();
    for (size_t i = 0; i < gd_emu_n_regions; i++)
        if (gd_emu_regions[i].open)
            gd_emu_protect(&gd_emu_regions[i], false);
    gd_emu_in_device_work = false;
    pthread_mutex_unlock(&gd_emu_lock);
}

static gd_emu_region *gd_emu_region_of(const void *p, size_t bytes) {
    const char *c = p;
    for (size_t i = 0; i < gd_emu_n_regions; i++) {
        gd_emu_region *r = &gd_emu_regions[i];
        if (c >= r->base && c <= r->base + r->bytes && bytes <= (size_t)(r->base + r->bytes - c))
            return r;
    }
    return NULL;
}

int gd_emu_device_use(const void *p, size_t bytes) {
    if (!gd_emu_in_device_work)
        gd_emu_fail("device memory used outside device work");
    gd_emu_region *r = gd_emu_region_of(p, bytes);
    if (r == NULL)
        return -1;
    if (!r->open)
        gd_emu_protect(r, true);
    return r->device;
}

int gd_emu_device_access(const void *p, size_t bytes, bool write) {
    int device = gd_emu_device_use(p, bytes);
    if (device >= 0)
        gd_emu_order_access(&gd_emu_region_of(p, bytes)->order, p, write);
    return device;
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
    *ptr = NULL;
    if (bytes == 0)
        return cudaSuccess;
    size_t page = gd_emu_page();
    if (bytes > SIZE_MAX / 2)
        return gd_emu_error(cudaErrorMemoryAllocation);
    size_t rounded = (bytes + 255) & ~(size_t)255;
    size_t usable = (rounded + page - 1) / page * page;
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, gd_emu_current);
    pthread_mutex_lock(&gd_emu_lock);
    if (gd_emu_used[gd_emu_current] + usable > prop.totalGlobalMem) {
        pthread_mutex_unlock(&gd_emu_lock);
        return gd_emu_error(cudaErrorMemoryAllocation);
    }
    if (gd_emu_n_regions == gd_emu_regions_cap) {
        size_t cap = gd_emu_regions_cap ? 2 * gd_emu_regions_cap : 64;
        gd_emu_region *grown = realloc(gd_emu_regions, cap * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&gd_emu_lock);
            return gd_emu_error(cudaErrorMemoryAllocation);
        }
        gd_emu_regions = grown;
        gd_emu_regions_cap = cap;
    }
    char *map = mmap(NULL, usable + page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        pthread_mutex_unlock(&gd_emu_lock);
        return gd_emu_error(cudaErrorMemoryAllocation);
    }
    gd_emu_regions[gd_emu_n_regions++] = (gd_emu_region){
        .map = map,
        .map_bytes = usable + page,
        .base = map + usable - rounded,
        .bytes = bytes,
        .device = gd_emu_current,
    };
    gd_emu_used[gd_emu_current] += usable;
    pthread_mutex_unlock(&gd_emu_lock);
    *ptr = map + usable - rounded;
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr) {
    if (ptr == NULL)
        return cudaSuccess;
    gd_emu_order_host_waits(-1); /* cudaFree waits for the device's work */
    pthread_mutex_lock(&gd_emu_lock);
    for (size_t i = 0; i < gd_emu_n_regions; i++) {
        gd_emu_region r = gd_emu_regions[i];
        if (r.base != ptr)
            continue;
        gd_emu_regions[i] = gd_emu_regions[--gd_emu_n_regions];
        gd_emu_used[r.device] -= r.map_bytes - gd_emu_page();
        pthread_mutex_unlock(&gd_emu_lock);
        if (munmap(r.map, r.map_bytes) != 0)
            gd_emu_fail("munmap: %s", strerror(errno));
        return cudaSuccess;
    }
    pthread_mutex_unlock(&gd_emu_lock);
    gd_emu_fail("cudaFree(%p): not a pointer cudaMalloc returned (or freed twice)", ptr);
}

/* Page-locked host memory is host memory here; each allocation is
 * recorded so that freeing anything else, or twice, is caught. */
static void **gd_emu_pinned;
static size_t gd_emu_n_pinned, gd_emu_pinned_cap;

cudaError_t cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags) {
    *ptr = NULL;
    if (flags & ~(unsigned)cudaHostAllocPortable)
        return gd_emu_error(cudaErrorInvalidValue);
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        return gd_emu_error(cudaErrorMemoryAllocation);
    pthread_mutex_lock(&gd_emu_lock);
    if (gd_emu_n_pinned == gd_emu_pinned_cap) {
        size_t cap = gd_emu_pinned_cap ? 2 * gd_emu_pinned_cap : 16;
        void **grown = realloc(gd_emu_pinned, cap * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&gd_emu_lock);
            free(p);
            return gd_emu_error(cudaErrorMemoryAllocation);
        }
        gd_emu_pinned = grown;
        gd_emu_pinned_cap = cap;
    }
    gd_emu_pinned[gd_emu_n_pinned++] = p;
    pthread_mutex_unlock(&gd_emu_lock);
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr) {
    if (ptr == NULL)
        return cudaSuccess;
    pthread_mutex_lock(&gd_emu_lock);
    for (size_t i = 0; i < gd_emu_n_pinned; i++) {
        if (gd_emu_pinned[i] != ptr)
            continue;
        gd_emu_pinned[i] = gd_emu_pinned[--gd_emu_n_pinned];
        pthread_mutex_unlock(&gd_emu_lock);
        free(ptr);
        return cudaSuccess;
    }
    pthread_mutex_unlock(&gd_emu_lock);
    gd_emu_fail("cudaFreeHost(%p): not a pointer cudaHostAlloc returned (or freed twice)", ptr);
}

/* --- streams --------------------------------------------------------------------------- */

/* Work runs at once, in the calling thread, so every stream is always
 * idle. A destroyed stream stays allocated, marked dead, so that a later
 * use of it is caught rather than read from freed memory. */
#define GD_EMU_STREAM_LIVE 0x57EA11u
#define GD_EMU_STREAM_DEAD 0xDEAD57u

struct CUstream_st {
    unsigned magic;
    int device;
    int order; /* its number in the stream order (order.c) */
};

int gd_emu_stream_device(cudaStream_t stream) {
    if (stream == NULL)
        return gd_emu_current;
    return stream->magic == GD_EMU_STREAM_LIVE ? stream->device : -1;
}

/* The stream's number in the stream order: a device's default stream has
 * the device's. */
int gd_emu_stream_number(cudaStream_t stream) {
    return stream == NULL ? gd_emu_current : stream->order;
}

void gd_emu_op_enter(cudaStream_t stream, const char *what) {
    gd_emu_device_enter();
    gd_emu_order_op(gd_emu_stream_number(stream), what);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags) {
    if (flags > cudaStreamNonBlocking)
        return gd_emu_error(cudaErrorInvalidValue);
    struct CUstream_st *s = malloc(sizeof *s);
    if (s == NULL)
        return gd_emu_error(cudaErrorMemoryAllocation);
    *s = (struct CUstream_st){.magic = GD_EMU_STREAM_LIVE, .device = gd_emu_current,
                              .order = gd_emu_order_stream_new()};
    *stream = s;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    if (stream == NULL || stream->magic != GD_EMU_STREAM_LIVE)
        return gd_emu_error(cudaErrorInvalidResourceHandle);
    stream->magic = GD_EMU_STREAM_DEAD;
    gd_emu_order_stream_free(stream->order);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    if (gd_emu_stream_device(stream) < 0)
        return gd_emu_error(cudaErrorInvalidResourceHandle);
    gd_emu_order_host_waits(gd_emu_stream_number(stream));
    return cudaSuccess;
}

/* --- events ---------------------------------------------------------------------------- */

/* An event holds the clock of the stream it was last recorded on (order.c):
 * a stream that waits for it follows what that stream had issued. */
#define GD_EMU_EVENT_LIVE 0xE7E11u
#define GD_EMU_EVENT_DEAD 0xDEADE7u

struct CUevent_st {
    unsigned magic;
    int device;
    uint64_t clock[GD_EMU_STREAMS];
};

static bool gd_emu_event_live(cudaEvent_t event) {
    return event != NULL && event->magic == GD_EMU_EVENT_LIVE;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
    if (flags & ~(unsigned)cudaEventDisableTiming)
        return gd_emu_error(cudaErrorInvalidValue);
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (e == NULL)
        return gd_emu_error(cudaErrorMemoryAllocation);
    e->magic = GD_EMU_EVENT_LIVE;
    e->device = gd_emu_current;
    *event = e;
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    if (!gd_emu_event_live(event))
        return gd_emu_error(cudaErrorInvalidResourceHandle);
    event->magic = GD_EMU_EVENT_DEAD; /* kept allocated: a later use is caught */
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    if (!gd_emu_event_live(event) || gd_emu_stream_device(stream) < 0)
        return gd_emu_error(cudaErrorInvalidResourceHandle);
    if (gd_emu_stream_device(stream) != event->device)
        gd_emu_fail("cudaEventRecord: an event of device %d recorded on a stream of device %d",
                    event->device, gd_emu_stream_device(stream));
    gd_emu_order_record(event->clock, gd_emu_stream_number(stream));
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
    if (!gd_emu_event_live(event) || gd_emu_stream_device(stream) < 0)
        return gd_emu_error(cudaErrorInvalidResourceHandle);
    if (flags != 0)
        return gd_emu_error(cudaErrorInvalidValue);
    gd_emu_order_wait(gd_emu_stream_number(stream), event->clock);
    return cudaSuccess;
}

/* --- copies ---------------------------------------------------------------------------- */

/* Whether [p, p + bytes) is device memory (want_device, then usable until
 * the device work ends) or host memory. */
static bool gd_emu_side_is(const void *p, size_t bytes, bool want_device, bool write) {
    if (want_device)
        return gd_emu_device_access(p, bytes, write) >= 0;
    return gd_emu_region_of(p, bytes) == NULL && gd_emu_region_of(p, 1) == NULL;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
    if (gd_emu_stream_device(stream) < 0)
        return gd_emu_error(cudaErrorInvalidResourceHandle);
    if (bytes == 0)
        return cudaSuccess;
    bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault || kind == cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        gd_emu_fail("cudaMemcpyAsync: kind %d is not used by the backend", (int)kind);
    gd_emu_op_enter(stream, "cudaMemcpyAsync");
    bool dst_ok = gd_emu_side_is(dst, bytes, dst_device, true);
    if (!dst_ok || !gd_emu_side_is(src, bytes, src_device, false))
        gd_emu_fail("cudaMemcpyAsync(%p, %p, %zu, kind %d): %s is not %s memory of that size",
                    dst, src, bytes, (int)kind, !dst_ok ? "the destination" : "the source",
                    !dst_ok ? (dst_device ? "device" : "host") : (src_device ? "device" : "host"));
    memmove(dst, src, bytes);
    gd_emu_device_leave();
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t bytes, cudaStream_t stream) {
    if (gd_emu_stream_device(stream) < 0)
        return gd_emu_error(cudaErrorInvalidResourceHandle);
    if (bytes == 0)
        return cudaSuccess;
    gd_emu_op_enter(stream, "cudaMemsetAsync");
    if (gd_emu_device_access(ptr, bytes, true) < 0)
        gd_emu_fail("cudaMemsetAsync(%p, %zu): not device memory of that size", ptr, bytes);
    memset(ptr, value, bytes);
    gd_emu_device_leave();
    return cudaSuccess;
}

/* --- kernel launches ------------------------------------------------------------------- */

GD_EMU_TLS gd_emu_dim gd_emu_thread_idx, gd_emu_block_idx, gd_emu_block_dim, gd_emu_grid_dim;

/* A block's threads are fibers on the launching thread. Each runs until it
 * reaches __syncthreads or returns; when all have, the next phase starts,
 * in the opposite order (first to last, then last to first), so a missing
 * barrier that lets one thread read what another has not yet written shows
 * as a wrong result in one order or the other.
 *
 * The switch between fibers is a few instructions of x86-64 (the System V
 * ABI's callee-saved registers; the floating-point control words are left
 * alone, as no kernel changes them): ucontext's swapcontext also saves the
 * signal mask, a system call per switch, and was four fifths of the
 * emulator's time. */
#if !defined(__x86_64__)
#error "the CUDA emulator's fibers are written for x86-64"
#endif

/* gd_emu_switch(&save, load): saves the running context's stack pointer in
 * save and continues the one whose stack pointer is load. */
void gd_emu_switch(void **save, void *load);
__asm__(".text\n"
        ".globl gd_emu_switch\n"
        ".hidden gd_emu_switch\n"
        ".type gd_emu_switch, @function\n"
        "gd_emu_switch:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size gd_emu_switch, .-gd_emu_switch\n");

/* Every fiber of a block runs on one stack, the launching thread's: a
 * fiber suspended at a barrier has its part of the stack copied out, and
 * back to the same addresses when it resumes. A fiber that starts thread t
 * goes on to run t + 1, t + 2, ... as plain calls while none of them waits,
 * so a kernel without barriers costs two switches a block. */
#define GD_EMU_STACK ((size_t)256 << 10)

typedef struct gd_emu_fiber {
    void *sp;          /* while suspended */
    char *saved;       /* its stack, [sp, top), while suspended */
    size_t saved_cap;
    bool started, done;
} gd_emu_fiber;

typedef struct gd_emu_block {
    void *scheduler_sp;
    char *stack;        /* GD_EMU_STACK bytes: the fibers' stack */
    gd_emu_fiber *fibers;
    size_t cap, n, current, done;
    void (*body)(void *);
    void *body_ctx;
    bool running;
} gd_emu_block;

static GD_EMU_TLS gd_emu_block gd_emu_blk;

static gd_emu_dim gd_emu_unflatten(size_t i, gd_emu_dim d) {
    return (gd_emu_dim){(unsigned)(i % d.x), (unsigned)(i / d.x % d.y),
                        (unsigned)(i / ((size_t)d.x * d.y))};
}

static void gd_emu_become(size_t t) {
    gd_emu_blk.current = t;
    gd_emu_thread_idx = gd_emu_unflatten(t, gd_emu_block_dim);
}

/* Where a new fiber's first switch lands: it runs thread current, then the
 * next ones not yet started, until one of them has waited at a barrier (its
 * successor has then been started by another fiber). It never returns. */
static __attribute__((noreturn)) void gd_emu_fiber_main(void) {
    gd_emu_block *b = &gd_emu_blk;
    for (;;) {
        size_t t = b->current;
        b->fibers[t].started = true;
        b->body(b->body_ctx);
        b->fibers[t].done = true;
        b->done++;
        if (t + 1 == b->n || b->fibers[t + 1].started)
            break;
        gd_emu_become(t + 1);
    }
    void *finished;
    gd_emu_switch(&finished, b->scheduler_sp);
    gd_emu_fail("a finished fiber was resumed");
}

void gd_emu_syncthreads(void) {
    if (!gd_emu_blk.running)
        gd_emu_fail("__syncthreads outside a kernel");
    gd_emu_fiber *f = &gd_emu_blk.fibers[gd_emu_blk.current];
    gd_emu_switch(&f->sp, gd_emu_blk.scheduler_sp);
}

static void gd_emu_fibers_reserve(size_t n) {
    gd_emu_block *b = &gd_emu_blk;
    if (b->stack == NULL) {
        void *stack = mmap(NULL, GD_EMU_STACK, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (stack == MAP_FAILED)
            gd_emu_fail("out of memory for the fibers' stack");
        b->stack = stack;
    }
    if (n <= b->cap)
        return;
    gd_emu_fiber *grown = realloc(b->fibers, n * sizeof *grown);
    if (grown == NULL)
        gd_emu_fail("out of memory for %zu fibers", n);
    for (size_t i = b->cap; i < n; i++)
        grown[i] = (gd_emu_fiber){0};
    b->fibers = grown;
    b->cap = n;
}

/* The stack pointer a new fiber starts from, its frame laid out as
 * gd_emu_switch leaves a suspended one: from the top, a slot standing for a
 * return address (so gd_emu_fiber_main starts with the stack aligned as
 * after a call), the address gd_emu_switch returns to, and six registers. */
static void *gd_emu_fresh_stack(void) {
    uint64_t *top = (uint64_t *)(gd_emu_blk.stack + GD_EMU_STACK);
    *--top = 0;
    *--top = (uint64_t)(uintptr_t)gd_emu_fiber_main;
    for (int i = 0; i < 6; i++)
        *--top = 0;
    return top;
}

/* Switches to sp (a fresh fiber or a suspended thread's) until a thread
 * waits at a barrier, its stack then copied out, or the fiber finishes. */
static void gd_emu_run_until_wait(void *sp) {
    gd_emu_block *b = &gd_emu_blk;
    char *top = b->stack + GD_EMU_STACK;
    gd_emu_switch(&b->scheduler_sp, sp);
    gd_emu_fiber *f = &b->fibers[b->current];
    if (f->done)
        return;
    size_t used = (size_t)(top - (char *)f->sp);
    if (used > f->saved_cap) {
        char *grown = realloc(f->saved, used);
        if (grown == NULL)
            gd_emu_fail("out of memory for a suspended thread's stack");
        f->saved = grown;
        f->saved_cap = used;
    }
    memcpy(f->saved, f->sp, used);
}

static void gd_emu_run_block(void) {
    gd_emu_block *b = &gd_emu_blk;
    char *top = b->stack + GD_EMU_STACK;
    for (size_t t = 0; t < b->n; t++)
        b->fibers[t].started = b->fibers[t].done = false;
    b->done = 0;
    /* Phase 0 starts every thread, in order; later phases resume the ones
     * waiting, last to first, then first to last, and so on. */
    for (size_t t = 0; t < b->n; t++) {
        if (b->fibers[t].started)
            continue;
        gd_emu_become(t);
        gd_emu_run_until_wait(gd_emu_fresh_stack());
    }
    for (size_t phase = 1; b->done < b->n; phase++) {
        for (size_t k = 0; k < b->n; k++) {
            size_t t = phase % 2 == 1 ? b->n - 1 - k : k;
            gd_emu_fiber *f = &b->fibers[t];
            if (f->done)
                continue;
            memcpy(f->sp, f->saved, (size_t)(top - (char *)f->sp));
            gd_emu_become(t);
            gd_emu_run_until_wait(f->sp);
        }
    }
}

void gd_emu_launch(const char *kernel, void (*body)(void *), void *ctx, gd_emu_dim grid,
                   gd_emu_dim block, size_t dynamic_shared, cudaStream_t stream,
                   const void *const *pointers, const bool *writes, size_t n_args) {
    size_t threads = (size_t)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 ||
        grid.z > 65535 || block.x == 0 || block.y == 0 || block.z == 0 || block.z > 64 ||
        threads > 1024 || dynamic_shared > 48 * 1024) {
        gd_emu_error(cudaErrorInvalidConfiguration);
        return;
    }
    int device = gd_emu_stream_device(stream);
    if (device < 0 || device != gd_emu_current) {
        gd_emu_error(cudaErrorInvalidResourceHandle);
        return;
    }
    if (gd_emu_blk.running)
        gd_emu_fail("%s launched from inside a kernel", kernel);
    gd_emu_op_enter(stream, kernel);
    for (size_t i = 0; i < n_args; i++) {
        if (pointers[i] == NULL)
            continue;
        int d = gd_emu_device_access(pointers[i], 0, writes[i]);
        if (d < 0)
            gd_emu_fail("%s: argument %zu (%p) is not device memory", kernel, i + 1,
                        pointers[i]);
        if (d != device)
            gd_emu_fail("%s: argument %zu is memory of device %d, launched on device %d",
                        kernel, i + 1, d, device);
    }
    gd_emu_fibers_reserve(threads);
    gd_emu_blk.n = threads;
    gd_emu_blk.body = body;
    gd_emu_blk.body_ctx = ctx;
    gd_emu_blk.running = true;
    gd_emu_grid_dim = grid;
    gd_emu_block_dim = block;
    size_t blocks = (size_t)grid.x * grid.y * grid.z;
    for (size_t i = 0; i < blocks; i++) {
        gd_emu_block_idx = gd_emu_unflatten(i, grid);
        gd_emu_run_block();
    }
    gd_emu_blk.running = false;
    gd_emu_device_leave();
}
