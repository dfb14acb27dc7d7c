/* The training module's commands, in-process against a scripted node that
 * answers the gonka.diloco.v1 queries with hand-packed answers (the module
 * itself is not needed): query output shapes, answers for the wrong run,
 * chain errors, and the paths that compute something for the signer: the
 * availability proofs from a payload file (online and with --randomness),
 * the salted seals with the salt printed for the reveal, and a commitment
 * read from a payload file. */
#include <stdlib.h>

#include "chain/client/diloco_query.h"
#include "chain/wire/diloco_msg.h"
#include "chain/wire/diloco_spec.h"
#include "chain/wire/tx_decode.h"
#include "common/base64.h"
#include "cosmos/tx/v1beta1/tx.pb-c.h"
#include "tests/support/cli_run.h"
#include "tests/support/example_spec.h"
#include "tests/support/fake_node.h"
#include "tests/support/testkit.h"
#include "trainer/payload.h"

#define ADDR_A "gonka1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmtrqahc"
#define KEY_HEX "6666666666666666666666666666666666666666666666666666666666666666"

static const uint8_t BEACON[32] = {[0] = 0xbe, [1] = 0xac, [31] = 0x07};
static const uint8_t VERIFY[32] = {[0] = 0x7e, [1] = 0x41, [31] = 0xf1};
static const uint8_t H2[32] = {[0] = 0xaa, [31] = 0xbb};

/* fake_node for accounts and submission, plus the DiLoCo query answers. */
typedef struct diloco_node {
    fake_node base;
    gd_buf answer;    /* what every /gonka.diloco.v1 query gets */
    gd_buf run_answer; /* but Query/Run, when set */
    uint32_t code;    /* or this ABCI code */
    char path[96];    /* the last DiLoCo query */
    gd_buf request;   /* and its request bytes */
    char *last_tx;    /* base64 of the last broadcast */
} diloco_node;

static void diloco_handler(void *ctx, const gd_mock_request *req, gd_mock_response *resp) {
    diloco_node *n = ctx;
    const char *path = json_string_value(json_object_get(req->rpc_params, "path"));
    if (strcmp(req->rpc_method, "abci_query") == 0 && path &&
        strncmp(path, "/gonka.diloco.v1.", 17) == 0) {
        snprintf(n->path, sizeof n->path, "%s", path);
        const char *hex = json_string_value(json_object_get(req->rpc_params, "data"));
        n->request.len = 0;
        if (hex && gd_buf_reserve(&n->request, strlen(hex) / 2 + 1) == GD_OK &&
            gd_hex_decode(n->request.data, n->request.cap, &n->request.len, hex, strlen(hex)) !=
                GD_OK)
            n->request.len = 0;
        json_t *r = json_pack("{s:s}", "height", "100");
        if (n->code) {
            json_object_set_new(r, "code", json_integer(n->code));
            json_object_set_new(r, "codespace", json_string("diloco"));
            json_object_set_new(r, "log", json_string("unknown run"));
        } else {
            const gd_buf *a = n->run_answer.len && strcmp(path, GD_DILOCO_QUERY_RUN) == 0
                                  ? &n->run_answer
                                  : &n->answer;
            char *b64 = malloc(gd_base64_encoded_len(a->len) + 1);
            gd_base64_encode(b64, a->data ? a->data : (const uint8_t *)"", a->len);
            json_object_set_new(r, "value", json_string(b64));
            free(b64);
        }
        gd_mock_result(resp, req, json_pack("{s:o}", "response", r));
        return;
    }
    if (strcmp(req->rpc_method, "broadcast_tx_sync") == 0) {
        free(n->last_tx);
        n->last_tx = strdup(json_string_value(json_object_get(req->rpc_params, "tx")));
    }
    fake_node_handler(&n->base, req, resp);
}

static void set_buf(gd_buf *b, const ProtobufCMessage *m) {
    b->len = 0;
    size_t size = protobuf_c_message_get_packed_size(m);
    CHECK_OK(gd_buf_reserve(b, size + 1));
    b->len = protobuf_c_message_pack(m, b->data);
}

static void set_answer(diloco_node *n, const ProtobufCMessage *m) { set_buf(&n->answer, m); }

/* The single message of a signed transaction (base64), unpacked as desc. */
static ProtobufCMessage *tx_message(const char *b64, const char *type_url,
                                    const ProtobufCMessageDescriptor *desc) {
    uint8_t *raw = malloc(strlen(b64) + 4);
    size_t n = 0;
    ProtobufCMessage *m = NULL;
    gd_decoded_tx *dec = NULL;
    if (gd_base64_decode(raw, strlen(b64) + 4, &n, b64, strlen(b64)) == GD_OK &&
        gd_tx_decode(&dec, raw, n) == GD_OK) {
        const Cosmos__Tx__V1beta1__TxBody *body = gd_decoded_tx_body(dec);
        if (body->n_messages == 1 && strcmp(body->messages[0]->type_url, type_url) == 0)
            m = protobuf_c_message_unpack(desc, NULL, body->messages[0]->value.len,
                                          body->messages[0]->value.data);
    }
    CHECK(m != NULL);
    gd_decoded_tx_free(dec);
    free(raw);
    return m;
}

/* --- queries ------------------------------------------------------------------- */

