/* One-time setup of the CPU ops: OpenBLAS must not start its own threads.
 * The ops already run on the pool; a threaded GEMM inside a pool task would
 * oversubscribe the cores, and calling a threaded OpenBLAS from several
 * threads at once is not safe. */
#include "kernels/cpu/ops.h"

#include <cblas.h>
#include <pthread.h>

static pthread_once_t gd_cpu_ops_once = PTHREAD_ONCE_INIT;

static void gd_cpu_ops_init_once(void) {
    openblas_set_num_threads(1);
}

void gd_cpu_ops_init(void) {
    pthread_once(&gd_cpu_ops_once, gd_cpu_ops_init_once);
}
