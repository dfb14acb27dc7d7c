/* The op profile (kernels/backend_profile.h): off, it counts nothing; on,
 * each op lands in its own entry, matmuls one per shape with their FLOPs;
 * the transfers of an op's CPU fallback count in the op, not beside it;
 * shapes beyond the table's room are still timed; the table sorts by time. */
#include <stdio.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/backend_profile.h"
#include "tests/support/backend_copy.h"
#include "tests/support/testkit.h"

static const gd_profile_entry *find(const gd_backend_profile *p, gd_op_id op, size_t in_dim,
                                    size_t out_dim) {
    for (size_t i = 0; i < p->n; i++)
        if (p->entries[i].op == op && p->entries[i].in_dim == in_dim &&
            p->entries[i].out_dim == out_dim)
            return &p->entries[i];
    return NULL;
}

static void test_every_op_has_its_own_name(void) {
    for (int a = 0; a < GD_OP_COUNT; a++) {
        CHECK(strcmp(gd_op_name((gd_op_id)a), "unknown") != 0);
        for (int b = 0; b < a; b++)
            CHECK(strcmp(gd_op_name((gd_op_id)a), gd_op_name((gd_op_id)b)) != 0);
    }
    CHECK_STR_EQ(gd_op_name(GD_OP_COUNT), "unknown");
}

static void test_off_counts_nothing(void) {
    float x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, w[12] = {0}, out[9];
    gd_backend be;
    gd_backend_cpu_init(&be, NULL);
    gd_backend_matmul_forward(&be, out, x, w, 3, 4, 3); /* no profile at all */
    gd_backend_profile p = {0};
    be.profile = &p;
    gd_backend_matmul_forward(&be, out, x, w, 3, 4, 3);
    gd_backend_add(&be, out, out, out, 9);
    CHECK(p.n == 0 && p.depth == 0 && gd_backend_profile_total(&p) == 0);
}

static void test_counts_each_op_and_matmul_shape(void) {
    float x[32], w[32], out[32], dx[32], dw[32];
    for (int i = 0; i < 32; i++)
        x[i] = w[i] = (float)i / 32, dx[i] = dw[i] = 0;
    gd_backend be;
    gd_backend_cpu_init(&be, NULL);
    gd_backend_profile p;
    be.profile = &p;
    gd_backend_profile_on(&p);
    gd_backend_matmul_forward(&be, out, x, w, 8, 4, 3);
    gd_backend_matmul_forward(&be, out, x, w, 8, 4, 3);
    gd_backend_matmul_forward(&be, out, x, w, 8, 3, 4);
    gd_backend_matmul_backward(&be, NULL, dw, out, x, w, 8, 4, 3);
    gd_backend_matmul_backward(&be, dx, dw, out, x, w, 8, 4, 3);
    gd_backend_add(&be, out, x, w, 32);
    gd_backend_profile_off(&p);
    gd_backend_add(&be, out, x, w, 32); /* off again: not counted */
    CHECK(p.n == 4 && p.depth == 0);
    const gd_profile_entry *a = find(&p, GD_OP_MATMUL_FORWARD, 4, 3);
    const gd_profile_entry *b = find(&p, GD_OP_MATMUL_FORWARD, 3, 4);
    const gd_profile_entry *bw = find(&p, GD_OP_MATMUL_BACKWARD, 4, 3);
    const gd_profile_entry *add = find(&p, GD_OP_ADD, 0, 0);
    CHECK(a && b && bw && add);
    if (!a || !b || !bw || !add)
        return;
    CHECK(a->calls == 2 && a->flops == 2 * 2.0 * 8 * 4 * 3);
    CHECK(b->calls == 1 && b->flops == 2.0 * 8 * 3 * 4);
    CHECK(bw->calls == 2 && bw->flops == (1 + 2) * 2.0 * 8 * 4 * 3); /* dweight; then both */
    CHECK(add->calls == 1 && add->flops == 0);
    double sum = 0;
    for (size_t i = 0; i < p.n; i++) {
        CHECK(p.entries[i].seconds >= 0);
        sum += p.entries[i].seconds;
    }
    CHECK(sum > 0 && gd_backend_profile_total(&p) == sum);
    gd_backend_profile_sort(&p);
    for (size_t i = 1; i < p.n; i++)
        CHECK(p.entries[i - 1].seconds >= p.entries[i].seconds);
}

/* The copy backend fills no op slot: a matmul downloads its inputs, runs on
 * the host and uploads its output, and those transfers are the op's time. */
static void test_fallback_transfers_count_in_the_op(void) {
    gd_backend be;
    gd_copy_backend *cb = gd_copy_backend_new(&be, NULL);
    CHECK(cb != NULL);
    if (cb == NULL)
        return;
    float host[24];
    for (int i = 0; i < 24; i++)
        host[i] = (float)i;
    float *x = gd_backend_alloc_f32(&be, 24), *w = gd_backend_alloc_f32(&be, 24);
    float *out = gd_backend_alloc_f32(&be, 24);
    CHECK(x && w && out);
    gd_backend_profile p;
    be.profile = &p;
    gd_backend_profile_on(&p);
    gd_backend_upload(&be, x, host, sizeof host);
    gd_backend_upload(&be, w, host, sizeof host);
    const gd_profile_entry *up = find(&p, GD_OP_UPLOAD, 0, 0);
    CHECK(p.n == 1 && up && up->calls == 2);
    size_t moved = gd_copy_backend_bytes_moved(cb);
    gd_backend_profile_on(&p); /* from zero */
    gd_backend_matmul_forward(&be, out, x, w, 6, 4, 4);
    CHECK(gd_copy_backend_bytes_moved(cb) > moved); /* the fallback did transfer */
    CHECK(p.n == 1 && find(&p, GD_OP_MATMUL_FORWARD, 4, 4) != NULL && p.depth == 0);
    gd_backend_download(&be, host, out, sizeof host);
    const gd_profile_entry *down = find(&p, GD_OP_DOWNLOAD, 0, 0);
    CHECK(p.n == 2 && down && down->calls == 1);
    gd_backend_profile_off(&p);
    gd_backend_free(&be, x);
    gd_backend_free(&be, w);
    gd_backend_free(&be, out);
    CHECK(gd_copy_backend_free(cb));
}

static void test_shapes_beyond_the_table_are_still_timed(void) {
    static float x[4 * 200], w[4 * 200], out[4 * 200];
    gd_backend be;
    gd_backend_cpu_init(&be, NULL);
    gd_backend_profile p;
    be.profile = &p;
    gd_backend_profile_on(&p);
    size_t shapes = GD_PROFILE_ENTRIES_MAX + 20;
    for (size_t o = 1; o <= shapes; o++)
        gd_backend_matmul_forward(&be, out, x, w, 4, 1, o);
    CHECK(p.n == GD_PROFILE_ENTRIES_MAX && p.overflow_calls == 20);
    uint64_t calls = 0;
    double sum = 0;
    for (size_t i = 0; i < p.n; i++)
        calls += p.entries[i].calls, sum += p.entries[i].seconds;
    CHECK(calls == GD_PROFILE_ENTRIES_MAX);
    CHECK(gd_backend_profile_total(&p) == sum + p.overflow_seconds);
}

int main(void) {
    RUN_TEST(test_every_op_has_its_own_name);
    RUN_TEST(test_off_counts_nothing);
    RUN_TEST(test_counts_each_op_and_matmul_shape);
    RUN_TEST(test_fallback_transfers_count_in_the_op);
    RUN_TEST(test_shapes_beyond_the_table_are_still_timed);
    return gd_test_finish();
}