/* A round answer with the target's commitment of (root, leaves). */
typedef struct round_answer {
    Gonka__Diloco__V1__RoundWindows windows;
    Gonka__Diloco__V1__Round round;
    Gonka__Diloco__V1__Commitment commit;
    Gonka__Diloco__V1__Commitment *commits[1];
    Gonka__Diloco__V1__QueryRoundResponse resp;
} round_answer;

static void round_answer_init(round_answer *a, const char *target, const uint8_t *root,
                              uint32_t leaves) {
    gonka__diloco__v1__round_windows__init(&a->windows);
    a->windows.train_start = 100;
    a->windows.commit_start = a->windows.reveal_start = a->windows.verify_start = 110;
    a->windows.open_start = a->windows.dispute_start = a->windows.dispute_open_start = 120;
    a->windows.attest_start = a->windows.attest_open_start = 120;
    a->windows.end = 130;
    gonka__diloco__v1__round__init(&a->round);
    a->round.run = 1;
    a->round.index = 4;
    a->round.windows = &a->windows;
    a->round.beacon = (ProtobufCBinaryData){32, (uint8_t *)BEACON};
    a->round.verify_randomness = (ProtobufCBinaryData){32, (uint8_t *)VERIFY};
    a->round.total_weight = "0";
    a->round.start_state_hash = (ProtobufCBinaryData){32, (uint8_t *)H2};
    a->round.phase = GONKA__DILOCO__V1__ROUND_PHASE__ROUND_PHASE_VERIFY;
    gonka__diloco__v1__commitment__init(&a->commit);
    a->commit.run = 1;
    a->commit.round = 4;
    a->commit.participant = (char *)target;
    a->commit.payload_root = (ProtobufCBinaryData){32, (uint8_t *)root};
    a->commit.payload_leaves = leaves;
    a->commit.transcript_root = (ProtobufCBinaryData){32, (uint8_t *)H2};
    a->commit.segment_count = 2;
    a->commits[0] = &a->commit;
    gonka__diloco__v1__query_round_response__init(&a->resp);
    a->resp.round = &a->round;
    a->resp.n_commitments = 1;
    a->resp.commitments = a->commits;
    a->resp.height = 115;
}

/* The node, its URL, and the signer's key file and address, for every test. */
static diloco_node g_node;
static const char *g_url;
static char g_key[600], g_signer[96];

/* Run 1 with the example spec, its avail_chunks set: what Query/Run answers. */
static void set_run_answer(diloco_node *node, uint32_t avail_chunks) {
    Gonka__Diloco__V1__RunSpec *spec = gd_test_example_spec();
    spec->avail_chunks = avail_chunks;
    Gonka__Diloco__V1__Run run = GONKA__DILOCO__V1__RUN__INIT;
    run.id = 1;
    run.spec = spec;
    run.state_hash = (ProtobufCBinaryData){32, (uint8_t *)H2};
    run.pool = "0";
    Gonka__Diloco__V1__QueryRunResponse resp = GONKA__DILOCO__V1__QUERY_RUN_RESPONSE__INIT;
    resp.run = &run;
    set_buf(&node->run_answer, &resp.base);
    gd_diloco_spec_free(spec);
}

