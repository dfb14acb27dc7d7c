/* A trained round as a validator fetches it (see tests/support/round_evidence.h). */
#include "tests/support/round_evidence.h"

#include <stdio.h>
#include <string.h>

#include "plugin/member/state_index.h"
#include "tests/support/testkit.h"

void gd_test_state_file(const gd_test_trained *tr, gd_buf *out, uint32_t leaf) {
    const gd_worker_state *st = leaf < tr->t->segments ? &tr->t->starts[leaf] : tr->post;
    CHECK_OK(gd_engine_state_file(tr->e, out, tr->round, st, leaf, tr->t->segments));
}

void gd_test_served_chunk(const gd_test_trained *tr, uint32_t leaf, uint32_t chunk,
                          gd_buf *body, gd_buf *proof) {
    gd_buf file = {0};
    gd_test_state_file(tr, &file, leaf);
    char name[64];
    snprintf(name, sizeof name, "state-%u", leaf);
    const char *path = gd_test_write_file(name, file.data, file.len, 0600);
    gd_state_index x;
    gd_state_index_init(&x);
    CHECK_OK(gd_state_index_load(&x, path, false, tr->e->n, tr->e->rc.diloco.chunk_elems));
    CHECK_OK(gd_state_index_chunk(&x, chunk, body, proof));
    gd_state_index_free(&x);
    gd_buf_free(&file);
}

void gd_test_evidence(const gd_test_trained *tr, uint32_t segment, uint32_t chunk,
                      gd_check_evidence *ev) {
    memset(ev, 0, sizeof *ev);
    CHECK_OK(gd_buf_append(&ev->transcript, tr->t->transcript.data, tr->t->transcript.len));
    gd_test_state_file(tr, &ev->segment_state, segment);
    ev->segment_state.len = GD_WORKER_DESC_BYTES + 12 * tr->e->n; /* the served prefix */
    gd_test_served_chunk(tr, 0, chunk, &ev->start_chunk, &ev->start_proof);
    gd_test_served_chunk(tr, tr->t->segments + 1, chunk, &ev->post_chunk, &ev->post_proof);
    /* The payload as a member keeps it: in its file. */
    static unsigned written;
    char name[64];
    snprintf(name, sizeof name, "evidence-payload-%u.gdpl", written++);
    gd_buf file = {0};
    gd_test_payload_file(tr->t, &file);
    snprintf(ev->payload_path, sizeof ev->payload_path, "%s",
             gd_test_write_file(name, file.data, file.len, 0600));
    gd_buf_free(&file);
}

void gd_test_payload_file(const gd_trained_round *t, gd_buf *out) {
    memset(out, 0, sizeof *out);
    CHECK_OK(gd_payload_serialize(&t->r.payload, out));
}

bool gd_test_same_payload(const gd_trained_round *a, const gd_trained_round *b) {
    gd_buf x, y;
    gd_test_payload_file(a, &x);
    gd_test_payload_file(b, &y);
    bool same = x.len == y.len && memcmp(x.data, y.data, x.len) == 0;
    gd_buf_free(&x);
    gd_buf_free(&y);
    return same;
}

void gd_test_commitment(const gd_trained_round *t, const char *participant,
                        Gonka__Diloco__V1__Commitment *c) {
    gonka__diloco__v1__commitment__init(c);
    const gd_diloco_commit *m = &t->commit;
    c->run = m->run;
    c->round = m->round;
    c->participant = (char *)participant;
    c->payload_root = (ProtobufCBinaryData){32, (uint8_t *)m->payload_root};
    c->payload_leaves = m->payload_leaves;
    c->payload_bytes = m->payload_bytes;
    c->transcript_root = (ProtobufCBinaryData){32, (uint8_t *)m->transcript_root};
    c->segment_count = m->segment_count;
    c->tokens = t->r.tokens;
}
