/* Large buffers kept for reuse (common/buf_spares.h). */
#include "common/buf_spares.h"

#include "common/mem.h"

void gd_buf_spares_free(gd_buf_spares *s) {
    for (size_t i = 0; i < s->n; i++)
        gd_buf_free(&s->buf[i]);
    s->n = 0;
}

void gd_buf_spares_put(gd_buf_spares *s, gd_buf *b) {
    if (b->cap < GD_MEM_HUGE_MIN) {
        gd_buf_free(b);
        return;
    }
    if (s->n == GD_BUF_SPARES) {
        size_t smallest = 0;
        for (size_t i = 1; i < s->n; i++)
            if (s->buf[i].cap < s->buf[smallest].cap)
                smallest = i;
        if (s->buf[smallest].cap >= b->cap) {
            gd_buf_free(b);
            return;
        }
        gd_buf_free(&s->buf[smallest]);
        s->buf[smallest] = s->buf[--s->n];
    }
    s->buf[s->n] = *b;
    s->buf[s->n].len = 0;
    s->n++;
    *b = (gd_buf){0};
}

gd_buf gd_buf_spares_take(gd_buf_spares *s, size_t want) {
    if (want < GD_MEM_HUGE_MIN)
        return (gd_buf){0}; /* the allocator serves it from memory it holds */
    size_t best = s->n;
    for (size_t i = 0; i < s->n; i++)
        if (s->buf[i].cap >= want && (best == s->n || s->buf[i].cap < s->buf[best].cap))
            best = i;
    if (best == s->n)
        return (gd_buf){0};
    gd_buf b = s->buf[best];
    s->buf[best] = s->buf[--s->n];
    b.len = 0;
    return b;
}