static void test_queries(void) {
    diloco_node *node = &g_node;
    const char *url = g_url;
    Gonka__Diloco__V1__Params params = GONKA__DILOCO__V1__PARAMS__INIT;
    params.authority = ADDR_A;
    Gonka__Diloco__V1__QueryParamsResponse pr = GONKA__DILOCO__V1__QUERY_PARAMS_RESPONSE__INIT;
    pr.params = &params;
    set_answer(node, &pr.base);
    run_result r = run("query", "diloco-params", "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json);
    CHECK_STR_EQ(json_str(json_object_get(r.json, "params"), "authority"), ADDR_A);
    CHECK_STR_EQ(node->path, GD_DILOCO_QUERY_PARAMS);
    run_free(&r);
    r = run("query", "diloco-params", "--node", url, NULL);
    CHECK(r.rc == 0 && strstr(r.out, "params:\n  authority: " ADDR_A "\n") != NULL);
    run_free(&r);

    round_answer ra;
    round_answer_init(&ra, ADDR_A, H2, 5);
    set_answer(node, &ra.resp.base);
    r = run("query", "round", "1", "4", "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json);
    CHECK_STR_EQ(json_str(json_object_get(r.json, "round"), "phase"), "verify");
    CHECK(json_array_size(json_object_get(r.json, "commitments")) == 1);
    CHECK_STR_EQ(node->path, GD_DILOCO_QUERY_ROUND);
    Gonka__Diloco__V1__QueryRoundRequest *req =
        gonka__diloco__v1__query_round_request__unpack(NULL, node->request.len,
                                                       node->request.data);
    CHECK(req && req->run == 1 && req->round == 4);
    gonka__diloco__v1__query_round_request__free_unpacked(req, NULL);
    run_free(&r);
    /* Text names the denom of every amount, from the run's spec (JSON keeps
     * the module's bare decimal strings). */
    ra.round.total_weight = "6000000000";
    ra.commit.report_weight = "4000000000";
    set_answer(node, &ra.resp.base);
    set_run_answer(node, 4);
    r = run("query", "round", "1", "4", "--node", url, NULL);
    CHECK(r.rc == 0 && strstr(r.out, "  phase: verify\n") &&
          strstr(r.out, "commitments:\n  - run: 1\n    round: 4\n"));
    CHECK(strstr(r.out, "  total_weight: 6000000000ngonka\n") != NULL);
    CHECK(strstr(r.out, "    report_weight: 4000000000ngonka\n") != NULL);
    run_free(&r);
    r = run("query", "round", "1", "4", "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json);
    CHECK_STR_EQ(json_str(json_object_get(r.json, "round"), "total_weight"), "6000000000");
    run_free(&r);
    gd_buf_free(&node->answer);
    CHECK_OK(gd_buf_append(&node->answer, node->run_answer.data, node->run_answer.len));
    r = run("query", "run", "1", "--node", url, NULL);
    CHECK(r.rc == 0 && strstr(r.out, "  pool: 0ngonka\n") != NULL);
    /* The spec's coins keep their own denom, once. */
    CHECK(strstr(r.out, "reward_per_epoch: 1000000000ngonka\n") != NULL);
    run_free(&r);
    set_answer(node, &ra.resp.base);
    node->run_answer.len = 0;
    /* An answer for another round is refused. */
    r = run("query", "round", "1", "5", "--node", url, NULL);
    CHECK(r.rc == 1 && strstr(r.err, "another round") && r.out[0] == '\0');
    run_free(&r);

    /* A chain error is one line with its code. */
    node->code = 4;
    r = run("query", "run", "9", "--node", url, NULL);
    CHECK(r.rc == 1 && strstr(r.err, "error: ") == r.err && strstr(r.err, "diloco") &&
          strchr(r.err, '\n') == r.err + strlen(r.err) - 1);
    run_free(&r);
    node->code = 0;

    Gonka__Diloco__V1__QueryRewardsResponse rw = GONKA__DILOCO__V1__QUERY_REWARDS_RESPONSE__INIT;
    set_answer(node, &rw.base);
    r = run("query", "rewards", ADDR_A, "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json && json_array_size(json_object_get(r.json, "amounts")) == 0);
    run_free(&r);
    r = run("query", "rewards", ADDR_A, "--node", url, NULL);
    CHECK(r.rc == 0 && strcmp(r.out, "amounts: []\n") == 0);
    run_free(&r);
    Gonka__Diloco__V1__SettleAmount settle = GONKA__DILOCO__V1__SETTLE_AMOUNT__INIT;
    settle.run = 1;
    settle.epoch = 1;
    settle.address = ADDR_A;
    settle.amount = "29625";
    settle.tokens = 8192;
    Gonka__Diloco__V1__SettleAmount *settles[1] = {&settle};
    rw.n_amounts = 1;
    rw.amounts = settles;
    set_answer(node, &rw.base);
    set_run_answer(node, 4);
    r = run("query", "rewards", ADDR_A, "--node", url, NULL);
    CHECK(r.rc == 0 && strstr(r.out, "    amount: 29625ngonka\n") &&
          strstr(r.out, "    tokens: 8192\n"));
    run_free(&r);
    r = run("query", "rewards", ADDR_A, "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json);
    CHECK_STR_EQ(json_str(json_array_get(json_object_get(r.json, "amounts"), 0), "amount"),
                 "29625");
    run_free(&r);
    node->run_answer.len = 0;

    /* Malformed answers and arguments. */
    node->answer.len = 0;
    CHECK_OK(gd_buf_append(&node->answer, "\xff\xff", 2));
    r = run("query", "runs", "--node", url, NULL);
    CHECK(r.rc == 1 && strstr(r.err, "not a QueryRunsResponse"));
    run_free(&r);
    r = run("query", "run", "x1", "--node", url, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "RUN wants"));
    run_free(&r);
    r = run("query", "rewards", "gonka1zz", "--node", url, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "ADDR"));
    run_free(&r);
}

/* --- transactions that compute something for the signer -------------------------------- */

/* The header of the small payload below: run 1 round 4 of participant,
 * 5000 values in int8 chunks of 256. */
static void payload_header(gd_payload_header *h, const char *participant) {
    memset(h, 0, sizeof *h);
    h->run = 1;
    h->round = 4;
    snprintf(h->participant, sizeof h->participant, "%s", participant);
    h->param_count = 5000;
    CHECK_OK(gd_codec_parse(&h->codec, "int8"));
    h->chunk_elems = 256;
}

/* A small payload of several chunks with header h, written to a file. */
static void write_payload_with(const char *path, gd_payload *p, const gd_payload_header *h) {
    float *v = malloc(h->param_count * sizeof(float));
    for (size_t i = 0; i < h->param_count; i++)
        v[i] = (float)((int)(i * 7919 % 201) - 100) * 1e-3f;
    CHECK_OK(gd_payload_encode(p, h, v, NULL, NULL));
    CHECK_OK(gd_payload_write(p, path));
    free(v);
}

/* ADDR_A's payload. */
static void write_payload(const char *path, gd_payload *p) {
    gd_payload_header h;
    payload_header(&h, ADDR_A);
    write_payload_with(path, p, &h);
}

/* The report proves the chunks the chain draws for (randomness, target,
 * signer): want of them, each leaf hash and proof against the root. */
static void check_report(const char *b64, const char *signer, const gd_payload *p,
                         const uint8_t root[32], uint32_t leaves, const uint8_t randomness[32],
                         uint32_t want) {
    Gonka__Diloco__V1__MsgReportAvailability *m = (void *)tx_message(
        b64, GD_DILOCO_MSG_REPORT_AVAILABILITY,
        &gonka__diloco__v1__msg_report_availability__descriptor);
    if (m == NULL)
        return;
    uint32_t drawn[GD_DILOCO_AVAIL_CHUNKS_MAX];
    uint32_t n = gd_diloco_avail_chunks(drawn, randomness, ADDR_A, signer, leaves - 1, want);
    CHECK(n == want && m->n_leaf_hashes == n && m->n_proofs == n);
    for (uint32_t i = 0; i < n && i < m->n_leaf_hashes && i < m->n_proofs; i++) {
        uint8_t leaf[32];
        gd_mmr_hash_leaf(leaf, drawn[i] + 1, p->chunks[drawn[i]].raw,
                         p->chunks[drawn[i]].raw_len);
        gd_mmr_proof proof;
        CHECK_OK(gd_mmr_proof_decode(&proof, m->proofs[i].data, m->proofs[i].len));
        CHECK(proof.leaf_index == drawn[i] + 1 && proof.leaf_count == leaves);
        CHECK(m->leaf_hashes[i].len == 32 && memcmp(m->leaf_hashes[i].data, leaf, 32) == 0);
        CHECK(gd_mmr_verify(root, &proof, leaf));
    }
    CHECK(strcmp(m->target, ADDR_A) == 0 && strcmp(m->reporter, signer) == 0 && m->run == 1 &&
          m->round == 4);
    protobuf_c_message_free_unpacked(&m->base, NULL);
}

static void test_availability(void) {
    diloco_node *node = &g_node;
    const char *url = g_url, *key = g_key, *signer = g_signer;
    const char *file = path_in_tmp("w.gdpl");
    gd_payload p;
    write_payload(file, &p);
    uint8_t root[32];
    uint32_t leaves = 0;
    CHECK_OK(gd_payload_root(&p, root, &leaves));
    CHECK(leaves == 21);

    /* Online: the run's avail_chunks and the round's verify randomness. */
    round_answer ra;
    round_answer_init(&ra, ADDR_A, root, leaves);
    set_answer(node, &ra.resp.base);
    set_run_answer(node, 3);
    run_result r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4",
                       "--target", ADDR_A, "--payload", file, "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && r.json && json_is_true(json_object_get(r.json, "included")));
    CHECK(node->last_tx != NULL);
    if (node->last_tx)
        check_report(node->last_tx, signer, &p, root, leaves, VERIFY, 3);
    run_free(&r);

    /* Offline with --randomness and --chunks: the same draw; more chunks
     * wanted than the payload has gives every chunk. */
    char randomness[65];
    gd_hex_encode(randomness, VERIFY, 32, false);
    const char *off[] = {"--offline", "--chain-id", "c", "--account-number", "0", "--sequence",
                         "0", "--json"};
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--payload", file, "--randomness", randomness, "--chunks", "3", off[0],
            off[1], off[2], off[3], off[4], off[5], off[6], off[7], NULL);
    CHECK(r.rc == 0 && json_str(r.json, "tx_base64"));
    if (json_str(r.json, "tx_base64"))
        check_report(json_str(r.json, "tx_base64"), signer, &p, root, leaves, VERIFY, 3);
    run_free(&r);
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--payload", file, "--randomness", randomness, "--chunks", "16", off[0],
            off[1], off[2], off[3], off[4], off[5], off[6], off[7], NULL);
    CHECK(r.rc == 0 && json_str(r.json, "tx_base64"));
    if (json_str(r.json, "tx_base64"))
        check_report(json_str(r.json, "tx_base64"), signer, &p, root, leaves, VERIFY, 16);
    run_free(&r);
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--payload", file, "--randomness", randomness, off[0], off[1], off[2],
            off[3], off[4], off[5], off[6], NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--randomness and --chunks go together"));
    run_free(&r);
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--payload", file, "--randomness", randomness, "--chunks", "17", off[0],
            off[1], off[2], off[3], off[4], off[5], off[6], NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--chunks"));
    run_free(&r);

    /* By hand: the pairs in order, as the payload path sent them. */
    uint32_t drawn[GD_DILOCO_AVAIL_CHUNKS_MAX];
    uint32_t n = gd_diloco_avail_chunks(drawn, VERIFY, ADDR_A, signer, leaves - 1, 2);
    char leaf_hex[2][65], proof_hex[2][2 * (12 + GD_MMR_PROOF_MAX * 32) + 1];
    for (uint32_t i = 0; i < n; i++) {
        uint8_t leaf[32];
        gd_mmr_hash_leaf(leaf, drawn[i] + 1, p.chunks[drawn[i]].raw, p.chunks[drawn[i]].raw_len);
        gd_hex_encode(leaf_hex[i], leaf, 32, false);
        gd_mmr_proof proof;
        gd_buf wire = {0};
        CHECK_OK(gd_payload_prove_chunk(&p, &proof, drawn[i]));
        CHECK_OK(gd_mmr_proof_encode(&proof, &wire));
        gd_hex_encode(proof_hex[i], wire.data, wire.len, false);
        gd_buf_free(&wire);
    }
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--leaf-hash", leaf_hex[0], "--proof", proof_hex[0], "--leaf-hash",
            leaf_hex[1], "--proof", proof_hex[1], off[0], off[1], off[2], off[3], off[4], off[5],
            off[6], off[7], NULL);
    CHECK(r.rc == 0 && json_str(r.json, "tx_base64"));
    if (json_str(r.json, "tx_base64"))
        check_report(json_str(r.json, "tx_base64"), signer, &p, root, leaves, VERIFY, 2);
    run_free(&r);
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--leaf-hash", leaf_hex[0], "--proof", proof_hex[0], "--leaf-hash",
            leaf_hex[1], off[0], off[1], off[2], off[3], off[4], off[5], off[6], NULL);
    CHECK(r.rc == 2 && strstr(r.err, "2 --leaf-hash but 1 --proof"));
    run_free(&r);

    /* The round has no verify randomness yet (before verify_start). */
    round_answer_init(&ra, ADDR_A, root, leaves);
    ra.round.verify_randomness.len = 0;
    set_answer(node, &ra.resp.base);
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--payload", file, "--node", url, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "no verify randomness yet") && strstr(r.err, "110"));
    run_free(&r);
    /* The file is not what the target committed; the target committed nothing. */
    round_answer_init(&ra, ADDR_A, H2, leaves);
    set_answer(node, &ra.resp.base);
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--payload", file, "--node", url, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "is not the payload"));
    run_free(&r);
    round_answer_init(&ra, signer, root, leaves);
    set_answer(node, &ra.resp.base);
    r = run("tx", "report-availability", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--payload", file, "--node", url, NULL);
    CHECK(r.rc == 1 && strstr(r.err, "no commitment"));
    run_free(&r);
    node->run_answer.len = 0;

    gd_payload_free(&p);
}

/* commit-round --payload: the commitment of the file, whose header must
 * name the signer and, online, the run's spec digest, layout, codec and
 * chunk size. */
static void test_commit_payload(void) {
    diloco_node *node = &g_node;
    const char *url = g_url, *key = g_key;
    Gonka__Diloco__V1__RunSpec *spec = gd_test_example_spec();
    set_run_answer(node, spec->avail_chunks);
    /* The signer's payload as the run makes it. */
    gd_payload_header good;
    payload_header(&good, g_signer);
    CHECK_OK(gd_diloco_spec_digest(good.spec_digest, spec));
    CHECK(spec->layout_digest.len == 32);
    memcpy(good.layout_digest, spec->layout_digest.data, 32);
    CHECK_OK(gd_codec_parse(&good.codec, spec->codec));
    good.chunk_elems = spec->chunk_elems;
    const char *file = path_in_tmp("c.gdpl");
    gd_payload p;
    write_payload_with(file, &p, &good);
    uint8_t root[32];
    uint32_t leaves = 0;
    CHECK_OK(gd_payload_root(&p, root, &leaves));
    const char *hex = "7e41000000000000000000000000000000000000000000000000000000000000";

    run_result r = run("tx", "commit-round", "--key", key, "--run", "1", "--round", "4",
                       "--payload", file, "--transcript-root", hex, "--segments", "3",
                       "--offline", "--chain-id", "c", "--account-number", "0", "--sequence",
                       "0", "--json", NULL);
    CHECK(r.rc == 0);
    Gonka__Diloco__V1__MsgCommitRound *c =
        json_str(r.json, "tx_base64")
            ? (void *)tx_message(json_str(r.json, "tx_base64"), GD_DILOCO_MSG_COMMIT_ROUND,
                                 &gonka__diloco__v1__msg_commit_round__descriptor)
            : NULL;
    CHECK(c && c->payload_leaves == leaves && c->payload_bytes == gd_payload_wire_bytes(&p) &&
          c->payload_root.len == 32 && memcmp(c->payload_root.data, root, 32) == 0 &&
          c->segment_count == 3);
    if (c)
        protobuf_c_message_free_unpacked(&c->base, NULL);
    run_free(&r);
    r = run("tx", "commit-round", "--key", key, "--run", "1", "--round", "5", "--payload", file,
            "--transcript-root", hex, "--segments", "3", "--offline", "--chain-id", "c",
            "--account-number", "0", "--sequence", "0", NULL);
    CHECK(r.rc == 2 && strstr(r.err, "is for run 1 round 4"));
    run_free(&r);
    /* Online, the run's answer checks the rest of the header. */
    free(node->last_tx);
    node->last_tx = NULL;
    r = run("tx", "commit-round", "--key", key, "--run", "1", "--round", "4", "--payload", file,
            "--transcript-root", hex, "--segments", "3", "--node", url, "--json", NULL);
    CHECK(r.rc == 0 && strcmp(node->path, GD_DILOCO_QUERY_RUN) == 0 && node->last_tx != NULL);
    run_free(&r);
    gd_payload_free(&p);

    /* Each field wrong in turn: refused before anything is sent. */
    struct {
        const char *what, *want;
    } cases[] = {
        {"participant", "is the payload of '" ADDR_A "', not of the signer"},
        {"spec", "is for another run spec than run 1's"},
        {"layout", "has another parameter layout than run 1's layout_digest"},
        {"codec", "is encoded with codec int4, run 1 uses int8"},
        {"chunks", "has chunks of 128 values, run 1 uses"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gd_payload_header h = good;
        if (i == 0)
            snprintf(h.participant, sizeof h.participant, "%s", ADDR_A);
        if (i == 1)
            h.spec_digest[0] ^= 1;
        if (i == 2)
            h.layout_digest[31] ^= 1;
        if (i == 3)
            CHECK_OK(gd_codec_parse(&h.codec, "int4"));
        if (i == 4)
            h.chunk_elems = 128;
        write_payload_with(file, &p, &h);
        gd_payload_free(&p);
        free(node->last_tx);
        node->last_tx = NULL;
        r = run("tx", "commit-round", "--key", key, "--run", "1", "--round", "4", "--payload",
                file, "--transcript-root", hex, "--segments", "3", "--node", url, NULL);
        CHECK(r.rc == 2 && strstr(r.err, cases[i].want) && node->last_tx == NULL);
        if (r.rc != 2 || !strstr(r.err, cases[i].want))
            fprintf(stderr, "  case %s: rc %d, %s\n", cases[i].what, r.rc, r.err);
        run_free(&r);
    }
    /* --offline has no run at hand: it checks the signer alone. */
    r = run("tx", "commit-round", "--key", key, "--run", "1", "--round", "4", "--payload", file,
            "--transcript-root", hex, "--segments", "3", "--offline", "--chain-id", "c",
            "--account-number", "0", "--sequence", "0", NULL);
    CHECK(r.rc == 0);
    run_free(&r);
    node->run_answer.len = 0;
    gd_diloco_spec_free(spec);
}

#define OFFLINE "--offline", "--chain-id", "c", "--account-number", "0", "--sequence", "0"

/* The one message of an offline command's --json output, unpacked. */
static ProtobufCMessage *offline_message(const run_result *r, const char *type_url,
                                         const ProtobufCMessageDescriptor *desc) {
    CHECK(r->rc == 0 && json_str(r->json, "tx_base64"));
    return json_str(r->json, "tx_base64") ? tx_message(json_str(r->json, "tx_base64"), type_url,
                                                       desc)
                                          : NULL;
}

/* hex (64 digits) as 32 bytes; all zero when it is not. */
static void unhex32(uint8_t out[32], const char *hex) {
    memset(out, 0, 32);
    CHECK(hex && gd_test_unhex(out, 32, hex) == 32);
}

static void test_verdicts(void) {
    const char *key = g_key, *signer = g_signer;
    const char *digest = "aa000000000000000000000000000000000000000000000000000000000000bb";
    /* --seal-only draws a salt, seals with it, and prints both. */
    run_result r = run("tx", "submit-verdict", "--key", key, "--run", "1", "--round", "4",
                       "--target", ADDR_A, "--check", "0", "--verdict", "fail", "--digest",
                       digest, "--seal-only", OFFLINE, "--json", NULL);
    Gonka__Diloco__V1__MsgSubmitVerdict *m = (void *)offline_message(
        &r, GD_DILOCO_MSG_SUBMIT_VERDICT, &gonka__diloco__v1__msg_submit_verdict__descriptor);
    uint8_t salt[32], printed_seal[32], seal[32];
    unhex32(salt, json_str(r.json, "salt"));
    unhex32(printed_seal, json_str(r.json, "seal"));
    gd_diloco_verdict_seal(seal, GD_SEAL_VERDICT, signer, GD_VERDICT_FAIL, H2, salt);
    CHECK(memcmp(seal, printed_seal, 32) == 0);
    CHECK(m && m->seal.len == 32 && memcmp(m->seal.data, seal, 32) == 0 && m->verdict == 0 &&
          m->digest.len == 0 && m->salt.len == 0);
    if (m)
        protobuf_c_message_free_unpacked(&m->base, NULL);
    char salt_hex[65];
    snprintf(salt_hex, sizeof salt_hex, "%s", json_str(r.json, "salt") ? json_str(r.json, "salt")
                                                                       : "");
    run_free(&r);
    /* Another sealing, another salt. */
    r = run("tx", "submit-verdict", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--check", "0", "--verdict", "fail", "--digest", digest, "--seal-only",
            OFFLINE, "--json", NULL);
    CHECK(r.rc == 0 && json_str(r.json, "salt") && strcmp(json_str(r.json, "salt"), salt_hex));
    run_free(&r);
    /* The reveal takes the salt back. */
    r = run("tx", "submit-verdict", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--check", "0", "--verdict", "fail", "--digest", digest, "--salt", salt_hex,
            OFFLINE, "--json", NULL);
    m = (void *)offline_message(&r, GD_DILOCO_MSG_SUBMIT_VERDICT,
                                &gonka__diloco__v1__msg_submit_verdict__descriptor);
    CHECK(m && m->seal.len == 0 && m->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_FAIL &&
          m->digest.len == 32 && memcmp(m->digest.data, H2, 32) == 0 && m->salt.len == 32 &&
          memcmp(m->salt.data, salt, 32) == 0);
    CHECK(json_str(r.json, "salt") == NULL); /* nothing new to keep */
    if (m)
        protobuf_c_message_free_unpacked(&m->base, NULL);
    run_free(&r);
    /* The text output starts with the salt and the seal; a given salt is used. */
    r = run("tx", "submit-verdict", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--check", "0", "--verdict", "fail", "--digest", digest, "--seal-only",
            "--salt", salt_hex, OFFLINE, NULL);
    char want[200];
    snprintf(want, sizeof want, "salt: %s\nseal: ", salt_hex);
    CHECK(r.rc == 0 && strncmp(r.out, want, strlen(want)) == 0 && strstr(r.out, "\ntx_base64: "));
    run_free(&r);
    /* Unavailable: the zero digest by default; revealing without a salt is
     * a usage error. */
    r = run("tx", "submit-verdict", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--check", "1", "--verdict", "unavailable", "--salt", salt_hex, OFFLINE,
            "--json", NULL);
    m = (void *)offline_message(&r, GD_DILOCO_MSG_SUBMIT_VERDICT,
                                &gonka__diloco__v1__msg_submit_verdict__descriptor);
    static const uint8_t zero[32];
    CHECK(m && m->seal.len == 0 && m->check == 1 &&
          m->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE && m->digest.len == 32 &&
          memcmp(m->digest.data, zero, 32) == 0);
    if (m)
        protobuf_c_message_free_unpacked(&m->base, NULL);
    run_free(&r);
    r = run("tx", "submit-verdict", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--check", "1", "--verdict", "pass", "--digest", digest, OFFLINE, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--salt HEX is required to reveal"));
    run_free(&r);
    r = run("tx", "submit-verdict", "--key", key, "--run", "1", "--round", "4", "--target",
            ADDR_A, "--check", "1", "--verdict", "pass", "--digest", digest, "--salt", "abcd",
            OFFLINE, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--salt"));
    run_free(&r);
}

static void test_disputes_attestations(void) {
    const char *key = g_key, *signer = g_signer;
    const char *hash = "aa000000000000000000000000000000000000000000000000000000000000bb";
    /* A re-check: sealed as GD_SEAL_RECHECK, revealed with its salt. */
    run_result r = run("tx", "dispute", "--key", key, "--run", "1", "--round", "4", "--target",
                       ADDR_A, "--check", "2", "--verdict", "pass", "--digest", hash,
                       "--seal-only", OFFLINE, "--json", NULL);
    Gonka__Diloco__V1__MsgDispute *d = (void *)offline_message(
        &r, GD_DILOCO_MSG_DISPUTE, &gonka__diloco__v1__msg_dispute__descriptor);
    uint8_t salt[32], seal[32];
    unhex32(salt, json_str(r.json, "salt"));
    gd_diloco_verdict_seal(seal, GD_SEAL_RECHECK, signer, GD_VERDICT_PASS, H2, salt);
    CHECK(d && d->check == 2 && d->seal.len == 32 && memcmp(d->seal.data, seal, 32) == 0 &&
          d->verdict == 0 && d->salt.len == 0);
    if (d)
        protobuf_c_message_free_unpacked(&d->base, NULL);
    run_free(&r);
    r = run("tx", "dispute", "--key", key, "--run", "1", "--round", "4", "--target", ADDR_A,
            "--check", "2", "--verdict", "unavailable", "--salt", hash, OFFLINE, "--json", NULL);
    d = (void *)offline_message(&r, GD_DILOCO_MSG_DISPUTE,
                                &gonka__diloco__v1__msg_dispute__descriptor);
    CHECK(d && d->seal.len == 0 && d->verdict == GONKA__DILOCO__V1__VERDICT__VERDICT_UNAVAILABLE &&
          d->salt.len == 32 && memcmp(d->salt.data, H2, 32) == 0);
    if (d)
        protobuf_c_message_free_unpacked(&d->base, NULL);
    run_free(&r);

    /* An attestation: the state hash sealed as GD_SEAL_ATTEST. */
    r = run("tx", "attest-round", "--key", key, "--run", "1", "--round", "4", "--state-hash",
            hash, "--seal-only", OFFLINE, "--json", NULL);
    Gonka__Diloco__V1__MsgAttestRound *a = (void *)offline_message(
        &r, GD_DILOCO_MSG_ATTEST_ROUND, &gonka__diloco__v1__msg_attest_round__descriptor);
    unhex32(salt, json_str(r.json, "salt"));
    gd_diloco_seal(seal, GD_SEAL_ATTEST, signer, H2, 32, salt);
    CHECK(a && a->seal.len == 32 && memcmp(a->seal.data, seal, 32) == 0 &&
          a->next_state_hash.len == 0 && a->salt.len == 0);
    if (a)
        protobuf_c_message_free_unpacked(&a->base, NULL);
    char salt_hex[65];
    gd_hex_encode(salt_hex, salt, 32, false);
    run_free(&r);
    r = run("tx", "attest-round", "--key", key, "--run", "1", "--round", "4", "--state-hash",
            hash, "--salt", salt_hex, OFFLINE, "--json", NULL);
    a = (void *)offline_message(&r, GD_DILOCO_MSG_ATTEST_ROUND,
                                &gonka__diloco__v1__msg_attest_round__descriptor);
    CHECK(a && a->seal.len == 0 && a->next_state_hash.len == 32 &&
          memcmp(a->next_state_hash.data, H2, 32) == 0 && a->salt.len == 32 &&
          memcmp(a->salt.data, salt, 32) == 0);
    if (a)
        protobuf_c_message_free_unpacked(&a->base, NULL);
    run_free(&r);
    r = run("tx", "attest-round", "--key", key, "--run", "1", "--round", "4", "--state-hash",
            hash, OFFLINE, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--salt HEX is required to reveal"));
    run_free(&r);
}

static void test_randomness_leave(void) {
    const char *key = g_key, *signer = g_signer;
    /* A secret drawn, sealed and printed; revealed with --secret. */
    run_result r = run("tx", "randomness", "--key", key, "--run", "1", "--round", "5",
                       "--seal-only", OFFLINE, "--json", NULL);
    Gonka__Diloco__V1__MsgRandomness *m = (void *)offline_message(
        &r, GD_DILOCO_MSG_RANDOMNESS, &gonka__diloco__v1__msg_randomness__descriptor);
    uint8_t secret[32], seal[32], printed[32];
    unhex32(secret, json_str(r.json, "secret"));
    unhex32(printed, json_str(r.json, "seal"));
    gd_diloco_seal(seal, GD_SEAL_RANDOMNESS, signer, secret, 0, secret); /* no body, not NULL */
    CHECK(memcmp(seal, printed, 32) == 0 && json_str(r.json, "salt") == NULL);
    CHECK(m && m->run == 1 && m->round == 5 && m->seal.len == 32 &&
          memcmp(m->seal.data, seal, 32) == 0 && m->secret.len == 0);
    if (m)
        protobuf_c_message_free_unpacked(&m->base, NULL);
    char secret_hex[65];
    gd_hex_encode(secret_hex, secret, 32, false);
    run_free(&r);
    r = run("tx", "randomness", "--key", key, "--run", "1", "--round", "5", "--secret",
            secret_hex, OFFLINE, "--json", NULL);
    m = (void *)offline_message(&r, GD_DILOCO_MSG_RANDOMNESS,
                                &gonka__diloco__v1__msg_randomness__descriptor);
    CHECK(m && m->seal.len == 0 && m->secret.len == 32 && memcmp(m->secret.data, secret, 32) == 0);
    if (m)
        protobuf_c_message_free_unpacked(&m->base, NULL);
    run_free(&r);
    r = run("tx", "randomness", "--key", key, "--run", "1", "--round", "5", OFFLINE, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--secret HEX is required to reveal"));
    run_free(&r);

    r = run("tx", "leave-run", "--key", key, "--run", "3", OFFLINE, "--json", NULL);
    Gonka__Diloco__V1__MsgLeaveRun *l = (void *)offline_message(
        &r, GD_DILOCO_MSG_LEAVE_RUN, &gonka__diloco__v1__msg_leave_run__descriptor);
    CHECK(l && l->run == 3 && strcmp(l->participant, signer) == 0);
    if (l)
        protobuf_c_message_free_unpacked(&l->base, NULL);
    run_free(&r);
    r = run("tx", "leave-run", "--key", key, OFFLINE, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "--run"));
    run_free(&r);
}

/* tx create-run asks the node for its epochs: a run whose round cannot
 * fit one epoch's Inference phase is refused before anything is sent. */
static void test_create_run_epochs(void) {
    diloco_node *node = &g_node;
    char spec[1024];
    snprintf(spec, sizeof spec, "%s/../docs/examples/run-spec.json", gd_test_source_dir());
    /* Rounds of 76 blocks; with localnet's PoC stages (10 + 2 + 10) an
     * epoch of 97 blocks has an Inference phase of 75. */
    gd_epoch_params saved = node->base.epoch_params;
    node->base.epoch_params.poc_stage_duration = 10;
    node->base.epoch_params.poc_validation_delay = 2;
    node->base.epoch_params.poc_validation_duration = 10;
    node->base.epoch_params.epoch_length = 97;
    free(node->last_tx);
    node->last_tx = NULL;
    run_result r = run("tx", "create-run", "--key", g_key, "--spec", spec, "--pool",
                       "5000000000ngonka", "--node", g_url, NULL);
    CHECK(r.rc == 2 && strstr(r.err, "a round takes 76 blocks") &&
          strstr(r.err, "the 75 blocks of an epoch's Inference phase") &&
          node->last_tx == NULL);
    run_free(&r);
    node->base.epoch_params.epoch_length = 98; /* exactly one round's room */
    r = run("tx", "create-run", "--key", g_key, "--spec", spec, "--pool", "5000000000ngonka",
            "--node", g_url, "--json", NULL);
    CHECK(r.rc == 0 && node->last_tx != NULL);
    run_free(&r);
    /* Offline there are no epochs to read: the chain checks at delivery. */
    node->base.epoch_params.epoch_length = 97;
    r = run("tx", "create-run", "--key", g_key, "--spec", spec, "--pool", "5000000000ngonka",
            OFFLINE, NULL);
    CHECK(r.rc == 0);
    run_free(&r);
    node->base.epoch_params = saved;
}

int main(void) {
    snprintf(g_key, sizeof g_key, "%s", path_in_tmp("v.key"));
    run_result k = run("keys", "import", "--hex", KEY_HEX, "--out", g_key, "--json", NULL);
    CHECK(k.rc == 0 && json_str(k.json, "address"));
    snprintf(g_signer, sizeof g_signer, "%s",
             json_str(k.json, "address") ? json_str(k.json, "address") : "");
    run_free(&k);
    fake_node_init(&g_node.base, g_signer);
    gd_mock_server *srv = gd_mock_start(diloco_handler, &g_node);
    g_url = gd_mock_url(srv);
    RUN_TEST(test_queries);
    RUN_TEST(test_availability);
    RUN_TEST(test_commit_payload);
    RUN_TEST(test_create_run_epochs);
    RUN_TEST(test_verdicts);
    RUN_TEST(test_disputes_attestations);
    RUN_TEST(test_randomness_leave);
    gd_mock_stop(srv);
    free(g_node.last_tx);
    gd_buf_free(&g_node.answer);
    gd_buf_free(&g_node.run_answer);
    gd_buf_free(&g_node.request);
    return gd_test_finish();
}
